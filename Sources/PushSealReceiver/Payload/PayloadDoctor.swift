import EnvelopeFormat
import PushSeal
import PushSealJSON
import SealCrypto

/// One thing `pushseal doctor` found: what it checked, whether it holds, in plain words, and
/// what fixes it when it does not.
package struct DoctorFinding: Sendable, Equatable {
    package enum Level: String, Sendable {
        /// Holds.
        case ok
        /// Worth knowing; nothing to fix.
        case note
        /// The notification will not arrive, or not open, as meant.
        case problem
    }

    package let check: String
    package let level: Level
    package let says: String
    package let fix: String?

    package init(_ check: String, _ level: Level, _ says: String, fix: String? = nil) {
        self.check = check
        self.level = level
        self.says = says
        self.fix = fix
    }
}

/// What an iPhone will do with a payload, and why: the Notification Service Extension's
/// eligibility, the size against the push type's limit, the envelope's shape down to the
/// precise base64 fault, and with a keyring whether it opens and what would be shown. The
/// same rules as the runner and the kit (docs/FORMAT.md), said so that a sender who is not
/// running pushseal can fix what is wrong.
package struct PayloadDiagnosis: Sendable {
    package var findings: [DoctorFinding] = []
    /// The status the receiver would give, when the diagnosis got that far (nil without a
    /// keyring for a sealed payload).
    package var status: DeliveryStatus?
    /// The title and body the device would show, when it opens.
    package var shown: (title: String, body: String)?
    /// Whether iOS runs the extension for it; nil when the payload could not be read.
    package var extensionRuns: Bool?

    package var hasProblem: Bool { findings.contains { $0.level == .problem } }

    mutating func add(_ check: String, _ level: DoctorFinding.Level, _ says: String, fix: String? = nil) {
        findings.append(DoctorFinding(check, level, says, fix: fix))
    }

    /// Diagnoses a payload.
    /// - Parameters:
    ///   - bytes: the payload, as APNs would be given it.
    ///   - field: the custom field that holds the envelope.
    ///   - pushType: the `apns-push-type` it is sent with (its size limit depends on it).
    ///   - priority: the `apns-priority` it is sent with.
    ///   - keyring: the receiver's keys; nil to stop before opening.
    ///   - keysName: how to name the keyring's folder in messages.
    ///   - now: the time `exp` and key lifetimes are judged at (Unix seconds).
    package static func of(
        _ bytes: [UInt8], field: String = PayloadSealer.defaultField, pushType: APNs.PushType = .alert,
        priority: APNs.Priority = .now, keyring: Keyring? = nil, keysName: String = "the keyring",
        now: Int64 = Timestamp.now(), receiving: PayloadJudgement.Receiving = PayloadJudgement.Receiving()
    ) -> PayloadDiagnosis {
        // One judge: the status is what `pushseal receive` gives these bytes, found by the
        // runner's own steps; the findings only say why, and what fixes it.
        let judgement = bytes.withUnsafeBytes {
            PayloadJudgement.of(payload: $0, field: field, pushType: pushType.rawValue, keyring: keyring, now: now, receiving: receiving)
        }
        var diagnosis = PayloadDiagnosis()
        diagnosis.status = judgement.status
        diagnosis.extensionRuns = judgement.request?.invokesServiceExtension
        if judgement.status == .decrypted, let shown = judgement.shown {
            diagnosis.shown = (shown.title, shown.body)
        }
        diagnosis.explain(bytes, judgement, field: field, pushType: pushType, priority: priority, keyring: keyring, keysName: keysName)
        return diagnosis
    }

    private mutating func explain(
        _ bytes: [UInt8], _ judgement: PayloadJudgement, field: String, pushType: APNs.PushType, priority: APNs.Priority,
        keyring: Keyring?, keysName: String
    ) {
        // JSON, strictly: a name twice is refused by every pushseal receiver.
        let value: JSONValue
        guard bytes.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) else {
            add("json", .problem, "the input is empty: there is no payload", fix: "give the payload's file, or pipe in what 'pushseal encrypt' printed")
            return
        }
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            add(
                "json", .problem, "not strict JSON: \(error)",
                fix: "send one JSON object (RFC 8259), each member named once; check the quoting in your shell or template")
            return
        }
        guard case .object(let payload) = value else {
            add("json", .problem, "the payload is \(value.kindName), not a JSON object", fix: "send a JSON object with 'aps' and the sealed field")
            return
        }
        add("json", .ok, "\(bytes.count) bytes of strict JSON")

        guard case .object(let aps)? = payload["aps"] else {
            add(
                "aps", .problem,
                payload["aps"] == nil ? "no 'aps': APNs payloads carry one, and receivers refuse a payload without it (malformed)" : "'aps' is not an object (malformed)",
                fix: #"add "aps":{"alert":{"title":"…","body":"…"},"mutable-content":1} (pushseal encrypt writes it)"#)
            return
        }

        // The push type's size limit, counted as the receiver counts it.
        let limit = pushType.payloadByteLimit
        let size = bytes.withUnsafeBytes { ReceivedInput.payloadByteCount($0) }
        let article = pushType == .alert ? "an" : "a"
        if size > limit {
            add(
                "size", .problem,
                "\(size) bytes, \(size - limit) over the \(limit) bytes APNs takes for \(article) \(pushType.rawValue) push (it answers 413 PayloadTooLarge; receivers refuse it as malformed)",
                fix: "shorten the alert, or seal with 'pushseal encrypt --truncate', which cuts the body to fit")
            return
        }
        add("size", .ok, "\(size) of the \(limit) bytes APNs takes for \(article) \(pushType.rawValue) push")

        // Will iOS run the extension at all?
        let content = NotificationContent(payload: payload)
        let hasText = content.hasAlertText || NotificationRequest.hasLocalizedText(aps)
        if !hasText {
            let silent = aps["content-available"] == .number("1")
            add(
                "extension", .problem,
                silent
                    ? "a background push (content-available only): iOS shows nothing and runs no Notification Service Extension"
                    : "no alert text: iOS runs a Notification Service Extension only for a notification it would show",
                fix: "give aps.alert a fallback title or body (never the secret): 'pushseal encrypt' writes \"New notification\"")
        } else if aps["mutable-content"] == nil {
            add(
                "extension", .problem, "no mutable-content: iOS shows the fallback as it came and never runs the extension",
                fix: #"add "mutable-content":1 to aps"#)
        } else if aps["mutable-content"] != .number("1") {
            add(
                "extension", .problem, "mutable-content is \(JSONWriter.string(aps["mutable-content"]!)), and only the number 1 makes iOS run the extension",
                fix: #"write "mutable-content":1 (a number, not "1" or true)"#)
        } else {
            add("extension", .ok, "iOS runs the Notification Service Extension (mutable-content 1, an alert to show)")
        }

        // The push type and priority the notification goes out with.
        if pushType == .background, hasText {
            add(
                "push type", .problem, "sent as a background push, an alert is not shown and no extension runs",
                fix: "send it with apns-push-type alert (pushseal send's default)")
        } else if pushType != .alert, pushType != .background {
            add("push type", .note, "a \(pushType.rawValue) push: only alert pushes run a Notification Service Extension")
        } else if pushType == .background, priority == .now {
            add("push type", .problem, "APNs refuses background pushes at priority 10", fix: "send it with apns-priority 5")
        } else {
            add("push type", .ok, "\(pushType.rawValue) push at priority \(priority.rawValue)")
        }

        // The envelope: explained even when the extension does not run, for the sender's sake.
        guard let sealedValue = payload[field] else {
            if let (other, _) = payload.first(where: { $0.key != "aps" && Self.looksSealed($0.value) }) {
                add(
                    "envelope", .problem, "no '\(field)' field, but '\(other)' holds an envelope: the receiver looks in '\(field)' and shows the fallback",
                    fix: "receive with --field \(other) (the kit: NotificationOpener(field: \"\(other)\")), or seal into '\(field)'")
            } else {
                add(
                    "envelope", .problem, "no '\(field)' field: nothing is sealed, the device shows the fallback as it came",
                    fix: "seal the alert with 'pushseal encrypt' (or name the field with --field)")
            }
            return
        }
        guard case .string(let text) = sealedValue else {
            add("envelope", .problem, "the '\(field)' field is \(sealedValue.kindName), not an envelope string", fix: "put the envelope text there: ps1.<kid>.<sealed>")
            return
        }
        let envelope: SealedEnvelope
        do {
            envelope = try SealedEnvelope(parsing: text)
        } catch let error as EnvelopeError {
            let (says, fix) = Self.explain(text, error)
            add("envelope", .problem, says, fix: fix)
            return
        } catch {
            add("envelope", .problem, "\(error)")
            return
        }
        add(
            "envelope", .ok,
            "\(envelope.version.rawValue), key \(envelope.kid), \(envelope.combined.count) sealed bytes"
                + (envelope.version == .ps1
                    ? " (AES-256-GCM under a shared key)"
                    : envelope.senderKid.map { " (HPKE to a device's key, vouched for by sender key \($0))" } ?? " (HPKE to a device's key)"))

        // The key, and whether it opens.
        guard let keyring else {
            add(
                "key", .note,
                "could not check the seal without --keys: it needs key \(envelope.kid) (\(envelope.version == .ps1 ? "a shared secret" : "the device's private key"))"
                    + (envelope.senderKid.map { " and allows sender \($0)" } ?? ""),
                fix: "give --keys DIR with that key to check that it opens and what it shows")
            return
        }
        explainKey(envelope, judgement, keyring: keyring, keysName: keysName)
    }

    /// The key and opening findings, for the status the judgement gave.
    private mutating func explainKey(_ envelope: SealedEnvelope, _ judgement: PayloadJudgement, keyring: Keyring, keysName: String) {
        let kid = envelope.kid
        let reason = judgement.reason ?? ""
        guard let entry = keyring.entry(kid) else {
            add(
                "key", .problem, "no key \(kid) in \(keysName): the device shows the placeholder (key-missing)",
                fix: envelope.version == .ps1
                    ? "on the sender: 'pushseal keys export \(kid)'; here: 'pushseal keys import' that line"
                    : "the device that made key \(kid) holds its private key: 'pushseal keys export --private \(kid)' there, 'pushseal keys import' here")
            return
        }
        switch (envelope.version, entry.kind) {
        case (_, .sender), (_, .allowedSender):
            add(
                "key", .problem, "key \(kid) in \(keysName) is a sender's key, but the envelope is sealed to it as a recipient: key-missing",
                fix: "seal to the device's recipient key (--to KID), with the sender key vouching (--sender-key)")
            return
        case (.ps1, .private), (.ps1, .public):
            add(
                "key", .problem, "key \(kid) in \(keysName) is a recipient key, but the envelope is ps1 (a shared secret): key-missing",
                fix: "import the sender's psk1 share for \(kid)")
            return
        case (.ps2, .secret), (.ps3, .secret):
            add(
                "key", .problem, "key \(kid) in \(keysName) is a shared secret, but the envelope is \(envelope.version.rawValue) (sealed to a device's key): key-missing",
                fix: "open it on the device whose key pair is \(kid)")
            return
        case (.ps2, .public), (.ps3, .public):
            add(
                "key", .problem, "\(keysName) holds only key \(kid)'s public half: it seals, the device's private key opens (key-missing)",
                fix: "open it on the device (its keyring holds the private key)")
            return
        default:
            break
        }
        switch judgement.status {
        case .senderUntrusted?:
            add("key", .ok, "key \(kid) is in \(keysName) (\(entry.state.rawValue))")
            if let sender = envelope.senderKid {
                add(
                    "sender", .problem, "sealed by sender \(sender), which \(keysName) does not allow: \(reason); the device shows the placeholder (sender-untrusted)",
                    fix: "if you trust that sender: 'pushseal keys export --sender' on its machine, 'pushseal keys import' that line here")
            } else {
                add(
                    "sender", .problem,
                    "sealed with no sender key (\(envelope.version.rawValue)), and \(keysName) opens only what a sender it allows has sealed: the device shows the placeholder (sender-untrusted)",
                    fix: "on the sender: 'pushseal keys add --sender', export it with 'pushseal keys export --sender', import that line here, and seal to a recipient key")
            }
        case .duplicate?:
            add("key", .ok, "key \(kid) is in \(keysName) (\(entry.state.rawValue))")
            add(
                "repeat", .problem, "\(reason): the device does not show it again (duplicate)",
                fix: "send a new message (a new id) rather than the same payload again")
        case .keyDisabled?:
            add("key", .problem, "key \(kid) is disabled in \(keysName)", fix: "'pushseal keys enable \(kid)' if it should still open")
        case .keyExpired?:
            add("key", .problem, "key \(kid) is past its rotation grace period in \(keysName)", fix: "seal with the new primary key; the old one no longer opens anything")
        case .keyMissing?:
            add("key", .problem, "key \(kid) cannot be used: \(reason)", fix: "import the key again")
        case .authenticationFailed?:
            add("key", .ok, "key \(kid) is in \(keysName)")
            add(
                "opens", .problem, "authentication failed: the payload was changed after sealing, or sealed with another key that is also called \(kid)",
                fix: "compare 'pushseal keys export \(kid)' on both sides; send the payload byte for byte (no reformatting of the envelope)")
        case .malformed?:
            add("key", .ok, "key \(kid) is in \(keysName)")
            add(
                "opens", .problem, "it opens, but what it holds is not a sealed alert: \(reason)",
                fix: "seal a JSON object of docs/FORMAT.md section 5 (a non-empty title or body, each member once, the right types)")
        case .expired?:
            add("key", .ok, "key \(kid) is in \(keysName) (\(entry.state.rawValue))")
            add(
                "exp", .problem, "\(reason.replacingFirst("the message ", with: "it ")): the device shows the placeholder (expired)",
                fix: "seal it again with a later --ttl, and check the sender's clock")
        case .decrypted?:
            add("key", .ok, "key \(kid) is in \(keysName) (\(entry.state.rawValue))")
            if let sender = envelope.senderKid {
                add("sender", .ok, "sealed by sender \(sender), which \(keysName) allows")
            }
            if let expires = judgement.alert?.expires {
                add("exp", .ok, "expires at \(Timestamp.format(expires))")
            } else {
                add("exp", .ok, "no expiry")
            }
            let title = judgement.alert?.fields.title ?? ""
            let body = judgement.alert?.fields.body ?? ""
            add("opens", .ok, "the device shows \(JSONWriter.string(.string(title))) / \(JSONWriter.string(.string(body)))")
        default:
            break
        }
    }

    /// A string value that reads as an envelope of some version: `psN.<kid>.…`.
    private static func looksSealed(_ value: JSONValue) -> Bool {
        guard case .string(let text) = value else { return false }
        return text.utf8.count > 8 && text.hasPrefix("ps") && text.split(separator: ".", maxSplits: 2).count == 3
    }

    /// The precise fault in an envelope that does not parse, and its fix: most reports of
    /// "decryption failed" between two implementations come from the encoding.
    static func explain(_ text: String, _ error: EnvelopeError) -> (String, String?) {
        if error.code == .unsupported {
            return (
                "\(error.reason): the device shows the placeholder (unsupported)",
                "update the receiver (app or pushseal), or seal with a version it reads (ps1, ps2)"
            )
        }
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return ("the envelope is not <version>.<kid>.<sealed>", "send the whole envelope text as pushseal wrote it")
        }
        let sealed = parts[2]
        if !KeyIDRule.isValid(parts[1]) {
            return ("the key id '\(parts[1].prefix(70))' is not 1 to 64 of A-Z a-z 0-9 _ -", "use the kid the key was made with")
        }
        if let index = sealed.firstIndex(where: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) {
            let position = sealed.distance(from: sealed.startIndex, to: index)
            let kind = sealed[index] == " " ? "a space" : sealed[index] == "\t" ? "a tab" : "a line break"
            return (
                "the sealed part has \(kind) at character \(position + 1) (base64 wrapped at 76 columns, or a template's white space)",
                "remove every space and line break (Python: base64.urlsafe_b64encode(…) has none; avoid base64.encodebytes)"
            )
        }
        if sealed.hasSuffix("=") {
            return (
                "the sealed part ends with '=' padding, and base64url here has none",
                #"strip the '=' characters (Python: .rstrip(b"="); JavaScript: Buffer.toString("base64url"))"#
            )
        }
        if sealed.contains("+") || sealed.contains("/") {
            return (
                "the sealed part uses the standard base64 alphabet ('+' or '/'), not base64url",
                "encode with '-' and '_' in place of '+' and '/' (base64url, RFC 4648 §5)"
            )
        }
        if let odd = sealed.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_")) }) {
            return ("the sealed part holds '\(odd)', which is not base64url", "send the envelope as pushseal wrote it")
        }
        if sealed.count % 4 == 1 {
            return ("the sealed part ends with a lone character: it was cut off", "send the whole envelope; check for a length limit on the way")
        }
        if error.reason.contains("unused bits") {
            return (
                "the sealed part's last character has unused bits set: not the canonical encoding, so it was altered",
                "send the envelope as pushseal wrote it"
            )
        }
        if error.reason.contains("at least") {
            return (
                "\(error.reason.replacingFirst("malformed envelope: ", with: "")): it was cut off on the way",
                "send the whole envelope; check for a length limit on the way"
            )
        }
        return (error.reason, nil)
    }
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        hasPrefix(target) ? replacement + dropFirst(target.count) : self
    }
}
