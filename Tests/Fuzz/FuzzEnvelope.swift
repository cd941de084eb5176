import PushSeal
import SealCrypto

// Seeds are sealed under this key, so mutations reach authentication, not just parsing.
let fuzzKeyring: Keyring = {
    var keyring = Keyring()
    _ = try! keyring.importShare(KeyShare(kid: "fuzzkey1", secret: SymmetricKey(bytes: [UInt8](repeating: 0x42, count: 32))), now: 0)
    return keyring
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let envelope = try? SealedEnvelope(utf8: bytes) else { return 0 }
    // Whatever parses must write back to the same text: one text per envelope.
    precondition(Array(envelope.text.utf8) == Array(bytes), "envelope text is not canonical")
    _ = try? PayloadOpener(keyring: fuzzKeyring).open(envelope, now: 0)
    return 0
}
