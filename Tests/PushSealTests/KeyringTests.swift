import Foundation
import PushSeal
import SealCrypto
import Synchronization
import Testing

@Suite("keyring rules")
struct KeyringTests {
    @Test func rotationKeepsOldKeyForTheGracePeriod() throws {
        var keyring = try Keyring.generate(now: 0)
        let old = keyring.primary!.id
        let new = try keyring.rotate(grace: .seconds(100), now: 10)
        #expect(keyring.primary?.id == new)
        #expect(keyring.keys.filter { $0.state == .primary }.count == 1)
        #expect(throws: Never.self) { try keyring.decryptionKey(for: old, now: 109) }
        #expect(throws: KeyringError(.keyExpired, "")) { try keyring.decryptionKey(for: old, now: 110) }
        #expect(keyring.prune(now: 110) == [old])
        #expect(throws: KeyringError(.keyDestroyed, "")) { try keyring.decryptionKey(for: old, now: 110) }
    }

    @Test func unknownDisabledAndDestroyedKeysFailDistinctly() throws {
        var keyring = try Keyring.generate(now: 0)
        let spare = try keyring.add(now: 0)
        let other = try keyring.add(now: 0)
        try keyring.disable(spare)
        try keyring.destroy(other)
        #expect(throws: KeyringError(.keyDisabled, "")) { try keyring.decryptionKey(for: spare, now: 0) }
        #expect(throws: KeyringError(.keyDestroyed, "")) { try keyring.decryptionKey(for: other, now: 0) }
        #expect(throws: KeyringError(.unknownKey, "")) { try keyring.decryptionKey(for: "nope", now: 0) }
        try keyring.enable(spare, now: 0)
        #expect(throws: Never.self) { try keyring.decryptionKey(for: spare, now: 0) }
        #expect(keyring.entry(other)?.secret == nil)
    }

    @Test func primaryCannotBeDisabledOrDestroyed() throws {
        var keyring = try Keyring.generate(now: 0)
        let primary = keyring.primary!.id
        #expect(throws: KeyringError(.notAllowed, "")) { try keyring.disable(primary) }
        #expect(throws: KeyringError(.notAllowed, "")) { try keyring.destroy(primary) }
    }

    @Test func addThenPromoteIsATwoStepRollOut() throws {
        var keyring = try Keyring.generate(now: 0)
        let old = keyring.primary!.id
        let next = try keyring.add(now: 0)
        #expect(keyring.primary?.id == old)
        try keyring.promote(next, grace: .seconds(30), now: 5)
        #expect(keyring.primary?.id == next)
        #expect(keyring.entry(old)?.state == .enabled)
        #expect(keyring.entry(old)?.expires == 35)
    }

    @Test func importIsIdempotentAndRefusesConflicts() throws {
        var keyring = Keyring()
        let share = KeyShare(kid: "phone-1", secret: try SymmetricKey.generate())
        #expect(try keyring.importShare(try KeyShare(parsing: share.text + "\n"), now: 0))
        #expect(try keyring.importShare(share, now: 0) == false)
        let clash = KeyShare(kid: "phone-1", secret: try SymmetricKey.generate())
        #expect(throws: KeyringError(.conflict, "")) { try keyring.importShare(clash, now: 0) }
        #expect(throws: KeyringError(.noPrimary, "")) { try keyring.encryptionKey() }
    }

    @Test(arguments: ["", "psk1.", "psk1.kid.", "psk1.kid.AAAA", "psk2.kid.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "psk1.k!d.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])
    func badSharesAreRefused(_ text: String) {
        #expect(throws: KeyringError(.invalidShare, "")) { try KeyShare(parsing: text) }
    }
}

@Suite("keyring on disk")
struct KeyringStoreTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "pushseal-store-" + UUID().uuidString
    }

    @Test func createWritesPrivateFileAndFolderAndRoundTrips() throws {
        let store = KeyringStore(folder: folder)
        let keyring = try Keyring.generate(now: 1_796_000_000)
        try store.create(keyring)
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: folder)
        #expect((folderAttributes[.posixPermissions] as? Int) == 0o700)
        let loaded = try store.load()
        #expect(loaded.keys.map(\.id) == keyring.keys.map(\.id))
        #expect(loaded.primary!.secret!.hasSameBytes(as: keyring.primary!.secret!))
        #expect(throws: KeyringError(.keyringExists, "")) { try store.create(keyring) }
    }

    /// The library states the fact and names the path; the CLI adds the chmod to run
    /// (KeysCommandTests checks that line).
    @Test func groupReadableKeyringIsRefusedNamingThePath() throws {
        let store = KeyringStore(folder: folder)
        try store.create(try Keyring.generate(now: 0))
        chmod(store.path, 0o644)
        #expect {
            try store.load()
        } throws: { error in
            let error = error as? KeyringError
            return error?.code == .insecurePermissions && error?.path == store.path && "\(error!)".contains("(mode 0644)") && !"\(error!)".contains("chmod")
        }
        chmod(store.path, 0o600)
        chmod(folder, 0o755)
        #expect {
            try store.load()
        } throws: { error in
            let error = error as? KeyringError
            return error?.code == .insecurePermissions && error?.path == folder && "\(error!)".contains("(mode 0755)") && !"\(error!)".contains("chmod")
        }
    }

    @Test func aChangeThatWouldNotReadBackIsRefusedAndTheKeyringKept() throws {
        let store = KeyringStore(folder: folder)
        try store.create(try Keyring.generate(now: 1_800_000_000))
        let before = try Data(contentsOf: URL(fileURLWithPath: store.path))
        // A grace no reader can represent: past year 9999.
        #expect(throws: KeyringError(.notAllowed, "")) {
            try store.update { try $0.rotate(grace: .seconds(Int64.max / 4), now: 1_800_000_000) }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path)) == before)
        #expect(try store.load().keys.count == 1)
    }

    @Test func aReceiverSeesAnUnknownKidAtOnceAndLetsADestroyedKeyGo() throws {
        let store = KeyringStore(folder: folder)
        try store.create(try Keyring.generate(now: 1_800_000_000))
        let source = try KeyringFileSource(store: store)
        let oldKid = try source.current().encryptionKey().kid
        weak let oldKey = try source.current().decryptionKey(for: oldKid, now: 1_800_000_000)
        let newKid = try store.update { try $0.rotate(grace: .seconds(60), now: 1_800_000_000) }
        // Well within the 100 ms recheck: only the unknown kid makes it look again.
        #expect(try source.current(knowing: newKid).entry(newKid) != nil)
        try store.update { try $0.destroy(oldKid) }
        _ = try source.current(knowing: "unknown0")
        // Nothing holds the destroyed key (nor the cipher contexts that had its schedule).
        #expect(oldKey == nil)
        #expect(try source.current().entry(oldKid)?.secret == nil)
    }

    @Test func aLockHeldTooLongGivesUpAndSaysSoOnce() throws {
        let store = KeyringStore(folder: folder)
        try store.create(try Keyring.generate(now: 0))
        let holder = open(folder + "/.keyring.lock", O_RDWR)
        #expect(flock(holder, LOCK_EX) == 0)
        defer { close(holder) }
        let told = Mutex(0)
        let waiting = KeyringStore(folder: folder, lockTimeout: .milliseconds(1_300)) { told.withLock { $0 += 1 } }
        #expect(throws: KeyringError(.lockTimeout, "")) { try waiting.update { _ in } }
        #expect(told.withLock { $0 } == 1)
    }

    @Test func symlinkedKeyringIsRefused() throws {
        let store = KeyringStore(folder: folder)
        try store.create(try Keyring.generate(now: 0))
        try FileManager.default.moveItem(atPath: store.path, toPath: folder + "/real.json")
        try FileManager.default.createSymbolicLink(atPath: store.path, withDestinationPath: folder + "/real.json")
        #expect(throws: KeyringError(.insecurePermissions, "")) { try store.load() }
    }

    @Test(arguments: [
        #"{"format":"pushseal-keyring/1","keys":[{"id":"a","secret":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","state":"primary","created":"2026-01-01T00:00:00Z","expires":null},{"id":"b","secret":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","state":"primary","created":"2026-01-01T00:00:00Z","expires":null}]}"#,
        #"{"format":"pushseal-keyring/3","keys":[]}"#,
        #"{"format":"pushseal-keyring/1","keys":[{"id":"a","secret":"AAAA","state":"primary","created":"2026-01-01T00:00:00Z"}]}"#,
        #"{"format":"pushseal-keyring/1","keys":[{"id":"a","secret":null,"state":"enabled","created":"2026-01-01T00:00:00Z"}]}"#,
        #"{"format":"pushseal-keyring/1","keys":[{"id":"a","secret":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","state":"weird","created":"2026-01-01T00:00:00Z"}]}"#,
        "[]", "{", ""
    ])
    func damagedKeyringIsRefused(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = folder + "/keyring.json"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        #expect(throws: KeyringError(.corrupt, "")) { try KeyringStore(folder: folder).load() }
    }

    @Test func updateOfMissingKeyringStatesTheFactAndMakesNothing() throws {
        #expect {
            try KeyringStore(folder: folder).update { _ in }
        } throws: { error in
            // Facts only: the library names no command; the CLI adds the hint.
            (error as? KeyringError)?.code == .keyringMissing && !"\(error)".contains("pushseal keys")
        }
        #expect(!FileManager.default.fileExists(atPath: folder))
    }
}

@Suite("keyring crash leftovers")
struct KeyringLeftoverTests {
    @Test func abandonedTemporaryFileIsRemovedByTheNextChange() throws {
        let folder = NSTemporaryDirectory() + "pushseal-store-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = KeyringStore(folder: folder)
        try store.create(try Keyring.generate(now: 0))
        let abandoned = store.path + ".tmp-999999"
        _ = FileManager.default.createFile(atPath: abandoned, contents: Data("half a keyr".utf8))
        #expect(try store.load().keys.count == 1)
        try store.update { _ = try $0.rotate(grace: .zero, now: 0) }
        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(try store.load().keys.count == 2)
    }
}

/// A key's material is one of its kind's, or none: a kind cannot carry another kind's key.
@Suite("key entries: one material per kind")
struct KeyEntryMaterialTests {
    @Test func eachKindHoldsOnlyItsOwnMaterialAndDestroyingLeavesTheKind() throws {
        let pair = try P256PrivateKey.generate()
        let secret = KeyEntry(id: "s1", secret: try SymmetricKey.generate(), state: .primary, created: 0)
        let recipient = KeyEntry(id: "r1", kind: .private, privateKey: pair, publicKey: nil, state: .enabled, created: 0)
        // A public entry given a pair keeps the point alone: a sender never holds the private key.
        let sealer = KeyEntry(id: "p1", kind: .public, privateKey: pair, publicKey: nil, state: .enabled, created: 0)
        #expect(secret.kind == .secret && secret.secret != nil && secret.privateKey == nil && secret.publicKey == nil)
        #expect(recipient.kind == .private && recipient.privateKey != nil && recipient.publicKey != nil && recipient.secret == nil)
        #expect(sealer.kind == .public && sealer.privateKey == nil && sealer.publicKey != nil)
        if case .point = sealer.material {} else { Issue.record("a public entry holds a point: \(sealer.material)") }
        var keyring = Keyring(keys: [secret, recipient, sealer, KeyEntry(id: "s2", secret: try SymmetricKey.generate(), state: .enabled, created: 0)])
        try keyring.destroy("r1")
        let destroyed = try #require(keyring.entry("r1"))
        #expect(destroyed.kind == .private && destroyed.state == .destroyed)
        #expect(destroyed.privateKey == nil && destroyed.publicKey == nil && destroyed.secret == nil)
        if case .destroyed(.private) = destroyed.material {} else { Issue.record("\(destroyed.material)") }
    }
}
