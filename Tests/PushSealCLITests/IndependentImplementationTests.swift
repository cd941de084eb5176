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
}
