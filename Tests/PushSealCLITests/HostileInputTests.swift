import Foundation
import PushSeal
import SealCrypto
import Testing

/// Inputs an attacker, a broken proxy or a bad disk could produce, each with the status or
/// exit code and message it documents. None may crash, hang, or show sealed text.
struct HostileCase: CustomTestStringConvertible, Sendable {
    let name: String
    let input: @Sendable (Sealer) throws -> [UInt8]
    let status: String
    var testDescription: String { name }
}

/// Seals test envelopes under a receiver's key, as a sender (or an attacker with the key) would.
struct Sealer: Sendable {
    let kid: String
    let key: SymmetricKey
    /// The receiver's recipient key (ps2): its kid and public point.
    let recipientKid: String
    let recipient: P256PublicKey
    static let secretText = "SECRET-PLAINTEXT-MARKER"

    /// The fixture's keyring, given a recipient pair beside its secret key.
    static func `for`(_ keyring: KeyringFixture) throws -> Sealer {
        let share = try KeyShare(parsing: try keyring.export())
        let recipientKid = try keyring.keysCommand(["add", "--recipient"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let point = try PublicShare(parsing: try keyring.keysCommand(["export", "--public", recipientKid]).stdout)
        return Sealer(kid: share.kid, key: share.secret, recipientKid: recipientKid, recipient: point.publicKey)
    }

    /// A ps2 alert sealed to the receiver's recipient key, as the sealed bytes for surgery.
    func sealed2() throws -> [UInt8] {
        let plaintext = #"{"title":"\#(Self.secretText)","body":"\#(Self.secretText)","id":"x","sent":0}"#
        return try SealedEnvelope(parsing: EnvelopeSealer(key: .recipient(kid: recipientKid, publicKey: recipient)).envelope(sealing: Array(plaintext.utf8))).combined
    }

    func ps2(_ sealed: [UInt8], kid: String? = nil) -> [UInt8] {
        payload(envelope: "ps2.\(kid ?? recipientKid).\(Base64.encode(sealed, alphabet: .url))")
    }

    func envelope(_ plaintext: String, kid: String? = nil) throws -> String {
        try SealedEnvelope(parsing: EnvelopeSealer(key: .secret(kid: kid ?? self.kid, key: key)).envelope(sealing: Array(plaintext.utf8))).text
    }

    func alert(_ extra: String = "") throws -> String {
        try envelope(#"{"title":"\#(Self.secretText)","body":"\#(Self.secretText)","id":"x","sent":0\#(extra)}"#)
    }

    func payload(enc: String) -> [UInt8] {
        Array(#"{"aps":{"alert":{"title":"New notification","body":"Open the app"},"mutable-content":1},"enc":\#(enc)}"#.utf8)
    }

    func payload(envelope: String) -> [UInt8] { payload(enc: "\"\(envelope)\"") }

    /// The sealed box bytes of `envelope`, for surgery.
    func box(_ envelope: String) throws -> [UInt8] {
        try Base64.decode(String(envelope.split(separator: ".")[2]), alphabet: .url)
    }

    func withBox(_ box: [UInt8], kid: String? = nil) -> String {
        "ps1.\(kid ?? self.kid).\(Base64.encode(box, alphabet: .url))"
    }
}

let text: @Sendable (String) -> @Sendable (Sealer) throws -> [UInt8] = { value in { _ in Array(value.utf8) } }

let hostilePayloads: [HostileCase] = [
    HostileCase(name: "truncated JSON", input: text(#"{"aps":{"alert":"#), status: "malformed"),
    HostileCase(name: "array instead of an object", input: text("[1,2,3]"), status: "malformed"),
    HostileCase(name: "bare number", input: text("42"), status: "malformed"),
    HostileCase(name: "bare string", input: text(#""hello""#), status: "malformed"),
    HostileCase(name: "empty object", input: text("{}"), status: "malformed"),
    HostileCase(name: "aps is a string", input: text(#"{"aps":"alert"}"#), status: "malformed"),
    HostileCase(name: "invalid UTF-8 in a string", input: { _ in Array(#"{"aps":{"alert":""#.utf8) + [0xC3, 0x28] + Array(#""}}"#.utf8) }, status: "malformed"),
    HostileCase(name: "raw NUL byte in a string", input: { _ in Array(#"{"aps":{"alert":"a"#.utf8) + [0] + Array(#"b"}}"#.utf8) }, status: "malformed"),
    HostileCase(name: "escaped NUL in the alert", input: text(#"{"aps":{"alert":"a\u0000b"}}"#), status: "passthrough"),
    HostileCase(name: "nesting 100,000 deep", input: text(String(repeating: #"{"a":"#, count: 100_000)), status: "malformed"),
    HostileCase(name: "duplicate aps keys", input: text(#"{"aps":{"alert":"a"},"aps":{"alert":"b"}}"#), status: "malformed"),
    HostileCase(name: "huge number for the badge", input: text(#"{"aps":{"alert":"x","badge":1e400}}"#), status: "passthrough"),
    HostileCase(
        name: "an eligible alert over 4096 bytes", input: { _ in Array((#"{"aps":{"alert":{"title":"T"},"mutable-content":1},"x":""# + String(repeating: "x", count: 300_000) + #""}"#).utf8) },
        status: "malformed"),
    HostileCase(
        name: "a voip payload of 5000 bytes",
        input: { _ in Array((#"{"headers":{"apns-push-type":"voip"},"payload":{"aps":{"alert":"V"},"x":""# + String(repeating: "x", count: 4_950) + #""}}"#).utf8) }, status: "passthrough"),
    HostileCase(name: "a 10 MB alert", input: { _ in Array((#"{"aps":{"alert":""# + String(repeating: "x", count: 10_000_000) + #""}}"#).utf8) }, status: "malformed"),
    HostileCase(name: "mutable-content as a string", input: { s in Array(#"{"aps":{"alert":"x","mutable-content":"1"},"enc":"\#(try s.alert())"}"#.utf8) }, status: "passthrough"),
    HostileCase(
        name: "ps2 flipped tag bit",
        input: { s in
            var b = try s.sealed2()
            b[b.count - 1] ^= 1
            return s.ps2(b)
        }, status: "auth-failed"),
    HostileCase(
        name: "ps2 flipped ciphertext bit",
        input: { s in
            var b = try s.sealed2()
            b[70] ^= 0x80
            return s.ps2(b)
        }, status: "auth-failed"),
    HostileCase(
        name: "ps2 enc off the curve",
        input: { s in
            var b = try s.sealed2()
            b[64] ^= 1
            return s.ps2(b)
        }, status: "auth-failed"),
    HostileCase(
        name: "ps2 enc as infinity",
        input: { s in
            var b = try s.sealed2()
            b.replaceSubrange(0..<65, with: [UInt8](repeating: 0, count: 65))
            return s.ps2(b)
        }, status: "auth-failed"),
    HostileCase(name: "ps2 truncated enc", input: { s in s.ps2(Array(try s.sealed2().prefix(80))) }, status: "malformed"),
    HostileCase(name: "ps2 kid swapped to the secret key", input: { s in s.ps2(try s.sealed2(), kid: s.kid) }, status: "key-missing"),
    HostileCase(name: "enc is a number", input: { s in s.payload(enc: "17") }, status: "malformed"),
    HostileCase(name: "enc is null", input: { s in s.payload(enc: "null") }, status: "malformed"),
    HostileCase(name: "enc is an object", input: { s in s.payload(enc: #"{"ps1":1}"#) }, status: "malformed"),
    HostileCase(name: "unknown version", input: { s in s.payload(envelope: try s.alert().replacingOccurrences(of: "ps1.", with: "ps9.")) }, status: "unsupported"),
    // The kid names a shared secret, which cannot open ps2: missing, never tried as AES-GCM.
    HostileCase(name: "ps1 relabelled ps2", input: { s in s.payload(envelope: try s.alert().replacingOccurrences(of: "ps1.", with: "ps2.")) }, status: "key-missing"),
    HostileCase(name: "empty kid", input: { s in s.payload(envelope: s.withBox(try s.box(try s.alert()), kid: "")) }, status: "malformed"),
    HostileCase(name: "65-character kid", input: { s in s.payload(envelope: s.withBox(try s.box(try s.alert()), kid: String(repeating: "k", count: 65))) }, status: "malformed"),
    HostileCase(name: "kid with a dot", input: { s in s.payload(envelope: s.withBox(try s.box(try s.alert()), kid: "a.b")) }, status: "malformed"),
    HostileCase(name: "box that is not base64url", input: { s in s.payload(envelope: "ps1.\(s.kid).!!!!") }, status: "malformed"),
    HostileCase(name: "box with base64 padding", input: { s in s.payload(envelope: try s.alert() + "==") }, status: "malformed"),
    HostileCase(name: "11-byte nonce and a tag", input: { s in s.payload(envelope: s.withBox([UInt8](repeating: 1, count: 27))) }, status: "malformed"),
    HostileCase(name: "15-byte tag", input: { s in s.payload(envelope: s.withBox(Array(try s.box(try s.alert()).dropLast()))) }, status: "auth-failed"),
    HostileCase(name: "tag-only box", input: { s in s.payload(envelope: s.withBox([UInt8](repeating: 7, count: 28))) }, status: "auth-failed"),
    HostileCase(
        name: "flipped tag bit",
        input: { s in
            var box = try s.box(try s.alert())
            box[box.count - 1] ^= 1
            return s.payload(envelope: s.withBox(box))
        }, status: "auth-failed"),
    HostileCase(
        name: "flipped ciphertext bit",
        input: { s in
            var box = try s.box(try s.alert())
            box[20] ^= 0x80
            return s.payload(envelope: s.withBox(box))
        }, status: "auth-failed"),
    HostileCase(
        name: "swapped nonce",
        input: { s in
            var box = try s.box(try s.alert())
            box[0] ^= 0xFF
            return s.payload(envelope: s.withBox(box))
        }, status: "auth-failed"),
    HostileCase(name: "kid swapped to an unknown key", input: { s in s.payload(envelope: s.withBox(try s.box(try s.alert()), kid: "feedface")) }, status: "key-missing"),
    HostileCase(name: "sealed text that is not JSON", input: { s in s.payload(envelope: try s.envelope("not json \(Sealer.secretText)")) }, status: "malformed"),
    HostileCase(name: "sealed array", input: { s in s.payload(envelope: try s.envelope("[\"\(Sealer.secretText)\"]")) }, status: "malformed"),
    HostileCase(name: "sealed alert without text", input: { s in s.payload(envelope: try s.envelope(#"{"id":"x","sent":0}"#)) }, status: "malformed"),
    HostileCase(name: "negative exp", input: { s in s.payload(envelope: try s.alert(#","exp":-5"#)) }, status: "expired"),
    HostileCase(name: "exp as a string", input: { s in s.payload(envelope: try s.alert(#","exp":"soon""#)) }, status: "malformed")
]

struct KeyringCase: CustomTestStringConvertible, Sendable {
    let name: String
    let contents: String
    let exit: Int32
    let message: String
    var testDescription: String { name }
}

let secret32 = Data(repeating: 0x42, count: 32).base64EncodedString()
func keyringText(_ keys: String, format: String = "pushseal-keyring/1") -> String {
    #"{"format":"\#(format)","keys":[\#(keys)]}"#
}
func keyEntry(_ id: String, state: String = "primary", secret: String? = secret32) -> String {
    let secretJSON = secret.map { "\"\($0)\"" } ?? "null"
    return #"{"id":"\#(id)","secret":\#(secretJSON),"state":"\#(state)","created":"2026-12-02T09:00:00Z","expires":null}"#
}

let hostileKeyrings: [KeyringCase] = [
    KeyringCase(name: "two primaries", contents: keyringText(keyEntry("a") + "," + keyEntry("b")), exit: 78, message: "more than one key is primary"),
    KeyringCase(name: "the same kid twice", contents: keyringText(keyEntry("a") + "," + keyEntry("a", state: "enabled")), exit: 78, message: "appears twice"),
    KeyringCase(name: "not JSON", contents: "keyring", exit: 78, message: "not a valid pushseal keyring"),
    KeyringCase(name: "another format", contents: keyringText(keyEntry("a"), format: "pushseal-keyring/9"), exit: 78, message: "format is not"),
    KeyringCase(name: "a 16-byte secret", contents: keyringText(keyEntry("a", secret: Data(count: 16).base64EncodedString())), exit: 78, message: "16 bytes, 32 expected"),
    KeyringCase(name: "a live key without a secret", contents: keyringText(keyEntry("a", secret: nil)), exit: 78, message: "has no secret"),
    KeyringCase(name: "an unknown state", contents: keyringText(keyEntry("a", state: "sleeping")), exit: 78, message: "no valid state"),
    KeyringCase(name: "an invalid kid", contents: keyringText(keyEntry("a b")), exit: 78, message: "no valid id"),
    KeyringCase(name: "an empty file", contents: "", exit: 78, message: "not a valid pushseal keyring")
]

struct ShareCase: CustomTestStringConvertible, Sendable {
    let name: String
    let share: String
    let message: String
    var testDescription: String { name }
}

let hostileShares: [ShareCase] = [
    ShareCase(name: "empty share", share: "", message: "not a key share"),
    ShareCase(name: "wrong prefix", share: "psk9.kid.\(String(repeating: "A", count: 43))", message: "expected psk1."),
    ShareCase(name: "16-byte secret", share: "psk1.kid.\(Base64.encode([UInt8](repeating: 1, count: 16), alphabet: .url))", message: "16 bytes, 32 expected"),
    ShareCase(name: "secret that is not base64url", share: "psk1.kid.****", message: "not base64url"),
    ShareCase(name: "invalid kid", share: "psk1.k d.\(Base64.encode([UInt8](repeating: 1, count: 32), alphabet: .url))", message: "key id must be")
]

@Suite("hostile input")
struct HostileInputTests {
    @Test(arguments: hostilePayloads)
    func receiverGivesOneRecordWithTheDocumentedStatus(_ hostile: HostileCase) throws {
        let keyring = try KeyringFixture()
        let sealer = try Sealer.for(keyring)
        let folder = TemporaryFolder()
        _ = FileManager.default.createFile(atPath: folder.file("input.json"), contents: Data(try hostile.input(sealer)))
        let run = try pushseal(["receive", "--json", "--keys", keyring.keys, folder.file("input.json")])
        #expect(run.status == 0, "\(run.stderr)")
        let output = records(run.stdout)
        #expect(output.count == 1)
        #expect(output.first?["status"] as? String == hostile.status)
        #expect(!run.stdout.contains(Sealer.secretText) && !run.stderr.contains(Sealer.secretText))
    }

    @Test(arguments: hostilePayloads.filter { ["auth-failed", "malformed", "key-missing"].contains($0.status) && $0.name != "a 10 MB alert" && $0.name != "an eligible alert over 4096 bytes" })
    func decryptRefusesWithoutPlaintext(_ hostile: HostileCase) throws {
        let keyring = try KeyringFixture()
        let run = try pushseal(
            ["decrypt", "--keys", keyring.keys, "-"],
            stdin: String(decoding: try hostile.input(try Sealer.for(keyring)), as: UTF8.self))
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("error: ") && run.stderr.split(separator: "\n").count == 1)
        #expect(!run.stderr.contains(Sealer.secretText))
    }

    @Test(arguments: hostileKeyrings)
    func damagedKeyringIsRefusedWithItsReason(_ hostile: KeyringCase) throws {
        let folder = TemporaryFolder()
        let keys = folder.file("Keys")
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        _ = FileManager.default.createFile(atPath: keys + "/keyring.json", contents: Data(hostile.contents.utf8), attributes: [.posixPermissions: 0o600])
        let run = try pushseal(["keys", "list", "--keys", keys])
        #expect(run.status == hostile.exit, "\(run.stderr)")
        #expect(run.stderr.contains(hostile.message), "\(run.stderr)")
        #expect(!run.stderr.contains(secret32) && !run.stdout.contains(secret32))
    }

    @Test func symlinkedOrOpenKeyringsAndAFileAsFolderAreRefused() throws {
        let keyring = try KeyringFixture()
        let path = keyring.keys + "/keyring.json"
        try FileManager.default.moveItem(atPath: path, toPath: keyring.keys + "/real.json")
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "real.json")
        let linked = try pushseal(["keys", "list", "--keys", keyring.keys])
        #expect(linked.status == 77 && linked.stderr.contains("symbolic link"))

        let folder = TemporaryFolder()
        folder.write("not-a-folder", "x")
        let file = try pushseal(["keys", "list", "--keys", folder.file("not-a-folder")])
        #expect(file.status == 66 && file.stderr.contains("is not a folder"))
    }

    @Test(arguments: hostileShares)
    func badShareIsRefusedWithoutEcho(_ hostile: ShareCase) throws {
        let folder = TemporaryFolder()
        let run = try pushseal(["keys", "import", "-", "--keys", folder.file("Keys")], stdin: hostile.share)
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains(hostile.message), "\(run.stderr)")
        if hostile.share.count > 12 {
            #expect(!run.stderr.contains(String(hostile.share.suffix(12))))
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("Keys/keyring.json")))
    }

    @Test func everyHostileLineTogetherStillGivesOneRecordEach() throws {
        let keyring = try KeyringFixture()
        let sealer = try Sealer.for(keyring)
        // Lines cannot hold a raw newline, so one-line inputs only; NUL and bad UTF-8 included.
        let lines = try hostilePayloads.filter { $0.name != "a 10 MB alert" }.map { try $0.input(sealer) }
        var input = [UInt8]()
        for line in lines { input += line + [0x0A] }
        let folder = TemporaryFolder()
        _ = FileManager.default.createFile(atPath: folder.file("lines"), contents: Data(input))
        let run = try runProcess("/bin/sh", ["-c", "exec \(pushsealBinary) receive --json --keys \(keyring.keys) - < \(folder.file("lines"))"])
        #expect(run.status == 0)
        #expect(records(run.stdout).count == lines.count)
    }
}
