import Locking
import PushSeal
import PushSealJSON
import PushSealReceiver
import PushSealSend
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// `pushseal doctor send --webpush FILE`: checks a Web Push sender's set-up without sending
/// anything a browser could receive. The VAPID key and subject are checked here, every line
/// of FILE read as `send --webpush` reads it, and each push service is asked once, for a path
/// that is no subscription, with a message sealed to a key nobody holds: an answer such as 404
/// says the connection (TLS, HTTP/2, the proxy) works; 401 or 403 that the VAPID token was
/// refused.
struct DoctorWebPushRequest: Equatable {
    var subscriptionsFile: String
    var subject: String
    var keysFolder: String
    var caFile: String?
    var proxy: String?
    var timeout: Duration
    var json: Bool
}

/// The push services asked, at most: a file naming more has them listed, not probed.
private let probedOrigins = 16

func parseDoctorWebPush(_ parsed: ParsedArguments, spec: CommandSpec, file: String) throws(UsageError) -> DoctorWebPushRequest {
    try refuseAPNsOptions(parsed, spec: spec)
    let subject = try requiredValue(parsed, "vapid-subject", "how push services reach you (mailto:you@your-domain)", command: spec.name)
    return DoctorWebPushRequest(
        subscriptionsFile: file, subject: subject, keysFolder: keysFolder(parsed), caFile: parsed.value("cacert"), proxy: parsed.value("proxy"),
        timeout: try duration(parsed, "timeout", in: DurationRange.requestTimeout, example: "30s", command: spec.name) ?? SendConnection.defaultTimeout,
        json: parsed.has("json"))
}

func runDoctorWebPush(_ request: DoctorWebPushRequest, console: Console) throws -> ExitStatus {
    var findings: [DoctorFinding] = []
    func add(_ check: String, _ level: DoctorFinding.Level, _ says: String, fix: String? = nil) {
        findings.append(DoctorFinding(check, level, says, fix: fix))
    }
    var vapid: VAPIDCredentials?
    if let key = try VAPIDKeyFile.load(folder: request.keysFolder) {
        add("vapid key", .ok, "\(VAPIDKeyFile.path(in: request.keysFolder)): pages subscribe with \(Base64.encode(key.publicPoint, alphabet: .url))")
        do {
            vapid = try VAPIDCredentials(key: key, subject: request.subject)
            add("subject", .ok, request.subject)
        } catch {
            add("subject", .problem, error.reason, fix: "give --vapid-subject mailto:you@your-domain.com (an address the push services can write to)")
        }
    } else {
        add(
            "vapid key", .problem, "no VAPID key in \(request.keysFolder)",
            fix: "pushseal keys vapid --keys \(request.keysFolder) (then open the web app again: it subscribes with the key printed)")
    }

    // Every line, as send reads it; the push services in the order they first appear.
    var origins: [String] = []
    var count = 0
    var pairings = 0
    var bad: [String] = []
    var lines = 0
    let shownFile = request.subscriptionsFile == "-" ? "stdin" : request.subscriptionsFile
    let descriptor = try InputFiles.open(request.subscriptionsFile)
    defer { if descriptor != 0 { close(descriptor) } }
    var reader = LineReader(descriptor: descriptor, stop: try StopRequest(), bound: subscriptionLine)
    let overlong = reader.overlongReason
    try reader.forEachLine(
        overlong: {
            lines += 1
            bad.append("line \(lines): \(overlong)")
        },
        each: { line in
            lines += 1
            let text = String(decoding: line, as: UTF8.self).trimmingASCIIWhitespace()
            guard !text.isEmpty, !text.hasPrefix("#") else { return }
            do {
                let subscription = try WebPushSubscription(json: Array(text.utf8))
                count += 1
                if subscription.share != nil { pairings += 1 }
                if !origins.contains(subscription.origin) { origins.append(subscription.origin) }
            } catch {
                bad.append("line \(lines): \(error)")
            }
        })
    if count > 0 {
        let services = origins.count == 1 ? "1 push service" : "\(origins.count) push services"
        add(
            "file", .ok,
            "\(count) in \(shownFile) (\(pairings) of them pairing strings, sealed to the page's own key), at \(services): \(origins.prefix(4).joined(separator: ", "))\(origins.count > 4 ? ", …" : "")"
        )
    } else if bad.isEmpty {
        add("file", .problem, "no subscriptions in \(shownFile)", fix: "one PushSubscription JSON (or the web app's pairing string) a line")
    }
    for problem in bad.prefix(5) {
        add("file", .problem, "\(shownFile) \(problem)", fix: "give the JSON the page shows (PushSubscription.toJSON()), one a line")
    }
    if bad.count > 5 { add("file", .problem, "\(bad.count - 5) more lines of \(shownFile) are not subscriptions") }

    if let vapid, !origins.isEmpty {
        try checkTrustFile(request.caFile)
        for (origin, result) in try probe(Array(origins.prefix(probedOrigins)), vapid: vapid, request: request) {
            judgeProbe(origin, result, proxy: request.proxy, report: add)
        }
        if origins.count > probedOrigins {
            add("service", .note, "\(origins.count - probedOrigins) more push services were not asked (at most \(probedOrigins) are)")
        }
    }

    return reportSetUp(
        findings, ready: "ready: every push service answered and took the VAPID token", about: ("subscriptions", request.subscriptionsFile),
        json: request.json, console: console)
}

/// One request to each push service, for a path that is no subscription, sealed to a key made
/// for it and dropped at once: nothing a browser could receive or anyone could read.
private func probe(_ origins: [String], vapid: VAPIDCredentials, request: DoctorWebPushRequest) throws -> [(String, WebPushSender.Result?)] {
    let nobody = try P256PrivateKey.generate().publicKey
    let probes = try origins.map { origin in
        try WebPushSubscription(
            endpoint: origin + "/pushseal-doctor-probe", p256dh: Base64.encode(nobody.x963Representation, alphabet: .url),
            auth: Base64.encode(try SecureRandom.bytes(count: 16), alphabet: .url))
    }
    let connection: SendConnection
    do {
        connection = try SendConnection(
            endpoint: SendEndpoint(checking: probes[0].origin), proxy: request.proxy, trustFile: request.caFile, connections: 1, streams: 16,
            timeout: request.timeout)
    } catch {
        throw CLIFailure(.usage, error.reason)
    }
    let results = Locked<[String: WebPushSender.Result]>([:])
    let sender = try WebPushSender(
        provider: WebPushProvider(settings: .init(timeToLive: 0, urgency: "low", topic: nil), wrapping: try WebPushPayload(), vapid: vapid),
        connection: connection, retries: 0, retryFor: .zero,
        emit: { result in results.withLock { $0[result.target.origin] = result } })
    for subscription in probes { try sender.add(Array(#"{"enc":"pushseal doctor: a probe for no subscription"}"#.utf8), to: subscription) }
    sender.finish()
    let found = results.withLock { $0 }
    return origins.map { ($0, found[$0]) }
}

private func judgeProbe(_ origin: String, _ result: WebPushSender.Result?, proxy: String?, report: (String, DoctorFinding.Level, String, String?) -> Void) {
    func add(_ level: DoctorFinding.Level, _ says: String, fix: String? = nil) { report("service", level, says, fix) }
    guard let result, result.status != 0 else {
        let reason = result?.reason ?? "no answer"
        let fix =
            reason.contains("certificate") || reason.contains("TLS")
            ? "trust the service's certificate (--cacert FILE, or the system's ca-certificates)"
            : reason.contains("proxy") ? "check --proxy (or HTTPS_PROXY and NO_PROXY)" : "check the address, DNS and whether port 443 can go out"
        add(.problem, "\(origin): \(reason)", fix: fix)
        return
    }
    let answer = "\(result.status)\(result.reason.map { " \($0)" } ?? "")"
    switch result.status {
    case 401, 403:
        add(
            .problem, "\(origin) refused the VAPID token (\(answer))",
            fix: "check --vapid-subject (an address the service can write to) and that the page subscribed with this VAPID key")
    case 201, 202:
        add(.note, "\(origin) took a message for a path that is no subscription (\(answer)); connection and VAPID token accepted")
    default:
        add(.ok, "\(origin) answered a probe for no subscription \(answer), as expected: TLS, HTTP/2\(proxy == nil ? "" : ", the proxy") and the token went through")
    }
}
