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
            let run = try sending.send(to: standIn.url, trusting: standIn.url.hasPrefix("https") ? standIn.certificate : nil,
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
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate,
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

    @Test func aServerThatWillNotSpeakHTTP2IsRefusedBeforeAnyToken() throws {
        let sending = try SendTests.Sending()
        for alpn in [#"["http/1.1"]"#, "[]"] {
            let standIn = try APNsStandIn(for: sending, script: #"{"alpn": \#(alpn)}"#)
            let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", deviceToken, "-b", "x"])
            #expect(run.status == 78, "\(alpn): \(run.stderr)")
            #expect(run.stderr.contains("does not speak HTTP/2, as APNs does") && run.stderr.split(separator: "\n").count == 1,
                    "\(alpn): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(standIn.log.isEmpty, "nothing was sent over HTTP/1.1")
        }
    }

    @Test func anEndpointThatIsNotThereFailsEveryDeviceAtOnce() throws {
        let sending = try SendTests.Sending()
        let devices = (1...200).map(Self.device)
        sending.folder.write("devices.txt", devices.joined(separator: "\n"))
        // Nothing listens on port 1; and a server that accepts and never says a word.
        let silent = try RunningProcess(["python3", "-c", """
            import socket, sys
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
            print("listening", s.getsockname()[1], flush=True)
            held = []
            while True:
                held.append(s.accept()[0])
            """], executable: "/usr/bin/env")
        defer { silent.signal(SIGTERM) }
        #expect(eventually { silent.stdoutSoFar.contains("listening ") })
        let port = silent.stdoutSoFar.split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)
        for (endpoint, words) in [("https://127.0.0.1:1", "Connection refused at 127.0.0.1:1"),
                                  ("https://127.0.0.1:\(port)", "no progress in the TLS handshake for 500 ms")] {
            let run = try sending.send(to: endpoint, trusting: nil, ["--devices", sending.folder.file("devices.txt"),
                                                                     "--timeout", "500ms", "-b", "x"])
            #expect(run.status == 75, "\(endpoint): \(run.stderr)")
            #expect(run.stderr == "error: cannot reach \(endpoint) (\(words), after 4 attempts)\n", "\(run.stderr)")
            #expect(run.stdout.isEmpty)
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
        let byName = try sending.send(to: "https://localhost:\(v4.port)", trusting: sending.keyring.keys + "/tls-cert.pem",
                                      ["--device", deviceToken, "-b", "by name"])
        #expect(byName.status == 0, "\(byName.stderr)")
        #expect(jsonObject(v4.finish().stdout)["body"] as? String == "by name")
    }

    @Test func fourConnectionsShareTheDevicesAndAGoawayOnOneResendsOnlyItsOwn() throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"goaway_after": 100, "max_streams": 20, "delay": 0.001}"#)
        let devices = (1...600).map(Self.device)
        sending.folder.write("devices.txt", devices.joined(separator: "\n"))
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate,
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
