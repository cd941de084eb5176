/// Web Push's sender as `pushseal send --webpush` runs it: the engine, the Web Push provider
/// and the HTTP/2 transport assembled here, in the library, as `NotificationSender`
/// assembles APNs'; the command only reads its options and prints the results.
package final class WebPushSender: Sendable {
    package typealias Result = SendResult<WebPushSubscription>

    private let engine: Sender<WebPushProvider>

    /// - Parameters:
    ///   - connection: how to reach the first subscription's push service; the others' origins
    ///     get the same settings (and their own proxy, when it comes from the environment).
    ///   - emit: each result, in the order subscriptions were added.
    package init(
        provider: WebPushProvider, connection: SendConnection, retries: Int?, retryFor: Duration,
        emit: @escaping @Sendable (Result) -> Void
    ) throws(SendError) {
        // Push services may speak HTTP/1.1 only (behind their load balancers): spoken to so.
        var connection = connection
        connection.allowsHTTP1 = true
        engine = try Sender(settings: .init(retries: retries, retryFor: retryFor), provider: provider, connection: connection, emit: emit)
    }

    /// Encrypts `payload` for `subscription` and sends it; waits while the window is full.
    package func add(_ payload: [UInt8], to subscription: WebPushSubscription) throws {
        try engine.add(subscription, payload: payload)
    }

    /// Several at once (at most `batchLimit`), encrypted here and handed to the connections
    /// together; waits while the window is full.
    package func add(batch: [(payload: [UInt8], subscription: WebPushSubscription)]) throws {
        try engine.add(batch: batch.map { (target: $0.subscription, payload: $0.payload, expiration: nil) })
    }

    /// The most `add(batch:)` takes at once.
    package static var batchLimit: Int { Sender<WebPushProvider>.batchLimit }

    /// No more retries, and what is not on the wire is not sent (a first SIGINT).
    package func stopRetrying() { engine.stopRetrying() }

    /// Why the whole send stopped (a push service that cannot be reached or trusted), if it did.
    package var failure: SendError? { engine.failure }

    /// Waits for every result, then closes the connections.
    package func finish() { engine.finish() }
}
