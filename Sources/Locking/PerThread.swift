#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One instance of a class per thread, made on first use and released when the thread
/// ends: the way hot paths keep state (a cipher context, a random pool, a cache) that
/// would cost a lock, or cache-line traffic between cores, if it were shared.
package final class PerThread<Value: AnyObject>: @unchecked Sendable {
    // pthread keys are safe to use from any thread. A constant, so reading it on every
    // `get` needs no exclusivity check.
    private let key: pthread_key_t
    private let make: @Sendable () throws -> Value

    package init(_ make: @escaping @Sendable () throws -> Value) {
        self.make = make
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { stored in
            // Releasing needs no static type, so one C destructor serves every Value.
            guard let stored else { return }
            Unmanaged<AnyObject>.fromOpaque(stored).release()
        }
        // Keys run out only when a process makes over a thousand: a programming error.
        precondition(rc == 0, "pthread_key_create failed: \(rc)")
        self.key = key
    }

    /// This thread's instance.
    package func get() throws -> Value {
        if let stored = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(stored).takeUnretainedValue()
        }
        let value = try make()
        let stored = Unmanaged.passRetained(value)
        guard pthread_setspecific(key, stored.toOpaque()) == 0 else {
            // Out of memory for the slot: the value still serves this one call.
            stored.release()
            return value
        }
        return value
    }
}
