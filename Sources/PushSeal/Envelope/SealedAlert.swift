import SealCrypto

/// How insistently iOS presents a notification (`interruption-level`).
public struct InterruptionLevel: Hashable, Sendable {
    public let rawValue: String

    public static let passive = InterruptionLevel(rawValue: "passive")
    public static let active = InterruptionLevel(rawValue: "active")
    public static let timeSensitive = InterruptionLevel(rawValue: "time-sensitive")
    public static let critical = InterruptionLevel(rawValue: "critical")
    public static let all: [InterruptionLevel] = [.passive, .active, .timeSensitive, .critical]

    /// Accepts APNs' spelling and Apple's Swift one (`timeSensitive`).
    public init?(_ text: String) {
        switch text {
        case "passive": self = .passive
        case "active": self = .active
        case "time-sensitive", "timeSensitive": self = .timeSensitive
        case "critical": self = .critical
        default: return nil
        }
    }

    private init(rawValue: String) {
        self.rawValue = rawValue
    }
}

/// The alert that travels sealed inside the envelope: what the user should finally see.
public struct SealedAlert: Sendable, Equatable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var badge: Int?
    public var sound: String?
    public var threadID: String?
    public var category: String?
    public var targetContentID: String?
    public var interruptionLevel: InterruptionLevel?
    /// APNs' relevance score, kept as its JSON number text (0 to 1).
    public var relevanceScore: String?
    /// Merged into the notification's userInfo by the receiving extension.
    public var data: JSONObject
    /// Message id, random unless the sender chose one.
    public var id: String
    /// Unix seconds when the alert was sealed.
    public var sent: Int64
    /// Unix seconds after which receivers show a placeholder instead.
    public var expires: Int64?

    enum Field {
        static let title = "title", subtitle = "subtitle", body = "body", badge = "badge"
        static let sound = "sound", threadID = "thread-id", category = "category"
        static let targetContentID = "target-content-id", interruptionLevel = "interruption-level"
        static let relevanceScore = "relevance-score", data = "data", id = "id", sent = "sent", expires = "exp"
    }

    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, badge: Int? = nil,
        sound: String? = nil, threadID: String? = nil, category: String? = nil,
        targetContentID: String? = nil, interruptionLevel: InterruptionLevel? = nil,
        relevanceScore: String? = nil, data: JSONObject = JSONObject(), id: String, sent: Int64,
        expires: Int64? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.category = category
        self.targetContentID = targetContentID
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.data = data
        self.id = id
        self.sent = sent
        self.expires = expires
    }

    /// A random message id: 16 hex characters.
    public static func randomID() throws -> String {
        var bytes = [UInt8](repeating: 0, count: 8)
        try bytes.withUnsafeMutableBytes { try SecureRandom.fillPublic($0) }
        return Hex.encode(bytes)
    }

    /// The alert as the JSON object that gets sealed, members in a fixed order.
    public var json: JSONObject {
        var object = JSONObject()
        object.append(Field.title, title.map(JSONValue.string))
        object.append(Field.subtitle, subtitle.map(JSONValue.string))
        object.append(Field.body, body.map(JSONValue.string))
        object.append(Field.badge, badge.map { JSONValue.integer($0) })
        object.append(Field.sound, sound.map(JSONValue.string))
        object.append(Field.threadID, threadID.map(JSONValue.string))
        object.append(Field.category, category.map(JSONValue.string))
        object.append(Field.targetContentID, targetContentID.map(JSONValue.string))
        object.append(Field.interruptionLevel, interruptionLevel.map { JSONValue.string($0.rawValue) })
        object.append(Field.relevanceScore, relevanceScore.map(JSONValue.number))
        object.append(Field.data, data.isEmpty ? nil : .object(data))
        object.append(Field.id, .string(id))
        object.append(Field.sent, .integer(sent))
        object.append(Field.expires, expires.map { JSONValue.integer($0) })
        return object
    }

    /// The plaintext to seal: the JSON right-padded with spaces to a multiple of `pad`, so
    /// the ciphertext length reveals only a size bucket. JSON parsers skip trailing white
    /// space, so the receiving side needs no unpadding step.
    public func plaintext(paddedTo pad: Int) -> [UInt8] {
        var bytes = JSONWriter.bytes(.object(json))
        if pad > 1, bytes.count % pad != 0 {
            bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: pad - bytes.count % pad))
        }
        return bytes
    }

    /// Reads an opened plaintext. Unknown members are ignored so later senders may add some.
    public init(plaintext: [UInt8]) throws {
        let value: JSONValue
        do {
            value = try JSONParser.parse(plaintext)
        } catch {
            throw EnvelopeError(.invalidAlert, "the opened envelope is not a JSON alert (\(error))")
        }
        guard case .object(let object) = value else {
            throw EnvelopeError(.invalidAlert, "the opened envelope holds \(value.kindName), not an alert object")
        }
        try self.init(json: object)
    }

    /// Reads an alert object as the sender wrote it, in one pass over its members.
    public init(json object: JSONObject) throws {
        func string(_ key: String, _ value: JSONValue) throws -> String? {
            switch value {
            case .null: return nil
            case .string(let text): return text
            default: throw EnvelopeError(.invalidAlert, "alert field '\(key)' is \(value.kindName), not a string")
            }
        }
        func integer(_ key: String, _ value: JSONValue) throws -> Int64? {
            if value == .null { return nil }
            guard let number = value.integerValue else {
                throw EnvelopeError(.invalidAlert, "alert field '\(key)' is not a whole number")
            }
            return number
        }
        self.init(id: "", sent: 0)
        for (key, value) in object {
            switch key {
            case Field.title: title = try string(key, value)
            case Field.subtitle: subtitle = try string(key, value)
            case Field.body: body = try string(key, value)
            case Field.badge: badge = try integer(key, value).flatMap { Int(exactly: $0) }
            case Field.sound: sound = try string(key, value)
            case Field.threadID: threadID = try string(key, value)
            case Field.category: category = try string(key, value)
            case Field.targetContentID: targetContentID = try string(key, value)
            case Field.interruptionLevel: interruptionLevel = try string(key, value).flatMap(InterruptionLevel.init)
            case Field.relevanceScore:
                if case .number(let text) = value { relevanceScore = text }
            case Field.data:
                switch value {
                case .null: break
                case .object(let members): data = members
                default: throw EnvelopeError(.invalidAlert, "alert field 'data' is \(value.kindName), not an object")
                }
            case Field.id: id = try string(key, value) ?? ""
            case Field.sent: sent = try integer(key, value) ?? 0
            case Field.expires: expires = try integer(key, value)
            default: break  // Later senders may add fields; this reader skips them.
            }
        }
    }
}
