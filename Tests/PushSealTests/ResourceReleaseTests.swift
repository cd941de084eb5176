import Foundation
import HTTP2
import Synchronization
import Testing

@testable import PushSeal

/// What a failure leaves behind: a replaced file keeps its errno and closes its descriptor
/// exactly once; a server that cannot start closes every descriptor it opened.
@Suite("failures release what they took")
struct ResourceReleaseTests {
    /// Counts the calls `FileIO.replace` makes, failing the one named.
    private final class Calls: Sendable {
        let closes = Atomic<Int>(0)
        func failing(fsync failsFsync: Bool, close failsClose: Bool) -> FileIO.FileCalls {
            FileIO.FileCalls(
                write: { Glibc.write($0, $1, $2) },
                fsync: { descriptor in
                    guard failsFsync else { return Glibc.fsync(descriptor) }
                    errno = EIO
                    return -1
                },
                close: { [self] descriptor in
                    self.closes.add(1, ordering: .relaxed)
                    // Like NFS: the descriptor is released, and the error reported.
                    Glibc.close(descriptor)
                    guard failsClose else { return 0 }
                    errno = EDQUOT
                    return -1
                })
        }
    }

    private func folder() throws -> String {
        let path = NSTemporaryDirectory() + "pushseal-release-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aFailedCloseIsNotClosedAgainAndKeepsItsErrno() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/keyring"
        try FileIO.replace(path, with: Array("old".utf8))
        let calls = Calls()
        let failure = #expect(throws: FileIOFailure.self) {
            try FileIO.replace(path, with: Array("new".utf8), calls: calls.failing(fsync: false, close: true))
        }
        #expect(calls.closes.load(ordering: .relaxed) == 1, "the descriptor was closed \(calls.closes.load(ordering: .relaxed)) times")
        #expect(failure?.code == EDQUOT)
        #expect(failure?.nothingCreated == false)
        #expect(failure?.message.contains(String(cString: strerror(EDQUOT))) == true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["keyring"])
    }

    @Test func aFailedSyncClosesOnceAndKeepsItsErrno() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/keyring"
        let calls = Calls()
        let failure = #expect(throws: FileIOFailure.self) {
            try FileIO.replace(path, with: Array("new".utf8), calls: calls.failing(fsync: true, close: false))
        }
        #expect(calls.closes.load(ordering: .relaxed) == 1)
        #expect(failure?.code == EIO)
        #expect(failure?.nothingCreated == false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test func aFileThatCannotBeCreatedSaysSo() throws {
        let failure = #expect(throws: FileIOFailure.self) {
            try FileIO.replace("/nonexistent-\(UUID().uuidString)/keyring", with: [1])
        }
        #expect(failure?.code == ENOENT)
        #expect(failure?.nothingCreated == true)
    }

    /// Runs in a process of its own (this test binary again, this test alone), as it lowers
    /// the descriptor limit, which would fail other tests running beside it.
    @Test func aServerThatCannotStartClosesEveryDescriptorItOpened() throws {
        guard ProcessInfo.processInfo.environment["PUSHSEAL_DESCRIPTOR_LIMIT_CHILD"] == "1" else {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
            child.arguments = ["--testing-library", "swift-testing", "--filter", "aServerThatCannotStartClosesEveryDescriptorItOpened"]
            child.environment = ProcessInfo.processInfo.environment.merging(["PUSHSEAL_DESCRIPTOR_LIMIT_CHILD": "1"]) { $1 }
            let output = Pipe()
            child.standardOutput = output
            child.standardError = output
            try child.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            #expect(child.terminationStatus == 0, "\(text.suffix(3_000))")
            #expect(text.contains("1 test"), "the child ran no test: \(text.suffix(1_000))")
            return
        }
        func openDescriptors() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        }
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }
        // From too little room for anything to room for the whole server, one descriptor
        // more each time: the failure falls on the listening socket, the first loop's epoll
        // or eventfd, then the second loop's. Whatever fails, nothing is left open.
        var failures = 0
        for room in 0...8 {
            let before = openDescriptors()
            var limited = saved
            limited.rlim_cur = rlim_t(before + room)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limited)
            var server: HTTP2Server?
            do {
                server = try HTTP2Server(host: "127.0.0.1", port: 0, tls: nil, threads: 2) { _ in .init(status: 200) }
            } catch {
                failures += 1
            }
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
            let leftOpen = openDescriptors() - before - (server == nil ? 0 : 5)
            server = nil
            #expect(leftOpen == 0, "room \(room): \(leftOpen) descriptors left open")
            #expect(openDescriptors() == before, "room \(room): the server's descriptors outlived it")
        }
        #expect(failures >= 3, "only \(failures) starts failed: the limit did not bite")
    }
}
