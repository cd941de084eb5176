import Foundation
import SealCrypto
import Testing

/// One NIST CAVS AES-256-GCM case (96-bit IV, 128-bit tag), extracted by
/// Scripts/dev/extract-gcm-vectors.py from the `cryptography_vectors` package.
struct GCMVector: Decodable, CustomTestStringConvertible, Sendable {
    let file: String
    let count: Int
    let key: String
    let iv: String
    let aad: String
    let pt: String
    let ct: String
    let tag: String
    let result: String

    var testDescription: String { "\(file) #\(count) (\(result))" }
}

private struct VectorFile: Decodable {
    let vectors: [GCMVector]
}

func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

let nistVectors: [GCMVector] = {
    let url = Bundle.module.url(forResource: "nist-aes256-gcm", withExtension: "json", subdirectory: "Fixtures")!
    return try! JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url)).vectors
}()

@Suite("NIST AES-256-GCM vectors")
struct NISTVectorTests {
    @Test func fixtureHoldsValidAndInvalidCases() {
        #expect(nistVectors.count == 750)
        #expect(nistVectors.contains { $0.result == "invalid" })
    }

    @Test(arguments: nistVectors.filter { $0.result == "valid" })
    func validVectorSealsAndOpens(_ vector: GCMVector) throws {
        let key = try SymmetricKey(bytes: hexBytes(vector.key))
        let box = try AESGCM.seal(
            hexBytes(vector.pt), using: key, nonce: hexBytes(vector.iv),
            authenticating: hexBytes(vector.aad))
        #expect(Array(box.ciphertext) == hexBytes(vector.ct))
        #expect(Array(box.tag) == hexBytes(vector.tag))
        let opened = try AESGCM.open(box, using: key, authenticating: hexBytes(vector.aad))
        #expect(opened == hexBytes(vector.pt))
    }

    @Test(arguments: nistVectors.filter { $0.result == "invalid" })
    func invalidVectorIsRejected(_ vector: GCMVector) throws {
        let key = try SymmetricKey(bytes: hexBytes(vector.key))
        let box = try SealedBox(nonce: hexBytes(vector.iv), ciphertext: hexBytes(vector.ct), tag: hexBytes(vector.tag))
        #expect(throws: SealCryptoError(.authenticationFailed, "")) {
            try AESGCM.open(box, using: key, authenticating: hexBytes(vector.aad))
        }
    }
}
