import PushSeal
import PushSealJSON
import PushSealReceiver

#if canImport(Glibc)
import Glibc
#endif

/// Runs `pushseal decrypt`: prints the opened alert as one JSON line. Nothing reaches
/// stdout unless authentication succeeded. Input that is not one payload but several, one
/// per line, is opened line by line as it comes: one alert per line, each failure reported
/// with its line. A payload over several lines (pretty-printed JSON) is read whole, up to
/// what a payload input can be.
func runDecrypt(_ request: DecryptRequest, console: Console) throws -> ExitStatus {
    // Before any thread starts: a stop then leaves every alert already opened written.
    let stop = try StreamStop(console: console)
    let keyring = try KeyringStore(folder: request.keysFolder).load()
    let opener = PayloadOpener(keyring: keyring, field: request.field)
    warnOfAnySender(request.senders, console: console)
    // The messages `receive` opened are not asked: opening one again is what decrypt is for.
    let receiving = PayloadJudgement.Receiving(senders: request.senders)
    let now = Timestamp.now()
    let name = request.source == "-" ? "stdin" : request.source
    let descriptor = try InputFiles.open(request.source)
    defer { if descriptor != 0 { close(descriptor) } }
    var reader = LineReader(descriptor: descriptor, stop: stop.request, bound: .payloadInput)
    let overlong = "cannot read \(name): more than \(InputBound.payloadInput.limitText); stopped reading there"
    var whole: [UInt8]?
    var payloads = 0
    var failed = 0
    var number = 0
    // The first payload's failure waits for a second payload: alone, it is the input's, and
    // said without a line number.
    var firstFailure: (line: Int, error: any Error)?
    do {
        try reader.forEachLine(
            idle: { console.flush() }, overlong: { throw CLIFailure(.dataError, overlong) },
            each: { line in
                number += 1
                if whole != nil {
                    whole!.append(contentsOf: line)
                    whole!.append(UInt8(ascii: "\n"))
                    guard whole!.count <= InputBound.payloadInput.bytes else { throw CLIFailure(.dataError, overlong) }
                    return
                }
                guard !line.isBlankLine else { return }
                if payloads == 0, beginsObjectOverLines(line) {
                    whole = Array(line) + [UInt8(ascii: "\n")]
                    return
                }
                payloads += 1
                do {
                    let alert = try open(Array(line), with: opener, receiving: receiving, now: now)
                    console.output(JSONWriter.string(.object(alert.json)))
                } catch {
                    failed += 1
                    if payloads == 1 {
                        firstFailure = (number, error)
                        return
                    }
                    if let first = firstFailure.take() { console.error("line \(first.line): \(message(for: first.error))") }
                    console.error("line \(number): \(message(for: error))")
                }
            })
    } catch let failure as CLIFailure where payloads > 1 {
        // Past the bound after several payloads: what was opened stays written, and the line says where.
        console.flush()
        if let first = firstFailure.take() { console.error("line \(first.line): \(message(for: first.error))") }
        throw failure
    }
    if let whole {
        console.output(JSONWriter.string(.object(try open(whole, with: opener, receiving: receiving, now: now).json)))
        return .ok
    }
    console.flush()
    if let stopped = stop.ending(done: "\(payloads - failed) of the \(payloads) payloads read were opened and written", console: console) {
        if let first = firstFailure.take() { console.error("line \(first.line): \(message(for: first.error))") }
        return stopped
    }
    if payloads == 1, let first = firstFailure { throw first.error }
    guard payloads > 0 else { throw CLIFailure(.dataError, "malformed: \(name) holds no payload") }
    guard failed == 0 else {
        console.error("\(failed) of \(payloads) payloads were not opened")
        return .dataError
    }
    return .ok
}

/// True when a first line opens a JSON object that the line does not close: the input is
/// then one payload written over several lines.
private func beginsObjectOverLines(_ line: UnsafeRawBufferPointer) -> Bool {
    guard let first = line.firstIndex(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }), line[first] == UInt8(ascii: "{") else {
        return false
    }
    do {
        _ = try JSONParser.parse(line)
        return false
    } catch let error as JSONParseError {
        // Cut short, not wrong: the parser wanted more than the line holds.
        return error.offset >= ReceivedInput.payloadByteCount(line)
    } catch {
        return false
    }
}

/// One payload, or one bare envelope, opened by the receiver's judge (docs/FORMAT.md §6):
/// `decrypt` prints an alert exactly when `pushseal receive` would show it decrypted, and
/// otherwise names the status the receiver gives.
private func open(_ bytes: [UInt8], with opener: PayloadOpener, receiving: PayloadJudgement.Receiving, now: Int64) throws -> SealedAlert {
    let text = String(decoding: bytes, as: UTF8.self).trimmingASCIIWhitespace()
    // A payload is a JSON object; anything else is read as a bare envelope of some version
    // (`ps9.…` is then unsupported, not "not JSON").
    let judgement =
        text.hasPrefix("{")
        ? bytes.withUnsafeBytes { PayloadJudgement.of(payload: $0, field: opener.field, keyring: opener.keyring, now: now, receiving: receiving) }
        : PayloadJudgement.of(envelope: text, field: opener.field, keyring: opener.keyring, now: now, receiving: receiving)
    if judgement.status == .decrypted, let alert = judgement.alert { return alert }
    let status = judgement.status ?? .malformed
    // The kid came from the input, not from the user: a kid this keyring cannot use is bad
    // input (65), like any other altered character of the envelope.
    throw CLIFailure(.dataError, "\(status.rawValue): \(judgement.reason ?? "the receiver does not show it decrypted")")
}

extension Specs {
    static let decrypt = CommandSpec(
        name: ["decrypt"], overview: "Open a payload's sealed alert and print it as JSON.",
        usage: "pushseal decrypt FILE|- [--field enc] [--senders auto|required|any] [--keys DIR]",
        options: [fieldOption, sendersOption, keysOption],
        discussion: """
            Reads a payload (or a bare envelope) from FILE or stdin ('-') and prints the sealed
            alert as one line of JSON, exactly when 'pushseal receive' would show it decrypted. Otherwise
            it prints nothing on stdout, names the receiver's status on stderr (malformed, unsupported,
            key-missing, sender-untrusted, auth-failed, expired, passthrough, ...) and exits 65.
            A message 'receive' has shown already opens here again: decrypt remembers nothing and
            asks nothing of what was opened before.
            """, arguments: .files)
}

struct DecryptRequest: Equatable {
    var keysFolder: String
    var field: String
    var source: String
    var senders: SenderPolicy = .automatic
}

func parseDecrypt(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
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
    return .decrypt(
        DecryptRequest(
            keysFolder: keysFolder(parsed), field: field, source: source, senders: try senderPolicy(parsed, command: spec.name)))
}
