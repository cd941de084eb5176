/// Text made safe to print on a terminal: control characters (C0, DEL, C1) and the bidi
/// overrides and isolates are shown as escapes (`\r`, `\x1b`, `\u{202E}`), so nothing a
/// payload carries can start a fake line, move the cursor, recolour the screen or reorder
/// what a person reads.
package enum TerminalText {
    /// `text` with every such character escaped; with `keepingNewlines`, `\n` stays.
    package static func escaping(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0, keepingNewlines: keepingNewlines) }) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar, keepingNewlines: keepingNewlines) else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            default:
                let hex = String(scalar.value, radix: 16)
                escaped += scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u{" + hex.uppercased() + "}"
            }
        }
        return escaped
    }

    /// Bytes that should be UTF-8 (a file name, say): what is not is shown as `\xNN`, and
    /// the rest escaped as by `escaping(_:)`.
    package static func escapingBytes(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return escaping(text) }
        var shown = ""
        var index = 0
        while index < bytes.count {
            // The longest valid UTF-8 sequence starting here (1 to 4 bytes), if any.
            let valid = (1...4).reversed().first { length in
                index + length <= bytes.count && String(validating: bytes[index..<(index + length)], as: UTF8.self) != nil
            }
            if let valid {
                shown += escaping(String(decoding: bytes[index..<(index + valid)], as: UTF8.self))
                index += valid
            } else {
                let hex = String(bytes[index], radix: 16)
                shown += "\\x" + (hex.count < 2 ? "0" : "") + hex
                index += 1
            }
        }
        return shown
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar, keepingNewlines: Bool) -> Bool {
        switch scalar.value {
        case 0x0A: return !keepingNewlines
        case 0x00...0x1F, 0x7F...0x9F: return true
        // LRE, RLE, PDF, LRO, RLO; LRI, RLI, FSI, PDI.
        case 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
