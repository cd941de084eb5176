import Locking
import PushSealJSON
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Checks APNs provider tokens (`authorization: bearer <JWT>`): ES256, a `kid` header,
/// `iss` and `iat` claims, issued no more than an hour ago.
///
/// With keys, the signature must verify with the key named by `kid`; without, only the
/// token's shape and age are checked. A token that verified is remembered (until its hour
/// is up), as APNs does per connection, so a provider reusing one token pays for one
/// signature check.
package final class ProviderTokens: Sendable {
    /// How long a token is good for after its `iat`.
    package static let lifetime: Int64 = 3_600
    /// How far in the future an `iat` may be: clocks differ a little.
    package static let clockSkew: Int64 = 60

    private let keys: [String: ES256Key]
    private let team: String?
    private let clock: @Sendable () -> Int64
    private let verified = Locked(Verified())

    /// Good tokens by the whole `authorization` header that carried them, and the one a
    /// provider sent last: a provider sends the same header on request after request, so a
    /// repeat costs one comparison, not a hash of the token or a copy of it.
    private struct Verified {
        var recent: (header: String, issued: Int64)?
        var byHeader: [String: Int64] = [:]
    }

    /// - Parameters:
    ///   - keys: verification keys by key id; empty checks shape and age only.
    ///   - team: the only `iss` accepted, when given.
    ///   - clock: UNIX seconds now.
    package init(keys: [String: ES256Key], team: String?, clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }) {
        self.keys = keys
        self.team = team
        self.clock = clock
    }

    /// True when signatures are verified, not just the token's shape.
    package var verifiesSignatures: Bool { !keys.isEmpty }

    /// Nil when the request's token is good; otherwise APNs' answer.
    package func check(authorization: String?) -> APNsRejection? {
        guard let authorization, !authorization.isEmpty else { return .missingProviderToken }
        let now = clock()
        let known = verified.withLock { cache -> Int64? in
            if let recent = cache.recent, recent.header == authorization { return recent.issued }
            guard let issued = cache.byHeader[authorization] else { return nil }
            cache.recent = (authorization, issued)
            return issued
        }
        if let known { return now - known > Self.lifetime ? .expiredProviderToken : nil }
        // A header not seen before is checked in full, on its UTF-8 view.
        let bytes = authorization.utf8
        let scheme = "bearer ".utf8
        guard bytes.count > scheme.count,
            zip(bytes, scheme).allSatisfy({ $0 | ($1 == 0x20 ? 0 : 0x20) == $1 })
        else {
            return .invalidProviderToken
        }
        let token = String(Substring(bytes.dropFirst(scheme.count).drop { $0 == 0x20 }))
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }),
            let header = Self.object(parts[0]), let claims = Self.object(parts[1]),
            header["alg"]?.stringValue == "ES256",
            let kid = header["kid"]?.stringValue, !kid.isEmpty,
            let issuer = claims["iss"]?.stringValue, !issuer.isEmpty,
            let issued = claims["iat"]?.integerValue
        else { return .invalidProviderToken }
        if let team, issuer != team { return .invalidProviderToken }
        if !keys.isEmpty {
            guard let key = keys[kid],
                let signature = try? Base64.decode(String(parts[2]))
            else { return .invalidProviderToken }
            let signed = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
            guard signed.withUnsafeBytes({ key.isValidSignature(signature, for: $0) }) else { return .invalidProviderToken }
        }
        guard issued <= now + Self.clockSkew else { return .invalidProviderToken }
        guard now - issued <= Self.lifetime else { return .expiredProviderToken }
        verified.withLock { cache in
            // Providers refresh tokens every 20 to 60 minutes: a handful live at once.
            if cache.byHeader.count >= 1_024 { cache.byHeader.removeAll(keepingCapacity: true) }
            cache.byHeader[authorization] = issued
            cache.recent = (authorization, issued)
        }
        return nil
    }

    private static func object(_ part: Substring) -> JSONObject? {
        guard let bytes = try? Base64.decode(String(part)), let value = try? JSONParser.parse(bytes) else { return nil }
        return value.objectValue
    }
}
