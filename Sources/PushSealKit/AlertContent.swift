import PushSealJSON

/// How insistently a notification is presented (`interruption-level`), in APNs' spelling.
public enum InterruptionLevel: String, Sendable, CaseIterable {
    case passive, active
    case timeSensitive = "time-sensitive"
    case critical

    /// APNs' spelling, or Apple's Swift one (`timeSensitive`), as pushseal's sender accepts.
    public init?(named name: String) {
        self.init(rawValue: name == "timeSensitive" ? "time-sensitive" : name)
    }
}

/// The fields a notification shows, with `UNNotificationContent`'s names; nil is "not set"
/// (iOS keeps unset text as "").
public struct AlertContent: Sendable, Equatable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var badge: Int?
    public var sound: String?
    public var threadIdentifier: String?
    public var categoryIdentifier: String?
    public var targetContentIdentifier: String?
    public var interruptionLevel: InterruptionLevel?
    public var relevanceScore: Double?

    public init(title: String? = nil, subtitle: String? = nil, body: String? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
    }

    /// This content with every field `changes` sets put in its place.
    public func changed(by changes: AlertContent) -> AlertContent {
        var content = self
        content.title = changes.title ?? title
        content.subtitle = changes.subtitle ?? subtitle
        content.body = changes.body ?? body
        content.badge = changes.badge ?? badge
        content.sound = changes.sound ?? sound
        content.threadIdentifier = changes.threadIdentifier ?? threadIdentifier
        content.categoryIdentifier = changes.categoryIdentifier ?? categoryIdentifier
        content.targetContentIdentifier = changes.targetContentIdentifier ?? targetContentIdentifier
        content.interruptionLevel = changes.interruptionLevel ?? interruptionLevel
        content.relevanceScore = changes.relevanceScore ?? relevanceScore
        return content
    }

    /// Whether iOS has text to show (and so runs an extension at all).
    var hasText: Bool {
        !(title ?? "").isEmpty || !(subtitle ?? "").isEmpty || !(body ?? "").isEmpty
    }

    /// The content iOS builds from an APNs payload's `aps`: a string alert is the body,
    /// empty text is no text, a critical sound's name is its sound, and a value of the wrong
    /// kind is skipped, as iOS skips it.
    init(aps: JSONObject) {
        switch aps["alert"] {
        case .string(let text)?:
            body = text.isEmpty ? nil : text
        case .object(let alert)?:
            // A localized alert (`title-loc-key`, `subtitle-loc-key`, `loc-key`) is shown too:
            // iOS looks the key up in the app's strings and shows the key itself when it has
            // none, so it is text, and the extension runs for it. Literal text wins over a key.
            for (name, key) in Self.localizedNames {
                if case .string(let text)? = alert[name], !text.isEmpty {
                    _ = try? set(name, to: .string(text))
                } else if case .string(let text)? = alert[key], !text.isEmpty {
                    _ = try? set(name, to: .string(text))
                }
            }
        default:
            break
        }
        for name in Self.otherNames {
            guard var value = aps[name] else { continue }
            if name == "sound", case .object(let critical) = value { value = critical["name"] ?? .null }
            _ = try? set(name, to: value)
        }
    }

    /// Each text field and the `aps.alert` key that names its localized string.
    static let localizedNames = [("title", "title-loc-key"), ("subtitle", "subtitle-loc-key"), ("body", "loc-key")]

    /// The alert field names other than the text ones, as the sender and `aps` write them.
    static let otherNames = ["badge", "sound", "thread-id", "category", "target-content-id", "interruption-level", "relevance-score"]

    /// Sets the field a sealed alert (or `aps`) names, by the sender's rules: `null` unsets
    /// it; a value of the wrong kind or out of range is refused with the reason. Returns
    /// false for a name that is not an alert field.
    @discardableResult
    mutating func set(_ name: String, to value: JSONValue) throws(OpeningError) -> Bool {
        func text() throws(OpeningError) -> String? {
            switch value {
            case .null: return nil
            case .string(let text): return text
            default: throw OpeningError(.malformed, "alert field '\(name)' is \(value.kindName), not a string")
            }
        }
        switch name {
        case "title": title = try text()
        case "subtitle": subtitle = try text()
        case "body": body = try text()
        case "sound": sound = try text()
        case "thread-id": threadIdentifier = try text()
        case "category": categoryIdentifier = try text()
        case "target-content-id": targetContentIdentifier = try text()
        case "interruption-level":
            guard let name = try text() else {
                interruptionLevel = nil
                break
            }
            // APNs' spelling alone: `timeSensitive` is the CLI's convenience, never the wire's.
            guard let level = InterruptionLevel(rawValue: name) else {
                throw OpeningError(.malformed, "alert field 'interruption-level' is not passive, active, time-sensitive or critical")
            }
            interruptionLevel = level
        case "badge":
            if value == .null {
                badge = nil
                break
            }
            guard let number = value.integerValue, let badge = Int(exactly: number), badge >= 0 else {
                throw OpeningError(.malformed, "alert field 'badge' must be a whole number, 0 or more")
            }
            self.badge = badge
        case "relevance-score":
            if value == .null {
                relevanceScore = nil
                break
            }
            guard let score = value.doubleValue, (0...1).contains(score) else {
                throw OpeningError(.malformed, "alert field 'relevance-score' must be a number from 0 to 1")
            }
            relevanceScore = score
        default:
            return false
        }
        return true
    }
}
