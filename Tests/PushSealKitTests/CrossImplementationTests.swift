import Foundation
import PushSealJSON
import TestRandom
import Testing

@testable import PushSealKit

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// Alerts sealed by the `pushseal` binary (ps1 with a shared secret, ps2 to a device's key),
/// opened by the kit and by `pushseal receive --json`: the same title, subtitle and body.
@Suite("PushSealKit: what pushseal seals, the kit opens as pushseal's receiver does")
struct CrossImplementationTests {
    struct Tool {
        let binary: String
        let folder: URL

        init() throws {
            guard let binary = ProcessInfo.processInfo.environment["PUSHSEAL_BIN"] else {
                throw Missing(what: "PUSHSEAL_BIN (run Scripts/device-test.sh, which builds pushseal and sets it)")
            }
            self.binary = binary
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushsealkit-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }

        /// Runs pushseal; its stdout, or an error with its stderr.
        func run(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.currentDirectoryURL = folder
            let input = Pipe()
            let output = Pipe()
            let errors = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // Written from another thread: a large batch would fill the pipe before pushseal reads it all.
            let writer = Thread {
                input.fileHandleForWriting.write(Data(stdin.utf8))
                try? input.fileHandleForWriting.close()
            }
            writer.start()
            let out = output.fileHandleForReading.readDataToEndOfFile()
            let err = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw Missing(what: "pushseal \(arguments.first ?? "") exited \(process.terminationStatus): \(String(decoding: err, as: UTF8.self))")
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    struct Missing: Error, CustomStringConvertible {
        let what: String
        var description: String { what }
    }

    /// Random alerts as `encrypt --batch` lines, with the awkward cases: every script, quotes,
    /// escapes and control characters, empty and absent fields, every alert field and level
    /// (and the option-style names), data of every JSON kind, ttl set and not, ids.
    static func alerts(_ count: Int, using random: inout ReplayableRandom) -> [[String: Any]] {
        let pieces = [
            "Deploy", "finished", "✅", "Grüße", "日本語", "עברית", "\"quoted\"", "back\\slash", "tab\there", "emoji 🚀🔥",
            "line\nbreak", "  spaced  ", "e\u{301}", "ß", "Ω", "𝄞", "<tag>", "&amp;", "100%", "{json}", "👩‍👩‍👧", "\u{2028}",
            "\u{7}bell", "/slash/", "\\u0041"
        ]
        func text(_ words: ClosedRange<Int>) -> String {
            (0..<Int.random(in: words, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined(separator: " ")
        }
        func maybe(_ chance: Double = 0.5) -> Bool { Double.random(in: 0..<1, using: &random) < chance }
        func dataValue(depth: Int) -> Any {
            switch Int.random(in: 0...(depth > 2 ? 5 : 7), using: &random) {
            case 0: return text(0...3)
            case 1: return Int.random(in: -1_000_000...1_000_000, using: &random)
            case 2: return [0.5, 1.25, -3.75, 1e-3, 12_345.678].randomElement(using: &random)!
            case 3: return Bool.random(using: &random)
            case 4: return NSNull()
            case 5: return Int64.max
            case 6: return (0..<Int.random(in: 0...3, using: &random)).map { _ in dataValue(depth: depth + 1) }
            default:
                var object: [String: Any] = [:]
                for _ in 0..<Int.random(in: 0...3, using: &random) { object[text(1...2)] = dataValue(depth: depth + 1) }
                return object
            }
        }
        return (0..<count).map { index in
            var alert: [String: Any] = [:]
            // Title or body is required; either may be empty when the other is not.
            switch index % 4 {
            case 0: alert["title"] = text(1...6)
            case 1: alert["body"] = text(1...(index % 20 == 1 ? 150 : 20))
            case 2:
                alert["title"] = text(1...6)
                alert[maybe() ? "body" : "message"] = text(0...20)
            default:
                alert["title"] = ""
                alert["body"] = text(1...20)
            }
            if maybe(0.4) { alert["subtitle"] = maybe(0.2) ? "" : text(1...4) }
            if maybe(0.3) { alert["badge"] = Int.random(in: 0...99_999, using: &random) }
            if maybe(0.3) { alert["sound"] = ["default", "chime.caf", "Glass", "ping 🔔"].randomElement(using: &random)! }
            if maybe(0.3) { alert[maybe() ? "thread-id" : "group"] = text(1...2) }
            if maybe(0.3) { alert["category"] = ["REPLY", "ACK", ""].randomElement(using: &random)! }
            if maybe(0.2) { alert["target-content-id"] = text(1...2) }
            if maybe(0.5) {
                alert[maybe() ? "interruption-level" : "level"] = ["passive", "active", "time-sensitive", "timeSensitive", "critical"]
                    .randomElement(using: &random)!
            }
            if maybe(0.3) { alert["relevance-score"] = [0, 1, 0.5, 0.125, 0.999].randomElement(using: &random)! }
            if maybe(0.2) { alert["url"] = "https://example.com/run/\(index)?q=ü" }
            if maybe(0.4) {
                var data: [String: Any] = [:]
                for _ in 0..<Int.random(in: 1...4, using: &random) { data[text(1...2)] = dataValue(depth: 0) }
                alert["data"] = data
            }
            if maybe(0.3) { alert["ttl"] = ["1h", "30d", "90s", "365d"].randomElement(using: &random)! }
            if maybe(0.2) { alert["id"] = "msg-\(index)" }
            return alert
        }
    }

    static func jsonLines(_ objects: [[String: Any]]) throws -> String {
        try objects.map { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self) }
            .joined(separator: "\n") + "\n"
    }

    /// `receive --json`'s records, read as pushseal reads JSON.
    static func records(_ output: String) throws -> [JSONObject] {
        try output.split(separator: "\n").map { line in
            guard case .object(let record) = try JSONParser.parse(String(line)) else { throw Missing(what: "a record that is not an object") }
            return record
        }
    }

    /// The kit's outcome against the receiver's record: status, every alert field shown and
    /// the data that joined userInfo.
    static func expectSame(_ opened: OpenedNotification, as record: JSONObject, _ label: String) {
        #expect(opened.status.rawValue == record["status"]?.stringValue, "\(label): status")
        let shown = opened.content
        #expect(opened.title == record["title"]?.stringValue, "\(label): title")
        #expect(opened.subtitle == record["subtitle"]?.stringValue, "\(label): subtitle")
        #expect(opened.body == record["body"]?.stringValue, "\(label): body")
        #expect(opened.kid == record["kid"]?.stringValue, "\(label): kid")
        #expect(shown.badge.map(Int64.init) == record["badge"]?.integerValue, "\(label): badge")
        #expect(shown.sound == record["sound"]?.stringValue, "\(label): sound")
        #expect(shown.threadIdentifier == record["thread-id"]?.stringValue, "\(label): thread-id")
        #expect(shown.categoryIdentifier == record["category"]?.stringValue, "\(label): category")
        #expect(shown.targetContentIdentifier == record["target-content-id"]?.stringValue, "\(label): target-content-id")
        #expect(shown.interruptionLevel?.rawValue == record["interruption-level"]?.stringValue, "\(label): interruption-level")
        #expect(shown.relevanceScore == record["relevance-score"]?.doubleValue, "\(label): relevance-score")
        #expect(opened.data == record["userInfo"]?.objectValue ?? JSONObject(), "\(label): userInfo")
    }

    /// A device with a shared secret (ps1, from `keys export`) and a key pair of its own (ps2,
    /// its public half imported by the sender), in the kit's store and in a receiver keyring.
    struct Pairing {
        let tool: Tool
        let store = InMemoryKeyStore()
        let secretKid: String
        let secret: SymmetricKey
        let recipientKid: String

        init() throws {
            tool = try Tool()
            _ = try tool.run(["keys", "init", "--keys", "Sender"])
            let share = try tool.run(["keys", "export", "--keys", "Sender"])
            (secretKid, secret) = try KeyShare.secret(parsing: share)
            store.store(.secret(secret), id: secretKid)
            _ = try tool.run(["keys", "init", "--recipient", "--keys", "Device"])
            _ = try tool.run(["keys", "import", "--keys", "Device", "-"], stdin: share)
            let line = try tool.run(["keys", "export", "--public", "--keys", "Device"])
            let (kid, publicKey) = try KeyShare.publicKey(parsing: line)
            recipientKid = kid
            // The private half the device keeps (its keyring's scalar), checked against its share.
            let keyring = try JSONSerialization.jsonObject(with: Data(contentsOf: tool.folder.appendingPathComponent("Device/keyring.json"))) as! [String: Any]
            let entry = (keyring["keys"] as! [[String: Any]]).first { $0["id"] as? String == kid }!
            let privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: Data(base64Encoded: entry["secret"] as! String)!)
            #expect(privateKey.publicKey.x963Representation == publicKey.x963Representation)
            store.store(.recipient(privateKey), id: kid)
            _ = try tool.run(["keys", "import", "--keys", "Sender", "-"], stdin: line)
        }

        /// What the device's receiver records for each payload, in order, `clockOffset`
        /// seconds from now (pushseal's test clock).
        func received(_ payloads: [String], clockOffset: Int = 0) throws -> [JSONObject] {
            let records = try CrossImplementationTests.records(
                try tool.run(
                    ["receive", "--json", "--keys", "Device", "--seen", "none", "-"], stdin: payloads.joined(separator: "\n") + "\n",
                    environment: ["PUSHSEAL_TEST_CLOCK_OFFSET": String(clockOffset)]))
            #expect(records.count == payloads.count)
            return records
        }
    }

    /// The lines `keys export` and `keys export --public` print parse into keys that open what
    /// pushseal seals (the thousand-alert test opens with them); a corrupted line is refused by
    /// the kit exactly when `keys import` refuses it.
    @Test func aCorruptedShareIsRefusedAsKeysImportRefusesIt() throws {
        let pairing = try Pairing()
        let secretLine = try pairing.tool.run(["keys", "export", "--keys", "Sender"]).trimmingCharacters(in: .newlines)
        let publicLine = try pairing.tool.run(["keys", "export", "--public", "--keys", "Device"]).trimmingCharacters(in: .newlines)
        func corruptions(of line: String) -> [String] {
            let last = line.last!
            return [
                line, "  \(line)\n", String(line.dropLast()), line + "A", String(line.dropLast()) + (last == "A" ? "B" : "A"),
                String(line.dropLast()) + (last == "B" ? "C" : "B"), String(line.dropLast(2)) + "+/", line.replacingOccurrences(of: ".", with: ":"),
                String(line.prefix(5)) + "bad kid" + line.dropFirst(13), line.uppercased(), String(line.prefix(20)),
                String(line.prefix(14)) + String(repeating: "A", count: line.count - 14)
            ]
        }
        var refused = 0
        let secrets = corruptions(of: secretLine)
        for (index, line) in (secrets + corruptions(of: publicLine)).enumerated() {
            let imported = (try? pairing.tool.run(["keys", "import", "--keys", "Scratch\(index)", "-"], stdin: line)) != nil
            let parsed = index < secrets.count ? (try? KeyShare.secret(parsing: line)) != nil : (try? KeyShare.publicKey(parsing: line)) != nil
            #expect(parsed == imported, "\(index) \(line.debugDescription)")
            if !parsed { refused += 1 }
        }
        #expect(refused >= 16)
        // The private half a recipient keeps, as a line, comes back as the same key.
        let (kid, key) = KeyShare.newRecipient()
        #expect(kid.count == 8 && kid.allSatisfy(\.isHexDigit))
        let kept = try KeyShare.privateKey(parsing: KeyShare.privateLine(kid: kid, for: key))
        #expect(kept.kid == kid && kept.key.rawRepresentation == key.rawRepresentation)
        #expect(throws: OpeningError.self) { try KeyShare.privateKey(parsing: "prk1.\(kid)." + Base64URL.encode(Data(repeating: 0xFF, count: 32))) }
        #expect(throws: OpeningError.self) { try KeyShare.privateKey(parsing: "prk1.\(kid)." + Base64URL.encode(Data(count: 32))) }
        #expect(throws: OpeningError.self) { try KeyShare.privateKey(parsing: KeyShare.publicLine(kid: kid, for: key)) }
    }

    @Test(arguments: ["ps1", "ps2"])
    func aThousandAlertsOpenToWhatPushsealsReceiverShows(format: String) throws {
        let pairing = try Pairing()
        let opener = NotificationOpener(keys: pairing.store)
        var random = ReplayableRandom()
        let alerts = Self.alerts(1_000, using: &random)
        // PUSHSEAL_TEST_SEED replays these alerts.
        print("alerts from seed \(random.seed)")
        var payloads: [String] = []
        // Four padding sizes, a quarter of the alerts each.
        for (part, pad) in [1, 16, 32, 256].enumerated() {
            var sealing = ["encrypt", "--batch", "--keys", "Sender", "--pad", String(pad)]
            if format == "ps2" { sealing += ["--to", pairing.recipientKid] }
            let lines = try pairing.tool.run(sealing, stdin: try Self.jsonLines(Array(alerts[(part * 250)..<((part + 1) * 250)])))
            payloads += lines.split(separator: "\n").map(String.init)
        }
        #expect(payloads.count == alerts.count)
        #expect(payloads.allSatisfy { $0.contains("\"\(format).") })
        let records = try pairing.received(payloads)
        for (index, (payload, record)) in zip(payloads, records).enumerated() {
            let opened = opener.open(json: Data(payload.utf8))
            #expect(opened.status == .decrypted, "\(format) #\(index): \(opened.reason ?? "")")
            Self.expectSame(opened, as: record, "\(format) #\(index)")
            let alert = alerts[index]
            #expect(opened.title == alert["title"] as? String ?? "", "\(format) #\(index) title as sealed")
            #expect(opened.body == (alert["body"] ?? alert["message"]) as? String ?? "", "\(format) #\(index) body as sealed")
        }
    }

    @Test(arguments: ["ps1", "ps2"])
    func alertsNearTheFourKilobyteLimitOpenAlike(format: String) throws {
        let pairing = try Pairing()
        let opener = NotificationOpener(keys: pairing.store)
        var sealing = ["encrypt", "--keys", "Sender", "--pad", "1", "-t", "near the limit"]
        if format == "ps2" { sealing += ["--to", pairing.recipientKid] }
        // Each 3 bytes more of alert are 4 more of base64: from a probe's size, the largest bodies that fit.
        let probe = try pairing.tool.run(sealing + ["-b", String(repeating: "x", count: 300)]).utf8.count - 1
        let largest = 300 + (4096 - probe) * 3 / 4
        var payloads: [String] = []
        for length in (largest - 8)...largest {
            payloads.append(
                try pairing.tool.run(sealing + ["-b", String(repeating: "é", count: length / 2) + String(repeating: "x", count: length % 2)])
                    .trimmingCharacters(in: .newlines))
        }
        #expect(payloads.map(\.utf8.count).max()! > 4090)
        #expect(payloads.map(\.utf8.count).max()! <= 4096)
        for (payload, record) in zip(payloads, try pairing.received(payloads)) {
            Self.expectSame(opener.open(json: Data(payload.utf8)), as: record, "\(format) \(payload.utf8.count) bytes")
        }
    }

    @Test func aTamperedOrForeignEnvelopeReleasesNothing() throws {
        let tool = try Tool()
        _ = try tool.run(["keys", "init", "--keys", "Sender"])
        let share = try KeyShare.secret(parsing: try tool.run(["keys", "export", "--keys", "Sender"]))
        let payload = try tool.run(["encrypt", "--keys", "Sender", "-t", "secret", "-b", "text"])
        let field = (try JSONSerialization.jsonObject(with: Data(payload.utf8)) as! [String: Any])["enc"] as! String
        let envelope = try SealedEnvelope(parsing: field)
        #expect(throws: Never.self) { try envelope.open(with: .secret(share.key)) }
        // Every flipped character of the sealed part, a wrong key and a swapped header fail to authenticate.
        var flipped = Array(field.utf8)
        flipped[flipped.count - 5] = flipped[flipped.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: OpeningError(.authenticationFailed, "")) { try SealedEnvelope(parsing: String(decoding: flipped, as: UTF8.self)).open(with: .secret(share.key)) }
        #expect(throws: OpeningError(.authenticationFailed, "")) { try envelope.open(with: .secret(SymmetricKey(size: .bits256))) }
        let swapped = field.replacingOccurrences(of: "ps1.\(share.kid).", with: "ps1.other.")
        #expect(throws: OpeningError(.authenticationFailed, "")) { try SealedEnvelope(parsing: swapped).open(with: .secret(share.key)) }
        #expect(throws: OpeningError(.keyMissing, "")) { try envelope.open(with: .recipient(P256.KeyAgreement.PrivateKey())) }
    }

    /// Payloads no honest sender makes, for both formats: the receiver's status and placeholder.
    @Test func failuresGetTheReceiversStatusAndPlaceholder() throws {
        let pairing = try Pairing()
        let tool = pairing.tool
        let opener = NotificationOpener(keys: pairing.store)
        _ = try tool.run(["keys", "init", "--keys", "Other"])
        _ = try tool.run(["keys", "init", "--recipient", "--keys", "OtherDevice"])
        _ = try tool.run(["keys", "import", "--keys", "Other", "-"], stdin: try tool.run(["keys", "export", "--public", "--keys", "OtherDevice"]))
        let otherRecipient = try tool.run(["keys", "list", "--keys", "OtherDevice"]).split(separator: "\n")[1].split(separator: " ")[0]
        var cases: [(String, String)] = []
        func payload(_ object: [String: Any]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        for (format, to) in [("ps1", [String]()), ("ps2", ["--to", pairing.recipientKid])] {
            func seal(_ keys: String, _ extra: [String]) throws -> String {
                try tool.run(["encrypt", "--keys", keys] + to + extra).trimmingCharacters(in: .newlines)
            }
            let good = try seal("Sender", ["-t", "Deploy", "-s", "chime", "--badge", "2", "-l", "active", "--data", "run=7", "-b", "api-7 is live"])
            cases.append(("\(format) good", good))
            cases.append(("\(format) localized fallback", try seal("Sender", ["--fallback-loc-key", "NEW_MESSAGE", "-t", "Loc", "-b", "ok"])))
            let loud = try seal("Sender", ["--visible-sound", "siren.caf", "--visible-level", "critical", "-t", "Page", "-b", "db-3 down"])
            cases.append(("\(format) visible critical", loud))
            var unknown = try JSONSerialization.jsonObject(with: Data(loud.utf8)) as! [String: Any]
            unknown["enc"] = (unknown["enc"] as! String).replacingOccurrences(of: ".\(format == "ps1" ? pairing.secretKid : pairing.recipientKid).", with: ".nosuchkey.")
            cases.append(("\(format) visible critical, no key", try payload(unknown)))
            cases.append(("\(format) expiring", try seal("Sender", ["--ttl", "1s", "-t", "soon", "-b", "gone"])))
            let foreignTo = format == "ps2" ? ["--to", String(otherRecipient)] : []
            cases.append(
                (
                    "\(format) foreign key",
                    try tool.run(["encrypt", "--keys", "Other"] + foreignTo + ["-t", "x", "-b", "y"])
                        .trimmingCharacters(in: .newlines)
                ))
            var object = try JSONSerialization.jsonObject(with: Data(good.utf8)) as! [String: Any]
            let field = object["enc"] as! String
            let dot = field.lastIndex(of: ".")!
            let header = String(field[..<dot])
            let sealed = String(field[field.index(after: dot)...])
            func variant(_ name: String, _ value: Any?) throws {
                var changed = object
                changed["enc"] = value
                cases.append(("\(format) \(name)", try payload(changed)))
            }
            func flip(_ text: String, at offset: Int) -> String {
                var bytes = Array(text.utf8)
                let index = offset >= 0 ? offset : bytes.count + offset
                bytes[index] = bytes[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
                return String(decoding: bytes, as: UTF8.self)
            }
            try variant("tag flipped", header + "." + flip(sealed, at: -3))
            try variant("first byte flipped", header + "." + flip(sealed, at: 0))
            try variant("truncated", header + "." + sealed.dropLast(12))
            try variant("shorter than a tag", header + "." + sealed.prefix(8))
            try variant("empty seal", header + ".")
            let otherKid = format == "ps1" ? pairing.recipientKid : pairing.secretKid
            try variant("another held kid", "\(format).\(otherKid)." + sealed)
            try variant("unknown kid", "\(format).nosuchkey." + sealed)
            try variant("format swapped", (format == "ps1" ? "ps2" : "ps1") + field.dropFirst(3))
            try variant("later version", "ps9" + field.dropFirst(3))
            try variant("not base64url", header + ".not+base64/")
            try variant("four parts", field + ".extra")
            try variant("bad kid", "\(format).bad kid!." + sealed)
            try variant("a number", 42)
            try variant("an object", ["ps1": sealed])
            try variant("empty", "")
            try variant("absent", nil)
            object["aps"] = ["alert": ["title": "t"]]
            cases.append(("\(format) not mutable", try payload(object)))
            object["aps"] = ["alert": ["title": ""], "mutable-content": 1]
            cases.append(("\(format) no alert text", try payload(object)))
            object["aps"] = ["alert": "a string alert", "mutable-content": 1, "badge": 9, "sound": ["critical": 1, "name": "siren"]]
            cases.append(("\(format) string alert, critical sound", try payload(object)))
        }
        // Both sides judge five seconds on, past the one-second ttl.
        let records = try pairing.received(cases.map(\.1), clockOffset: 5)
        let later = Date().addingTimeInterval(5)
        let expected: [String: String] = [
            "good": "decrypted", "expiring": "expired", "foreign key": "key-missing", "tag flipped": "auth-failed",
            "first byte flipped": "auth-failed", "absent": "passthrough", "not mutable": "passthrough",
            "no alert text": "passthrough", "a number": "malformed", "unknown kid": "key-missing",
            "later version": "unsupported", "localized fallback": "decrypted", "visible critical": "decrypted",
            "visible critical, no key": "key-missing"
        ]
        for ((label, payload), record) in zip(cases, records) {
            Self.expectSame(opener.open(json: Data(payload.utf8), now: later), as: record, label)
            if let status = expected[String(label.dropFirst(4))] { #expect(record["status"]?.stringValue == status, "\(label)") }
            if label.hasSuffix("visible critical, no key") {
                // What the sender chose to keep audible stays on the placeholder.
                #expect(record["sound"]?.stringValue == "siren.caf" && record["interruption-level"]?.stringValue == "critical", "\(label)")
            }
            if record["status"]?.stringValue != "passthrough" {
                #expect(record["title"]?.stringValue != "New notification", "\(label): never the fallback's text")
            }
        }
    }

    /// A key store that cannot answer: the receiver whose keyring is damaged while it runs,
    /// and the kit whose store is unavailable (a locked phone), both say `locked` and show the
    /// sender's fallback alert as it came, sound and level included.
    @Test func anUnreadableKeyStoreIsLockedOnBothSidesAndShowsTheFallback() throws {
        let pairing = try Pairing()
        let tool = pairing.tool
        let payload = try tool.run(["encrypt", "--keys", "Sender", "--visible-sound", "siren.caf", "--visible-level", "critical", "-t", "Page", "-b", "db-3 down"])
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: tool.binary)
        receiver.arguments = ["receive", "--json", "--keys", "Device", "--seen", "none", "-"]
        receiver.currentDirectoryURL = tool.folder
        let input = Pipe()
        let output = Pipe()
        receiver.standardInput = input
        receiver.standardOutput = output
        receiver.standardError = FileHandle.nullDevice
        try receiver.run()
        func nextRecord() throws -> JSONObject {
            var line = Data()
            while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line += byte }
            return try #require(try CrossImplementationTests.records(String(decoding: line, as: UTF8.self)).first)
        }
        input.fileHandleForWriting.write(Data(payload.utf8))
        #expect(try nextRecord()["status"]?.stringValue == "decrypted")
        // The keyring is damaged under the running receiver (a bad restore, a disk error).
        let keyring = tool.folder.appendingPathComponent("Device/keyring.json")
        try Data("{\"format\":".utf8).write(to: keyring)
        // The receiver looks at the file again within 100 ms: the payload goes again until
        // it has (each try gets its record, read before the next; a try takes a fraction of
        // a millisecond, so the count spans those 100 ms many times over).
        var record = JSONObject()
        for _ in 0..<20_000 {
            input.fileHandleForWriting.write(Data(payload.utf8))
            record = try nextRecord()
            if record["status"]?.stringValue != "decrypted" { break }
        }
        try input.fileHandleForWriting.close()
        receiver.waitUntilExit()
        #expect(record["status"]?.stringValue == "locked")
        #expect(record["title"]?.stringValue == "New notification" && record["body"]?.stringValue == "Open the app to read it")
        #expect(record["sound"]?.stringValue == "siren.caf" && record["interruption-level"]?.stringValue == "critical")
        #expect(record["reason"]?.stringValue?.contains("keyring") == true)
        pairing.store.setUnavailable(KeyStoreError(.locked, status: -25308, "locked"))
        let opened = NotificationOpener(keys: pairing.store).open(json: Data(payload.utf8))
        Self.expectSame(opened, as: record, "locked")
    }

    /// Alerts sealed here by hand with the device's secret, as no pushseal sender writes them:
    /// every field of the wrong kind or out of range, option-style names, duplicate members,
    /// padding, trailing bytes, nesting. The kit reads each as the receiver does.
    @Test func handSealedAlertsAreReadByTheSendersRulesOnBothSides() throws {
        let pairing = try Pairing()
        let opener = NotificationOpener(keys: pairing.store)
        let plaintexts = [
            #"{"title":"t","badge":3}"#, #"{"title":"t","badge":-1}"#, #"{"title":"t","badge":3.0}"#, #"{"title":"t","badge":1e2}"#,
            #"{"title":"t","badge":true}"#, #"{"title":"t","badge":"3"}"#, #"{"title":"t","badge":99999999999999999999}"#,
            #"{"title":"t","badge":null}"#, #"{"title":"t","relevance-score":1}"#, #"{"title":"t","relevance-score":1e-1}"#,
            #"{"title":"t","relevance-score":1.5}"#, #"{"title":"t","relevance-score":-0.0}"#, #"{"title":"t","relevance-score":"0.5"}"#,
            #"{"title":"t","interruption-level":"timeSensitive"}"#, #"{"title":"t","interruption-level":"loud"}"#,
            #"{"title":"t","interruption-level":5}"#, #"{"title":null,"body":"b"}"#, #"{"title":5}"#, #"{"title":"t","sound":{"name":"x"}}"#,
            #"{"title":"t","category":""}"#, #"{"message":"alias","group":"g","level":"critical","title":"t"}"#,
            #"{"title":"first","title":"second"}"#, #"{"title":"t","data":{"k":1},"data":null}"#, #"{"title":"t","data":[1]}"#,
            #"{"title":"t","data":"x"}"#, #"{"title":"t","data":{"aps":"x","enc":"y","ok":[1,{"deep":null}]}}"#,
            #"{"title":"t","exp":"soon"}"#, #"{"title":"t","exp":1.5}"#, #"{"title":"t","exp":null}"#, #"{"title":"t","exp":4102444800}"#,
            #"{"title":"t","exp":1000}"#, #"{"title":"t","sent":"x"}"#, #"{"title":"t","sent":-5}"#, #"{"title":"t","unknown":{"x":1}}"#,
            #"{"title":"t"}      "#, "{\"title\":\"t\"}\n\t \r", #"{"title":"t"} x"#, #"{"title":"t"}{}"#, "", "null", "[1]", #""text""#,
            "\u{FEFF}{\"title\":\"t\"}", #"{"title":"\ud800"}"#, #"{"title":"\u00e9\n"}"#,
            "{\"title\":\"t\",\"data\":"
                + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + "}", "{}", #"{"body":""}"#
        ]
        var payloads: [String] = []
        for plaintext in plaintexts {
            let header = "ps1.\(pairing.secretKid)"
            let box = try AES.GCM.seal(Data(plaintext.utf8), using: pairing.secret, authenticating: Data(header.utf8))
            let object: [String: Any] = [
                "aps": ["alert": ["title": "New notification", "body": "Open the app to read it"], "mutable-content": 1],
                "enc": header + "." + Base64URL.encode(box.combined!)
            ]
            payloads.append(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        }
        // Non-UTF-8 bytes sealed as the alert.
        let header = "ps1.\(pairing.secretKid)"
        let box = try AES.GCM.seal(Data([0x7B, 0x22, 0x74, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D]), using: pairing.secret, authenticating: Data(header.utf8))
        payloads.append(#"{"aps":{"alert":"x","mutable-content":1},"enc":""# + header + "." + Base64URL.encode(box.combined!) + #""}"#)
        let records = try pairing.received(payloads)
        var statuses: [String: Int] = [:]
        for (index, record) in records.enumerated() {
            Self.expectSame(opener.open(json: Data(payloads[index].utf8)), as: record, index < plaintexts.count ? plaintexts[index] : "non-UTF-8")
            statuses[record["status"]?.stringValue ?? "", default: 0] += 1
        }
        // Both outcomes occur, so the comparison means something.
        #expect(
            statuses["decrypted", default: 0] >= 10 && statuses["malformed", default: 0] >= 10 && statuses["expired"] == 1
                && statuses["original"] == nil, "an alert with no text to show is malformed (docs/FORMAT.md §5)")
    }
}
