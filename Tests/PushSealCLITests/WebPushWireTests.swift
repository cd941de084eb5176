import Foundation
import Locking
import PushSeal
import PushSealJSON
import PushSealSend
import SealCrypto
import TestRandom
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

        /// The line a page gives for this browser (`PushSubscription.toJSON()`), with `extra`
        /// members after its keys (a pairing string's share).
        func line(at origin: String, extra: String = "") throws -> String {
            let subscription = try subscription(at: origin)
            return
                #"{"endpoint":"\#(subscription.endpoint)","expirationTime":null,"keys":{"p256dh":"\#(Base64.encode(subscription.key.x963Representation, alphabet: .url))","auth":"\#(Base64.encode(subscription.auth, alphabet: .url))"}\#(extra)}"#
        }

        var scriptEntry: String {
            let scalar = (try? key.withScalar { Base64.encode($0.withUnsafeBytes { Array($0) }, alphabet: .url) }) ?? ""
            return #""\#(path)": {"key": "\#(scalar)", "auth": "\#(Base64.encode(auth, alphabet: .url))"}"#
        }
    }

    /// The Python push service for one test, knowing `browsers`' keys, answering as `answers` says.
    final class StandIn {
        let process: RunningProcess
        let folder = TemporaryFolder()
        let origin: String
        var certificate: String { folder.file("cert.pem") }

        init(_ browsers: [Browser], answers: String) throws {
            process = try RunningProcess(
                [
                    "python3", WebPushWireTests.script, folder.path,
                    #"{"subject": "mailto:ops@pushseal.dev", "subscriptions": {\#(browsers.map(\.scriptEntry).joined(separator: ", "))}, "answers": \#(answers)}"#
                ], executable: "/usr/bin/env")
            let running = process
            guard eventually(within: .seconds(20), { running.stdoutSoFar.contains("listening ") }) else {
                throw Listener.ListenerDidNotStart(stderr: running.wait(atMost: .seconds(1)).stderr)
            }
            origin = "https://127.0.0.1:" + running.stdoutSoFar.split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Each request it took, in order.
        var log: [[String: Any]] {
            ((try? String(contentsOfFile: folder.file("log.jsonl"), encoding: .utf8)) ?? "").split(separator: "\n").map { jsonObject(String($0)) }
        }

        deinit {
            process.closeInput()
            _ = process.wait(atMost: .seconds(5))
        }
    }

    @Test func eachSubscriptionGetsItsResultAndTheServiceOpensEveryMessage() throws {
        let browsers = try ["fine", "gone", "busy"].map(Browser.init)
        let standIn = try StandIn(browsers, answers: #"{"/push/gone": [[410]], "/push/busy": [[429, 1], [201]]}"#)
        let (origin, folder) = (standIn.origin, standIn.folder)
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
        let log = standIn.log
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

    /// `pushseal send --webpush` as a user runs it: a keyring, its VAPID key, a file of the
    /// subscriptions pages gave (one bad line among them).
    @Test func sendWebpushDeliversToEverySubscriptionInTheFile() throws {
        let browsers = try ["fine", "gone", "busy"].map(Browser.init)
        let standIn = try StandIn(browsers, answers: #"{"/push/gone": [[410]], "/push/busy": [[429, 1]]}"#)
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let lines = try browsers.map { try $0.line(at: standIn.origin) }
        let file = keyring.folder.file("subscriptions.jsonl")
        try (lines[0] + "\n# a comment\n" + lines[1] + "\n{\"endpoint\":\"https://push.example.net/x\"}\n" + lines[2] + "\n").write(
            toFile: file, atomically: true, encoding: .utf8)
        let run = try pushseal([
            "send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--cacert", standIn.certificate, "--keys", keyring.keys,
            "--json", "--priority", "5", "--collapse-id", "deploys", "--ttl", "10m", "-t", "Deploy", "-b", "main is live"
        ])
        #expect(run.status == 65, "a bad line is bad input: \(run.stderr)")
        #expect(run.stderr.contains("subscriptions.jsonl line 4: the subscription has no \"keys\""), "\(run.stderr)")
        #expect(run.stderr.hasSuffix("1 of 5 lines were not sent\n"), "\(run.stderr)")
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(results.map { $0["subscription"] as? String } == browsers.map { standIn.origin + $0.path })
        #expect(results.map { $0["status"] as? String } == ["ok", "refused", "ok"])
        #expect(results.map { $0["http-status"] as? Int } == [201, 410, 201])
        #expect(results[2]["attempts"] as? Int == 2)
        let log = standIn.log
        #expect(log.count == 4 && log.allSatisfy { $0["problem"] is NSNull }, "\(log)")
        #expect(log.allSatisfy { $0["ttl"] as? String == "600" && $0["urgency"] as? String == "normal" && $0["topic"] as? String == "deploys" })
        // What the browser gets is the web form; its envelope opens with the keyring.
        let message = jsonObject(try #require(log[0]["message"] as? String))
        let opened = jsonObject(try keyring.decrypt(payload: try #require(message["enc"] as? String)).stdout)
        #expect(opened["title"] as? String == "Deploy" && opened["body"] as? String == "main is live")
    }

    /// A push service that fails for now: a 500, a stream it never answers, a stream it resets,
    /// a GOAWAY after the first request. Each subscription still gets one result line, in the
    /// file's order, and every message the service took opens.
    @Test func failuresForNowAreRetriedAndEachSubscriptionGetsOneLine() throws {
        let browsers = try ["first", "error", "stalled", "reset", "last"].map(Browser.init)
        let standIn = try StandIn(
            browsers, answers: #"{"/push/error": [[500]], "/push/stalled": [["stall"]], "/push/reset": [["reset"]]}, "goaway_after": 1"#)
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let file = keyring.folder.file("subscriptions.jsonl")
        try browsers.map { try $0.line(at: standIn.origin) }.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let run = try pushseal([
            "send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--cacert", standIn.certificate, "--keys", keyring.keys,
            "--json", "--timeout", "2s", "-t", "Deploy", "-b", "main is live"
        ])
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(results.map { $0["subscription"] as? String } == browsers.map { standIn.origin + $0.path })
        #expect(results.allSatisfy { $0["status"] as? String == "ok" && $0["http-status"] as? Int == 201 }, "\(run.stdout)")
        // The 500, the stall (after --timeout) and the reset cost a second attempt; what the
        // GOAWAY left untaken is sent again on a new connection as a first attempt.
        #expect(results.map { $0["attempts"] as? Int } == [1, 2, 2, 2, 1], "\(run.stdout)")
        let log = standIn.log
        #expect(log.allSatisfy { $0["problem"] is NSNull && ($0["message"] as? String)?.hasPrefix(#"{"enc":"ps1."#) == true }, "\(log)")
        #expect(Set(log.compactMap { $0["connection"] as? Int }) == [1, 2], "the GOAWAY's connection was replaced")
    }

    /// A push service that speaks HTTP/1.1 only (no h2 in ALPN), as some do behind their load
    /// balancers: the same results over keep-alive connections, answers with a Content-Length
    /// or chunked, and a service that closes after every few answers.
    @Test(arguments: [#""http1": true"#, #""http1": true, "chunked": true, "close_every": 2"#])
    func aServiceThatSpeaksOnlyHTTP1GetsTheSameResults(mode: String) throws {
        let browsers = try ["first", "gone", "busy", "error", "last"].map(Browser.init)
        let standIn = try StandIn(browsers, answers: #"{"/push/gone": [[410]], "/push/busy": [[429, 1]], "/push/error": [[500]]}, \#(mode)"#)
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let file = keyring.folder.file("subscriptions.jsonl")
        try browsers.map { try $0.line(at: standIn.origin) }.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let run = try pushseal([
            "send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--cacert", standIn.certificate, "--keys", keyring.keys,
            "--json", "-t", "Deploy", "-b", "main is live"
        ])
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(run.status == 69, "410 is a refusal for good: \(run.stderr)")
        #expect(results.map { $0["subscription"] as? String } == browsers.map { standIn.origin + $0.path })
        #expect(results.map { $0["http-status"] as? Int } == [201, 410, 201, 201, 201], "\(run.stdout)")
        #expect(results.map { $0["attempts"] as? Int } == [1, 1, 2, 2, 1], "\(run.stdout)")
        #expect((results[1]["reason"] as? String)?.isEmpty == false, "the refusal keeps the service's words: \(results[1])")
        let log = standIn.log
        #expect(log.count == 7 && log.allSatisfy { $0["problem"] is NSNull }, "\(log)")
        // Keep-alive: a connection carried more than one request.
        let perConnection = Dictionary(grouping: log.compactMap { $0["connection"] as? Int }, by: { $0 }).values.map(\.count)
        #expect(perConnection.contains { $0 >= 2 }, "\(log.map { $0["connection"] ?? "" })")
        let message = jsonObject(try #require(log[0]["message"] as? String))
        let opened = jsonObject(try keyring.decrypt(payload: try #require(message["enc"] as? String)).stdout)
        #expect(opened["title"] as? String == "Deploy")
    }

    /// `--batch`: each line its own subscription (or pairing string) and its own alert, sealed
    /// on its own; a line without a subscription is said with its number and skipped.
    @Test func batchLinesCarryTheirOwnSubscriptionAndAlert() throws {
        let browsers = try ["page", "plain"].map(Browser.init)
        let standIn = try StandIn(browsers, answers: "{}")
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let page = keyring.folder.file("Page")
        #expect(try pushseal(["keys", "init", "--recipient", "--keys", page]).status == 0)
        let share = try pushseal(["keys", "export", "--public", "--keys", page]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let subscriptions = try browsers.map { String(try $0.line(at: standIn.origin).dropLast()) }
        let file = keyring.folder.file("batch.jsonl")
        try [
            #"{"subscription":\#(subscriptions[0]),"pushseal":"\#(share)"},"title":"For the page","body":"only it opens this"}"#,
            #"{"title":"No one to send to"}"#,
            #"{"subscription":\#(subscriptions[1])},"title":"Shared","body":"sealed with the keyring's key","level":"passive"}"#
        ].joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let run = try pushseal([
            "send", "--webpush", file, "--batch", "--vapid-subject", "mailto:ops@pushseal.dev", "--cacert", standIn.certificate, "--keys", keyring.keys
        ])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("batch.jsonl line 2: the line has no \"subscription\""), "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").map { $0.hasPrefix("ok ") } == [true, true], "\(run.stdout)")
        let envelopes = standIn.log.map { jsonObject($0["message"] as? String ?? "")["enc"] as? String ?? "" }
        let forPage = jsonObject(try pushseal(["decrypt", "--keys", page, "-"], stdin: envelopes[0]).stdout)
        #expect(forPage["title"] as? String == "For the page" && forPage["body"] as? String == "only it opens this")
        let shared = jsonObject(try keyring.decrypt(payload: envelopes[1]).stdout)
        #expect(shared["title"] as? String == "Shared" && shared["interruption-level"] as? String == "passive", "\(shared)")
        // Alert options and --batch are two ways of giving the alert: one or the other.
        let both = try pushseal(["send", "--webpush", file, "--batch", "-t", "T", "--vapid-subject", "mailto:ops@pushseal.dev", "--keys", keyring.keys])
        #expect(both.status == 64 && both.stderr.contains("alert options cannot be combined with it"), "\(both.stderr)")
    }

    /// A signal while subscriptions still come on stdin: what was sent has its line, the rest
    /// is not taken, and the stop is said in one line with the signal's exit status.
    @Test func aSignalStopsTakingSubscriptionsAndSaysSo() throws {
        let browsers = try ["first", "stalled"].map(Browser.init)
        let standIn = try StandIn(browsers, answers: #"{"/push/stalled": [["stall"]]}"#)
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let lines = try browsers.map { try $0.line(at: standIn.origin) }
        let send = try RunningProcess([
            "send", "--webpush", "-", "--vapid-subject", "mailto:ops@pushseal.dev", "--cacert", standIn.certificate, "--keys", keyring.keys,
            "-t", "Deploy", "-b", "main is live"
        ])
        send.send(lines[0] + "\n")
        #expect(eventually(within: .seconds(20)) { send.stdoutSoFar.hasPrefix("ok ") }, "\(send.stderrSoFar)")
        send.send(lines[1] + "\n")
        #expect(eventually(within: .seconds(20)) { standIn.log.count == 2 }, "the stalled request went out")
        send.signal(SIGINT)
        let ended = send.wait()
        #expect(ended.status == 130, "\(ended.stderr)")
        #expect(ended.stderr.hasSuffix("error: stopped by SIGINT: subscriptions after the last result were not sent\n"), "\(ended.stderr)")
        let results = ended.stdout.split(separator: "\n")
        #expect(results.count == 2 && results[0].hasPrefix("ok ") && results[1].hasPrefix("fail \(standIn.origin)/push/stalled"), "\(ended.stdout)")
    }

    /// Two push services, one speaking HTTP/2 and one HTTP/1.1 only, both reached through a
    /// real proxy (Debian's tinyproxy) named by HTTPS_PROXY, as for APNs: a tunnel per service,
    /// every subscription its line.
    @Test func twoPushServicesThroughAProxyEachByItsOwnProtocol() throws {
        let browsers = try ["one", "two"].map(Browser.init)
        let http2 = try StandIn([browsers[0]], answers: "{}")
        let http1 = try StandIn([browsers[1]], answers: #"{}, "http1": true"#)
        let proxy = try TinyProxy(user: "ci")
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let trust = keyring.folder.file("services.pem")
        try (try String(contentsOfFile: http2.certificate, encoding: .utf8) + String(contentsOfFile: http1.certificate, encoding: .utf8)).write(
            toFile: trust, atomically: true, encoding: .utf8)
        let file = keyring.folder.file("subscriptions.jsonl")
        try [try browsers[0].line(at: http2.origin), try browsers[1].line(at: http1.origin)].joined(separator: "\n").write(
            toFile: file, atomically: true, encoding: .utf8)
        let run = try pushseal(
            [
                "send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--cacert", trust, "--keys", keyring.keys, "-t", "Deploy",
                "-b", "through the proxy"
            ], environment: ["HTTPS_PROXY": "http://ci:s3cret@127.0.0.1:\(proxy.port)"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").map { $0.hasPrefix("ok ") } == [true, true], "\(run.stdout)")
        #expect(proxy.log.components(separatedBy: "CONNECT").count - 1 >= 2, "each service through the proxy: \(proxy.log)")
        #expect(http2.log.count == 1 && http1.log.count == 1 && (http2.log + http1.log).allSatisfy { $0["problem"] is NSNull })
    }

    /// More subscriptions than one hand-over takes (32), interleaved over two push services:
    /// every one sent once, every line in the file's order.
    @Test func manySubscriptionsOverTwoServicesKeepTheFilesOrder() throws {
        let browsers = try (0..<70).map { try Browser("b\($0)") }
        let first = try StandIn(browsers.enumerated().filter { $0.offset % 2 == 0 }.map(\.element), answers: "{}")
        let second = try StandIn(browsers.enumerated().filter { $0.offset % 2 == 1 }.map(\.element), answers: #"{}, "http1": true"#)
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let trust = keyring.folder.file("services.pem")
        try (try String(contentsOfFile: first.certificate, encoding: .utf8) + String(contentsOfFile: second.certificate, encoding: .utf8)).write(
            toFile: trust, atomically: true, encoding: .utf8)
        let endpoints = browsers.enumerated().map { ($0.offset % 2 == 0 ? first.origin : second.origin) + $0.element.path }
        let file = keyring.folder.file("subscriptions.jsonl")
        try browsers.enumerated().map { try $0.element.line(at: $0.offset % 2 == 0 ? first.origin : second.origin) }.joined(separator: "\n").write(
            toFile: file, atomically: true, encoding: .utf8)
        let run = try pushseal([
            "send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--cacert", trust, "--keys", keyring.keys, "--json", "-t", "T"
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(results.map { $0["subscription"] as? String } == endpoints)
        #expect(results.allSatisfy { $0["status"] as? String == "ok" })
        #expect(first.log.count == 35 && second.log.count == 35 && (first.log + second.log).allSatisfy { $0["problem"] is NSNull })
    }

    /// pywebpush, the reference sender, beside the stand-in (which speaks HTTP/1.1 for it):
    /// what it posts passes the same checks pushseal's posts pass, VAPID and RFC 8291 alike, so
    /// the stand-in holds pushseal to what a push service takes from others.
    @Test func pywebpushPassesTheStandInsChecksToo() throws {
        let browser = try Browser("reference")
        let standIn = try StandIn([browser], answers: #"{}, "http1": true"#)
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let subscription = try browser.subscription(at: standIn.origin)
        let status = try python(
            """
            import json, sys, requests, urllib3
            from py_vapid import Vapid02
            from pywebpush import webpush
            urllib3.disable_warnings()
            session = requests.Session()
            session.verify = sys.argv[4]
            session.trust_env = False
            subscription = {"endpoint": sys.argv[1], "keys": {"p256dh": sys.argv[2], "auth": sys.argv[3]}}
            answer = webpush(subscription, '{"enc":"from pywebpush"}', vapid_private_key=Vapid02.from_file(sys.argv[5]),
                             vapid_claims={"sub": "mailto:ops@pushseal.dev"}, ttl=60, requests_session=session)
            print(answer.status_code)
            """,
            [
                subscription.endpoint, Base64.encode(subscription.key.x963Representation, alphabet: .url), Base64.encode(subscription.auth, alphabet: .url),
                standIn.certificate, keyring.keys + "/vapid-key.pem"
            ])
        #expect(status == "201")
        let log = standIn.log
        #expect(log.count == 1 && log[0]["problem"] is NSNull && log[0]["message"] as? String == #"{"enc":"from pywebpush"}"#, "\(log)")
    }

    /// `doctor send --webpush` as a user runs it before the first send: every line read, each
    /// push service asked once for no subscription, and each problem said with its fix.
    @Test func doctorSendWebpushChecksTheSetUpWithoutSendingToAnyone() throws {
        let browsers = try ["page"].map(Browser.init)
        let standIn = try StandIn(browsers, answers: "{}")
        let keyring = try KeyringFixture()
        let file = keyring.folder.file("subscriptions.jsonl")
        let line = try browsers[0].line(at: standIn.origin)
        try (line + "\n{\"endpoint\":\"https://push.example.net/x\"}\n").write(toFile: file, atomically: true, encoding: .utf8)
        func doctor(_ extra: [String] = []) throws -> Run {
            try pushseal(
                ["doctor", "send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--keys", keyring.keys, "--cacert", standIn.certificate]
                    + extra)
        }
        // No VAPID key yet: said, with the command that makes one.
        let early = try doctor()
        #expect(early.status == 78 && early.stdout.contains("PROBLEM  vapid key  no VAPID key in \(keyring.keys)"), "\(early.stdout)")
        #expect(early.stdout.contains("fix: pushseal keys vapid --keys \(keyring.keys)"))

        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let run = try doctor()
        #expect(run.status == 78, "the bad line is a problem: \(run.stdout)")
        #expect(run.stdout.contains("ok       file       1 in \(file) (0 of them pairing strings, sealed to the page's own key), at 1 push service: \(standIn.origin)"), "\(run.stdout)")
        #expect(run.stdout.contains("PROBLEM  file       \(file) line 2: the subscription has no \"keys\""), "\(run.stdout)")
        #expect(run.stdout.contains("ok       service    \(standIn.origin) answered a probe for no subscription 404"), "\(run.stdout)")
        // Nothing reached the subscription: the one request went to a path that is none.
        #expect(standIn.log.map { $0["path"] as? String } == ["/pushseal-doctor-probe"])

        try (line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let ready = try doctor(["--json"])
        #expect(ready.status == 0 && jsonObject(ready.stdout)["ready"] as? Bool == true, "\(ready.stdout)")
        // A service whose certificate is not trusted, and a placeholder subject.
        let untrusted = try pushseal(["doctor", "send", "--webpush", file, "--vapid-subject", "mailto:x@localhost", "--keys", keyring.keys])
        #expect(untrusted.status == 78, "\(untrusted.stdout)")
        #expect(untrusted.stdout.contains("PROBLEM  subject    the VAPID subject"), "\(untrusted.stdout)")
        let unknown = try pushseal(["doctor", "send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--keys", keyring.keys])
        #expect(unknown.status == 78 && unknown.stdout.contains("PROBLEM  service    \(standIn.origin):"), "\(unknown.stdout)")
        #expect(unknown.stdout.contains("fix: trust the service's certificate"), "\(unknown.stdout)")
    }

    /// The web app's pairing string is the subscription with the page's own public key beside
    /// it: each such line is sealed to that key (ps2), which only the page can open; a line
    /// without one gets the keyring's key, and a share that is not one is that line's error.
    @Test func aPairingStringIsSealedToThePagesOwnKey() throws {
        let browsers = try ["page", "plain", "broken"].map(Browser.init)
        let standIn = try StandIn(browsers, answers: "{}")
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let page = keyring.folder.file("Page")
        let made = try pushseal(["keys", "init", "--recipient", "--keys", page])
        let share = try pushseal(["keys", "export", "--public", "--keys", page]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let lines = try browsers.map { browser in
            let extra = browser.path.hasSuffix("page") ? #","pushseal":"\#(share)""# : browser.path.hasSuffix("broken") ? #","pushseal":"ppk1.x.AAAA""# : ""
            return try browser.line(at: standIn.origin, extra: extra)
        }
        let file = keyring.folder.file("pairings.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let run = try pushseal([
            "send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--cacert", standIn.certificate, "--keys", keyring.keys,
            "-t", "Deploy", "-b", "main is live"
        ])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("pairings.jsonl line 3: the pairing string's \"pushseal\" share:"), "\(run.stderr)")
        let log = standIn.log
        #expect(log.count == 2 && log.allSatisfy { $0["problem"] is NSNull }, "\(log)")
        let envelopes = log.map { jsonObject($0["message"] as? String ?? "")["enc"] as? String ?? "" }
        let pageKid = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(envelopes[0].hasPrefix("ps2.\(pageKid).") && envelopes[1].hasPrefix("ps1."), "\(envelopes)")
        let opened = try pushseal(["decrypt", "--keys", page, "-"], stdin: envelopes[0])
        #expect(jsonObject(opened.stdout)["title"] as? String == "Deploy", "\(opened.stderr)")
        #expect(try keyring.decrypt(payload: envelopes[0]).status != 0, "the sender's own keyring cannot open what it sealed to the page")
    }

    @Test(arguments: [
        (["--webpush", "s.jsonl", "-t", "T"], "--vapid-subject"),
        (["--webpush", "s.jsonl", "--vapid-subject", "mailto:x@localhost", "-t", "T"], "is no address a push service accepts"),
        (["--webpush", "s.jsonl", "--vapid-subject", "mailto:ops@pushseal.dev", "--device", String(repeating: "ab", count: 32), "-t", "T"], "--device is APNs'"),
        (["--webpush", "s.jsonl", "--vapid-subject", "mailto:ops@pushseal.dev", "--collapse-id", "not a topic", "-t", "T"], "1 to 32 of A-Z"),
        (["--webpush", "s.jsonl", "--vapid-subject", "mailto:ops@pushseal.dev", "--fallback-title", "New", "-t", "T"], "no fallback alert")
    ])
    func sendWebpushOptionsThatCannotWorkAreUsageErrors(arguments: [String], words: String) {
        let run = parsed(["send"] + arguments)
        #expect(run.status == 64 && run.stderr.contains(words), "\(run.stderr)")
    }

    /// An alert too long for one push message is the command's fault, said once, before any
    /// connection, however many subscriptions the file holds.
    @Test func anAlertTooLongForAPushMessageIsSaidOnce() throws {
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["vapid"]).status == 0)
        let file = keyring.folder.file("s.jsonl")
        let lines = try ["a", "b", "c"].map { try Browser($0).line(at: "https://127.0.0.1:1") }
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let run = try pushseal([
            "send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--keys", keyring.keys, "-t", "T", "-b",
            String(repeating: "x", count: 5_000)
        ])
        #expect(run.status == 65 && run.stdout.isEmpty, "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1 && run.stderr.contains("over the 3993 bytes one push message carries"), "\(run.stderr)")
    }

    @Test func withNoVAPIDKeySendWebpushSaysHowToMakeOne() throws {
        let keyring = try KeyringFixture()
        let file = keyring.folder.file("s.jsonl")
        try "".write(toFile: file, atomically: true, encoding: .utf8)
        let run = try pushseal(["send", "--webpush", file, "--vapid-subject", "mailto:ops@pushseal.dev", "--keys", keyring.keys, "-t", "T"])
        #expect(run.status == 78 && run.stderr.contains("make one with 'pushseal keys vapid'"), "\(run.stderr)")
    }
}
