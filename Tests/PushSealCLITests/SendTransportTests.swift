import Foundation
import Testing

/// `send`'s own HTTP/2 client against servers that misbehave as real ones do: a connection
/// that dies mid-batch, a server that allows one stream, one that speaks only HTTP/1.1, an
/// endpoint that is not there, a GOAWAY on one of several connections, IPv6, names, proxies.
@Suite("send: the HTTP/2 client")
struct SendTransportTests {
    static func device(_ number: Int) -> String { String(format: "%064x", number) }

    /// Processed requests per device, from a stand-in's log.
    static func processedCounts(_ log: [[String: Any]]) -> [String: Int] {
        Dictionary(grouping: log.compactMap { $0["device"] as? String }, by: { $0 }).mapValues(\.count)
    }

    @Test func requestsGoOutTogetherInsteadOfOneAfterTheFirstAnswer() throws {
        // The server answers nothing until all of them are in: a client that waits for one
        // answer before sending the next (the old one-second stall) gets 400 NotTogether.
        let sending = try SendTests.Sending()
        for (script, count) in [(#"{"together": 3}"#, 3), (#"{"together": 6, "plain": true}"#, 6)] {
            let standIn = try APNsStandIn(for: sending, script: script)
            let devices = (1...count).flatMap { ["--device", Self.device($0)] }
            let run = try sending.send(
                to: standIn.url, trusting: standIn.url.hasPrefix("https") ? standIn.certificate : nil,
                devices + ["-b", "together"])
            #expect(run.status == 0, "\(script): \(run.stderr)")
            #expect(run.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == count, "\(script): \(run.stdout)")
            #expect(Set(standIn.log.compactMap { $0["connection"] as? Int }) == [1], "\(script): one connection, multiplexed")
        }
    }

    @Test func aConnectionThatDiesMidBatchLosesNoDeviceAndSaysWhichMayHaveComeTwice() throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"reset_after": 150}"#)
        let devices = (1...400).map(Self.device)
        sending.folder.write("devices.txt", devices.joined(separator: "\n"))
        let run = try sending.send(
            to: standIn.url, trusting: standIn.certificate,
            ["--devices", sending.folder.file("devices.txt"), "-b", "through a crash"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 400 && lines.allSatisfy { $0.hasPrefix("ok ") }, "\(lines.filter { !$0.hasPrefix("ok ") }.prefix(3))")
        let counts = Self.processedCounts(standIn.log)
        #expect(Set(counts.keys) == Set(devices), "every device processed")
        // Only a request whose outcome was unknown (sent, no answer) may be processed twice,
        // and its result says so; none three times.
        let flagged = Set(lines.filter { $0.hasSuffix("(retried after an unknown outcome)") }.map { String($0.split(separator: " ")[1]) })
        let twice = Set(counts.filter { $0.value > 1 }.keys)
        #expect(twice.isSubset(of: flagged), "processed twice without a word: \(twice.subtracting(flagged).sorted().prefix(3))")
        #expect(counts.values.allSatisfy { $0 <= 2 })
        #expect(!flagged.isEmpty, "the reset left requests without an answer")
        #expect(Set(standIn.log.compactMap { $0["connection"] as? Int }).count == 2, "a new connection after the reset")
    }

    @Test func aRequestIsTimedFromItsStreamNotFromTheQueue() throws {
        // One stream at a time, a tenth of a second each: 30 devices take three seconds,
        // more than --timeout, yet each waited only for its own answer.
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"max_streams": 1, "delay": 0.1}"#)
        let devices = (1...30).flatMap { ["--device", Self.device($0)] }
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate, devices + ["--timeout", "1s", "--json", "-b", "slow"])
        #expect(run.status == 0, "\(run.stderr)")
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(results.count == 30 && results.allSatisfy { $0["status"] as? String == "ok" && $0["attempts"] as? Int == 1 })
        #expect(Self.processedCounts(standIn.log).values.allSatisfy { $0 == 1 } && standIn.log.count == 30, "each processed once")
    }

    /// The client holds the listener's TLS profile (TLS 1.2 or later, AEAD suites): a server
    /// that offers less is refused at once with words that say so and exit 78, not tried four
    /// times and called unreachable (75), as if a later try could fare better.
    @Test(arguments: ["1.1", "cbc"])
    func aServerBelowTheTLSProfileIsRefusedAsConfiguration(tls: String) throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"tls": "\#(tls)"}"#)
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", deviceToken, "-b", "x"])
        #expect(run.status == 78, "\(tls): \(run.stderr)")
        #expect(run.stderr.contains("offers no TLS that pushseal accepts (TLS 1.2 or later with AEAD suites"), "\(tls): \(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1 && run.stdout.contains("(1 attempt)"), "\(run.stdout)")
        #expect(standIn.log.isEmpty)
    }

    /// A TLS record that fails to decrypt is a TLS failure, said as one, not "the server
    /// closed the connection".
    @Test func aBrokenTLSRecordIsNamedAsSuchNotAsAClose() throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"garble": true}"#)
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", deviceToken, "-b", "x"])
        #expect(run.status == 75, "\(run.stderr)")
        #expect(run.stderr.contains("TLS failed: ") && !run.stderr.contains("closed the connection"), "\(run.stderr)")
    }

    @Test func aServerThatWillNotSpeakHTTP2IsRefusedBeforeAnyToken() throws {
        let sending = try SendTests.Sending()
        for alpn in [#"["http/1.1"]"#, "[]"] {
            let standIn = try APNsStandIn(for: sending, script: #"{"alpn": \#(alpn)}"#)
            let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", deviceToken, "-b", "x"])
            #expect(run.status == 78, "\(alpn): \(run.stderr)")
            #expect(
                run.stderr.contains("does not speak HTTP/2, as APNs does") && run.stderr.split(separator: "\n").count == 1,
                "\(alpn): \(run.stderr)")
            #expect(run.stdout.hasPrefix("fail \(deviceToken) 0 ") && run.stdout.contains("does not speak HTTP/2"), "\(run.stdout)")
            #expect(standIn.log.isEmpty, "nothing was sent over HTTP/1.1")
        }
    }

    @Test func anEndpointThatIsNotThereFailsEveryDeviceAtOnce() throws {
        let sending = try SendTests.Sending()
        let devices = (1...200).map(Self.device)
        sending.folder.write("devices.txt", devices.joined(separator: "\n"))
        // Nothing listens on port 1; and a server that accepts and never says a word.
        let silent = try RunningProcess(
            [
                "python3", "-c",
                """
                import socket, sys
                s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
                print("listening", s.getsockname()[1], flush=True)
                held = []
                while True:
                    held.append(s.accept()[0])
                """
            ], executable: "/usr/bin/env")
        defer { silent.signal(SIGTERM) }
        #expect(eventually { silent.stdoutSoFar.contains("listening ") })
        let port = silent.stdoutSoFar.split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)
        for (endpoint, words) in [
            ("https://127.0.0.1:1", "Connection refused at 127.0.0.1:1"),
            ("https://127.0.0.1:\(port)", "no progress in the TLS handshake for 500 ms")
        ] {
            let run = try sending.send(
                to: endpoint, trusting: nil,
                [
                    "--devices", sending.folder.file("devices.txt"),
                    "--timeout", "500ms", "-b", "x"
                ])
            #expect(run.status == 75, "\(endpoint): \(run.stderr)")
            #expect(run.stderr == "error: cannot reach \(endpoint) (\(words), after 4 tries to connect)\n", "\(run.stderr)")
            let lines = run.stdout.split(separator: "\n")
            #expect(lines.count == 200 && lines.allSatisfy { $0.hasPrefix("fail ") && $0.contains("cannot reach \(endpoint)") }, "\(run.stdout)")
        }
    }

    @Test func ipv6LoopbackAndANameFromEtcHosts() throws {
        let sending = try SendTests.Sending()
        let v6 = try sending.listener(address: "[::1]:0")
        #expect(v6.url.hasPrefix("https://[::1]:"), "\(v6.url)")
        let overV6 = try sending.send(to: v6, ["--device", deviceToken, "-b", "over IPv6"])
        #expect(overV6.status == 0, "\(overV6.stderr)")
        #expect(jsonObject(v6.finish().stdout)["body"] as? String == "over IPv6")
        // localhost is in /etc/hosts (127.0.0.1, and ::1 where IPv6 is on): every address is
        // tried in order, so a listener on 127.0.0.1 alone is found either way.
        let hosts = try String(contentsOfFile: "/etc/hosts", encoding: .utf8)
        #expect(hosts.split(separator: "\n").contains { $0.hasPrefix("127.0.0.1") && $0.contains("localhost") })
        let v4 = try sending.listener()
        let byName = try sending.send(
            to: "https://localhost:\(v4.port)", trusting: sending.keyring.keys + "/tls-cert.pem",
            ["--device", deviceToken, "-b", "by name"])
        #expect(byName.status == 0, "\(byName.stderr)")
        #expect(jsonObject(v4.finish().stdout)["body"] as? String == "by name")
    }

    @Test func fourConnectionsShareTheDevicesAndAGoawayOnOneResendsOnlyItsOwn() throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"goaway_after": 100, "max_streams": 20, "delay": 0.001}"#)
        let devices = (1...600).map(Self.device)
        sending.folder.write("devices.txt", devices.joined(separator: "\n"))
        let run = try sending.send(
            to: standIn.url, trusting: standIn.certificate,
            ["--devices", sending.folder.file("devices.txt"), "--connections", "4", "--json", "-b", "spread"])
        #expect(run.status == 0, "\(run.stderr)")
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(results.count == 600 && results.allSatisfy { $0["status"] as? String == "ok" })
        #expect(results.allSatisfy { $0["retried-after-unknown-outcome"] as? Bool == false })
        let counts = Self.processedCounts(standIn.log)
        #expect(Set(counts.keys) == Set(devices) && counts.values.allSatisfy { $0 == 1 }, "each processed exactly once")
        let connections = Set(standIn.log.compactMap { $0["connection"] as? Int })
        #expect(connections.count >= 5, "four, and one more after the GOAWAY: \(connections.sorted())")
    }
}

extension SendTransportTests {
    @Test func retryAfterIsHonouredAndRetryForBoundsTheRetries() throws {
        let sending = try SendTests.Sending()
        let busy = Self.device(1)
        let standIn = try APNsStandIn(for: sending, script: #"{"answers": {"\#(busy)": [[429, "TooManyRequests"]]}, "retry_after": 2}"#)
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", busy, "--json", "-b", "later"])
        #expect(run.status == 0, "\(run.stderr)")
        let result = jsonObject(run.stdout)
        #expect(result["attempts"] as? Int == 2)
        // The server asked for two seconds; the backoff alone would have been under one.
        #expect((result["elapsed_ms"] as? Double ?? 0) >= 2_000, "\(result)")
        // --retry-for 0s: no retry may start, whatever --retries allows.
        let down = try APNsStandIn(for: sending, script: #"{"answers": {"\#(busy)": [[503, "ServiceUnavailable"], [503, "ServiceUnavailable"]]}}"#)
        let bounded = try sending.send(to: down.url, trusting: down.certificate, ["--device", busy, "--retries", "5", "--retry-for", "0s", "-b", "x"])
        #expect(bounded.status == 75)
        #expect(bounded.stdout == "fail \(busy) 503 ServiceUnavailable (1 attempt)\n", "\(bounded.stdout)")
    }

    @Test func aStopDoesNotWaitOutASilentServerOrRetryAFailingOne() throws {
        let sending = try SendTests.Sending()
        let (silent, failing) = (Self.device(1), Self.device(2))
        let failures = "[" + Array(repeating: #"[500, "InternalServerError"]"#, count: 10).joined(separator: ", ") + "]"
        let standIn = try APNsStandIn(for: sending, script: #"{"answers": {"\#(silent)": [["stall"]], "\#(failing)": \#(failures)}}"#)
        let send = try RunningProcess([
            "send", "--keys", sending.keyring.keys, "--endpoint", standIn.url, "--cacert", standIn.certificate,
            "--topic", topic, "--auth-key", sending.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456",
            "--device", silent, "--device", failing, "--retries", "10", "-b", "until stopped"
        ])
        #expect(eventually(within: .seconds(20)) { standIn.log.count >= 3 }, "the silent one, and the failing one retried")
        send.signal(SIGINT)
        let run = send.wait(atMost: .seconds(20))
        #expect(run.status == 130, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("fail \(silent) 0 no answer before the stop") == true, "\(lines)")
        #expect(lines.last?.hasPrefix("fail \(failing) 500 InternalServerError") == true, "\(lines)")
        let tries = standIn.log.filter { $0["device"] as? String == failing }.count
        #expect(tries < 10, "no retries after the stop: \(tries)")
    }
}

extension SendTransportTests {
    @Test func theSystemStoreIsTrustedAsOpenSSLNamesItWithSSLCertDirAndFile() throws {
        let sending = try SendTests.Sending()
        // A root of the test's own and a leaf it signed for 127.0.0.1; the root in a hashed
        // directory (as /etc/ssl/certs is) and in a file of its own.
        _ = try runProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import datetime, ipaddress, os, sys
                from cryptography import x509
                from cryptography.hazmat.primitives import hashes, serialization
                from cryptography.hazmat.primitives.asymmetric import ec
                from cryptography.x509.oid import NameOID
                folder = sys.argv[1]
                now = datetime.datetime.now(datetime.timezone.utc)
                root_key = ec.generate_private_key(ec.SECP256R1())
                root_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pushseal test root")])
                root = (x509.CertificateBuilder().subject_name(root_name).issuer_name(root_name).public_key(root_key.public_key())
                        .serial_number(1).not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(root_key, hashes.SHA256()))
                key = ec.generate_private_key(ec.SECP256R1())
                leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "listener")]))
                        .issuer_name(root_name).public_key(key.public_key()).serial_number(2)
                        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
                        .sign(root_key, hashes.SHA256()))
                os.makedirs(folder + "/certs")
                open(folder + "/root.pem", "wb").write(root.public_bytes(serialization.Encoding.PEM))
                open(folder + "/certs/root.pem", "wb").write(root.public_bytes(serialization.Encoding.PEM))
                open(folder + "/leaf.pem", "wb").write(leaf.public_bytes(serialization.Encoding.PEM))
                fd = os.open(folder + "/leaf.key", os.O_CREAT | os.O_WRONLY, 0o600)
                os.write(fd, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
                os.close(fd)
                """, sending.folder.path
            ])
        let hash = try runProcess("/usr/bin/openssl", ["x509", "-hash", "-noout", "-in", sending.folder.file("root.pem")])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(symlink("root.pem", sending.folder.file("certs/\(hash).0")) == 0)
        let listener = try sending.listener(["--tls-cert", sending.folder.file("leaf.pem"), "--tls-key", sending.folder.file("leaf.key")])
        for (name, value) in [("SSL_CERT_DIR", sending.folder.file("certs")), ("SSL_CERT_FILE", sending.folder.file("root.pem"))] {
            let run = try sending.send(to: listener.url, trusting: nil, ["--device", deviceToken, "-b", name], environment: [name: value])
            #expect(run.status == 0, "\(name): \(run.stderr)")
        }
        // Neither: the machine's own store, which does not know this root.
        let unknown = try sending.send(to: listener.url, trusting: nil, ["--device", deviceToken, "-b", "x"])
        #expect(unknown.status == 78)
        #expect(unknown.stderr.contains("unable to get local issuer certificate"), "\(unknown.stderr)")
        let bodies = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0))["body"] as? String }
        #expect(bodies == ["SSL_CERT_DIR", "SSL_CERT_FILE"])
    }
}

/// Debian's tinyproxy on 127.0.0.1, for one test: CONNECT tunnels, optionally behind basic
/// auth or only to port 443 (then it refuses every other with 403).
final class TinyProxy {
    let process: RunningProcess
    let folder = TemporaryFolder()
    let port: Int

    init(user: String? = nil, onlyPort443: Bool = false) throws {
        // tinyproxy takes no port 0: the kernel picks a free one, which is handed over.
        port = try Self.freePort()
        var config = [
            "Port \(port)", "Listen 127.0.0.1", "Timeout 30", "MaxClients 50", "Allow 127.0.0.1",
            "LogLevel Connect", "LogFile \"\(folder.file("proxy.log"))\"", "DisableViaHeader Yes"
        ]
        if let user { config.append("BasicAuth \(user) s3cret") }
        if onlyPort443 { config.append("ConnectPort 443") }
        folder.write("proxy.conf", config.joined(separator: "\n") + "\n")
        process = try RunningProcess(["-d", "-c", folder.file("proxy.conf")], executable: "/usr/bin/tinyproxy")
        let port = self.port
        guard eventually(within: .seconds(10), { Self.accepts(port) }) else {
            throw Listener.ListenerDidNotStart(stderr: process.wait(atMost: .seconds(1)).stderr)
        }
    }

    var log: String { (try? String(contentsOfFile: folder.file("proxy.log"), encoding: .utf8)) ?? "" }

    deinit {
        process.signal(SIGTERM)
        _ = process.wait(atMost: .seconds(5))
    }

    static func freePort() throws -> Int {
        let run = try runProcess("/usr/bin/env", ["python3", "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        return Int(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines))!
    }

    static func accepts(_ port: Int) -> Bool {
        (try? runProcess("/usr/bin/env", ["python3", "-c", "import socket; socket.create_connection(('127.0.0.1', \(port)), 1)"]).status) == 0
    }
}

@Suite("send: through an HTTP proxy")
struct SendProxyTests {
    @Test func aProxyTunnelsFromTheFlagOrTheEnvironmentAndNoProxyGoesDirect() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let proxy = try TinyProxy(user: "ci")
        let byFlag = try sending.send(to: listener, ["--device", deviceToken, "--proxy", "http://ci:s3cret@127.0.0.1:\(proxy.port)", "-b", "by flag"])
        #expect(byFlag.status == 0, "\(byFlag.stderr)")
        // HTTPS_PROXY as apns2, node-apn and curl users set it; the password is percent-escaped.
        let byEnvironment = try sending.send(
            to: listener, ["--device", deviceToken, "-b", "by environment"],
            environment: ["HTTPS_PROXY": "http://ci:s3%63ret@127.0.0.1:\(proxy.port)"])
        #expect(byEnvironment.status == 0, "\(byEnvironment.stderr)")
        #expect(proxy.log.components(separatedBy: "CONNECT").count - 1 >= 2, "both went through the proxy: \(proxy.log)")
        // NO_PROXY names the host: direct, although the proxy named does not exist.
        let direct = try sending.send(
            to: listener, ["--device", deviceToken, "-b", "direct"],
            environment: ["https_proxy": "http://127.0.0.1:1", "NO_PROXY": "example.org, 127.0.0.1"])
        #expect(direct.status == 0, "\(direct.stderr)")
        // The flag beats the environment: --proxy '' is no proxy at all.
        let none = try sending.send(
            to: listener, ["--device", deviceToken, "--proxy", "", "-b", "none"],
            environment: ["HTTPS_PROXY": "http://127.0.0.1:1"])
        #expect(none.status == 0, "\(none.stderr)")
        let bodies = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0))["body"] as? String }
        #expect(bodies == ["by flag", "by environment", "direct", "none"])
    }

    @Test func aProxyThatRefusesIsOneLineNamingIt() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        let guarded = try TinyProxy(user: "ci")
        let noPassword = try sending.send(
            to: listener,
            [
                "--device", deviceToken, "--device", SendTransportTests.device(2),
                "--proxy", "127.0.0.1:\(guarded.port)", "-b", "x"
            ])
        #expect(noPassword.status == 78, "\(noPassword.stderr)")
        #expect(
            noPassword.stderr.hasPrefix(
                "error: the proxy http://127.0.0.1:\(guarded.port) refused to tunnel to 127.0.0.1:\(listener.port): HTTP/1.0 407 Proxy Authentication Required; give the user and password"),
            "\(noPassword.stderr)")
        #expect(noPassword.stderr.split(separator: "\n").count == 1)
        #expect(
            noPassword.stdout.split(separator: "\n").count == 2 && noPassword.stdout.split(separator: "\n").allSatisfy { $0.contains("refused to tunnel") },
            "each device says the proxy refused: \(noPassword.stdout)")
        let wrongPassword = try sending.send(to: listener, ["--device", deviceToken, "--proxy", "http://ci:wrong@127.0.0.1:\(guarded.port)", "-b", "x"])
        #expect(wrongPassword.status == 78)
        #expect(
            wrongPassword.stderr.contains("the proxy http://(user)@127.0.0.1:\(guarded.port) refused") && !wrongPassword.stderr.contains("wrong"),
            "the password is never shown: \(wrongPassword.stderr)")
        let only443 = try TinyProxy(onlyPort443: true)
        let forbidden = try sending.send(to: listener, ["--device", deviceToken, "--proxy", "http://127.0.0.1:\(only443.port)", "-b", "x"])
        #expect(forbidden.status == 78)
        #expect(forbidden.stderr.contains("refused to tunnel to 127.0.0.1:\(listener.port): HTTP/1.1 403 Access violation"), "\(forbidden.stderr)")
        let unusable = try sending.send(to: listener, ["--device", deviceToken, "--proxy", "https://127.0.0.1:3128", "-b", "x"])
        #expect(unusable.status == 64)
        #expect(unusable.stderr.contains("is not an http:// proxy"), "\(unusable.stderr)")
        #expect(listener.finish().stdout.isEmpty, "nothing reached the server")
    }
}
