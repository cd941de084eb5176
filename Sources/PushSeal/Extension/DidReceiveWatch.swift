import Locking
import MonotonicTime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Watches the `didReceive` calls in progress, so a deadline passes on time even while an
/// extension blocks inside one.
///
/// Most extensions answer inside `didReceive`; a Dispatch timer per notification would cost
/// every one of them a timer set-up, a wake-up of Dispatch's manager thread and syscalls.
/// Instead each call is noted here (a lock and a small array, no syscall) and one thread of
/// the watch's own sleeps until the earliest noted deadline. Deadlines are noted in the
/// order notifications are taken and all have the same budget, so a new one is never
/// earlier than the one the thread waits for, and traffic wakes it about once per budget.
/// Once no call is in progress and the last deadline has passed, the thread ends; the next
/// call starts another. So a runner's watch costs no thread while it is idle, and none
/// after the runner is gone.
final class DidReceiveWatch: @unchecked Sendable {
    private struct Call {
        let id: Int
        let deadline: MonotonicClock.Instant
        let expire: @Sendable () -> Void
    }

    // Guarded by `guarded`; the thread sleeps on it until a deadline.
    private var calls: [Call] = []
    private var latestDeadline = MonotonicClock.Instant(nanoseconds: 0)
    private var running = false
    private let guarded = ConditionLock()
    private let clock: MonotonicClock

    /// - Parameter clock: the runner's clock, which deadlines are read in.
    init(clock: MonotonicClock) {
        self.clock = clock
    }

    /// Notes a `didReceive` call whose deadline is `deadline` by the watch's clock; `expire`
    /// runs, on the watch's thread, if the call is still in progress then.
    func begin(id: Int, deadline: MonotonicClock.Instant, expire: @escaping @Sendable () -> Void) {
        lock()
        calls.append(Call(id: id, deadline: deadline, expire: expire))
        latestDeadline = max(latestDeadline, deadline)
        // A running thread waits for a deadline no later than this one: no need to wake it.
        if !running {
            running = true
            // Named, so a leak of them would show in top, perf and /proc.
            OwnThread.start(named: "deadline-watch") { [self] in run() }
        }
        unlock()
    }

    /// Whether the watch's thread is alive: from the first call noted until the last
    /// deadline has passed.
    var isWatching: Bool {
        lock()
        defer { unlock() }
        return running
    }

    /// The call returned; its deadline is no longer this watch's concern.
    func end(id: Int) {
        lock()
        if let index = calls.lastIndex(where: { $0.id == id }) { calls.remove(at: index) }
        unlock()
    }

    private func run() {
        lock()
        while true {
            let now = clock.now
            let due = calls.filter { $0.deadline <= now }
            if !due.isEmpty {
                calls.removeAll { $0.deadline <= now }
                unlock()
                due.forEach { $0.expire() }
                lock()
                continue
            }
            if let earliest = calls.map(\.deadline).min() {
                wait(until: earliest)
            } else if latestDeadline > now {
                // Calls come and go: stay on watch until the last one's deadline.
                wait(until: latestDeadline)
            } else {
                // Nothing to watch: the thread ends, and `begin` starts another when needed.
                running = false
                unlock()
                return
            }
        }
    }

    /// Sleeps until `deadline` by the watch's clock, or a wake-up: the time left, counted on
    /// the system's monotonic clock that the condition waits on.
    private func wait(until deadline: MonotonicClock.Instant) {
        guarded.wait(untilMonotonicNanoseconds: (MonotonicClock.system.now + clock.remaining(until: deadline)).nanoseconds)
    }

    private func lock() { guarded.lock() }
    private func unlock() { guarded.unlock() }
}
