internal import CNGHTTP2
import MonotonicTime
import SealCrypto
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/2 client for one endpoint: one event-loop thread runs up to `connections`
/// connections (TLS with ALPN h2, or prior knowledge over `http://`, directly or through an
/// HTTP CONNECT proxy), and every request submitted gets exactly one `Response`.
///
/// - Requests wait in one queue; each ready connection takes as many as it has streams for
///   (the server's SETTINGS_MAX_CONCURRENT_STREAMS, at most `maximumStreams`).
/// - A request the server cannot have processed (never written, a refused stream, a stream
///   above a GOAWAY's last id, a connection that died before it was sent) is sent again on
///   another connection, by the client itself; one that was sent and got no answer is
///   answered with `.unknownOutcome`: only the caller can judge whether to send it again.
/// - A stream is timed from when its HEADERS go out, not from when it was queued.
/// - Connection attempts are bounded (`connectAttempts`, with backoff): past them, or at a
///   certificate, ALPN or proxy refusal, every waiting request fails at once with the
///   endpoint's problem, and so does every later one.
/// - Responses are handed to `onResponses` on a thread of their own, so a slow consumer
///   never stalls the connections.
package final class HTTP2Client: Sendable {
    package struct Settings: Sendable {
        package var endpoint: ClientEndpoint
        /// A PEM file of certificates trusted besides the system's.
        package var trustFile: String?
        package var proxy: ClientProxy?
        package var connections: Int
        package var maximumStreams: Int
        /// How long a stream may wait for its answer once its HEADERS are sent.
        package var timeout: Duration
        /// How long one attempt may take to connect, tunnel, shake hands and get the
        /// server's SETTINGS.
        package var connectTimeout: Duration
        /// Failed connection attempts in a row after which the endpoint counts as unreachable.
        package var connectAttempts: Int
        /// The certificate and key the client shows when the server asks for one.
        package var clientIdentity: TLSClientIdentity?
        /// Bytes one connection's answers may be read in a round of the loop before the
        /// others are served (the server's is `HTTP2Server.Limits.readBudget`). Larger than
        /// the server's: `send`'s connections carry only answers, few and small, and more
        /// than one of them is the rare case.
        package var readBudget = 1 << 20
        /// The proxy came from the environment, so another origin takes its own (`NO_PROXY`
        /// may exclude one host and not another); a proxy given outright serves every origin.
        package var proxyFollowsEnvironment = false
        /// Whether a server that offers no h2 in ALPN is spoken to in HTTP/1.1 (keep-alive, one
        /// request at a time on each connection) rather than refused. Web Push's services may
        /// answer HTTP/1.1 only; APNs speaks HTTP/2, and its credentials go nowhere else.
        package var allowsHTTP1 = false

        package init(
            endpoint: ClientEndpoint, trustFile: String? = nil, proxy: ClientProxy? = nil, connections: Int = 1,
            maximumStreams: Int = 1_000, timeout: Duration = .seconds(30), connectTimeout: Duration = .seconds(10),
            connectAttempts: Int = 4, clientIdentity: TLSClientIdentity? = nil
        ) {
            self.clientIdentity = clientIdentity
            self.endpoint = endpoint
            self.trustFile = trustFile
            self.proxy = proxy
            self.connections = max(1, connections)
            self.maximumStreams = max(1, maximumStreams)
            self.timeout = timeout
            self.connectTimeout = connectTimeout
            self.connectAttempts = max(1, connectAttempts)
        }

        /// The same settings for another origin: a client reaches one origin, and a sender
        /// whose requests name several (a push service per subscription) runs one per origin.
        package func reaching(_ origin: String) throws(HTTP2ClientError) -> Settings {
            var settings = self
            settings.endpoint = try ClientEndpoint(url: origin)
            if proxyFollowsEnvironment { settings.proxy = try ClientProxy.fromEnvironment(for: settings.endpoint) }
            return settings
        }
    }

    package struct Field: Sendable, Equatable {
        package var name: String
        package var value: String

        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    package struct Request: Sendable {
        /// The caller's name for it; its response carries the same.
        package var id: Int
        package var path: String
        package var headers: [Field]
        package var body: [UInt8]

        package init(id: Int, path: String, headers: [Field], body: [UInt8]) {
            self.id = id
            self.path = path
            self.headers = headers
            self.body = body
        }
    }

    package struct Response: Sendable {
        package var id: Int
        /// The HTTP status; 0 when no answer came (`failure` says why).
        package var status: Int
        /// The response's header fields, pseudo-headers left out.
        package var headers: [Field]
        package var body: [UInt8]
        package var failure: Failure?

        package init(id: Int, status: Int, headers: [Field], body: [UInt8], failure: Failure? = nil) {
            self.id = id
            self.status = status
            self.headers = headers
            self.body = body
            self.failure = failure
        }

        package func header(_ name: String) -> String? {
            headers.first { $0.name == name }?.value
        }
    }

    /// Why a request got no answer.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package enum Kind: Sendable, Equatable {
            /// The request went out and no answer came: the server may have acted on it.
            case unknownOutcome
            /// The server cannot have acted on it, and the client gave up sending it.
            case notSent
            /// The client refused the request itself (nghttp2 would not take its headers): no
            /// connection would ever send it, so sending it again is pointless.
            case refused
            /// Not this request's failure but the endpoint's: no request can succeed.
            case endpoint(EndpointProblem)
        }

        package let kind: Kind
        package let message: String
        package var description: String { message }

        package init(kind: Kind, message: String) {
            self.kind = kind
            self.message = message
        }
    }

    package enum EndpointProblem: Sendable, Equatable {
        /// No connection after the bounded attempts.
        case unreachable
        /// Its certificate is not trusted, has expired, or names another host.
        case untrusted
        /// It did not agree to HTTP/2 (no ALPN h2).
        case notHTTP2
        /// The proxy refused the tunnel (407, 403, …).
        case proxyRefused
        /// It offers no TLS the client's profile takes (TLS 1.2 or later, AEAD suites).
        case noCommonTLS
    }

    /// How many times a request the server did not process is sent again before it is
    /// answered `.notSent` (a server that refuses every stream).
    static let resendLimit = 5

    private let loop: ClientSide

    /// Starts the loop thread; nothing connects until the first request.
    package init(_ settings: Settings, onResponses: @escaping @Sendable ([Response]) -> Void) throws(HTTP2ClientError) {
        loop = try ClientSide(settings: settings, onResponses: onResponses)
        loop.start()
    }

    /// Queues requests; callable from any thread, never waits for the network.
    package func submit(_ requests: [Request]) {
        loop.submit(requests)
    }

    /// Sends nothing more: requests not yet on a stream are answered `.notSent` now, and
    /// those on a stream get until `grace` to be answered, then `.unknownOutcome`. For a
    /// stop asked by the user, so that a silent server cannot hold it for a whole timeout.
    package func stop(grace: Duration) {
        loop.stop(grace: grace)
    }

    /// Waits until every submitted request has its response delivered, then closes the
    /// connections (GOAWAY) and stops the loop. Bounded: every stream is timed, every
    /// connection attempt is timed and counted.
    package func finish() {
        loop.finish()
    }
}
