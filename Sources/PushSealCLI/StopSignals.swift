#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PushSeal

/// SIGINT and SIGTERM for a long-running command: the first asks for a clean stop, the
/// second (of either) forces one.
///
/// Both signals are blocked in the calling thread, so every thread started after it
/// inherits the block, and one thread of its own takes them with `sigwait`: the handlers
/// then run as ordinary code, free to take locks. Create it before any other thread starts
/// (first thing in a command); `restore()` unblocks them again. Extension programs are
/// spawned with an empty mask, so they still get SIGTERM when the receiver sends it.
final class StopSignals: Sendable {
    private struct Handlers: Sendable {
        let first: @Sendable (Int32) -> Void
        let second: @Sendable (Int32) -> Void
    }

    private static let handled: sigset_t = {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }()

    init(first: @escaping @Sendable (Int32) -> Void, second: @escaping @Sendable (Int32) -> Void) {
        var set = Self.handled
        let rc = pthread_sigmask(SIG_BLOCK, &set, nil)
        precondition(rc == 0, "pthread_sigmask failed: \(rc)")
        let handlers = Handlers(first: first, second: second)
        OwnThread.start {
            var set = StopSignals.handled
            var received = 0
            while true {
                var number: Int32 = 0
                guard sigwait(&set, &number) == 0 else { continue }
                received += 1
                if received == 1 { handlers.first(number) } else { handlers.second(number) }
            }
        }
    }

    /// Unblocks both signals in the calling thread; a signal still pending is then taken
    /// by the waiting thread or acts as usual.
    func restore() {
        var set = Self.handled
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
