import PushSeal
import PushSealJSON

// `Sender`'s seams: what carries its requests (`PushTransport`), and the push service's rules
// (`PushProvider`: whom a notification is for, how its request is written, which credential
// it carries, what an answer means). In use they are HTTP/2 and APNs; a second service
// (Web Push's subscriptions) is a second provider, and the retry and ordering engine runs
// unchanged against either, or against an in-process fake in the tests.

/// One request, in no service's words: where it goes, its header fields and its body.
package struct PushRequest: Sendable {
    package struct Field: Sendable, Equatable {
        package var name: String
        package var value: String

        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The caller's name for it; its answer carries the same.
    package var id: Int
    /// `https://host:port` (or `http://`): the transport keeps connections per origin.
    package var origin: String
    package var path: String
    package var headers: [Field]
    package var body: [UInt8]

    package init(id: Int, origin: String, path: String, headers: [Field], body: [UInt8]) {
        self.id = id
        self.origin = origin
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// What came back for one request: the server's answer, or why none came.
package struct PushAnswer: Sendable {
    /// Why a request got no answer.
    package struct Failure: Sendable, CustomStringConvertible {
        package enum Kind: Sendable, Equatable {
            /// The request went out and no answer came: the server may have acted on it.
            case unknownOutcome
            /// The server cannot have acted on it, and the transport gave up sending it.
            case notSent
            /// The transport refused the request itself: no connection would ever send it.
            case refused
            /// Not this request's failure but its origin's: no request there can succeed.
            case origin(OriginProblem)
        }

        package let kind: Kind
        package let message: String
        package var description: String { message }

        package init(kind: Kind, message: String) {
            self.kind = kind
            self.message = message
        }
    }

    /// Why no request to an origin can succeed.
    package enum OriginProblem: Sendable, Equatable {
        /// No connection after the bounded attempts.
        case unreachable
        /// Its certificate is not trusted, has expired, or names another host.
        case untrusted
        /// It did not agree to HTTP/2.
        case notHTTP2
        /// The proxy refused the tunnel (407, 403, …).
        case proxyRefused
        /// It offers no TLS the client's profile takes.
        case noCommonTLS
    }

    package var id: Int
    /// The HTTP status; 0 when no answer came (`failure` says why).
    package var status: Int
    package var headers: [PushRequest.Field]
    package var body: [UInt8]
    package var failure: Failure?

    package init(id: Int, status: Int, headers: [PushRequest.Field], body: [UInt8], failure: Failure? = nil) {
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

/// What carries `Sender`'s requests and brings back their answers (through the callback it
/// was made with).
package protocol PushTransport: Sendable {
    func submit(_ requests: [PushRequest])
    /// Sends nothing new; answers already on their way get `grace`.
    func stop(grace: Duration)
    /// Closes, once every answer is in.
    func finish()
}

/// Why a credential is being replaced.
package enum CredentialRejection: Sendable, Equatable {
    /// The service called it expired.
    case expired
    /// The service called it invalid: it was not made with the key in hand.
    case invalid
}

/// Where a provider's credentials come from (APNs' provider tokens; Web Push's VAPID).
package protocol PushCredentials: Sendable {
    /// A usable credential; a new one when `rejected` is the one just refused (for `because`).
    func credential(replacing rejected: String?, because reason: CredentialRejection) throws -> String
    /// True when this process made `credential`, rather than reading it from a cache.
    func minted(_ credential: String) -> Bool
}

/// What an answer means, in the provider's own rules.
package enum PushVerdict: Sendable, Equatable {
    /// Accepted; `id` is the server's id for it, when it gave a usable one.
    case delivered(id: String?)
    /// The credential was refused (`because`): a new one may be tried once. Otherwise the
    /// notification is refused as `refused` would say.
    case credentialRefused(CredentialRejection, status: Int, reason: String, id: String?)
    /// Worth another try, no sooner than `retryAfter` when the server asked for it.
    case temporary(status: Int, reason: String, retryAfter: Duration?)
    /// Refused for good.
    case refused(status: Int, reason: String, id: String?, timestamp: Int64?)
}

/// A push service's rules: `Sender` knows nothing of any service but through this.
package protocol PushProvider: Sendable {
    /// Whom a notification is for: a device token, a Web Push subscription.
    associatedtype Target: Sendable
    /// How its payloads carry an envelope.
    associatedtype Wrapping: PayloadWrapping

    var wrapping: Wrapping { get }

    /// The service's name, for messages ("does not speak HTTP/2, as APNs does").
    var serviceName: String { get }
    /// Its credentials; nil when the connection itself authenticates (a client certificate).
    var credentials: (any PushCredentials)? { get }

    /// The request for one attempt. `credential` is the one in use, when there are credentials.
    /// Throws when it cannot be written (a Web Push message cannot be encrypted or signed):
    /// that notification is reported failed with why.
    func request(id: Int, to target: Target, payload: [UInt8], notificationID: String, expiration: String?, credential: String?) throws
        -> PushRequest
    func verdict(on answer: PushAnswer) -> PushVerdict
}

extension PushProvider {
    /// The one line that says why `origin` cannot be used.
    package func words(for problem: PushAnswer.OriginProblem, _ message: String, origin: String) -> String {
        switch problem {
        case .unreachable: "cannot reach \(origin) (\(message))"
        case .untrusted: "the certificate of \(origin) is not accepted (\(message))"
        case .notHTTP2: "\(origin) does not speak HTTP/2, as \(serviceName) does: \(message)"
        case .proxyRefused: message
        case .noCommonTLS:
            "\(origin) offers no TLS that pushseal accepts (TLS 1.2 or later with AEAD suites, as \(serviceName) does): \(message)"
        }
    }
}
