import Dispatch
import HTTP2
import Locking
import MonotonicTime
import PushSeal
import Synchronization

/// The listener's answer to each request, on the connection's loop thread: the record of a
/// stream that was reset, APNs' refusal of headers past the limit, then the route the path
/// names. One route today, APNs' provider API (every path: APNs itself answers one that is
/// not `/3/device/TOKEN` with BadPath); a second service's endpoint is a second case of
/// `Route`, beside it, not inside it.
final class ListenerRoutes: Sendable {
    enum Route {
        /// `POST /3/device/TOKEN` with the `apns-*` headers, as APNs takes it.
        case apns
    }

    private let rules: APNsRules
    private let records: any RecordSink
    private let tokenUpdates: Locked<ProviderTokenUpdates>
    private let load: APNsListener.Load
    private let inFlight: DispatchGroup
    private let handoff: APNsListener.Handoff
    private let pendingLimit: Int
    private let pendingByteLimit: Int
    /// Numbers requests in the order they were answered.
    private let sequence = Atomic<Int>(0)

    init(
        rules: APNsRules, records: any RecordSink, tokenUpdates: Locked<ProviderTokenUpdates>, load: APNsListener.Load,
        inFlight: DispatchGroup, handoff: APNsListener.Handoff, pendingLimit: Int, pendingByteLimit: Int
    ) {
        self.rules = rules
        self.records = records
        self.tokenUpdates = tokenUpdates
        self.load = load
        self.inFlight = inFlight
        self.handoff = handoff
        self.pendingLimit = pendingLimit
        self.pendingByteLimit = pendingByteLimit
    }

    func route(for request: HTTP2Server.Request) -> Route { .apns }

    /// The answer to `request`, nil for a stream that was reset; every request gets its record.
    func answer(_ request: HTTP2Server.Request) -> HTTP2Server.Response? {
        let seq = sequence.add(1, ordering: .relaxed).newValue
        let source = RecordSource.listen(connection: request.connection, stream: request.stream)
        switch request.ending {
        case .reset(let reason):
            let arrival = APNsRequestFields(device: APNsRules.deviceToken(in: request.path))
            records.emit(DeliveryRecord(seq: seq, source: source, reset: reason, identifier: givenID(request), arrival: arrival), promised: false)
            // The stream is gone: nothing is answered.
            return nil
        case .headersTooLarge:
            return refuse(
                .headerListTooLarge, givenID(request) ?? APNs.newIdentifier(), APNsRequestFields(device: APNsRules.deviceToken(in: request.path)),
                seq: seq, source: source)
        case .complete:
            switch route(for: request) {
            case .apns: return apns(request, seq: seq, source: source)
            }
        }
    }

    /// APNs' provider API: judged by its rules, token updates counted per connection, and an
    /// accepted notification handed to the runner while the bounds allow.
    private func apns(_ request: HTTP2Server.Request, seq: Int, source: String) -> HTTP2Server.Response {
        switch rules.judge(method: request.method, path: request.path, headers: request.headers, bodyLength: request.bodyLength) {
        case let .rejected(answer, identifier, arrival):
            return refuse(answer, identifier, arrival, seq: seq, source: source)
        case let .accepted(identifier, arrival):
            if let token = request.values(APNs.Header.authorization.rawValue).first,
                !tokenUpdates.withLock({ $0.allows(token, on: request.connection, now: MonotonicClock.system.now) })
            {
                return refuse(.tooManyProviderTokenUpdates, identifier, arrival, seq: seq, source: source)
            }
            guard records.hasRoom, load.admit(bytes: request.body.count, limit: pendingLimit, byteLimit: pendingByteLimit) else {
                load.refused.add(1, ordering: .relaxed)
                return refuse(.serviceUnavailable, identifier, arrival, seq: seq, source: source)
            }
            inFlight.enter()
            handoff.add(.init(seq: seq, source: source, identifier: identifier, arrival: arrival, body: request.body))
            // The apns-id is new in every answer: not worth a place in HPACK's table.
            return HTTP2Server.Response(status: 200, headers: [(APNs.Header.id.rawValue, identifier)], unindexedHeaders: 1)
        }
    }

    /// The request's own apns-id, when it is a UUID.
    private func givenID(_ request: HTTP2Server.Request) -> String? {
        request.values(APNs.Header.id.rawValue).first.flatMap { APNsRules.isUUID($0) ? $0 : nil }
    }

    /// APNs' refusal, recorded.
    private func refuse(
        _ answer: APNsRejection, _ identifier: String, _ arrival: APNsRequestFields, seq: Int, source: String
    ) -> HTTP2Server.Response {
        records.emit(DeliveryRecord(seq: seq, source: source, rejected: answer, identifier: identifier, arrival: arrival), promised: false)
        return HTTP2Server.Response(
            status: answer.status, headers: [(APNs.Header.id.rawValue, identifier), ("content-type", "application/json")],
            body: rules.body(for: answer), unindexedHeaders: 1)
    }
}
