import PushSeal
import PushSealJSON
import NotificationText

/// What the user asked pushseal to do, fully parsed and checked.
enum Command: Equatable {
    case help(CommandSpec.Name)
    case version
    case keys(folder: String, lockTimeout: Duration, action: KeysAction)
    case encrypt(EncryptRequest)
    case decrypt(DecryptRequest)
    case receive(ReceiveRequest)
    case send(SendRequest)
    case run(RunRequest)
    case token(TokenRequest)
    case completions(Shell)
    case manual
}

/// `pushseal token`: whose provider token, and where its cache is looked for.
struct TokenRequest: Equatable {
    var authKey: String
    var keyID: String
    var teamID: String
    var keysFolder: String
}

/// `pushseal run`: the command, and the alert its outcome becomes.
struct RunRequest: Equatable {
    var command: [String]
    var tail: Int
    /// The alert options given (a --title replaces the one made from the outcome).
    var alert: EncryptRequest
    /// Where it goes; nil with --print, which prints the payload instead.
    var delivery: SendRequest?
    /// `--results stdout`: delivery results on stdout; by default on stderr, since stdout
    /// is the command's own output.
    var resultsOnStdout = false
}

enum KeysAction: Equatable {
    case initialize(recipient: Bool)
    case add(recipient: Bool)
    case promote(kid: String, grace: Duration)
    case rotate(grace: Duration)
    case list(json: Bool)
    case export(kid: String?, public: Bool, picture: SharePicture? = nil)
    case importShare(source: ShareSource)
    case disable(kid: String)
    case enable(kid: String)
    case destroy(kid: String)
    case prune
}

/// `keys export --qr` (a QR code in the terminal) or `--qr-png FILE`.
enum SharePicture: Equatable {
    case terminal
    case png(String)
}

/// Where `keys import` reads the share from.
enum ShareSource: Equatable {
    case standardInput
    case file(String)
    /// Typed on the command line: works, but earns a warning.
    case argument(String)
}

/// Where the alert body comes from.
enum BodySource: Equatable {
    case none
    case text(String)
    case standardInput
}

struct EncryptRequest: Equatable {
    var keysFolder: String
    /// Every alert field given as an option, except the body, which may come from stdin.
    var fields = AlertFields()
    var body: BodySource = .none
    var url: String?
    var data: [DataItem] = []
    var timeToLive: Duration?
    var fallback: FallbackAlert
    var field: String
    var pad: Int
    var batch: Bool
    /// `--to KID`: seal to that recipient key (`ps2`) instead of the primary.
    var recipient: String? = nil
    /// Worker threads for --batch.
    var jobs: Int
    /// `--truncate`: a body too long for the payload limit is cut to fit.
    var truncate = false
}

/// One `--data key=value` (a string) or `--data key:=json` (any JSON value).
struct DataItem: Equatable {
    let key: String
    let value: JSONValue
}

struct ReceiveRequest: Equatable {
    var keysFolder: String
    var field: String
    /// Files to deliver in order; `-` reads JSON lines from stdin.
    var inputs: [String]
    var watch: String?
    var once: Bool
    var json: Bool
    var timing: ExtensionRunner.Timing
    var extensionCommand: String?
    /// `--then CMD`: the user's program, after the decrypting extension, on the opened alert.
    var thenCommand: String? = nil
    var memoryLimit: Int
    var placeholder: Placeholder
    /// Worker threads for stdin input.
    var jobs: Int
    /// At most this many --extension programs run at once.
    var maximumExtensions: Int
    /// Set with --listen: serve Apple's provider API instead of reading inputs.
    var listen: ListenRequest? = nil
    /// --notify: show each delivery on the desktop too.
    var notify = false
}

/// `pushseal send`: what to seal (or a ready payload), where to, and how.
struct SendRequest: Equatable {
    /// The alert to seal; nil when a ready payload comes on stdin (`-`).
    var alert: EncryptRequest?
    var devices: [String]
    /// A file of tokens, or `-` for stdin.
    var devicesFile: String?
    var topic: String
    var authKey: String
    var keyID: String
    var teamID: String
    var endpoint: String
    var caFile: String?
    var priority: APNs.Priority?
    var collapseID: String?
    var pushType: APNs.PushType
    var expiration: String?
    var retries: Int
    /// No retry starts later than this after a device's first attempt.
    var retryFor: Duration
    var concurrency: Int
    /// HTTP/2 connections the devices are spread over.
    var connections: Int
    /// `--proxy`: nil when not given (the environment decides), empty for none.
    var proxy: String?
    /// How long one request may wait for its answer before it is given up (and retried).
    var timeout: Duration
    var json: Bool
    var keysFolder: String

    static let production = "https://api.push.apple.com"
    static let sandbox = "https://api.sandbox.push.apple.com"
}

/// `receive --listen` and the options that go with it.
struct ListenRequest: Equatable {
    var host: String
    var port: Int
    /// Both or neither; neither (and not plaintext) uses the keyring folder's self-signed pair.
    var certificateFile: String?
    var keyFile: String?
    var plaintext: Bool
    var devices: [String]
    var unregistered: [String]
    var topics: [String]
    /// `KEYID=FILE` pairs, in the order given.
    var providerKeys: [ProviderKeyFile]
    var team: String?
    var idleTimeout: Duration

    struct ProviderKeyFile: Equatable {
        var keyID: String
        var file: String
    }

    static let options = ["tls-cert", "tls-key", "plaintext", "device", "unregistered", "topic", "provider-key", "team", "idle-timeout"]
}

extension ReceiveRequest {
    /// The documented cap on extension programs running at once.
    static let defaultMaximumExtensions = 64
}

struct DecryptRequest: Equatable {
    var keysFolder: String
    var field: String
    var source: String
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
        if arguments[at] == "keys", at + 1 < arguments.count, !arguments[at + 1].hasPrefix("-") { path.append(arguments[at + 1]) }
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
    case "receive": return try parseReceive(rest, environment: environment)
    case "send": return try parseSend(rest, environment: environment)
    case "run": return try parseRun(rest, environment: environment)
    case "token": return try parseToken(rest, environment: environment)
    case "completions": return try parseCompletions(rest, environment: environment)
    case "manual":
        let parsed = try parseArguments(rest, spec: Specs.manual, environment: environment)
        if parsed.helpRequested { return .help(Specs.manual.name) }
        guard parsed.positionals.isEmpty else { throw UsageError("manual takes no arguments", command: Specs.manual.name) }
        return .manual
    default:
        if let guess = Suggestion.closest(to: first, among: commandNames + ["help", "version"]) {
            throw UsageError("unknown command '\(first)' (did you mean '\(guess)'?)", command: [])
        }
        throw UsageError("unknown command '\(first)' (commands: \(commandNames.joined(separator: ", ")))", command: [])
    }
}

/// Every duration option's accepted range, in one place: the help and the checks use it.
enum DurationRange {
    static let grace = Duration.zero...Duration.seconds(3_650 * 86_400)
    static let budget = Duration.milliseconds(1)...Duration.seconds(86_400)
    static let expiryGrace = Duration.milliseconds(1)...Duration.seconds(3_600)
    static let timeToLive = AlertRequest.timeToLiveRange
    static let lockTimeout = Duration.zero...Duration.seconds(3_600)
    static let idleTimeout = Duration.seconds(1)...Duration.seconds(86_400)
    static let requestTimeout = Duration.milliseconds(100)...Duration.seconds(600)
    static let retryFor = Duration.zero...Duration.seconds(86_400)

    static func text(_ range: ClosedRange<Duration>) -> String {
        "from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound))"
    }
}

/// A duration option's value, or nil when absent; outside its range is a usage error that
/// names the flag or variable the user gave.
private func duration(
    _ parsed: ParsedArguments, _ option: String, in range: ClosedRange<Duration>, example: String,
    command: CommandSpec.Name
) throws(UsageError) -> Duration? {
    guard let text = parsed.value(option) else { return nil }
    guard let duration = DurationText.parse(text, in: range) else {
        throw UsageError("\(parsed.origin(option)) must be a duration \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)), such as \(example) (got '\(text.prefix(40))')", command: command)
    }
    return duration
}

private func keysFolder(_ parsed: ParsedArguments) -> String {
    parsed.value("keys") ?? "Keys"
}

/// `--jobs N`: how many cores to use; all of them unless told.
private func jobs(_ parsed: ParsedArguments, command: CommandSpec.Name) throws(UsageError) -> Int {
    guard let text = parsed.value("jobs") else { return LineWorkerPool<Int>.availableCores }
    guard let count = Int(text), (1...1024).contains(count) else {
        throw UsageError("\(parsed.origin("jobs")) must be a whole number from 1 to 1024", command: command)
    }
    return count
}

private func parseKeys(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let names = Specs.keys.compactMap(\.name.last)
    guard let name = arguments.first, !name.hasPrefix("-") else {
        if arguments.contains("--help") || arguments.contains("-h") { return .help(["keys"]) }
        throw UsageError("missing a keys subcommand (\(names.joined(separator: ", ")))", command: ["keys"])
    }
    guard let spec = Specs.keys.first(where: { $0.name.last == name }) else {
        let guess = Suggestion.closest(to: name, among: names)
        throw UsageError("unknown keys subcommand '\(name)'" + (guess.map { " (did you mean '\($0)'?)" } ?? ""), command: ["keys"])
    }
    let parsed = try parseArguments(Array(arguments.dropFirst()), spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    let folder = keysFolder(parsed)

    func kid(optional: Bool = false) throws(UsageError) -> String? {
        guard parsed.positionals.count <= 1 else {
            throw UsageError("expected one key id, got \(parsed.positionals.count)", command: spec.name)
        }
        guard let kid = parsed.positionals.first else {
            if optional { return nil }
            throw UsageError("missing the key id (KID); 'pushseal keys list' shows them", command: spec.name)
        }
        guard KeyID.isValid(kid) else {
            throw UsageError("'\(kid.prefix(70))' is not a key id (1 to 64 of A-Z a-z 0-9 _ -)", command: spec.name)
        }
        return kid
    }
    func noArguments() throws(UsageError) {
        guard parsed.positionals.isEmpty else {
            throw UsageError("unexpected argument '\(parsed.positionals[0].prefix(70))'", command: spec.name)
        }
    }
    func grace() throws(UsageError) -> Duration {
        try duration(parsed, "grace", in: DurationRange.grace, example: "30d, 12h or 0s", command: spec.name) ?? Keyring.defaultGrace
    }
    let lockTimeout = try duration(parsed, "lock-timeout", in: DurationRange.lockTimeout, example: "30s", command: spec.name)
        ?? KeyringStore.defaultLockTimeout

    let action: KeysAction
    switch name {
    case "init": try noArguments(); action = .initialize(recipient: parsed.has("recipient"))
    case "add": try noArguments(); action = .add(recipient: parsed.has("recipient"))
    case "promote": action = .promote(kid: try kid()!, grace: try grace())
    case "rotate": try noArguments(); action = .rotate(grace: try grace())
    case "list": try noArguments(); action = .list(json: parsed.has("json"))
    case "export":
        var picture: SharePicture?
        if let file = parsed.value("qr-png") {
            guard !parsed.has("qr") else { throw UsageError("give --qr (the terminal) or --qr-png FILE (an image), not both", command: spec.name) }
            guard !file.isEmpty else { throw UsageError("--qr-png needs a file name", command: spec.name) }
            picture = .png(file)
        } else if parsed.has("qr") {
            picture = .terminal
        }
        action = .export(kid: try kid(optional: true), public: parsed.has("public"), picture: picture)
    case "import":
        guard parsed.positionals.count == 1, let source = parsed.positionals.first else {
            throw UsageError("expected one SHARE: '-' to read it from stdin, or a file holding it", command: spec.name)
        }
        if source == "-" {
            action = .importShare(source: .standardInput)
        } else if source.hasPrefix(KeyShare.prefix) || source.hasPrefix(PublicShare.prefix) {
            action = .importShare(source: .argument(source))
        } else {
            action = .importShare(source: .file(source))
        }
    case "disable": action = .disable(kid: try kid()!)
    case "enable": action = .enable(kid: try kid()!)
    case "destroy": action = .destroy(kid: try kid()!)
    case "prune": try noArguments(); action = .prune
    default: throw UsageError("unknown keys subcommand '\(name)'", command: ["keys"])
    }
    return .keys(folder: folder, lockTimeout: lockTimeout, action: action)
}

private func parseEncrypt(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.encrypt
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    let request = try alertOptions(parsed, spec: spec, stdinIsBody: true)
    if request.batch {
        guard request.fields.isEmpty, request.url == nil, request.body == .none, request.data.isEmpty, request.timeToLive == nil else {
            throw fail("--batch reads every alert from stdin as JSON lines; alert options cannot be combined with it")
        }
    } else if request.fields.title == nil && request.body == .none {
        throw fail("nothing to send: give --title, --body, a BODY argument, or '-' to read the body from stdin")
    }
    return .encrypt(request)
}

/// The alert and sealing options `encrypt` and `send` share, as an encrypt request.
/// - Parameter stdinIsBody: whether a lone `-` reads the body (`encrypt`) or is left to the
///   caller (`send`, where it reads a ready payload).
private func alertOptions(_ parsed: ParsedArguments, spec: CommandSpec, stdinIsBody: Bool) throws(UsageError) -> EncryptRequest {
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    let field = parsed.value("field") ?? PayloadSealer.defaultField
    do {
        try PayloadSealer.validate(field: field)
    } catch {
        throw fail("\(parsed.origin("field")) must be a name of 1 to 64 bytes other than 'aps'")
    }
    var request = EncryptRequest(
        keysFolder: keysFolder(parsed),
        fallback: FallbackAlert(
            title: parsed.value("fallback-title") ?? FallbackAlert.standard.title,
            body: parsed.value("fallback-body") ?? FallbackAlert.standard.body),
        field: field,
        pad: PayloadSealer.defaultPad,
        batch: parsed.has("batch"),
        jobs: try jobs(parsed, command: spec.name),
        truncate: parsed.has("truncate"))
    // The options that set alert fields come from the one table in Specs.
    for (field, option) in Specs.alertFieldOptions where field != .body {
        guard let text = parsed.value(option.long) else { continue }
        do {
            try request.fields.set(field, text: text)
        } catch {
            throw fail("--\(option.long): \(error.reason)")
        }
    }
    request.url = parsed.value("url")
    if let to = parsed.value("to") {
        guard KeyID.isValid(to) else { throw fail("\(parsed.origin("to")) takes a key id (1 to 64 of A-Z a-z 0-9 _ -); 'pushseal keys list' shows them") }
        request.recipient = to
    }

    if let text = parsed.value("pad") {
        guard let pad = Int(text), (1...4096).contains(pad) else { throw fail("\(parsed.origin("pad")) must be a whole number from 1 to 4096") }
        request.pad = pad
    }
    request.timeToLive = try duration(parsed, "ttl", in: DurationRange.timeToLive, example: "3600s, 90m, 12h or 7d", command: spec.name)
    for item in parsed.all("data") {
        request.data.append(try parseDataItem(item, command: spec.name))
    }

    let bodyFlags = [parsed.value("body"), parsed.value("message")].compactMap { $0 }
    guard bodyFlags.count <= 1 else { throw fail("give the body once: --body and --message are the same option") }
    if parsed.positionals == ["-"] {
        if stdinIsBody { request.body = .standardInput }
    } else if parsed.positionals.contains("-") {
        throw fail("'-' (body from stdin) cannot be combined with other body words")
    } else if !parsed.positionals.isEmpty {
        request.body = .text(parsed.positionals.joined(separator: " "))
    }
    if let flag = bodyFlags.first {
        guard request.body == .none else { throw fail("the body was given both as --body and as an argument") }
        request.body = .text(flag)
    }

    return request
}

private func parseDataItem(_ item: String, command: CommandSpec.Name) throws(UsageError) -> DataItem {
    guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
        throw UsageError("--data takes key=value (a string) or key:=JSON", command: command)
    }
    let value = String(item[item.index(after: equals)...])
    let beforeEquals = item.index(before: equals)
    if item[beforeEquals] == ":", beforeEquals != item.startIndex {
        let key = String(item[..<beforeEquals])
        do {
            return DataItem(key: key, value: try JSONParser.parse(value))
        } catch {
            throw UsageError("--data \(key):= needs a JSON value (\(error))", command: command)
        }
    }
    return DataItem(key: String(item[..<equals]), value: .string(value))
}

private func parseDecrypt(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.decrypt
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    guard parsed.positionals.count == 1, let source = parsed.positionals.first else {
        throw UsageError(
            parsed.positionals.isEmpty
                ? "missing the input: a payload FILE, or '-' to read it from stdin"
                : "expected one input, got \(parsed.positionals.count)",
            command: spec.name)
    }
    let field = parsed.value("field") ?? PayloadSealer.defaultField
    return .decrypt(DecryptRequest(keysFolder: keysFolder(parsed), field: field, source: source))
}

private func parseReceive(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.receive
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    let timing = ExtensionRunner.Timing(
        budget: try duration(parsed, "budget", in: DurationRange.budget, example: "250ms, 2s or 30s", command: spec.name)
            ?? ExtensionRunner.Timing.standard.budget,
        expiryGrace: try duration(parsed, "expiry-grace", in: DurationRange.expiryGrace, example: "200ms or 1s", command: spec.name)
            ?? ExtensionRunner.Timing.standard.expiryGrace)
    var maximumExtensions = ReceiveRequest.defaultMaximumExtensions
    if let text = parsed.value("max-extensions") {
        guard let count = Int(text), (1...1024).contains(count) else {
            throw fail("\(parsed.origin("max-extensions")) must be a whole number from 1 to 1024")
        }
        maximumExtensions = count
    }
    var memoryLimit = ProcessExtension.defaultMemoryLimit
    if let text = parsed.value("memory-limit") {
        guard let bytes = parseByteCount(text), (4096...(1 << 40)).contains(bytes) else {
            throw fail("--memory-limit must be a size from 4KB to 1024GB, such as 24MB, 512KB or 1GB")
        }
        memoryLimit = bytes
    }
    let watch = parsed.value("watch")
    let listen = try parseListen(parsed, spec: spec)
    if listen != nil, watch != nil || !parsed.positionals.isEmpty {
        throw fail("--listen takes its notifications from the network; give no FILE or --watch with it")
    }
    if watch != nil, !parsed.positionals.isEmpty {
        throw fail("--watch reads its folder; give no FILE arguments with it")
    }
    if watch == nil, listen == nil, parsed.positionals.isEmpty {
        throw fail("nothing to receive: give payload FILEs, '-' for JSON lines on stdin, --watch DIR or --listen PORT")
    }
    if parsed.positionals.filter({ $0 == "-" }).count > 1 {
        throw fail("'-' (stdin) can be given once")
    }
    if parsed.has("once"), watch == nil {
        throw fail("--once goes with --watch")
    }
    let field = parsed.value("field") ?? PayloadSealer.defaultField
    do {
        try PayloadSealer.validate(field: field)
    } catch {
        throw fail("\(parsed.origin("field")) must be a name of 1 to 64 bytes other than 'aps'")
    }
    if parsed.value("extension") != nil, parsed.value("then") != nil {
        throw fail("give --extension (your program instead of the decrypting one) or --then (your program after it), not both")
    }
    // The standard words, or one body for every reason, then a body per reason on top.
    var placeholder = Placeholder.standard
    if let title = parsed.value("placeholder-title") { placeholder.title = title }
    if let body = parsed.value("placeholder-body") { placeholder = Placeholder(title: placeholder.title, body: body) }
    for item in parsed.all("placeholder-for") {
        guard let equals = item.firstIndex(of: "="),
              placeholder.setBody(String(item[item.index(after: equals)...]), forReason: String(item[..<equals])) else {
            throw fail("--placeholder-for takes REASON=BODY, with REASON one of \(Placeholder.reasons.joined(separator: ", "))")
        }
    }
    return .receive(ReceiveRequest(
        keysFolder: keysFolder(parsed), field: field, inputs: parsed.positionals, watch: watch,
        once: parsed.has("once"), json: parsed.has("json"), timing: timing,
        extensionCommand: parsed.value("extension"), thenCommand: parsed.value("then"), memoryLimit: memoryLimit,
        placeholder: placeholder,
        jobs: try jobs(parsed, command: spec.name), maximumExtensions: maximumExtensions, listen: listen,
        notify: parsed.has("notify")))
}

/// `24MB`, `512KB`, `1GB` or plain bytes; units are powers of 1024, as `ps` reports.
func parseByteCount(_ text: String) -> Int? {
    let upper = text.uppercased()
    let units: [(String, Int)] = [("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1)]
    for (suffix, scale) in units where upper.hasSuffix(suffix) {
        guard let amount = Int(upper.dropLast(suffix.count)), amount <= Int.max / scale else { return nil }
        return amount * scale
    }
    return Int(upper)
}

/// The --listen options, or nil without --listen (when the others are usage errors).
private func parseListen(_ parsed: ParsedArguments, spec: CommandSpec) throws(UsageError) -> ListenRequest? {
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    guard let address = parsed.value("listen") else {
        if let stray = ListenRequest.options.first(where: { parsed.has($0) || !parsed.all($0).isEmpty }) {
            throw fail("--\(stray) goes with --listen")
        }
        return nil
    }
    var host = "127.0.0.1"
    var portText = Substring(address)
    if let colon = address.lastIndex(of: ":") {
        let given = address[..<colon]
        if !given.isEmpty { host = String(given) }
        portText = address[address.index(after: colon)...]
    }
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard let port = Int(portText), (0...65_535).contains(port) else {
        throw fail("--listen takes [HOST:]PORT, such as 8443, 127.0.0.1:0 or [::1]:8443 (port 0 picks a free one)")
    }
    let certificate = parsed.value("tls-cert")
    let key = parsed.value("tls-key")
    if (certificate == nil) != (key == nil) {
        throw fail("--tls-cert and --tls-key go together")
    }
    if parsed.has("plaintext"), certificate != nil {
        throw fail("--plaintext serves without TLS; give it or --tls-cert/--tls-key, not both")
    }
    func tokens(_ option: String) throws(UsageError) -> [String] {
        let values = parsed.all(option).map { $0.lowercased() }
        for value in values where !APNsRules.isDeviceToken(value) {
            throw fail("--\(option) takes a device token in hex (64 digits for today's devices), not '\(value)'")
        }
        return values
    }
    var providerKeys: [ListenRequest.ProviderKeyFile] = []
    for pair in parsed.all("provider-key") {
        guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex, pair.index(after: equals) != pair.endIndex else {
            throw fail("--provider-key takes KEYID=FILE, such as ABC123DEFG=AuthKey_ABC123DEFG.p8")
        }
        providerKeys.append(.init(keyID: String(pair[..<equals]), file: String(pair[pair.index(after: equals)...])))
    }
    if Set(providerKeys.map(\.keyID)).count != providerKeys.count {
        throw fail("--provider-key names each key id once")
    }
    return ListenRequest(
        host: host, port: port, certificateFile: certificate, keyFile: key, plaintext: parsed.has("plaintext"),
        devices: try tokens("device"), unregistered: try tokens("unregistered"), topics: parsed.all("topic"),
        providerKeys: providerKeys, team: parsed.value("team"),
        idleTimeout: try duration(parsed, "idle-timeout", in: DurationRange.idleTimeout, example: "30s or 5m", command: spec.name)
            ?? ListenerLimits().idleTimeout)
}

private func parseSend(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.send
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    let ready = parsed.positionals == ["-"]
    let batch = parsed.has("batch")
    var alert: EncryptRequest?
    if batch {
        let request = try alertOptions(parsed, spec: spec, stdinIsBody: false)
        guard request.fields.isEmpty, request.url == nil, request.body == .none, request.data.isEmpty, request.timeToLive == nil,
              parsed.positionals.isEmpty else {
            throw fail("--batch reads every device and alert from stdin as JSON lines; alert options cannot be combined with it")
        }
        guard parsed.all("device").isEmpty, parsed.value("devices") == nil else {
            throw fail("--batch names each device in its line ({\"device\": TOKEN, …}); --device and --devices cannot be combined with it")
        }
        alert = request
    } else if !ready {
        let request = try alertOptions(parsed, spec: spec, stdinIsBody: false)
        guard request.fields.title != nil || request.body != .none else {
            throw fail("nothing to send: give --title, --body, a BODY argument, or '-' to send a ready payload from stdin")
        }
        alert = request
    } else if Specs.alertFieldOptions.contains(where: { parsed.value($0.option.long) != nil }) || parsed.value("url") != nil
                || !parsed.all("data").isEmpty {
        throw fail("'-' sends the payload read from stdin as it is; alert options cannot be combined with it")
    }
    if parsed.value("devices") == "-", ready {
        throw fail("stdin can carry the payload ('-') or the devices (--devices -), not both")
    }
    return .send(try delivery(parsed, spec: spec, alert: alert, batch: batch))
}

/// Where and how `send` (and `run`) deliver: devices, APNs settings, retries.
private func delivery(_ parsed: ParsedArguments, spec: CommandSpec, alert: EncryptRequest?, batch: Bool) throws(UsageError) -> SendRequest {
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    func required(_ option: String, _ what: String) throws(UsageError) -> String {
        try requiredValue(parsed, option, what, command: spec.name)
    }
    let devicesFile = parsed.value("devices")
    let devices = parsed.all("device").map { $0.lowercased() }
    for device in devices where !APNsRules.isDeviceToken(device) {
        throw fail("--device takes a device token in hex (64 digits for today's devices), not '\(device)'")
    }
    guard !devices.isEmpty || devicesFile != nil || batch else {
        throw fail(spec.name == Specs.run.name ? "no devices: give --device TOKEN (repeatable) or --devices FILE, or --print to print the payload"
                                               : "no devices: give --device TOKEN (repeatable), --devices FILE or --batch")
    }
    if parsed.has("sandbox"), parsed.has("production") { throw fail("--sandbox and --production contradict each other") }
    // A flag beats the environment; two flags that name different servers are a mistake.
    let server = parsed.has("sandbox") ? "--sandbox" : parsed.has("production") ? "--production" : nil
    if let server, parsed.value("endpoint") != nil, parsed.fromEnvironment["endpoint"] == nil {
        throw fail("--endpoint and \(server) name different servers; give one")
    }
    var endpoint = parsed.has("sandbox") ? SendRequest.sandbox : SendRequest.production
    if server == nil, let given = parsed.value("endpoint") {
        guard (given.hasPrefix("https://") || given.hasPrefix("http://")), given.count > 8 else {
            throw fail("\(parsed.origin("endpoint")) takes a URL such as https://127.0.0.1:8443 (http:// for HTTP/2 without TLS)")
        }
        let parsedEndpoint: SendEndpoint
        do {
            parsedEndpoint = try SendEndpoint(url: given)
        } catch {
            throw fail("\(parsed.origin("endpoint")): \(error.message)")
        }
        endpoint = parsedEndpoint.description
        // Over http:// the provider token travels in clear: only to this machine, unless asked.
        if !parsedEndpoint.secure, !parsedEndpoint.isLoopback, !parsed.has("allow-cleartext") {
            throw fail("\(parsed.origin("endpoint")) is http:// to \(parsedEndpoint.host), so the provider token would travel in clear; use https://, or --allow-cleartext on a network you trust")
        }
    }
    var priority: APNs.Priority?
    if let given = parsed.value("priority") {
        guard let known = APNs.Priority(rawValue: given) else { throw fail("--priority is 10 (now), 5 (when convenient) or 1 (background)") }
        priority = known
    }
    if let collapse = parsed.value("collapse-id"), collapse.utf8.count > APNs.collapseIDLimit {
        throw fail("--collapse-id is at most 64 bytes")
    }
    guard let pushType = APNs.PushType(rawValue: parsed.value("push-type") ?? "alert") else {
        throw fail("--push-type is one of \(APNs.PushType.allCases.map(\.rawValue).sorted().joined(separator: ", "))")
    }
    // APNs' rules for background pushes: no alert (it would be shown), priority 5.
    if pushType == .background {
        if alert != nil || batch {
            throw fail("--push-type background carries no alert, and pushseal seals an alert: send it as alert (the default), or pipe a payload without 'alert' into '-'")
        }
        guard priority == nil || priority == .whenConvenient else { throw fail("--push-type background goes with --priority 5, as APNs requires") }
        priority = .whenConvenient
    }
    var expiration = parsed.value("expiration")
    if let text = expiration, Int64(text).map({ $0 < 0 }) ?? true { throw fail("--expiration takes UNIX seconds") }
    if let ttl = alert?.timeToLive {
        guard expiration == nil else { throw fail("--ttl sets apns-expiration itself; give --ttl or --expiration") }
        expiration = String(Timestamp.now() + ttl.components.seconds)
    }
    var retries = 3
    if let text = parsed.value("retries") {
        guard let value = Int(text), (0...10).contains(value) else { throw fail("--retries is a whole number from 0 to 10") }
        retries = value
    }
    var concurrency = 1_000
    if let text = parsed.value("concurrency") {
        guard let value = Int(text), (1...1_000).contains(value) else { throw fail("--concurrency is a whole number from 1 to 1000") }
        concurrency = value
    }
    var connections = 1
    if let text = parsed.value("connections") {
        guard let value = Int(text), (1...64).contains(value) else { throw fail("--connections is a whole number from 1 to 64") }
        connections = value
    }
    let topic = try required("topic", "the app's bundle id")
    let (authKey, keyID, teamID) = try providerCredentials(parsed, spec: spec)
    return SendRequest(
        alert: alert, devices: devices, devicesFile: devicesFile,
        topic: topic, authKey: authKey, keyID: keyID, teamID: teamID,
        endpoint: endpoint, caFile: parsed.value("cacert"), priority: priority,
        collapseID: parsed.value("collapse-id"), pushType: pushType, expiration: expiration,
        retries: retries,
        retryFor: try duration(parsed, "retry-for", in: DurationRange.retryFor, example: "1m", command: spec.name) ?? .seconds(60),
        concurrency: concurrency, connections: connections, proxy: parsed.value("proxy"),
        timeout: try duration(parsed, "timeout", in: DurationRange.requestTimeout, example: "30s", command: spec.name) ?? .seconds(30),
        json: parsed.has("json"), keysFolder: keysFolder(parsed))
}

private func parseToken(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.token
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    guard parsed.positionals.isEmpty else { throw UsageError("token takes no arguments", command: spec.name) }
    let (authKey, keyID, teamID) = try providerCredentials(parsed, spec: spec)
    return .token(TokenRequest(authKey: authKey, keyID: keyID, teamID: teamID, keysFolder: keysFolder(parsed)))
}

/// The .p8 file, key id and team id a provider token is made from, each required and the
/// ids checked for Apple's shape.
private func providerCredentials(_ parsed: ParsedArguments, spec: CommandSpec) throws(UsageError) -> (authKey: String, keyID: String, teamID: String) {
    func required(_ option: String, _ what: String) throws(UsageError) -> String {
        try requiredValue(parsed, option, what, command: spec.name)
    }
    let authKey = try required("auth-key", "the .p8 file from Apple")
    // Apple's key and team ids are 10 capital letters and digits; anything else is a typo
    // that APNs would answer only with InvalidProviderToken.
    let keyID = try required("key-id", "the .p8 key's id")
    let teamID = try required("team-id", "your Apple team id")
    for (option, value) in [("key-id", keyID), ("team-id", teamID)] where !isAppleID(value) {
        throw UsageError("\(parsed.origin(option)) is 10 capital letters and digits, as Apple's developer account shows it (got '\(value.prefix(40))')", command: spec.name)
    }
    return (authKey, keyID, teamID)
}

/// An option that must be given (on the line or by its variable), or the usage error that
/// says what it is and which variable sets it.
private func requiredValue(_ parsed: ParsedArguments, _ option: String, _ what: String, command: CommandSpec.Name) throws(UsageError) -> String {
    guard let value = parsed.value(option), !value.isEmpty else {
        throw UsageError("--\(option) is required: \(what) (or set PUSHSEAL_\(String(option.uppercased().map { $0 == "-" ? "_" : $0 })))", command: command)
    }
    return value
}

/// A key id or team id as Apple issues them: `ABC123DEFG`.
private func isAppleID(_ text: String) -> Bool {
    text.utf8.count == 10 && text.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
}

private func parseRun(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.run
    // Everything after the first `--` is the command, whatever it looks like.
    let split = arguments.firstIndex(of: "--")
    let options = Array(arguments[..<(split ?? arguments.endIndex)])
    var parsed = try parseArguments(options, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    guard let split else {
        throw fail(parsed.positionals.isEmpty ? "no command: give it after '--', as in 'pushseal run -- make test'"
                                              : "put the command after '--' ('pushseal run [options] -- \(parsed.positionals.joined(separator: " "))'), so its options stay its own")
    }
    guard parsed.positionals.isEmpty else { throw fail("unexpected argument '\(parsed.positionals[0].prefix(70))' before '--'") }
    let command = Array(arguments[(split + 1)...])
    guard let program = command.first, !program.isEmpty else { throw fail("no command after '--'") }
    var tail = 5
    if let text = parsed.value("tail") {
        guard let value = Int(text), (0...50).contains(value) else { throw fail("--tail is a whole number of lines from 0 to 50") }
        tail = value
    }
    if parsed.value("devices") == "-" { throw fail("the command keeps stdin; give the devices with --device TOKEN or --devices FILE") }
    parsed.positionals = []
    let alert = try alertOptions(parsed, spec: spec, stdinIsBody: false)
    let print = parsed.has("print")
    let results = parsed.value("results") ?? "stderr"
    guard results == "stderr" || results == "stdout" else { throw fail("--results is stderr (the default) or stdout") }
    if print, parsed.value("results") != nil { throw fail("--print sends nothing, so there are no results for --results") }
    return .run(RunRequest(command: command, tail: tail, alert: alert,
                           delivery: print ? nil : try delivery(parsed, spec: spec, alert: alert, batch: false),
                           resultsOnStdout: results == "stdout"))
}

private func parseCompletions(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.completions
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    let names = Shell.allCases.map(\.rawValue).joined(separator: ", ")
    guard parsed.positionals.count == 1, let shell = Shell(rawValue: parsed.positionals[0]) else {
        throw UsageError(parsed.positionals.isEmpty ? "which shell? (\(names))" : "no completions for '\(parsed.positionals.joined(separator: " ").prefix(40))' (shells: \(names))",
                         command: spec.name)
    }
    return .completions(shell)
}
