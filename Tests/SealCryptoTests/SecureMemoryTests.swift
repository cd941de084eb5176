import Testing

@testable import SealCrypto

/// Secret text is searched as bytes, so no unwiped `String` copy of a key is made.
@Suite("secure memory: searching key text in place")
struct SecureMemoryTests {
    @Test func findsAMarkerWhereverItLies() {
        let pem = Array("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n".utf8)
        #expect(SecureMemory.contains(pem, "-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        #expect(SecureMemory.contains(pem, "MIIB\n"))
        #expect(SecureMemory.contains(pem.prefix(12), "-----BEGIN"))
        #expect(SecureMemory.contains(pem[5...], "BEGIN ENCRYPTED"))
    }

    @Test func aMarkerThatIsNotWhollyThereIsNotFound() {
        let pem = Array("-----BEGIN PRIVATE KEY-----\n".utf8)
        #expect(!SecureMemory.contains(pem, "ENCRYPTED"))
        #expect(!SecureMemory.contains(pem, "PRIVATE KEY-----\nX"))
        #expect(!SecureMemory.contains([UInt8](), "-"))
        #expect(!SecureMemory.contains(Array("Proc-Type: 4,ENCRYPTE".utf8), "Proc-Type: 4,ENCRYPTED"))
    }
}
