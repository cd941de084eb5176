#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import SealCrypto

/// SIGINT and SIGTERM for a long-running command: the first asks for a clean stop, the
/// second (of either) forces one. Handled on a Dispatch queue, so the handlers may do real
/// work; the process-wide dispositions are set here, in the executable, and put back by
/// `restore()`.
final class StopSignals {
    private let sources: [any DispatchSourceSignal]
    private let received = Locked(0)

    init(first: @escaping @Sendable () -> Void, second: @escaping @Sendable (Int32) -> Void) {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            // Ignored at the process level so only the Dispatch source sees it.
            signal(number, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        self.sources = sources
        for (index, number) in [SIGINT, SIGTERM].enumerated() {
            sources[index].setEventHandler { [received] in
                let count = received.withLock { count -> Int in
                    count += 1
                    return count
                }
                if count == 1 { first() } else { second(number) }
            }
            sources[index].resume()
        }
    }

    /// Cancels the handlers and gives both signals their default action back.
    func restore() {
        sources.forEach { $0.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
