import Foundation
import Testing

@testable import PushSeal
@testable import PushSealReceiver

/// Pipes this process holds open now, from /proc/self/fd.
private func openPipes() -> Int {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return entries.count { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0))?.hasPrefix("pipe:") == true }
}

/// The process state letter of `pid` (R, S, Z, ...), or nil once it is gone.
private func processState(_ pid: pid_t) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return nil }
    return stat[stat.index(close, offsetBy: 2)]
}

/// One type owns each child: its pipes, its group, one reap, and no signal after it.
@Suite("child processes: one owner each")
struct ChildProcessTests {
    @Test func aStartThatFailsClosesEveryPipeItMade() {
        let before = openPipes()
        for _ in 0..<300 {
            #expect(throws: FileIOFailure.self) {
                try ChildProcess("/nonexistent/program", ["program"], stdin: .pipe, stdout: .pipe, stderr: .pipe)
            }
        }
        // Other tests run meanwhile and hold a few pipes; a leak here would be 1,800.
        #expect(openPipes() - before < 100)
    }

    @Test func everyRunGivesBackItsPipesAndIsReaped() throws {
        let before = openPipes()
        for _ in 0..<100 {
            let child = try ChildProcess("/bin/cat", ["cat"], stdin: .pipe, stdout: .pipe)
            try FileIO.writeAll(child.descriptor(.input), Array("echo".utf8))
            child.close(.input)
            #expect(try FileIO.readAll(child.descriptor(.output), bound: .small) == Array("echo".utf8))
            child.close(.output)
            #expect(child.wait() == 0)
            #expect(processState(child.pid) == nil || processState(child.pid) != "Z", "reaped, not a zombie")
        }
        #expect(openPipes() - before < 100)
    }

    @Test func noSignalLeavesAfterTheReap() throws {
        let child = try ChildProcess("/bin/sh", ["sh", "-c", "exit 3"], stdin: .null, stdout: .null)
        #expect(child.wait() == 3 << 8)
        // The pid may belong to another process by now.
        #expect(child.signal(SIGTERM) == false)
        #expect(child.wait() == 3 << 8, "one reap; asking again gives the same status")
    }

    @Test func theExitIsSeenBeforeTheReapWhichKeepsThePid() throws {
        let child = try ChildProcess("/bin/true", ["true"], stdin: .null, stdout: .null)
        var looks = 0
        while !child.hasExited, looks < 1_000 {
            usleep(5_000)
            looks += 1
        }
        #expect(child.hasExited)
        // Exited but not reaped: the pid is still this child's, so signalling it is safe.
        #expect(processState(child.pid) == "Z")
        #expect(child.signal(0))
        #expect(child.wait() == 0)
        #expect(child.signal(0) == false)
    }

    @Test func aWaitThatRunsOutLeavesTheChildRunningAndUnreaped() throws {
        let child = try ChildProcess("/bin/sleep", ["sleep", "30"], stdin: .null, stdout: .null)
        #expect(child.wait(within: .milliseconds(100)) == nil)
        #expect(!child.hasExited)
        #expect(child.signal(SIGKILL))
        let status = try #require(child.wait())
        #expect(status & 0x7F == SIGKILL)
    }

    @Test func whatAGroupLeftBehindIsKilledAtTheReap() throws {
        let child = try ChildProcess("/bin/sh", ["sh", "-c", "sleep 30 >/dev/null & echo $!"], stdin: .null, stdout: .pipe, ownGroup: true)
        let printed = String(decoding: try FileIO.readAll(child.descriptor(.output), bound: .small), as: UTF8.self)
        child.close(.output)
        let leftover = try #require(pid_t(printed.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(child.wait() == 0)
        var looks = 0
        while let state = processState(leftover), state != "Z", looks < 1_000 {
            usleep(5_000)
            looks += 1
        }
        #expect(processState(leftover) == nil || processState(leftover) == "Z", "the background sleep was killed with its group")
    }
}
