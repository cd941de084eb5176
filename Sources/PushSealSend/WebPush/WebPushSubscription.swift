import HTTP2
import PushSeal
import PushSealJSON
import SealCrypto

/// A browser's push subscription, as its page gives it (`PushSubscription.toJSON()`):
/// `{"endpoint":"https://…","keys":{"p256dh":"…","auth":"…"}}`. The endpoint is where the
/// push service takes messages for it; `p256dh` and `auth` are what RFC 8291 encrypts to.
package struct WebPushSubscription: Sendable, Hashable, CustomStringConvertible {
    package let endpoint: String
    /// `https://host[:port]`: the push service, whose connections its subscriptions share.
    package let origin: String
    /// The endpoint's path (and query) on its origin.
    package let path: String
    /// The subscription's P-256 public key (`p256dh`).
    package let key: P256PublicKey
    /// Its 16-byte `auth` secret.
    package let auth: [UInt8]
    /// The receiving web app's own public key, when the line is its pairing string (the
    /// subscription with `"pushseal":"ppk1.…"` beside it): what the alert is sealed to (ps2).
    package private(set) var share: PublicShare?

    package var description: String { endpoint }

    /// Reads the JSON a page gives; a subscription that cannot be used is refused saying why.
    package init(json bytes: some Collection<UInt8>) throws(PayloadError) {
        guard let object = (try? JSONParser.parse(Array(bytes)))?.objectValue else {
            throw PayloadError(.invalidPayload, "a subscription is the JSON object a browser's PushSubscription gives")
        }
        guard let endpoint = object["endpoint"]?.stringValue else {
            throw PayloadError(.invalidPayload, "the subscription has no \"endpoint\"")
        }
        guard let keys = object["keys"]?.objectValue, let p256dh = keys["p256dh"]?.stringValue, let auth = keys["auth"]?.stringValue else {
            throw PayloadError(.invalidPayload, "the subscription has no \"keys\" with \"p256dh\" and \"auth\" (subscribe with an applicationServerKey)")
        }
        try self.init(endpoint: endpoint, p256dh: p256dh, auth: auth)
        if let member = object["pushseal"] {
            guard let text = member.stringValue else {
                throw PayloadError(.invalidPayload, "the pairing string's \"pushseal\" is not a ppk1 share")
            }
            do {
                share = try PublicShare(parsing: text)
            } catch {
                throw PayloadError(.invalidPayload, "the pairing string's \"pushseal\" share: \(error)")
            }
        }
    }

    package init(endpoint: String, p256dh: String, auth: String) throws(PayloadError) {
        // The origin is the URL up to its path; the client checks the rest (scheme, host, port).
        guard let schemeEnd = endpoint.firstRange(of: "://") else {
            throw PayloadError(.invalidPayload, "the subscription's endpoint '\(endpoint.prefix(80))' is not a URL")
        }
        let pathStart = endpoint[schemeEnd.upperBound...].firstIndex(of: "/") ?? endpoint.endIndex
        let origin = String(endpoint[..<pathStart])
        do {
            let parsed = try ClientEndpoint(url: origin)
            guard parsed.secure || ["127.0.0.1", "::1", "localhost"].contains(parsed.host) else {
                throw PayloadError(.invalidPayload, "the subscription's endpoint is not https:// (push services are)")
            }
        } catch let error as PayloadError {
            throw error
        } catch {
            throw PayloadError(.invalidPayload, "the subscription's endpoint \(error)")
        }
        let keyBytes: [UInt8]
        let authBytes: [UInt8]
        do {
            keyBytes = try Base64.decode(p256dh.trimmingTrailingPadding, alphabet: .url)
            authBytes = try Base64.decode(auth.trimmingTrailingPadding, alphabet: .url)
        } catch {
            throw PayloadError(.invalidPayload, "the subscription's keys are not base64url")
        }
        guard authBytes.count == WebPushEncryption.authSecretByteCount else {
            throw PayloadError(.invalidPayload, "the subscription's auth secret is \(authBytes.count) bytes, not 16")
        }
        do {
            key = try P256PublicKey(x963Representation: keyBytes)
        } catch {
            throw PayloadError(.invalidPayload, "the subscription's p256dh is not a P-256 public key: \(error)")
        }
        self.endpoint = endpoint
        self.origin = origin
        path = pathStart == endpoint.endIndex ? "/" : String(endpoint[pathStart...])
        self.auth = authBytes
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.endpoint == rhs.endpoint && lhs.auth == rhs.auth && lhs.key.x963Representation == rhs.key.x963Representation
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(endpoint)
    }
}

extension String {
    /// Browsers write base64url without `=`; some libraries keep it.
    fileprivate var trimmingTrailingPadding: String {
        var text = self
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
