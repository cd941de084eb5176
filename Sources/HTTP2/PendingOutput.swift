internal import CNGHTTP2

#if canImport(Glibc)
import Glibc
#endif

/// What a connection's HTTP/2 session has produced and its socket has not taken yet, and
/// the one way both sides write it: through TLS or straight to the socket, partial writes
/// kept for the next readiness. Owned by one connection, on its loop's thread.
struct PendingOutput {
    private var bytes: [UInt8] = []
    private var start = 0

    /// What became of a write.
    enum Progress {
        /// Everything went out.
        case all
        /// The socket is full: wait for it to be writable.
        case blocked
        /// The connection is broken.
        case failed
    }

    var isEmpty: Bool { start == bytes.count }

    /// Writes what waits; `wrote` is called after each write that took bytes.
    mutating func write(to descriptor: Int32, tls: OpaquePointer?, wrote: () -> Void = {}) -> Progress {
        while start < bytes.count {
            let remaining = bytes.count - start
            let offset = start
            let written: Int = bytes.withUnsafeBytes { buffer in
                let from = buffer.baseAddress! + offset
                if let tls {
                    // OpenSSL's error queue is per thread and shared by every connection on
                    // the loop: emptied around the call, so this connection is judged alone.
                    ERR_clear_error()
                    let rc = SSL_write(tls, from, Int32(min(remaining, Int(Int32.max))))
                    if rc > 0 { return Int(rc) }
                    let error = SSL_get_error(tls, rc)
                    ERR_clear_error()
                    return error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ ? 0 : -1
                }
                let rc = Glibc.send(descriptor, from, remaining, Int32(MSG_NOSIGNAL))
                if rc >= 0 { return rc }
                return errno == EAGAIN || errno == EINTR ? 0 : -1
            }
            if written < 0 { return .failed }
            if written == 0 { return .blocked }
            start += written
            wrote()
        }
        return .all
    }

    /// Takes up to about `limit` bytes from the session (after everything before went out);
    /// false when nghttp2 failed.
    mutating func refill(from session: OpaquePointer, limit: Int) -> Bool {
        bytes.removeAll(keepingCapacity: true)
        start = 0
        while bytes.count < limit {
            var chunk: UnsafePointer<UInt8>?
            let length = nghttp2_session_mem_send(session, &chunk)
            guard length >= 0 else { return false }
            guard length > 0, let chunk else { break }
            bytes.append(contentsOf: UnsafeBufferPointer(start: chunk, count: length))
        }
        return true
    }

    /// Adds bytes to write after what waits (an HTTP/1.1 request, which has no session).
    mutating func append(_ more: [UInt8]) {
        if start == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            start = 0
        }
        bytes.append(contentsOf: more)
    }

    /// Drops everything, memory included (a closed connection).
    mutating func discard() {
        bytes = []
        start = 0
    }
}
