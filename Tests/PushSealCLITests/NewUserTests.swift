import Foundation
import Testing

@testable import PushSealCLI

/// What a new user trips on: help that matches the binary, and keys that keep their kind.
@Suite("what a new user meets")
struct NewUserTests {
    @Test func theRootHelpListsEveryExitCode() throws {
        let help = try pushseal(["--help"]).stdout
        for status in ExitStatus.allCases {
            #expect(help.contains("\(status.rawValue) \(status.label)"), "\(status)")
        }
        #expect(help.contains("69 ") && help.contains("75 "))
    }

    @Test func theKeysHelpListsEachSubcommandAsItsOwnUsageSays() throws {
        let help = try pushseal(["keys", "--help"]).stdout
        #expect(help.contains("  import SHARE|FILE|-  "))
        for spec in Specs.keys {
            #expect(help.contains("  \(spec.synopsis)  ") && help.contains(spec.overview), "\(spec.name)")
            let own = try pushseal(spec.name + ["--help"]).stdout
            #expect(own.contains("USAGE: pushseal keys \(spec.synopsis)"), "\(spec.name)")
        }
    }

    @Test func helpTellsWhatTheBinaryDoes() throws {
        #expect(try pushseal(["decrypt", "--help"]).stdout.contains("a bare envelope"))
        #expect(try pushseal(["keys", "import", "--help"]).stdout.contains("'keys promote KID' makes it the key that encrypts"))
        #expect(try pushseal(["keys", "add", "--help"]).stdout.contains("The key is of the primary's kind"))
    }

    /// Every kind through add, promote and rotate: a key keeps its kind, and a device's public
    /// key, which only the device can replace, is not rotated here.
    @Test func rotationKeepsTheKindAndRefusesToReplaceADevicesPublicKey() throws {
        func kinds(_ keyring: KeyringFixture) throws -> [String: String] {
            let list = try keyring.keysCommand(["list", "--json"]).stdout
            let keys = try JSONSerialization.jsonObject(with: Data(list.utf8)) as! [[String: Any]]
            return Dictionary(uniqueKeysWithValues: keys.map { ($0["id"] as! String, $0["kind"] as! String) })
        }
        let sender = try KeyringFixture()
        let rotated = try sender.keysCommand(["rotate"]).stdout.trimmingCharacters(in: .newlines)
        #expect(try kinds(sender)[rotated] == "secret")

        let device = TemporaryFolder()
        let deviceKeys = device.file("Keys")
        #expect(try pushseal(["keys", "init", "--recipient", "--keys", deviceKeys]).status == 0)
        let next = try pushseal(["keys", "rotate", "--keys", deviceKeys]).stdout.trimmingCharacters(in: .newlines)
        let added = try pushseal(["keys", "add", "--keys", deviceKeys]).stdout.trimmingCharacters(in: .newlines)
        let deviceList = try JSONSerialization.jsonObject(with: Data(try pushseal(["keys", "list", "--json", "--keys", deviceKeys]).stdout.utf8)) as! [[String: Any]]
        #expect(deviceList.filter { [next, added].contains($0["id"] as! String) }.allSatisfy { $0["kind"] as? String == "private" })
        let pair = try sender.keysCommand(["add", "--recipient"]).stdout.trimmingCharacters(in: .newlines)
        #expect(try kinds(sender)[pair] == "private")

        // A sender whose primary is the device's public key: promote works, rotate is refused.
        let line = try pushseal(["keys", "export", "--public", "--keys", deviceKeys]).stdout
        let imported = try sender.keysCommand(["import", "-"], stdin: line).stdout.trimmingCharacters(in: .newlines)
        #expect(try sender.keysCommand(["promote", imported]).status == 0)
        let before = try String(contentsOfFile: sender.keys + "/keyring.json", encoding: .utf8)
        let refused = try sender.keysCommand(["rotate"])
        #expect(refused.status == 65 && refused.stdout.isEmpty)
        #expect(
            refused.stderr
                == "error: the primary key \(imported) is a device's public key, and only the device can make its successor: run 'pushseal keys rotate' there, then 'keys export --public' there and 'keys import' the line here\n"
        )
        #expect(try String(contentsOfFile: sender.keys + "/keyring.json", encoding: .utf8) == before, "the keyring is unchanged")
        #expect(try sender.encrypt(["-t", "still sealed to the device"]).stdout.contains("\"ps2.\(imported)."))
    }

    /// `| head -c0` is a reader that has what it wanted: 141 and no line, as cat; a full disk
    /// stays a failure (74, one line).
    @Test func aClosedReaderEndsQuietlyAndAFullDiskDoesNot() throws {
        let keyring = try KeyringFixture()
        let alerts = String(repeating: #"{"title":"x"}"# + "\n", count: 3_000)
        let closed = try shell(#""$PUSHSEAL" encrypt --batch --keys "$K" | head -c0; echo "${PIPESTATUS[0]}""#, stdin: alerts, environment: ["K": keyring.keys])
        #expect(closed.stdout == "141\n" && closed.stderr.isEmpty, "\(closed.stderr)")
        let full = try shell(#""$PUSHSEAL" encrypt --batch --keys "$K" > /dev/full"#, stdin: alerts, environment: ["K": keyring.keys])
        #expect(full.status == 74 && full.stderr == "error: cannot write to stdout: No space left on device\n")
    }

    @Test func blankLinesAreNotCountedAsAlertsAndABadLineSaysWhatALineShouldBe() throws {
        let keyring = try KeyringFixture()
        let run = try keyring.encrypt(["--batch"], stdin: "{\"title\":\"a\"}\n\n   \n{title:1}\n")
        #expect(run.status == 65 && run.stdout.split(separator: "\n").count == 1)
        #expect(
            run.stderr == """
                error: line 4: not JSON (expected a member name in quotes at byte 1); each line is one alert, such as {"title":"Deploy","body":"done"}
                error: 1 of 2 alerts were not encrypted

                """)
    }

    /// `decrypt` on a file of payloads, one per line: one alert per line, each failure with its line.
    @Test func decryptOpensJSONLinesOnePayloadEach() throws {
        let keyring = try KeyringFixture()
        let payloads = try (1...3).map { try keyring.encrypt(["-t", "n\($0)"]).stdout }.joined()
        let opened = try pushseal(["decrypt", "--keys", keyring.keys, "-"], stdin: payloads + "\n")
        #expect(opened.status == 0 && opened.stderr.isEmpty)
        #expect(opened.stdout.split(separator: "\n").map { jsonObject(String($0))["title"] as? String } == ["n1", "n2", "n3"])
        let bad = try pushseal(["decrypt", "--keys", keyring.keys, "-"], stdin: payloads + "not a payload\n")
        #expect(bad.status == 65 && bad.stdout.split(separator: "\n").count == 3)
        #expect(bad.stderr.hasPrefix("error: line 4: ") && bad.stderr.hasSuffix("error: 1 of 4 payloads were not opened\n"))
        // One payload printed over several lines is still one payload.
        let pretty = try keyring.encrypt(["-t", "pretty"]).stdout.replacingOccurrences(of: ",\"", with: ",\n  \"")
        #expect(jsonObject(try pushseal(["decrypt", "--keys", keyring.keys, "-"], stdin: pretty).stdout)["title"] as? String == "pretty")
    }

    /// `1h30m` wherever a duration is taken, with the same bounds.
    @Test func durationsOfSeveralPartsWorkWhereverADurationIsTaken() throws {
        let keyring = try KeyringFixture()
        let sealed = try keyring.encrypt(["-t", "T", "--ttl", "1h30m"])
        let alert = jsonObject(try keyring.decrypt(payload: sealed.stdout).stdout)
        #expect((alert["exp"] as! Int) - (alert["sent"] as! Int) == 5_400)
        let tooLong = try keyring.encrypt(["-t", "T", "--ttl", "365d1s"])
        #expect(tooLong.status == 64 && tooLong.stderr.hasPrefix("error: --ttl"))
        #expect(try keyring.keysCommand(["rotate", "--grace", "1d12h"]).status == 0)
        let list = try JSONSerialization.jsonObject(with: Data(try keyring.keysCommand(["list", "--json"]).stdout.utf8)) as! [[String: Any]]
        #expect(list.contains { $0["state"] as? String == "enabled" && $0["expires"] != nil })
    }

    /// A missing command or subcommand is a usage error (64) everywhere, a mistyped one gets
    /// the word meant, and an option before the command belongs to that command.
    @Test(arguments: [
        ([String](), "error: missing a command (keys, encrypt, decrypt, doctor, receive, send, run, token, webapp, completions, manual)"),
        (["keys"], "error: missing a keys subcommand (init, add, promote, rotate, list, export, import, disable, enable, destroy, prune, vapid)"),
        (["completions"], "error: which shell? (bash, zsh, fish)"),
        (["keys", "rotat"], "error: unknown keys subcommand 'rotat' (did you mean 'rotate'?)"),
        (["keys", "rotate", "--grce", "1d"], "error: unknown option '--grce' (did you mean '--grace'?)"),
        (["encrpyt", "-t", "x"], "error: unknown command 'encrpyt' (did you mean 'encrypt'?)"),
        (["frobnicate"], "error: unknown command 'frobnicate' (commands: keys, encrypt, decrypt, doctor, receive, send, run, token, webapp, completions, manual)"),
        (["--keys", "K"], "error: options go after the command, as in 'pushseal keys list --keys DIR'")
    ])
    func usageMistakesExit64WithTheWordMeant(_ arguments: [String], line: String) throws {
        let run = parsed(arguments)
        #expect(run.status == 64 && run.stdout.isEmpty)
        #expect(run.stderr.split(separator: "\n").first.map(String.init) == line)
    }

    @Test func anOptionBeforeTheCommandBelongsToIt() throws {
        let keyring = try KeyringFixture()
        let list = try pushseal(["--keys", keyring.keys, "keys", "list"])
        #expect(list.status == 0 && list.stdout.hasPrefix("KID"), "\(list.stderr)")
        let sealed = try pushseal(["--keys", keyring.keys, "-t", "early", "encrypt"])
        #expect(jsonObject(try keyring.decrypt(payload: sealed.stdout).stdout)["title"] as? String == "early")
    }

    /// A listener that cannot bind reports that alone: no word of a certificate it will not use.
    @Test func aListenerThatCannotBindSaysOnlyWhy() throws {
        let keyring = try KeyringFixture()
        let taken = try shell(
            """
            coproc HOLD { exec python3 -c 'import socket, sys; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); sys.stdin.read()'; }
            read -r port <&"${HOLD[0]}"
            "$PUSHSEAL" receive --listen "127.0.0.1:$port" --keys "$K"
            status=$?
            kill "$HOLD_PID"
            exit $status
            """, environment: ["K": keyring.keys])
        #expect(taken.status == 69)
        #expect(taken.stderr.split(separator: "\n").count == 1 && taken.stderr.hasPrefix("error: "), "\(taken.stderr)")
        let foreign = try pushseal(["receive", "--listen", "192.0.2.1:0", "--keys", keyring.keys])
        #expect(foreign.status == 69)
        #expect(foreign.stderr.split(separator: "\n").count == 1 && foreign.stderr.hasPrefix("error: "), "\(foreign.stderr)")
    }

    /// `keys list` and `keys list --json`: one model, two renderings.
    @Test func keysListShowsTheSameStatesAsTextAndAsJSON() throws {
        let keyring = try KeyringFixture()
        let first = try keyring.keysCommand(["list", "--json"]).stdout.split(separator: "\"")[3]
        _ = try keyring.keysCommand(["rotate", "--grace", "0s"])
        let second = try keyring.keysCommand(["rotate", "--grace", "30d"]).stdout.trimmingCharacters(in: .newlines)
        _ = try keyring.keysCommand(["rotate", "--grace", "0s"])
        _ = try keyring.keysCommand(["destroy", String(first)])
        func both() throws -> (text: [String: String], json: [String: (state: String, expired: Bool)]) {
            let rows = try keyring.keysCommand(["list"]).stdout.split(separator: "\n").dropFirst()
                .map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
            let list = try JSONSerialization.jsonObject(with: Data(try keyring.keysCommand(["list", "--json"]).stdout.utf8)) as! [[String: Any]]
            return (
                Dictionary(uniqueKeysWithValues: rows.map { ($0[0], $0[2]) }),
                Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as! String, ($0["state"] as! String, $0["expired"] as! Bool)) })
            )
        }
        let (text, json) = try both()
        #expect(text.mapValues { $0 } == json.mapValues(\.state))
        #expect(json[String(first)]! == ("destroyed", true), "destroyed after its grace: still expired")
        #expect(json[second]! == ("expired", true))
        #expect(Set(json.values.map(\.state)) == ["destroyed", "enabled", "expired", "primary"])
    }

    /// One placeholder body per reason, each configurable; --placeholder-body sets them all.
    @Test func thePlaceholderSaysWhyAndEachReasonIsConfigurable() throws {
        let sender = try KeyringFixture()
        let other = try KeyringFixture()
        let expiring = try sender.encrypt(["-t", "soon", "--ttl", "1s"]).stdout
        let foreign = try other.encrypt(["-t", "x"]).stdout
        let object = jsonObject(try sender.encrypt(["-t", "y"]).stdout)
        let tampered = String(decoding: try JSONSerialization.data(withJSONObject: object.merging(["enc": (object["enc"] as! String).dropLast(3) + "AAA"]) { $1 }), as: UTF8.self)
        let input = [expiring, foreign, tampered].map { $0.trimmingCharacters(in: .newlines) }.joined(separator: "\n") + "\n"
        func bodies(_ options: [String]) throws -> [String] {
            // Received five seconds on (the test clock), past the one-second ttl.
            let run = try pushseal(
                ["receive", "--json", "--keys", sender.keys] + options + ["-"], stdin: input,
                environment: ["PUSHSEAL_TEST_CLOCK_OFFSET": "5"])
            return run.stdout.split(separator: "\n").map { jsonObject(String($0))["body"] as? String ?? "?" }
        }
        #expect(
            try bodies([]) == [
                "This message has expired.", "This device does not have the key to open this message.",
                "This message could not be decrypted on this device."
            ])
        #expect(
            try bodies(["--placeholder-for", "expired=Too late", "--placeholder-for", "key-missing=Pair again"])
                == ["Too late", "Pair again", "This message could not be decrypted on this device."])
        #expect(try bodies(["--placeholder-body", "Open the app"]) == ["Open the app", "Open the app", "Open the app"])
        let bad = parsed(["receive", "--placeholder-for", "late=x", "--keys", sender.keys, "-"])
        #expect(bad.status == 64 && bad.stderr.hasPrefix("error: --placeholder-for takes REASON=BODY, with REASON one of key-missing, auth-failed, expired, deadline"))
    }

    /// `pushseal token` prints the provider token send uses, from the same cache, and curl
    /// with it reaches a listener that checks signatures (the README's curl example).
    @Test func tokenPrintsTheCachedProviderTokenForCurl() throws {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        let key = try PythonClients.keypair(in: folder)
        let arguments = ["token", "--auth-key", key.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456", "--keys", keyring.keys]
        let first = try pushseal(arguments)
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first.stderr)")
        let token = first.stdout.trimmingCharacters(in: .newlines)
        #expect(token.split(separator: ".").count == 3 && first.stdout.hasSuffix("\n"))
        #expect(try pushseal(arguments).stdout == first.stdout, "reused from the cache, as send reuses it")
        let cached = try String(contentsOfFile: keyring.keys + "/provider-token.TEAM123456.KEY1234567.json", encoding: .utf8)
        #expect(cached.contains(token))
        let listener = try Listener([
            "--plaintext", "--json", "--keys", keyring.keys,
            "--provider-key", "KEY1234567=\(key.publicKey)", "--team", "TEAM123456"
        ])
        let payload = try keyring.encrypt(["-t", "By curl", "-b", "with pushseal's token"]).stdout
        let reply = try curl(
            listener.url + "/3/device/" + deviceToken,
            headers: ["apns-topic: \(topic)", "authorization: bearer \(token)"], body: payload)
        #expect(reply.status == 200)
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.first?["title"] as? String == "By curl")
        let missing = parsed(["token", "--auth-key", key.p8, "--key-id", "KEY1234567"])
        #expect(missing.status == 64 && missing.stderr.hasPrefix("error: --team-id is required"))
    }

    /// `--truncate`: a long body is cut to fit, on a character boundary, ending with "…".
    @Test func truncateCutsALongBodyToFitOnACharacterBoundary() throws {
        let keyring = try KeyringFixture()
        let family = "👩‍👩‍👧"
        let long = String(repeating: family, count: 400)
        let refused = try keyring.encrypt(["-t", "T", "-b", long])
        #expect(refused.status == 65 && refused.stderr.contains("over APNs' 4096-byte limit"))
        let cut = try keyring.encrypt(["-t", "T", "-b", long, "--truncate"])
        #expect(cut.status == 0 && cut.stdout.utf8.count <= 4097)
        #expect(cut.stderr.hasPrefix("note: the body was cut to ") && cut.stderr.hasSuffix(" of its 400 characters to fit APNs' 4096-byte payload\n"))
        let body = try #require(jsonObject(try keyring.decrypt(payload: cut.stdout).stdout)["body"] as? String)
        #expect(body.hasSuffix("…") && body.dropLast().allSatisfy { String($0) == family } && body.count > 10)
        // From stdin, more than a payload holds, as `seq 100000 | pushseal encrypt --truncate -` gives it.
        let numbers = (1...20_000).map(String.init).joined(separator: "\n")
        let piped = try keyring.encrypt(["-t", "T", "--truncate", "-"], stdin: numbers)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect((jsonObject(try keyring.decrypt(payload: piped.stdout).stdout)["body"] as? String)?.hasPrefix("1\n2\n3\n") == true)
        // And each batch line.
        let line = #"{"title":"x","body":""# + String(repeating: "y", count: 5_000) + #""}"# + "\n"
        let batch = try keyring.encrypt(["--batch", "--truncate"], stdin: line + line)
        #expect(batch.status == 0 && batch.stdout.split(separator: "\n").count == 2)
    }

    /// `--then CMD`: the user's program after the decrypting extension, on the opened alert,
    /// within the same budget, with the placeholder rules when the alert cannot be opened.
    @Test func thenRunsTheUsersProgramOnTheOpenedAlert() throws {
        let sender = try KeyringFixture()
        let folder = TemporaryFolder()
        folder.write(
            "then.py",
            """
            #!/usr/bin/env python3
            import json, sys
            request = json.load(sys.stdin)
            open(sys.argv[1], "a").write(json.dumps(request) + "\\n")
            content = request["content"]
            print(json.dumps({"title": content["title"] + " ✓", "body": content["body"] + " (" + content["userInfo"]["build"] + ")"}))
            """)
        chmod(folder.file("then.py"), 0o755)
        let seen = folder.file("seen.jsonl")
        let payload = try sender.encrypt(["-t", "Build 42", "-b", "passed", "--data", "build=api-7"]).stdout
        let other = try KeyringFixture()
        let foreign = try other.encrypt(["-t", "not for this device"]).stdout
        let input = payload.trimmingCharacters(in: .newlines) + "\n" + foreign
        let run = try pushseal(["receive", "--json", "--keys", sender.keys, "--then", "\(folder.file("then.py")) \(seen)", "-"], stdin: input)
        #expect(run.status == 0, "\(run.stderr)")
        let records = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.map { $0["status"] as? String } == ["modified", "key-missing"])
        #expect(records[0]["title"] as? String == "Build 42 ✓" && records[0]["body"] as? String == "passed (api-7)")
        #expect(records[0]["kid"] as? String != nil)
        #expect(records[1]["title"] as? String == "Encrypted notification")
        // The program saw the opened alert, once: never for the message that did not open.
        let requests = folder.read("seen.jsonl").split(separator: "\n").map { jsonObject(String($0)) }
        #expect(requests.count == 1 && (requests[0]["content"] as? [String: Any])?["title"] as? String == "Build 42")

        // Each run below gets a message of its own: the keyring's receiver showed this one already.
        let again = { try sender.encrypt(["-t", "Build 42", "-b", "passed", "--data", "build=api-7"]).stdout }
        let failing = try pushseal(["receive", "--json", "--keys", sender.keys, "--then", "exit 3", "-"], stdin: try again())
        let failed = jsonObject(failing.stdout)
        #expect(failed["status"] as? String == "decrypted" && failed["title"] as? String == "Build 42")
        #expect((failed["reason"] as? String)?.hasSuffix("the extension exited with status 3") == true)

        let marker = "then-slow-\(UUID().uuidString.prefix(8))"
        let slow = try pushseal(
            [
                "receive", "--json", "--keys", sender.keys, "--budget", "300ms", "--expiry-grace", "200ms",
                "--then", "exec -a \(marker) sleep 30", "-"
            ], stdin: try again())
        let late = jsonObject(slow.stdout)
        #expect(late["status"] as? String == "deadline" && late["title"] as? String == "Build 42", "the opened alert, at once")
        #expect(processesRunning(marker) == 0, "none outlives the receiver")

        let both = parsed(["receive", "--keys", sender.keys, "--then", "true", "--extension", "true", "-"])
        #expect(both.status == 64 && both.stderr.hasPrefix("error: give --extension"))
        let missing = try pushseal(["receive", "--keys", sender.keys, "--then", "./no-such-program", "-"], stdin: payload)
        #expect(missing.status == 66 && missing.stdout.isEmpty)
    }
}
