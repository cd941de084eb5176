import Foundation
import Testing

/// `pushseal doctor send`: a sender's set-up checked against the APNs stand-in (and the
/// listener) without sending a notification, every broken set-up named with its fix.
@Suite("doctor send: a sender's set-up, checked without sending")
struct DoctorSendTests {
    struct Setup {
        let sending: SendTests.Sending
        let standIn: APNsStandIn

        init(script: String = "{}") throws {
            sending = try SendTests.Sending()
            standIn = try APNsStandIn(for: sending, script: script)
        }

        /// `doctor send --json` with the good set-up's options, `changes` applied.
        func doctor(_ changes: [String: String?] = [:], extra: [String] = []) throws -> (run: Run, report: [String: Any]) {
            var options: [(String, String?)] = [
                ("--keys", sending.keyring.keys), ("--endpoint", standIn.url), ("--cacert", standIn.certificate),
                ("--topic", topic), ("--auth-key", sending.p8), ("--key-id", "KEY1234567"), ("--team-id", "TEAM123456")
            ]
            for (name, value) in changes {
                if let index = options.firstIndex(where: { $0.0 == name }) { options[index].1 = value } else { options.append((name, value)) }
            }
            let arguments = options.flatMap { option in option.1.map { [option.0, $0] } ?? [] }
            let run = try pushseal(["doctor", "send", "--json"] + arguments + extra)
            return (run, jsonObject(run.stdout))
        }
    }

    static func problem(_ report: [String: Any], _ check: String) -> [String: Any]? {
        (report["findings"] as? [[String: Any]] ?? []).first { $0["check"] as? String == check && $0["level"] as? String == "problem" }
    }

    /// The stand-in saw no request but the probe: nothing was sent to a device.
    static func onlyTheProbe(_ standIn: APNsStandIn) -> Bool {
        standIn.log.allSatisfy { ($0["device"] as? String) == nil && $0["reason"] as? String != nil }
    }

    @Test func aGoodSetUpPassesEveryCheckAndSendsNothing() throws {
        let setup = try Setup()
        let (run, report) = try setup.doctor()
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(report["ready"] as? Bool == true)
        let levels = Dictionary((report["findings"] as? [[String: Any]] ?? []).map { ($0["check"] as! String, $0["level"] as! String) }) { $1 }
        for check in ["auth key", "key id", "topic", "trust", "endpoint", "token", "credentials"] {
            #expect(levels[check] == "ok", "\(check): \(run.stdout)")
        }
        #expect(setup.standIn.log.count == 1 && setup.standIn.log.first?["reason"] as? String == "BadDeviceToken", "\(setup.standIn.log)")
        let text = try pushseal([
            "doctor", "send", "--keys", setup.sending.keyring.keys, "--endpoint", setup.standIn.url, "--cacert",
            setup.standIn.certificate, "--topic", topic, "--auth-key", setup.sending.p8, "--key-id", "KEY1234567",
            "--team-id", "TEAM123456"
        ])
        #expect(text.stdout.contains("ok       credentials the provider token was accepted (the probe was refused for its device token alone: BadDeviceToken)"), "\(text.stdout)")
        #expect(text.stdout.hasSuffix("verdict: ready: APNs accepts this sender's connection, credentials and topic\n"), "\(text.stdout)")
    }

    struct Broken: Sendable, CustomTestStringConvertible {
        let name: String
        let check: String
        let says: String
        var testDescription: String { name }
    }

    static let broken: [Broken] = [
        Broken(name: "the .p8 is missing", check: "auth key", says: "cannot read"),
        Broken(name: "the .p8 is readable by others", check: "auth key", says: "can be read by group or others (mode 0644)"),
        Broken(name: "the .p8 is not a P-256 key", check: "auth key", says: "is not an APNs signing key"),
        Broken(name: "the .p8 is encrypted", check: "auth key", says: "is encrypted with a passphrase"),
        Broken(name: "another key's id", check: "credentials", says: "refused the provider token (InvalidProviderToken)"),
        Broken(name: "another team's id", check: "credentials", says: "refused the provider token (InvalidProviderToken)"),
        Broken(name: "the key id against the file's name", check: "key id", says: "but --key-id is KEY1234567"),
        Broken(name: "a topic the server refuses", check: "topic", says: "the server refused topic com.example.other (BadTopic)"),
        Broken(name: "a voip push without .voip", check: "topic", says: "a voip push goes to the topic <bundle id>.voip"),
        Broken(name: "nothing listens there", check: "endpoint", says: "cannot reach"),
        Broken(name: "an untrusted certificate", check: "tls", says: "is not accepted"),
        Broken(name: "a server without HTTP/2", check: "http/2", says: "does not speak HTTP/2"),
        Broken(name: "a clock ten minutes fast", check: "clock", says: "s ahead of the server's"),
        Broken(name: "a proxy that is not there", check: "proxy", says: "proxy"),
        Broken(name: "a trust file without certificates", check: "trust", says: "holds no PEM certificate")
    ]

    @Test(arguments: broken)
    func eachBrokenSetUpIsNamedWithItsFix(_ entry: Broken) throws {
        var script = "{}"
        if entry.name == "a server without HTTP/2" { script = #"{"alpn": ["http/1.1"]}"# }
        if entry.name == "a clock ten minutes fast" { script = #"{"date_offset": -600}"# }
        let setup = try Setup(script: script)
        let folder = setup.sending.folder
        var changes: [String: String?] = [:]
        var extra: [String] = []
        switch entry.name {
        case "the .p8 is missing": changes["--auth-key"] = folder.file("AuthKey_KEY1234567.p8")
        case "the .p8 is readable by others":
            chmod(setup.sending.p8, 0o644)
        case "the .p8 is not a P-256 key":
            let made = try shell(
                "openssl ecparam -name secp384r1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt > \"$F\"",
                environment: ["F": folder.file("p384.p8")])
            #expect(made.status == 0, "\(made.stderr)")
            chmod(folder.file("p384.p8"), 0o600)
            changes["--auth-key"] = folder.file("p384.p8")
        case "the .p8 is encrypted":
            let made = try shell(
                "openssl pkcs8 -topk8 -in \"$P\" -v2 aes-256-cbc -passout pass:secret > \"$F\"",
                environment: ["P": setup.sending.p8, "F": folder.file("encrypted.p8")])
            #expect(made.status == 0, "\(made.stderr)")
            chmod(folder.file("encrypted.p8"), 0o600)
            changes["--auth-key"] = folder.file("encrypted.p8")
        case "another key's id": changes["--key-id"] = "OTHER12345"
        case "another team's id": changes["--team-id"] = "OTHER12345"
        case "the key id against the file's name":
            let named = folder.file("AuthKey_ABCDE12345.p8")
            try FileManager.default.copyItem(atPath: setup.sending.p8, toPath: named)
            chmod(named, 0o600)
            changes["--auth-key"] = named
        case "a topic the server refuses": changes["--topic"] = "com.example.other"
        case "a voip push without .voip": extra = ["--push-type", "voip"]
        case "nothing listens there": changes["--endpoint"] = "https://127.0.0.1:1"
        case "an untrusted certificate": changes.updateValue(nil, forKey: "--cacert")
        case "a proxy that is not there": extra = ["--proxy", "http://127.0.0.1:1"]
        case "a trust file without certificates":
            folder.write("empty.pem", "not a certificate\n")
            changes["--cacert"] = folder.file("empty.pem")
        default: break
        }
        let (run, report) = try setup.doctor(changes, extra: extra)
        #expect(run.status == 78, "a problem exits 78: \(run.stdout) \(run.stderr)")
        #expect(report["ready"] as? Bool == false)
        let found = Self.problem(report, entry.check)
        #expect((found?["says"] as? String)?.contains(entry.says) == true, "\(entry.check): \(run.stdout)")
        #expect((found?["fix"] as? String)?.isEmpty == false, "every problem has its fix: \(run.stdout)")
        #expect(Self.onlyTheProbe(setup.standIn), "doctor send sent a notification: \(setup.standIn.log)")
    }

    /// Against pushseal's own listener, which checks tokens with the sender's public key.
    @Test func theListenerAcceptsAGoodSetUpAndRefusesAnotherKey() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let arguments = [
            "doctor", "send", "--json", "--keys", sending.keyring.keys, "--endpoint", listener.url,
            "--cacert", sending.keyring.keys + "/tls-cert.pem", "--topic", topic, "--auth-key", sending.p8, "--team-id", "TEAM123456"
        ]
        let good = try pushseal(arguments + ["--key-id", "KEY1234567"])
        #expect(good.status == 0, "\(good.stdout) \(good.stderr)")
        let other = try pushseal(arguments + ["--key-id", "OTHER12345"])
        #expect(other.status == 78)
        #expect((Self.problem(jsonObject(other.stdout), "credentials")?["says"] as? String)?.contains("InvalidProviderToken") == true, "\(other.stdout)")
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == 2 && records.allSatisfy { $0["status"] as? String == "rejected" }, "nothing was delivered: \(records)")
    }

    /// A client certificate instead of a provider token: accepted by a server that demands
    /// one; an encrypted key without its passphrase is named before anything is sent.
    @Test func aClientCertificateIsCheckedToo() throws {
        let sending = try SendTests.Sending()
        let certificates = try SendCertificateTests.Certificates()
        let standIn = try APNsStandIn(for: sending, script: #"{"client_ca": "\#(certificates.file("ca.pem"))"}"#)
        func doctor(_ certificate: String) throws -> Run {
            try pushseal([
                "doctor", "send", "--json", "--keys", sending.keyring.keys, "--endpoint", standIn.url, "--cacert", standIn.certificate,
                "--topic", topic, "--cert", certificate
            ])
        }
        let good = try doctor(certificates.file("client.pem"))
        #expect(good.status == 0, "\(good.stdout) \(good.stderr)")
        #expect(good.stdout.contains("the client certificate was accepted"), "\(good.stdout)")
        let locked = try doctor(certificates.file("client-encrypted.pem"))
        #expect(locked.status == 78)
        let problem = Self.problem(jsonObject(locked.stdout), "certificate")
        #expect((problem?["says"] as? String)?.contains("its private key is encrypted and no passphrase was given") == true, "\(locked.stdout)")
        #expect((problem?["fix"] as? String)?.contains("--cert-passphrase-file") == true)
        #expect(standIn.log.count == 1 && standIn.log.first?["reason"] as? String == "BadDeviceToken", "\(standIn.log)")
    }

    @Test func itSendsNoNotificationSoItTakesNoBody() throws {
        let run = try pushseal(["doctor", "send", "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "hello"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("doctor send sends no notification: 'hello' is not taken"), "\(run.stderr)")
    }
}
