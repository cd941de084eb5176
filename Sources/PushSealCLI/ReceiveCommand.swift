import PushSeal

/// Runs `pushseal receive`: every input becomes exactly one record on stdout.
func runReceive(_ request: ReceiveRequest, console: Console) throws -> ExitStatus {
    let makeExtension: @Sendable () -> any NotificationServiceExtension
    if let command = request.extensionCommand {
        let settings = ProcessExtension.Settings(command: command, memoryLimit: request.memoryLimit, timing: request.timing)
        makeExtension = { ProcessExtension(settings: settings) }
    } else {
        // Read the keyring up front: a missing or unsafe one is a setup error, not a
        // thousand placeholder deliveries.
        let keys = try KeyringFileSource(store: KeyringStore(folder: request.keysFolder))
        let settings = DecryptingExtension.Settings(field: request.field, placeholder: request.placeholder)
        makeExtension = { DecryptingExtension(keys: keys, settings: settings) }
    }
    let runner = ExtensionRunner(timing: request.timing, makeExtension: makeExtension)
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
        return (bytes, record.status.rawValue)
    }
    let write: @Sendable ((bytes: [UInt8], status: String)) -> Void = { rendered in
        console.write(rendered.bytes)
        tally.withLock { $0[rendered.status, default: 0] += 1 }
    }

    var status = ExitStatus.ok
    if let folder = request.watch {
        let spool = SpoolFolder(folder: folder, runner: runner, sink: { write(render($0)) }, flush: { console.flush() })
        do {
            try spool.prepare()
        } catch let failure as FileIOFailure {
            throw CLIFailure(.noInput, "cannot watch \(folder): \(failure.message)")
        }
        spool.run(once: request.once)
    } else {
        let receiver = OrderedReceiver(runner: runner, render: render, emit: write)
        for input in request.inputs {
            if input == "-" {
                // Lines are numbered here, in input order, and delivered on every core.
                let lines = ParallelLines<Int>(jobs: request.jobs, process: { batch in
                    batch.forEach { bytes, number, seq in
                        receiver.deliver(seq, source: "stdin:\(number)", bytes: bytes)
                    }
                    return batch.count
                }, emit: { _ in })
                var reader = LineReader(descriptor: 0)
                var line = 0
                try reader.forEachLine { bytes in
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
    console.flush()

    if runner.ignoredContentHandlerCalls > 0 {
        console.diagnostic("note: \(runner.ignoredContentHandlerCalls) content-handler call(s) after delivery were ignored, as on iOS")
    }
    if !json, console.stderrIsTerminal {
        let counts = tally.withLock { $0 }.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
        console.diagnostic("received \(counts.isEmpty ? "nothing" : counts.joined(separator: ", "))")
    }
    return status
}
