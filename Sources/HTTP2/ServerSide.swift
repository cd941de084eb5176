internal import CNGHTTP2
internal import CSystem
import Locking
import MonotonicTime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The server's part of one event-loop thread: accepts connections from the shared
/// listening socket (each loop waits on it with EPOLLEXCLUSIVE, so the kernel hands each new
/// connection to one loop), admits them within the cap, times them out, and drains them on
/// stop. The loop itself (`EventLoop`) is the client's too.
final class ServerSide: LoopSide, @unchecked Sendable {
    // Unchecked: the drain deadline, the accept pause and the callbacks are touched only on
    // the loop's own thread; other threads call `start`, `stop`, `join` and `adopt`, which
    // use the atomic flag, the locked hand-over list and the loop's eventfd.

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

    typealias Connection = ServerConnection

    let shared: Shared
    let loop: EventLoop<ServerSide>
    private let stopping = Atomic<Bool>(false)
    private var drainDeadline: MonotonicClock.Instant?
    /// Accepting is paused until then: the process ran out of descriptors.
    private var acceptPausedUntil: MonotonicClock.Instant?
    private var lastSweep = ServerSide.now()
    /// The loop a newcomer is handed to when this one is at the cap with no idle connection
    /// of its own to close (the kernel may have given one loop every connection). Set
    /// before the threads start; weak, as the server owns its loops.
    weak var sibling: ServerSide?
    /// Newcomers handed over by the sibling, admitted on this loop's thread; once the loop
    /// has ended, a newcomer is refused at the door instead.
    private let handedOver = Locked<(newcomers: [Int32], ended: Bool)>(([], false))
    /// The server session's callbacks, made once per loop; each finds its connection in
    /// `user_data`.
    let callbacks: OpaquePointer

    init(shared: Shared) throws(HTTP2ServerError) {
        self.shared = shared
        do {
            loop = try EventLoop(scratchBytes: 32 * 1_024)
        } catch {
            throw HTTP2ServerError(.resources, error.message, errno: error.errno)
        }
        // Made once the init can no longer fail: a deinit does not run for one that did.
        callbacks = ServerConnection.makeCallbacks()
        loop.watch(shared.listener, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue, add: true)
    }

    deinit {
        nghttp2_session_callbacks_del(callbacks)
    }

    func start() {
        loop.start(named: "http2-loop", side: self)
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        loop.wakeUp()
    }

    func join() {
        loop.join()
    }

    // MARK: - The loop's calls

    func waitMilliseconds() -> Int32 {
        acceptPausedUntil == nil ? 250 : 20
    }

    /// A stop, or newcomers handed over.
    func woken() {
        beginDrain()
        for newcomer in handedOver.withLock({ state in
            defer { state.newcomers.removeAll() }
            return state.newcomers
        }) {
            admit(newcomer, mayHandOver: false)
        }
    }

    func ready(_ descriptor: Int32, events: UInt32) {
        if descriptor == shared.listener { acceptConnections() }
    }

    func roundEnded(busy: Bool) -> Bool {
        if busy { shared.roundEnded?() }
        let now = Self.now()
        if let paused = acceptPausedUntil, now >= paused, drainDeadline == nil {
            acceptPausedUntil = nil
            loop.watch(shared.listener, events: EPOLLIN.rawValue | EPOLLEXCLUSIVE.rawValue, add: true)
        }
        if now - lastSweep >= .milliseconds(250) {
            lastSweep = now
            for connection in Array(loop.connections.values) { connection.closeIfTimedOut(now: now) }
        }
        if let drainDeadline {
            if loop.connections.isEmpty { return false }
            if now >= drainDeadline {
                for connection in Array(loop.connections.values) { connection.close() }
                return false
            }
        }
        return true
    }

    func loopEnded(failed: Bool) {
        if failed {
            // The loop cannot wait any more: its connections end now rather than stay open
            // with nobody serving them.
            for connection in Array(loop.connections.values) { connection.close() }
        }
        // A newcomer handed over as the loop ended is closed, not leaked.
        let left = handedOver.withLock { state in
            state.ended = true
            defer { state.newcomers.removeAll() }
            return state.newcomers
        }
        for newcomer in left { refuse(newcomer) }
    }

    // MARK: - Admission

    /// Takes a newcomer the sibling could not make room for; admitted on this loop's thread.
    private func adopt(_ descriptor: Int32) {
        let taken = handedOver.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.newcomers.append(descriptor)
            return true
        }
        guard taken else { return refuse(descriptor) }
        loop.wakeUp()
    }

    /// Closes a newcomer there is no room for, and counts it.
    private func refuse(_ descriptor: Int32) {
        shared.counters.refused.add(1, ordering: .relaxed)
        close(descriptor)
    }

    private func beginDrain() {
        guard drainDeadline == nil, stopping.load(ordering: .acquiring) else { return }
        if acceptPausedUntil == nil { loop.forget(shared.listener) }
        drainDeadline = Self.now() + shared.limits.drainTimeout
        for connection in Array(loop.connections.values) { connection.goAway() }
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
                    loop.forget(shared.listener)
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
        loop.connections.map { descriptor, connection in
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
            loop.connections[Int32(oldest.number)]?.goAwayAndClose()
        }
        if shared.openConnections.add(1, ordering: .relaxed).newValue > shared.connectionLimit {
            if let victim = ConnectionEviction.victim(among: evictionCandidates) {
                shared.counters.evicted.add(1, ordering: .relaxed)
                loop.connections[Int32(victim.number)]?.goAwayAndClose()
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
        guard let connection = ServerConnection(descriptor: descriptor, number: shared.nextConnection(), side: self) else {
            shared.openConnections.subtract(1, ordering: .relaxed)
            close(descriptor)
            return
        }
        loop.register(descriptor, connection, events: Transport.readEvents)
        connection.start()
    }

    /// The server's one clock, for timeouts.
    static func now() -> MonotonicClock.Instant {
        MonotonicClock.system.now
    }
}
