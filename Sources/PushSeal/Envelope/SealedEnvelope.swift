import EnvelopeFormat
import PushSealJSON
import SealCrypto

/// The sealed alert as it travels: `<version>.<kid>.<base64url(sealed bytes)>`.
///
/// - `ps1`: a shared AES-256 key; the bytes are nonce ‖ ciphertext ‖ tag, and the header
///   `ps1.<kid>` is the AES-GCM associated data.
/// - `ps2`: sealed to a device's P-256 public key with HPKE (RFC 9180, base mode,
///   DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM); the bytes are enc ‖ ciphertext ‖
///   tag, and the header `ps2.<kid>` is HPKE's `info`, the associated data empty.
///
/// - `ps3`: `ps3.<kid>.<sender kid>.<sealed>`, ps2 in HPKE's auth mode with the sender's
///   P-256 key, the header `ps3.<kid>.<sender kid>` the info: only the holder of that sender
///   key can have sealed what opens with its public half.
///
/// Either way no part of the header can be swapped without failing to open.
public struct SealedEnvelope: Sendable, Equatable {
    /// The format's versions, as `EnvelopeFormat` defines them for every side.
    public typealias Version = EnvelopeVersion

    public let version: Version
    public let kid: String
    /// The sender key's kid (`ps3`): who vouches for the message; nil for ps1 and ps2.
    public let senderKid: String?
    /// The sealed bytes: `ps1` nonce ‖ ciphertext ‖ tag, `ps2` enc ‖ ciphertext ‖ tag.
    package let combined: [UInt8]

    /// A `ps1` envelope.
    package init(kid: String, box: SealedBox) {
        version = .ps1
        self.kid = kid
        senderKid = nil
        combined = box.combined
    }

    /// The authenticated header, `<version>.<kid>` (`ps3.<kid>.<sender kid>`).
    package var header: String { envelopeHeader(version, kid: kid, sender: senderKid) }

    /// The header's bytes, as AES-GCM authenticates them and HPKE takes them as `info`.
    var headerBytes: [UInt8] { withHeaderBytes { Array($0) } }

    /// The same, written on the stack for `body`: every envelope opened needs them.
    func withHeaderBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let prefix = version.rawValue.utf8.count
        let kidEnd = prefix + 1 + kid.utf8.count
        let count = kidEnd + (senderKid.map { 1 + $0.utf8.count } ?? 0)
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { header in
            _ = header.initialize(from: version.rawValue.utf8)
            header[prefix] = UInt8(ascii: ".")
            _ = UnsafeMutableBufferPointer(rebasing: header[(prefix + 1)..<kidEnd]).initialize(from: kid.utf8)
            if let senderKid {
                header[kidEnd] = UInt8(ascii: ".")
                _ = UnsafeMutableBufferPointer(rebasing: header[(kidEnd + 1)...]).initialize(from: senderKid.utf8)
            }
            return try body(UnsafeRawBufferPointer(header))
        }
    }

    /// The envelope as it travels in the payload.
    public var text: String { header + "." + Base64.encode(combined, alphabet: .url) }

    /// Reads an envelope, checking its shape but not its authenticity.
    public init(parsing text: String) throws {
        self = try text.withUTF8Bytes { try SealedEnvelope(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Reads an envelope from its UTF-8 bytes; the receiver's path, with no String work.
    package init(utf8 bytes: UnsafeRawBufferPointer) throws {
        let layout: EnvelopeLayout
        do {
            layout = try EnvelopeLayout(utf8: bytes)
        } catch .notAnEnvelope {
            throw EnvelopeError(.malformed, "not an envelope: expected ps1.<kid>.<sealed box>, ps2.<kid>.<sealed box> or ps3.<kid>.<sender kid>.<sealed box>")
        } catch .unsupportedVersion(let name) {
            throw EnvelopeError(
                .unsupported,
                "envelope version \(name.map { "'\($0)'" } ?? "this") is not supported (this build reads \(Version.readable))")
        } catch .invalidKeyID {
            throw EnvelopeError(.malformed, "malformed envelope: the key id must be 1 to 64 of A-Z a-z 0-9 _ -")
        } catch .invalidSenderKeyID {
            throw EnvelopeError(.malformed, "malformed envelope: the sender's key id must be 1 to 64 of A-Z a-z 0-9 _ -")
        }
        let version = layout.version
        let combined: [UInt8]
        do {
            combined = try Base64.decode(UnsafeRawBufferPointer(rebasing: bytes[layout.sealed]), alphabet: .url)
        } catch {
            throw EnvelopeError(.malformed, "malformed envelope: the sealed box is \(error)", underlying: error)
        }
        let minimum = version.minimumSealedByteCount
        guard combined.count >= minimum else {
            throw EnvelopeError(
                .malformed,
                version == .ps1
                    ? "malformed envelope: the sealed box has \(combined.count) bytes, at least \(minimum) expected (12-byte nonce, 16-byte tag)"
                    : "malformed envelope: the sealed bytes are \(combined.count), at least \(minimum) expected (65-byte key, 16-byte tag)")
        }
        self.version = version
        self.kid = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[layout.kid]), as: UTF8.self)
        senderKid = layout.sender.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
        self.combined = combined
    }

    /// Opens the envelope with the key of its kind that `keyring` holds for its kid and
    /// hands the plaintext to `body`, wiping it when `body` returns. A `ps1` plaintext is
    /// opened into memory on the stack, not an array: the receiver opens one per notification.
    ///
    /// docs/FORMAT.md §6 steps 8 to 10, in their order: the recipient's key, then the sender
    /// (a `ps3` envelope's sender key must be one `keyring` allows; with `requireSender`, an
    /// envelope naming no sender is refused before any opening is tried), then the tag.
    package func withOpened<Result>(
        with keyring: Keyring, now: Int64, requireSender: Bool = false, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        if requireSender, senderKid == nil {
            // The recipient's key is looked up first all the same: a receiver without it
            // says key-missing, whoever sealed the message.
            switch version {
            case .ps1: _ = try keyring.decryptionKey(for: kid, now: now)
            default: _ = try keyring.recipientKey(for: kid, now: now)
            }
            throw KeyringError(
                .senderNotAllowed, "the envelope is \(version.rawValue), which names no sender, and this keyring opens only what a sender it allows has sealed")
        }
        switch version {
        case .ps1:
            let key = try keyring.decryptionKey(for: kid, now: now)
            return try withUnsafeTemporaryAllocation(byteCount: AESGCM.plaintextByteCount(combined.count), alignment: 1) { plaintext in
                defer { SecureMemory.wipe(plaintext) }
                try open(with: key, into: plaintext)
                return try body(UnsafeRawBufferPointer(plaintext))
            }
        case .ps2:
            var plaintext = try open(with: keyring.recipientKey(for: kid, now: now))
            defer { SecureMemory.wipe(&plaintext) }
            return try plaintext.withUnsafeBytes(body)
        case .ps3:
            let recipient = try keyring.recipientKey(for: kid, now: now)
            var plaintext = try open(with: recipient, sender: keyring.allowedSender(senderKid ?? "", now: now))
            defer { SecureMemory.wipe(&plaintext) }
            return try plaintext.withUnsafeBytes(body)
        }
    }

    /// Opens a `ps3` envelope with the device's private key and the public key of the sender
    /// it names: it opens only if that sender sealed it (and nothing is altered).
    package func open(with key: P256PrivateKey, sender: P256PublicKey) throws -> [UInt8] {
        guard version == .ps3, let senderKid else {
            throw EnvelopeError(.authenticationFailed, "a \(version.rawValue) envelope names no sender to authenticate")
        }
        do {
            return try HPKE.open(combined, with: key, info: headerBytes, authenticatedBy: sender)
        } catch let error as SealCryptoError {
            throw EnvelopeError(
                .authenticationFailed,
                "authentication failed: the envelope sealed to key \(kid) was altered, sealed to another key, or not sealed by sender \(senderKid)",
                underlying: error)
        }
    }

    /// Opens a `ps2` envelope with the device's private key; no plaintext is returned
    /// unless it verifies (an `enc` that is not a point on the curve does not).
    public func open(with key: P256PrivateKey) throws -> [UInt8] {
        guard version == .ps2 else {
            throw EnvelopeError(.authenticationFailed, "a ps1 envelope opens with a shared secret, not with key \(kid)'s private key")
        }
        do {
            return try HPKE.open(combined, with: key, info: headerBytes)
        } catch let error as SealCryptoError {
            throw EnvelopeError(
                .authenticationFailed,
                "authentication failed: the envelope sealed to key \(kid) was altered or sealed to another key", underlying: error)
        }
    }

    /// Verifies and decrypts a `ps1` envelope; no plaintext is returned unless the tag verifies.
    public func open(with key: SymmetricKey) throws -> [UInt8] {
        var plaintext = [UInt8](repeating: 0, count: AESGCM.plaintextByteCount(combined.count))
        try plaintext.withUnsafeMutableBytes { try open(with: key, into: $0) }
        return plaintext
    }

    /// The same into `plaintext`, exactly the ciphertext's size; wiped if the tag fails.
    private func open(with key: SymmetricKey, into plaintext: UnsafeMutableRawBufferPointer) throws {
        guard version == .ps1 else {
            throw EnvelopeError(.authenticationFailed, "a ps2 envelope opens with a private key, not with key \(kid)'s secret")
        }
        do {
            try combined.withUnsafeBytes { combined in
                try withHeaderBytes { try AESGCM.open(combined: combined, using: key, authenticating: $0, into: plaintext) }
            }
        } catch let error as SealCryptoError where error.code == .authenticationFailed {
            throw EnvelopeError(
                .authenticationFailed,
                "authentication failed: the envelope under key \(kid) was altered or sealed with another key", underlying: error)
        }
    }
}
