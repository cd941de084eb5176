import EnvelopeFormat
@_spi(Testing) import SealCrypto

/// Seals bytes into an envelope, `<version>.<kid>.<base64url(sealed)>` (`ps3`:
/// `ps3.<kid>.<sender kid>.<base64url(sealed)>`): the one place the
/// sending side writes one (docs/FORMAT.md §3). What carries the envelope (an APNs payload's
/// custom field, a Web Push message) is not its concern.
public struct EnvelopeSealer: Sendable {
    /// `ps1` for a shared secret, `ps2` for a recipient's public key, `ps3` for one with a
    /// sender key that vouches for the message.
    public let version: EnvelopeVersion
    public let kid: String
    private let key: SealingKey
    /// `<version>.<kid>.`, the envelope's text before the sealed bytes.
    private let header: [UInt8]
    /// `<version>.<kid>` (`ps3.<kid>.<sender kid>`): what the seal authenticates (ps1's
    /// associated data, ps2's and ps3's HPKE info), so no part can be swapped.
    private let authenticatedHeader: [UInt8]

    public init(key: SealingKey) {
        self.key = key
        kid = key.kid
        let sender: String?
        switch key {
        case .secret:
            version = .ps1
            sender = nil
        case .recipient:
            version = .ps2
            sender = nil
        case .authenticated(_, _, let senderKid, _):
            version = .ps3
            sender = senderKid
        }
        authenticatedHeader = Array(envelopeHeader(version, kid: kid, sender: sender).utf8)
        header = authenticatedHeader + [UInt8(ascii: ".")]
    }

    /// The envelope's length in bytes for a plaintext of `count` bytes: known before sealing,
    /// so a carrier with a size limit can refuse without sealing.
    public func envelopeByteCount(plaintextByteCount count: Int) -> Int {
        header.count + Base64.encodedCount(version.minimumSealedByteCount + count, alphabet: .url)
    }

    /// The envelope of `plaintext`, as text.
    public func envelope(sealing plaintext: [UInt8]) throws -> String {
        var output: [UInt8] = []
        try append(sealing: plaintext, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the envelope of `plaintext` to `output` (the header and base64url need no
    /// JSON escaping, so a carrier writes it in place).
    public func append(sealing plaintext: [UInt8], to output: inout [UInt8]) throws {
        try append(sealing: plaintext, fixed: nil, to: &output)
    }

    /// The randomness a seal would draw, given instead: the published test vectors
    /// (`docs/vectors/`) are made with it, so anyone can reproduce them byte for byte.
    /// Never for a real message: a nonce or ephemeral key used twice gives away plaintext.
    package struct FixedRandomness {
        /// ps1: AES-GCM's 12-byte nonce.
        package var nonce: [UInt8]?
        /// ps2 and ps3: HPKE's ephemeral key pair.
        package var ephemeral: P256PrivateKey?

        package init(nonce: [UInt8]? = nil, ephemeral: P256PrivateKey? = nil) {
            self.nonce = nonce
            self.ephemeral = ephemeral
        }
    }

    /// The same, with `fixed` randomness when given (test vectors only).
    package func append(sealing plaintext: [UInt8], fixed: FixedRandomness?, to output: inout [UInt8]) throws {
        switch key {
        case .secret(_, let secret):
            // The box is only encoded, so it is sealed into scratch memory, not an array.
            try withUnsafeTemporaryAllocation(byteCount: AESGCM.sealedByteCount(plaintext.count), alignment: 1) { box in
                try plaintext.withUnsafeBytes { input in
                    try authenticatedHeader.withUnsafeBytes { header in
                        try AESGCM.seal(input, using: secret, nonce: fixed?.nonce, authenticating: header, into: box)
                    }
                }
                output.append(contentsOf: header)
                Base64.append(UnsafeRawBufferPointer(box), alphabet: .url, to: &output)
            }
        case .recipient(_, let point):
            try appendHPKE(sealing: plaintext, to: point, sender: nil, fixed: fixed, to: &output)
        case .authenticated(_, let point, _, let sender):
            try appendHPKE(sealing: plaintext, to: point, sender: sender, fixed: fixed, to: &output)
        }
    }

    /// ps2 and ps3: HPKE to `point`, in auth mode when `sender` is given.
    private func appendHPKE(
        sealing plaintext: [UInt8], to point: P256PublicKey, sender: P256PrivateKey?, fixed: FixedRandomness?, to output: inout [UInt8]
    ) throws {
        let (enc, context) = try HPKE.sender(to: point, info: authenticatedHeader, authenticatedBy: sender, ephemeral: fixed?.ephemeral)
        let sealed = enc + (try context.seal(plaintext))
        output.append(contentsOf: header)
        sealed.withUnsafeBytes { Base64.append($0, alphabet: .url, to: &output) }
    }
}

/// What carries an envelope in a service's payload: APNs' JSON with a fallback alert, Web
/// Push's message. The envelope itself is `EnvelopeSealer`'s.
package protocol PayloadWrapping: Sendable {
    /// Appends the payload around an envelope of `envelopeByteCount` bytes, which
    /// `writeEnvelope` appends; throws before calling it when the payload would be too large.
    /// `output` is left as it was when anything throws.
    func append(envelopeByteCount: Int, to output: inout [UInt8], writeEnvelope: (inout [UInt8]) throws -> Void) throws
}

extension PayloadWrapping {
    /// Appends `prefix`, the envelope `writeEnvelope` appends, and `"}`: the JSON string
    /// member that ends a payload. `output` is left as it was when the envelope fails.
    package func appendClosingString(after prefix: [UInt8], to output: inout [UInt8], writeEnvelope: (inout [UInt8]) throws -> Void) throws {
        let start = output.count
        // No reserveCapacity here: on a batch's shared buffer it would reserve exactly,
        // defeating the array's doubling and copying the whole batch at every line.
        output.append(contentsOf: prefix)
        do {
            try writeEnvelope(&output)
        } catch {
            output.removeSubrange(start...)
            throw error
        }
        output.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: "}")])
    }

    /// The payload carrying the envelope of `plaintext`, sealed by `sealer`.
    package func payload(sealing plaintext: [UInt8], with sealer: EnvelopeSealer) throws -> [UInt8] {
        var payload: [UInt8] = []
        try append(envelopeByteCount: sealer.envelopeByteCount(plaintextByteCount: plaintext.count), to: &payload) {
            try sealer.append(sealing: plaintext, to: &$0)
        }
        return payload
    }
}
