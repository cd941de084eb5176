import PushSealJSON

/// A notification as it reaches the device: the emulation of `UNNotificationRequest`.
/// Immutable and, like Apple's, a class: the runner, the extension and the record each
/// hold the one request rather than a copy of its content.
public final class NotificationRequest: Sendable, Equatable {
    /// The `apns-id`: the sender's, or a fresh UUID as APNs assigns one when none is given.
    public let identifier: String
    public let content: NotificationContent
    /// APNs request headers when the input carried them (`apns-topic`, `apns-push-type`, …).
    public var headers: [String: String] { arrival?.headers ?? given }

    // One of the two is used: headers as an input gave them, or the fields of a request the
    // listener accepted. Those become a dictionary only when something asks (an
    // `--extension` program), not for every notification the listener takes.
    private let given: [String: String]
    private let arrival: APNsRequestFields?

    public init(identifier: String, content: NotificationContent, headers: [String: String] = [:]) {
        self.identifier = identifier
        self.content = content
        given = headers
        arrival = nil
    }

    /// A request that reached the listener, with the APNs headers it came with.
    package init(identifier: String, content: NotificationContent, arrival: APNsRequestFields) {
        self.identifier = identifier
        self.content = content
        given = [:]
        self.arrival = arrival
    }

    /// The same request showing other content, as an extension hands on what it opened.
    package init(_ request: NotificationRequest, showing content: NotificationContent) {
        identifier = request.identifier
        self.content = content
        given = request.given
        arrival = request.arrival
    }

    /// The device token the request was addressed to, for one that reached the listener: one
    /// listener stands for many devices, and each remembers what it showed on its own.
    package var device: String? { arrival?.device }

    /// The payload's `aps` dictionary, empty when missing.
    public var aps: JSONObject { content.userInfo["aps"]?.objectValue ?? JSONObject() }

    /// Apple's rule for running a Notification Service Extension: `mutable-content` is 1 and
    /// the alert has visible text. Anything else is delivered as it came.
    public var invokesServiceExtension: Bool {
        // Read in place, with no copy of `aps`: the runner asks for every notification.
        // "1" is the one JSON number text whose whole-number value is 1.
        guard case .object(let aps)? = content.userInfo["aps"], case .number("1")? = aps["mutable-content"] else { return false }
        return content.hasAlertText || Self.hasLocalizedText(aps)
    }

    /// `title-loc-key`, `subtitle-loc-key` or `loc-key` in `aps.alert`: text iOS shows from
    /// the app's strings, which counts as an alert to show (docs/FORMAT.md §2).
    package static func hasLocalizedText(_ aps: JSONObject) -> Bool {
        guard case .object(let alert)? = aps["alert"] else { return false }
        return localizedTextKeys.contains { alert[$0]?.stringValue?.isEmpty == false }
    }

    private static let localizedTextKeys = ["title-loc-key", "subtitle-loc-key", "loc-key"]

    public static func == (lhs: NotificationRequest, rhs: NotificationRequest) -> Bool {
        lhs.identifier == rhs.identifier && lhs.content == rhs.content && lhs.headers == rhs.headers
    }
}
