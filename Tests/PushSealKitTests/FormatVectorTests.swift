import Foundation
import Testing

@testable import PushSealKit

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// The published vectors (docs/vectors/ps1.json, ps2.json) through the kit on CryptoKit's
/// API: every positive case opens to its alert (and ps1's envelopes are made again byte for
/// byte with AES.GCM and the case's nonce; CryptoKit's HPKE takes no chosen ephemeral key,
/// so ps2's are opened and their plaintext compared), and every negative case gets its status.
@Suite("PushSealKit: the format's test vectors")
struct FormatVectorTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func document(_ version: String) throws -> [String: Any] {
        let data = try Data(contentsOf: root.appendingPathComponent("docs/vectors/\(version).json"))
        return try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    static func bytes(base64url text: String) -> Data {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard)!
    }

    static func keyStore(_ version: String, _ document: [String: Any]) throws -> InMemoryKeyStore {
        var keys: [String: OpeningKey] = [:]
        for (kid, material) in document["keys"] as! [String: [String: String]] {
            keys[kid] =
                version == "ps1"
                ? .secret(SymmetricKey(data: bytes(base64url: material["secret"]!)))
                : .recipient(try P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(base64url: material["private"]!)))
        }
        return InMemoryKeyStore(keys)
    }

    @Test(arguments: ["ps1", "ps2"])
    func everyPositiveCaseOpensToItsAlert(version: String) throws {
        let document = try Self.document(version)
        let store = try Self.keyStore(version, document)
        let cases = document["positive"] as! [[String: Any]]
        #expect(cases.count >= 3)
        for entry in cases {
            let name = entry["name"] as! String
            let alert = entry["alert"] as! [String: Any]
            let opened = NotificationOpener(keys: store, field: entry["field"] as! String).open(json: Data((entry["payload"] as! String).utf8))
            #expect(opened.status == .decrypted, "\(version) '\(name)': \(opened.reason ?? "")")
            #expect(opened.title == alert["title"] as? String ?? "", "\(name)")
            #expect(opened.body == alert["body"] as? String ?? "", "\(name)")
            let envelope = entry["envelope"] as! String
            let header = entry["header"] as! String
            let sealed = Self.bytes(base64url: String(envelope.split(separator: ".").last!))
            let plaintext = Data((entry["plaintext"] as! String).utf8)
            if version == "ps1" {
                let key = SymmetricKey(data: Self.bytes(base64url: (document["keys"] as! [String: [String: String]])[entry["kid"] as! String]!["secret"]!))
                let nonceText = entry["nonce"] as! String
                let nonce = try AES.GCM.Nonce(
                    data: Data(
                        stride(from: 0, to: nonceText.count, by: 2).map { offset in
                            UInt8(nonceText.dropFirst(offset).prefix(2), radix: 16)!
                        }))
                let box = try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: Data(header.utf8))
                #expect(box.combined == sealed, "\(name): AES.GCM makes another box")
            } else {
                let key = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(base64url: (document["keys"] as! [String: [String: String]])[entry["kid"] as! String]!["private"]!))
                var recipient = try HPKE.Recipient(
                    privateKey: key, ciphersuite: .P256_SHA256_AES_GCM_256, info: Data(header.utf8),
                    encapsulatedKey: sealed.prefix(65))
                #expect(try recipient.open(sealed.dropFirst(65)) == plaintext, "\(name)")
                #expect(sealed.prefix(65) == Self.bytes(base64url: entry["enc"] as! String))
            }
        }
    }

    @Test(arguments: ["ps1", "ps2"])
    func everyNegativeCaseGetsItsStatus(version: String) throws {
        let document = try Self.document(version)
        let store = try Self.keyStore(version, document)
        let cases = document["negative"] as! [[String: Any]]
        #expect(cases.count >= 9)
        for entry in cases {
            let name = entry["name"] as? String ?? "?"
            let opened = NotificationOpener(keys: store).open(json: Data((entry["payload"] as! String).utf8))
            #expect(opened.status.rawValue == entry["status"] as? String, "\(version) '\(name)': \(opened.status) (\(opened.reason ?? ""))")
        }
    }

    /// docs/FORMAT.md's edge cases (the `edge` list, each naming the section it checks) get the
    /// status the file states, as `pushseal receive`, `doctor`, `decrypt` and both examples give
    /// them (ConformanceTests); ps2's keys come in through their prk1 lines.
    @Test(arguments: ["ps1", "ps2"])
    func everyEdgeCaseGetsItsStatus(version: String) throws {
        let document = try Self.document(version)
        var store = try Self.keyStore(version, document)
        if version == "ps2" {
            var keys: [String: OpeningKey] = [:]
            for (_, material) in document["keys"] as! [String: [String: String]] {
                let (kid, key) = try KeyShare.privateKey(parsing: material["private_share"]!)
                keys[kid] = .recipient(key)
            }
            store = InMemoryKeyStore(keys)
        }
        let cases = document["edge"] as! [[String: Any]]
        #expect(cases.count >= (version == "ps1" ? 60 : 4))
        for entry in cases {
            let name = entry["name"] as? String ?? "?"
            #expect((entry["spec"] as? String)?.hasPrefix("§") == true, "\(name) names its rule")
            let opened = NotificationOpener(keys: store).open(json: Data((entry["payload"] as! String).utf8))
            #expect(opened.status.rawValue == entry["status"] as? String, "\(version) '\(name)': \(opened.status) (\(opened.reason ?? ""))")
        }
    }

    /// ps3's receiver, as a device gets it: its own prk1 line and the allowed sender's pss1
    /// line, read by the kit's share parsers into the store.
    static func authenticatedStore(_ document: [String: Any]) throws -> InMemoryKeyStore {
        var keys: [String: OpeningKey] = [:]
        for line in document["receiver"] as! [String] {
            if line.hasPrefix("pss1.") {
                let (kid, key) = try KeyShare.sender(parsing: line)
                keys[kid] = .sender(key)
            } else {
                let (kid, key) = try KeyShare.privateKey(parsing: line)
                keys[kid] = .recipient(key)
            }
        }
        return InMemoryKeyStore(keys)
    }

    /// ps3 through the kit: every positive case opens (and with CryptoKit's own auth-mode
    /// `HPKE.Recipient(…authenticatedBy:)` to the case's plaintext), every negative one gets
    /// its status (a forgery with the public share alone is `sender-untrusted`).
    @Test func everyAuthenticatedCaseGetsItsStatus() throws {
        let document = try Self.document("ps3")
        let store = try Self.authenticatedStore(document)
        let keys = document["keys"] as! [String: [String: String]]
        for entry in document["positive"] as! [[String: Any]] {
            let name = entry["name"] as! String
            let opened = NotificationOpener(keys: store).open(json: Data((entry["payload"] as! String).utf8))
            #expect(opened.status == .decrypted, "ps3 '\(name)': \(opened.reason ?? "")")
            #expect(opened.title == (entry["alert"] as! [String: Any])["title"] as? String, "\(name)")
            let sealed = Self.bytes(base64url: String((entry["envelope"] as! String).split(separator: ".").last!))
            let key = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(base64url: keys[entry["kid"] as! String]!["private"]!))
            let sender = try P256.KeyAgreement.PublicKey(x963Representation: Self.bytes(base64url: keys[entry["sender"] as! String]!["public"]!))
            var recipient = try HPKE.Recipient(
                privateKey: key, ciphersuite: .P256_SHA256_AES_GCM_256, info: Data((entry["header"] as! String).utf8),
                encapsulatedKey: sealed.prefix(65), authenticatedBy: sender)
            #expect(try recipient.open(sealed.dropFirst(65)) == Data((entry["plaintext"] as! String).utf8), "\(name)")
        }
        let negative = document["negative"] as! [[String: Any]]
        #expect(negative.count >= 10)
        for entry in negative {
            let name = entry["name"] as? String ?? "?"
            let opened = NotificationOpener(keys: store).open(json: Data((entry["payload"] as! String).utf8))
            #expect(opened.status.rawValue == entry["status"] as? String, "ps3 '\(name)': \(opened.status) (\(opened.reason ?? ""))")
            if opened.status == .senderUntrusted {
                #expect(opened.body == Placeholder.standard.untrustedSender && opened.title == Placeholder.standard.title)
            }
        }
    }

    /// ps3's repeats through two openers sharing one store file, as two instances of the
    /// extension in two processes share the App Group's: each arrival gets its status.
    @Test func aRepeatIsADuplicateAcrossTwoInstances() throws {
        let document = try Self.document("ps3")
        let store = try Self.authenticatedStore(document)
        for entry in document["repeat"] as! [[String: Any]] {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("seen-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = folder.appendingPathComponent("seen-messages").path
            let instances = [
                NotificationOpener(keys: store, seen: try SeenMessages(path: path)), NotificationOpener(keys: store, seen: try SeenMessages(path: path))
            ]
            let payloads = entry["payloads"] as! [String]
            let statuses = entry["statuses"] as! [String]
            for (index, (payload, status)) in zip(payloads, statuses).enumerated() {
                let opened = instances[index % 2].open(json: Data(payload.utf8))
                #expect(opened.status.rawValue == status, "'\(entry["name"] ?? "")' arrival \(index + 1): \(opened.reason ?? "")")
                if opened.status == .duplicate { #expect(opened.body == Placeholder.standard.duplicate) }
            }
        }
    }
}
