import Dispatch
import Locking
import NotificationText
import PushSeal
import PushSealJSON
import PushSealReceiver

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `pushseal receive`: every input becomes exactly one record on stdout.
func runReceive(_ request: ReceiveRequest, console: Console) throws -> ExitStatus {
    try ReceiveCommand(request: request, console: console).run()
}

/// `pushseal receive`, start to end: its signals, the extension it runs, where records go,
/// then one of three input modes (the listener, a watched folder, files and stdin), then
/// the summary and exit status.
///
/// A first SIGINT or SIGTERM, or stdout failing, stops taking input and expires every
/// delivery in flight, so each still gets its record (with --listen a signal lets them
/// finish within their budget instead); a second signal exits at once.
struct ReceiveCommand {
    let request: ReceiveRequest
    let console: Console
    /// What the first SIGINT/SIGTERM runs (nil until input is being taken).
    private let onStopSignal = Locked<(@Sendable () -> Void)?>(nil)
    /// The signal that forced the exit (a second one), and the one that asked for the stop.
    private let forcedBy = Locked<Int32?>(nil)
    private let stopSignal = Locked<Int32?>(nil)
    private let processes: ExtensionProcesses

    init(request: ReceiveRequest, console: Console) {
        self.request = request
        self.console = console
        processes = ExtensionProcesses(limit: request.maximumExtensions)
    }

    /// What every input mode delivers through: the runner, the stop, and stdout.
    private struct Delivering {
        let runner: ExtensionRunner
        let inputEnd: StopRequest
        let output: RecordOutput
        let render: @Sendable (DeliveryRecord) -> (bytes: [UInt8], status: String)
        /// Set by the listener, so output that fails stops it taking requests too.
        let haltListener: Locked<(@Sendable () -> Void)?>
    }

    func run() throws -> ExitStatus {
        // Set before any thread starts, so every later thread inherits the blocked signals.
        let signals = installStopSignals()
        defer { signals.restore() }
        let runner = ExtensionRunner(timing: request.timing, makeExtension: try extensionMaker())
        // Every FILE is opened once before anything is delivered: a typo is a setup error, not
        // a record among the others. (One that goes away after this still gets its record.)
        if request.listen == nil, request.watch == nil {
            for input in request.inputs where input != "-" { try InputFiles.checkReadable(input) }
        }
        let notifier = try request.notify ? desktopNotifier(console: console) : nil
        // Readers of files, stdin and the spool folder check it between inputs.
        let inputEnd = try StopRequest()
        let haltListener = Locked<(@Sendable () -> Void)?>(nil)
        let stopTakingInput: @Sendable () -> Void = {
            inputEnd.request()
            runner.expireAll()
            haltListener.withLock { $0 }?()
        }
        onStopSignal.withLock { $0 = stopTakingInput }
        let render = Self.renderer(json: request.json, field: request.field, notifier: notifier)
        // Output that cannot be written stops the work: nobody would see the rest.
        let memory = request.listen.map { ListenerMemory($0) }
        let output = RecordOutput(
            descriptor: 1, byteLimit: memory?.plan.recordBytes ?? ListenerMemoryPlan.defaults.recordBytes,
            render: render, failed: stopTakingInput)
        let delivering = Delivering(runner: runner, inputEnd: inputEnd, output: output, render: render, haltListener: haltListener)

        var status = ExitStatus.ok
        if let listen = request.listen, let memory {
            try serve(listen, memory: memory, delivering)
        } else {
            if let folder = request.watch {
                try watch(folder, delivering)
            } else {
                status = try readInputs(delivering)
            }
            // Files, stdin and a watched folder have no drain deadline: every record goes out.
            if case (_, let failure?) = output.finish(within: nil) {
                throw CLIFailure(.ioError, "cannot write to stdout: \(failure)")
            }
        }
        return try finish(status: status, runner: runner, output: output, notifier: notifier)
    }

    // MARK: - Setting up

    /// The first signal stops taking input (or exits, before any was taken); the second
    /// ends every extension program and exits at once.
    private func installStopSignals() -> StopSignals {
        let (onStopSignal, forcedBy, stopSignal, processes, console) = (onStopSignal, forcedBy, stopSignal, processes, console)
        return StopSignals(
            first: { signal in
                stopSignal.withLock { $0 = signal }
                // Before anything was taken there is nothing to finish: stop as the signal says.
                guard let action = onStopSignal.withLock({ $0 }) else { exitAtOnce(128 + signal, console: console) }
                action()
            },
            second: { signal in
                // Noted first (if the lock is free): the deliveries the kill ends may let the main
                // thread finish before this one exits, and it must then exit with the signal's status.
                _ = forcedBy.withLockIfAvailable { $0 = signal }
                processes.killAll()
                exitAtOnce(128 + signal, console: console)
            })
    }

    /// The extension each delivery runs: `--extension`'s program, or the decrypting one
    /// (with `--then`'s program after it).
    private func extensionMaker() throws -> @Sendable () -> any NotificationServiceExtension {
        if let command = request.extensionCommand {
            // A typo in the command is a setup error, not a thousand 'original' deliveries.
            try checkExtensionCommand(command)
            let settings = ProcessExtension.Settings(
                command: command, memoryLimit: request.memoryLimit, timing: request.timing, processes: processes)
            return { ProcessExtension(settings: settings) }
        }
        // Read the keyring up front: a missing or unsafe one is a setup error, not a
        // thousand placeholder deliveries.
        // A keyring that goes bad while receiving is said once on stderr, and once when it is
        // good again; meanwhile sealed notifications are `locked` (shown as they came).
        let console = console
        let keys = try KeyringFileSource(store: KeyringStore(folder: request.keysFolder)) { change in
            switch change {
            case .unusable(let error):
                console.warning("the keyring cannot be used now (\(error)); sealed notifications are shown as they came (status locked) until it can")
            case .usable:
                console.diagnostic("note: the keyring can be used again; sealed notifications open as before")
            }
        }
        warnOfAnySender(request.senders, console: console)
        let settings = DecryptingExtension.Settings(
            field: request.field, placeholder: request.placeholder, senders: request.senders, seen: try openSeenStore(request.seenStore))
        guard let command = request.thenCommand else {
            return { DecryptingExtension(keys: keys, settings: settings) }
        }
        try checkExtensionCommand(command)
        let program = ProcessExtension.Settings(
            command: command, memoryLimit: request.memoryLimit, timing: request.timing, processes: processes)
        return { DecryptThenExtension(keys: keys, settings: settings, program: program) }
    }

    /// A record as bytes for stdout, and its status for the tally. Runs on the delivering
    /// threads; writing and counting happen on the writer's own thread, so no delivering
    /// thread waits for stdout's reader. With `--notify`, what the phone would show is
    /// shown on the desktop too: every delivery, not a refused request.
    private static func renderer(
        json: Bool, field: String, notifier: DesktopNotifier?
    ) -> @Sendable (DeliveryRecord) -> (bytes: [UInt8], status: String) {
        let format: DeliveryRecord.Format = json ? .json(envelopeField: field) : .text
        return { record in
            let bytes = format.bytes(of: record)
            if let notifier, case .delivered(let delivery) = record.outcome { notifier.show(delivery.content, status: delivery.status) }
            return (bytes, record.status.rawValue)
        }
    }

    // MARK: - The three input modes

    /// `--listen`: an APNs endpoint until a signal; records still waiting for stdout get the
    /// listener's drain time.
    private func serve(_ listen: ListenRequest, memory: ListenerMemory, _ delivering: Delivering) throws {
        try serveListener(
            listen, keysFolder: request.keysFolder, runner: delivering.runner, console: console,
            onStopSignal: onStopSignal, haltListener: delivering.haltListener, inputEnd: delivering.inputEnd,
            records: delivering.output, memory: memory)
        let (unwritten, failure) = delivering.output.finish(within: ListenerLimits().drainTimeout)
        if let failure {
            throw CLIFailure(.ioError, "cannot write to stdout: \(failure); \(unwritten) record(s) were not written")
        }
        if unwritten > 0 {
            throw CLIFailure(.ioError, "\(unwritten) record(s) could not be written: stdout did not take them in time")
        }
    }

    /// `--watch DIR`: files dropped into the folder, each moved once its record is out.
    private func watch(_ folder: String, _ delivering: Delivering) throws {
        let (output, render) = (delivering.output, delivering.render)
        let spool = SpoolFolder(folder: folder, runner: delivering.runner, stop: delivering.inputEnd) { record, written in
            output.emit(rendered: render(record), then: written)
        }
        do {
            try spool.prepare()
        } catch {
            throw CLIFailure(.noInput, "cannot watch \(folder): \(error.message)")
        }
        do {
            try spool.run(once: request.once)
        } catch {
            processes.waitUntilAllReaped()
            throw CLIFailure(.ioError, error.message)
        }
    }

    /// FILE… and `-`: each file is one input, each line of stdin one; the records come out
    /// in input order. A file that cannot be read still gets its record, and sets the status.
    private func readInputs(_ delivering: Delivering) throws -> ExitStatus {
        let (output, inputEnd) = (delivering.output, delivering.inputEnd)
        var status = ExitStatus.ok
        let receiver = OrderedReceiver(runner: delivering.runner, render: delivering.render) { output.emit(rendered: $0) }
        for input in request.inputs {
            output.waitForRoom(stop: inputEnd)
            guard !inputEnd.isRequested else { break }
            if input == "-" {
                // Lines are numbered here, in input order, and delivered on every core;
                // the receiver puts the records back in order.
                let lines = LineWorkerPool<Void>(
                    jobs: request.jobs,
                    process: { batch in
                        batch.forEach { bytes, number, seq in
                            // Concatenated rather than interpolated: made for every line.
                            receiver.deliver(seq, source: RecordSource.stdin(line: number), bytes: bytes)
                        }
                    })
                var reader = LineReader(descriptor: 0, stop: inputEnd, bound: .payloadInput)
                var line = 0
                let overlong = reader.overlongReason
                try reader.forEachLine(
                    idle: lines.dispatchPending,
                    overlong: {
                        // Still one record: every input line gets its own.
                        line += 1
                        receiver.submit(source: RecordSource.stdin(line: line), problem: overlong)
                    },
                    each: { bytes in
                        line += 1
                        guard !bytes.isBlankLine else { return }
                        output.waitForRoom(stop: inputEnd)
                        lines.add(bytes, number: line, tag: receiver.reserve())
                    })
                lines.finish()
            } else {
                do {
                    let bytes = try InputFiles.read(input, bound: .payloadInput)
                    bytes.withUnsafeBytes { receiver.submit(source: input, bytes: $0) }
                } catch let failure as CLIFailure {
                    // The file still gets its record, so inputs and records line up.
                    receiver.submit(source: input, problem: failure.description)
                    // A file larger than any payload is malformed input, recorded as such.
                    if !failure.inputIsWrong { status = failure.status }
                }
            }
        }
        receiver.finish()
        return status
    }

    // MARK: - Ending

    /// Waits for the extension programs and the desktop, says what is worth saying on
    /// stderr, and gives the exit status.
    private func finish(status: ExitStatus, runner: ExtensionRunner, output: RecordOutput, notifier: DesktopNotifier?) throws -> ExitStatus {
        // No extension program outlives the receiver.
        processes.waitUntilAllReaped()
        if let tally = notifier?.finish(), tally.skipped > 0 {
            console.warning("\(tally.skipped) deliveries were not shown on the desktop: more than \(DesktopNotifier.backlog) were waiting")
        }
        if let signal = forcedBy.withLock({ $0 }) { exitAtOnce(128 + signal, console: console) }
        try console.finish()

        if runner.ignoredContentHandlerCalls > 0 {
            console.diagnostic("note: \(runner.ignoredContentHandlerCalls) content-handler call(s) after delivery were ignored, as on iOS")
        }
        if !request.json, console.stderrIsTerminal {
            let counts = output.tally.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            console.diagnostic("received \(counts.isEmpty ? "nothing" : counts.joined(separator: ", "))")
        }
        // Files and stdin have an end of their own: a signal before it leaves input unread, and
        // says so, as send does. A listener or a watched folder has none: a signal is its stop.
        if request.listen == nil, request.watch == nil, let signal = stopSignal.withLock({ $0 }) {
            console.diagnostic("stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM"): every input taken got its record; the rest was not read")
            return signal == SIGINT ? .interrupted : .terminated
        }
        return status
    }
}

/// Refuses an `--extension` whose program cannot run: a path that is missing or not
/// executable, or a bare name the shell cannot find (builtins and PATH lookups count).
func checkExtensionCommand(_ command: String) throws {
    guard let program = command.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) else {
        throw UsageError("--extension needs a command", command: ["receive"])
    }
    // A compound command (quotes, variables, redirections) is the shell's to judge.
    guard program.allSatisfy({ !"'\"$`\\;|&<>(){}=*?~".contains($0) }) else { return }
    if program.contains("/") {
        guard access(program, F_OK) == 0 else {
            throw CLIFailure(.noInput, "the extension program \(program) does not exist")
        }
        var info = stat()
        guard stat(program, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(program, X_OK) == 0 else {
            throw CLIFailure(.noPermission, "the extension program \(program) is not an executable file (chmod +x \(program)?)")
        }
        return
    }
    let shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh"
    let found = ChildProcess.succeeds(shell, ["-c", "command -v -- \"$1\" >/dev/null", "pushseal", program])
    guard found else {
        throw CLIFailure(.noInput, "the extension program '\(program)' is not found on PATH")
    }
}

/// `--notify`'s notifier; a setup error when notify-send is not installed.
private func desktopNotifier(console: Console) throws -> DesktopNotifier {
    guard let program = DesktopNotifier.findProgram(path: getenv("PATH").map { String(cString: $0) }) else {
        throw CLIFailure(.unavailable, "--notify shows deliveries with notify-send, which is not on PATH (Debian: apt install libnotify-bin)")
    }
    return DesktopNotifier(program: program) { console.warning("\($0); deliveries go on, without desktop notifications") }
}

extension Specs {
    static let receive = CommandSpec(
        name: ["receive"], overview: "Show what a device would display: run payloads through an emulated Notification Service Extension.",
        usage:
            "pushseal receive FILE...|- [--json] [--budget 30s] [--extension CMD] [--keys DIR]\n       pushseal receive --watch DIR [--once] [options]\n       pushseal receive --listen [HOST:]PORT [--tls-cert F --tls-key F | --plaintext] [--device TOKEN]... [options]",
        options: [
            OptionSpec("json", help: "Write one JSON record per line instead of text."),
            OptionSpec("watch", value: "dir", help: "Deliver *.json and *.apns files dropped into DIR, then move them to DIR/processed/."),
            OptionSpec("once", help: "With --watch: deliver the files there now, then exit."),
            OptionSpec("listen", value: "[host:]port", help: "Serve Apple's provider API over HTTP/2 on HOST (default 127.0.0.1) and PORT (0: a free one)."),
            OptionSpec("tls-cert", value: "file", help: "With --listen: the PEM certificate chain to serve (default: a self-signed one in the keyring folder)."),
            OptionSpec("tls-key", value: "file", help: "With --listen: the PEM private key of --tls-cert."),
            OptionSpec("plaintext", help: "With --listen: HTTP/2 without TLS (prior knowledge, as curl --http2-prior-knowledge)."),
            OptionSpec("device", value: "token", repeatable: true, help: "With --listen: a known device token; others get BadDeviceToken (default: any well-formed one)."),
            OptionSpec("unregistered", value: "token", repeatable: true, help: "With --listen: a token answered 410 Unregistered."),
            OptionSpec("topic", value: "bundle", repeatable: true, help: "With --listen: an accepted apns-topic; others get TopicDisallowed (default: any)."),
            OptionSpec("provider-key", value: "kid=file", repeatable: true, help: "With --listen: verify provider tokens with key id KID's public key or .p8 FILE."),
            OptionSpec("team", value: "teamid", help: "With --listen: the only team id (iss) accepted in provider tokens."),
            OptionSpec(
                "idle-timeout", value: "duration", help: "With --listen: close a connection quiet this long (\(DurationRange.help(default: ListenerLimits().idleTimeout, DurationRange.idleTimeout)))."),
            OptionSpec("max-connections", value: "n", help: "With --listen: connections open at once (default: 1024, fewer under a memory limit; 1 to 65536)."),
            OptionSpec(
                "max-pending", value: "n", help: "With --listen: notifications answered 200 whose records are not out yet; more get 503 (default: 16384, fewer under a memory limit; 1 to 1000000)."),
            OptionSpec(
                "budget", value: "duration", environment: "PUSHSEAL_BUDGET",
                help:
                    "Time the extension has per notification, from the moment it is taken (\(DurationRange.help(default: ExtensionRunner.Timing.standard.budget, DurationRange.budget, note: "Apple's")))."
            ),
            OptionSpec(
                "expiry-grace", value: "duration",
                help: "Wait after serviceExtensionTimeWillExpire before showing the original (\(DurationRange.help(default: ExtensionRunner.Timing.standard.expiryGrace, DurationRange.expiryGrace)))."),
            OptionSpec("extension", value: "command", help: "Run your own extension program instead of the decrypting one."),
            OptionSpec("then", value: "command", help: "After decrypting, run your own extension program on the opened alert, within the same budget."),
            OptionSpec("notify", help: "Also show each delivery as a desktop notification (notify-send, the freedesktop notification service)."),
            OptionSpec("max-extensions", value: "n", help: "At most this many extension programs run at once; others wait, their clock running (default: 64)."),
            OptionSpec("memory-limit", value: "size", help: "Kill an --extension program above this resident memory (default: 24MB)."),
            OptionSpec("placeholder-title", value: "title", environment: "PUSHSEAL_PLACEHOLDER_TITLE", help: "Shown when a sealed alert cannot be opened (default: Encrypted notification)."),
            OptionSpec("placeholder-body", value: "body", environment: "PUSHSEAL_PLACEHOLDER_BODY", help: "Shown when a sealed alert cannot be opened, whatever the reason."),
            OptionSpec(
                "placeholder-for", value: "reason=body", repeatable: true,
                help: "The body for one reason: key-missing, auth-failed (also malformed), expired, deadline, unsupported, sender-untrusted or duplicate."),
            sendersOption,
            seenOption,
            jobsOption,
            fieldOption,
            keysOption
        ],
        discussion: """
            INPUTS:
              FILE...   APNs payloads (.json, or .apns files as 'xcrun simctl push' takes them),
                        delivered in the order given. '-' reads one payload per line from stdin.
              --watch   A spool folder: files that cannot be read move to DIR/failed/ with a
                        NAME.reason beside them. Write files elsewhere and rename them in.
              --listen  An APNs-compatible endpoint: POST /3/device/TOKEN over HTTP/2 (TLS by
                        default, loopback by default). Each request is answered as APNs would
                        (200 with apns-id, or the status and {"reason":...}) and every accepted
                        one is delivered. Records carry device and the apns-* headers; a refused
                        request's record is 'rejected' with http-status and reason.

            STATUSES: decrypted, passthrough, key-missing, key-disabled, key-expired,
              sender-untrusted (not sealed by a sender the keyring allows), auth-failed,
              malformed, unsupported (a later envelope version), locked (the keyring could not be
              read: the fallback alert is shown), expired, duplicate (opened here before: the
              extension does not run again), deadline, original, modified (an
              --extension's own content), rejected (--listen refused the request). Every input gets exactly one record, in
              input order (with --watch and --listen: as delivered).
              Payloads over APNs' 4096 bytes (5120 for voip) are malformed, as APNs would refuse them.

            STOPPING: SIGINT or SIGTERM stops taking input, ends running extension programs
              (SIGTERM, then SIGKILL after --expiry-grace) and writes every record still due;
              with FILEs or stdin it then says input was left unread and exits 130 or 143, as
              send does; --listen (after GOAWAY, letting deliveries in flight finish within
              their budget) and --watch exit 0, a signal being their normal stop. A second
              signal stops at once (exit 130 or 143).

            EXAMPLES:
              pushseal encrypt -t Hi -b there | pushseal receive -
              pushseal receive --json --budget 2s payloads/*.json
              pushseal receive --extension ./my-extension.py --budget 500ms payload.apns
              pushseal receive --listen 8443 --json
            """, arguments: .files)
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
    /// --senders: whose messages open.
    var senders: SenderPolicy = .automatic
    /// --seen: where opened messages are remembered; nil for nowhere.
    var seenStore: String? = nil
}

extension ReceiveRequest {
    /// The documented cap on extension programs running at once.
    static let defaultMaximumExtensions = 64
}

func parseReceive(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
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
        try APNsPayload.validate(field: field)
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
            let status = Placeholder.reasons.first(where: { $0.rawValue == item[..<equals] }),
            placeholder.setBody(String(item[item.index(after: equals)...]), for: status)
        else {
            throw fail("--placeholder-for takes REASON=BODY, with REASON one of \(Placeholder.reasons.map(\.rawValue).joined(separator: ", "))")
        }
    }
    return .receive(
        ReceiveRequest(
            keysFolder: keysFolder(parsed), field: field, inputs: parsed.positionals, watch: watch,
            once: parsed.has("once"), json: parsed.has("json"), timing: timing,
            extensionCommand: parsed.value("extension"), thenCommand: parsed.value("then"), memoryLimit: memoryLimit,
            placeholder: placeholder,
            jobs: try jobs(parsed, command: spec.name), maximumExtensions: maximumExtensions, listen: listen,
            notify: parsed.has("notify"), senders: try senderPolicy(parsed, command: spec.name),
            seenStore: seenStorePath(parsed, keysFolder: keysFolder(parsed))))
}
