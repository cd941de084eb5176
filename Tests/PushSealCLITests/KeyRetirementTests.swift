import Foundation
import Testing

/// A share carries no state, so a sender's retirement of a key travels as its own line
/// (`psr1.<kid>.<time>`, from `keys export --retirements`): once the grace ends and both sides
/// prune, the receiver's copy opens nothing either.
@Suite("Receivers retire keys")
struct KeyRetirementTests {
    @Test func aKeyPrunedByTheSenderStopsOpeningOnTheReceiver() throws {
        let sender = try KeyringFixture()
        let receiver = TemporaryFolder()
        let receiverKeys = receiver.file("Keys")
        #expect(try pushseal(["keys", "import", "-", "--keys", receiverKeys], stdin: try sender.export() + "\n").status == 0)
        let old = try sender.encrypt(["-t", "sealed under the old key"]).stdout
        let oldKid = String(envelope(in: old).split(separator: ".")[1])

        // The README's routine: rotate with a grace, then carry the new key and the old one's
        // retirement to the receiver in one import.
        #expect(try sender.keysCommand(["rotate", "--grace", "1d"]).status == 0)
        let carried = try shell(
            #"{ "$PUSHSEAL" keys export --keys "$S"; "$PUSHSEAL" keys export --retirements --keys "$S"; } | "$PUSHSEAL" keys import - --keys "$R""#,
            environment: ["S": sender.keys, "R": receiverKeys])
        #expect(carried.status == 0, "\(carried.stderr)")
        #expect(carried.stdout.split(separator: "\n").last.map(String.init) == oldKid)
        let notice = try sender.keysCommand(["export", "--retirements"]).stdout
        #expect(notice.hasPrefix("psr1.\(oldKid).") && notice.split(separator: "\n").count == 1)
        let new = try sender.encrypt(["-t", "sealed under the new key"]).stdout

        func received(_ payload: String, keys: String, daysOn: Int) throws -> String {
            let run = try pushseal(
                ["receive", "--json", "--keys", keys, "-"], stdin: payload,
                environment: ["PUSHSEAL_TEST_CLOCK_OFFSET": String(daysOn * 86_400)])
            return jsonObject(run.stdout)["status"] as? String ?? run.stderr
        }
        // Within the grace both sides still open the old key's message.
        #expect(try received(old, keys: receiverKeys, daysOn: 0) == "decrypted")
        #expect(try received(old, keys: sender.keys, daysOn: 0) == "decrypted")
        // Past it, both say key-expired, and both prunes destroy it.
        #expect(try received(old, keys: receiverKeys, daysOn: 2) == "key-expired")
        #expect(try received(old, keys: sender.keys, daysOn: 2) == "key-expired")
        for keys in [sender.keys, receiverKeys] {
            let pruned = try pushseal(["keys", "prune", "--keys", keys], environment: ["PUSHSEAL_TEST_CLOCK_OFFSET": String(2 * 86_400)])
            #expect(pruned.status == 0 && pruned.stdout == oldKid + "\n", "\(pruned.stderr)")
            #expect(try received(old, keys: keys, daysOn: 2) == "key-missing")
            let decrypted = try pushseal(["decrypt", "--keys", keys, "-"], stdin: old)
            #expect(decrypted.status == 65 && decrypted.stderr.contains("was destroyed"))
            #expect(try received(new, keys: keys, daysOn: 2) == "decrypted")
        }
        // The destroyed key's notice says it is retired as of now.
        let after = try sender.keysCommand(["export", "--retirements"]).stdout
        #expect(after.hasPrefix("psr1.\(oldKid).") && after.hasSuffix("\n"))
    }

    @Test func aNoticeOnlyBringsTheEndCloserAndNeverTouchesAPrimary() throws {
        let receiver = try KeyringFixture()
        let kid = try receiver.keysCommand(["add"]).stdout.trimmingCharacters(in: .newlines)
        let soon = Int(Date().timeIntervalSince1970) + 3_600
        #expect(try receiver.keysCommand(["import", "-"], stdin: "psr1.\(kid).\(soon)\n").status == 0)
        // A later notice imported afterwards cannot revive the key.
        #expect(try receiver.keysCommand(["import", "psr1.\(kid).\(soon + 86_400)"]).status == 0)
        let listed = try receiver.keysCommand(["list", "--json"]).stdout
        let entry = (try JSONSerialization.jsonObject(with: Data(listed.utf8)) as! [[String: Any]]).first { $0["id"] as? String == kid }
        #expect(entry?["expires"] as? String == ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(soon))))
        // A notice for a key that is not held changes nothing and is no error.
        #expect(try receiver.keysCommand(["import", "psr1.notheld1.\(soon)"]).status == 0)

        let primary = try receiver.keysCommand(["list", "--json"]).stdout
        let primaryKid = (try JSONSerialization.jsonObject(with: Data(primary.utf8)) as! [[String: Any]]).first { $0["state"] as? String == "primary" }?["id"] as! String
        let refused = try receiver.keysCommand(["import", "psr1.\(primaryKid).0"])
        #expect(refused.status != 0 && refused.stderr.contains("primary"))
    }

    @Test func oneBadLineImportsNothing() throws {
        let sender = try KeyringFixture()
        let receiver = TemporaryFolder()
        let input = try sender.export() + "\npsr1.abc.12x\n"
        let run = try pushseal(["keys", "import", "-", "--keys", receiver.file("Keys")], stdin: input)
        #expect(run.status == 65)
        #expect(run.stderr.hasPrefix("error: line 2: not a retirement notice: the time must be seconds since 1970"))
        #expect(run.stderr.contains("nothing was imported"))
        #expect(try pushseal(["keys", "list", "--keys", receiver.file("Keys")]).stdout.split(separator: "\n").count <= 1)

        for wrong in [["--public"], ["--qr"], ["abcd1234"]] {
            let usage = parsed(["keys", "export", "--retirements"] + wrong)
            #expect(usage.status == 64 && usage.stderr.contains("--retirements prints the notices of every retiring key"))
        }
    }
}
