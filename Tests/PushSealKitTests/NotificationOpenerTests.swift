import Foundation
import PushSealJSON
import Testing

@testable import PushSealKit

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

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
        // docs/FORMAT.md §5: data naming aps or the field is refused whole, never merged in part.
        for name in ["aps", "enc"] {
            let refused = try Self.sealed(["title": "T", "body": "B", "data": [name: "replaced?", "order": 42]], kid: "k1", key: key)
            let aps: [String: Any] = ["alert": ["title": "fallback"], "mutable-content": 1]
            let opened = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(key)])).open(userInfo: ["aps": aps, "enc": refused])
            #expect(opened.status == .malformed && opened.data.isEmpty, "\(name)")
        }
        let enc = try Self.sealed(["title": "T", "body": "B", "data": ["order": 42]], kid: "k1", key: key)
        let userInfo: [AnyHashable: Any] = ["aps": ["alert": ["title": "fallback", "body": "fallback"], "mutable-content": 1], "enc": enc, 7: "not a string key"]
        let opened = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(key)])).open(userInfo: userInfo)
        #expect(opened.status == .decrypted && opened.title == "T" && opened.subtitle == "" && opened.body == "B")
        let merged = opened.userInfo(over: userInfo)
        #expect(merged["order"] as? Int == 42)
        #expect((merged["aps"] as? [String: Any])?["mutable-content"] as? Int == 1)
        #expect(merged["enc"] as? String == enc)
        #expect(merged[7] as? String == "not a string key")
        #expect(opened.data.keys == ["order"])
    }

    @Test func everyAlertFieldTheSealedAlertSetsReplacesTheDeliveredOneAndNoOther() throws {
        let key = SymmetricKey(size: .bits256)
        let enc = try Self.sealed(
            [
                "title": "T", "badge": 4, "sound": "chime", "thread-id": "ops", "interruption-level": "time-sensitive",
                "relevance-score": 0.25, "target-content-id": "w1"
            ], kid: "k1", key: key)
        let aps: [String: Any] = [
            "alert": ["title": "fallback", "subtitle": "fallback", "body": "fallback"], "mutable-content": 1,
            "badge": 1, "category": "ACTIONS", "sound": ["critical": 1, "name": "siren", "volume": 1.0]
        ]
        let opened = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(key)])).open(userInfo: ["aps": aps, "enc": enc])
        var changes = AlertContent(title: "T", subtitle: "", body: "")
        changes.badge = 4
        changes.sound = "chime"
        changes.threadIdentifier = "ops"
        changes.interruptionLevel = .timeSensitive
        changes.relevanceScore = 0.25
        changes.targetContentIdentifier = "w1"
        #expect(opened.changes == changes)
        var shown = changes
        shown.categoryIdentifier = "ACTIONS"
        #expect(opened.content == shown)
        // A placeholder changes the text only: the delivered badge, category and critical sound stay.
        let refused = NotificationOpener(keys: InMemoryKeyStore()).open(userInfo: ["aps": aps, "enc": enc])
        #expect(refused.status == .keyMissing && refused.changes == AlertContent(title: Placeholder.standard.title, subtitle: "", body: Placeholder.standard.keyMissing))
        #expect(refused.content.badge == 1 && refused.content.categoryIdentifier == "ACTIONS" && refused.content.sound == "siren")
    }

    @Test func aFieldOfTheWrongKindOrOutOfRangeIsMalformedAsTheSenderWouldRefuseIt() throws {
        let key = SymmetricKey(size: .bits256)
        let opener = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(key)]))
        let bad: [[String: Any]] = [
            ["title": 1], ["title": "t", "badge": -1], ["title": "t", "badge": true], ["title": "t", "badge": 1.5],
            ["title": "t", "relevance-score": 2], ["title": "t", "interruption-level": "loud"],
            ["title": "t", "data": [1]], ["title": "t", "exp": "soon"], ["title": "t", "sent": 1.5],
            ["title": "t", "sound": ["name": "x"]]
        ]
        for alert in bad {
            let enc = try Self.sealed(alert, kid: "k1", key: key)
            let opened = opener.open(userInfo: ["aps": ["alert": "fallback", "mutable-content": 1], "enc": enc])
            #expect(opened.status == .malformed && opened.title == Placeholder.standard.title, "\(alert)")
        }
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

    /// userInfo as Foundation holds it (what iOS hands the extension): booleans stay booleans,
    /// 1.0 is 1, and sealed data comes back as Int, Double, Bool, NSNull, arrays and dictionaries.
    @Test func userInfoIsReadAndWrittenAsFoundationHoldsIt() throws {
        let key = SymmetricKey(size: .bits256)
        let header = "ps1.k1"
        let alert = #"{"title":"T","data":{"n":7,"x":0.5,"big":12345678901234,"yes":true,"none":null,"list":[1,"a"],"obj":{"k":"v"}}}"#
        let box = try AES.GCM.seal(Data(alert.utf8), using: key, authenticating: Data(header.utf8))
        let enc = header + "." + Base64URL.encode(box.combined!)
        let opener = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(key)]))
        let parsed = try JSONSerialization.jsonObject(with: Data((#"{"aps":{"alert":"f","mutable-content":1.0},"enc":""# + enc + #""}"#).utf8))
        let opened = opener.open(userInfo: parsed as! [AnyHashable: Any])
        #expect(opened.status == .decrypted)
        let merged = opened.userInfo(over: parsed as! [AnyHashable: Any])
        #expect(merged["n"] as? Int == 7 && merged["x"] as? Double == 0.5 && merged["big"] as? Int == 12_345_678_901_234)
        #expect(merged["yes"] as? Bool == true && merged["none"] is NSNull)
        #expect((merged["list"] as? [Any])?.count == 2 && (merged["obj"] as? [String: Any])?["k"] as? String == "v")
        // A boolean is not the number 1: mutable-content true does not make a notification eligible.
        let boolean = try JSONSerialization.jsonObject(with: Data((#"{"aps":{"alert":"f","mutable-content":true},"enc":""# + enc + #""}"#).utf8))
        #expect(opener.open(userInfo: boolean as! [AnyHashable: Any]).status == .passthrough)
        #expect(
            UserInfo.json(["b": true, "one": 1, "onePointZero": 1.0, "half": 0.5, "s": "x", "n": NSNull()])
                == JSONObject([
                    ("b", .bool(true)), ("half", .number("0.5")), ("n", .null), ("one", .integer(1)),
                    ("onePointZero", .integer(1)), ("s", .string("x"))
                ]))
    }

    @Test func eachReasonHasItsOwnPlaceholderBody() throws {
        let key = SymmetricKey(size: .bits256)
        let enc = try Self.sealed(["title": "T", "exp": 1_000], kid: "k1", key: key)
        let payload: [AnyHashable: Any] = ["aps": ["alert": "fallback", "mutable-content": 1], "enc": enc]
        let words = Placeholder(title: "Locked", keyMissing: "no key", unreadable: "altered", expired: "too late", deadline: "slow")
        let opener = NotificationOpener(keys: InMemoryKeyStore(["k1": .secret(key)]), placeholder: words)
        #expect(opener.open(userInfo: payload).body == "too late")
        #expect(NotificationOpener(keys: InMemoryKeyStore(), placeholder: words).open(userInfo: payload).body == "no key")
        #expect(opener.open(userInfo: ["aps": ["alert": "f", "mutable-content": 1], "enc": "ps1.k1.!"]).body == "altered")
        #expect(opener.placeholderChanges(for: nil) == AlertContent(title: "Locked", subtitle: "", body: "slow"))
        #expect(
            Placeholder(title: "t", body: "b")
                == Placeholder(
                    title: "t", keyMissing: "b", unreadable: "b", expired: "b", deadline: "b", unsupported: "b", untrustedSender: "b", duplicate: "b"))
    }
}
