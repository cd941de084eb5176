import Dispatch
import Locking
import PushSeal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The extension programs of one receiver: at most `limit` run at once, and the receiver
/// can wait until every one of them has been reaped, so none outlives it.
package final class ExtensionProcesses: Sendable {
    private struct State: Sendable {
        var running = 0
        var queued: [@Sendable () -> Void] = []
        var live: [pid_t: ChildProcess] = [:]
    }

    /// How many programs may run at once; more notifications wait for a slot.
    package let limit: Int
    private let state = Locked(State())
    private let alive = DispatchGroup()

    package init(limit: Int) {
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

    func started(_ child: ChildProcess) {
        alive.enter()
        state.withLock { $0.live[child.pid] = child }
    }

    /// The process was reaped: its slot is free.
    func finished(_ child: ChildProcess) {
        state.withLock { _ = $0.live.removeValue(forKey: child.pid) }
        alive.leave()
        release()
    }

    /// Waits until every program started so far has been reaped.
    package func waitUntilAllReaped() {
        alive.wait()
    }

    /// SIGKILLs every program (and its process group) not yet reaped: the last resort when
    /// the receiver is forced to stop at once. Never waits for a lock (each is only ever held
    /// for an update, a signal or the reap of a zombie, so a few tries find it free); false
    /// if one could not be had.
    @discardableResult
    package func killAll() -> Bool {
        for _ in 0..<100 {
            if let live = state.withLockIfAvailable({ Array($0.live.values) }) {
                return live.map { $0.signalWithoutWaiting(SIGKILL) }.allSatisfy { $0 }
            }
            usleep(100)
        }
        return false
    }
}
