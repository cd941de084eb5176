import Locking
import PushSeal
import PushSealJSON
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// VAPID (RFC 8292): the sender names itself to each push service with an ES256 token for
/// that service's origin, signed with a key of its own, and its public key. No account: the
/// key is made by the sender, and a page subscribes with its public half.
///
/// A token is made per origin and reused until it has less than an hour left (it is good for
/// 12 hours; services refuse more than 24).
package final class VAPIDCredentials: Sendable {
    /// How long a token is good for.
    package static let lifetime: Int64 = 12 * 3_600
    /// A token with less than this left is made again.
    package static let renewWithin: Int64 = 3_600

    package let key: ES256Key
    package let subject: String
    /// The public key, base64url: `k=` of every authorization, and the page's applicationServerKey.
    package let publicKey: String
    private let clock: @Sendable () -> Int64
    /// The authorization header per origin, and when its token expires.
    private let headers = Locked<[String: (header: String, expires: Int64)]>([:])

    /// - Parameter subject: how the push service's operators reach the sender: `mailto:` an
    ///   address, or an `https:` URL (checked by `checkSubject`).
    package init(key: ES256Key, subject: String, clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }) throws(SendError) {
        guard key.canSign, key.publicPoint.count == P256PublicKey.byteCount else {
            throw SendError(.token, "a VAPID key is a P-256 private key")
        }
        try Self.checkSubject(subject)
        self.key = key
        self.subject = subject
        publicKey = Base64.encode(key.publicPoint, alphabet: .url)
        self.clock = clock
    }

    /// Apple's and Mozilla's push services refuse a token (403 BadJwtToken) with no `sub`, or
    /// with a placeholder: so does this, before anything is sent.
    package static func checkSubject(_ subject: String) throws(SendError) {
        let advice = "give --vapid-subject mailto:you@your-domain or an https:// address of yours"
        if subject.hasPrefix("https://") {
            let host = subject.dropFirst(8).prefix { $0 != "/" && $0 != ":" }.lowercased()
            guard host.contains("."), !Self.placeholder(host) else {
                throw SendError(.setup, "the VAPID subject '\(subject.prefix(80))' is not a public https address; \(advice)")
            }
            return
        }
        guard subject.hasPrefix("mailto:") else {
            throw SendError(.setup, "the VAPID subject must start mailto: or https://, not '\(subject.prefix(80))'; \(advice)")
        }
        let address = subject.dropFirst(7)
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !Self.placeholder(parts[1].lowercased()) else {
            throw SendError(.setup, "the VAPID subject '\(subject.prefix(80))' is no address a push service accepts; \(advice)")
        }
    }

    /// Hosts no one can be reached at (RFC 2606 and 6761's names).
    private static func placeholder(_ host: some StringProtocol) -> Bool {
        let host = String(host)
        if ["localhost", "example.com", "example.org", "example.net"].contains(host) { return true }
        return [".localhost", ".example", ".invalid", ".test", ".local", ".example.com", ".example.org", ".example.net"].contains { host.hasSuffix($0) }
    }

    /// The `authorization` header for a request to `origin`: `vapid t=<token>, k=<key>`.
    package func authorization(for origin: String) throws -> String {
        let now = clock()
        if let held = headers.withLock({ $0[origin] }), held.expires - now > Self.renewWithin {
            return held.header
        }
        let expires = now + Self.lifetime
        let header = "vapid t=\(try mint(audience: origin, expires: expires)), k=\(publicKey)"
        headers.withLock { $0[origin] = (header, expires) }
        return header
    }

    /// A JWT: `{"typ":"JWT","alg":"ES256"}.{"aud":…,"exp":…,"sub":…}.signature`, each part
    /// base64url, the signature the raw 64 bytes r‖s.
    func mint(audience: String, expires: Int64) throws -> String {
        let header = JSONWriter.bytes(.object(JSONObject([("typ", .string("JWT")), ("alg", .string("ES256"))])))
        let claims = JSONWriter.bytes(.object(JSONObject([("aud", .string(audience)), ("exp", .integer(expires)), ("sub", .string(subject))])))
        let signed = Base64.encode(header) + "." + Base64.encode(claims)
        let signature = try Array(signed.utf8).withUnsafeBytes { try key.signature(for: $0) }
        return signed + "." + Base64.encode(signature)
    }
}

/// The sender's VAPID key, beside its keyring: `vapid-key.pem` (PKCS#8, 0600). Made by
/// `keys vapid` on first use and replaced by `keys vapid --rotate`; browsers subscribe with
/// its public half, so a new key means every browser subscribes again.
package enum VAPIDKeyFile {
    package static let name = "vapid-key.pem"

    package static func path(in folder: String) -> String { folder + "/" + name }

    /// The key in `folder`, or nil when there is none.
    package static func load(folder: String) throws -> ES256Key? {
        let path = path(in: folder)
        guard access(path, F_OK) == 0 else { return nil }
        var bytes = try FileIO.readFile(path, bound: .pem)
        defer { SecureMemory.wipe(&bytes) }
        do {
            return try ES256Key(pem: bytes)
        } catch {
            throw SendError(.token, "\(path) is not a VAPID key (a P-256 private key in PEM): \(error)")
        }
    }

    /// A new key, written to `folder` in place of any other (atomically, 0600).
    package static func make(folder: String) throws -> ES256Key {
        let key = try ES256Key.generate()
        var pem = try key.privateKeyPEM()
        defer { SecureMemory.wipe(&pem) }
        try FileIO.replace(path(in: folder), with: pem)
        return key
    }
}
