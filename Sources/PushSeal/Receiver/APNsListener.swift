import Dispatch
import HTTP2Server
import SealCrypto
import Synchronization

/// The fourth way into the runner, beside files, stdin and the spool folder: an HTTP/2
/// endpoint that speaks Apple's provider API.
///
/// Each request is judged by `APNsRules` on the connection's thread and answered at once,
/// as APNs answers on acceptance, not on delivery; an accepted notification then goes to
/// the runner like any other input. Every request yields one record: its delivery, or its
/// rejection. Records are emitted as deliveries finish; `seq` numbers requests in the order
/// they were answered.
public final class APNsListener: Sendable {
    public struct Settings: Sendable {
        public var host: String
        public var port: Int
        /// Nil serves HTTP/2 in the clear (prior knowledge).
        public var tls: TLSIdentity?
        public var rules: APNsRules
        public var limits: HTTP2Server.Limits

        public init(host: String, port: Int, tls: TLSIdentity?, rules: APNsRules, limits: HTTP2Server.Limits = HTTP2Server.Limits()) {
            self.host = host
            self.port = port
            self.tls = tls
            self.rules = rules
            self.limits = limits
        }
    }

    private let server: HTTP2Server
    private let inFlight: DispatchGroup

    /// Accepted notifications waiting for a delivering thread: the connection's thread
    /// answers and moves on, and the work of delivering (parsing, decrypting, writing the
    /// record) runs beside it, in batches, on other cores.
    private final class Handoff: Sendable {
        struct Item: Sendable {
            let seq: Int
            let source: String
            let identifier: String
            let arrival: APNsArrival
            let body: [UInt8]
        }

        /// Past this many waiting, the connection's thread delivers itself: back-pressure
        /// instead of an unbounded queue.
        static let limit = 4_096
        private struct Queue {
            var waiting: [Item] = []
            /// A drain is scheduled or running; it takes whatever arrives meanwhile.
            var draining = false
        }
        private let queue = Locked(Queue())
        private let deliver: @Sendable (Item) -> Void

        init(deliver: @escaping @Sendable (Item) -> Void) {
            self.deliver = deliver
        }

        func add(_ item: Item) {
            let full = queue.withLock { queue -> Bool in
                guard queue.waiting.count < Self.limit else { return true }
                queue.waiting.append(item)
                return false
            }
            if full { deliver(item) }
        }

        /// Called when a round of requests has been answered: one hand-over per round, not
        /// per request, so a busy connection costs one wake-up per batch.
        func roundEnded() {
            let start = queue.withLock { queue -> Bool in
                guard !queue.draining, !queue.waiting.isEmpty else { return false }
                queue.draining = true
                return true
            }
            if start { DispatchQueue.global().async { self.drain() } }
        }

        private func drain() {
            while true {
                let batch = queue.withLock { queue -> [Item] in
                    if queue.waiting.isEmpty { queue.draining = false }
                    defer { queue.waiting.removeAll(keepingCapacity: true) }
                    return queue.waiting
                }
                if batch.isEmpty { return }
                for item in batch { deliver(item) }
            }
        }
    }

    /// Binds the address; nothing is accepted before `start`.
    public init(settings: Settings, runner: ExtensionRunner, emit: @escaping @Sendable (DeliveryRecord) -> Void) throws(HTTP2ServerError) {
        let rules = settings.rules
        let inFlight = DispatchGroup()
        let sequence = Atomic<Int>(0)
        self.inFlight = inFlight
        // Settings' limits keep at least one byte past APNs' largest payload, so an oversized
        // body is seen as oversized.
        var limits = settings.limits
        limits.bodyBytes = max(limits.bodyBytes, ReceivedInput.voipByteLimit + 1)
        let handoff = Handoff { item in
            let input = item.body.withUnsafeBytes {
                ReceivedInput(payload: $0, identifier: item.identifier, headers: item.arrival.headers)
            }
            switch input {
            case .unreadable(let reason):
                emit(DeliveryRecord(seq: item.seq, source: item.source, problem: reason, arrival: item.arrival))
                inFlight.leave()
            case .request(let notification):
                runner.deliver(notification) { delivery in
                    emit(DeliveryRecord(seq: item.seq, source: item.source, delivery: delivery, arrival: item.arrival))
                    inFlight.leave()
                }
            }
        }
        server = try HTTP2Server(host: settings.host, port: settings.port, tls: settings.tls, limits: limits,
                                 roundEnded: { handoff.roundEnded() }) { request in
            let seq = sequence.add(1, ordering: .relaxed).newValue
            let source = "listen:\(request.connection)/\(request.stream)"
            switch rules.judge(method: request.method, path: request.path, headers: request.headers, bodyLength: request.bodyLength) {
            case let .rejected(answer, identifier, arrival):
                emit(DeliveryRecord(seq: seq, source: source, rejected: answer, identifier: identifier, arrival: arrival))
                return HTTP2Server.Response(
                    status: answer.status,
                    headers: [("apns-id", identifier), ("content-type", "application/json")],
                    body: rules.body(for: answer))
            case let .accepted(identifier, arrival):
                inFlight.enter()
                handoff.add(.init(seq: seq, source: source, identifier: identifier, arrival: arrival, body: request.body))
                return HTTP2Server.Response(status: 200, headers: [("apns-id", identifier)])
            }
        }
    }

    public var host: String { server.host }
    public var port: Int { server.port }
    /// `https://HOST:PORT`, or `http://` in the clear.
    public var url: String {
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        return "\(server.usesTLS ? "https" : "http")://\(host):\(server.port)"
    }

    public func start() {
        server.start()
    }

    /// Stops taking requests (GOAWAY); those already answered go on to be delivered.
    public func stop() {
        server.stop()
    }

    /// Waits, after `stop`, for the connections to close and every delivery in flight to
    /// have its record.
    public func wait() {
        server.wait()
        inFlight.wait()
    }
}
