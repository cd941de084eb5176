import Dispatch
import Synchronization

/// Runs a Notification Service Extension the way iOS does.
///
/// - Only notifications with `mutable-content: 1` and visible alert text reach the
///   extension; the rest are delivered unchanged (`passthrough`).
/// - Each notification gets a fresh extension instance.
/// - When the budget runs out, `serviceExtensionTimeWillExpire` is called on another
///   thread; if no usable content arrives within the grace after that, the original content
///   is delivered (`original`).
/// - The content handler takes effect once; later calls are ignored and counted.
/// - Content without alert text is ignored and the original delivered.
/// - Notifications never wait for each other: each has its own timers, and an extension
///   that answers inside `didReceive` costs no timer at all.
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
    private let makeExtension: @Sendable () -> any NotificationServiceExtension
    private let ignoredCalls = Atomic<Int>(0)
    private let timerQueue = DispatchQueue(label: "pushseal.extension-deadlines", qos: .userInitiated, attributes: .concurrent)

    /// - Parameter makeExtension: called once per eligible notification.
    public init(timing: Timing = .standard, makeExtension: @escaping @Sendable () -> any NotificationServiceExtension) {
        self.timing = timing
        self.makeExtension = makeExtension
    }

    /// Content-handler calls that came after a notification was already delivered.
    public var ignoredContentHandlerCalls: Int { ignoredCalls.load(ordering: .relaxed) }

    /// Delivers `request` and reports the outcome to `completion` exactly once.
    public func deliver(_ request: NotificationRequest, completion: @escaping @Sendable (Delivery) -> Void) {
        let start = ContinuousClock.now
        guard request.invokesServiceExtension else {
            completion(Delivery(
                request: request, content: request.content,
                note: DeliveryNote(status: .passthrough, reason: "not eligible for a service extension (needs mutable-content 1 and alert text)"),
                elapsed: ContinuousClock.now - start))
            return
        }
        let serviceExtension = makeExtension()
        let slot = DeliverySlot(request: request, start: start, runner: self, completion: completion)
        serviceExtension.didReceive(request, contentHandler: ContentHandler { content, note in
            slot.offer(content, note: note)
        })
        // Most extensions answer inside didReceive; only the others need a deadline.
        guard !slot.isDone else { return }
        let deadline = DispatchTime.now() + (timing.budget - (ContinuousClock.now - start)).dispatchInterval
        let grace = timing.expiryGrace
        slot.arm(Self.makeTimer(on: timerQueue, at: deadline) { [timerQueue] in
            guard slot.beginExpiry() else { return }
            // iOS calls this on a different thread from didReceive.
            serviceExtension.serviceExtensionTimeWillExpire()
            guard !slot.isDone else { return }
            slot.arm(Self.makeTimer(on: timerQueue, at: DispatchTime.now() + grace.dispatchInterval) {
                slot.fallBackToOriginal()
            })
        })
    }

    /// Delivers `request` and returns the outcome.
    public func deliver(_ request: NotificationRequest) async -> Delivery {
        await withCheckedContinuation { continuation in
            deliver(request) { continuation.resume(returning: $0) }
        }
    }

    fileprivate func countIgnoredCall() {
        ignoredCalls.add(1, ordering: .relaxed)
    }

    private static func makeTimer(on queue: DispatchQueue, at deadline: DispatchTime, _ handler: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: queue)
        // No leeway: lateness past the deadline is what this runner is judged on.
        timer.schedule(deadline: deadline, leeway: .nanoseconds(0))
        timer.setEventHandler(handler: handler)
        timer.resume()
        return timer
    }
}

/// One notification's once-only delivery state.
private final class DeliverySlot: Sendable {
    private struct State {
        var done = false
        var expiring = false
        nonisolated(unsafe) var timer: (any DispatchSourceTimer)?
    }

    private let state = Locked(State())
    private let request: NotificationRequest
    private let start: ContinuousClock.Instant
    private let runner: ExtensionRunner
    private let completion: @Sendable (Delivery) -> Void

    init(request: NotificationRequest, start: ContinuousClock.Instant, runner: ExtensionRunner, completion: @escaping @Sendable (Delivery) -> Void) {
        self.request = request
        self.start = start
        self.runner = runner
        self.completion = completion
    }

    var isDone: Bool { state.withLock { $0.done } }

    /// Keeps the pending timer so delivery can cancel it; a timer armed after delivery is
    /// cancelled at once.
    func arm(_ timer: any DispatchSourceTimer) {
        let cancelNow = state.withLock { state -> Bool in
            if state.done { return true }
            state.timer = timer
            return false
        }
        if cancelNow { timer.cancel() }
    }

    /// Marks the deadline; false when the notification was already delivered.
    func beginExpiry() -> Bool {
        state.withLock { state in
            guard !state.done else { return false }
            state.expiring = true
            return true
        }
    }

    /// The content handler: the first call wins.
    func offer(_ content: NotificationContent, note: DeliveryNote?) {
        guard let expiring = claim() else {
            runner.countIgnoredCall()
            return
        }
        let elapsed = ContinuousClock.now - start
        if content.hasAlertText {
            let note = note ?? DeliveryNote(status: expiring ? .deadline : .modified)
            completion(Delivery(request: request, content: content, note: note, elapsed: elapsed))
        } else {
            // iOS ignores content without alert text and shows what arrived.
            completion(Delivery(
                request: request, content: request.content,
                note: DeliveryNote(status: .original, kid: note?.kid, reason: "the extension's content had no alert text"),
                elapsed: elapsed))
        }
    }

    /// Nothing usable came even after `serviceExtensionTimeWillExpire`.
    func fallBackToOriginal() {
        guard claim() != nil else { return }
        completion(Delivery(
            request: request, content: request.content,
            note: DeliveryNote(status: .original, reason: "the extension did not deliver content before the deadline"),
            elapsed: ContinuousClock.now - start))
    }

    /// Takes the delivery; returns whether the deadline had passed, or nil if already taken.
    private func claim() -> Bool? {
        let (claimed, expiring, timer) = state.withLock { state -> (Bool, Bool, (any DispatchSourceTimer)?) in
            guard !state.done else { return (false, state.expiring, nil) }
            state.done = true
            let timer = state.timer
            state.timer = nil
            return (true, state.expiring, timer)
        }
        timer?.cancel()
        return claimed ? expiring : nil
    }
}

extension Duration {
    /// The duration as a Dispatch interval, never negative.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        return .nanoseconds(Int(max(0, min(nanoseconds, Int64(Int.max)))))
    }

    /// Milliseconds as a fraction, for records.
    public var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }
}
