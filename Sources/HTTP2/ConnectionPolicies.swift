import MonotonicTime

// The server's rules for how long a connection may take and how much it may ask, as values:
// each is given the time (`now`) by its caller, so tests drive them with instants of their
// own instead of hostile peer processes and real waiting. The connection and the loop own
// one each and act on what they answer.

/// Resets of unanswered streams (and empty DATA frames) a client may send: a token bucket,
/// as nghttp2 keeps against "rapid reset" (CVE-2023-44487): `burst` at once, refilled at
/// `perSecond`. Past it the client is sent away (GOAWAY ENHANCE_YOUR_CALM).
package struct ResetBudget: Sendable {
    package let burst: Int
    package let perSecond: Int
    private var allowance: Double
    private var checkedAt: MonotonicClock.Instant

    package init(burst: Int, perSecond: Int, now: MonotonicClock.Instant) {
        self.burst = burst
        self.perSecond = perSecond
        allowance = Double(burst)
        checkedAt = now
    }

    /// Spends one; false once the budget is overdrawn (and for every spend after that,
    /// until time refills it).
    package mutating func spend(now: MonotonicClock.Instant) -> Bool {
        let seconds = Double((now - checkedAt).saturatingNanoseconds) / 1e9
        checkedAt = max(checkedAt, now)
        allowance = min(Double(burst), allowance + max(0, seconds) * Double(perSecond))
        allowance -= 1
        return allowance >= 0
    }
}

/// How long a connection is held at each stage: a handshake (TLS and the client's preface)
/// gets `handshake`, an idle HTTP/2 connection `idle`, a request that stops moving
/// `request`, and output the client stopped reading `idle`.
package struct ConnectionTimeouts: Sendable {
    package let handshake: Duration
    package let idle: Duration
    package let request: Duration

    package init(handshake: Duration, idle: Duration, request: Duration) {
        self.handshake = handshake
        self.idle = idle
        self.request = request
    }

    /// What a connection is, for its timeouts.
    package enum Stage: Sendable {
        /// Accepted, not yet HTTP/2 (a TLS handshake under way, or no preface yet).
        case handshaking(acceptedAt: MonotonicClock.Instant)
        /// HTTP/2: `idleSince` when no request is open; `outputWaitingSince` when answers
        /// wait for the client to read them (the last time the socket took any).
        case open(idleSince: MonotonicClock.Instant?, outputWaitingSince: MonotonicClock.Instant?)
    }

    package enum Verdict: Equatable, Sendable {
        case keep
        /// Close at once: a silent socket, or a client that stopped reading.
        case close
        /// Idle past its time: GOAWAY, then close.
        case goAwayAndClose
        /// Its requests that made no progress since `progressBefore` are cancelled.
        case cancelStalledRequests(progressBefore: MonotonicClock.Instant)
    }

    /// The time a request may make no progress: the request timeout, never more than idle.
    package var stalledRequest: Duration { min(request, idle) }

    package func verdict(_ stage: Stage, now: MonotonicClock.Instant) -> Verdict {
        switch stage {
        case let .handshaking(acceptedAt):
            // The handshake's time (10 s by default), not the idle time: a silent socket is
            // held no longer.
            return now - acceptedAt > min(handshake, idle) ? .close : .keep
        case let .open(idleSince, outputWaitingSince):
            if let outputWaitingSince, now - outputWaitingSince > idle {
                // The client stopped reading its answers: nothing more can reach it.
                return .close
            }
            if let idleSince {
                return now - idleSince > idle ? .goAwayAndClose : .keep
            }
            let window = UInt64(max(0, stalledRequest.saturatingNanoseconds))
            return .cancelStalledRequests(progressBefore: MonotonicClock.Instant(nanoseconds: now.nanoseconds > window ? now.nanoseconds - window : 0))
        }
    }
}

/// Which connection gives way when a new one comes at the cap, so idle clients cannot lock
/// out working ones.
package enum ConnectionEviction {
    /// A connection as the choice sees it.
    package struct Candidate: Sendable, Equatable {
        package let number: Int
        /// Not yet HTTP/2: it has done no work.
        package let isPending: Bool
        package let acceptedAt: MonotonicClock.Instant
        /// Since when no request is open; nil while one is.
        package let idleSince: MonotonicClock.Instant?

        package init(number: Int, isPending: Bool, acceptedAt: MonotonicClock.Instant, idleSince: MonotonicClock.Instant?) {
            self.number = number
            self.isPending = isPending
            self.acceptedAt = acceptedAt
            self.idleSince = idleSince
        }
    }

    /// At the cap: the oldest connection not yet HTTP/2, else the longest-idle HTTP/2 one;
    /// nil when every connection has a request open (the newcomer is refused instead).
    package static func victim(among candidates: [Candidate]) -> Candidate? {
        candidates.filter(\.isPending).min { $0.acceptedAt < $1.acceptedAt }
            ?? candidates.filter { $0.idleSince != nil }.min { $0.idleSince! < $1.idleSince! }
    }

    /// Below the cap too: connections not yet HTTP/2 have a cap of their own, a quarter of
    /// the whole (at least 16); at it, the oldest of them gives way to the newcomer.
    package static func pendingVictim(among candidates: [Candidate], connectionLimit: Int) -> Candidate? {
        let pending = candidates.filter(\.isPending)
        guard pending.count >= max(16, connectionLimit / 4) else { return nil }
        return pending.min { $0.acceptedAt < $1.acceptedAt }
    }
}
