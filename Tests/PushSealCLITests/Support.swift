import Foundation

@testable import PushSealCLI

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

/// Whether this test process, and the `pushseal` built beside it, runs under a sanitizer
/// (`Scripts/check.sh`): there memory and rate figures say nothing about the program, since
/// AddressSanitizer keeps freed memory in quarantine and ThreadSanitizer slows every access.
let underSanitizer: Bool = {
    guard let process = dlopen(nil, RTLD_NOW) else { return false }
    let names = ["__asan_init", "__tsan_init"]
    return names.contains { name in dlsym(process, name) != nil }
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

/// `pushseal ARGUMENTS` as far as its parser goes, in this process: a usage error comes back
/// as the binary reports it (status 64, its stderr lines), anything else as status 0 with
/// nothing said. For tests of what the parser refuses: no process, no keyring read.
func parsed(_ arguments: [String], environment: [String: String] = [:]) -> Run {
    do {
        _ = try parseCommand(arguments, environment: environment)
        return Run(status: 0, stdout: "", stderr: "")
    } catch {
        return Run(status: 64, stdout: "", stderr: error.report.joined(separator: "\n") + "\n")
    }
}

/// The test's environment for a child, with `extra` on top: without PUSHSEAL_* settings,
/// the machine's proxy variables (a CI machine may route its package downloads through
/// one) or its OpenSSL trust settings, so only what a test gives reaches the binary.
func childEnvironment(_ extra: [String: String]) -> [String: String] {
    let proxies: Set<String> = [
        "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY",
        "SSL_CERT_FILE", "SSL_CERT_DIR"
    ]
    var inherited = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHSEAL_") && !proxies.contains($0.key) }
    inherited.merge(extra) { _, new in new }
    inherited[suiteOwnerVariable] = suiteOwner
    return inherited
}

/// Every process this suite starts, and everything those start, carries this variable with
/// the suite's own pid: a test that looks for processes by command line finds only its own,
/// never another program's on the same machine.
let suiteOwnerVariable = "SUITE_OWNER"
let suiteOwner = String(getpid())

func runProcess(
    _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
    watchdog limit: Int = 120
) throws -> Run {
    let scratch = TemporaryFolder()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = childEnvironment(environment)
    scratch.write("stdin", stdin ?? "")
    scratch.write("stdout", "")
    scratch.write("stderr", "")
    process.standardInput = FileHandle(forReadingAtPath: scratch.file("stdin"))
    process.standardOutput = FileHandle(forWritingAtPath: scratch.file("stdout"))
    process.standardError = FileHandle(forWritingAtPath: scratch.file("stderr"))
    try process.run()
    // A broken promise (a receiver that never ends) fails its test instead of hanging the suite.
    let pid = process.processIdentifier
    let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit), execute: watchdog)
    process.waitUntilExit()
    watchdog.cancel()
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

/// Runs `script` under bash, with `$PUSHSEAL` naming the built binary: for pipelines,
/// raw bytes in arguments, and redirections such as `> /dev/full`.
func shell(_ script: String, stdin: String? = nil, environment: [String: String] = [:], watchdog limit: Int = 120) throws -> Run {
    var environment = environment
    environment["PUSHSEAL"] = pushsealBinary
    return try runProcess("/bin/bash", ["-c", script], stdin: stdin, environment: environment, watchdog: limit)
}

/// A process (`pushseal` unless told) the test talks to while it runs: input through a pipe, output
/// into files, signals on demand.
final class RunningProcess: @unchecked Sendable {
    let process = Process()
    private let scratch = TemporaryFolder()
    private let input = Pipe()

    init(_ arguments: [String], executable: String = pushsealBinary, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = childEnvironment(environment)
        scratch.write("stdout", "")
        scratch.write("stderr", "")
        process.standardInput = input
        process.standardOutput = FileHandle(forWritingAtPath: scratch.file("stdout"))
        process.standardError = FileHandle(forWritingAtPath: scratch.file("stderr"))
        try process.run()
    }

    /// A process its test did not end (an early return, a thrown error, a forgotten
    /// `finish`) ends with it, rather than running on beside the rest of the suite.
    deinit {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func send(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the exit, for at most `limit` (then kills it, so a broken promise fails
    /// the test instead of hanging the suite).
    func wait(atMost limit: Duration = .seconds(30)) -> Run {
        let deadline = ContinuousClock.now + limit
        while process.isRunning && ContinuousClock.now < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: scratch.read("stdout"), stderr: scratch.read("stderr"))
    }

    /// What it has written to stdout so far.
    var stdoutSoFar: String { scratch.read("stdout") }

    /// What it has written to stderr so far.
    var stderrSoFar: String { scratch.read("stderr") }
}

/// Polls `condition` every 10 ms for at most `limit`; true once it holds.
func eventually(within limit: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// Processes whose command line starts with `marker`: extension programs a test started as
/// `exec -a MARKER sleep …`, so that neither pushseal nor the shell counts.
/// The command names (`comm`) of `pid`'s children, as /proc lists them.
func childCommands(of pid: Int32) -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.flatMap { task -> [String] in
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").compactMap { child in
            (try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

/// True while `signal` sent to process `pid` waits to be taken (its ShdPnd mask in /proc).
func signalIsPending(_ signal: Int32, for pid: Int32) -> Bool {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("ShdPnd:") }),
        let mask = UInt64(line.dropFirst("ShdPnd:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    else { return false }
    return mask & (1 << UInt64(signal - 1)) != 0
}

func processesRunning(_ marker: String) -> Int {
    ownProcesses(commandLineStartingWith: marker).count
}

/// This suite's processes (see `suiteOwner`) whose command line starts with `prefix`; zombies
/// do not count, they have ended.
func ownProcesses(commandLineStartingWith prefix: String) -> [Int32] {
    let owner = Array("\(suiteOwnerVariable)=\(suiteOwner)".utf8)
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(Int32.init).filter { pid in
        // Arguments joined by spaces, as `ps` shows them.
        guard let commandLine = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")?.map({ $0 == 0 ? UInt8(ascii: " ") : $0 }),
            commandLine.starts(with: Array(prefix.utf8)),
            let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
            environment.split(separator: 0).contains(where: { $0.elementsEqual(owner) }),
            let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let state = status.split(separator: ")").last?.split(separator: " ").first, state != "Z"
        else { return false }
        return true
    }
}

/// Sends `signal` to this suite's processes whose command line starts with `prefix`.
func signalOwnProcesses(commandLineStartingWith prefix: String, _ signal: Int32 = SIGKILL) {
    for pid in ownProcesses(commandLineStartingWith: prefix) { kill(pid, signal) }
}
