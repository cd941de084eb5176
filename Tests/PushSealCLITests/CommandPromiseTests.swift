import Foundation
import Testing

/// No silent failure, no corrupting input, no side effects from failed commands: each test
/// runs the built binary as a user would and fails on a command that breaks the promise.
@Suite("command promises")
struct CommandPromiseTests {
    // MARK: Output that cannot be written is an error

    @Test(arguments: [
        (#""$PUSHSEAL" encrypt --keys "$K" -t T -b B"#, ""),
        (#""$PUSHSEAL" keys export --keys "$K""#, ""),
        (#""$PUSHSEAL" keys list --keys "$K""#, ""),
        (#"echo '{"title":"T"}' | "$PUSHSEAL" encrypt --batch --keys "$K""#, ""),
        (#""$PUSHSEAL" keys rotate --keys "$K""#, "the new primary key is "),
        (#""$PUSHSEAL" keys add --keys "$K""#, "was added all the same"),
        (#""$PUSHSEAL" completions zsh"#, ""),
        (#""$PUSHSEAL" manual"#, ""),
        // The payload is run's only output with --print: losing it is 74, whatever the command did.
        (#""$PUSHSEAL" run --print --keys "$K" -- false"#, "")
    ])
    func everyCommandExits74WithOneErrorLineWhenStdoutIsFull(_ command: String, extra: String) throws {
        let keyring = try KeyringFixture()
        let run = try shell(command + " > /dev/full", environment: ["K": keyring.keys])
        #expect(run.status == 74, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("error: cannot write to stdout: No space left on device"))
        #expect(extra.isEmpty || run.stderr.contains(extra))
    }

    @Test func aRotationWhoseKidCouldNotBePrintedStillNamesItAndKeepsTheKeyring() throws {
        let keyring = try KeyringFixture()
        let run = try shell(#""$PUSHSEAL" keys rotate --keys "$K" > /dev/full"#, environment: ["K": keyring.keys])
        let kid = try #require(run.stderr.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
        let list = try keyring.keysCommand(["list"])
        #expect(list.stdout.contains(kid) && list.stdout.contains("primary"))
    }

    // MARK: Durations are bounded where they are parsed

    @Test(arguments: [
        ["keys", "rotate", "--grace", "3000000d"],
        ["keys", "promote", "abcd1234", "--grace", "99999999999999w"],
        ["keys", "rotate", "--lock-timeout", "2h"],
        ["receive", "--budget", "99999999999d", "--extension", "cat", "-"],
        ["receive", "--expiry-grace", "99999999999999d", "--extension", "cat", "-"],
        ["receive", "--budget", "0s", "--extension", "cat", "-"],
        ["encrypt", "-t", "T", "--ttl", "999999999999999s"]
    ])
    func anOutOfRangeDurationIsAUsageErrorAndChangesNothing(_ arguments: [String]) throws {
        let keyring = try KeyringFixture()
        let before = try keyring.keysCommand(["list", "--json"]).stdout
        let run = try pushseal(arguments + ["--keys", keyring.keys], stdin: "")
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("error: --") && run.stderr.contains("\nUsage: "))
        // The keyring is untouched and still loads.
        let after = try keyring.keysCommand(["list", "--json"])
        #expect(after.status == 0 && after.stdout == before)
    }

    @Test func theLongestGraceStillLeavesAReadableKeyring() throws {
        let keyring = try KeyringFixture()
        #expect(try keyring.keysCommand(["rotate", "--grace", "3650d"]).status == 0)
        #expect(try keyring.keysCommand(["list"]).status == 0)
        #expect(try keyring.encrypt(["-t", "still fine"]).status == 0)
    }

    // MARK: Consistent, bounded input

    @Test(arguments: [
        #""$PUSHSEAL" encrypt --keys "$K" -t "$(printf 'bad \xff')""#,
        #""$PUSHSEAL" encrypt --keys "$K" -b "$(printf '\xc3\x28')""#,
        #"printf 'body \xfe\xff\n' | "$PUSHSEAL" encrypt --keys "$K" -t T -"#
    ])
    func invalidUTF8IsRefusedWithExit65(_ command: String) throws {
        let keyring = try KeyringFixture()
        let run = try shell(command, environment: ["K": keyring.keys])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stdout.isEmpty && run.stderr.contains("not valid UTF-8"))
    }

    @Test func invalidUTF8InABatchLineIsThatLinesError() throws {
        let keyring = try KeyringFixture()
        let run = try shell(
            #"printf '{"title":"ok"}\n{"title":"bad \xff"}\n' | "$PUSHSEAL" encrypt --batch --keys "$K""#,
            environment: ["K": keyring.keys])
        #expect(run.status == 65)
        #expect(run.stdout.split(separator: "\n").count == 1)
        #expect(run.stderr.contains("line 2:"))
    }

    @Test func anEndlessBodyOnStdinIsRefusedWithoutReadingItAll() throws {
        let keyring = try KeyringFixture()
        // `yes` never ends: only a reader that stops early can finish.
        let run = try shell(#"yes | "$PUSHSEAL" encrypt --keys "$K" -t T -"#, environment: ["K": keyring.keys])
        #expect(run.status == 65)
        #expect(run.stderr.contains("over 4096 bytes"))
    }

    @Test(arguments: [
        (#"{"title":"T","body":"a","message":"b"}"#, "'body' or 'message'"),
        (#"{"title":"T","thread-id":"a","group":"b"}"#, "'thread-id' or 'group'"),
        (#"{"title":"T","id":""}"#, "'id' must be 1 to 64 bytes"),
        (#"{"title":"T","ttl":"99999999999999d"}"#, "'ttl' must be"),
        (#"{"title":"T","level":"loud"}"#, "unknown level")
    ])
    func batchLinesFollowTheSameRulesAsFlags(_ line: String, reason: String) throws {
        let keyring = try KeyringFixture()
        let run = try keyring.encrypt(["--batch"], stdin: line + "\n")
        #expect(run.status == 65)
        #expect(run.stderr.contains("line 1:") && run.stderr.contains(reason), "\(run.stderr)")
    }

    @Test func bodyAndMessageTogetherAreAUsageError() throws {
        let run = parsed(["encrypt", "--keys", "Keys", "-t", "T", "-b", "a", "-m", "b"])
        #expect(run.status == 64)
    }

    // MARK: No side effects from failed commands

    @Test(arguments: [["rotate"], ["add"], ["prune"], ["disable", "abcd1234"], ["destroy", "abcd1234"]])
    func aKeysCommandWithoutAKeyringLeavesNothingBehind(_ arguments: [String]) throws {
        let folder = TemporaryFolder()
        let run = try runProcess("/bin/sh", ["-c", "cd \"$1\" && shift && \"$@\"", "sh", folder.path, pushsealBinary, "keys"] + arguments)
        #expect(run.status == 66, "\(run.stderr)")
        #expect(run.stderr.contains("no keyring at Keys/keyring.json"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func aMistypedDeepFolderIsMissingNotUncreatable() throws {
        let folder = TemporaryFolder()
        let run = try pushseal(["keys", "rotate", "--keys", folder.file("typo/deep/dir")])
        #expect(run.status == 66)
        #expect(!FileManager.default.fileExists(atPath: folder.file("typo")))
    }

    @Test func enablingAnExpiredKeyIsRefused() throws {
        let keyring = try KeyringFixture()
        let first = try keyring.keysCommand(["list", "--json"]).stdout
        let kid = try #require((try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [[String: Any]])?.first?["id"] as? String)
        #expect(try keyring.keysCommand(["rotate", "--grace", "0s"]).status == 0)
        let run = try keyring.keysCommand(["enable", kid])
        #expect(run.status == 65)
        #expect(run.stderr.contains("expired") && run.stdout.isEmpty)
    }

    @Test func aCommandWaitingForTheLockSaysSoAndGivesUp() throws {
        let keyring = try KeyringFixture()
        // Another holder of the keyring's lock, for longer than the command will wait.
        // It says when it holds the lock, and lets go once the command has given up.
        let folder = TemporaryFolder()
        let run = try shell(
            #"""
            flock "$K/.keyring.lock" sh -c 'touch "$D/held"; while [ ! -e "$D/release" ]; do sleep 0.05; done' &
            for _ in $(seq 200); do [ -e "$D/held" ] && break; sleep 0.05; done
            "$PUSHSEAL" keys rotate --keys "$K" --lock-timeout 2s; echo "status $?"
            touch "$D/release"; wait
            """#, environment: ["K": keyring.keys, "D": folder.path])
        #expect(run.stdout.contains("status 75"), "\(run.stdout) \(run.stderr)")
        #expect(run.stderr.contains("waiting for another pushseal command to release the keyring lock"))
        #expect(run.stderr.contains("error: another process has held the keyring lock"))
        #expect(try keyring.keysCommand(["list"]).stdout.split(separator: "\n").count == 2)
    }

    // MARK: Messages in the user's words

    @Test func anEnvironmentValueIsNamedInItsError() throws {
        let run = parsed(["encrypt", "--keys", "Keys", "-t", "T"], environment: ["PUSHSEAL_PAD": "abc"])
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("error: PUSHSEAL_PAD must be"))
    }

    @Test(arguments: [["encrypt", "-t", "T", "--field", "aps"], ["receive", "--field", "aps", "-"]])
    func aForbiddenFieldIsAUsageError(_ arguments: [String]) throws {
        let run = parsed(arguments + ["--keys", "Keys"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("\nUsage: "))
    }

    @Test func receiveDocumentsItsExitCodesAndStopping() throws {
        let help = try pushseal(["receive", "--help"]).stdout
        #expect(help.contains("\nEXIT CODES:\n") && help.contains("\n  74   input or output failed: stdout that cannot be written"), "\(help)")
        #expect(help.contains("\n  0    success; every input got its record, whatever its status"), "\(help)")
        #expect(help.contains("STOPPING:"))
    }
}
