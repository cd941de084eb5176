internal import CNGHTTP2
import Locking
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What a loop thread serves: a connection of either side, found by its descriptor.
protocol LoopConnection: AnyObject {
    /// Handles readiness; true when input may remain that the read budget left unread.
    func handle(events: UInt32) -> Bool
}

/// What differs between the two sides of HTTP/2 on a loop thread: the server accepts and
/// evicts, the client queues requests and opens connections for them. The loop calls these
/// on its own thread only.
protocol LoopSide: AnyObject {
    associatedtype Connection: LoopConnection

    /// How long the next wait may last, in milliseconds, when no connection has input left.
    func waitMilliseconds() -> Int32
    /// Another thread woke the loop (`EventLoop.wakeUp`).
    func woken()
    /// A descriptor the side watches itself (the server's listening socket) is ready.
    func ready(_ descriptor: Int32, events: UInt32)
    /// After each round of I/O; `busy` when any connection was served. False ends the loop.
    func roundEnded(busy: Bool) -> Bool
    /// The loop has ended: `failed` when it could not wait any more (its connections are
    /// still open then, and nobody serves them).
    func loopEnded(failed: Bool)
}

/// One event-loop thread, the same for both sides: an epoll wait, each ready connection
/// served in turn, those whose read budget ran out with input left served again at once
/// after the others (so one flooding peer cannot hold the thread), then the side's own
/// round work. Connections reach it to watch and forget their sockets; other threads only
/// through `wakeUp`, `wakeUpIfWaiting`, `start` and `join`.
final class EventLoop<Side: LoopSide>: @unchecked Sendable {
    // Unchecked: `connections` and `ready` are touched only on the loop's own thread; other
    // threads use the poller's eventfd, the atomic flag and the thread handle, which is set
    // before the thread runs.
    /// The loop's epoll, eventfd and read buffer; transports watch their sockets through it.
    let poller: Poller
    /// The connections being served, by descriptor.
    private(set) var connections: [Int32: Side.Connection] = [:]
    /// Connections whose read budget ran out with input left: served again next round.
    private var ready: [Side.Connection] = []
    /// Set while the loop may block in epoll_wait: only then must a wake-up write the
    /// eventfd (a write per submitted request was a tenth of the sender's time).
    private let waiting = Atomic<Bool>(false)
    private var thread: pthread_t?

    /// Where reads land before nghttp2 takes them; one read runs at a time on a loop.
    var scratch: UnsafeMutableRawBufferPointer { poller.scratch }

    init(scratchBytes: Int) throws(Poller.Failure) {
        poller = try Poller(scratchBytes: scratchBytes)
    }

    /// Runs `side` on a new thread named `name`, until its `roundEnded` says stop.
    func start(named name: String, side: Side) {
        thread = OwnThread.startJoinable(named: name) { self.run(side) }
    }

    func join() {
        guard let thread else { return }
        pthread_join(thread, nil)
        self.thread = nil
    }

    /// From any thread: the loop's next wait returns at once, and the side hears `woken`.
    func wakeUp() {
        poller.wakeUp()
    }

    /// From any thread, after publishing work the side looks for before each wait: wakes
    /// the loop only when it may be blocked in (or about to enter) its wait.
    func wakeUpIfWaiting() {
        if waiting.exchange(false, ordering: .acquiringAndReleasing) { poller.wakeUp() }
    }

    /// Serves `connection` on `descriptor`, watched for `events` from now.
    func register(_ descriptor: Int32, _ connection: Side.Connection, events: UInt32) {
        connections[descriptor] = connection
        poller.watch(descriptor, events: events, add: true)
    }

    /// Watches `descriptor` for `events` (added when `add`, else changed).
    func watch(_ descriptor: Int32, events: UInt32, add: Bool = false) {
        poller.watch(descriptor, events: events, add: add)
    }

    /// Stops watching `descriptor` and serving whatever was registered on it.
    func forget(_ descriptor: Int32) {
        poller.forget(descriptor)
        if let gone = connections.removeValue(forKey: descriptor) {
            ready.removeAll { $0 === gone }
        }
    }

    private func run(_ side: Side) {
        var events = [epoll_event](repeating: epoll_event(), count: 128)
        var failed = false
        while true {
            // Published before the side looks for work, so a wake-up after that look sees it.
            waiting.store(true, ordering: .sequentiallyConsistent)
            let timeout = ready.isEmpty ? side.waitMilliseconds() : 0
            let count = poller.wait(&events, timeout: timeout)
            waiting.store(false, ordering: .sequentiallyConsistent)
            if count < 0, errno != EINTR {
                failed = true
                break
            }
            var again = ready
            ready.removeAll(keepingCapacity: true)
            for index in 0..<max(0, Int(count)) {
                let descriptor = events[index].data.fd
                let flags = events[index].events
                if let connection = connections[descriptor] {
                    if connection.handle(events: flags) { ready.append(connection) }
                    again.removeAll { $0 === connection }
                } else if descriptor == -1 {
                    side.woken()
                } else {
                    side.ready(descriptor, events: flags)
                }
            }
            // Input left over from the last round, after everyone who was ready this round.
            for connection in again where connection.handle(events: EPOLLIN.rawValue) {
                ready.append(connection)
            }
            guard side.roundEnded(busy: count > 0 || !again.isEmpty) else { break }
        }
        side.loopEnded(failed: failed)
    }
}
