#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import SealCrypto
import MonotonicTime

/// Delivers payloads to APNs (or any server that speaks its provider API), one result per
/// device in the order they were added.
///
/// - Every notification gets its own `apns-id`, kept across retries, so a result names the
///   notification APNs saw.
/// - 429, 500, 503 and answers that never came (a reset, a stream the server did not take,
///   a dropped connection, a stall) are retried with exponential backoff and jitter, at
///   most `Settings.retries` times; 400, 403, 404, 405, 410 and 413 are final.
/// - 403 `ExpiredProviderToken` mints a new token (unless another request already did)
///   and sends again, once.
/// - At most `window` results wait at once (added and not yet reported), so memory stays
///   flat whatever the number of devices.
public final class Sender: Sendable {
    public struct Settings: Sendable {
        public var topic: String
        public var pushType: String
        public var priority: String?
        public var expiration: String?
        public var collapseID: String?
        public var retries: Int

        public init(topic: String, pushType: String = "alert", priority: String? = nil, expiration: String? = nil,
                    collapseID: String? = nil, retries: Int = 3) {
            self.topic = topic
            self.pushType = pushType
            self.priority = priority
            self.expiration = expiration
            self.collapseID = collapseID
            self.retries = retries
        }
    }

    /// What became of one device's notification.
    public struct Result: Sendable {
        public enum Outcome: String, Sendable {
            /// APNs accepted it.
            case ok
            /// APNs refused it for good (400, 403, 404, 405, 410, 413).
            case refused
            /// Only temporary failures, and the retries ran out.
            case failed
        }

        public let device: String
        public let outcome: Outcome
        /// The HTTP status of the last answer; 0 when none came.
        public let status: Int
        public let apnsID: String
        /// APNs' reason, or the transport's words when no answer came.
        public let reason: String?
        /// For 410: when APNs last knew the token was invalid (ms since 1970).
        public let timestamp: Int64?
        public let attempts: Int
        public let elapsed: Duration
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
        var token = ""
    }

    /// Results that may wait at once.
    public static let window = 10_000
    /// Statuses worth sending again: answers that say "not now" (502 and 504 come from a
    /// proxy or load balancer in front of the server).
    static let temporary: Set<Int32> = [429, 500, 502, 503, 504]

    private let settings: Settings
    private let tokens: ProviderTokenCache
    private let emit: @Sendable (Result) -> Void
    private let pending = Locked<[UInt32: Pending]>([:])
    private let order = Locked(InOrder<Result>(first: 0))
    private let room = DispatchSemaphore(value: Sender.window)
    private let outstanding = DispatchGroup()
    private let nextSeq = Locked(0)
    private let transport = Locked<TransportProcess?>(nil)
    /// Set once an answer has come: from then on a connection failure is one request's.
    private let connected = Locked(false)
    /// Set when the endpoint cannot be used at all; no more results are reported.
    private let stopped = Locked<SendError?>(nil)
    /// Set by a first SIGINT/SIGTERM: what fails from then on is reported, not retried.
    private let retrying = Locked(true)
    private let endpoint: String

    /// Why the whole send stopped (an endpoint that cannot be reached or trusted), if it did.
    public var failure: SendError? { stopped.withLock { $0 } }

    /// - Parameters:
    ///   - startTransport: starts the transport with the sender's response handler.
    ///   - emit: gets each result, in the order devices were added, one at a time.
    public init(settings: Settings, tokens: ProviderTokenCache, endpoint: String,
                startTransport: (@escaping @Sendable (TransportFrame.Response) -> Void) throws -> TransportProcess,
                emit: @escaping @Sendable (Result) -> Void) throws {
        self.settings = settings
        self.tokens = tokens
        self.endpoint = endpoint
        self.emit = emit
        let started = try startTransport { [weak self] response in self?.answered(response) }
        transport.withLock { $0 = started }
    }

    /// Sends `payload` to `device`; waits while `window` results are pending.
    /// - Parameter expiration: apns-expiration for this one, instead of the settings'.
    public func add(device: String, payload: [UInt8], expiration: String? = nil) throws {
        if let failure { throw failure }
        room.wait()
        outstanding.enter()
        let seq = nextSeq.withLock { next -> Int in
            defer { next += 1 }
            return next
        }
        let item = Pending(seq: seq, device: device, payload: payload, expiration: expiration,
                           apnsID: ReceivedInput.newIdentifier(), start: MonotonicClock.system.now)
        do {
            try submit(item, id: UInt32(truncatingIfNeeded: seq))
        } catch {
            // No token for it (the cache cannot be kept): its place in the order is filled
            // with its failure, so the results before it are printed and finish() returns.
            report(item, outcome: .failed, status: 0, apnsID: item.apnsID, reason: "\(error)", timestamp: nil)
            throw error
        }
    }

    /// No more retries: each request that fails from now on is reported as it stands, so a
    /// stop does not wait out backoffs against a server that keeps failing.
    public func stopRetrying() {
        retrying.withLock { $0 = false }
    }

    /// Waits for every result, then stops the transport.
    public func finish() {
        outstanding.wait()
        transport.withLock { $0 }?.finish()
    }

    private func submit(_ item: Pending, id: UInt32) throws {
        var item = item
        item.attempts += 1
        item.token = try tokens.token()
        var headers = [
            TransportFrame.Header("apns-topic", settings.topic),
            TransportFrame.Header("apns-push-type", settings.pushType),
            TransportFrame.Header("apns-id", item.apnsID),
            TransportFrame.Header("authorization", "bearer " + item.token),
        ]
        if let priority = settings.priority { headers.append(.init("apns-priority", priority)) }
        if let expiration = item.expiration ?? settings.expiration { headers.append(.init("apns-expiration", expiration)) }
        if let collapse = settings.collapseID { headers.append(.init("apns-collapse-id", collapse)) }
        let request = TransportFrame.Request(id: id, path: "/3/device/" + item.device, headers: headers, body: item.payload)
        pending.withLock { $0[id] = item }
        do {
            guard let transport = transport.withLock({ $0 }) else { throw SendError(.transport, "the transport is not running") }
            try transport.send(request)
        } catch {
            // The transport is gone: this device fails now, and so will the rest.
            pending.withLock { _ = $0.removeValue(forKey: id) }
            report(item, outcome: .failed, status: 0, apnsID: item.apnsID, reason: "\(error)", timestamp: nil)
        }
    }

    private func answered(_ response: TransportFrame.Response) {
        guard let item = pending.withLock({ $0.removeValue(forKey: response.id) }) else { return }
        if response.status != 0 { connected.withLock { $0 = true } }
        if let problem = response.endpointProblem, !connected.withLock({ $0 }),
           problem == .untrusted || item.attempts > settings.retries {
            // Not this device's failure but the setup's: one error, not a line per device.
            let error = problem == .untrusted
                ? SendError(.untrusted, "the certificate of \(endpoint) is not accepted (\(response.failure))")
                : SendError(.unreachable, "cannot reach \(endpoint) (\(response.failure), after \(item.attempts) attempts)")
            stopped.withLock { if $0 == nil { $0 = error } }
            return report(item, outcome: .failed, status: 0, apnsID: item.apnsID, reason: response.failure, timestamp: nil)
        }
        let answer = response.body.isEmpty ? nil : (try? JSONParser.parse(response.body))?.objectValue
        let reason = answer?["reason"]?.stringValue
        switch response.status {
        case 200:
            // The server's apns-id is printed, so only a UUID is taken from it; anything else
            // (control bytes, kilobytes) gives way to the id this request was sent with.
            report(item, outcome: .ok, status: 200, apnsID: APNsRules.isUUID(response.apnsID) ? response.apnsID : item.apnsID,
                   reason: nil, timestamp: nil)
        case 403 where reason == "ExpiredProviderToken" && !item.tokenRenewed:
            var renewed = item
            renewed.tokenRenewed = true
            let again = renewed
            let rejected = item.token
            // Off the reader thread: a send may wait for the transport to read, and the
            // transport may be waiting for this thread to read its answers.
            DispatchQueue.global().async { [self] in
                do {
                    _ = try tokens.token(replacing: rejected)
                    try submit(again, id: response.id)
                } catch {
                    report(again, outcome: .failed, status: 403, apnsID: item.apnsID, reason: "\(error)", timestamp: nil)
                }
            }
        case let status where status == 0 || Self.temporary.contains(status):
            let why = status == 0 ? response.failure : (reason ?? "HTTP \(status)")
            guard item.attempts <= settings.retries, retrying.withLock({ $0 }) else {
                return report(item, outcome: .failed, status: Int(status), apnsID: item.apnsID, reason: why, timestamp: nil)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.backoff(afterAttempt: item.attempts)) { [self] in
                // A stop that came during the backoff ends it here.
                guard retrying.withLock({ $0 }) else {
                    return report(item, outcome: .failed, status: Int(status), apnsID: item.apnsID, reason: why, timestamp: nil)
                }
                do {
                    try submit(item, id: response.id)
                } catch {
                    report(item, outcome: .failed, status: Int(status), apnsID: item.apnsID, reason: why, timestamp: nil)
                }
            }
        default:
            report(item, outcome: .refused, status: Int(response.status),
                   apnsID: response.apnsID.isEmpty ? item.apnsID : response.apnsID,
                   reason: reason ?? "HTTP \(response.status)", timestamp: answer?["timestamp"]?.integerValue)
        }
    }

    /// 250 ms, doubling each time up to 8 s, with ±50 % jitter so that many senders that
    /// failed together do not come back together.
    static func backoff(afterAttempt attempt: Int) -> DispatchTimeInterval {
        let base = min(8_000.0, 250.0 * Double(1 << min(attempt - 1, 10)))
        return .milliseconds(Int(base * Double.random(in: 0.5...1.5)))
    }

    private func report(_ item: Pending, outcome: Result.Outcome, status: Int, apnsID: String, reason: String?, timestamp: Int64?) {
        let result = Result(device: item.device, outcome: outcome, status: status, apnsID: apnsID, reason: reason,
                            timestamp: timestamp, attempts: item.attempts, elapsed: MonotonicClock.system.now - item.start)
        let quiet = stopped.withLock { $0 != nil }
        let released = order.withLock { $0.finish(item.seq, result, release: quiet ? { _ in } : emit) }
        for _ in 0..<released {
            room.signal()
            outstanding.leave()
        }
    }
}
