internal import CNGHTTP2

// What the server's and the client's connections do with their nghttp2 session alike: the
// header fields they submit, a body sent from memory, input fed to the session within the
// loop's budget, and output flushed with the check that the session is done. Each side keeps
// only what differs: its callbacks, its streams, its limits.

/// Header fields as nghttp2 takes them: every name and value in one buffer and the
/// `nghttp2_nv` entries pointing into it. nghttp2 copies them on submit, so one set of
/// buffers serves every request or answer of a connection.
struct HeaderFields {
    private var bytes: [UInt8] = []
    private var spans: [(name: Int, value: Int, end: Int, indexed: Bool)] = []
    private var entries: [nghttp2_nv] = []

    mutating func start() {
        bytes.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
    }

    /// - Parameter indexed: false to keep the field out of HPACK's table (a value new in
    ///   every message, such as an id, is not worth a place there).
    mutating func add(_ name: String, _ value: String, indexed: Bool = true) {
        let nameStart = bytes.count
        append(name)
        let valueStart = bytes.count
        append(value)
        spans.append((nameStart, valueStart, bytes.count, indexed))
    }

    /// Appends the text's bytes in place where they are contiguous (always, for a native
    /// String): `append(contentsOf: text.utf8)` retains and releases the text.
    private mutating func append(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: text.utf8)
        }
    }

    /// The entries, valid only during `body`: they point into `bytes`.
    mutating func withEntries<Result>(_ body: (UnsafeMutablePointer<nghttp2_nv>, Int) -> Result) -> Result {
        entries.removeAll(keepingCapacity: true)
        return bytes.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            for span in spans {
                entries.append(
                    nghttp2_nv(
                        name: base + span.name, value: base + span.value,
                        namelen: span.value - span.name, valuelen: span.end - span.value,
                        flags: UInt8((span.indexed ? NGHTTP2_NV_FLAG_NONE : NGHTTP2_NV_FLAG_NO_INDEX).rawValue)))
            }
            return entries.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        }
    }
}

/// A body sent from memory, as much as nghttp2's read callback asks for at a time.
enum OutgoingBody {
    /// Copies the part of `body` after `sent` bytes into `buffer` (at most `length`), moves
    /// `sent` on, and sets the end-of-stream flag when that was the last of it.
    static func copy(
        _ body: [UInt8], sent: inout Int, into buffer: UnsafeMutablePointer<UInt8>, length: Int, flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        let count = min(length, body.count - sent)
        let start = sent
        body.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + start, byteCount: count)
        }
        sent += count
        if sent == body.count { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }
}

extension Transport {
    /// What flushing left of a session.
    enum SessionOutput {
        /// Everything went out, and the session goes on.
        case open
        /// Everything went out, and the session wants neither to read nor to write: the
        /// connection is done.
        case finished
        /// The socket is full: the rest goes when it is writable.
        case blocked
        /// The socket broke.
        case writeFailed
        /// nghttp2 failed to produce output.
        case sessionFailed
    }

    /// Writes what `session` has (see `flush`), then says whether it is done.
    func flush(session: OpaquePointer, batch: Int, wrote: () -> Void = {}) -> SessionOutput {
        switch flush(session, batch: batch, wrote: wrote) {
        case .writeFailed: return .writeFailed
        case .sessionFailed: return .sessionFailed
        case .blocked: return .blocked
        case .done:
            return nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 ? .finished : .open
        }
    }

    /// Reads within `budget`, feeding each read to `session`; `arrived` runs before each is
    /// fed. When nghttp2 refuses the input, `refused` gets its error code and reading stops.
    func receive(
        into session: OpaquePointer, buffer: UnsafeMutableRawBufferPointer, budget: Int, isClosed: () -> Bool,
        arrived: () -> Void = {}, refused: (Int32) -> Void
    ) -> ReadEnd {
        read(
            into: buffer, budget: budget, isClosed: isClosed,
            take: { count in
                arrived()
                let taken = nghttp2_session_mem_recv(session, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), count)
                guard taken >= 0 else {
                    refused(Int32(taken))
                    return false
                }
                return true
            })
    }
}
