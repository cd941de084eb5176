import Foundation
@_spi(Testing) import SealCrypto
import Testing

/// Wycheproof's vectors (C2SP/wycheproof, extracted by Scripts/dev/extract-wycheproof-vectors.py)
/// for the two primitives pushseal's formats stand on: AES-256-GCM with 96-bit nonces and
/// 128-bit tags (ps1, and ps2's AEAD) and ECDH on P-256 (ps2's KEM). They add the edge cases
/// NIST's set has not: counter wrap-arounds, points off the curve, shared secrets at the
/// edges of the field.
struct WycheproofVector: Decodable, Sendable, CustomTestStringConvertible {
    let tcId: Int
    let comment: String
    let flags: [String]
    let result: String
    // AES-GCM
    let key: String?
    let iv: String?
    let aad: String?
    let msg: String?
    let ct: String?
    let tag: String?
    // ECDH
    let `public`: String?
    let `private`: String?
    let shared: String?

    var testDescription: String { "tcId \(tcId) (\(result)): \(comment)" }
}

private struct WycheproofFile: Decodable {
    let aesGcm: [WycheproofVector]
    let ecdh: [WycheproofVector]
}

private let wycheproof: WycheproofFile = {
    let url = Bundle.module.url(forResource: "wycheproof-aes256gcm-ecdh-p256", withExtension: "json", subdirectory: "Fixtures")!
    return try! JSONDecoder().decode(WycheproofFile.self, from: Data(contentsOf: url))
}()

@Suite("Wycheproof AES-256-GCM and ECDH P-256 vectors")
struct WycheproofTests {
    @Test func theFixtureHoldsBothPrimitivesWithValidAndInvalidCases() {
        #expect(wycheproof.aesGcm.count == 66 && wycheproof.ecdh.count == 355)
        #expect(Set(wycheproof.aesGcm.map(\.result)) == ["valid", "invalid"])
        #expect(wycheproof.ecdh.contains { $0.result == "invalid" })
    }

    @Test(arguments: wycheproof.aesGcm)
    func aesGCMSealsWhatIsValidAndOpensNothingElse(_ vector: WycheproofVector) throws {
        let key = try SymmetricKey(bytes: hexBytes(vector.key!))
        let aad = hexBytes(vector.aad!)
        if vector.result == "valid" {
            let box = try AESGCM.seal(hexBytes(vector.msg!), using: key, nonce: hexBytes(vector.iv!), authenticating: aad)
            #expect(Array(box.ciphertext) == hexBytes(vector.ct!) && Array(box.tag) == hexBytes(vector.tag!))
            #expect(try AESGCM.open(box, using: key, authenticating: aad) == hexBytes(vector.msg!))
        } else {
            // An altered tag or ciphertext: no plaintext comes back, whatever the reason given.
            #expect(throws: SealCryptoError.self) {
                let box = try SealedBox(nonce: hexBytes(vector.iv!), ciphertext: hexBytes(vector.ct!), tag: hexBytes(vector.tag!))
                _ = try AESGCM.open(box, using: key, authenticating: aad)
            }
        }
    }

    @Test(arguments: wycheproof.ecdh)
    func ecdhAgreesOnValidPointsAndRefusesTheRest(_ vector: WycheproofVector) throws {
        // The scalar as 32 big-endian bytes: Wycheproof writes it as a signed integer.
        var scalar = Array(hexBytes(vector.private!).drop { $0 == 0 })
        scalar = [UInt8](repeating: 0, count: max(0, 32 - scalar.count)) + scalar
        let privateKey = try P256PrivateKey(scalar: scalar)
        let point = hexBytes(vector.public!)
        if vector.result == "invalid" {
            #expect(throws: SealCryptoError.self) { _ = try privateKey.sharedSecret(with: try P256PublicKey(x963Representation: point)) }
            return
        }
        // ps2 carries uncompressed points only (65 bytes); a compressed one is refused, never misread.
        if point.first != 0x04 {
            #expect(throws: SealCryptoError.self) { _ = try P256PublicKey(x963Representation: point) }
            return
        }
        let shared = try privateKey.sharedSecret(with: try P256PublicKey(x963Representation: point))
        #expect(shared.withUnsafeBytes { Array($0) } == hexBytes(vector.shared!))
    }
}
