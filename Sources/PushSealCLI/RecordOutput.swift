#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import PushSeal
import MonotonicTime
import Locking

/// The listener's records on their way to stdout, written by a thread of their own, so no
/// thread that makes a record (an HTTP/2 loop, a delivering thread) ever waits for stdout's
/// reader.
///
/// Bounded by bytes waiting: past `byteLimit` the listener is told there is no room (it
/// answers new notifications 503), records of refused requests are dropped and counted,
/// and records already promised (notifications answered 200) are still kept; those are
/// bounded by the listener's pending limit.
final class RecordOutput: RecordSink {
    private struct State: Sendable {
        var pending: [UInt8] = []
        /// Records in `pending` plus those being written.
        var waiting = 0
        var waitingBytes = 0
        var dropped = 0
        var written = 0
        var failure: String?
        var writerIdle = false
        var tally = StatusTally()
    }

    static let byteLimit = 8 << 20

    private let descriptor: Int32
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    private let render: @Sendable (DeliveryRecord) -> (bytes: [UInt8], status: String)
    private let failed: @Sendable () -> Void

    /// - Parameters:
    ///   - render: the record's bytes (newline included) and its status, on the caller's thread.
    ///   - failed: called once, on the writer's thread, when the descriptor cannot be written.
    init(descriptor: Int32, render: @escaping @Sendable (DeliveryRecord) -> (bytes: [UInt8], status: String),
         failed: @escaping @Sendable () -> Void) {
        self.descriptor = descriptor
        self.render = render
        self.failed = failed
        OwnThread.start { [self] in writeUntilFailed() }
    }

    var hasRoom: Bool {
        state.withLock { $0.failure == nil && $0.waitingBytes < Self.byteLimit }
    }

    func emit(_ record: DeliveryRecord, promised: Bool) {
        let rendered = render(record)
        let wakeWriter = state.withLock { state -> Bool in
            guard state.failure == nil, promised || state.waitingBytes < Self.byteLimit else {
                state.dropped += 1
                return false
            }
            state.pending.append(contentsOf: rendered.bytes)
            state.waiting += 1
            state.waitingBytes += rendered.bytes.count
            state.tally.add(rendered.status)
            guard state.writerIdle else { return false }
            state.writerIdle = false
            return true
        }
        if wakeWriter { wake.signal() }
    }

    /// Records written, per status.
    var tally: [String: Int] { state.withLock { $0.tally.byStatus } }

    /// Waits at most `limit` for every record to be written. Returns the records that were
    /// not (still waiting, or dropped when there was no room) and why stdout failed, if it did.
    func finish(within limit: Duration) -> (unwritten: Int, failure: String?) {
        let deadline = MonotonicClock.system.now + limit
        while true {
            let (waiting, dropped, failure) = state.withLock { ($0.waiting, $0.dropped, $0.failure) }
            if waiting == 0 || failure != nil || MonotonicClock.system.now >= deadline {
                return (waiting + dropped, failure)
            }
            usleep(5_000)
        }
    }

    private func writeUntilFailed() {
        // Two buffers take turns: records go into one while the other is written, so a
        // batch costs no allocation, however large the backlog grew.
        var batch: [UInt8] = []
        while true {
            let count = state.withLock { state -> Int in
                if state.pending.isEmpty {
                    state.writerIdle = true
                    return 0
                }
                swap(&batch, &state.pending)
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
            } catch {
                state.withLock { $0.failure = StdoutReader.failure(error) }
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
