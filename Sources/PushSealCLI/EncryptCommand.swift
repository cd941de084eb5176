import Locking
import PushSeal
import PushSealJSON
import PushSealReceiver
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs `pushseal encrypt`: one alert from options, or JSON lines with `--batch`.
/// Returns the exit status (batch mode finishes the stream before reporting bad lines).
func runEncrypt(_ request: EncryptRequest, console: Console) throws -> ExitStatus {
    if request.batch {
        // Before any thread starts: a stop then writes every payload already sealed.
        let stop = try StreamStop(console: console)
        return try runBatch(sealers: try SealerSet(request), jobs: request.jobs, truncate: request.truncate, stop: stop, console: console)
    }
    let sealers = try SealerSet(request)
    if request.body == .none, StandardInput.holdsUnreadInput {
        // `df -h | pushseal encrypt -t Disk`: the '-' that reads the body was forgotten.
        console.warning("stdin is a pipe or a file, and it is not read: the alert has no body from it; give '-' to seal stdin as the body")
    }
    console.output(bytes: try sealedPayload(request, sealer: sealers.sealer(to: nil), console: console))
    return .ok
}

/// What `encrypt` may have been handed on stdin without a '-' to read it.
enum StandardInput {
    /// A pipe, or a regular file with something in it: not a terminal, not /dev/null, not a
    /// socket (ssh's), so the warning is for input someone meant to give.
    static var holdsUnreadInput: Bool {
        var info = stat()
        guard fstat(0, &info) == 0 else { return false }
        switch info.st_mode & S_IFMT {
        case S_IFIFO: return true
        case S_IFREG: return info.st_size > 0
        default: return false
        }
    }
}

/// The one payload an encrypt request describes (`encrypt` prints it, `send` sends it).
/// With --truncate a body that does not fit is cut, and a note on stderr says how far.
func sealedPayload(_ request: EncryptRequest, sealer: PayloadSealer, console: Console? = nil) throws -> [UInt8] {
    var alert = AlertRequest()
    alert.fields = request.fields
    // Whether stdin held more than was read: its length is then unknown, and the note says so.
    var cutFromLonger = false
    switch request.body {
    case .none: break
    case .text(let text): alert.body = text
    case .standardInput:
        // Reading stops as soon as the body could no longer fit a payload, so a runaway
        // producer costs 4 KiB of memory, not all of its output; with --truncate, only what
        // could be kept is read.
        var bytes = try InputFiles.read("-", atMost: PayloadSealer.byteLimit + 1)
        cutFromLonger = bytes.count > PayloadSealer.byteLimit
        if request.truncate, bytes.count > PayloadSealer.byteLimit {
            bytes.removeLast(bytes.count - PayloadSealer.byteLimit)
            // Not in the middle of a character: drop the bytes of one cut short.
            while !bytes.isEmpty, String(validating: bytes, as: UTF8.self) == nil, bytes.last.map({ $0 & 0x80 != 0 }) == true { bytes.removeLast() }
        }
        // `df -h | pushseal encrypt -` ends with the tool's newline, which is not content.
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard bytes.count <= PayloadSealer.byteLimit else {
            throw CLIFailure(.dataError, "the body read from stdin is over \(PayloadSealer.byteLimit) bytes, more than an APNs payload can carry; --truncate cuts it to fit")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIFailure(.dataError, "the body read from stdin is not valid UTF-8")
        }
        guard !text.isEmpty else { throw CLIFailure(.dataError, "the body read from stdin is empty") }
        alert.body = text
    }
    alert.url = request.url
    for item in request.data { alert.data[item.key] = item.value }
    alert.timeToLive = request.timeToLive
    let sealed = try sealer.payload(for: try alert.alert(now: Timestamp.now()), truncatingBody: request.truncate)
    if let cut = sealed.cut {
        // Past the bytes read, stdin's length is unknown: the note says only that it was longer.
        let whole = cutFromLonger ? "characters of stdin's more than \(PayloadSealer.byteLimit) bytes" : "of its \(cut.of) characters"
        console?.diagnostic("note: the body was cut to \(cut.kept) \(whole) to fit \(sealer.web == nil ? "APNs' " : "a Web Push message's ")\(sealer.byteLimit)-byte payload")
    }
    return sealed.payload
}

/// What one batch of lines became: payload lines, and the lines that could not be sealed.
private struct SealedLines: Sendable {
    var payloads: [UInt8] = []
    var failures: [(line: Int, reason: String)] = []
}

/// JSON lines in, one payload per line out, in input order, on `jobs` cores; memory holds
/// a few batches of lines whatever the input size. A bad line is reported with its number
/// and skipped, so one typo does not stop a fan-out.
private func runBatch(sealers: SealerSet, jobs: Int, truncate: Bool, stop: StreamStop, console: Console) throws -> ExitStatus {
    let now = Timestamp.now()
    let failures = Atomic<Int>(0)
    let lines = LineWorkerPool<SealedLines>(
        jobs: jobs,
        process: { batch in
            var sealed = SealedLines()
            sealed.payloads.reserveCapacity(batch.count * 400)
            batch.forEach { line, number, _ in
                do {
                    let alert: AlertRequest
                    do {
                        alert = try AlertRequest(line: line)
                    } catch let error as JSONParseError {
                        throw PayloadError(.invalidAlert, "not JSON (\(error)); each line is one alert, such as {\"title\":\"Deploy\",\"body\":\"done\"}")
                    }
                    let sealer = try sealers.sealer(to: alert.recipient)
                    let visible = alert.visible
                    let stamped = try (consume alert).alert(now: now)
                    do {
                        try sealer.append(stamped, visible: visible, to: &sealed.payloads)
                    } catch let error as PayloadError where error.code == .tooLarge && truncate {
                        // Cutting the body to fit takes several seals; only such lines pay for them.
                        sealed.payloads.append(contentsOf: try sealer.payload(for: stamped, truncatingBody: true, visible: visible).payload)
                    }
                    sealed.payloads.append(UInt8(ascii: "\n"))
                } catch {
                    sealed.failures.append((number, message(for: error)))
                }
            }
            return sealed
        },
        emit: { sealed in
            console.write(sealed.payloads)
            // A slow stream's payloads go out as they are sealed, not when a buffer fills.
            if !LineReader.hasInput(0) { console.flush() }
            for failure in sealed.failures {
                console.error("line \(failure.line): \(failure.reason)")
            }
            failures.add(sealed.failures.count, ordering: .relaxed)
        })
    var reader = LineReader(descriptor: 0, stop: stop.request)
    var lineNumber = 0
    var alerts = 0
    var overlong = 0
    let overlongReason = reader.overlongReason
    try reader.forEachLine(
        idle: lines.dispatchPending,
        overlong: {
            lineNumber += 1
            alerts += 1
            overlong += 1
            console.error("line \(lineNumber): \(overlongReason)")
        },
        each: { line in
            lineNumber += 1
            // Blank lines are skipped, and not counted as alerts.
            guard !line.isBlankLine else { return }
            alerts += 1
            lines.add(line, number: lineNumber)
        })
    lines.finish()
    console.flush()
    let failed = failures.load(ordering: .relaxed) + overlong
    if let stopped = stop.ending(done: "\(alerts - failed) of the \(alerts) alerts read were sealed and written", console: console) {
        return stopped
    }
    if failed > 0 {
        console.error("\(failed) of \(alerts) alerts were not encrypted")
        return .dataError
    }
    return .ok
}

extension Specs {
    /// The option for each alert field: the encrypt parser, its help and the batch-line
    /// names all follow `AlertField`, so no field can have an option and be lost elsewhere.
    static let alertFieldOptions: [(field: AlertField, option: OptionSpec)] = AlertField.every.map { field in
        let option: OptionSpec =
            switch field {
            case .title: OptionSpec("title", short: "t", value: "title", help: "Alert title (sealed).")
            case .subtitle: OptionSpec("subtitle", value: "subtitle", help: "Alert subtitle (sealed).")
            case .body: OptionSpec("body", short: "b", value: "body", help: "Alert body (sealed).")
            case .badge: OptionSpec("badge", value: "n", help: "App icon badge number.")
            case .sound: OptionSpec("sound", short: "s", value: "name", help: "Sound to play ('default' for the system sound).")
            case .threadID: OptionSpec("group", short: "g", value: "id", help: "Thread id that groups notifications (thread-id).")
            case .category: OptionSpec("category", value: "id", help: "Notification category (actions).")
            case .targetContentID: OptionSpec("target-content-id", value: "id", help: "Which window or content the notification brings forward.")
            case .interruptionLevel:
                OptionSpec("level", short: "l", value: "level", choices: InterruptionLevel.all.map(\.rawValue), help: "passive, active, time-sensitive (or timeSensitive) or critical.")
            case .relevanceScore: OptionSpec("relevance-score", value: "0-1", help: "How the notification ranks in its summary (a number from 0 to 1).")
            }
        return (field, option)
    }

    /// The alert and sealing options `encrypt` and `send` share (one parser reads them).
    static func sealingOptions(ttl ttlHelp: String) -> [OptionSpec] {
        alertFieldOptions.map(\.option) + [
            OptionSpec("message", short: "m", value: "body", help: "Same as --body."),
            OptionSpec("url", value: "url", help: "URL for the app to open, sealed as data.url."),
            OptionSpec("data", value: "key=value", repeatable: true, help: "Custom data merged into userInfo; key:=JSON for non-strings."),
            OptionSpec("ttl", value: "duration", environment: "PUSHSEAL_TTL", help: ttlHelp),
            OptionSpec("fallback-title", value: "title", environment: "PUSHSEAL_FALLBACK_TITLE", help: "Visible title when nothing decrypts (default: New notification)."),
            OptionSpec("fallback-body", value: "body", environment: "PUSHSEAL_FALLBACK_BODY", help: "Visible body when nothing decrypts (default: Open the app to read it)."),
            OptionSpec(
                "fallback-loc-key", value: "key", environment: "PUSHSEAL_FALLBACK_LOC_KEY",
                help: "Visible body as the app's localized string for this key (aps.alert.loc-key), instead of --fallback-body."),
            OptionSpec(
                "visible-sound", value: "name", environment: "PUSHSEAL_VISIBLE_SOUND", help: "Sound that plays even when the seal cannot be opened (in the clear: metadata anyone on the path sees)."),
            OptionSpec(
                "visible-level", value: "level", environment: "PUSHSEAL_VISIBLE_LEVEL", choices: InterruptionLevel.all.map(\.rawValue),
                help: "Interruption level kept even when the seal cannot be opened (in the clear, like --visible-sound)."),
            fieldOption,
            OptionSpec("pad", value: "bytes", environment: "PUSHSEAL_PAD", help: "Pad the sealed alert to a multiple of this (default: 32)."),
            OptionSpec("truncate", help: "Cut a body too long for APNs' payload limit to fit, on a character boundary, ending with '…'.")
        ]
    }

    static let toOption = OptionSpec(
        "to", value: "kid", environment: "PUSHSEAL_TO",
        help: "Seal to this recipient's public key (ps2) instead of the primary key.")

    static let encrypt = CommandSpec(
        name: ["encrypt"], overview: "Seal an alert into an APNs payload.",
        usage: "pushseal encrypt [options] [BODY...|-]",
        options: sealingOptions(ttl: "Receivers show a placeholder after this long (e.g. 1h or 1h30m; 1s to 365d).") + [
            OptionSpec("batch", help: "Read alerts as JSON lines on stdin; write one payload per line."),
            OptionSpec(
                "web", help: "Write the web form: {\"enc\":\"<envelope>\"}, no aps, for a Web Push library to encrypt for a browser (at most 3993 bytes)."),
            toOption,
            senderKeyOption,
            jobsOption,
            keysOption
        ],
        discussion: """
            ARGUMENTS:
              BODY...   The body as words, or '-' to read it from stdin. stdin is read only when
                        '-' says so, so pushseal never hangs under cron or CI.

            BATCH LINES (--batch): one JSON object per line with title, subtitle, body (or message),
              badge, sound, thread-id (or group), category, target-content-id, interruption-level
              (or level), relevance-score, url, data, ttl, id, and visible-sound, visible-level (what
              stays audible in the clear). The same rules as the options apply.
              A bad line is reported on stderr with its line number and skipped; the exit status
              is then 65.

            INPUT: text must be valid UTF-8 (exit 65 otherwise). A body read from stdin may be at
              most 4096 bytes: reading stops there, since no larger alert fits a payload.

            EXAMPLES:
              pushseal encrypt -t "Disk on db-3" -b "91% used"
              df -h | pushseal encrypt -t "Disk on db-3" -
              pushseal encrypt -t Deploy -b done | curl --http2 -H "apns-topic: $TOPIC" ... --data @- \\
                  https://api.push.apple.com/3/device/$TOKEN
            """)
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
    /// `--web`: the web form, `{"<field>":"<envelope>"}` with no `aps`, for Web Push.
    var web = false
    /// `--sender-key KID|none`: the sender key that vouches for a message to a recipient key.
    var sender: SenderChoice = .primary
}

/// One `--data key=value` (a string) or `--data key:=json` (any JSON value).
struct DataItem: Equatable {
    let key: String
    let value: JSONValue
}

func parseEncrypt(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.encrypt
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    var request = try alertOptions(parsed, spec: spec, stdinIsBody: true)
    if parsed.has("web") {
        // A browser shows nothing by itself: the web app's service worker shows the alert.
        guard request.fallback == .standard else {
            throw fail("--web payloads carry no fallback alert or visible metadata (no aps): the web app shows the alert itself")
        }
        request.web = true
    }
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
func alertOptions(_ parsed: ParsedArguments, spec: CommandSpec, stdinIsBody: Bool) throws(UsageError) -> EncryptRequest {
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    let field = parsed.value("field") ?? PayloadSealer.defaultField
    do {
        try APNsPayload.validate(field: field)
    } catch {
        throw fail("\(parsed.origin("field")) must be a name of 1 to 64 bytes other than 'aps'")
    }
    var request = EncryptRequest(
        keysFolder: keysFolder(parsed),
        fallback: try fallbackAlert(parsed, fail: fail),
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
    request.sender = senderChoice(parsed)
    if case .named(let kid) = request.sender, !KeyID.isValid(kid) {
        throw fail("\(parsed.origin("sender-key")) takes a sender key's id (1 to 64 of A-Z a-z 0-9 _ -), or none; 'pushseal keys list' shows them")
    }

    if let text = parsed.value("pad") {
        guard let pad = Int(text), (1...4096).contains(pad) else { throw fail("\(parsed.origin("pad")) must be a whole number from 1 to 4096") }
        request.pad = pad
    }
    request.timeToLive = try duration(parsed, "ttl", in: DurationRange.timeToLive, example: "3600s, 90m, 12h or 7d", command: spec.name)
    for item in parsed.all("data") {
        request.data.append(try parseDataItem(item, command: spec.name))
    }
    if request.url != nil, request.data.contains(where: { $0.key == "url" }) {
        throw fail("--url and --data url=… both set the sealed data.url; give one")
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

/// The visible alert: `--fallback-title`, `--fallback-body` or `--fallback-loc-key`, and the
/// visible metadata (`--visible-sound`, `--visible-level`).
private func fallbackAlert(_ parsed: ParsedArguments, fail: (String) -> UsageError) throws(UsageError) -> FallbackAlert {
    var fallback = FallbackAlert(
        title: parsed.value("fallback-title") ?? FallbackAlert.standard.title,
        body: parsed.value("fallback-body") ?? FallbackAlert.standard.body)
    if let key = parsed.value("fallback-loc-key") {
        guard !key.isEmpty else { throw fail("\(parsed.origin("fallback-loc-key")) takes the key of a string in the app's Localizable.strings") }
        guard parsed.value("fallback-body") == nil else { throw fail("give --fallback-body or --fallback-loc-key, not both: both are the visible body") }
        fallback.localizationKey = key
    }
    if let sound = parsed.value("visible-sound") {
        guard VisibleMetadata.isSoundName(sound) else { throw fail("\(parsed.origin("visible-sound")) takes a sound file's name (1 to 256 bytes), or 'default'") }
        fallback.visible.sound = sound
    }
    if let level = parsed.value("visible-level") {
        guard let level = InterruptionLevel(level) else { throw fail("\(parsed.origin("visible-level")) takes passive, active, time-sensitive or critical") }
        fallback.visible.level = level
    }
    return fallback
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
