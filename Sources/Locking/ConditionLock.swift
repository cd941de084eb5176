#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with a condition that waits on the monotonic clock (immune to the wall
/// clock being set): for a thread that sleeps until a deadline or a wake-up. Like `Locked`,
/// it is a pthread mutex, so ThreadSanitizer sees it.
package final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        Self.check(pthread_condattr_init(&attributes), "pthread_condattr_init")
        Self.check(pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC), "pthread_condattr_setclock")
        Self.check(pthread_cond_init(condition, &attributes), "pthread_cond_init")
        pthread_condattr_destroy(&attributes)
        Self.check(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() { Self.check(pthread_mutex_lock(mutex), "pthread_mutex_lock") }
    package func unlock() { Self.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }

    /// With the lock held: sleeps until `nanoseconds` on CLOCK_MONOTONIC or a `signal`,
    /// holding the lock again when it returns.
    package func wait(untilMonotonicNanoseconds nanoseconds: UInt64) {
        var time = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        let rc = pthread_cond_timedwait(condition, mutex, &time)
        precondition(rc == 0 || rc == ETIMEDOUT || rc == EINTR, "pthread_cond_timedwait failed: \(rc)")
    }

    /// Wakes a waiting thread, if one waits.
    package func signal() { Self.check(pthread_cond_signal(condition), "pthread_cond_signal") }

    /// Wakes every waiting thread: for a condition that threads wait on for different things.
    package func broadcast() { Self.check(pthread_cond_broadcast(condition), "pthread_cond_broadcast") }

    /// With the lock held: sleeps until a `signal` or `broadcast`, holding the lock again when
    /// it returns.
    package func wait() { Self.check(pthread_cond_wait(condition, mutex), "pthread_cond_wait") }

    /// Runs `body` with the lock held.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    private static func check(_ rc: Int32, _ call: StaticString) {
        precondition(rc == 0, "\(call) failed: \(rc)")
    }
}
