import Foundation
import Testing
#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
@testable import PushSealKit

/// The opener's rules on payloads made here with the library itself.
@Suite("PushSealKit: the opener's rules")
struct NotificationOpenerTests {
    static func sealed(_ alert: [String: Any], kid: String, key: SymmetricKey) throws -> String {
        let header = "ps1.\(kid)"
        let box = try AES.GCM.seal(try JSONSerialization.data(withJSONObject: alert), using: key, authenticating: Data(header.utf8))
        return header + "." + Base64URL.encode(box.combined!)
    }

    @Test func sealedDataJoinsUserInfoButNeverReplacesApsOrTheField() throws {
        let key = SymmetricKey(size: .bits256)
        let enc = try Self.sealed(["title": "T", "body": "B", "data": ["aps": "replaced?", "enc": "replaced?", "order": 42]], kid: "k1", key: key)
        let userInfo: [AnyHashable: Any] = ["aps": ["alert": ["title": "fallback", "body": "fallback"], "mutable-content": 1], "enc": enc, 7: "not a string key"]
        let opened = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(key)])).open(userInfo: userInfo)
        #expect(opened.status == .decrypted && opened.title == "T" && opened.subtitle == "" && opened.body == "B")
        #expect(opened.userInfo["order"] as? Int == 42)
        #expect((opened.userInfo["aps"] as? [String: Any])?["mutable-content"] as? Int == 1)
        #expect(opened.userInfo["enc"] as? String == enc)
    }

    @Test func theClockPassedInDecidesExpiryAndThePlaceholderIsTheAppsOwn() throws {
        let key = SymmetricKey(size: .bits256)
        let enc = try Self.sealed(["title": "T", "body": "B", "exp": 1_800_000_100], kid: "k1", key: key)
        let payload: [AnyHashable: Any] = ["aps": ["alert": ["body": "fallback"], "mutable-content": 1], "enc": enc]
        let opener = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(key)]), placeholder: Placeholder(title: "Locked", body: "Open the app"))
        #expect(opener.open(userInfo: payload, now: Date(timeIntervalSince1970: 1_800_000_099)).status == .decrypted)
        let late = opener.open(userInfo: payload, now: Date(timeIntervalSince1970: 1_800_000_100))
        #expect(late.status == .expired && late.title == "Locked" && late.body == "Open the app")
    }

    @Test func notEligibleOrNotSealedIsShownAsItCame() {
        let opener = NotificationOpener(keys: InMemoryKeyStore())
        let plain = opener.open(userInfo: ["aps": ["alert": "just text", "mutable-content": 1]])
        #expect(plain.status == .passthrough && plain.body == "just text")
        let notMutable = opener.open(userInfo: ["aps": ["alert": ["title": "t"]], "enc": "ps1.k1.AAAA"])
        #expect(notMutable.status == .passthrough && notMutable.title == "t")
        #expect(opener.open(json: Data("[1]".utf8)).status == .malformed)
    }
}
