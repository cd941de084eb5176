import Foundation
import Testing

@testable import PushSealKit

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// Key stores answer found, missing or unavailable, and the opener never turns "unavailable"
/// into "no key": a phone locked since reboot keeps the sender's fallback alert.
@Suite("PushSealKit: key stores and what an unavailable one shows")
struct KeyStoreTests {
    static var fallbackAPS: [String: Any] {
        [
            "alert": ["title": "New notification", "body": "Open the app to read it"], "mutable-content": 1,
            "sound": ["critical": 1, "name": "siren.caf", "volume": 1.0], "interruption-level": "critical"
        ]
    }

    static func payload(kid: String, key: SymmetricKey, aps: [String: Any] = fallbackAPS) throws -> [AnyHashable: Any] {
        ["aps": aps, "enc": try NotificationOpenerTests.sealed(["title": "db-3 down", "body": "page now"], kid: kid, key: key)]
    }

    @Test func aStoreThatCannotAnswerIsLockedAndShowsTheFallbackAlertWithItsSound() throws {
        let key = SymmetricKey(size: .bits256)
        let store = InMemoryKeyStore(["k1": .secret(key)])
        store.setUnavailable(KeyStoreError(.locked, status: -25308, "the Keychain is locked"))
        let opened = NotificationOpener(keys: store).open(userInfo: try Self.payload(kid: "k1", key: key))
        #expect(opened.status == .locked)
        #expect(opened.changes == AlertContent(), "nothing is written over what came")
        #expect(opened.title == "New notification" && opened.body == "Open the app to read it")
        #expect(opened.content.sound == "siren.caf" && opened.content.interruptionLevel == .critical)
        #expect(opened.storeError?.kind == .locked && opened.storeError?.status == -25308)
        #expect(opened.reason?.contains("locked") == true && opened.reason?.contains("db-3") == false)
        #expect(opened.body != Placeholder.standard.keyMissing)
        // Once the store answers again, the same payload opens.
        store.setUnavailable(nil)
        #expect(NotificationOpener(keys: store).open(userInfo: try Self.payload(kid: "k1", key: key)).title == "db-3 down")
    }

    @Test func theAppChoosesWhatALockedNotificationShows() throws {
        let key = SymmetricKey(size: .bits256)
        let store = InMemoryKeyStore()
        store.setUnavailable(KeyStoreError(.misconfigured, status: -34018, "not entitled"))
        let shown = AlertContent(title: "New message", subtitle: "", body: "Unlock your iPhone to read it")
        let opened = NotificationOpener(keys: store, lockedContent: .alert(shown)).open(userInfo: try Self.payload(kid: "k1", key: key))
        #expect(opened.status == .locked && opened.title == "New message" && opened.body == "Unlock your iPhone to read it")
        #expect(opened.storeError?.kind == .misconfigured)
    }

    @Test func aLaterEnvelopeVersionIsUnsupportedNotMalformed() throws {
        let opener = NotificationOpener(keys: InMemoryKeyStore())
        let opened = opener.open(userInfo: ["aps": Self.fallbackAPS, "enc": "ps9.k1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])
        #expect(opened.status == .unsupported && opened.body == Placeholder.standard.unsupported)
        #expect(opened.reason?.contains("'ps9'") == true)
        // docs/FORMAT.md §3: only `ps<number>` names a version; any text after it does not matter.
        #expect(opener.open(userInfo: ["aps": Self.fallbackAPS, "enc": "ps9"]).status == .unsupported)
        #expect(opener.open(userInfo: ["aps": Self.fallbackAPS, "enc": "ps10.anything"]).status == .unsupported)
        #expect(opener.open(userInfo: ["aps": Self.fallbackAPS, "enc": "PS1.k1.AAAA"]).status == .malformed)
        #expect(opener.open(userInfo: ["aps": Self.fallbackAPS, "enc": "ps1-k1-AAAA"]).status == .malformed)
    }

    /// An iOS 15 or 16 device (no HPKE) opens ps1 as every other does and says `unsupported`,
    /// with its reason, for ps2, whether it holds the key or not.
    @Test func withoutHPKEps1OpensAndps2IsUnsupported() throws {
        let secret = SymmetricKey(size: .bits256)
        let privateKey = P256.KeyAgreement.PrivateKey()
        var opener = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(secret), "r1": .recipient(privateKey)]))
        opener.hpkeAvailable = false
        #expect(opener.open(userInfo: try Self.payload(kid: "k1", key: secret)).status == .decrypted)
        var sender = try HPKE.Sender(recipientKey: privateKey.publicKey, ciphersuite: .P256_SHA256_AES_GCM_256, info: Data("ps2.r1".utf8))
        let sealed = try sender.seal(Data(#"{"title":"T"}"#.utf8), authenticating: Data())
        let enc = "ps2.r1." + Base64URL.encode(sender.encapsulatedKey + sealed)
        for kid in ["r1", "unknown"] {
            let opened = opener.open(userInfo: ["aps": Self.fallbackAPS, "enc": kid == "r1" ? enc : enc.replacingOccurrences(of: "ps2.r1.", with: "ps2.unknown.")])
            #expect(opened.status == .unsupported, "\(kid)")
            #expect(opened.reason?.contains("iOS 17") == true && opened.body == Placeholder.standard.unsupported)
        }
        opener.hpkeAvailable = true
        #expect(opener.open(userInfo: ["aps": Self.fallbackAPS, "enc": enc]).title == "T")
    }

    @Test func aLocalizedFallbackRunsTheExtensionAsLiteralTextDoes() throws {
        let key = SymmetricKey(size: .bits256)
        let opener = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(key)]))
        for alert: [String: Any] in [["loc-key": "NEW_MESSAGE"], ["title-loc-key": "NEW", "loc-args": ["x"]], ["subtitle-loc-key": "S"]] {
            let opened = opener.open(userInfo: try Self.payload(kid: "k1", key: key, aps: ["alert": alert, "mutable-content": 1]))
            #expect(opened.status == .decrypted && opened.title == "db-3 down", "\(alert)")
        }
        // Without mutable-content, or with empty keys, there is still nothing for an extension.
        #expect(opener.open(userInfo: try Self.payload(kid: "k1", key: key, aps: ["alert": ["loc-key": "K"]])).status == .passthrough)
        #expect(opener.open(userInfo: try Self.payload(kid: "k1", key: key, aps: ["alert": ["loc-key": ""], "mutable-content": 1])).status == .passthrough)
        // Literal text wins over a key, whichever comes first.
        let shown = opener.open(userInfo: ["aps": ["alert": ["loc-key": "KEY", "body": "literal"], "mutable-content": 1]])
        #expect(shown.status == .passthrough && shown.body == "literal")
    }

    @Test func anAppGroupFolderKeepsReplacesListsAndRemovesKeys() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushseal-group-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = AppGroupKeyStore(folder: folder)
        #expect(try store.ids() == [])
        guard case .missing = store.lookUp(id: "k1") else {
            Issue.record("an empty folder holds no key")
            return
        }
        let first = SymmetricKey(size: .bits256)
        let second = SymmetricKey(size: .bits256)
        try store.store(.secret(first), id: "k1")
        try store.store(.recipient(P256.KeyAgreement.PrivateKey()), id: "r1")
        #expect(try store.ids() == ["k1", "r1"])
        try store.store(.secret(second), id: "k1")
        guard case .found(.secret(let held)) = store.lookUp(id: "k1") else {
            Issue.record("k1 is kept")
            return
        }
        #expect(held == second)
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("psk1.k1").path)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0, "readable by the app alone")
        // One id, one key: a recipient key stored under k1 replaces the secret.
        try store.store(.recipient(P256.KeyAgreement.PrivateKey()), id: "k1")
        guard case .found(.recipient) = store.lookUp(id: "k1") else {
            Issue.record("k1 is now a recipient key")
            return
        }
        #expect(try store.remove(id: "k1") == true)
        #expect(try store.remove(id: "k1") == false)
        guard case .missing = store.lookUp(id: "k1") else {
            Issue.record("a removed key is missing")
            return
        }
        #expect(try store.ids() == ["r1"])
        // A damaged file is a failure of the store, not a missing key.
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent("psk1.bad"))
        guard case .unavailable(let error) = store.lookUp(id: "bad") else {
            Issue.record("a damaged key file is not missing")
            return
        }
        #expect(error.kind == .failed)
    }

    /// An id no envelope can carry is refused by store and remove alike, and touches no file:
    /// `x/../../victim` once removed a file outside the store's folder.
    @Test(arguments: ["x/../../victim", "..", ".", "", "a b", String(repeating: "a", count: 65), "k1\n"])
    func anAppGroupStoreRefusesIdsNoEnvelopeCanCarry(_ id: String) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("pushseal-ids-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("group/keys")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let victim = root.appendingPathComponent("victim")
        try Data("keep me".utf8).write(to: victim)
        for prefix in ["psk1.", "prk1."] { try Data("keep me".utf8).write(to: root.appendingPathComponent("group/\(prefix)..")) }
        let store = AppGroupKeyStore(folder: folder)
        #expect(throws: KeyStoreError.self) { try store.remove(id: id) }
        #expect(throws: KeyStoreError.self) { try store.store(.secret(SymmetricKey(size: .bits256)), id: id) }
        #expect(FileManager.default.fileExists(atPath: victim.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        guard case .missing = store.lookUp(id: id) else {
            Issue.record("an id no envelope carries names no key")
            return
        }
    }

    @Test func aProtectedFileBeforeTheFirstUnlockIsLockedAndAnyOtherErrorFailed() throws {
        let folder = URL(fileURLWithPath: "/nonexistent-group")
        for (code, kind) in [(POSIXErrorCode.EPERM, KeyStoreError.Kind.locked), (.EACCES, .locked), (.EIO, .failed)] {
            let store = AppGroupKeyStore(folder: .success(folder), read: { _ in .failure(POSIXError(code)) })
            guard case .unavailable(let error) = store.lookUp(id: "k1") else {
                Issue.record("\(code) is not missing")
                continue
            }
            #expect(error.kind == kind && error.status == code.rawValue)
            let key = SymmetricKey(size: .bits256)
            #expect(NotificationOpener(keys: store).open(userInfo: try Self.payload(kid: "k1", key: key)).status == .locked)
        }
        let outside = AppGroupKeyStore(folder: .failure(KeyStoreError(.misconfigured, "not in the group")), read: AppGroupKeyStore.readFile)
        guard case .unavailable(let error) = outside.lookUp(id: "k1") else {
            Issue.record("no folder is not missing")
            return
        }
        #expect(error.kind == .misconfigured)
    }
}
