import Foundation
import SealCrypto
import TestRandom
import Testing

/// ES256 against Python's `cryptography`: it signs, we verify; we sign, it verifies.
@Suite("ES256 provider-token signatures")
struct ES256Tests {
    private let makeKey = """
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        key = ec.generate_private_key(ec.SECP256R1())
        print(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode())
        print(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode())
        """

    private func keyPair() throws -> (p8: String, publicKey: String) {
        let text = try python(makeKey)
        let end = text.range(of: "-----END PRIVATE KEY-----\n")!.upperBound
        return (String(text[..<end]), String(text[end...]).trimmingCharacters(in: .whitespacesAndNewlines) + "\n")
    }

    @Test func verifiesWhatPythonSigns() throws {
        let pair = try keyPair()
        let signature = try python(
            """
            import sys
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
            key = serialization.load_pem_private_key(sys.argv[1].encode(), password=None)
            r, s = decode_dss_signature(key.sign(b"header.claims", ec.ECDSA(hashes.SHA256())))
            print((r.to_bytes(32, "big") + s.to_bytes(32, "big")).hex())
            """, [pair.p8]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let raw = stride(from: 0, to: signature.count, by: 2).map { offset -> UInt8 in
            let start = signature.index(signature.startIndex, offsetBy: offset)
            return UInt8(signature[start..<signature.index(start, offsetBy: 2)], radix: 16)!
        }
        let message = Array("header.claims".utf8)
        for pem in [pair.publicKey, pair.p8] {
            let key = try ES256Key(pem: Array(pem.utf8))
            #expect(message.withUnsafeBytes { key.isValidSignature(raw, for: $0) })
            var tampered = raw
            tampered[10] ^= 1
            #expect(!message.withUnsafeBytes { key.isValidSignature(tampered, for: $0) })
            #expect(!Array("header.claimz".utf8).withUnsafeBytes { key.isValidSignature(raw, for: $0) })
        }
        let other = try ES256Key(pem: Array(try keyPair().publicKey.utf8))
        #expect(!message.withUnsafeBytes { other.isValidSignature(raw, for: $0) })
    }

    @Test func pythonVerifiesWhatWeSign() throws {
        let pair = try keyPair()
        let key = try ES256Key(pem: Array(pair.p8.utf8))
        #expect(key.canSign)
        let signature = try Array("header.claims".utf8).withUnsafeBytes { try key.signature(for: $0) }
        #expect(signature.count == 64)
        let verdict = try python(
            """
            import sys
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
            key = serialization.load_pem_public_key(sys.argv[1].encode())
            raw = bytes.fromhex(sys.argv[2])
            key.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                       b"header.claims", ec.ECDSA(hashes.SHA256()))
            print("verified")
            """, [pair.publicKey, signature.map { String(format: "%02x", $0) }.joined()])
        #expect(verdict == "verified")
        let publicKey = try ES256Key(pem: Array(pair.publicKey.utf8))
        #expect(!publicKey.canSign)
        #expect(throws: SealCryptoError.self) { try Array("x".utf8).withUnsafeBytes { try publicKey.signature(for: $0) } }
    }

    @Test func refusesWhatIsNotAP256Key() throws {
        for text in ["", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "not pem at all"] {
            #expect(throws: SealCryptoError.self) { try ES256Key(pem: Array(text.utf8)) }
        }
        let p384 = try python(
            """
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            print(ec.generate_private_key(ec.SECP384R1()).public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode())
            """)
        #expect(throws: SealCryptoError.self) { try ES256Key(pem: Array(p384.utf8)) }
    }

    /// A VAPID key: made here, kept as PKCS#8 PEM, read back the same; Python derives the
    /// same public point from the PEM and verifies a signature against it.
    @Test func aNewKeyIsKeptAsPEMAndItsPublicPointIsTheOnePythonReads() throws {
        let key = try ES256Key.generate()
        var pem = try key.privateKeyPEM()
        defer { SecureMemory.wipe(&pem) }
        #expect(String(decoding: pem, as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let again = try ES256Key(pem: pem)
        #expect(again.canSign && again.publicPoint == key.publicPoint && key.publicPoint.count == 65 && key.publicPoint[0] == 4)
        let message = Array("vapid".utf8)
        let signature = try message.withUnsafeBytes { try again.signature(for: $0) }
        let point = try python(
            """
            import sys
            from cryptography.hazmat.primitives import serialization, hashes
            from cryptography.hazmat.primitives.asymmetric import ec, utils
            key = serialization.load_pem_private_key(sys.argv[1].encode(), None)
            s = bytes.fromhex(sys.argv[2])
            key.public_key().verify(utils.encode_dss_signature(int.from_bytes(s[:32], "big"), int.from_bytes(s[32:], "big")), b"vapid", ec.ECDSA(hashes.SHA256()))
            print(key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint).hex())
            """, [String(decoding: pem, as: UTF8.self), signature.map { String(format: "%02x", $0) }.joined()])
        #expect(point == key.publicPoint.map { String(format: "%02x", $0) }.joined())
    }
}
