import PushSeal

/// Why `send` could not run at all (as opposed to a device APNs refused).
public typealias SendError = PushSealError<SendFailure>

/// The kinds of `SendError`.
public enum SendFailure: Hashable, Sendable {
    /// The provider token could not be made or kept.
    case token
    /// The endpoint cannot be reached (after the connection attempts).
    case unreachable
    /// The endpoint's certificate is not trusted.
    case untrusted
    /// The endpoint does not speak HTTP/2, or the proxy refused to tunnel to it.
    case refused
    /// The endpoint's or the proxy's address, or the trust file, cannot be used at all; or
    /// a device token is not one.
    case setup
}
