#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's standard streams, with stdout buffered so that `--batch` makes one write
/// per 64 KiB instead of one per payload.
final class Console {
    private var pending: [UInt8] = []
    private let flushThreshold = 64 * 1024

    init() {
        pending.reserveCapacity(flushThreshold + 8192)
    }

    /// True when stderr is a terminal: friendly notes go there only for people, not for
    /// scripts that parse stderr.
    var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// Queues a result line for stdout.
    func output(_ line: String) {
        pending.append(contentsOf: line.utf8)
        pending.append(UInt8(ascii: "\n"))
        if pending.count >= flushThreshold { flush() }
    }

    /// Queues result bytes plus a newline for stdout.
    func output(bytes: [UInt8]) {
        pending.append(contentsOf: bytes)
        pending.append(UInt8(ascii: "\n"))
        if pending.count >= flushThreshold { flush() }
    }

    func flush() {
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
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += count
        }
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
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIFailure(errno == EISDIR ? .dataError : .ioError, "cannot read \(name): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}

/// Splits a stream into lines as it arrives, holding only the current line and one read
/// buffer in memory however long the stream is.
struct LineReader {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Calls `body` with each line, without its newline (and without a trailing `\r`).
    mutating func forEachLine(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            var searchFrom = start
            while let newline = buffer[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
                start = newline + 1
                searchFrom = start
            }
            if ended {
                if start < buffer.count {
                    try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
                }
                return
            }
            buffer.removeSubrange(..<start)
            start = 0
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIFailure(.ioError, "cannot read stdin: \(String(cString: strerror(errno)))")
            }
            if count == 0 { ended = true } else { buffer.append(contentsOf: chunk[..<count]) }
        }
    }
}
