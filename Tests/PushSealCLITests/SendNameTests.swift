import Foundation
import Testing

/// Names as resolvers give them: several addresses, some of which take a connection and then
/// say nothing, and lookups that never answer. Each case runs `send` in a mount namespace of
/// its own (`unshare -m`, as root, as CI runs) with its own /etc/hosts or /etc/resolv.conf
/// bind-mounted, so the machine's files are never touched.
@Suite("send: names with several addresses, and slow lookups")
struct SendNameTests {
    /// `send` (with `sending`'s key and keyring) run with `file` bind-mounted over `target`.
    static func send(_ sending: SendTests.Sending, over target: String, with file: String, _ arguments: [String]) throws -> Run {
        let script = #"mount --bind "$1" "$2" && shift 2 && exec "$@""#
        return try runProcess(
            "/usr/bin/unshare",
            [
                "-m", "sh", "-c", script, "sh", file, target, pushsealBinary,
                "send", "--keys", sending.keyring.keys, "--topic", topic, "--auth-key", sending.p8,
                "--key-id", "KEY1234567", "--team-id", "TEAM123456"
            ] + arguments)
    }

    /// A name with two addresses whose first takes the connection and never answers: the next
    /// attempt goes to the second, which is healthy, instead of every attempt to the first.
    @Test func aFirstAddressThatNeverAnswersGivesWayToTheNext() throws {
        let sending = try SendTests.Sending()
        let hosts = sending.folder.file("hosts")
        sending.folder.write("hosts", "127.0.0.1 localhost\n127.0.0.1 twoaddrs.test\n127.0.0.2 twoaddrs.test\n")
        // The order getaddrinfo gives them here: the first is made the silent one.
        let order = try runProcess("/usr/bin/unshare", ["-m", "sh", "-c", #"mount --bind "$1" /etc/hosts && getent ahosts twoaddrs.test"#, "sh", hosts])
        let first = String(order.stdout.split(separator: " ").first ?? "127.0.0.1")
        let second = first == "127.0.0.1" ? "127.0.0.2" : "127.0.0.1"
        // The silent server takes the listener's port on the other address; another test's
        // server may hold that port there already, so a taken port means a new listener.
        var listener: Listener?
        var silent: RunningProcess?
        for _ in 0..<5 where silent == nil {
            let candidate = try sending.listener(["--plaintext"], address: "\(second):0")
            let server = try RunningProcess(
                [
                    "python3", "-c",
                    """
                    import socket, sys
                    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(16)
                    print("listening", flush=True)
                    held = []
                    while True:
                        held.append(s.accept()[0])
                    """, first, String(candidate.port)
                ], executable: "/usr/bin/env")
            if eventually({ server.stdoutSoFar.contains("listening") || !server.process.isRunning }), server.stdoutSoFar.contains("listening") {
                (listener, silent) = (candidate, server)
            } else {
                server.signal(SIGKILL)
                _ = candidate.finish()
            }
        }
        defer { silent?.signal(SIGKILL) }
        guard let listener, silent != nil else {
            Issue.record("no port was free on both addresses in five tries")
            return
        }
        let run = try Self.send(
            sending, over: "/etc/hosts", with: hosts,
            ["--endpoint", "http://twoaddrs.test:\(listener.port)", "--allow-cleartext", "--timeout", "1s", "--device", deviceToken, "-b", "the second address"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(jsonObject(listener.finish().stdout)["body"] as? String == "the second address")
    }

    /// A lookup that never answers is named as what failed, and bounded like any attempt.
    @Test func aLookupThatNeverAnswersIsNamed() throws {
        let sending = try SendTests.Sending()
        // A resolver that reads every question and answers none.
        let resolver = try RunningProcess(
            [
                "python3", "-c",
                """
                import socket
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind(("127.0.0.77", 53))
                print("listening", flush=True)
                while True:
                    s.recvfrom(4096)
                """
            ], executable: "/usr/bin/env")
        defer { resolver.signal(SIGKILL) }
        #expect(eventually { resolver.stdoutSoFar.contains("listening") }, "the resolver could not start")
        sending.folder.write("resolv.conf", "nameserver 127.0.0.77\noptions timeout:5 attempts:1\n")
        let run = try Self.send(
            sending, over: "/etc/resolv.conf", with: sending.folder.file("resolv.conf"),
            ["--endpoint", "https://push.slow-resolver.test", "--timeout", "1s", "--device", deviceToken, "-b", "x"])
        #expect(run.status == 75, "\(run.stderr)")
        #expect(
            run.stderr == "error: cannot reach https://push.slow-resolver.test (no progress looking up push.slow-resolver.test for 1 s, after 4 tries to connect)\n",
            "\(run.stderr)")
        #expect(run.stdout.hasPrefix("fail \(deviceToken) 0 "), "the device still gets its line: \(run.stdout)")
    }
}
