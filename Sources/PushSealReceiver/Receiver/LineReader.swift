#if canImport(Glibc)
import PushSeal
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a stream into lines as it arrives, holding only the current line and one read
/// buffer in memory however long the stream is.
///
/// With a `stop` request, waiting for input ends as soon as a stop is asked for; the lines
/// read completely by then are handed on, a half-read last line is not.
package struct LineReader {
    private let descriptor: Int32
    private let stop: StopRequest?
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false
    private let bound: InputBound
    /// Past the bound: the rest of this line is read and dropped, up to its newline.
    private var skipping = false

    /// `bound` is the most one line may hold; a longer line is never held whole.
    package init(descriptor: Int32, stop: StopRequest? = nil, bound: InputBound = .jsonLine) {
        self.descriptor = descriptor
        self.stop = stop
        self.bound = bound
    }

    /// What a caller says of a line past the bound (its number is the caller's count).
    package var overlongReason: String { "more than \(bound.limitText); skipped to the next line" }

    /// Calls `body` with each line, without its newline (and without a trailing `\r`), and
    /// `overlong` in its place for a line longer than the bound, as soon as it is longer; the
    /// rest of that line is dropped as it is read. `idle` runs whenever every line read so far has been handed on and no more input
    /// is waiting, so a caller that gathers lines into batches can send off a partial one
    /// instead of holding a slow stream's lines back.
    package mutating func forEachLine(
        idle: () -> Void = {}, overlong: () throws -> Void, each body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            if skipping {
                // Drop up to the long line's newline; the lines after it are read as usual.
                if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    start = newline + 1
                    skipping = false
                } else {
                    buffer.removeAll(keepingCapacity: true)
                    start = 0
                    if ended { return }
                }
            }
            // libc's memchr finds each newline: the byte-at-a-time search was a tenth of a
            // batch alert's work.
            let stopped = try buffer.withUnsafeBytes { all -> Bool in
                guard let base = all.baseAddress else { return false }
                while start < all.count, let found = memchr(base + start, Int32(UInt8(ascii: "\n")), all.count - start) {
                    if stop?.isRequested == true { return true }
                    let newline = base.distance(to: UnsafeRawPointer(found))
                    var end = newline
                    if end > start, all[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                    if end - start > bound.bytes {
                        try overlong()
                    } else {
                        try body(UnsafeRawBufferPointer(rebasing: all[start..<end]))
                    }
                    start = newline + 1
                }
                return false
            }
            if stopped { return }
            if !skipping, buffer.count - start > bound.bytes {
                // Said at once, not at a newline that may never come (`/dev/zero`); a caller
                // that cannot go on throws.
                skipping = true
                try overlong()
                continue
            }
            if ended {
                if start < buffer.count {
                    try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
                }
                return
            }
            buffer.removeSubrange(..<start)
            start = 0
            if !Self.hasInput(descriptor) { idle() }
            if let stop, !stop.waitForInput(on: descriptor) { return }
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileIOFailure(message: FileIO.lastError())
            }
            if count == 0 { ended = true } else { buffer.append(contentsOf: chunk[..<count]) }
        }
    }
}

extension LineReader {
    /// Whether a read would return at once (data, the end, or an error).
    package static func hasInput(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) != 0
    }
}

extension UnsafeRawBufferPointer {
    /// True when the line holds nothing but spaces and tabs: streams skip such lines.
    package var isBlankLine: Bool {
        !contains { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
    }
}
