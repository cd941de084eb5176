import Dispatch
import Locking
import MonotonicTime
import PushSeal
import PushSealReceiver

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
        /// Set by `finish` once every record is out: the writer thread then ends.
        var closing = false
        /// Set by the writer thread as it ends (closing, or stdout failed).
        var writerEnded = false
        /// Set by `finish` while it waits: the writer writes at once, without gathering.
        var finishing = false
        /// The writer is letting records gather after a write (see `gatherTime`).
        var gathering = false
        var tally = StatusTally()
    }

    /// Record bytes waiting for stdout, at most, past which only kept records are taken.
    let byteLimit: Int

    private let descriptor: Int32
    // One lock and one condition for everything that waits on the records: the writer (for
    // records), a reader (for room) and `finish` (for the last write). Each wait is woken by
    // the change it waits for, never by polling. `state` is read and changed only with
    // `guarded` held, which is what makes it safe to share.
    private nonisolated(unsafe) var state = State()
    private let guarded = ConditionLock()
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
        OwnThread.start(named: "records") { [self] in
            writeUntilDone()
            guarded.withLock {
                state.writerEnded = true
                guarded.broadcast()
            }
        }
    }

    var hasRoom: Bool {
        guarded.withLock { state.failure == nil && state.waitingBytes < byteLimit }
    }

    func emit(_ record: DeliveryRecord, promised: Bool) {
        emit(rendered: render(record), keep: promised)
    }

    /// Takes a rendered record, never waiting. A kept record is written however long the
    /// backlog; any other is dropped and counted when there is no room. `then` runs once the
    /// bytes are written, or at once when stdout has failed.
    func emit(rendered: (bytes: [UInt8], status: String), keep: Bool = true, then: Written? = nil) {
        let failure = guarded.withLock { () -> String? in
            guard state.failure == nil, keep || state.waitingBytes < byteLimit else {
                state.dropped += 1
                return state.failure ?? "no room"
            }
            state.pending.append(contentsOf: rendered.bytes)
            if let then { state.afterPending.append(then) }
            state.waiting += 1
            state.waitingBytes += rendered.bytes.count
            state.tally.add(rendered.status)
            if state.gathering, state.pending.count >= Self.gatherBytes {
                // Enough for one write: the writer need not wait out its gathering time.
                // Said once: a wake-up per record would be a system call per record.
                state.gathering = false
                guarded.broadcast()
                return nil
            }
            if state.writerIdle {
                state.writerIdle = false
                guarded.broadcast()
            }
            return nil
        }
        if let failure { then?(failure) }
    }

    /// Waits, on a reading thread, while the records waiting are past the bound; returns
    /// once a write makes room, stdout has failed, or `stop` is requested (looked at every
    /// `stopCheck`, as a stop does not come through this lock).
    func waitForRoom(stop: StopRequest) {
        guarded.withLock {
            while state.failure == nil, state.waitingBytes >= byteLimit, !stop.isRequested {
                guarded.wait(untilMonotonicNanoseconds: (MonotonicClock.system.now + Self.stopCheck).nanoseconds)
            }
        }
    }

    /// How often a reader waiting for room looks at its stop request.
    static let stopCheck = Duration.milliseconds(100)

    /// Under load, how long the writer lets records gather after a write before the next, and
    /// how many bytes end that wait early: one write for many records instead of one each.
    /// An idle writer starts on the first record at once.
    static let gatherTime = Duration.microseconds(500)
    static let gatherBytes = 64 * 1024

    /// Records written, per status.
    var tally: [String: Int] { guarded.withLock { state.tally.byStatus } }

    /// Waits at most `limit` (nil: as long as it takes) for every record to be written, then
    /// ends the writer thread once it has nothing left. Returns the records that were not
    /// (still waiting, or dropped when there was no room) and why stdout failed, if it did.
    func finish(within limit: Duration?) -> (unwritten: Int, failure: String?) {
        let deadline = limit.map { (MonotonicClock.system.now + $0).nanoseconds } ?? UInt64.max
        let (unwritten, failure) = guarded.withLock { () -> (Int, String?) in
            state.finishing = true
            guarded.broadcast()
            while state.waiting > 0, state.failure == nil, MonotonicClock.system.now.nanoseconds < deadline {
                if deadline == UInt64.max { guarded.wait() } else { guarded.wait(untilMonotonicNanoseconds: deadline) }
            }
            if state.waiting == 0 || state.failure != nil {
                // Every record is out (or never will be): the writer ends, and is waited for.
                // Past the limit with records still waiting, it may be stuck on stdout, and is
                // left to the process's end instead.
                state.closing = true
                guarded.broadcast()
                while !state.writerEnded { guarded.wait() }
            }
            return (state.waiting + state.dropped, state.failure)
        }
        return (unwritten, failure)
    }

    /// The writer thread: writes what gathered while it wrote the last batch, sleeps on the
    /// condition when there is nothing, and ends once `finish` says so or stdout fails.
    private func writeUntilDone() {
        // Two buffers take turns: records go into one while the other is written, so a
        // batch costs no allocation, however large the backlog grew.
        var batch: [UInt8] = []
        var afterBatch: [Written] = []
        var wrote = false
        while true {
            let count = guarded.withLock { () -> Int? in
                // Right after a write, records gather for up to `gatherTime`, or until
                // `gatherBytes` of them wait, or `finish` waits for them: under load that is
                // one write for many records, where writing each as it came would wake this
                // thread, and cost a write, per record.
                if wrote, !state.finishing, !state.closing {
                    state.gathering = true
                    let until = (MonotonicClock.system.now + Self.gatherTime).nanoseconds
                    while state.gathering, !state.finishing, state.pending.count < Self.gatherBytes,
                        MonotonicClock.system.now.nanoseconds < until
                    {
                        guarded.wait(untilMonotonicNanoseconds: until)
                    }
                    state.gathering = false
                }
                while state.pending.isEmpty {
                    if state.closing { return nil }
                    state.writerIdle = true
                    guarded.wait()
                }
                state.writerIdle = false
                swap(&batch, &state.pending)
                swap(&afterBatch, &state.afterPending)
                return state.waiting
            }
            guard let count else { return }
            do {
                try FileIO.writeAll(descriptor, batch)
                guarded.withLock {
                    state.waiting -= count
                    state.waitingBytes -= batch.count
                    state.written += count
                    // Room for a reader, or the last write `finish` waits for.
                    guarded.broadcast()
                }
                wrote = true
                batch.removeAll(keepingCapacity: true)
                for written in afterBatch { written(nil) }
                afterBatch.removeAll(keepingCapacity: true)
            } catch {
                let failure = StdoutReader.failure(error)
                let left = guarded.withLock { () -> [Written] in
                    state.failure = failure
                    guarded.broadcast()
                    defer { state.afterPending.removeAll() }
                    return state.afterPending
                }
                for written in afterBatch + left { written(failure) }
                failed()
                return
            }
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
