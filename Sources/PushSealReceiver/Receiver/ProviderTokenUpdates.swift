import MonotonicTime
import PushSeal

/// Each connection's provider token and when it last changed: APNs answers
/// `TooManyProviderTokenUpdates` to a connection that changes its token more often than
/// every `interval` (20 minutes), and so does the listener. A value given the time by its
/// caller, so a test drives it with instants of its own.
package struct ProviderTokenUpdates: Sendable {
    package let interval: Duration
    private var tokens: [Int: (token: String, setAt: MonotonicClock.Instant)] = [:]

    package init(interval: Duration) {
        self.interval = interval
    }

    /// False when `token` replaces the connection's token too soon after its last change.
    /// A connection's first token, and the same token again, are always allowed.
    package mutating func allows(_ token: String, on connection: Int, now: @autoclosure () -> MonotonicClock.Instant) -> Bool {
        guard let current = tokens[connection] else {
            tokens[connection] = (token, now())
            return true
        }
        // The same token as before, as on nearly every request: no clock needed.
        if current.token == token { return true }
        let now = now()
        guard now - current.setAt >= interval else { return false }
        tokens[connection] = (token, now)
        return true
    }

    /// The connection ended: its token is forgotten.
    package mutating func forget(_ connection: Int) {
        tokens.removeValue(forKey: connection)
    }

    /// Connections with a token held.
    package var connections: Int { tokens.count }
}
