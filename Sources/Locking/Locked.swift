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
/// A copy shares the value and the lock (it is a handle, as a class reference would be).
/// The value and its mutex live in one heap object, one allocation: the receiver makes a
/// few of these per notification.
///
/// Inlinable, so that the modules above specialise it for their values instead of looking
/// up generic metadata on every lock taken on a hot path. Public, not `package`: Swift 6.3
/// inlines an `@inlinable package` function into another module, but not the members of an
/// `@inlinable package` generic type.
public struct Locked<Value: Sendable>: @unchecked Sendable {
    @usableFromInline let storage: LockedStorage<Value>

    /// Inlinable, with `make`: a caller specialises them and finds the storage's class
    /// metadata in its own cache, instead of the runtime's generic lookup on every lock made
    /// (the receiver makes two per notification).
    @inlinable
    public init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with the value while holding the lock.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, mutex in
            try PthreadMutex.withLock(mutex) { try body(&value.pointee) }
        }
    }

    /// Runs `body` only if the lock is free now; nil when another thread holds it. For a
    /// path that must never wait (the second stop signal).
    @inlinable
    public func withLockIfAvailable<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
        try storage.withUnsafeMutablePointers { value, mutex in
            try PthreadMutex.withLockIfAvailable(mutex) { try body(&value.pointee) }
        }
    }
}

/// `Locked`'s heap object: the value as the header, the mutex in the tail, so its address
/// is stable for the object's life, as pthread requires.
@usableFromInline
final class LockedStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    @inlinable
    static func make(_ value: Value) -> LockedStorage {
        let storage = unsafeDowncast(create(minimumCapacity: 1) { _ in value }, to: LockedStorage.self)
        storage.withUnsafeMutablePointerToElements { PthreadMutex.initialize($0) }
        return storage
    }

    @inlinable
    deinit {
        withUnsafeMutablePointerToElements { PthreadMutex.destroy($0) }
    }
}

/// The checked pthread calls `Locked` and `Lock` share.
@usableFromInline
enum PthreadMutex {
    @usableFromInline
    static func initialize(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
    }

    @usableFromInline
    static func destroy(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        let rc = pthread_mutex_destroy(mutex)
        precondition(rc == 0, "pthread_mutex_destroy failed: \(rc)")
    }

    @inlinable
    static func withLock<Result>(_ mutex: UnsafeMutablePointer<pthread_mutex_t>, _ body: () throws -> Result) rethrows -> Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "pthread_mutex_lock failed: \(locked)")
        defer {
            let unlocked = pthread_mutex_unlock(mutex)
            precondition(unlocked == 0, "pthread_mutex_unlock failed: \(unlocked)")
        }
        return try body()
    }

    @inlinable
    static func withLockIfAvailable<Result>(_ mutex: UnsafeMutablePointer<pthread_mutex_t>, _ body: () throws -> Result) rethrows -> Result? {
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

/// A pthread mutex that guards no value, for code that only needs one thing at a time
/// (a reload, an output stream). `Locked(())` would do the same, but ThreadSanitizer sees
/// the empty value's accesses outside the lock and reports a race that is not there.
public final class Lock: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        PthreadMutex.initialize(mutex)
    }

    deinit {
        PthreadMutex.destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` while holding the lock.
    @inlinable
    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        try PthreadMutex.withLock(mutex, body)
    }

    /// Runs `body` only if the lock is free now; nil when another thread holds it.
    @inlinable
    public func withLockIfAvailable<Result>(_ body: () throws -> Result) rethrows -> Result? {
        try PthreadMutex.withLockIfAvailable(mutex, body)
    }
}
