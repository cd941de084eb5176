import Foundation
import Testing

/// What stays visible when a seal cannot be opened: the sender's choice of sound and level
/// (`--visible-sound`, `--visible-level`, a batch line's `visible-sound` and `visible-level`),
/// a localized fallback (`--fallback-loc-key`), and the receiver's `locked` when its keyring
/// cannot be read: each seen as a user sees it, in the payload's bytes and the records.
@Suite("visible fallbacks: sounds, levels, localized alerts, a keyring that cannot be read")
struct VisibleFallbackTests {
    static func aps(_ payload: String) -> [String: Any] {
        jsonObject(payload)["aps"] as? [String: Any] ?? [:]
    }

    @Test func visibleSoundAndLevelAreInTheClearAndOnlyWhenAsked() throws {
        let keyring = try KeyringFixture()
        let quiet = Self.aps(try keyring.encrypt(["-t", "Page", "-s", "siren.caf", "-l", "critical", "-b", "db-3 down"]).stdout)
        #expect(quiet["sound"] == nil && quiet["interruption-level"] == nil, "by default nothing but the fallback text is in the clear")
        let critical = try keyring.encrypt(["-t", "Page", "-b", "db-3 down", "--visible-sound", "siren.caf", "--visible-level", "critical"])
        #expect(critical.status == 0, "\(critical.stderr)")
        #expect(critical.stdout.contains(#""sound":{"critical":1,"name":"siren.caf","volume":1.0},"interruption-level":"critical""#), "\(critical.stdout)")
        #expect(!critical.stdout.contains("db-3"))
        let chime = Self.aps(try keyring.encrypt(["-t", "Note", "--visible-sound", "chime.caf", "--visible-level", "timeSensitive"]).stdout)
        #expect(chime["sound"] as? String == "chime.caf" && chime["interruption-level"] as? String == "time-sensitive")
        let fromEnvironment = try pushseal(["encrypt", "--keys", keyring.keys, "-t", "x"], environment: ["PUSHSEAL_VISIBLE_SOUND": "default", "PUSHSEAL_VISIBLE_LEVEL": "active"])
        #expect(Self.aps(fromEnvironment.stdout)["sound"] as? String == "default")
        for bad in [["--visible-level", "loud"], ["--visible-sound", ""], ["--fallback-loc-key", ""], ["--fallback-loc-key", "K", "--fallback-body", "b"]] {
            let run = try keyring.encrypt(["-t", "x"] + bad)
            #expect(run.status == 64 && run.stderr.hasPrefix("error: ") && run.stdout.isEmpty, "\(bad): \(run.stderr)")
        }
        // The sealed alert keeps its own sound and level: decrypted, the sender's real choice shows.
        let opened = jsonObject(try keyring.decrypt(payload: try keyring.encrypt(["-t", "a", "-s", "real.caf", "--visible-sound", "shown.caf"]).stdout).stdout)
        #expect(opened["sound"] as? String == "real.caf")
    }

    @Test func batchLinesChooseTheirOwnVisibleSoundAndLevel() throws {
        let keyring = try KeyringFixture()
        let lines = """
            {"title": "a", "visible-sound": "siren.caf", "visible-level": "critical"}
            {"title": "b"}
            {"title": "c", "visible-level": "time-sensitive"}
            {"title": "d", "visible-level": "loud"}
            {"title": "e", "visible-sound": 5}
            """
        let run = try keyring.encrypt(["--batch", "--visible-sound", "default"], stdin: lines + "\n")
        #expect(run.status == 65)
        #expect(run.stderr.contains("line 4: 'visible-level' is passive, active, time-sensitive or critical"), "\(run.stderr)")
        #expect(run.stderr.contains("line 5: 'visible-sound'"))
        let payloads = run.stdout.split(separator: "\n").map { Self.aps(String($0)) }
        #expect(payloads.count == 3)
        #expect((payloads[0]["sound"] as? [String: Any])?["name"] as? String == "siren.caf" && payloads[0]["interruption-level"] as? String == "critical")
        #expect(payloads[1]["sound"] as? String == "default" && payloads[1]["interruption-level"] == nil, "the command's own choice")
        #expect(payloads[2]["sound"] as? String == "default" && payloads[2]["interruption-level"] as? String == "time-sensitive")
    }

    @Test func sendCarriesTheVisibleSoundAndLevelToTheDevice() throws {
        let sending = try SendTests.Sending()
        // The listener holds another keyring: it cannot open the seal, as a phone whose
        // extension did not run, and shows what stayed visible.
        let other = try KeyringFixture()
        let listener = try Listener(["--json", "--keys", other.keys, "--provider-key", "KEY1234567=\(sending.publicKey)", "--team", "TEAM123456"], address: "0")
        let run = try sending.send(
            to: listener.url, trusting: other.keys + "/tls-cert.pem",
            ["--device", deviceToken, "-t", "Page", "-b", "db-3 down", "--visible-sound", "siren.caf", "--visible-level", "critical"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = """
            {"device": "\(String(format: "%064x", 7))", "title": "Build", "visible-sound": "chime.caf"}
            """
        let batch = try sending.send(to: listener.url, trusting: other.keys + "/tls-cert.pem", ["--batch"], stdin: lines + "\n")
        #expect(batch.status == 0, "\(batch.stderr)")
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == 2)
        #expect(records.allSatisfy { $0["status"] as? String == "key-missing" })
        #expect(records.first?["sound"] as? String == "siren.caf" && records.first?["interruption-level"] as? String == "critical")
        #expect(records.last?["sound"] as? String == "chime.caf")
    }

    @Test func aLocalizedFallbackIsSentAndOpenedAsLiteralTextIs() throws {
        let keyring = try KeyringFixture()
        let run = try keyring.encrypt(["-t", "Deploy", "-b", "api-7 is live", "--fallback-loc-key", "NEW_MESSAGE"])
        #expect(run.status == 0, "\(run.stderr)")
        let alert = Self.aps(run.stdout)["alert"] as? [String: Any]
        #expect(alert?["loc-key"] as? String == "NEW_MESSAGE" && alert?["body"] == nil)
        // Another message, its payload rewritten as another sender's with the title as a key too.
        let other = try keyring.encrypt(["-t", "Deploy", "-b", "api-8 is live", "--fallback-loc-key", "NEW_MESSAGE"]).stdout
        let payloads = [
            run.stdout.trimmingCharacters(in: .newlines),
            other.trimmingCharacters(in: .newlines).replacingOccurrences(of: #""title":"New notification","loc-key""#, with: #""title-loc-key":"T","loc-key""#),
            #"{"aps":{"alert":{"loc-key":"K"}},"enc":"x"}"#
        ]
        let received = try pushseal(["receive", "--json", "--keys", keyring.keys, "-"], stdin: payloads.joined(separator: "\n") + "\n")
        let statuses = records(received.stdout).map { $0["status"] as? String }
        #expect(statuses == ["decrypted", "decrypted", "passthrough"], "\(received.stdout)")
        #expect(records(received.stdout).first?["title"] as? String == "Deploy")
    }

    @Test func aKeyringThatCannotBeReadWhileReceivingIsLockedNotKeyMissing() throws {
        let keyring = try KeyringFixture()
        let payload = try keyring.encrypt(["-t", "Page", "-b", "db-3 down", "--visible-sound", "siren.caf"]).stdout
        let file = keyring.keys + "/keyring.json"
        let good = try Data(contentsOf: URL(fileURLWithPath: file))
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: pushsealBinary)
        // The one payload again and again, each time to be judged afresh: nothing remembered.
        receiver.arguments = ["receive", "--json", "--keys", keyring.keys, "--seen", "none", "-"]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        receiver.standardInput = input
        receiver.standardOutput = output
        receiver.standardError = errors
        try receiver.run()
        func nextRecord() throws -> [String: Any] {
            var line = Data()
            while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line += byte }
            return jsonObject(String(decoding: line, as: UTF8.self))
        }
        /// Changes the keyring under the running receiver, then sends the payload again until
        /// its record has `status` (the receiver looks at the file within 100 ms; each try
        /// gets its record, read before the next): the first record with it, or the last.
        func after(_ change: () throws -> Void, _ status: String) throws -> [String: Any] {
            try change()
            var record: [String: Any] = [:]
            // Bounded in count; a try takes a fraction of a millisecond, so this spans the
            // 100 ms the receiver may take to look at the file many times over.
            for _ in 0..<20_000 {
                input.fileHandleForWriting.write(Data(payload.utf8))
                record = try nextRecord()
                if record["status"] as? String == status { break }
            }
            return record
        }
        input.fileHandleForWriting.write(Data(payload.utf8))
        #expect(try nextRecord()["status"] as? String == "decrypted")
        let steps: [(String, () throws -> Void, String)] = [
            ("damaged", { try Data("{\"format\":".utf8).write(to: URL(fileURLWithPath: file)) }, "locked"),
            ("emptied", { try Data().write(to: URL(fileURLWithPath: file)) }, "locked"),
            ("restored", { try good.write(to: URL(fileURLWithPath: file)) }, "decrypted"),
            ("made readable by others", { chmod(file, 0o644) }, "locked"),
            ("made private again", { chmod(file, 0o600) }, "decrypted")
        ]
        for (step, change, status) in steps {
            let record = try after(change, status)
            #expect(record["status"] as? String == status, "\(step): \(record)")
            if status == "locked" {
                #expect(record["title"] as? String == "New notification" && record["body"] as? String == "Open the app to read it", "\(step)")
                #expect(record["sound"] as? String == "siren.caf")
                #expect((record["reason"] as? String)?.contains("keyring could not be read") == true)
            } else {
                #expect(record["title"] as? String == "Page", "\(step)")
            }
        }
        try input.fileHandleForWriting.close()
        receiver.waitUntilExit()
        #expect(receiver.terminationStatus == 0)
        // One line when the keyring goes bad, one when it is good again: not one per notification.
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        #expect(stderr.count == 4, "\(stderr)")
        #expect(stderr.filter { $0.hasPrefix("warning: the keyring cannot be used now (") }.count == 2)
        #expect(stderr.filter { $0 == "note: the keyring can be used again; sealed notifications open as before" }.count == 2)
        #expect(stderr.contains { $0.contains("accessible by group or others (mode 0644)") })
    }
}
