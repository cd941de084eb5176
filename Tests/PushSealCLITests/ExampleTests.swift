import Foundation
import Testing

/// The reference senders and openers in examples/: Python on `cryptography`, JavaScript on
/// Node's WebCrypto. Each reproduces the published vectors, and works both ways with the
/// binary: what the example seals `pushseal receive` opens, and what `pushseal encrypt`
/// seals the example opens, for ps1, ps2 and ps3 (a sender key each way).
@Suite("examples: Python and JavaScript against the vectors and the binary")
struct ExampleTests {
    enum Language: String, CaseIterable, Sendable {
        case python, javascript

        var command: [String] {
            switch self {
            case .python: ["python3", VectorTests.repository.appendingPathComponent("examples/python/pushseal_format.py").path]
            case .javascript: ["node", VectorTests.repository.appendingPathComponent("examples/js/pushseal-format.mjs").path]
            }
        }

        func run(_ arguments: [String], stdin: String? = nil) throws -> Run {
            try runProcess("/usr/bin/env", command + arguments, stdin: stdin)
        }
    }

    /// A sender's and a receiver's keyrings for both formats: a shared secret (ps1), and a
    /// device's key pair whose public share the sender imported (ps2).
    struct Keys {
        let scratch = TemporaryFolder()
        let secretKeys: String
        let share: String
        let deviceKeys: String
        let senderKeys: String
        let recipientKid: String
        let publicShare: String
        /// A file holding the device's prk1 share, as `keys export --private` prints it.
        let privateShareFile: String

        init() throws {
            secretKeys = scratch.file("Secret")
            #expect(try pushseal(["keys", "init", "--keys", secretKeys]).status == 0)
            share = try pushseal(["keys", "export", "--keys", secretKeys]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            deviceKeys = scratch.file("Device")
            recipientKid = try pushseal(["keys", "init", "--recipient", "--keys", deviceKeys]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            publicShare = try pushseal(["keys", "export", "--public", "--keys", deviceKeys]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            senderKeys = scratch.file("Sender")
            #expect(try pushseal(["keys", "import", "--keys", senderKeys, "-"], stdin: publicShare).status == 0)
            let exported = try pushseal(["keys", "export", "--private", "--keys", deviceKeys])
            #expect(exported.status == 0 && exported.stdout.hasPrefix("prk1.\(recipientKid)."), "\(exported.stderr)")
            #expect(exported.stderr.contains("private key") && !exported.stderr.contains(exported.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            privateShareFile = scratch.file("device.prk1")
            try exported.stdout.write(toFile: privateShareFile, atomically: true, encoding: .utf8)
        }
    }

    @Test(arguments: Language.allCases)
    func theExampleReproducesTheVectors(language: Language) throws {
        let run = try language.run([
            "vectors", VectorTests.repository.appendingPathComponent("docs/vectors/ps1.json").path,
            VectorTests.repository.appendingPathComponent("docs/vectors/ps2.json").path,
            VectorTests.repository.appendingPathComponent("docs/vectors/ps3.json").path
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("ps3.json: 3 positive reproduced byte for byte, 12 negative refused, 0 edge cases judged alike, 4 repeats shown once"), "\(run.stdout)")
        for version in ["ps1", "ps2"] {
            let edge = try ConformanceTests.cases(version).edge
            #expect(run.stdout.contains("\(version).json: ") && run.stdout.contains("\(edge) edge cases judged alike"), "\(run.stdout)")
        }
        #expect(run.stdout.contains("ps1.json: 5 positive reproduced byte for byte, 13 negative refused"), "\(run.stdout)")
        #expect(run.stdout.contains("ps2.json: 3 positive reproduced byte for byte, 10 negative refused"), "\(run.stdout)")
    }

    @Test(arguments: Language.allCases)
    func whatTheExampleSealsPushsealOpens(language: Language) throws {
        let keys = try Keys()
        for (share, receiverKeys) in [(keys.share, keys.secretKeys), (keys.publicShare, keys.deviceKeys)] {
            let sealed = try language.run(["seal", "--share", share, "--title", "From \(language.rawValue)", "--body", "Ünïcödé ✓ / done"])
            #expect(sealed.status == 0, "\(sealed.stderr)")
            let received = try pushseal(["receive", "--json", "--keys", receiverKeys, "-"], stdin: sealed.stdout)
            let record = jsonObject(received.stdout)
            #expect(record["status"] as? String == "decrypted", "\(share.prefix(4)): \(received.stdout) \(received.stderr)")
            #expect(record["title"] as? String == "From \(language.rawValue)")
            #expect(record["body"] as? String == "Ünïcödé ✓ / done")
        }
    }

    /// The README's two lines, as a reader pastes them into bash.
    @Test func theREADMEsInteropLinesRunAsWritten() throws {
        let keys = try Keys()
        let examples = VectorTests.repository.appendingPathComponent("examples").path
        let run = try shell(
            #"""
            cd "$(dirname "$E")" && pushseal() { "$PUSHSEAL" "$@" --keys "$K"; }
            python3 examples/python/pushseal_format.py seal --share-file <(pushseal keys export) --title Hi --body there \
              | pushseal receive -
            pushseal encrypt -t Hi -b there | node examples/js/pushseal-format.mjs open --share-file <(pushseal keys export)
            """#, environment: ["E": examples, "K": keys.secretKeys, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("decrypted") && run.stdout.contains("\"title\":\"Hi\""), "\(run.stdout)")
    }

    @Test(arguments: Language.allCases)
    func whatPushsealSealsTheExampleOpens(language: Language) throws {
        let keys = try Keys()
        let ps1 = try pushseal(["encrypt", "--keys", keys.secretKeys, "-t", "From pushseal", "-b", "a \"quoted\" body", "--badge", "2"])
        #expect(ps1.status == 0, "\(ps1.stderr)")
        // The secret share from a file, as the README shows it (bash's <(…)), never as an argument.
        let folder = TemporaryFolder()
        folder.write("share", keys.share + "\n")
        let opened = try language.run(["open", "--share-file", folder.file("share")], stdin: ps1.stdout)
        #expect(opened.status == 0, "\(opened.stderr)")
        let alert = jsonObject(opened.stdout)
        #expect(alert["title"] as? String == "From pushseal" && alert["body"] as? String == "a \"quoted\" body" && alert["badge"] as? Int == 2, "\(opened.stdout)")

        let ps2 = try pushseal(["encrypt", "--keys", keys.senderKeys, "--to", keys.recipientKid, "-t", "To the device", "-b", "sealed to its key"])
        #expect(ps2.status == 0, "\(ps2.stderr)")
        let openedPS2 = try language.run(["open", "--private", keys.privateShareFile], stdin: ps2.stdout)
        #expect(openedPS2.status == 0, "\(openedPS2.stderr)")
        #expect(jsonObject(openedPS2.stdout)["title"] as? String == "To the device", "\(openedPS2.stdout)")

        // A payload altered on the way is refused with the runner's status, no plaintext out.
        let tampered = ps1.stdout.replacingOccurrences(of: "\"}", with: "A\"}")
        let refused = try language.run(["open", "--share", keys.share], stdin: tampered)
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stdout)")
        #expect(refused.stderr.hasPrefix("malformed:") || refused.stderr.hasPrefix("auth-failed:"), "\(refused.stderr)")
    }

    /// ps3 both ways: the example's own sender key (its pss1 line allowed by the device) seals
    /// what `pushseal receive` opens, and refuses to open what it did not allow; what
    /// `pushseal encrypt` seals with its sender key the example opens with that sender allowed,
    /// and refuses (sender-untrusted) a ps2 forgery once a sender is allowed.
    @Test(arguments: Language.allCases)
    func senderKeysWorkBothWays(language: Language) throws {
        let keys = try Keys()
        let folder = TemporaryFolder()
        let made = try language.run(["sender-key", folder.file("sender.json")])
        #expect(made.status == 0 && made.stdout.hasPrefix("pss1."), "\(made.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: folder.file("sender.json"))[.posixPermissions] as? Int
        #expect(mode == 0o600, "the sender's private key is kept to its owner")
        #expect(try pushseal(["keys", "import", "--keys", keys.deviceKeys, "-"], stdin: made.stdout).status == 0)
        let sealed = try language.run(["seal", "--share", keys.publicShare, "--sender-key", folder.file("sender.json"), "--title", "From \(language.rawValue)", "--body", "vouched"])
        #expect(sealed.status == 0 && envelope(in: sealed.stdout).hasPrefix("ps3.\(keys.recipientKid)."), "\(sealed.stderr)")
        let forged = try language.run(["seal", "--share", keys.publicShare, "--title", "Forged", "--body", "x"])
        let received = try pushseal(["receive", "--json", "--keys", keys.deviceKeys, "-"], stdin: sealed.stdout + forged.stdout)
        #expect(records(received.stdout).map { $0["status"] as? String } == ["decrypted", "sender-untrusted"], "\(received.stdout)")

        // pushseal's own sender key, allowed by the example's receiver.
        let senderKid = try pushseal(["keys", "add", "--sender", "--keys", keys.senderKeys]).stdout.trimmingCharacters(in: .newlines)
        let share = try pushseal(["keys", "export", "--sender", "--keys", keys.senderKeys]).stdout.trimmingCharacters(in: .newlines)
        let ps3 = try pushseal(["encrypt", "--keys", keys.senderKeys, "--to", keys.recipientKid, "-t", "From pushseal", "-b", "vouched"])
        #expect(envelope(in: ps3.stdout).hasPrefix("ps3.\(keys.recipientKid).\(senderKid)."))
        let opened = try language.run(["open", "--private", keys.privateShareFile, "--sender", share], stdin: ps3.stdout)
        #expect(opened.status == 0 && jsonObject(opened.stdout)["title"] as? String == "From pushseal", "\(opened.stderr)")
        let refused = try language.run(["open", "--private", keys.privateShareFile, "--sender", share], stdin: forged.stdout)
        #expect(refused.status == 1 && refused.stdout.isEmpty && refused.stderr.hasPrefix("sender-untrusted:"), "\(refused.stderr)")
        let unknown = try language.run(["open", "--private", keys.privateShareFile], stdin: ps3.stdout)
        #expect(unknown.status == 1 && unknown.stderr.hasPrefix("sender-untrusted:"), "no sender key to check it with: \(unknown.stderr)")
    }
}
