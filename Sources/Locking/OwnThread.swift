import CSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way pushseal starts a thread of its own: for work that blocks by design (a
/// child's pipes, `sigwait`, an event loop's `epoll_wait`), so it never holds up a Dispatch
/// worker. Every such thread is named, so top, perf and /proc tell them apart.
package enum OwnThread {
    /// Runs `body` on a new detached thread with a small stack (these threads read, write
    /// and wait, nothing more). A thread that cannot be made is a resource error the
    /// process cannot go on without.
    package static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        _ = make(named: name, stackSize: 256 * 1024, detached: true, body)
    }

    /// Runs `body` on a new joinable thread with the default stack (an event loop), and
    /// returns it for `pthread_join`.
    package static func startJoinable(named name: String, _ body: @escaping () -> Void) -> pthread_t {
        make(named: name, stackSize: nil, detached: false, body)
    }

    private static func make(named name: String, stackSize: Int?, detached: Bool, _ body: @escaping () -> Void) -> pthread_t {
        let context = Unmanaged.passRetained(Work(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        if detached { pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
        let rc = pthread_create(
            &thread, &attributes,
            { context in
                let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
                pushseal_name_thread(work.name)
                work.body()
                return nil
            }, context)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        return thread
    }

    private final class Work {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
