@testable import PushSealCLI

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArguments(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let arguments = UnsafeBufferPointer(start: data, count: size)
        .split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    // Parsing is pure: it returns a command or a usage error, and help exists for both.
    do {
        if case .help(let name) = try parseCommand(arguments, environment: [:]), let spec = Specs.spec(named: name) {
            _ = helpText(for: spec)
        }
    } catch {
        precondition(Specs.spec(named: error.command) != nil, "usage error names no command")
    }
    return 0
}
