internal import CNGHTTP2
import Dispatch
import Locking
import MonotonicTime
import SealCrypto
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The client's part of its event-loop thread (`EventLoop`, the server's too) and what it
/// owns: the queue of requests waiting for a stream, the connections, the count of failed
/// connection attempts. Other threads reach it only through `incoming` (locked) and the
/// loop's wake-up; responses leave through `outbox` to a delivery thread, so the loop never
/// waits for the caller.
final class ClientSide: LoopSide, @unchecked Sendable {
    // Unchecked: every `var` below `incoming` is touched on the loop thread only.
    typealias Connection = ClientConnection

    let settings: HTTP2Client.Settings
    let tls: ClientTLS?
    let loop: EventLoop<ClientSide>
    private let onResponses: @Sendable ([HTTP2Client.Response]) -> Void
    private let incoming = Locked<(requests: [HTTP2Client.Request], finishing: Bool, grace: Duration?)>(([], false, nil))
    private let outbox = Locked<(responses: [HTTP2Client.Response], done: Bool)>(([], false))
    private let outboxReady = DispatchSemaphore(value: 0)
    private let delivered = DispatchSemaphore(value: 0)

    private var waiting = RequestQueue()
    /// Every connection, from its name lookup on (the loop knows them once they have a socket).
    private var connections: [ClientConnection] = []
    /// Submitted and not yet answered.
    private var inFlight = 0
    private var finishing = false
    private var failedAttempts = 0
    private var nextAttempt: MonotonicClock.Instant?
    /// At most this many connections: fewer once the server stops taking more.
    private var connectionCap: Int
    /// The endpoint's problem, once it is known that no request can succeed.
    private var failure: HTTP2Client.Failure?
    private var answers: [HTTP2Client.Response] = []
    /// Set by `stop`: streams still open then are given up.
    private var giveUpAt: MonotonicClock.Instant?
    private var lastSweep = MonotonicClock.system.now
    /// Lookups answered off the loop, waiting to be handed to their connections.
    private let lookups = Locked<[(connection: Int, result: Result<[SocketAddress], ResolveFailure>)]>([])
    /// Numbers connections for their lookups: an ObjectIdentifier is reused once its object
    /// is freed, and a late answer must not reach a later connection.
    private var nextSerial = 0
    /// How far the next connection's address list is turned: one more each time an address
    /// took a connection and then made no progress.
    var addressShift = 0
    /// Since when requests have waited with a ready connection and none was started.
    private var stalledSince: MonotonicClock.Instant?

    /// The client session's callbacks; each finds its connection in `user_data`.
    let callbacks: OpaquePointer

    init(settings: HTTP2Client.Settings, onResponses: @escaping @Sendable ([HTTP2Client.Response]) -> Void) throws(HTTP2ClientError) {
        self.settings = settings
        self.onResponses = onResponses
        connectionCap = settings.connections
        tls =
            settings.endpoint.secure
            ? try ClientTLS(trustFile: settings.trustFile, identity: settings.clientIdentity, allowsHTTP1: settings.allowsHTTP1) : nil
        do {
            loop = try EventLoop(scratchBytes: 64 * 1_024)
        } catch {
            throw HTTP2ClientError(error.message, underlying: SystemCallFailure(errno: error.errno))
        }
        // Made once the init can no longer fail: a deinit does not run for one that did.
        callbacks = ClientConnection.makeCallbacks()
    }

    deinit {
        nghttp2_session_callbacks_del(callbacks)
    }

    func start() {
        loop.start(named: "http2-client", side: self)
        // The delivery thread ends by itself once the loop is done and every answer is out.
        pthread_detach(OwnThread.startJoinable(named: "http2-answers") { self.deliver() })
    }

    /// The delivery thread: hands each batch of answers to the caller, until the loop is done.
    private func deliver() {
        while true {
            outboxReady.wait()
            let (batch, done) = outbox.withLock { state in
                defer { state.responses.removeAll(keepingCapacity: true) }
                return (state.responses, state.done)
            }
            if !batch.isEmpty { onResponses(batch) }
            if done, outbox.withLock({ $0.responses.isEmpty }) { break }
        }
        delivered.signal()
    }

    func submit(_ requests: [HTTP2Client.Request]) {
        guard !requests.isEmpty else { return }
        incoming.withLock { $0.requests.append(contentsOf: requests) }
        // The loop checks `incoming` (`waitMilliseconds`) after saying it may wait and before
        // it blocks, so either it sees these requests or this sees it waiting.
        loop.wakeUpIfWaiting()
    }

    func stop(grace: Duration) {
        incoming.withLock { if $0.grace == nil { $0.grace = grace } }
        loop.wakeUp()
    }

    func finish() {
        incoming.withLock { $0.finishing = true }
        loop.wakeUp()
        if !joined {
            joined = true
            loop.join()
            delivered.wait()
        }
    }

    /// `finish` has waited for the loop and the delivery thread (the caller's, not the loop's).
    private var joined = false

    // MARK: - The loop's calls

    func waitMilliseconds() -> Int32 {
        // Work submitted since the last round is taken at once.
        if incoming.withLock({ !$0.requests.isEmpty || $0.finishing != finishing }) { return 0 }
        if let nextAttempt, !waiting.isEmpty {
            let left = nextAttempt - MonotonicClock.system.now
            return Int32(max(0, min(20, left.saturatingMilliseconds + 1)))
        }
        return connections.isEmpty ? 1_000 : 20
    }

    /// Everything the client does is looked for after each round: nothing to do here.
    func woken() {}

    func ready(_ descriptor: Int32, events: UInt32) {}

    func roundEnded(busy: Bool) -> Bool {
        takeIncoming()
        takeLookups()
        let now = MonotonicClock.system.now
        if now - lastSweep >= .milliseconds(20) {
            lastSweep = now
            for connection in connections { connection.checkTimes(now: now) }
            expireWaiting(now: now)
        }
        connections.removeAll { $0.closed }
        maintainConnections(now: now)
        dispatch()
        deliverAnswers()
        if finishing, inFlight == 0 {
            for connection in connections { connection.goAwayAndClose() }
            return false
        }
        return true
    }

    func loopEnded(failed: Bool) {
        outbox.withLock { $0.done = true }
        outboxReady.signal()
    }

    /// Looks `host` up on another thread (getaddrinfo blocks, for seconds with a slow
    /// resolver) and hands the answer back to the loop.
    func resolve(host: String, port: Int, for connection: ClientConnection) -> Int {
        nextSerial += 1
        let id = nextSerial
        DispatchQueue.global().async { [weak self] in
            let result = SocketAddress.resolve(host: host, port: port)
            guard let self else { return }
            lookups.withLock { $0.append((id, result)) }
            self.loop.wakeUp()
        }
        return id
    }

    private func takeLookups() {
        let answered = lookups.withLock { pending -> [(connection: Int, result: Result<[SocketAddress], ResolveFailure>)] in
            defer { pending.removeAll() }
            return pending
        }
        for (id, result) in answered {
            connections.first { $0.lookup == id }?.resolved(result)
        }
    }

    private func takeIncoming() {
        let (requests, ending, grace) = incoming.withLock { state in
            defer { state.requests.removeAll(keepingCapacity: true) }
            return (state.requests, state.finishing, state.grace)
        }
        finishing = ending
        inFlight += requests.count
        for request in requests { waiting.append(ClientRequest(request: request)) }
        if let grace, giveUpAt == nil { giveUpAt = MonotonicClock.system.now + grace }
    }

    /// Opens a connection when requests wait and none is on its way: the first, one after
    /// a GOAWAY or a failure, or another up to `connections` once the others are ready.
    private func maintainConnections(now: MonotonicClock.Instant) {
        if let failure {
            for item in waiting.removeAll() { answer(item.request.id, failure: failure) }
            return
        }
        if let giveUpAt {
            for item in waiting.removeAll() { answer(item.request.id, failure: .init(kind: .notSent, message: "not sent: stopped")) }
            if now >= giveUpAt {
                for connection in connections { connection.giveUp() }
            }
            return
        }
        guard !waiting.isEmpty else { return }
        let live = connections.filter { !$0.draining }
        guard live.allSatisfy(\.isReady), live.count < connectionCap else { return }
        if let nextAttempt, now < nextAttempt { return }
        nextAttempt = nil
        connections.append(ClientConnection(side: self))
    }

    /// Requests that wait while the server, there and ready, starts none of them for
    /// `timeout` (MAX_CONCURRENT_STREAMS 0 for good) are handed back as not sent: the sender's
    /// retries and --retry-for then bound them, as they bound any other. A slow server that
    /// frees a stream now and then is progress, and its queue waits as long as it takes;
    /// waiting for a connection is the connection attempts' to bound, not this.
    private func expireWaiting(now: MonotonicClock.Instant) {
        guard !waiting.isEmpty, connections.contains(where: { $0.isReady && !$0.draining }) else {
            stalledSince = nil
            return
        }
        guard let since = stalledSince else {
            stalledSince = now
            return
        }
        guard now - since > settings.timeout else { return }
        stalledSince = nil
        for item in waiting.removeAll() {
            answer(item.request.id, failure: .init(kind: .notSent, message: "no stream became free within \(settings.timeout.shortText)"))
        }
    }

    /// Hands waiting requests to the ready connections, as many as each has streams for.
    private func dispatch() {
        guard !waiting.isEmpty else { return }
        for connection in connections where connection.isReady && !connection.draining {
            while connection.room > 0, let item = waiting.popFirst() {
                connection.start(item)
                stalledSince = nil
            }
            connection.flush()
            if waiting.isEmpty { break }
        }
    }

    private func deliverAnswers() {
        guard !answers.isEmpty else { return }
        let batch = answers
        answers.removeAll(keepingCapacity: true)
        outbox.withLock { $0.responses.append(contentsOf: batch) }
        outboxReady.signal()
    }

    // MARK: - What connections tell the loop

    func answer(_ response: HTTP2Client.Response) {
        inFlight -= 1
        answers.append(response)
    }

    func answer(_ id: Int, failure: HTTP2Client.Failure) {
        answer(HTTP2Client.Response(id: id, status: 0, headers: [], body: [], failure: failure))
    }

    /// A request the server did not process goes back to the front of the queue.
    func sendAgain(_ item: ClientRequest, because reason: String) {
        var item = item
        item.resent += 1
        guard item.resent <= HTTP2Client.resendLimit else {
            return answer(item.request.id, failure: .init(kind: .notSent, message: "\(reason), \(item.resent) times"))
        }
        waiting.prepend(item)
    }

    func connectionReady() {
        failedAttempts = 0
    }

    /// A connection attempt that ended before the server's SETTINGS came.
    func attemptFailed(_ reason: String, problem: HTTP2Client.EndpointProblem) {
        failedAttempts += 1
        let serving = connections.contains { $0.isReady && !$0.closed }
        if problem != .unreachable {
            failure = .init(kind: .endpoint(problem), message: reason)
        } else if failedAttempts >= settings.connectAttempts {
            if serving {
                // The server takes no more connections than it has: keep to those.
                connectionCap = connections.filter { $0.isReady && !$0.closed }.count
                failedAttempts = 0
            } else {
                failure = .init(kind: .endpoint(.unreachable), message: "\(reason), after \(failedAttempts) tries to connect")
            }
        } else {
            // 250 ms, doubling, with ±50 % jitter.
            let base = 250.0 * Double(1 << min(failedAttempts - 1, 6))
            nextAttempt = MonotonicClock.system.now + .milliseconds(Int(base * Double.random(in: 0.5...1.5)))
        }
    }
}
