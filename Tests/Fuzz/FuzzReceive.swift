import Dispatch
import PushSeal
import PushSealJSON
import PushSealReceiver
import SealCrypto
import Synchronization

let fuzzKeys: Keyring = {
    var keyring = Keyring()
    _ = try! keyring.importShare(KeyShare(kid: "fuzzkey1", secret: SymmetricKey(bytes: [UInt8](repeating: 0x42, count: 32))), now: 0)
    return keyring
}()
let fuzzRunner = ExtensionRunner(timing: ExtensionRunner.Timing(budget: .seconds(5), expiryGrace: .seconds(1))) {
    DecryptingExtension(keys: FixedKeySource(fuzzKeys), settings: DecryptingExtension.Settings(now: { 0 }))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReceive(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let records = Mutex<[Int]>([])
    let receiver = OrderedReceiver(
        runner: fuzzRunner, maximumInFlight: 4,
        render: { record -> Int in
            var line: [UInt8] = []
            record.writeJSON(to: &line, envelopeField: "enc")
            precondition((try? JSONParser.parse(line)) != nil, "a record is not valid JSON")
            _ = record.text
            return record.seq
        }, emit: { seq in records.withLock { $0.append(seq) } })
    receiver.submit(source: "fuzz", bytes: UnsafeRawBufferPointer(start: data, count: size))
    receiver.finish()
    precondition(records.withLock { $0 } == [1], "an input did not yield exactly one record")
    return 0
}
