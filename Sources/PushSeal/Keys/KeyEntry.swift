import SealCrypto

/// What a key is made of, and so what it can do.
public enum KeyKind: String, Sendable, CaseIterable {
    /// A shared AES-256 key (`ps1`): seals and opens, on both sides.
    case secret
    /// A recipient's P-256 key pair (`ps2`): the device's own, opens what is sealed to it.
    case `private`
    /// A recipient's public key (`ps2`), imported by a sender: seals only.
    case `public`
    /// This keyring's own sender key pair (P-256): authenticates what it seals to a recipient
    /// key (`ps3`), so a receiver that allows it knows the message is this sender's.
    case sender
    /// A sender's public key, imported by a receiver: a `ps3` envelope that names it opens,
    /// and once one is held, nothing unauthenticated does.
    case allowedSender = "allowed-sender"

    /// Whether the key says who sealed a message rather than who may open it: a sender's
    /// key has a primary of its own (the one that authenticates new messages).
    package var isSenderKey: Bool { self == .sender || self == .allowedSender }

    /// The kind in a few words, for messages: "a shared secret", "a sender's key".
    package var article: String {
        switch self {
        case .secret: "a shared secret"
        case .private: "a recipient key pair"
        case .public: "a recipient's public key"
        case .sender: "this keyring's sender key"
        case .allowedSender: "another sender's key"
        }
    }

    /// Whether the key holds a private half: a recipient's pair, or a sender's.
    var holdsPair: Bool { self == .private || self == .sender }
}

/// One key in a keyring.
public struct KeyEntry: Sendable {
    /// What a key is made of: one case per kind, so a key of one kind cannot carry another
    /// kind's material, and a destroyed key carries none.
    package enum Material: Sendable {
        /// The AES-256 key of a `secret` key.
        case secret(SymmetricKey)
        /// The key pair of a `private` or `sender` key.
        case pair(P256PrivateKey, KeyKind)
        /// The point of a `public` or `allowed-sender` key.
        case point(P256PublicKey, KeyKind)
        /// Nothing left: the key was destroyed (its kind stays, for what receivers say).
        case destroyed(KeyKind)
    }

    public let id: String
    public let kind: KeyKind
    public var state: KeyState
    /// Unix seconds when the key was made or imported.
    public let created: Int64
    /// Unix seconds after which an enabled key no longer decrypts; nil for never.
    public var expires: Int64?
    // The material, kept as plain references rather than as a `Material` value: a
    // multi-payload enum of class references keeps its case in the pointers' spare bits,
    // where LeakSanitizer (the fuzz targets) no longer sees the keys as referenced. Only
    // the initialisers below fill them, one per kind, so `material` is always one case.
    private var secretKey: SymmetricKey?
    private var pairKey: P256PrivateKey?
    private var pointKey: P256PublicKey?

    package init(id: String, material: Material, state: KeyState, created: Int64, expires: Int64? = nil) {
        self.id = id
        switch material {
        case .secret(let key):
            kind = .secret
            secretKey = key
        case .pair(let key, let pairKind):
            kind = pairKind
            pairKey = key
        case .point(let point, let pointKind):
            kind = pointKind
            pointKey = point
        case .destroyed(let destroyedKind):
            kind = destroyedKind
        }
        self.state = state
        self.created = created
        self.expires = expires
    }

    /// A shared secret key; nil material when it was destroyed.
    public init(id: String, secret: SymmetricKey?, state: KeyState, created: Int64, expires: Int64? = nil) {
        self.init(id: id, material: secret.map { .secret($0) } ?? .destroyed(.secret), state: state, created: created, expires: expires)
    }

    /// A P-256 key: the pair (`private`, `sender`), or the point alone (`public`,
    /// `allowed-sender`); neither once destroyed.
    package init(
        id: String, kind: KeyKind, privateKey: P256PrivateKey?, publicKey: P256PublicKey?, state: KeyState,
        created: Int64, expires: Int64? = nil
    ) {
        precondition(kind != .secret, "a secret key is made with init(id:secret:…)")
        let material: Material =
            kind.holdsPair
            ? privateKey.map { .pair($0, kind) } ?? .destroyed(kind)
            : (privateKey?.publicKey ?? publicKey).map { .point($0, kind) } ?? .destroyed(kind)
        self.init(id: id, material: material, state: state, created: created, expires: expires)
    }

    /// What the key is made of; only `destroy` and `prune` (through the keyring) change it.
    package var material: Material {
        if let secretKey { return .secret(secretKey) }
        if let pairKey { return .pair(pairKey, kind) }
        if let pointKey { return .point(pointKey, kind) }
        return .destroyed(kind)
    }

    /// The AES-256 key of a `secret` key; nil for another kind, or once destroyed.
    package var secret: SymmetricKey? { secretKey }

    /// The key pair of a `private` or `sender` key; nil for another kind, or once destroyed.
    package var privateKey: P256PrivateKey? { pairKey }

    /// The point of a P-256 key (what seals to a recipient, what verifies a sender); nil for a
    /// secret, or once destroyed.
    package var publicKey: P256PublicKey? { pairKey?.publicKey ?? pointKey }

    /// True when the key is enabled but its grace period has passed at `now`.
    package func isExpired(at now: Int64) -> Bool {
        state == .enabled && hasPassedExpiry(at: now)
    }

    /// Whether its grace period has ended, whatever became of it since (disabled, destroyed).
    package func hasPassedExpiry(at now: Int64) -> Bool {
        expires.map { $0 <= now } ?? false
    }

    /// The state as `keys list` shows it in every rendering: `expired` for an enabled key whose
    /// grace has passed (it decrypts nothing, and `keys prune` destroys it), else the state.
    package func shownState(at now: Int64) -> String {
        isExpired(at: now) ? "expired" : state.rawValue
    }

    /// Wipes whatever the key is made of; its id and kind stay.
    mutating func wipe() {
        secretKey = nil
        pairKey = nil
        pointKey = nil
    }
}
