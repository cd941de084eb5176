internal import CNGHTTP2
import MonotonicTime
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// One client connection, from name lookup to close: TCP to each address in turn (or to the
/// proxy, then CONNECT), TLS with ALPN h2 when the endpoint has it, then the nghttp2 client
/// session; or, when the settings allow it and the server offers no h2, HTTP/1.1 with
/// keep-alive, one request at a time, its answers read by `HTTP1Response.Reader`. Lives on
/// its loop's thread only.
///
/// Every request it takes ends in exactly one of: an answer, a timeout or a connection that
/// died after the request went out (both `.unknownOutcome`), or a return to the loop's queue
/// when the server cannot have processed it.
final class ClientConnection: LoopConnection {
    enum Stage {
        case resolving, connecting, tunnelling, handshaking, awaitingSettings, ready
    }

    private unowned let side: ClientSide
    private var stage = Stage.resolving
    /// The socket being connected, then the transport's.
    private var descriptor: Int32 = -1
    private var addresses: [SocketAddress] = []
    private var addressIndex = 0
    /// The connected socket, plain or through TLS: made once the TCP connection (and the
    /// proxy's tunnel) stands.
    private var transport: Transport?
    private var session: OpaquePointer?
    private(set) var closed = false
    /// GOAWAY came (or was sent): no new streams; the open ones finish.
    private(set) var draining = false
    private var streams: [Int32: ClientStream] = [:]
    private let startedAt = MonotonicClock.system.now
    /// Bytes read past the proxy's answer, for the session.
    private var tunnelReply: [UInt8] = []
    /// Why the last address could not be used, for the message if none can.
    private var lastProblem = ""
    /// Scratch for the header fields of the request being submitted, reused for each.
    private var requestFields = HeaderFields()
    /// Set when the connection speaks HTTP/1.1: the request on it (its key in `streams`) and
    /// the reader of its answer.
    private var http1: (current: Int32?, reader: HTTP1Response.Reader, next: Int32)?

    private static let outputBatch = 64 * 1_024

    /// The stages' decisions: what is looked up, what the proxy is asked and what its answer means.
    private let connector: Connector
    /// Which lookup answers this connection's.
    private(set) var lookup = 0

    /// Starts by looking the name up, off the loop's thread: a slow resolver must not stall
    /// every other connection and timer. The answer comes back through `resolved`.
    init(side: ClientSide) {
        self.side = side
        connector = Connector(endpoint: side.settings.endpoint, proxy: side.settings.proxy)
        lookup = side.resolve(host: connector.target.host, port: connector.target.port, for: self)
    }

    /// The lookup's answer. The addresses are tried from the one after those that took the
    /// connection and then made no progress before (`side.addressShift`), so a first address
    /// that accepts and never answers does not take every attempt.
    func resolved(_ result: Result<[SocketAddress], ResolveFailure>) {
        guard !closed, stage == .resolving else { return }
        switch result {
        case .success(let found):
            addresses = connector.order(found, shift: side.addressShift)
            stage = .connecting
            connectNext()
        case .failure(let problem):
            fail(connector.lookupFailed(problem), problem: .unreachable)
        }
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    var isReady: Bool { stage == .ready && !closed }

    /// Since when this connection is suspect: a stream on it got no answer in time, and a
    /// PING went out to tell a slow server from a dead connection. It takes no new work
    /// meanwhile; an answer to the PING clears it, silence closes the connection.
    private var suspectSince: MonotonicClock.Instant?

    /// Streams this connection can open now.
    var room: Int {
        guard isReady, !draining, suspectSince == nil else { return 0 }
        if let http1 { return http1.current == nil ? 1 : 0 }
        guard let session else { return 0 }
        let allowed = Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
        return min(allowed, side.settings.maximumStreams) - streams.count
    }

    @discardableResult
    func handle(events: UInt32) -> Bool {
        guard !closed else { return false }
        switch stage {
        case .resolving:
            break
        case .connecting:
            connected()
        case .tunnelling:
            readTunnelReply()
        case .handshaking:
            continueHandshake()
        case .awaitingSettings, .ready:
            var more = false
            if events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                more = http1 == nil ? receive() : receiveHTTP1()
            }
            if !closed { flush() }
            return more && !closed
        }
        return false
    }

    // MARK: - Connecting

    private func connectNext() {
        while addressIndex < addresses.count {
            let address = addresses[addressIndex]
            addressIndex += 1
            let socket = Glibc.socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socket >= 0 else {
                lastProblem = String(cString: strerror(errno))
                continue
            }
            var one: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let rc = address.bytes.withUnsafeBytes { raw in
                Glibc.connect(socket, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            }
            if rc == 0 || errno == EINPROGRESS {
                descriptor = socket
                side.loop.register(socket, self, events: EPOLLOUT.rawValue)
                return
            }
            lastProblem = "\(String(cString: strerror(errno))) at \(address)"
            Glibc.close(socket)
        }
        fail(lastProblem.isEmpty ? "no address to connect to" : lastProblem, problem: .unreachable)
    }

    private func connected() {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else {
            lastProblem = "\(String(cString: strerror(error))) at \(addresses[addressIndex - 1])"
            side.loop.forget(descriptor)
            Glibc.close(descriptor)
            descriptor = -1
            return connectNext()
        }
        if let proxy = side.settings.proxy, let bytes = connector.tunnelRequest {
            stage = .tunnelling
            // A few hundred bytes into a socket just connected: the kernel takes them whole.
            guard Glibc.send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
                return fail("the proxy \(proxy) closed the connection", problem: .unreachable)
            }
            side.loop.watch(descriptor, events: Transport.readEvents)
            return
        }
        startSecuring()
    }

    private func readTunnelReply() {
        let proxy = side.settings.proxy!
        let scratch = side.loop.scratch
        let count = read(descriptor, scratch.baseAddress, scratch.count)
        if count < 0, errno == EAGAIN || errno == EINTR { return }
        guard count > 0 else { return fail("the proxy \(proxy) closed the connection before answering CONNECT", problem: .unreachable) }
        tunnelReply.append(contentsOf: UnsafeRawBufferPointer(start: scratch.baseAddress, count: count))
        switch connector.tunnelReply(tunnelReply) {
        case .incomplete: return
        case .refused(let words, let problem): return fail(words, problem: problem)
        // The server's first frames may have come with the proxy's answer: the session reads them.
        case .open(let early): tunnelReply = early
        }
        startSecuring()
    }

    /// The socket is connected (and tunnelled): it becomes the transport, TLS or plain.
    private func startSecuring() {
        // From here the transport decides when writes are watched, from a known start.
        side.loop.watch(descriptor, events: Transport.readEvents)
        guard let context = side.tls else {
            transport = Transport(descriptor: descriptor, tls: nil, poller: side.loop.poller)
            return openSession()
        }
        guard tunnelReply.isEmpty else {
            return fail("the proxy \(side.settings.proxy!) sent bytes before the TLS handshake", problem: .unreachable)
        }
        guard let made = context.connection(on: descriptor, host: side.settings.endpoint.host) else {
            return fail("cannot make a TLS connection", problem: .unreachable)
        }
        transport = Transport(descriptor: descriptor, tls: made, poller: side.loop.poller)
        stage = .handshaking
        continueHandshake()
    }

    private func continueHandshake() {
        guard let transport else { return }
        switch transport.continueHandshake() {
        case .waiting:
            return
        case .done:
            switch connector.checkProtocol(transport.negotiatedProtocol, allowsHTTP1: side.settings.allowsHTTP1) {
            case .http2: openSession()
            case .http1: openHTTP1()
            case .refused(let refusal): fail(refusal, problem: .notHTTP2)
            }
        case .failed(let verifyResult, let detail):
            if let failure = CertificateChecks.failure(ofResult: verifyResult) {
                var words = failure.words
                if failure.nameMismatch {
                    words += ": it is not made out to \(side.settings.endpoint.host)"
                }
                return fail(words, problem: .untrusted)
            }
            let words = ERR_reason_error_string(detail).map { String(cString: $0) } ?? "error \(detail)"
            // No version or suite in common is the server's set-up, not a passing fault: final
            // at once, not retried as if the server could not be reached.
            if Self.noCommonTLSReasons.contains(ERR_GET_REASON(detail)) { return fail(words, problem: .noCommonTLS) }
            fail(detail == 0 ? "the server ended the TLS handshake" : "TLS handshake failed: \(words)", problem: .unreachable)
        }
    }

    /// OpenSSL's reasons for a handshake that found no protocol version or suite both sides take.
    private static let noCommonTLSReasons: Set<Int32> = [
        SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE,
        SSL_R_NO_CIPHERS_AVAILABLE, SSL_R_NO_PROTOCOLS_AVAILABLE, SSL_R_TLSV1_ALERT_INSUFFICIENT_SECURITY
    ]

    private func openSession() {
        var created: OpaquePointer?
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_client_new(&created, side.callbacks, user) == 0, let created else {
            return fail("cannot make an HTTP/2 session", problem: .unreachable)
        }
        session = created
        stage = .awaitingSettings
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20)
        ]
        _ = nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        // Answers for many streams share the connection's window: make it generous.
        _ = nghttp2_session_set_local_window_size(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 16 << 20)
        if !tunnelReply.isEmpty {
            // The server's first frames came with the proxy's answer.
            let early = tunnelReply
            tunnelReply = []
            let taken = early.withUnsafeBufferPointer { nghttp2_session_mem_recv(created, $0.baseAddress, $0.count) }
            guard taken >= 0 else { return fail("the server does not speak HTTP/2", problem: .notHTTP2) }
        }
        flush()
    }

    // MARK: - Requests

    /// Opens a stream for `item`; the caller flushes once for all it started.
    func start(_ item: ClientRequest) {
        if http1 != nil { return startHTTP1(item) }
        guard let session else { return side.sendAgain(item, because: "the connection closed") }
        let endpoint = side.settings.endpoint
        var fields = HeaderFields()
        swap(&fields, &requestFields)
        defer { swap(&fields, &requestFields) }
        fields.start()
        fields.add(":method", "POST")
        fields.add(":scheme", endpoint.secure ? "https" : "http")
        fields.add(":authority", endpoint.authority)
        fields.add(":path", item.request.path)
        for field in item.request.headers { fields.add(field.name, field.value) }
        fields.add("content-length", String(item.request.body.count))
        let stream = ClientStream(item: item)
        let id: Int32 = fields.withEntries { entries, count in
            let source = Unmanaged.passUnretained(stream).toOpaque()
            guard !item.request.body.isEmpty else {
                return nghttp2_submit_request(session, nil, entries, count, nil, source)
            }
            // The body stays in `stream` (kept in `streams`) until nghttp2 closes the stream.
            var provider = nghttp2_data_provider(
                source: nghttp2_data_source(ptr: source),
                read_callback: { _, _, buffer, length, flags, source, _ in
                    let stream = Unmanaged<ClientStream>.fromOpaque(source!.pointee.ptr!).takeUnretainedValue()
                    return OutgoingBody.copy(stream.item.request.body, sent: &stream.bodySent, into: buffer!, length: length, flags: flags!)
                })
            return nghttp2_submit_request(session, nil, entries, count, &provider, source)
        }
        guard id > 0 else {
            guard id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue else {
                // Not the connection's doing but the request's (nghttp2 refused its headers):
                // no connection would take it.
                return side.answer(item.request.id, failure: .init(kind: .refused, message: "the request cannot be sent: \(String(cString: nghttp2_strerror(id)))"))
            }
            // Stream ids used up: another connection takes it.
            draining = true
            return side.sendAgain(item, because: "the connection could open no more streams")
        }
        streams[id] = stream
    }

    /// Writes what the session has to send.
    func flush() {
        if http1 != nil, let transport, !closed {
            if transport.flushOutput() == .writeFailed { fail("the connection broke while sending", problem: .unreachable) }
            return
        }
        guard let session, let transport, !closed else { return }
        switch transport.flush(session: session, batch: Self.outputBatch) {
        case .writeFailed: fail("the connection broke while sending", problem: .unreachable)
        case .sessionFailed: fail("HTTP/2 failed while sending", problem: .unreachable)
        case .blocked: break
        case .finished: close(because: "the server ended the connection")
        case .open: if draining, streams.isEmpty { close(because: "the server sent GOAWAY") }
        }
    }

    /// Reads within the loop's budget; true when more input may be waiting.
    private func receive() -> Bool {
        guard let session, let transport else { return false }
        let buffer = side.loop.scratch
        let end = transport.receive(
            into: session, buffer: buffer, budget: side.settings.readBudget, isClosed: { closed },
            refused: { code in
                flush()
                let words = String(cString: nghttp2_strerror(code))
                fail(
                    stage == .ready ? "HTTP/2 failed: \(words)" : "the server does not speak HTTP/2 (\(words))",
                    problem: stage == .ready ? .unreachable : .notHTTP2)
            })
        switch end {
        case .closed: fail("the server closed the connection", problem: .unreachable)
        case .failed(let words): fail(words, problem: .unreachable)
        case .budgetSpent: return true
        case .drained, .refused: break
        }
        return false
    }

    // MARK: - HTTP/1.1

    private func openHTTP1() {
        guard tunnelReply.isEmpty else { return fail("the server sent bytes before the first request", problem: .unreachable) }
        http1 = (current: nil, reader: HTTP1Response.Reader(), next: 1)
        stage = .ready
        side.connectionReady()
    }

    private func startHTTP1(_ item: ClientRequest) {
        guard let transport, var exchange = http1, exchange.current == nil else {
            return side.sendAgain(item, because: "the connection was busy")
        }
        let request = item.request
        // Our own header fields, but a CR or LF in one would end the head where it stands.
        let fields = [("host", side.settings.endpoint.authority)] + request.headers.map { ($0.name, $0.value) }
        guard !request.path.utf8.contains(where: { $0 <= 32 }),
            fields.allSatisfy({ !$0.0.utf8.contains { $0 == 13 || $0 == 10 } && !$0.1.utf8.contains { $0 == 13 || $0 == 10 } })
        else {
            return side.answer(request.id, failure: .init(kind: .refused, message: "the request cannot be sent: a line break in its head"))
        }
        var head = "POST \(request.path) HTTP/1.1\r\n"
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        head += "content-length: \(request.body.count)\r\n\r\n"
        let stream = ClientStream(item: item)
        let id = exchange.next
        exchange.next += 2
        exchange.current = id
        exchange.reader = HTTP1Response.Reader()
        http1 = exchange
        streams[id] = stream
        stream.sentAt = MonotonicClock.system.now
        if transport.send(Array(head.utf8) + request.body) == .writeFailed {
            fail("the connection broke while sending", problem: .unreachable)
        }
    }

    /// Reads answers within the loop's budget; true when more input may be waiting.
    private func receiveHTTP1() -> Bool {
        guard let transport else { return false }
        let buffer = side.loop.scratch
        let end = transport.read(
            into: buffer, budget: side.settings.readBudget, isClosed: { closed },
            take: { count in takeHTTP1(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count)) })
        switch end {
        case .closed: http1Closed()
        case .failed(let words): fail(words, problem: .unreachable)
        case .budgetSpent: return true
        case .drained, .refused: break
        }
        return false
    }

    /// Hands bytes to the answer's reader; false once the connection is done with.
    private func takeHTTP1(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var exchange = http1, let id = exchange.current, let stream = streams[id] else {
            close(because: "the server sent bytes no request asked for")
            return false
        }
        let reading = exchange.reader.feed(bytes)
        http1 = exchange
        switch reading {
        case .incomplete:
            return true
        case .invalid(let words):
            close(because: "the server's HTTP/1.1 answer is not one: \(words)")
            return false
        case .complete(let response, let consumed):
            answered(id, stream, response)
            if consumed < bytes.count {
                close(because: "the server sent bytes no request asked for")
                return false
            }
            if response.closesConnection {
                close(because: "the server closes the connection after each answer")
                return false
            }
            return true
        }
    }

    private func answered(_ id: Int32, _ stream: ClientStream, _ response: HTTP1Response) {
        streams.removeValue(forKey: id)
        http1?.current = nil
        stream.status = response.status
        stream.headers = response.headers
        stream.body = response.body
        settle(stream, code: nil, reason: "")
    }

    /// The server closed: an answer whose body ran to the close is whole; a request with no
    /// answer yet has an unknown outcome.
    private func http1Closed() {
        if var exchange = http1, let id = exchange.current, let stream = streams[id], case .complete(let response, _) = exchange.reader.end() {
            http1 = exchange
            answered(id, stream, response)
        }
        close(because: streams.isEmpty ? "the server closed an idle connection" : "the server closed the connection before answering")
    }

    // MARK: - Time

    /// Gives up an attempt that takes too long, and streams that waited too long for an answer.
    func checkTimes(now: MonotonicClock.Instant) {
        guard !closed else { return }
        guard stage == .ready else {
            if now - startedAt > side.settings.connectTimeout {
                let what =
                    switch stage {
                    case .resolving: "looking up \(connector.target.host)"
                    case .connecting: "connecting"
                    case .tunnelling: "waiting for the proxy"
                    case .handshaking: "in the TLS handshake"
                    default: "waiting for the server's HTTP/2 SETTINGS"
                    }
                fail("no progress \(what) for \(side.settings.connectTimeout.shortText)", problem: .unreachable)
            }
            return
        }
        if http1 != nil {
            // HTTP/1.1 cannot cancel one request: a late answer ends the connection.
            if let id = http1?.current, let stream = streams[id], let sentAt = stream.sentAt, now - sentAt > side.settings.timeout {
                stream.abandoned = "no answer within \(side.settings.timeout.shortText)"
                close(because: stream.abandoned!)
            }
            return
        }
        guard let session else { return }
        if let suspectSince, now - suspectSince > side.settings.connectTimeout {
            // Not even a PING answered: the connection is dead, though nothing said so. Its
            // streams are settled (sent ones as unknown outcomes, tried again once elsewhere)
            // and the loop opens another connection for what waits.
            return close(because: "the connection went silent (no answer to a PING within \(side.settings.connectTimeout.shortText))")
        }
        let timeout = side.settings.timeout
        var expired: [Int32] = []
        for (id, stream) in streams where stream.abandoned == nil {
            if let sentAt = stream.sentAt, now - sentAt > timeout { expired.append(id) }
        }
        guard !expired.isEmpty else { return }
        for id in expired.sorted() {
            guard let stream = streams[id] else { continue }
            stream.abandoned = "no answer within \(timeout.shortText)"
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, NGHTTP2_CANCEL.rawValue)
        }
        if suspectSince == nil {
            suspectSince = now
            nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
        }
        flush()
    }

    /// The server answered the PING: slow, perhaps, but there.
    fileprivate func pingAnswered() {
        suspectSince = nil
    }

    /// Every open stream is given up now (a stop whose grace ran out).
    func giveUp() {
        if http1 != nil, !closed, !streams.isEmpty {
            for stream in streams.values where stream.abandoned == nil { stream.abandoned = "no answer before the stop" }
            return close(because: "no answer before the stop")
        }
        guard !closed, let session, !streams.isEmpty else { return }
        for (id, stream) in streams where stream.abandoned == nil {
            stream.abandoned = "no answer before the stop"
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, NGHTTP2_CANCEL.rawValue)
        }
        flush()
    }

    // MARK: - Ending

    /// Says GOAWAY (best effort) and closes; the loop is done with every stream.
    func goAwayAndClose() {
        guard !closed else { return }
        if let session, stage == .ready {
            nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
            flush()
        }
        close(because: "the client finished")
    }

    /// Ends the connection; an attempt that failed before it was ready is counted by the loop.
    private func fail(_ reason: String, problem: HTTP2Client.EndpointProblem) {
        guard !closed else { return }
        let wasReady = stage == .ready
        // Past a tunnel the proxy said yes to, silence or a close is the proxy's as much as
        // the endpoint's: it is named, so the user looks at the right machine.
        var reason = reason
        if let proxy = side.settings.proxy, stage == .handshaking || stage == .awaitingSettings {
            reason += ", through the proxy \(proxy), which accepted the tunnel"
        }
        // An address that did not lead to a working connection (it took it and then made no
        // progress, or never answered the connect): the next attempt
        // starts at the one after it, so a healthy second address is tried (RFC 8305).
        if !wasReady, stage != .resolving, addresses.count > 1 {
            side.addressShift += 1
        }
        close(because: reason)
        if !wasReady { side.attemptFailed(reason, problem: problem) }
    }

    private func close(because reason: String) {
        guard !closed else { return }
        closed = true
        draining = true
        if descriptor >= 0 {
            side.loop.forget(descriptor)
            if let transport {
                transport.close()
            } else {
                Glibc.close(descriptor)
            }
            descriptor = -1
        }
        let open = streams.sorted { $0.key < $1.key }
        streams.removeAll()
        for (_, stream) in open { settle(stream, code: nil, reason: reason) }
    }

    /// The one end of a stream: its answer, its failure, or its return to the queue.
    private func settle(_ stream: ClientStream, code: UInt32?, reason: String) {
        if stream.status > 0, stream.abandoned == nil {
            return side.answer(
                HTTP2Client.Response(
                    id: stream.item.request.id, status: stream.status,
                    headers: stream.headers, body: stream.body, failure: nil))
        }
        if let abandoned = stream.abandoned {
            return side.answer(stream.item.request.id, failure: .init(kind: .unknownOutcome, message: abandoned))
        }
        if stream.sentAt == nil || code == NGHTTP2_REFUSED_STREAM.rawValue {
            // The server never had it (or said it did not process it): it goes out again.
            return side.sendAgain(stream.item, because: code == NGHTTP2_REFUSED_STREAM.rawValue ? "the server refused the stream" : reason)
        }
        let why = code.map { "the server reset the stream (\(String(cString: nghttp2_http2_strerror($0))))" } ?? reason
        side.answer(stream.item.request.id, failure: .init(kind: .unknownOutcome, message: why))
    }

    // MARK: - Session callbacks

    fileprivate func header(_ id: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard let stream = streams[id] else { return }
        if name.first == UInt8(ascii: ":") {
            if name.elementsEqual(":status".utf8) { stream.status = Int(String(decoding: value, as: UTF8.self)) ?? 0 }
        } else if stream.headers.count < 32 {
            stream.headers.append(.init(String(decoding: name, as: UTF8.self), String(decoding: value.prefix(1_024), as: UTF8.self)))
        }
    }

    fileprivate func data(_ id: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard let stream = streams[id] else { return }
        // An APNs answer is a short JSON object; more than that is not kept.
        let room = 16_384 - stream.body.count
        if room > 0 { stream.body.append(contentsOf: bytes.prefix(room)) }
    }

    fileprivate func sent(_ id: Int32) {
        streams[id]?.sentAt = MonotonicClock.system.now
    }

    fileprivate func notSent(_ id: Int32) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        side.sendAgain(stream.item, because: "the connection could not open its stream")
    }

    fileprivate func settingsReceived() {
        guard stage == .awaitingSettings else { return }
        stage = .ready
        side.connectionReady()
    }

    fileprivate func goAwayReceived() {
        draining = true
    }

    fileprivate func streamClosed(_ id: Int32, code: UInt32) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        settle(stream, code: code, reason: "")
    }

    static func makeCallbacks() -> OpaquePointer {
        var made: OpaquePointer?
        nghttp2_session_callbacks_new(&made)
        let callbacks = made!
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            Unmanaged<ClientConnection>.fromOpaque(user!).takeUnretainedValue().header(
                frame.pointee.hd.stream_id, name: UnsafeBufferPointer(start: name, count: nameLength),
                value: UnsafeBufferPointer(start: value, count: valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, data, length, user in
            Unmanaged<ClientConnection>.fromOpaque(user!).takeUnretainedValue().data(stream, UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            Unmanaged<ClientConnection>.fromOpaque(user!).takeUnretainedValue().sent(frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks) { _, frame, _, user in
            guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            Unmanaged<ClientConnection>.fromOpaque(user!).takeUnretainedValue().notSent(frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            let connection = Unmanaged<ClientConnection>.fromOpaque(user!).takeUnretainedValue()
            switch UInt32(frame.pointee.hd.type) {
            case NGHTTP2_SETTINGS.rawValue where frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0:
                connection.settingsReceived()
            case NGHTTP2_GOAWAY.rawValue:
                connection.goAwayReceived()
            case NGHTTP2_PING.rawValue where frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0:
                connection.pingAnswered()
            default:
                break
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, code, user in
            Unmanaged<ClientConnection>.fromOpaque(user!).takeUnretainedValue().streamClosed(stream, code: code)
            return 0
        }
        return callbacks
    }
}

/// One request on its stream, and its answer as it comes.
final class ClientStream {
    let item: ClientRequest
    var bodySent = 0
    /// When its HEADERS went out: the stream's time starts there.
    var sentAt: MonotonicClock.Instant?
    var status = 0
    var headers: [HTTP2Client.Field] = []
    var body: [UInt8] = []
    /// Why the client gave up waiting for its answer (a timeout, a stop), once it has.
    var abandoned: String?

    init(item: ClientRequest) {
        self.item = item
    }
}

extension ClientEndpoint {
    /// `host:port` always, as CONNECT names its target.
    var authorityWithPort: String {
        (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}
