import HTTP2
import PushSealJSON

// `Sender`'s three seams: what carries its requests, where provider tokens come from, and the
// provider's rules (how a notification becomes a request, what an answer means). In use they
// are HTTP/2, the token cache file and APNs; in tests the retry and ordering engine runs
// against an in-process fake, and a second provider is an addition, not a fork.

/// What carries `Sender`'s requests and brings back their answers (through the callback it
/// was made with).
package protocol PushTransport: Sendable {
    func submit(_ requests: [HTTP2Client.Request])
    /// Sends nothing new; answers already on their way get `grace`.
    func stop(grace: Duration)
    /// Closes, once every answer is in.
    func finish()
}

extension HTTP2Client: PushTransport {}

/// Where provider tokens come from.
package protocol ProviderTokenSource: Sendable {
    /// A usable token; a new one when `rejected` is the one just refused (for `because`).
    func token(replacing rejected: String?, because reason: ProviderTokenCache.Rejection) throws -> String
    /// True when this process made `token`, rather than reading it from a cache.
    func minted(_ token: String) -> Bool
}

extension ProviderTokenCache: ProviderTokenSource {}

/// What an answer means, in the provider's own rules.
package enum PushVerdict: Sendable, Equatable {
    /// Accepted; `id` is the server's id for it, when it gave a usable one.
    case delivered(id: String?)
    /// The provider token was refused (`reason`): a new one may be tried once. Otherwise
    /// the notification is refused as `refused` would say.
    case tokenRefused(ProviderTokenCache.Rejection, status: Int, reason: String, id: String?)
    /// Worth another try, no sooner than `retryAfter` when the server asked for it.
    case temporary(status: Int, reason: String, retryAfter: Duration?)
    /// Refused for good.
    case refused(status: Int, reason: String, id: String?, timestamp: Int64?)
}

/// A push provider's rules.
package protocol PushProvider: Sendable {
    /// The request for one attempt. `authorization` is the header value for the provider
    /// token, when tokens are used.
    func request(
        id: Int, device: String, payload: [UInt8], notificationID: String, expiration: String?,
        authorization: String?
    ) -> HTTP2Client.Request
    func verdict(on response: HTTP2Client.Response) -> PushVerdict
}

/// Apple's provider API: `/3/device/TOKEN`, the `apns-*` headers, and its statuses.
package struct APNsProvider: PushProvider {
    package let settings: Sender.Settings

    package init(settings: Sender.Settings) {
        self.settings = settings
    }

    package func request(
        id: Int, device: String, payload: [UInt8], notificationID: String, expiration: String?,
        authorization: String?
    ) -> HTTP2Client.Request {
        func field(_ name: APNs.Header, _ value: String) -> HTTP2Client.Field { HTTP2Client.Field(name.rawValue, value) }
        var headers = [
            field(.topic, settings.topic),
            field(.pushType, settings.pushType.rawValue),
            field(.id, notificationID)
        ]
        if let authorization { headers.append(field(.authorization, authorization)) }
        if let priority = settings.priority { headers.append(field(.priority, priority.rawValue)) }
        if let expiration = expiration ?? settings.expiration { headers.append(field(.expiration, expiration)) }
        if let collapse = settings.collapseID { headers.append(field(.collapseID, collapse)) }
        return HTTP2Client.Request(id: id, path: "/3/device/" + device, headers: headers, body: payload)
    }

    package func verdict(on response: HTTP2Client.Response) -> PushVerdict {
        let answer = response.body.isEmpty ? nil : (try? JSONParser.parse(response.body))?.objectValue
        // A body longer than the client keeps is cut, and no longer parses: its reason, which
        // APNs writes first, is still read from the part that was kept.
        let reason = answer?["reason"]?.stringValue ?? (answer == nil ? Self.reason(inCut: response.body) : nil)
        let known = reason.flatMap(APNs.Reason.init(rawValue:))
        // The server's apns-id is printed, so only a UUID is taken from it; anything else
        // (control bytes, kilobytes) gives way to the id the request was sent with.
        let id = response.header(APNs.Header.id.rawValue).flatMap { APNsRules.isUUID($0) ? $0 : nil }
        switch response.status {
        case 200:
            return .delivered(id: id)
        case 403 where known == .expiredProviderToken || known == .invalidProviderToken:
            return .tokenRefused(known == .expiredProviderToken ? .expired : .invalid, status: 403, reason: reason ?? "", id: id)
        case let status where APNs.temporaryStatuses.contains(status):
            // retry-after (seconds) is the server's own word on when to come back.
            let asked = response.header(APNs.Header.retryAfter.rawValue).flatMap { Int($0) }.map { Duration.seconds(min(max($0, 0), 3_600)) }
            return .temporary(status: status, reason: reason ?? "HTTP \(status)", retryAfter: asked)
        default:
            return .refused(
                status: response.status, reason: reason ?? "HTTP \(response.status)", id: id,
                timestamp: answer?["timestamp"]?.integerValue)
        }
    }

    /// The `"reason"` string of a JSON body that was cut short, if its member is whole.
    static func reason(inCut body: [UInt8]) -> String? {
        let key = Array(#""reason""#.utf8)
        guard body.count > key.count,
            let at = (0...(body.count - key.count)).first(where: { body[$0..<($0 + key.count)].elementsEqual(key) })
        else { return nil }
        var index = at + key.count
        func skipSpaces() { while index < body.count, [0x20, 0x09, 0x0A, 0x0D].contains(body[index]) { index += 1 } }
        skipSpaces()
        guard index < body.count, body[index] == UInt8(ascii: ":") else { return nil }
        index += 1
        skipSpaces()
        guard index < body.count, body[index] == UInt8(ascii: "\"") else { return nil }
        var end = index + 1
        while end < body.count, body[end] != UInt8(ascii: "\"") { end += body[end] == UInt8(ascii: "\\") ? 2 : 1 }
        guard end < body.count else { return nil }
        return (try? JSONParser.parse(Array(body[index...end])))?.stringValue
    }
}
