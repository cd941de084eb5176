import Foundation
import Testing

func records(_ output: String) -> [[String: Any]] {
    output.split(separator: "\n").map { jsonObject(String($0)) }
}

/// A tiny extension program: answers at once, unless the notification's fallback title says
/// "slow", in which case it sleeps past any test budget.
let answeringExtension = """
    read -r request
    case "$request" in *'"title":"slow"'*) sleep 5 ;; esac
    echo '{"title":"From the extension","body":"rewritten"}'
    """

@Suite("pushseal receive, as a process")
struct ReceiveCommandTests {
    @Test func eachKindOfInputGetsItsStatusAndNoPlaintextLeaksOnFailure() throws {
        let sender = try KeyringFixture()
        let good = try sender.encrypt(["-t", "Deploy", "-b", "api-7 is live", "--data", "build:=41"]).stdout
        let stranger = try KeyringFixture()
        let unknownKey = try stranger.encrypt(["-b", "sealed under a key the receiver lacks"]).stdout
        let secret = "tampered secret body"
        let original = try sender.encrypt(["-b", secret]).stdout
        let enc = envelope(in: original)
        var characters = Array(enc)
        characters[characters.count - 20] = characters[characters.count - 20] == "A" ? "B" : "A"
        let tampered = original.replacingOccurrences(of: enc, with: String(characters))
        let plain = #"{"aps":{"alert":{"title":"Plain","body":"not sealed"}}}"#
        let input = [good, unknownKey, tampered, plain, "garbage {", "[1,2]"].map { $0.trimmingCharacters(in: .newlines) }.joined(separator: "\n") + "\n"

        let run = try pushseal(["receive", "--json", "--keys", sender.keys, "-"], stdin: input)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = records(run.stdout)
        #expect(lines.map { $0["status"] as? String } == ["decrypted", "key-missing", "auth-failed", "passthrough", "malformed", "malformed"])
        #expect(lines.map { $0["seq"] as? Int } == [1, 2, 3, 4, 5, 6])
        #expect(lines[0]["title"] as? String == "Deploy" && lines[0]["body"] as? String == "api-7 is live")
        #expect((lines[0]["userInfo"] as? [String: Any])?["build"] as? Int == 41)
        #expect(lines[2]["title"] as? String == "Encrypted notification")
        #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret))
        #expect(lines[3]["body"] as? String == "not sealed")
    }

    @Test func textOutputShowsWhatTheUserSees() throws {
        let sender = try KeyringFixture()
        let payload = try sender.encrypt(["-t", "Backup", "-b", "nightly backup done"]).stdout
        let folder = TemporaryFolder()
        folder.write("payload.json", payload)
        let run = try pushseal(["receive", "--keys", sender.keys, "--placeholder-title", "Locked", folder.file("payload.json")])
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("#1 decrypted  \(folder.file("payload.json"))"))
        #expect(run.stdout.contains("\n   Backup\n   nightly backup done\n"))
    }

    @Test func tenThousandMixedLinesGiveTenThousandRecordsInOrder() throws {
        let sender = try KeyringFixture()
        let batch = (0..<500).map { #"{"title":"n\#($0)","body":"b"}"# }.joined(separator: "\n") + "\n"
        let payloads = try sender.encrypt(["--batch"], stdin: batch).stdout.split(separator: "\n").map(String.init)
        var lines: [String] = []
        for index in 0..<10_000 {
            switch index % 5 {
            case 0: lines.append("this is not json \(index)")
            case 1: lines.append(#"{"aps":{"alert":"plain \#(index)"}}"#)
            case 2: lines.append("{\"truncated\": ")
            default: lines.append(payloads[index % payloads.count])
            }
        }
        let run = try pushseal(["receive", "--json", "--keys", sender.keys, "-"], stdin: lines.joined(separator: "\n") + "\n")
        #expect(run.status == 0)
        let output = records(run.stdout)
        #expect(output.count == 10_000)
        #expect(output.compactMap { $0["seq"] as? Int } == Array(1...10_000))
        // Each sealed payload comes 20 times, spread over the workers: shown once, in input
        // order, and every repeat after it is a duplicate.
        // (Which of a payload's copies is shown is the workers' race; that one is, is not.)
        var shown: [Int: [String]] = [:]
        for record in output {
            let index = (record["seq"] as? Int ?? 1) - 1
            guard index % 5 >= 3 else { continue }
            shown[index % payloads.count, default: []].append(record["status"] as? String ?? "")
        }
        #expect(shown.values.reduce(0) { $0 + $1.count } == 4_000)
        #expect(shown.values.allSatisfy { $0.filter { $0 == "decrypted" }.count == 1 && $0.filter { $0 == "duplicate" }.count == $0.count - 1 })
        #expect(output.filter { $0["status"] as? String == "malformed" }.count == 4_000)
    }

    @Test func parallelBatchAndReceiveKeepInputOrder() throws {
        let sender = try KeyringFixture()
        let alerts = (1...3_000).map { #"{"title":"n\#($0)"}"# }.joined(separator: "\n") + "\n"
        let sealed = try sender.encrypt(["--batch", "--jobs", "4"], stdin: alerts)
        #expect(sealed.status == 0)
        let received = try pushseal(["receive", "--json", "--jobs", "4", "--keys", sender.keys, "-"], stdin: sealed.stdout)
        let output = records(received.stdout)
        #expect(output.compactMap { $0["title"] as? String } == (1...3_000).map { "n\($0)" })
        // The same 3,000 again, to a receiver that remembers in a store of its own.
        let memory = TemporaryFolder()
        let serial = try pushseal(["receive", "--json", "--jobs", "1", "--keys", sender.keys, "--seen", memory.file("seen"), "-"], stdin: sealed.stdout)
        #expect(records(serial.stdout).compactMap { $0["title"] as? String } == (1...3_000).map { "n\($0)" })
    }

    @Test func sleepingExtensionIsCutAtTheBudgetWhileAFastOneIsNotHeldBack() throws {
        let folder = TemporaryFolder()
        folder.write("extension.sh", answeringExtension)
        let slow = #"{"aps":{"alert":{"title":"slow","body":"x"},"mutable-content":1}}"#
        let fast = #"{"aps":{"alert":{"title":"fast","body":"x"},"mutable-content":1}}"#
        let run = try pushseal(["receive", "--json", "--budget", "300ms", "--expiry-grace", "200ms", "--extension", "sh \(folder.file("extension.sh"))", "-"], stdin: slow + "\n" + fast + "\n")
        #expect(run.status == 0, "\(run.stderr)")
        let output = records(run.stdout)
        #expect(output.count == 2)
        #expect(output[0]["status"] as? String == "original")
        #expect(output[0]["title"] as? String == "slow")
        let slowElapsed = output[0]["elapsed_ms"] as? Double ?? 0
        #expect(slowElapsed >= 300)
        #expect(output[1]["status"] as? String == "modified")
        #expect(output[1]["title"] as? String == "From the extension")
        #expect((output[1]["elapsed_ms"] as? Double ?? .infinity) < slowElapsed)
    }

    @Test func extensionThatAnswersItsSIGTERMIsShownAsDeadline() throws {
        let folder = TemporaryFolder()
        folder.write(
            "trap.sh",
            """
            trap 'echo "{\\"title\\":\\"Best effort\\",\\"body\\":\\"at expiry\\"}"; exit 0' TERM
            sleep 5 & wait
            """)
        let request = #"{"aps":{"alert":{"title":"F","body":"x"},"mutable-content":1}}"#
        let run = try pushseal(["receive", "--json", "--budget", "250ms", "--extension", "sh \(folder.file("trap.sh"))", "-"], stdin: request + "\n")
        let record = records(run.stdout).first ?? [:]
        #expect(record["status"] as? String == "deadline")
        #expect(record["title"] as? String == "Best effort")
        #expect(record["elapsed_ms"] as? Double ?? 0 >= 250)
    }

    @Test(arguments: [
        ("exit 3", "exited with status 3"),
        ("kill -SEGV $$", "killed by signal 11"),
        ("echo not json", "not a JSON content object"),
        ("echo '{\"title\":\"\",\"body\":\"\",\"badge\":1}'", "no alert text"),
        ("python3 -c 'x = bytearray(120_000_000); import time; time.sleep(5)'", "passed the 24 MB limit")
    ])
    func crashesKillsAndUnusableOutputShowTheOriginal(command: String, reason: String) throws {
        let request = #"{"aps":{"alert":{"title":"Original","body":"as sent"},"mutable-content":1}}"#
        let run = try pushseal(["receive", "--json", "--extension", command, "-"], stdin: request + "\n")
        let record = records(run.stdout).first ?? [:]
        #expect(record["status"] as? String == "original", "\(command)")
        #expect(record["title"] as? String == "Original")
        #expect((record["reason"] as? String ?? "").contains(reason), "\(record)")
    }

    /// One timer watches every running program's memory, children included: of three
    /// programs running at once, only the one whose child grows past the limit is killed.
    @Test func onlyTheProgramPastTheMemoryLimitIsKilled() throws {
        let folder = TemporaryFolder()
        folder.write(
            "grow.py",
            """
            import json, sys, time
            title = json.load(sys.stdin)["content"]["title"]
            if title == "big":
                x = bytearray(120_000_000)
                time.sleep(5)
            time.sleep(0.3)
            print(json.dumps({"title": "seen " + title}))
            """)
        let lines = ["small", "big", "small too"].map { #"{"aps":{"alert":{"title":"\#($0)","body":"b"},"mutable-content":1}}"# }
        // `; true` keeps bash in front, so the program is a child of the extension's process.
        let run = try pushseal(
            ["receive", "--json", "--extension", "python3 \(folder.file("grow.py")); true", "-"],
            stdin: lines.joined(separator: "\n") + "\n")
        let byTitle = Dictionary(records(run.stdout).map { ($0["title"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        let status = { (title: String) in byTitle[title]?["status"] as? String }
        let bigReason = byTitle["big"]?["reason"] as? String ?? ""
        #expect(status("seen small") == "modified", "\(byTitle)")
        #expect(status("seen small too") == "modified", "\(byTitle)")
        #expect(status("big") == "original", "\(byTitle)")
        #expect(bigReason.contains("passed the 24 MB limit"), "\(byTitle)")
    }

    @Test func extensionGetsTheRequestOnStdin() throws {
        let folder = TemporaryFolder()
        folder.write(
            "echo.py",
            """
            import json, sys
            request = json.load(sys.stdin)
            content = request["content"]
            print(json.dumps({"title": request["identifier"], "body": content["userInfo"]["custom"] + " " + str(request["budget_ms"])}))
            """)
        let request = #"{"apns-id":"ABC-1","payload":{"aps":{"alert":{"title":"F","body":"x"},"mutable-content":1},"custom":"value"}}"#
        let run = try pushseal(["receive", "--json", "--budget", "2s", "--extension", "python3 \(folder.file("echo.py"))", "-"], stdin: request + "\n")
        let record = records(run.stdout).first ?? [:]
        #expect(record["apns-id"] as? String == "ABC-1")
        #expect(record["title"] as? String == "ABC-1")
        #expect(record["body"] as? String == "value 2000")
    }

    @Test func spoolFolderMovesFilesOnlyAfterTheirRecord() throws {
        let sender = try KeyringFixture()
        let spool = TemporaryFolder()
        for index in 1...5 {
            spool.write("\(index).json", try sender.encrypt(["-t", "file \(index)"]).stdout)
        }
        spool.write("sim.apns", #"{"Simulator Target Bundle":"com.example.app","aps":{"alert":"from simctl"}}"#)
        spool.write("broken.json", "{ not json")
        spool.write("notes.txt", "not a payload")
        let run = try pushseal(["receive", "--json", "--watch", spool.path, "--once", "--keys", sender.keys])
        #expect(run.status == 0, "\(run.stderr)")
        let output = records(run.stdout)
        #expect(output.count == 7)
        let files = FileManager.default
        #expect(try files.contentsOfDirectory(atPath: spool.file("processed")).sorted() == ["1.json", "2.json", "3.json", "4.json", "5.json", "sim.apns"])
        #expect(try files.contentsOfDirectory(atPath: spool.file("failed")).sorted() == ["broken.json", "broken.json.reason"])
        #expect(spool.read("failed/broken.json.reason").hasPrefix("not JSON"))
        #expect(try files.contentsOfDirectory(atPath: spool.path).sorted() == ["failed", "notes.txt", "processed"])
    }

    @Test func killedWatcherLosesNothingAndRepeatsAtMostTheInFlight() async throws {
        let sender = try KeyringFixture()
        let spool = TemporaryFolder()
        let staging = TemporaryFolder()
        let payloads = try sender.encrypt(["--batch"], stdin: (1...300).map { #"{"title":"n\#($0)"}"# }.joined(separator: "\n")).stdout.split(separator: "\n")
        let outputs = TemporaryFolder()

        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: pushsealBinary)
        watcher.arguments = ["receive", "--json", "--watch", spool.path, "--keys", sender.keys]
        watcher.standardOutput = FileHandle(
            forWritingAtPath: {
                outputs.write("first", "")
                return outputs.file("first")
            }())
        try watcher.run()
        // Files stream in (written elsewhere, renamed in) while the watcher runs.
        for (index, payload) in payloads.enumerated() {
            let name = String(format: "%04d.json", index)
            staging.write(name, String(payload))
            try FileManager.default.moveItem(atPath: staging.file(name), toPath: spool.file(name))
            // Halfway, until the watcher is at work.
            if index == 150 { #expect(eventually { !outputs.read("first").isEmpty }) }
        }
        // Killed in the middle of the rest.
        #expect(eventually { records(outputs.read("first")).count >= 200 })
        kill(watcher.processIdentifier, SIGKILL)
        watcher.waitUntilExit()

        let second = try pushseal(["receive", "--json", "--watch", spool.path, "--once", "--keys", sender.keys])
        #expect(second.status == 0)
        let all = records(outputs.read("first")) + records(second.stdout)
        var seen: [String: Int] = [:]
        for record in all { seen[record["source"] as? String ?? "?", default: 0] += 1 }
        #expect(seen.count == 300)
        #expect(seen.values.allSatisfy { $0 == 1 || $0 == 2 })
        // A file the first watcher had opened when it was killed is a duplicate the second
        // time: shown once across the restart.
        #expect(all.allSatisfy { ["decrypted", "duplicate"].contains($0["status"] as? String) })
        var shown: [String: Int] = [:]
        for record in all where record["status"] as? String == "decrypted" { shown[record["source"] as? String ?? "?", default: 0] += 1 }
        #expect(shown.values.allSatisfy { $0 == 1 })
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.file("processed")).count == 300)
    }

    @Test func receiveNeedsAnInputAndAUsableKeyring() throws {
        let none = parsed(["receive"])
        #expect(none.status == 64 && none.stderr.contains("nothing to receive"))
        let folder = TemporaryFolder()
        let noKeys = try pushseal(["receive", "--keys", folder.file("nothing"), "-"], stdin: "")
        #expect(noKeys.status == 66 && noKeys.stderr.contains("pushseal keys init"))
        let badBudget = parsed(["receive", "--budget", "soon", "-"])
        #expect(badBudget.status == 64)
        let sender = try KeyringFixture()
        // Every FILE is checked before anything is delivered: the good one before the typo gets no record.
        let good = folder.file("good.json")
        try sender.encrypt(["-t", "T"]).stdout.write(toFile: good, atomically: true, encoding: .utf8)
        let missing = try pushseal(["receive", "--json", "--keys", sender.keys, good, folder.file("missing.json")])
        #expect(missing.status == 66 && missing.stdout.isEmpty)
        #expect(missing.stderr == "error: cannot read \(folder.file("missing.json")): No such file or directory\n")
    }
}
