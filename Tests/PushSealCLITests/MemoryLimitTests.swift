import Foundation
import PushSeal
import PushSealReceiver
import Testing

/// A memory cgroup of the test's own, with a limit, that a listener is started in: the
/// listener must read the limit the kernel will enforce and keep its bounds inside it.
/// Created as cgroup v1 (`memory.limit_in_bytes`) or v2 (`memory.max`), whichever this
/// machine mounts; tests run as root (CI does).
struct MemoryCgroup {
    let path: String
    let wrapper: [String]

    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    init(limit: Int) throws {
        let name = "pushseal-test-\(UUID().uuidString.prefix(8))"
        let fileManager = FileManager.default
        let candidates = [("/sys/fs/cgroup/memory", "memory.limit_in_bytes"), ("/sys/fs/cgroup", "memory.max")]
        guard
            let (mount, file) = candidates.first(where: {
                fileManager.fileExists(atPath: $0.0 + "/" + $0.1) || fileManager.fileExists(atPath: $0.0 + "/cgroup.subtree_control") && $0.1 == "memory.max"
            })
        else {
            throw Unavailable(description: "no memory cgroup mount under /sys/fs/cgroup")
        }
        path = mount + "/" + name
        guard mkdir(path, 0o755) == 0 else {
            throw Unavailable(description: "cannot create the memory cgroup \(path): \(String(cString: strerror(errno))) (these tests run as root)")
        }
        do {
            try String(limit).write(toFile: path + "/" + file, atomically: false, encoding: .utf8)
        } catch {
            rmdir(path)
            throw Unavailable(description: "cannot set \(path)/\(file): \(error)")
        }
        // The shell moves itself into the group, then becomes the listener.
        wrapper = ["/bin/sh", "-c", "echo $$ > '\(path)/cgroup.procs' && exec \"$0\" \"$@\""]
    }

    /// Removes the group once the processes in it have ended.
    func remove() {
        var attempts = 0
        while rmdir(path) != 0, errno == EBUSY, attempts < 200 {
            attempts += 1
            usleep(50_000)
        }
    }
}

@Suite("the listener under a memory limit")
struct MemoryLimitTests {
    /// Under a 64 MB limit the documented 16,384-notification backlog alone would take
    /// about 64 MB: the kernel would kill the listener and the notifications already
    /// answered 200 would get no record. The listener reads the limit and says the bounds
    /// it keeps to instead (`CgroupMemoryLimitTests` checks that they fit).
    @Test func aListenerUnderAMemoryLimitShrinksItsBoundsToFit() throws {
        let group = try MemoryCgroup(limit: 64 << 20)
        defer { group.remove() }
        let keyring = try KeyringFixture()
        let listener = try Listener(["--plaintext", "--json", "--keys", keyring.keys], wrapper: group.wrapper)
        let expected = ListenerMemoryPlan.fitting(memoryLimit: 64 << 20)
        #expect(expected.pending == 3_834 && expected.connections == 239)
        let run = listener.finish()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "note: the memory limit is 64 MB (cgroup): at most 239 connections and 3834 notifications waiting for their records, 48 MB in all (--max-connections, --max-pending)"),
            "\(run.stderr)")
    }

    /// Past `--max-pending` notifications answered 200 and not yet recorded, new ones get
    /// 503 (and their records): the backlog stays within what was chosen.
    @Test func pastMaxPendingNotificationsAreAnswered503AndRecorded() throws {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        folder.write("payload.json", try keyring.encrypt(["-t", "Held", "-b", "by a slow extension"]).stdout)
        // The extension never answers and only four run at once: each notification waits for
        // its deadline (3 s), so the backlog grows as fast as h2load sends. h2load sends one
        // payload a thousand times: remembered, every repeat would be a quick duplicate.
        let listener = try Listener([
            "--plaintext", "--json", "--keys", keyring.keys, "--seen", "none", "--then", "exec sleep 100", "--max-extensions", "4",
            "--budget", "3s", "--expiry-grace", "100ms", "--max-pending", "500"
        ])
        let report = try runProcess(
            "/usr/bin/h2load",
            [
                "-n", "1000", "-c", "1", "-m", "100", "-H", acceptable[0], "-H", acceptable[1],
                "-d", folder.file("payload.json"), listener.url + "/3/device/" + deviceToken
            ])
        let run = listener.finish()
        #expect(run.status == 0, "\(run.stderr)")
        let answered = report.stdout.split(separator: "\n").first { $0.contains("status codes:") } ?? ""
        let accepted = Int(answered.split(separator: " ").dropFirst(2).first ?? "") ?? -1
        // Deliveries end from 3 s on and free room: a slow h2load may see a few more 200s.
        #expect(accepted >= 500 && accepted < 1_000, "\(answered)")
        let records = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == 1_000, "every request gets its record")
        #expect(records.filter { $0["reason"] as? String == "ServiceUnavailable" }.count == 1_000 - accepted)
        #expect(run.stderr.contains("\(1_000 - accepted) notification(s) were answered 503 ServiceUnavailable"), "\(run.stderr)")
    }

    @Test func boundsChosenAboveTheLimitAreKeptWithAWarning() throws {
        let group = try MemoryCgroup(limit: 64 << 20)
        defer { group.remove() }
        let keyring = try KeyringFixture()
        let listener = try Listener(
            ["--plaintext", "--keys", keyring.keys, "--max-pending", "16384", "--max-connections", "100"],
            wrapper: group.wrapper)
        let run = listener.finish()
        #expect(
            run.stderr.contains(
                "warning: the memory limit is 64 MB (cgroup) but these bounds may take 85 MB: the kernel may kill the listener before a bound acts (lower --max-connections or --max-pending)"),
            "\(run.stderr)")
    }

    @Test func withoutALimitTheDefaultsHoldAndNothingIsSaid() throws {
        let keyring = try KeyringFixture()
        let listener = try Listener(["--plaintext", "--keys", keyring.keys])
        let run = listener.finish()
        #expect(!run.stderr.contains("memory limit"), "\(run.stderr)")
    }

    @Test func theOptionsAreCheckedAsCounts() throws {
        let zero = try pushseal(["receive", "--listen", "0", "--max-pending", "0"])
        #expect(zero.status == 64)
        #expect(zero.stderr.contains("--max-pending must be a whole number from 1 to 1000000"), "\(zero.stderr)")
        let many = try pushseal(["receive", "--listen", "0", "--max-connections", "70000"])
        #expect(many.status == 64)
        #expect(many.stderr.contains("--max-connections must be a whole number from 1 to 65536"), "\(many.stderr)")
        let stray = try pushseal(["receive", "--max-pending", "5", "-"])
        #expect(stray.status == 64 && stray.stderr.contains("--max-pending goes with --listen"), "\(stray.stderr)")
    }
}
