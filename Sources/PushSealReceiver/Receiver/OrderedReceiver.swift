import Dispatch
import Locking
import PushSeal
import Synchronization

/// Feeds inputs to an extension runner and hands records to `emit` in input order,
/// whatever order the deliveries finish in.
///
/// Deliveries run concurrently: a notification whose extension is slow holds back only the
/// printing of the records after it, never their delivery (each record's `elapsed_ms`
/// says when it was delivered). At most `maximumInFlight` records wait at once, which keeps
/// memory flat on endless input. Records are rendered (`render`) on the thread that
/// delivered them, so only the hand-over to `emit` is serialised.
package final class OrderedReceiver<Rendered: Sendable>: Sendable {
    private let runner: ExtensionRunner
    private let render: @Sendable (DeliveryRecord) -> Rendered
    private let window: OrderedWindow<Rendered>
    private let reserved = Atomic<Int>(0)

    package init(
        runner: ExtensionRunner, maximumInFlight: Int = 4_096,
        render: @escaping @Sendable (DeliveryRecord) -> Rendered,
        emit: @escaping @Sendable (Rendered) -> Void
    ) {
        self.runner = runner
        self.render = render
        // emit runs under the window's lock: records leave in order and one at a time.
        window = OrderedWindow(size: maximumInFlight, first: 1, release: emit)
    }

    /// Takes the next sequence number, waiting while `maximumInFlight` records are pending.
    /// Call in input order; `deliver` may then run on any thread.
    package func reserve() -> Int {
        window.enter()
        return reserved.add(1, ordering: .relaxed).newValue
    }

    /// Delivers the input reserved as `seq`.
    ///
    /// Specialised here for the records `pushseal receive` renders (their bytes and their
    /// status): no module specialises another's `package` generics, so without it every
    /// record ran generic code and looked up the ordering buffer's metadata twice.
    @specialized(where Rendered == (bytes: [UInt8], status: String))
    package func deliver(_ seq: Int, source: String, bytes: UnsafeRawBufferPointer) {
        switch ReceivedInput(bytes: bytes) {
        case .unreadable(let reason):
            finish(DeliveryRecord(seq: seq, source: source, problem: reason))
        case .request(let request):
            runner.deliver(request) { [self] delivery in
                finish(DeliveryRecord(seq: seq, source: source, delivery: delivery))
            }
        }
    }

    /// Reserves and delivers the next input in one step.
    package func submit(source: String, bytes: UnsafeRawBufferPointer) {
        deliver(reserve(), source: source, bytes: bytes)
    }

    /// Takes an input that could not even be read (a missing file, say).
    package func submit(source: String, problem: String) {
        finish(DeliveryRecord(seq: reserve(), source: source, problem: problem))
    }

    /// Waits until every reserved input has been emitted.
    package func finish() {
        window.wait()
    }

    private func finish(_ record: DeliveryRecord) {
        window.finish(record.seq, render(record))
    }
}
