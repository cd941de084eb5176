import Foundation
@_exported import NotificationText
import PushSealJSON
@_exported import SeenMessages

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// What the extension shows for one notification, and why: the Linux runner's statuses.
public struct OpenedNotification: Sendable {
    /// The Linux runner's statuses, one vocabulary (`DeliveryStatus`): the opener gives
    /// `decrypted`, `passthrough`, `key-missing`, `sender-untrusted` (not sealed by a sender
    /// the store allows), `auth-failed`, `malformed`, `expired`, `duplicate` (opened before,
    /// `NotificationOpener.seen`),
    /// `original` (nothing with text to show: iOS shows the notification as it came),
    /// `locked` (the key store could not answer now: shown as the app chooses,
    /// `LockedContent`), `unsupported` (a later envelope version, or ps2 before iOS 17);
    /// the adapter adds `deadline` at `serviceExtensionTimeWillExpire`.
    public typealias Status = DeliveryStatus

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
    /// Why the key store could not answer, for `locked`: the developer's clue (a missing
    /// entitlement is `misconfigured`, with the Keychain's OSStatus).
    public var storeError: KeyStoreError? = nil
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

/// What a notification shows when its key store cannot answer (`locked`).
public enum LockedContent: Sendable, Equatable {
    /// The payload's own fallback alert, as it came: nothing lost, nothing claimed.
    case fallbackAlert
    /// These fields over the delivered ones (say, "Unlock your phone to read this message").
    case alert(AlertContent)
}

/// Opens a notification's payload with the same rules as `pushseal receive`'s decrypting
/// extension: the sealed alert in place of the fallback, or the placeholder (never the
/// fallback's text, never a byte of an unauthenticated message).
public struct NotificationOpener: Sendable {
    public var keys: any KeyStore
    public var field: String
    public var placeholder: Placeholder
    /// What a `locked` notification shows: by default the payload's own fallback alert, as
    /// it came, so a phone that cannot reach its keys yet loses nothing of what the sender
    /// chose to show (its sound and level included).
    public var lockedContent: LockedContent
    /// Whose messages open: by default only allowed senders' once the store keeps a sender's
    /// key (`.sender`, from a `pss1` line); `.required` refuses everything unauthenticated
    /// before one is kept, `.any` opens ps1 and ps2 even then (docs/FORMAT.md §6.1).
    public var senders: SenderPolicy
    /// The messages opened before, so one arriving again is `duplicate` (docs/FORMAT.md §6.2):
    /// a `SeenMessages` file in the App Group container, which every instance of the
    /// extension shares. Nil remembers nothing.
    public var seen: SeenMessages?
    /// Whether ps2 and ps3 can be opened: CryptoKit's HPKE, from iOS 17 and macOS 14. Tests
    /// set it false to take an iOS 15 or 16 device's path.
    var hpkeAvailable = true

    public init(
        keys: any KeyStore, field: String = "enc", placeholder: Placeholder = .standard,
        lockedContent: LockedContent = .fallbackAlert, senders: SenderPolicy = .automatic, seen: SeenMessages? = nil
    ) {
        self.keys = keys
        self.field = field
        self.placeholder = placeholder
        self.lockedContent = lockedContent
        self.senders = senders
        self.seen = seen
    }

    /// The placeholder's text in place of the delivered text (the subtitle emptied, so no
    /// fallback text is left), with the body for why: what is shown when nothing can be
    /// opened. `nil` is time-up (`serviceExtensionTimeWillExpire`).
    public func placeholderChanges(for status: OpenedNotification.Status?) -> AlertContent {
        let body =
            placeholder.body(for: status ?? .deadline)
        return AlertContent(title: placeholder.title, subtitle: "", body: body)
    }

    /// `userInfo` as `UNNotificationContent` gives it.
    public func open(userInfo: [AnyHashable: Any], now: Date = Date()) -> OpenedNotification {
        open(payload: UserInfo.json(userInfo), now: now)
    }

    /// The payload's JSON bytes, as APNs carried them: anything but a JSON object, and a
    /// payload over APNs' 4096 bytes (white space at its end not counted), is malformed
    /// (docs/FORMAT.md §6 steps 1 and 3).
    public func open(json: Data, now: Date = Date()) -> OpenedNotification {
        func malformed(_ reason: String) -> OpenedNotification {
            let changes = placeholderChanges(for: .malformed)
            return OpenedNotification(status: .malformed, changes: changes, content: changes, kid: nil, reason: reason, data: JSONObject())
        }
        let bytes = Array(json)
        guard case .object(let payload)? = try? JSONParser.parse(bytes) else { return malformed("the payload is not a JSON object") }
        var size = bytes.count
        while size > 0, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[size - 1]) { size -= 1 }
        guard size <= Self.payloadByteLimit else { return malformed("the payload is \(size) bytes, over APNs' \(Self.payloadByteLimit)") }
        return open(payload: payload, now: now)
    }

    /// APNs' limit for an alert push's payload.
    static let payloadByteLimit = 4096

    /// The payload as JSON: the one path every entry point takes.
    public func open(payload: JSONObject, now: Date = Date()) -> OpenedNotification {
        let opened = change(payload, now: now)
        guard opened.status != .passthrough, !opened.content.hasText else { return opened }
        // iOS's rule, as the Linux runner applies it: content without text is not shown.
        return OpenedNotification(
            status: .original, changes: AlertContent(), content: AlertContent(aps: payload["aps"]?.objectValue ?? JSONObject()),
            kid: opened.kid, reason: "the content to show had no alert text", data: JSONObject())
    }

    private func change(_ payload: JSONObject, now: Date) -> OpenedNotification {
        let delivered = AlertContent(aps: payload["aps"]?.objectValue ?? JSONObject())
        func passthrough(_ reason: String) -> OpenedNotification {
            OpenedNotification(status: .passthrough, changes: AlertContent(), content: delivered, kid: nil, reason: reason, data: JSONObject())
        }
        func refused(_ status: OpenedNotification.Status, _ kid: String?, _ reason: String) -> OpenedNotification {
            let changes = placeholderChanges(for: status)
            return OpenedNotification(
                status: status, changes: changes, content: delivered.changed(by: changes), kid: kid,
                reason: reason, data: JSONObject())
        }
        // Every APNs payload has `aps`; a receiver refuses one without (step 2).
        guard case .object? = payload["aps"] else {
            let changes = placeholderChanges(for: .malformed)
            return OpenedNotification(
                status: .malformed, changes: changes, content: changes, kid: nil, reason: "the payload has no 'aps' dictionary", data: JSONObject())
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
            return refused(error.reason == .unsupported ? .unsupported : .malformed, nil, error.message)
        }
        // Before the store is asked: a device without HPKE says so for any ps2 or ps3, key or not.
        if envelope.format != .ps1, !hpkeAvailable {
            return refused(.unsupported, envelope.kid, "a \(envelope.format.rawValue) envelope needs HPKE, which this system lacks (iOS 17 or macOS 14 has it)")
        }
        func locked(_ error: KeyStoreError) -> OpenedNotification {
            let changes: AlertContent
            switch lockedContent {
            case .fallbackAlert: changes = AlertContent()
            case .alert(let shown): changes = shown
            }
            var opened = OpenedNotification(
                status: .locked, changes: changes, content: delivered.changed(by: changes), kid: envelope.kid,
                reason: "the key store is \(error.kind.rawValue): \(error.message)", data: JSONObject())
            opened.storeError = error
            return opened
        }
        // Step 8: the device's key.
        let key: OpeningKey
        switch keys.lookUp(id: envelope.kid) {
        case .found(.sender):
            return refused(.keyMissing, envelope.kid, "key \(envelope.kid) on this device is a sender's key, not one that opens")
        case .found(let found):
            key = found
        case .missing:
            return refused(.keyMissing, envelope.kid, "no key \(envelope.kid) on this device")
        case .unavailable(let error):
            return locked(error)
        }
        // Step 9: the sender (docs/FORMAT.md §6.1).
        var sender: P256.KeyAgreement.PublicKey?
        if let senderKid = envelope.senderKid {
            switch keys.lookUp(id: senderKid) {
            case .found(.sender(let publicKey)):
                sender = publicKey
            case .found:
                return refused(.senderUntrusted, envelope.kid, "key \(senderKid) on this device is not a sender's key")
            case .missing:
                return refused(.senderUntrusted, envelope.kid, "sender \(senderKid) is not one this device allows")
            case .unavailable(let error):
                return locked(error)
            }
        } else if senders != .any {
            let knows: Bool
            do {
                knows = try keys.knowsSenders()
            } catch {
                return locked(error)
            }
            if senders.requiresSender(knowsSenders: knows) {
                return refused(
                    .senderUntrusted, envelope.kid,
                    "the envelope is \(envelope.format.rawValue), which names no sender, and this device opens only what a sender it allows has sealed")
            }
        }
        let alert: SealedAlert
        do {
            alert = try SealedAlert(
                plaintext: try envelope.open(with: key, sender: sender, hpkeAvailable: hpkeAvailable), field: field,
                requiringIdentity: envelope.format.namesSender)
        } catch {
            return refused(error.reason, envelope.kid, error.message)
        }
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        if let expires = alert.expires, expires <= seconds {
            return refused(.expired, envelope.kid, "the message expired")
        }
        // Step 13: shown once (docs/FORMAT.md §6.2). A store that cannot answer does not stop
        // the message: it is shown, as the Linux runner does.
        if let seen, let id = alert.id {
            let identity = SeenMessages.identity(kid: envelope.kid, sender: envelope.senderKid, id: id)
            if let isNew = try? seen.remember(identity, until: alert.expires ?? seconds + SeenMessages.defaultLifetime, now: seconds), !isNew {
                return refused(.duplicate, envelope.kid, "message \(id) under key \(envelope.kid) was opened on this device before")
            }
        }
        // The fallback's text gives way to the sealed text, even where the sealed alert has none.
        var changes = alert.content
        changes.title = changes.title ?? ""
        changes.subtitle = changes.subtitle ?? ""
        changes.body = changes.body ?? ""
        var data = JSONObject()
        for (key, value) in alert.data where key != "aps" && key != field { data[key] = value }
        return OpenedNotification(
            status: .decrypted, changes: changes, content: delivered.changed(by: changes), kid: envelope.kid,
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
    var id: String?
    var sent: Int64?

    /// With `requiringIdentity` (a ps3 alert) `id` and `sent` must be there.
    init(plaintext: Data, field: String, requiringIdentity: Bool = false) throws(OpeningError) {
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
            case "id":
                switch value {
                case .null: break
                case .string(let text) where (1...64).contains(text.utf8.count): id = text
                default: throw OpeningError(.malformed, "alert field 'id' is not a string of 1 to 64 bytes")
                }
            case "sent", "exp":
                guard value == .null || value.integerValue != nil else {
                    throw OpeningError(.malformed, "alert field '\(key)' is not a whole number")
                }
                if key == "exp" { expires = value.integerValue } else { sent = value.integerValue }
            default:
                break
            }
        }
        guard content.title?.isEmpty == false || content.body?.isEmpty == false else {
            throw OpeningError(.malformed, "the sealed alert has neither a title nor a body to show")
        }
        for name in ["aps", field] where data[name] != nil {
            throw OpeningError(.malformed, "the sealed data names '\(name)', which the payload's own member holds")
        }
        if requiringIdentity {
            guard id != nil else { throw OpeningError(.malformed, "the sealed alert has no 'id', which a ps3 alert must have") }
            guard sent != nil else { throw OpeningError(.malformed, "the sealed alert has no 'sent' time, which a ps3 alert must have") }
        }
    }
}
