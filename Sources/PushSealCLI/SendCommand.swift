import Dispatch
import Locking
import MonotonicTime
import PushSeal
import PushSealJSON
import PushSealReceiver
import PushSealSend
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Runs `pushseal send`: every device given gets one result line, in order.
func runSend(_ request: SendRequest, console: Console) throws -> ExitStatus {
    try SendCommand(request: request, console: console).run()
}

/// `pushseal send`, start to end: seals the alert once (or takes the ready payload on
/// stdin, or seals each `--batch` line), sends it to every device over HTTP/2 and prints one
/// result per device, in order, then says what went wrong, once, and gives the exit status.
///
/// A first SIGINT or SIGTERM, or stdout failing, stops taking devices; the answers in
/// flight are still awaited and printed. A signal more than a second after the first exits
/// at once (two together, as `timeout` sends them, are one request).
struct SendCommand {
    let request: SendRequest
    let console: Console
    /// Requested by a signal, by stdout failing, or by its reader leaving.
    private let stop: StopRequest
    /// The first signal, and whether sending had begun when it came.
    private let stoppedBy = Locked<(signal: Int32?, sending: Bool)>((nil, false))
    /// The sender, once there is one: a stop ends its retries.
    private let running = Locked<NotificationSender?>(nil)
    private let progress = SendProgress()
    /// Results by outcome, for the exit status.
    private let tally = Locked<[NotificationSender.Result.Outcome: Int]>([:])

    init(request: SendRequest, console: Console) throws {
        self.request = request
        self.console = console
        try Self.checkDescriptors(for: request)
        stop = try StopRequest()
    }

    /// What was taken from the command line and stdin.
    private struct Taken {
        var devices = 0
        var badLines = (count: 0, of: 0)
        var duplicates = DuplicateDevices()
    }

    func run() throws -> ExitStatus {
        // Set before any thread starts, so every later thread inherits the blocked signals.
        let signals = installStopSignals()
        defer { signals.restore() }
        let (sealer, payload) = try preparePayload()
        try checkTrustFile(request.caFile)
        let tokens = try providerTokens(request, console: console)
        let identity = try clientIdentity(request)
        // Minted (or read) before connecting: a cache that cannot be kept is a setup error.
        _ = try tokens?.token()
        if let tokens, let mode = tokens.repairedMode {
            console.warning("\(tokens.path) could be read by group or others (mode \(FileIO.modeText(mode))); it holds a live token, so it is now 0600")
        }
        let sender = try makeSender(tokens: tokens, identity: identity)
        running.withLock { $0 = sender }
        stoppedBy.withLock { $0.sending = true }
        if let signal = stoppedBy.withLock({ $0.signal }) { exit(128 + signal) }
        let flusher = startFlushing()

        var taken = Taken()
        var stoppedEarly: (any Error)?
        do {
            if let sealer, request.alert?.batch == true {
                let batch = try sendBatch(sealer: sealer, sender: sender, stop: stop, console: console)
                (taken.badLines, taken.devices) = ((batch.count, batch.of), batch.given)
            } else {
                try sendToDevices(payload: payload, sender: sender, taken: &taken)
            }
        } catch {
            // A bad device line or a token that cannot be made or kept: no more devices are
            // taken, but every request already sent gets its result before the error is said.
            // (An endpoint that fails as a whole throws nothing here: it is `sender.failure`.)
            stoppedEarly = error
        }
        sender.finish()
        flusher.cancel()
        try console.finish()
        if let note = taken.duplicates.note { console.diagnostic(note) }
        return try finish(sender: sender, taken: taken, stoppedEarly: stoppedEarly)
    }

    // MARK: - Setting up

    /// A handful of descriptors (the stop pipe, the keyring's files, Dispatch's and the HTTP/2
    /// loop's epoll and eventfd, one socket a connection) or nothing works: said now, in one
    /// line, rather than as libdispatch's trap when its timers find none left.
    private static func checkDescriptors(for request: SendRequest) throws {
        DescriptorLimit.raiseToHard()
        let needed = 10 + request.connections
        if case let free = DescriptorLimit.free, free < needed {
            throw CLIFailure(.temporaryFailure, "send needs \(needed) free file descriptors and \(free) are left (the limit is \(DescriptorLimit.current)); raise it with ulimit -n")
        }
    }

    /// The first signal stops taking devices (or exits, before sending began); a second one
    /// after it exits at once, saying how many devices have no result line.
    private func installStopSignals() -> StopSignals {
        let (stop, stoppedBy, running, progress, console) = (stop, stoppedBy, running, progress, console)
        return StopSignals(
            first: { signal in
                // Before the first request there is nothing to finish: stop as the signal says.
                guard
                    stoppedBy.withLock({ state in
                        state.signal = signal
                        return state.sending
                    })
                else { exitAtOnce(128 + signal, console: console) }
                stop.request()
                running.withLock { $0 }?.stopRetrying()
            },
            second: { signal in
                // A signal after the stop began (and its grace): out at once, taking no lock, with
                // one line that says what is left without a result.
                console.flushIfFree()
                let left = progress.unreported
                StopSignals.say("error: stopped at once by a second \(signal == SIGINT ? "SIGINT" : "SIGTERM"): \(left) device\(left == 1 ? "" : "s") sent or queued have no result line\n")
                _exit(128 + signal)
            })
    }

    /// The sealers of an alert (and, unless it is a batch, the one payload sealed now), or
    /// the ready payload read from stdin.
    private func preparePayload() throws -> (SealerSet?, [UInt8]) {
        guard let alert = request.alert else { return (nil, try readyPayload(pushType: request.pushType)) }
        let sealer = try SealerSet(alert, byteLimit: request.pushType.payloadByteLimit)
        return (sealer, alert.batch ? [] : try sealedPayload(alert, sealer: sealer.sealer(to: nil), console: console))
    }

    /// The sender, connected as the options say, printing each result as it comes.
    private func makeSender(tokens: ProviderTokenCache?, identity: TLSClientIdentity?) throws -> NotificationSender {
        let configuration = request.configuration
        let connection: SendConnection
        do {
            // --proxy beats the environment; --proxy '' goes direct.
            connection = try configuration.connection(clientIdentity: identity)
        } catch {
            throw CLIFailure(.usage, error.reason)
        }
        let (json, tally, console, stop) = (request.json, tally, console, stop)
        return try NotificationSender(
            configuration, connection: connection, tokens: tokens, progress: progress,
            emit: { result in
                tally.withLock { $0[result.outcome, default: 0] += 1 }
                // Results nobody can read stop the sending: the rest would go out unreported.
                var line = json ? resultJSON(result) : resultText(result)
                line.append("\n")
                guard console.write(Array(line.utf8)) else {
                    return stop.request()
                }
            })
    }

    /// Results reach a pipe within a tenth of a second even when answers trickle in. A reader
    /// that left (`| head -1`) is seen here too, before any result fails to be written: the
    /// sending stops at once, retries included, for nobody would see what they bring.
    private func startFlushing() -> any DispatchSourceTimer {
        let running = running
        return startFlushingResults(console, stop: stop) { running.withLock { $0 }?.stopRetrying() }
    }

    // MARK: - Devices

    /// `--device` tokens, then `--devices FILE`'s lines (a bad line is said and counted, and
    /// the rest go on); a token given twice is sent once.
    private func sendToDevices(payload: [UInt8], sender: NotificationSender, taken: inout Taken) throws {
        for device in request.devices {
            guard !stop.isRequested else { break }
            guard taken.duplicates.isNew(device.hex, at: "--device") else { continue }
            try sender.add(payload, to: device)
            taken.devices += 1
        }
        guard let file = request.devicesFile else { return }
        // A token line is 65 bytes or more: the file's size bounds the count.
        var info = stat()
        if file != "-", stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
            taken.duplicates.expect(Int(info.st_size) / 65)
        }
        let shownFile = file == "-" ? "stdin" : file
        var lines = 0
        try forEachDevice(
            in: file, stop: stop,
            { device, line in
                lines += 1
                guard taken.duplicates.isNew(device.hex, at: "\(shownFile) line \(line)") else { return }
                try sender.add(payload, to: device)
                taken.devices += 1
            },
            refused: { line, reason in
                lines += 1
                taken.badLines.count += 1
                console.error("\(shownFile) line \(line): \(reason)")
            })
        taken.badLines.of = lines
    }

    // MARK: - Ending

    /// Says why sending ended early, if it did, and gives the exit status.
    private func finish(sender: NotificationSender, taken: Taken, stoppedEarly: (any Error)?) throws -> ExitStatus {
        if let failure = sender.failure {
            // --cacert helps only when no trusted issuer was found, not for an expired
            // certificate or one made for another host.
            let unknownIssuer = ["self-signed", "self signed", "local issuer"].contains { failure.reason.contains($0) }
            throw CLIFailure(
                exitStatus(for: failure), failure.reason + (failure.code == .untrusted && unknownIssuer ? "; give --cacert FILE to trust it" : ""))
        }
        if let stoppedEarly { throw stoppedEarly }
        if let signal = stoppedBy.withLock({ $0.signal }) {
            console.error("stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM"): devices after the last result were not sent")
            return signal == SIGINT ? .interrupted : .terminated
        }
        // Nothing to send to is a mistake in the command, not a success with no results.
        if taken.devices == 0 && taken.badLines.count == 0 {
            let source = request.alert?.batch == true ? "no --batch lines on stdin" : "no device tokens in \(request.devicesFile ?? "the devices given")"
            throw CLIFailure(.usage, "\(source): nothing was sent")
        }
        return endingStatus(badLines: taken.badLines.count, of: taken.badLines.of, outcomes: tally.withLock { $0 }, console: console)
    }
}

/// How a send ends once every result is in (APNs' and Web Push's alike): lines that were
/// not sent first (65, said on stderr), then a refusal (69), then a failure for now (75).
func endingStatus<Target>(badLines: Int, of lines: Int, outcomes: [SendResult<Target>.Outcome: Int], console: Console) -> ExitStatus {
    if badLines > 0 {
        console.error("\(badLines) of \(lines) lines were not sent")
        return .dataError
    }
    if outcomes[.refused, default: 0] > 0 { return .unavailable }
    if outcomes[.failed, default: 0] > 0 { return .temporaryFailure }
    return .ok
}

/// stdout as `send` sees it while results wait.
enum StandardOutput {
    /// True when stdout is a pipe whose reader has gone: poll says POLLERR for such a pipe
    /// (never for a file or a terminal), before anything written to it fails.
    static var readerLeft: Bool {
        var descriptor = pollfd(fd: 1, events: Int16(POLLOUT), revents: 0)
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLERR) != 0
    }
}

/// The provider token cache for the request's .p8, team and key id; nil when a client
/// certificate authenticates instead.
private func providerTokens(_ request: SendRequest, console: Console) throws -> ProviderTokenCache? {
    guard case .token(let authKey, let keyID, let teamID) = request.credentials else { return nil }
    return try providerTokens(authKey: authKey, keyID: keyID, teamID: teamID, keysFolder: request.keysFolder, console: console)
}

/// The client certificate the request names, read with its passphrase, if it names one.
func clientIdentity(_ request: SendRequest) throws -> TLSClientIdentity? {
    guard case .certificate(let file, let passphraseFile) = request.credentials else { return nil }
    var bytes = try InputFiles.read(file, bound: .pem)
    defer { SecureMemory.wipe(&bytes) }
    var passphrase: [UInt8]?
    if let passphraseFile {
        var read = try InputFiles.read(passphraseFile, bound: .small)
        // A file written by `echo` ends with a newline that is not part of the passphrase.
        while let last = read.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { read.removeLast() }
        passphrase = read
    } else if let given = getenv("PUSHSEAL_CERT_PASSPHRASE") {
        passphrase = Array(UnsafeBufferPointer(start: UnsafeRawPointer(given).assumingMemoryBound(to: UInt8.self), count: strlen(given)))
    }
    defer { if passphrase != nil { SecureMemory.wipe(&passphrase!) } }
    do {
        return try TLSClientIdentity(bytes: bytes, passphrase: passphrase)
    } catch {
        throw CLIFailure(.dataError, "\(file) cannot be used as a client certificate: \(error.reason)")
    }
}

/// `--batch`: each JSON line names a device and its own alert, sealed on its own (a line's
/// ttl is its apns-expiration too). A bad line is reported with its number and skipped.
/// Returns how many lines were bad, of how many, and how many were not blank.
private func sendBatch(sealer: SealerSet, sender: NotificationSender, stop: StopRequest, console: Console) throws -> (count: Int, of: Int, given: Int) {
    var reader = LineReader(descriptor: 0, stop: stop)
    var number = 0
    var bad = 0
    var lines = 0
    let overlong = reader.overlongReason
    try reader.forEachLine(
        overlong: {
            number += 1
            lines += 1
            bad += 1
            console.error("line \(number): \(overlong)")
        },
        each: { line in
            number += 1
            guard !line.isBlankLine else { return }
            lines += 1
            let sealed: (device: DeviceToken, payload: [UInt8], expiration: String?)
            do {
                sealed = try batchLine(line, sealer: sealer)
            } catch {
                bad += 1
                return console.error("line \(number): \(message(for: error))")
            }
            try sender.add(sealed.payload, to: sealed.device, expiration: sealed.expiration)
        })
    return (bad, number, lines)
}

/// One `--batch` line: its device, its sealed payload and its own expiration, if any.
private func batchLine(_ line: UnsafeRawBufferPointer, sealer: SealerSet) throws -> (device: DeviceToken, payload: [UInt8], expiration: String?) {
    guard case .object(let object) = try JSONParser.parse(line) else {
        throw PayloadError(.invalidAlert, "the line is not a JSON object")
    }
    guard case .string(let given)? = object["device"] else {
        throw PayloadError(.invalidAlert, "the line has no \"device\" (the device token in hex)")
    }
    guard let device = DeviceToken(given.lowercased()) else {
        throw PayloadError(.invalidAlert, "\"device\" is not a device token in hex")
    }
    let request = try AlertRequest(json: JSONObject(object.filter { $0.key != "device" }))
    let now = Timestamp.now()
    let expiration = request.timeToLive.map { String(now + $0.components.seconds) }
    let visible = request.visible
    return (device, try sealer.sealer(to: request.recipient).payload(for: try request.alert(now: now), truncatingBody: sealer.truncate, visible: visible).payload, expiration)
}

/// Device tokens already taken: one given twice gets one notification, not two, and one
/// line at the end says so.
///
/// Kept as 64-bit SipHash fingerprints under this process's random seed, not as the tokens
/// (100 bytes and more each): about 11 bytes a device, 11 MB at a million, grown a 256th at
/// a time so that no growth doubles the memory at once. Two tokens sharing a fingerprint
/// is a chance of about 3 in 100 million at a million devices, and would show in the note,
/// which names the first device it held back.
struct DuplicateDevices {
    private var seen = FingerprintSet()
    private var count = 0
    private var first: (device: String, place: String)?

    /// Room for about `devices` at once, when their number is known ahead (a devices file's
    /// size): no growth then, and none of the freed tables growth leaves behind.
    mutating func expect(_ devices: Int) {
        seen.reserve(devices)
    }

    /// True the first time `device` is seen; `place` says where, for the note.
    mutating func isNew(_ device: String, at place: String) -> Bool {
        if seen.insert(UInt64(bitPattern: Int64(device.hashValue))) { return true }
        count += 1
        if first == nil { first = (device, place) }
        return false
    }

    var note: String? {
        guard let first else { return nil }
        return "note: \(count) device token\(count == 1 ? " was" : "s were") given again and sent once (the first repeated: \(first.device), again at \(first.place))"
    }
}

/// A payload from stdin, as `pushseal encrypt` printed it.
private func readyPayload(pushType: APNs.PushType) throws -> [UInt8] {
    let limit = pushType.payloadByteLimit
    var bytes = try InputFiles.read("-", atMost: limit + 2)
    while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
    guard bytes.count <= limit else {
        throw CLIFailure(.dataError, "the payload read from stdin is over APNs' \(limit) bytes")
    }
    guard case .object(let object)? = try? JSONParser.parse(bytes), case .object(let aps)? = object["aps"] else {
        throw CLIFailure(.dataError, "stdin is not an APNs payload (a JSON object with 'aps'); pipe 'pushseal encrypt' into it")
    }
    if pushType == .background, aps["alert"] != nil || aps["content-available"] != .integer(1) {
        throw CLIFailure(.dataError, "a background push has \"content-available\":1 and no alert in 'aps' (APNs' rule); send this payload as alert")
    }
    return bytes
}

/// A devices file's line: one token of at most 200 hex digits, and room for a comment.
private let deviceLine = InputBound(4096, "a devices file's line", because: "a device token is at most 200 hex digits")

/// Each token in a devices file or stdin (one per line; blank lines and # comments
/// skipped), read as it comes, until `stop` is requested. A line that is not one token in
/// hex (or that has anything after its token, as a spreadsheet's `TOKEN<TAB>42` does) is
/// handed to `refused` with its number and reason, and skipped. A byte-order mark before the
/// first line, as some editors write, is not part of it.
private func forEachDevice(
    in file: String, stop: StopRequest, _ body: (DeviceToken, Int) throws -> Void,
    refused: (Int, String) -> Void
) throws {
    let descriptor = try InputFiles.open(file)
    defer { if descriptor != 0 { close(descriptor) } }
    var reader = LineReader(descriptor: descriptor, stop: stop, bound: deviceLine)
    var number = 0
    let overlong = reader.overlongReason
    try reader.forEachLine(
        overlong: {
            number += 1
            refused(number, overlong)
        },
        each: { line in
            number += 1
            // Bytes, not Characters: a million lines each judged by Unicode's whitespace tables
            // was the sender's largest cost.
            func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") }
            var start = line.startIndex
            var end = line.endIndex
            if number == 1, line.count >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF { start += 3 }
            while start < end, isBlank(line[start]) { start += 1 }
            while end > start, isBlank(line[end - 1]) { end -= 1 }
            guard start < end, line[start] != UInt8(ascii: "#") else { return }
            var token: [UInt8] = []
            token.reserveCapacity(end - start)
            var index = start
            while index < end, !isBlank(line[index]) {
                let byte = line[index]
                token.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
                index += 1
            }
            guard index == end else {
                return refused(number, "something follows the device token (one token per line, nothing after it)")
            }
            let text = String(decoding: token, as: UTF8.self)
            guard let device = DeviceToken(text) else { return refused(number, "not a device token in hex") }
            try body(device, number)
        })
}

private func resultText(_ result: NotificationSender.Result) -> String {
    switch result.outcome {
    case .ok:
        return "ok \(result.target.hex) \(result.notificationID)" + (result.retriedAfterUnknownOutcome ? " (retried after an unknown outcome)" : "")
    case .refused, .failed:
        var line = "fail \(result.target.hex) \(result.status) \(TerminalText.escaping(result.reason ?? ""))"
        if let timestamp = result.timestamp { line += " " + Timestamp.format(timestamp / 1_000) }
        if result.outcome == .failed, result.attempts > 0 { line += result.attempts == 1 ? " (1 attempt)" : " (\(result.attempts) attempts)" }
        if result.retriedAfterUnknownOutcome { line += " (retried after an unknown outcome)" }
        return line
    }
}

private func resultJSON(_ result: NotificationSender.Result) -> String {
    var object = JSONObject()
    object.append("device", .string(result.target.hex))
    object.append("status", .string(result.outcome.rawValue))
    object.append("http-status", .integer(result.status))
    object.append("apns-id", .string(result.notificationID))
    object.append("reason", result.reason.map { .string($0) } ?? .null)
    object.append("timestamp", result.timestamp.map { .integer($0) } ?? .null)
    object.append("attempts", .integer(result.attempts))
    object.append("retried-after-unknown-outcome", .bool(result.retriedAfterUnknownOutcome))
    object.append("elapsed_ms", .number(result.elapsed.millisecondsText))
    return String(decoding: JSONWriter.bytes(.object(object)), as: UTF8.self)
}

extension Specs {
    static let send = CommandSpec(
        name: ["send"], overview: "Seal an alert and deliver it to APNs over HTTP/2, one result line per device.",
        usage:
            "pushseal send --device TOKEN...|--devices FILE|- --topic BUNDLE --auth-key F.p8 --key-id K --team-id T [alert options] [BODY...]\n       pushseal encrypt ... | pushseal send --device TOKEN... [options] -\n       pushseal send --batch [options] < alerts.jsonl\n       pushseal send --webpush FILE --vapid-subject URI [alert options] [BODY...]",
        options: sealingOptions(ttl: "Sealed exp and apns-expiration this far ahead (e.g. 1h or 1h30m; 1s to 365d).") + [
            OptionSpec("device", value: "token", repeatable: true, help: "A device token (hex) to send to."),
            OptionSpec("devices", value: "file", help: "Device tokens, one per line ('-': stdin; blank lines and # comments skipped)."),
            OptionSpec(
                "batch",
                help: "Read JSON lines on stdin, each a device and its own alert: {\"device\": TOKEN, \"title\": …}; with --webpush FILE, FILE's lines, each {\"subscription\": {…}, \"title\": …}."),
            OptionSpec(
                "webpush", value: "file",
                help: "Deliver over Web Push instead, to the browser subscriptions in FILE (one PushSubscription JSON a line; '-': stdin)."),
            OptionSpec(
                "vapid-subject", value: "uri", environment: "PUSHSEAL_VAPID_SUBJECT",
                help: "With --webpush: how push services reach you, mailto:you@your-domain or https://… (required)."),
            toOption,
            senderKeyOption,
            OptionSpec("topic", value: "bundle", environment: "PUSHSEAL_TOPIC", help: "apns-topic: the app's bundle id (required)."),
            authKeyOption,
            keyIDOption,
            teamIDOption,
            OptionSpec("cert", value: "file", environment: "PUSHSEAL_CERT", help: "Authenticate with this client certificate and key (PEM, or a .p12) instead of a provider token."),
            OptionSpec("cert-passphrase-file", value: "file", help: "Read --cert's passphrase from this file (or set $PUSHSEAL_CERT_PASSPHRASE; never an argument)."),
            OptionSpec("sandbox", help: "Send to APNs' sandbox (development builds)."),
            OptionSpec("production", help: "Send to APNs' production servers (the default)."),
            OptionSpec("endpoint", value: "url", environment: "PUSHSEAL_ENDPOINT", help: "Another APNs-compatible server, such as pushseal receive --listen."),
            OptionSpec("allow-cleartext", help: "Let an http:// --endpoint be another machine (the provider token then travels in clear)."),
            OptionSpec("cacert", value: "file", help: "Trust the certificates in FILE (PEM) for --endpoint."),
            OptionSpec("priority", value: "10|5|1", choices: APNs.Priority.allCases.map(\.rawValue), help: "apns-priority."),
            OptionSpec("collapse-id", value: "id", help: "apns-collapse-id (at most 64 bytes)."),
            OptionSpec("push-type", value: "type", choices: APNs.PushType.allCases.map(\.rawValue).sorted(), help: "apns-push-type (default: alert)."),
            OptionSpec("expiration", value: "unix", help: "apns-expiration: UNIX seconds (0: deliver now or never)."),
            OptionSpec("retries", value: "n", help: "Send again after 429, 500, 502, 503, 504 or no answer at most N times (default: as often as --retry-for allows)."),
            OptionSpec(
                "retry-for", value: "duration",
                help: "Start no retry later than this after a device's first attempt (\(DurationRange.help(default: SendRetries.defaultRetryFor, DurationRange.retryFor)))."),
            OptionSpec("concurrency", value: "n", help: "At most N requests in flight on each connection (default: the server's limit, up to 1000)."),
            OptionSpec("connections", value: "n", help: "Spread the devices over N HTTP/2 connections (default: 1; 1 to 64)."),
            OptionSpec("proxy", value: "url", help: "Tunnel through this HTTP proxy (http://[user:password@]host:port; '' for none). Default: $HTTPS_PROXY unless $NO_PROXY names the host."),
            OptionSpec(
                "timeout", value: "duration",
                help:
                    "Give up on an answer this long after its request went out, and on a connection attempt (\(DurationRange.help(default: SendConnection.defaultTimeout, DurationRange.requestTimeout)))."
            ),
            OptionSpec("json", help: "Write one JSON result per line instead of text."),
            keysOption
        ],
        discussion: """
            ARGUMENTS:
              BODY...   The body as words. '-' instead sends a ready payload read from stdin (what
                        'pushseal encrypt' printed) to every device.

            BATCH LINES (--batch): one JSON object per line: "device" (hex) and the alert's own
              fields as in 'pushseal encrypt --batch' (title, subtitle, body, level, url, data,
              ttl, ...). Each line is sealed on its own; a line's ttl also sets its
              apns-expiration. A bad line is reported on stderr with its number and skipped.

            RESULTS: one line per device, in the order given: 'ok TOKEN APNS-ID', or
              'fail TOKEN STATUS REASON [TIMESTAMP]', each ending '(retried after an unknown
              outcome)' when the device may have got it twice. With --json: {"device","status"
              (ok, refused, failed),"http-status","apns-id","reason","timestamp","attempts",
              "retried-after-unknown-outcome","elapsed_ms"}. A device given twice is sent once.

            PROVIDER TOKEN: signed with --auth-key (ES256), kept in the keyring folder (mode 0600),
              or in $XDG_CACHE_HOME/pushseal (~/.cache/pushseal) when there is none, and shared
              by every pushseal process for 50 minutes; minted again only then, or when APNs
              answers ExpiredProviderToken for a token at least 20 minutes old (the request is
              then sent once more; a younger one means a clock is wrong, and the result says so).
              A cached token made with another key is never used.

            RETRIES: 429, 500, 502, 503 and 504 are sent again with exponential backoff and
              jitter (or after the server's retry-after), within --retry-for of the first attempt
              (at most --retries times, when given); other refusals are final. What the server did not
              process (a refused stream, past a GOAWAY) goes out again at once on another
              connection; a request that went out and got no answer is sent again once at most.

            CONNECTING: HTTP/2 only (ALPN h2 over TLS; prior knowledge over http://), the
              system's CA store plus --cacert, every address of the name in turn (the name looked
              up off the sending thread; an address that takes a connection and then says nothing
              gives way to the next at the next attempt). HTTPS_PROXY
              (http_proxy for http://) and NO_PROXY (names, addresses, ranges such as
              127.0.0.0/8) are honoured; --proxy beats them. IPv6 goes in brackets. Four
              failed attempts, with backoff, fail every device at once: one line on stderr
              says why, and each device still gets its result line.

            STOPPING: a first SIGINT or SIGTERM stops taking devices, sending and retrying;
              answers already on their way get 5 s, are printed, then pushseal exits 130
              (SIGINT) or 143 (SIGTERM). Two signals within a second are one request (timeout
              sends two at once); a later one exits at once, saying how many devices were left
              without a result line.

            EXAMPLES:
              pushseal send --device "$TOKEN" --topic com.example.app -t "Deploy" -b "api-7 is live"
              pushseal encrypt -t Hi -b there | pushseal send --devices tokens.txt -
              pushseal send --endpoint https://127.0.0.1:8443 --cacert Keys/tls-cert.pem --device "$TOKEN" -b test
            """)
}

func parseSend(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.send
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    if let file = parsed.value("webpush") { return .sendWebPush(try webPushDelivery(parsed, spec: spec, file: file)) }
    let ready = parsed.positionals == ["-"]
    let batch = parsed.has("batch")
    var alert: EncryptRequest?
    if batch {
        let request = try alertOptions(parsed, spec: spec, stdinIsBody: false)
        guard request.fields.isEmpty, request.url == nil, request.body == .none, request.data.isEmpty, request.timeToLive == nil,
            parsed.positionals.isEmpty
        else {
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
        || !parsed.all("data").isEmpty
    {
        throw fail("'-' sends the payload read from stdin as it is; alert options cannot be combined with it")
    }
    if parsed.value("devices") == "-", ready {
        throw fail("stdin can carry the payload ('-') or the devices (--devices -), not both")
    }
    return .send(try delivery(parsed, spec: spec, alert: alert, batch: batch))
}

/// Flushes send's result lines every 100 ms, so they show as they come; a reader of stdout
/// that went away stops the send (no more taken, no more retries), as `| head -1` ends cat.
func startFlushingResults(_ console: Console, stop: StopRequest, stopSending: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
    let flusher = DispatchSource.makeTimerSource(queue: .global())
    flusher.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
    flusher.setEventHandler {
        guard !console.flush() || StandardOutput.readerLeft else { return }
        stop.request()
        stopSending()
    }
    flusher.resume()
    return flusher
}
