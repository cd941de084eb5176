import Dispatch
import HTTP2
import Locking
import MonotonicTime
import PushSeal
import Synchronization

/// Where the listener's records go. Called on the listener's loop threads and the delivering
/// threads, so it must never wait for the reader of the records.
package protocol RecordSink: Sendable {
    /// False while records wait for their reader past the sink's bound: the listener then
    /// refuses new notifications (503) rather than take on records it could not write.
    var hasRoom: Bool { get }
    /// Takes one record without waiting. A `promised` record (a notification already
    /// answered 200) is always kept; any other is dropped and counted when there is no room.
    func emit(_ record: DeliveryRecord, promised: Bool)
}

/// The fourth way into the runner, beside files, stdin and the spool folder: an HTTP/2
/// endpoint that speaks Apple's provider API.
///
/// Each request is judged by `APNsRules` on the connection's thread and answered at once,
/// as APNs answers on acceptance, not on delivery; an accepted notification then goes to
/// the runner like any other input. Every request stream yields one record: its delivery,
/// its rejection, or its reset. `seq` numbers requests in the order they were answered.
///
/// Notifications between their 200 and their record are bounded (`Settings.pendingLimit`),
/// whatever the extension, the budget or the rate: past the bound, or while the record sink
/// is full, a new notification is answered 503 `ServiceUnavailable`, recorded and counted.
package final class APNsListener: Sendable {
    package struct Settings: Sendable {
        package var host: String
        package var port: Int
        /// Nil serves HTTP/2 in the clear (prior knowledge).
        package var tls: ListenerIdentity?
        package var rules: APNsRules
        package var limits: ListenerLimits
        /// Notifications answered 200 whose records are not yet out, at most, and the most
        /// payload bytes they may hold.
        package var pendingLimit: Int
        package var pendingBytes: Int
        /// How often one connection may change its provider token (APNs: every 20 minutes).
        package var tokenUpdateInterval: Duration

        package init(
            host: String, port: Int, tls: ListenerIdentity?, rules: APNsRules, limits: ListenerLimits = ListenerLimits(),
            pendingLimit: Int = 16_384, pendingBytes: Int = 16 << 20, tokenUpdateInterval: Duration = .seconds(20 * 60)
        ) {
            self.host = host
            self.port = port
            self.tls = tls
            self.rules = rules
            self.limits = limits
            self.pendingLimit = pendingLimit
            self.pendingBytes = pendingBytes
            self.tokenUpdateInterval = tokenUpdateInterval
        }
    }

    /// What the listener refused or dropped past its bounds, for the operator.
    package struct Tally: Sendable, Equatable {
        /// Notifications answered 503 because the pending bound or the record sink was full.
        package var refusedForLoad: Int
        /// Times accepting paused for want of descriptors.
        package var acceptPauses: Int
        /// Idle connections closed to admit new ones at the connection cap.
        package var evictedConnections: Int
        /// Connections closed at the cap with no idle one to make room.
        package var refusedConnections: Int
        /// Streams the listener reset for breaking HTTP/2's rules.
        package var serverResets: Int = 0
        /// Connections sent away (GOAWAY ENHANCE_YOUR_CALM) for a flood of resets or empty frames.
        package var calmedConnections: Int = 0
    }

    private let server: HTTP2Server
    private let inFlight: DispatchGroup
    private let load = Load()

    final class Load: Sendable {
        /// Notifications answered 200 whose records are not yet out.
        let pending = Atomic<Int>(0)
        let pendingBytes = Atomic<Int>(0)
        let refused = Atomic<Int>(0)

        /// Counts one more pending notification of `bytes`, unless that passes a limit.
        func admit(bytes: Int, limit: Int, byteLimit: Int) -> Bool {
            guard pending.add(1, ordering: .relaxed).newValue <= limit else {
                pending.subtract(1, ordering: .relaxed)
                return false
            }
            guard pendingBytes.add(bytes, ordering: .relaxed).newValue <= byteLimit else {
                pendingBytes.subtract(bytes, ordering: .relaxed)
                pending.subtract(1, ordering: .relaxed)
                return false
            }
            return true
        }
    }

    /// Accepted notifications waiting for delivery: the connection's thread answers and
    /// moves on, and the work of delivering (parsing, decrypting, writing the record) runs
    /// beside it on one drain at a time, a dispatch worker that takes the queue in batches,
    /// so delivery uses at most one more core than the loops. Bounded by the pending limit.
    final class Handoff: Sendable {
        /// A class: an item is queued, taken in a batch and held by its delivery's
        /// completion, and each of those is then one reference, not a copy of every field.
        final class Item: Sendable {
            let seq: Int
            let source: String
            let identifier: String
            let arrival: APNsRequestFields
            let body: [UInt8]

            init(seq: Int, source: String, identifier: String, arrival: APNsRequestFields, body: [UInt8]) {
                self.seq = seq
                self.source = source
                self.identifier = identifier
                self.arrival = arrival
                self.body = body
            }
        }

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
            queue.withLock { $0.waiting.append(item) }
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
    package init(settings: Settings, runner: ExtensionRunner, records: any RecordSink) throws(ListenerError) {
        let rules = settings.rules
        let inFlight = DispatchGroup()
        let load = self.load
        let pendingLimit = max(1, settings.pendingLimit)
        let pendingByteLimit = max(PayloadSealer.byteLimit, settings.pendingBytes)
        self.inFlight = inFlight
        let tokenUpdates = Locked(ProviderTokenUpdates(interval: settings.tokenUpdateInterval))
        // Settings' limits keep at least one byte past APNs' largest payload, so an oversized
        // body is seen as oversized.
        var limits = settings.limits
        limits.bodyBytes = max(limits.bodyBytes, ReceivedInput.voipByteLimit + 1)
        let finished: @Sendable (DeliveryRecord, Int) -> Void = { record, bytes in
            records.emit(record, promised: true)
            load.pending.subtract(1, ordering: .relaxed)
            load.pendingBytes.subtract(bytes, ordering: .relaxed)
            inFlight.leave()
        }
        let handoff = Handoff { item in
            let input = item.body.withUnsafeBytes {
                ReceivedInput(payload: $0, identifier: item.identifier, arrival: item.arrival)
            }
            switch input {
            case .unreadable(let reason):
                finished(
                    DeliveryRecord(seq: item.seq, source: item.source, problem: reason, identifier: item.identifier, arrival: item.arrival),
                    item.body.count)
            case .request(let notification):
                runner.deliver(notification) { delivery in
                    finished(
                        DeliveryRecord(seq: item.seq, source: item.source, delivery: delivery, arrival: item.arrival),
                        item.body.count)
                }
            }
        }
        let routes = ListenerRoutes(
            rules: rules, records: records, tokenUpdates: tokenUpdates, load: load, inFlight: inFlight, handoff: handoff,
            pendingLimit: pendingLimit, pendingByteLimit: pendingByteLimit)
        do {
            server = try HTTP2Server(
                host: settings.host, port: settings.port, tls: settings.tls, limits: limits,
                roundEnded: { handoff.roundEnded() },
                connectionEnded: { connection in tokenUpdates.withLock { $0.forget(connection) } },
                handler: { request in routes.answer(request) })
        } catch {
            throw ListenerError(error)
        }
    }

    package var host: String { server.host }
    package var port: Int { server.port }
    /// `https://HOST:PORT`, or `http://` in the clear.
    package var url: String {
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        return "\(server.usesTLS ? "https" : "http")://\(host):\(server.port)"
    }
    /// Connections admitted at once (lowered from the setting when descriptors are scarcer).
    package var connectionLimit: Int { server.connectionLimit }

    package var tally: Tally {
        Tally(
            refusedForLoad: load.refused.load(ordering: .relaxed),
            acceptPauses: server.counters.acceptPauses.load(ordering: .relaxed),
            evictedConnections: server.counters.evicted.load(ordering: .relaxed),
            refusedConnections: server.counters.refused.load(ordering: .relaxed),
            serverResets: server.counters.serverResets.load(ordering: .relaxed),
            calmedConnections: server.counters.calmed.load(ordering: .relaxed))
    }

    package func start() {
        server.start()
    }

    /// Stops taking requests (GOAWAY); those already answered go on to be delivered.
    package func stop() {
        server.stop()
    }

    /// Waits, after `stop`, for the connections to close and every delivery in flight to
    /// have its record.
    package func wait() {
        server.wait()
        inFlight.wait()
    }
}
