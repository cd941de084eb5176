/// What went wrong in a cryptographic operation; never carries key or plaintext bytes.
public struct SealCryptoError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The kind of failure; errors compare equal when their codes match.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public var description: String { rawValue }

        public static let authenticationFailed = Code(rawValue: "authentication-failed")
        public static let invalidKeySize = Code(rawValue: "invalid-key-size")
        public static let invalidNonceSize = Code(rawValue: "invalid-nonce-size")
        public static let invalidSealedBox = Code(rawValue: "invalid-sealed-box")
        public static let invalidEncoding = Code(rawValue: "invalid-encoding")
        public static let randomUnavailable = Code(rawValue: "random-unavailable")
        public static let invalidKey = Code(rawValue: "invalid-key")
        public static let libraryFailure = Code(rawValue: "library-failure")
    }

    public let code: Code
    /// A sentence for people; safe to print.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    public static func == (lhs: SealCryptoError, rhs: SealCryptoError) -> Bool {
        lhs.code == rhs.code
    }
}
