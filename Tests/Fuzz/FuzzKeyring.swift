@testable import PushSeal

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyring(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    guard let keyring = try? KeyringFile.decode(bytes, path: "fuzz/keyring.json") else { return 0 }
    // A keyring that loads must survive a write and a read unchanged.
    let again = try! KeyringFile.decode(KeyringFile.encode(keyring), path: "fuzz/keyring.json")
    precondition(again.keys.map(\.id) == keyring.keys.map(\.id), "keyring changed on a round trip")
    precondition(again.keys.map(\.state) == keyring.keys.map(\.state), "key states changed on a round trip")
    precondition(keyring.keys.filter { $0.state == .primary }.count <= 1, "two primaries loaded")
    return 0
}
