#if canImport(Glibc)
import Glibc
#endif
internal import CNGHTTP2

/// One client connection: the socket, TLS when the server has it, and the nghttp2 server
/// session. Lives on its event loop's thread only.
final class Connection {
    private let descriptor: Int32
    private let number: Int
    private unowned let loop: EventLoop
    private var tls: OpaquePointer?
    private var session: OpaquePointer?
    private var handshaking: Bool
    private var closed = false
    private var streams: [Int32: RequestStream] = [:]
    /// Bytes from the session that the socket has not taken yet.
    private var output: [UInt8] = []
    private var outputStart = 0
    private var watchingWrites = false
    private var lastReceived: UInt64
    private let acceptedAt: UInt64
    /// Scratch for the response headers being submitted.
    private var fieldBytes: [UInt8] = []
    private var fieldSpans: [(name: Int, value: Int, end: Int)] = []

    /// Output gathered from the session before one write, and the most kept waiting for a
    /// slow reader: past it the session's own queue holds the rest, bounded by the streams.
    private static let outputBatch = 64 * 1_024

    init?(descriptor: Int32, number: Int, loop: EventLoop) {
        self.descriptor = descriptor
        self.number = number
        self.loop = loop
        acceptedAt = EventLoop.now()
        lastReceived = acceptedAt
        if let context = loop.shared.tls {
            guard let tls = SSL_new(context.context) else { return nil }
            self.tls = tls
            SSL_set_fd(tls, descriptor)
            SSL_set_accept_state(tls)
            handshaking = true
        } else {
            handshaking = false
        }
    }

    deinit {
        if let tls { SSL_free(tls) }
        if let session { nghttp2_session_del(session) }
    }

    func start() {
        if handshaking {
            continueHandshake()
        } else {
            openSession()
        }
    }

    func handle(events: UInt32) {
        guard !closed else { return }
        if handshaking {
            continueHandshake()
            return
        }
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            receive()
        }
        if !closed { send() }
    }

    /// Tells the client no new streams will be taken; the connection closes once the streams
    /// it already opened are answered.
    func goAway() {
        guard !closed else { return }
        guard let session, !handshaking else { return close() }
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue),
                              nghttp2_session_get_last_proc_stream_id(session), NGHTTP2_NO_ERROR.rawValue, nil, 0)
        send()
    }

    func closeIfTimedOut(now: UInt64) {
        let limits = loop.shared.limits
        if handshaking {
            let limit = min(limits.handshakeTimeout, limits.idleTimeout)
            if now &- acceptedAt > limit.nanosecondCount { close() }
        } else if now &- lastReceived > limits.idleTimeout.nanosecondCount {
            close()
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        if let tls, !handshaking { SSL_shutdown(tls) }
        loop.forget(descriptor)
        Glibc.close(descriptor)
        loop.shared.openConnections.subtract(1, ordering: .relaxed)
        streams.removeAll()
    }

    // MARK: - TLS

    private func continueHandshake() {
        guard let tls else { return }
        let rc = SSL_do_handshake(tls)
        if rc == 1 {
            handshaking = false
            openSession()
            return
        }
        switch SSL_get_error(tls, rc) {
        case SSL_ERROR_WANT_READ:
            watchWrites(false)
        case SSL_ERROR_WANT_WRITE:
            watchWrites(true)
        default:
            // A client that does not finish a handshake (a plain-HTTP probe, an untrusting
            // client) costs only its own connection.
            ERR_clear_error()
            close()
        }
    }

    // MARK: - HTTP/2 session

    private func openSession() {
        var created: OpaquePointer?
        var options: OpaquePointer?
        nghttp2_option_new(&options)
        defer { nghttp2_option_del(options) }
        // HPACK's dynamic table and the header list stay small: a request is a few headers.
        nghttp2_option_set_max_deflate_dynamic_table_size(options, 4_096)
        // libcurl 7.88 resets every stream once its answer is in, so nghttp2's default
        // allowance (1000, then 33 a second, against "rapid reset" floods) would send a busy
        // curl client GOAWAY within seconds. A reset costs this server almost nothing (a
        // request is handled only once its stream has ended), so the allowance is one
        // that no well-behaved client reaches and a flood still does.
        nghttp2_option_set_stream_reset_rate_limit(options, 100_000, 50_000)
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new2(&created, loop.callbacks, user, options) == 0, let created else {
            return close()
        }
        session = created
        let limits = loop.shared.limits
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                   value: UInt32(limits.concurrentStreams)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                                   value: UInt32(limits.headerBytes)),
        ]
        guard nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0 else {
            return close()
        }
        send()
    }

    private func receive() {
        guard let session else { return }
        let buffer = loop.scratch
        while !closed {
            let count: Int
            if let tls {
                let rc = SSL_read(tls, buffer.baseAddress, Int32(buffer.count))
                if rc > 0 {
                    count = Int(rc)
                } else {
                    let error = SSL_get_error(tls, rc)
                    if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return }
                    ERR_clear_error()
                    return finishAfterPeerClosed()
                }
            } else {
                let rc = read(descriptor, buffer.baseAddress, buffer.count)
                if rc > 0 {
                    count = rc
                } else if rc < 0, errno == EAGAIN || errno == EINTR {
                    if errno == EINTR { continue }
                    return
                } else {
                    return finishAfterPeerClosed()
                }
            }
            lastReceived = EventLoop.now()
            let taken = nghttp2_session_mem_recv(session, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), count)
            guard taken >= 0 else {
                // Not HTTP/2 at all (a bad preface) or a fatal protocol error: nghttp2 has
                // queued a GOAWAY when there is one to send; send it and go.
                send()
                return close()
            }
            // Less than a full buffer means the socket is drained for now; with TLS, a
            // record may still sit decrypted inside OpenSSL, so keep reading until it says so.
            if tls == nil, count < buffer.count { return }
        }
    }

    /// The client closed its side: answer what it already asked, then close.
    private func finishAfterPeerClosed() {
        send()
        close()
    }

    private func send() {
        guard let session, !closed else { return }
        while true {
            if outputStart < output.count {
                guard writeOutput() else { return }
            }
            output.removeAll(keepingCapacity: true)
            outputStart = 0
            while output.count < Self.outputBatch {
                var chunk: UnsafePointer<UInt8>?
                let length = nghttp2_session_mem_send(session, &chunk)
                guard length >= 0 else { return close() }
                guard length > 0, let chunk else { break }
                output.append(contentsOf: UnsafeBufferPointer(start: chunk, count: length))
            }
            if output.isEmpty { break }
        }
        watchWrites(false)
        if nghttp2_session_want_read(session) == 0, nghttp2_session_want_write(session) == 0 {
            close()
        }
    }

    /// Writes pending output; false when the socket is full (now watched) or failed.
    private func writeOutput() -> Bool {
        while outputStart < output.count {
            let remaining = output.count - outputStart
            let written: Int = output.withUnsafeBytes { bytes in
                let start = bytes.baseAddress! + outputStart
                if let tls {
                    let rc = SSL_write(tls, start, Int32(min(remaining, Int(Int32.max))))
                    if rc > 0 { return Int(rc) }
                    let error = SSL_get_error(tls, rc)
                    ERR_clear_error()
                    return error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ ? 0 : -1
                }
                let rc = Glibc.send(descriptor, start, remaining, Int32(MSG_NOSIGNAL))
                if rc >= 0 { return rc }
                return errno == EAGAIN || errno == EINTR ? 0 : -1
            }
            if written < 0 {
                close()
                return false
            }
            if written == 0 {
                watchWrites(true)
                return false
            }
            outputStart += written
        }
        return true
    }

    private func watchWrites(_ on: Bool) {
        guard on != watchingWrites, !closed else { return }
        watchingWrites = on
        loop.watch(descriptor, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (on ? EPOLLOUT.rawValue : 0))
    }

    // MARK: - Requests

    fileprivate func beginRequest(_ stream: Int32) {
        streams[stream] = RequestStream()
    }

    fileprivate func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard let request = streams[stream] else { return }
        // RFC 9113's accounting: name, value and 32 bytes of overhead per field.
        request.headerBytes += name.count + value.count + 32
        guard request.headerBytes <= loop.shared.limits.headerBytes else {
            request.headersTooLarge = true
            return
        }
        let nameText = String(decoding: name, as: UTF8.self)
        let valueText = String(decoding: value, as: UTF8.self)
        if name.first == UInt8(ascii: ":") {
            switch nameText {
            case ":method": request.method = valueText
            case ":path": request.path = valueText
            default: break
            }
        } else {
            request.headers.append((nameText, valueText))
        }
    }

    fileprivate func body(_ stream: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard let request = streams[stream] else { return }
        request.bodyLength += bytes.count
        let room = loop.shared.limits.bodyBytes - request.body.count
        if room > 0 { request.body.append(contentsOf: bytes.prefix(room)) }
    }

    fileprivate func endRequest(_ stream: Int32) {
        guard let request = streams[stream], let session, !request.answered else { return }
        request.answered = true
        let response: HTTP2Server.Response
        if request.headersTooLarge {
            response = HTTP2Server.Response(status: 431)
        } else {
            response = loop.shared.handler(HTTP2Server.Request(
                method: request.method, path: request.path, headers: request.headers,
                body: request.body, bodyLength: request.bodyLength, connection: number, stream: stream))
        }
        request.headers = []
        request.body = []
        request.response = response.body
        submit(response, on: stream, session: session)
    }

    fileprivate func endStream(_ stream: Int32) {
        streams[stream] = nil
    }

    fileprivate func responseBody(_ stream: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int) -> (count: Int, last: Bool) {
        guard let request = streams[stream] else { return (0, true) }
        let count = min(length, request.response.count - request.responseSent)
        request.response.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + request.responseSent, byteCount: count)
        }
        request.responseSent += count
        return (count, request.responseSent == request.response.count)
    }

    private func submit(_ response: HTTP2Server.Response, on stream: Int32, session: OpaquePointer) {
        // Every name and value in one buffer kept by the connection, the nghttp2_nv entries
        // pointing into it; nghttp2 copies them on submit, so the buffer is reused.
        fieldBytes.removeAll(keepingCapacity: true)
        fieldSpans.removeAll(keepingCapacity: true)
        func add(_ name: String, _ value: String) {
            let nameStart = fieldBytes.count
            fieldBytes.append(contentsOf: name.utf8)
            let valueStart = fieldBytes.count
            fieldBytes.append(contentsOf: value.utf8)
            fieldSpans.append((nameStart, valueStart, fieldBytes.count))
        }
        add(":status", String(response.status))
        for field in response.headers { add(field.name, field.value) }
        if !response.body.isEmpty { add("content-length", String(response.body.count)) }
        let spans = fieldSpans
        fieldBytes.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var entries = spans.map { span in
                nghttp2_nv(name: base + span.name, value: base + span.value,
                           namelen: span.value - span.name, valuelen: span.end - span.value,
                           flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            if response.body.isEmpty {
                _ = nghttp2_submit_response(session, stream, &entries, entries.count, nil)
            } else {
                var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: { session, stream, buffer, length, flags, _, user in
                    let connection = Unmanaged<Connection>.fromOpaque(user!).takeUnretainedValue()
                    let (count, last) = connection.responseBody(stream, into: buffer!, length: length)
                    if last { flags!.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
                    return count
                })
                _ = nghttp2_submit_response(session, stream, &entries, entries.count, &provider)
            }
        }
    }

    // MARK: - Callbacks

    /// The session callbacks, made once per loop; each finds its connection in `user_data`.
    static func makeCallbacks() -> OpaquePointer {
        var made: OpaquePointer?
        nghttp2_session_callbacks_new(&made)
        let callbacks = made!
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
                  frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
            Unmanaged<Connection>.fromOpaque(user!).takeUnretainedValue().beginRequest(frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            Unmanaged<Connection>.fromOpaque(user!).takeUnretainedValue().header(
                frame.pointee.hd.stream_id,
                name: UnsafeBufferPointer(start: name, count: nameLength),
                value: UnsafeBufferPointer(start: value, count: valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, data, length, user in
            Unmanaged<Connection>.fromOpaque(user!).takeUnretainedValue().body(stream, UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            let type = frame.pointee.hd.type
            guard type == UInt8(NGHTTP2_HEADERS.rawValue) || type == UInt8(NGHTTP2_DATA.rawValue),
                  frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0 else { return 0 }
            Unmanaged<Connection>.fromOpaque(user!).takeUnretainedValue().endRequest(frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, _, user in
            Unmanaged<Connection>.fromOpaque(user!).takeUnretainedValue().endStream(stream)
            return 0
        }
        return callbacks
    }
}

/// A request stream being read, then answered.
private final class RequestStream {
    var method = ""
    var path = ""
    var headers: [(name: String, value: String)] = []
    var headerBytes = 0
    var headersTooLarge = false
    var body: [UInt8] = []
    var bodyLength = 0
    var answered = false
    var response: [UInt8] = []
    var responseSent = 0
}
