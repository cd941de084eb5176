import PushSeal
import PushSealReceiver
import SealCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Wiring only: process-wide settings, parse, run, map errors to a message and an exit code.

// Before anything changes them: the commands pushseal runs for the user get them back.
InheritedSignals.record()
// A closed stdout is an error each command reports (exit 74), not a silent death by SIGPIPE;
// the same goes for an extension program that exits without reading its request.
signal(SIGPIPE, SIG_IGN)
// No core file or ptrace by other users can expose a key this process reads.
SecureMemory.protectProcess()

let console = Console()
var environment: [String: String] = [:]
if let pointers = environ as UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
    var index = 0
    while let entry = pointers[index] {
        let text = String(cString: entry)
        if let equals = text.firstIndex(of: "="), text.hasPrefix("PUSHSEAL_") {
            environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        index += 1
    }
}

let version = "0.1.0"
/// When this version was made: the manual's date.
let releaseDate = "2026-12-04"
var status = ExitStatus.ok
do {
    let arguments = try commandLineArguments()
    switch try parseCommand(arguments, environment: environment) {
    case .help(let name):
        guard let spec = Specs.spec(named: name) else {
            throw UsageError("no help for '\(name.joined(separator: " "))'", command: [])
        }
        console.output(helpText(for: spec).dropLast().description)
    case .version:
        console.output("pushseal \(version)")
    case .keys(let folder, let lockTimeout, let action):
        try runKeys(folder: folder, lockTimeout: lockTimeout, action: action, console: console)
    case .encrypt(let request):
        status = try runEncrypt(request, console: console)
    case .decrypt(let request):
        status = try runDecrypt(request, console: console)
    case .doctor(let request):
        status = try runDoctor(request, console: console)
    case .doctorSend(let request, let json):
        status = try runDoctorSend(request, json: json, console: console)
    case .doctorWebPush(let request):
        status = try runDoctorWebPush(request, console: console)
    case .receive(let request):
        // A server's connections each take a descriptor; only the listener needs more.
        if request.listen != nil { DescriptorLimit.raiseToHard() }
        status = try runReceive(request, console: console)
    case .send(let request):
        status = try runSend(request, console: console)
    case .sendWebPush(let request):
        status = try runWebPushSend(request, console: console)
    case .run(let request):
        let code = try runWatched(request, console: console)
        try console.finish()
        console.flush()
        exit(code)
    case .token(let request):
        try runToken(request, console: console)
    case .webapp(let request):
        if case .serve = request.action { DescriptorLimit.raiseToHard() }
        try runWebApp(request, console: console)
    case .completions(let shell):
        console.output(CompletionScript.text(for: shell).dropLast().description)
    case .manual:
        console.output(Manual.page(version: version, date: releaseDate).dropLast().description)
    }
    try console.finish()
} catch let error as UsageError {
    for line in error.report { console.diagnostic(line) }
    status = .usage
} catch  where exitStatus(for: error) == .ioError && StdoutReader.closed.load(ordering: .relaxed) {
    // The reader has what it wanted; nothing went wrong worth a line.
    status = .readerClosed
} catch {
    console.error(message(for: error))
    status = exitStatus(for: error)
}
console.flush()
exit(status.rawValue)

/// The arguments after the program name, refusing any that is not valid UTF-8: Swift's own
/// `CommandLine.arguments` would quietly replace such bytes, sealing text nobody typed.
func commandLineArguments() throws(CLIFailure) -> [String] {
    var arguments: [String] = []
    for index in 1..<Int(CommandLine.argc) {
        guard let pointer = CommandLine.unsafeArgv[index] else { continue }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIFailure(.dataError, "argument \(index) is not valid UTF-8")
        }
        arguments.append(text)
    }
    return arguments
}
