#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a stream into lines as it arrives, holding only the current line and one read
/// buffer in memory however long the stream is.
///
/// With a `stop` request, waiting for input ends as soon as a stop is asked for; the lines
/// read completely by then are handed on, a half-read last line is not.
public struct LineReader {
    private let descriptor: Int32
    private let stop: StopRequest?
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false

    public init(descriptor: Int32, stop: StopRequest? = nil) {
        self.descriptor = descriptor
        self.stop = stop
    }

    /// Calls `body` with each line, without its newline (and without a trailing `\r`).
    public mutating func forEachLine(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            var searchFrom = start
            while let newline = buffer[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
                if stop?.isRequested == true { return }
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

extension UnsafeRawBufferPointer {
    /// True when the line holds nothing but spaces and tabs: streams skip such lines.
    public var isBlankLine: Bool {
        !contains { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
    }
}
