import Foundation
import PushSealJSON
@_exported import NotificationText

/// What the extension shows for one notification, and why: the Linux runner's statuses.
public struct OpenedNotification: Sendable {
    public enum Status: String, Sendable {
        case decrypted
        /// Not for an extension (no mutable-content or no alert text), or nothing sealed: shown as it came.
        case passthrough
        case keyMissing = "key-missing"
        case authFailed = "auth-failed"
        case malformed
        /// The sealed `exp` has passed.
        case expired
        /// What would be shown has no text (a sealed alert without any, or an empty
        /// placeholder): iOS ignores such content and shows the notification as it came.
        case original
    }

    public let status: Status
    /// What to write over the content as delivered: every field the sealed alert sets (its
    /// title, subtitle and body always, "" where it has none), or the placeholder's text;
    /// nothing for a passthrough.
    public let changes: AlertContent
    /// What the notification shows in the end: the content iOS built from `aps`, changed.
    public let content: AlertContent
    public let kid: String?
    /// Why it was not decrypted, for logs; never secret.
    public let reason: String?
    /// The sealed `data`, which joins userInfo; never holds `aps` or the sealed field.
    public let data: JSONObject

    public var title: String { content.title ?? "" }
    public var subtitle: String { content.subtitle ?? "" }
    public var body: String { content.body ?? "" }

    /// `userInfo` with the sealed data added; what APNs delivered under `aps` and the sealed
    /// field stays as it was.
    public func userInfo(over userInfo: [AnyHashable: Any]) -> [AnyHashable: Any] {
        var merged = userInfo
        for (key, value) in data { merged[key] = UserInfo.foundation(value) }
        return merged
    }
}

/// Opens a notification's payload with the same rules as `pushseal receive`'s decrypting
/// extension: the sealed alert in place of the fallback, or the placeholder (never the
/// fallback's text, never a byte of an unauthenticated message).
public struct NotificationOpener: Sendable {
    public var keys: any KeyStore
    public var field: String
    public var placeholder: Placeholder

    public init(keys: any KeyStore, field: String = "enc", placeholder: Placeholder = .standard) {
        self.keys = keys
        self.field = field
        self.placeholder = placeholder
    }

    /// The placeholder's text in place of the delivered text (the subtitle emptied, so no
    /// fallback text is left), with the body for why: what is shown when nothing can be
    /// opened. `nil` is time-up (`serviceExtensionTimeWillExpire`).
    public func placeholderChanges(for status: OpenedNotification.Status?) -> AlertContent {
        let body = switch status {
        case .keyMissing?: placeholder.keyMissing
        case .expired?: placeholder.expired
        case nil: placeholder.deadline
        default: placeholder.unreadable
        }
        return AlertContent(title: placeholder.title, subtitle: "", body: body)
    }

    /// `userInfo` as `UNNotificationContent` gives it.
    public func open(userInfo: [AnyHashable: Any], now: Date = Date()) -> OpenedNotification {
        open(payload: UserInfo.json(userInfo), now: now)
    }

    /// The payload's JSON bytes; anything but a JSON object is malformed.
    public func open(json: Data, now: Date = Date()) -> OpenedNotification {
        guard case .object(let payload)? = try? JSONParser.parse(Array(json)) else {
            let changes = placeholderChanges(for: .malformed)
            return OpenedNotification(status: .malformed, changes: changes, content: changes, kid: nil,
                                      reason: "the payload is not a JSON object", data: JSONObject())
        }
        return open(payload: payload, now: now)
    }

    /// The payload as JSON: the one path every entry point takes.
    public func open(payload: JSONObject, now: Date = Date()) -> OpenedNotification {
        let opened = change(payload, now: now)
        guard opened.status != .passthrough, !opened.content.hasText else { return opened }
        // iOS's rule, as the Linux runner applies it: content without text is not shown.
        return OpenedNotification(status: .original, changes: AlertContent(), content: AlertContent(aps: payload["aps"]?.objectValue ?? JSONObject()),
                                  kid: opened.kid, reason: "the content to show had no alert text", data: JSONObject())
    }

    private func change(_ payload: JSONObject, now: Date) -> OpenedNotification {
        let delivered = AlertContent(aps: payload["aps"]?.objectValue ?? JSONObject())
        func passthrough(_ reason: String) -> OpenedNotification {
            OpenedNotification(status: .passthrough, changes: AlertContent(), content: delivered, kid: nil, reason: reason, data: JSONObject())
        }
        func refused(_ status: OpenedNotification.Status, _ kid: String?, _ reason: String) -> OpenedNotification {
            let changes = placeholderChanges(for: status)
            return OpenedNotification(status: status, changes: changes, content: delivered.changed(by: changes), kid: kid,
                                      reason: reason, data: JSONObject())
        }
        // Apple's rule for running an extension at all.
        guard payload["aps"]?.objectValue?["mutable-content"]?.integerValue == 1, delivered.hasText else {
            return passthrough("not eligible for a service extension (needs mutable-content 1 and alert text)")
        }
        guard let sealedField = payload[field] else { return passthrough("no '\(field)' field") }
        guard case .string(let text) = sealedField else {
            return refused(.malformed, nil, "the '\(field)' field is \(sealedField.kindName), not an envelope")
        }
        let envelope: SealedEnvelope
        do {
            envelope = try SealedEnvelope(parsing: text)
        } catch {
            return refused(.malformed, nil, error.message)
        }
        guard let key = keys.key(id: envelope.kid) else {
            return refused(.keyMissing, envelope.kid, "no key \(envelope.kid) on this device")
        }
        let alert: SealedAlert
        do {
            alert = try SealedAlert(plaintext: try envelope.open(with: key))
        } catch {
            let status: OpenedNotification.Status = switch error.reason {
            case .authFailed: .authFailed
            case .keyMissing: .keyMissing
            case .malformed: .malformed
            }
            return refused(status, envelope.kid, error.message)
        }
        if let expires = alert.expires, expires <= Int64(now.timeIntervalSince1970.rounded(.down)) {
            return refused(.expired, envelope.kid, "the message expired")
        }
        // The fallback's text gives way to the sealed text, even where the sealed alert has none.
        var changes = alert.content
        changes.title = changes.title ?? ""
        changes.subtitle = changes.subtitle ?? ""
        changes.body = changes.body ?? ""
        var data = JSONObject()
        for (key, value) in alert.data where key != "aps" && key != field { data[key] = value }
        return OpenedNotification(status: .decrypted, changes: changes, content: delivered.changed(by: changes), kid: envelope.kid,
                                  reason: nil, data: data)
    }
}

/// The alert sealed inside an envelope, read by the sender's rules: the alert fields (each
/// checked), `data` (an object), `sent` and `exp` (whole numbers); other members, which later
/// senders may add, are skipped.
struct SealedAlert {
    var content = AlertContent()
    var data = JSONObject()
    var expires: Int64?

    init(plaintext: Data) throws(OpeningError) {
        // Padding is trailing spaces, which JSON skips: nothing to remove first.
        guard let value = try? JSONParser.parse(Array(plaintext)) else {
            throw OpeningError(.malformed, "the opened envelope is not a JSON alert")
        }
        guard case .object(let members) = value else {
            throw OpeningError(.malformed, "the opened envelope holds \(value.kindName), not an alert object")
        }
        for (key, value) in members {
            if try content.set(key, to: value) { continue }
            switch key {
            case "data":
                switch value {
                case .null: break
                case .object(let object): data = object
                default: throw OpeningError(.malformed, "alert field 'data' is \(value.kindName), not an object")
                }
            case "sent", "exp":
                guard value == .null || value.integerValue != nil else {
                    throw OpeningError(.malformed, "alert field '\(key)' is not a whole number")
                }
                if key == "exp" { expires = value.integerValue }
            default:
                break
            }
        }
    }
}
