import Foundation
import Testing

/// `pushseal run -- CMD`: the command's outcome as one sealed alert, its exit status as
/// pushseal's, its signals passed on.
@Suite("run: a command's outcome as a sealed alert")
struct RunCommandTests {
    /// Runs `pushseal run --print` with `arguments` before `--`; the opened alert and the run.
    static func printed(_ keyring: KeyringFixture, _ options: [String], _ command: [String]) throws -> (alert: [String: Any], run: Run) {
        let run = try pushseal(["run", "--print", "--keys", keyring.keys] + options + ["--"] + command)
        let opened = try keyring.decrypt(payload: run.stdout)
        #expect(opened.status == 0, "the payload opens: \(opened.stderr) \(run.stderr)")
        return (jsonObject(opened.stdout), run)
    }

    @Test func aFailureIsTimeSensitiveAndCarriesStatusDurationAndTheLastLines() throws {
        let keyring = try KeyringFixture()
        let (alert, run) = try Self.printed(keyring, ["--tail", "2"], ["sh", "-c", "echo one; echo two; echo three >&2; sleep 0.2; printf 'four\\033[31m red\\033[0m'; exit 3"])
        #expect(run.status == 3, "the command's status is pushseal's")
        #expect(run.stderr.contains("one\ntwo\n") && run.stderr.contains("three\n"), "with --print its output goes to stderr: \(run.stderr)")
        let title = try #require(alert["title"] as? String)
        #expect(title.hasPrefix("❌ sh -c 'echo one; echo two;") && title.hasSuffix("… failed (exit 3)"), "the command line, cut: \(title)")
        #expect(alert["interruption-level"] as? String == "time-sensitive")
        let body = try #require(alert["body"] as? String)
        let lines = body.split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("$ sh -c 'echo one;"))
        #expect(lines[1].hasPrefix("exit 3 after ") && lines[1].contains(" on "), "\(lines[1])")
        #expect(Array(lines.dropFirst(2)) == ["three", "four red"], "the last two lines, colours dropped: \(body)")
        let data = try #require(alert["data"] as? [String: Any])
        #expect(data["exit-status"] as? Int == 3)
        #expect((data["duration-ms"] as? Int ?? 0) >= 200)
        #expect((data["command"] as? String)?.hasPrefix("sh -c ") == true)
        // Sealed: the payload itself shows none of it.
        #expect(!run.stdout.contains("three") && !run.stdout.contains("exit"))
    }

    @Test func signalsIgnoredWhenPushsealStartedStayIgnoredInTheCommand() throws {
        let keyring = try KeyringFixture()
        // nohup's SIGHUP, and SIGUSR1 for good measure: ignored before pushseal started, so
        // the command must find them ignored too (bit 1 and bit 10 of SigIgn), and nothing else
        // pushseal ignores itself (SIGPIPE, bit 13).
        let run = try shell(
            """
            trap '' HUP USR1
            exec "$PUSHSEAL" run --print --keys "$KEYS" -- sh -c 'grep SigIgn /proc/self/status >&2'
            """, environment: ["KEYS": keyring.keys])
        #expect(run.status == 0, "\(run.stderr)")
        let mask =
            run.stderr.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }
            .flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) } ?? 0
        #expect(mask & (1 << (SIGHUP - 1)) != 0, "SIGHUP stays ignored: \(run.stderr)")
        #expect(mask & (1 << (SIGUSR1 - 1)) != 0, "SIGUSR1 stays ignored: \(run.stderr)")
        #expect(mask & (1 << (SIGPIPE - 1)) == 0, "SIGPIPE is back to its default: \(run.stderr)")
    }

    @Test func aSuccessSaysSoAndAGivenTitleOrLevelWins() throws {
        let keyring = try KeyringFixture()
        let (done, run) = try Self.printed(keyring, [], ["true"])
        #expect(run.status == 0)
        #expect(done["title"] as? String == "✅ true finished")
        #expect(done["interruption-level"] == nil)
        let (titled, failed) = try Self.printed(keyring, ["-t", "Nightly backup", "-l", "passive"], ["false"])
        #expect(failed.status == 1)
        #expect(titled["title"] as? String == "Nightly backup")
        #expect(titled["interruption-level"] as? String == "passive")
        #expect((titled["body"] as? String)?.contains("exit 1 after ") == true)
    }

    @Test func tailZeroLeavesTheOutputAloneAndSealsNoLines() throws {
        let keyring = try KeyringFixture()
        let (alert, run) = try Self.printed(keyring, ["--tail", "0"], ["sh", "-c", "echo private; test -t 1 || echo 'stdout is where pushseal put it' >&2"])
        #expect(run.stderr.contains("private\n"))
        #expect((alert["body"] as? String)?.split(separator: "\n").count == 2, "command line and status only")
    }

    @Test func aSignalToPushsealReachesTheCommandWhichDecidesTheOutcome() throws {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        let running = try RunningProcess([
            "run", "--print", "--keys", keyring.keys, "--", "sh", "-c",
            "trap 'echo got TERM; exit 7' TERM; touch \(folder.file("started")); while :; do sleep 0.05; done"
        ])
        #expect(eventually { FileManager.default.fileExists(atPath: folder.file("started")) })
        running.signal(SIGTERM)
        let run = running.wait()
        #expect(run.status == 7, "the command caught SIGTERM and exited 7: \(run.stderr)")
        let alert = jsonObject(try keyring.decrypt(payload: run.stdout).stdout)
        #expect((alert["body"] as? String)?.contains("got TERM") == true)

        // A command that does not catch it dies of it: 128 + 15, as a shell reports.
        let killed = try RunningProcess(["run", "--print", "--keys", keyring.keys, "--", "sleep", "30"])
        // The signal goes once the command runs, so it is the command that gets it.
        #expect(eventually { childCommands(of: killed.process.processIdentifier).contains("sleep") })
        killed.signal(SIGTERM)
        let ended = killed.wait()
        #expect(ended.status == 143)
        let stopped = jsonObject(try keyring.decrypt(payload: ended.stdout).stdout)
        #expect(stopped["title"] as? String == "❌ sleep 30 stopped by SIGTERM")
    }

    @Test func aProgramLeftRunningInTheBackgroundDoesNotHoldTheAlertBack() throws {
        let keyring = try KeyringFixture()
        // The background loop keeps both pipes open and busy long after sh exits.
        let (alert, run) = try Self.printed(keyring, [], ["sh", "-c", "(while :; do echo busy; sleep 0.01; done) & echo started; exit 4"])
        #expect(run.status == 4)
        #expect((alert["body"] as? String)?.contains("started") == true)
        signalOwnProcesses(commandLineStartingWith: "sh -c (while :; do echo busy")
    }

    @Test func commandsThatCannotStartGetAShellsStatusAndStillAnAlert() throws {
        let keyring = try KeyringFixture()
        let (missing, notFound) = try Self.printed(keyring, [], ["no-such-command-here"])
        #expect(notFound.status == 127)
        #expect(notFound.stderr == "error: no-such-command-here: command not found\n")
        #expect(missing["title"] as? String == "❌ no-such-command-here did not start")
        let folder = TemporaryFolder()
        folder.write("script", "#!/bin/sh\n")
        let (_, notExecutable) = try Self.printed(keyring, [], [folder.file("script")])
        #expect(notExecutable.status == 126)
    }

    @Test func setupProblemsStopBeforeTheCommandRuns() throws {
        let folder = TemporaryFolder()
        let marker = folder.file("ran")
        // No keyring: the alert could never be sealed, so the command is not started.
        let noKeys = try pushseal(["run", "--print", "--keys", folder.file("none"), "--", "touch", marker])
        #expect(noKeys.status == 66, "\(noKeys.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker))
        let keyring = try KeyringFixture()
        let noP8 = try pushseal([
            "run", "--keys", keyring.keys, "--device", deviceToken, "--topic", "t", "--auth-key", folder.file("none.p8"),
            "--key-id", "KEY1234567", "--team-id", "TEAM123456", "--", "touch", marker
        ])
        #expect(noP8.status == 66, "\(noP8.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker))
        for (arguments, message) in [
            (["run", "--print", "make", "test"], "error: put the command after '--' ('pushseal run [options] -- make test'), so its options stay its own\n"),
            (["run", "--print", "--"], "error: no command after '--'\n"),
            (["run", "--print", "--tail", "99", "--", "true"], "error: --tail is a whole number of lines from 0 to 50\n"),
            (["run", "--", "true"], "error: no devices: give --device TOKEN (repeatable) or --devices FILE, or --print to print the payload\n"),
            (["run", "--devices", "-", "--", "true"], "error: the command keeps stdin; give the devices with --device TOKEN or --devices FILE\n")
        ] {
            let run = parsed(["run", "--keys", keyring.keys] + arguments.dropFirst())
            #expect(run.status == 64)
            #expect(run.stderr.hasPrefix(message), "\(arguments): \(run.stderr)")
        }
    }

    @Test func theOutcomeIsSentAndTheCommandsOutputPassesThrough() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let run = try pushseal([
            "run", "--keys", sending.keyring.keys, "--endpoint", listener.url, "--cacert", sending.keyring.keys + "/tls-cert.pem",
            "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
            "--device", deviceToken, "--", "sh", "-c", "echo built api-7; exit 2"
        ])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stdout == "built api-7\n", "the command's stdout, as it came, and nothing else")
        #expect(run.stderr.hasPrefix("ok \(deviceToken) "), "send's result on stderr: \(run.stderr)")
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        let record = try #require(records.first)
        #expect(record["status"] as? String == "decrypted")
        #expect(record["title"] as? String == "❌ sh -c 'echo built api-7; exit 2' failed (exit 2)")
        #expect((record["body"] as? String)?.hasSuffix("\nbuilt api-7") == true)
        #expect(record["interruption-level"] as? String == "time-sensitive")
    }

    @Test func aTimeToLiveCountsFromWhenTheOutcomeIsSent() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let started = Int(Date().timeIntervalSince1970)
        let run = try pushseal([
            "run", "--keys", sending.keyring.keys, "--endpoint", listener.url, "--cacert", sending.keyring.keys + "/tls-cert.pem",
            "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
            "--device", deviceToken, "--ttl", "1h", "--", "sleep", "2"
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let record = try #require(listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }.first)
        let expiration = Int(record["apns-expiration"] as? String ?? "") ?? 0
        #expect(expiration >= started + 2 + 3_600, "an hour after the command ended, not after it started: \(expiration - started)")
    }
}
