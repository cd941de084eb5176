// The ps3 vectors (docs/vectors/ps3.json): ps2's suite in HPKE's auth mode, with a sender
// key the receiver allows and one it does not, and the cases only a receiver that knows its
// senders and remembers what it showed can judge.

import EnvelopeFormat
import PushSeal
import PushSealJSON
@_spi(Testing) import SealCrypto

let senderKid = "5e11de01"
let senderScalar = hex("3333333333333333333333333333333333333333333333333333333333333333")
/// A sender the receiver does not allow.
let strangerSenderKid = "5e11de02"
let strangerSenderScalar = hex("4444444444444444444444444444444444444444444444444444444444444444")
/// The ephemeral keys of the ps3 cases: one each, none shared with ps2's.
nonisolated(unsafe) var authenticatedEphemeral: UInt8 = 0x50
func nextEphemeral() throws -> (scalar: [UInt8], key: P256PrivateKey) {
    authenticatedEphemeral += 1
    let scalar = [UInt8](repeating: authenticatedEphemeral, count: 32)
    return (scalar, try P256PrivateKey(scalar: scalar))
}

/// The sealing key of a ps3 message to the recipient, vouched for by `sender` (its kid and scalar).
func authenticatedKey(sender kid: String, scalar: [UInt8], recipient: String = recipientKid) throws -> SealingKey {
    let point = try P256PrivateKey(scalar: recipientScalar).publicKey
    return .authenticated(kid: recipient, publicKey: point, senderKid: kid, sender: try P256PrivateKey(scalar: scalar))
}

/// An envelope of `plaintext` as is, sealed with `key` under the header `header` names (a
/// lie, for the cases that name another sender than the one that sealed).
func authenticatedEnvelope(_ plaintext: [UInt8], key: SealingKey) throws -> String {
    var output: [UInt8] = []
    try EnvelopeSealer(key: key).append(sealing: plaintext, fixed: .init(ephemeral: try nextEphemeral().key), to: &output)
    return String(decoding: output, as: UTF8.self)
}

func authenticatedFile() throws -> String {
    let recipient = try P256PrivateKey(scalar: recipientScalar)
    let sender = try P256PrivateKey(scalar: senderScalar)
    let stranger = try P256PrivateKey(scalar: strangerSenderScalar)
    let keys: [(String, JSONValue)] = [
        (recipientKid, try recipientKeyJSON(recipientKid, recipientScalar)),
        (
            senderKid,
            .object(
                JSONObject([
                    ("sender_private", .string(base64url(senderScalar))),
                    ("public", .string(base64url(sender.publicKey.x963Representation))),
                    ("share", .string(SenderShare(kid: senderKid, publicKey: sender.publicKey).text))
                ]))
        ),
        (
            strangerSenderKid,
            .object(
                JSONObject([
                    ("sender_private", .string(base64url(strangerSenderScalar))),
                    ("public", .string(base64url(stranger.publicKey.x963Representation))),
                    ("share", .string(SenderShare(kid: strangerSenderKid, publicKey: stranger.publicKey).text))
                ]))
        )
    ]
    // The receiver every case is judged by: the device's private key, and one allowed sender.
    let receiver: [JSONValue] = [
        .string("prk1.\(recipientKid).\(base64url(recipientScalar))"),
        .string(SenderShare(kid: senderKid, publicKey: sender.publicKey).text)
    ]

    let cases: [(name: String, note: String, alert: SealedAlert)] = [
        ("minimal", "a title and a body, padded to 32 bytes", minimal),
        ("every field", "every sealed member, data included", everything),
        ("unicode and escapes", "non-ASCII text, quotes, a backslash, control characters and a slash (never escaped)", unicode)
    ]
    let ring = Keyring(keys: [
        try publicEntry(recipientKid, recipientScalar),
        KeyEntry(id: senderKid, kind: .sender, privateKey: sender, publicKey: nil, state: .primary, created: sent)
    ])
    let header = envelopeHeader(.ps3, kid: recipientKid, sender: senderKid)
    var positiveCases: [JSONValue] = []
    var base: [UInt8] = []
    for entry in cases {
        let sealer = try PayloadSealer(keyring: ring, to: recipientKid, field: "enc", pad: 32, now: sent)
        let (scalar, ephemeral) = try nextEphemeral()
        let bytes = try sealer.payload(for: entry.alert, fixed: .init(ephemeral: ephemeral))
        if base.isEmpty { base = bytes }
        guard case .object(let object) = try JSONParser.parse(bytes), case .string(let envelope)? = object["enc"] else {
            fatalError("the sealer made no envelope")
        }
        positiveCases.append(
            .object(
                JSONObject([
                    ("name", .string(entry.name)), ("note", .string(entry.note)), ("kid", .string(recipientKid)), ("sender", .string(senderKid)),
                    ("field", .string("enc")), ("pad", .number("32")), ("alert", .object(entry.alert.json)),
                    ("plaintext", .string(String(decoding: entry.alert.plaintext(paddedTo: 32), as: UTF8.self))),
                    ("header", .string(header)), ("ephemeral_private", .string(base64url(scalar))),
                    ("enc", .string(base64url(ephemeral.publicKey.x963Representation))),
                    (
                        "fallback",
                        .object(JSONObject([("title", .string(FallbackAlert.standard.title)), ("body", .string(FallbackAlert.standard.body))]))
                    ),
                    ("envelope", .string(envelope)), ("payload", .string(String(decoding: bytes, as: UTF8.self))),
                    ("status", .string("decrypted"))
                ])))
    }

    func rewritten(_ change: (String) -> String) throws -> String { try replacingEnvelope(base, field: "enc", change) }
    func flip(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var changed = bytes
        changed[index] ^= 0x01
        return changed
    }
    let plaintext = minimal.plaintext(paddedTo: 32)
    let allowedKey = try authenticatedKey(sender: senderKid, scalar: senderScalar)
    let strangerKey = try authenticatedKey(sender: strangerSenderKid, scalar: strangerSenderScalar)
    // Sealed by the stranger's key, under a header that names the allowed sender.
    let impostor = try authenticatedEnvelope(plaintext, key: strangerKey)
    let impostorBox = box(of: impostor)
    let negatives: [Negative] = [
        Negative(
            name: "tampered tag", payload: try rewritten { envelope(header, flip(box(of: $0), at: box(of: $0).count - 1)) },
            status: "auth-failed", why: "the last byte of the tag is changed"),
        Negative(
            name: "sealed by another sender", payload: payloadText(envelope(header, impostorBox)),
            status: "auth-failed", why: "sealed with 5e11de02's key under a header naming 5e11de01: the allowed sender's key does not open it"),
        Negative(
            name: "a sender this receiver does not allow", payload: payloadText(try authenticatedEnvelope(plaintext, key: strangerKey)),
            status: "sender-untrusted", why: "5e11de02 sealed it, truly, but the receiver allows 5e11de01 only"),
        Negative(
            name: "a sender no key has", payload: try rewritten { envelope(envelopeHeader(.ps3, kid: recipientKid, sender: "5e11de99"), box(of: $0)) },
            status: "sender-untrusted", why: "the receiver holds no sender key 5e11de99: nothing to open it with"),
        Negative(
            name: "the recipient's own key named as the sender", payload: try rewritten { envelope(envelopeHeader(.ps3, kid: recipientKid, sender: recipientKid), box(of: $0)) },
            status: "sender-untrusted", why: "c0ffee01 is a recipient key, not a sender's"),
        Negative(
            name: "unauthenticated where a sender is required", payload: payloadText(try authenticatedEnvelope(plaintext, key: .recipient(kid: recipientKid, publicKey: recipient.publicKey))),
            status: "sender-untrusted", why: "a ps2 envelope names no sender, and this receiver allows a sender: anyone with the public share could have sealed it"),
        Negative(
            name: "relabelled as ps2", payload: try rewritten { envelope(envelopeHeader(.ps2, kid: recipientKid), box(of: $0)) },
            status: "sender-untrusted", why: "as ps2 it names no sender, so this receiver refuses it before opening (and it would not open: the header is the info)"),
        Negative(
            name: "no id", payload: payloadText(try authenticatedEnvelope(Array(#"{"title":"T","sent":1765000000}"#.utf8), key: allowedKey)),
            status: "malformed", why: "a ps3 alert must carry an id"),
        Negative(
            name: "no sent", payload: payloadText(try authenticatedEnvelope(Array(#"{"title":"T","id":"vector-no-sent"}"#.utf8), key: allowedKey)),
            status: "malformed", why: "a ps3 alert must carry its sent time"),
        Negative(
            name: "no sender part", payload: try rewritten { envelope("ps3.\(recipientKid)", box(of: $0)) },
            status: "malformed", why: "ps3 is kid, sender kid and sealed part: the sealed part alone follows the kid here"),
        Negative(
            name: "a sender kid with a plus", payload: try rewritten { "ps3.\(recipientKid).5e11+e01." + $0.split(separator: ".").last! },
            status: "malformed", why: "the sender's kid keeps the kid rule"),
        Negative(
            name: "exp passed",
            payload: payloadText(try authenticatedEnvelope(Array(#"{"title":"Too late","body":"x","id":"vector-expired","sent":999999000,"exp":1000000000}"#.utf8), key: allowedKey)),
            status: "expired", why: "exp (2001-09-09) is before the receiver's clock")
    ]
    // The same message arriving again: the second arrival is a duplicate, however it came.
    let sameMessage = try authenticatedEnvelope(plaintext, key: allowedKey)
    let repeats: [(name: String, why: String, payloads: [String], statuses: [String])] = [
        (
            "the same payload twice", "a replay: shown once, then a duplicate", [payloadText(sameMessage), payloadText(sameMessage)],
            ["decrypted", "duplicate"]
        ),
        (
            "the same message under another fallback", "the message is its keys and its sealed id, not the payload around it",
            [
                payloadText(sameMessage),
                payloadText(sameMessage, aps: #""aps":{"alert":{"title":"Another fallback"},"mutable-content":1}"#)
            ], ["decrypted", "duplicate"]
        ),
        (
            "two messages", "two ids: both are shown",
            [payloadText(sameMessage), payloadText(try authenticatedEnvelope(everything.plaintext(paddedTo: 32), key: allowedKey))],
            ["decrypted", "decrypted"]
        ),
        (
            "a refused message does not count", "only what was opened is remembered: the first arrival was not sealed by its sender",
            [payloadText(envelope(header, impostorBox)), payloadText(sameMessage)], ["auth-failed", "decrypted"]
        )
    ]
    let document = JSONValue.object(
        JSONObject([
            ("format", .string("pushseal test vectors/1")),
            ("version", .string("ps3")),
            (
                "about",
                .string(
                    "ps3: HPKE auth mode (the sender's static key), DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM; info = the header ps3.<kid>.<sender kid>, empty AAD. See docs/FORMAT.md."
                )
            ),
            ("generated_by", .string("Scripts/vectors.sh (pushseal-vectors ps3)")),
            ("binary", .string("keys and points in base64url without padding")),
            ("valid_until", .number(String(farExpiry))),
            ("keys", .object(JSONObject(keys))),
            ("receiver", .array(receiver)),
            ("positive", .array(positiveCases)),
            (
                "negative",
                .array(
                    negatives.map { negative in
                        .object(
                            JSONObject([
                                ("name", .string(negative.name)), ("why", .string(negative.why)), ("payload", .string(negative.payload)),
                                ("status", .string(negative.status))
                            ]))
                    })
            ),
            (
                "repeat",
                .array(
                    repeats.map { entry in
                        .object(
                            JSONObject([
                                ("name", .string(entry.name)), ("why", .string(entry.why)), ("payloads", .array(entry.payloads.map(JSONValue.string))),
                                ("statuses", .array(entry.statuses.map(JSONValue.string)))
                            ]))
                    })
            )
        ]))
    var text = ""
    pretty(document, to: &text)
    return text + "\n"
}
