import Foundation
import SealCrypto
import Testing

@Suite("AES-GCM sealing")
struct AESGCMTests {
    let key = try! SymmetricKey(bytes: [UInt8](repeating: 7, count: 32))

    /// The public edge takes any collection of bytes, as swift-crypto takes DataProtocol:
    /// Foundation's Data, slices, a String's UTF-8, and collections that are not contiguous.
    @Test func thePublicEdgeTakesAnyCollectionOfBytes() throws {
        let plaintext = Data("the disk is full".utf8)
        let box = try AESGCM.seal(plaintext, using: key, authenticating: "ps1.kid".utf8)
        #expect(try AESGCM.open(box, using: key, authenticating: Array("ps1.kid".utf8)[...]) == Array(plaintext))
        let backwards = try AESGCM.seal(Array("lluf si ksid eht".utf8).reversed(), using: key)
        #expect(try AESGCM.open(backwards, using: key) == Array(plaintext))
        #expect(try SealedBox(combined: Data(box.combined)) == box)
        #expect(try SealedBox(nonce: box.nonce, ciphertext: box.ciphertext, tag: Data(box.tag)) == box)

        let recipient = try P256PrivateKey.generate()
        let message = try HPKE.seal(plaintext, to: recipient.publicKey, info: "info".utf8)
        #expect(try HPKE.open(message[...], with: recipient, info: Data("info".utf8)) == Array(plaintext))
        let point = try P256PublicKey(x963Representation: Data(recipient.publicKey.x963Representation))
        #expect(point.x963Representation == recipient.publicKey.x963Representation)
    }

    @Test func roundTripWithAssociatedData() throws {
        let message = Array("the disk is full".utf8)
        let box = try AESGCM.seal(message, using: key, authenticating: Array("ps1.kid".utf8))
        #expect(box.combined.count == 12 + message.count + 16)
        #expect(try AESGCM.open(box, using: key, authenticating: Array("ps1.kid".utf8)) == message)
    }

    @Test func freshNonceEveryTime() throws {
        let first = try AESGCM.seal([1, 2, 3], using: key)
        let second = try AESGCM.seal([1, 2, 3], using: key)
        #expect(first.nonce != second.nonce)
        #expect(first.combined != second.combined)
    }

    @Test func everyFlippedBitIsRejected() throws {
        let box = try AESGCM.seal(Array("secret text".utf8), using: key, authenticating: [9])
        for index in box.combined.indices {
            var altered = box.combined
            altered[index] ^= 0x01
            #expect(throws: SealCryptoError(.authenticationFailed, "")) {
                try AESGCM.open(try SealedBox(combined: altered), using: key, authenticating: [9])
            }
        }
    }

    /// Opening into the caller's memory: the plaintext when the tag verifies, and nothing
    /// but zeros when it does not, whatever the memory held before.
    @Test func openingIntoABufferReleasesNothingWhenTheTagFails() throws {
        let message = Array("the disk is full".utf8)
        let box = try AESGCM.seal(message, using: key, authenticating: [9])
        var plaintext = [UInt8](repeating: 0xAA, count: AESGCM.plaintextByteCount(box.combined.count))
        try box.combined.withUnsafeBytes { combined in
            try [UInt8]([9]).withUnsafeBytes { aad in
                try plaintext.withUnsafeMutableBytes { try AESGCM.open(combined: combined, using: key, authenticating: aad, into: $0) }
            }
        }
        #expect(plaintext == message)
        for index in [0, 12, box.combined.count - 1] {
            var altered = box.combined
            altered[index] ^= 0x01
            var output = [UInt8](repeating: 0xAA, count: message.count)
            #expect(throws: SealCryptoError(.authenticationFailed, "")) {
                try altered.withUnsafeBytes { combined in
                    try [UInt8]([9]).withUnsafeBytes { aad in
                        try output.withUnsafeMutableBytes { try AESGCM.open(combined: combined, using: key, authenticating: aad, into: $0) }
                    }
                }
            }
            #expect(output.allSatisfy { $0 == 0 }, "byte \(index) altered")
        }
        #expect(throws: SealCryptoError(.invalidSealedBox, "")) {
            try [UInt8](repeating: 0, count: 27).withUnsafeBytes { combined in
                try AESGCM.open(
                    combined: combined, using: key, authenticating: UnsafeRawBufferPointer(start: nil, count: 0),
                    into: UnsafeMutableRawBufferPointer(start: nil, count: 0))
            }
        }
    }

    @Test func otherAssociatedDataOrKeyIsRejected() throws {
        let box = try AESGCM.seal(Array("secret".utf8), using: key, authenticating: Array("ps1.a".utf8))
        #expect(throws: SealCryptoError(.authenticationFailed, "")) {
            try AESGCM.open(box, using: key, authenticating: Array("ps1.b".utf8))
        }
        let other = try SymmetricKey.generate()
        #expect(throws: SealCryptoError(.authenticationFailed, "")) {
            try AESGCM.open(box, using: other, authenticating: Array("ps1.a".utf8))
        }
    }

    @Test func truncatedTagOrNonceIsRefused() throws {
        #expect(throws: SealCryptoError(.invalidSealedBox, "")) {
            try SealedBox(nonce: [UInt8](repeating: 0, count: 12), ciphertext: [1], tag: [UInt8](repeating: 0, count: 15))
        }
        #expect(throws: SealCryptoError(.invalidNonceSize, "")) {
            try SealedBox(nonce: [UInt8](repeating: 0, count: 11), ciphertext: [1], tag: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: SealCryptoError(.invalidSealedBox, "")) {
            try SealedBox(combined: [UInt8](repeating: 0, count: 27))
        }
    }

    @Test func tagOnlyBoxOpensToEmptyPlaintext() throws {
        let box = try AESGCM.seal([], using: key)
        #expect(box.combined.count == 28)
        #expect(try AESGCM.open(box, using: key).isEmpty)
    }

    @Test func keyMustBe32Bytes() {
        #expect(throws: SealCryptoError(.invalidKeySize, "")) { try SymmetricKey(bytes: [UInt8](repeating: 1, count: 16)) }
    }

    @Test func protectingTheProcessMakesItNonDumpable() throws {
        #expect(SecureMemory.protectProcess())
        #expect(SecureMemory.isProcessDumpable == false)
    }

    @Test func aKeyIsUsableFromManyThreadsAtOnce() async throws {
        let box = try AESGCM.seal(Array("shared".utf8), using: key)
        let key = key
        try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<32 { group.addTask { try AESGCM.open(box, using: key) } }
            for try await opened in group { #expect(opened == Array("shared".utf8)) }
        }
    }

    @Test func wipeZeroesEveryByte() {
        var bytes: [UInt8] = Array(1...64)
        SecureMemory.wipe(&bytes)
        #expect(bytes == [UInt8](repeating: 0, count: 64))
    }

    @Test func keyComparisonIsByBytes() throws {
        let same = try SymmetricKey(bytes: [UInt8](repeating: 7, count: 32))
        #expect(key.hasSameBytes(as: same))
        #expect(!key.hasSameBytes(as: try SymmetricKey.generate()))
    }
}

@Suite("base64")
struct Base64Tests {
    // RFC 4648 §10 test vectors.
    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")
    ])
    func rfc4648Vectors(plain: String, encoded: String) throws {
        #expect(Base64.encode(Array(plain.utf8), alphabet: .standard) == encoded)
        #expect(try Base64.decode(encoded, alphabet: .standard) == Array(plain.utf8))
        let url = encoded.replacingOccurrences(of: "=", with: "")
        #expect(Base64.encode(Array(plain.utf8), alphabet: .url) == url)
        #expect(try Base64.decode(url, alphabet: .url) == Array(plain.utf8))
    }

    @Test func urlAlphabetUsesDashAndUnderscore() throws {
        #expect(Base64.encode([0xFB, 0xFF], alphabet: .url) == "-_8")
        #expect(Base64.encode([0xFB, 0xFF], alphabet: .standard) == "+/8=")
    }

    @Test(arguments: ["Zg=", "Zm9v!", "Zh", "Z", "Zm8=", "ab+c", "a b"])
    func nonCanonicalOrForeignTextIsRefused(_ text: String) {
        #expect(throws: SealCryptoError(.invalidEncoding, "")) { try Base64.decode(text, alphabet: .url) }
    }

    /// The table paths (three bytes to four characters, four characters to three bytes)
    /// against Foundation's coder, at every length and with every byte value.
    @Test func matchesFoundationAtEveryLengthAndByte() throws {
        for length in 0..<260 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ length) }
            let standard = Data(bytes).base64EncodedString()
            #expect(Base64.encode(bytes, alphabet: .standard) == standard)
            #expect(try Base64.decode(standard, alphabet: .standard) == bytes)
            let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64.encode(bytes, alphabet: .url) == url)
            #expect(try Base64.decode(url, alphabet: .url) == bytes)
        }
    }

    /// A byte outside the alphabet is refused wherever it stands: in a whole group of four
    /// or in the tail.
    @Test func aForeignByteAnywhereIsRefused() {
        let text = Array(Base64.encode([UInt8](repeating: 0xA5, count: 61), alphabet: .url).utf8)
        for position in text.indices {
            for foreign: UInt8 in [0x00, 0x2B, 0x2E, 0x2F, 0x3D, 0x7F, 0x80, 0xFF] {
                var altered = text
                altered[position] = foreign
                #expect(throws: SealCryptoError(.invalidEncoding, "")) {
                    try altered.withUnsafeBytes { try Base64.decode($0, alphabet: .url) }
                }
            }
        }
    }

    @Test func roundTripsAllLengths() throws {
        for length in 0..<70 {
            let bytes = try SecureRandom.bytes(count: length)
            #expect(try Base64.decode(Base64.encode(bytes, alphabet: .url), alphabet: .url) == bytes)
            #expect(try Base64.decode(Base64.encode(bytes, alphabet: .standard), alphabet: .standard) == bytes)
        }
    }
}
