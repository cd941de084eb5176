@_exported import EnvelopeFormat
import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// One sealed field as pushseal writes it: `ps1.<kid>.<base64url(nonce ‖ ciphertext ‖ tag)>`
/// (AES-256-GCM with a shared secret, the header as AAD) or `ps2.<kid>.<base64url(enc ‖
/// ciphertext ‖ tag)>` (HPKE to the device's P-256 key, the header as info). The format's
/// parts, sizes and versions are `EnvelopeFormat`'s, the same definition pushseal reads with.
public struct SealedEnvelope: Sendable, Equatable {
    public typealias Format = EnvelopeVersion

    public let format: Format
    /// The key id: 1 to 64 of A–Z a–z 0–9 _ -.
    public let kid: String
    /// `ps1.<kid>` or `ps2.<kid>`: what the seal is bound to.
    public let header: String
    public let sealed: Data

    /// Reads the field's text. A later version's envelope (`ps3`) is `unsupported`, any
    /// other damage `malformed`.
    public init(parsing text: String) throws(OpeningError) {
        var text = text
        // The parts are found in the UTF-8 bytes by the shared definition, then decoded here.
        let parsed: Result<(Format, kid: String, sealed: Data?), EnvelopeFormatError> = text.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            do throws(EnvelopeFormatError) {
                let layout = try EnvelopeLayout(utf8: raw)
                return .success(
                    (
                        layout.version, String(decoding: raw[layout.kid], as: UTF8.self),
                        Base64URL.decode(Substring(decoding: raw[layout.sealed], as: UTF8.self))
                    ))
            } catch {
                return .failure(error)
            }
        }
        switch parsed {
        case .success(let (format, kid, decoded)):
            guard let sealed = decoded else { throw OpeningError(.malformed, "the sealed part is not base64url") }
            guard sealed.count >= format.minimumSealedByteCount else {
                throw OpeningError(.malformed, "the sealed part is \(sealed.count) bytes, at least \(format.minimumSealedByteCount) expected")
            }
            self.format = format
            self.kid = kid
            header = envelopeHeader(format, kid: kid)
            self.sealed = sealed
        case .failure(.notAnEnvelope):
            throw OpeningError(.malformed, "not a ps1 or ps2 envelope")
        case .failure(.invalidKeyID):
            throw OpeningError(.malformed, "the key id is not 1 to 64 of A-Z a-z 0-9 _ -")
        case .failure(.unsupportedVersion(let name)):
            throw OpeningError(.unsupported, "envelope version \(name.map { "'\($0)'" } ?? "this") is not supported (this kit reads \(Format.readable))")
        }
    }

    static func isKeyID(_ text: Substring) -> Bool {
        KeyIDRule.isValid(text)
    }

    /// The plaintext, or the reason there is none. No byte is released unless the tag verifies.
    /// ps2 needs HPKE, which CryptoKit has from iOS 17 and macOS 14: before them it is
    /// `unsupported`, and ps1 opens as everywhere.
    public func open(with key: OpeningKey) throws(OpeningError) -> Data {
        try open(with: key, hpkeAvailable: true)
    }

    /// The same, with `hpkeAvailable` false as on a system before iOS 17 (tests ask for that).
    func open(with key: OpeningKey, hpkeAvailable: Bool) throws(OpeningError) -> Data {
        switch (format, key) {
        case (.ps1, .secret(let secret)):
            // CryptoKit's combined layout is pushseal's: a 12-byte nonce, the ciphertext, a 16-byte tag.
            guard sealed.count >= Format.ps1.minimumSealedByteCount else { throw OpeningError(.authenticationFailed, "the sealed part is too short to hold a nonce and a tag") }
            do {
                let box = try AES.GCM.SealedBox(combined: sealed)
                return try AES.GCM.open(box, using: secret, authenticating: Data(header.utf8))
            } catch {
                throw OpeningError(.authenticationFailed, "the message does not authenticate with key \(kid)")
            }
        case (.ps2, .recipient(let privateKey)):
            guard sealed.count >= Format.ps2.minimumSealedByteCount else {
                throw OpeningError(.authenticationFailed, "the sealed part is too short to hold a key and a tag")
            }
            guard hpkeAvailable, #available(iOS 17.0, macOS 14.0, macCatalyst 17.0, tvOS 17.0, visionOS 1.0, watchOS 10.0, *) else {
                throw OpeningError(.unsupported, "a ps2 envelope needs HPKE, which this system lacks (iOS 17 or macOS 14 has it)")
            }
            return try Self.openHPKE(sealed, privateKey: privateKey, header: header, kid: kid)
        case (.ps1, .recipient), (.ps2, .secret):
            throw OpeningError(.keyMissing, "key \(kid) is not the kind a \(format.rawValue) envelope needs")
        }
    }
}

extension SealedEnvelope {
    @available(iOS 17.0, macOS 14.0, macCatalyst 17.0, tvOS 17.0, visionOS 1.0, watchOS 10.0, *)
    static func openHPKE(_ sealed: Data, privateKey: P256.KeyAgreement.PrivateKey, header: String, kid: String) throws(OpeningError) -> Data {
        let keyBytes = EnvelopeVersion.encapsulatedKeyByteCount
        do {
            var recipient = try HPKE.Recipient(
                privateKey: privateKey, ciphersuite: .P256_SHA256_AES_GCM_256,
                info: Data(header.utf8), encapsulatedKey: sealed.prefix(keyBytes))
            return try recipient.open(sealed.dropFirst(keyBytes), authenticating: Data())
        } catch {
            throw OpeningError(.authenticationFailed, "the message does not authenticate with key \(kid)")
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

    /// One of the statuses (`DeliveryStatus`): `malformed`, `key-missing`, `auth-failed`,
    /// or `unsupported` (a version this kit does not read, or ps2 on a system without HPKE).
    public typealias Reason = DeliveryStatus

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
            text.utf8.count % 4 != 1
        else { return nil }
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
