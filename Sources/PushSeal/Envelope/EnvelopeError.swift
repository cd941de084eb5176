/// Why an envelope could not be read or opened.
public typealias EnvelopeError = PushSealError<EnvelopeFailure>

/// The kinds of `EnvelopeError`.
public enum EnvelopeFailure: String, Hashable, Sendable {
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
