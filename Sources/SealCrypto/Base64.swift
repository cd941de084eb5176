/// Strict base64 in its two alphabets: standard with `=` padding (RFC 4648 §4) and
/// URL-safe without padding (§5), as used by JOSE and by the `ps1` envelope.
///
/// Decoding is canonical: each byte string has exactly one accepted text. Lenient decoders
/// ignore the unused low bits of the last character, which would let two different `enc`
/// strings open to the same message; this one rejects them.
package enum Base64 {
    /// The two alphabets of RFC 4648.
    package enum Alphabet: Sendable {
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

        /// Two characters for each 12 bits, as they lie in memory: half the lookups and stores.
        fileprivate var pairs: [UInt16] {
            switch self {
            case .standard: Base64.standardPairs
            case .url: Base64.urlPairs
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

    private static let standardPairs = makePairs(standardCharacters)
    private static let urlPairs = makePairs(urlCharacters)

    private static func makePairs(_ characters: [UInt8]) -> [UInt16] {
        (0..<4096).map { bits in
            // The first character at the lower address, whatever the byte order.
            (UInt16(characters[bits >> 6]) | UInt16(characters[bits & 0x3F]) << 8).littleEndian
        }
    }

    private static func makeTable(_ characters: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, character) in characters.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }

    /// Encodes `bytes` as ASCII text in the given alphabet.
    package static func encode<Bytes: Collection>(_ bytes: Bytes, alphabet: Alphabet = .url) -> String
    where Bytes.Element == UInt8 {
        String(decoding: encodeToASCII(bytes, alphabet: alphabet), as: UTF8.self)
    }

    /// Encodes `bytes` as ASCII bytes in the given alphabet.
    package static func encodeToASCII<Bytes: Collection>(_ bytes: Bytes, alphabet: Alphabet = .url) -> [UInt8]
    where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        if bytes.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0), alphabet: alphabet, to: &output) }) == nil {
            Array(bytes).withUnsafeBytes { append($0, alphabet: alphabet, to: &output) }
        }
        return output
    }

    /// The number of characters `byteCount` bytes encode to.
    package static func encodedCount(_ byteCount: Int, alphabet: Alphabet) -> Int {
        alphabet.pads ? (byteCount + 2) / 3 * 4 : (byteCount * 4 + 2) / 3
    }

    /// Appends the encoding of `bytes` to `output`: the payload writer's path, which builds
    /// the envelope in place instead of through an intermediate string.
    package static func append(_ bytes: UnsafeRawBufferPointer, alphabet: Alphabet = .url, to output: inout [UInt8]) {
        let count = encodedCount(bytes.count, alphabet: alphabet)
        guard count > 0 else { return }
        // Encoded into scratch space and appended in one copy: growing the array by a
        // repeated zero and overwriting it went element by element.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { scratch in
            encode(bytes, alphabet: alphabet, into: scratch.baseAddress!)
            output.append(contentsOf: UnsafeBufferPointer(scratch))
        }
    }

    /// Writes the encoding of `bytes` to `out`, which has room for `encodedCount` bytes.
    private static func encode(_ bytes: UnsafeRawBufferPointer, alphabet: Alphabet, into out: UnsafeMutablePointer<UInt8>) {
        let characters = alphabet.characters
        var o = 0
        var i = 0
        let whole = bytes.count - bytes.count % 3
        if whole > 0 {
            alphabet.pairs.withUnsafeBufferPointer { pairs in
                // Pointers and wrapping arithmetic: the bounds are the loop's, checked once.
                let table = pairs.baseAddress!
                var source = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let end = source + whole
                var target = UnsafeMutableRawPointer(out)
                while source < end {
                    let bits = Int(source[0]) &<< 16 | Int(source[1]) &<< 8 | Int(source[2])
                    target.storeBytes(of: table[bits &>> 12], as: UInt16.self)
                    target.storeBytes(of: table[bits & 0xFFF], toByteOffset: 2, as: UInt16.self)
                    source += 3
                    target += 4
                }
            }
            i = whole
            o = whole / 3 * 4
        }
        characters.withUnsafeBufferPointer { table in
            switch bytes.count - whole {
            case 1:
                let b0 = bytes[i]
                out[o] = table[Int(b0 >> 2)]
                out[o + 1] = table[Int((b0 & 0x03) << 4)]
                if alphabet.pads {
                    out[o + 2] = UInt8(ascii: "=")
                    out[o + 3] = UInt8(ascii: "=")
                }
            case 2:
                let b0 = bytes[i]
                let b1 = bytes[i + 1]
                out[o] = table[Int(b0 >> 2)]
                out[o + 1] = table[Int((b0 & 0x03) << 4 | b1 >> 4)]
                out[o + 2] = table[Int((b1 & 0x0F) << 2)]
                if alphabet.pads { out[o + 3] = UInt8(ascii: "=") }
            default:
                break
            }
        }
    }

    /// Decodes canonical base64 text, or throws `invalidEncoding`.
    package static func decode(_ text: String, alphabet: Alphabet = .url) throws -> [UInt8] {
        var text = text
        return try text.withUTF8 { try decode(UnsafeRawBufferPointer($0), alphabet: alphabet) }
    }

    /// Decodes canonical base64 from ASCII bytes, or throws `invalidEncoding`.
    package static func decode(_ ascii: UnsafeRawBufferPointer, alphabet: Alphabet = .url) throws -> [UInt8] {
        var length = ascii.count
        if alphabet.pads {
            guard length % 4 == 0 else { throw malformed("its length is not a multiple of 4") }
            if length > 0, ascii[length - 1] == UInt8(ascii: "=") { length -= 1 }
            if length > 0, ascii[length - 1] == UInt8(ascii: "=") { length -= 1 }
        }
        let remainder = length % 4
        guard remainder != 1 else { throw malformed("it ends with a lone character") }

        let byteCount = length / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        // Array(unsafeUninitializedCapacity: 0) writes its count into the runtime's shared
        // empty storage, a race with every other thread reading an empty array.
        guard byteCount > 0 else { return [] }
        var failure: SealCryptoError?
        let output = [UInt8](unsafeUninitializedCapacity: byteCount) { buffer, initialized in
            alphabet.decodeTable.withUnsafeBufferPointer { table in
                let table = table.baseAddress!
                var accumulator: UInt32 = 0
                var bits: UInt32 = 0
                var o = 0
                // Four characters to three bytes at a time; the invalid entry's top bit
                // shows through the OR of the four.
                let whole = length - length % 4
                var start = 0
                while start < whole {
                    let a = table[Int(ascii[start])]
                    let b = table[Int(ascii[start + 1])]
                    let c = table[Int(ascii[start + 2])]
                    let d = table[Int(ascii[start + 3])]
                    guard (a | b | c | d) & 0x80 == 0 else {
                        failure = malformed("it contains a character outside the alphabet")
                        return
                    }
                    let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buffer[o] = UInt8(truncatingIfNeeded: value >> 16)
                    buffer[o + 1] = UInt8(truncatingIfNeeded: value >> 8)
                    buffer[o + 2] = UInt8(truncatingIfNeeded: value)
                    o += 3
                    start += 4
                }
                for index in whole..<length {
                    // The table has 256 entries, so every byte indexes it safely.
                    let value = table[Int(ascii[index])]
                    guard value != invalid else {
                        failure = malformed("it contains a character outside the alphabet")
                        return
                    }
                    accumulator = accumulator << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        buffer[o] = UInt8(truncatingIfNeeded: accumulator >> bits)
                        o += 1
                    }
                }
                // Leftover bits must be zero, or two texts would decode to the same bytes.
                guard accumulator & ((1 << bits) - 1) == 0 else {
                    failure = malformed("its last character has unused bits set")
                    return
                }
                initialized = o
            }
        }
        if let failure { throw failure }
        return output
    }

    private static func malformed(_ why: String) -> SealCryptoError {
        SealCryptoError(.invalidEncoding, "not valid base64: \(why)")
    }
}
