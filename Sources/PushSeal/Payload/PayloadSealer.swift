import PushSealJSON
@_spi(Testing) import SealCrypto

/// Turns alerts into APNs payloads: the fallback alert in the clear, the real alert sealed
/// under the keyring's primary key in one custom field. A class: a batch takes its sealer
/// for every line, and a reference is one retain where the settings are a dozen.
public final class PayloadSealer: Sendable {
    /// APNs refuses an alert's payload over 4096 bytes (5120 for voip).
    public static let byteLimit = APNs.PushType.alert.payloadByteLimit
    public static let defaultField = "enc"
    public static let defaultPad = 32

    public let kid: String
    private let key: SealingKey
    public let field: String
    public let pad: Int
    public let fallback: FallbackAlert
    /// The most bytes a payload may have: APNs' limit for the push type it goes out as.
    public let byteLimit: Int
    // The payload is the same bytes around the envelope every time, so build them once.
    private let prefix: [UInt8]
    /// `ps1.<kid>.`, the envelope's text before the sealed box.
    private let header: [UInt8]
    /// `ps1.<kid>` (or `ps2.<kid>`), the header without its dot: what the seal authenticates.
    private let authenticatedHeader: [UInt8]

    public init(
        keyring: Keyring, to recipient: String? = nil, field: String = defaultField, pad: Int = defaultPad,
        fallback: FallbackAlert = .standard, byteLimit: Int = PayloadSealer.byteLimit, now: Int64 = Timestamp.now()
    ) throws {
        try Self.validate(field: field)
        guard (1...4096).contains(pad) else {
            throw PayloadError(.invalidAlert, "the padding must be from 1 to 4096 bytes")
        }
        guard fallback.hasText else {
            throw PayloadError(.invalidAlert, "the fallback alert needs a title, a body or a localization key, or iOS will not run the extension")
        }
        key = try keyring.sealingKey(to: recipient, now: now)
        kid = key.kid
        self.field = field
        self.pad = pad
        self.fallback = fallback
        self.byteLimit = byteLimit
        prefix = Self.prefix(fallback, field: field)
        switch key {
        case .secret: header = Array("ps1.\(kid).".utf8)
        case .recipient: header = Array("ps2.\(kid).".utf8)
        }
        authenticatedHeader = Array(header.dropLast())
    }

    /// `{"aps":{…},"<field>":`: the payload's bytes before the envelope.
    private static func prefix(_ fallback: FallbackAlert, field: String) -> [UInt8] {
        var prefix = Array("{\"aps\":".utf8)
        JSONWriter.write(.object(fallback.aps()), to: &prefix)
        prefix.append(UInt8(ascii: ","))
        JSONWriter.writeString(field, to: &prefix)
        prefix.append(UInt8(ascii: ":"))
        return prefix
    }

    /// The field must be a custom key beside `aps`.
    public static func validate(field: String) throws {
        guard !field.isEmpty, field != "aps", field.utf8.count <= 64 else {
            throw PayloadError(.invalidAlert, "the envelope field must be a name of 1 to 64 bytes other than 'aps'")
        }
    }

    /// The payload for `alert`; when it would be too large and `truncatingBody` is set, the
    /// body is cut (on a character boundary, ending with "…") to the longest that fits, and
    /// `cut` says how many characters of how many were kept. Only when even an empty body
    /// would not fit is it `tooLarge`.
    public func payload(for alert: SealedAlert, truncatingBody: Bool, visible: VisibleMetadata = VisibleMetadata()) throws -> (payload: [UInt8], cut: (kept: Int, of: Int)?) {
        do {
            return (try payload(for: alert, visible: visible), nil)
        } catch let error as PayloadError where error.code == .tooLarge && truncatingBody {
            guard let body = alert.fields.body, !body.isEmpty else { throw error }
            // The longest prefix that fits, by halving: each try is one seal.
            let characters = Array(body)
            var shorter = alert
            var best: (payload: [UInt8], kept: Int)?
            var low = 0
            var high = characters.count - 1
            while low <= high {
                let middle = (low + high) / 2
                shorter.fields.body = String(characters[..<middle]) + "…"
                if let payload = try? payload(for: shorter, visible: visible) {
                    best = (payload, middle)
                    low = middle + 1
                } else {
                    high = middle - 1
                }
            }
            guard let best else { throw error }
            return (best.payload, (best.kept, characters.count))
        }
    }

    /// The payload for `alert`, or `tooLarge` saying by how many bytes it is over.
    public func payload(for alert: SealedAlert, visible: VisibleMetadata = VisibleMetadata()) throws -> [UInt8] {
        var payload = [UInt8]()
        payload.reserveCapacity(1024)
        try append(alert, visible: visible, to: &payload)
        return payload
    }

    /// Appends the payload for `alert` to `output`, which is left as it was when it throws:
    /// `encrypt --batch` writes every line's payload straight into its output this way.
    /// `visible` overrides the sealer's visible metadata for this payload alone (a batch
    /// line's `visible-sound`, `visible-level`); only such payloads build their own `aps`.
    package func append(_ alert: SealedAlert, visible: VisibleMetadata = VisibleMetadata(), to output: inout [UInt8]) throws {
        try append(alert, visible: visible, fixed: nil, to: &output)
    }

    /// The randomness a seal would draw, given instead: the published test vectors
    /// (`docs/vectors/`) are made with it, so anyone can reproduce them byte for byte.
    /// Never for a real message: a nonce or ephemeral key used twice gives away plaintext.
    package struct FixedRandomness {
        /// ps1: AES-GCM's 12-byte nonce.
        package var nonce: [UInt8]?
        /// ps2: HPKE's ephemeral key pair.
        package var ephemeral: P256PrivateKey?

        package init(nonce: [UInt8]? = nil, ephemeral: P256PrivateKey? = nil) {
            self.nonce = nonce
            self.ephemeral = ephemeral
        }
    }

    /// The payload for `alert`, sealed with `fixed` randomness (test vectors only).
    package func payload(for alert: SealedAlert, fixed: FixedRandomness) throws -> [UInt8] {
        var payload = [UInt8]()
        try append(alert, visible: VisibleMetadata(), fixed: fixed, to: &payload)
        return payload
    }

    private func append(_ alert: SealedAlert, visible: VisibleMetadata, fixed: FixedRandomness?, to output: inout [UInt8]) throws {
        // Receivers keep the payload's own `aps` and envelope, so such a key would be lost.
        if !alert.data.isEmpty, let key = alert.data["aps"] != nil ? "aps" : alert.data[field] != nil ? field : nil {
            throw PayloadError(.invalidAlert, "data may not set '\(key)': the receiver keeps the payload's own")
        }
        var plaintext = alert.plaintext(paddedTo: pad)
        defer { SecureMemory.wipe(&plaintext) }
        // The envelope's header `<version>.<kid>` is what both versions authenticate: ps1
        // as AES-GCM's associated data, ps2 as HPKE's info (see SealedEnvelope).
        switch key {
        case .secret(_, let secret):
            // The box is only encoded, so it is sealed into scratch memory, not an array.
            try withUnsafeTemporaryAllocation(byteCount: AESGCM.sealedByteCount(plaintext.count), alignment: 1) { box in
                try plaintext.withUnsafeBytes { input in
                    try authenticatedHeader.withUnsafeBytes { header in
                        try AESGCM.seal(input, using: secret, nonce: fixed?.nonce, authenticating: header, into: box)
                    }
                }
                try appendEnvelope(sealed: UnsafeRawBufferPointer(box), visible: visible, to: &output)
            }
        case .recipient(_, let point):
            let sealed: [UInt8]
            if let ephemeral = fixed?.ephemeral {
                let (enc, context) = try HPKE.sender(to: point, info: authenticatedHeader, ephemeral: ephemeral)
                sealed = enc + (try context.seal(plaintext))
            } else {
                sealed = try HPKE.seal(plaintext, to: point, info: authenticatedHeader)
            }
            try sealed.withUnsafeBytes { try appendEnvelope(sealed: $0, visible: visible, to: &output) }
        }
    }

    /// Appends the payload around the envelope holding `sealed`, or throws `tooLarge`
    /// leaving `output` as it was.
    private func appendEnvelope(sealed: UnsafeRawBufferPointer, visible: VisibleMetadata, to output: inout [UInt8]) throws {
        let prefix: [UInt8]
        if visible.isEmpty {
            prefix = self.prefix
        } else {
            var fallback = self.fallback
            fallback.visible = fallback.visible.overridden(by: visible)
            prefix = Self.prefix(fallback, field: field)
        }
        let size = prefix.count + 1 + header.count + Base64.encodedCount(sealed.count, alphabet: .url) + 2
        guard size <= byteLimit else {
            throw PayloadError(.tooLarge, "the payload would be \(size) bytes, \(size - byteLimit) over APNs' \(byteLimit)-byte limit")
        }
        // No reserveCapacity here: on a batch's shared buffer it would reserve exactly,
        // defeating the array's doubling and copying the whole batch at every line.
        output.append(contentsOf: prefix)
        // The header and base64url need no JSON escaping, so the envelope is written in place.
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: header)
        Base64.append(sealed, alphabet: .url, to: &output)
        output.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: "}")])
    }
}
