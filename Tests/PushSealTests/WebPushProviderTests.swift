import Foundation
import Locking
import PushSeal
import PushSealJSON
import PushSealSend
import SealCrypto
import TestRandom
import Testing

/// Web Push's provider through the same `Sender` as APNs', against an in-process push
/// service: each post is opened by `http_ece` (an independent implementation of RFC 8291)
/// with the subscription's private key, its VAPID token checked by Python's `cryptography`,
/// and the envelope inside opened with the keyring's key.
@Suite("Web Push: subscriptions, VAPID and the provider")
struct WebPushProviderTests {
    /// A browser's side: its key pair, auth secret and the subscription JSON it gives.
    struct Browser {
        let key: P256PrivateKey
        let auth: [UInt8]
        let subscription: WebPushSubscription

        init(endpoint: String) throws {
            key = try P256PrivateKey.generate()
            auth = try SecureRandom.bytes(count: 16)
            let json =
                #"{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(Base64.encode(key.publicKey.x963Representation, alphabet: .url))","auth":"\#(Base64.encode(auth, alphabet: .url))"}}"#
            subscription = try WebPushSubscription(json: Array(json.utf8))
        }

        var scalar: String { (try? key.withScalar { Base64.encode($0.withUnsafeBytes { Array($0) }, alphabet: .url) }) ?? "" }
    }

    @Test func aSubscriptionIsReadAsABrowserGivesIt() throws {
        let browser = try Browser(endpoint: "https://push.example.net:8443/wpush/v2/abc?x=1")
        #expect(browser.subscription.origin == "https://push.example.net:8443")
        #expect(browser.subscription.path == "/wpush/v2/abc?x=1")
        #expect(browser.subscription.auth == browser.auth)
    }

    @Test(arguments: [
        (#"[]"#, "JSON object"),
        (#"{"keys":{}}"#, "no \"endpoint\""),
        (#"{"endpoint":"https://push.example.net/x"}"#, "applicationServerKey"),
        (#"{"endpoint":"http://push.example.net/x","keys":{"p256dh":"BA","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}"#, "not https"),
        (#"{"endpoint":"https://push.example.net/x","keys":{"p256dh":"BAAA","auth":"AAAA"}}"#, "auth secret is 3 bytes"),
        (#"{"endpoint":"https://push.example.net/x","keys":{"p256dh":"BAAA","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}"#, "not a P-256 public key")
    ])
    func aSubscriptionThatCannotBeUsedIsRefusedSayingWhy(json: String, words: String) {
        #expect {
            _ = try WebPushSubscription(json: Array(json.utf8))
        } throws: { error in
            "\(error)".contains(words)
        }
    }

    @Test(arguments: [
        ("mailto:ops@pushseal.dev", true), ("https://pushseal.dev/contact", true),
        ("", false), ("ops@pushseal.dev", false), ("mailto:x@localhost", false), ("mailto:me@example.com", false),
        ("mailto:@pushseal.dev", false), ("https://localhost", false), ("https://push.test/", false)
    ])
    func theVAPIDSubjectIsCheckedBeforeSending(subject: String, accepted: Bool) {
        #expect(((try? VAPIDCredentials.checkSubject(subject)) != nil) == accepted)
    }

    @Test func aVAPIDTokenIsMadeOncePerOriginAndAgainNearItsEnd() throws {
        let now = Locked<Int64>(1_800_000_000)
        let vapid = try VAPIDCredentials(key: try ES256Key.generate(), subject: "mailto:ops@pushseal.dev", clock: { now.withLock { $0 } })
        let first = try vapid.authorization(for: "https://push.one.example")
        #expect(try vapid.authorization(for: "https://push.one.example") == first)
        #expect(try vapid.authorization(for: "https://push.two.example") != first)
        now.withLock { $0 += VAPIDCredentials.lifetime - VAPIDCredentials.renewWithin + 1 }
        #expect(try vapid.authorization(for: "https://push.one.example") != first)
    }

    @Test func messagesGoThroughSenderAndOpenWithHttpEceAndTheKeyring() throws {
        let key = try SymmetricKey.generate()
        let sealer = EnvelopeSealer(key: .secret(kid: "c0ffee01", key: key))
        let signing = try ES256Key.generate()
        let provider = WebPushProvider(
            settings: .init(timeToLive: 3_600, urgency: "high", topic: "deploys"), wrapping: try WebPushPayload(),
            vapid: try VAPIDCredentials(key: signing, subject: "mailto:ops@pushseal.dev"))
        let alert = Array(#"{"title":"Deploy done","body":"main is live"}"#.utf8)
        let payload = try provider.wrapping.payload(sealing: alert, with: sealer)
        let browsers = [
            try Browser(endpoint: "https://web.push.one.example/s/1"), try Browser(endpoint: "https://push.two.example/wpush/2"),
            try Browser(endpoint: "https://web.push.one.example/s/gone")
        ]
        let (got, sent) = try sendThroughFakeService(provider, to: browsers.map(\.subscription), payload: payload, answers: ["/s/gone": 410])

        #expect(got.map(\.target) == browsers.map(\.subscription))
        #expect(got.map(\.outcome) == [.ok, .ok, .refused])
        #expect(got[2].status == 410 && got[2].reason?.contains("subscription is gone") == true)
        #expect(sent.map(\.origin) == ["https://web.push.one.example", "https://push.two.example", "https://web.push.one.example"])
        for (request, browser) in zip(sent, browsers) {
            let header = { (name: String) in request.headers.first { $0.name == name }?.value }
            #expect(header("ttl") == "3600" && header("urgency") == "high" && header("topic") == "deploys")
            #expect(header("content-encoding") == "aes128gcm")
            let authorization = try #require(header("authorization"))
            // The push service's view: the token verifies with k, for this origin, from this subject.
            let checked = try python(
                """
                import base64, json, sys, time, http_ece
                from cryptography.hazmat.primitives import hashes
                from cryptography.hazmat.primitives.asymmetric import ec, utils
                b = lambda s: base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
                token, k = sys.argv[1].removeprefix("vapid t=").split(", k=")
                head, claims, signature = token.split(".")
                public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b(k))
                sig = b(signature)
                public.verify(utils.encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big")), (head + "." + claims).encode(), ec.ECDSA(hashes.SHA256()))
                c = json.loads(b(claims))
                assert json.loads(b(head)) == {"typ": "JWT", "alg": "ES256"}
                assert 0 < c["exp"] - time.time() <= 24 * 3600, c
                key = ec.derive_private_key(int.from_bytes(b(sys.argv[2]), "big"), ec.SECP256R1())
                body = open(sys.argv[4], "rb").read()
                print(c["aud"], c["sub"], http_ece.decrypt(body, private_key=key, auth_secret=b(sys.argv[3]), version="aes128gcm").decode())
                """, [authorization, browser.scalar, Base64.encode(browser.auth, alphabet: .url), try Self.file(request.body)])
            let parts = checked.split(separator: " ", maxSplits: 2).map(String.init)
            #expect(parts.count == 3 && parts[0] == browser.subscription.origin && parts[1] == "mailto:ops@pushseal.dev")
            // The message inside is the web form: the envelope alone, which opens with the key.
            let envelope = try #require(try JSONParser.parse(Array(parts[2].utf8)).objectValue?["enc"]?.stringValue)
            #expect(try SealedEnvelope(parsing: envelope).open(with: key) == alert)
        }
    }

    @Test func aMessageTooLargeForOnePushIsRefusedBeforeSealing() throws {
        let sealer = EnvelopeSealer(key: .secret(kid: "c0ffee01", key: try SymmetricKey.generate()))
        #expect {
            try WebPushPayload().payload(sealing: Array(repeating: 0x61, count: 3_000), with: sealer)
        } throws: { "\($0)".contains("over the 3993 bytes") }
    }

    static func file(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "webpush-" + UUID().uuidString
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}
