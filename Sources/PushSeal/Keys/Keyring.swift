import SealCrypto

/// What seals a new message: a shared secret (`ps1`) or a recipient's public key (`ps2`).
public enum SealingKey: Sendable {
    case secret(kid: String, key: SymmetricKey)
    case recipient(kid: String, publicKey: P256PublicKey)

    public var kid: String {
        switch self {
        case .secret(let kid, _), .recipient(let kid, _): kid
        }
    }
}

/// The keys a sender encrypts with and a receiver decrypts with.
///
/// Every change is a method that checks the rules first and leaves the keyring untouched
/// when it throws, so a failed command never half-applies. Times are passed in (`now`),
/// which keeps rotation testable without a clock.
public struct Keyring: Sendable {
    /// APNs keeps an undelivered notification for up to 30 days, so an old key stays
    /// readable that long by default.
    public static let defaultGrace: Duration = .seconds(30 * 86_400)

    public private(set) var keys: [KeyEntry]

    public init(keys: [KeyEntry] = []) {
        self.keys = keys
    }

    /// A keyring with one new primary key: a shared secret, or with `.private` a device's
    /// recipient key pair.
    public static func generate(now: Int64, kind: KeyKind = .secret) throws -> Keyring {
        var keyring = Keyring()
        let entry = try keyring.newKey(state: .primary, now: now, kind: kind)
        keyring.keys.append(entry)
        return keyring
    }

    /// The key that encrypts new messages.
    public var primary: KeyEntry? { keys.first { $0.state == .primary } }

    public func entry(_ kid: String) -> KeyEntry? { keys.first { $0.id == kid } }

    /// Whether a key named `kid` is held, in any state; asked for every notification, so
    /// the entry is not copied out to answer.
    package func holds(_ kid: String) -> Bool { keys.contains { $0.id == kid } }

    /// The shared secret primary key that seals new `ps1` messages, or why there is none.
    package func encryptionKey() throws -> (kid: String, key: SymmetricKey) {
        guard let primary, let secret = primary.secret else {
            throw KeyringError(.noPrimary, primary == nil ? "the keyring has no primary key" : "the primary key \(primary!.id) is a recipient key, not a shared secret")
        }
        return (primary.id, secret)
    }

    /// What a new message is sealed with: the primary key (its secret, `ps1`; or, on a
    /// device's keyring, its own public key, `ps2`), or with `to` the recipient key of that
    /// kid (`ps2`).
    public func sealingKey(to kid: String? = nil, now: Int64) throws -> SealingKey {
        guard let kid else {
            guard let primary else { throw KeyringError(.noPrimary, "the keyring has no primary key") }
            if let secret = primary.secret { return .secret(kid: primary.id, key: secret) }
            guard let point = primary.publicKey else { throw KeyringError(.corrupt, "key \(primary.id) has no key material") }
            return .recipient(kid: primary.id, publicKey: point)
        }
        let index = try usableIndex(kid, now: now)
        guard keys[index].kind != .secret, let point = keys[index].publicKey else {
            throw KeyringError(.notARecipient, "key \(kid) is a shared secret")
        }
        return .recipient(kid: kid, publicKey: point)
    }

    /// The key that opens `ps1` messages sealed under `kid` at time `now`, or a distinct
    /// error for each reason it cannot.
    package func decryptionKey(for kid: String, now: Int64) throws -> SymmetricKey {
        guard let secret = keys[try usableIndex(kid, now: now)].secret else {
            throw KeyringError(.unknownKey, "key \(kid) is a recipient key; a ps1 envelope opens with a shared secret")
        }
        return secret
    }

    /// The private key that opens `ps2` messages sealed to `kid` at time `now`; a key held
    /// only as its public share cannot.
    package func recipientKey(for kid: String, now: Int64) throws -> P256PrivateKey {
        let index = try usableIndex(kid, now: now)
        switch keys[index].kind {
        case .private:
            guard let key = keys[index].privateKey else { throw KeyringError(.corrupt, "key \(kid) has no private key") }
            return key
        case .public:
            throw KeyringError(.unknownKey, "only the public key of \(kid) is held here; a ps2 envelope opens with the device's private key")
        case .secret:
            throw KeyringError(.unknownKey, "key \(kid) is a shared secret; a ps2 envelope opens with a recipient's private key")
        }
    }

    /// Where the entry of `kid` is, if it may open messages at `now`. An index, not a copy
    /// of the entry: every notification opened asks, and the entry is read in place.
    private func usableIndex(_ kid: String, now: Int64) throws -> Int {
        guard let index = keys.firstIndex(where: { $0.id == kid }) else {
            throw KeyringError(.unknownKey, "no key \(kid) in the keyring")
        }
        switch keys[index].state {
        case .disabled:
            throw KeyringError(.keyDisabled, "key \(kid) is disabled")
        case .destroyed:
            throw KeyringError(.keyDestroyed, "key \(kid) was destroyed; messages sealed under it can no longer be read")
        case .enabled where keys[index].isExpired(at: now):
            throw KeyringError(.keyExpired, "key \(kid) expired at \(Timestamp.format(keys[index].expires ?? now)) after rotation")
        case .primary, .enabled:
            return index
        }
    }

    // MARK: Changes

    /// Adds a new key that decrypts but does not yet encrypt; returns its kid. This is the
    /// first step of a two-step roll-out: share it with receivers, then promote it.
    /// The new key is of `kind`, or of the primary's kind (a secret when there is none).
    @discardableResult
    package mutating func add(now: Int64, kind: KeyKind? = nil) throws -> String {
        let entry = try newKey(
            state: keys.contains { $0.state == .primary } ? .enabled : .primary, now: now,
            kind: kind ?? newKind)
        keys.append(entry)
        return entry.id
    }

    /// Makes `kid` the primary; the old primary keeps decrypting for `grace`.
    package mutating func promote(_ kid: String, grace: Duration, now: Int64) throws {
        let index = try usableIndex(kid, for: "promote")
        guard keys[index].state != .primary else { return }
        retirePrimary(grace: grace, now: now)
        keys[index].state = .primary
        keys[index].expires = nil
    }

    /// Makes a new primary key of the primary's kind; the old one keeps decrypting for
    /// `grace`. Returns the new kid. A device's public key has no successor here: only the
    /// device can make one.
    @discardableResult
    package mutating func rotate(grace: Duration, now: Int64) throws -> String {
        if let primary, primary.kind == .public {
            throw KeyringError(.deviceKey, "the primary key \(primary.id) is a device's public key, and only the device can make its successor")
        }
        let entry = try newKey(state: .primary, now: now, kind: newKind)
        retirePrimary(grace: grace, now: now)
        keys.append(entry)
        return entry.id
    }

    /// Stops `kid` from decrypting; reversible with `enable`.
    package mutating func disable(_ kid: String) throws {
        let index = try index(of: kid)
        switch keys[index].state {
        case .primary:
            throw KeyringError(.notAllowed, "key \(kid) is the primary; rotate or promote another key before disabling it")
        case .destroyed:
            throw KeyringError(.notAllowed, "key \(kid) was destroyed; there is nothing left to disable")
        case .enabled, .disabled:
            keys[index].state = .disabled
        }
    }

    /// Lets a disabled key decrypt again. A key whose grace period has passed stays expired:
    /// enabling it would report a success that changes nothing.
    package mutating func enable(_ kid: String, now: Int64) throws {
        let index = try index(of: kid)
        if keys[index].state != .destroyed, let expires = keys[index].expires, expires <= now {
            throw KeyringError(.notAllowed, "key \(kid) expired at \(Timestamp.format(expires)) when its grace period ended; an expired key cannot be enabled")
        }
        switch keys[index].state {
        case .destroyed:
            throw KeyringError(.notAllowed, "key \(kid) was destroyed and cannot be enabled")
        case .disabled:
            keys[index].state = .enabled
        case .primary, .enabled:
            break
        }
    }

    /// Wipes the secret of `kid` for good; its id stays so receivers can say why.
    package mutating func destroy(_ kid: String) throws {
        let index = try index(of: kid)
        guard keys[index].state != .primary else {
            throw KeyringError(.notAllowed, "key \(kid) is the primary; rotate or promote another key before destroying it")
        }
        keys[index].state = .destroyed
        keys[index].wipe()
    }

    /// Destroys every enabled key whose grace has passed; returns their kids.
    @discardableResult
    package mutating func prune(now: Int64) -> [String] {
        var pruned: [String] = []
        for index in keys.indices where keys[index].isExpired(at: now) {
            keys[index].state = .destroyed
            keys[index].wipe()
            pruned.append(keys[index].id)
        }
        return pruned
    }

    /// Adds a shared key as a decrypting key. Importing the same key twice changes nothing;
    /// the same kid with other bytes is refused. Returns false when it was already there.
    @discardableResult
    public mutating func importShare(_ share: KeyShare, now: Int64) throws -> Bool {
        if let existing = entry(share.kid) {
            guard let secret = existing.secret, secret.hasSameBytes(as: share.secret) else {
                throw KeyringError(.conflict, "the keyring already has a key \(share.kid) with a different secret (state \(existing.state.rawValue)); nothing was imported")
            }
            return false
        }
        keys.append(KeyEntry(id: share.kid, secret: share.secret, state: .enabled, created: now))
        return true
    }

    /// Adds a recipient's public key, which seals to that device and opens nothing.
    /// Importing the same point twice changes nothing; the same kid with another key is
    /// refused. Returns false when it was already there.
    @discardableResult
    package mutating func importPublic(_ share: PublicShare, now: Int64) throws -> Bool {
        if let existing = entry(share.kid) {
            guard existing.kind != .secret, existing.publicKey?.x963Representation == share.publicKey.x963Representation else {
                throw KeyringError(.conflict, "the keyring already has a key \(share.kid) that is not this public key (state \(existing.state.rawValue)); nothing was imported")
            }
            return false
        }
        keys.append(KeyEntry(id: share.kid, kind: .public, privateKey: nil, publicKey: share.publicKey, state: .enabled, created: now))
        return true
    }

    /// Adds a device's private key from another of the recipient's receivers, enabled: it
    /// opens what is sealed to it. The same key twice changes nothing; the same kid with
    /// another key is refused. Returns false when it was already there.
    @discardableResult
    package mutating func importPrivate(_ share: PrivateShare, now: Int64) throws -> Bool {
        if let existing = entry(share.kid) {
            guard existing.kind == .private, existing.publicKey?.x963Representation == share.privateKey.publicKey.x963Representation else {
                throw KeyringError(.conflict, "the keyring already has a key \(share.kid) that is not this private key (state \(existing.state.rawValue)); nothing was imported")
            }
            return false
        }
        keys.append(
            KeyEntry(id: share.kid, kind: .private, privateKey: share.privateKey, publicKey: share.privateKey.publicKey, state: .enabled, created: now))
        return true
    }

    /// Carries a sender's retirement of a key to this copy of it: from `notice.expires` on it
    /// opens nothing (`key-expired`), and `prune` destroys it. Only ever brings the end
    /// closer, so an old notice imported late cannot revive a key. This keyring's primary is
    /// refused: it seals here, so only a rotation or promotion here retires it.
    @discardableResult
    package mutating func retire(_ notice: RetirementNotice) throws -> RetirementOutcome {
        guard let index = keys.firstIndex(where: { $0.id == notice.kid }) else { return .notHeld }
        switch keys[index].state {
        case .primary:
            throw KeyringError(.notAllowed, "key \(notice.kid) is this keyring's primary; promote or rotate to another key here before retiring it")
        case .destroyed:
            return .alreadySooner
        case .enabled, .disabled:
            if let expires = keys[index].expires, expires <= notice.expires { return .alreadySooner }
            keys[index].expires = notice.expires
            return .retires(at: notice.expires)
        }
    }

    // MARK: Helpers

    /// Rotation keeps the keyring's kind: a device's keyring makes key pairs.
    private var newKind: KeyKind { primary?.kind == .private ? .private : .secret }

    private func newKey(state: KeyState, now: Int64, kind: KeyKind) throws -> KeyEntry {
        let kid = try KeyID.generate(avoiding: Set(keys.map(\.id)))
        switch kind {
        case .secret:
            return KeyEntry(id: kid, secret: try SymmetricKey.generate(), state: state, created: now)
        case .private:
            return KeyEntry(id: kid, kind: .private, privateKey: try P256PrivateKey.generate(), publicKey: nil, state: state, created: now)
        case .public:
            throw KeyringError(.deviceKey, "a public key comes from its device, and only the device can make it")
        }
    }

    private mutating func retirePrimary(grace: Duration, now: Int64) {
        for index in keys.indices where keys[index].state == .primary {
            keys[index].state = .enabled
            // Saturates rather than traps; the store refuses a time it could not read back.
            keys[index].expires = now.addingReportingOverflow(DurationText.seconds(grace)).overflow ? .max : now + DurationText.seconds(grace)
        }
    }

    private func index(of kid: String) throws -> Int {
        guard let index = keys.firstIndex(where: { $0.id == kid }) else {
            throw KeyringError(.unknownKey, "no key \(kid) in the keyring")
        }
        return index
    }

    private func usableIndex(_ kid: String, for action: String) throws -> Int {
        let index = try index(of: kid)
        switch keys[index].state {
        case .destroyed: throw KeyringError(.notAllowed, "key \(kid) was destroyed and cannot be used to \(action)")
        case .disabled: throw KeyringError(.notAllowed, "key \(kid) is disabled")
        case .primary, .enabled: return index
        }
    }
}
