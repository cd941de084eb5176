import Locking
import PushSeal
import PushSealJSON
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// APNs provider tokens for one team and key, minted with ES256 and shared on disk by every
/// process: a shell loop of a thousand `pushseal send` calls mints one token, not a thousand
/// (APNs answers `TooManyProviderTokenUpdates` to a provider that renews more often than
/// every 20 minutes).
///
/// The token lives in the keyring folder (`provider-token.<team>.<key id>.json`, mode 0600),
/// read and replaced under the folder's lock, and is reused until it is 50 minutes old
/// (APNs accepts it for 60), or until APNs calls it expired. It records the fingerprint of
/// the key that signed it: a token made with another key under the same id (a wrong .p8,
/// since corrected) is never reused.
package final class ProviderTokenCache: Sendable {
    /// Age after which a token is minted again.
    package static let reuseFor: Int64 = 50 * 60
    /// APNs answers `TooManyProviderTokenUpdates` to a provider that renews more often.
    package static let renewAtMostEvery: Int64 = 20 * 60

    private let store: KeyringStore
    private let key: ES256Key
    private let fingerprint: String
    private let keyID: String
    private let teamID: String
    private let clock: @Sendable () -> Int64
    private let current = Locked<(token: String, issuedAt: Int64)?>(nil)
    private let repaired = Locked<mode_t?>(nil)
    private let mintedHere = Locked<Set<String>>([])

    /// The mode the cached token had when it was found readable by group or others and
    /// made private (0600), for the caller to say so; nil when it was private.
    package var repairedMode: mode_t? { repaired.withLock { $0 } }

    package init(
        folder: String, key: ES256Key, keyID: String, teamID: String,
        clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }
    ) {
        store = KeyringStore(folder: folder)
        self.key = key
        fingerprint = key.fingerprint
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
    }

    /// Where the token is kept.
    package var path: String { store.folder + "/provider-token.\(Self.safe(teamID)).\(Self.safe(keyID)).json" }

    /// Why a token is being replaced: expired (a young one means a wrong clock, and is not
    /// replaced), or invalid (it was not made with this key; one from the key replaces it).
    package typealias Rejection = CredentialRejection

    /// A token good for at least ten more minutes; minted only when the shared one is older
    /// than 50 minutes, was made with another key, or is `rejected` (the one APNs just
    /// refused, for the reason `because` gives).
    package func token(replacing rejected: String? = nil, because reason: Rejection = .expired) throws -> String {
        let now = clock()
        if let held = current.withLock({ $0 }), held.token != rejected, now - held.issuedAt < Self.reuseFor {
            return held.token
        }
        let fresh = try store.withLock { () throws -> (token: String, issuedAt: Int64) in
            let shared = read()
            if let shared, shared.token != rejected, now - shared.issuedAt < Self.reuseFor, shared.issuedAt <= now + 60 {
                return shared
            }
            // A token this young called expired is a clock problem, which a new token dated
            // by the same clock cannot fix, and renewing it would cross APNs' limit.
            // The token's own iat is what the server judged; the cache's record is a fallback.
            if let shared, shared.token == rejected, reason == .expired {
                let age = now - (Self.issuedAt(of: shared.token) ?? shared.issuedAt)
                if (0..<Self.renewAtMostEvery).contains(age) {
                    throw SendError(
                        .token,
                        "the server called a provider token made \(age) s ago expired; APNs allows a new one only every 20 minutes, so none was made: check this machine's clock, which dates the token"
                    )
                }
            }
            let minted = try mint(issuedAt: now)
            mintedHere.withLock { _ = $0.insert(minted) }
            let json = JSONWriter.bytes(
                .object(
                    JSONObject([
                        ("token", .string(minted)), ("iat", .integer(now)),
                        ("key", .string(fingerprint))
                    ])))
            do throws(FileIOFailure) {
                try FileIO.replace(path, with: json)
            } catch {
                throw SendError(.token, "cannot keep the provider token in \(path): \(error.message)", underlying: error)
            }
            return (minted, now)
        }
        current.withLock { $0 = fresh }
        return fresh.token
    }

    /// True when this process made `token` (rather than reading it from the cache).
    package func minted(_ token: String) -> Bool {
        mintedHere.withLock { $0.contains(token) }
    }

    /// The `iat` claim of a token, read from its middle part.
    package static func issuedAt(of token: String) -> Int64? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let claims = try? Base64.decode(String(parts[1])),
            let value = try? JSONParser.parse(claims)
        else { return nil }
        return value.objectValue?["iat"]?.integerValue
    }

    private func read() -> (token: String, issuedAt: Int64)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // A live bearer token others can read is made private at once (and said by the caller).
        var info = stat()
        if fstat(descriptor, &info) == 0, info.st_mode & 0o077 != 0, fchmod(descriptor, 0o600) == 0 {
            repaired.withLock { $0 = info.st_mode & 0o777 }
        }
        guard let bytes = try? FileIO.readAll(descriptor, bound: .small), let value = try? JSONParser.parse(bytes),
            let token = value.objectValue?["token"]?.stringValue, let issued = value.objectValue?["iat"]?.integerValue,
            value.objectValue?["key"]?.stringValue == fingerprint
        else { return nil }
        return (token, issued)
    }

    /// `header.claims.signature`, each base64url: ES256 over the first two, the signature as
    /// the raw 64 bytes r‖s that JWS wants (not OpenSSL's DER).
    func mint(issuedAt: Int64) throws -> String {
        let header = JSONWriter.bytes(.object(JSONObject([("alg", .string("ES256")), ("kid", .string(keyID))])))
        let claims = JSONWriter.bytes(.object(JSONObject([("iss", .string(teamID)), ("iat", .integer(issuedAt))])))
        let signed = Base64.encode(header) + "." + Base64.encode(claims)
        let signature = try Array(signed.utf8).withUnsafeBytes { try key.signature(for: $0) }
        return signed + "." + Base64.encode(signature)
    }

    private static func safe(_ text: String) -> String {
        String(text.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
    }
}
