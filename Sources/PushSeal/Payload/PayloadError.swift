/// Why an alert could not become a payload, or a payload could not be read.
public typealias PayloadError = PushSealError<PayloadFailure>

/// The kinds of `PayloadError`.
public enum PayloadFailure: String, Hashable, Sendable {
    /// The payload would exceed APNs' 4096 bytes.
    case tooLarge
    /// The alert is missing what it needs or has a field of the wrong kind.
    case invalidAlert
    /// The input is not a JSON payload object.
    case invalidPayload
}
