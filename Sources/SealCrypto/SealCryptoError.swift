internal import COpenSSL

/// What went wrong in a cryptographic operation; never carries key or plaintext bytes.
///
/// The pattern every pushseal library error follows: a `code` to branch on, a `reason`
/// that states the facts (no command-line words: the caller knows its own flags), and the
/// cause underneath, here OpenSSL's packed error code as `ERR_get_error` gave it, so a bug
/// report can name the exact library failure.
public struct SealCryptoError: ChainedError, Equatable {
    /// The kind of failure; errors compare equal when their codes match.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public var description: String { rawValue }

        public static let authenticationFailed = Code(rawValue: "authentication-failed")
        public static let invalidKeySize = Code(rawValue: "invalid-key-size")
        package static let invalidNonceSize = Code(rawValue: "invalid-nonce-size")
        package static let invalidSealedBox = Code(rawValue: "invalid-sealed-box")
        public static let invalidEncoding = Code(rawValue: "invalid-encoding")
        package static let randomUnavailable = Code(rawValue: "random-unavailable")
        public static let invalidKey = Code(rawValue: "invalid-key")
        /// A private key sealed with a passphrase, which pushseal never asks for.
        package static let encryptedKey = Code(rawValue: "encrypted-key")
        package static let invalidCertificate = Code(rawValue: "invalid-certificate")
        package static let libraryFailure = Code(rawValue: "library-failure")
    }

    public let code: Code
    /// A sentence for people; safe to print.
    public let reason: String
    /// OpenSSL's error code (`ERR_get_error`) behind this failure, or 0 when the failure
    /// was found by pushseal's own checks. `openSSLReason` spells it out.
    package let openSSLError: UInt

    /// The failure beneath: OpenSSL's (`openSSLError` as an `OpenSSLFailure`), or the
    /// system's (a `SystemCallFailure`) when a file could not be read.
    public let underlying: (any Error & Sendable)?

    public init(_ code: Code, _ reason: String, openSSLError: UInt = 0, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.reason = reason
        self.openSSLError = openSSLError
        self.underlying = underlying ?? (openSSLError == 0 ? nil : OpenSSLFailure(code: openSSLError))
    }

    /// An error for a failed OpenSSL call: takes this thread's oldest queued OpenSSL error
    /// as the cause and empties the queue, so the next call on this thread starts clean
    /// (an OpenSSL error belongs to the operation that raised it).
    static func openSSL(_ code: Code, _ reason: String) -> SealCryptoError {
        let cause = ERR_get_error()
        ERR_clear_error()
        return SealCryptoError(code, reason, openSSLError: cause)
    }

    /// OpenSSL's own words for `openSSLError` ("bad decrypt"), or nil when there is none.
    package var openSSLReason: String? {
        guard openSSLError != 0 else { return nil }
        return ERR_reason_error_string(openSSLError).map { String(cString: $0) } ?? "error \(openSSLError)"
    }

    public var description: String { reason }

    public static func == (lhs: SealCryptoError, rhs: SealCryptoError) -> Bool {
        lhs.code == rhs.code
    }
}
