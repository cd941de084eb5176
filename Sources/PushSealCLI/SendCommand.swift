#if canImport(Glibc)
import Glibc
#endif
import PushSeal
import SealCrypto

/// Runs `pushseal send`: seals the alert once (or takes the ready payload on stdin), sends
/// it to every device over one HTTP/2 connection and prints one result per device, in order.
func runSend(_ request: SendRequest, console: Console) throws -> ExitStatus {
    let payload: [UInt8]
    if let alert = request.alert {
        let keyring = try KeyringStore(folder: request.keysFolder).load()
        let sealer = try PayloadSealer(keyring: keyring, field: alert.field, pad: alert.pad, fallback: alert.fallback)
        payload = try sealedPayload(alert, sealer: sealer)
    } else {
        payload = try readyPayload(pushType: request.pushType)
    }
    let keyBytes = try InputFiles.read(request.authKey)
    let key: ES256Key
    do {
        key = try ES256Key(pem: keyBytes)
        guard key.canSign else { throw SealCryptoError(.invalidKey, "a public key cannot sign") }
    } catch let error as SealCryptoError {
        throw CLIFailure(.dataError, "\(request.authKey) is not an APNs signing key (\(error.reason)); give the .p8 file Apple made")
    }
    // The provider token is kept beside the keys; a sender of ready payloads may have none yet.
    if mkdir(request.keysFolder, 0o700) != 0, errno != EEXIST {
        throw CLIFailure(.cannotCreate, "cannot create \(request.keysFolder) for the provider token: \(String(cString: strerror(errno)))")
    }
    let tokens = ProviderTokenCache(folder: request.keysFolder, key: key, keyID: request.keyID, teamID: request.teamID)

    let tally = Locked<[Sender.Result.Outcome: Int]>([:])
    let json = request.json
    let sender = try Sender(
        settings: .init(topic: request.topic, pushType: request.pushType, priority: request.priority,
                        expiration: request.expiration, collapseID: request.collapseID, retries: request.retries),
        tokens: tokens, endpoint: request.endpoint,
        startTransport: { onResponse in
            try TransportProcess(program: transportProgram(), endpoint: request.endpoint, caFile: request.caFile,
                                 maximumStreams: request.concurrency, timeout: request.timeout, onResponse: onResponse)
        },
        emit: { result in
            tally.withLock { $0[result.outcome, default: 0] += 1 }
            console.write(Array((json ? resultJSON(result) : resultText(result)).utf8) + [UInt8(ascii: "\n")])
        })
    do {
        for device in request.devices { try sender.add(device: device, payload: payload) }
        if let file = request.devicesFile {
            try forEachDevice(in: file) { try sender.add(device: $0, payload: payload) }
        }
    } catch is SendError {
        // Reported below, once.
    }
    sender.finish()
    try console.finish()
    if let failure = sender.failure {
        throw CLIFailure(failure.code == .untrusted ? .configuration : .temporaryFailure,
                         failure.message + (failure.code == .untrusted ? "; give --cacert FILE to trust it" : ""))
    }
    let counts = tally.withLock { $0 }
    if counts[.refused, default: 0] > 0 { return .unavailable }
    if counts[.failed, default: 0] > 0 { return .temporaryFailure }
    return .ok
}

/// `pushseal-curl`, beside this binary (or where PUSHSEAL_CURL says).
private func transportProgram() -> String {
    if let path = getenv("PUSHSEAL_CURL") { return String(cString: path) }
    var buffer = [CChar](repeating: 0, count: 4_096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let executable = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "pushseal"
    let folder = executable.contains("/") ? String(executable[..<executable.lastIndex(of: "/")!]) : "."
    return folder + "/pushseal-curl"
}

/// A payload from stdin, as `pushseal encrypt` printed it.
private func readyPayload(pushType: String) throws -> [UInt8] {
    let limit = pushType == "voip" ? ReceivedInput.voipByteLimit : PayloadSealer.byteLimit
    var bytes = try InputFiles.read("-", atMost: limit + 2)
    while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
    guard bytes.count <= limit else {
        throw CLIFailure(.dataError, "the payload read from stdin is over APNs' \(limit) bytes")
    }
    guard case .object(let object)? = try? JSONParser.parse(bytes), case .object? = object["aps"] else {
        throw CLIFailure(.dataError, "stdin is not an APNs payload (a JSON object with 'aps'); pipe 'pushseal encrypt' into it")
    }
    return bytes
}

/// Each token in a devices file (one per line; blank lines and # comments skipped).
private func forEachDevice(in file: String, _ body: (String) throws -> Void) throws {
    let bytes = try InputFiles.read(file)
    var number = 0
    for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        number += 1
        let text = String(String(decoding: line, as: UTF8.self).filter { !$0.isWhitespace }).lowercased()
        guard !text.isEmpty, !text.hasPrefix("#") else { continue }
        guard APNsRules.deviceTokenLengths.contains(text.count), text.count % 2 == 0, text.allSatisfy({ $0.isHexDigit }) else {
            throw CLIFailure(.dataError, "\(file) line \(number): not a device token in hex")
        }
        try body(text)
    }
}

private func resultText(_ result: Sender.Result) -> String {
    switch result.outcome {
    case .ok:
        return "ok \(result.device) \(result.apnsID)"
    case .refused, .failed:
        var line = "fail \(result.device) \(result.status) \(TerminalText.escaping(result.reason ?? ""))"
        if let timestamp = result.timestamp { line += " " + Timestamp.format(timestamp / 1_000) }
        if result.outcome == .failed { line += " (after \(result.attempts) attempts)" }
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
    object.append("elapsed_ms", .number(String(format3(result.elapsed))))
    return String(decoding: JSONWriter.bytes(.object(object)), as: UTF8.self)
}

private func format3(_ duration: Duration) -> String {
    let micros = Int64((duration.milliseconds * 1_000).rounded())
    let fraction = String(micros % 1_000)
    return "\(micros / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}
