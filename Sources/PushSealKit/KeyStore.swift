import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// What a key store answers for a key id: the key, no such key, or no answer now.
public enum KeyLookup: Sendable {
    case found(OpeningKey)
    /// The store works and holds no key under this id: the message cannot be opened here.
    case missing
    /// The store could not be asked: a phone locked since reboot, a missing entitlement, a
    /// failed read. The key may well be there, so this is never reported as `missing`.
    case unavailable(KeyStoreError)
}

/// Why a key store could not answer, with the system's code where there is one.
public struct KeyStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Equal when the kind and the status are: the message is for people.
    public static func == (lhs: KeyStoreError, rhs: KeyStoreError) -> Bool { lhs.kind == rhs.kind && lhs.status == rhs.status }

    public enum Kind: String, Sendable {
        /// Protected data is not readable yet: the device has not been unlocked since it
        /// started (Keychain `errSecInteractionNotAllowed`, a protected file's EPERM). It
        /// passes by itself.
        case locked
        /// The app is not set up to reach the store: no Keychain Sharing entitlement, a wrong
        /// access group, an App Group the app does not belong to. It never passes by itself,
        /// so a developer should see it on the first try.
        case misconfigured
        /// Any other failure of the store.
        case failed
    }

    public let kind: Kind
    /// The Keychain's `OSStatus`, or the file system's errno, when there is one.
    public let status: Int32?
    /// What went wrong, for logs; never a key byte.
    public let message: String
    public var description: String { message }

    public init(_ kind: Kind, status: Int32? = nil, _ message: String) {
        self.kind = kind
        self.status = status
        self.message = message
    }
}

/// Where the extension finds its keys by id: the Keychain on a device, a shared App Group
/// folder, memory in tests.
public protocol KeyStore: Sendable {
    func lookUp(id: String) -> KeyLookup
    /// Whether the store keeps any sender's key (`OpeningKey.sender`): a receiver that allows
    /// a sender refuses what no allowed sender sealed (docs/FORMAT.md §6.1). A store of your
    /// own that keeps senders' keys must answer this; the default, false, allows anyone.
    func knowsSenders() throws(KeyStoreError) -> Bool
}

extension KeyStore {
    public func knowsSenders() throws(KeyStoreError) -> Bool { false }
}

extension KeyStore {
    /// The key under `id` when the store has it and can say so; nil for missing and unavailable alike.
    public func key(id: String) -> OpeningKey? {
        if case .found(let key) = lookUp(id: id) { return key }
        return nil
    }
}

/// How the stores that keep bytes (the Keychain, App Group files) name and keep a key: under
/// `psk1.<kid>` a 32-byte secret, under `prk1.<kid>` a P-256 scalar, under `pss1.<kid>` an
/// allowed sender's 65-byte point, as the pairing lines do.
enum StoredKey {
    static let kinds = ["psk1", "prk1", "pss1"]

    /// Whether a kept name is a key's (`<kind>.<kid>`), and its id.
    static func id(ofName name: String) -> String? {
        guard kinds.contains(where: { name.hasPrefix($0 + ".") }) else { return nil }
        let id = String(name.dropFirst(5))
        return SealedEnvelope.isKeyID(Substring(id)) ? id : nil
    }

    /// Refuses an id no envelope can carry (docs/FORMAT.md §3: 1 to 64 of A-Z a-z 0-9 _ -):
    /// a key under it could never open anything, and `x/../../victim` would name a file
    /// outside the store's folder.
    static func check(id: String) throws(KeyStoreError) {
        guard SealedEnvelope.isKeyID(Substring(id)) else {
            throw KeyStoreError(.failed, "\(id.debugDescription.prefix(80)) is not a key id an envelope can carry: a key id is 1 to 64 of A-Z a-z 0-9 _ -")
        }
    }

    /// The name a key is kept under, the names of the other kinds under that id (which give
    /// way when this one is stored), and its bytes.
    static func entry(for key: OpeningKey, id: String) -> (name: String, others: [String], bytes: Data) {
        let (kind, bytes): (String, Data) =
            switch key {
            case .secret(let secret): ("psk1", secret.withUnsafeBytes { Data($0) })
            case .recipient(let privateKey): ("prk1", privateKey.rawRepresentation)
            case .sender(let publicKey): ("pss1", publicKey.x963Representation)
            }
        return ("\(kind).\(id)", kinds.filter { $0 != kind }.map { "\($0).\(id)" }, bytes)
    }

    /// The key kept under `kind` as `bytes`, or why they are not one.
    static func key(kind: String, bytes: Data, id: String) -> KeyLookup {
        if kind == "psk1", bytes.count == 32 { return .found(.secret(SymmetricKey(data: bytes))) }
        if kind == "prk1", let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: bytes) { return .found(.recipient(key)) }
        if kind == "pss1", bytes.count == 65, let key = try? P256.KeyAgreement.PublicKey(x963Representation: bytes) { return .found(.sender(key)) }
        let what = ["psk1": "32-byte secret", "prk1": "P-256 private key", "pss1": "sender's P-256 public key"][kind] ?? "key"
        return .unavailable(KeyStoreError(.failed, "what is kept for key \(id) is not a \(what)"))
    }
}

/// Keys held in memory.
public final class InMemoryKeyStore: KeyStore, @unchecked Sendable {
    // Unchecked: `keys` and `failure` are read and written under `lock` only.
    private var keys: [String: OpeningKey] = [:]
    private var failure: KeyStoreError?
    private let lock = NSLock()

    public init(_ keys: [String: OpeningKey] = [:]) {
        self.keys = keys
    }

    public func lookUp(id: String) -> KeyLookup {
        lock.withLock {
            if let failure { return .unavailable(failure) }
            return keys[id].map(KeyLookup.found) ?? .missing
        }
    }

    public func knowsSenders() throws(KeyStoreError) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if let failure { throw failure }
        return keys.values.contains { if case .sender = $0 { true } else { false } }
    }

    public func store(_ key: OpeningKey, id: String) {
        lock.withLock { keys[id] = key }
    }

    public func remove(id: String) {
        lock.withLock { keys[id] = nil }
    }

    /// Every lookup answers `unavailable` with `failure` until it is set back to nil: what a
    /// locked phone's store does, for tests of what the extension then shows.
    public func setUnavailable(_ failure: KeyStoreError?) {
        lock.withLock { self.failure = failure }
    }
}
