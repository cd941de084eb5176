/// Compact JSON output: no spaces, members in order, `/` left as is, non-ASCII as UTF-8.
public enum JSONWriter {
    /// The UTF-8 bytes of `value`.
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(256)
        write(value, to: &output)
        return output
    }

    /// `value` as a string.
    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// Appends `value` to `output`.
    public static func write(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null: writeNull(to: &output)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .string(let text): writeString(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `null`: from a constant's bytes, which appending a literal's `utf8` is not.
    package static func writeNull(to output: inout [UInt8]) {
        ("null" as StaticString).withUTF8Buffer { output.append(contentsOf: $0) }
    }

    /// Appends `value` in decimal: records and sealed alerts carry a few integers each,
    /// and the digits go straight in rather than through a String.
    package static func writeInteger(_ value: Int64, to output: inout [UInt8]) {
        // 20 digits and a sign hold any Int64; digits are made from the end.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { output.append(UInt8(ascii: "-")) }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string. Runs of bytes that need no escape are copied whole,
    /// which is nearly every byte of a real alert.
    public static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        text.withUTF8Bytes { writeEscaped($0, to: &output) }
        output.append(UInt8(ascii: "\""))
    }

    private static func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        let count = utf8.count
        var runStart = 0
        var index = 0
        while index < count {
            // Eight bytes at a time while none of them needs an escape.
            if index + 8 <= count, !JSONBytes.anyNeedsEscape(UnsafeRawPointer(utf8.baseAddress!), at: index) {
                index += 8
                continue
            }
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscape(byte, to: &output)
                runStart = index + 1
            }
            index += 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }

    private static func appendEscape(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
        // The short escapes wherever JSON has one, as ECMAScript's JSON.stringify and Python's
        // json.dumps write them: docs/FORMAT.md's canonical form, so other senders' bytes match.
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        default:
            output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            output.append(hexDigits[Int(byte >> 4)])
            output.append(hexDigits[Int(byte & 0x0F)])
        }
    }
}

/// Word-at-a-time tests on JSON text, for the writer's and the parser's string scans.
enum JSONBytes {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether any byte of `word` is zero (exact: a borrow only starts at a zero byte).
    @inline(__always)
    static func hasZeroByte(_ word: UInt64) -> Bool {
        (word &- ones) & ~word & highs != 0
    }

    /// Whether any of the eight bytes at `offset` is a quote, a backslash or a control
    /// character: the bytes a JSON string cannot hold as they are.
    @inline(__always)
    static func anyNeedsEscape(_ base: UnsafeRawPointer, at offset: Int) -> Bool {
        let word = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        let belowSpace = (word &- 0x20 &* ones) & ~word & highs != 0
        return belowSpace || hasZeroByte(word ^ (0x22 &* ones)) || hasZeroByte(word ^ (0x5C &* ones))
    }

    /// Whether any of the eight bytes at `offset` is outside ASCII.
    @inline(__always)
    static func anyNonASCII(_ base: UnsafeRawPointer, at offset: Int) -> Bool {
        base.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & highs != 0
    }
}
