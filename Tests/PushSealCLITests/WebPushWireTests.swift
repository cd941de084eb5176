import Foundation
import Locking
import PushSeal
import PushSealJSON
import PushSealSend
import SealCrypto
import Testing

/// Web Push over the wire: `Sender` with the Web Push provider and the HTTP/2 transport
/// against a Python push service (Reference/webpush_standin.py: `h2` over TLS, VAPID checked
/// with `cryptography`, every message opened with `http_ece`).
@Suite("Web Push: the provider against a Python push service")
struct WebPushWireTests {
    static let script = Bundle.module.url(forResource: "webpush_standin", withExtension: "py", subdirectory: "Reference")!.path

    struct Browser {
        let path: String
        let key: P256PrivateKey
        let auth: [UInt8]

        init(_ name: String) throws {
            path = "/push/" + name
            key = try P256PrivateKey.generate()
            auth = try SecureRandom.bytes(count: 16)
        }

        func subscription(at origin: String) throws -> WebPushSubscription {
            try WebPushSubscription(
                endpoint: origin + path, p256dh: Base64.encode(key.publicKey.x963Representation, alphabet: .url),
                auth: Base64.encode(auth, alphabet: .url))
        }

        var scriptEntry: String {
            let scalar = (try? key.withScalar { Base64.encode($0.withUnsafeBytes { Array($0) }, alphabet: .url) }) ?? ""
            return #""\#(path)": {"key": "\#(scalar)", "auth": "\#(Base64.encode(auth, alphabet: .url))"}"#
        }
    }

    @Test func eachSubscriptionGetsItsResultAndTheServiceOpensEveryMessage() throws {
        let browsers = try ["fine", "gone", "busy"].map(Browser.init)
        let folder = TemporaryFolder()
        let process = try RunningProcess(
            [
                "python3", Self.script, folder.path,
                #"{"subject": "mailto:ops@pushseal.dev", "subscriptions": {\#(browsers.map(\.scriptEntry).joined(separator: ", "))}, "answers": {"/push/gone": [[410]], "/push/busy": [[429, 1], [201]]}}"#
            ], executable: "/usr/bin/env")
        defer {
            process.closeInput()
            _ = process.wait(atMost: .seconds(5))
        }
        guard eventually(within: .seconds(20), { process.stdoutSoFar.contains("listening ") }) else {
            Issue.record("the stand-in did not start: \(process.wait(atMost: .seconds(1)).stderr)")
            return
        }
        let port = process.stdoutSoFar.split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)
        let origin = "https://127.0.0.1:\(port)"

        let key = try SymmetricKey.generate()
        let provider = WebPushProvider(
            settings: .init(timeToLive: 600, urgency: "normal"), wrapping: try WebPushPayload(),
            vapid: try VAPIDCredentials(key: try ES256Key.generate(), subject: "mailto:ops@pushseal.dev"))
        let alert = Array(#"{"title":"Deploy done","body":"main is live"}"#.utf8)
        let payload = try provider.wrapping.payload(sealing: alert, with: EnvelopeSealer(key: .secret(kid: "c0ffee01", key: key)))
        let results = Locked<[SendResult<WebPushSubscription>]>([])
        let sender = try Sender(
            settings: .init(), provider: provider,
            connection: try SendConnection(
                endpoint: SendEndpoint(checking: origin), proxy: "", trustFile: folder.file("cert.pem"), connections: 1, streams: 100,
                timeout: .seconds(10)),
            emit: { result in results.withLock { $0.append(result) } })
        for browser in browsers { try sender.add(try browser.subscription(at: origin), payload: payload) }
        sender.finish()

        let got = results.withLock { $0 }
        #expect(got.map(\.target.path) == browsers.map(\.path), "in the order given")
        #expect(got.map(\.outcome) == [.ok, .refused, .ok])
        #expect(got.map(\.status) == [201, 410, 201])
        #expect(got[0].notificationID.hasPrefix(origin + "/message/"), "the service's location names the message")
        #expect(got[1].reason?.contains("the subscription is gone (410)") == true)
        #expect(got[2].attempts == 2 && got[2].elapsed >= .seconds(1), "429 is retried, no sooner than its retry-after")
        // The service's side: VAPID and TTL as sent, and every message opened by http_ece is
        // the web form, whose envelope opens with the key.
        let log = ((try? String(contentsOfFile: folder.file("log.jsonl"), encoding: .utf8)) ?? "").split(separator: "\n").map { jsonObject(String($0)) }
        #expect(log.count == 4)
        for entry in log {
            #expect(entry["problem"] is NSNull, "\(entry)")
            #expect(entry["ttl"] as? String == "600" && entry["urgency"] as? String == "normal")
            let message = try #require(entry["message"] as? String)
            let envelope = try #require(try JSONParser.parse(Array(message.utf8)).objectValue?["enc"]?.stringValue)
            #expect(try SealedEnvelope(parsing: envelope).open(with: key) == alert)
        }
        #expect(Set(log.compactMap { $0["connection"] as? Int }) == [1], "one connection for the service's origin")
    }
}
