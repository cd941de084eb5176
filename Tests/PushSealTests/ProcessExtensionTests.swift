import Foundation
import PushSeal
import PushSealJSON
import PushSealReceiver
import Testing

/// An extension program's resources end with it: its memory check is gone once it is reaped,
/// however fast it exits.
@Suite("extension programs: the memory check ends with the program")
struct ProcessExtensionTests {
    @Test func aProgramThatExitsAtOnceLeavesNoMemoryCheckBehind() async throws {
        let processes = ExtensionProcesses(limit: 8)
        let settings = ProcessExtension.Settings(command: "true", processes: processes)
        let request = NotificationRequest(identifier: "A", content: NotificationContent(payload: JSONObject()))
        var leaked = 0
        // A program that exits before its watch would have been registered shows the leak
        // within a few hundred starts; each is reaped before its content is handed over.
        for _ in 0..<300 {
            let extensionUnderTest = ProcessExtension(settings: settings)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                extensionUnderTest.didReceive(request, contentHandler: ContentHandler { _, _ in done.resume() })
            }
            if extensionUnderTest.isWatchingMemory { leaked += 1 }
        }
        #expect(leaked == 0, "\(leaked) of 300 programs left their 100 Hz memory check running")
    }
}
