import PushSeal
import SealCrypto

/// Web Push's rules (RFC 8030, 8291, 8292) for `Sender`: each message is encrypted for its
/// subscription (a fresh key and salt each time), carries a VAPID token for its push
/// service's origin, and goes to the subscription's endpoint. Answers: 201 (or 202) is
/// delivered; 404 and 410 say the subscription is gone; 413 too large; 429 and 5xx are
/// temporary (after `retry-after` when the service asks); 400, 401 and 403 name the fault.
package struct WebPushProvider: PushProvider {
    package struct Settings: Sendable {
        /// RFC 8030's `TTL`: how long the push service keeps a message for a browser that is
        /// away, in seconds (services cap it, at four weeks for some).
        package var timeToLive: Int
        /// RFC 8030's `Urgency`: very-low, low, normal or high; nil leaves the service's default.
        package var urgency: String?
        /// RFC 8030's `Topic`: a later message with the same topic replaces one not yet
        /// delivered (up to 32 base64url characters).
        package var topic: String?

        package init(timeToLive: Int = 2_419_200, urgency: String? = nil, topic: String? = nil) {
            self.timeToLive = timeToLive
            self.urgency = urgency
            self.topic = topic
        }
    }

    package let settings: Settings
    package let wrapping: WebPushPayload
    package let vapid: VAPIDCredentials
    package var serviceName: String { "a Web Push service" }
    /// None that `Sender` renews: VAPID tokens are made per origin, in `request`.
    package var credentials: (any PushCredentials)? { nil }

    package init(settings: Settings = Settings(), wrapping: WebPushPayload, vapid: VAPIDCredentials) {
        self.settings = settings
        self.wrapping = wrapping
        self.vapid = vapid
    }

    /// - Parameter expiration: a notification's own `TTL` in seconds, instead of the settings'.
    package func request(
        id: Int, to target: WebPushSubscription, payload: [UInt8], notificationID: String, expiration: String?, credential: String?
    ) throws -> PushRequest {
        var headers = [
            PushRequest.Field("ttl", expiration ?? String(settings.timeToLive)),
            PushRequest.Field("content-encoding", "aes128gcm"),
            PushRequest.Field("content-type", "application/octet-stream"),
            PushRequest.Field("authorization", try vapid.authorization(for: target.origin))
        ]
        if let urgency = settings.urgency { headers.append(PushRequest.Field("urgency", urgency)) }
        if let topic = settings.topic { headers.append(PushRequest.Field("topic", topic)) }
        let body = try WebPushEncryption.seal(payload, to: target.key, auth: target.auth)
        return PushRequest(id: id, origin: target.origin, path: target.path, headers: headers, body: body)
    }

    package func verdict(on answer: PushAnswer) -> PushVerdict {
        // The service's own words, when it sent some (a line of JSON or text), kept short.
        let said = String(decoding: answer.body.prefix(200).filter { $0 >= 0x20 && $0 != 0x7f }, as: UTF8.self)
        let detail = said.isEmpty ? "" : ": \(said)"
        switch answer.status {
        case 201, 202:
            return .delivered(id: answer.header("location"))
        case 404, 410:
            return .refused(
                status: answer.status, reason: "the subscription is gone (\(answer.status)): remove it; the browser subscribes again when the page is opened",
                id: nil, timestamp: nil)
        case 413:
            return .refused(status: 413, reason: "the push service took the message as too large\(detail)", id: nil, timestamp: nil)
        case 401, 403:
            return .refused(
                status: answer.status, reason: "the push service refused the VAPID token\(detail) (check the subject, the key the page subscribed with, and the clock)",
                id: nil, timestamp: nil)
        case 429, 500, 502, 503, 504:
            return .temporary(
                status: answer.status, reason: "the push service answered \(answer.status)\(detail)",
                retryAfter: answer.header("retry-after").flatMap { Int($0) }.map { Duration.seconds(min(max($0, 0), 3_600)) })
        default:
            return .refused(status: answer.status, reason: "the push service answered \(answer.status)\(detail)", id: nil, timestamp: nil)
        }
    }
}
