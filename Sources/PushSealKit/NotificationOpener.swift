import Foundation

/// The text shown when a sealed alert cannot be shown: the app's words, never secret.
public struct Placeholder: Sendable, Equatable {
    public var title: String
    public var body: String

    /// The Linux runner's default, word for word.
    public static let standard = Placeholder(title: "Encrypted notification", body: "This message could not be decrypted on this device.")

    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}

/// What the extension shows for one notification, and why: the Linux runner's statuses.
public struct OpenedNotification: @unchecked Sendable {
    // Unchecked: `userInfo` holds JSON values only (strings, numbers, arrays, dictionaries).
    public enum Status: String, Sendable {
        case decrypted
        /// Not for an extension (no mutable-content or no alert text), or nothing sealed: shown as it came.
        case passthrough
        case keyMissing = "key-missing"
        case authFailed = "auth-failed"
        case malformed
        /// The sealed `exp` has passed.
        case expired
    }

    public let status: Status
    public let title: String
    public let subtitle: String
    public let body: String
    public let kid: String?
    /// Why it was not decrypted, for logs; never secret.
    public let reason: String?
    /// The payload with the sealed `data` merged in; `aps` and the sealed field are never replaced.
    public let userInfo: [String: Any]
}

/// Opens a notification's payload with the same rules as `pushseal receive`'s decrypting
/// extension: the sealed title, subtitle and body in place of the fallback's, or the
/// placeholder (never the fallback, never a byte of an unauthenticated message).
public struct NotificationOpener: Sendable {
    public var keys: any KeyStore
    public var field: String
    public var placeholder: Placeholder

    public init(keys: any KeyStore, field: String = "enc", placeholder: Placeholder = .standard) {
        self.keys = keys
        self.field = field
        self.placeholder = placeholder
    }

    /// `userInfo` as `UNNotificationContent` gives it.
    public func open(userInfo: [AnyHashable: Any], now: Date = Date()) -> OpenedNotification {
        var payload: [String: Any] = [:]
        for (key, value) in userInfo { if let key = key as? String { payload[key] = value } }
        return open(payload: payload, now: now)
    }

    /// The payload's JSON bytes; not a JSON object is malformed.
    public func open(json: Data, now: Date = Date()) -> OpenedNotification {
        guard let payload = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else {
            return OpenedNotification(status: .malformed, title: placeholder.title, subtitle: "", body: placeholder.body,
                                      kid: nil, reason: "the payload is not a JSON object", userInfo: [:])
        }
        return open(payload: payload, now: now)
    }

    func open(payload: [String: Any], now: Date) -> OpenedNotification {
        let shown = Self.alertText(of: payload)
        func passthrough(_ reason: String) -> OpenedNotification {
            OpenedNotification(status: .passthrough, title: shown.title, subtitle: shown.subtitle, body: shown.body,
                               kid: nil, reason: reason, userInfo: payload)
        }
        func refused(_ status: OpenedNotification.Status, _ kid: String?, _ reason: String) -> OpenedNotification {
            OpenedNotification(status: status, title: placeholder.title, subtitle: "", body: placeholder.body,
                               kid: kid, reason: reason, userInfo: payload)
        }
        // Apple's rule for running an extension at all.
        let aps = payload["aps"] as? [String: Any] ?? [:]
        guard (aps["mutable-content"] as? NSNumber)?.intValue == 1, !(shown.title + shown.subtitle + shown.body).isEmpty else {
            return passthrough("not eligible for a service extension (needs mutable-content 1 and alert text)")
        }
        guard let sealedField = payload[field] else { return passthrough("no '\(field)' field") }
        guard let text = sealedField as? String else { return refused(.malformed, nil, "the '\(field)' field is not an envelope") }
        let envelope: SealedEnvelope
        do {
            envelope = try SealedEnvelope(parsing: text)
        } catch {
            return refused(.malformed, nil, error.message)
        }
        guard let key = keys.key(id: envelope.kid) else {
            return refused(.keyMissing, envelope.kid, "no key \(envelope.kid) on this device")
        }
        let plaintext: Data
        do {
            plaintext = try envelope.open(with: key)
        } catch {
            return refused(error.reason == .authFailed ? .authFailed : error.reason == .keyMissing ? .keyMissing : .malformed,
                           envelope.kid, error.message)
        }
        guard let alert = (try? JSONSerialization.jsonObject(with: plaintext)) as? [String: Any] else {
            return refused(.malformed, envelope.kid, "the opened envelope is not a JSON alert")
        }
        for name in ["title", "subtitle", "body"] where alert[name] != nil && !(alert[name] is String) {
            return refused(.malformed, envelope.kid, "alert field '\(name)' is not text")
        }
        if let expires = alert["exp"] {
            guard let seconds = (expires as? NSNumber)?.int64Value else {
                return refused(.malformed, envelope.kid, "alert field 'exp' is not a whole number")
            }
            if seconds <= Int64(now.timeIntervalSince1970.rounded(.down)) {
                return refused(.expired, envelope.kid, "the message expired")
            }
        }
        if let data = alert["data"], !(data is [String: Any]) {
            return refused(.malformed, envelope.kid, "alert field 'data' is not an object")
        }
        var userInfo = payload
        for (key, value) in alert["data"] as? [String: Any] ?? [:] where key != "aps" && key != field {
            userInfo[key] = value
        }
        return OpenedNotification(status: .decrypted, title: alert["title"] as? String ?? "", subtitle: alert["subtitle"] as? String ?? "",
                                  body: alert["body"] as? String ?? "", kid: envelope.kid, reason: nil, userInfo: userInfo)
    }

    /// The visible text iOS builds from `aps.alert`: a string is the body.
    static func alertText(of payload: [String: Any]) -> (title: String, subtitle: String, body: String) {
        let aps = payload["aps"] as? [String: Any] ?? [:]
        if let text = aps["alert"] as? String { return ("", "", text) }
        let alert = aps["alert"] as? [String: Any] ?? [:]
        return (alert["title"] as? String ?? "", alert["subtitle"] as? String ?? "", alert["body"] as? String ?? "")
    }
}
