import Foundation
import Testing

@testable import PushSealKit

/// The deadline rule of the extension, in the core: delivered once, by the opened content or
/// by the fallback at the deadline, with a clock the tests set.
@Suite("PushSealKit: one delivery per notification, whatever the deadline does")
struct PendingDeliveryTests {
    final class Delivered: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String] = []
        func add(_ value: String) { lock.withLock { values.append(value) } }
        var all: [String] { lock.withLock { values } }
    }

    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func openedInTimeIsDeliveredAndTheDeadlineChangesNothing() {
        let delivered = Delivered()
        let pending = PendingDelivery<String>(deadline: start + 30) { delivered.add($0) }
        #expect(pending.complete(with: "opened", now: start + 1))
        #expect(!pending.expire(with: "placeholder"))
        #expect(delivered.all == ["opened"] && pending.ending == .opened && pending.ignoredCalls == 1)
    }

    @Test func theDeadlineFirstDeliversTheFallbackAndALateOpeningIsIgnored() {
        let delivered = Delivered()
        let pending = PendingDelivery<String>(deadline: start + 30) { delivered.add($0) }
        #expect(pending.expire(with: "placeholder"))
        #expect(!pending.complete(with: "opened", now: start + 29))
        #expect(delivered.all == ["placeholder"] && pending.ending == .expired && pending.ignoredCalls == 1)
    }

    @Test func contentThatArrivesAtTheDeadlineWaitsForTheFallback() {
        let delivered = Delivered()
        let pending = PendingDelivery<String>(deadline: start + 30) { delivered.add($0) }
        #expect(!pending.complete(with: "too late", now: start + 30))
        #expect(pending.ending == nil, "still pending: the system's time-up delivers")
        #expect(pending.expire(with: "placeholder"))
        #expect(delivered.all == ["placeholder"])
    }

    @Test func racingOpeningsAndDeadlinesDeliverExactlyOnce() async {
        for _ in 0..<200 {
            let delivered = Delivered()
            let pending = PendingDelivery<String>(deadline: .distantFuture) { delivered.add($0) }
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        if index % 2 == 0 { pending.complete(with: "opened") } else { pending.expire(with: "placeholder") }
                    }
                }
            }
            #expect(delivered.all.count == 1 && pending.ignoredCalls == 7)
        }
    }
}
