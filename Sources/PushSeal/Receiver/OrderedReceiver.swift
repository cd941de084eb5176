import Dispatch
import Synchronization

/// Feeds inputs to an extension runner and hands records to `sink` in input order,
/// whatever order the deliveries finish in.
///
/// Deliveries run concurrently: a notification whose extension is slow holds back only the
/// printing of the records after it, never their delivery (each record's `elapsed_ms`
/// says when it was delivered). At most `maximumInFlight` records wait at once, which keeps
/// memory flat on endless input.
public final class OrderedReceiver: Sendable {
    private struct Reorder {
        var nextToEmit = 1
        var finished: [Int: DeliveryRecord] = [:]
    }

    private let runner: ExtensionRunner
    private let sink: @Sendable (DeliveryRecord) -> Void
    private let reorder = Mutex(Reorder())
    private let window: DispatchSemaphore
    private let outstanding = DispatchGroup()
    private let submitted = Atomic<Int>(0)

    public init(runner: ExtensionRunner, maximumInFlight: Int = 4_096, sink: @escaping @Sendable (DeliveryRecord) -> Void) {
        self.runner = runner
        self.sink = sink
        window = DispatchSemaphore(value: maximumInFlight)
    }

    /// Takes the next input; waits while `maximumInFlight` records are pending.
    public func submit(source: String, bytes: UnsafeRawBufferPointer) {
        submit(source: source, input: ReceivedInput(bytes: bytes))
    }

    /// Takes an input that could not even be read (a missing file, say).
    public func submit(source: String, problem: String) {
        submit(source: source, input: .unreadable(reason: problem))
    }

    private func submit(source: String, input: ReceivedInput) {
        let seq = submitted.add(1, ordering: .relaxed).newValue
        window.wait()
        outstanding.enter()
        switch input {
        case .unreadable(let reason):
            finish(DeliveryRecord(seq: seq, source: source, problem: reason))
        case .request(let request):
            runner.deliver(request) { [self] delivery in
                finish(DeliveryRecord(seq: seq, source: source, delivery: delivery))
            }
        }
    }

    /// Waits until every submitted input has its record in the sink.
    public func finish() {
        outstanding.wait()
    }

    private func finish(_ record: DeliveryRecord) {
        // The sink runs under the lock so records leave in order and one at a time.
        let emitted = reorder.withLock { state -> Int in
            state.finished[record.seq] = record
            var count = 0
            while let next = state.finished.removeValue(forKey: state.nextToEmit) {
                sink(next)
                state.nextToEmit += 1
                count += 1
            }
            return count
        }
        for _ in 0..<emitted {
            window.signal()
            outstanding.leave()
        }
    }
}
