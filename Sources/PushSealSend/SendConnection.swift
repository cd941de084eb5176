import HTTP2
import Locking
import PushSeal
import SealCrypto

/// Where `send` delivers: an `https://` (or `http://`, HTTP/2 without TLS) address, checked;
/// the HTTP/2 client's own endpoint, under the sender's name.
package typealias SendEndpoint = ClientEndpoint

extension ClientEndpoint {
    /// The endpoint at `url`, or why not as a `SendError`.
    package init(checking url: String) throws(SendError) {
        do {
            self = try ClientEndpoint(url: url)
        } catch {
            throw SendError(.setup, error.message, underlying: error)
        }
    }
}

/// How `send` reaches its endpoint (and any other origin a provider's requests name):
/// through which proxy, trusting what besides the system's CAs, over how many connections
/// and streams, and how long it waits. The HTTP/2 client's own settings, under the sender's
/// name, made from what a user chooses.
package typealias SendConnection = HTTP2Client.Settings

extension HTTP2Client.Settings {
    /// The proxy chosen (from `--proxy`, or the environment less `NO_PROXY`), as `host:port`;
    /// nil when the connection goes direct.
    package var proxyAddress: String? { proxy.map { "\($0.host):\($0.port)" } }
    /// The endpoint's origin.
    package var origin: String { endpoint.description }
    /// Results that may wait at once for a sender over this connection.
    package var window: Int { SendWindow.size(connections: connections, streams: maximumStreams) }

    /// How long a notification waits for its answer unless a timeout is chosen (`--timeout`'s
    /// default, and its help's).
    package static let defaultTimeout = Duration.seconds(30)

    /// - Parameters:
    ///   - proxy: an `http://HOST:PORT` proxy; empty for none; nil to take `https_proxy`
    ///     (or `http_proxy`) and `no_proxy` from the environment.
    ///   - trustFile: a PEM file of certificates trusted besides the system's.
    ///   - timeout: how long a notification waits for its answer once sent; a connection
    ///     attempt gets no longer (and at most 10 s), so a server that accepts and then says
    ///     nothing is given up on as soon as a silent answer would be.
    package init(
        endpoint: SendEndpoint, proxy: String?, trustFile: String?, connections: Int, streams: Int,
        timeout: Duration, clientIdentity: TLSClientIdentity? = nil
    ) throws(SendError) {
        let chosen: ClientProxy?
        do {
            if let proxy {
                chosen = proxy.isEmpty ? nil : try ClientProxy(url: proxy)
            } else {
                chosen = try ClientProxy.fromEnvironment(for: endpoint)
            }
        } catch {
            throw SendError(.setup, error.message, underlying: error)
        }
        self.init(
            endpoint: endpoint, trustFile: trustFile, proxy: chosen, connections: connections,
            maximumStreams: streams, timeout: timeout, connectTimeout: min(timeout, .seconds(10)),
            clientIdentity: clientIdentity)
        proxyFollowsEnvironment = proxy == nil
    }
}

/// How many results may wait at once.
package enum SendWindow {
    /// Twice what can be in flight, so the connections never run dry, and memory stays flat
    /// whatever the number of devices.
    package static func size(connections: Int, streams: Int) -> Int {
        min(10_000, max(2_000, 2 * connections * streams))
    }
}

/// `Sender`'s transport in use: HTTP/2, one client (its connections and loop thread) per
/// origin, made when a request first names it. APNs' requests all name one; Web Push's name
/// their subscription's push service.
package final class HTTP2PushTransport: PushTransport {
    private let connection: SendConnection
    private let answered: @Sendable ([PushAnswer]) -> Void
    private let clients = Locked<[String: HTTP2Client]>([:])

    /// Starts the client of the connection's own endpoint, so a setting that cannot work (a
    /// trust file that cannot be read) is said before anything is sent.
    package init(_ connection: SendConnection, answered: @escaping @Sendable ([PushAnswer]) -> Void) throws(SendError) {
        self.connection = connection
        self.answered = answered
        do {
            let first = try Self.client(connection, answered: answered)
            clients.withLock { $0[connection.origin] = first }
        } catch {
            throw SendError(.setup, error.message, underlying: error)
        }
    }

    package func submit(_ requests: [PushRequest]) {
        // Requests of one origin go to its client together (APNs': all of them), in their
        // order, however the origins are interleaved: one wake of each loop thread.
        var origins: [String] = []
        var byOrigin: [String: [PushRequest]] = [:]
        for request in requests {
            if byOrigin[request.origin] == nil { origins.append(request.origin) }
            byOrigin[request.origin, default: []].append(request)
        }
        for origin in origins {
            let batch = byOrigin[origin]!
            switch client(for: origin) {
            case .success(let client):
                client.submit(batch.map { HTTP2Client.Request(id: $0.id, path: $0.path, headers: $0.headers.map { HTTP2Client.Field($0.name, $0.value) }, body: $0.body) })
            case .failure(let error):
                let failure = PushAnswer.Failure(kind: .origin(.unreachable), message: error.message)
                answered(batch.map { PushAnswer(id: $0.id, status: 0, headers: [], body: [], failure: failure) })
            }
        }
    }

    package func stop(grace: Duration) {
        for client in clients.withLock({ Array($0.values) }) { client.stop(grace: grace) }
    }

    package func finish() {
        for client in clients.withLock({ Array($0.values) }) { client.finish() }
    }

    private func client(for origin: String) -> Result<HTTP2Client, HTTP2ClientError> {
        if let client = clients.withLock({ $0[origin] }) { return .success(client) }
        do {
            let settings = try connection.reaching(origin)
            let client = try Self.client(settings, answered: answered)
            return .success(
                clients.withLock { clients in
                    if let raced = clients[origin] {
                        client.finish()
                        return raced
                    }
                    clients[origin] = client
                    return client
                })
        } catch {
            return .failure(error)
        }
    }

    private static func client(_ settings: HTTP2Client.Settings, answered: @escaping @Sendable ([PushAnswer]) -> Void) throws(HTTP2ClientError)
        -> HTTP2Client
    {
        try HTTP2Client(settings) { responses in answered(responses.map(PushAnswer.init)) }
    }
}

extension PushAnswer {
    init(_ response: HTTP2Client.Response) {
        self.init(
            id: response.id, status: response.status, headers: response.headers.map { PushRequest.Field($0.name, $0.value) },
            body: response.body, failure: response.failure.map(Failure.init))
    }
}

extension PushAnswer.Failure {
    init(_ failure: HTTP2Client.Failure) {
        let kind: Kind =
            switch failure.kind {
            case .unknownOutcome: .unknownOutcome
            case .notSent: .notSent
            case .refused: .refused
            case .endpoint(.unreachable): .origin(.unreachable)
            case .endpoint(.untrusted): .origin(.untrusted)
            case .endpoint(.notHTTP2): .origin(.notHTTP2)
            case .endpoint(.proxyRefused): .origin(.proxyRefused)
            case .endpoint(.noCommonTLS): .origin(.noCommonTLS)
            }
        self.init(kind: kind, message: failure.message)
    }
}
