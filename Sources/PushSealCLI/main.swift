#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PushSeal

// Wiring only: parse, run, map errors to a message and an exit code.

let console = Console()
let arguments = Array(CommandLine.arguments.dropFirst())
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
var status = ExitStatus.ok
do {
    switch try parseCommand(arguments, environment: environment) {
    case .help(let name):
        guard let spec = Specs.spec(named: name) else {
            throw UsageError("no help for '\(name.joined(separator: " "))'", command: [])
        }
        console.output(helpText(for: spec).dropLast().description)
    case .version:
        console.output("pushseal \(version)")
    case .keys(let folder, let action):
        try runKeys(folder: folder, action: action, console: console)
    case .encrypt(let request):
        status = try runEncrypt(request, console: console)
    case .decrypt(let request):
        try runDecrypt(request, console: console)
    case .receive(let request):
        status = try runReceive(request, console: console)
    }
} catch let error as UsageError {
    console.error(error.message)
    let spec = Specs.spec(named: error.command) ?? Specs.root
    console.diagnostic("Usage: \(spec.usage)")
    console.diagnostic("See '\(spec.displayName) --help'.")
    status = .usage
} catch {
    console.error("\(error)")
    status = exitStatus(for: error)
}
console.flush()
exit(status.rawValue)
