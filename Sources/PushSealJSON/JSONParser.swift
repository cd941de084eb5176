/// Why a JSON text was refused, and where.
public struct JSONParseError: Error, Equatable, CustomStringConvertible, Sendable {
    public let reason: String
    /// Byte offset of the problem in the input.
    public let offset: Int
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict RFC 8259 parser: one value, surrounding white space allowed, nothing else.
///
/// Beyond the RFC it refuses duplicate object keys (two parsers could each believe a
/// different value) and nesting deeper than `maximumDepth` (so hostile input cannot exhaust
/// the stack). Strings must be valid UTF-8 and escapes must form valid scalars.
public struct JSONParser {
    public static let maximumDepth = 64

    /// Parses `text` as one JSON value.
    public static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { (buffer) throws -> JSONValue in
            try parse(UnsafeRawBufferPointer(buffer))
        }
    }

    /// Parses UTF-8 bytes as one JSON value.
    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try bytes.withUnsafeBytes { (buffer) throws -> JSONValue in try parse(buffer) }
    }

    /// Parses UTF-8 bytes as one JSON value.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private func error(_ reason: String) -> JSONParseError {
        JSONParseError(reason: reason, offset: index)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count,
            memcmpEqual(bytes.baseAddress! + index, literal.utf8Start, count)
        else { throw error("invalid literal") }
        index += count
    }

    private mutating func parseValue(depth: Int) throws -> JSONValue {
        guard let byte = current else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    /// Reads `bytes` as one JSON object and hands each member to `body` in order as it is
    /// read, without building the object: for a reader that takes the members of a line
    /// apart (a batch alert) and would throw the tree away. The same checks as `parse`,
    /// duplicate names included. Returns false, having called `body` for nothing, when the
    /// text is JSON of another kind; an error `body` throws ends the reading.
    package static func forEachMember(in bytes: UnsafeRawBufferPointer, _ body: (String, JSONValue) throws -> Void) throws -> Bool {
        try forEachMember(namedIn: bytes) { name, value in try body(String(decoding: name, as: UTF8.self), value) }
    }

    /// The same, with each member's name handed over as its UTF-8 bytes (escapes resolved,
    /// valid only during the call) rather than as a String: readers that match names against
    /// constants, a sealed alert's for every notification and a batch line's for every
    /// alert, make no String for a name at all. `JSONName.is` does the matching.
    package static func forEachMember(namedIn bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, JSONValue) throws -> Void) throws -> Bool {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        guard parser.current == UInt8(ascii: "{") else {
            _ = try parse(bytes)
            return false
        }
        // The names so far sit on the stack, as places in the input: a line has a handful.
        try withUnsafeTemporaryAllocation(of: RawName.self, capacity: 16) { names in
            var count = 0
            defer { names.baseAddress!.deinitialize(count: count) }
            var large: Set<[UInt8]>?
            try parser.parseMembers(
                depth: 1, name: { try $0.parseRawName() },
                isNew: { raw in
                    raw.withBytes(in: bytes) { name in
                        if large != nil { return large!.insert(Array(name)).inserted }
                        for index in 0..<count where names[index].withBytes(in: bytes, { JSONName.equal($0, name) }) {
                            return false
                        }
                        if count < names.count {
                            (names.baseAddress! + count).initialize(to: raw)
                            count += 1
                        } else {
                            large = Set(names[..<count].map { $0.withBytes(in: bytes) { Array($0) } } + [Array(name)])
                        }
                        return true
                    }
                }, shown: { $0.withBytes(in: bytes) { String(decoding: $0, as: UTF8.self) } },
                { name, value in
                    try name.withBytes(in: bytes) { try body($0, value) }
                })
        }
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return true
    }

    /// A member name as `forEachMember(namedIn:)` reads it: where it lies in the input, or,
    /// for the rare name with escapes or non-ASCII bytes, its decoded (validated) bytes.
    private struct RawName {
        var start = 0, count = 0
        var decoded: [UInt8]?

        /// The name's bytes, `input` being the text it was read from.
        func withBytes<Result>(in input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
            if let decoded { return try decoded.withUnsafeBytes(body) }
            return try body(UnsafeRawBufferPointer(rebasing: input[start..<(start + count)]))
        }
    }

    private mutating func parseRawName() throws -> RawName {
        let quote = index
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return RawName(start: start, count: index - 1 - start)
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            index += 1
        }
        // Escapes, non-ASCII text or an error: the string reader decides.
        index = quote
        return RawName(decoded: Array(try parseString().utf8))
    }

    private mutating func parseObject(depth: Int) throws -> JSONValue {
        var object = JSONObject(reservingCapacity: 8)
        // Small objects check for duplicates by scanning; large ones by hashing, so a hostile
        // object with a million members costs linear time, not quadratic.
        // Names are compared as their UTF-8 bytes after unescaping, never as Swift Strings:
        // String equality is Unicode canonical equivalence, which would call "é" and "e\u0301"
        // one name where every other parser sees two.
        var names: Set<[UInt8]>?
        try parseMembers(
            depth: depth, name: { try $0.parseString() },
            isNew: { key in
                if names != nil { return names!.insert(Array(key.utf8)).inserted }
                if object.count >= 16 { names = Set(object.keys.map { Array($0.utf8) }) }
                return names?.insert(Array(key.utf8)).inserted ?? !object.members.contains { JSONName.same($0.key, key) }
            }, shown: { $0 }, { key, value in object.append(key, value) })
        return .object(object)
    }

    /// The members of the object at `index`, each to `body` once `isNew` has passed its name;
    /// `name` reads a name (at its opening quote) and `shown` gives it for an error.
    private mutating func parseMembers<Name>(
        depth: Int, name readName: (inout JSONParser) throws -> Name, isNew: (Name) -> Bool,
        shown: (Name) -> String, _ body: (Name, JSONValue) throws -> Void
    ) throws {
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
            let keyOffset = index
            let key = try readName(&self)
            guard isNew(key) else {
                throw JSONParseError(reason: "duplicate key \"\(shown(key).prefix(64))\"", offset: keyOffset)
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after a member name") }
            index += 1
            skipWhitespace()
            try body(key, try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return
            default: throw error("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws -> JSONValue {
        guard depth <= Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw error("expected ',' or ']' in an array")
            }
        }
    }

    private mutating func parseNumber() throws -> JSONValue {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw error("invalid number") }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let digit = current, isDigit(digit) else { throw error("invalid number") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let digit = current, isDigit(digit) else { throw error("invalid number") }
            skipDigits()
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        return .number(text)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = current, isDigit(byte) { index += 1 }
    }

    private mutating func parseString() throws -> String {
        index += 1
        let start = index
        // Fast path: no escapes, so the bytes between the quotes are the string. The scan
        // also notes whether any byte is non-ASCII, the only case that needs validating.
        var high: UInt8 = 0
        let count = bytes.count
        // Eight bytes at a time while none ends the fast path.
        if let base = bytes.baseAddress {
            while index + 8 <= count, !JSONBytes.anyNeedsEscape(base, at: index) {
                if JSONBytes.anyNonASCII(base, at: index) { high = 0x80 }
                index += 8
            }
        }
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            high |= byte
            index += 1
        }
        if index < count, bytes[index] == UInt8(ascii: "\"") {
            let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
            index += 1
            return high < 0x80 ? String(decoding: raw, as: UTF8.self) : try validatedString(raw, at: start)
        }
        var scratch = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while true {
            guard let byte = current else { throw error("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try scratch.withUnsafeBytes { (raw) throws -> String in
                    try validatedString(raw, at: start)
                }
            case UInt8(ascii: "\\"):
                index += 1
                try appendEscape(to: &scratch)
            case 0x00..<0x20:
                throw error("control character in a string")
            default:
                scratch.append(byte)
                index += 1
            }
        }
    }

    private func validatedString(_ raw: UnsafeRawBufferPointer, at offset: Int) throws -> String {
        // Nearly every string in a payload is ASCII, which needs no further validation.
        if !raw.contains(where: { $0 >= 0x80 }) {
            return String(decoding: raw, as: UTF8.self)
        }
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw JSONParseError(reason: "invalid UTF-8 in a string", offset: offset)
        }
        return text
    }

    private mutating func appendEscape(to scratch: inout [UInt8]) throws {
        guard let byte = current else { throw error("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard current == UInt8(ascii: "\\") else { throw error("unpaired surrogate escape") }
                index += 1
                guard current == UInt8(ascii: "u") else { throw error("unpaired surrogate escape") }
                index += 1
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate escape") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("unpaired surrogate escape") }
            scratch.append(contentsOf: String(Character(unicode)).utf8)
        default:
            throw error("invalid escape")
        }
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}

/// Matching member names read as bytes (`JSONParser.forEachMember(namedIn:)`) against
/// constants, without making a String.
package enum JSONName {
    /// Whether `name` is exactly `text`.
    @inline(__always)
    package static func `is`(_ name: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        name.count == text.utf8CodeUnitCount && memcmpEqual(name.baseAddress ?? UnsafeRawPointer(text.utf8Start), text.utf8Start, name.count)
    }

    /// Whether two names are the same bytes: String's `==` (canonical equivalence) with the
    /// bytes' say where it matters. Byte-equal names are always `==`, and `==` is a memcmp
    /// between ASCII names, so different names cost what `==` costs; only a pair `==` calls
    /// equal is compared byte by byte, as canonically equivalent text can be other bytes.
    @inline(__always)
    static func same(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs == rhs && lhs.utf8.elementsEqual(rhs.utf8)
    }

    static func equal(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        lhs.count == rhs.count && (lhs.count == 0 || memcmpEqual(lhs.baseAddress!, rhs.baseAddress!.assumingMemoryBound(to: UInt8.self), lhs.count))
    }
}

private func memcmpEqual(_ lhs: UnsafeRawPointer, _ rhs: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    for offset in 0..<count where lhs.load(fromByteOffset: offset, as: UInt8.self) != rhs[offset] {
        return false
    }
    return true
}
