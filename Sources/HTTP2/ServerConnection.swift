internal import CNGHTTP2
import MonotonicTime

#if canImport(Glibc)
import Glibc
#endif

/// One client connection on the server: its transport (the socket, TLS when the server has
/// it) and the nghttp2 server session. Lives on its event loop's thread only.
///
/// Every request stream the client opens ends in exactly one call of the server's handler:
/// when the request ended (its answer is sent), or when the stream was reset or the
/// connection closed before that (`Request.ending` says why; nothing is sent).
final class ServerConnection: LoopConnection {
    let number: Int
    private unowned let side: ServerSide
    /// The server's state, held directly: every header and body chunk consults its limits
    /// and byte count, and each reach through the unowned `side` cost a checked retain.
    private let shared: ServerSide.Shared
    private let transport: Transport
    private var session: OpaquePointer?
    private(set) var closed = false
    private var streams: [Int32: RequestStream] = [:]
    /// The stream whose header block is being decoded: headers come many per frame, so the
    /// stream is looked up once per block, not once per header (an HPACK bomb sends many).
    private var decoding: (id: Int32, stream: RequestStream)?
    /// The highest request stream the client opened that the server began to read: a newer
    /// one refused by nghttp2 before any header was read still gets its one report.
    private var highestStream: Int32 = 0
    let acceptedAt: MonotonicClock.Instant
    /// Since when no request stream has been open (PINGs and SETTINGS do not count).
    private(set) var idleSince: MonotonicClock.Instant
    /// When the socket last took output, while output waits: a client that never reads.
    private var lastWritten: MonotonicClock.Instant
    /// Request bytes (headers and kept body) held for unfinished streams.
    private var heldBytes = 0
    /// Resets of unanswered streams the client may still send.
    private var resets: ResetBudget
    /// GOAWAY has been queued: no new streams, close once the open ones are answered.
    private var goingAway = false
    /// When the input being decoded was read: a request's progress is timed by it.
    private var receivedAt: MonotonicClock.Instant
    /// A first frame has come from the client (its preface was good): the connection is
    /// HTTP/2. Before that it is the first to go at the connection cap, and it has the
    /// handshake's time, not the idle time, to get there.
    private(set) var speaksHTTP2 = false

    /// Output gathered from the session before one write, and the most kept waiting for a
    /// slow reader: past it the session's own queue holds the rest, bounded by the streams.
    private static let outputBatch = 64 * 1_024

    init?(descriptor: Int32, number: Int, side: ServerSide) {
        self.number = number
        self.side = side
        shared = side.shared
        acceptedAt = ServerSide.now()
        idleSince = acceptedAt
        lastWritten = acceptedAt
        resets = ResetBudget(burst: shared.limits.resetBurst, perSecond: shared.limits.resetsPerSecond, now: acceptedAt)
        receivedAt = acceptedAt
        var tls: OpaquePointer?
        if let context = shared.tls {
            guard let made = context.connection(on: descriptor) else { return nil }
            tls = made
        }
        transport = Transport(descriptor: descriptor, tls: tls, poller: side.loop.poller)
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    /// The TLS handshake is under way.
    private var handshaking: Bool { !transport.secured }

    /// No request open: what the loop may evict to admit a new connection at the cap.
    var isIdle: Bool { !closed && streams.isEmpty }

    /// Not (yet) HTTP/2: a TLS handshake under way, or no client preface yet. Such a
    /// connection has done no work and costs a descriptor: it goes before any that has.
    var isPending: Bool { !closed && !speaksHTTP2 }

    fileprivate func frameReceived() {
        speaksHTTP2 = true
    }

    func start() {
        if handshaking {
            continueHandshake()
        } else {
            openSession()
        }
    }

    @discardableResult
    func handle(events: UInt32) -> Bool {
        guard !closed else { return false }
        if handshaking {
            continueHandshake()
            return false
        }
        var more = false
        if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            more = receive()
        }
        if !closed { send() }
        return more && !closed
    }

    /// Tells the client no new streams will be taken; the connection closes once the streams
    /// it already opened are answered.
    func goAway(_ code: nghttp2_error_code = NGHTTP2_NO_ERROR) {
        guard !closed else { return }
        guard session != nil, !handshaking else { return close() }
        submitGoAway(code)
        send()
        if !closed, streams.isEmpty { flushAndClose() }
    }

    /// GOAWAY, then close now, whatever is open (an idle connection, an evicted one).
    func goAwayAndClose(_ code: nghttp2_error_code = NGHTTP2_NO_ERROR) {
        guard !closed else { return }
        if !handshaking { submitGoAway(code) }
        flushAndClose()
    }

    /// Queues GOAWAY once, naming the last stream this connection processed.
    private func submitGoAway(_ code: nghttp2_error_code) {
        guard let session, !goingAway else { return }
        goingAway = true
        nghttp2_submit_goaway(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue),
            nghttp2_session_get_last_proc_stream_id(session), code.rawValue, nil, 0)
    }

    func closeIfTimedOut(now: MonotonicClock.Instant) {
        let timeouts = shared.timeouts
        let stage: ConnectionTimeouts.Stage =
            handshaking || !speaksHTTP2
            ? .handshaking(acceptedAt: acceptedAt)
            : .open(idleSince: streams.isEmpty ? idleSince : nil, outputWaitingSince: transport.hasOutput ? lastWritten : nil)
        switch timeouts.verdict(stage, now: now) {
        case .keep:
            break
        case .close:
            close()
        case .goAwayAndClose:
            goAwayAndClose()
        case let .cancelStalledRequests(progressBefore):
            let stalled = streams.filter { !$0.value.ended && !$0.value.reported && $0.value.lastProgress < progressBefore }
            for (id, _) in stalled {
                refuse(id, code: NGHTTP2_CANCEL, reason: "the request made no progress for \(timeouts.stalledRequest)")
            }
            if !stalled.isEmpty { send() }
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        side.loop.forget(transport.descriptor)
        transport.close()
        shared.openConnections.subtract(1, ordering: .relaxed)
        let open = streams.sorted { $0.key < $1.key }
        streams.removeAll()
        decoding = nil
        for (id, request) in open where !request.reported {
            report(request, id: id, ending: .reset(request.refusedBecause ?? "the connection closed before the request ended"))
        }
        releaseHeld(heldBytes)
        shared.connectionEnded?(number)
    }

    private func flushAndClose() {
        send()
        close()
    }

    // MARK: - TLS

    private func continueHandshake() {
        switch transport.continueHandshake() {
        case .done: openSession()
        case .waiting: break
        case .failed:
            // A client that does not finish a handshake (a plain-HTTP probe, an untrusting
            // client) costs only its own connection.
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
        // nghttp2's own reset limit also counts resets of streams already answered, which
        // some clients send after every answer; this connection counts only resets of
        // unanswered streams (`resetAllowance`), the ones that cost the server work.
        nghttp2_option_set_stream_reset_rate_limit(options, 1_000_000, 1_000_000)
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new2(&created, side.callbacks, user, options) == 0, let created else {
            return close()
        }
        session = created
        let limits = shared.limits
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: UInt32(limits.concurrentStreams)),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: UInt32(limits.headerBytes))
        ]
        guard nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0 else {
            return close()
        }
        send()
    }

    /// Reads at most the loop's budget per call, so one flooding client cannot keep the
    /// others on this thread waiting; true when more input may be waiting.
    private func receive() -> Bool {
        guard let session else { return false }
        let buffer = side.loop.scratch
        let end = transport.receive(
            into: session, buffer: buffer, budget: shared.limits.readBudget, isClosed: { closed },
            // One clock read for everything these bytes hold: the session calls back per
            // header, and every one of those callbacks uses this time.
            arrived: { receivedAt = ServerSide.now() },
            // Not HTTP/2 at all (a bad preface), a fatal protocol error, or a limit this
            // connection crossed: nghttp2 has queued a GOAWAY when there is one to send.
            refused: { _ in flushAndClose() })
        switch end {
        case .budgetSpent: return true
        case .closed, .failed: finishAfterPeerClosed()
        case .drained, .refused: break
        }
        return false
    }

    /// The client closed its side: answer what it already asked, then close.
    private func finishAfterPeerClosed() {
        flushAndClose()
    }

    func send() {
        guard let session, !closed else { return }
        switch transport.flush(session: session, batch: Self.outputBatch, wrote: { lastWritten = ServerSide.now() }) {
        case .writeFailed, .sessionFailed, .finished: close()
        case .blocked: break
        case .open: if goingAway, streams.isEmpty { close() }
        }
    }

    // MARK: - Requests

    fileprivate func beginRequest(_ stream: Int32) {
        highestStream = max(highestStream, stream)
        let request = RequestStream(now: receivedAt)
        streams[stream] = request
        decoding = (stream, request)
    }

    /// Keeps `count` more bytes for `request`, or refuses the stream when this connection
    /// or the whole server holds its limit already; false when refused.
    private func hold(_ count: Int, for request: RequestStream, id: Int32) -> Bool {
        let limits = shared.limits
        let total = shared.heldBytes.add(count, ordering: .relaxed).newValue
        guard heldBytes + count <= limits.connectionBufferBytes, total <= limits.bufferBytes else {
            shared.heldBytes.subtract(count, ordering: .relaxed)
            let whose = heldBytes + count > limits.connectionBufferBytes ? "this connection's" : "the server's"
            refuse(
                id, code: NGHTTP2_REFUSED_STREAM,
                reason: "\(whose) unfinished requests hold their limit of bytes (\(whose == "this connection's" ? limits.connectionBufferBytes : limits.bufferBytes)); retry")
            return false
        }
        heldBytes += count
        request.held += count
        return true
    }

    private func releaseHeld(_ count: Int) {
        guard count > 0 else { return }
        heldBytes -= count
        shared.heldBytes.subtract(count, ordering: .relaxed)
    }

    /// Returns false to stop the session: the header block is an attack, not a request.
    fileprivate func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Bool {
        let request: RequestStream
        if let decoding, decoding.id == stream {
            request = decoding.stream
        } else if let found = streams[stream] {
            request = found
        } else {
            return true
        }
        guard !request.reported else { return true }
        // RFC 9113's accounting: name, value and 32 bytes of overhead per field.
        let size = name.count + value.count + 32
        request.headerBytes += size
        let limit = shared.limits.headerBytes
        guard request.headerBytes <= limit else {
            request.headersTooLarge = true
            // Far past the limit this is a decompression bomb (a small frame naming a large
            // table entry thousands of times): decoding the rest costs the server, not the
            // client, so the connection ends here.
            return request.headerBytes <= limit * 4
        }
        // What is kept is the name and value; the 32 bytes above are the limit's own measure.
        guard hold(name.count + value.count, for: request, id: stream) else { return true }
        request.lastProgress = receivedAt
        // Strings only for what the handler gets: pseudo-headers are told apart by their
        // bytes, and those it does not get (:scheme, :authority) never become text.
        if name.first == UInt8(ascii: ":") {
            if Self.is(name, ":method") {
                request.method = String(decoding: value, as: UTF8.self)
            } else if Self.is(name, ":path") {
                request.path = String(decoding: value, as: UTF8.self)
            }
        } else {
            // Room for a usual request's fields at once, rather than growing 1, 2, 4, 8.
            if request.headers.capacity == 0 { request.headers.reserveCapacity(8) }
            request.headers.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return true
    }

    private static func `is`(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        bytes.count == name.utf8CodeUnitCount && memcmp(bytes.baseAddress!, name.utf8Start, bytes.count) == 0
    }

    fileprivate func body(_ stream: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard let request = streams[stream], !request.reported else { return }
        request.bodyLength += bytes.count
        request.lastProgress = receivedAt
        let room = shared.limits.bodyBytes - request.body.count
        guard room > 0 else { return }
        let kept = bytes.prefix(room)
        guard hold(kept.count, for: request, id: stream) else { return }
        request.body.append(contentsOf: kept)
    }

    fileprivate func endRequest(_ stream: Int32) {
        decoding = nil
        guard let request = streams[stream], let session, !request.reported else { return }
        request.ended = true
        let response = report(request, id: stream, ending: request.headersTooLarge ? .headersTooLarge : .complete) ?? HTTP2Server.Response(status: 500)
        request.headers = []
        request.body = []
        releaseHeld(request.held)
        request.held = 0
        request.response = response.body
        submit(response, on: stream, session: session)
    }

    /// The one call of the handler for a stream.
    @discardableResult
    private func report(_ request: RequestStream, id: Int32, ending: HTTP2Server.Request.Ending) -> HTTP2Server.Response? {
        request.reported = true
        return shared.handler(
            HTTP2Server.Request(
                method: request.method, path: request.path, headers: request.headers,
                body: request.body, bodyLength: request.bodyLength, connection: number, stream: id, ending: ending))
    }

    /// Resets a stream the server will not finish, and reports it.
    private func refuse(_ stream: Int32, code: nghttp2_error_code, reason: String) {
        guard let session, let request = streams[stream], !request.reported else { return }
        report(request, id: stream, ending: .reset(reason))
        request.headers = []
        request.body = []
        releaseHeld(request.held)
        request.held = 0
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, code.rawValue)
    }

    /// nghttp2 reset a stream for breaking HTTP/2's rules (a header field it must refuse, a
    /// stream past the concurrency limit): a reset the server makes, that the client asked
    /// for with a bad request. It draws on the connection's reset budget like a reset the
    /// client sends, so a flood of them is sent away too (CVE-2019-9514).
    fileprivate func streamResetByLibrary(_ stream: Int32, error: Int32, opensStream: Bool) {
        shared.counters.serverResets.add(1, ordering: .relaxed)
        let reason = "the request broke HTTP/2's rules (\(String(cString: nghttp2_strerror(error))))"
        if let request = streams[stream] {
            if !request.reported, request.refusedBecause == nil { request.refusedBecause = reason }
        } else if opensStream, stream > highestStream {
            // Refused before a header was read (more streams than SETTINGS allow): the stream
            // was still the client's request, and it gets its report now.
            highestStream = stream
            report(RequestStream(now: receivedAt), id: stream, ending: .reset(reason))
        }
        spendAllowance()
    }

    fileprivate func resetReceived(_ stream: Int32) {
        // A reset of a stream still open here: unanswered, or its answer not yet sent. (Some
        // clients reset every stream once its whole answer is in; those are closed already.)
        guard let request = streams[stream] else { return }
        request.resetByClient = true
        spendAllowance()
    }

    /// An empty DATA frame that does not end its stream: it carries nothing and costs a
    /// read, a callback and a wake-up (CVE-2019-9518, the "empty frames flood"). It draws on
    /// the same budget as a reset, so a peer that sends them by the thousand is sent away.
    fileprivate func emptyDataReceived() {
        spendAllowance()
    }

    /// Past the reset budget, GOAWAY ENHANCE_YOUR_CALM.
    private func spendAllowance() {
        if !resets.spend(now: ServerSide.now()), let session, !goingAway {
            goingAway = true
            shared.counters.calmed.add(1, ordering: .relaxed)
            nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
        }
    }

    fileprivate func endStream(_ stream: Int32, code: UInt32) {
        if decoding?.id == stream { decoding = nil }
        guard let request = streams.removeValue(forKey: stream) else { return }
        if streams.isEmpty { idleSince = ServerSide.now() }
        releaseHeld(request.held)
        request.held = 0
        guard !request.reported else { return }
        let reason: String
        if let refusedBecause = request.refusedBecause {
            reason = refusedBecause
        } else if request.resetByClient {
            reason = "the client reset the stream before the request ended"
        } else {
            reason = "the stream broke HTTP/2's rules (\(String(cString: nghttp2_http2_strerror(code))))"
        }
        report(request, id: stream, ending: .reset(reason))
    }

    fileprivate func responseBody(_ stream: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int, flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard let request = streams[stream] else {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            return 0
        }
        return OutgoingBody.copy(request.response, sent: &request.responseSent, into: buffer, length: length, flags: flags)
    }

    /// Scratch for the response headers being submitted, kept by the connection so that
    /// its buffers are reused for every answer.
    private var responseFields = HeaderFields()

    private func submit(_ response: HTTP2Server.Response, on stream: Int32, session: OpaquePointer) {
        // Worked on as a local, swapped out and back: the connection's stored properties
        // are checked for exclusive access at run time on every use.
        var fields = HeaderFields()
        swap(&fields, &responseFields)
        defer { swap(&fields, &responseFields) }
        fields.start()
        fields.add(":status", String(response.status))
        for (index, field) in response.headers.enumerated() {
            fields.add(field.name, field.value, indexed: index >= response.unindexedHeaders)
        }
        if !response.body.isEmpty { fields.add("content-length", String(response.body.count)) }
        fields.withEntries { entries, count in
            if response.body.isEmpty {
                _ = nghttp2_submit_response(session, stream, entries, count, nil)
            } else {
                var provider = nghttp2_data_provider(
                    source: nghttp2_data_source(ptr: nil),
                    read_callback: { session, stream, buffer, length, flags, _, user in
                        Unmanaged<ServerConnection>.fromOpaque(user!).takeUnretainedValue().responseBody(
                            stream, into: buffer!, length: length, flags: flags!)
                    })
                _ = nghttp2_submit_response(session, stream, entries, count, &provider)
            }
        }
    }

    // MARK: - Callbacks

    /// The server session's callbacks; each finds its connection in `user_data`.
    static func makeCallbacks() -> OpaquePointer {
        var made: OpaquePointer?
        nghttp2_session_callbacks_new(&made)
        let callbacks = made!
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
                frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
            else { return 0 }
            Unmanaged<ServerConnection>.fromOpaque(user!).takeUnretainedValue().beginRequest(frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { session, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            let going = Unmanaged<ServerConnection>.fromOpaque(user!).takeUnretainedValue().header(
                frame.pointee.hd.stream_id,
                name: UnsafeBufferPointer(start: name, count: nameLength),
                value: UnsafeBufferPointer(start: value, count: valueLength))
            guard going else {
                nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM.rawValue)
                return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, data, length, user in
            Unmanaged<ServerConnection>.fromOpaque(user!).takeUnretainedValue().body(stream, UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            let type = frame.pointee.hd.type
            let connection = Unmanaged<ServerConnection>.fromOpaque(user!).takeUnretainedValue()
            connection.frameReceived()
            if type == UInt8(NGHTTP2_RST_STREAM.rawValue) {
                connection.resetReceived(frame.pointee.hd.stream_id)
                return 0
            }
            let ends = frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
            if type == UInt8(NGHTTP2_DATA.rawValue), frame.pointee.hd.length == 0, !ends {
                connection.emptyDataReceived()
                return 0
            }
            guard type == UInt8(NGHTTP2_HEADERS.rawValue) || type == UInt8(NGHTTP2_DATA.rawValue), ends else { return 0 }
            connection.endRequest(frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, code, user in
            Unmanaged<ServerConnection>.fromOpaque(user!).takeUnretainedValue().endStream(stream, code: code)
            return 0
        }
        nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks) { _, frame, error, user in
            // Called where nghttp2 resets a stream itself (and for connection errors, which
            // end the session anyway): only stream-level frames of a request count.
            guard let frame, frame.pointee.hd.stream_id > 0,
                frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) || frame.pointee.hd.type == UInt8(NGHTTP2_DATA.rawValue)
            else { return 0 }
            let opens = frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) && frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
            Unmanaged<ServerConnection>.fromOpaque(user!).takeUnretainedValue().streamResetByLibrary(
                frame.pointee.hd.stream_id, error: error, opensStream: opens)
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
    /// Bytes of this stream counted in its connection's and the server's held bytes.
    var held = 0
    var lastProgress: MonotonicClock.Instant
    /// The request ended (END_STREAM) and was answered.
    var ended = false
    /// The handler has been called for this stream: once, ever.
    var reported = false
    var resetByClient = false
    /// Why nghttp2 reset the stream, when it did (the record's reason).
    var refusedBecause: String?
    var response: [UInt8] = []
    var responseSent = 0

    init(now: MonotonicClock.Instant) {
        lastProgress = now
    }
}
