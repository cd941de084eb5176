#if canImport(Glibc)
import Glibc
#endif
import PushSeal
import MonotonicTime

/// Runs `pushseal run`: the command first, then its outcome as one sealed alert, sent (or
/// printed with --print). Returns the command's own exit status, which becomes pushseal's.
///
/// What would make the alert impossible (no keyring, an unreadable .p8) is found before the
/// command starts, so nobody waits an hour for an alert that could never go out.
func runWatched(_ request: RunRequest, console: Console) throws -> Int32 {
    _ = try SealerSet(request.alert)
    if let delivery = request.delivery { _ = try InputFiles.read(delivery.authKey) }

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
        let title: String = switch outcome.ending {
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
        DataItem(key: "duration-ms", value: .number(String(outcome.duration.saturatingMilliseconds))),
    ]
    return alert
}

/// The command as a shell would take it back: words with spaces or quotes single-quoted.
func shellLine(_ words: [String]) -> String {
    words.map { word in
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_./=:,+@%".unicodeScalars.contains($0)
        }
        return plain ? word : "'" + word.replacing("'", with: "'\\''") + "'"
    }.joined(separator: " ")
}

private func signalName(_ number: Int32) -> String {
    let names: [Int32: String] = [SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGABRT: "SIGABRT", SIGKILL: "SIGKILL",
                                  SIGSEGV: "SIGSEGV", SIGPIPE: "SIGPIPE", SIGTERM: "SIGTERM", SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2"]
    return names[number] ?? "signal \(number)"
}

private func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "this machine" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
