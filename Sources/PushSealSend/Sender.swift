import Dispatch
import Locking
import MonotonicTime
import PushSeal
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What became of one notification.
public struct SendResult<Target: Sendable>: Sendable {
    public enum Outcome: String, Sendable {
        /// The service accepted it.
        case ok
        /// The service refused it for good (APNs: 400, 403, 404, 405, 410, 413).
        case refused
        /// Only temporary failures, and the retries ran out.
        case failed
    }

    /// Whom it was for.
    public let target: Target
    public let outcome: Outcome
    /// The HTTP status of the last answer; 0 when none came.
    public let status: Int
    /// The notification's id: the service's, when it gave one (APNs' `apns-id`), else the
    /// one it was sent with.
    public let notificationID: String
    /// The service's reason, or the transport's words when no answer came.
    public let reason: String?
    /// For APNs' 410: when it last knew the token was invalid (ms since 1970).
    public let timestamp: Int64?
    public let attempts: Int
    public let elapsed: Duration
    /// It was sent again after an attempt whose outcome is unknown (sent, no answer):
    /// the device may have got it twice.
    public let retriedAfterUnknownOutcome: Bool
    /// The answer's `date` header, when the server sent one (`doctor send` checks the
    /// clock against it).
    public package(set) var serverDate: String? = nil
}

/// How many notifications were added and how many have had their result handed out: read
/// without a lock, so a forced exit can say how many were left without one.
package final class SendProgress: Sendable {
    package let added = Atomic<Int>(0)
    package let reported = Atomic<Int>(0)

    package init() {}

    /// Notifications added whose result has not been handed out.
    package var unreported: Int { added.load(ordering: .relaxed) - reported.load(ordering: .relaxed) }
}

/// Delivers payloads through a push service's provider, one result per notification in the
/// order they were added. It knows no service: the provider writes each request and judges
/// each answer, and the transport carries them.
///
/// - Every notification gets its own id, kept across retries, so a result names the
///   notification the service saw.
/// - What the provider calls temporary (APNs: 429, 500, 502, 503 and 504) is retried with
///   exponential backoff and jitter (or after the server's `retry-after`, when longer),
///   within `Settings.retryFor` of the first attempt and at most `Settings.retries` times
///   when a cap is set; what it calls refused is final.
/// - A request the server cannot have processed is sent again by the transport itself.
///   One that went out and got no answer (a reset, a connection that died, a stall) may have
///   been delivered: it is sent again once at most, and its result says so.
/// - A credential the service refuses (APNs' 403 `ExpiredProviderToken`) is made again
///   (unless another request already did) and the notification sent again, once.
/// - At most `window` results wait at once (added and not yet reported), so memory stays
///   flat whatever the number of notifications.
package final class Sender<Provider: PushProvider>: Sendable {
    package typealias Result = SendResult<Provider.Target>

    /// How long and how often a notification is tried.
    package struct Settings: Sendable {
        /// At most this many retries; nil: as many as `retryFor` allows (about a dozen in the
        /// default minute, the backoff doubling to 8 s), so the two bounds never disagree.
        package var retries: Int?
        /// No retry starts later than this after a notification's first attempt.
        package var retryFor: Duration

        package init(retries: Int? = nil, retryFor: Duration = SendRetries.defaultRetryFor) {
            self.retries = retries
            self.retryFor = retryFor
        }
    }

    private struct Pending: Sendable {
        let seq: Int
        let target: Provider.Target
        let payload: [UInt8]
        /// This notification's expiration, when it has its own (a batch line's ttl).
        let expiration: String?
        let notificationID: String
        let start: MonotonicClock.Instant
        var attempts = 0
        var tokenRenewed = false
        var retriedAfterUnknownOutcome = false
        var credential = ""
        /// The origin its last request named, for the words when it cannot be used.
        var origin = ""
    }

    private let settings: Settings
    private let provider: Provider
    /// The provider's credentials; nil when the connection authenticates instead.
    private let credentials: (any PushCredentials)?
    private let backoff: @Sendable (Int) -> Duration
    private let pending = Locked<[Int: Pending]>([:])
    /// Results in the order notifications were added, at most `window` waiting.
    private let order: OrderedWindow<Result>
    private let nextSeq = Locked(0)
    private let client = Locked<(any PushTransport)?>(nil)
    /// Set once an answer has come: from then on a connection failure is one request's.
    private let connected = Locked(false)
    /// Set when the endpoint cannot be used at all: every device from then on is reported
    /// as not sent, with why, without a try.
    private let stopped = Locked<SendError?>(nil)
    /// Set by a first SIGINT/SIGTERM: what fails from then on is reported, not retried.
    private let retrying = Locked(true)
    private let progress: SendProgress

    /// Why the whole send stopped (an endpoint that cannot be reached or trusted), if it did.
    package var failure: SendError? { stopped.withLock { $0 } }

    /// A sender over HTTP/2, connected as `connection` says.
    /// - Parameter emit: gets each result, in the order notifications were added, one at a time.
    package convenience init(
        settings: Settings, provider: Provider, connection: SendConnection, progress: SendProgress = SendProgress(),
        emit: @escaping @Sendable (Result) -> Void
    ) throws(SendError) {
        try self.init(settings: settings, provider: provider, window: connection.window, progress: progress, emit: emit) {
            answered throws(SendError) in
            try HTTP2PushTransport(connection, answered: answered)
        }
    }

    /// A sender over any transport (tests run the engine against an in-process fake).
    /// - Parameters:
    ///   - window: results that may wait at once.
    ///   - backoff: the wait before retry N (`SendRetries.backoff` in use).
    ///   - transport: made with the callback that takes its answers.
    package init(
        settings: Settings, provider: Provider, window: Int, progress: SendProgress = SendProgress(),
        backoff: @escaping @Sendable (Int) -> Duration = SendRetries.backoff(afterAttempt:),
        emit: @escaping @Sendable (Result) -> Void,
        transport: (@escaping @Sendable ([PushAnswer]) -> Void) throws(SendError) -> any PushTransport
    ) throws(SendError) {
        self.progress = progress
        self.settings = settings
        self.provider = provider
        credentials = provider.credentials
        self.backoff = backoff
        order = OrderedWindow(size: window) { [progress] result in
            emit(result)
            progress.reported.add(1, ordering: .relaxed)
        }
        let started = try transport { [weak self] answers in
            for answer in answers { self?.answered(answer) }
        }
        client.withLock { $0 = started }
    }

    /// Sends `payload` to `target`; waits while `window` results are pending.
    /// - Parameter expiration: this one's expiration, instead of the provider's.
    package func add(_ target: Provider.Target, payload: [UInt8], expiration: String? = nil) throws {
        try add(batch: [(target: target, payload: payload, expiration: expiration)])
    }

    /// Several at once, in order: each request is made here (for Web Push, encrypted for its
    /// subscription), then all go to the transport together, so its loop thread is woken once
    /// for them rather than once each (on one core, a wake per request costs as much as the
    /// request). Waits while `window` results are pending; a batch is far smaller than the
    /// window, so it never waits on its own results.
    package func add(batch: [(target: Provider.Target, payload: [UInt8], expiration: String?)]) throws {
        var requests: [PushRequest] = []
        defer { if !requests.isEmpty { client.withLock { $0 }?.submit(requests) } }
        for entry in batch {
            order.enter()
            progress.added.add(1, ordering: .relaxed)
            let seq = nextSeq.withLock { next -> Int in
                defer { next += 1 }
                return next
            }
            let item = Pending(
                seq: seq, target: entry.target, payload: entry.payload, expiration: entry.expiration,
                notificationID: APNs.newIdentifier(), start: MonotonicClock.system.now)
            // The endpoint cannot be used: this device still gets its line, in its place.
            if let failure {
                report(item, outcome: .failed, status: 0, notificationID: item.notificationID, reason: "not sent: \(failure.reason)", timestamp: nil)
                continue
            }
            do {
                requests.append(try prepare(item))
            } catch {
                // No token for it (the cache cannot be kept): its place in the order is filled
                // with its failure, so the results before it are printed and finish() returns.
                report(item, outcome: .failed, status: 0, notificationID: item.notificationID, reason: "\(error)", timestamp: nil)
                throw error
            }
        }
    }

    /// The most `add(batch:)` should be given at once: far below any window.
    package static var batchLimit: Int { 32 }

    /// No more retries and no more sending: each request that fails from now on is reported
    /// as it stands, so a stop does not wait out backoffs or timeouts against a server that
    /// keeps failing or says nothing.
    package func stopRetrying() {
        retrying.withLock { $0 = false }
        // Devices not yet on the wire are not sent; answers on their way get five seconds.
        client.withLock { $0 }?.stop(grace: SendRetries.stopGrace)
    }

    /// Waits for every result, then closes the connections.
    package func finish() {
        order.wait()
        client.withLock { $0 }?.finish()
    }

    private func submit(_ item: Pending) throws {
        let request = try prepare(item)
        client.withLock { $0 }?.submit([request])
    }

    /// The request for an attempt at `item`, which waits in `pending` for its answer.
    private func prepare(_ item: Pending) throws -> PushRequest {
        var item = item
        item.attempts += 1
        if let credentials { item.credential = try credentials.credential(replacing: nil, because: .expired) }
        let request = try provider.request(
            id: item.seq, to: item.target, payload: item.payload, notificationID: item.notificationID,
            expiration: item.expiration, credential: credentials == nil ? nil : item.credential)
        item.origin = request.origin
        pending.withLock { $0[item.seq] = item }
        return request
    }

    private func answered(_ response: PushAnswer) {
        guard let item = pending.withLock({ $0.removeValue(forKey: response.id) }) else { return }
        if response.status != 0 { connected.withLock { $0 = true } }
        if let failure = response.failure {
            return failed(item, failure)
        }
        let date = response.header("date")
        switch provider.verdict(on: response) {
        case let .delivered(id):
            report(item, outcome: .ok, status: response.status, notificationID: id ?? item.notificationID, reason: nil, timestamp: nil, date: date)
        case let .credentialRefused(because, _, _, _)
        where !item.tokenRenewed && credentials != nil
            && (because == .expired || !(credentials?.minted(item.credential) ?? true)):
            // Expired: renewed (within APNs' limit). Invalid, for a token read from the cache:
            // one made from the key in hand is tried before the device is reported.
            var renewed = item
            renewed.tokenRenewed = true
            let again = renewed
            let rejected = item.credential
            // Off the delivery thread: minting signs and rewrites the cache file.
            DispatchQueue.global().async { [self] in
                do {
                    _ = try credentials?.credential(replacing: rejected, because: because)
                    try submit(again)
                } catch {
                    report(again, outcome: .failed, status: response.status, notificationID: item.notificationID, reason: "\(error)", timestamp: nil)
                }
            }
        case let .credentialRefused(_, status, reason, id):
            report(item, outcome: .refused, status: status, notificationID: id ?? item.notificationID, reason: reason, timestamp: nil, date: date)
        case let .temporary(status, reason, asked):
            retry(item, status: status, reason: reason, after: asked)
        case let .refused(status, reason, id, timestamp):
            report(item, outcome: .refused, status: status, notificationID: id ?? item.notificationID, reason: reason, timestamp: timestamp, date: date)
        }
    }

    /// No answer came.
    private func failed(_ item: Pending, _ failure: PushAnswer.Failure) {
        switch failure.kind {
        case .origin(let problem):
            guard !connected.withLock({ $0 }) else {
                // Answers came before: this device's line says what stopped it.
                return report(
                    item, outcome: .failed, status: 0, notificationID: item.notificationID, reason: provider.words(for: problem, failure.message, origin: item.origin),
                    timestamp: nil)
            }
            // Not this device's failure but the setup's: one error, not a line per device.
            let code: SendError.Code =
                switch problem {
                case .unreachable: .unreachable
                case .untrusted: .untrusted
                case .notHTTP2, .proxyRefused, .noCommonTLS: .refused
                }
            let words = provider.words(for: problem, failure.message, origin: item.origin)
            stopped.withLock { if $0 == nil { $0 = SendError(code, words) } }
            report(item, outcome: .failed, status: 0, notificationID: item.notificationID, reason: words, timestamp: nil)
        case .notSent:
            retry(item, status: 0, reason: failure.message, after: nil)
        case .refused:
            // Refused before it left: no retry would fare better, so it is final (exit 69).
            report(item, outcome: .refused, status: 0, notificationID: item.notificationID, reason: failure.message, timestamp: nil)
        case .unknownOutcome:
            // It may have been delivered: once more at most, and the result will say so.
            guard !item.retriedAfterUnknownOutcome else {
                return report(item, outcome: .failed, status: 0, notificationID: item.notificationID, reason: failure.message, timestamp: nil)
            }
            var again = item
            again.retriedAfterUnknownOutcome = true
            retry(again, status: 0, reason: failure.message, after: nil)
        }
    }

    /// Sends `item` again after a backoff, if its retries and time allow and no stop came.
    private func retry(_ item: Pending, status: Int, reason: String, after asked: Duration?) {
        let delay = max(backoff(item.attempts), asked ?? .zero)
        guard settings.retries.map({ item.attempts <= $0 }) ?? true, retrying.withLock({ $0 }),
            MonotonicClock.system.now - item.start + delay <= settings.retryFor
        else {
            return report(item, outcome: .failed, status: status, notificationID: item.notificationID, reason: reason, timestamp: nil)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(delay.saturatingNanoseconds))) { [self] in
            // A stop that came during the backoff ends it here.
            guard retrying.withLock({ $0 }) else {
                return report(item, outcome: .failed, status: status, notificationID: item.notificationID, reason: reason, timestamp: nil)
            }
            do {
                try submit(item)
            } catch {
                report(item, outcome: .failed, status: status, notificationID: item.notificationID, reason: reason, timestamp: nil)
            }
        }
    }

    private func report(
        _ item: Pending, outcome: Result.Outcome, status: Int, notificationID: String, reason: String?, timestamp: Int64?,
        date: String? = nil
    ) {
        var result = Result(
            target: item.target, outcome: outcome, status: status, notificationID: notificationID, reason: reason,
            timestamp: timestamp, attempts: item.attempts, elapsed: MonotonicClock.system.now - item.start,
            retriedAfterUnknownOutcome: item.retriedAfterUnknownOutcome)
        result.serverDate = date
        order.finish(item.seq, result)
    }
}

/// The retry rules every sender shares.
package enum SendRetries {
    /// `retryFor` unless one is chosen (`--retry-for`'s default, and its help's).
    package static let defaultRetryFor = Duration.seconds(60)

    /// How long a stop waits for answers to requests already sent.
    package static let stopGrace = Duration.seconds(5)

    /// 250 ms, doubling each time up to 8 s, with ±50 % jitter so that many senders that
    /// failed together do not come back together.
    package static func backoff(afterAttempt attempt: Int) -> Duration {
        let base = min(8_000.0, 250.0 * Double(1 << min(max(attempt, 1) - 1, 10)))
        return .milliseconds(Int(base * Double.random(in: 0.5...1.5)))
    }
}
