import Locking
import PushSeal
import PushSealJSON
import Synchronization

/// The sealers one command needs: the request's (its `--to`, or the primary key), and one
/// per other recipient that batch lines name with `"to"`, each made once.
final class SealerSet: Sendable {
    private let keyring: Keyring
    private let request: EncryptRequest
    private let made = Locked<[String: PayloadSealer]>([:])
    /// The request's own sealer, or why there is none: a sender's keyring of public keys
    /// alone has no primary, and needs none when every batch line names its recipient.
    private let standard: Result<PayloadSealer, any Error>
    /// The same when there is one, read per line without unwrapping a Result.
    private let standardSealer: PayloadSealer?
    /// APNs' payload limit for the push type the payloads go out as.
    private let byteLimit: Int
    /// `--truncate`: each line's body is cut to fit too.
    var truncate: Bool { request.truncate }

    init(_ request: EncryptRequest, byteLimit: Int = PayloadSealer.byteLimit) throws {
        let keyring = try KeyringStore(folder: request.keysFolder).load()
        self.keyring = keyring
        self.request = request
        self.byteLimit = byteLimit
        standard = Result { try Self.sealer(keyring, request, to: request.recipient, byteLimit: byteLimit) }
        standardSealer = try? standard.get()
        // Settings that no key can fix (field, padding, fallback) fail at once, not per line.
        if case .failure(let error) = standard, !(error is KeyringError) { throw error }
    }

    /// The sealer for `recipient`, or the request's own for nil.
    func sealer(to recipient: String?) throws -> PayloadSealer {
        guard let recipient, recipient != request.recipient else {
            if let standardSealer { return standardSealer }
            return try standard.get()
        }
        if let sealer = made.withLock({ $0[recipient] }) { return sealer }
        let sealer = try Self.sealer(keyring, request, to: recipient, byteLimit: byteLimit)
        made.withLock { $0[recipient] = sealer }
        return sealer
    }

    /// The web form's sealer for a receiving web app's own public key (its pairing string's
    /// share), made once per share; vouched for (ps3) by the keyring's sender key, as every
    /// message to a recipient key is.
    func sealer(toShare share: PublicShare) throws -> PayloadSealer {
        let name = share.text
        if let sealer = made.withLock({ $0[name] }) { return sealer }
        let key = SealingKey.recipient(kid: share.kid, publicKey: share.publicKey)
            .authenticated(by: try keyring.senderKey(request.sender, now: Timestamp.now()))
        let sealer = try PayloadSealer(webFormWith: key, field: request.field, pad: request.pad)
        made.withLock { $0[name] = sealer }
        return sealer
    }

    /// The APNs payload's sealer, or the web form's (`--web`).
    private static func sealer(_ keyring: Keyring, _ request: EncryptRequest, to recipient: String?, byteLimit: Int) throws -> PayloadSealer {
        guard !request.web else {
            return try PayloadSealer(webFormWith: keyring, to: recipient, sender: request.sender, field: request.field, pad: request.pad)
        }
        return try PayloadSealer(
            keyring: keyring, to: recipient, sender: request.sender, field: request.field, pad: request.pad, fallback: request.fallback,
            byteLimit: byteLimit)
    }
}
