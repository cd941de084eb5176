import PushSeal

/// Runs `pushseal encrypt`: one alert from options, or JSON lines with `--batch`.
/// Returns the exit status (batch mode finishes the stream before reporting bad lines).
func runEncrypt(_ request: EncryptRequest, console: Console) throws -> ExitStatus {
    let keyring = try KeyringStore(folder: request.keysFolder).load()
    try PayloadSealer.validate(field: request.field)
    let sealer = try PayloadSealer(
        keyring: keyring, field: request.field, pad: request.pad, fallback: request.fallback)
    if request.batch {
        return try runBatch(sealer: sealer, console: console)
    }

    var alert = AlertRequest()
    alert.title = request.title
    alert.subtitle = request.subtitle
    switch request.body {
    case .none: break
    case .text(let text): alert.body = text
    case .standardInput:
        var text = String(decoding: try InputFiles.read("-"), as: UTF8.self)
        // `df -h | pushseal encrypt -` ends with the tool's newline, which is not content.
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty else { throw CLIFailure(.dataError, "the body read from stdin is empty") }
        alert.body = text
    }
    alert.threadID = request.group
    alert.level = request.level
    alert.sound = request.sound
    alert.badge = request.badge
    alert.category = request.category
    alert.url = request.url
    for item in request.data { alert.data[item.key] = item.value }
    alert.timeToLive = request.timeToLive
    console.output(bytes: try sealer.payload(for: try alert.alert(now: Timestamp.now())))
    return .ok
}

/// JSON lines in, one payload per line out, holding one line at a time in memory. A bad
/// line is reported with its number and skipped, so one typo does not stop a fan-out.
private func runBatch(sealer: PayloadSealer, console: Console) throws -> ExitStatus {
    var reader = LineReader(descriptor: 0)
    var lineNumber = 0
    var failures = 0
    let now = Timestamp.now()
    try reader.forEachLine { line in
        lineNumber += 1
        guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else { return }
        do {
            guard case .object(let object) = try JSONParser.parse(line) else {
                throw PayloadError(.invalidAlert, "the line is not a JSON object")
            }
            let alert = try AlertRequest(json: object).alert(now: now)
            console.output(bytes: try sealer.payload(for: alert))
        } catch {
            failures += 1
            console.error("line \(lineNumber): \(error)")
        }
    }
    console.flush()
    if failures > 0 {
        console.error("\(failures) of \(lineNumber) lines were not encrypted")
        return .dataError
    }
    return .ok
}
