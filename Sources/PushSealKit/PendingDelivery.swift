import Foundation

/// One notification's delivery as a Notification Service Extension must make it: exactly
/// once, by whichever comes first of the opened content (`didReceive`'s work) and the
/// deadline (`serviceExtensionTimeWillExpire`, which delivers the placeholder or the best
/// attempt). Every later call is ignored, and counted. The Apple adapter only forwards to
/// this; the rule itself is tested here, with a clock the tests move.
public final class PendingDelivery<Content>: @unchecked Sendable {
    // Unchecked: `handler`, `completedBy` and `ignored` are touched under `lock` only, and
    // the content is handed from the thread that completes to the handler, as the system
    // hands UNNotificationContent between its extension calls.
    public enum Ending: String, Sendable {
        /// The work finished in time: its content was delivered.
        case opened
        /// The deadline came first: the fallback content was delivered.
        case expired
    }

    private let lock = NSLock()
    private var handler: ((Content) -> Void)?
    private var completedBy: Ending?
    private var ignored = 0
    /// When the system will call time up (about 30 s after the notification arrived).
    public let deadline: Date

    public init(deadline: Date, handler: @escaping (Content) -> Void) {
        self.deadline = deadline
        self.handler = handler
    }

    /// Delivers the opened content, unless the delivery is already made; true if it was this.
    /// Content that arrives at or after the deadline is not delivered: the system has taken
    /// the fallback by then (or is about to), so it is `expire`'s to deliver.
    @discardableResult
    public func complete(with content: Content, now: Date = Date()) -> Bool {
        guard now < deadline else { return take(nil, as: .opened) }
        return take(content, as: .opened)
    }

    /// Time is up: delivers `fallback` (the placeholder, or the best attempt) unless the
    /// delivery is already made; true if it was this.
    @discardableResult
    public func expire(with fallback: Content) -> Bool {
        take(fallback, as: .expired)
    }

    /// How it ended, once it has.
    public var ending: Ending? { lock.withLock { completedBy } }
    /// Calls after the first, which changed nothing.
    public var ignoredCalls: Int { lock.withLock { ignored } }

    private func take(_ content: Content?, as ending: Ending) -> Bool {
        let deliver: ((Content) -> Void)? = lock.withLock {
            guard let handler, content != nil else {
                ignored += 1
                return nil
            }
            self.handler = nil
            completedBy = ending
            return handler
        }
        guard let deliver, let content else { return false }
        // Outside the lock: the handler is the system's and may take its time.
        deliver(content)
        return true
    }
}
