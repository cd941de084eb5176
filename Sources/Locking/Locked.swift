#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Sendable value guarded by a pthread mutex.
///
/// pushseal's shared state uses this rather than `Synchronization.Mutex`: on Linux that
/// one locks with raw futex calls, which ThreadSanitizer cannot see, so every guarded
/// access would be reported as a race and real races would drown in the noise. TSan
/// intercepts pthread mutexes, so the suite can run under `-sanitize=thread` meaningfully.
///
/// The value must itself be Sendable, since it is handed to whichever thread holds the
/// lock; that is what makes the `@unchecked` claim true. Every pthread call is checked: a
/// failing one means the mutex is corrupt, and going on would break the guarantee.
///
/// Inlinable, so that the modules above specialise it for their values instead of looking
/// up generic metadata on every call of a hot path.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    @usableFromInline let lock = Lock()
    @usableFromInline var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value while holding the lock.
    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }

    /// Runs `body` only if the lock is free now; nil when another thread holds it. For a
    /// path that must never wait (the second stop signal).
    @inlinable
    package func withLockIfAvailable<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
        try lock.withLockIfAvailable { try body(&value) }
    }
}

/// A pthread mutex that guards no value, for code that only needs one thing at a time
/// (a reload, an output stream). `Locked(())` would do the same, but ThreadSanitizer sees
/// the empty value's accesses outside the lock and reports a race that is not there.
package final class Lock: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
    }

    deinit {
        let rc = pthread_mutex_destroy(mutex)
        precondition(rc == 0, "pthread_mutex_destroy failed: \(rc)")
        mutex.deallocate()
    }

    /// Runs `body` while holding the lock.
    @inlinable
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "pthread_mutex_lock failed: \(locked)")
        defer {
            let unlocked = pthread_mutex_unlock(mutex)
            precondition(unlocked == 0, "pthread_mutex_unlock failed: \(unlocked)")
        }
        return try body()
    }

    /// Runs `body` only if the lock is free now; nil when another thread holds it.
    @inlinable
    package func withLockIfAvailable<Result>(_ body: () throws -> Result) rethrows -> Result? {
        let locked = pthread_mutex_trylock(mutex)
        guard locked == 0 else {
            precondition(locked == EBUSY, "pthread_mutex_trylock failed: \(locked)")
            return nil
        }
        defer {
            let unlocked = pthread_mutex_unlock(mutex)
            precondition(unlocked == 0, "pthread_mutex_unlock failed: \(unlocked)")
        }
        return try body()
    }
}
