import Dispatch
import Locking
import PushSeal
import PushSealJSON
import PushSealReceiver
import PushSealSend
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// `pushseal send --webpush FILE`: the alert sealed once in the web form, delivered to every
/// browser subscription in FILE through its push service (RFC 8030), encrypted for each
/// subscription (RFC 8291) with a VAPID token per push service (RFC 8292); one result line
/// per subscription, in the file's order.
struct WebPushSendRequest: Equatable {
    var alert: EncryptRequest
    /// One PushSubscription JSON a line; `-` for stdin.
    var subscriptionsFile: String
    var subject: String
    var settings: WebPushSettings
    var caFile: String?
    var proxy: String?
    var retries: Int?
    var retryFor: Duration
    var connections: Int
    var concurrency: Int
    var timeout: Duration
    var json: Bool

    /// RFC 8030's TTL, Urgency and Topic, from `--ttl`, `--priority` and `--collapse-id`.
    struct WebPushSettings: Equatable {
        var timeToLive: Int
        var urgency: String?
        var topic: String?
    }
}

/// A subscriptions file's line: a PushSubscription's JSON is a few hundred bytes; a batch line
/// carries an alert beside it, which fits what one push message carries.
let subscriptionLine = InputBound(8192, "a subscriptions file's line", because: "a browser's PushSubscription JSON is a few hundred bytes")
private let batchLine = InputBound(16_384, "a batch line", because: "a subscription and an alert that fits one push message take less")

func runWebPushSend(_ request: WebPushSendRequest, console: Console) throws -> ExitStatus {
    // A first SIGINT or SIGTERM stops taking subscriptions and retrying; what is on the wire
    // gets its line. Set before any thread starts, so every later thread inherits the block.
    let stop = try StopRequest()
    let stoppedBy = Locked<Int32?>(nil)
    let running = Locked<WebPushSender?>(nil)
    let signals = StopSignals(
        first: { signal in
            stoppedBy.withLock { $0 = signal }
            stop.request()
            running.withLock { $0 }?.stopRetrying()
        },
        second: { signal in
            console.flushIfFree()
            StopSignals.say("error: stopped at once by a second \(signal == SIGINT ? "SIGINT" : "SIGTERM"): subscriptions sent or queued have no result line\n")
            _exit(128 + signal)
        })
    defer { signals.restore() }
    // The stop pipe, the keyring's files, the loop's epoll and eventfd, a socket per service.
    if case let free = DescriptorLimit.free, free < 16 + request.connections {
        throw CLIFailure(
            .temporaryFailure,
            "send needs \(16 + request.connections) free file descriptors and \(free) are left (the limit is \(DescriptorLimit.current)); raise it with ulimit -n")
    }
    let alert = request.alert
    let sealers = try SealerSet(alert)
    guard let key = try VAPIDKeyFile.load(folder: alert.keysFolder) else {
        throw CLIFailure(
            .configuration,
            "no VAPID key in \(alert.keysFolder); make one with 'pushseal keys vapid' and subscribe the web app with the key it prints")
    }
    let vapid = try VAPIDCredentials(key: key, subject: request.subject)
    try checkTrustFile(request.caFile)

    // Sealed once per key: to a pairing string's own share (unless --to names the key), else
    // to --to's key or the primary.
    var payloads: [String: [UInt8]] = [:]
    func payload(for subscription: WebPushSubscription) throws -> [UInt8] {
        let share = alert.recipient == nil ? subscription.share : nil
        let name = share?.text ?? ""
        if let made = payloads[name] { return made }
        let made = try sealedPayload(alert, sealer: share.map { try sealers.sealer(toShare: $0) } ?? sealers.sealer(to: alert.recipient), console: console)
        payloads[name] = made
        return made
    }
    let provider = WebPushProvider(
        settings: .init(timeToLive: request.settings.timeToLive, urgency: request.settings.urgency, topic: request.settings.topic),
        wrapping: try WebPushPayload(field: alert.field), vapid: vapid)
    let tally = Locked<[SendResult<WebPushSubscription>.Outcome: Int]>([:])
    let json = request.json
    /// The sender, made for the first subscription (its push service is the first connection).
    func makeSender(first: WebPushSubscription) throws -> WebPushSender {
        let connection: SendConnection
        do {
            connection = try SendConnection(
                endpoint: SendEndpoint(checking: first.origin), proxy: request.proxy, trustFile: request.caFile,
                connections: request.connections, streams: request.concurrency, timeout: request.timeout)
        } catch {
            throw CLIFailure(.usage, error.reason)
        }
        return try WebPushSender(
            provider: provider, connection: connection, retries: request.retries, retryFor: request.retryFor,
            emit: { result in
                tally.withLock { $0[result.outcome, default: 0] += 1 }
                var line = json ? webPushResultJSON(result) : webPushResultText(result)
                line.append("\n")
                _ = console.write(Array(line.utf8))
            })
    }

    // The subscriptions are sent as they are read, so memory stays flat however long the file:
    // the sender holds only its window of requests in flight.
    let shownFile = request.subscriptionsFile == "-" ? "stdin" : request.subscriptionsFile
    var sender: WebPushSender?
    var badLines = 0
    var lines = 0
    let descriptor = try InputFiles.open(request.subscriptionsFile)
    defer { if descriptor != 0 { close(descriptor) } }
    let flusher = startFlushingResults(console, stop: stop) { running.withLock { $0 }?.stopRetrying() }
    defer { flusher.cancel() }
    var reader = LineReader(descriptor: descriptor, stop: stop, bound: alert.batch ? batchLine : subscriptionLine)
    let overlong = reader.overlongReason
    var stoppedEarly: (any Error)?
    // Encrypted and handed over a few at a time: one wake of the connections' thread for each
    // few, where one each would cost as much as the encryption on a single core.
    var waiting: [(payload: [UInt8], subscription: WebPushSubscription)] = []
    func handOver() throws {
        guard let sender, !waiting.isEmpty, !stop.isRequested else { return }
        let batch = waiting
        waiting = []
        try sender.add(batch: batch)
    }
    // A slow stream's lines are handed over as soon as no more input waits, not held back.
    var idleFailure: (any Error)?
    do {
        try reader.forEachLine(
            idle: {
                do { try handOver() } catch { idleFailure = idleFailure ?? error }
            },
            overlong: {
                lines += 1
                badLines += 1
                console.error("\(shownFile) line \(lines): \(overlong)")
            },
            each: { line in
                lines += 1
                let text = String(decoding: line, as: UTF8.self).trimmingASCIIWhitespace()
                guard !text.isEmpty, !text.hasPrefix("#") else { return }
                let subscription: WebPushSubscription
                let message: [UInt8]
                do {
                    if alert.batch {
                        (subscription, message) = try batchMessage(Array(text.utf8), sealers: sealers, recipient: alert.recipient)
                    } else {
                        subscription = try WebPushSubscription(json: Array(text.utf8))
                        message = []
                    }
                } catch {
                    // A line's own fault skips the line.
                    badLines += 1
                    console.error("\(shownFile) line \(lines): \(error)")
                    return
                }
                // The command's one alert, sealed once per key: when it cannot be (too long, no
                // key), that is the command's failure, not each line's.
                let sealed = alert.batch ? message : try payload(for: subscription)
                if sender == nil {
                    sender = try makeSender(first: subscription)
                    running.withLock { $0 = sender }
                    if stoppedBy.withLock({ $0 }) != nil { sender!.stopRetrying() }
                }
                guard !stop.isRequested else { return }
                waiting.append((sealed, subscription))
                if let idleFailure { throw idleFailure }
                if waiting.count >= WebPushSender.batchLimit { try handOver() }
            })
        if let idleFailure { throw idleFailure }
        try handOver()
    } catch {
        try? handOver()
        // Before the sender exists a failure is the command's (a key, a connection setting);
        // after, the results so far are still written.
        guard sender != nil else { throw error }
        stoppedEarly = error
    }
    guard let sender else {
        if let signal = stoppedBy.withLock({ $0 }) {
            console.error("stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM") before anything was sent")
            return signal == SIGINT ? .interrupted : .terminated
        }
        if badLines > 0 {
            console.error("\(badLines) of \(lines) lines were not sent")
            return .dataError
        }
        throw CLIFailure(.usage, "no subscriptions in \(shownFile): nothing was sent")
    }
    sender.finish()
    try console.finish()
    if let failure = sender.failure { throw CLIFailure(exitStatus(for: failure), failure.reason) }
    if let stoppedEarly { throw stoppedEarly }
    if let signal = stoppedBy.withLock({ $0 }) {
        console.error("stopped by \(signal == SIGINT ? "SIGINT" : "SIGTERM"): subscriptions after the last result were not sent")
        return signal == SIGINT ? .interrupted : .terminated
    }
    return endingStatus(badLines: badLines, of: lines, outcomes: tally.withLock { $0 }, console: console)
}

/// A `--batch` line: `{"subscription": {…}, "title": …, "body": …}`, the subscription (or a
/// pairing string) and the fields of `encrypt --batch`; sealed on its own, to the pairing
/// string's share unless a `to` (or `--to`) names a key.
private func batchMessage(_ line: [UInt8], sealers: SealerSet, recipient: String?) throws -> (WebPushSubscription, [UInt8]) {
    guard case .object(let object)? = try? JSONParser.parse(line) else {
        throw PayloadError(.invalidAlert, "the line is not a JSON object")
    }
    guard case .object(let given)? = object["subscription"] else {
        throw PayloadError(.invalidAlert, "the line has no \"subscription\" (the PushSubscription JSON, or the web app's pairing string)")
    }
    let subscription = try WebPushSubscription(json: JSONWriter.bytes(.object(given)))
    let request = try AlertRequest(json: JSONObject(object.filter { $0.key != "subscription" }))
    let sealer =
        if let share = subscription.share, request.recipient == nil, recipient == nil {
            try sealers.sealer(toShare: share)
        } else {
            try sealers.sealer(to: request.recipient ?? recipient)
        }
    return (subscription, try sealer.payload(for: try request.alert(now: Timestamp.now()), truncatingBody: sealers.truncate).payload)
}

private func webPushResultText(_ result: SendResult<WebPushSubscription>) -> String {
    switch result.outcome {
    case .ok:
        return "ok \(TerminalText.escaping(result.target.endpoint)) \(TerminalText.escaping(result.notificationID))"
    case .refused, .failed:
        var line = "fail \(TerminalText.escaping(result.target.endpoint)) \(result.status) \(TerminalText.escaping(result.reason ?? ""))"
        if result.outcome == .failed, result.attempts > 0 { line += result.attempts == 1 ? " (1 attempt)" : " (\(result.attempts) attempts)" }
        return line
    }
}

private func webPushResultJSON(_ result: SendResult<WebPushSubscription>) -> String {
    var object = JSONObject()
    object.append("subscription", .string(result.target.endpoint))
    object.append("status", .string(result.outcome.rawValue))
    object.append("http-status", .integer(result.status))
    object.append("id", .string(result.notificationID))
    object.append("reason", result.reason.map { .string($0) } ?? .null)
    object.append("attempts", .integer(result.attempts))
    object.append("elapsed_ms", .number(result.elapsed.millisecondsText))
    return String(decoding: JSONWriter.bytes(.object(object)), as: UTF8.self)
}

/// APNs' own options, given on the command line (not from the environment), have no place
/// beside `--webpush`.
func refuseAPNsOptions(_ parsed: ParsedArguments, spec: CommandSpec) throws(UsageError) {
    let apnsOnly = ["device", "devices", "topic", "auth-key", "key-id", "team-id", "cert", "cert-passphrase-file", "endpoint", "push-type", "expiration"]
    if let given = apnsOnly.first(where: { parsed.value($0) != nil && parsed.fromEnvironment[$0] == nil })
        ?? ["sandbox", "production", "allow-cleartext"].first(where: parsed.has)
    {
        throw UsageError("--\(given) is APNs'; --webpush sends to browser subscriptions (give one or the other)", command: spec.name)
    }
}

/// Reads `send --webpush`'s options: the alert, the subscriptions, the VAPID subject, and
/// RFC 8030's headers from APNs' options (`--ttl`, `--priority`, `--collapse-id`). APNs'
/// own options have no place here and are usage errors.
func webPushDelivery(_ parsed: ParsedArguments, spec: CommandSpec, file: String) throws(UsageError) -> WebPushSendRequest {
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    try refuseAPNsOptions(parsed, spec: spec)
    guard parsed.positionals != ["-"] else {
        throw fail("--webpush seals the alert given as options; a ready payload ('-') is APNs'")
    }
    var alert = try alertOptions(parsed, spec: spec, stdinIsBody: false)
    if alert.batch {
        guard alert.fields.isEmpty, alert.url == nil, alert.body == .none, alert.data.isEmpty, alert.timeToLive == nil else {
            throw fail("--webpush FILE --batch reads each alert from FILE's lines, with its subscription; alert options cannot be combined with it")
        }
    } else if alert.fields.title == nil && alert.body == .none {
        throw fail("nothing to send: give --title, --body or a BODY argument")
    }
    guard alert.fallback == .standard else {
        throw fail("--webpush carries no fallback alert (no aps): the web app shows the alert itself")
    }
    alert.web = true
    let subject = try requiredValue(parsed, "vapid-subject", "how push services reach you (mailto:you@your-domain)", command: spec.name)
    do {
        try VAPIDCredentials.checkSubject(subject)
    } catch {
        throw fail(error.reason)
    }
    var urgency: String?
    if let given = parsed.value("priority") {
        guard let priority = APNs.Priority(rawValue: given) else { throw fail("--priority is 10 (now), 5 (when convenient) or 1 (background)") }
        // APNs' priorities, in RFC 8030's words.
        urgency = ["10": "high", "5": "normal", "1": "low"][priority.rawValue]
    }
    let topic = parsed.value("collapse-id")
    if let topic {
        let allowed = topic.utf8.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        guard !topic.isEmpty, topic.utf8.count <= 32, allowed else {
            throw fail("--collapse-id is Web Push's Topic here: 1 to 32 of A-Z a-z 0-9 - _")
        }
    }
    return WebPushSendRequest(
        alert: alert, subscriptionsFile: file, subject: subject,
        settings: .init(timeToLive: Int(alert.timeToLive?.components.seconds ?? 2_419_200), urgency: urgency, topic: topic),
        caFile: parsed.value("cacert"), proxy: parsed.value("proxy"),
        retries: try wholeNumber(parsed, "retries", in: 0...10, command: spec.name),
        retryFor: try duration(parsed, "retry-for", in: DurationRange.retryFor, example: "1m", command: spec.name) ?? SendRetries.defaultRetryFor,
        connections: try wholeNumber(parsed, "connections", in: 1...64, command: spec.name) ?? 1,
        concurrency: try wholeNumber(parsed, "concurrency", in: 1...1_000, command: spec.name) ?? 1_000,
        timeout: try duration(parsed, "timeout", in: DurationRange.requestTimeout, example: "30s", command: spec.name) ?? SendConnection.defaultTimeout,
        json: parsed.has("json"))
}
