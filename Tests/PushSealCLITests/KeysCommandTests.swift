import Foundation
import Testing

@Suite("pushseal keys, as a process")
struct KeysCommandTests {
    @Test func rotationKeepsOldPayloadsReadableDuringGrace() throws {
        let keyring = try KeyringFixture()
        let before = try keyring.encrypt(["-b", "sealed before rotation"]).stdout
        let oldKid = envelope(in: before).split(separator: ".")[1]
        let rotated = try keyring.keysCommand(["rotate"])
        #expect(rotated.status == 0)
        let newKid = rotated.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(newKid.count == 8 && newKid != String(oldKid))
        let after = try keyring.encrypt(["-b", "sealed after"]).stdout
        #expect(envelope(in: after).hasPrefix("ps1.\(newKid)."))
        #expect(try keyring.decrypt(payload: before).status == 0)
        #expect(try keyring.decrypt(payload: after).status == 0)

        // A rotation with no grace retires the previous primary at once.
        #expect(try keyring.keysCommand(["rotate", "--grace", "0s"]).status == 0)
        let expired = try keyring.decrypt(payload: after)
        #expect(expired.status == 65)
        #expect(expired.stderr.contains("key \(newKid) expired"))
        #expect(try keyring.decrypt(payload: before).status == 0)

        let pruned = try keyring.keysCommand(["prune"])
        #expect(pruned.stdout == newKid + "\n")
        let destroyed = try keyring.decrypt(payload: after)
        #expect(destroyed.stderr.contains("was destroyed"))
    }

    @Test func disableDestroyAndUnknownKeyFailWithDistinctMessages() throws {
        let keyring = try KeyringFixture()
        let payload = try keyring.encrypt(["-b", "x"]).stdout
        let kid = String(envelope(in: payload).split(separator: ".")[1])
        #expect(try keyring.keysCommand(["rotate"]).status == 0)

        #expect(try keyring.keysCommand(["disable", kid]).status == 0)
        let disabled = try keyring.decrypt(payload: payload)
        #expect(disabled.status == 65 && disabled.stderr.contains("key \(kid) is disabled"))

        #expect(try keyring.keysCommand(["enable", kid]).status == 0)
        #expect(try keyring.decrypt(payload: payload).status == 0)

        #expect(try keyring.keysCommand(["destroy", kid]).status == 0)
        let destroyed = try keyring.decrypt(payload: payload)
        #expect(destroyed.status == 65 && destroyed.stderr.contains("key \(kid) was destroyed"))

        let other = try KeyringFixture()
        let unknown = try other.decrypt(payload: payload)
        #expect(unknown.status == 65 && unknown.stderr.contains("no key \(kid) in the keyring"))

        let notThere = try keyring.keysCommand(["disable", "zzzzzzzz"])
        #expect(notThere.status == 66 && notThere.stderr.contains("no key zzzzzzzz"))
        let primary = try keyring.keysCommand(["list", "--json"]).stdout
        let primaryKid = (try JSONSerialization.jsonObject(with: Data(primary.utf8)) as! [[String: Any]]).first { $0["state"] as? String == "primary" }!["id"] as! String
        let refuse = try keyring.keysCommand(["destroy", primaryKid])
        #expect(refuse.status == 65 && refuse.stderr.contains("is the primary"))
    }

    @Test func twentyConcurrentRotationsLeaveTwentyOneKeysAndOnePrimary() async throws {
        let keyring = try KeyringFixture()
        let results = try await withThrowingTaskGroup(of: Run.self) { group in
            for _ in 0..<20 {
                group.addTask { try keyring.keysCommand(["rotate"]) }
            }
            return try await group.reduce(into: [Run]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.status == 0 })
        let list = try keyring.keysCommand(["list", "--json"])
        let keys = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as! [[String: Any]]
        #expect(keys.count == 21)
        #expect(keys.filter { $0["state"] as? String == "primary" }.count == 1)
        #expect(Set(keys.compactMap { $0["id"] as? String }).count == 21)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: keyring.keys).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    @Test func keyringOpenToOthersIsRefused() throws {
        let keyring = try KeyringFixture()
        chmod(keyring.keys + "/keyring.json", 0o644)
        let run = try keyring.encrypt(["-b", "x"])
        #expect(run.status == 77)
        #expect(run.stderr.contains("chmod 600 \(keyring.keys)/keyring.json"))
        #expect(run.stderr.split(separator: "\n").count == 1)
        chmod(keyring.keys + "/keyring.json", 0o600)
        chmod(keyring.keys, 0o755)
        let folder = try keyring.encrypt(["-b", "x"])
        #expect(folder.status == 77 && folder.stderr.contains("chmod 700 \(keyring.keys)"))
    }

    @Test func initRefusesToOverwrite() throws {
        let keyring = try KeyringFixture()
        let before = try String(contentsOfFile: keyring.keys + "/keyring.json", encoding: .utf8)
        let again = try keyring.keysCommand(["init"])
        #expect(again.status == 73 && again.stderr.contains("already exists"))
        #expect(try String(contentsOfFile: keyring.keys + "/keyring.json", encoding: .utf8) == before)
    }

    @Test func exportImportMovesAKeyToAReceiver() throws {
        let sender = try KeyringFixture()
        let payload = try sender.encrypt(["-t", "to the phone"]).stdout
        let share = try sender.export()
        #expect(share.hasPrefix("psk1."))

        let receiver = TemporaryFolder()
        let receiverKeys = receiver.file("phone-keys")
        let imported = try pushseal(["keys", "import", "-", "--keys", receiverKeys], stdin: share + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.isEmpty)
        let opened = try pushseal(["decrypt", "--keys", receiverKeys, "-"], stdin: payload)
        #expect(jsonObject(opened.stdout)["title"] as? String == "to the phone")
        // A receiver keyring has no primary, so it cannot send.
        let send = try pushseal(["encrypt", "--keys", receiverKeys, "-b", "x"])
        #expect(send.status == 66 && send.stderr.contains("no primary key"))

        // Typed as an argument it still works, with a warning that never repeats the secret.
        let other = TemporaryFolder()
        let typed = try pushseal(["keys", "import", share, "--keys", other.file("k")])
        #expect(typed.status == 0)
        #expect(typed.stderr.hasPrefix("warning: "))
        #expect(!typed.stderr.contains(String(share.split(separator: ".")[2])))

        receiver.write("share.txt", share)
        let fromFile = try pushseal(["keys", "import", receiver.file("share.txt"), "--keys", receiverKeys])
        #expect(fromFile.status == 0)
        let garbage = try pushseal(["keys", "import", "-", "--keys", receiverKeys], stdin: "psk1.abc.notbase64!")
        #expect(garbage.status == 65 && !garbage.stderr.contains("notbase64"))
    }

    @Test func secretNeverAppearsOutsideExport() throws {
        let keyring = try KeyringFixture()
        let share = try keyring.export()
        let secretURL = String(share.split(separator: ".")[2])
        let secretStandard = base64FromURL(secretURL)
        let stored = try String(contentsOfFile: keyring.keys + "/keyring.json", encoding: .utf8)
        #expect(stored.contains(secretStandard))

        let payload = try keyring.encrypt(["-b", "x"]).stdout
        var runs: [Run] = [
            try keyring.keysCommand(["list"]), try keyring.keysCommand(["list", "--json"]),
            try keyring.keysCommand(["add"]), try keyring.keysCommand(["init"]),
            try keyring.keysCommand(["promote", "nope"]), try keyring.keysCommand(["prune"]),
            try keyring.encrypt(["-b", "x", "-t", "y"]), try keyring.encrypt(["--batch"], stdin: "{}\nbad\n"),
            try keyring.decrypt(payload: payload), try keyring.decrypt(payload: "{}"),
            try keyring.keysCommand(["import", "-"], stdin: share), try keyring.keysCommand(["import", "-"], stdin: "psk1.x.y")
        ]
        let spare = try keyring.keysCommand(["add"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        runs += [
            try keyring.keysCommand(["disable", spare]), try keyring.keysCommand(["enable", spare]),
            try keyring.keysCommand(["promote", spare]), try keyring.keysCommand(["destroy", spare]),
            try pushseal(["receive", "--json", "--keys", keyring.keys, "-"], stdin: payload + "garbage\n"),
            try pushseal(["receive", "--keys", keyring.keys, "-"], stdin: payload),
            try pushseal(["receive", "--json", "--extension", "cat", "-"], stdin: payload),
            try pushseal(["encrypt", "--keys", keyring.keys, "-b", String(repeating: "x", count: 5_000)]),
            try pushseal(["--help"]), try pushseal(["keys", "export", "--help"]),
            try keyring.keysCommand(["rotate"])
        ]
        for run in runs {
            for secret in [secretURL, secretStandard, String(secretStandard.dropLast())] {
                #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret))
            }
        }
    }

    @Test func listShowsStatesWithoutSecrets() throws {
        let keyring = try KeyringFixture()
        _ = try keyring.keysCommand(["rotate", "--grace", "0s"])
        let table = try keyring.keysCommand(["list"])
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("KID") == true)
        #expect(lines.count == 3)
        #expect(table.stdout.contains("expired") && table.stdout.contains("primary"))
    }
}
