#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A detached thread for work that blocks by design (a child's pipes, `sigwait`), so that
/// it never holds up a Dispatch worker.
package enum OwnThread {
    /// Runs `body` on a new thread; a thread that cannot be made is a programming or
    /// resource error the process cannot go on without.
    package static func start(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        // Small stacks: these threads read, write and wait, nothing more.
        pthread_attr_setstacksize(&attributes, 256 * 1024)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let rc = pthread_create(
            &thread, &attributes,
            { context in
                Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }

    private final class Work: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
