@_exported import EnvelopeFormat
import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// One sealed field as pushseal writes it: `ps1.<kid>.<base64url(nonce ‖ ciphertext ‖ tag)>`
/// (AES-256-GCM with a shared secret, the header as AAD), `ps2.<kid>.<base64url(enc ‖
/// ciphertext ‖ tag)>` (HPKE to the device's P-256 key, the header as info), or
/// `ps3.<kid>.<sender kid>.<base64url(enc ‖ ciphertext ‖ tag)>` (the same in HPKE's auth
/// mode, vouched for by the sender's key). The format's parts, sizes and versions are
/// `EnvelopeFormat`'s, the same definition pushseal reads with.
public struct SealedEnvelope: Sendable, Equatable {
    public typealias Format = EnvelopeVersion

    public let format: Format
    /// The key id: 1 to 64 of A–Z a–z 0–9 _ -.
    public let kid: String
    /// The sender key's id (`ps3`): who vouches for the message; nil for ps1 and ps2.
    public let senderKid: String?
    /// `ps1.<kid>`, `ps2.<kid>` or `ps3.<kid>.<sender kid>`: what the seal is bound to.
    public let header: String
    public let sealed: Data

    /// Reads the field's text. A later version's envelope (`ps9`) is `unsupported`, any
    /// other damage `malformed`.
    public init(parsing text: String) throws(OpeningError) {
        var text = text
        // The parts are found in the UTF-8 bytes by the shared definition, then decoded here.
        let parsed: Result<(Format, kid: String, sender: String?, sealed: Data?), EnvelopeFormatError> = text.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            do throws(EnvelopeFormatError) {
                let layout = try EnvelopeLayout(utf8: raw)
                return .success(
                    (
                        layout.version, String(decoding: raw[layout.kid], as: UTF8.self),
                        layout.sender.map { String(decoding: raw[$0], as: UTF8.self) },
                        Base64URL.decode(Substring(decoding: raw[layout.sealed], as: UTF8.self))
                    ))
            } catch {
                return .failure(error)
            }
        }
        switch parsed {
        case .success(let (format, kid, sender, decoded)):
            guard let sealed = decoded else { throw OpeningError(.malformed, "the sealed part is not base64url") }
            guard sealed.count >= format.minimumSealedByteCount else {
                throw OpeningError(.malformed, "the sealed part is \(sealed.count) bytes, at least \(format.minimumSealedByteCount) expected")
            }
            self.format = format
            self.kid = kid
            senderKid = sender
            header = envelopeHeader(format, kid: kid, sender: sender)
            self.sealed = sealed
        case .failure(.notAnEnvelope):
            throw OpeningError(.malformed, "not a ps1, ps2 or ps3 envelope")
        case .failure(.invalidKeyID):
            throw OpeningError(.malformed, "the key id is not 1 to 64 of A-Z a-z 0-9 _ -")
        case .failure(.invalidSenderKeyID):
            throw OpeningError(.malformed, "the sender's key id is not 1 to 64 of A-Z a-z 0-9 _ -")
        case .failure(.unsupportedVersion(let name)):
            throw OpeningError(.unsupported, "envelope version \(name.map { "'\($0)'" } ?? "this") is not supported (this kit reads \(Format.readable))")
        }
    }

    static func isKeyID(_ text: Substring) -> Bool {
        KeyIDRule.isValid(text)
    }

    /// The plaintext, or the reason there is none. No byte is released unless the tag verifies.
    /// ps2 needs HPKE, which CryptoKit has from iOS 17 and macOS 14: before them it is
    /// `unsupported`, and ps1 opens as everywhere. A ps3 envelope needs its sender's key too:
    /// `open(with:sender:)`.
    public func open(with key: OpeningKey) throws(OpeningError) -> Data {
        try open(with: key, sender: nil, hpkeAvailable: true)
    }

    /// Opens a ps3 envelope with the device's key and the public key of the sender it names
    /// (an allowed sender's, from its `pss1` line): it opens only if that sender sealed it.
    public func open(with key: OpeningKey, sender: P256.KeyAgreement.PublicKey) throws(OpeningError) -> Data {
        try open(with: key, sender: sender, hpkeAvailable: true)
    }

    /// The same, with `hpkeAvailable` false as on a system before iOS 17 (tests ask for that).
    func open(with key: OpeningKey, sender: P256.KeyAgreement.PublicKey?, hpkeAvailable: Bool) throws(OpeningError) -> Data {
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
        case (.ps3, .recipient(let privateKey)):
            guard sealed.count >= Format.ps3.minimumSealedByteCount else {
                throw OpeningError(.authenticationFailed, "the sealed part is too short to hold a key and a tag")
            }
            guard hpkeAvailable, #available(iOS 17.0, macOS 14.0, macCatalyst 17.0, tvOS 17.0, visionOS 1.0, watchOS 10.0, *) else {
                throw OpeningError(.unsupported, "a ps3 envelope needs HPKE, which this system lacks (iOS 17 or macOS 14 has it)")
            }
            guard let sender else {
                throw OpeningError(.senderUntrusted, "the envelope is vouched for by sender key \(senderKid ?? "?"), and no sender's key was given to check it")
            }
            return try Self.openHPKE(sealed, privateKey: privateKey, header: header, kid: kid, sender: sender)
        case (.ps1, .recipient), (.ps2, .secret), (.ps3, .secret), (_, .sender):
            throw OpeningError(.keyMissing, "key \(kid) is not the kind a \(format.rawValue) envelope needs")
        }
    }
}

extension SealedEnvelope {
    @available(iOS 17.0, macOS 14.0, macCatalyst 17.0, tvOS 17.0, visionOS 1.0, watchOS 10.0, *)
    static func openHPKE(
        _ sealed: Data, privateKey: P256.KeyAgreement.PrivateKey, header: String, kid: String, sender: P256.KeyAgreement.PublicKey? = nil
    ) throws(OpeningError) -> Data {
        let keyBytes = EnvelopeVersion.encapsulatedKeyByteCount
        do {
            // Apple's own auth mode for ps3 (RFC 9180 mode_auth): only the sender's key opens it.
            var recipient =
                try sender.map {
                    try HPKE.Recipient(
                        privateKey: privateKey, ciphersuite: .P256_SHA256_AES_GCM_256, info: Data(header.utf8),
                        encapsulatedKey: sealed.prefix(keyBytes), authenticatedBy: $0)
                }
                ?? HPKE.Recipient(
                    privateKey: privateKey, ciphersuite: .P256_SHA256_AES_GCM_256,
                    info: Data(header.utf8), encapsulatedKey: sealed.prefix(keyBytes))
            return try recipient.open(sealed.dropFirst(keyBytes), authenticating: Data())
        } catch {
            throw OpeningError(
                .authenticationFailed,
                sender == nil ? "the message does not authenticate with key \(kid)" : "the message does not authenticate with key \(kid) and its sender's key")
        }
    }
}

/// A key a receiver keeps: the shared secret of ps1, the device's private key of ps2 and
/// ps3, or an allowed sender's public key, which a ps3 envelope names (it opens nothing on
/// its own; once one is kept, nothing unauthenticated opens).
public enum OpeningKey: Sendable {
    case secret(SymmetricKey)
    case recipient(P256.KeyAgreement.PrivateKey)
    case sender(P256.KeyAgreement.PublicKey)
}

/// Why an envelope did not open, in the words of the Linux runner's statuses.
public struct OpeningError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Equal when the reasons are: the message is for people.
    public static func == (lhs: OpeningError, rhs: OpeningError) -> Bool { lhs.reason == rhs.reason }

    /// One of the statuses (`DeliveryStatus`): `malformed`, `key-missing`, `sender-untrusted`,
    /// `auth-failed`, or `unsupported` (a version this kit does not read, or ps2 or ps3 on a
    /// system without HPKE).
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
