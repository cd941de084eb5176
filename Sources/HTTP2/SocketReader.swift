internal import CNGHTTP2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a round of reading a connection's socket ended.
enum ReadEnd: Equatable {
    /// The socket has nothing more for now: wait for the loop to say it is readable.
    case drained
    /// The round's budget is spent with input perhaps left: serve the connection again soon.
    case budgetSpent
    /// The peer closed its side (or ended TLS).
    case closed
    /// Reading failed: the system's words.
    case failed(String)
    /// The session refused what was read (`take` returned false): the caller has acted.
    case refused
}

/// The one read loop of both sides of HTTP/2: a connection's socket, plain or through TLS,
/// read into the loop's scratch buffer chunk by chunk, each chunk handed to the session,
/// within a budget per round, so one busy connection cannot keep the others on its loop
/// thread waiting.
enum SocketReader {
    /// - Parameters:
    ///   - tls: the connection's SSL, or nil for plaintext.
    ///   - budget: bytes this round may read at most.
    ///   - isClosed: true once the connection closed (a chunk's callbacks may close it).
    ///   - take: gets each chunk's byte count (the bytes are at the start of `buffer`);
    ///     false when the session refused them.
    static func read(
        _ descriptor: Int32, tls: OpaquePointer?, into buffer: UnsafeMutableRawBufferPointer, budget: Int,
        isClosed: () -> Bool, take: (Int) -> Bool
    ) -> ReadEnd {
        var budget = budget
        while !isClosed() {
            guard budget > 0 else { return .budgetSpent }
            let wanted = min(buffer.count, budget)
            let count: Int
            if let tls {
                // OpenSSL's error queue is per thread and shared by every connection on this
                // loop: empty it before each call, so SSL_get_error judges this one alone.
                ERR_clear_error()
                let rc = SSL_read(tls, buffer.baseAddress, Int32(wanted))
                if rc > 0 {
                    count = Int(rc)
                } else {
                    let error = SSL_get_error(tls, rc)
                    if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .drained }
                    ERR_clear_error()
                    return .closed
                }
            } else {
                let rc = Glibc.read(descriptor, buffer.baseAddress, wanted)
                if rc > 0 {
                    count = rc
                } else if rc < 0, errno == EINTR {
                    continue
                } else if rc < 0, errno == EAGAIN {
                    return .drained
                } else {
                    return rc == 0 ? .closed : .failed(String(cString: strerror(errno)))
                }
            }
            budget -= count
            guard take(count) else { return .refused }
            // Less than asked means the socket is drained for now; with TLS, a record may
            // still sit decrypted inside OpenSSL, so keep reading until it says so.
            if tls == nil, count < wanted { return .drained }
        }
        return .drained
    }
}
