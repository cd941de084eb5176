import EnvelopeFormat
import SealCrypto

/// Key identifiers: 8 lowercase hex characters for keys pushseal generates; imported keys
/// may use up to 64 of `A–Z a–z 0–9 _ -` (the same alphabet as base64url, so a kid never
/// contains the `.` that separates envelope parts).
public enum KeyID {
    public static let maximumLength = KeyIDRule.maximumLength

    public static func isValid(_ kid: some StringProtocol) -> Bool {
        KeyIDRule.isValid(kid)
    }

    /// The same over UTF-8 bytes: the receiver checks the kid of every envelope it reads.
    package static func isValid(utf8 kid: UnsafeRawBufferPointer) -> Bool {
        KeyIDRule.isValid(utf8: kid)
    }

    /// A fresh random kid that is not in `taken`.
    package static func generate(avoiding taken: Set<String>) throws -> String {
        while true {
            let kid = Hex.encode(try SecureRandom.bytes(count: 4))
            if !taken.contains(kid) { return kid }
        }
    }
}

/// Lowercase hexadecimal text.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Writes the hex digits of the four bytes at `source` (in their order, lowercase
    /// unless `uppercase`) as eight ASCII bytes at `target`. Random ids are made for every
    /// alert sealed and every notification received, so the eight digits are made at once
    /// in one word: each nibble is moved into a byte of its own and becomes its digit by
    /// adding, with no table and no branch.
    @inline(__always)
    static func writeDigits(of source: UnsafeRawPointer, to target: UnsafeMutableRawPointer, uppercase: Bool) {
        let word = UInt64(UInt32(littleEndian: source.loadUnaligned(as: UInt32.self)))
        // Byte i of `word` to the low byte of 16-bit lane i.
        func spread(_ x: UInt64) -> UInt64 {
            let pairs = (x | x << 16) & 0x0000_FFFF_0000_FFFF
            return (pairs | pairs << 8) & 0x00FF_00FF_00FF_00FF
        }
        // Each byte's high nibble, then its low one, as they are written.
        let nibbles = spread(word >> 4 & 0x0F0F_0F0F) | spread(word & 0x0F0F_0F0F) << 8
        // A nibble over 9 carries into bit 4 when 6 is added: those get the letters' offset.
        let letters = (nibbles &+ 0x0606_0606_0606_0606) >> 4 & 0x0101_0101_0101_0101
        let digits = nibbles &+ 0x3030_3030_3030_3030 &+ letters &* (uppercase ? 7 : 39)
        target.storeBytes(of: digits.littleEndian, as: UInt64.self)
    }

    static func encode(_ bytes: [UInt8]) -> String {
        var output = [UInt8]()
        output.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
