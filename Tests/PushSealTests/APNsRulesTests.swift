import Locking
import SealCrypto
import Testing

@testable import PushSeal

@Suite("APNs rules: the listener's checks and their order")
struct APNsRulesTests {
    let rules = APNsRules(
        devices: [], unregistered: [String(repeating: "ef", count: 32)], topics: ["com.example.app"],
        tokens: ProviderTokens(keys: [:], team: nil, clock: { 1_800_000_000 }), unregisteredSince: 1_700_000_000_000)
    let path = "/3/device/" + String(repeating: "ab", count: 32)

    private func token(issuedAt: Int64 = 1_800_000_000) -> String {
        func part(_ json: String) -> String { Base64.encode(Array(json.utf8)) }
        return "bearer " + part(#"{"alg":"ES256","kid":"K"}"#) + "." + part(#"{"iss":"T","iat":\#(issuedAt)}"#) + ".c2ln"
    }

    private func answer(method: String = "POST", path: String? = nil, _ headers: [(String, String)], body: Int = 10) -> String {
        switch rules.judge(method: method, path: path ?? self.path, headers: headers.map { (name: $0.0, value: $0.1) }, bodyLength: body) {
        case .accepted: "accepted"
        case .rejected(let rejection, _, _): rejection.reason
        }
    }

    @Test func theFirstFailingCheckIsTheAnswer() {
        // Everything wrong at once: the apns-id is checked first.
        #expect(answer(method: "GET", path: "/nope", [("apns-id", "x"), ("apns-priority", "3")], body: 0) == "BadMessageId")
        #expect(answer(method: "GET", path: "/nope", [("apns-priority", "3")], body: 0) == "MethodNotAllowed")
        #expect(answer(path: "/nope", [("apns-priority", "3")], body: 0) == "MissingTopic")
        #expect(answer(path: "/nope", [("apns-topic", "com.example.app"), ("apns-priority", "3")], body: 0) == "BadPriority")
        #expect(answer(path: "/nope", [("apns-topic", "com.example.app")], body: 0) == "BadPath")
        #expect(answer([("apns-topic", "com.example.app")], body: 0) == "MissingProviderToken")
        #expect(answer([("apns-topic", "com.example.app"), ("authorization", token())], body: 0) == "PayloadEmpty")
        #expect(answer([("apns-topic", "com.example.app"), ("authorization", token())]) == "accepted")
    }

    @Test func tokensAreCheckedForShapeAndAgeWithoutKeys() {
        let topic = ("apns-topic", "com.example.app")
        #expect(answer([topic, ("authorization", token(issuedAt: 1_800_000_000 - 3_600))]) == "accepted")
        #expect(answer([topic, ("authorization", token(issuedAt: 1_800_000_000 - 3_601))]) == "ExpiredProviderToken")
        #expect(answer([topic, ("authorization", token(issuedAt: 1_800_000_000 + 3_600))]) == "InvalidProviderToken")
        #expect(answer([topic, ("authorization", "basic abc")]) == "InvalidProviderToken")
        #expect(answer([topic, ("authorization", "bearer a.b")]) == "InvalidProviderToken")
    }

    /// A token that passed is remembered by the header that carried it; a repeat, the same
    /// token under another spelling of the scheme, and a token between others all still
    /// expire with the clock, and one that failed is never remembered as good.
    @Test func rememberedTokensStillExpire() {
        let now = Locked<Int64>(1_800_000_000)
        let tokens = ProviderTokens(keys: [:], team: nil, clock: { now.withLock { $0 } })
        let first = token(issuedAt: 1_799_999_000)
        let second = token(issuedAt: 1_800_000_000)
        let shouted = "BEARER" + first.dropFirst("bearer".count)
        #expect(tokens.check(authorization: first) == nil)
        #expect(tokens.check(authorization: second) == nil)
        #expect(tokens.check(authorization: shouted) == nil)
        #expect(tokens.check(authorization: first) == nil)
        #expect(tokens.check(authorization: "bearer a.b") == .invalidProviderToken)
        #expect(tokens.check(authorization: "bearer a.b") == .invalidProviderToken)
        now.withLock { $0 += 2_601 }
        #expect(tokens.check(authorization: first) == .expiredProviderToken)
        #expect(tokens.check(authorization: shouted) == .expiredProviderToken)
        #expect(tokens.check(authorization: second) == nil)
        now.withLock { $0 += 1_000 }
        #expect(tokens.check(authorization: second) == .expiredProviderToken)
        #expect(tokens.check(authorization: first) == .expiredProviderToken)
    }

    /// The token is what lies between `/3/device/` and a query; other paths have none.
    @Test(
        arguments: [
            ("/3/device", ""), ("/3/device?x=1", ""), ("/3/device/abc", "abc"), ("/3/device/abc?q=1", "abc"),
            ("/3/device/", ""), ("/3/device/é", "é"), ("/3/devices/abc", nil), ("/3/device/a/b", nil),
            ("/2/device/abc", nil), ("/3/dev", nil), ("", nil)
        ] as [(String, String?)])
    func theDeviceTokenIsReadFromThePath(path: String, token: String?) {
        #expect(APNsRules.deviceToken(in: path) == token)
    }

    @Test func identifiersAndPathsAreReadAsAPNsReadsThem() {
        let topic = ("apns-topic", "com.example.app")
        let auth = ("authorization", token())
        #expect(answer([topic, auth, ("apns-id", "123e4567-e89b-12d3-a456-426614174000")]) == "accepted")
        #expect(answer([topic, auth, ("apns-id", "123e4567e89b12d3a456426614174000")]) == "BadMessageId")
        #expect(answer(path: "/3/device", [topic, auth]) == "MissingDeviceToken")
        #expect(answer(path: "/3/device/" + String(repeating: "AB", count: 32), [topic, auth]) == "accepted")
        #expect(answer(path: "/3/device/" + String(repeating: "ab", count: 31) + "a", [topic, auth]) == "BadDeviceToken")
        #expect(answer(path: "/3/device/" + String(repeating: "ef", count: 32), [topic, auth]) == "Unregistered")
        #expect(answer([topic, auth, ("apns-expiration", "-1")]) == "BadExpirationDate")
        #expect(answer([topic, auth, ("apns-collapse-id", String(repeating: "x", count: 64))]) == "accepted")
        #expect(answer([topic, auth], body: 4_097) == "PayloadTooLarge")
        #expect(answer([topic, auth, ("apns-push-type", "voip")], body: 5_120) == "accepted")
        #expect(String(decoding: rules.body(for: .unregistered), as: UTF8.self) == #"{"reason":"Unregistered","timestamp":1700000000000}"#)
        #expect(String(decoding: rules.body(for: .badPath), as: UTF8.self) == #"{"reason":"BadPath"}"#)
    }

    @Test func everyReasonHasItsDocumentedStatus() {
        let statuses = Dictionary(uniqueKeysWithValues: APNsRejection.table.map { ($0.reason, $0.status) })
        #expect(statuses.count == APNsRejection.table.count)
        #expect(statuses["MethodNotAllowed"] == 405)
        #expect(statuses["BadPath"] == 404)
        #expect(statuses["Unregistered"] == 410)
        #expect(statuses["PayloadTooLarge"] == 413)
        for reason in ["MissingProviderToken", "InvalidProviderToken", "ExpiredProviderToken"] { #expect(statuses[reason] == 403) }
        #expect(statuses.filter { $0.value == 400 }.count == 11)
    }

    @Test func theOneModelHasApplesReasonsStatusesAndLimits() {
        // Apple's table in "Handling notification responses from APNs", by status.
        let documented: [Int: Set<String>] = [
            400: [
                "BadCollapseId", "BadDeviceToken", "BadExpirationDate", "BadMessageId", "BadPriority", "BadTopic",
                "DeviceTokenNotForTopic", "DuplicateHeaders", "IdleTimeout", "InvalidPushType", "MissingDeviceToken",
                "MissingTopic", "PayloadEmpty", "TopicDisallowed"
            ],
            403: [
                "BadCertificate", "BadCertificateEnvironment", "ExpiredProviderToken", "Forbidden", "InvalidProviderToken",
                "MissingProviderToken", "UnrelatedKeyIdInToken", "BadEnvironmentKeyInToken"
            ],
            404: ["BadPath"], 405: ["MethodNotAllowed"], 410: ["ExpiredToken", "Unregistered"], 413: ["PayloadTooLarge"],
            429: ["TooManyProviderTokenUpdates", "TooManyRequests"], 500: ["InternalServerError"],
            503: ["ServiceUnavailable", "Shutdown"]
        ]
        let apple = APNs.Reason.allCases.filter { $0 != .headerListTooLarge }
        #expect(Dictionary(grouping: apple, by: \.status).mapValues { Set($0.map(\.rawValue)) } == documented)
        #expect(APNs.Reason(rawValue: "ExpiredProviderToken") == .expiredProviderToken)
        #expect(APNs.PushType.voip.payloadByteLimit == 5_120 && APNs.PushType.alert.payloadByteLimit == 4_096)
        #expect(APNs.Priority.allCases.map(\.rawValue) == ["10", "5", "1"])
        #expect(APNs.temporaryStatuses == [429, 500, 502, 503, 504])
    }
}
