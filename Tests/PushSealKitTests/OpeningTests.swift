import Foundation
import Testing

@testable import PushSealKit

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// The kit against published vectors (so its crypto is wired as the tests think) and against
/// payloads the `pushseal` binary sealed (PUSHSEAL_BIN, set by Scripts/device-test.sh).
@Suite("PushSealKit: opening what pushseal seals")
struct OpeningTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SealCryptoTests/Fixtures")

    static func hex(_ text: String) -> Data {
        var data = Data()
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            data.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return data
    }

    static func vectors(_ name: String) throws -> [[String: Any]] {
        let data = try Data(contentsOf: fixtures.appendingPathComponent(name))
        return (try JSONSerialization.jsonObject(with: data) as! [String: Any])["vectors"] as! [[String: Any]]
    }

    @Test func nistAESGCMVectorsOpenThroughTheLibrarysAESGCM() throws {
        var checked = 0
        for vector in try Self.vectors("nist-aes256-gcm.json") where (vector["iv"] as! String).count == 24 {
            let key = SymmetricKey(data: Self.hex(vector["key"] as! String))
            let combined = Self.hex(vector["iv"] as! String) + Self.hex(vector["ct"] as! String) + Self.hex(vector["tag"] as! String)
            let opened = try? AES.GCM.open(
                try AES.GCM.SealedBox(combined: combined), using: key,
                authenticating: Self.hex(vector["aad"] as! String))
            if vector["result"] as? String == "valid" {
                #expect(opened == Self.hex(vector["pt"] as! String))
            } else {
                #expect(opened == nil)
            }
            checked += 1
        }
        #expect(checked > 100)
    }

    @Test func rfc9180VectorsOpenThroughTheLibrarysHPKE() throws {
        var checked = 0
        for vector in try Self.vectors("hpke-p256-sha256-aes256gcm.json") where vector["mode"] as? Int == 0 {
            let key = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.hex(vector["skRm"] as! String))
            var recipient = try HPKE.Recipient(
                privateKey: key, ciphersuite: .P256_SHA256_AES_GCM_256,
                info: Self.hex(vector["info"] as! String), encapsulatedKey: Self.hex(vector["enc"] as! String))
            // The messages of one context, in order: each nonce is the sequence's.
            for encryption in vector["encryptions"] as! [[String: String]] {
                let opened = try recipient.open(Self.hex(encryption["ct"]!), authenticating: Self.hex(encryption["aad"]!))
                #expect(opened == Self.hex(encryption["pt"]!))
                checked += 1
            }
        }
        #expect(checked > 0)
    }

    @Test func envelopesThatAreNotOnesAreMalformed() {
        // Shorter than a nonce and a tag (ps1: 28 bytes) or a key and a tag (ps2: 81) is malformed, as the receiver says.
        for text in [
            "", "ps1", "ps3.abc.AAAA", "ps1.bad kid.AAAA", "ps1.abc.A", "ps1.abc.AA==", "ps1.abc.!!!!", "ps1.a.b.c", "ps1.abc.AAAA",
            "ps1.abc." + Base64URL.encode(Data(count: 27)), "ps2.abc." + Base64URL.encode(Data(count: 80))
        ] {
            #expect(throws: OpeningError.self) { try SealedEnvelope(parsing: text) }
        }
        #expect((try? SealedEnvelope(parsing: "ps1.3f9a0c1e." + Base64URL.encode(Data(count: 28))))?.header == "ps1.3f9a0c1e")
        #expect((try? SealedEnvelope(parsing: "ps2.3f9a0c1e." + Base64URL.encode(Data(count: 81))))?.header == "ps2.3f9a0c1e")
    }

    @Test func sharesParseAndACorruptedOneIsRefused() throws {
        let secret = try KeyShare.secret(parsing: "psk1.3f9a0c1e." + Base64URL.encode(Data(repeating: 7, count: 32)) + "\n")
        #expect(secret.kid == "3f9a0c1e")
        #expect(throws: OpeningError.self) { try KeyShare.secret(parsing: "psk1.3f9a0c1e." + Base64URL.encode(Data(repeating: 7, count: 31))) }
        #expect(throws: OpeningError.self) { try KeyShare.secret(parsing: "ppk1.3f9a0c1e.AAAA") }
        let device = P256.KeyAgreement.PrivateKey()
        let line = KeyShare.publicLine(kid: "phone", for: device)
        #expect(try KeyShare.publicKey(parsing: line).key.x963Representation == device.publicKey.x963Representation)
        var corrupted = Array(line.utf8)
        corrupted[corrupted.count - 3] = corrupted[corrupted.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: OpeningError.self) { try KeyShare.publicKey(parsing: String(decoding: corrupted, as: UTF8.self)) }
    }
}
