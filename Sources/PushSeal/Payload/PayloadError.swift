/// Why an alert could not become a payload, or a payload could not be read.
public struct PayloadError: PushSealFailure, Equatable, Sendable {
    public enum Code: String, Hashable, Sendable {
        /// The payload would exceed APNs' 4096 bytes.
        case tooLarge
        /// The alert is missing what it needs or has a field of the wrong kind.
        case invalidAlert
        /// The input is not a JSON payload object.
        case invalidPayload
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public static func == (lhs: PayloadError, rhs: PayloadError) -> Bool { lhs.code == rhs.code }
}
