import PushSeal
import SealCrypto

// Seeds are sealed under these keys (ps1 under fuzzkey1's secret, ps2 to fuzzkey2's
// pair, ps3 to it too, vouched for by fuzzsend's sender key, which this keyring holds as its
// own), so mutations reach authentication, not just parsing.
let fuzzKeyring: Keyring = {
    var keyring = Keyring()
    _ = try! keyring.importShare(KeyShare(kid: "fuzzkey1", secret: SymmetricKey(bytes: [UInt8](repeating: 0x42, count: 32))), now: 0)
    let pair = try! P256PrivateKey(scalar: [UInt8](repeating: 0x42, count: 32))
    return Keyring(
        keys: keyring.keys + [
            KeyEntry(
                id: "fuzzkey2", kind: .private, privateKey: pair, publicKey: nil,
                state: .enabled, created: 0),
            KeyEntry(
                id: "fuzzsend", kind: .sender, privateKey: try! P256PrivateKey(scalar: [UInt8](repeating: 0x43, count: 32)), publicKey: nil,
                state: .primary, created: 0)
        ])
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let envelope = try? SealedEnvelope(utf8: bytes) else { return 0 }
    // Whatever parses must write back to the same text: one text per envelope.
    precondition(Array(envelope.text.utf8) == Array(bytes), "envelope text is not canonical")
    let opener = PayloadOpener(keyring: fuzzKeyring)
    guard (try? opener.open(envelope, now: 0)) != nil else { return 0 }
    // It opened: then a changed character anywhere (one chosen by the input, and the last,
    // where only padding bits may differ) must never open, in header, kid or box.
    let text = Array(bytes)
    for position in Set([size % text.count, text.count - 1, text.count / 2]) {
        var changed = text
        changed[position] = changed[position] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let opened = changed.withUnsafeBytes { raw in
            (try? SealedEnvelope(utf8: raw)).flatMap { try? opener.open($0, now: 0) }
        }
        precondition(opened == nil, "an envelope with a changed character at \(position) still opened")
    }
    return 0
}
