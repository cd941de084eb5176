import Foundation
import Testing

/// `pushseal webapp export` and `serve`, and the receiving web app itself in a real browser
/// (Reference/webapp_browser.py: Debian's chromium through selenium).
@Suite("the receiving web app")
struct WebAppTests {
    static let browserScript = Bundle.module.url(forResource: "webapp_browser", withExtension: "py", subdirectory: "Reference")!.path

    /// A keyring with its VAPID key, and that key.
    static func vapidKeyring() throws -> (KeyringFixture, String) {
        let keyring = try KeyringFixture()
        let vapid = try keyring.keysCommand(["vapid"])
        #expect(vapid.status == 0, "\(vapid.stderr)")
        return (keyring, vapid.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func exportWritesTheAppFilledInForThisSender() throws {
        let (keyring, vapid) = try Self.vapidKeyring()
        let site = keyring.folder.file("site")
        let run = try pushseal(["webapp", "export", site, "--keys", keyring.keys, "--sender", "Ops \"night\" desk"])
        #expect(run.status == 0, "\(run.stderr)")
        let names = ["index.html", "app.js", "sw.js", "format.js", "store.js", "style.css", "icon.svg", "manifest.json", "config.js", "qrcode.js"]
        #expect(run.stdout == names.map { site + "/" + $0 + "\n" }.joined())
        for name in names {
            var info = stat()
            #expect(stat(site + "/" + name, &info) == 0 && info.st_mode & 0o777 == 0o644, "\(name) is readable by a web server")
        }
        let config = try String(contentsOfFile: site + "/config.js", encoding: .utf8)
        #expect(config.contains(#""vapidKey":"\#(vapid)""#) && config.contains(#""sender":"Ops \"night\" desk""#))
        #expect(config.contains(#""key-missing":"This device does not have the key to open this message.""#))
        #expect(try String(contentsOfFile: site + "/index.html", encoding: .utf8).contains(#"<script src="qrcode.js"></script>"#))

        // Without the QR library the page shows the pairing string as text only.
        let plain = keyring.folder.file("plain")
        #expect(try pushseal(["webapp", "export", plain, "--keys", keyring.keys, "--no-qr"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: plain + "/qrcode.js"))
        #expect(!(try String(contentsOfFile: plain + "/index.html", encoding: .utf8)).contains("qrcode.js"))
    }

    @Test func exportWithoutAVAPIDKeySaysHowToMakeOne() throws {
        let keyring = try KeyringFixture()
        let run = try pushseal(["webapp", "export", keyring.folder.file("site"), "--keys", keyring.keys])
        #expect(run.status == 78 && run.stderr == "error: no VAPID key in \(keyring.keys): make one with 'pushseal keys vapid' (the page subscribes with its public half)\n")
        #expect(!FileManager.default.fileExists(atPath: keyring.folder.file("site")), "nothing is written")
    }

    @Test(arguments: [
        (["webapp"], "missing a webapp subcommand (export, serve)"),
        (["webapp", "exprt", "d"], "did you mean 'export'"),
        (["webapp", "export"], "missing the folder"),
        (["webapp", "serve", "extra"], "takes no arguments"),
        (["webapp", "serve", "--listen", "nope"], "--listen takes [HOST:]PORT"),
        (["webapp", "serve", "--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
        (["webapp", "export", "d", "--sender", ""], "--sender is a name of 1 to 64 characters")
    ])
    func webappUsageErrors(arguments: [String], words: String) throws {
        let run = try pushseal(arguments)
        #expect(run.status == 64 && run.stderr.contains(words), "\(run.stderr)")
    }

    @Test func serveAnswersWithTheFilesOverHTTPSAndALinePerRequest() throws {
        let (keyring, _) = try Self.vapidKeyring()
        let server = try RunningProcess(["webapp", "serve", "--keys", keyring.keys, "--listen", "127.0.0.1:0"])
        #expect(eventually(within: .seconds(20)) { server.stderrSoFar.contains("listening on https://") }, "\(server.stderrSoFar)")
        let url = try #require(server.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("listening on ") }).dropFirst("listening on ".count)
        let certificate = keyring.keys + "/tls-cert.pem"
        let page = try curl(String(url), cacert: certificate, method: "GET")
        #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8" && page.body.contains("Turn on notifications"))
        #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true && page.headers["cache-control"] == "no-cache")
        let worker = try curl(url + "sw.js", cacert: certificate, method: "GET")
        #expect(worker.status == 200 && worker.headers["content-type"] == "text/javascript; charset=utf-8" && worker.body.contains("importScripts"))
        #expect(try curl(url + "nothing-here", cacert: certificate, method: "GET").status == 404)
        #expect(try curl(String(url), cacert: certificate, method: "POST", body: "x").status == 405)
        server.signal(SIGTERM)
        let ended = server.wait()
        #expect(ended.status == 0, "\(ended.stderr)")
        let lines = ended.stderr.split(separator: "\n")
        #expect(lines.contains("GET / 200") && lines.contains("GET /sw.js 200") && lines.contains("GET /nothing-here 404") && lines.contains("POST / 405"), "\(ended.stderr)")
    }

    /// The page's opener is docs/FORMAT.md's receiver, step for step: every envelope of the
    /// published vectors gets the status (and alert) the JavaScript example gives it.
    @Test func theWebAppJudgesEveryVectorEnvelopeAsTheFormatSays() throws {
        let repository = VectorTests.repository
        let run = try runProcess(
            "/usr/bin/env",
            [
                "node", Bundle.module.url(forResource: "webapp_format_vectors", withExtension: "mjs", subdirectory: "Reference")!.path,
                repository.appendingPathComponent("Sources/PushSealWebApp/files/format.js").path,
                repository.appendingPathComponent("examples/js/pushseal-format.mjs").path,
                repository.appendingPathComponent("docs/vectors/ps1.json").path, repository.appendingPathComponent("docs/vectors/ps2.json").path,
                repository.appendingPathComponent("docs/vectors/ps3.json").path
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let count = Int(run.stdout.split(separator: " ").first ?? "") ?? 0
        #expect(count >= 100, "\(run.stdout)")
    }

    /// The web app as a user meets it, in Debian's chromium: pair, receive what `send
    /// --webpush` delivers to the pairing string, and each placeholder.
    @Test func aBrowserPairsReceivesSealedAlertsAndShowsEachPlaceholder() throws {
        let work = TemporaryFolder()
        let run = try runProcess("/usr/bin/env", ["python3", Self.browserScript, pushsealBinary, work.path], watchdog: 240)
        #expect(run.status == 0, "\(run.stderr)")
        let report = jsonObject(run.stdout)
        // Paired: the page subscribed with this keyring's VAPID key, and its pairing string
        // (also as a QR code a camera reads) holds the subscription and the page's own key.
        #expect(report["applicationServerKey"] as? String == report["vapid"] as? String)
        let pairing = try #require(report["pairing"] as? [String: Any])
        let share = try #require(report["share"] as? String)
        #expect(share.hasPrefix("ppk1.") && pairing["pushseal"] as? String == share)
        let qr = report["qrDecoded"] as? [String]
        #expect(qr?.count == 1 && (qr.map { jsonObject($0[0])["pushseal"] as? String }) == share, "\(String(describing: qr))")
        // send --webpush sealed to that key (ps2), and the push service's copy, once http_ece
        // opened it, was the web form.
        let kid = share.split(separator: ".")[1]
        #expect((report["sealedByService"] as? String)?.hasPrefix(#"{"enc":"ps2.\#(kid)."#) == true)

        let cases = try #require(report["cases"] as? [[String: Any]])
        var seen: [String: [String: Any]] = [:]
        for entry in cases { seen[entry["case"] as! String] = entry }
        let expected: [(String, String, String, String)] = [
            ("paired", "decrypted", "Deploy finished", "api-7 is live"),
            ("repeat", "duplicate", "Encrypted notification", "This message was already shown."),
            ("ps1-without-key", "key-missing", "Encrypted notification", "This device does not have the key to open this message."),
            ("ps1-with-key", "decrypted", "Backup done", "nightly, 4 GB"),
            ("tampered", "auth-failed", "Encrypted notification", "This message could not be decrypted on this device."),
            ("later-version", "unsupported", "Encrypted notification", "This message needs a newer version of the app or system to open."),
            ("not-json", "malformed", "Encrypted notification", "This message could not be decrypted on this device."),
            ("unsealed", "passthrough", "CI at pushseal", #"{"text": "plain"}"#),
            ("expired", "expired", "Encrypted notification", "This message has expired."),
            ("sender-not-allowed", "sender-untrusted", "Encrypted notification", "This message is not from a sender this device trusts, so it is not shown."),
            ("sender-allowed", "decrypted", "Vouched", "by the sender's key"),
            ("sender-repeat", "duplicate", "Encrypted notification", "This message was already shown."),
            ("unauthenticated-refused", "sender-untrusted", "Encrypted notification", "This message is not from a sender this device trusts, so it is not shown."),
            ("key-removed", "key-missing", "Encrypted notification", "This device does not have the key to open this message.")
        ]
        for (name, status, title, body) in expected {
            let entry = try #require(seen[name], "case \(name)")
            #expect(entry["status"] as? String == status && entry["title"] as? String == title && entry["body"] as? String == body, "\(name): \(entry)")
            // What the service worker recorded is what the browser shows.
            let shown = entry["shown"] as? [[String: Any]] ?? []
            #expect(shown.contains { $0["title"] as? String == title && $0["body"] as? String == body }, "\(name) shown: \(shown)")
        }
        // The same message twice: shown once; the repeat is a quiet notification of its own,
        // never in place of the message.
        let repeated = (seen["repeat"]?["shown"] as? [[String: Any]] ?? []).filter { $0["title"] as? String == "Deploy finished" }
        #expect(repeated.count == 1)
        // With a sender key, send --webpush sealed ps3 to the page's key, vouched for by it.
        #expect((report["vouchedByService"] as? String)?.hasPrefix(#"{"enc":"ps3.\#(kid)."#) == true, "\(report["vouchedByService"] ?? "")")
        #expect((report["afterForget"] as? [String: Any])?["unsubscribed"] as? String == "yes")
        #expect((report["historyOnPage"] as? [String])?.count == expected.count)
        // A console free of errors, and every screenshot taken.
        let console = report["console"] as? [[String: Any]] ?? []
        #expect(console.filter { $0["level"] as? String == "SEVERE" }.isEmpty, "\(console)")
        for path in report["screenshots"] as? [String] ?? [] { #expect(FileManager.default.fileExists(atPath: path)) }
        #expect((report["screenshots"] as? [String])?.count == 3)
        let times = cases.compactMap { $0["elapsedMs"] as? Double }.sorted()
        print("web app: push to notification in the service worker, median \(Int(times[times.count / 2].rounded())) ms, most \(Int(times.last!.rounded())) ms (\(times.count) pushes)")
    }
}
