import Dispatch
import Locking
import MonotonicTime
import PushSeal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `receive`'s records on their way to stdout, written by a thread of their own, so no
/// thread that makes a record (an HTTP/2 loop, a delivering thread, the runner's deadline
/// timers) ever waits for stdout's reader: every input (files, stdin, the spool folder and
/// the listener) goes through it.
///
/// Bounded by bytes waiting. Past `byteLimit` the listener is told there is no room (it
/// answers new notifications 503), records of refused requests are dropped and counted,
/// and records already promised (notifications answered 200) are still kept; those are
/// bounded by the listener's pending limit. Readers of files and stdin wait for room
/// (`waitForRoom`) before taking the next input, so the backlog stays near the bound there
/// too, and only the reading thread waits.
final class RecordOutput: RecordSink {
    /// Called on the writer's thread once a record's bytes are written (nil), or with why
    /// they never will be.
    typealias Written = @Sendable (String?) -> Void

    private struct State: Sendable {
        var pending: [UInt8] = []
        /// What to call once `pending` is written.
        var afterPending: [Written] = []
        /// Records in `pending` plus those being written.
        var waiting = 0
        var waitingBytes = 0
        var dropped = 0
        var written = 0
        var failure: String?
        var writerIdle = false
        var tally = StatusTally()
    }

    /// Record bytes waiting for stdout, at most, past which only kept records are taken.
    let byteLimit: Int

    private let descriptor: Int32
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    private let render: @Sendable (DeliveryRecord) -> (bytes: [UInt8], status: String)
    private let failed: @Sendable () -> Void

    /// - Parameters:
    ///   - render: the record's bytes (newline included) and its status, on the caller's thread.
    ///   - failed: called once, on the writer's thread, when the descriptor cannot be written.
    init(
        descriptor: Int32, byteLimit: Int = ListenerMemoryPlan.defaults.recordBytes,
        render: @escaping @Sendable (DeliveryRecord) -> (bytes: [UInt8], status: String),
        failed: @escaping @Sendable () -> Void
    ) {
        self.descriptor = descriptor
        self.byteLimit = byteLimit
        self.render = render
        self.failed = failed
        OwnThread.start(named: "records") { [self] in writeUntilFailed() }
    }

    var hasRoom: Bool {
        state.withLock { $0.failure == nil && $0.waitingBytes < byteLimit }
    }

    func emit(_ record: DeliveryRecord, promised: Bool) {
        emit(rendered: render(record), keep: promised)
    }

    /// Takes a rendered record, never waiting. A kept record is written however long the
    /// backlog; any other is dropped and counted when there is no room. `then` runs once the
    /// bytes are written, or at once when stdout has failed.
    func emit(rendered: (bytes: [UInt8], status: String), keep: Bool = true, then: Written? = nil) {
        let (wakeWriter, failure) = state.withLock { state -> (Bool, String?) in
            guard state.failure == nil, keep || state.waitingBytes < byteLimit else {
                state.dropped += 1
                return (false, state.failure ?? "no room")
            }
            state.pending.append(contentsOf: rendered.bytes)
            if let then { state.afterPending.append(then) }
            state.waiting += 1
            state.waitingBytes += rendered.bytes.count
            state.tally.add(rendered.status)
            guard state.writerIdle else { return (false, nil) }
            state.writerIdle = false
            return (true, nil)
        }
        if wakeWriter { wake.signal() }
        if let failure { then?(failure) }
    }

    /// Waits, on a reading thread, while the records waiting are past the bound; returns at
    /// once when stdout has failed or `stop` is requested.
    func waitForRoom(stop: StopRequest) {
        while state.withLock({ $0.failure == nil && $0.waitingBytes >= byteLimit }), !stop.isRequested {
            usleep(2_000)
        }
    }

    /// Records written, per status.
    var tally: [String: Int] { state.withLock { $0.tally.byStatus } }

    /// Waits at most `limit` (nil: as long as it takes) for every record to be written.
    /// Returns the records that were not (still waiting, or dropped when there was no room)
    /// and why stdout failed, if it did.
    func finish(within limit: Duration?) -> (unwritten: Int, failure: String?) {
        let deadline = limit.map { MonotonicClock.system.now + $0 }
        while true {
            let (waiting, dropped, failure) = state.withLock { ($0.waiting, $0.dropped, $0.failure) }
            if waiting == 0 || failure != nil || deadline.map({ MonotonicClock.system.now >= $0 }) == true {
                return (waiting + dropped, failure)
            }
            usleep(5_000)
        }
    }

    private func writeUntilFailed() {
        // Two buffers take turns: records go into one while the other is written, so a
        // batch costs no allocation, however large the backlog grew.
        var batch: [UInt8] = []
        var afterBatch: [Written] = []
        while true {
            let count = state.withLock { state -> Int in
                if state.pending.isEmpty {
                    state.writerIdle = true
                    return 0
                }
                swap(&batch, &state.pending)
                swap(&afterBatch, &state.afterPending)
                return state.waiting
            }
            if count == 0 {
                wake.wait()
                continue
            }
            do {
                try FileIO.writeAll(descriptor, batch)
                state.withLock { state in
                    state.waiting -= count
                    state.waitingBytes -= batch.count
                    state.written += count
                }
                batch.removeAll(keepingCapacity: true)
                for written in afterBatch { written(nil) }
                afterBatch.removeAll(keepingCapacity: true)
            } catch {
                let failure = StdoutReader.failure(error)
                let left = state.withLock { state in
                    state.failure = failure
                    defer { state.afterPending.removeAll() }
                    return state.afterPending
                }
                for written in afterBatch + left { written(failure) }
                failed()
                return
            }
            // Under load, a short pause lets records gather into one write, instead of one
            // wake-up per record; an idle writer still starts on the first record at once.
            usleep(500)
        }
    }
}

/// Records per status. A run sees a handful of statuses, each a short string: finding one
/// by comparison costs less than hashing it, and this is done for every record.
struct StatusTally {
    private var counts: [(status: String, count: Int)] = []

    mutating func add(_ status: String) {
        if let index = counts.firstIndex(where: { $0.status == status }) {
            counts[index].count += 1
        } else {
            counts.append((status, 1))
        }
    }

    var byStatus: [String: Int] {
        Dictionary(uniqueKeysWithValues: counts.map { ($0.status, $0.count) })
    }
}
