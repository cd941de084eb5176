/// Why an envelope could not be read or opened.
public struct EnvelopeError: PushSealFailure, Equatable, Sendable {
    public enum Code: String, Hashable, Sendable {
        /// Not a `ps1` envelope, or a damaged one: bad base64, short box, bad kid.
        case malformed
        /// A version this build does not read.
        case unsupportedVersion
        /// The tag did not verify: altered in transit, or sealed under another key.
        case authenticationFailed
        /// The payload has no envelope field.
        case missingEnvelope
        /// Opened, but the plaintext is not a sealed alert.
        case invalidAlert
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public static func == (lhs: EnvelopeError, rhs: EnvelopeError) -> Bool { lhs.code == rhs.code }
}
