import Foundation
#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// One sealed field as pushseal writes it: `ps1.<kid>.<base64url(nonce ‖ ciphertext ‖ tag)>`
/// (AES-256-GCM with a shared secret, the header as AAD) or `ps2.<kid>.<base64url(enc ‖
/// ciphertext ‖ tag)>` (HPKE to the device's P-256 key, the header as info).
public struct SealedEnvelope: Sendable, Equatable {
    public enum Format: String, Sendable {
        case ps1, ps2
    }

    public let format: Format
    /// The key id: 1 to 64 of A–Z a–z 0–9 _ -.
    public let kid: String
    /// `ps1.<kid>` or `ps2.<kid>`: what the seal is bound to.
    public let header: String
    public let sealed: Data

    /// Reads the field's text; nil when it is not a pushseal envelope at all.
    public init(parsing text: String) throws(OpeningError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let format = Format(rawValue: String(parts[0])) else {
            throw OpeningError(.malformed, "not a ps1 or ps2 envelope")
        }
        guard Self.isKeyID(parts[1]) else { throw OpeningError(.malformed, "the key id is not 1 to 64 of A-Z a-z 0-9 _ -") }
        guard let sealed = Base64URL.decode(parts[2]) else { throw OpeningError(.malformed, "the sealed part is not base64url") }
        // ps1: 12-byte nonce and 16-byte tag; ps2: 65-byte key and 16-byte tag.
        let minimum = format == .ps1 ? 28 : 81
        guard sealed.count >= minimum else {
            throw OpeningError(.malformed, "the sealed part is \(sealed.count) bytes, at least \(minimum) expected")
        }
        self.format = format
        kid = String(parts[1])
        header = "\(parts[0]).\(parts[1])"
        self.sealed = sealed
    }

    static func isKeyID(_ text: Substring) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D
        }
    }

    /// The plaintext, or the reason there is none. No byte is released unless the tag verifies.
    public func open(with key: OpeningKey) throws(OpeningError) -> Data {
        switch (format, key) {
        case (.ps1, .secret(let secret)):
            // CryptoKit's combined layout is pushseal's: a 12-byte nonce, the ciphertext, a 16-byte tag.
            guard sealed.count >= 28 else { throw OpeningError(.authFailed, "the sealed part is too short to hold a nonce and a tag") }
            do {
                let box = try AES.GCM.SealedBox(combined: sealed)
                return try AES.GCM.open(box, using: secret, authenticating: Data(header.utf8))
            } catch {
                throw OpeningError(.authFailed, "the message does not authenticate with key \(kid)")
            }
        case (.ps2, .recipient(let privateKey)):
            guard sealed.count >= 65 + 16 else { throw OpeningError(.authFailed, "the sealed part is too short to hold a key and a tag") }
            do {
                var recipient = try HPKE.Recipient(privateKey: privateKey, ciphersuite: .P256_SHA256_AES_GCM_256,
                                                   info: Data(header.utf8), encapsulatedKey: sealed.prefix(65))
                return try recipient.open(sealed.dropFirst(65), authenticating: Data())
            } catch {
                throw OpeningError(.authFailed, "the message does not authenticate with key \(kid)")
            }
        case (.ps1, .recipient), (.ps2, .secret):
            throw OpeningError(.keyMissing, "key \(kid) is not the kind a \(format.rawValue) envelope needs")
        }
    }
}

/// A key that opens envelopes: the shared secret of ps1, or the device's private key of ps2.
public enum OpeningKey: Sendable {
    case secret(SymmetricKey)
    case recipient(P256.KeyAgreement.PrivateKey)
}

/// Why an envelope did not open, in the words of the Linux runner's statuses.
public struct OpeningError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Equal when the reasons are: the message is for people.
    public static func == (lhs: OpeningError, rhs: OpeningError) -> Bool { lhs.reason == rhs.reason }

    public enum Reason: String, Sendable {
        case malformed
        case keyMissing = "key-missing"
        case authFailed = "auth-failed"
    }

    public let reason: Reason
    public let message: String
    public var description: String { message }

    init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }
}

/// base64url without padding, as pushseal writes every binary part.
enum Base64URL {
    static func decode(_ text: Substring) -> Data? {
        guard text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D }),
              text.utf8.count % 4 != 1 else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: standard), encode(data) == text else { return nil }
        return data
    }

    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
