import CSystem
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

    // Guarded by `mutex`; the thread sleeps on `condition` until a deadline.
    private var calls: [Call] = []
    private var latestDeadline = MonotonicClock.Instant(nanoseconds: 0)
    private var running = false
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let clock: MonotonicClock

    /// - Parameter clock: the runner's clock, which deadlines are read in.
    init(clock: MonotonicClock) {
        self.clock = clock
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        check(pthread_condattr_init(&attributes), "pthread_condattr_init")
        // The wait is kept in the system's monotonic clock, immune to the wall clock being set.
        check(pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC), "pthread_condattr_setclock")
        check(pthread_cond_init(condition, &attributes), "pthread_cond_init")
        pthread_condattr_destroy(&attributes)
        check(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
    }

    deinit {
        // No thread runs now: a running one holds the watch.
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
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
            OwnThread.start { [self] in
                // Named, so a leak of them would show in top, perf and /proc.
                pushseal_name_thread("deadline-watch")
                run()
            }
        }
        unlock()
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
        let wakeAt = MonotonicClock.system.now + clock.remaining(until: deadline)
        var time = timespec(tv_sec: Int(wakeAt.nanoseconds / 1_000_000_000), tv_nsec: Int(wakeAt.nanoseconds % 1_000_000_000))
        let rc = pthread_cond_timedwait(condition, mutex, &time)
        precondition(rc == 0 || rc == ETIMEDOUT || rc == EINTR, "pthread_cond_timedwait failed: \(rc)")
    }

    private func lock() { check(pthread_mutex_lock(mutex), "pthread_mutex_lock") }
    private func unlock() { check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }

}

private func check(_ rc: Int32, _ call: StaticString) {
    precondition(rc == 0, "\(call) failed: \(rc)")
}
