import Foundation
import Testing
#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
@testable import PushSealKit

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
        func run(_ arguments: [String], stdin: String = "") throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
            process.currentDirectoryURL = folder
            let input = Pipe(), output = Pipe(), errors = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // Written from another thread: a large batch would fill the pipe before pushseal reads it all.
            let writer = Thread { input.fileHandleForWriting.write(Data(stdin.utf8)); try? input.fileHandleForWriting.close() }
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

    /// Alerts with the awkward cases: every script, quotes and escapes, empty subtitles,
    /// lengths up to near the payload limit.
    static func alerts(_ count: Int) -> [[String: String]] {
        let pieces = ["Deploy", "finished", "✅", "Grüße", "日本語", "עברית", "\"quoted\"", "back\\slash", "tab\there", "emoji 🚀🔥",
                      "line\nbreak", "  spaced  ", "ümlaut", "ß", "Ω", "𝄞", "<tag>", "&amp;", "100%", "{json}"]
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { index in
            func text(_ words: Int) -> String { (0..<words).map { _ in pieces.randomElement(using: &generator)! }.joined(separator: " ") }
            var alert = ["title": text(Int.random(in: 1...6, using: &generator)), "body": text(Int.random(in: 1...(index % 10 == 0 ? 150 : 20), using: &generator))]
            if Bool.random(using: &generator) { alert["subtitle"] = text(Int.random(in: 1...4, using: &generator)) }
            return alert
        }
    }

    static func jsonLines(_ objects: [[String: String]]) throws -> String {
        try objects.map { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self) }
            .joined(separator: "\n") + "\n"
    }

    static func opened(_ payload: String, with store: KeyStore) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(payload.utf8)) as! [String: Any]
        let envelope = try SealedEnvelope(parsing: object["enc"] as! String)
        let key = try #require(store.key(id: envelope.kid))
        return try JSONSerialization.jsonObject(with: try envelope.open(with: key)) as! [String: Any]
    }

    @Test(arguments: ["ps1", "ps2"])
    func aThousandAlertsOpenToWhatPushsealsReceiverShows(format: String) throws {
        let tool = try Tool()
        let store = InMemoryKeyStore()
        var sealing = ["encrypt", "--batch", "--keys", "Sender"]
        var receiving = ["receive", "--json", "--keys"]
        _ = try tool.run(["keys", "init", "--keys", "Sender"])
        if format == "ps1" {
            let share = try KeyShare.secret(parsing: try tool.run(["keys", "export", "--keys", "Sender"]))
            store.store(.secret(share.key), id: share.kid)
            receiving.append("Sender")
        } else {
            _ = try tool.run(["keys", "init", "--recipient", "--keys", "Device"])
            let line = try tool.run(["keys", "export", "--public", "--keys", "Device"])
            let (kid, publicKey) = try KeyShare.publicKey(parsing: line)
            // The private half the device keeps (its keyring's scalar), checked against its share.
            let keyring = try JSONSerialization.jsonObject(with: Data(contentsOf: tool.folder.appendingPathComponent("Device/keyring.json"))) as! [String: Any]
            let entry = (keyring["keys"] as! [[String: Any]]).first { $0["id"] as? String == kid }!
            let privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: Data(base64Encoded: entry["secret"] as! String)!)
            #expect(privateKey.publicKey.x963Representation == publicKey.x963Representation)
            store.store(.recipient(privateKey), id: kid)
            _ = try tool.run(["keys", "import", "--keys", "Sender", "-"], stdin: line)
            sealing += ["--to", kid]
            receiving.append("Device")
        }
        let alerts = Self.alerts(1_000)
        let payloads = try tool.run(sealing, stdin: try Self.jsonLines(alerts)).split(separator: "\n").map(String.init)
        #expect(payloads.count == alerts.count)
        let records = try tool.run(receiving + ["-"], stdin: payloads.joined(separator: "\n") + "\n")
            .split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(records.count == alerts.count)
        for (index, payload) in payloads.enumerated() {
            let content = try Self.opened(payload, with: store)
            let record = records[index]
            #expect(record["status"] as? String == "decrypted")
            for field in ["title", "subtitle", "body"] {
                #expect((content[field] as? String ?? "") == (record[field] as? String ?? ""), "\(format) #\(index) \(field)")
                #expect((content[field] as? String ?? "") == (alerts[index][field] ?? ""), "\(format) #\(index) \(field) as sealed")
            }
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
        #expect(throws: OpeningError(.authFailed, "")) { try SealedEnvelope(parsing: String(decoding: flipped, as: UTF8.self)).open(with: .secret(share.key)) }
        #expect(throws: OpeningError(.authFailed, "")) { try envelope.open(with: .secret(SymmetricKey(size: .bits256))) }
        let swapped = field.replacingOccurrences(of: "ps1.\(share.kid).", with: "ps1.other.")
        #expect(throws: OpeningError(.authFailed, "")) { try SealedEnvelope(parsing: swapped).open(with: .secret(share.key)) }
        #expect(throws: OpeningError(.keyMissing, "")) { try envelope.open(with: .recipient(P256.KeyAgreement.PrivateKey())) }
    }

    @Test func failuresGetTheReceiversStatusAndPlaceholder() throws {
        let tool = try Tool()
        _ = try tool.run(["keys", "init", "--keys", "Sender"])
        let share = try KeyShare.secret(parsing: try tool.run(["keys", "export", "--keys", "Sender"]))
        let opener = NotificationOpener(keys: InMemoryKeyStore([share.kid: .secret(share.key)]))
        let good = try tool.run(["encrypt", "--keys", "Sender", "-t", "Deploy", "-s", "api", "-b", "api-7 is live"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let expiring = try tool.run(["encrypt", "--keys", "Sender", "--ttl", "1s", "-t", "soon", "-b", "gone"]).trimmingCharacters(in: .whitespacesAndNewlines)
        // A key the device does not have: another keyring's.
        _ = try tool.run(["keys", "init", "--keys", "Other"])
        let foreign = try tool.run(["encrypt", "--keys", "Other", "-t", "x", "-b", "y"]).trimmingCharacters(in: .whitespacesAndNewlines)
        var object = try JSONSerialization.jsonObject(with: Data(good.utf8)) as! [String: Any]
        let field = object["enc"] as! String
        let tampered = field.dropLast(4) + (field.hasSuffix("AAAA") ? "BBBB" : "AAAA")
        object["enc"] = String(tampered)
        let tamperedPayload = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        object["enc"] = "ps1.\(share.kid).not-base64!"
        let garbage = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        object.removeValue(forKey: "enc")
        let unsealed = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        Thread.sleep(forTimeInterval: 2.1)
        let payloads = [good, expiring, foreign, tamperedPayload, garbage, unsealed]
        let records = try tool.run(["receive", "--json", "--keys", "Sender", "-"], stdin: payloads.joined(separator: "\n") + "\n")
            .split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(records.map { $0["status"] as? String } == ["decrypted", "expired", "key-missing", "auth-failed", "malformed", "passthrough"])
        for (payload, record) in zip(payloads, records) {
            let opened = opener.open(json: Data(payload.utf8))
            #expect(opened.status.rawValue == record["status"] as? String, "\(payload.prefix(60))")
            for (name, value) in [("title", opened.title), ("subtitle", opened.subtitle), ("body", opened.body)] {
                #expect(value == (record[name] as? String ?? ""), "\(opened.status) \(name)")
            }
        }
    }
}
