import SealCrypto

/// One key in a keyring.
public struct KeyEntry: Sendable {
    public let id: String
    /// The AES-256 key; nil once destroyed.
    public var secret: SymmetricKey?
    public var state: KeyState
    /// Unix seconds when the key was made or imported.
    public let created: Int64
    /// Unix seconds after which an enabled key no longer decrypts; nil for never.
    public var expires: Int64?

    public init(id: String, secret: SymmetricKey?, state: KeyState, created: Int64, expires: Int64? = nil) {
        self.id = id
        self.secret = secret
        self.state = state
        self.created = created
        self.expires = expires
    }

    /// True when the key is enabled but its grace period has passed at `now`.
    public func isExpired(at now: Int64) -> Bool {
        state == .enabled && (expires.map { $0 <= now } ?? false)
    }
}
