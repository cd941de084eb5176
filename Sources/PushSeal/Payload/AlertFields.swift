import PushSealJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one table of an alert's fields. Each has one name, used alike in the sealed alert,
/// in APNs' `aps` dictionary (title, subtitle and body under `alert`), in the request and
/// answer of an `--extension` program and in delivery records; every path iterates this
/// table, so a field cannot be known in one place and lost in another.
public enum AlertField: String, CaseIterable, Sendable {
    case title, subtitle, body, badge, sound
    case threadID = "thread-id"
    case category
    case targetContentID = "target-content-id"
    case interruptionLevel = "interruption-level"
    case relevanceScore = "relevance-score"

    /// The name in every JSON form.
    public var key: String { rawValue }

    /// `"name":`, as a writer puts it before the value: every sealed alert writes a few, and
    /// the names need no escaping, so they are not scanned for any.
    var memberPrefix: StaticString {
        switch self {
        case .title: "\"title\":"
        case .subtitle: "\"subtitle\":"
        case .body: "\"body\":"
        case .badge: "\"badge\":"
        case .sound: "\"sound\":"
        case .threadID: "\"thread-id\":"
        case .category: "\"category\":"
        case .targetContentID: "\"target-content-id\":"
        case .interruptionLevel: "\"interruption-level\":"
        case .relevanceScore: "\"relevance-score\":"
        }
    }

    /// `allCases`, made once: the synthesised one builds a new array on every use, and the
    /// receiver walks this table several times per notification.
    package static let every: [AlertField] = allCases

    /// The field with this name (aliases included).
    package static func named(_ name: String) -> AlertField? {
        spelling(name)?.field
    }

    /// The field with this name, and whether the name is an alias rather than the field's
    /// own key. Readers call it for every member of every alert, so it compares bytes,
    /// length first, with constant spellings: no hashing, no Unicode comparison (every
    /// name is ASCII, so the bytes decide) and no reference counting.
    package static func spelling(_ name: String) -> (field: AlertField, isAlias: Bool)? {
        name.withUTF8Bytes(spelling(utf8:))
    }

    /// The same for a name read as bytes (`JSONParser.forEachMember(namedIn:)`).
    package static func spelling(bytes: UnsafeRawBufferPointer) -> (field: AlertField, isAlias: Bool)? {
        spelling(utf8: bytes.assumingMemoryBound(to: UInt8.self))
    }

    private static func spelling(utf8 bytes: UnsafeBufferPointer<UInt8>) -> (field: AlertField, isAlias: Bool)? {
        guard let first = bytes.first else { return nil }
        // Names of one length differ in their first byte, so memcmp runs on a match only.
        for spelling in spellings where spelling.name.utf8CodeUnitCount == bytes.count && spelling.name.utf8Start[0] == first {
            if memcmp(spelling.name.utf8Start, bytes.baseAddress!, bytes.count) == 0 {
                return (spelling.field, spelling.isAlias)
            }
        }
        return nil
    }

    /// Every key and alias with its field. `aliases` and `rawValue` say the same, and a test
    /// holds the two to each other; constants, so that a lookup retains nothing.
    static let spellings: [(name: StaticString, field: AlertField, isAlias: Bool)] = [
        ("title", .title, false), ("subtitle", .subtitle, false), ("body", .body, false),
        ("badge", .badge, false), ("sound", .sound, false), ("thread-id", .threadID, false),
        ("category", .category, false), ("target-content-id", .targetContentID, false),
        ("interruption-level", .interruptionLevel, false), ("relevance-score", .relevanceScore, false),
        ("message", .body, true), ("group", .threadID, true), ("level", .interruptionLevel, true)
    ]

    /// The shorter names a batch line may use instead, spelled like the options.
    package var aliases: [String] {
        switch self {
        case .body: ["message"]
        case .threadID: ["group"]
        case .interruptionLevel: ["level"]
        default: []
        }
    }

    /// Whether the field is alert text, which lives under `aps.alert`.
    package var isText: Bool { self == .title || self == .subtitle || self == .body }
}

/// The visible part of an alert: every field a sender sets and a device shows, each typed
/// and checked once, when it is set.
public struct AlertFields: Sendable, Equatable {
    public var title: String? {
        get { storage.title }
        set { unique().title = newValue }
    }
    public var subtitle: String? {
        get { storage.subtitle }
        set { unique().subtitle = newValue }
    }
    public var body: String? {
        get { storage.body }
        set { unique().body = newValue }
    }
    public var badge: Int? {
        get { storage.badge }
        set { unique().badge = newValue }
    }
    public var sound: String? {
        get { storage.sound }
        set { unique().sound = newValue }
    }
    public var threadID: String? {
        get { storage.threadID }
        set { unique().threadID = newValue }
    }
    public var category: String? {
        get { storage.category }
        set { unique().category = newValue }
    }
    public var targetContentID: String? {
        get { storage.targetContentID }
        set { unique().targetContentID = newValue }
    }
    public var interruptionLevel: InterruptionLevel? {
        get { storage.interruptionLevel }
        set { unique().interruptionLevel = newValue }
    }
    /// APNs' relevance score, kept as its JSON number text (0 to 1).
    public var relevanceScore: String? {
        get { storage.relevanceScore }
        set { unique().relevanceScore = newValue }
    }

    /// The fields sit in one box, shared by copies until one is changed: a notification's
    /// fields are copied into its content, the opened content, the delivery and its record,
    /// and each copy is then one reference rather than eight strings.
    private final class Storage: @unchecked Sendable {
        // Changed only through `unique()`, so never while another copy can read it.
        var title, subtitle, body: String?
        var badge: Int?
        var sound, threadID, category, targetContentID: String?
        var interruptionLevel: InterruptionLevel?
        var relevanceScore: String?

        init() {}

        init(copying other: Storage) {
            title = other.title
            subtitle = other.subtitle
            body = other.body
            badge = other.badge
            sound = other.sound
            threadID = other.threadID
            category = other.category
            targetContentID = other.targetContentID
            interruptionLevel = other.interruptionLevel
            relevanceScore = other.relevanceScore
        }

        /// The box of every set of fields nothing was set in yet; never changed, as it is
        /// never uniquely referenced.
        static let empty = Storage()
    }

    private var storage = Storage.empty

    public init() {}

    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage === Storage.empty ? Storage() : Storage(copying: storage)
        }
        return storage
    }

    public static func == (lhs: AlertFields, rhs: AlertFields) -> Bool {
        lhs.storage === rhs.storage || AlertField.every.allSatisfy { lhs[$0] == rhs[$0] }
    }

    /// The field's value as JSON, or nil when it is not set.
    package subscript(field: AlertField) -> JSONValue? {
        switch field {
        case .title: title.map(JSONValue.string)
        case .subtitle: subtitle.map(JSONValue.string)
        case .body: body.map(JSONValue.string)
        case .badge: badge.map { JSONValue.integer($0) }
        case .sound: sound.map(JSONValue.string)
        case .threadID: threadID.map(JSONValue.string)
        case .category: category.map(JSONValue.string)
        case .targetContentID: targetContentID.map(JSONValue.string)
        case .interruptionLevel: interruptionLevel.map { JSONValue.string($0.rawValue) }
        case .relevanceScore: relevanceScore.map(JSONValue.number)
        }
    }

    /// Sets a field from JSON, refusing a value of the wrong kind or out of range; `null`
    /// unsets it.
    package mutating func set(_ field: AlertField, json value: JSONValue) throws(PayloadError) {
        if case .null = value { return clear(field) }
        switch field {
        case .badge:
            guard let number = value.integerValue, let badge = Int(exactly: number), badge >= 0 else {
                throw PayloadError(.invalidAlert, "'badge' must be a whole number, 0 or more")
            }
            self.badge = badge
        case .relevanceScore:
            guard case .number(let text) = value, let score = Double(text), (0...1).contains(score) else {
                throw PayloadError(.invalidAlert, "'relevance-score' must be a number from 0 to 1")
            }
            relevanceScore = text
        default:
            guard let text = value.stringValue else {
                throw PayloadError(.invalidAlert, "'\(field.key)' is \(value.kindName), not a string")
            }
            try set(field, text: text)
        }
    }

    /// Sets a field from text as typed on the command line.
    package mutating func set(_ field: AlertField, text: String) throws(PayloadError) {
        switch field {
        case .title: title = text
        case .subtitle: subtitle = text
        case .body: body = text
        case .sound: sound = text
        case .threadID: threadID = text
        case .category: category = text
        case .targetContentID: targetContentID = text
        case .interruptionLevel:
            guard let level = InterruptionLevel(text) else {
                throw PayloadError(.invalidAlert, "unknown level '\(text.prefix(32))' (use passive, active, time-sensitive or critical)")
            }
            interruptionLevel = level
        case .badge:
            guard let badge = Int(text), badge >= 0 else { throw PayloadError(.invalidAlert, "'badge' must be a whole number, 0 or more") }
            self.badge = badge
        case .relevanceScore:
            guard let number = try? JSONParser.parse(text) else {
                throw PayloadError(.invalidAlert, "'relevance-score' must be a number from 0 to 1")
            }
            try set(field, json: number)
        }
    }

    package mutating func clear(_ field: AlertField) {
        switch field {
        case .title: title = nil
        case .subtitle: subtitle = nil
        case .body: body = nil
        case .badge: badge = nil
        case .sound: sound = nil
        case .threadID: threadID = nil
        case .category: category = nil
        case .targetContentID: targetContentID = nil
        case .interruptionLevel: interruptionLevel = nil
        case .relevanceScore: relevanceScore = nil
        }
    }

    /// Whether any field is set.
    package var isEmpty: Bool { AlertField.every.allSatisfy { self[$0] == nil } }

    /// The fields of an opened alert shown over these, its fallback's: the opened alert's
    /// text, even where it has none, and every other field it sets; the rest kept from
    /// these (typed, so nothing is checked again). Only what the opened alert leaves unset
    /// is written, so it usually shares the opened alert's fields rather than copying them.
    package func overlaid(by opened: AlertFields) -> AlertFields {
        var fields = opened
        if fields.badge == nil, let badge { fields.badge = badge }
        if fields.sound == nil, let sound { fields.sound = sound }
        if fields.threadID == nil, let threadID { fields.threadID = threadID }
        if fields.category == nil, let category { fields.category = category }
        if fields.targetContentID == nil, let targetContentID { fields.targetContentID = targetContentID }
        if fields.interruptionLevel == nil, let interruptionLevel { fields.interruptionLevel = interruptionLevel }
        if fields.relevanceScore == nil, let relevanceScore { fields.relevanceScore = relevanceScore }
        return fields
    }

    /// The fields that are set, as JSON members in table order.
    package func write(into object: inout JSONObject) {
        for field in AlertField.every { object.append(field.key, self[field]) }
    }

    /// The same members written straight out as JSON text (`"title":"…",…`), each preceded
    /// by a comma unless it is the object's first: what `write(into:)` and `JSONWriter`
    /// would give, without building the object first (encrypt does this per alert).
    func writeMembers(to output: inout [UInt8], first: inout Bool) {
        func member(_ field: AlertField, _ write: (inout [UInt8]) -> Void) {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            field.memberPrefix.withUTF8Buffer { output.append(contentsOf: $0) }
            write(&output)
        }
        func text(_ field: AlertField, _ value: String?) {
            if let value { member(field) { JSONWriter.writeString(value, to: &$0) } }
        }
        text(.title, title)
        text(.subtitle, subtitle)
        text(.body, body)
        if let badge { member(.badge) { JSONWriter.writeInteger(Int64(badge), to: &$0) } }
        text(.sound, sound)
        text(.threadID, threadID)
        text(.category, category)
        text(.targetContentID, targetContentID)
        text(.interruptionLevel, interruptionLevel?.rawValue)
        if let relevanceScore { member(.relevanceScore) { $0.append(contentsOf: relevanceScore.utf8) } }
    }
}
