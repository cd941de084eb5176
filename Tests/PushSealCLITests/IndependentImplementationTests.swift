import Foundation
import Testing

/// Cross-checks against Python's `cryptography` package (Scripts/test.sh installs it).
@Suite("interoperability with an independent AES-GCM implementation")
struct IndependentImplementationTests {
    let reference = Bundle.module.url(forResource: "ps1_reference", withExtension: "py", subdirectory: "Reference")!.path

    @Test func pythonOpensWhatPushsealSeals() throws {
        let keyring = try KeyringFixture()
        let payload = try keyring.encrypt(["-t", "Déploiement", "-b", "api-7 is live / ✅", "--data", "n:=1"]).stdout
        let run = try runProcess("/usr/bin/env", ["python3", reference, "open", try keyring.export()], stdin: payload)
        #expect(run.status == 0, "\(run.stderr)")
        let alert = jsonObject(run.stdout)
        #expect(alert["title"] as? String == "Déploiement")
        #expect(alert["body"] as? String == "api-7 is live / ✅")
    }

    @Test func pushsealOpensWhatPythonSeals() throws {
        let keyring = try KeyringFixture()
        let alert = #"{"title":"From Python","body":"sealed elsewhere","badge":2,"id":"py-1","sent":1796200000}"#
        let sealed = try runProcess("/usr/bin/env", ["python3", reference, "seal", try keyring.export()], stdin: alert)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let opened = try keyring.decrypt(payload: sealed.stdout)
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == alert + "\n")

        let enc = envelope(in: sealed.stdout)
        let tampered = sealed.stdout.replacingOccurrences(of: enc, with: String(enc.dropLast(2)) + (enc.hasSuffix("AA") ? "BA" : "AA"))
        let rejected = try keyring.decrypt(payload: tampered)
        #expect(rejected.status == 65 && rejected.stdout.isEmpty)
    }

    @Test func receiverDecryptsPythonSealedPayloadsAndRefusesTamperedOnes() throws {
        let keyring = try KeyringFixture()
        let share = try keyring.export()
        var lines: [String] = []
        for index in 0..<3 {
            let alert = #"{"title":"Python \#(index)","body":"secret body \#(index)","id":"p\#(index)","sent":1796200000}"#
            let sealed = try runProcess("/usr/bin/env", ["python3", reference, "seal", share], stdin: alert)
            #expect(sealed.status == 0, "\(sealed.stderr)")
            lines.append(sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let enc = envelope(in: lines[2])
        var characters = Array(enc)
        characters[characters.count - 20] = characters[characters.count - 20] == "A" ? "B" : "A"
        lines[2] = lines[2].replacingOccurrences(of: enc, with: String(characters))

        let run = try pushseal(["receive", "--json", "--keys", keyring.keys, "-"], stdin: lines.joined(separator: "\n") + "\n")
        #expect(run.status == 0, "\(run.stderr)")
        let output = records(run.stdout)
        #expect(output.map { $0["status"] as? String } == ["decrypted", "decrypted", "auth-failed"])
        #expect(output[1]["title"] as? String == "Python 1" && output[1]["body"] as? String == "secret body 1")
        #expect(!run.stdout.contains("secret body 2") && !run.stderr.contains("secret body 2"))
        #expect(!run.stdout.contains("Python 2") && !run.stderr.contains("Python 2"))
    }
}
