/// A JSON document as pushseal reads and writes it: object members keep their order, numbers
/// keep their exact text, and output never escapes `/`.
///
/// pushseal builds its own rather than using `JSONSerialization` so that payload bytes are
/// stable (APNs' 4096-byte budget is counted on them), nothing on the hot path goes through
/// Foundation's bridging, and hostile input meets one strict set of rules.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number's literal text, validated against the JSON grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The value as a whole number, when it is a number written without fraction or exponent
    /// that fits in 64 bits.
    public var integerValue: Int64? {
        if case .number(let text) = self { return Int64(text) }
        return nil
    }

    public var doubleValue: Double? {
        if case .number(let text) = self { return Double(text) }
        return nil
    }

    /// A short name for the value's kind, for error messages.
    package var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    @inlinable public static func integer<T: BinaryInteger>(_ value: T) -> JSONValue { .number(String(value)) }
}

/// A JSON object whose members keep the order they were added or read in.
public struct JSONObject: Sendable, Equatable, Sequence {
    public private(set) var members: [(key: String, value: JSONValue)] = []

    public init() {}

    /// An empty object with room for `capacity` members before it has to grow.
    public init(reservingCapacity capacity: Int) {
        members.reserveCapacity(capacity)
    }

    public init(_ members: [(String, JSONValue)]) {
        for (key, value) in members { self[key] = value }
    }

    public var isEmpty: Bool { members.isEmpty }
    public var count: Int { members.count }
    public var keys: [String] { members.map(\.key) }

    /// Reading finds a member by name; writing replaces it in place or appends it, and
    /// writing `nil` removes it.
    public subscript(key: String) -> JSONValue? {
        get { members.first { $0.key == key }?.value }
        set {
            let index = members.firstIndex { $0.key == key }
            switch (index, newValue) {
            case (let index?, let value?): members[index].value = value
            case (let index?, nil): members.remove(at: index)
            case (nil, let value?): members.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// Appends a member without looking for one of the same name, skipping nil: for
    /// builders that write each name once, in order.
    public mutating func append(_ key: String, _ value: JSONValue?) {
        if let value { members.append((key, value)) }
    }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
