/// Why `send` could not run at all (as opposed to a device APNs refused).
public struct SendError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable {
        /// The `.p8` file is not an ES256 private key.
        case authKey
        /// The HTTP/2 transport could not be started or stopped working.
        case transport
        /// The provider token could not be made or kept.
        case token
        /// The endpoint cannot be reached (after the retries).
        case unreachable
        /// The endpoint's certificate is not trusted.
        case untrusted
    }

    public let code: Code
    public let message: String
    public var description: String { message }

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func == (lhs: SendError, rhs: SendError) -> Bool { lhs.code == rhs.code }
}
