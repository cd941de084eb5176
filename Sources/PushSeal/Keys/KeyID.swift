import SealCrypto

/// Key identifiers: 8 lowercase hex characters for keys pushseal generates; imported keys
/// may use up to 64 of `A–Z a–z 0–9 _ -` (the same alphabet as base64url, so a kid never
/// contains the `.` that separates envelope parts).
public enum KeyID {
    public static let maximumLength = 64

    public static func isValid(_ kid: some StringProtocol) -> Bool {
        guard (1...maximumLength).contains(kid.utf8.count) else { return false }
        return kid.utf8.allSatisfy(isKidByte)
    }

    /// The same over UTF-8 bytes: the receiver checks the kid of every envelope it reads.
    public static func isValid(utf8 kid: UnsafeRawBufferPointer) -> Bool {
        (1...maximumLength).contains(kid.count) && kid.allSatisfy(isKidByte)
    }

    private static func isKidByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// A fresh random kid that is not in `taken`.
    public static func generate(avoiding taken: Set<String>) throws -> String {
        while true {
            let kid = Hex.encode(try SecureRandom.bytes(count: 4))
            if !taken.contains(kid) { return kid }
        }
    }
}

/// Lowercase hexadecimal text.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The lowercase hex digit of a value from 0 to 15.
    static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// The uppercase hex digit of a value from 0 to 15, as in APNs' ids.
    static func upperDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
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
