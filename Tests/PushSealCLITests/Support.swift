import Foundation

/// What one run of the built `pushseal` binary did.
struct Run: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// The built `pushseal` binary, which SwiftPM places beside the test bundle.
let pushsealBinary: String = {
    if let override = ProcessInfo.processInfo.environment["PUSHSEAL_BIN"] { return override }
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var folder = executable.deletingLastPathComponent()
    // The test runner may sit inside a .xctest bundle folder.
    if folder.lastPathComponent.hasSuffix(".xctest") { folder.deleteLastPathComponent() }
    return folder.appendingPathComponent("pushseal").path
}()

/// A private temporary folder, removed when the value is released.
final class TemporaryFolder: Sendable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "pushseal-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String) {
        _ = FileManager.default.createFile(atPath: file(name), contents: Data(text.utf8))
    }

    func read(_ name: String) -> String {
        (try? String(contentsOfFile: file(name), encoding: .utf8)) ?? ""
    }
}

/// Runs `pushseal` with `arguments`, feeding `stdin`; output goes through files so large
/// outputs cannot fill a pipe and stall the test.
func pushseal(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Run {
    try runProcess(pushsealBinary, arguments, stdin: stdin, environment: environment)
}

func runProcess(_ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Run {
    let scratch = TemporaryFolder()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var inherited = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHSEAL_") }
    inherited.merge(environment) { _, new in new }
    process.environment = inherited
    scratch.write("stdin", stdin ?? "")
    scratch.write("stdout", "")
    scratch.write("stderr", "")
    process.standardInput = FileHandle(forReadingAtPath: scratch.file("stdin"))
    process.standardOutput = FileHandle(forWritingAtPath: scratch.file("stdout"))
    process.standardError = FileHandle(forWritingAtPath: scratch.file("stderr"))
    try process.run()
    process.waitUntilExit()
    return Run(status: process.terminationStatus, stdout: scratch.read("stdout"), stderr: scratch.read("stderr"))
}

/// A receiver-side or sender-side keyring made by the binary, with helpers for the
/// commands the tests repeat.
struct KeyringFixture {
    let folder = TemporaryFolder()
    var keys: String { folder.file("Keys") }

    init() throws {
        let run = try pushseal(["keys", "init", "--keys", keys])
        precondition(run.status == 0, run.stderr)
    }

    func encrypt(_ arguments: [String], stdin: String? = nil) throws -> Run {
        try pushseal(["encrypt", "--keys", keys] + arguments, stdin: stdin)
    }

    func decrypt(payload: String) throws -> Run {
        try pushseal(["decrypt", "--keys", keys, "-"], stdin: payload)
    }

    func keysCommand(_ arguments: [String], stdin: String? = nil) throws -> Run {
        try pushseal(["keys"] + arguments + ["--keys", keys], stdin: stdin)
    }

    func export(_ kid: String? = nil) throws -> String {
        try keysCommand(["export"] + (kid.map { [$0] } ?? [])).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// The `enc` string inside a payload line.
func envelope(in payload: String, field: String = "enc") -> String {
    let object = try! JSONSerialization.jsonObject(with: Data(payload.utf8)) as! [String: Any]
    return object[field] as! String
}

func jsonObject(_ text: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
}
