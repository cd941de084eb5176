internal import CNGHTTP2

#if canImport(Glibc)
import Glibc
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

/// The one way both sides of HTTP/2 move bytes: a connected socket, plain or through TLS,
/// its handshake, reads within a budget, and the session's output written as the socket
/// takes it (partial writes kept for the next readiness, write interest in epoll only while
/// output waits). Owns the socket's SSL; the connection that owns it lives on one loop
/// thread, and so does this.
final class Transport {
    let descriptor: Int32
    /// The connection's SSL, or nil for plaintext.
    private let tls: OpaquePointer?
    private unowned let poller: Poller
    private var output = PendingOutput()
    private var watchingWrites = false
    /// The TLS handshake is done (always, for plaintext): the socket carries HTTP/2.
    private(set) var secured: Bool

    /// What a transport watches when it has nothing to write.
    static let readEvents = EPOLLIN.rawValue | EPOLLRDHUP.rawValue

    /// Takes `tls` (freed with the transport). The socket must be watched for `readEvents`.
    init(descriptor: Int32, tls: OpaquePointer?, poller: Poller) {
        self.descriptor = descriptor
        self.tls = tls
        self.poller = poller
        secured = tls == nil
    }

    deinit {
        if let tls { SSL_free(tls) }
    }

    /// Output the socket has not taken yet.
    var hasOutput: Bool { !output.isEmpty }

    // MARK: - Handshake

    enum Handshake {
        case done
        /// Waiting for the socket; the loop calls again when it is ready.
        case waiting
        /// The peer or the certificate check ended it: the verify result and OpenSSL's last
        /// error, read before the error queue was emptied.
        case failed(verifyResult: Int, lastError: UInt)
    }

    /// Takes the TLS handshake one step on.
    func continueHandshake() -> Handshake {
        guard let tls, !secured else { return .done }
        // OpenSSL's error queue is per thread and shared by every connection on this loop:
        // empty it before each call, so SSL_get_error judges this connection alone.
        ERR_clear_error()
        let rc = SSL_do_handshake(tls)
        if rc == 1 {
            secured = true
            return .done
        }
        switch SSL_get_error(tls, rc) {
        case SSL_ERROR_WANT_READ:
            watchWrites(false)
            return .waiting
        case SSL_ERROR_WANT_WRITE:
            watchWrites(true)
            return .waiting
        default:
            let failure = Handshake.failed(verifyResult: Int(SSL_get_verify_result(tls)), lastError: ERR_peek_last_error())
            ERR_clear_error()
            return failure
        }
    }

    /// The protocol ALPN chose, or nil when the server chose none.
    var negotiatedProtocol: String? {
        guard let tls else { return nil }
        var selected: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(tls, &selected, &length)
        return selected.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self) }
    }

    // MARK: - Reading

    /// Reads into `buffer` chunk by chunk, each chunk handed to the session, within `budget`
    /// bytes, so one busy connection cannot keep the others on its loop thread waiting.
    /// - Parameters:
    ///   - isClosed: true once the connection closed (a chunk's callbacks may close it).
    ///   - take: gets each chunk's byte count (the bytes are at the start of `buffer`);
    ///     false when the session refused them.
    func read(into buffer: UnsafeMutableRawBufferPointer, budget: Int, isClosed: () -> Bool, take: (Int) -> Bool) -> ReadEnd {
        var budget = budget
        while !isClosed() {
            guard budget > 0 else { return .budgetSpent }
            let wanted = min(buffer.count, budget)
            let count: Int
            if let tls {
                ERR_clear_error()
                let rc = SSL_read(tls, buffer.baseAddress, Int32(wanted))
                if rc > 0 {
                    count = Int(rc)
                } else {
                    let error = SSL_get_error(tls, rc)
                    if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .drained }
                    return Self.readEnd(tlsError: error, systemError: errno)
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

    /// How a TLS read that returned nothing ended: a close (TLS's close_notify, or the peer
    /// gone between records) is `.closed`; a failure of TLS itself or of the socket says its
    /// own words, so a broken record is not reported as the peer having closed.
    static func readEnd(tlsError: Int32, systemError: Int32) -> ReadEnd {
        defer { ERR_clear_error() }
        switch tlsError {
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        case SSL_ERROR_SYSCALL:
            return systemError == 0 ? .closed : .failed("reading failed: \(String(cString: strerror(systemError)))")
        default:
            let code = ERR_peek_last_error()
            // OpenSSL 3 calls a peer that closed without close_notify an error; it is a close.
            if code == 0 || ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING { return .closed }
            let words = ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)"
            return .failed("TLS failed: \(words)")
        }
    }

    // MARK: - Writing

    enum Flushed {
        /// Everything the session had went out.
        case done
        /// The socket is full: the rest goes when it is writable.
        case blocked
        /// The socket broke.
        case writeFailed
        /// nghttp2 failed to produce output.
        case sessionFailed
    }

    /// Writes what waits, then what `session` has, taken `batch` bytes at a time (the most
    /// kept waiting for a slow reader: past it the session's own queue holds the rest);
    /// `wrote` is called after each write that took bytes.
    func flush(_ session: OpaquePointer, batch: Int, wrote: () -> Void = {}) -> Flushed {
        while true {
            switch output.write(to: descriptor, tls: tls, wrote: wrote) {
            case .failed: return .writeFailed
            case .blocked:
                watchWrites(true)
                return .blocked
            case .all: break
            }
            guard output.refill(from: session, limit: batch) else { return .sessionFailed }
            if output.isEmpty { break }
        }
        watchWrites(false)
        return .done
    }

    /// Writes `bytes` after what waits, as the socket takes them (HTTP/1.1, which has no
    /// session to draw from); what it does not take now goes when it is writable.
    func send(_ bytes: [UInt8]) -> Flushed {
        output.append(bytes)
        return flushOutput()
    }

    /// Writes what waits, with no session behind it.
    func flushOutput() -> Flushed {
        switch output.write(to: descriptor, tls: tls) {
        case .failed: return .writeFailed
        case .blocked:
            watchWrites(true)
            return .blocked
        case .all:
            watchWrites(false)
            return .done
        }
    }

    private func watchWrites(_ on: Bool) {
        guard on != watchingWrites else { return }
        watchingWrites = on
        poller.watch(descriptor, events: Self.readEvents | (on ? EPOLLOUT.rawValue : 0))
    }

    // MARK: - Closing

    /// Ends TLS (best effort) and closes the socket; the loop must have forgotten it first.
    func close() {
        if let tls, secured {
            // A shutdown that fails (the peer is gone) leaves errors on this thread's queue;
            // they are this connection's, and must not be read as the next one's.
            ERR_clear_error()
            SSL_shutdown(tls)
            ERR_clear_error()
        }
        Glibc.close(descriptor)
        output.discard()
    }
}
