#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import PushSeal
import Locking

/// Runs `pushseal receive`: every input becomes exactly one record on stdout.
///
/// A first SIGINT or SIGTERM, or stdout failing, stops taking input and expires every
/// delivery in flight, so each still gets its record (with --listen a signal lets them
/// finish within their budget instead); a second signal exits at once.
func runReceive(_ request: ReceiveRequest, console: Console) throws -> ExitStatus {
    // Set before any thread starts, so every later thread inherits the blocked signals.
    // What the first SIGINT/SIGTERM runs (nil until input is being taken), the signal that
    // asked for the stop (for the exit status), and the one that forced it.
    let onStopSignal = Locked<(@Sendable () -> Void)?>(nil)
    let forcedBy = Locked<Int32?>(nil)
    let stopSignal = Locked<Int32?>(nil)
    let processes = ExtensionProcesses(limit: request.maximumExtensions)
    let signals = StopSignals(first: { signal in
        stopSignal.withLock { $0 = signal }
        // Before anything was taken there is nothing to finish: stop as the signal says.
        guard let action = onStopSignal.withLock({ $0 }) else { exitAtOnce(128 + signal, console: console) }
        action()
    }, second: { signal in
        // Noted first (if the lock is free): the deliveries the kill ends may let the main
        // thread finish before this one exits, and it must then exit with the signal's status.
        _ = forcedBy.withLockIfAvailable { $0 = signal }
        processes.killAll()
        exitAtOnce(128 + signal, console: console)
    })
    defer { signals.restore() }
    let makeExtension: @Sendable () -> any NotificationServiceExtension
    if let command = request.extensionCommand {
        // A typo in the command is a setup error, not a thousand 'original' deliveries.
        try checkExtensionCommand(command)
        let settings = ProcessExtension.Settings(
            command: command, memoryLimit: request.memoryLimit, timing: request.timing, processes: processes)
        makeExtension = { ProcessExtension(settings: settings) }
    } else {
        // Read the keyring up front: a missing or unsafe one is a setup error, not a
        // thousand placeholder deliveries.
        let keys = try KeyringFileSource(store: KeyringStore(folder: request.keysFolder))
        let settings = DecryptingExtension.Settings(field: request.field, placeholder: request.placeholder)
        if let command = request.thenCommand {
            try checkExtensionCommand(command)
            let program = ProcessExtension.Settings(
                command: command, memoryLimit: request.memoryLimit, timing: request.timing, processes: processes)
            makeExtension = { DecryptThenExtension(keys: keys, settings: settings, program: program) }
        } else {
            makeExtension = { DecryptingExtension(keys: keys, settings: settings) }
        }
    }
    // Every FILE is opened once before anything is delivered: a typo is a setup error, not a
    // record among the others. (One that goes away after this still gets its record.)
    if request.listen == nil, request.watch == nil {
        for input in request.inputs where input != "-" { try InputFiles.checkReadable(input) }
    }
    let notifier = try request.notify ? desktopNotifier(console: console) : nil
    let runner = ExtensionRunner(timing: request.timing, makeExtension: makeExtension)
    // Readers of files, stdin and the spool folder check it between inputs.
    let inputEnd = try StopRequest()
    // Set by the listener, so output that fails stops it taking requests too.
    let haltListener = Locked<(@Sendable () -> Void)?>(nil)
    let stopTakingInput: @Sendable () -> Void = {
        inputEnd.request()
        runner.expireAll()
        haltListener.withLock { $0 }?()
    }
    onStopSignal.withLock { $0 = stopTakingInput }

    let tally = Locked<[String: Int]>([:])
    let json = request.json
    let field = request.field
    // Rendering runs on the delivering threads; writing and counting happen one record at
    // a time, in order, so they need no lock of their own worth contending for.
    let render: @Sendable (DeliveryRecord) -> (bytes: [UInt8], status: String) = { record in
        var bytes: [UInt8]
        if json {
            bytes = []
            bytes.reserveCapacity(512)
            record.writeJSON(to: &bytes, envelopeField: field)
        } else {
            bytes = Array((record.text + "\n").utf8)
        }
        bytes.append(UInt8(ascii: "\n"))
        // What the phone would show, shown on the desktop too: every delivery, not a refused request.
        if let notifier, let delivery = record.delivery { notifier.show(delivery.content, status: delivery.status) }
        return (bytes, record.status.rawValue)
    }
    let write: @Sendable ((bytes: [UInt8], status: String)) -> Void = { rendered in
        // Output that cannot be written stops the work: nobody would see the rest.
        guard console.write(rendered.bytes) else { return stopTakingInput() }
        tally.withLock { $0[rendered.status, default: 0] += 1 }
    }
    // Records reach a pipe within a tenth of a second even when they trickle in, and a
    // reader that went away is noticed as promptly.
    let flusher = DispatchSource.makeTimerSource(queue: .global())
    flusher.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
    flusher.setEventHandler { if !console.flush() { stopTakingInput() } }
    flusher.resume()
    defer { flusher.cancel() }

    var status = ExitStatus.ok
    var listenTally: [String: Int]?
    if let listen = request.listen {
        // Records go out through a writer of their own: the HTTP/2 loops never wait for stdout.
        let output = RecordOutput(descriptor: 1, render: render, failed: stopTakingInput)
        try serveListener(listen, keysFolder: request.keysFolder, runner: runner, console: console,
                          onStopSignal: onStopSignal, haltListener: haltListener, inputEnd: inputEnd, records: output)
        let (unwritten, failure) = output.finish(within: ListenerLimits().drainTimeout)
        listenTally = output.tally
        if let failure {
            throw CLIFailure(.ioError, "cannot write to stdout: \(failure); \(unwritten) record(s) were not written")
        }
        if unwritten > 0 {
            throw CLIFailure(.ioError, "\(unwritten) record(s) could not be written: stdout did not take them in time")
        }
    } else if let folder = request.watch {
        let spool = SpoolFolder(folder: folder, runner: runner, stop: inputEnd) { record in
            let rendered = render(record)
            guard console.write(rendered.bytes), console.flush() else {
                throw CLIFailure(.ioError, console.failure ?? "stdout failed")
            }
            tally.withLock { $0[rendered.status, default: 0] += 1 }
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
    } else {
        let receiver = OrderedReceiver(runner: runner, render: render, emit: write)
        for input in request.inputs {
            guard !inputEnd.isRequested else { break }
            if input == "-" {
                // Lines are numbered here, in input order, and delivered on every core;
                // the receiver puts the records back in order.
                let lines = LineWorkerPool<Void>(jobs: request.jobs, process: { batch in
                    batch.forEach { bytes, number, seq in
                        receiver.deliver(seq, source: "stdin:\(number)", bytes: bytes)
                    }
                })
                var reader = LineReader(descriptor: 0, stop: inputEnd)
                var line = 0
                try reader.forEachLine(idle: lines.dispatchPending) { bytes in
                    line += 1
                    guard !bytes.isBlankLine else { return }
                    lines.add(bytes, number: line, tag: receiver.reserve())
                }
                lines.finish()
            } else {
                do {
                    let bytes = try InputFiles.read(input)
                    bytes.withUnsafeBytes { receiver.submit(source: input, bytes: $0) }
                } catch let failure as CLIFailure {
                    // The file still gets its record, so inputs and records line up.
                    receiver.submit(source: input, problem: failure.description)
                    status = failure.status
                }
            }
        }
        receiver.finish()
    }
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
    if !json, console.stderrIsTerminal {
        let counts = (listenTally ?? tally.withLock { $0 }).sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
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

/// Ends the process now, from any thread: flushes what stdout takes without waiting, and
/// waits for no lock another thread may hold (one may be stuck writing to a stalled reader).
func exitAtOnce(_ status: Int32, console: Console) -> Never {
    console.flushIfFree()
    _exit(status)
}
