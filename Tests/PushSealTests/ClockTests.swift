import Dispatch
import Foundation
import MonotonicTime
import PushSeal
import Synchronization
import Testing

/// The one clock and the one Duration conversion: huge values saturate, never trap or wrap,
/// and a delivery reads every time it keeps from its runner's clock.
@Suite("time: one clock, one conversion")
struct ClockTests {
    @Test(
        arguments: [
            (Duration.seconds(Int64.max), Int64.max, Int64.max),
            (Duration.seconds(Int64.min), Int64.min, Int64.min),
            (Duration.seconds(Int64.max / 1_000 + 1), Int64.max, Int64.max),
            (Duration.seconds(9_223_372_037), Int64.max, Int64(9_223_372_037_000)),
            (Duration.milliseconds(1_500), Int64(1_500_000_000), Int64(1_500)),
            (Duration.nanoseconds(-1), Int64(-1), Int64(0)),
            (Duration.zero, Int64(0), Int64(0))
        ] as [(Duration, Int64, Int64)])
    func durationsBecomeIntegersHeldAtTheirBounds(_ duration: Duration, nanoseconds: Int64, milliseconds: Int64) {
        #expect(duration.saturatingNanoseconds == nanoseconds)
        #expect(duration.saturatingMilliseconds == milliseconds)
    }

    @Test func hugeDurationsAreSaidAsHugeNotWrapped() {
        // A wrapped conversion printed these as negative or small amounts.
        #expect(DurationText.format(.seconds(Int64.max / 1_000)) == "\(Int64.max / 1_000)s")
        #expect(DurationText.approximate(.seconds(Int64.max)).hasSuffix("m"))
        #expect(!DurationText.approximate(.seconds(Int64.max)).hasPrefix("-"))
        #expect(Duration.seconds(-5).timespecValue.tv_sec == 0)
        #expect(Duration.seconds(Int64.max).timespecValue.tv_sec == Int(Int64.max / 1_000_000_000))
    }

    @Test func instantsSaturateAtTheClocksEnds() {
        let nearEnd = MonotonicClock.Instant(nanoseconds: .max - 5)
        #expect(nearEnd + .seconds(1) == .never)
        #expect(nearEnd + .seconds(Int64.max) == .never)
        #expect(MonotonicClock.Instant(nanoseconds: 3) + .nanoseconds(-10) == MonotonicClock.Instant(nanoseconds: 0))
        #expect(MonotonicClock.Instant(nanoseconds: 3) - MonotonicClock.Instant(nanoseconds: 10) == .nanoseconds(-7))
        #expect(MonotonicClock.Instant.never - MonotonicClock.Instant(nanoseconds: 0) == .nanoseconds(Int64.max))
        let stopped = MonotonicClock { 1_000 }
        #expect(stopped.remaining(until: MonotonicClock.Instant(nanoseconds: 400)) == .zero)
        #expect(stopped.remaining(until: MonotonicClock.Instant(nanoseconds: 1_600)) == .nanoseconds(600))
    }

    @Test func aDeliveryReadsItsTimesFromTheRunnersClockAlone() async {
        // A clock that stands still: an answer 50 ms later is delivered, and its elapsed time
        // is the runner's clock's, zero, not another clock's 50 ms.
        let reading = Atomic<UInt64>(42_000_000_000)
        let runner = ExtensionRunner(timing: shortTiming, clock: MonotonicClock { reading.load(ordering: .relaxed) }) {
            ScriptedExtension(answer: .after(.milliseconds(50), shown))
        }
        let delivery = await runner.deliver(eligible)
        #expect(delivery.status == .modified)
        #expect(delivery.elapsed == .zero)
        // Time moves on past every deadline, so the runner's watch ends.
        reading.store(43_000_000_000, ordering: .relaxed)
    }

    @Test func aClockNearTheEndOfItsRangeKeepsDeadlines() async throws {
        // Readings a minute short of the clock's end: a 24-hour budget's deadline is past the
        // end (saturated to "never", no trap) and the answer still counts ... (A minute, not
        // a second: on a loaded machine the test can take over a second, and a reading past
        // the end wraps to zero, which no deadline is ever reached by.)
        let offset = UInt64.max - 60_000_000_000 - MonotonicClock.system.now.nanoseconds
        let nearEnd = MonotonicClock { MonotonicClock.system.now.nanoseconds &+ offset }
        let patient = ExtensionRunner(timing: ExtensionRunner.Timing(budget: .seconds(86_400), expiryGrace: .seconds(1)), clock: nearEnd) {
            ScriptedExtension(answer: .after(.milliseconds(20), shown))
        }
        #expect(await patient.deliver(eligible).status == .modified)
        // ... and a short budget's deadline, kept by the watch while didReceive blocks, comes
        // on time by that clock.
        let instance = BlockingExtension()
        let hasty = ExtensionRunner(timing: ExtensionRunner.Timing(budget: .milliseconds(150), expiryGrace: .milliseconds(50)), clock: nearEnd) {
            instance
        }
        let result = Mutex<Delivery?>(nil)
        let delivered = DispatchSemaphore(value: 0)
        Thread {
            hasty.deliver(eligible) { delivery in
                result.withLock { $0 = delivery }
                delivered.signal()
            }
        }.start()
        #expect(delivered.wait(timeout: .now() + .seconds(10)) == .success)
        instance.released.signal()
        let delivery = try #require(result.withLock { $0 })
        #expect(delivery.status == .original)
        #expect(delivery.elapsed >= .milliseconds(200))
    }
}
