import PushSeal
import PushSealJSON

/// Runs `pushseal decrypt`: prints the opened alert as one JSON line. Nothing reaches
/// stdout unless authentication succeeded. Input that is not one payload but several, one
/// per line, is opened line by line: one alert per line, each failure reported with its line.
func runDecrypt(_ request: DecryptRequest, console: Console) throws -> ExitStatus {
    let input = try InputFiles.read(request.source)
    let keyring = try KeyringStore(folder: request.keysFolder).load()
    let opener = PayloadOpener(keyring: keyring, field: request.field)
    let now = Timestamp.now()
    let whole: SealedAlert
    do {
        whole = try open(input[...], with: opener, now: now)
    } catch {
        let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
            .filter { $0.element.contains { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != UInt8(ascii: "\r") } }
        guard lines.count > 1 else { throw error }
        var failed = 0
        for (index, line) in lines {
            do {
                let alert = try open(line, with: opener, now: now)
                console.output(JSONWriter.string(.object(alert.json)))
            } catch {
                failed += 1
                console.error("line \(index + 1): \(message(for: error))")
            }
        }
        guard failed == 0 else {
            console.error("\(failed) of \(lines.count) payloads were not opened")
            return .dataError
        }
        return .ok
    }
    console.output(JSONWriter.string(.object(whole.json)))
    return .ok
}

/// One payload, or one bare envelope, opened by the receiver's judge (docs/FORMAT.md §6):
/// `decrypt` prints an alert exactly when `pushseal receive` would show it decrypted, and
/// otherwise names the status the receiver gives.
private func open(_ input: ArraySlice<UInt8>, with opener: PayloadOpener, now: Int64) throws -> SealedAlert {
    let bytes = Array(input)
    let text = String(decoding: bytes, as: UTF8.self).trimmingASCIIWhitespace()
    // A payload is a JSON object; anything else is read as a bare envelope of some version
    // (`ps3.…` is then unsupported, not "not JSON").
    let judgement =
        text.hasPrefix("{")
        ? bytes.withUnsafeBytes { PayloadJudgement.of(payload: $0, field: opener.field, keyring: opener.keyring, now: now) }
        : PayloadJudgement.of(envelope: text, field: opener.field, keyring: opener.keyring, now: now)
    if judgement.status == .decrypted, let alert = judgement.alert { return alert }
    let status = judgement.status ?? .malformed
    // The kid came from the input, not from the user: a kid this keyring cannot use is bad
    // input (65), like any other altered character of the envelope.
    throw CLIFailure(.dataError, "\(status.rawValue): \(judgement.reason ?? "the receiver does not show it decrypted")")
}

extension Specs {
    static let decrypt = CommandSpec(
        name: ["decrypt"], overview: "Open a payload's sealed alert and print it as JSON.",
        usage: "pushseal decrypt FILE|- [--field enc] [--keys DIR]",
        options: [fieldOption, keysOption],
        discussion: """
            Reads a payload (or a bare ps1 or ps2 envelope) from FILE or stdin ('-') and prints the sealed
            alert as one line of JSON, exactly when 'pushseal receive' would show it decrypted. Otherwise
            it prints nothing on stdout, names the receiver's status on stderr (malformed, unsupported,
            key-missing, auth-failed, expired, passthrough, ...) and exits 65.
            """, arguments: .files)
}

struct DecryptRequest: Equatable {
    var keysFolder: String
    var field: String
    var source: String
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
    return .decrypt(DecryptRequest(keysFolder: keysFolder(parsed), field: field, source: source))
}
