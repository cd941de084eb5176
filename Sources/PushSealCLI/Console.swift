import Locking
import PushSeal
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a reader of stdout went away (EPIPE: `| head` has what it wanted). That is no
/// failure worth a line: pushseal then exits 141 without one, as `cat` does by SIGPIPE.
enum StdoutReader {
    static let closed = Atomic<Bool>(false)

    /// The message for a failed write, noting a closed reader.
    static func failure(_ error: FileIOFailure) -> String {
        guard error.code == EPIPE else { return error.message }
        closed.store(true, ordering: .relaxed)
        return "the reader closed the pipe"
    }
}

/// The process's standard streams, with stdout buffered so that `--batch` makes one write
/// per 64 KiB instead of one per payload. Safe to use from the receiver's threads.
///
/// A write to stdout that fails (a full disk, a closed pipe) is remembered, and everything
/// after it is dropped: `finish()` then reports it, so no command exits 0 with its result
/// lost.
final class Console: Sendable {
    private struct State: Sendable {
        var pending: [UInt8] = []
        var failure: String?
    }

    private let state = Locked(State())
    private let flushThreshold = 64 * 1024
    /// Where results go: stdout, or stderr for `run`, whose stdout is the command's.
    private let descriptor: Int32
    private let streamName: String

    init(results descriptor: Int32 = 1) {
        self.descriptor = descriptor
        streamName = descriptor == 2 ? "stderr" : "stdout"
        state.withLock { $0.pending.reserveCapacity(flushThreshold + 8192) }
    }

    /// True when stderr is a terminal: friendly notes go there only for people, not for
    /// scripts that parse stderr.
    var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// Why stdout could not be written, once that has happened.
    var failure: String? { state.withLock { $0.failure } }

    /// Queues a result line for stdout.
    func output(_ line: String) {
        append(line.utf8)
    }

    /// Queues result bytes plus a newline for stdout.
    func output(bytes: [UInt8]) {
        append(bytes)
    }

    /// Queues bytes for stdout as they are, without adding a newline; false once stdout
    /// has failed.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        append(bytes, newline: false)
    }

    @discardableResult
    private func append(_ bytes: some Collection<UInt8>, newline: Bool = true) -> Bool {
        state.withLock { state in
            guard state.failure == nil else { return false }
            state.pending.append(contentsOf: bytes)
            if newline { state.pending.append(UInt8(ascii: "\n")) }
            if state.pending.count >= flushThreshold { drain(&state) }
            return state.failure == nil
        }
    }

    /// Writes everything queued for stdout; false once stdout has failed.
    @discardableResult
    func flush() -> Bool {
        state.withLock { state in
            drain(&state)
            return state.failure == nil
        }
    }

    /// Writes what is queued for stdout only if no other thread is using it now (one may be
    /// blocked writing to a reader that stalled), and only as much as stdout takes without
    /// waiting: for an exit that must not wait.
    func flushIfFree() {
        _ = state.withLockIfAvailable { state in
            var offset = 0
            while offset < state.pending.count {
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                guard poll(&ready, 1, 0) == 1, ready.revents & Int16(POLLOUT) != 0 else { break }
                // A pipe takes a write of at most PIPE_BUF whole once it polls writable.
                let count = state.pending.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, min(512, $0.count - offset)) }
                guard count > 0 else { break }
                offset += count
            }
            state.pending.removeAll()
        }
    }

    /// Flushes stdout and throws if anything meant for it was lost. `done` says what
    /// happened all the same (a changed keyring, say), for the error line.
    func finish(done: String? = nil) throws(CLIFailure) {
        guard flush() == false, let failure else { return }
        // What changed must be told even to a reader that went away: not a quiet exit then.
        if done != nil { StdoutReader.closed.store(false, ordering: .relaxed) }
        throw CLIFailure(.ioError, "cannot write to \(streamName): \(failure)" + (done.map { "; \($0)" } ?? ""))
    }

    private func drain(_ state: inout State) {
        guard !state.pending.isEmpty else { return }
        defer { state.pending.removeAll(keepingCapacity: true) }
        guard state.failure == nil else { return }
        do {
            try FileIO.writeAll(descriptor, state.pending)
        } catch {
            state.failure = descriptor == 1 ? StdoutReader.failure(error) : error.message
        }
    }

    /// Writes `error: message` to stderr at once.
    func error(_ message: String) {
        diagnostic("error: \(message)")
    }

    func warning(_ message: String) {
        diagnostic("warning: \(message)")
    }

    /// A line on stderr, unbuffered so it lands beside whatever stdout already printed.
    func diagnostic(_ line: String) {
        flush()
        // A closed stderr has nowhere left to report to; the exit status still tells.
        try? FileIO.writeAll(2, Array((line + "\n").utf8))
    }
}

/// Input the CLI reads itself: files and stdin.
enum InputFiles {
    /// Reads a whole file, or stdin for `-`, up to `bound`: past it, one line says so (65).
    static func read(_ source: String, bound: InputBound) throws -> [UInt8] {
        if source == "-" { return try readAll(0, name: "stdin", bound: bound) }
        let descriptor = try open(source)
        defer { close(descriptor) }
        return try readAll(descriptor, name: source, bound: bound)
    }

    /// Fails as `read` would if the file cannot be opened: for commands that check every
    /// input before they start.
    static func checkReadable(_ source: String) throws {
        close(try open(source))
    }

    /// Opens a file for reading (the caller closes it), or gives stdin for `-`.
    static func open(_ source: String) throws -> Int32 {
        if source == "-" { return 0 }
        let descriptor = Glibc.open(source, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CLIFailure(
                errno == ENOENT ? .noInput : errno == EACCES ? .noPermission : .ioError,
                "cannot read \(source): \(reason)")
        }
        return descriptor
    }

    /// Reads stdin, but no more than `limit` bytes: a caller that cannot use more learns
    /// that there was more without holding it all.
    static func read(_ source: String, atMost limit: Int) throws -> [UInt8] {
        precondition(source == "-", "only stdin is read with a limit")
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, min($0.count, limit - bytes.count)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIFailure(.ioError, "cannot read stdin: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return bytes
    }

    static func readAll(_ descriptor: Int32, name: String, bound: InputBound) throws -> [UInt8] {
        do {
            return try FileIO.readAll(descriptor, bound: bound)
        } catch {
            // No errno: the bound was crossed, so the input is wrong, not the system.
            throw CLIFailure(
                error.code == EISDIR || error.code == nil ? .dataError : .ioError, "cannot read \(name): \(error.message)",
                inputIsWrong: error.code == nil)
        }
    }
}
