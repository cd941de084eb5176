import MonotonicTime
import PushSeal
import PushSealReceiver

#if canImport(Glibc)
import Glibc
#endif

/// Runs `pushseal run`: the command first, then its outcome as one sealed alert, sent (or
/// printed with --print). Returns the command's own exit status, which becomes pushseal's.
///
/// What would make the alert impossible (no keyring, an unreadable .p8) is found before the
/// command starts, so nobody waits an hour for an alert that could never go out.
func runWatched(_ request: RunRequest, console: Console) throws -> Int32 {
    _ = try SealerSet(request.alert)
    if let delivery = request.delivery {
        switch delivery.credentials {
        case .token(let authKey, _, _): _ = try InputFiles.read(authKey, bound: .pem)
        case .certificate(let file, _): _ = try InputFiles.read(file, bound: .pem)
        }
    }

    let outcome = WatchedCommand.run(request.command, tail: request.tail, stdout: request.delivery == nil ? 2 : 1)
    if case .notStarted(_, let reason) = outcome.ending {
        console.error("\(request.command[0].prefix(200)): \(reason)")
    }
    let alert = outcomeAlert(request, outcome: outcome, host: hostName())
    do {
        if var delivery = request.delivery {
            delivery.alert = alert
            // --ttl counts from now, when the alert goes out, not from when the command started.
            if let ttl = alert.timeToLive { delivery.expiration = String(Timestamp.now() + ttl.components.seconds) }
            // The results stay out of the command's stdout unless asked for.
            let status = try runSend(delivery, console: request.resultsOnStdout ? console : Console(results: 2))
            if status != .ok { console.error("the outcome was not delivered to every device (\(status.rawValue)); exiting with the command's status") }
        } else {
            _ = try runEncrypt(alert, console: console)
        }
    } catch {
        console.error("the outcome was not sent: \(message(for: error))")
    }
    return outcome.exitStatus
}

/// The alert for an outcome: a title that says how it went (unless --title gave one), and
/// sealed in the body the command line, the status, the time it took and its last lines.
func outcomeAlert(_ request: RunRequest, outcome: CommandOutcome, host: String) -> EncryptRequest {
    var alert = request.alert
    let line = String(shellLine(request.command).prefix(300))
    let status = if case .signalled(let number) = outcome.ending { "killed by \(signalName(number))" } else { outcome.ending.description }
    if alert.fields.title == nil {
        let short = line.count > 60 ? line.prefix(59) + "…" : line[...]
        let title: String =
            switch outcome.ending {
            case .exited(0): "✅ \(short) finished"
            case .exited(let code): "❌ \(short) failed (exit \(code))"
            case .signalled(let number): "❌ \(short) stopped by \(signalName(number))"
            case .notStarted: "❌ \(short) did not start"
            }
        try? alert.fields.set(.title, text: title)
    }
    if !outcome.succeeded, alert.fields.interruptionLevel == nil {
        alert.fields.interruptionLevel = .timeSensitive
    }
    var body = "$ \(line)\n\(status) after \(DurationText.approximate(outcome.duration)) on \(host)"
    // The last lines that fit: an alert is sealed whole into a 4 KB payload.
    var lines: [String] = []
    var room = 1_500
    for text in outcome.lastLines.reversed() {
        room -= text.utf8.count + 1
        guard room >= 0 else { break }
        lines.insert(text, at: 0)
    }
    if !lines.isEmpty { body += "\n" + lines.joined(separator: "\n") }
    alert.body = .text(body)
    alert.data += [
        DataItem(key: "command", value: .string(line)),
        DataItem(key: "exit-status", value: .number(String(outcome.exitStatus))),
        DataItem(key: "duration-ms", value: .number(String(outcome.duration.saturatingMilliseconds)))
    ]
    return alert
}

/// The command as a shell would take it back: words with spaces or quotes single-quoted.
func shellLine(_ words: [String]) -> String {
    words.map { word in
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_./=:,+@%".unicodeScalars.contains($0)
            }
        return plain ? word : "'" + word.replacing("'", with: "'\\''") + "'"
    }.joined(separator: " ")
}

private func signalName(_ number: Int32) -> String {
    let names: [Int32: String] = [
        SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGABRT: "SIGABRT", SIGKILL: "SIGKILL",
        SIGSEGV: "SIGSEGV", SIGPIPE: "SIGPIPE", SIGTERM: "SIGTERM", SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2"
    ]
    return names[number] ?? "signal \(number)"
}

private func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "this machine" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

extension Specs {
    static let run = CommandSpec(
        name: ["run"], overview: "Run a command, then send (or print) its outcome as a sealed alert.",
        usage: "pushseal run [send options] [--tail 5] [--print] -- CMD [ARGS...]",
        options: send.options.filter { !["batch", "body", "message"].contains($0.long) } + [
            OptionSpec("tail", value: "n", help: "Seal the last N lines of the command's output into the body (default: 5; 0: none, and the output is left alone)."),
            OptionSpec("print", help: "Print the payload on stdout instead of sending it (no APNs options needed)."),
            OptionSpec("results", value: "stream", choices: ["stderr", "stdout"], help: "Where the delivery results go: stderr (the default; stdout is the command's) or stdout.")
        ],
        discussion: """
            Runs CMD with its arguments as given (no shell), its stdin, stdout and stderr passed
            through, and keeps the last --tail lines of its output. When it ends, one alert goes
            out: the title says whether it worked (--title replaces it), the sealed body holds the
            command line, the exit status, how long it ran and those lines; a failure is
            time-sensitive unless --level says otherwise. The sealed data carries "command",
            "exit-status" and "duration-ms" for an app to read.

            EXIT STATUS: the command's own (128+N when signal N ended it); 127 when it cannot be
              started, 126 when it is not executable. The alert is sent either way; when it
              cannot be, pushseal says why on stderr and still exits with the command's status.

            SIGNALS: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to pushseal are
              passed on to the command (a Ctrl-C at the terminal reaches it directly, once).

            With --print the command's stdout goes to stderr, so stdout carries only the payload.
            The delivery results ("ok TOKEN APNS-ID" per device) go to stderr, so that the
            command's own output on stdout stays as it was; --results stdout puts them there.

            EXAMPLES:
              pushseal run --device "$TOKEN" -- make test
              pushseal run --print --tail 10 -- ./backup.sh | pushseal send --device "$TOKEN" -
            """, arguments: .commands)
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

func parseRun(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.run
    // Everything after the first `--` is the command, whatever it looks like.
    let split = arguments.firstIndex(of: "--")
    let options = Array(arguments[..<(split ?? arguments.endIndex)])
    var parsed = try parseArguments(options, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    guard let split else {
        throw fail(
            parsed.positionals.isEmpty
                ? "no command: give it after '--', as in 'pushseal run -- make test'"
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
    return .run(
        RunRequest(
            command: command, tail: tail, alert: alert,
            delivery: print ? nil : try delivery(parsed, spec: spec, alert: alert, batch: false),
            resultsOnStdout: results == "stdout"))
}
