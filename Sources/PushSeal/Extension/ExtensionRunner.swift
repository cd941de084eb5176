import Dispatch
import Locking
import MonotonicTime
import Synchronization

/// Runs a Notification Service Extension the way iOS does.
///
/// - Only notifications with `mutable-content: 1` and visible alert text reach the
///   extension; the rest are delivered unchanged (`passthrough`).
/// - Each notification gets a fresh extension instance.
/// - The clock starts when the runner takes the notification: its deadline is watched
///   from before `didReceive` is called, and the grace is armed before
///   `serviceExtensionTimeWillExpire` is, so an extension that blocks in either, however
///   long, cannot hold its delivery back.
/// - When the budget runs out, `serviceExtensionTimeWillExpire` is called on another
///   thread; if no usable content arrives within the grace after that, the original content
///   is delivered (`original`).
/// - The content handler takes effect once; later calls are ignored and counted.
/// - Content without alert text is ignored and the original delivered.
/// - Notifications never wait for each other: each has its own deadline.
public final class ExtensionRunner: Sendable {
    /// How long the extension has, and how long after `serviceExtensionTimeWillExpire`
    /// iOS still waits before falling back to the original.
    public struct Timing: Sendable, Equatable {
        public var budget: Duration
        public var expiryGrace: Duration

        /// Apple's 30 seconds, and a short second for the expiry answer.
        public static let standard = Timing(budget: .seconds(30), expiryGrace: .seconds(1))

        public init(budget: Duration, expiryGrace: Duration) {
            self.budget = budget
            self.expiryGrace = expiryGrace
        }
    }

    public let timing: Timing
    /// The one clock a delivery's start, deadlines and elapsed time are read from.
    private let clock: MonotonicClock
    private let makeExtension: @Sendable () -> any NotificationServiceExtension
    private let ignoredCalls = Atomic<Int>(0)
    private let timerQueue = DispatchQueue(label: "pushseal.extension-deadlines", qos: .userInitiated, attributes: .concurrent)
    /// Deliveries still waiting for their extension, so `expireAll` can reach them.
    private let waiting = Locked<[Int: DeliverySlot]>([:])
    private let nextSlot = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let watch: DidReceiveWatch
    /// The budget and the grace after it in nanoseconds, converted once: a `Duration` takes
    /// a 128-bit division to convert, and every notification adds both.
    private let budgetNanoseconds: Int64
    private let graceNanoseconds: Int64

    /// - Parameters:
    ///   - timing: the budget and the grace after `serviceExtensionTimeWillExpire`.
    ///   - makeExtension: called once per eligible notification.
    public convenience init(timing: Timing = .standard, makeExtension: @escaping @Sendable () -> any NotificationServiceExtension) {
        self.init(timing: timing, clock: .system, makeExtension: makeExtension)
    }

    /// - Parameter clock: where deadlines and elapsed times are read; the system's
    ///   monotonic clock but in tests.
    package init(
        timing: Timing = .standard, clock: MonotonicClock,
        makeExtension: @escaping @Sendable () -> any NotificationServiceExtension
    ) {
        self.timing = timing
        self.clock = clock
        self.makeExtension = makeExtension
        watch = DidReceiveWatch(clock: clock)
        budgetNanoseconds = timing.budget.saturatingNanoseconds
        graceNanoseconds = timing.expiryGrace.saturatingNanoseconds
    }

    /// Whether a thread is watching this runner's deadlines; none is while the runner is idle.
    package var isWatchingDeadlines: Bool { watch.isWatching }

    /// Content-handler calls that came after a notification was already delivered.
    package var ignoredContentHandlerCalls: Int { ignoredCalls.load(ordering: .relaxed) }

    /// Delivers `request` and reports the outcome to `completion` exactly once.
    public func deliver(_ request: NotificationRequest, completion: @escaping @Sendable (Delivery) -> Void) {
        let start = clock.now
        guard request.invokesServiceExtension else {
            completion(
                Delivery(
                    request: request, content: request.content,
                    note: DeliveryNote(status: .passthrough, reason: "not eligible for a service extension (needs mutable-content 1 and alert text)"),
                    elapsed: clock.now - start))
            return
        }
        let serviceExtension = makeExtension()
        let slot = DeliverySlot(
            id: nextSlot.add(1, ordering: .relaxed).newValue, request: request, start: start, clock: clock,
            serviceExtension: serviceExtension, runner: self, completion: completion)
        let deadline = start.advanced(byNanoseconds: budgetNanoseconds)
        let graceEnds = deadline.advanced(byNanoseconds: graceNanoseconds)
        // The deadline is watched from the moment the notification is taken: while
        // didReceive runs by the watch (cheap, and on time even if the call blocks), and
        // after it returns undelivered by a timer of the notification's own.
        watch.begin(id: slot.id, deadline: deadline) { [self] in
            timerQueue.async { self.expire(slot, graceEnds: graceEnds) }
        }
        serviceExtension.didReceive(
            request,
            contentHandler: ContentHandler { content, note in
                slot.offer(content, note: note)
            })
        watch.end(id: slot.id)
        guard slot.markWaiting() else { return }
        slot.armDeadline(
            makeTimer(at: deadline) { [self] in
                expire(slot, graceEnds: graceEnds)
            })
        waiting.withLock { $0[slot.id] = slot }
        // A delivery that finished meanwhile has already looked for itself in `waiting`.
        if slot.isDone { waiting.withLock { _ = $0.removeValue(forKey: slot.id) } }
        if stopping.load(ordering: .acquiring) {
            let graceEnds = clock.now + timing.expiryGrace
            timerQueue.async { [self] in expire(slot, graceEnds: graceEnds) }
        }
    }

    /// Delivers `request` and returns the outcome.
    public func deliver(_ request: NotificationRequest) async -> Delivery {
        await withCheckedContinuation { continuation in
            deliver(request) { continuation.resume(returning: $0) }
        }
    }

    /// Ends every delivery still in progress as if its deadline had come now, and every
    /// later one as soon as its extension is called: for a clean stop. Each still gets its
    /// one record: the extension's answer to `serviceExtensionTimeWillExpire`, or after the
    /// grace the original.
    package func expireAll() {
        stopping.store(true, ordering: .releasing)
        let slots = waiting.withLock { Array($0.values) }
        let graceEnds = clock.now + timing.expiryGrace
        // On the timer queue, as at a deadline: never on the caller's stack, which may hold
        // a lock that the deliveries this causes need (the record writer's, say).
        for slot in slots { timerQueue.async { [self] in expire(slot, graceEnds: graceEnds) } }
    }

    private func expire(_ slot: DeliverySlot, graceEnds: MonotonicClock.Instant) {
        guard let serviceExtension = slot.beginExpiry() else { return }
        // Armed before the extension is told, so an answer that blocks cannot hold it back.
        slot.arm(makeTimer(at: graceEnds) { slot.fallBackToOriginal() })
        // iOS calls this on a different thread from didReceive.
        serviceExtension.serviceExtensionTimeWillExpire()
    }

    fileprivate func finished(_ slot: DeliverySlot) {
        waiting.withLock { _ = $0.removeValue(forKey: slot.id) }
    }

    fileprivate func countIgnoredCall() {
        ignoredCalls.add(1, ordering: .relaxed)
    }

    /// A timer for `deadline` by the runner's clock: Dispatch waits the time that is left,
    /// and when it fires the runner's clock is asked again. Dispatch keeps time in its own
    /// clock; a deadline is only reached when the runner's clock says so (a replaced clock
    /// may run slower, or stand still).
    private func makeTimer(at deadline: MonotonicClock.Instant, _ handler: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: timerQueue)
        // No leeway: lateness past the deadline is what this runner is judged on.
        timer.schedule(deadline: .now() + clock.remaining(until: deadline).dispatchInterval, leeway: .nanoseconds(0))
        // Weak: a source holding itself through its handler would outlive its cancellation.
        timer.setEventHandler { [clock, weak source = timer as AnyObject] in
            let left = clock.remaining(until: deadline)
            guard left <= .zero else {
                (source as? any DispatchSourceTimer)?.schedule(deadline: .now() + left.dispatchInterval, leeway: .nanoseconds(0))
                return
            }
            handler()
        }
        timer.resume()
        return timer
    }
}

/// One notification's once-only delivery state.
private final class DeliverySlot: Sendable {
    private struct State: Sendable {
        var done = false
        var expiring = false
        var waiting = false
        nonisolated(unsafe) var timer: (any DispatchSourceTimer)?
        /// Held only until delivery: the extension holds the content handler, which holds
        /// this slot, so keeping it longer would be a cycle.
        var serviceExtension: (any NotificationServiceExtension)?
    }

    let id: Int
    private let state: Locked<State>
    private let request: NotificationRequest
    private let start: MonotonicClock.Instant
    private let clock: MonotonicClock
    private let runner: ExtensionRunner
    private let completion: @Sendable (Delivery) -> Void

    init(
        id: Int, request: NotificationRequest, start: MonotonicClock.Instant, clock: MonotonicClock,
        serviceExtension: any NotificationServiceExtension, runner: ExtensionRunner,
        completion: @escaping @Sendable (Delivery) -> Void
    ) {
        self.id = id
        state = Locked(State(serviceExtension: serviceExtension))
        self.request = request
        self.start = start
        self.clock = clock
        self.runner = runner
        self.completion = completion
    }

    var isDone: Bool { state.withLock { $0.done } }

    /// Notes that the delivery outlived `didReceive`; false when it is already done.
    func markWaiting() -> Bool {
        state.withLock { state in
            guard !state.done else { return false }
            state.waiting = true
            return true
        }
    }

    /// Keeps the pending timer (cancelling the one it replaces) so delivery can cancel it;
    /// a timer armed after delivery is cancelled at once.
    func arm(_ timer: any DispatchSourceTimer) {
        let cancel = state.withLock { state -> (any DispatchSourceTimer)? in
            if state.done { return timer }
            defer { state.timer = timer }
            return state.timer
        }
        cancel?.cancel()
    }

    /// Keeps the deadline timer, unless the deadline was already met (by the watch, while
    /// didReceive blocked) or the notification delivered: then the timer is cancelled.
    func armDeadline(_ timer: any DispatchSourceTimer) {
        let keep = state.withLock { state -> Bool in
            guard !state.done, !state.expiring else { return false }
            state.timer = timer
            return true
        }
        if !keep { timer.cancel() }
    }

    /// Marks the deadline and returns the extension to tell; nil when the notification was
    /// already delivered or expiring.
    func beginExpiry() -> (any NotificationServiceExtension)? {
        state.withLock { state in
            guard !state.done, !state.expiring else { return nil }
            state.expiring = true
            return state.serviceExtension
        }
    }

    /// The content handler: the first call wins.
    func offer(_ content: NotificationContent, note: DeliveryNote?) {
        guard let expiring = claim() else {
            runner.countIgnoredCall()
            return
        }
        let elapsed = clock.now - start
        if content.hasAlertText {
            let note = note ?? DeliveryNote(status: expiring ? .deadline : .modified)
            completion(Delivery(request: request, content: content, note: note, elapsed: elapsed))
        } else {
            // iOS ignores content without alert text and shows what arrived.
            completion(
                Delivery(
                    request: request, content: request.content,
                    note: DeliveryNote(status: .original, kid: note?.kid, reason: "the extension's content had no alert text"),
                    elapsed: elapsed))
        }
    }

    /// Nothing usable came even after `serviceExtensionTimeWillExpire`.
    func fallBackToOriginal() {
        guard claim() != nil else { return }
        completion(
            Delivery(
                request: request, content: request.content,
                note: DeliveryNote(status: .original, reason: "the extension did not deliver content before the deadline"),
                elapsed: clock.now - start))
    }

    /// Takes the delivery; returns whether the deadline had passed, or nil if already taken.
    private func claim() -> Bool? {
        let (claimed, expiring, waiting, timer) = state.withLock { state -> (Bool, Bool, Bool, (any DispatchSourceTimer)?) in
            guard !state.done else { return (false, state.expiring, false, nil) }
            state.done = true
            state.serviceExtension = nil
            let timer = state.timer
            state.timer = nil
            return (true, state.expiring, state.waiting, timer)
        }
        guard claimed else { return nil }
        timer?.cancel()
        if waiting { runner.finished(self) }
        return expiring
    }
}
