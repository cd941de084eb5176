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
}
