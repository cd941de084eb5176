import Foundation
import Testing

/// `pushseal send` against `pushseal receive --listen`, both run as processes: the sender's
/// provider tokens are verified by the listener with the test's .p8, every notification
/// goes over HTTP/2 (the project's own client and server, both on nghttp2) and ends as a record.
@Suite("send: sealed alerts to an APNs-compatible server")
struct SendTests {
    /// A keyring, an Apple-style key pair and the send options that use them.
    struct Sending {
        let keyring: KeyringFixture
        let folder = TemporaryFolder()
        let p8: String
        let publicKey: String

        init() throws {
            keyring = try KeyringFixture()
            (p8, publicKey) = try PythonClients.keypair(in: folder)
        }

        /// The listener that checks this sender's tokens.
        func listener(_ extra: [String] = [], address: String = "0") throws -> Listener {
            try Listener(
                [
                    "--json", "--keys", keyring.keys, "--provider-key", "KEY1234567=\(publicKey)",
                    "--team", "TEAM123456"
                ] + extra, address: address)
        }

        func send(
            to listener: Listener, _ arguments: [String], stdin: String? = nil, authKey: String? = nil,
            environment: [String: String] = [:]
        ) throws -> Run {
            try send(
                to: listener.url, trusting: listener.url.hasPrefix("https") ? keyring.keys + "/tls-cert.pem" : nil,
                arguments, stdin: stdin, authKey: authKey, environment: environment)
        }

        func send(
            to endpoint: String, trusting certificate: String?, _ arguments: [String], stdin: String? = nil,
            authKey: String? = nil, environment: [String: String] = [:]
        ) throws -> Run {
            try pushseal(
                [
                    "send", "--keys", keyring.keys, "--endpoint", endpoint, "--topic", topic,
                    "--auth-key", authKey ?? p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456"
                ]
                    + (certificate.map { ["--cacert", $0] } ?? []) + arguments, stdin: stdin, environment: environment)
        }

        var tokenFile: String { keyring.keys + "/provider-token.TEAM123456.KEY1234567.json" }

        /// SHA-256 of the public key's DER SubjectPublicKeyInfo, as Python's cryptography
        /// computes it: what a cached token records of the key that signed it.
        var keyFingerprint: String {
            get throws {
                try runProcess(
                    "/usr/bin/env",
                    [
                        "python3", "-c",
                        """
                        import hashlib, sys
                        from cryptography.hazmat.primitives import serialization
                        key = serialization.load_pem_public_key(open(sys.argv[1], "rb").read())
                        print(hashlib.sha256(key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)).hexdigest())
                        """, publicKey
                    ]
                ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
    }

    @Test func eachDeviceGetsOneResultLineInOrderAndTheDocumentedExitStatus() throws {
        let sending = try Sending()
        let gone = String(repeating: "ef", count: 32)
        let unknown = String(repeating: "cd", count: 32)
        let listener = try sending.listener(["--device", deviceToken, "--device", gone, "--unregistered", gone])
        let run = try sending.send(
            to: listener,
            [
                "--device", deviceToken, "--device", gone, "--device", unknown,
                "-t", "Deploy finished", "-b", "api-7 is live"
            ])
        #expect(run.status == 69, "some refused for good: \(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("ok \(deviceToken) "))
        #expect(lines[1].hasPrefix("fail \(gone) 410 Unregistered 20"), "\(lines[1])")
        #expect(lines[2] == "fail \(unknown) 400 BadDeviceToken")
        // The README's sample result lines have the shape of these: full tokens, APNs' ids in capitals.
        let shape = /(ok [0-9a-f]{64} [0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}|fail [0-9a-f]{64} [0-9]{3} [A-Za-z]+( .*)?)/
        #expect(lines.allSatisfy { $0.wholeMatch(of: shape) != nil }, "\(lines)")
        let readme = try DocsTests.allText()
        let samples = readme.split(separator: "\n").map { $0.hasPrefix("# ok ") ? $0.dropFirst(2) : $0 }
            // `doctor`'s sample lines ("ok       json …") are a column layout, not results.
            .filter { ($0.hasPrefix("ok ") || $0.hasPrefix("fail ")) && !$0.hasPrefix("ok  ") }
        #expect(samples.count >= 4 && samples.allSatisfy { $0.wholeMatch(of: shape) != nil }, "\(samples)")
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        let delivered = try #require(records.first { $0["status"] as? String == "decrypted" })
        #expect(delivered["title"] as? String == "Deploy finished")
        #expect(delivered["body"] as? String == "api-7 is live")
        #expect(delivered["apns-push-type"] as? String == "alert")
        #expect(lines[0].hasSuffix(delivered["apns-id"] as! String), "the result names the notification APNs saw")
        // The provider token never shows, and is kept with mode 0600.
        let token = jsonObject(try String(contentsOfFile: sending.tokenFile, encoding: .utf8))["token"] as! String
        #expect(!run.stdout.contains(token) && !run.stderr.contains(token))
        let mode = try FileManager.default.attributesOfItem(atPath: sending.tokenFile)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func jsonResultsAndAReadyPayloadFromStdin() throws {
        let sending = try Sending()
        let listener = try sending.listener()
        let payload = try sending.keyring.encrypt(["-t", "Ready", "-b", "made by encrypt"]).stdout
        let run = try sending.send(
            to: listener,
            [
                "--device", deviceToken, "--json", "--priority", "5",
                "--collapse-id", "builds", "-"
            ], stdin: payload)
        #expect(run.status == 0, "\(run.stderr)")
        let result = jsonObject(run.stdout)
        #expect(result["device"] as? String == deviceToken)
        #expect(result["status"] as? String == "ok")
        #expect(result["http-status"] as? Int == 200)
        #expect(result["attempts"] as? Int == 1)
        #expect(result["elapsed_ms"] as? Double != nil)
        let record = jsonObject(listener.finish().stdout)
        #expect(record["title"] as? String == "Ready")
        #expect(record["apns-priority"] as? String == "5")
        #expect(record["apns-collapse-id"] as? String == "builds")
        #expect(record["apns-id"] as? String == result["apns-id"] as? String)
    }

    @Test func tenThousandDevicesGoOverOneConnection() throws {
        let sending = try Sending()
        let listener = try sending.listener()
        let tokens = (0..<10_000).map { String(format: "%064x", $0 + 1) }
        sending.folder.write("devices.txt", "# every test device\n" + tokens.joined(separator: "\n") + "\n")
        let run = try sending.send(to: listener, ["--devices", sending.folder.file("devices.txt"), "-t", "Fan-out", "-b", "to many"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 10_000)
        #expect(lines.allSatisfy { $0.hasPrefix("ok ") })
        #expect(lines.map { String($0.split(separator: " ")[1]) } == tokens, "results in input order")
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == 10_000)
        #expect(records.allSatisfy { $0["status"] as? String == "decrypted" })
        let connections = Set(records.compactMap { ($0["source"] as? String)?.split(separator: "/").first })
        #expect(connections.count == 1, "one HTTP/2 connection: \(connections)")
    }

    @Test func aHundredSendsInAShellLoopMintOneToken() throws {
        let sending = try Sending()
        let listener = try sending.listener()
        let first = try sending.send(to: listener, ["--device", deviceToken, "-b", "first"])
        #expect(first.status == 0, "\(first.stderr)")
        let minted = try String(contentsOfFile: sending.tokenFile, encoding: .utf8)
        // 99 more, four at a time, each reading the shared token while the others do. The
        // watchdog is generous: under ThreadSanitizer each process takes a second or two.
        let loop = try shell(
            """
            seq 99 | xargs -P 4 -I{} "$PUSHSEAL" send --keys "$KEYS" --endpoint "$URL" --cacert "$KEYS/tls-cert.pem" \\
              --topic "$TOPIC" --auth-key "$P8" --key-id KEY1234567 --team-id TEAM123456 --device "$DEVICE" -b "loop {}" >/dev/null
            """,
            environment: [
                "KEYS": sending.keyring.keys, "URL": listener.url, "TOPIC": topic, "P8": sending.p8,
                "DEVICE": deviceToken
            ], watchdog: 600)
        #expect(loop.status == 0, "\(loop.stderr)")
        #expect(try String(contentsOfFile: sending.tokenFile, encoding: .utf8) == minted, "the token was reused, not minted again")
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == 100)
        #expect(records.allSatisfy { $0["status"] as? String == "decrypted" })
    }

    @Test func anExpiredTokenIsMintedAgainAndTheRequestSentOnce() throws {
        let sending = try Sending()
        let listener = try sending.listener()
        // A token the cache believes fresh but whose iat is two hours old: APNs says expired.
        let stale = try PythonClients.token(
            p8: sending.p8, kid: "KEY1234567", team: "TEAM123456",
            issuedAt: Int(Date().timeIntervalSince1970) - 7_200)
        try FileManager.default.createDirectory(atPath: sending.keyring.keys, withIntermediateDirectories: true)
        sending.keyring.folder.write(
            "Keys/provider-token.TEAM123456.KEY1234567.json",
            #"{"token":"\#(stale)","iat":\#(Int(Date().timeIntervalSince1970)),"key":"\#(try sending.keyFingerprint)"}"#)
        let run = try sending.send(to: listener, ["--device", deviceToken, "--json", "-b", "after renewal"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(jsonObject(run.stdout)["attempts"] as? Int == 2)
        let renewed = jsonObject(try String(contentsOfFile: sending.tokenFile, encoding: .utf8))
        #expect(renewed["token"] as? String != stale)
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.map { $0["reason"] as? String ?? $0["status"] as! String } == ["ExpiredProviderToken", "decrypted"])
    }

    @Test func aPlaintextEndpointWorksOneRequestAtATime() throws {
        let sending = try Sending()
        let listener = try sending.listener(["--plaintext"])
        let devices = (1...5).flatMap { ["--device", String(format: "%064x", $0)] }
        let run = try sending.send(to: listener, devices + ["-b", "over HTTP/2 without TLS"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == 5)
        #expect(listener.finish().stdout.split(separator: "\n").count == 5)
    }

    @Test func setupProblemsGiveOneClearErrorAndTheirExitStatus() throws {
        let sending = try Sending()
        let listener = try sending.listener()
        sending.folder.write("bad.p8", "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
        let badKey = try sending.send(to: listener, ["--device", deviceToken, "-b", "x"], authKey: sending.folder.file("bad.p8"))
        #expect(badKey.status == 65)
        #expect(badKey.stderr.contains("is not an APNs signing key"))
        let publicOnly = try sending.send(to: listener, ["--device", deviceToken, "-b", "x"], authKey: sending.publicKey)
        #expect(publicOnly.status == 65)
        let missingTeam = parsed([
            "send", "--keys", sending.keyring.keys, "--topic", topic, "--auth-key", sending.p8,
            "--key-id", "KEY1234567", "--device", deviceToken, "-b", "x"
        ])
        #expect(missingTeam.status == 64)
        #expect(missingTeam.stderr.contains("--team-id is required"))
        // Nothing listens on port 1; and the listener's certificate without --cacert is not trusted.
        let unreachable = try pushseal([
            "send", "--keys", sending.keyring.keys, "--endpoint", "https://127.0.0.1:1",
            "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567",
            "--team-id", "TEAM123456", "--device", deviceToken, "--device", String(repeating: "cd", count: 32),
            "--retries", "1", "-b", "x"
        ])
        #expect(unreachable.status == 75)
        #expect(unreachable.stderr.split(separator: "\n").count == 1, "one line: \(unreachable.stderr)")
        #expect(unreachable.stderr.contains("cannot reach https://127.0.0.1:1"))
        // Every device still gets its line, saying why (the one sent first, and the one never tried).
        let lines = unreachable.stdout.split(separator: "\n")
        #expect(
            lines.count == 2 && lines.allSatisfy { $0.hasPrefix("fail ") && $0.contains(" 0 ") && $0.contains("cannot reach https://127.0.0.1:1") },
            "\(unreachable.stdout)")
        let untrusted = try pushseal([
            "send", "--keys", sending.keyring.keys, "--endpoint", listener.url, "--topic", topic,
            "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
            "--device", deviceToken, "-b", "x"
        ])
        #expect(untrusted.status == 78)
        #expect(untrusted.stderr.split(separator: "\n").count == 1, "one line: \(untrusted.stderr)")
        #expect(untrusted.stderr.contains("is not accepted (self-signed certificate)"), "\(untrusted.stderr)")
        #expect(untrusted.stderr.hasSuffix("; give --cacert FILE to trust it\n"))
        #expect(untrusted.stdout.hasPrefix("fail \(deviceToken) 0 the certificate of \(listener.url) is not accepted"), "\(untrusted.stdout)")
        #expect(listener.finish().stdout.isEmpty, "nothing reached the listener")
    }

    @Test func eachCertificateProblemSaysWhichAndABadCacertNamesTheFile() throws {
        let sending = try Sending()
        // An expired certificate for 127.0.0.1, and a current one for another host only.
        _ = try runProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import datetime, os, sys, ipaddress
                from cryptography import x509
                from cryptography.hazmat.primitives import hashes, serialization
                from cryptography.hazmat.primitives.asymmetric import ec
                from cryptography.x509.oid import NameOID
                now = datetime.datetime.now(datetime.timezone.utc)
                for name, start, end, san in [("expired", now - datetime.timedelta(days=30), now - datetime.timedelta(days=1),
                                               x509.IPAddress(ipaddress.ip_address("127.0.0.1"))),
                                              ("elsewhere", now - datetime.timedelta(days=1), now + datetime.timedelta(days=30),
                                               x509.DNSName("push.example.org"))]:
                    key = ec.generate_private_key(ec.SECP256R1())
                    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
                    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                            .serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
                            .add_extension(x509.SubjectAlternativeName([san]), critical=False)
                            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                            .sign(key, hashes.SHA256()))
                    open(os.path.join(sys.argv[1], name + ".pem"), "wb").write(cert.public_bytes(serialization.Encoding.PEM))
                    fd = os.open(os.path.join(sys.argv[1], name + ".key"), os.O_CREAT | os.O_WRONLY, 0o600)
                    os.write(fd, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
                    os.close(fd)
                """, sending.folder.path
            ])
        for (name, words) in [("expired", "certificate has expired"), ("elsewhere", "IP address mismatch: it is not made out to 127.0.0.1")] {
            let listener = try sending.listener(["--tls-cert", sending.folder.file(name + ".pem"), "--tls-key", sending.folder.file(name + ".key")])
            let run = try sending.send(to: listener.url, trusting: sending.folder.file(name + ".pem"), ["--device", deviceToken, "-b", "x"])
            #expect(run.status == 78, "\(name): \(run.stderr)")
            #expect(run.stderr.contains(words) && run.stderr.split(separator: "\n").count == 1, "\(name): \(run.stderr)")
            #expect(!run.stderr.contains("--cacert"), "trusting it would not help: \(run.stderr)")
            #expect(listener.finish().stdout.isEmpty)
        }
        // A --cacert that is missing or holds no certificate is the file's fault, not the server's.
        let missing = try sending.send(to: "https://127.0.0.1:1", trusting: sending.folder.file("none.pem"), ["--device", deviceToken, "-b", "x"])
        #expect(missing.status == 66)
        #expect(missing.stderr == "error: cannot read \(sending.folder.file("none.pem")): No such file or directory\n")
        sending.folder.write("garbage.pem", "not a certificate\n")
        let garbage = try sending.send(to: "https://127.0.0.1:1", trusting: sending.folder.file("garbage.pem"), ["--device", deviceToken, "-b", "x"])
        #expect(garbage.status == 65)
        #expect(garbage.stderr.hasPrefix("error: \(sending.folder.file("garbage.pem")) holds no PEM certificate"), "\(garbage.stderr)")
    }

    @Test func sendToARecipientKeySealsPs2() throws {
        let sending = try SendTests.Sending()
        // A recipient pair in the listener's own keyring, so the listener can open what is sealed to it.
        let kid = try sending.keyring.keysCommand(["add", "--recipient"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let listener = try sending.listener()
        let run = try sending.send(to: listener, ["--device", deviceToken, "--to", kid, "-t", "Sealed to a device", "-b", "ps2"])
        #expect(run.status == 0, "\(run.stderr)")
        let record = jsonObject(listener.finish().stdout)
        #expect(record["status"] as? String == "decrypted")
        #expect(record["kid"] as? String == kid)
        #expect(record["title"] as? String == "Sealed to a device")
    }

    @Test func batchLinesEachCarryTheirOwnDeviceAndAlert() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let (first, second, third) = (String(format: "%064x", 1), String(format: "%064x", 2), String(format: "%064x", 3))
        let lines = """
            {"device": "\(first)", "title": "Build 41", "body": "passed"}
            {"device": "\(second)", "title": "Build 42", "body": "failed", "level": "time-sensitive", "ttl": "1h"}

            {"title": "no device"}
            {"device": "\(third)", "title": "Build 43", "data": {"run": 43}}
            """
        let run = try sending.send(to: listener, ["--batch", "--json"], stdin: lines + "\n")
        #expect(run.status == 65, "a bad line: \(run.stderr)")
        #expect(run.stderr.contains("line 4: ") && run.stderr.contains("no \"device\""), "\(run.stderr)")
        #expect(run.stderr.contains("1 of 5 lines were not sent"))
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(results.map { $0["device"] as? String } == [first, second, third])
        #expect(results.allSatisfy { $0["status"] as? String == "ok" })
        let records = Dictionary(
            uniqueKeysWithValues: listener.finish().stdout.split(separator: "\n").map {
                let record = jsonObject(String($0))
                return (record["device"] as! String, record)
            })
        #expect(records[first]?["title"] as? String == "Build 41")
        #expect(records[second]?["body"] as? String == "failed")
        #expect(records[third]?["title"] as? String == "Build 43")
        #expect(records[first]?["apns-expiration"] == nil || records[first]?["apns-expiration"] is NSNull)
        let expiration = Int(records[second]?["apns-expiration"] as? String ?? "") ?? 0
        #expect(abs(expiration - Int(Date().timeIntervalSince1970) - 3_600) < 120, "the line's ttl is its apns-expiration")
    }

    @Test func aSignalStopsTakingDevicesAndPrintsWhatWasInFlight() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let send = try RunningProcess([
            "send", "--keys", sending.keyring.keys, "--endpoint", listener.url, "--cacert", sending.keyring.keys + "/tls-cert.pem",
            "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
            "--devices", "-", "-b", "until stopped"
        ])
        send.send((1...5).map { String(format: "%064x\n", $0) }.joined())
        #expect(eventually(within: .seconds(20)) { send.stdoutSoFar.split(separator: "\n").count == 5 })
        send.signal(SIGTERM)
        let run = send.wait(atMost: .seconds(30))
        #expect(run.status == 143, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").count == 5)
        #expect(run.stderr == "error: stopped by SIGTERM: devices after the last result were not sent\n")
        #expect(listener.finish().stdout.split(separator: "\n").count == 5)
    }

    @Test func resultsThatCannotBeWrittenAndATokenThatCannotBeKeptAreErrors() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let full = try shell(
            """
            "$PUSHSEAL" send --keys "$KEYS" --endpoint "$URL" --cacert "$KEYS/tls-cert.pem" --topic "$TOPIC" --auth-key "$P8" \\
              --key-id KEY1234567 --team-id TEAM123456 --device "$DEVICE" -b "to a full disk" > /dev/full
            """,
            environment: [
                "KEYS": sending.keyring.keys, "URL": listener.url, "TOPIC": topic, "P8": sending.p8,
                "DEVICE": deviceToken
            ])
        #expect(full.status == 74)
        #expect(full.stderr.hasPrefix("error: cannot write to stdout") && full.stderr.split(separator: "\n").count == 1, "\(full.stderr)")
        // Where the token should be kept, a folder stands: nothing can be sent with it.
        try FileManager.default.removeItem(atPath: sending.tokenFile)
        try FileManager.default.createDirectory(atPath: sending.tokenFile, withIntermediateDirectories: false)
        let unkept = try sending.send(to: listener, ["--device", deviceToken, "-b", "x"])
        #expect(unkept.status == 74, "\(unkept.stderr)")
        #expect(unkept.stderr.contains("cannot keep the provider token") && unkept.stderr.split(separator: "\n").count == 1)
        #expect(unkept.stdout.isEmpty)
        #expect(listener.finish().stdout.split(separator: "\n").count == 1, "only the first send went out")
    }

    @Test(arguments: [
        (["--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-b", "x"], "no devices"),
        (["--device", "xyz", "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-b", "x"], "--device takes a device token in hex"),
        (["--device", String(repeating: "ab", count: 32), "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-b", "x"], "--topic is required"),
        (["--device", String(repeating: "ab", count: 32), "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456"], "nothing to send"),
        (
            ["--device", String(repeating: "ab", count: 32), "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-b", "x", "--priority", "7"],
            "--priority is 10"
        ),
        (
            ["--device", String(repeating: "ab", count: 32), "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-t", "x", "-"],
            "alert options cannot be combined"
        ),
        (["--devices", "-", "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-"], "not both"),
        (["--batch", "-t", "x", "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456"], "alert options cannot be combined"),
        (["--batch", "--device", String(repeating: "ab", count: 32), "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456"], "--device and --devices cannot"),
        (
            ["--device", String(repeating: "ab", count: 32), "--topic", topic, "--auth-key", "k.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "--timeout", "1ms", "-b", "x"],
            "--timeout must be a duration"
        )
    ])
    func badSendOptionsAreUsageErrors(arguments: [String], message: String) throws {
        let run = parsed(["send"] + arguments)
        #expect(run.status == 64)
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }
}

/// The Python APNs stand-in (Reference/apns_standin.py) for one test: h2 over TLS, tokens
/// verified with `cryptography`, answers scripted per device, a log of what it processed.
final class APNsStandIn {
    static let script = Bundle.module.url(forResource: "apns_standin", withExtension: "py", subdirectory: "Reference")!.path

    let process: RunningProcess
    let folder = TemporaryFolder()
    let url: String
    var certificate: String { folder.file("cert.pem") }

    /// - Parameter script: `{"answers": {device: [[status, reason], ["stall"], …]}, "goaway_after": N}`.
    init(for sending: SendTests.Sending, script: String = "{}") throws {
        process = try RunningProcess(
            [
                "python3", Self.script, folder.path, sending.publicKey, "KEY1234567", "TEAM123456",
                topic, script
            ], executable: "/usr/bin/env")
        let running = process
        guard eventually(within: .seconds(20), { running.stdoutSoFar.contains("listening ") }) else {
            throw Listener.ListenerDidNotStart(stderr: running.wait(atMost: .seconds(1)).stderr)
        }
        let port = running.stdoutSoFar.split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)
        url = (script.contains("\"plain\": true") ? "http" : "https") + "://127.0.0.1:\(port)"
    }

    /// Each request it processed, in order.
    var log: [[String: Any]] {
        (try? String(contentsOfFile: folder.file("log.jsonl"), encoding: .utf8))?
            .split(separator: "\n").map { jsonObject(String($0)) } ?? []
    }

    deinit {
        process.closeInput()
        _ = process.wait(atMost: .seconds(5))
    }
}

/// `pushseal send` against a server that is not pushseal: every header checked, answers
/// scripted, GOAWAY and stalls on demand.
@Suite("send: against a Python APNs stand-in")
struct SendStandInTests {
    static func device(_ number: Int) -> String { String(format: "%064x", number) }

    @Test func eachAnswerGetsItsResultAndOnlyTemporaryOnesAreRetried() throws {
        let sending = try SendTests.Sending()
        let (bad, gone, busy, down, fine) = (Self.device(1), Self.device(2), Self.device(3), Self.device(4), Self.device(5))
        let standIn = try APNsStandIn(
            for: sending,
            script: """
                {"answers": {"\(bad)": [[400, "BadDeviceToken"]], "\(gone)": [[410, "Unregistered"]],
                             "\(busy)": [[429, "TooManyRequests"]], "\(down)": [[503, "ServiceUnavailable"]]}}
                """)
        let run = try sending.send(
            to: standIn.url, trusting: standIn.certificate,
            [
                "--device", bad, "--device", gone, "--device", busy, "--device", down, "--device", fine, "--json",
                "--priority", "5", "--collapse-id", "deploys", "--ttl", "1h", "-t", "Deploy", "-b", "api-7 is live"
            ])
        #expect(run.status == 69, "refused for good: \(run.stderr)")
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(results.map { $0["device"] as? String } == [bad, gone, busy, down, fine], "input order")
        #expect(results.map { $0["status"] as? String } == ["refused", "refused", "ok", "ok", "ok"])
        #expect(results.map { $0["http-status"] as? Int } == [400, 410, 200, 200, 200])
        #expect(results.map { $0["attempts"] as? Int } == [1, 1, 2, 2, 1], "429 and 503 once more, 400 and 410 never")
        #expect(results[0]["reason"] as? String == "BadDeviceToken")
        #expect(results[1]["reason"] as? String == "Unregistered")
        #expect((results[1]["timestamp"] as? Int ?? 0) > 1_700_000_000_000, "410's timestamp, in ms")
        let log = standIn.log
        #expect(log.count == 7)
        #expect(log.allSatisfy { $0["problem"] is NSNull }, "every header, the path and the token as APNs wants: \(log)")
        let tries = log.filter { $0["device"] as? String == busy }
        #expect(
            tries.count == 2 && tries[0]["apns-id"] as? String == tries[1]["apns-id"] as? String,
            "a retry is the same notification")
        #expect(Set(log.compactMap { $0["iat"] as? Int }).count == 1, "one token, not minted again after a 429")
        // The text form of the same answers, and 75 when only temporary failures are left.
        let worn = try APNsStandIn(for: sending, script: #"{"answers": {"\#(busy)": [[503, "ServiceUnavailable"], [503, "ServiceUnavailable"]]}}"#)
        let temporary = try sending.send(to: worn.url, trusting: worn.certificate, ["--device", busy, "--retries", "1", "-b", "x"])
        #expect(temporary.status == 75, "\(temporary.stderr)")
        #expect(temporary.stdout == "fail \(busy) 503 ServiceUnavailable (2 attempts)\n")
    }

    @Test func anExpiredTokenAnswerBringsATokenWithANewIat() throws {
        let sending = try SendTests.Sending()
        // A token 40 minutes old: still reused by the cache, but this server calls it expired.
        let issued = Int(Date().timeIntervalSince1970) - 2_400
        let old = try PythonClients.token(p8: sending.p8, kid: "KEY1234567", team: "TEAM123456", issuedAt: issued)
        try FileManager.default.createDirectory(atPath: sending.keyring.keys, withIntermediateDirectories: true)
        sending.keyring.folder.write("Keys/provider-token.TEAM123456.KEY1234567.json", #"{"token":"\#(old)","iat":\#(issued),"key":"\#(try sending.keyFingerprint)"}"#)
        let standIn = try APNsStandIn(for: sending, script: #"{"answers": {"\#(deviceToken)": [[403, "ExpiredProviderToken"]]}}"#)
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", deviceToken, "--json", "-b", "x"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(jsonObject(run.stdout)["attempts"] as? Int == 2)
        let iats = standIn.log.compactMap { $0["iat"] as? Int }
        #expect(iats.count == 2 && iats[0] == issued && iats[1] > issued + 2_000, "\(iats)")
        #expect(jsonObject(try String(contentsOfFile: sending.tokenFile, encoding: .utf8))["iat"] as? Int == iats.last)
    }

    @Test func aGoawayInTheMiddleResendsOnlyWhatWasNotProcessed() throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"goaway_after": 150}"#)
        let devices = (1...400).map(Self.device)
        sending.folder.write("devices.txt", devices.joined(separator: "\n"))
        let run = try sending.send(
            to: standIn.url, trusting: standIn.certificate,
            ["--devices", sending.folder.file("devices.txt"), "-b", "through a GOAWAY"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 400 && lines.allSatisfy { $0.hasPrefix("ok ") })
        let log = standIn.log
        let processed = log.compactMap { $0["device"] as? String }
        #expect(Set(processed) == Set(devices), "every device processed")
        #expect(
            Dictionary(grouping: processed, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted() == [],
            "none processed twice")
        #expect(Set(log.compactMap { $0["connection"] as? Int }).count >= 2, "a new connection after the GOAWAY")
    }

    @Test func aStalledStreamIsGivenUpAndSentAgain() throws {
        let sending = try SendTests.Sending()
        let stalled = Self.device(7)
        let standIn = try APNsStandIn(for: sending, script: #"{"answers": {"\#(stalled)": [["stall"]]}}"#)
        let run = try sending.send(
            to: standIn.url, trusting: standIn.certificate,
            [
                "--device", Self.device(6), "--device", stalled, "--device", Self.device(8),
                "--timeout", "1s", "--json", "-b", "x"
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(results.map { $0["attempts"] as? Int } == [1, 2, 1])
        #expect(standIn.log.filter { $0["device"] as? String == stalled }.map { "\($0["answer"]!)" } == ["stall", "200"])
    }
}
