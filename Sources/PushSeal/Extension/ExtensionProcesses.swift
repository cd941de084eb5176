#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import SealCrypto

/// The extension programs of one receiver: at most `limit` run at once, and the receiver
/// can wait until every one of them has been reaped, so none outlives it.
public final class ExtensionProcesses: Sendable {
    private struct State: Sendable {
        var running = 0
        var queued: [@Sendable () -> Void] = []
        var live: Set<pid_t> = []
    }

    /// How many programs may run at once; more notifications wait for a slot.
    public let limit: Int
    private let state = Locked(State())
    private let alive = DispatchGroup()

    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `start` now if a slot is free, otherwise as soon as one is; `start` owns the
    /// slot and ends with `release()` or, after spawning, `finished(_:)`.
    func whenFree(_ start: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.running < limit else {
                state.queued.append(start)
                return false
            }
            state.running += 1
            return true
        }
        if now { start() }
    }

    /// Hands a slot back without having started a process in it.
    func release() {
        let next = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.queued.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.queued.removeFirst()
        }
        // The slot passes straight to the next waiter; off this stack, so a long queue of
        // cancelled starts cannot recurse.
        if let next { DispatchQueue.global().async(execute: next) }
    }

    func started(_ pid: pid_t) {
        alive.enter()
        state.withLock { _ = $0.live.insert(pid) }
    }

    /// The process was reaped: its slot is free.
    func finished(_ pid: pid_t) {
        state.withLock { _ = $0.live.remove(pid) }
        alive.leave()
        release()
    }

    /// Waits until every program started so far has been reaped.
    public func waitUntilAllReaped() {
        alive.wait()
    }

    /// SIGKILLs every program (and its process group) still running: the last resort when
    /// the receiver is forced to stop at once. Never waits for the lock (it is only ever
    /// held for a set update, so a few tries find it free); false if it could not be had.
    @discardableResult
    public func killAll() -> Bool {
        for _ in 0..<100 {
            if let live = state.withLockIfAvailable({ $0.live }) {
                for pid in live { kill(-pid, SIGKILL) }
                return true
            }
            usleep(100)
        }
        return false
    }
}
