import PushSealJSON

/// A notification as it reaches the device: the emulation of `UNNotificationRequest`.
/// Immutable and, like Apple's, a class: the runner, the extension and the record each
/// hold the one request rather than a copy of its content.
public final class NotificationRequest: Sendable, Equatable {
    /// The `apns-id`: the sender's, or a fresh UUID as APNs assigns one when none is given.
    public let identifier: String
    public let content: NotificationContent
    /// APNs request headers when the input carried them (`apns-topic`, `apns-push-type`, …).
    public let headers: [String: String]

    public init(identifier: String, content: NotificationContent, headers: [String: String] = [:]) {
        self.identifier = identifier
        self.content = content
        self.headers = headers
    }

    /// The payload's `aps` dictionary, empty when missing.
    public var aps: JSONObject { content.userInfo["aps"]?.objectValue ?? JSONObject() }

    /// Apple's rule for running a Notification Service Extension: `mutable-content` is 1 and
    /// the alert has visible text. Anything else is delivered as it came.
    public var invokesServiceExtension: Bool {
        aps["mutable-content"]?.integerValue == 1 && content.hasAlertText
    }

    public static func == (lhs: NotificationRequest, rhs: NotificationRequest) -> Bool {
        lhs.identifier == rhs.identifier && lhs.content == rhs.content && lhs.headers == rhs.headers
    }
}
