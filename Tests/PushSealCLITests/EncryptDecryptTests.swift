import Foundation
import Testing

@Suite("pushseal encrypt and decrypt, as a process")
struct EncryptDecryptTests {
    @Test func sealedPayloadOpensToTheAlert() throws {
        let keyring = try KeyringFixture()
        let run = try keyring.encrypt([
            "-t", "Disk on db-3", "-b", "91% used on /var", "--subtitle", "prod", "-g", "disks", "-l", "time-sensitive", "--badge", "4", "-s", "default", "--url", "https://ops.example.com/db-3",
            "--data", "host=db-3", "--data", "pct:=91"
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasSuffix("\n") && run.stdout.filter { $0 == "\n" }.count == 1)
        #expect(run.stdout.utf8.count - 1 <= 4096)
        #expect(!run.stdout.contains("db-3") && !run.stdout.contains("91%"))
        #expect(!run.stdout.contains("\\/"))
        let payload = jsonObject(run.stdout)
        let aps = payload["aps"] as? [String: Any]
        #expect(aps?["mutable-content"] as? Int == 1)
        #expect((aps?["alert"] as? [String: Any])?["title"] as? String == "New notification")

        let opened = try keyring.decrypt(payload: run.stdout)
        #expect(opened.status == 0, "\(opened.stderr)")
        let alert = jsonObject(opened.stdout)
        #expect(alert["title"] as? String == "Disk on db-3")
        #expect(alert["body"] as? String == "91% used on /var")
        #expect(alert["subtitle"] as? String == "prod")
        #expect(alert["thread-id"] as? String == "disks")
        #expect(alert["interruption-level"] as? String == "time-sensitive")
        #expect(alert["badge"] as? Int == 4)
        #expect((alert["data"] as? [String: Any])?["url"] as? String == "https://ops.example.com/db-3")
        #expect((alert["data"] as? [String: Any])?["pct"] as? Int == 91)
        #expect(opened.stdout.contains(#""url":"https://ops.example.com/db-3""#))
    }

    @Test func bodyFromStdinOnlyWithDash() throws {
        let keyring = try KeyringFixture()
        let run = try keyring.encrypt(["-t", "df", "-"], stdin: "Filesystem  Use%\n/dev/vda  91%\n")
        #expect(run.status == 0)
        let alert = jsonObject(try keyring.decrypt(payload: run.stdout).stdout)
        #expect(alert["body"] as? String == "Filesystem  Use%\n/dev/vda  91%")
        // Without '-', stdin is never read, so this does not wait for input.
        let titleOnly = try keyring.encrypt(["-t", "only a title"], stdin: "ignored")
        #expect(titleOnly.status == 0)
        #expect(jsonObject(try keyring.decrypt(payload: titleOnly.stdout).stdout)["body"] == nil)
    }

    @Test func fallbackAndFieldAreTheSendersChoice() throws {
        let keyring = try KeyringFixture()
        let run = try keyring.encrypt(["-b", "x", "--fallback-title", "Ops", "--fallback-body", "Check the app", "--field", "sealed", "--pad", "64"])
        let payload = jsonObject(run.stdout)
        #expect(((payload["aps"] as? [String: Any])?["alert"] as? [String: Any])?["body"] as? String == "Check the app")
        #expect(payload["enc"] == nil && payload["sealed"] != nil)
        let opened = try pushseal(["decrypt", "--keys", keyring.keys, "--field", "sealed", "-"], stdin: run.stdout)
        #expect(opened.status == 0)
        // 64-byte padding: the ciphertext is a multiple of 64 bytes.
        let box = Data(base64Encoded: base64FromURL(String(envelope(in: run.stdout, field: "sealed").split(separator: ".")[2])))!
        #expect((box.count - 28) % 64 == 0)
    }

    @Test func everySingleCharacterChangeIsRejectedWithoutPlaintext() throws {
        let keyring = try KeyringFixture()
        let secret = "launch code 0000"
        let payload = try keyring.encrypt(["-t", "Secret", "-b", secret]).stdout
        let enc = Array(envelope(in: payload))
        for index in enc.indices {
            var altered = enc
            altered[index] = enc[index] == "A" ? "B" : "A"
            let tampered = payload.replacingOccurrences(of: String(enc), with: String(altered))
            let run = try keyring.decrypt(payload: tampered)
            #expect(run.status == 65, "position \(index): \(run.stderr)")
            #expect(run.stdout.isEmpty, "position \(index)")
            #expect(run.stderr.hasPrefix("error: "), "position \(index)")
            #expect(!run.stderr.contains(secret))
        }
    }

    @Test func tamperedTagSaysAuthenticationFailed() throws {
        let keyring = try KeyringFixture()
        let payload = try keyring.encrypt(["-b", "hello"]).stdout
        let enc = envelope(in: payload)
        let flipped = String(enc.dropLast()) + (enc.last == "A" ? "Q" : "A")
        let run = try keyring.decrypt(payload: payload.replacingOccurrences(of: enc, with: flipped))
        #expect(run.status == 65)
        #expect(run.stderr.contains("authentication failed"))
        #expect(run.stdout.isEmpty)
    }

    @Test func oversizedAlertFailsWithBytesOver() throws {
        let keyring = try KeyringFixture()
        let run = try keyring.encrypt(["-t", "big", "-b", String(repeating: "é", count: 2_500)])
        #expect(run.status == 65)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.range(of: #"error: the payload would be \d+ bytes, \d+ over APNs' 4096-byte limit"#, options: .regularExpression) != nil, "\(run.stderr)")
    }

    @Test func batchTurnsEachLineIntoOnePayloadAndReportsBadLines() throws {
        let keyring = try KeyringFixture()
        var lines = (1...1_000).map { #"{"title":"Job \#($0)","body":"done","data":{"n":\#($0)}}"# }
        lines.insert("not json", at: 500)
        lines.insert("", at: 10)
        let run = try keyring.encrypt(["--batch"], stdin: lines.joined(separator: "\n") + "\n")
        #expect(run.status == 65)
        #expect(run.stderr.contains("error: line 502:"))
        let payloads = run.stdout.split(separator: "\n")
        #expect(payloads.count == 1_000)
        let last = jsonObject(try keyring.decrypt(payload: String(payloads[999])).stdout)
        #expect(last["title"] as? String == "Job 1000")
        #expect(Set(payloads.map { envelope(in: String($0)) }).count == 1_000)
    }

    @Test func usageErrorsExit64WithUsageLine() throws {
        let run = parsed(["encrypt", "--no-such-flag"])
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("error: unknown option '--no-such-flag'\nUsage: pushseal encrypt"))
        #expect(run.stdout.isEmpty)
    }

    @Test func helpAtEveryLevelExitsZero() throws {
        for arguments in [["--help"], ["help"], ["keys", "--help"], ["keys", "rotate", "--help"], ["encrypt", "--help"], ["decrypt", "-h"], ["help", "keys", "import"]] {
            let run = try pushseal(arguments)
            #expect(run.status == 0, "\(arguments)")
            #expect(run.stdout.hasPrefix("OVERVIEW: "), "\(arguments)")
        }
    }

    @Test func missingInputAndKeyringExit66() throws {
        let folder = TemporaryFolder()
        let noKeyring = try pushseal(["encrypt", "--keys", folder.file("none"), "-b", "x"])
        #expect(noKeyring.status == 66)
        #expect(noKeyring.stderr.contains("pushseal keys init"))
        let keyring = try KeyringFixture()
        let noFile = try pushseal(["decrypt", "--keys", keyring.keys, folder.file("missing.json")])
        #expect(noFile.status == 66)
    }

    @Test func environmentSuppliesKeysAndField() throws {
        let keyring = try KeyringFixture()
        let run = try pushseal(["encrypt", "-b", "from env"], environment: ["PUSHSEAL_KEYS": keyring.keys, "PUSHSEAL_FIELD": "x"])
        #expect(run.status == 0)
        #expect(jsonObject(run.stdout)["x"] != nil)
    }
}

func base64FromURL(_ text: String) -> String {
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while standard.count % 4 != 0 { standard += "=" }
    return standard
}
