// So is the sender policy (EnvelopeFormat's, one rule with the kit).
@_exported import EnvelopeFormat
import Locking
// The outcomes' vocabulary (DeliveryStatus) and the placeholder are NotificationText's,
// shared with the device kit: a user of PushSeal names them without a second import.
@_exported import NotificationText
import PushSealJSON
import SealCrypto
import SeenMessages

/// The extension pushseal exists for: opens the envelope in the payload's custom field and
/// shows the sealed alert, or a placeholder that says nothing of the content when the key is
/// missing, the message was altered, it expired, or time ran out.
public final class DecryptingExtension: NotificationServiceExtension {
    public struct Settings: Sendable {
        public var field: String
        public var placeholder: Placeholder
        /// Unix seconds, for `exp` and key expiry; a parameter so tests can move time.
        public var now: @Sendable () -> Int64
        /// Whose messages open: by default only allowed senders' once the keyring allows any.
        public var senders: SenderPolicy
        /// The messages opened before, so one arriving again is a `duplicate`; nil remembers
        /// nothing.
        public var seen: SeenMessages?

        public init(
            field: String = PayloadSealer.defaultField, placeholder: Placeholder = .standard,
            now: @escaping @Sendable () -> Int64 = Timestamp.now, senders: SenderPolicy = .automatic, seen: SeenMessages? = nil
        ) {
            self.field = field
            self.placeholder = placeholder
            self.now = now
            self.senders = senders
            self.seen = seen
        }
    }

    private let keys: any KeySource
    private let settings: Settings
    // Set in didReceive, read by serviceExtensionTimeWillExpire on another thread.
    private let pending = Locked<(request: NotificationRequest, handler: ContentHandler, kid: String?)?>(nil)

    public init(keys: any KeySource, settings: Settings = Settings()) {
        self.keys = keys
        self.settings = settings
    }

    public func didReceive(_ request: NotificationRequest, contentHandler: ContentHandler) {
        pending.withLock { $0 = (request, contentHandler, nil) }
        let envelope: SealedEnvelope
        switch Self.readField(of: request.content.userInfo, field: settings.field) {
        case .notSealed(let note):
            contentHandler(request.content, note: note)
            return
        case .refused(let note):
            deliverPlaceholder(request, contentHandler, note)
            return
        case .sealed(let sealed):
            envelope = sealed
        }
        pending.withLock { $0?.kid = envelope.kid }
        keys.keyring(for: envelope.kid) { [self] result in
            let outcome: Result<SealedAlert, DeliveryNote>
            switch result {
            case .success(let held):
                let now = settings.now()
                outcome = Self.open(envelope, with: held, field: settings.field, now: now, senders: settings.senders).flatMap { alert in
                    Self.checkRepeat(of: alert, in: envelope, on: request.device, seen: settings.seen, now: now, remember: true).map { .failure($0) }
                        ?? .success(alert)
                }
            case .failure(let error):
                // Not an answer about the key: the keyring itself could not be read.
                outcome = .failure(DeliveryNote(status: .locked, kid: envelope.kid, reason: "the keyring could not be read: \(error)"))
            }
            switch outcome {
            case .success(let alert):
                contentHandler(
                    Self.content(showing: alert, over: request.content, field: settings.field), note: DeliveryNote(status: .decrypted, kid: envelope.kid))
            case .failure(let note) where note.status == .locked:
                // The sender's fallback alert, as it came: the key may be there once the keyring reads again.
                contentHandler(request.content, note: note)
            case .failure(let note):
                deliverPlaceholder(request, contentHandler, note)
            }
        }
    }

    /// What the payload's field holds: docs/FORMAT.md §6 steps 5 to 7.
    package enum FieldReading {
        /// No field: the notification is shown as it came (`passthrough`).
        case notSealed(DeliveryNote)
        /// A field that is not an envelope this build reads (`malformed`, `unsupported`).
        case refused(DeliveryNote)
        case sealed(SealedEnvelope)
    }

    /// Reads the envelope in `field` of a payload: the runner's and `doctor`'s one reading.
    package static func readField(of payload: JSONObject, field: String) -> FieldReading {
        switch payload[field] {
        case nil:
            return .notSealed(DeliveryNote(status: .passthrough, reason: "no '\(field)' field"))
        case .string(let text)?:
            do {
                return .sealed(try SealedEnvelope(parsing: text))
            } catch let error as EnvelopeError {
                // The error's code is the status: malformed or unsupported.
                return .refused(DeliveryNote(status: error.code, reason: "\(error)"))
            } catch {
                return .refused(DeliveryNote(status: .malformed, reason: "\(error)"))
            }
        case let other?:
            return .refused(DeliveryNote(status: .malformed, reason: "the '\(field)' field is \(other.kindName), not an envelope"))
        }
    }

    /// Opens `envelope` with `keyring` as of `now`: docs/FORMAT.md §6 steps 8 to 12, the
    /// runner's, `doctor`'s and `decrypt`'s one judge of a sealed alert. The key is looked up,
    /// and found usable, before any opening is tried: its errors are the keyring's, the rest
    /// the envelope's. Step 13, the repeat, is `checkRepeat`'s.
    package static func open(
        _ envelope: SealedEnvelope, with keyring: Keyring, field: String, now: Int64, senders: SenderPolicy = .automatic
    ) -> Result<SealedAlert, DeliveryNote> {
        let kid = envelope.kid
        func note(_ status: DeliveryStatus, _ error: any Error) -> DeliveryNote {
            DeliveryNote(status: status, kid: kid, reason: "\(error)")
        }
        let alert: SealedAlert
        do {
            alert = try envelope.withOpened(with: keyring, now: now, requireSender: senders.requiresSender(keyring)) {
                try SealedAlert(plaintext: $0, field: field, requiringIdentity: envelope.version.namesSender)
            }
        } catch let error as KeyringError {
            switch error.code {
            case .keyDisabled: return .failure(note(.keyDisabled, error))
            case .keyExpired: return .failure(note(.keyExpired, error))
            case .senderNotAllowed: return .failure(note(.senderUntrusted, error))
            default: return .failure(note(.keyMissing, error))
            }
        } catch let error as EnvelopeError {
            // The envelope's own verdict: authentication failed, or not a sealed alert.
            return .failure(note(error.code, error))
        } catch {
            return .failure(note(.malformed, error))
        }
        if let expires = alert.expires, expires <= now {
            return .failure(DeliveryNote(status: .expired, kid: kid, reason: "the message expired at \(Timestamp.format(expires))"))
        }
        return .success(alert)
    }

    /// docs/FORMAT.md §6 step 13: whether `alert` (its envelope's key ids and its `id`) was
    /// opened before and is remembered still; with `remember`, it is remembered from now on,
    /// until its `exp` or for 30 days. Nil when it is new, or carries no `id`, or nothing is
    /// remembered. A store that cannot be read or written does not stop the message: it is
    /// shown as new (the store's failure is not the message's).
    package static func checkRepeat(
        of alert: SealedAlert, in envelope: SealedEnvelope, on device: String? = nil, seen: SeenMessages?, now: Int64, remember: Bool
    ) -> DeliveryNote? {
        guard let seen, let id = alert.id else { return nil }
        let identity = SeenMessages.identity(kid: envelope.kid, sender: envelope.senderKid, id: id, device: device)
        do {
            let isNew =
                remember
                ? try seen.remember(identity, until: alert.expires ?? (now + SeenMessages.defaultLifetime), now: now)
                : !(try seen.contains(identity, now: now))
            guard !isNew else { return nil }
        } catch {
            return nil
        }
        return DeliveryNote(
            status: .duplicate, kid: envelope.kid,
            reason: "message \(id) under key \(envelope.kid) was opened \(device.map { "on device \($0.prefix(8))… " } ?? "")here before")
    }

    public func serviceExtensionTimeWillExpire() {
        guard let (request, handler, kid) = pending.withLock({ $0 }) else { return }
        deliverPlaceholder(request, handler, DeliveryNote(status: .deadline, kid: kid, reason: "the extension's time ran out before the alert was opened"))
    }

    private func deliverPlaceholder(_ request: NotificationRequest, _ handler: ContentHandler, _ note: DeliveryNote) {
        var content = request.content
        content.title = settings.placeholder.title
        content.subtitle = ""
        content.body = settings.placeholder.body(for: note.status)
        handler(content, note: note)
    }

    /// The original content with the sealed fields put in place, as an NSE does with
    /// `mutableCopy()`. Sealed data joins userInfo but never replaces `aps` or the envelope's
    /// field: the app reads those as APNs delivered them (pushseal's sender refuses such keys;
    /// this holds for any other sender too).
    package static func content(showing alert: SealedAlert, over original: NotificationContent, field: String) -> NotificationContent {
        var content = original
        // The fallback's text gives way to the sealed text, even where the sealed alert has
        // none; every other field the sealed alert sets replaces the payload's.
        content.fields = original.fields.overlaid(by: alert.fields)
        for (key, value) in alert.data where key != "aps" && key != field { content.userInfo[key] = value }
        return content
    }
}

extension DeliveryNote: Error {}

extension SenderPolicy {
    package func requiresSender(_ keyring: Keyring) -> Bool {
        requiresSender(knowsSenders: keyring.allowsOnlyKnownSenders)
    }
}
