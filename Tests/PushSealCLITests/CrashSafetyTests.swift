import Foundation
import TestRandom
import Testing

@Suite("crash safety")
struct CrashSafetyTests {
    @Test func rotateKilledAtRandomPointsNeverTearsTheKeyring() async throws {
        let keyring = try KeyringFixture()
        var committed = Set<String>()
        // Replay a failure with PUSHSEAL_TEST_SEED=<the seed its messages name>.
        var generator = ReplayableRandom()
        let seed = generator.seed
        for round in 0..<40 {
            let rotate = Process()
            rotate.executableURL = URL(fileURLWithPath: pushsealBinary)
            rotate.arguments = ["keys", "rotate", "--keys", keyring.keys]
            rotate.standardOutput = FileHandle.nullDevice
            rotate.standardError = FileHandle.nullDevice
            try rotate.run()
            // Anywhere from before the lock to after the rename.
            try await Task.sleep(for: .microseconds(Int64.random(in: 0...6_000, using: &generator)))
            kill(rotate.processIdentifier, SIGKILL)
            rotate.waitUntilExit()

            let list = try keyring.keysCommand(["list", "--json"])
            #expect(list.status == 0, "seed \(seed), round \(round): \(list.stderr)")
            let keys = (try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8))) as? [[String: Any]] ?? []
            let kids = Set(keys.compactMap { $0["id"] as? String })
            #expect(kids.isSuperset(of: committed), "seed \(seed), round \(round) lost a committed key")
            #expect(keys.filter { $0["state"] as? String == "primary" }.count == 1, "seed \(seed), round \(round)")
            committed = kids
        }
        // Whatever a killed writer left behind is cleaned up by the next change.
        #expect(try keyring.keysCommand(["add"]).status == 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: keyring.keys).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
    }

    @Test func watcherKilledRepeatedlyLosesNothing() async throws {
        let sender = try KeyringFixture()
        let spool = TemporaryFolder()
        let staging = TemporaryFolder()
        let outputs = TemporaryFolder()
        let payloads = try sender.encrypt(["--batch"], stdin: (1...400).map { #"{"title":"n\#($0)"}"# }.joined(separator: "\n")).stdout.split(separator: "\n")
        var next = 0
        var generator = ReplayableRandom()
        let seed = generator.seed
        for round in 0..<5 {
            let watcher = Process()
            watcher.executableURL = URL(fileURLWithPath: pushsealBinary)
            watcher.arguments = ["receive", "--json", "--watch", spool.path, "--keys", sender.keys]
            outputs.write("run-\(round)", "")
            watcher.standardOutput = FileHandle(forWritingAtPath: outputs.file("run-\(round)"))
            try watcher.run()
            for _ in 0..<80 {
                let name = String(format: "%04d.json", next)
                staging.write(name, String(payloads[next]))
                try FileManager.default.moveItem(atPath: staging.file(name), toPath: spool.file(name))
                next += 1
            }
            try await Task.sleep(for: .milliseconds(Int64.random(in: 5...60, using: &generator)))
            kill(watcher.processIdentifier, SIGKILL)
            watcher.waitUntilExit()
        }
        let last = try pushseal(["receive", "--json", "--watch", spool.path, "--once", "--keys", sender.keys])
        var seen: [String: Int] = [:]
        for round in 0..<5 {
            for record in records(outputs.read("run-\(round)")) { seen[record["source"] as? String ?? "?", default: 0] += 1 }
        }
        for record in records(last.stdout) { seen[record["source"] as? String ?? "?", default: 0] += 1 }
        #expect(seen.count == 400, "seed \(seed)")
        #expect(seen.values.allSatisfy { $0 == 1 || $0 == 2 }, "seed \(seed)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.file("processed")).count == 400)
    }
}
