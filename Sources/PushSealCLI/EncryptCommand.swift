import PushSeal
import Synchronization
import Locking
import PushSealJSON

/// Runs `pushseal encrypt`: one alert from options, or JSON lines with `--batch`.
/// Returns the exit status (batch mode finishes the stream before reporting bad lines).
func runEncrypt(_ request: EncryptRequest, console: Console) throws -> ExitStatus {
    let sealers = try SealerSet(request)
    if request.batch {
        return try runBatch(sealers: sealers, jobs: request.jobs, truncate: request.truncate, console: console)
    }
    console.output(bytes: try sealedPayload(request, sealer: sealers.sealer(to: nil), console: console))
    return .ok
}

/// The sealers one command needs: the request's (its `--to`, or the primary key), and one
/// per other recipient that batch lines name with `"to"`, each made once.
final class SealerSet: Sendable {
    private let keyring: Keyring
    private let request: EncryptRequest
    private let made = Locked<[String: PayloadSealer]>([:])
    /// The request's own sealer, or why there is none: a sender's keyring of public keys
    /// alone has no primary, and needs none when every batch line names its recipient.
    private let standard: Result<PayloadSealer, any Error>
    /// APNs' payload limit for the push type the payloads go out as.
    private let byteLimit: Int
    /// `--truncate`: each line's body is cut to fit too.
    var truncate: Bool { request.truncate }

    init(_ request: EncryptRequest, byteLimit: Int = PayloadSealer.byteLimit) throws {
        let keyring = try KeyringStore(folder: request.keysFolder).load()
        self.keyring = keyring
        self.request = request
        self.byteLimit = byteLimit
        standard = Result {
            try PayloadSealer(keyring: keyring, to: request.recipient, field: request.field, pad: request.pad,
                              fallback: request.fallback, byteLimit: byteLimit)
        }
        // Settings that no key can fix (field, padding, fallback) fail at once, not per line.
        if case .failure(let error) = standard, !(error is KeyringError) { throw error }
    }

    /// The sealer for `recipient`, or the request's own for nil.
    func sealer(to recipient: String?) throws -> PayloadSealer {
        guard let recipient, recipient != request.recipient else { return try standard.get() }
        if let sealer = made.withLock({ $0[recipient] }) { return sealer }
        let sealer = try PayloadSealer(keyring: keyring, to: recipient, field: request.field, pad: request.pad,
                                       fallback: request.fallback, byteLimit: byteLimit)
        made.withLock { $0[recipient] = sealer }
        return sealer
    }
}

/// The one payload an encrypt request describes (`encrypt` prints it, `send` sends it).
/// With --truncate a body that does not fit is cut, and a note on stderr says how far.
func sealedPayload(_ request: EncryptRequest, sealer: PayloadSealer, console: Console? = nil) throws -> [UInt8] {
    var alert = AlertRequest()
    alert.fields = request.fields
    switch request.body {
    case .none: break
    case .text(let text): alert.body = text
    case .standardInput:
        // Reading stops as soon as the body could no longer fit a payload, so a runaway
        // producer costs 4 KiB of memory, not all of its output; with --truncate, only what
        // could be kept is read.
        var bytes = try InputFiles.read("-", atMost: PayloadSealer.byteLimit + 1)
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
        console?.diagnostic("note: the body was cut to \(cut.kept) of its \(cut.of) characters to fit APNs' \(sealer.byteLimit)-byte payload")
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
private func runBatch(sealers: SealerSet, jobs: Int, truncate: Bool, console: Console) throws -> ExitStatus {
    let now = Timestamp.now()
    let failures = Atomic<Int>(0)
    let lines = LineWorkerPool<SealedLines>(jobs: jobs, process: { batch in
        var sealed = SealedLines()
        sealed.payloads.reserveCapacity(batch.count * 400)
        batch.forEach { line, number, _ in
            do {
                let object: JSONObject
                do {
                    guard case .object(let members) = try JSONParser.parse(line) else {
                        throw PayloadError(.invalidAlert, "the line is not a JSON object")
                    }
                    object = members
                } catch let error as JSONParseError {
                    throw PayloadError(.invalidAlert, "not JSON (\(error)); each line is one alert, such as {\"title\":\"Deploy\",\"body\":\"done\"}")
                }
                let alert = try AlertRequest(json: object)
                sealed.payloads.append(contentsOf: try sealers.sealer(to: alert.recipient)
                    .payload(for: try alert.alert(now: now), truncatingBody: truncate).payload)
                sealed.payloads.append(UInt8(ascii: "\n"))
            } catch {
                sealed.failures.append((number, "\(error)"))
            }
        }
        return sealed
    }, emit: { sealed in
        console.write(sealed.payloads)
        for failure in sealed.failures {
            console.error("line \(failure.line): \(failure.reason)")
        }
        failures.add(sealed.failures.count, ordering: .relaxed)
    })
    var reader = LineReader(descriptor: 0)
    var lineNumber = 0
    var alerts = 0
    try reader.forEachLine { line in
        lineNumber += 1
        // Blank lines are skipped, and not counted as alerts.
        guard !line.isBlankLine else { return }
        alerts += 1
        lines.add(line, number: lineNumber)
    }
    lines.finish()
    console.flush()
    let failed = failures.load(ordering: .relaxed)
    if failed > 0 {
        console.error("\(failed) of \(alerts) alerts were not encrypted")
        return .dataError
    }
    return .ok
}
