import Foundation
import Testing

/// Runs `script` with the `python3` first on PATH (Scripts/python-env.sh puts one there with
/// `cryptography`, `http_ece` and the other independent implementations the tests check
/// against); its stdout, trimmed, is the answer. A script that fails fails the test, with its
/// stderr in the message.
public func python(_ script: String, _ arguments: [String] = []) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script] + arguments
    let output = Pipe()
    // stderr to a file, so a chatty script cannot block on a pipe nobody reads yet.
    let errorPath = NSTemporaryDirectory() + "python-stderr-" + UUID().uuidString
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errorPath) }
    process.standardOutput = output
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let said = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
    #expect(process.terminationStatus == 0, "python3 failed: \(said)")
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
