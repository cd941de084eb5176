import Foundation
import Testing

/// Where `send` connects: an endpoint written as users write it, and NO_PROXY read as curl
/// reads it, against the listener and a proxy that is not there (a request that goes through
/// it fails; one that goes direct arrives).
@Suite("send: endpoints and NO_PROXY")
struct SendEndpointTests {
    @Test func aBareIPv6EndpointIsAUsageError() throws {
        let sending = try SendTests.Sending()
        for endpoint in ["https://::1", "https://::1:8443", "http://fe80::1"] {
            let run = try sending.send(to: endpoint, trusting: nil, ["--device", deviceToken, "-b", "x"])
            #expect(run.status == 64, "\(endpoint): \(run.stderr)")
            #expect(run.stderr.hasPrefix("error: --endpoint: \(endpoint) has an IPv6 address outside brackets; write it as ["), "\(run.stderr)")
        }
    }

    @Test func noProxyTakesRangesAndNeverMatchesAnAddressByItsTail() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        func send(noProxy: String) throws -> Run {
            try sending.send(
                to: listener, ["--device", deviceToken, "--retries", "0", "-b", "x"],
                environment: ["HTTPS_PROXY": "http://127.0.0.1:1", "NO_PROXY": noProxy])
        }
        for direct in ["127.0.0.0/8", "127.0.0.1", "localhost, 127.0.0.0/8", "10.0.0.0/8,127.0.0.0/16", "*"] {
            let run = try send(noProxy: direct)
            #expect(run.status == 0, "NO_PROXY=\(direct) goes direct: \(run.stderr)")
        }
        for proxied in ["0.0.1", ".0.0.1", "127.0.0.2", "128.0.0.0/8", "127.0.0.0/33", "example.com"] {
            let run = try send(noProxy: proxied)
            #expect(run.status == 75 && run.stdout.hasPrefix("fail \(deviceToken) 0 "), "NO_PROXY=\(proxied) does not name 127.0.0.1: \(run.status) \(run.stderr)")
        }
        #expect(listener.finish().stdout.split(separator: "\n").count == 5)
    }

    /// Whatever happens, every device given gets its result line: an endpoint that is not
    /// there fails the one tried and reports the rest as not sent, in order, with why.
    @Test func anUnreachableEndpointStillGivesEveryDeviceItsJSONLine() throws {
        let sending = try SendTests.Sending()
        // More than can be in flight at once (two thousand), so some are never tried.
        let devices = (1...5_000).map { String(format: "%064x", $0) }
        let run = try sending.send(
            to: "https://127.0.0.1:1", trusting: nil, ["--devices", "-", "--json", "--retries", "0", "-b", "x"],
            stdin: devices.joined(separator: "\n") + "\n")
        #expect(run.status == 75, "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1 && run.stderr.hasPrefix("error: cannot reach https://127.0.0.1:1"))
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(results.map { $0["device"] as? String } == devices, "one line per device, in order")
        #expect(
            results.allSatisfy { $0["status"] as? String == "failed" && ($0["reason"] as? String)?.contains("cannot reach https://127.0.0.1:1") == true },
            "\(run.stdout.prefix(600))")
        #expect(results.contains { ($0["reason"] as? String)?.hasPrefix("not sent: ") == true }, "devices after the failure were not tried")
    }

    /// A server that allows no stream at all, for good: requests waiting for one are bounded by
    /// --timeout and --retry-for like any other, and each device gets its line.
    @Test func aServerThatNeverAllowsAStreamIsGivenUpOnWithinTheBounds() throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"max_streams": 0}"#)
        let run = try sending.send(
            to: standIn.url, trusting: standIn.certificate,
            ["--device", deviceToken, "--device", String(format: "%064x", 2), "--timeout", "1s", "--retry-for", "2s", "-b", "x"])
        #expect(run.status == 75, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines.allSatisfy { $0.hasPrefix("fail ") && $0.contains(" 0 no stream became free within 1 s (") && $0.hasSuffix(" attempts)") }, "\(run.stdout)")
        #expect(standIn.log.isEmpty, "nothing could be sent")
    }

    /// An answer whose body is longer than send keeps (16 KB) still says its reason.
    @Test func anErrorBodyOverSixteenKilobytesKeepsItsReason() throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"answers": {"\#(deviceToken)": [[400, "BadDeviceToken"]]}, "padding": 40000}"#)
        let run = try sending.send(to: standIn.url, trusting: standIn.certificate, ["--device", deviceToken, "-b", "x"])
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stdout == "fail \(deviceToken) 400 BadDeviceToken\n", "\(run.stdout)")
    }

    /// A proxy that says yes to the tunnel and then closes it, or lets nothing through, is
    /// named in the line: the fault is on its side of the tunnel, not necessarily the endpoint's.
    @Test func aProxyThatAcceptsTheTunnelAndThenFailsIsNamed() throws {
        let sending = try SendTests.Sending()
        let listener = try sending.listener()
        for behaviour in ["close", "hang"] {
            let proxy = try RunningProcess(
                [
                    "python3", "-c",
                    """
                    import socket, sys, threading
                    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
                    print("listening", s.getsockname()[1], flush=True)
                    held = []
                    while True:
                        c = s.accept()[0]
                        data = b""
                        while b"\\r\\n\\r\\n" not in data:
                            chunk = c.recv(4096)
                            if not chunk: break
                            data += chunk
                        c.sendall(b"HTTP/1.1 200 Connection established\\r\\n\\r\\n")
                        if sys.argv[1] == "close": c.close()
                        else: held.append(c)
                    """, behaviour
                ], executable: "/usr/bin/env")
            defer { proxy.signal(SIGKILL) }
            #expect(eventually { proxy.stdoutSoFar.contains("listening ") })
            let port = proxy.stdoutSoFar.split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)
            let run = try sending.send(to: listener, ["--device", deviceToken, "--proxy", "http://127.0.0.1:\(port)", "--timeout", "1s", "-b", "x"])
            #expect(run.status == 75, "\(behaviour): \(run.stderr)")
            #expect(run.stderr.contains("through the proxy http://127.0.0.1:\(port), which accepted the tunnel"), "\(behaviour): \(run.stderr)")
        }
        #expect(listener.finish().stdout.isEmpty)
    }

    /// A connection that goes silent (no GOAWAY, no reset, not even a PING's answer) is
    /// suspect once a stream on it times out: it takes no more work, a PING goes out, and with
    /// no answer it is replaced; what it held is sent again elsewhere, so every device arrives.
    @Test(arguments: [1, 4])
    func aConnectionThatGoesSilentIsReplacedAndNoDeviceIsLost(connections: Int) throws {
        let sending = try SendTests.Sending()
        let standIn = try APNsStandIn(for: sending, script: #"{"silent_after": 50, "max_streams": 50}"#)
        let devices = (1...400).map { String(format: "%064x", $0) }
        sending.folder.write("devices.txt", devices.joined(separator: "\n"))
        let run = try sending.send(
            to: standIn.url, trusting: standIn.certificate,
            [
                "--devices", sending.folder.file("devices.txt"), "--connections", String(connections),
                "--timeout", "1s", "--json", "-b", "past a silent connection"
            ])
        #expect(run.status == 0, "\(connections): \(run.stderr)")
        let results = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(
            results.count == 400 && results.allSatisfy { $0["status"] as? String == "ok" },
            "\(connections): \(results.filter { $0["status"] as? String != "ok" }.prefix(2))")
        if connections == 1 {
            let served = Set(standIn.log.compactMap { $0["connection"] as? Int })
            #expect(served.count >= 2, "a new connection replaced the silent one: \(served.sorted())")
        }
    }
}
