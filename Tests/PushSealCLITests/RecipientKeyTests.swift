import Foundation
import Testing

/// Recipient keys (ps2): the device makes a P-256 key pair, the sender holds only its
/// public share, and an independent HPKE (Python cryptography's hpke.Suite) agrees.
@Suite("recipient keys: ps2, sealed to a device's public key")
struct RecipientKeyTests {
    let reference = Bundle.module.url(forResource: "ps1_reference", withExtension: "py", subdirectory: "Reference")!.path

    /// A device keyring with one recipient key pair, and a sender's keyring holding only
    /// its public share.
    struct Pairing {
        let folder = TemporaryFolder()
        var device: String { folder.file("Device") }
        var sender: String { folder.file("Sender") }
        let kid: String
        let share: String

        /// A second device whose public share goes into the same sender keyring.
        static func other(in pairing: Pairing) -> (kid: String, device: String) {
            let device = pairing.folder.file("Other")
            let kid =
                (try? pushseal(["keys", "init", "--recipient", "--keys", device]))?.stdout
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            let share = (try? pushseal(["keys", "export", "--public", "--keys", device]))?.stdout ?? ""
            _ = try? pushseal(["keys", "import", "-", "--keys", pairing.sender], stdin: share)
            return (kid, device)
        }

        init() throws {
            let made = try pushseal(["keys", "init", "--recipient", "--keys", folder.file("Device")])
            #expect(made.status == 0, "\(made.stderr)")
            kid = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let exported = try pushseal(["keys", "export", "--public", "--keys", folder.file("Device")])
            #expect(exported.status == 0 && exported.stderr.isEmpty, "no warning for a public share: \(exported.stderr)")
            share = exported.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let imported = try pushseal(["keys", "import", share, "--keys", folder.file("Sender")])
            #expect(imported.status == 0 && imported.stderr.isEmpty, "a public share as an argument earns no warning: \(imported.stderr)")
        }
    }

    @Test func aSenderWithOnlyThePublicShareSealsWhatOnlyTheDeviceOpens() throws {
        let pairing = try Pairing()
        #expect(pairing.share.hasPrefix("ppk1.\(pairing.kid).") && pairing.share.count == "ppk1.\(pairing.kid).".count + 87)
        let sent = try pushseal(["encrypt", "--keys", pairing.sender, "--to", pairing.kid, "-t", "Deploy", "-b", "api-7 is live"])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(envelope(in: sent.stdout).hasPrefix("ps2.\(pairing.kid)."))
        #expect(!sent.stdout.contains("api-7"))
        pairing.folder.write("payload.json", sent.stdout)
        let opened = try pushseal(["decrypt", "--keys", pairing.device, pairing.folder.file("payload.json")])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(jsonObject(opened.stdout)["body"] as? String == "api-7 is live")
        // The sender's keyring cannot read its own message, and says why.
        let record = jsonObject(try pushseal(["receive", "--json", "--keys", pairing.sender, pairing.folder.file("payload.json")]).stdout)
        #expect(record["status"] as? String == "key-missing")
        #expect((record["reason"] as? String ?? "").contains("only the public key"))
        #expect(jsonObject(try pushseal(["receive", "--json", "--keys", pairing.device, pairing.folder.file("payload.json")]).stdout)["status"] as? String == "decrypted")
        // The sender's keyring holds no secret at all.
        let held = try String(contentsOfFile: pairing.sender + "/keyring.json", encoding: .utf8)
        #expect(held.contains(#""kind":"public""#) && !held.contains(#""secret":""#))
        let list = try pushseal(["keys", "list", "--json", "--keys", pairing.sender])
        #expect((jsonArray(list.stdout).first?["kind"] as? String) == "public")
    }

    @Test func pythonsHPKEAndPushsealAgreeBothWays() throws {
        let pairing = try Pairing()
        let sent = try pushseal(["encrypt", "--keys", pairing.sender, "--to", pairing.kid, "-t", "To Python", "-b", "über ✅"])
        let opened = try runProcess("/usr/bin/env", ["python3", reference, "open2", pairing.device + "/keyring.json", pairing.kid], stdin: sent.stdout)
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(jsonObject(opened.stdout)["body"] as? String == "über ✅")
        let alert = #"{"title":"From Python","body":"sealed by hpke.Suite","id":"py-2","sent":1796200000}"#
        let sealed = try runProcess("/usr/bin/env", ["python3", reference, "seal2", pairing.share], stdin: alert)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        pairing.folder.write("python.json", sealed.stdout)
        let decrypted = try pushseal(["decrypt", "--keys", pairing.device, pairing.folder.file("python.json")])
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        #expect(decrypted.stdout == alert + "\n")
    }

    @Test func everyChangedCharacterAndASwappedKidReleaseNoPlaintext() throws {
        let pairing = try Pairing()
        let sent = try pushseal(["encrypt", "--keys", pairing.sender, "--to", pairing.kid, "-b", "tamper-evident"]).stdout
        let enc = envelope(in: sent)
        let sealed = String(enc.split(separator: ".")[2])
        var lines: [String] = []
        // A changed character at every eighth position of the sealed bytes, and a truncated enc.
        for offset in stride(from: 0, to: sealed.count, by: 8) {
            var characters = Array(sealed)
            characters[offset] = characters[offset] == "A" ? "B" : "A"
            lines.append(sent.replacingOccurrences(of: enc, with: "ps2.\(pairing.kid)." + String(characters)))
        }
        lines.append(sent.replacingOccurrences(of: enc, with: "ps2.\(pairing.kid)." + sealed.dropFirst(4)))
        // Another device's kid on this envelope: that key does not open it.
        let other = try pushseal(["keys", "add", "--recipient", "--keys", pairing.device]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        lines.append(sent.replacingOccurrences(of: "ps2.\(pairing.kid).", with: "ps2.\(other)."))
        let run = try pushseal(["receive", "--json", "--keys", pairing.device, "-"], stdin: lines.map { $0.trimmingCharacters(in: .newlines) }.joined(separator: "\n") + "\n")
        let records = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == lines.count)
        #expect(records.allSatisfy { ["auth-failed", "malformed"].contains($0["status"] as? String ?? "") }, "\(records.map { $0["status"]! })")
        #expect(!run.stdout.contains("tamper-evident"))
    }

    @Test func rotationKeepsTheKindAndAVersionOneKeyringStillLoads() throws {
        let pairing = try Pairing()
        let rotated = try pushseal(["keys", "rotate", "--keys", pairing.device]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let list = jsonArray(try pushseal(["keys", "list", "--json", "--keys", pairing.device]).stdout)
        #expect(list.map { $0["kind"] as? String } == ["private", "private"])
        #expect(list.first { $0["id"] as? String == rotated }?["state"] as? String == "primary")
        // A keyring written by an earlier pushseal (format /1) opens as it is, unchanged on disk.
        let keyring = try KeyringFixture()
        let path = keyring.keys + "/keyring.json"
        let current = try String(contentsOfFile: path, encoding: .utf8)
        let versionOne = current.replacingOccurrences(of: "pushseal-keyring/2", with: "pushseal-keyring/1")
            .replacingOccurrences(of: #""kind":"secret","#, with: "")
        try versionOne.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let payload = try keyring.encrypt(["-b", "still works"]).stdout
        let opened = try keyring.decrypt(payload: payload)
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == versionOne, "read, not rewritten")
        _ = try pushseal(["keys", "rotate", "--keys", keyring.keys])
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("pushseal-keyring/2"), "written as /2 once changed")
    }

    @Test func batchLinesNameTheirRecipientWithTo() throws {
        let pairing = try Pairing()
        let second = Pairing.other(in: pairing)
        let lines = """
            {"title":"to the first","to":"\(pairing.kid)"}
            {"title":"to the second","to":"\(second.kid)"}
            {"title":"to nobody known","to":"feedface"}
            """
        let run = try pushseal(["encrypt", "--batch", "--keys", pairing.sender], stdin: lines + "\n")
        #expect(run.status == 65, "the unknown recipient's line is reported: \(run.stderr)")
        #expect(run.stderr.contains("line 3: "))
        let payloads = run.stdout.split(separator: "\n").map(String.init)
        #expect(payloads.map { String(envelope(in: $0).prefix(13)) } == ["ps2.\(pairing.kid).", "ps2.\(second.kid)."])
        let opened = try pushseal(["receive", "--json", "--keys", second.device, "-"], stdin: payloads[1] + "\n")
        #expect(jsonObject(opened.stdout)["title"] as? String == "to the second")
    }

    /// The library says what the key is; the CLI adds what --to takes, in one line.
    @Test func toASharedSecretSaysWhatToTakes() throws {
        let keyring = try KeyringFixture()
        let listed = try keyring.keysCommand(["list", "--json"]).stdout
        let kid = try #require((try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])?.first?["id"] as? String)
        let run = try keyring.encrypt(["--to", kid, "-b", "x"])
        #expect(run.status == 65)
        #expect(run.stderr == "error: key \(kid) is a shared secret; --to takes a recipient key (imported with 'keys import ppk1…')\n", "\(run.stderr)")
    }

    @Test func disableDestroyAndPruneWorkForEveryKind() throws {
        let pairing = try Pairing()
        // The sender's public key: disabled, it seals nothing; enabled again, it does.
        #expect(try pushseal(["keys", "disable", pairing.kid, "--keys", pairing.sender]).status == 0)
        let refused = try pushseal(["encrypt", "--keys", pairing.sender, "--to", pairing.kid, "-b", "x"])
        #expect(refused.status == 66 && refused.stderr.contains("disabled"), "\(refused.stderr)")
        #expect(try pushseal(["keys", "enable", pairing.kid, "--keys", pairing.sender]).status == 0)
        #expect(try pushseal(["encrypt", "--keys", pairing.sender, "--to", pairing.kid, "-b", "x"]).status == 0)
        // The device's pair: rotated with no grace and pruned, its scalar and point are gone.
        let rotated = try pushseal(["keys", "rotate", "--grace", "0s", "--keys", pairing.device])
        #expect(rotated.status == 0)
        let pruned = try pushseal(["keys", "prune", "--keys", pairing.device])
        #expect(pruned.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == pairing.kid)
        let file = try String(contentsOfFile: pairing.device + "/keyring.json", encoding: .utf8)
        let line = try #require(file.split(separator: "\n").first { $0.contains(pairing.kid) })
        #expect(line.contains(#""kind":"private""#) && line.contains(#""state":"destroyed""#))
        #expect(!line.contains(#""secret":""#) && !line.contains(#""public":""#))
        // Destroyed on the sender's side too: nothing to seal to.
        #expect(try pushseal(["keys", "destroy", pairing.kid, "--keys", pairing.sender]).status == 0)
        #expect(try pushseal(["encrypt", "--keys", pairing.sender, "--to", pairing.kid, "-b", "x"]).status == 66)
        #expect(try pushseal(["keys", "export", "--public", pairing.kid, "--keys", pairing.sender]).status == 66)
    }

    @Test func publicSharesAndToAreCheckedOnTheWayIn() throws {
        let pairing = try Pairing()
        var broken = Array(pairing.share)
        broken[broken.count - 3] = broken[broken.count - 3] == "A" ? "B" : "A"
        let offCurve = try pushseal(["keys", "import", String(broken), "--keys", pairing.sender])
        #expect(offCurve.status == 65)
        #expect(offCurve.stderr.contains("not a public key share"))
        let secretKeyring = try KeyringFixture()
        let toSecret = try pushseal(["encrypt", "--keys", secretKeyring.keys, "--to", String(try secretKeyring.export().split(separator: ".")[1]), "-b", "x"])
        #expect(toSecret.status == 65 && toSecret.stderr.contains("is a shared secret"))
        let unknown = try pushseal(["encrypt", "--keys", pairing.sender, "--to", "feedface", "-b", "x"])
        #expect(unknown.status == 66)
        let secretShare = try pushseal(["keys", "export", "--public", "--keys", secretKeyring.keys])
        #expect(secretShare.status == 65 && secretShare.stdout.isEmpty)
        // A private key leaves only as its public share.
        let device = try pushseal(["keys", "export", "--keys", pairing.device])
        #expect(device.stdout.hasPrefix("ppk1.") && !device.stdout.contains("psk1"))
    }
}

func jsonArray(_ text: String) -> [[String: Any]] {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? []
}
