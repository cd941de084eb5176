import SealCrypto

/// A failure in pushseal's library, one pattern for every part of it (`KeyringError`,
/// `EnvelopeError`, `PayloadError`):
/// - `code`, to branch on; errors compare equal when their codes match;
/// - `reason`, the fact for people: names the path or key id, never secret material and
///   never a command-line word (only the CLI knows its flags, so its advice is its own);
/// - `path`, the file or folder the fact is about, when there is one;
/// - `underlying`, the failure beneath, when there was one: a `SealCryptoError` keeping
///   OpenSSL's error code, the system's `errno`, another library's error. Every error of
///   pushseal's libraries is a `ChainedError`, so `chain` walks down to the root.
public struct PushSealError<Kind: Hashable & Sendable>: ChainedError, Equatable {
    public typealias Code = Kind

    public let code: Code
    public let reason: String
    public let path: String?
    public let underlying: (any Error & Sendable)?

    public init(_ code: Code, _ reason: String, path: String? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.reason = reason
        self.path = path
        self.underlying = underlying
    }

    public var description: String { reason }

    /// The `errno` beneath, when the failure came from the system.
    public var errno: Int32? { systemErrno }

    public static func == (lhs: PushSealError, rhs: PushSealError) -> Bool { lhs.code == rhs.code }
}
