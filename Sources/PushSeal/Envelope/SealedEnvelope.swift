import SealCrypto

/// The `ps1` envelope: `ps1.<kid>.<base64url(nonce ‖ ciphertext ‖ tag)>`.
///
/// The header `ps1.<kid>` is the AES-GCM associated data, so neither the version nor the
/// kid can be swapped without failing authentication.
public struct SealedEnvelope: Sendable, Equatable {
    /// The only version this build writes and reads.
    public static let version = "ps1"

    public let kid: String
    public let box: SealedBox

    public init(kid: String, box: SealedBox) {
        self.kid = kid
        self.box = box
    }

    /// The authenticated header, `ps1.<kid>`.
    public var header: String { "\(Self.version).\(kid)" }

    /// The envelope as it travels in the payload.
    public var text: String { header + "." + Base64.encode(box.combined, alphabet: .url) }

    /// Reads an envelope, checking its shape but not its authenticity.
    public init(parsing text: String) throws {
        var text = text
        self = try text.withUTF8 { try SealedEnvelope(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Reads an envelope from its UTF-8 bytes; the receiver's path, with no String work.
    public init(utf8 bytes: UnsafeRawBufferPointer) throws {
        let dot = UInt8(ascii: ".")
        guard let lastDot = bytes.lastIndex(of: dot), let firstDot = bytes.firstIndex(of: dot), firstDot < lastDot else {
            throw EnvelopeError(.malformed, "not a ps1 envelope: expected ps1.<kid>.<sealed box>")
        }
        let version = UnsafeRawBufferPointer(rebasing: bytes[..<firstDot])
        guard version.elementsEqual(Self.version.utf8) else {
            let text = String(decoding: version, as: UTF8.self)
            let shown = text.count <= 16 && KeyID.isValid(text) ? "'\(text)'" : "this"
            throw EnvelopeError(.unsupportedVersion, "envelope version \(shown) is not supported (this build reads ps1)")
        }
        let kidBytes = UnsafeRawBufferPointer(rebasing: bytes[(firstDot + 1)..<lastDot])
        let kid = String(decoding: kidBytes, as: UTF8.self)
        guard KeyID.isValid(kid) else {
            throw EnvelopeError(.malformed, "malformed envelope: the key id must be 1 to 64 of A-Z a-z 0-9 _ -")
        }
        let combined: [UInt8]
        do {
            combined = try Base64.decode(UnsafeRawBufferPointer(rebasing: bytes[(lastDot + 1)...]), alphabet: .url)
        } catch {
            throw EnvelopeError(.malformed, "malformed envelope: the sealed box is \(error)")
        }
        let minimum = AESGCM.nonceByteCount + AESGCM.tagByteCount
        guard combined.count >= minimum else {
            throw EnvelopeError(.malformed, "malformed envelope: the sealed box has \(combined.count) bytes, at least \(minimum) expected (12-byte nonce, 16-byte tag)")
        }
        self.kid = kid
        self.box = try SealedBox(combined: combined)
    }

    /// Seals `plaintext` under `key`, naming it `kid`.
    public static func seal(_ plaintext: [UInt8], kid: String, key: SymmetricKey) throws -> SealedEnvelope {
        let header = "\(version).\(kid)"
        let box = try AESGCM.seal(plaintext, using: key, authenticating: Array(header.utf8))
        return SealedEnvelope(kid: kid, box: box)
    }

    /// Verifies and decrypts; no plaintext is returned unless the tag verifies.
    public func open(with key: SymmetricKey) throws -> [UInt8] {
        do {
            return try AESGCM.open(box, using: key, authenticating: Array(header.utf8))
        } catch let error as SealCryptoError where error.code == .authenticationFailed {
            throw EnvelopeError(
                .authenticationFailed,
                "authentication failed: the envelope under key \(kid) was altered or sealed with another key")
        }
    }
}
