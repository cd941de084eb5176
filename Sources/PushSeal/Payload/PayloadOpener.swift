import PushSealJSON
import SealCrypto

/// Reads a payload (or a bare envelope) and opens the sealed alert with a keyring.
public struct PayloadOpener: Sendable {
    public let keyring: Keyring
    public let field: String

    public init(keyring: Keyring, field: String = PayloadSealer.defaultField) {
        self.keyring = keyring
        self.field = field
    }

    /// The envelope in a payload's custom field.
    public func envelope(inPayload bytes: some Collection<UInt8>) throws -> SealedEnvelope {
        let value: JSONValue
        do {
            value = try bytes.withBytes { try JSONParser.parse($0) }
        } catch {
            throw PayloadError(.invalidPayload, "the input is not JSON: \(error)", underlying: error)
        }
        guard case .object(let payload) = value else {
            throw PayloadError(.invalidPayload, "the payload is \(value.kindName), not a JSON object")
        }
        switch payload[field] {
        case nil:
            throw EnvelopeError(.passthrough, "the payload has no '\(field)' field")
        case .string(let text)?:
            return try SealedEnvelope(parsing: text)
        case let other?:
            throw EnvelopeError(.malformed, "the '\(field)' field is \(other.kindName), not an envelope string")
        }
    }

    /// Opens `envelope` with the key its kid names, as of `now`, by the receiver's rules: once
    /// the keyring allows a sender, only what an allowed sender sealed opens (docs/FORMAT.md
    /// §6.1), and a ps3 alert must carry its id and sent time.
    public func open(_ envelope: SealedEnvelope, now: Int64) throws -> SealedAlert {
        try envelope.withOpened(with: keyring, now: now, requireSender: SenderPolicy.automatic.requiresSender(keyring)) {
            try SealedAlert(plaintext: $0, field: field, requiringIdentity: envelope.version.namesSender)
        }
    }
}
