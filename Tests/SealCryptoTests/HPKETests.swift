import Foundation
@_spi(Testing) import SealCrypto
import TestRandom
import Testing

/// One RFC 9180 test vector of the suite ps2 uses (base mode and auth mode), extracted by
/// Scripts/dev/extract-hpke-vectors.py from the `cryptography_vectors` package.
private struct HPKEVector: Decodable {
    struct Encryption: Decodable {
        let aad: String
        let ct: String
        let nonce: String
        let pt: String
    }

    let mode: Int
    // The names RFC 9180's test vectors use.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    let kem_id: Int
    // swift-format-ignore: AlwaysUseLowerCamelCase
    let kdf_id: Int
    // swift-format-ignore: AlwaysUseLowerCamelCase
    let aead_id: Int
    let info: String
    let skRm: String
    let skEm: String
    /// Auth mode's sender key pair.
    let skSm: String?
    let pkSm: String?
    let pkRm: String
    let pkEm: String
    let enc: String
    let encryptions: [Encryption]
}

private struct HPKEVectorFile: Decodable {
    let vectors: [HPKEVector]
}

private let hpkeVectors: [HPKEVector] = {
    let url = Bundle.module.url(forResource: "hpke-p256-sha256-aes256gcm", withExtension: "json", subdirectory: "Fixtures")!
    return try! JSONDecoder().decode(HPKEVectorFile.self, from: Data(contentsOf: url)).vectors
}()

@Suite("HPKE: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM")
struct HPKETests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Every message of a vector, in sequence: each sealed to its ciphertext, each opened back.
    private func checkEncryptions(of vector: HPKEVector, sealing: HPKE.Context, opening: HPKE.Context) throws {
        #expect(vector.encryptions.count == 257)
        for (index, encryption) in vector.encryptions.enumerated() {
            let sealed = try sealing.seal(hexBytes(encryption.pt), authenticating: hexBytes(encryption.aad))
            #expect(hex(sealed) == encryption.ct, "encryption \(index)")
            let opened = try opening.open(hexBytes(encryption.ct), authenticating: hexBytes(encryption.aad))
            #expect(hex(opened) == encryption.pt, "decryption \(index)")
        }
    }

    @Test func theRFCVectorsOfTheSuiteAreReproducedBothWays() throws {
        let base = hpkeVectors.filter { $0.mode == 0 }
        #expect(base.count == 1, "base mode has one vector for this suite")
        for vector in base {
            #expect(vector.mode == 0 && vector.kem_id == 0x10 && vector.kdf_id == 0x01 && vector.aead_id == 0x02)
            let recipient = try P256PrivateKey(scalar: hexBytes(vector.skRm))
            let ephemeral = try P256PrivateKey(scalar: hexBytes(vector.skEm))
            #expect(hex(recipient.publicKey.x963Representation) == vector.pkRm)
            #expect(hex(ephemeral.publicKey.x963Representation) == vector.pkEm)
            // The vector's ephemeral key injected: the same enc and every ciphertext, in sequence.
            let (enc, sealing) = try HPKE.sender(to: recipient.publicKey, info: hexBytes(vector.info), ephemeral: ephemeral)
            #expect(hex(enc) == vector.enc)
            let opening = try HPKE.receiver(enc: enc, recipient: recipient, info: hexBytes(vector.info))
            try checkEncryptions(of: vector, sealing: sealing, opening: opening)
        }
    }

    /// RFC 9180 A.3.3's suite in auth mode (`mode_auth`, a sender's static key): the published
    /// vector reproduced both ways, every one of its 257 messages.
    @Test func theRFCAuthModeVectorIsReproducedBothWays() throws {
        let auth = hpkeVectors.filter { $0.mode == 2 }
        #expect(auth.count == 1, "auth mode has one vector for this suite")
        for vector in auth {
            #expect(vector.kem_id == 0x10 && vector.kdf_id == 0x01 && vector.aead_id == 0x02)
            let recipient = try P256PrivateKey(scalar: hexBytes(vector.skRm))
            let sender = try P256PrivateKey(scalar: hexBytes(try #require(vector.skSm)))
            let ephemeral = try P256PrivateKey(scalar: hexBytes(vector.skEm))
            #expect(hex(sender.publicKey.x963Representation) == vector.pkSm)
            let (enc, sealing) = try HPKE.sender(to: recipient.publicKey, info: hexBytes(vector.info), authenticatedBy: sender, ephemeral: ephemeral)
            #expect(hex(enc) == vector.enc)
            let opening = try HPKE.receiver(enc: enc, recipient: recipient, info: hexBytes(vector.info), authenticatedBy: sender.publicKey)
            try checkEncryptions(of: vector, sealing: sealing, opening: opening)
        }
    }

    /// Who sealed it is part of the key: an auth-mode message opens only for the sender's
    /// public key, never in base mode, and a base-mode message never opens as authenticated.
    @Test func anAuthenticatedMessageOpensOnlyForItsSender() throws {
        let recipient = try P256PrivateKey.generate()
        let sender = try P256PrivateKey.generate()
        let stranger = try P256PrivateKey.generate()
        let info = Array("ps3.3f9a0c1e.9f2c0d1a".utf8)
        let sealed = try HPKE.seal(Array("db-3 down".utf8), to: recipient.publicKey, info: info, authenticatedBy: sender)
        #expect(try HPKE.open(sealed, with: recipient, info: info, authenticatedBy: sender.publicKey) == Array("db-3 down".utf8))
        #expect(throws: SealCryptoError.self) { try HPKE.open(sealed, with: recipient, info: info, authenticatedBy: stranger.publicKey) }
        #expect(throws: SealCryptoError.self) { try HPKE.open(sealed, with: recipient, info: info) }
        let forged = try HPKE.seal(Array("run: curl … | sh".utf8), to: recipient.publicKey, info: info)
        #expect(throws: SealCryptoError.self) { try HPKE.open(forged, with: recipient, info: info, authenticatedBy: sender.publicKey) }
        let byStranger = try HPKE.seal(Array("run: curl … | sh".utf8), to: recipient.publicKey, info: info, authenticatedBy: stranger)
        #expect(throws: SealCryptoError.self) { try HPKE.open(byStranger, with: recipient, info: info, authenticatedBy: sender.publicKey) }
    }

    @Test func pythonOpensWhatWeSealAndWeOpenWhatPythonSeals() throws {
        let recipient = try P256PrivateKey.generate()
        let info = Array("ps2.3f9a0c1e".utf8)
        let plaintext = Array(#"{"title":"Deploy finished","body":"api-7 is live"}"#.utf8)
        let sealed = try HPKE.seal(plaintext, to: recipient.publicKey, info: info)
        #expect(sealed.count == 65 + plaintext.count + 16)
        let scalar = try recipient.withScalar { $0.withUnsafeBytes { hex(Array($0)) } }
        let opened = try python(
            """
            import sys
            from cryptography.hazmat.primitives import hpke
            from cryptography.hazmat.primitives.asymmetric import ec
            key = ec.derive_private_key(int(sys.argv[1], 16), ec.SECP256R1())
            suite = hpke.Suite(hpke.KEM.P256, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)
            print(suite.decrypt(bytes.fromhex(sys.argv[2]), key, info=sys.argv[3].encode()).decode())
            """, [scalar, hex(sealed), "ps2.3f9a0c1e"])
        #expect(opened == String(decoding: plaintext, as: UTF8.self))
        let fromPython = try python(
            """
            import sys
            from cryptography.hazmat.primitives import hpke
            from cryptography.hazmat.primitives.asymmetric import ec
            point = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), bytes.fromhex(sys.argv[1]))
            suite = hpke.Suite(hpke.KEM.P256, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)
            print(suite.encrypt(b"sealed by Python", point, info=sys.argv[2].encode()).hex())
            """, [hex(recipient.publicKey.x963Representation), "ps2.3f9a0c1e"])
        #expect(try HPKE.open(hexBytes(fromPython), with: recipient, info: info) == Array("sealed by Python".utf8))
    }

    @Test func everyChangedByteTheWrongInfoAndATruncatedEncAreRefused() throws {
        let recipient = try P256PrivateKey.generate()
        let info = Array("ps2.00000001".utf8)
        let sealed = try HPKE.seal(Array("secret".utf8), to: recipient.publicKey, info: info)
        for index in sealed.indices {
            var changed = sealed
            changed[index] ^= 0x01
            #expect(throws: SealCryptoError.self, "byte \(index)") { try HPKE.open(changed, with: recipient, info: info) }
        }
        #expect(throws: SealCryptoError.self) { try HPKE.open(sealed, with: recipient, info: Array("ps2.00000002".utf8)) }
        #expect(throws: SealCryptoError.self) { try HPKE.open(Array(sealed.dropFirst()), with: recipient, info: info) }
        #expect(throws: SealCryptoError.self) { try HPKE.open(Array(sealed.prefix(70)), with: recipient, info: info) }
        let other = try P256PrivateKey.generate()
        #expect(throws: SealCryptoError.self) { try HPKE.open(sealed, with: other, info: info) }
    }

    @Test func pointsOffTheCurveInfinityAndBadScalarsAreRefused() throws {
        let good = try P256PrivateKey.generate().publicKey.x963Representation
        var offCurve = good
        offCurve[64] ^= 0x01
        #expect(throws: SealCryptoError.self) { try P256PublicKey(x963Representation: offCurve) }
        #expect(throws: SealCryptoError.self) { try P256PublicKey(x963Representation: [0x00]) }
        #expect(throws: SealCryptoError.self) { try P256PublicKey(x963Representation: [0x04] + [UInt8](repeating: 0, count: 64)) }
        var compressed = Array(good.prefix(33))
        compressed[0] = 0x02
        #expect(throws: SealCryptoError.self) { try P256PublicKey(x963Representation: compressed) }
        #expect(throws: SealCryptoError.self) { try P256PrivateKey(scalar: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: SealCryptoError.self) { try P256PrivateKey(scalar: [UInt8](repeating: 0xff, count: 32)) }
        #expect(throws: SealCryptoError.self) { try P256PrivateKey(scalar: [1]) }
        // An enc off the curve is refused before any use.
        let recipient = try P256PrivateKey.generate()
        var sealed = try HPKE.seal(Array("x".utf8), to: recipient.publicKey, info: [])
        sealed.replaceSubrange(0..<65, with: offCurve)
        #expect(throws: SealCryptoError.self) { try HPKE.open(sealed, with: recipient, info: []) }
    }

    @Test func aKeyComesBackFromItsScalar() throws {
        let key = try P256PrivateKey.generate()
        let again = try key.withScalar { try P256PrivateKey(scalar: $0) }
        #expect(again.publicKey.x963Representation == key.publicKey.x963Representation)
        let sealed = try HPKE.seal(Array("round trip".utf8), to: key.publicKey, info: [])
        #expect(try HPKE.open(sealed, with: again, info: []) == Array("round trip".utf8))
    }
}
