import Locking
import PushSeal
import PushSealJSON

/// A device's APNs token, checked: ASCII hex, an even number of digits, of a length devices use.
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    /// The token's hex digits as given.
    public let hex: String

    /// Nil when `hex` is not a device token (`APNsRules.isDeviceToken`).
    public init?(_ hex: String) {
        guard APNsRules.isDeviceToken(hex) else { return nil }
        self.hex = hex
    }

    /// A token as given, unchecked: `doctor send` probes with one that cannot exist.
    package init(unchecked hex: String) {
        self.hex = hex
    }

    public var description: String { hex }
}

/// Apple's provider API: `POST /3/device/TOKEN` with the `apns-*` headers, a provider token
/// or the connection's certificate, and APNs' statuses and reasons.
package struct APNsProvider: PushProvider {
    package typealias Target = DeviceToken

    /// What every request carries besides its device, payload and id.
    package struct Settings: Sendable {
        /// Where APNs (or a server that speaks its API) is: `https://api.push.apple.com:443`.
        package var origin: String
        package var topic: String
        package var pushType: APNs.PushType
        package var priority: APNs.Priority?
        package var expiration: String?
        package var collapseID: String?

        package init(
            origin: String, topic: String, pushType: APNs.PushType = .alert, priority: APNs.Priority? = nil,
            expiration: String? = nil, collapseID: String? = nil
        ) {
            self.origin = origin
            self.topic = topic
            self.pushType = pushType
            self.priority = priority
            self.expiration = expiration
            self.collapseID = collapseID
        }
    }

    package let settings: Settings
    /// The fallback alert and the field the envelope goes in.
    package let wrapping: APNsPayload
    package let credentials: (any PushCredentials)?
    package var serviceName: String { "APNs" }
    /// The authorization header for the token in use, made once per token rather than once
    /// per request (a 200-byte string each, ten thousand waiting).
    private let bearer = Locked<(token: String, header: String)>(("", ""))

    /// - Parameter tokens: provider tokens; nil when the connection's client certificate
    ///   authenticates instead.
    package init(settings: Settings, tokens: (any PushCredentials)?, wrapping: APNsPayload? = nil) {
        self.settings = settings
        self.wrapping = wrapping ?? .standard(byteLimit: settings.pushType.payloadByteLimit)
        credentials = tokens
    }

    package func request(
        id: Int, to device: DeviceToken, payload: [UInt8], notificationID: String, expiration: String?, credential: String?
    ) -> PushRequest {
        func field(_ name: APNs.Header, _ value: String) -> PushRequest.Field { PushRequest.Field(name.rawValue, value) }
        var headers = [
            field(.topic, settings.topic),
            field(.pushType, settings.pushType.rawValue),
            field(.id, notificationID)
        ]
        if let credential {
            let header = bearer.withLock { held in
                if held.token != credential { held = (credential, "bearer " + credential) }
                return held.header
            }
            headers.append(field(.authorization, header))
        }
        if let priority = settings.priority { headers.append(field(.priority, priority.rawValue)) }
        if let expiration = expiration ?? settings.expiration { headers.append(field(.expiration, expiration)) }
        if let collapse = settings.collapseID { headers.append(field(.collapseID, collapse)) }
        return PushRequest(id: id, origin: settings.origin, path: "/3/device/" + device.hex, headers: headers, body: payload)
    }

    package func verdict(on answer: PushAnswer) -> PushVerdict {
        let body = answer.body.isEmpty ? nil : (try? JSONParser.parse(answer.body))?.objectValue
        // A body longer than the client keeps is cut, and no longer parses: its reason, which
        // APNs writes first, is still read from the part that was kept.
        let reason = body?["reason"]?.stringValue ?? (body == nil ? Self.reason(inCut: answer.body) : nil)
        let known = reason.flatMap(APNs.Reason.init(rawValue:))
        // The server's apns-id is printed, so only a UUID is taken from it; anything else
        // (control bytes, kilobytes) gives way to the id the request was sent with.
        let id = answer.header(APNs.Header.id.rawValue).flatMap { APNsRules.isUUID($0) ? $0 : nil }
        switch answer.status {
        case 200:
            return .delivered(id: id)
        case 403 where known == .expiredProviderToken || known == .invalidProviderToken:
            return .credentialRefused(known == .expiredProviderToken ? .expired : .invalid, status: 403, reason: reason ?? "", id: id)
        case let status where APNs.temporaryStatuses.contains(status):
            // retry-after (seconds) is the server's own word on when to come back.
            let asked = answer.header(APNs.Header.retryAfter.rawValue).flatMap { Int($0) }.map { Duration.seconds(min(max($0, 0), 3_600)) }
            return .temporary(status: status, reason: reason ?? "HTTP \(status)", retryAfter: asked)
        default:
            return .refused(
                status: answer.status, reason: reason ?? "HTTP \(answer.status)", id: id,
                timestamp: body?["timestamp"]?.integerValue)
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

// `minted(_:)` is the cache's own.
extension ProviderTokenCache: PushCredentials {
    package func credential(replacing rejected: String?, because reason: CredentialRejection) throws -> String {
        try token(replacing: rejected, because: reason)
    }

}
