import SealCrypto

/// What a key is made of, and so what it can do.
public enum KeyKind: String, Sendable, CaseIterable {
    /// A shared AES-256 key (`ps1`): seals and opens, on both sides.
    case secret
    /// A recipient's P-256 key pair (`ps2`): the device's own, opens what is sealed to it.
    case `private`
    /// A recipient's public key (`ps2`), imported by a sender: seals only.
    case `public`
}

/// One key in a keyring.
public struct KeyEntry: Sendable {
    public let id: String
    public let kind: KeyKind
    /// The AES-256 key of a `secret` key; nil once destroyed.
    public var secret: SymmetricKey?
    /// The key pair of a `private` key; nil once destroyed.
    public var privateKey: P256PrivateKey?
    /// The point that seals to a `private` or `public` key; nil once destroyed.
    public var publicKey: P256PublicKey?
    public var state: KeyState
    /// Unix seconds when the key was made or imported.
    public let created: Int64
    /// Unix seconds after which an enabled key no longer decrypts; nil for never.
    public var expires: Int64?

    /// A shared secret key.
    public init(id: String, secret: SymmetricKey?, state: KeyState, created: Int64, expires: Int64? = nil) {
        self.id = id
        kind = .secret
        self.secret = secret
        self.state = state
        self.created = created
        self.expires = expires
    }

    /// A recipient key: the pair (`private`), or the point alone (`public`); neither once
    /// destroyed.
    public init(
        id: String, kind: KeyKind, privateKey: P256PrivateKey?, publicKey: P256PublicKey?, state: KeyState,
        created: Int64, expires: Int64? = nil
    ) {
        precondition(kind != .secret, "a secret key is made with init(id:secret:…)")
        self.id = id
        self.kind = kind
        self.privateKey = kind == .private ? privateKey : nil
        self.publicKey = privateKey?.publicKey ?? publicKey
        self.state = state
        self.created = created
        self.expires = expires
    }

    /// True when the key is enabled but its grace period has passed at `now`.
    public func isExpired(at now: Int64) -> Bool {
        state == .enabled && hasPassedExpiry(at: now)
    }

    /// Whether its grace period has ended, whatever became of it since (disabled, destroyed).
    public func hasPassedExpiry(at now: Int64) -> Bool {
        expires.map { $0 <= now } ?? false
    }

    /// The state as `keys list` shows it in every rendering: `expired` for an enabled key whose
    /// grace has passed (it decrypts nothing, and `keys prune` destroys it), else the state.
    package func shownState(at now: Int64) -> String {
        isExpired(at: now) ? "expired" : state.rawValue
    }

    /// Wipes whatever the key is made of; its id and kind stay.
    mutating func wipe() {
        secret = nil
        privateKey = nil
        publicKey = nil
    }
}
