/// What a notification shows: the emulation of `UNNotificationContent`.
public struct NotificationContent: Sendable, Equatable {
    public var title: String
    public var subtitle: String
    public var body: String
    public var badge: Int?
    public var sound: String?
    public var threadIdentifier: String
    public var categoryIdentifier: String
    public var targetContentIdentifier: String?
    public var interruptionLevel: InterruptionLevel?
    /// Kept as JSON number text, like the payload carries it.
    public var relevanceScore: String?
    /// The whole payload, `aps` included, as iOS hands it to the app.
    public var userInfo: JSONObject

    public init(
        title: String = "", subtitle: String = "", body: String = "", badge: Int? = nil,
        sound: String? = nil, threadIdentifier: String = "", categoryIdentifier: String = "",
        targetContentIdentifier: String? = nil, interruptionLevel: InterruptionLevel? = nil,
        relevanceScore: String? = nil, userInfo: JSONObject = JSONObject()
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.threadIdentifier = threadIdentifier
        self.categoryIdentifier = categoryIdentifier
        self.targetContentIdentifier = targetContentIdentifier
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.userInfo = userInfo
    }

    /// iOS shows, and invokes an extension for, only content with a title, subtitle or body.
    public var hasAlertText: Bool {
        !title.isEmpty || !subtitle.isEmpty || !body.isEmpty
    }

    /// The content iOS builds from an APNs payload's `aps` dictionary.
    public init(payload: JSONObject) {
        self.init(userInfo: payload)
        guard case .object(let aps)? = payload["aps"] else { return }
        switch aps["alert"] {
        case .string(let text)?:
            body = text
        case .object(let alert)?:
            title = alert["title"]?.stringValue ?? ""
            subtitle = alert["subtitle"]?.stringValue ?? ""
            body = alert["body"]?.stringValue ?? ""
        default:
            break
        }
        badge = aps["badge"]?.integerValue.flatMap { Int(exactly: $0) }
        switch aps["sound"] {
        case .string(let name)?: sound = name
        case .object(let critical)?: sound = critical["name"]?.stringValue
        default: break
        }
        threadIdentifier = aps["thread-id"]?.stringValue ?? ""
        categoryIdentifier = aps["category"]?.stringValue ?? ""
        targetContentIdentifier = aps["target-content-id"]?.stringValue
        interruptionLevel = aps["interruption-level"]?.stringValue.flatMap(InterruptionLevel.init)
        if case .number(let score)? = aps["relevance-score"] { relevanceScore = score }
    }
}
