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
    /// What a key is made of: one case per kind, so a key of one kind cannot carry another
    /// kind's material, and a destroyed key carries none.
    public enum Material: Sendable {
        /// The AES-256 key of a `secret` key.
        case secret(SymmetricKey)
        /// The key pair of a `private` key.
        case pair(P256PrivateKey)
        /// The point of a `public` key, which seals only.
        case point(P256PublicKey)
        /// Nothing left: the key was destroyed (its kind stays, for what receivers say).
        case destroyed(KeyKind)
    }

    public let id: String
    /// What the key is made of; only `destroy` and `prune` (through the keyring) change it.
    public private(set) var material: Material
    public var state: KeyState
    /// Unix seconds when the key was made or imported.
    public let created: Int64
    /// Unix seconds after which an enabled key no longer decrypts; nil for never.
    public var expires: Int64?

    public init(id: String, material: Material, state: KeyState, created: Int64, expires: Int64? = nil) {
        self.id = id
        self.material = material
        self.state = state
        self.created = created
        self.expires = expires
    }

    /// A shared secret key; nil material when it was destroyed.
    public init(id: String, secret: SymmetricKey?, state: KeyState, created: Int64, expires: Int64? = nil) {
        self.init(id: id, material: secret.map { .secret($0) } ?? .destroyed(.secret), state: state, created: created, expires: expires)
    }

    /// A recipient key: the pair (`private`), or the point alone (`public`); neither once
    /// destroyed.
    public init(
        id: String, kind: KeyKind, privateKey: P256PrivateKey?, publicKey: P256PublicKey?, state: KeyState,
        created: Int64, expires: Int64? = nil
    ) {
        precondition(kind != .secret, "a secret key is made with init(id:secret:…)")
        let material: Material =
            switch kind {
            case .private: privateKey.map { .pair($0) } ?? .destroyed(.private)
            default: (privateKey?.publicKey ?? publicKey).map { .point($0) } ?? .destroyed(.public)
            }
        self.init(id: id, material: material, state: state, created: created, expires: expires)
    }

    public var kind: KeyKind {
        switch material {
        case .secret: .secret
        case .pair: .private
        case .point: .public
        case .destroyed(let kind): kind
        }
    }

    /// The AES-256 key of a `secret` key; nil for another kind, or once destroyed.
    public var secret: SymmetricKey? {
        if case .secret(let key) = material { key } else { nil }
    }

    /// The key pair of a `private` key; nil for another kind, or once destroyed.
    public var privateKey: P256PrivateKey? {
        if case .pair(let key) = material { key } else { nil }
    }

    /// The point that seals to a `private` or `public` key; nil for a secret, or once destroyed.
    public var publicKey: P256PublicKey? {
        switch material {
        case .pair(let key): key.publicKey
        case .point(let point): point
        case .secret, .destroyed: nil
        }
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
        material = .destroyed(kind)
    }
}
