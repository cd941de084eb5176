/// Strict base64 in its two alphabets: standard with `=` padding (RFC 4648 §4) and
/// URL-safe without padding (§5), as used by JOSE and by the `ps1` envelope.
///
/// Decoding is canonical: each byte string has exactly one accepted text. Lenient decoders
/// ignore the unused low bits of the last character, which would let two different `enc`
/// strings open to the same message; this one rejects them.
public enum Base64 {
    /// The two alphabets of RFC 4648.
    public enum Alphabet: Sendable {
        /// `A–Z a–z 0–9 + /` with `=` padding.
        case standard
        /// `A–Z a–z 0–9 - _` without padding.
        case url

        fileprivate var characters: [UInt8] {
            switch self {
            case .standard: Base64.standardCharacters
            case .url: Base64.urlCharacters
            }
        }

        fileprivate var decodeTable: [UInt8] {
            switch self {
            case .standard: Base64.standardTable
            case .url: Base64.urlTable
            }
        }

        fileprivate var pads: Bool { self == .standard }
    }

    private static let standardCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlCharacters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let invalid: UInt8 = 0xFF
    private static let standardTable = makeTable(standardCharacters)
    private static let urlTable = makeTable(urlCharacters)

    private static func makeTable(_ characters: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, character) in characters.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }

    /// Encodes `bytes` as ASCII text in the given alphabet.
    public static func encode<Bytes: Collection>(_ bytes: Bytes, alphabet: Alphabet = .url) -> String
    where Bytes.Element == UInt8 {
        String(decoding: encodeToASCII(bytes, alphabet: alphabet), as: UTF8.self)
    }

    /// Encodes `bytes` as ASCII bytes in the given alphabet.
    public static func encodeToASCII<Bytes: Collection>(_ bytes: Bytes, alphabet: Alphabet = .url) -> [UInt8]
    where Bytes.Element == UInt8 {
        let characters = alphabet.characters
        var output = [UInt8]()
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = iterator.next()
            output.append(characters[Int(b0 >> 2)])
            output.append(characters[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            if let b1 {
                output.append(characters[Int((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6)])
            } else if alphabet.pads {
                output.append(UInt8(ascii: "="))
            }
            if let b2 {
                output.append(characters[Int(b2 & 0x3F)])
            } else if alphabet.pads {
                output.append(UInt8(ascii: "="))
            }
        }
        return output
    }

    /// Decodes canonical base64 text, or throws `invalidEncoding`.
    public static func decode(_ text: String, alphabet: Alphabet = .url) throws -> [UInt8] {
        var text = text
        return try text.withUTF8 { try decode(UnsafeRawBufferPointer($0), alphabet: alphabet) }
    }

    /// Decodes canonical base64 from ASCII bytes, or throws `invalidEncoding`.
    public static func decode(_ ascii: UnsafeRawBufferPointer, alphabet: Alphabet = .url) throws -> [UInt8] {
        var length = ascii.count
        if alphabet.pads {
            guard length % 4 == 0 else { throw malformed("its length is not a multiple of 4") }
            if length > 0, ascii[length - 1] == UInt8(ascii: "=") { length -= 1 }
            if length > 0, ascii[length - 1] == UInt8(ascii: "=") { length -= 1 }
        }
        let remainder = length % 4
        guard remainder != 1 else { throw malformed("it ends with a lone character") }

        let table = alphabet.decodeTable
        var output = [UInt8]()
        output.reserveCapacity(length / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        for index in 0..<length {
            let value = table[Int(ascii[index])]
            guard value != invalid else { throw malformed("it contains a character outside the alphabet") }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, or two texts would decode to the same bytes.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else {
            throw malformed("its last character has unused bits set")
        }
        return output
    }

    private static func malformed(_ why: String) -> SealCryptoError {
        SealCryptoError(.invalidEncoding, "not valid base64: \(why)")
    }
}
