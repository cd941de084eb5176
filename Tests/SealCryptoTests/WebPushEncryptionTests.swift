import TestRandom
import Testing

@testable import SealCrypto

/// RFC 8291's message encryption: its published example byte for byte, and what is sealed
/// here opened by `http_ece`, an independent implementation (Scripts/python-env.sh installs it).
@Suite("Web Push message encryption (RFC 8291)")
struct WebPushEncryptionTests {
    // RFC 8291 Appendix A: published test data, not credentials.
    static let message = Array("When I grow up, I want to be a watermelon".utf8)
    static let senderScalar = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let subscriberScalar = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let subscriberKey = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func bytes(_ text: String) throws -> [UInt8] { try Base64.decode(text, alphabet: .url) }

    @Test func theRFCsExampleIsSealedByteForByte() throws {
        let sealed = try WebPushEncryption.seal(
            Self.message, to: try P256PublicKey(x963Representation: try Self.bytes(Self.subscriberKey)), auth: try Self.bytes(Self.auth),
            ephemeral: try P256PrivateKey(scalar: try Self.bytes(Self.senderScalar)), salt: try Self.bytes(Self.salt))
        #expect(sealed == (try Self.bytes(Self.body)))
        #expect(sealed.count == WebPushEncryption.sealedByteCount(Self.message.count))
    }

    @Test func theRFCsExampleOpensAndATamperedOneDoesNot() throws {
        let subscriber = try P256PrivateKey(scalar: try Self.bytes(Self.subscriberScalar))
        #expect(try WebPushEncryption.open(try Self.bytes(Self.body), with: subscriber, auth: try Self.bytes(Self.auth)) == Self.message)
        var tampered = try Self.bytes(Self.body)
        tampered[tampered.count - 20] ^= 0x01
        #expect(throws: SealCryptoError(.authenticationFailed, "")) {
            try WebPushEncryption.open(tampered, with: subscriber, auth: try Self.bytes(Self.auth))
        }
        var otherAuth = try Self.bytes(Self.auth)
        otherAuth[0] ^= 0x80
        #expect(throws: SealCryptoError(.authenticationFailed, "")) { try WebPushEncryption.open(try Self.bytes(Self.body), with: subscriber, auth: otherAuth) }
    }

    @Test func eachMessageHasItsOwnKeyAndSaltAndHttpEceOpensIt() throws {
        let subscriber = try P256PrivateKey.generate()
        let auth = try SecureRandom.bytes(count: 16)
        let message = Array(#"ps1.k1.AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"#.utf8)
        let first = try WebPushEncryption.seal(message, to: subscriber.publicKey, auth: auth)
        let second = try WebPushEncryption.seal(message, to: subscriber.publicKey, auth: auth)
        #expect(first[..<86] != second[..<86], "a fresh salt and sender key each time")
        let scalar = try subscriber.withScalar { $0.withUnsafeBytes { Array($0) } }
        let opened = try python(
            """
            import base64, sys, http_ece
            from cryptography.hazmat.primitives.asymmetric import ec
            b = lambda s: base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
            key = ec.derive_private_key(int.from_bytes(b(sys.argv[1]), "big"), ec.SECP256R1())
            print(http_ece.decrypt(b(sys.argv[3]), private_key=key, auth_secret=b(sys.argv[2]), version="aes128gcm").decode())
            """, [Base64.encode(scalar, alphabet: .url), Base64.encode(auth, alphabet: .url), Base64.encode(first, alphabet: .url)])
        #expect(opened == String(decoding: message, as: UTF8.self))
        #expect(try WebPushEncryption.open(second, with: subscriber, auth: auth) == message)
    }

    @Test func aMessageTooLargeForAPushServiceIsRefusedSayingByHowMuch() throws {
        let subscriber = try P256PrivateKey.generate()
        let most = [UInt8](repeating: 0x61, count: WebPushEncryption.maximumMessageByteCount)
        #expect(try WebPushEncryption.seal(most, to: subscriber.publicKey, auth: [UInt8](repeating: 1, count: 16)).count == 4096)
        #expect {
            try WebPushEncryption.seal(most + [0x61, 0x61], to: subscriber.publicKey, auth: [UInt8](repeating: 1, count: 16))
        } throws: { "\($0)".contains("2 over") }
        #expect(throws: SealCryptoError(.invalidKeySize, "")) { try WebPushEncryption.seal(most, to: subscriber.publicKey, auth: [1, 2, 3]) }
    }
}
