// pushseal-vectors: writes the published test vectors of the ps1 and ps2 formats
// (docs/vectors/ps1.json, ps2.json) from fixed keys, nonces and ephemeral keys, sealed by
// pushseal's own sealer. Run by Scripts/vectors.sh; a test checks the committed files are
// exactly what this prints, so the vectors and the code cannot drift apart.
//
//   pushseal-vectors ps1|ps2        the file's text on stdout

import PushSeal
import PushSealJSON
@_spi(Testing) import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Bytes from hex text; the inputs below are written as the vectors show them.
func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

func hexText(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

func base64url(_ bytes: [UInt8]) -> String { Base64.encode(bytes, alphabet: .url) }

/// A fixed moment for `sent`, and an `exp` far enough ahead that positive cases stay valid
/// until 2100; the expired case's `exp` is in 2001.
let sent: Int64 = 1_765_000_000
let farExpiry: Int64 = 4_102_444_800
let pastExpiry: Int64 = 1_000_000_000

// MARK: Keys

let secretKid = "3f9a0c1e"
let secretBytes = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
let otherKid = "5b6c7d8e"
let otherBytes = hex("202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f")
let importedKid = "laptop_1-A"
let recipientKid = "c0ffee01"
// P-256 scalars from RFC 9180's DHKEM(P-256) vector (A.3.1): any valid scalar would do.
let recipientScalar = hex("f3ce7fdae57e1a310d87f1ebbde6f328be0a99cdbcadf4d6589cf29de4b8ffd2")
let ephemeralScalar = hex("4995788ef4b9d6132b249ce59a77281493eb39af373d236a1fe415cb0c2d7beb")
let strangerScalar = hex("8c490e5b0c7dbe0c6d2192484d2b7a04423b3b4544f2481095a99dbf238fb350")

func secretEntry(_ kid: String, _ bytes: [UInt8]) throws -> KeyEntry {
    KeyEntry(id: kid, secret: try SymmetricKey(bytes: bytes), state: .primary, created: sent)
}

func publicEntry(_ kid: String, _ scalar: [UInt8]) throws -> KeyEntry {
    let key = try P256PrivateKey(scalar: scalar)
    return KeyEntry(id: kid, kind: .public, privateKey: nil, publicKey: key.publicKey, state: .primary, created: sent)
}

// MARK: Cases

/// One alert, as the vectors list its members (the sealed JSON keeps this order).
func alert(_ members: [(String, JSONValue)], id: String, expires: Int64? = farExpiry) throws -> SealedAlert {
    var fields = AlertFields()
    var data = JSONObject()
    for (name, value) in members {
        if name == "data", case .object(let object) = value {
            data = object
        } else if let field = AlertField(rawValue: name) {
            try fields.set(field, json: value)
        }
    }
    return SealedAlert(fields: fields, data: data, id: id, sent: sent, expires: expires)
}

struct Positive {
    let name: String
    let note: String
    let alert: SealedAlert
    let kid: String
    let field: String
    let pad: Int
    let fallback: FallbackAlert
    let nonce: [UInt8]
}

let minimal = try alert([("title", .string("Deploy finished")), ("body", .string("api-7 is live"))], id: "vector-minimal")
let everything = try alert(
    [
        ("title", .string("db-3 down")), ("subtitle", .string("eu-west-1")),
        ("body", .string("Replication lag 42 s; failover started")), ("badge", .number("3")), ("sound", .string("siren.caf")),
        ("thread-id", .string("db")), ("category", .string("incident")), ("target-content-id", .string("incident-991")),
        ("interruption-level", .string("time-sensitive")), ("relevance-score", .number("0.75")),
        ("data", .object(JSONObject([("incident", .number("991")), ("url", .string("https://status.example.com/i/991"))])))
    ], id: "vector-every-field")
let unicode = try alert(
    [
        ("title", .string("Ünïcödé ✓ \"quoted\"")), ("body", .string("line one\nline two \\ tab\there — 🚀 / done"))
    ], id: "vector-unicode")

func positives(_ version: String) throws -> [Positive] {
    let kid = version == "ps1" ? secretKid : recipientKid
    var cases = [
        Positive(
            name: "minimal", note: "a title and a body, padded to 32 bytes", alert: minimal, kid: kid, field: "enc",
            pad: 32, fallback: .standard, nonce: hex("000000000000000000000001")),
        Positive(
            name: "every field", note: "every sealed member, data included", alert: everything, kid: kid, field: "enc",
            pad: 32, fallback: .standard, nonce: hex("000000000000000000000002")),
        Positive(
            name: "unicode and escapes", note: "non-ASCII text, quotes, a backslash, control characters and a slash (never escaped)",
            alert: unicode, kid: kid, field: "enc", pad: 32, fallback: .standard, nonce: hex("000000000000000000000003"))
    ]
    if version == "ps1" {
        cases += [
            Positive(
                name: "no padding", note: "--pad 1: the plaintext is the JSON alone", alert: minimal, kid: kid, field: "enc",
                pad: 1, fallback: .standard, nonce: hex("000000000000000000000004")),
            Positive(
                name: "imported kid and another field", note: "a kid of the imported kind ([A-Za-z0-9_-]{1,64}), the envelope in field 'sealed', a fallback of the sender's own",
                alert: minimal, kid: importedKid, field: "sealed", pad: 64,
                fallback: FallbackAlert(title: "CI", body: "A build finished"), nonce: hex("cafebabefacedbaddecaf888"))
        ]
    }
    return cases
}

/// The payload `pushseal encrypt` makes for `positive`, with its randomness fixed.
func payload(_ version: String, _ positive: Positive, ephemeral: P256PrivateKey?) throws -> [UInt8] {
    let ring: Keyring
    if version == "ps1" {
        // Every ps1 case is sealed under the same secret; the imported kid names it too.
        ring = Keyring(keys: [try secretEntry(positive.kid, secretBytes)])
    } else {
        ring = Keyring(keys: [try publicEntry(positive.kid, recipientScalar)])
    }
    let sealer = try PayloadSealer(
        keyring: ring, to: version == "ps2" ? positive.kid : nil, field: positive.field,
        pad: positive.pad, fallback: positive.fallback, now: sent)
    return try sealer.payload(for: positive.alert, fixed: .init(nonce: positive.nonce, ephemeral: ephemeral))
}

// MARK: Negative cases

/// Rewrites the envelope inside a payload's field.
func replacingEnvelope(_ payload: [UInt8], field: String, _ change: (String) -> String) throws -> String {
    guard case .object(var object) = try JSONParser.parse(payload), case .string(let envelope)? = object[field] else {
        fatalError("a vector payload without its envelope")
    }
    object[field] = .string(change(envelope))
    return JSONWriter.string(.object(object))
}

func box(of envelope: String) -> [UInt8] {
    try! Base64.decode(String(envelope.split(separator: ".").last!), alphabet: .url)
}

func envelope(_ header: String, _ box: [UInt8]) -> String { header + "." + base64url(box) }

struct Negative {
    let name: String
    let payload: String
    let status: String
    let why: String
}

/// A plaintext sealed as is (not through `SealedAlert`), for alerts no sender would write.
func sealedRaw(_ plaintext: String, nonce: [UInt8]) throws -> String {
    let header = "ps1.\(secretKid)"
    let sealed = try AESGCM.seal(
        Array(plaintext.utf8), using: try SymmetricKey(bytes: secretBytes), nonce: nonce,
        authenticating: Array(header.utf8))
    return #"{"aps":{"alert":{"title":"New notification","body":"Open the app to read it"},"mutable-content":1},"enc":""# + envelope(header, sealed.combined) + #""}"#
}

func negatives(_ version: String, base: [UInt8]) throws -> [Negative] {
    func flip(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var changed = bytes
        changed[index] ^= 0x01
        return changed
    }
    let header = version == "ps1" ? "ps1.\(secretKid)" : "ps2.\(recipientKid)"
    func rewritten(_ change: (String) -> String) throws -> String { try replacingEnvelope(base, field: "enc", change) }
    var cases = [
        Negative(
            name: "tampered tag", payload: try rewritten { envelope(header, flip(box(of: $0), at: box(of: $0).count - 1)) },
            status: "auth-failed", why: "the last byte of the tag is changed"),
        Negative(
            name: "tampered ciphertext", payload: try rewritten { envelope(header, flip(box(of: $0), at: version == "ps1" ? 12 : 65)) },
            status: "auth-failed", why: "the first ciphertext byte is changed"),
        Negative(
            name: "unknown kid", payload: try rewritten { envelope("\(version).0badc0de", box(of: $0)) },
            status: "key-missing", why: "no key has the envelope's kid"),
        Negative(
            name: "kid of another key", payload: try rewritten { envelope("\(version).\(version == "ps1" ? otherKid : "c0ffee02")", box(of: $0)) },
            status: "auth-failed", why: "the header is authenticated: naming another key that exists fails the tag"),
        Negative(
            name: "truncated box", payload: try rewritten { envelope(header, Array(box(of: $0).prefix(version == "ps1" ? 27 : 80))) },
            status: "malformed", why: version == "ps1" ? "27 bytes, fewer than a 12-byte nonce and a 16-byte tag" : "80 bytes, fewer than a 65-byte key and a 16-byte tag"),
        Negative(
            name: "padding in the base64", payload: try rewritten { $0 + "==" },
            status: "malformed", why: "base64url without padding: '=' is refused"),
        Negative(
            name: "standard base64 alphabet", payload: try rewritten { String($0.map { $0 == "_" ? "/" : $0 == "-" ? "+" : $0 }) + "+/" },
            status: "malformed", why: "'+' and '/' are not base64url"),
        Negative(
            name: "a space inside", payload: try rewritten { header + ". " + String($0.dropFirst(header.count + 1)) },
            status: "malformed", why: "no white space anywhere in the envelope"),
        Negative(
            name: "a later version", payload: try rewritten { "ps3" + $0.dropFirst(3) },
            status: "unsupported", why: "ps3 is a version this reader does not know: say so, do not guess")
    ]
    if version == "ps1" {
        cases += [
            Negative(
                name: "exp passed", payload: try sealedRaw(#"{"title":"Too late","body":"x","id":"vector-expired","sent":999999000,"exp":1000000000}"#, nonce: hex("000000000000000000000010")),
                status: "expired", why: "exp (2001-09-09) is before the receiver's clock"),
            Negative(
                name: "duplicate member", payload: try sealedRaw(#"{"title":"One","title":"Two","body":"x","id":"vector-duplicate","sent":1765000000}"#, nonce: hex("000000000000000000000011")),
                status: "malformed", why: "two parsers could each show a different title: a name twice is refused"),
            Negative(
                name: "wrong member type", payload: try sealedRaw(#"{"title":"Badge","body":"x","badge":"3","id":"vector-type","sent":1765000000}"#, nonce: hex("000000000000000000000012")),
                status: "malformed", why: "badge is a whole number, not a string"),
            Negative(
                name: "not an object", payload: try sealedRaw(#"["title","body"]"#, nonce: hex("000000000000000000000013")),
                status: "malformed", why: "the sealed alert is a JSON object")
        ]
    } else {
        cases += [
            Negative(
                name: "enc not on the curve",
                payload: try rewritten {
                    var sealed = box(of: $0)
                    sealed[64] ^= 0x01
                    return envelope(header, sealed)
                }, status: "auth-failed", why: "the 65-byte enc is checked to be a point on P-256 before use")
        ]
    }
    return cases
}

// MARK: Output

/// Indented JSON: one member per line, so a change in the vectors reads as a diff.
func pretty(_ value: JSONValue, indent: String = "", to output: inout String) {
    switch value {
    case .object(let object):
        guard !object.isEmpty else {
            output += "{}"
            return
        }
        output += "{\n"
        for (index, (name, member)) in object.enumerated() {
            output += indent + "  " + JSONWriter.string(.string(name)) + ": "
            pretty(member, indent: indent + "  ", to: &output)
            output += index == object.count - 1 ? "\n" : ",\n"
        }
        output += indent + "}"
    case .array(let items):
        guard !items.isEmpty else {
            output += "[]"
            return
        }
        output += "[\n"
        for (index, item) in items.enumerated() {
            output += indent + "  "
            pretty(item, indent: indent + "  ", to: &output)
            output += index == items.count - 1 ? "\n" : ",\n"
        }
        output += indent + "]"
    default:
        output += JSONWriter.string(value)
    }
}

func file(_ version: String) throws -> String {
    let ephemeral = version == "ps2" ? try P256PrivateKey(scalar: ephemeralScalar) : nil
    let recipient = try P256PrivateKey(scalar: recipientScalar)
    var keys: [(String, JSONValue)]
    if version == "ps1" {
        keys = [
            (secretKid, .object(JSONObject([("secret", .string(base64url(secretBytes))), ("share", .string("psk1.\(secretKid).\(base64url(secretBytes))"))]))),
            (importedKid, .object(JSONObject([("secret", .string(base64url(secretBytes))), ("share", .string("psk1.\(importedKid).\(base64url(secretBytes))"))]))),
            (otherKid, .object(JSONObject([("secret", .string(base64url(otherBytes))), ("share", .string("psk1.\(otherKid).\(base64url(otherBytes))"))])))
        ]
    } else {
        let stranger = try P256PrivateKey(scalar: strangerScalar)
        keys = [
            (
                recipientKid,
                .object(
                    JSONObject([
                        ("private", .string(base64url(recipientScalar))),
                        ("public", .string(base64url(recipient.publicKey.x963Representation))),
                        ("share", .string(PublicShare(kid: recipientKid, publicKey: recipient.publicKey).text))
                    ]))
            ),
            (
                "c0ffee02",
                .object(
                    JSONObject([
                        ("private", .string(base64url(strangerScalar))),
                        ("public", .string(base64url(stranger.publicKey.x963Representation))),
                        ("share", .string(PublicShare(kid: "c0ffee02", publicKey: stranger.publicKey).text))
                    ]))
            )
        ]
    }
    var positiveCases: [JSONValue] = []
    var base: [UInt8] = []
    for positive in try positives(version) {
        let bytes = try payload(version, positive, ephemeral: ephemeral)
        if base.isEmpty { base = bytes }
        guard case .object(let object) = try JSONParser.parse(bytes), case .string(let envelope)? = object[positive.field] else {
            fatalError("the sealer made no envelope")
        }
        var members: [(String, JSONValue)] = [
            ("name", .string(positive.name)), ("note", .string(positive.note)), ("kid", .string(positive.kid)),
            ("field", .string(positive.field)), ("pad", .number(String(positive.pad))),
            ("alert", .object(positive.alert.json)),
            ("plaintext", .string(String(decoding: positive.alert.plaintext(paddedTo: positive.pad), as: UTF8.self))),
            ("header", .string("\(version).\(positive.kid)"))
        ]
        if version == "ps1" {
            members.append(("nonce", .string(hexText(positive.nonce))))
        } else {
            members.append(("ephemeral_private", .string(base64url(ephemeralScalar))))
            members.append(("enc", .string(base64url(ephemeral!.publicKey.x963Representation))))
        }
        members += [
            ("fallback", .object(JSONObject([("title", .string(positive.fallback.title)), ("body", .string(positive.fallback.body))]))),
            ("envelope", .string(envelope)),
            ("payload", .string(String(decoding: bytes, as: UTF8.self))),
            ("status", .string("decrypted"))
        ]
        positiveCases.append(.object(JSONObject(members)))
    }
    let negativeCases: [JSONValue] = try negatives(version, base: base).map { negative in
        .object(
            JSONObject([
                ("name", .string(negative.name)), ("why", .string(negative.why)),
                ("payload", .string(negative.payload)), ("status", .string(negative.status))
            ]))
    }
    let about =
        version == "ps1"
        ? "ps1: AES-256-GCM under a shared 32-byte key; AAD = the header. See docs/FORMAT.md."
        : "ps2: HPKE base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM; info = the header, empty AAD. See docs/FORMAT.md."
    let document = JSONValue.object(
        JSONObject([
            ("format", .string("pushseal test vectors/1")),
            ("version", .string(version)),
            ("about", .string(about)),
            ("generated_by", .string("Scripts/vectors.sh (pushseal-vectors \(version))")),
            ("binary", .string("keys, nonces and points in base64url without padding, except nonce in hex")),
            ("valid_until", .number(String(farExpiry))),
            ("keys", .object(JSONObject(keys))),
            ("positive", .array(positiveCases)),
            ("negative", .array(negativeCases))
        ]))
    var text = ""
    pretty(document, to: &text)
    return text + "\n"
}

let arguments = CommandLine.arguments.dropFirst()
guard let version = arguments.first, ["ps1", "ps2"].contains(version), arguments.count == 1 else {
    FileHandle.standardErrorWrite("usage: pushseal-vectors ps1|ps2\n")
    exit(64)
}
do {
    print(try file(version), terminator: "")
} catch {
    FileHandle.standardErrorWrite("pushseal-vectors: \(error)\n")
    exit(1)
}

enum FileHandle {
    static func standardErrorWrite(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
