#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One instance of a class per thread, made on first use and released when the thread
/// ends: the way hot paths keep state (a cipher context, a random pool, a cache) that
/// would cost a lock, or cache-line traffic between cores, if it were shared.
package final class PerThread<Value: AnyObject>: @unchecked Sendable {
    // Written once in init; pthread keys are safe to use from any thread.
    private var key = pthread_key_t()
    private let make: @Sendable () throws -> Value

    package init(_ make: @escaping @Sendable () throws -> Value) {
        self.make = make
        let rc = pthread_key_create(&key) { stored in
            // Releasing needs no static type, so one C destructor serves every Value.
            guard let stored else { return }
            Unmanaged<AnyObject>.fromOpaque(stored).release()
        }
        // Keys run out only when a process makes over a thousand: a programming error.
        precondition(rc == 0, "pthread_key_create failed: \(rc)")
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
