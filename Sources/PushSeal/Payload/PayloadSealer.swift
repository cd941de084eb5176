import PushSealJSON
import SealCrypto

/// Turns alerts into APNs payloads: the fallback alert in the clear, the real alert sealed
/// under the keyring's primary key (or a recipient's) in one custom field. The envelope is
/// `EnvelopeSealer`'s and what is around it `APNsPayload`'s; this pads the alert and joins
/// them. A class: a batch takes its sealer for every line, and a reference is one retain
/// where the settings are a dozen.
public final class PayloadSealer: Sendable {
    /// APNs refuses an alert's payload over 4096 bytes (5120 for voip).
    public static let byteLimit = APNsPayload.byteLimit
    public static let defaultField = APNsPayload.defaultField
    public static let defaultPad = 32

    package let envelope: EnvelopeSealer
    package let wrapping: APNsPayload
    /// Set for the web form (`encrypt --web`): the envelope alone, no `aps`.
    package let web: WebPushPayload?
    public let pad: Int
    public var kid: String { envelope.kid }
    public var field: String { wrapping.field }
    public var fallback: FallbackAlert { wrapping.fallback }
    /// The most bytes a payload may have: APNs' limit for the push type it goes out as, or
    /// what one Web Push message carries for the web form.
    public var byteLimit: Int { web == nil ? wrapping.byteLimit : WebPushPayload.byteLimit }

    /// Seals under the keyring's primary key, or to the recipient key `recipient`; a message to
    /// a recipient key is vouched for (`ps3`) by the sender key `sender` chooses, by default
    /// the keyring's own sender key when it has one.
    public convenience init(
        keyring: Keyring, to recipient: String? = nil, sender: SenderChoice = .primary, field: String = defaultField, pad: Int = defaultPad,
        fallback: FallbackAlert = .standard, byteLimit: Int = PayloadSealer.byteLimit, now: Int64 = Timestamp.now()
    ) throws {
        try self.init(
            key: try keyring.sealingKey(to: recipient, now: now, sender: sender),
            wrapping: try APNsPayload(fallback: fallback, field: field, byteLimit: byteLimit), web: nil, pad: pad)
    }

    /// The web form: `{"<field>":"<envelope>"}`, which a Web Push library encrypts for a
    /// browser's subscription (RFC 8291) and the receiving web app opens; at most what one
    /// push message carries.
    package convenience init(
        webFormWith keyring: Keyring, to recipient: String? = nil, sender: SenderChoice = .primary, field: String = defaultField,
        pad: Int = defaultPad, now: Int64 = Timestamp.now()
    ) throws {
        try self.init(webFormWith: try keyring.sealingKey(to: recipient, now: now, sender: sender), field: field, pad: pad)
    }

    /// The web form sealed to `key` itself: a receiving web app's public share, given with its
    /// subscription (its pairing string), needs no place in the keyring.
    package convenience init(webFormWith key: SealingKey, field: String = defaultField, pad: Int = defaultPad) throws {
        try self.init(key: key, wrapping: try APNsPayload(field: field), web: try WebPushPayload(field: field), pad: pad)
    }

    private init(key: SealingKey, wrapping: APNsPayload, web: WebPushPayload?, pad: Int) throws {
        guard (1...4096).contains(pad) else {
            throw PayloadError(.invalidAlert, "the padding must be from 1 to 4096 bytes")
        }
        self.wrapping = wrapping
        self.web = web
        envelope = EnvelopeSealer(key: key)
        self.pad = pad
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

    /// The payload for `alert`, sealed with `fixed` randomness (test vectors only).
    package func payload(for alert: SealedAlert, fixed: EnvelopeSealer.FixedRandomness) throws -> [UInt8] {
        var payload = [UInt8]()
        try append(alert, visible: VisibleMetadata(), fixed: fixed, to: &payload)
        return payload
    }

    private func append(_ alert: SealedAlert, visible: VisibleMetadata, fixed: EnvelopeSealer.FixedRandomness?, to output: inout [UInt8]) throws {
        // Receivers keep the payload's own `aps` and envelope, so such a key would be lost.
        if !alert.data.isEmpty, let key = alert.data["aps"] != nil ? "aps" : alert.data[field] != nil ? field : nil {
            throw PayloadError(.invalidAlert, "data may not set '\(key)': the receiver keeps the payload's own")
        }
        var plaintext = alert.plaintext(paddedTo: pad)
        defer { SecureMemory.wipe(&plaintext) }
        if let web {
            // The web form has no aps, so nothing stays visible: the web app shows the alert.
            guard visible.isEmpty else {
                throw PayloadError(.invalidAlert, "visible-sound and visible-level have no place in the web form, which has no aps")
            }
            return try web.append(envelopeByteCount: envelope.envelopeByteCount(plaintextByteCount: plaintext.count), to: &output) {
                try envelope.append(sealing: plaintext, fixed: fixed, to: &$0)
            }
        }
        try wrapping.append(envelopeByteCount: envelope.envelopeByteCount(plaintextByteCount: plaintext.count), visible: visible, to: &output) {
            try envelope.append(sealing: plaintext, fixed: fixed, to: &$0)
        }
    }
}
