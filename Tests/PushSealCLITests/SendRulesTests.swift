import Foundation
import PushSealJSON
import Testing

@testable import PushSealCLI

/// `send` and `run` as a user meets them: where the provider token is kept, which server a
/// flag or the environment names, APNs' rules for voip and background pushes, an empty
/// device list, results beside a wrapped command's output, typos in ids, a token in clear,
/// an open .p8 and an apns-id that is not one.
@Suite("send: the user's words and APNs' rules")
struct SendRulesTests {
    @Test func aReadyPayloadCreatesNoKeysFolderWhereSendRuns() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let payload = try sending.keyring.encrypt(["-t", "Ready", "-b", "no keyring here"]).stdout
        let work = TemporaryFolder()
        let home = TemporaryFolder()
        let run = try shell(
            """
            cd "$WORK" && "$PUSHSEAL" send --endpoint "$URL" --cacert "$CERT" --topic "$TOPIC" --auth-key "$P8" \\
              --key-id KEY1234567 --team-id TEAM123456 --device "$DEVICE" -
            """, stdin: payload,
            environment: [
                "WORK": work.path, "URL": listener.url, "CERT": sending.keyring.keys + "/tls-cert.pem", "TOPIC": topic,
                "P8": sending.p8, "DEVICE": deviceToken, "HOME": home.path, "XDG_CACHE_HOME": ""
            ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == [], "no ./Keys")
        let cache = home.file(".cache/pushseal")
        let token = cache + "/provider-token.TEAM123456.KEY1234567.json"
        #expect(FileManager.default.fileExists(atPath: token))
        #expect(try FileManager.default.attributesOfItem(atPath: cache)[.posixPermissions] as? Int == 0o700)
        #expect(try FileManager.default.attributesOfItem(atPath: token)[.posixPermissions] as? Int == 0o600)
        // XDG_CACHE_HOME, when set, is where it goes.
        let xdg = TemporaryFolder()
        let again = try shell(
            """
            cd "$WORK" && "$PUSHSEAL" send --endpoint "$URL" --cacert "$CERT" --topic "$TOPIC" --auth-key "$P8" \\
              --key-id KEY1234567 --team-id TEAM123456 --device "$DEVICE" -
            """, stdin: payload,
            environment: [
                "WORK": work.path, "URL": listener.url, "CERT": sending.keyring.keys + "/tls-cert.pem", "TOPIC": topic,
                "P8": sending.p8, "DEVICE": deviceToken, "HOME": home.path, "XDG_CACHE_HOME": xdg.path
            ])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: xdg.file("pushseal/provider-token.TEAM123456.KEY1234567.json")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == [])
        #expect(listener.finish().stdout.split(separator: "\n").count == 2)
    }

    @Test func aFlagBeatsTheEnvironmentAndTwoServersAreAUsageError() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        // PUSHSEAL_ENDPOINT names a server nobody listens on; --endpoint wins.
        let flagWins = try sending.send(
            to: listener, ["--device", deviceToken, "-b", "by the flag"],
            environment: ["PUSHSEAL_ENDPOINT": "https://127.0.0.1:1"])
        #expect(flagWins.status == 0, "\(flagWins.stderr)")
        #expect(listener.finish().stdout.split(separator: "\n").count == 1)
        // --endpoint with --sandbox names two servers.
        let both = parsed([
            "send", "--sandbox", "--endpoint", "https://127.0.0.1:8443", "--device", deviceToken,
            "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-b", "x"
        ])
        #expect(both.status == 64)
        #expect(both.stderr.hasPrefix("error: --endpoint and --sandbox name different servers; give one"), "\(both.stderr)")
        // --production beats PUSHSEAL_ENDPOINT: it is not a conflict, and a bad URL there is not read.
        let production = try pushseal(
            [
                "send", "--keys", sending.keyring.keys, "--production", "--device", deviceToken, "--topic", topic, "--auth-key", "missing.p8",
                "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-b", "x"
            ],
            environment: ["PUSHSEAL_ENDPOINT": "not a url"])
        #expect(production.status == 66, "the flag's server is taken; the missing .p8 is what stops it: \(production.stderr)")
        let badEnvironment = parsed(
            [
                "send", "--device", deviceToken, "--topic", topic, "--auth-key", "k.p8",
                "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-b", "x"
            ],
            environment: ["PUSHSEAL_ENDPOINT": "not a url"])
        #expect(badEnvironment.status == 64)
        #expect(badEnvironment.stderr.hasPrefix("error: PUSHSEAL_ENDPOINT takes a URL"), "\(badEnvironment.stderr)")
    }

    @Test func voipAlertsMaySealUpTo5120Bytes() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let body = String(repeating: "v", count: 3_000)
        let voip = try sending.send(to: listener, ["--device", deviceToken, "--push-type", "voip", "-t", "Call", "-b", body])
        #expect(voip.status == 0, "\(voip.stderr)")
        // The same alert as an ordinary push is over APNs' 4096 bytes.
        let alert = try sending.send(to: listener, ["--device", deviceToken, "-t", "Call", "-b", body])
        #expect(alert.status == 65)
        #expect(alert.stderr.contains("over APNs' 4096-byte limit"), "\(alert.stderr)")
        // And past 5120 even voip is refused, before anything is sent.
        let tooBig = try sending.send(to: listener, ["--device", deviceToken, "--push-type", "voip", "-b", String(repeating: "v", count: 4_000)])
        #expect(tooBig.status == 65)
        #expect(tooBig.stderr.contains("over APNs' 5120-byte limit"), "\(tooBig.stderr)")
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == 1)
        #expect(records.first?["body"] as? String == body)
        #expect(records.first?["apns-push-type"] as? String == "voip")
    }

    @Test func backgroundPushesCarryNoAlertAndGoAtPriority5() throws {
        let sending = try SendTests.Sending()
        let options = [
            "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
            "--device", deviceToken, "--push-type", "background"
        ]
        let sealed = try pushseal(["send", "--keys", sending.keyring.keys] + options + ["-t", "Shown?", "-b", "x"])
        #expect(sealed.status == 64)
        #expect(sealed.stderr.hasPrefix("error: --push-type background carries no alert"), "\(sealed.stderr)")
        let urgent = try pushseal(["send"] + options + ["--priority", "10", "-"], stdin: #"{"aps":{"content-available":1}}"#)
        #expect(urgent.status == 64)
        #expect(urgent.stderr.contains("--priority 5"), "\(urgent.stderr)")
        let withAlert = try pushseal(
            ["send", "--keys", sending.keyring.keys] + options + ["-"],
            stdin: #"{"aps":{"alert":"shown","content-available":1}}"#)
        #expect(withAlert.status == 65)
        #expect(withAlert.stderr.contains("a background push has \"content-available\":1 and no alert"), "\(withAlert.stderr)")
        // A proper one goes out at priority 5 without being asked.
        let listener = try sending.listener()
        let quiet = try sending.send(
            to: listener, ["--device", deviceToken, "--push-type", "background", "-"],
            stdin: #"{"aps":{"content-available":1},"job":"sync"}"#)
        #expect(quiet.status == 0, "\(quiet.stderr)")
        let record = jsonObject(listener.finish().stdout)
        #expect(record["apns-priority"] as? String == "5")
        #expect(record["apns-push-type"] as? String == "background")
    }

    @Test func zeroDevicesIsAUsageError() throws {
        let sending = try SendTests.Sending()
        sending.folder.write("none.txt", "# nobody yet\n\n")
        let options = ["--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456"]
        for (arguments, stdin, message) in [
            (["--devices", "/dev/null", "-b", "x"], nil, "error: no device tokens in /dev/null: nothing was sent\n"),
            (
                ["--devices", sending.folder.file("none.txt"), "-b", "x"], nil,
                "error: no device tokens in \(sending.folder.file("none.txt")): nothing was sent\n"
            ),
            (["--batch"], "\n\n", "error: no --batch lines on stdin: nothing was sent\n")
        ] as [([String], String?, String)] {
            let run = try pushseal(
                ["send", "--keys", sending.keyring.keys, "--endpoint", "https://127.0.0.1:1"] + options + arguments,
                stdin: stdin)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            #expect(run.stderr == message)
            #expect(run.stdout.isEmpty)
        }
    }

    @Test func runKeepsItsResultsOutOfTheCommandsOutput() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let base = [
            "run", "--keys", sending.keyring.keys, "--endpoint", listener.url, "--cacert", sending.keyring.keys + "/tls-cert.pem",
            "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
            "--device", deviceToken
        ]
        let copy = try pushseal(base + ["--", "cat"], stdin: "the command's own bytes\n")
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(copy.stdout == "the command's own bytes\n", "stdout is the command's alone")
        #expect(copy.stderr.hasPrefix("ok \(deviceToken) "), "\(copy.stderr)")
        let asked = try pushseal(base + ["--results", "stdout", "--", "true"])
        #expect(asked.status == 0, "\(asked.stderr)")
        #expect(asked.stdout.hasPrefix("ok \(deviceToken) ") && asked.stderr.isEmpty, "\(asked.stdout) | \(asked.stderr)")
        let wrong = try pushseal(base + ["--results", "file", "--", "true"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.hasPrefix("error: --results is stderr (the default) or stdout"), "\(wrong.stderr)")
        #expect(listener.finish().stdout.split(separator: "\n").count == 2)
    }

    @Test func typosAndCleartextAreRefusedAndAnOpenP8IsSaidOutLoud() throws {
        let sending = try SendTests.Sending()
        let base = ["send", "--keys", sending.keyring.keys, "--device", deviceToken, "--topic", topic, "--auth-key", sending.p8, "-b", "x"]
        let shortKey = parsed(base + ["--key-id", "KEY123", "--team-id", "TEAM123456"])
        #expect(shortKey.status == 64)
        #expect(shortKey.stderr.hasPrefix("error: --key-id is 10 capital letters and digits"), "\(shortKey.stderr)")
        let lowerTeam = parsed(base + ["--key-id", "KEY1234567"], environment: ["PUSHSEAL_TEAM_ID": "team123456"])
        #expect(lowerTeam.status == 64)
        #expect(lowerTeam.stderr.hasPrefix("error: PUSHSEAL_TEAM_ID is 10 capital letters and digits"), "\(lowerTeam.stderr)")
        // http:// to another machine would carry the token in clear.
        let ids = ["--key-id", "KEY1234567", "--team-id", "TEAM123456"]
        let cleartext = parsed(base + ids + ["--endpoint", "http://192.0.2.7:8080"])
        #expect(cleartext.status == 64)
        #expect(cleartext.stderr.contains("http:// to 192.0.2.7, so the provider token would travel in clear"), "\(cleartext.stderr)")
        // To this machine it is fine, and a .p8 others can read is named with the fix.
        let listener = try sending.listener(["--plaintext"])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: sending.p8)
        let open = try sending.send(to: listener, ["--device", deviceToken, "-b", "over h2c"])
        #expect(open.status == 0, "\(open.stderr)")
        #expect(open.stderr == "warning: \(sending.p8) can be read by group or others (mode 0644); make it private: chmod 600 \(sending.p8)\n")
        #expect(listener.finish().stdout.split(separator: "\n").count == 1)
    }

    @Test func aBadTokenMidListIsSkippedWithItsLineAndEveryOtherDeviceIsSent() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        sending.folder.write("devices.txt", (1...2_000).map { $0 == 1_500 ? "not-hex" : String(format: "%064x", $0) }.joined(separator: "\n"))
        let run = try sending.send(to: listener, ["--devices", sending.folder.file("devices.txt"), "-b", "around line 1500"])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr == "error: \(sending.folder.file("devices.txt")) line 1500: not a device token in hex\nerror: 1 of 2000 lines were not sent\n")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 1_999 && lines.allSatisfy { $0.hasPrefix("ok ") }, "every other device, reported")
        #expect(listener.finish().stdout.split(separator: "\n").count == 1_999)
    }

    /// A devices file as editors and spreadsheets write them: a byte-order mark before the
    /// first token is not part of it; a column after a token makes the line refused, never a
    /// longer token.
    @Test func aByteOrderMarkIsSkippedAndAnythingAfterATokenIsRefused() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let (first, second, third, fourth) = (String(format: "%064x", 1), String(format: "%064x", 2), String(format: "%064x", 3), String(format: "%064x", 4))
        sending.folder.write("devices.txt", "\u{FEFF}\(first)\r\n\(second)\t42\n  \(third)  \n\(fourth) 7\n# done\n")
        let run = try sending.send(to: listener, ["--devices", sending.folder.file("devices.txt"), "--json", "-b", "from a spreadsheet"])
        #expect(run.status == 65, "\(run.stderr)")
        let file = sending.folder.file("devices.txt")
        #expect(
            run.stderr == "error: \(file) line 2: something follows the device token (one token per line, nothing after it)\n"
                + "error: \(file) line 4: something follows the device token (one token per line, nothing after it)\n"
                + "error: 2 of 4 lines were not sent\n", "\(run.stderr)")
        let sent = run.stdout.split(separator: "\n").map { jsonObject(String($0))["device"] as? String }
        #expect(sent == [first, third], "the 66-digit '\(second)42' is never sent")
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0))["device"] as? String }
        #expect(Set(records) == [first, third])
    }

    @Test func aGatewaysBadGatewayAndTimeoutAreTriedAgain() throws {
        let sending = try SendTests.Sending()
        let (behind, slow) = (String(format: "%064x", 1), String(format: "%064x", 2))
        let standIn = try APNsStandIn(
            for: sending,
            script: """
                {"answers": {"\(behind)": [[502, "BadGateway"]], "\(slow)": [[504, "GatewayTimeout"]]}}
                """)
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", behind, "--device", slow, "--json", "-b", "x"])
        #expect(run.status == 0, "\(run.stderr)")
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(results.map { $0["status"] as? String } == ["ok", "ok"])
        #expect(results.map { $0["attempts"] as? Int } == [2, 2])
    }

    @Test func aFreshTokenCalledExpiredIsNotRenewedAgainAndAgain() throws {
        let sending = try SendTests.Sending()
        let devices = (1...3).map { String(format: "%064x", $0) }
        let answers = Array(repeating: #"[403, "ExpiredProviderToken"]"#, count: 3).joined(separator: ", ")
        let expired = devices.map { #""\#($0)": [\#(answers)]"# }.joined(separator: ", ")
        let standIn = try APNsStandIn(for: sending, script: #"{"answers": {\#(expired)}}"#)
        for _ in 1...3 {
            let run = try sending.send(
                to: standIn.url, trusting: standIn.certificate,
                devices.flatMap { ["--device", $0] } + ["-b", "a server whose clock disagrees"])
            #expect(run.status == 75, "\(run.stderr)")
            #expect(run.stdout.split(separator: "\n").count == 3 && run.stdout.split(separator: "\n").allSatisfy { $0.contains(" 403 ") && $0.contains("check this machine's clock") }, "\(run.stdout)")
        }
        let iats = Set(standIn.log.compactMap { $0["iat"] as? Int })
        #expect(iats.count == 1, "one token over three runs, never a new one every answer: \(iats)")
    }

    /// The two bounds agree: by default a notification is tried again for as long as
    /// --retry-for allows (three retries, the old default, gave up after 1.75 s of a minute).
    @Test func aServerBusyForSecondsIsRetriedWithinRetryForByDefault() throws {
        let sending = try SendTests.Sending()
        let busy = Array(repeating: #"[503, "ServiceUnavailable"]"#, count: 4).joined(separator: ", ")
        let standIn = try APNsStandIn(for: sending, script: #"{"answers": {"\#(deviceToken)": [\#(busy)]}}"#)
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", deviceToken, "--json", "-b", "after a busy spell"])
        #expect(run.status == 0, "\(run.stderr)")
        let result = jsonObject(run.stdout)
        #expect(result["status"] as? String == "ok" && result["attempts"] as? Int == 5, "\(run.stdout)")
        #expect(standIn.log.count == 5)
        // --retries still caps them, and --retry-for bounds them whatever --retries allows.
        let capped = try APNsStandIn(for: sending, script: #"{"answers": {"\#(deviceToken)": [\#(busy)]}}"#)
        let few = try sending.send(to: capped.url, trusting: capped.certificate, ["--device", deviceToken, "--retries", "2", "-b", "x"])
        #expect(few.status == 75 && few.stdout == "fail \(deviceToken) 503 ServiceUnavailable (3 attempts)\n", "\(few.stdout)")
    }

    /// coreutils' `timeout`, the usual cron and CI guard, signals the command and then its
    /// group: two SIGTERMs at once are one request to stop, so every device in flight still
    /// gets its line and stderr says why it stopped, run after run.
    @Test func twoSignalsTogetherFromTimeoutAreOneRequestToStop() throws {
        let sending = try SendTests.Sending()
        let devices = (1...3).map { String(format: "%064x", $0) }
        for run in 1...5 {
            let standIn = try APNsStandIn(for: sending, script: #"{"delay": 1.5}"#)
            let guarded = try runProcess(
                "/usr/bin/env",
                [
                    "timeout", "--preserve-status", "0.5", pushsealBinary,
                    "send", "--keys", sending.keyring.keys, "--endpoint", standIn.url, "--cacert", standIn.certificate,
                    "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
                    "-b", "under timeout"
                ] + devices.flatMap { ["--device", $0] })
            #expect(guarded.status == 143, "run \(run): \(guarded.stderr)")
            #expect(guarded.stdout.split(separator: "\n").count == 3, "run \(run): every device in flight reported: \(guarded.stdout)")
            #expect(guarded.stderr == "error: stopped by SIGTERM: devices after the last result were not sent\n", "run \(run): \(guarded.stderr)")
        }
    }

    /// `| head -1`: once the reader has left, nothing more goes out, retries included, though
    /// no result has failed to be written yet.
    @Test func aReaderThatLeavesStopsTheSendingAtOnce() throws {
        let sending = try SendTests.Sending()
        let (quick, busy) = (String(format: "%064x", 1), String(format: "%064x", 2))
        let failing = Array(repeating: #"[503, "ServiceUnavailable"]"#, count: 40).joined(separator: ", ")
        let standIn = try APNsStandIn(for: sending, script: #"{"answers": {"\#(busy)": [\#(failing)]}}"#)
        let run = try shell(
            """
            set -o pipefail
            timeout 30 "$PUSHSEAL" send --keys "$KEYS" --endpoint "$URL" --cacert "$CA" --topic "$TOPIC" --auth-key "$P8" \\
              --key-id KEY1234567 --team-id TEAM123456 --device "$QUICK" --device "$BUSY" --retries 10 -b "to a reader that leaves" | head -1
            echo "status ${PIPESTATUS[0]}"
            """,
            environment: [
                "KEYS": sending.keyring.keys, "URL": standIn.url, "CA": standIn.certificate, "TOPIC": topic,
                "P8": sending.p8, "QUICK": quick, "BUSY": busy
            ])
        #expect(run.stdout.hasPrefix("ok \(quick) "), "\(run.stdout)")
        #expect(!run.stdout.contains("status 124"), "it stopped by itself, long before timeout's 30 s: \(run.stdout)")
        let tries = standIn.log.filter { $0["device"] as? String == busy }.count
        #expect(tries <= 4, "\(tries) requests went out to a device nobody would hear about")
    }

    /// A signal once the stop has begun, and after the grace for a second one, exits at once,
    /// and says what it leaves without a result.
    @Test func aSignalAfterTheStopBeganExitsAtOnceAndSaysWhatWasLeft() throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"delay": 30}"#)
        let send = try RunningProcess([
            "send", "--keys", sending.keyring.keys, "--endpoint", standIn.url, "--cacert", standIn.certificate,
            "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
            "--device", deviceToken, "--device", String(format: "%064x", 2), "-b", "never answered"
        ])
        // The requests go out, and their answers never come.
        #expect(eventually { !standIn.log.isEmpty })
        send.signal(SIGTERM)
        // Two signals within a second are one request to stop: the test signals again every
        // 100 ms until it exits, so one comes after that second.
        #expect(eventually { !signalIsPending(SIGTERM, for: send.process.processIdentifier) })
        #expect(
            eventually(within: .seconds(10)) {
                send.signal(SIGTERM)
                return eventually(within: .milliseconds(100)) { !send.process.isRunning }
            })
        let run = send.wait(atMost: .seconds(20))
        #expect(run.status == 143)
        #expect(run.stderr == "error: stopped at once by a second SIGTERM: 2 devices sent or queued have no result line\n", "\(run.stderr)")
    }

    @Test func aFirstSignalStopsTheRetries() throws {
        let sending = try SendTests.Sending()
        let failing = Array(repeating: #"[500, "InternalServerError"]"#, count: 11).joined(separator: ", ")
        let standIn = try APNsStandIn(for: sending, script: #"{"answers": {"\#(deviceToken)": [\#(failing)]}}"#)
        let send = try RunningProcess([
            "send", "--keys", sending.keyring.keys, "--endpoint", standIn.url, "--cacert", standIn.certificate,
            "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
            "--device", deviceToken, "--retries", "10", "-b", "to a failing server"
        ])
        #expect(eventually(within: .seconds(20)) { standIn.log.count >= 1 })
        send.signal(SIGINT)
        let run = send.wait(atMost: .seconds(60))
        #expect(run.status == 130, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("fail \(deviceToken) 500 InternalServerError"), "reported as it stood: \(run.stdout)")
        // Ten retries with backoff would have taken about 40 s and reached the server 11 times.
        #expect(standIn.log.count <= 2, "\(standIn.log.count) requests reached the server")
    }

    @Test func aTokenCacheOthersCanReadIsMadePrivateAndSaid() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        #expect(try sending.send(to: listener, ["--device", deviceToken, "-b", "first"]).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: sending.tokenFile)
        let run = try sending.send(to: listener, ["--device", deviceToken, "-b", "second"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "warning: \(sending.tokenFile) could be read by group or others (mode 0644); it holds a live token, so it is now 0600\n")
        #expect(try FileManager.default.attributesOfItem(atPath: sending.tokenFile)[.posixPermissions] as? Int == 0o600)
        #expect(listener.finish().stdout.split(separator: "\n").count == 2)
    }

    @Test func aServersApnsIDIsPrintedOnlyWhenItIsAUUID() throws {
        let sending = try SendTests.Sending()
        let hostile = "a b\u{85}\u{9b}31m" + String(repeating: "x", count: 5_000)
        let script = String(decoding: try JSONSerialization.data(withJSONObject: ["apns_id": hostile]), as: UTF8.self)
        let standIn = try APNsStandIn(for: sending, script: script)
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", deviceToken, "-b", "x"])
        #expect(run.status == 0, "\(run.stderr)")
        let sent = try #require(standIn.log.first?["apns-id"] as? String)
        #expect(run.stdout == "ok \(deviceToken) \(sent)\n", "the id the request carried, not the server's bytes")
    }

    @Test func aCorrectedKeyIsNotHeldBackByTheWrongKeysToken() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let other = TemporaryFolder()
        let (wrongP8, _) = try PythonClients.keypair(in: other)
        let wrong = try sending.send(to: listener, ["--device", deviceToken, "-b", "x"], authKey: wrongP8)
        #expect(wrong.status == 69)
        #expect(wrong.stdout == "fail \(deviceToken) 403 InvalidProviderToken\n", "\(wrong.stdout)")
        // The .p8 fixed: its own token at once, not the cached one of the wrong key.
        let fixed = try sending.send(to: listener, ["--device", deviceToken, "--json", "-b", "fixed"])
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(jsonObject(fixed.stdout)["attempts"] as? Int == 1)
        let cached = jsonObject(try String(contentsOfFile: sending.tokenFile, encoding: .utf8))
        #expect(cached["key"] as? String == (try sending.keyFingerprint), "the cache names the key that signed it")
        // A cached token that claims this key but is refused as invalid (written by anything
        // else): one is made from the key and the device is sent again, once.
        let forged = try PythonClients.token(p8: wrongP8, kid: "KEY1234567", team: "TEAM123456", issuedAt: Int(Date().timeIntervalSince1970))
        sending.keyring.folder.write(
            "Keys/provider-token.TEAM123456.KEY1234567.json",
            #"{"token":"\#(forged)","iat":\#(Int(Date().timeIntervalSince1970)),"key":"\#(try sending.keyFingerprint)"}"#)
        let remade = try sending.send(to: listener, ["--device", deviceToken, "--json", "-b", "remade"])
        #expect(remade.status == 0, "\(remade.stderr)")
        #expect(jsonObject(remade.stdout)["attempts"] as? Int == 2)
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.map { $0["reason"] as? String ?? $0["body"] as? String ?? "" } == ["InvalidProviderToken", "fixed", "InvalidProviderToken", "remade"])
    }

    @Test func aDeviceGivenTwiceIsSentOnceAndSaidSo() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let other = String(repeating: "cd", count: 32)
        sending.folder.write("devices.txt", "\(deviceToken)\n\(other)\n# a comment\n\(other.uppercased())\n")
        let run = try sending.send(
            to: listener,
            [
                "--device", deviceToken, "--device", deviceToken,
                "--devices", sending.folder.file("devices.txt"), "-b", "once each"
            ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").map { String($0.split(separator: " ")[1]) } == [deviceToken, other])
        #expect(run.stderr == "note: 3 device tokens were given again and sent once (the first repeated: \(deviceToken), again at --device)\n", "\(run.stderr)")
        #expect(listener.finish().stdout.split(separator: "\n").count == 2, "one notification each")
    }

    @Test func tooFewDescriptorsIsOneLineNotACrash() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        func send(limit: Int) throws -> Run {
            try shell(
                """
                ulimit -n \(limit) && exec "$PUSHSEAL" send --keys "$KEYS" --endpoint "$URL" --cacert "$CERT" --topic "$TOPIC" \\
                  --auth-key "$P8" --key-id KEY1234567 --team-id TEAM123456 --device "$DEVICE" -b low
                """,
                environment: [
                    "KEYS": sending.keyring.keys, "URL": listener.url, "CERT": sending.keyring.keys + "/tls-cert.pem",
                    "TOPIC": topic, "P8": sending.p8, "DEVICE": deviceToken
                ])
        }
        // Was SIGILL: libdispatch traps when its timers find no descriptor left.
        let starved = try send(limit: 8)
        #expect(starved.status == 75, "\(starved.stderr)")
        #expect(starved.stderr.hasPrefix("error: send needs 11 free file descriptors") && starved.stderr.hasSuffix("raise it with ulimit -n\n"), "\(starved.stderr)")
        #expect(try send(limit: 64).status == 0)
        #expect(listener.finish().stdout.split(separator: "\n").count == 1)
    }

    @Test func theFingerprintSetFindsEveryRepeatAndNothingElse() {
        var generator = SystemRandomNumberGenerator()
        let values = Set((0..<50_000).map { _ in UInt64.random(in: 2...UInt64.max, using: &generator) })
        // Grown from empty, and sized ahead: the same answers.
        for reserved in [0, 60_000] {
            var set = FingerprintSet()
            if reserved > 0 { set.reserve(reserved) }
            #expect(values.allSatisfy { set.insert($0) }, "every distinct value is new once")
            #expect(values.allSatisfy { !set.insert($0) }, "and seen after")
        }
    }
}
