import PushSeal

/// What the user asked pushseal to do, fully parsed and checked.
enum Command: Equatable {
    case help(CommandSpec.Name)
    case version
    case keys(folder: String, lockTimeout: Duration, action: KeysAction)
    case encrypt(EncryptRequest)
    case decrypt(DecryptRequest)
    case doctor(DoctorRequest)
    case doctorSend(SendRequest, json: Bool)
    case doctorWebPush(DoctorWebPushRequest)
    case receive(ReceiveRequest)
    case send(SendRequest)
    case sendWebPush(WebPushSendRequest)
    case run(RunRequest)
    case token(TokenRequest)
    case webapp(WebAppRequest)
    case completions(Shell)
    case manual
}

/// Turns the arguments after the program name into a command. A pure function: the
/// environment comes in as a value and nothing is read or written.
func parseCommand(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let commandNames = Specs.subcommands(of: []).map { $0.name[0] }
    guard var first = arguments.first else {
        throw UsageError("missing a command (\(commandNames.joined(separator: ", ")))", command: [])
    }
    var rest = Array(arguments.dropFirst())
    // Options given before the command ('pushseal --keys K keys list') belong to it: they
    // move after the command (and the keys subcommand), where its parser checks them.
    if first.hasPrefix("-"), !["--help", "-h", "--version"].contains(first) {
        guard let at = arguments.firstIndex(where: { commandNames.contains($0) }) else {
            throw UsageError("options go after the command, as in 'pushseal keys list --keys DIR'", command: [])
        }
        var path = [arguments[at]]
        if ["keys", "doctor", "webapp"].contains(arguments[at]), at + 1 < arguments.count, !arguments[at + 1].hasPrefix("-") { path.append(arguments[at + 1]) }
        let reordered = path + Array(arguments[..<at]) + Array(arguments[(at + path.count)...])
        first = reordered[0]
        rest = Array(reordered.dropFirst())
    }
    switch first {
    case "--help", "-h": return .help([])
    case "help": return .help(rest.filter { !$0.hasPrefix("-") })
    case "--version", "version": return .version
    case "keys": return try parseKeys(rest, environment: environment)
    case "encrypt": return try parseEncrypt(rest, environment: environment)
    case "decrypt": return try parseDecrypt(rest, environment: environment)
    case "doctor": return try parseDoctor(rest, environment: environment)
    case "receive": return try parseReceive(rest, environment: environment)
    case "send": return try parseSend(rest, environment: environment)
    case "run": return try parseRun(rest, environment: environment)
    case "token": return try parseToken(rest, environment: environment)
    case "webapp": return try parseWebApp(rest, environment: environment)
    case "completions": return try parseCompletions(rest, environment: environment)
    case "manual": return try parseManual(rest, environment: environment)
    default:
        if let guess = Suggestion.closest(to: first, among: commandNames + ["help", "version"]) {
            throw UsageError("unknown command '\(first)' (did you mean '\(guess)'?)", command: [])
        }
        throw UsageError("unknown command '\(first)' (commands: \(commandNames.joined(separator: ", ")))", command: [])
    }
}
