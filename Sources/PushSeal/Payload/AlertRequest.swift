import PushSealJSON

/// What a sender asks for, before it is stamped: filled from command-line options or from
/// one line of `encrypt --batch` input (both through `AlertFields`, so they follow the same
/// rules), then turned into a `SealedAlert`.
@dynamicMemberLookup
public struct AlertRequest: Sendable {
    public var fields = AlertFields()
    /// Sealed as `data.url`, for the app to open.
    public var url: String?
    public var data = JSONObject()
    /// How long until receivers treat the message as expired.
    public var timeToLive: Duration?
    public var id: String?
    /// The recipient key to seal this alert to (`ps2`), a batch line's `"to"`.
    public var recipient: String?
    /// What stays visible when the seal cannot be opened, a batch line's `visible-sound` and
    /// `visible-level`: they go in the clear `aps`, not in the seal.
    public var visible = VisibleMetadata()

    public init() {}

    /// An alert with a title, a subtitle and a body: at least a title or a body.
    public init(title: String? = nil, subtitle: String? = nil, body: String? = nil) {
        fields.title = title
        fields.subtitle = subtitle
        fields.body = body
    }

    public subscript<Value>(dynamicMember path: WritableKeyPath<AlertFields, Value>) -> Value {
        get { fields[keyPath: path] }
        set { fields[keyPath: path] = newValue }
    }

    /// The `ttl` a sender may ask for: a second to a year.
    package static let timeToLiveRange = Duration.seconds(1)...Duration.seconds(365 * 86_400)

    /// Members a batch line may have besides the alert fields and their aliases.
    enum Key {
        static let url: StaticString = "url", data: StaticString = "data", ttl: StaticString = "ttl", id: StaticString = "id", to: StaticString = "to"
        static let visibleSound: StaticString = "visible-sound", visibleLevel: StaticString = "visible-level"
    }

    /// Every name a batch line may use.
    static let batchKeys: [String] = AlertField.every.flatMap { [$0.key] + $0.aliases } + [Key.url, Key.data, Key.ttl, Key.id, Key.to, Key.visibleSound, Key.visibleLevel].map(\.description)

    /// Reads one JSON object of batch input, in one pass over its members.
    package init(json object: JSONObject) throws {
        var given = GivenFields()
        for (key, value) in object {
            var key = key
            try key.withUTF8 { try take(UnsafeRawBufferPointer($0), value, given: &given) }
        }
    }

    /// Reads one line of batch input as its members are parsed, building no JSON object:
    /// `encrypt --batch`'s path. Throws `JSONParseError` for text that is not JSON.
    package init(line: UnsafeRawBufferPointer) throws {
        var given = GivenFields()
        guard try JSONParser.forEachMember(namedIn: line, { name, value in try take(name, value, given: &given) }) else {
            throw PayloadError(.invalidAlert, "the line is not a JSON object")
        }
    }

    /// Which fields were given by their own name and which by an alias, one bit per field
    /// in table order: an alias is the option's spelling of the same field, so a line may
    /// use one of the two.
    private struct GivenFields {
        var byName: UInt16 = 0, byAlias: UInt16 = 0
    }

    /// Sets the member named `name`; the name is matched as bytes, and made a String only
    /// for an error.
    private mutating func take(_ name: UnsafeRawBufferPointer, _ value: JSONValue, given: inout GivenFields) throws {
        if let (field, isAlias) = AlertField.spelling(bytes: name) {
            let bit = UInt16(1) << AlertField.every.firstIndex(of: field)!
            if isAlias { given.byAlias |= bit } else { given.byName |= bit }
            if given.byName & given.byAlias & bit != 0 {
                throw PayloadError(.invalidAlert, "give '\(field.key)' or '\(field.aliases[0])', not both: they are the same field")
            }
            try fields.set(field, json: value)
        } else if JSONName.is(name, Key.url) || JSONName.is(name, Key.id) {
            switch value {
            case .null: break
            case .string(let text): if JSONName.is(name, Key.url) { url = text } else { id = text }
            default: throw PayloadError(.invalidAlert, "'\(String(decoding: name, as: UTF8.self))' is \(value.kindName), not a string")
            }
        } else if JSONName.is(name, Key.to) {
            switch value {
            case .null: recipient = nil
            case .string(let text) where KeyID.isValid(text): recipient = text
            default: throw PayloadError(.invalidAlert, "'to' is the kid of a recipient key (1 to 64 of A-Z a-z 0-9 _ -)")
            }
        } else if JSONName.is(name, Key.visibleSound) {
            switch value {
            case .null: visible.sound = nil
            case .string(let text) where VisibleMetadata.isSoundName(text): visible.sound = text
            default: throw PayloadError(.invalidAlert, "'visible-sound' is the name of a sound file (1 to 256 bytes), or \"default\"")
            }
        } else if JSONName.is(name, Key.visibleLevel) {
            switch value {
            case .null: visible.level = nil
            case .string(let text) where InterruptionLevel(text) != nil: visible.level = InterruptionLevel(text)
            default: throw PayloadError(.invalidAlert, "'visible-level' is passive, active, time-sensitive or critical")
            }
        } else if JSONName.is(name, Key.data) {
            switch value {
            case .null: break
            case .object(let members): data = members
            default: throw PayloadError(.invalidAlert, "'data' is \(value.kindName), not an object")
            }
        } else if JSONName.is(name, Key.ttl) {
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
        } else {
            let key = String(decoding: name, as: UTF8.self)
            throw PayloadError(.invalidAlert, "unknown alert field '\(key.prefix(64))' (known: \(Self.batchKeys.sorted().joined(separator: ", ")))")
        }
    }

    /// Checks the request and stamps it with an id and the time it was sealed.
    public consuming func alert(now: Int64) throws -> SealedAlert {
        guard fields.title?.isEmpty == false || fields.body?.isEmpty == false else {
            throw PayloadError(.invalidAlert, "an alert needs a title or a body")
        }
        if let id, id.isEmpty || id.utf8.count > 64 {
            throw PayloadError(.invalidAlert, "'id' must be 1 to 64 bytes")
        }
        if let url {
            // Two sources for one field: neither silently wins.
            guard data["url"] == nil else { throw PayloadError(.invalidAlert, "'url' and data.url both set the sealed data.url; give one") }
            data["url"] = .string(url)
        }
        let expires = timeToLive.map { ttl in
            let (sum, overflow) = now.addingReportingOverflow(max(1, DurationText.seconds(ttl)))
            return overflow ? Int64.max : sum
        }
        return SealedAlert(fields: fields, data: data, id: try id ?? SealedAlert.randomID(), sent: now, expires: expires)
    }
}
