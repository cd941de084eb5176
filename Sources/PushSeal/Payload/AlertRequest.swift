/// What a sender asks for, before it is checked and stamped: filled from command-line
/// options or from one line of `encrypt --batch` input, then turned into a `SealedAlert`.
public struct AlertRequest: Sendable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var badge: Int?
    public var sound: String?
    public var threadID: String?
    public var category: String?
    public var targetContentID: String?
    public var level: String?
    public var relevanceScore: String?
    /// Sealed as `data.url`, for the app to open.
    public var url: String?
    public var data = JSONObject()
    /// Seconds until receivers treat the message as expired.
    public var timeToLive: Duration?
    public var id: String?

    public init() {}

    /// The `ttl` a sender may ask for: a second to a year.
    public static let timeToLiveRange = Duration.seconds(1)...Duration.seconds(365 * 86_400)

    /// Names a batch line may use: the sealed field names, plus the option names
    /// (`message`, `group`, `level`, `url`, `ttl`) so a line reads like the command.
    static let batchKeys: [String] = [
        "title", "subtitle", "body", "message", "badge", "sound", "thread-id", "group", "category",
        "target-content-id", "interruption-level", "level", "relevance-score", "url", "data", "ttl", "id",
    ]

    /// Reads one JSON object of batch input, in one pass over its members.
    public init(json object: JSONObject) throws {
        func string(_ key: String, _ value: JSONValue) throws -> String? {
            switch value {
            case .null: return nil
            case .string(let text): return text
            default: throw PayloadError(.invalidAlert, "'\(key)' is \(value.kindName), not a string")
            }
        }
        var message: String?, group: String?, shortLevel: String?
        for (key, value) in object {
            switch key {
            case "title": title = try string(key, value)
            case "subtitle": subtitle = try string(key, value)
            case "body": body = try string(key, value)
            case "message": message = try string(key, value)
            case "sound": sound = try string(key, value)
            case "thread-id": threadID = try string(key, value)
            case "group": group = try string(key, value)
            case "category": category = try string(key, value)
            case "target-content-id": targetContentID = try string(key, value)
            case "interruption-level": level = try string(key, value)
            case "level": shortLevel = try string(key, value)
            case "url": url = try string(key, value)
            case "id": id = try string(key, value)
            case "badge":
                guard value != .null else { continue }
                guard let number = value.integerValue, let exact = Int(exactly: number) else {
                    throw PayloadError(.invalidAlert, "'badge' must be a whole number")
                }
                badge = exact
            case "relevance-score":
                switch value {
                case .null: relevanceScore = nil
                case .number(let text): relevanceScore = text
                default: throw PayloadError(.invalidAlert, "'relevance-score' must be a number from 0 to 1")
                }
            case "data":
                switch value {
                case .null: break
                case .object(let members): data = members
                default: throw PayloadError(.invalidAlert, "'data' is \(value.kindName), not an object")
                }
            case "ttl":
                switch value {
                case .null: timeToLive = nil
                case .string(let text):
                    guard let duration = DurationText.parse(text, in: Self.timeToLiveRange) else {
                        throw PayloadError(.invalidAlert, "'ttl' must be a duration from 1s to 365d, such as 3600s, 90m, 12h or 7d")
                    }
                    timeToLive = duration
                case .number:
                    guard let seconds = value.integerValue, Self.timeToLiveRange.contains(.seconds(seconds)) else {
                        throw PayloadError(.invalidAlert, "'ttl' must be a number of seconds from 1 to 31536000")
                    }
                    timeToLive = .seconds(seconds)
                default: throw PayloadError(.invalidAlert, "'ttl' must be a duration such as 3600s, 90m, 12h or 7d")
                }
            default:
                throw PayloadError(.invalidAlert, "unknown alert field '\(key.prefix(64))' (known: \(Self.batchKeys.sorted().joined(separator: ", ")))")
            }
        }
        // The short names are the options' spellings of the same fields: one of each pair.
        for (long, short, longName, shortName) in [(body, message, "body", "message"), (threadID, group, "thread-id", "group"),
                                                   (level, shortLevel, "interruption-level", "level")]
        where long != nil && short != nil {
            throw PayloadError(.invalidAlert, "give '\(longName)' or '\(shortName)', not both: they are the same field")
        }
        body = body ?? message
        threadID = threadID ?? group
        level = level ?? shortLevel
    }

    /// Checks the request and stamps it with an id and the time it was sealed.
    public func alert(now: Int64) throws -> SealedAlert {
        guard title?.isEmpty == false || body?.isEmpty == false else {
            throw PayloadError(.invalidAlert, "an alert needs a title or a body")
        }
        var interruptionLevel: InterruptionLevel?
        if let level {
            guard let parsed = InterruptionLevel(level) else {
                throw PayloadError(.invalidAlert, "unknown level '\(level.prefix(32))' (use passive, active, time-sensitive or critical)")
            }
            interruptionLevel = parsed
        }
        if let relevanceScore {
            guard let score = Double(relevanceScore), (0...1).contains(score) else {
                throw PayloadError(.invalidAlert, "'relevance-score' must be a number from 0 to 1")
            }
        }
        if let id, id.isEmpty || id.utf8.count > 64 {
            throw PayloadError(.invalidAlert, "'id' must be 1 to 64 bytes")
        }
        if let badge, badge < 0 {
            throw PayloadError(.invalidAlert, "'badge' must be 0 or more")
        }
        var data = data
        if let url { data["url"] = .string(url) }
        return SealedAlert(
            title: title, subtitle: subtitle, body: body, badge: badge, sound: sound,
            threadID: threadID, category: category, targetContentID: targetContentID,
            interruptionLevel: interruptionLevel, relevanceScore: relevanceScore, data: data,
            id: try id ?? SealedAlert.randomID(), sent: now,
            expires: timeToLive.map { now + max(1, DurationText.seconds($0)) })
    }
}
