/// Why an envelope could not be read or opened.
public typealias EnvelopeError = PushSealError<EnvelopeFailure>

/// The kinds of `EnvelopeError`.
public enum EnvelopeFailure: String, Hashable, Sendable {
    /// Not an envelope of a version this build reads (ps1, ps2), or a damaged one: no
    /// `version.kid.sealed` shape, bad base64, a short box, a bad kid.
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
