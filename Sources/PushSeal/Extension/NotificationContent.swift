import PushSealJSON

/// What a notification shows: the emulation of `UNNotificationContent`, with Apple's
/// property names over the one table of alert fields (`fields`).
public struct NotificationContent: Sendable, Equatable {
    public var fields: AlertFields
    /// The whole payload, `aps` included, as iOS hands it to the app.
    public var userInfo: JSONObject

    public init(
        title: String = "", subtitle: String = "", body: String = "", badge: Int? = nil,
        sound: String? = nil, threadIdentifier: String = "", categoryIdentifier: String = "",
        targetContentIdentifier: String? = nil, interruptionLevel: InterruptionLevel? = nil,
        relevanceScore: String? = nil, userInfo: JSONObject = JSONObject()
    ) {
        fields = AlertFields()
        self.userInfo = userInfo
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.threadIdentifier = threadIdentifier
        self.categoryIdentifier = categoryIdentifier
        fields.badge = badge
        fields.sound = sound
        fields.targetContentID = targetContentIdentifier
        fields.interruptionLevel = interruptionLevel
        fields.relevanceScore = relevanceScore
    }

    // Apple's names; text that UNNotificationContent keeps as "" is nil in the table.
    public var title: String {
        get { fields.title ?? "" }
        set { fields.title = newValue.isEmpty ? nil : newValue }
    }
    public var subtitle: String {
        get { fields.subtitle ?? "" }
        set { fields.subtitle = newValue.isEmpty ? nil : newValue }
    }
    public var body: String {
        get { fields.body ?? "" }
        set { fields.body = newValue.isEmpty ? nil : newValue }
    }
    public var badge: Int? {
        get { fields.badge }
        set { fields.badge = newValue }
    }
    public var sound: String? {
        get { fields.sound }
        set { fields.sound = newValue }
    }
    public var threadIdentifier: String {
        get { fields.threadID ?? "" }
        set { fields.threadID = newValue.isEmpty ? nil : newValue }
    }
    public var categoryIdentifier: String {
        get { fields.category ?? "" }
        set { fields.category = newValue.isEmpty ? nil : newValue }
    }
    public var targetContentIdentifier: String? {
        get { fields.targetContentID }
        set { fields.targetContentID = newValue }
    }
    public var interruptionLevel: InterruptionLevel? {
        get { fields.interruptionLevel }
        set { fields.interruptionLevel = newValue }
    }
    /// Kept as JSON number text, like the payload carries it.
    public var relevanceScore: String? {
        get { fields.relevanceScore }
        set { fields.relevanceScore = newValue }
    }

    /// iOS shows, and invokes an extension for, only content with a title, subtitle or body.
    public var hasAlertText: Bool {
        !title.isEmpty || !subtitle.isEmpty || !body.isEmpty
    }

    /// The content iOS builds from an APNs payload's `aps` dictionary. Values of the wrong
    /// kind are skipped, as iOS skips them.
    public init(payload: JSONObject) {
        self.init(userInfo: payload)
        guard case .object(let aps)? = payload["aps"] else { return }
        // One pass over `aps` and one over its `alert`, each member matched to its field by
        // name (the receiver does this for every notification).
        for (key, value) in aps {
            guard let (field, isAlias) = AlertField.spelling(key), !isAlias, !field.isText else {
                if key == "alert" { setText(from: value) }
                continue
            }
            var value = value
            // A critical alert's sound is a dictionary with its name inside.
            if field == .sound, case .object(let critical) = value {
                guard let name = critical["name"] else { continue }
                value = name
            }
            try? fields.set(field, json: value)
        }
    }

    /// The text field an `aps.alert` key names the localized string of.
    static func localizedField(_ key: String) -> AlertField? {
        switch key {
        case "title-loc-key": .title
        case "subtitle-loc-key": .subtitle
        case "loc-key": .body
        default: nil
        }
    }

    /// The alert text from `aps.alert`: a string is the body, an object holds each text.
    private mutating func setText(from alert: JSONValue) {
        switch alert {
        case .string(let text):
            // UNNotificationContent has no "unset" text, only empty text.
            if !text.isEmpty { fields.body = text }
        case .object(let members):
            // A localized alert is shown too: iOS looks `title-loc-key`, `subtitle-loc-key` and
            // `loc-key` up in the app's strings and shows the key itself when it has none, so
            // the extension runs for it. Literal text wins over a key, in whichever order.
            var localized: [(AlertField, String)] = []
            for (key, value) in members {
                guard let (field, isAlias) = AlertField.spelling(key), !isAlias, field.isText else {
                    if case .string(let text) = value, !text.isEmpty, let field = Self.localizedField(key) { localized.append((field, text)) }
                    continue
                }
                if case .string(let text) = value, text.isEmpty { continue }
                try? fields.set(field, json: value)
            }
            for (field, key) in localized where fields[field] == nil {
                try? fields.set(field, json: .string(key))
            }
        default:
            break
        }
    }
}
