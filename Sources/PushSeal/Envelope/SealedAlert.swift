import PushSealJSON
import SealCrypto

/// How insistently iOS presents a notification (`interruption-level`). An enum of constant
/// names, so alert fields holding one copy no reference.
public enum InterruptionLevel: String, Sendable {
    case passive
    case active
    case timeSensitive = "time-sensitive"
    case critical

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
}

/// The alert that travels sealed inside the envelope: what the user should finally see.
/// Its visible fields are `AlertFields` (read as `alert.title`, `alert.badge`, …); the rest
/// is what only the sealed form carries.
@dynamicMemberLookup
public struct SealedAlert: Sendable, Equatable {
    public var fields: AlertFields
    /// Merged into the notification's userInfo by the receiving extension.
    public var data: JSONObject
    /// Message id, random unless the sender chose one; nil when an opened alert has none.
    public var id: String?
    /// Unix seconds when the alert was sealed; nil when an opened alert does not say.
    public var sent: Int64?
    /// Unix seconds after which receivers show a placeholder instead.
    public var expires: Int64?

    /// The sealed-only members, after the alert fields.
    enum Key {
        static let data: StaticString = "data", id: StaticString = "id", sent: StaticString = "sent", expires: StaticString = "exp"
    }

    public init(fields: AlertFields, data: JSONObject = JSONObject(), id: String, sent: Int64, expires: Int64? = nil) {
        self.fields = fields
        self.data = data
        self.id = id
        self.sent = sent
        self.expires = expires
    }

    /// An alert with the common fields set, for tests and examples.
    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, badge: Int? = nil, sound: String? = nil,
        id: String, sent: Int64
    ) {
        var fields = AlertFields()
        fields.title = title
        fields.subtitle = subtitle
        fields.body = body
        fields.badge = badge
        fields.sound = sound
        self.init(fields: fields, id: id, sent: sent)
    }

    public subscript<Value>(dynamicMember path: WritableKeyPath<AlertFields, Value>) -> Value {
        get { fields[keyPath: path] }
        set { fields[keyPath: path] = newValue }
    }

    /// A random message id: 16 hex characters.
    public static func randomID() throws -> String {
        // Every alert of a batch gets one: made on the stack, eight digits at a time.
        var raw: UInt64 = 0
        try withUnsafeMutableBytes(of: &raw) { try SecureRandom.fillPublic($0) }
        return withUnsafeBytes(of: raw) { bytes in
            withUnsafeTemporaryAllocation(byteCount: 16, alignment: 1) { text in
                Hex.writeDigits(of: bytes.baseAddress!, to: text.baseAddress!, uppercase: false)
                Hex.writeDigits(of: bytes.baseAddress! + 4, to: text.baseAddress! + 8, uppercase: false)
                return String(decoding: text, as: UTF8.self)
            }
        }
    }

    /// The alert as the JSON object that gets sealed: the fields in table order, then the rest.
    package var json: JSONObject {
        var object = JSONObject()
        fields.write(into: &object)
        object.append(Key.data.description, data.isEmpty ? nil : .object(data))
        object.append(Key.id.description, id.map(JSONValue.string))
        object.append(Key.sent.description, sent.map { JSONValue.integer($0) })
        object.append(Key.expires.description, expires.map { JSONValue.integer($0) })
        return object
    }

    /// The plaintext to seal: the JSON right-padded with spaces to a multiple of `pad`, so
    /// the ciphertext length reveals only a size bucket. JSON parsers skip trailing white
    /// space, so the receiving side needs no unpadding step.
    package func plaintext(paddedTo pad: Int) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(256)
        writeJSON(to: &bytes)
        if pad > 1, bytes.count % pad != 0 {
            let spaces = pad - bytes.count % pad
            // Appended in one copy; a repeated element is appended byte by byte.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: spaces) { blank in
                blank.initialize(repeating: UInt8(ascii: " "))
                bytes.append(contentsOf: UnsafeBufferPointer(blank))
            }
        }
        return bytes
    }

    /// Appends `json` as JSON text, written member by member without building the object
    /// (the same bytes as `JSONWriter.write(.object(json))`).
    func writeJSON(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        var first = true
        fields.writeMembers(to: &output, first: &first)
        // The names as literals, `"name":` (Key's spellings), written without an escape scan.
        func key(_ prefix: StaticString) {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            prefix.withUTF8Buffer { output.append(contentsOf: $0) }
        }
        if !data.isEmpty {
            key("\"data\":")
            JSONWriter.write(.object(data), to: &output)
        }
        if let id {
            key("\"id\":")
            JSONWriter.writeString(id, to: &output)
        }
        if let sent {
            key("\"sent\":")
            JSONWriter.writeInteger(sent, to: &output)
        }
        if let expires {
            key("\"exp\":")
            JSONWriter.writeInteger(expires, to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Reads an opened plaintext by docs/FORMAT.md §5, the envelope having been in `field`.
    /// Unknown members are ignored so later senders may add some; a known member of the wrong
    /// type or value, an alert with neither a title nor a body to show, and `data` that
    /// names `aps` or the field are refused. The members are taken as they are read, with no
    /// tree of the whole alert: the receiver opens one for every notification.
    package init(plaintext: some Collection<UInt8>, field: String = PayloadSealer.defaultField) throws {
        self = try plaintext.withBytes { try SealedAlert(plaintext: $0, field: field) }
    }

    /// The same from bytes wherever they lie (the receiver opens onto the stack). With
    /// `requiringIdentity` (a `ps3` alert) `id` and `sent` must be there: a message a receiver
    /// cannot tell from another, or date, is refused.
    package init(plaintext: UnsafeRawBufferPointer, field: String, requiringIdentity: Bool = false) throws {
        self.init(fields: AlertFields(), data: JSONObject(), id: nil, sent: nil)
        let isObject: Bool
        do {
            isObject = try JSONParser.forEachMember(namedIn: plaintext) { name, value in try take(name, value) }
        } catch let error as JSONParseError {
            throw EnvelopeError(.malformed, "the opened envelope is not a JSON alert (\(error))", underlying: error)
        }
        guard isObject else {
            let kind = (try? JSONParser.parse(plaintext))?.kindName ?? "something else"
            throw EnvelopeError(.malformed, "the opened envelope holds \(kind), not an alert object")
        }
        guard fields.title?.isEmpty == false || fields.body?.isEmpty == false else {
            throw EnvelopeError(.malformed, "the sealed alert has neither a title nor a body to show")
        }
        if !data.isEmpty, let name = data["aps"] != nil ? "aps" : data[field] != nil ? field : nil {
            throw EnvelopeError(.malformed, "the sealed data names '\(name)', which the payload's own member holds")
        }
        if requiringIdentity {
            guard id != nil else { throw EnvelopeError(.malformed, "the sealed alert has no 'id', which a ps3 alert must have") }
            guard sent != nil else { throw EnvelopeError(.malformed, "the sealed alert has no 'sent' time, which a ps3 alert must have") }
        }
    }

    /// The members every initialiser starts from; `id` and `sent` nil until read.
    private init(fields: AlertFields, data: JSONObject, id: String?, sent: Int64?) {
        self.fields = fields
        self.data = data
        self.id = id
        self.sent = sent
        self.expires = nil
    }

    /// Reads an alert object as the sender wrote it, in one pass over its members.
    package init(json object: JSONObject) throws {
        self.init(fields: AlertFields(), data: JSONObject(), id: nil, sent: nil)
        for (key, value) in object {
            var key = key
            try key.withUTF8 { try take(UnsafeRawBufferPointer($0), value) }
        }
    }

    /// Sets the member named `name` of a sealed alert; unknown ones are skipped, as later
    /// senders may add some. The name is matched as bytes: no String is made for it.
    private mutating func take(_ name: UnsafeRawBufferPointer, _ value: JSONValue) throws {
        func integer(_ value: JSONValue) throws -> Int64? {
            if case .null = value { return nil }
            guard let number = value.integerValue else {
                throw EnvelopeError(.malformed, "alert field '\(String(decoding: name, as: UTF8.self))' is not a whole number")
            }
            return number
        }
        if let (field, isAlias) = AlertField.spelling(bytes: name), !isAlias {
            // The sealed form takes APNs' spelling alone: the CLI's `timeSensitive` alias is
            // the sender's convenience, never the wire's.
            if field == .interruptionLevel, case .string(let text) = value, InterruptionLevel(rawValue: text) == nil {
                throw EnvelopeError(.malformed, "alert field 'interruption-level' is not passive, active, time-sensitive or critical")
            }
            do {
                try fields.set(field, json: value)
            } catch {
                throw EnvelopeError(.malformed, "alert field \(error.reason)", underlying: error)
            }
        } else if JSONName.is(name, Key.data) {
            switch value {
            case .null: break
            case .object(let members): data = members
            default: throw EnvelopeError(.malformed, "alert field 'data' is \(value.kindName), not an object")
            }
        } else if JSONName.is(name, Key.id) {
            switch value {
            case .null: id = nil
            case .string(let text) where (1...64).contains(text.utf8.count): id = text
            default: throw EnvelopeError(.malformed, "alert field 'id' is not a string of 1 to 64 bytes")
            }
        } else if JSONName.is(name, Key.sent) {
            sent = try integer(value)
        } else if JSONName.is(name, Key.expires) {
            expires = try integer(value)
        }
    }
}
