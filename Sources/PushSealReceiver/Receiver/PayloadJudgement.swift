import PushSeal
import PushSealJSON
import SeenMessages

/// What `pushseal receive` gives one payload with its decrypting extension, found by the
/// runner's own steps (docs/FORMAT.md §6): `ReceivedInput` reads it (steps 1 to 3),
/// `NotificationRequest.invokesServiceExtension` judges eligibility (4), and
/// `DecryptingExtension.readField`, `.open` and `.checkRepeat` read and open the envelope
/// (5 to 13). `doctor`
/// and `decrypt` ask this instead of judging for themselves, so their verdict is the
/// runner's status by construction; a test holds all three equal over the vectors.
package struct PayloadJudgement: Sendable {
    /// The status a receiver gives; nil when the payload is sound up to the key and no
    /// keyring was given to go further.
    package var status: DeliveryStatus?
    /// Why, in the runner's words; never secret.
    package var reason: String?
    /// The request the payload makes, once it reads as one.
    package var request: NotificationRequest?
    /// The envelope, once the field reads as one.
    package var envelope: SealedEnvelope?
    /// The opened alert, for `decrypted`.
    package var alert: SealedAlert?
    /// What the device shows in the end, for `decrypted`.
    package var shown: NotificationContent?

    /// What a receiver brings besides its keyring: whose messages it opens, and the
    /// messages it opened before (asked, never changed: a judgement remembers nothing).
    package struct Receiving: Sendable {
        package var senders: SenderPolicy
        package var seen: SeenMessages?

        package init(senders: SenderPolicy = .automatic, seen: SeenMessages? = nil) {
            self.senders = senders
            self.seen = seen
        }
    }

    /// Judges a payload as the runner reads it from a file: `pushType` is the push type it
    /// goes out with (nil: alert), `keyring` nil stops before the key.
    package static func of(
        payload bytes: UnsafeRawBufferPointer, field: String, pushType: String? = nil, keyring: Keyring?, now: Int64,
        receiving: Receiving = Receiving()
    ) -> PayloadJudgement {
        var judgement = PayloadJudgement()
        let request: NotificationRequest
        switch ReceivedInput(bytes: bytes, pushType: pushType) {
        case .unreadable(let reason):
            judgement.status = .malformed
            judgement.reason = reason
            return judgement
        case .request(let read):
            request = read
        }
        judgement.request = request
        guard request.invokesServiceExtension else {
            judgement.status = .passthrough
            judgement.reason = "not eligible for a service extension (needs mutable-content 1 and alert text)"
            return judgement
        }
        switch DecryptingExtension.readField(of: request.content.userInfo, field: field) {
        case .notSealed(let note), .refused(let note):
            judgement.status = note.status
            judgement.reason = note.reason
            return judgement
        case .sealed(let envelope):
            judgement.envelope = envelope
            judgement.open(envelope, over: request.content, keyring: keyring, field: field, now: now, receiving: receiving)
        }
        return judgement
    }

    /// Judges a bare envelope (`decrypt`'s other input): the payload steps do not apply.
    package static func of(
        envelope text: String, field: String, keyring: Keyring?, now: Int64, receiving: Receiving = Receiving()
    ) -> PayloadJudgement {
        var judgement = PayloadJudgement()
        switch DecryptingExtension.readField(of: JSONObject([(field, .string(text))]), field: field) {
        case .notSealed(let note), .refused(let note):
            judgement.status = note.status
            judgement.reason = note.reason
        case .sealed(let envelope):
            judgement.envelope = envelope
            judgement.open(envelope, over: nil, keyring: keyring, field: field, now: now, receiving: receiving)
        }
        return judgement
    }

    private mutating func open(
        _ envelope: SealedEnvelope, over content: NotificationContent?, keyring: Keyring?, field: String, now: Int64, receiving: Receiving
    ) {
        guard let keyring else { return }
        switch DecryptingExtension.open(envelope, with: keyring, field: field, now: now, senders: receiving.senders) {
        case .success(let opened):
            if let note = DecryptingExtension.checkRepeat(of: opened, in: envelope, seen: receiving.seen, now: now, remember: false) {
                status = note.status
                reason = note.reason
                return
            }
            status = .decrypted
            alert = opened
            shown = content.map { DecryptingExtension.content(showing: opened, over: $0, field: field) }
        case .failure(let note):
            status = note.status
            reason = note.reason
        }
    }
}
