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
/// Either way neither the version nor the kid can be swapped without failing to open.
public struct SealedEnvelope: Sendable, Equatable {
    /// The format's versions, as `EnvelopeFormat` defines them for every side.
    public typealias Version = EnvelopeVersion

    public let version: Version
    public let kid: String
    /// The sealed bytes: `ps1` nonce ‖ ciphertext ‖ tag, `ps2` enc ‖ ciphertext ‖ tag.
    package let combined: [UInt8]

    /// A `ps1` envelope.
    package init(kid: String, box: SealedBox) {
        version = .ps1
        self.kid = kid
        combined = box.combined
    }

    init(version: Version, kid: String, combined: [UInt8]) {
        self.version = version
        self.kid = kid
        self.combined = combined
    }

    /// The authenticated header, `<version>.<kid>`.
    package var header: String { envelopeHeader(version, kid: kid) }

    /// The header's bytes, as AES-GCM authenticates them and HPKE takes them as `info`.
    var headerBytes: [UInt8] { withHeaderBytes { Array($0) } }

    /// The same, written on the stack for `body`: every envelope opened needs them.
    func withHeaderBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let prefix = version.rawValue.utf8.count
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: prefix + 1 + kid.utf8.count) { header in
            _ = header.initialize(from: version.rawValue.utf8)
            header[prefix] = UInt8(ascii: ".")
            _ = UnsafeMutableBufferPointer(rebasing: header[(prefix + 1)...]).initialize(from: kid.utf8)
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
            throw EnvelopeError(.malformed, "not an envelope: expected ps1.<kid>.<sealed box> or ps2.<kid>.<sealed box>")
        } catch .unsupportedVersion(let name) {
            throw EnvelopeError(
                .unsupported,
                "envelope version \(name.map { "'\($0)'" } ?? "this") is not supported (this build reads \(Version.readable))")
        } catch .invalidKeyID {
            throw EnvelopeError(.malformed, "malformed envelope: the key id must be 1 to 64 of A-Z a-z 0-9 _ -")
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
        self.combined = combined
    }

    /// Opens the envelope with the key of its kind that `keyring` holds for its kid and
    /// hands the plaintext to `body`, wiping it when `body` returns. A `ps1` plaintext is
    /// opened into memory on the stack, not an array: the receiver opens one per notification.
    package func withOpened<Result>(with keyring: Keyring, now: Int64, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
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
