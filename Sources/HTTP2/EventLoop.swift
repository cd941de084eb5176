internal import CNGHTTP2
internal import CSystem
import Locking
import MonotonicTime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One event-loop thread: accepts connections from the shared listening socket (each loop
/// waits on it with EPOLLEXCLUSIVE, so the kernel hands each new connection to one loop)
/// and runs every connection it accepted, start to end.
final class EventLoop: @unchecked Sendable {
    // Unchecked: `connections`, `scratch`, `callbacks` and the drain deadline are touched
    // only on the loop's own thread; other threads call `start`, `stop` and `join`, which
    // use the atomic flag, the eventfd and the thread handle set before the thread runs.

    /// What every loop of one server shares.
    final class Shared: Sendable {
        let listener: Int32
        let tls: TLSContext?
        let limits: HTTP2Server.Limits
        let timeouts: ConnectionTimeouts
        let handler: HTTP2Server.Handler
        let roundEnded: (@Sendable () -> Void)?
        let connectionEnded: (@Sendable (Int) -> Void)?
        let nextConnection: @Sendable () -> Int
        let openConnections = Atomic<Int>(0)
        /// Request bytes held for unfinished streams, across every connection.
        let heldBytes = Atomic<Int>(0)
        /// Connections admitted at most: the limit, or fewer when descriptors are scarcer.
        let connectionLimit: Int
        let counters = HTTP2Server.Counters()

        init(
            listener: Int32, tls: TLSContext?, limits: HTTP2Server.Limits, connectionLimit: Int,
            handler: @escaping HTTP2Server.Handler, roundEnded: (@Sendable () -> Void)?,
            connectionEnded: (@Sendable (Int) -> Void)?, nextConnection: @escaping @Sendable () -> Int
        ) {
            self.listener = listener
            self.tls = tls
            self.limits = limits
            timeouts = ConnectionTimeouts(handshake: limits.handshakeTimeout, idle: limits.idleTimeout, request: limits.requestTimeout)
            self.connectionLimit = connectionLimit
            self.handler = handler
            self.roundEnded = roundEnded
            self.connectionEnded = connectionEnded
            self.nextConnection = nextConnection
        }
    }

    let shared: Shared
    private let poller: Poller
    private let stopping = Atomic<Bool>(false)
    private var thread: pthread_t?
    private var connections: [Int32: Connection] = [:]
    private var drainDeadline: MonotonicClock.Instant?
    /// Accepting is paused until then: the process ran out of descriptors.
    private var acceptPausedUntil: MonotonicClock.Instant?
    /// Connections whose read budget ran out with input left: served again next round.
    private var ready: [Connection] = []
    /// The loop a newcomer is handed to when this one is at the cap with no idle connection
    /// of its own to close (the kernel may have given one loop every connection). Set
    /// before the threads start; weak, as the server owns its loops.
    weak var sibling: EventLoop?
    /// Newcomers handed over by the sibling, admitted on this loop's thread; once the loop
    /// has ended, a newcomer is refused at the door instead.
    private let handedOver = Locked<(newcomers: [Int32], ended: Bool)>(([], false))
    /// Where reads land before nghttp2 takes them; one per loop, as one read runs at a time.
    var scratch: UnsafeMutableRawBufferPointer { poller.scratch }
    let callbacks: OpaquePointer

    init(shared: Shared) throws(HTTP2ServerError) {
        self.shared = shared
        do {
            poller = try Poller(scratchBytes: 32 * 1_024)
        } catch {
            throw HTTP2ServerError(.resources, error.message, errno: error.errno)
        }
        callbacks = Connection.makeCallbacks()
        watch(shared.listener, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue, add: true)
    }

    deinit {
        nghttp2_session_callbacks_del(callbacks)
    }

    func start() {
        thread = OwnThread.startJoinable(named: "http2-loop") { self.run() }
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        poller.wakeUp()
    }

    func join() {
        guard let thread else { return }
        pthread_join(thread, nil)
        self.thread = nil
    }

    func watch(_ descriptor: Int32, events: UInt32, add: Bool = false) {
        poller.watch(descriptor, events: events, add: add)
    }

    func forget(_ descriptor: Int32) {
        poller.forget(descriptor)
        connections[descriptor] = nil
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 128)
        var lastSweep = Self.now()
        while true {
            // Connections with input left over are served again at once, after the others.
            let timeout: Int32 = ready.isEmpty ? (acceptPausedUntil == nil ? 250 : 20) : 0
            let count = poller.wait(&events, timeout: timeout)
            if count < 0, errno != EINTR {
                // The loop cannot wait any more: its connections end now rather than stay
                // open with nobody serving them.
                for connection in Array(connections.values) { connection.close() }
                break
            }
            var again = ready
            ready.removeAll(keepingCapacity: true)
            for index in 0..<max(0, Int(count)) {
                let descriptor = events[index].data.fd
                let flags = events[index].events
                if descriptor == shared.listener {
                    acceptConnections()
                } else if descriptor == -1 {
                    // Woken: a stop, or newcomers handed over.
                    beginDrain()
                    for newcomer in handedOver.withLock({ state in
                        defer { state.newcomers.removeAll() }
                        return state.newcomers
                    }) {
                        admit(newcomer, mayHandOver: false)
                    }
                } else if let connection = connections[descriptor] {
                    if connection.handle(events: flags) { ready.append(connection) }
                    again.removeAll { $0 === connection }
                }
            }
            for connection in again where connection.handle(events: EPOLLIN.rawValue) {
                ready.append(connection)
            }
            if count > 0 || !again.isEmpty { shared.roundEnded?() }
            let now = Self.now()
            if let paused = acceptPausedUntil, now >= paused, drainDeadline == nil {
                acceptPausedUntil = nil
                watch(shared.listener, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue, add: true)
            }
            if now - lastSweep >= .milliseconds(250) {
                lastSweep = now
                for connection in Array(connections.values) { connection.closeIfTimedOut(now: now) }
            }
            if let drainDeadline {
                if connections.isEmpty { break }
                if now >= drainDeadline {
                    for connection in Array(connections.values) { connection.close() }
                    break
                }
            }
        }
        // A newcomer handed over as the loop ended is closed, not leaked.
        let left = handedOver.withLock { state in
            state.ended = true
            defer { state.newcomers.removeAll() }
            return state.newcomers
        }
        for newcomer in left { refuse(newcomer) }
    }

    /// Takes a newcomer the sibling could not make room for; admitted on this loop's thread.
    private func adopt(_ descriptor: Int32) {
        let taken = handedOver.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.newcomers.append(descriptor)
            return true
        }
        guard taken else { return refuse(descriptor) }
        poller.wakeUp()
    }

    /// Closes a newcomer there is no room for, and counts it.
    private func refuse(_ descriptor: Int32) {
        shared.counters.refused.add(1, ordering: .relaxed)
        close(descriptor)
    }

    private func beginDrain() {
        guard drainDeadline == nil, stopping.load(ordering: .acquiring) else { return }
        if acceptPausedUntil == nil { poller.forget(shared.listener) }
        drainDeadline = Self.now() + shared.limits.drainTimeout
        for connection in Array(connections.values) { connection.goAway() }
    }

    private func acceptConnections() {
        while drainDeadline == nil, acceptPausedUntil == nil {
            let descriptor = pushseal_accept_nonblocking(shared.listener)
            guard descriptor >= 0 else {
                switch errno {
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors or memory: the pending connection stays in the
                    // backlog, so the listener stays readable and retrying at once would
                    // spin. Pause, as nginx does, and count it.
                    shared.counters.acceptPauses.add(1, ordering: .relaxed)
                    acceptPausedUntil = Self.now() + shared.limits.acceptPause
                    poller.forget(shared.listener)
                default:
                    break
                }
                return
            }
            admit(descriptor, mayHandOver: true)
        }
    }

    /// This loop's connections, as the eviction policy sees them (numbered by descriptor).
    private var evictionCandidates: [ConnectionEviction.Candidate] {
        connections.map { descriptor, connection in
            ConnectionEviction.Candidate(
                number: Int(descriptor), isPending: connection.isPending, acceptedAt: connection.acceptedAt,
                idleSince: connection.isIdle ? connection.idleSince : nil)
        }
    }

    /// Runs a newcomer here, within the cap. At the cap a connection of this loop is closed to
    /// make room, so idle clients cannot lock out working ones: the oldest that is not yet
    /// HTTP/2 (a handshake under way, no preface: it has done no work), else the longest-idle
    /// HTTP/2 one (GOAWAY first). With none to close here, the sibling loop is asked once (it
    /// may hold every idle connection); with none there either, the newcomer is refused and
    /// counted. Not-yet-HTTP/2 connections also have a cap of their own, a quarter of the
    /// whole, past which the oldest of them gives way even below the cap.
    private func admit(_ descriptor: Int32, mayHandOver: Bool) {
        if drainDeadline != nil { return refuse(descriptor) }
        if let oldest = ConnectionEviction.pendingVictim(among: evictionCandidates, connectionLimit: shared.connectionLimit) {
            shared.counters.evicted.add(1, ordering: .relaxed)
            connections[Int32(oldest.number)]?.goAwayAndClose()
        }
        if shared.openConnections.add(1, ordering: .relaxed).newValue > shared.connectionLimit {
            if let victim = ConnectionEviction.victim(among: evictionCandidates) {
                shared.counters.evicted.add(1, ordering: .relaxed)
                connections[Int32(victim.number)]?.goAwayAndClose()
            } else {
                shared.openConnections.subtract(1, ordering: .relaxed)
                if mayHandOver, let sibling, sibling !== self {
                    sibling.adopt(descriptor)
                } else {
                    refuse(descriptor)
                }
                return
            }
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        guard let connection = Connection(descriptor: descriptor, number: shared.nextConnection(), loop: self) else {
            shared.openConnections.subtract(1, ordering: .relaxed)
            close(descriptor)
            return
        }
        connections[descriptor] = connection
        watch(descriptor, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, add: true)
        connection.start()
    }

    /// The server's one clock, for timeouts.
    static func now() -> MonotonicClock.Instant {
        MonotonicClock.system.now
    }
}
