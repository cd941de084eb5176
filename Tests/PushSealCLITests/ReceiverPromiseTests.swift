import Foundation
import Testing

/// An eligible payload of about `size` bytes, padded with a custom key.
func eligiblePayload(bytes size: Int, title: String = "T") -> String {
    let head = #"{"aps":{"alert":{"title":"\#(title)","body":"B"},"mutable-content":1},"pad":""#
    return head + String(repeating: "x", count: max(0, size - head.count - 2)) + #""}"#
}

/// The receiver's promises of the README: the deadline, a clean stop, a spool folder that
/// never loses or repeats, and rotations followed at once. Each test fails on a receiver
/// that breaks the promise it names.
@Suite("receiver promises")
struct ReceiverPromiseTests {
    // MARK: The deadline holds whatever the extension does

    @Test func deadlineHoldsWhenTheExtensionNeverReadsItsRequest() throws {
        let folder = TemporaryFolder()
        folder.write("payload.json", eligiblePayload(bytes: 4_000))
        let receiver = try RunningProcess([
            "receive", "--json", "--extension", "sleep 1000", "--budget", "300ms", "--expiry-grace", "200ms",
            folder.file("payload.json")
        ])
        let run = receiver.wait()
        #expect(run.status == 0, "\(run.stderr)")
        let record = try #require(records(run.stdout).first)
        #expect(record["status"] as? String == "original")
        // Delivered at the deadline plus at most the grace, not when the program exits.
        let elapsed = try #require(record["elapsed_ms"] as? Double)
        #expect(elapsed >= 300 && elapsed < 2_000, "elapsed \(elapsed) ms")
    }

    @Test func deadlineHoldsWhenTheExtensionIgnoresTheExpiry() throws {
        let folder = TemporaryFolder()
        folder.write("payload.json", eligiblePayload(bytes: 1_000))
        let run = try pushseal([
            "receive", "--json", "--extension", "trap '' TERM; sleep 1000", "--budget", "200ms", "--expiry-grace", "200ms",
            folder.file("payload.json")
        ])
        let record = try #require(records(run.stdout).first)
        #expect(record["status"] as? String == "original")
        let elapsed = try #require(record["elapsed_ms"] as? Double)
        #expect(elapsed >= 400 && elapsed < 2_000, "elapsed \(elapsed) ms")
    }

    /// Records leave through a writer of their own for every input: a reader that stops
    /// reading for seconds holds up no deadline. Three hundred extensions that ignore the
    /// expiry are ended by the runner's timers at 400 ms; once stdout's pipe is full, a
    /// timer that had to write its record itself would wait there, and the deadlines after
    /// it with it (most came at 850 ms or later when it did).
    @Test(arguments: ["files", "stdin", "watch"])
    func aReaderThatStallsHoldsUpNoDeadline(input: String) throws {
        let folder = TemporaryFolder()
        let spool = folder.file("spool")
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        var lines: [String] = []
        for index in 0..<300 {
            let payload = eligiblePayload(bytes: 3_900, title: "n\(index)")
            lines.append(payload)
            try payload.write(toFile: spool + "/" + String(format: "%03d.json", index), atomically: true, encoding: .utf8)
        }
        folder.write("input.jsonl", lines.joined(separator: "\n") + "\n")
        let inputs =
            switch input {
            case "files": #""$S"/*.json"#
            case "stdin": #"- < "$F""#
            default: #"--watch "$S" --once"#
            }
        let run = try shell(
            """
            "$PUSHSEAL" receive --json --budget 300ms --expiry-grace 100ms --max-extensions 1024 \\
              --extension "trap '' TERM; sleep 3" \(inputs) | (sleep 4; cat)
            """, environment: ["S": spool, "F": folder.file("input.jsonl")])
        #expect(run.status == 0, "\(run.stderr)")
        let elapsed = records(run.stdout).compactMap { $0["elapsed_ms"] as? Double }
        #expect(elapsed.count == 300)
        let late = elapsed.filter { $0 > 700 }
        #expect(late.count < 10, "\(late.count) of 300 deadlines of 400 ms came late, the latest at \(late.max() ?? 0) ms")
        if input == "watch" {
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool + "/processed").count == 300)
        }
    }

    @Test(arguments: [
        (eligiblePayload(bytes: 300_000), "more than the 65536 bytes a payload input can be at most"),
        (eligiblePayload(bytes: 60_000), "4096-byte limit"),
        (eligiblePayload(bytes: 4_097), "4096-byte limit"),
        (#"{"headers":{"apns-push-type":"voip"},"payload":"# + eligiblePayload(bytes: 5_121) + "}", "5120-byte limit for voip")
    ])
    func payloadsOverAPNsLimitAreMalformedAndRunNoExtension(_ payload: String, reason: String) throws {
        let folder = TemporaryFolder()
        folder.write("payload.json", payload)
        let marker = folder.file("extension-ran")
        let run = try pushseal(["receive", "--json", "--extension", "touch \(marker); cat", folder.file("payload.json")])
        #expect(run.status == 0, "\(run.stderr)")
        let record = try #require(records(run.stdout).first)
        #expect(record["status"] as? String == "malformed")
        #expect((record["reason"] as? String)?.contains(reason) == true)
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func atMostTheCapOfExtensionProgramsRunAtOnce() throws {
        let folder = TemporaryFolder()
        let log = folder.file("log")
        // Each program notes its start and its end in one log (appends of a line are atomic),
        // so the log tells how many ran at once.
        let program = "echo + >> \(log); sleep 0.3; echo - >> \(log)"
        let lines = (0..<6).map { eligiblePayload(bytes: 200, title: "n\($0)") }.joined(separator: "\n") + "\n"
        let run = try pushseal(["receive", "--json", "--max-extensions", "2", "--budget", "10s", "--extension", program, "-"], stdin: lines)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(records(run.stdout).count == 6)
        let marks = folder.read("log").split(separator: "\n")
        let running = marks.reduce(into: [0]) { counts, mark in counts.append(counts.last! + (mark == "+" ? 1 : -1)) }
        #expect(marks.count == 12 && running.max()! <= 2, "\(marks)")
    }

    // MARK: Stopping is clean

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalStopsInputEndsExtensionsWritesEveryRecordAndSaysSo(_ signal: Int32) throws {
        let marker = "stop-test-\(UUID().uuidString.prefix(8))"
        let receiver = try RunningProcess([
            "receive", "--json", "--extension", "exec -a \(marker) sleep 50", "--expiry-grace", "300ms", "-"
        ])
        for index in 0..<3 { receiver.send(eligiblePayload(bytes: 200, title: "n\(index)") + "\n") }
        #expect(eventually { processesRunning(marker) == 3 })
        receiver.signal(signal)
        let run = receiver.wait()
        // Input was left unread: one line says so, and the status is the signal's, as send's.
        #expect(run.status == 128 + signal, "\(run.stderr)")
        #expect(run.stderr.hasSuffix("stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM"): every input taken got its record; the rest was not read\n"))
        let lines = records(run.stdout)
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0["status"] as? String == "original" })
        #expect(processesRunning(marker) == 0)
    }

    @Test func aSecondSignalForcesTheStopAndLeavesNoExtensionBehind() throws {
        let marker = "forced-stop-\(UUID().uuidString.prefix(8))"
        let receiver = try RunningProcess([
            "receive", "--json", "--extension", "trap '' TERM; exec -a \(marker) sleep 50", "--expiry-grace", "20s", "-"
        ])
        receiver.send(eligiblePayload(bytes: 200) + "\n")
        #expect(eventually { processesRunning(marker) == 1 })
        receiver.signal(SIGTERM)
        // Two signals within a second are one request to stop (as coreutils' timeout sends
        // them): the second goes once the receiver has taken the first, a second and more later.
        // So the test signals again every 100 ms until it exits: the ones inside that second
        // are taken as the first, the one after it forces the stop.
        #expect(eventually { !signalIsPending(SIGTERM, for: receiver.process.processIdentifier) })
        #expect(
            eventually(within: .seconds(5)) {
                receiver.signal(SIGTERM)
                return eventually(within: .milliseconds(100)) { !receiver.process.isRunning }
            })
        let run = receiver.wait(atMost: .seconds(5))
        #expect(run.status == 128 + SIGTERM)
        #expect(eventually(within: .seconds(2)) { processesRunning(marker) == 0 })
    }

    /// A receiver killed outright (SIGKILL, the OOM killer) cannot end its extensions itself:
    /// the kernel does (each is started with a parent-death signal).
    @Test func aReceiverKilledOutrightLeavesNoExtensionBehind() throws {
        let marker = "orphan-\(UUID().uuidString.prefix(8))"
        let receiver = try RunningProcess([
            "receive", "--json", "--extension", "trap '' TERM; exec -a \(marker) sleep 50", "--budget", "60s", "-"
        ])
        for index in 0..<3 { receiver.send(eligiblePayload(bytes: 200, title: "n\(index)") + "\n") }
        #expect(eventually { processesRunning(marker) == 3 })
        receiver.signal(SIGKILL)
        #expect(eventually(within: .seconds(5)) { processesRunning(marker) == 0 }, "\(processesRunning(marker)) extension programs outlived the receiver")
        signalOwnProcesses(commandLineStartingWith: marker)
        _ = receiver.wait(atMost: .seconds(5))
    }

    @Test func aSignalStopsAWatchedFolderCleanly() throws {
        let keyring = try KeyringFixture()
        let spool = TemporaryFolder()
        let receiver = try RunningProcess(["receive", "--json", "--keys", keyring.keys, "--watch", spool.path])
        spool.write(".a.tmp", try keyring.encrypt(["-t", "A"]).stdout)
        rename(spool.file(".a.tmp"), spool.file("a.json"))
        #expect(eventually { FileManager.default.fileExists(atPath: spool.file("processed/a.json")) })
        receiver.signal(SIGTERM)
        let run = receiver.wait()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(records(run.stdout).map { $0["status"] as? String } == ["decrypted"])
    }

    // MARK: A closed pipe or a full disk stops the work

    @Test func aClosedPipeStopsTheWorkInsteadOfRunningEveryExtension() throws {
        let folder = TemporaryFolder()
        let lines = (0..<40).map { eligiblePayload(bytes: 200, title: "n\($0)") }.joined(separator: "\n") + "\n"
        folder.write("input.jsonl", lines)
        let count = folder.file("count")
        let run = try shell(
            """
            "$PUSHSEAL" receive --json --max-extensions 1 --extension 'echo x >> \(count); sleep 0.05; echo {}' - < \(folder.file("input.jsonl")) | head -1 > /dev/null
            echo "${PIPESTATUS[0]}"
            """)
        // A reader that has what it wanted is no failure worth a line: 141, as cat ends by SIGPIPE.
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "141", "\(run.stderr)")
        #expect(!run.stderr.contains("error:"), "\(run.stderr)")
        let ran = folder.read("count").split(separator: "\n").count
        #expect(ran < 40, "\(ran) extension programs ran for a reader that had gone")
    }

    @Test func recordsThatCannotBeWrittenExit74() throws {
        let keyring = try KeyringFixture()
        let payload = try keyring.encrypt(["-t", "A"]).stdout
        let run = try shell(#""$PUSHSEAL" receive --keys "$K" - > /dev/full"#, stdin: payload, environment: ["K": keyring.keys])
        #expect(run.status == 74)
        #expect(run.stderr.split(separator: "\n") == ["error: cannot write to stdout: No space left on device"])
    }

    // MARK: The spool folder never loses, repeats or lies

    @Test func aRecordThatCannotBeWrittenLeavesTheFileInPlace() throws {
        let keyring = try KeyringFixture()
        let spool = TemporaryFolder()
        spool.write("a.json", try keyring.encrypt(["-t", "A"]).stdout)
        let run = try shell(
            #""$PUSHSEAL" receive --keys "$K" --watch "$S" --once > /dev/full"#,
            environment: ["K": keyring.keys, "S": spool.path])
        #expect(run.status == 74)
        #expect(run.stderr.contains("cannot write the record of a.json"))
        #expect(FileManager.default.fileExists(atPath: spool.file("a.json")))
        #expect(!FileManager.default.fileExists(atPath: spool.file("processed/a.json")))
    }

    @Test func aFileThatCannotBeMovedStopsTheReceiverAfterOneRecord() throws {
        let keyring = try KeyringFixture()
        let spool = TemporaryFolder()
        let receiver = try RunningProcess(["receive", "--json", "--keys", keyring.keys, "--watch", spool.path])
        #expect(eventually { FileManager.default.fileExists(atPath: spool.file("processed")) })
        try FileManager.default.removeItem(atPath: spool.file("processed"))
        spool.write(".a.tmp", try keyring.encrypt(["-t", "A"]).stdout)
        rename(spool.file(".a.tmp"), spool.file("a.json"))
        let run = receiver.wait()
        #expect(run.status == 74)
        #expect(run.stderr.contains("cannot move a.json into processed/"))
        #expect(records(run.stdout).count == 1)
        #expect(FileManager.default.fileExists(atPath: spool.file("a.json")))
    }

    @Test func aNameAlreadyInProcessedIsNeverOverwritten() throws {
        let keyring = try KeyringFixture()
        let spool = TemporaryFolder()
        try FileManager.default.createDirectory(atPath: spool.file("processed"), withIntermediateDirectories: true)
        spool.write("processed/a.json", "earlier")
        spool.write("a.json", try keyring.encrypt(["-t", "A"]).stdout)
        let run = try pushseal(["receive", "--json", "--keys", keyring.keys, "--watch", spool.path, "--once"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(spool.read("processed/a.json") == "earlier")
        #expect(spool.read("processed/a.json.1").contains("\"enc\""))
    }

    @Test func aNameThatIsNotUTF8IsDeliveredAndMoved() throws {
        let spool = TemporaryFolder()
        let run = try shell(
            """
            printf '{"aps":{"alert":"hi"}}' > "$S/$(printf 'bad\\xff').json"
            "$PUSHSEAL" receive --json --watch "$S" --once --extension cat
            ls "$S/processed" | od -An -c | tr -d ' \\n'
            """, environment: ["S": spool.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(#""source":"bad\\xff.json""#))
        #expect(run.stdout.contains("bad377.json"))
    }

    // MARK: A running receiver follows the keyring at once

    @Test func aWatchingReceiverFollowsEveryRotationAtOnce() throws {
        let keyring = try KeyringFixture()
        let spool = TemporaryFolder()
        let receiver = try RunningProcess(["receive", "--json", "--keys", keyring.keys, "--watch", spool.path])
        for index in 0..<20 {
            #expect(try keyring.keysCommand(["rotate"]).status == 0)
            spool.write(".\(index).tmp", try keyring.encrypt(["-t", "n\(index)"]).stdout)
            rename(spool.file(".\(index).tmp"), spool.file(String(format: "%02d.json", index)))
        }
        #expect(eventually { (try? FileManager.default.contentsOfDirectory(atPath: spool.file("processed")).count) == 20 })
        receiver.signal(SIGTERM)
        let run = receiver.wait()
        let statuses = records(run.stdout).map { $0["status"] as? String ?? "" }
        #expect(statuses == Array(repeating: "decrypted", count: 20))
    }

    @Test func aStreamingReceiverFollowsADestroyedKey() throws {
        let keyring = try KeyringFixture()
        let old = try keyring.keysCommand(["list", "--json"]).stdout
        let oldKid = try #require((try JSONSerialization.jsonObject(with: Data(old.utf8)) as? [[String: Any]])?.first?["id"] as? String)
        let sealedUnderOld = try keyring.encrypt(["-t", "old"]).stdout
        let receiver = try RunningProcess(["receive", "--json", "--keys", keyring.keys, "-"])
        receiver.send(sealedUnderOld)
        #expect(eventually { receiver.stdoutSoFar.contains("decrypted") })
        #expect(try keyring.keysCommand(["rotate"]).status == 0)
        #expect(try keyring.keysCommand(["destroy", oldKid]).status == 0)
        // The receiver looks at the file again within 100 ms: the payload goes again until
        // a record says the key is gone, and each earlier one still opened it.
        for _ in 0..<200 where !receiver.stdoutSoFar.contains("key-missing") {
            let seen = records(receiver.stdoutSoFar).count
            receiver.send(sealedUnderOld)
            #expect(eventually { records(receiver.stdoutSoFar).count > seen })
        }
        receiver.closeInput()
        let run = receiver.wait()
        let statuses = records(run.stdout).map { $0["status"] as? String ?? "" }
        #expect(statuses.last == "key-missing" && statuses.dropLast().allSatisfy { $0 == "decrypted" }, "\(run.stdout) \(run.stderr)")
    }

    // MARK: Text output cannot be forged

    @Test func textOutputEscapesWhatCouldForgeARecordOrDriveTheTerminal() throws {
        let payload = #"{"aps":{"alert":{"title":"x\u001b]0;owned\u0007","body":"ok\r\n#2 decrypted  forged\u001b[31m\u202e\u0085"}}}"#
        let keyring = try KeyringFixture()
        let run = try pushseal(["receive", "--keys", keyring.keys, "-"], stdin: payload + "\n")
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.filter { $0.hasPrefix("#") }.count == 1)
        #expect(!run.stdout.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0.value == 0x202E })
        #expect(run.stdout.contains(#"x\x1b]0;owned\x07"#) && run.stdout.contains(#"\u{202E}"#))
    }

    // MARK: Setup errors before anything is delivered

    @Test(arguments: ["./no-such-extension.py", "no-such-program-anywhere --flag"])
    func anExtensionThatCannotRunIsAnErrorBeforeAnyDelivery(_ command: String) throws {
        let folder = TemporaryFolder()
        folder.write("payload.json", eligiblePayload(bytes: 200))
        let run = try pushseal(["receive", "--extension", command, folder.file("payload.json")])
        #expect(run.status == 66)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("error: the extension program"))
    }

    @Test func anExtensionThatIsNotExecutableIsRefused() throws {
        let folder = TemporaryFolder()
        folder.write("payload.json", eligiblePayload(bytes: 200))
        folder.write("ext.py", "print('{}')\n")
        let run = try pushseal(["receive", "--extension", folder.file("ext.py"), folder.file("payload.json")])
        #expect(run.status == 77)
        #expect(run.stdout.isEmpty && run.stderr.contains("not an executable file"))
    }
}
