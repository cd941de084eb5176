// pushseal-vectors: writes the published test vectors of the ps1, ps2 and ps3 formats
// (docs/vectors/ps1.json, ps2.json, ps3.json) from fixed keys, nonces and ephemeral keys,
// sealed by pushseal's own sealer. Run by Scripts/vectors.sh; a test checks the committed
// files are exactly what this prints, so the vectors and the code cannot drift apart.
//
//   pushseal-vectors ps1|ps2|ps3    the file's text on stdout

import EnvelopeFormat
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
/// Each positive ps2 case its own ephemeral key, as a real sender draws one per message: two
/// messages under one ephemeral key to one recipient share a keystream (ct1 ⊕ ct2 = pt1 ⊕ pt2).
let ephemeralScalars = [
    ephemeralScalar,
    hex("1111111111111111111111111111111111111111111111111111111111111111"),
    hex("2222222222222222222222222222222222222222222222222222222222222222")
]
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
    let header = envelopeHeader(.ps1, kid: secretKid)
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
    let header = version == "ps1" ? envelopeHeader(.ps1, kid: secretKid) : envelopeHeader(.ps2, kid: recipientKid)
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
            name: "a later version", payload: try rewritten { "ps9" + $0.dropFirst(3) },
            status: "unsupported", why: "ps9 is a version this reader does not know: say so, do not guess")
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

// MARK: Edge cases
/// A case a receiver judges, with the section of docs/FORMAT.md whose rule it checks: the
/// places where two careful implementations of the spec could part.
struct Edge {
    let name: String
    let spec: String
    let payload: String
    let status: String
    let why: String
}

/// The nonces of the edge cases: each sealing its own.
nonisolated(unsafe) var edgeNonce: UInt8 = 0x40
func nextNonce() -> [UInt8] {
    edgeNonce += 1
    return [UInt8](repeating: 0, count: 11) + [edgeNonce]
}

/// Bytes sealed as is under `kid`'s secret (ps1), as an envelope: for plaintexts no sender
/// would write.
func sealedEnvelope(_ plaintext: [UInt8], kid: String = secretKid, key: [UInt8] = secretBytes) throws -> String {
    let header = envelopeHeader(.ps1, kid: kid)
    let sealed = try AESGCM.seal(plaintext, using: try SymmetricKey(bytes: key), nonce: nextNonce(), authenticating: Array(header.utf8))
    return envelope(header, sealed.combined)
}

let fallbackAps = #""aps":{"alert":{"title":"New notification","body":"Open the app to read it"},"mutable-content":1}"#

/// A payload around an envelope, with members of the case's own after it.
func payloadText(_ envelopeText: String, aps: String = fallbackAps, extra: String = "") -> String {
    "{\(aps),\"enc\":\(JSONWriter.string(.string(envelopeText)))\(extra)}"
}

/// A sealed alert's text, with the members every case shares.
func alertText(_ members: String) -> String {
    "{" + members + (members.isEmpty ? "" : ",") + #""id":"edge","sent":1765000000,"exp":4102444800}"#
}

func edges(_ version: String, base: [UInt8]) throws -> [Edge] {
    guard case .object(let object) = try JSONParser.parse(base), case .string(let good)? = object["enc"] else { fatalError("no base envelope") }
    let header = version == "ps1" ? envelopeHeader(.ps1, kid: secretKid) : envelopeHeader(.ps2, kid: recipientKid)
    let sealedPart = String(good.dropFirst(header.count + 1))
    func withSealed(_ text: String) -> String { payloadText(header + "." + text) }
    var cases: [Edge] = []
    func add(_ name: String, _ spec: String, _ status: String, _ why: String, _ payload: String) {
        cases.append(Edge(name: name, spec: spec, payload: payload, status: status, why: why))
    }
    if version == "ps2" {
        add(
            "a ps1 envelope naming a recipient key", "§6 step 8", "key-missing", "the kid names a P-256 key pair; ps1 needs a shared secret of that kid: no key of this kid and kind",
            payloadText(try sealedEnvelope(Array(alertText(#""title":"T""#).utf8), kid: recipientKid)))
        var compressed = box(of: good)
        compressed[0] = 0x02
        add("enc in compressed form", "§4.3", "auth-failed", "enc is the 65-byte uncompressed point; 0x02 in front is not one", withSealed(base64url(compressed)))
        var zero = box(of: good)
        for index in 1..<65 { zero[index] = 0 }
        add("enc all zeros", "§4.3", "auth-failed", "(0, 0) is not a point on P-256", withSealed(base64url(zero)))
        add(
            "a version 2 envelope 81 bytes long", "§6 step 7", "auth-failed", "81 bytes is enough for enc and a tag: the length passes, the opening fails",
            withSealed(base64url(Array(box(of: good).prefix(65)) + [UInt8](repeating: 7, count: 16))))
        return cases
    }

    // §2.1 and §6 steps 1 to 3: the payload.
    add("payload not JSON", "§6 step 1", "malformed", "a payload is strict JSON", #"{"aps":"#)
    add("payload an array", "§6 step 1", "malformed", "a payload is a JSON object", "[" + payloadText(good) + "]")
    add("a byte order mark first", "§2.1", "malformed", "U+FEFF is not JSON white space", "\u{FEFF}" + payloadText(good))
    add("a member named twice", "§2.1", "malformed", "two parsers could each take a different one", payloadText(good, extra: #","enc":"# + JSONWriter.string(.string(good))))
    add(
        "a member named twice after unescaping", "§2.1", "malformed", "\\u0065nc is enc: names are compared after unescaping",
        payloadText(good, extra: #","\u0065nc":"x""#))
    add(
        "a member named twice inside aps", "§2.1", "malformed", "the rule holds for every object at any depth",
        payloadText(good, aps: #""aps":{"alert":{"title":"New notification","body":"Open the app to read it"},"mutable-content":1,"mutable-content":1}"#))
    add(
        "names equal only after normalization are two names", "§2.1", "decrypted", "names are compared as code points, never normalized: é and e + U+0301 differ",
        payloadText(good, extra: #","\u00e9":1,"e\u0301":2"#))
    add(
        "nesting 64 levels deep", "§2.1", "decrypted", "the payload object is level 1; 63 arrays inside it make 64, the most a receiver takes",
        payloadText(good, extra: #","deep":"# + String(repeating: "[", count: 63) + String(repeating: "]", count: 63)))
    add("nesting 65 levels deep", "§2.1", "malformed", "one level past 64", payloadText(good, extra: #","deep":"# + String(repeating: "[", count: 64) + String(repeating: "]", count: 64)))
    add("a lone high surrogate escape", "§2.1", "malformed", "\\ud800 without its low half is no character", payloadText(good, extra: #","x":"\ud800""#))
    add("a lone low surrogate escape", "§2.1", "malformed", "\\udc00 alone is no character", payloadText(good, extra: #","x":"\udc00""#))
    add("an escaped surrogate pair", "§2.1", "decrypted", "\\ud83d\\ude80 is one character, U+1F680", payloadText(good, extra: #","x":"\ud83d\ude80""#))
    add(
        "escaped slash in the envelope", "§2", "decrypted", "\\/ is legal JSON for /; the envelope has none, but the fallback may",
        payloadText(good, aps: #""aps":{"alert":{"title":"New\/notification","body":"Open the app to read it"},"mutable-content":1}"#))
    add("no aps", "§6 step 2", "malformed", "every APNs payload has an aps dictionary", "{\"enc\":\(JSONWriter.string(.string(good)))}")
    add("aps not an object", "§6 step 2", "malformed", "aps is a dictionary", payloadText(good, aps: #""aps":1"#))
    let plain = payloadText(good)
    let fill = 4096 - plain.utf8.count - #","pad":"""#.utf8.count
    add("a payload of exactly 4096 bytes", "§6 step 3", "decrypted", "the limit is inclusive", payloadText(good, extra: #","pad":""# + String(repeating: "x", count: fill) + "\""))
    add(
        "a payload of 4097 bytes", "§6 step 3", "malformed", "one byte over APNs' limit: no device would get it",
        payloadText(good, extra: #","pad":""# + String(repeating: "x", count: fill + 1) + "\""))
    add(
        "4096 bytes and a final newline", "§6 step 3", "decrypted", "white space after the payload (a file's last newline) is not counted",
        payloadText(good, extra: #","pad":""# + String(repeating: "x", count: fill) + "\"") + "\n")

    // §6 step 4: eligibility.
    add("no mutable-content", "§6 step 4", "passthrough", "iOS runs no extension", payloadText(good, aps: #""aps":{"alert":{"title":"New notification"}}"#))
    add("mutable-content 0", "§6 step 4", "passthrough", "only the number 1 counts", payloadText(good, aps: #""aps":{"alert":{"title":"New notification"},"mutable-content":0}"#))
    add(
        "mutable-content as a string", "§6 step 4", "passthrough", "\"1\" is a string, not the number 1", payloadText(good, aps: #""aps":{"alert":{"title":"New notification"},"mutable-content":"1"}"#)
    )
    add("mutable-content true", "§6 step 4", "passthrough", "true is not the number 1", payloadText(good, aps: #""aps":{"alert":{"title":"New notification"},"mutable-content":true}"#))
    add("mutable-content 1.0", "§6 step 4", "passthrough", "the number must be written 1", payloadText(good, aps: #""aps":{"alert":{"title":"New notification"},"mutable-content":1.0}"#))
    add("no alert", "§6 step 4", "passthrough", "nothing to show, so no extension", payloadText(good, aps: #""aps":{"mutable-content":1}"#))
    add("an empty alert title and body", "§6 step 4", "passthrough", "empty text is no text", payloadText(good, aps: #""aps":{"alert":{"title":"","body":""},"mutable-content":1}"#))
    add("a background push", "§6 step 4", "passthrough", "content-available alone shows nothing", payloadText(good, aps: #""aps":{"content-available":1,"mutable-content":1}"#))
    add("the alert as a string", "§6 step 4", "decrypted", "a string alert is its body", payloadText(good, aps: #""aps":{"alert":"New notification","mutable-content":1}"#))
    add("a fallback with only a subtitle", "§6 step 4", "decrypted", "a subtitle is text iOS shows", payloadText(good, aps: #""aps":{"alert":{"subtitle":"New"},"mutable-content":1}"#))
    add("a fallback with only a loc-key", "§6 step 4", "decrypted", "localized text is text iOS shows", payloadText(good, aps: #""aps":{"alert":{"loc-key":"NEW_MESSAGE"},"mutable-content":1}"#))

    // §6 step 5: the field.
    add("no field", "§6 step 5", "passthrough", "nothing sealed: shown as it came", "{\(fallbackAps)}")
    add("the field null", "§6 step 5", "malformed", "present but not a string", "{\(fallbackAps),\"enc\":null}")
    add("the field a number", "§6 step 5", "malformed", "present but not a string", "{\(fallbackAps),\"enc\":1}")
    add("the field an object", "§6 step 5", "malformed", "present but not a string", "{\(fallbackAps),\"enc\":{\"v\":\"ps1\"}}")

    // §3 and §6 step 6: the version and the kid.
    add("a known version and nothing else", "§3", "malformed", "ps1 is known, and ps1 needs kid and sealed parts", payloadText("ps1"))
    add("a later version alone", "§3", "unsupported", "ps9 is a version name whatever follows it", payloadText("ps9"))
    add("a later version of another shape", "§3", "unsupported", "a later version may shape the rest as it likes", payloadText("ps9.anything"))
    add("a two-digit version", "§3", "unsupported", "ps10 is a version name", payloadText("ps10.k." + sealedPart))
    add("version ps0", "§3", "malformed", "a version number has no leading zero and is not 0", payloadText("ps0.k." + sealedPart))
    add("version ps01", "§3", "malformed", "a version number has no leading zero", payloadText("ps01.k." + sealedPart))
    add("version in capitals", "§3", "malformed", "PS1 is not a version name", payloadText("PS1.\(secretKid)." + sealedPart))
    add("a name that is not a version", "§3", "malformed", "only ps<number> names a version", payloadText("xyz.\(secretKid)." + sealedPart))
    add("an empty kid", "§3", "malformed", "a kid has 1 to 64 characters", payloadText("ps1.." + sealedPart))
    add("a kid of 65 characters", "§3", "malformed", "a kid has at most 64", payloadText("ps1." + String(repeating: "k", count: 65) + "." + sealedPart))
    add("a kid of 64 characters no key has", "§6 step 8", "key-missing", "64 characters is a valid kid", payloadText("ps1." + String(repeating: "k", count: 64) + "." + sealedPart))
    add("a kid with a plus", "§3", "malformed", "+ is not in the kid's alphabet", payloadText("ps1.3f9a+c1e." + sealedPart))

    // §3 and §6 step 7: the sealed part.
    add("an empty sealed part", "§6 step 7", "malformed", "0 bytes, fewer than 28", withSealed(""))
    add("a dot in the sealed part", "§6 step 7", "malformed", ". is not base64url", withSealed(sealedPart + ".AAAA"))
    let lone = sealedPart.utf8.count % 4 == 0 ? sealedPart + "A" : String(sealedPart.dropLast((sealedPart.utf8.count % 4) - 1))
    add("a lone last character", "§3", "malformed", "a length of 1 modulo 4 is no byte string", withSealed(lone))
    // A box whose length leaves unused bits in the last character (not a multiple of 3).
    var short = box(of: good)
    while short.count % 3 == 0 { short.removeLast() }
    var bits = Array(base64url(short).utf8)
    let last = bits.count - 1
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    bits[last] = alphabet[alphabet.firstIndex(of: bits[last])! ^ 1]
    add(
        "unused bits set in the last character", "§3", "malformed", "one text per byte string: the leftover bits are 0",
        withSealed(String(decoding: bits, as: UTF8.self)))
    add("a tab inside", "§3", "malformed", "no white space anywhere", withSealed(String(sealedPart.prefix(10)) + "\t" + String(sealedPart.dropFirst(10))))
    add("a line break inside", "§3", "malformed", "base64 wrapped at 76 columns is refused", withSealed(String(sealedPart.prefix(76)) + "\n" + String(sealedPart.dropFirst(76))))
    add(
        "28 bytes exactly", "§4.2", "auth-failed", "nonce and tag around an empty ciphertext: long enough, and the tag fails",
        withSealed(base64url([UInt8](repeating: 0, count: 28))))

    // §5 and §6 step 10: the sealed alert.
    func sealed(_ name: String, _ status: String, _ why: String, _ plaintext: String) throws {
        add(name, "§5", status, why, payloadText(try sealedEnvelope(Array(plaintext.utf8))))
    }
    try sealed("only a subtitle", "malformed", "title or body must be a non-empty string", alertText(#""subtitle":"Only this""#))
    try sealed("title and body empty", "malformed", "empty text is no text to show", alertText(#""title":"","body":"""#))
    try sealed("title and body null", "malformed", "null is absent", alertText(#""title":null,"body":null"#))
    try sealed("an empty title and a body", "decrypted", "one of the two is enough", alertText(#""title":"","body":"Body""#))
    try sealed("a title alone", "decrypted", "one of the two is enough", alertText(#""title":"Title""#))
    try sealed("a body alone", "decrypted", "one of the two is enough", alertText(#""body":"Body""#))
    try sealed("a title that is a number", "malformed", "title is a string", alertText(#""title":1,"body":"Body""#))
    try sealed("interruption-level in Swift's spelling", "malformed", "timeSensitive is a sender's alias, never the wire's", alertText(#""title":"T","interruption-level":"timeSensitive""#))
    try sealed("an unknown interruption-level", "malformed", "one of four values", alertText(#""title":"T","interruption-level":"urgent""#))
    try sealed("interruption-level null", "decrypted", "null is absent", alertText(#""title":"T","interruption-level":null"#))
    try sealed("data naming aps", "malformed", "data must not name aps", alertText(#""title":"T","data":{"aps":{"alert":"x"}}"#))
    try sealed("data naming the field", "malformed", "data must not name the field", alertText(#""title":"T","data":{"enc":"x"}"#))
    try sealed("data an array", "malformed", "data is an object", alertText(#""title":"T","data":[1]"#))
    try sealed("a duplicate inside data", "malformed", "no name twice in any object", alertText(#""title":"T","data":{"a":1,"a":2}"#))
    try sealed("data with nested values", "decrypted", "data's members may be any JSON", alertText(#""title":"T","data":{"a":{"b":[1,2,{"c":null}]}}"#))
    try sealed("an empty id", "malformed", "an id is 1 to 64 bytes", #"{"title":"T","id":"","sent":1765000000}"#)
    try sealed("an id of 65 bytes", "malformed", "an id is 1 to 64 bytes", #"{"title":"T","id":""# + String(repeating: "i", count: 65) + #"","sent":1765000000}"#)
    try sealed("an id of 64 bytes in 16 characters", "decrypted", "the limit counts UTF-8 bytes", #"{"title":"T","id":""# + String(repeating: "🚀", count: 16) + #"","sent":1765000000}"#)
    try sealed("an id that is a number", "malformed", "an id is a string", #"{"title":"T","id":7,"sent":1765000000}"#)
    try sealed("no id and no sent", "decrypted", "both are optional", #"{"title":"T"}"#)
    try sealed("sent written 3.0", "malformed", "an integer has no fraction", #"{"title":"T","sent":3.0}"#)
    try sealed("sent written 1e3", "malformed", "an integer has no exponent", #"{"title":"T","sent":1e3}"#)
    try sealed("sent 2^63", "malformed", "an integer lies in -2^63 to 2^63-1", #"{"title":"T","sent":9223372036854775808}"#)
    try sealed("sent 2^63-1", "decrypted", "the largest integer", #"{"title":"T","sent":9223372036854775807}"#)
    try sealed("sent -0", "decrypted", "-0 is the integer 0", #"{"title":"T","sent":-0}"#)
    try sealed("exp -2^63", "expired", "the smallest integer, long past", #"{"title":"T","exp":-9223372036854775808}"#)
    try sealed("badge -1", "malformed", "a badge is 0 or more", alertText(#""title":"T","badge":-1"#))
    try sealed("badge -0", "decrypted", "-0 is 0", alertText(#""title":"T","badge":-0"#))
    try sealed("badge 1.5", "malformed", "a badge is an integer", alertText(#""title":"T","badge":1.5"#))
    try sealed("relevance-score 1.5", "malformed", "a relevance score lies in 0 to 1", alertText(#""title":"T","relevance-score":1.5"#))
    try sealed("relevance-score 1e0", "decrypted", "any JSON number from 0 to 1", alertText(#""title":"T","relevance-score":1e0"#))
    try sealed("relevance-score as a string", "malformed", "a relevance score is a number", alertText(#""title":"T","relevance-score":"0.5""#))
    try sealed("unknown members of every kind", "decrypted", "members a receiver does not know are ignored", alertText(#""title":"T","later":[1,{"x":true}],"more":null"#))
    try sealed("an alias name only", "malformed", "message is the CLI's name for body, unknown in the sealed alert: no body", alertText(#""message":"Body""#))
    try sealed("padding with tabs and newlines", "decrypted", "trailing JSON white space of any kind is ignored", alertText(#""title":"T""#) + "\t\n\r \t")
    try sealed("padding with NUL bytes", "malformed", "NUL is not JSON white space", alertText(#""title":"T""#) + "\u{0}\u{0}\u{0}")
    try sealed("a byte order mark in the plaintext", "malformed", "U+FEFF is not JSON white space", "\u{FEFF}" + alertText(#""title":"T""#))
    try sealed("a lone surrogate in the plaintext", "malformed", "\\udc00 alone is no character", alertText(#""title":"\udc00""#))
    try sealed(
        "plaintext nesting 65 levels deep", "malformed", "the plaintext object is level 1", alertText(#""title":"T","x":"# + String(repeating: "[", count: 64) + String(repeating: "]", count: 64)))
    add(
        "a plaintext that is not UTF-8", "§5", "malformed", "the sealed alert is UTF-8 JSON",
        payloadText(try sealedEnvelope(Array(#"{"title":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8))))
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
    case .string(let text) where text.unicodeScalars.contains("\u{FEFF}"):
        // Escaped here alone: some JSON readers (Foundation's on Linux among them) drop a raw
        // U+FEFF that starts a string, and the byte order mark cases must reach every reader.
        for scalar in JSONWriter.string(value).unicodeScalars {
            output += scalar == "\u{FEFF}" ? "\\ufeff" : String(scalar)
        }
    default:
        output += JSONWriter.string(value)
    }
}

/// A recipient key as the vectors list it: its scalar and point, and its two share lines.
func recipientKeyJSON(_ kid: String, _ scalar: [UInt8]) throws -> JSONValue {
    let key = try P256PrivateKey(scalar: scalar)
    return .object(
        JSONObject([
            ("private", .string(base64url(scalar))),
            ("public", .string(base64url(key.publicKey.x963Representation))),
            ("share", .string(PublicShare(kid: kid, publicKey: key.publicKey).text)),
            ("private_share", .string("prk1.\(kid).\(base64url(scalar))"))
        ]))
}

func file(_ version: String) throws -> String {
    var keys: [(String, JSONValue)]
    if version == "ps1" {
        keys = [
            (secretKid, .object(JSONObject([("secret", .string(base64url(secretBytes))), ("share", .string("psk1.\(secretKid).\(base64url(secretBytes))"))]))),
            (importedKid, .object(JSONObject([("secret", .string(base64url(secretBytes))), ("share", .string("psk1.\(importedKid).\(base64url(secretBytes))"))]))),
            (otherKid, .object(JSONObject([("secret", .string(base64url(otherBytes))), ("share", .string("psk1.\(otherKid).\(base64url(otherBytes))"))])))
        ]
    } else {
        keys = [(recipientKid, try recipientKeyJSON(recipientKid, recipientScalar)), ("c0ffee02", try recipientKeyJSON("c0ffee02", strangerScalar))]
    }
    var positiveCases: [JSONValue] = []
    var base: [UInt8] = []
    for (index, positive) in try positives(version).enumerated() {
        let scalar = ephemeralScalars[index % ephemeralScalars.count]
        let ephemeral = version == "ps2" ? try P256PrivateKey(scalar: scalar) : nil
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
            members.append(("ephemeral_private", .string(base64url(scalar))))
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
    let edgeCases: [JSONValue] = try edges(version, base: base).map { edge in
        .object(
            JSONObject([
                ("name", .string(edge.name)), ("spec", .string(edge.spec)), ("why", .string(edge.why)),
                ("payload", .string(edge.payload)), ("status", .string(edge.status))
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
            ("negative", .array(negativeCases)),
            ("edge", .array(edgeCases))
        ]))
    var text = ""
    pretty(document, to: &text)
    return text + "\n"
}

let arguments = CommandLine.arguments.dropFirst()
guard let version = arguments.first, ["ps1", "ps2", "ps3"].contains(version), arguments.count == 1 else {
    FileHandle.standardErrorWrite("usage: pushseal-vectors ps1|ps2|ps3\n")
    exit(64)
}
do {
    print(try version == "ps3" ? authenticatedFile() : file(version), terminator: "")
} catch {
    FileHandle.standardErrorWrite("pushseal-vectors: \(error)\n")
    exit(1)
}

enum FileHandle {
    static func standardErrorWrite(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
