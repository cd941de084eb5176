#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PushSeal

/// The process's standard streams, with stdout buffered so that `--batch` makes one write
/// per 64 KiB instead of one per payload. Safe to use from the receiver's threads.
final class Console: Sendable {
    private let pending = Locked<[UInt8]>([])
    private let flushThreshold = 64 * 1024

    init() {
        pending.withLock { $0.reserveCapacity(flushThreshold + 8192) }
    }

    /// True when stderr is a terminal: friendly notes go there only for people, not for
    /// scripts that parse stderr.
    var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// Queues a result line for stdout.
    func output(_ line: String) {
        append(line.utf8)
    }

    /// Queues result bytes plus a newline for stdout.
    func output(bytes: [UInt8]) {
        append(bytes)
    }

    /// Queues bytes for stdout as they are, without adding a newline.
    func write(_ bytes: [UInt8]) {
        append(bytes, newline: false)
    }

    private func append(_ bytes: some Collection<UInt8>, newline: Bool = true) {
        pending.withLock { pending in
            pending.append(contentsOf: bytes)
            if newline { pending.append(UInt8(ascii: "\n")) }
            if pending.count >= flushThreshold { drain(&pending) }
        }
    }

    /// Writes everything queued for stdout.
    func flush() {
        pending.withLock { drain(&$0) }
    }

    private func drain(_ pending: inout [UInt8]) {
        guard !pending.isEmpty else { return }
        writeAll(1, pending)
        pending.removeAll(keepingCapacity: true)
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
        writeAll(2, Array((line + "\n").utf8))
    }

    private func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        // A closed stdout or stderr has nowhere left to report to; the exit status still tells.
        try? FileIO.writeAll(descriptor, bytes)
    }
}

/// Input the CLI reads itself: files and stdin.
enum InputFiles {
    /// Reads a whole file, or stdin for `-`.
    static func read(_ source: String) throws -> [UInt8] {
        if source == "-" { return try readAll(0, name: "stdin") }
        let descriptor = open(source, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CLIFailure(errno == ENOENT ? .noInput : errno == EACCES ? .noPermission : .ioError,
                             "cannot read \(source): \(reason)")
        }
        defer { close(descriptor) }
        return try readAll(descriptor, name: source)
    }

    static func readAll(_ descriptor: Int32, name: String) throws -> [UInt8] {
        do {
            return try FileIO.readAll(descriptor)
        } catch {
            throw CLIFailure(error.code == EISDIR ? .dataError : .ioError, "cannot read \(name): \(error.message)")
        }
    }
}
