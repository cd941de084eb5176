import Dispatch
import HTTP2
import Locking
import MonotonicTime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Delivers payloads to APNs (or any server that speaks its provider API), one result per
/// device in the order they were added.
///
/// - Every notification gets its own `apns-id`, kept across retries, so a result names the
///   notification APNs saw.
/// - 429, 500, 502, 503 and 504 are retried with exponential backoff and jitter (or after
///   the server's `retry-after`, when longer), within `Settings.retryFor` of the first
///   attempt and at most `Settings.retries` times when a cap is set; 400, 403, 404, 405, 410 and 413 are final.
/// - A request the server cannot have processed is sent again by the HTTP/2 client itself.
///   One that went out and got no answer (a reset, a connection that died, a stall) may have
///   been delivered: it is sent again once at most, and its result says so.
/// - 403 `ExpiredProviderToken` mints a new token (unless another request already did)
///   and sends again, once.
/// - At most `window` results wait at once (added and not yet reported), so memory stays
///   flat whatever the number of devices.
package final class Sender: Sendable {
    package struct Settings: Sendable {
        package var topic: String
        package var pushType: APNs.PushType
        package var priority: APNs.Priority?
        package var expiration: String?
        package var collapseID: String?
        /// At most this many retries; nil: as many as `retryFor` allows (about a dozen in the
        /// default minute, the backoff doubling to 8 s), so the two bounds never disagree.
        package var retries: Int?
        /// No retry starts later than this after a notification's first attempt.
        package var retryFor: Duration
        /// `retryFor` unless one is chosen (`--retry-for`'s default, and its help's).
        package static let defaultRetryFor = Duration.seconds(60)

        package init(
            topic: String, pushType: APNs.PushType = .alert, priority: APNs.Priority? = nil, expiration: String? = nil,
            collapseID: String? = nil, retries: Int? = nil, retryFor: Duration = Settings.defaultRetryFor
        ) {
            self.topic = topic
            self.pushType = pushType
            self.priority = priority
            self.expiration = expiration
            self.collapseID = collapseID
            self.retries = retries
            self.retryFor = retryFor
        }
    }

    /// What became of one device's notification.
    package struct Result: Sendable {
        package enum Outcome: String, Sendable {
            /// APNs accepted it.
            case ok
            /// APNs refused it for good (400, 403, 404, 405, 410, 413).
            case refused
            /// Only temporary failures, and the retries ran out.
            case failed
        }

        package let device: String
        package let outcome: Outcome
        /// The HTTP status of the last answer; 0 when none came.
        package let status: Int
        package let apnsID: String
        /// APNs' reason, or the transport's words when no answer came.
        package let reason: String?
        /// For 410: when APNs last knew the token was invalid (ms since 1970).
        package let timestamp: Int64?
        package let attempts: Int
        package let elapsed: Duration
        /// It was sent again after an attempt whose outcome is unknown (sent, no answer):
        /// the device may have got it twice.
        package let retriedAfterUnknownOutcome: Bool
        /// The answer's `date` header, when the server sent one (`doctor send` checks the
        /// clock against it).
        package var serverDate: String? = nil
    }

    private struct Pending: Sendable {
        let seq: Int
        let device: String
        let payload: [UInt8]
        /// This notification's apns-expiration, when it has its own (a batch line's ttl).
        let expiration: String?
        let apnsID: String
        let start: MonotonicClock.Instant
        var attempts = 0
        var tokenRenewed = false
        var retriedAfterUnknownOutcome = false
        var token = ""
    }

    /// Results that may wait at once: twice what can be in flight, so the connections never
    /// run dry, and memory stays flat whatever the number of devices.
    package static func window(connections: Int, streams: Int) -> Int {
        min(10_000, max(2_000, 2 * connections * streams))
    }
    private let settings: Settings
    /// Provider tokens; nil when the connection's client certificate authenticates instead.
    private let tokens: (any ProviderTokenSource)?
    private let provider: any PushProvider
    private let backoff: @Sendable (Int) -> Duration
    private let emit: @Sendable (Result) -> Void
    private let pending = Locked<[Int: Pending]>([:])
    private let order = Locked(ReorderBuffer<Result>(first: 0))
    private let room: DispatchSemaphore
    /// The authorization header for the token in use, made once per token rather than once
    /// per request (a 200-byte string each, ten thousand waiting).
    private let bearer = Locked<(token: String, header: String)>(("", ""))
    private let outstanding = DispatchGroup()
    private let nextSeq = Locked(0)
    private let client = Locked<(any PushTransport)?>(nil)
    /// Set once an answer has come: from then on a connection failure is one request's.
    private let connected = Locked(false)
    /// Set when the endpoint cannot be used at all: every device from then on is reported
    /// as not sent, with why, without a try.
    private let stopped = Locked<SendError?>(nil)
    /// Set by a first SIGINT/SIGTERM: what fails from then on is reported, not retried.
    private let retrying = Locked(true)
    private let endpoint: String

    /// How many devices were added and how many have had their result handed out: read
    /// without a lock, so a forced exit can say how many were left without one.
    package final class Progress: Sendable {
        package let added = Atomic<Int>(0)
        package let reported = Atomic<Int>(0)

        package init() {}

        /// Devices added whose result has not been handed out.
        package var unreported: Int { added.load(ordering: .relaxed) - reported.load(ordering: .relaxed) }
    }

    private let progress: Progress

    /// Why the whole send stopped (an endpoint that cannot be reached or trusted), if it did.
    package var failure: SendError? { stopped.withLock { $0 } }

    /// - Parameters:
    ///   - connection: the endpoint and how to reach it.
    ///   - emit: gets each result, in the order devices were added, one at a time.
    package convenience init(
        settings: Settings, tokens: ProviderTokenCache?, connection given: SendConnection, progress: Progress = Progress(),
        emit: @escaping @Sendable (Result) -> Void
    ) throws(SendError) {
        let connection = given.engine
        try self.init(
            settings: settings, tokens: tokens, provider: APNsProvider(settings: settings), endpoint: connection.endpoint.description,
            window: Self.window(connections: connection.connections, streams: connection.maximumStreams),
            progress: progress, emit: emit
        ) { answered throws(SendError) in
            do throws(HTTP2ClientError) {
                return try HTTP2Client(connection, onResponses: answered)
            } catch {
                throw SendError(.setup, error.message, underlying: error)
            }
        }
    }

    /// A sender over any transport, token source and provider (tests run the engine against
    /// an in-process fake).
    /// - Parameters:
    ///   - endpoint: named in the words of an endpoint that cannot be used.
    ///   - window: results that may wait at once.
    ///   - backoff: the wait before retry N (`Sender.backoff` in use).
    ///   - transport: made with the callback that takes its answers.
    package init(
        settings: Settings, tokens: (any ProviderTokenSource)?, provider: any PushProvider, endpoint: String, window: Int,
        progress: Progress = Progress(), backoff: @escaping @Sendable (Int) -> Duration = Sender.backoff(afterAttempt:),
        emit: @escaping @Sendable (Result) -> Void,
        transport: (@escaping @Sendable ([HTTP2Client.Response]) -> Void) throws(SendError) -> any PushTransport
    ) throws(SendError) {
        self.progress = progress
        self.settings = settings
        self.tokens = tokens
        self.provider = provider
        self.backoff = backoff
        self.endpoint = endpoint
        self.emit = emit
        room = DispatchSemaphore(value: window)
        let started = try transport { [weak self] responses in
            for response in responses { self?.answered(response) }
        }
        client.withLock { $0 = started }
    }

    /// Sends `payload` to `device`; waits while `window` results are pending.
    /// - Parameter expiration: apns-expiration for this one, instead of the settings'.
    package func add(device: String, payload: [UInt8], expiration: String? = nil) throws {
        room.wait()
        progress.added.add(1, ordering: .relaxed)
        outstanding.enter()
        let seq = nextSeq.withLock { next -> Int in
            defer { next += 1 }
            return next
        }
        let item = Pending(
            seq: seq, device: device, payload: payload, expiration: expiration,
            apnsID: ReceivedInput.newIdentifier(), start: MonotonicClock.system.now)
        // The endpoint cannot be used: this device still gets its line, in its place.
        if let failure {
            return report(item, outcome: .failed, status: 0, apnsID: item.apnsID, reason: "not sent: \(failure.reason)", timestamp: nil)
        }
        do {
            try submit(item)
        } catch {
            // No token for it (the cache cannot be kept): its place in the order is filled
            // with its failure, so the results before it are printed and finish() returns.
            report(item, outcome: .failed, status: 0, apnsID: item.apnsID, reason: "\(error)", timestamp: nil)
            throw error
        }
    }

    /// No more retries and no more sending: each request that fails from now on is reported
    /// as it stands, so a stop does not wait out backoffs or timeouts against a server that
    /// keeps failing or says nothing.
    package func stopRetrying() {
        retrying.withLock { $0 = false }
        // Devices not yet on the wire are not sent; answers on their way get five seconds.
        client.withLock { $0 }?.stop(grace: Self.stopGrace)
    }

    /// How long a stop waits for answers to requests already sent.
    package static let stopGrace = Duration.seconds(5)

    /// Waits for every result, then closes the connections.
    package func finish() {
        outstanding.wait()
        client.withLock { $0 }?.finish()
    }

    private func submit(_ item: Pending) throws {
        var item = item
        item.attempts += 1
        var authorization: String?
        if let tokens {
            item.token = try tokens.token(replacing: nil, because: .expired)
            authorization = bearer.withLock { held in
                if held.token != item.token { held = (item.token, "bearer " + item.token) }
                return held.header
            }
        }
        let request = provider.request(
            id: item.seq, device: item.device, payload: item.payload, notificationID: item.apnsID,
            expiration: item.expiration, authorization: authorization)
        pending.withLock { $0[item.seq] = item }
        client.withLock { $0 }?.submit([request])
    }

    private func answered(_ response: HTTP2Client.Response) {
        guard let item = pending.withLock({ $0.removeValue(forKey: response.id) }) else { return }
        if response.status != 0 { connected.withLock { $0 = true } }
        if let failure = response.failure {
            return failed(item, failure)
        }
        let date = response.header("date")
        switch provider.verdict(on: response) {
        case let .delivered(id):
            report(item, outcome: .ok, status: response.status, apnsID: id ?? item.apnsID, reason: nil, timestamp: nil, date: date)
        case let .tokenRefused(because, _, _, _)
        where !item.tokenRenewed && tokens != nil
            && (because == .expired || !(tokens?.minted(item.token) ?? true)):
            // Expired: renewed (within APNs' limit). Invalid, for a token read from the cache:
            // one made from the key in hand is tried before the device is reported.
            var renewed = item
            renewed.tokenRenewed = true
            let again = renewed
            let rejected = item.token
            // Off the delivery thread: minting signs and rewrites the cache file.
            DispatchQueue.global().async { [self] in
                do {
                    _ = try tokens?.token(replacing: rejected, because: because)
                    try submit(again)
                } catch {
                    report(again, outcome: .failed, status: response.status, apnsID: item.apnsID, reason: "\(error)", timestamp: nil)
                }
            }
        case let .tokenRefused(_, status, reason, id):
            report(item, outcome: .refused, status: status, apnsID: id ?? item.apnsID, reason: reason, timestamp: nil, date: date)
        case let .temporary(status, reason, asked):
            retry(item, status: status, reason: reason, after: asked)
        case let .refused(status, reason, id, timestamp):
            report(item, outcome: .refused, status: status, apnsID: id ?? item.apnsID, reason: reason, timestamp: timestamp, date: date)
        }
    }

    /// No answer came.
    private func failed(_ item: Pending, _ failure: HTTP2Client.Failure) {
        switch failure.kind {
        case .endpoint(let problem):
            guard !connected.withLock({ $0 }) else {
                // Answers came before: this device's line says what stopped it.
                return report(
                    item, outcome: .failed, status: 0, apnsID: item.apnsID, reason: Self.words(for: problem, failure.message, endpoint),
                    timestamp: nil)
            }
            // Not this device's failure but the setup's: one error, not a line per device.
            let code: SendError.Code =
                switch problem {
                case .unreachable: .unreachable
                case .untrusted: .untrusted
                case .notHTTP2, .proxyRefused, .noCommonTLS: .refused
                }
            let words = Self.words(for: problem, failure.message, endpoint)
            stopped.withLock { if $0 == nil { $0 = SendError(code, words) } }
            report(item, outcome: .failed, status: 0, apnsID: item.apnsID, reason: words, timestamp: nil)
        case .notSent:
            retry(item, status: 0, reason: failure.message, after: nil)
        case .refused:
            // Refused before it left: no retry would fare better, so it is final (exit 69).
            report(item, outcome: .refused, status: 0, apnsID: item.apnsID, reason: failure.message, timestamp: nil)
        case .unknownOutcome:
            // It may have been delivered: once more at most, and the result will say so.
            guard !item.retriedAfterUnknownOutcome else {
                return report(item, outcome: .failed, status: 0, apnsID: item.apnsID, reason: failure.message, timestamp: nil)
            }
            var again = item
            again.retriedAfterUnknownOutcome = true
            retry(again, status: 0, reason: failure.message, after: nil)
        }
    }

    /// The one line that says why the endpoint cannot be used.
    static func words(for problem: HTTP2Client.EndpointProblem, _ message: String, _ endpoint: String) -> String {
        switch problem {
        case .unreachable: "cannot reach \(endpoint) (\(message))"
        case .untrusted: "the certificate of \(endpoint) is not accepted (\(message))"
        case .notHTTP2: "\(endpoint) does not speak HTTP/2, as APNs does: \(message)"
        case .proxyRefused: message
        case .noCommonTLS: "\(endpoint) offers no TLS that pushseal accepts (TLS 1.2 or later with AEAD suites, as APNs does): \(message)"
        }
    }

    /// Sends `item` again after a backoff, if its retries and time allow and no stop came.
    private func retry(_ item: Pending, status: Int, reason: String, after asked: Duration?) {
        let delay = max(backoff(item.attempts), asked ?? .zero)
        guard settings.retries.map({ item.attempts <= $0 }) ?? true, retrying.withLock({ $0 }),
            MonotonicClock.system.now - item.start + delay <= settings.retryFor
        else {
            return report(item, outcome: .failed, status: status, apnsID: item.apnsID, reason: reason, timestamp: nil)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(delay.saturatingNanoseconds))) { [self] in
            // A stop that came during the backoff ends it here.
            guard retrying.withLock({ $0 }) else {
                return report(item, outcome: .failed, status: status, apnsID: item.apnsID, reason: reason, timestamp: nil)
            }
            do {
                try submit(item)
            } catch {
                report(item, outcome: .failed, status: status, apnsID: item.apnsID, reason: reason, timestamp: nil)
            }
        }
    }

    /// 250 ms, doubling each time up to 8 s, with ±50 % jitter so that many senders that
    /// failed together do not come back together.
    static func backoff(afterAttempt attempt: Int) -> Duration {
        let base = min(8_000.0, 250.0 * Double(1 << min(max(attempt, 1) - 1, 10)))
        return .milliseconds(Int(base * Double.random(in: 0.5...1.5)))
    }

    private func report(
        _ item: Pending, outcome: Result.Outcome, status: Int, apnsID: String, reason: String?, timestamp: Int64?,
        date: String? = nil
    ) {
        var result = Result(
            device: item.device, outcome: outcome, status: status, apnsID: apnsID, reason: reason,
            timestamp: timestamp, attempts: item.attempts, elapsed: MonotonicClock.system.now - item.start,
            retriedAfterUnknownOutcome: item.retriedAfterUnknownOutcome)
        result.serverDate = date
        let released = order.withLock { $0.finish(item.seq, result, release: emit) }
        progress.reported.add(released, ordering: .relaxed)
        for _ in 0..<released {
            room.signal()
            outstanding.leave()
        }
    }
}
