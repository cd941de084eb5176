import HTTP2
import MonotonicTime
import PushSeal
import PushSealReceiver
import Testing

/// The listener's policies driven by a clock the test sets: the same rules the hostile-peer
/// tests (`ServiceLimitsTests`, `ListenTests`) see end to end, here at their edges.
@Suite("connection policies, on a test clock")
struct ConnectionPolicyTests {
    /// A start far from zero, so instants before it exist.
    static let start = MonotonicClock.Instant(nanoseconds: 1_000_000_000_000)

    static func at(_ offset: Duration) -> MonotonicClock.Instant { start + offset }

    // MARK: Reset budget

    @Test func theBurstIsSpentThenTheClientIsSentAway() {
        var budget = ResetBudget(burst: 1_000, perSecond: 33, now: Self.start)
        func spend(_ now: MonotonicClock.Instant) -> Bool { budget.spend(now: now) }
        let allowed = (0..<1_000).filter { _ in spend(Self.start) }.count
        #expect(allowed == 1_000)
        #expect(!spend(Self.start), "the 1,001st at once")
        #expect(!spend(Self.start), "and every one after it")
    }

    @Test func timeRefillsTheBudgetAtItsRateNeverPastTheBurst() {
        var budget = ResetBudget(burst: 10, perSecond: 2, now: Self.start)
        func spend(_ now: MonotonicClock.Instant) -> Bool { budget.spend(now: now) }
        for _ in 0..<10 { #expect(spend(Self.start)) }
        #expect(!spend(Self.start))
        // Overdrawn by one: one second gives two back, one of them owed.
        #expect(spend(Self.at(.seconds(1))))
        #expect(!spend(Self.at(.seconds(1))))
        // An hour later the bucket is full again, and no fuller.
        let later = Self.at(.seconds(3_600))
        #expect((0..<20).filter { _ in spend(later) }.count == 10)
    }

    @Test func aClockThatSeemsToGoBackGivesNothingBack() {
        var budget = ResetBudget(burst: 2, perSecond: 1_000, now: Self.at(.seconds(10)))
        func spend(_ now: MonotonicClock.Instant) -> Bool { budget.spend(now: now) }
        #expect(spend(Self.at(.seconds(10))))
        #expect(spend(Self.at(.seconds(10))))
        #expect(!spend(Self.at(.seconds(5))))
    }

    @Test func aSteadyRateUnderTheRefillIsNeverSentAway() {
        var budget = ResetBudget(burst: 1_000, perSecond: 33, now: Self.start)
        func spend(_ now: MonotonicClock.Instant) -> Bool { budget.spend(now: now) }
        // 30 a second for ten minutes.
        let spends = (0..<18_000).map { spend(Self.at(.milliseconds(Int64($0) * 1_000 / 30))) }
        #expect(spends.allSatisfy { $0 })
    }

    // MARK: Timeouts

    static let timeouts = ConnectionTimeouts(handshake: .seconds(10), idle: .seconds(60), request: .seconds(10))

    @Test func aHandshakeHasItsOwnTimeNotTheIdleTime() {
        let stage = ConnectionTimeouts.Stage.handshaking(acceptedAt: Self.start)
        #expect(Self.timeouts.verdict(stage, now: Self.at(.seconds(10))) == .keep)
        #expect(Self.timeouts.verdict(stage, now: Self.at(.milliseconds(10_001))) == .close)
        // An idle time shorter than the handshake's bounds the handshake too.
        let short = ConnectionTimeouts(handshake: .seconds(10), idle: .seconds(1), request: .seconds(10))
        #expect(short.verdict(stage, now: Self.at(.milliseconds(1_001))) == .close)
    }

    @Test func anIdleConnectionGetsGoawayPastTheIdleTime() {
        let stage = ConnectionTimeouts.Stage.open(idleSince: Self.start, outputWaitingSince: nil)
        #expect(Self.timeouts.verdict(stage, now: Self.at(.seconds(60))) == .keep)
        #expect(Self.timeouts.verdict(stage, now: Self.at(.milliseconds(60_001))) == .goAwayAndClose)
    }

    @Test func aClientThatStopsReadingIsClosedEvenWithRequestsOpen() {
        let stage = ConnectionTimeouts.Stage.open(idleSince: nil, outputWaitingSince: Self.start)
        #expect(Self.timeouts.verdict(stage, now: Self.at(.seconds(61))) == .close)
        let reading = ConnectionTimeouts.Stage.open(idleSince: nil, outputWaitingSince: Self.at(.seconds(30)))
        #expect(Self.timeouts.verdict(reading, now: Self.at(.seconds(61))) != .close)
    }

    @Test func requestsThatMadeNoProgressForTheRequestTimeAreCancelled() {
        let stage = ConnectionTimeouts.Stage.open(idleSince: nil, outputWaitingSince: nil)
        let now = Self.at(.seconds(100))
        #expect(Self.timeouts.verdict(stage, now: now) == .cancelStalledRequests(progressBefore: Self.at(.seconds(90))))
        // Never longer than the idle time.
        let short = ConnectionTimeouts(handshake: .seconds(10), idle: .seconds(2), request: .seconds(10))
        #expect(short.stalledRequest == .seconds(2))
        #expect(short.verdict(stage, now: now) == .cancelStalledRequests(progressBefore: Self.at(.seconds(98))))
    }

    // MARK: Eviction at the cap

    static func candidate(_ number: Int, pending: Bool = false, accepted: Int64, idle: Int64? = nil) -> ConnectionEviction.Candidate {
        ConnectionEviction.Candidate(number: number, isPending: pending, acceptedAt: at(.seconds(accepted)), idleSince: idle.map { at(.seconds($0)) })
    }

    @Test func theOldestNotYetHTTP2GoesFirstThenTheLongestIdle() {
        let busy = Self.candidate(1, accepted: 0)
        let idleLong = Self.candidate(2, accepted: 1, idle: 5)
        let idleShort = Self.candidate(3, accepted: 0, idle: 50)
        let pendingNew = Self.candidate(4, pending: true, accepted: 90)
        let pendingOld = Self.candidate(5, pending: true, accepted: 80)
        #expect(ConnectionEviction.victim(among: [busy, idleLong, idleShort, pendingNew, pendingOld])?.number == 5)
        #expect(ConnectionEviction.victim(among: [busy, idleShort, idleLong])?.number == 2)
        #expect(ConnectionEviction.victim(among: [busy]) == nil, "every connection at work: the newcomer is refused")
    }

    @Test func connectionsNotYetHTTP2HaveAQuarterOfTheCapAtLeastSixteen() {
        let pending = (0..<16).map { Self.candidate($0, pending: true, accepted: Int64(100 - $0)) }
        #expect(ConnectionEviction.pendingVictim(among: Array(pending.prefix(15)), connectionLimit: 40) == nil)
        #expect(ConnectionEviction.pendingVictim(among: pending, connectionLimit: 40)?.number == 15, "the oldest of 16")
        let many = (0..<250).map { Self.candidate($0, pending: true, accepted: Int64($0)) }
        #expect(ConnectionEviction.pendingVictim(among: Array(many.prefix(249)), connectionLimit: 1_000) == nil)
        #expect(ConnectionEviction.pendingVictim(among: many, connectionLimit: 1_000)?.number == 0)
    }

    // MARK: Provider token updates

    @Test func aConnectionMayChangeItsTokenOncePerInterval() {
        var updates = ProviderTokenUpdates(interval: .seconds(1_200))
        func allows(_ token: String, on connection: Int, now: MonotonicClock.Instant) -> Bool {
            updates.allows(token, on: connection, now: now)
        }
        #expect(allows("a", on: 1, now: Self.start))
        #expect(allows("a", on: 1, now: Self.at(.seconds(1))), "the same token again")
        #expect(!allows("b", on: 1, now: Self.at(.seconds(1_199))))
        #expect(allows("b", on: 1, now: Self.at(.seconds(1_200))))
        #expect(allows("c", on: 2, now: Self.at(.seconds(1_200))), "each connection its own")
        #expect(!allows("a", on: 1, now: Self.at(.seconds(1_300))), "timed from the last change")
        updates.forget(1)
        #expect(updates.connections == 1)
        #expect(allows("a", on: 1, now: Self.at(.seconds(1_300))), "a new connection with that number")
    }
}
