#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import PushSeal
import SealCrypto
import Locking
import PushSealJSON

/// Runs `pushseal send`: seals the alert once (or takes the ready payload on stdin, or seals
/// each `--batch` line), sends it to every device over one HTTP/2 connection and prints one
/// result per device, in order.
///
/// A first SIGINT or SIGTERM, or stdout failing, stops taking devices; the answers in
/// flight are still awaited and printed. A second signal exits at once.
func runSend(_ request: SendRequest, console: Console) throws -> ExitStatus {
    // A handful of descriptors (the stop pipe, the keyring's files, Dispatch's and the HTTP/2
    // loop's epoll and eventfd, one socket a connection) or nothing works: said now, in one
    // line, rather than as libdispatch's trap when its timers find none left.
    DescriptorLimit.raiseToHard()
    let needed = 10 + request.connections
    if case let free = DescriptorLimit.free, free < needed {
        throw CLIFailure(.temporaryFailure, "send needs \(needed) free file descriptors and \(free) are left (the limit is \(DescriptorLimit.current)); raise it with ulimit -n")
    }
    // Set before any thread starts, so every later thread inherits the blocked signals.
    let stop = try StopRequest()
    let stoppedBy = Locked<(signal: Int32?, sending: Bool)>((nil, false))
    let running = Locked<Sender?>(nil)
    let signals = StopSignals(first: { signal in
        // Before the first request there is nothing to finish: stop as the signal says.
        guard stoppedBy.withLock({ state in
            state.signal = signal
            return state.sending
        }) else { exitAtOnce(128 + signal, console: console) }
        stop.request()
        running.withLock { $0 }?.stopRetrying()
    }, second: { signal in
        exitAtOnce(128 + signal, console: console)
    })
    defer { signals.restore() }

    let sealer: SealerSet?
    let payload: [UInt8]
    if let alert = request.alert {
        let made = try SealerSet(alert, byteLimit: request.pushType.payloadByteLimit)
        (sealer, payload) = alert.batch ? (made, []) : (made, try sealedPayload(alert, sealer: made.sealer(to: nil), console: console))
    } else {
        (sealer, payload) = (nil, try readyPayload(pushType: request.pushType))
    }
    if let caFile = request.caFile, TrustedCertificates.count(pem: try InputFiles.read(caFile)) == 0 {
        throw CLIFailure(.dataError, "\(caFile) holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the server's certificate or its CA's")
    }
    let tokens = try providerTokens(request, console: console)
    // Minted (or read) before connecting: a cache that cannot be kept is a setup error.
    _ = try tokens.token()
    if let mode = tokens.repairedMode {
        console.warning("\(tokens.path) could be read by group or others (mode \(FileIO.modeText(mode))); it holds a live token, so it is now 0600")
    }

    let tally = Locked<[Sender.Result.Outcome: Int]>([:])
    let json = request.json
    let connection: SendConnection
    do {
        // --proxy beats the environment; --proxy '' goes direct.
        connection = try SendConnection(endpoint: SendEndpoint(url: request.endpoint), proxy: request.proxy, trustFile: request.caFile,
                                        connections: request.connections, streams: request.concurrency, timeout: request.timeout)
    } catch {
        throw CLIFailure(.usage, error.message)
    }
    let sender = try Sender(
        settings: .init(topic: request.topic, pushType: request.pushType, priority: request.priority,
                        expiration: request.expiration, collapseID: request.collapseID, retries: request.retries,
                        retryFor: request.retryFor),
        tokens: tokens, connection: connection,
        emit: { result in
            tally.withLock { $0[result.outcome, default: 0] += 1 }
            // Results nobody can read stop the sending: the rest would go out unreported.
            var line = json ? resultJSON(result) : resultText(result)
            line.append("\n")
            guard console.write(Array(line.utf8)) else {
                return stop.request()
            }
        })
    running.withLock { $0 = sender }
    stoppedBy.withLock { $0.sending = true }
    if let signal = stoppedBy.withLock({ $0.signal }) { exit(128 + signal) }
    // Results reach a pipe within a tenth of a second even when answers trickle in.
    let flusher = DispatchSource.makeTimerSource(queue: .global())
    flusher.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
    flusher.setEventHandler { if !console.flush() { stop.request() } }
    flusher.resume()

    var badLines = (count: 0, of: 0)
    var taken = 0
    var duplicates = DuplicateDevices()
    var stoppedEarly: (any Error)?
    do {
        if let sealer, request.alert?.batch == true {
            let batch = try sendBatch(sealer: sealer, sender: sender, stop: stop, console: console)
            (badLines, taken) = ((batch.count, batch.of), batch.given)
        } else {
            for device in request.devices {
                guard !stop.isRequested else { break }
                guard duplicates.isNew(device, at: "--device") else { continue }
                try sender.add(device: device, payload: payload)
                taken += 1
            }
            if let file = request.devicesFile {
                // A token line is 65 bytes or more: the file's size bounds the count.
                var info = stat()
                if file != "-", stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                    duplicates.expect(Int(info.st_size) / 65)
                }
                try forEachDevice(in: file, stop: stop) { device, line in
                    guard duplicates.isNew(device, at: "\(file == "-" ? "stdin" : file) line \(line)") else { return }
                    try sender.add(device: device, payload: payload)
                    taken += 1
                }
            }
        }
    } catch is SendError {
        // The endpoint failed as a whole: reported below, once.
    } catch {
        // A bad device line or a token that cannot be kept: no more devices are taken, but
        // every request already sent gets its result before the error is said.
        stoppedEarly = error
    }
    sender.finish()
    flusher.cancel()
    try console.finish()
    if let note = duplicates.note { console.diagnostic(note) }
    if let failure = sender.failure {
        // --cacert helps only when no trusted issuer was found, not for an expired
        // certificate or one made for another host.
        let unknownIssuer = ["self-signed", "self signed", "local issuer"].contains { failure.message.contains($0) }
        throw CLIFailure(failure.code == .unreachable ? .temporaryFailure : .configuration,
                         failure.message + (failure.code == .untrusted && unknownIssuer ? "; give --cacert FILE to trust it" : ""))
    }
    if let stoppedEarly { throw stoppedEarly }
    if let signal = stoppedBy.withLock({ $0.signal }) {
        console.error("stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM"): devices after the last result were not sent")
        return signal == SIGINT ? .interrupted : .terminated
    }
    // Nothing to send to is a mistake in the command, not a success with no results.
    if taken == 0 {
        let source = request.alert?.batch == true ? "no --batch lines on stdin" : "no device tokens in \(request.devicesFile ?? "the devices given")"
        throw CLIFailure(.usage, "\(source): nothing was sent")
    }
    if badLines.count > 0 {
        console.error("\(badLines.count) of \(badLines.of) lines were not sent")
        return .dataError
    }
    let counts = tally.withLock { $0 }
    if counts[.refused, default: 0] > 0 { return .unavailable }
    if counts[.failed, default: 0] > 0 { return .temporaryFailure }
    return .ok
}

/// The provider token cache for the request's .p8, team and key id.
private func providerTokens(_ request: SendRequest, console: Console) throws -> ProviderTokenCache {
    try providerTokens(authKey: request.authKey, keyID: request.keyID, teamID: request.teamID, keysFolder: request.keysFolder, console: console)
}

/// The provider token cache for a .p8, team and key id: `send`'s and `token`'s alike.
func providerTokens(authKey: String, keyID: String, teamID: String, keysFolder: String, console: Console) throws -> ProviderTokenCache {
    let keyBytes = try InputFiles.read(authKey)
    // As ssh does for a private key: a signing key others can read is said out loud.
    var info = stat()
    if authKey != "-", stat(authKey, &info) == 0, info.st_mode & 0o077 != 0 {
        console.warning("\(authKey) can be read by group or others (mode \(FileIO.modeText(info.st_mode & 0o777))); make it private: chmod 600 \(authKey)")
    }
    let key: ES256Key
    do {
        key = try ES256Key(pem: keyBytes)
        guard key.canSign else { throw SealCryptoError(.invalidKey, "a public key cannot sign") }
    } catch let error as SealCryptoError {
        throw CLIFailure(.dataError, "\(authKey) is not an APNs signing key (\(error.reason)); give the .p8 file Apple made")
    }
    return ProviderTokenCache(folder: try tokenFolder(keysFolder: keysFolder), key: key, keyID: keyID, teamID: teamID)
}

/// `pushseal token`: the cached provider token, or a fresh one, on stdout.
func runToken(_ request: TokenRequest, console: Console) throws {
    let tokens = try providerTokens(authKey: request.authKey, keyID: request.keyID, teamID: request.teamID,
                                    keysFolder: request.keysFolder, console: console)
    console.output(try tokens.token())
}

/// Where the provider token is kept: beside the keys when there is a keyring folder;
/// otherwise in the user's cache folder (`$XDG_CACHE_HOME/pushseal`, or
/// `~/.cache/pushseal`), so that sending a ready payload leaves no `./Keys` behind.
private func tokenFolder(keysFolder: String) throws -> String {
    var info = stat()
    if stat(keysFolder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return keysFolder }
    let cacheHome: String
    if let cache = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), cache.hasPrefix("/") {
        cacheHome = cache
    } else if let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") {
        cacheHome = home + "/.cache"
    } else {
        throw CLIFailure(.cannotCreate, "no keyring folder (\(keysFolder)) and no HOME or XDG_CACHE_HOME for the provider token; give --keys DIR")
    }
    let folder = cacheHome + "/pushseal"
    for path in [cacheHome, folder] where mkdir(path, 0o700) != 0 && errno != EEXIST {
        throw CLIFailure(.cannotCreate, "cannot create \(path) for the provider token: \(String(cString: strerror(errno)))")
    }
    return folder
}

/// `--batch`: each JSON line names a device and its own alert, sealed on its own (a line's
/// ttl is its apns-expiration too). A bad line is reported with its number and skipped.
/// Returns how many lines were bad, of how many, and how many were not blank.
private func sendBatch(sealer: SealerSet, sender: Sender, stop: StopRequest, console: Console) throws -> (count: Int, of: Int, given: Int) {
    var reader = LineReader(descriptor: 0, stop: stop)
    var number = 0
    var bad = 0
    var lines = 0
    try reader.forEachLine { line in
        number += 1
        guard !line.isBlankLine else { return }
        lines += 1
        let sealed: (device: String, payload: [UInt8], expiration: String?)
        do {
            sealed = try batchLine(line, sealer: sealer)
        } catch {
            bad += 1
            return console.error("line \(number): \(error)")
        }
        try sender.add(device: sealed.device, payload: sealed.payload, expiration: sealed.expiration)
    }
    return (bad, number, lines)
}

/// One `--batch` line: its device, its sealed payload and its own expiration, if any.
private func batchLine(_ line: UnsafeRawBufferPointer, sealer: SealerSet) throws -> (device: String, payload: [UInt8], expiration: String?) {
    guard case .object(let object) = try JSONParser.parse(line) else {
        throw PayloadError(.invalidAlert, "the line is not a JSON object")
    }
    guard case .string(let given)? = object["device"] else {
        throw PayloadError(.invalidAlert, "the line has no \"device\" (the device token in hex)")
    }
    let device = given.lowercased()
    guard APNsRules.isDeviceToken(device) else {
        throw PayloadError(.invalidAlert, "\"device\" is not a device token in hex")
    }
    let request = try AlertRequest(json: JSONObject(object.filter { $0.key != "device" }))
    let now = Timestamp.now()
    let expiration = request.timeToLive.map { String(now + $0.components.seconds) }
    return (device, try sealer.sealer(to: request.recipient).payload(for: try request.alert(now: now), truncatingBody: sealer.truncate).payload, expiration)
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
        return "note: \(count) device token\(count == 1 ? " was" : "s were") given again and sent once (the first: \(first.device) at \(first.place))"
    }
}

/// A set of 64-bit fingerprints in 256 open-addressed tables (chosen by the top byte), each
/// grown by half when four fifths full: memory follows the count closely, and a growth
/// copies one table, not all of them.
struct FingerprintSet {
    private var tables = [[UInt64]](repeating: [], count: 256)
    private var counts = [Int](repeating: 0, count: 256)

    /// Sizes every table for `count` fingerprints in all, spread evenly.
    mutating func reserve(_ count: Int) {
        let each = count / tables.count * 5 / 4 + 64
        for table in tables.indices where tables[table].count < each && counts[table] == 0 {
            tables[table] = [UInt64](repeating: 0, count: each)
        }
    }

    /// True when `fingerprint` was not in the set (it is now).
    mutating func insert(_ fingerprint: UInt64) -> Bool {
        // 0 marks an empty slot.
        let value = fingerprint == 0 ? 1 : fingerprint
        let table = Int(value >> 56)
        if (counts[table] + 1) * 5 > tables[table].count * 4 { grow(table) }
        let inserted = tables[table].withUnsafeMutableBufferPointer { Self.place(value, in: $0) }
        if inserted { counts[table] += 1 }
        return inserted
    }

    private mutating func grow(_ table: Int) {
        var bigger = [UInt64](repeating: 0, count: tables[table].count * 3 / 2 + 64)
        bigger.withUnsafeMutableBufferPointer { slots in
            for value in tables[table] where value != 0 { _ = Self.place(value, in: slots) }
        }
        tables[table] = bigger
    }

    /// Linear probing from a slot chosen by the bits below the top byte (which every value
    /// of one table shares).
    private static func place(_ value: UInt64, in slots: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        var index = Int((value << 8).multipliedFullWidth(by: UInt64(slots.count)).high)
        while slots[index] != 0 {
            if slots[index] == value { return false }
            index = index + 1 == slots.count ? 0 : index + 1
        }
        slots[index] = value
        return true
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

/// Each token in a devices file or stdin (one per line; blank lines and # comments
/// skipped), read as it comes, until `stop` is requested.
private func forEachDevice(in file: String, stop: StopRequest, _ body: (String, Int) throws -> Void) throws {
    let descriptor = try InputFiles.open(file)
    defer { if descriptor != 0 { close(descriptor) } }
    var reader = LineReader(descriptor: descriptor, stop: stop)
    var number = 0
    try reader.forEachLine { line in
        number += 1
        // Bytes, not Characters: a million lines each judged by Unicode's whitespace tables
        // was the sender's largest cost. Spaces and tabs anywhere are dropped, hex is lowered.
        var token: [UInt8] = []
        token.reserveCapacity(line.count)
        for byte in line where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") && byte != UInt8(ascii: "\r") {
            token.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
        }
        guard let first = token.first, first != UInt8(ascii: "#") else { return }
        let text = String(decoding: token, as: UTF8.self)
        guard APNsRules.isDeviceToken(text) else {
            throw CLIFailure(.dataError, "\(file) line \(number): not a device token in hex")
        }
        try body(text, number)
    }
}

private func resultText(_ result: Sender.Result) -> String {
    switch result.outcome {
    case .ok:
        return "ok \(result.device) \(result.apnsID)" + (result.retriedAfterUnknownOutcome ? " (retried after an unknown outcome)" : "")
    case .refused, .failed:
        var line = "fail \(result.device) \(result.status) \(TerminalText.escaping(result.reason ?? ""))"
        if let timestamp = result.timestamp { line += " " + Timestamp.format(timestamp / 1_000) }
        if result.outcome == .failed { line += " (after \(result.attempts) attempts)" }
        if result.retriedAfterUnknownOutcome { line += " (retried after an unknown outcome)" }
        return line
    }
}

private func resultJSON(_ result: Sender.Result) -> String {
    var object = JSONObject()
    object.append("device", .string(result.device))
    object.append("status", .string(result.outcome.rawValue))
    object.append("http-status", .integer(result.status))
    object.append("apns-id", .string(result.apnsID))
    object.append("reason", result.reason.map { .string($0) } ?? .null)
    object.append("timestamp", result.timestamp.map { .integer($0) } ?? .null)
    object.append("attempts", .integer(result.attempts))
    object.append("retried-after-unknown-outcome", .bool(result.retriedAfterUnknownOutcome))
    object.append("elapsed_ms", .number(String(format3(result.elapsed))))
    return String(decoding: JSONWriter.bytes(.object(object)), as: UTF8.self)
}

private func format3(_ duration: Duration) -> String {
    let micros = Int64((duration.milliseconds * 1_000).rounded())
    let fraction = String(micros % 1_000)
    return "\(micros / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}
