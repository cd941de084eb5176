import SealCrypto

/// What seals a new message: a shared secret (`ps1`), a recipient's public key (`ps2`), or a
/// recipient's public key with the sender key that vouches for it (`ps3`).
public enum SealingKey: Sendable {
    case secret(kid: String, key: SymmetricKey)
    case recipient(kid: String, publicKey: P256PublicKey)
    /// ps3: sealed to the recipient's `publicKey`, vouched for by the sender key `senderKid`,
    /// whose private half is `sender`.
    case authenticated(kid: String, publicKey: P256PublicKey, senderKid: String, sender: P256PrivateKey)

    /// The key the envelope is sealed to (or under): its header's kid.
    public var kid: String {
        switch self {
        case .secret(let kid, _), .recipient(let kid, _), .authenticated(let kid, _, _, _): kid
        }
    }

    /// The same recipient with `sender` vouching for what is sealed; a shared secret stays
    /// as it is (only a recipient key's envelope can name its sender).
    package func authenticated(by sender: SenderKey?) -> SealingKey {
        switch (self, sender) {
        case (.recipient(let kid, let point), let sender?), (.authenticated(let kid, let point, _, _), let sender?):
            .authenticated(kid: kid, publicKey: point, senderKid: sender.kid, sender: sender.privateKey)
        case (.authenticated(let kid, let point, _, _), nil):
            .recipient(kid: kid, publicKey: point)
        default:
            self
        }
    }
}

/// A sender key's private half, which authenticates what is sealed (`ps3`): whoever holds
/// an `allowed-sender` copy of its public half knows a message it opens came from here.
package struct SenderKey: Sendable {
    package let kid: String
    package let privateKey: P256PrivateKey

    package init(kid: String, privateKey: P256PrivateKey) {
        self.kid = kid
        self.privateKey = privateKey
    }
}

/// Which sender key authenticates a new message sealed to a recipient key.
public enum SenderChoice: Sendable, Equatable {
    /// The keyring's primary sender key, when it has one; none otherwise.
    case primary
    /// This sender key, which must be usable.
    case named(String)
    /// None: the message is sealed as `ps2`, which no receiver that allows senders opens.
    case none
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

    /// The key that encrypts new messages (a sender key is never this primary: it vouches,
    /// it does not encrypt).
    public var primary: KeyEntry? { keys.first { $0.state == .primary && !$0.kind.isSenderKey } }

    /// The sender key that authenticates new messages sealed to recipient keys; nil when this
    /// keyring has none.
    package var senderPrimary: KeyEntry? { keys.first { $0.state == .primary && $0.kind == .sender } }

    /// Whether a receiver with this keyring refuses what no sender it allows has sealed: true
    /// once any sender's key was imported, in whatever state it is now (a disabled or
    /// destroyed one included), so the policy fails closed.
    package var allowsOnlyKnownSenders: Bool { keys.contains { $0.kind == .allowedSender } }

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
    /// kid (`ps2`). A message to a recipient key is authenticated by the sender key `sender`
    /// chooses (`ps3`): by default the primary sender key, when the keyring has one.
    public func sealingKey(to kid: String? = nil, now: Int64, sender: SenderChoice = .primary) throws -> SealingKey {
        let key = try recipientSealingKey(to: kid, now: now)
        if case .secret = key {
            guard case .named(let senderKid) = sender else { return key }
            throw KeyringError(.notARecipient, "sender key \(senderKid) vouches only for messages sealed to a recipient key (ps2), and \(key.kid) is a shared secret")
        }
        return key.authenticated(by: try senderKey(sender, now: now))
    }

    private func recipientSealingKey(to kid: String?, now: Int64) throws -> SealingKey {
        guard let kid else {
            guard let primary else { throw KeyringError(.noPrimary, "the keyring has no primary key") }
            if let secret = primary.secret { return .secret(kid: primary.id, key: secret) }
            guard let point = primary.publicKey else { throw KeyringError(.corrupt, "key \(primary.id) has no key material") }
            return .recipient(kid: primary.id, publicKey: point)
        }
        let index = try usableIndex(kid, now: now)
        switch keys[index].kind {
        case .secret: throw KeyringError(.notARecipient, "key \(kid) is a shared secret")
        case .sender, .allowedSender: throw KeyringError(.notARecipient, "key \(kid) is a sender key; messages are sealed to a recipient key")
        case .private, .public:
            guard let point = keys[index].publicKey else { throw KeyringError(.corrupt, "key \(kid) has no key material") }
            return .recipient(kid: kid, publicKey: point)
        }
    }

    /// The sender key `choice` names, usable at `now`; nil for none.
    package func senderKey(_ choice: SenderChoice, now: Int64) throws -> SenderKey? {
        let kid: String
        switch choice {
        case .none: return nil
        case .primary:
            guard let primary = senderPrimary else { return nil }
            kid = primary.id
        case .named(let named): kid = named
        }
        let index = try usableIndex(kid, now: now)
        guard keys[index].kind == .sender else {
            throw KeyringError(.notASender, "key \(kid) is not this keyring's sender key (it is \(keys[index].kind.article))")
        }
        guard let privateKey = keys[index].privateKey else { throw KeyringError(.corrupt, "sender key \(kid) has no private key") }
        return SenderKey(kid: kid, privateKey: privateKey)
    }

    /// The public key of the sender `kid` that a `ps3` envelope names, if this keyring
    /// allows that sender at `now`: an `allowed-sender` key, or this keyring's own sender
    /// key, that is usable. Every other answer is `senderNotAllowed`, with the reason.
    package func allowedSender(_ kid: String, now: Int64) throws -> P256PublicKey {
        guard let index = keys.firstIndex(where: { $0.id == kid }) else {
            throw KeyringError(.senderNotAllowed, "sender key \(kid) is not one this keyring allows")
        }
        let entry = keys[index]
        guard entry.kind.isSenderKey else {
            throw KeyringError(.senderNotAllowed, "key \(kid) is \(entry.kind.article), not a sender's key")
        }
        switch entry.state {
        case .disabled: throw KeyringError(.senderNotAllowed, "sender key \(kid) is disabled here")
        case .destroyed: throw KeyringError(.senderNotAllowed, "sender key \(kid) was destroyed here")
        case .enabled where entry.isExpired(at: now):
            throw KeyringError(.senderNotAllowed, "sender key \(kid) retired at \(Timestamp.format(entry.expires ?? now))")
        case .primary, .enabled:
            guard let point = entry.publicKey else { throw KeyringError(.corrupt, "sender key \(kid) has no key material") }
            return point
        }
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
        case .sender, .allowedSender:
            throw KeyringError(.unknownKey, "key \(kid) is a sender key; an envelope opens with a recipient's private key")
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
    /// The new key is of `kind`, or of the primary's kind (a secret when there is none). A
    /// sender key has a primary of its own: the first one made is it.
    @discardableResult
    package mutating func add(now: Int64, kind: KeyKind? = nil) throws -> String {
        let kind = kind ?? newKind
        let hasPrimary = kind.isSenderKey ? senderPrimary != nil : primary != nil
        let entry = try newKey(state: hasPrimary ? .enabled : .primary, now: now, kind: kind)
        keys.append(entry)
        return entry.id
    }

    /// Makes `kid` the primary; the old primary keeps decrypting for `grace`. A sender key
    /// takes the sender's primary, and the old sender key stays allowed for `grace`.
    package mutating func promote(_ kid: String, grace: Duration, now: Int64) throws {
        let index = try usableIndex(kid, for: "promote")
        guard keys[index].state != .primary else { return }
        if keys[index].kind == .allowedSender {
            throw KeyringError(.notAllowed, "key \(kid) is another sender's key: it is allowed here, but only its sender seals with it")
        }
        retirePrimary(sender: keys[index].kind.isSenderKey, grace: grace, now: now)
        keys[index].state = .primary
        keys[index].expires = nil
    }

    /// Makes a new primary key of the primary's kind; the old one keeps decrypting for
    /// `grace`. Returns the new kid. A device's public key has no successor here: only the
    /// device can make one.
    /// With `sender`, the same for the sender key: a new one authenticates from now on, and
    /// receivers keep allowing the old one for `grace` once they hear of it.
    @discardableResult
    package mutating func rotate(grace: Duration, now: Int64, sender: Bool = false) throws -> String {
        if !sender, let primary, primary.kind == .public {
            throw KeyringError(.deviceKey, "the primary key \(primary.id) is a device's public key, and only the device can make its successor")
        }
        if sender, senderPrimary == nil {
            throw KeyringError(.noSenderKey, "the keyring has no sender key to rotate")
        }
        if !sender, primary == nil, let senderKey = senderPrimary {
            // A sender's keyring of recipients' public keys: its one primary is the sender key.
            throw KeyringError(.noPrimary, "the keyring has no primary key to rotate, only sender key \(senderKey.id), which 'keys rotate --sender' rotates")
        }
        let entry = try newKey(state: .primary, now: now, kind: sender ? .sender : newKind)
        retirePrimary(sender: sender, grace: grace, now: now)
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
            guard existing.kind == .public || existing.kind == .private,
                existing.publicKey?.x963Representation == share.publicKey.x963Representation
            else {
                throw KeyringError(.conflict, "the keyring already has a key \(share.kid) that is not this public key (state \(existing.state.rawValue)); nothing was imported")
            }
            return false
        }
        keys.append(KeyEntry(id: share.kid, kind: .public, privateKey: nil, publicKey: share.publicKey, state: .enabled, created: now))
        return true
    }

    /// Adds a sender's public key as an allowed sender: a `ps3` envelope that names it opens,
    /// and from now on nothing unauthenticated does. The same key twice changes nothing; the
    /// same kid with another key is refused. Returns false when it was already there.
    @discardableResult
    package mutating func importSender(_ share: SenderShare, now: Int64) throws -> Bool {
        if let existing = entry(share.kid) {
            guard existing.kind.isSenderKey, existing.publicKey?.x963Representation == share.publicKey.x963Representation else {
                throw KeyringError(.conflict, "the keyring already has a key \(share.kid) that is not this sender's key (state \(existing.state.rawValue)); nothing was imported")
            }
            return false
        }
        keys.append(KeyEntry(id: share.kid, kind: .allowedSender, privateKey: nil, publicKey: share.publicKey, state: .enabled, created: now))
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
        case .sender:
            return KeyEntry(id: kid, kind: .sender, privateKey: try P256PrivateKey.generate(), publicKey: nil, state: state, created: now)
        case .public:
            throw KeyringError(.deviceKey, "a public key comes from its device, and only the device can make it")
        case .allowedSender:
            throw KeyringError(.notAllowed, "another sender's key comes from that sender, and only it can make it")
        }
    }

    /// Retires the primary of one track: the sender key's, or the one that seals.
    private mutating func retirePrimary(sender: Bool, grace: Duration, now: Int64) {
        for index in keys.indices where keys[index].state == .primary && keys[index].kind.isSenderKey == sender {
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
