import Locking
import MonotonicTime
import PushSeal
import PushSealReceiver

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM for a long-running command: the first asks for a clean stop, the
/// second (of either) forces one, unless it comes within `together` of the first: coreutils'
/// `timeout` signals the command and then its whole group, so two SIGTERMs arrive at once,
/// and two signals arriving together are one request to stop.
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
        OwnThread.start(named: "stop-signals") {
            var set = StopSignals.handled
            var first: MonotonicClock.Instant?
            while true {
                var number: Int32 = 0
                guard sigwait(&set, &number) == 0 else { continue }
                let now = MonotonicClock.system.now
                guard let began = first else {
                    first = now
                    handlers.first(number)
                    continue
                }
                // The same request, sent twice (to the process and to its group).
                if now - began < StopSignals.together { continue }
                handlers.second(number)
            }
        }
    }

    /// Writes `line` to stderr with one write(2), taking no lock: for a forced exit, when a
    /// thread holding the console's lock may be stuck on output.
    static func say(_ line: String) {
        var line = line
        line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }

    /// How long after the first signal another is taken as the same request to stop.
    static let together = Duration.seconds(1)

    /// Unblocks both signals in the calling thread; a signal still pending is then taken
    /// by the waiting thread or acts as usual.
    func restore() {
        var set = Self.handled
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}

/// Ends the process now, from any thread: flushes what stdout takes without waiting, and
/// waits for no lock another thread may hold (one may be stuck writing to a stalled reader).
func exitAtOnce(_ status: Int32, console: Console) -> Never {
    console.flushIfFree()
    _exit(status)
}

/// SIGINT and SIGTERM for a command that streams its input into its output (`encrypt
/// --batch`, `decrypt`): the first stops the reading, what was read is finished and written,
/// and one line says where it stopped (exit 130 or 143); a second ends the process at once.
/// Like `StopSignals`, made first thing, before any other thread starts.
final class StreamStop: Sendable {
    let request: StopRequest
    private let signal: Locked<Int32?>
    private let signals: StopSignals

    init(console: Console) throws {
        let request = try StopRequest()
        let signal = Locked<Int32?>(nil)
        self.request = request
        self.signal = signal
        signals = StopSignals(
            first: { number in
                signal.withLock { $0 = number }
                request.request()
            },
            second: { number in
                StopSignals.say("error: stopped at once by a second \(signalName(number)): work in progress was not written\n")
                exitAtOnce(128 + number, console: console)
            })
    }

    deinit { signals.restore() }

    /// After the work is written: nil when no signal came; else the line that says where it
    /// stopped (`done`: what was finished), and 130 or 143.
    func ending(done: String, console: Console) -> ExitStatus? {
        guard let number = signal.withLock({ $0 }) else { return nil }
        console.diagnostic("stopped by \(signalName(number)): \(done); the rest of the input was not read")
        return number == SIGINT ? .interrupted : .terminated
    }
}

private func signalName(_ number: Int32) -> String { number == SIGINT ? "SIGINT" : "SIGTERM" }
