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

/// Runs `pushseal doctor send`: checks a sender's set-up without sending a notification.
/// The credentials are read and checked here; then one request goes to the endpoint for a
/// device token that cannot exist, which APNs refuses for the token alone: `BadDeviceToken`
/// means the connection, the provider token (or certificate) and the topic were accepted;
/// `InvalidProviderToken` means the credentials were not. Exits 0 only when all pass.
func runDoctorSend(_ request: SendRequest, json: Bool, console: Console) throws -> ExitStatus {
    var findings: [DoctorFinding] = []
    func add(_ check: String, _ level: DoctorFinding.Level, _ says: String, fix: String? = nil) {
        findings.append(DoctorFinding(check, level, says, fix: fix))
    }
    let probe = try setUpProbe(request, report: { add($0, $1, $2, fix: $3) })
    if let probe {
        let result = send(probe, request: request)
        judge(result, request: request, tokenAge: probe.tokenAge, proxyAddress: probe.connection.proxyAddress, report: { add($0, $1, $2, fix: $3) })
    }
    return reportSetUp(
        findings, ready: "ready: APNs accepts this sender's connection, credentials and topic", about: ("endpoint", request.endpoint), json: json,
        console: console)
}

/// `doctor send`'s report: a line a finding and the verdict, or one JSON object (`about`
/// first); 78 when a finding is a problem.
func reportSetUp(_ findings: [DoctorFinding], ready: String, about: (String, String), json: Bool, console: Console) -> ExitStatus {
    let failed = findings.contains { $0.level == .problem }
    let verdict = failed ? "the set-up has problems: see the fixes above" : ready
    if json {
        console.output(
            JSONWriter.string(
                .object(
                    JSONObject([
                        (about.0, .string(about.1)), ("ready", .bool(!failed)), ("verdict", .string(verdict)),
                        ("findings", .array(findings.map(DoctorReport.json)))
                    ]))))
    } else {
        for finding in findings { console.output(DoctorReport.line(finding)) }
        console.output("verdict: \(verdict)")
    }
    return failed ? .configuration : .ok
}

/// What the probe request needs, once the local checks passed.
private struct Probe {
    let tokens: ProviderTokenCache?
    let connection: SendConnection
    /// The provider token's age when the probe was made, in seconds.
    let tokenAge: Int64?
}

/// The device token of the probe: not hex, so no server can take it for a device, and APNs
/// refuses it for the token alone once the credentials passed.
private let probeDevice = DeviceToken(unchecked: "pushseal-doctor-probe")

/// The local checks: the key or certificate, the ids, the topic, the trust file, the proxy.
/// Nil when one fails so that no request can be made.
private func setUpProbe(_ request: SendRequest, report: (String, DoctorFinding.Level, String, String?) -> Void) throws -> Probe? {
    func add(_ check: String, _ level: DoctorFinding.Level, _ says: String, fix: String? = nil) { report(check, level, says, fix) }
    var tokens: ProviderTokenCache?
    var identity: TLSClientIdentity?
    var tokenAge: Int64?
    switch request.credentials {
    case .token(let authKey, let keyID, let teamID):
        let key: ES256Key
        do {
            let found = try signingKey(authKey)
            key = found.key
            if let mode = found.exposedMode {
                add(
                    "auth key", .problem, "\(authKey) can be read by group or others (mode \(FileIO.modeText(mode))): anyone who reads it can send as you",
                    fix: "chmod 600 \(authKey)")
            }
        } catch let failure as CLIFailure {
            let fix =
                failure.description.contains("encrypted")
                ? "decrypt a copy once: openssl pkey -in \(authKey) -out AuthKey_\(keyID).p8 (then chmod 600)"
                : "give the .p8 file Apple made (Certificates, Identifiers & Profiles → Keys): an ES256 (P-256) private key, AuthKey_\(keyID).p8"
            add("auth key", .problem, failure.description, fix: fix)
            return nil
        }
        add("auth key", .ok, "\(authKey) holds a P-256 signing key")
        if !authKey.hasSuffix("AuthKey_\(keyID).p8") && authKey.contains("AuthKey_") {
            add(
                "key id", .problem, "the file is named \(authKey.split(separator: "/").last ?? ""), but --key-id is \(keyID): Apple names the file after its key id",
                fix: "give --key-id the id in the file's name (AuthKey_<KEYID>.p8)")
        } else {
            add("key id", .ok, "key id \(keyID), team id \(teamID) (whether they belong together, the server says below)")
        }
        let cache = ProviderTokenCache(folder: try tokenFolder(keysFolder: request.keysFolder), key: key, keyID: keyID, teamID: teamID)
        do {
            let token = try cache.token()
            tokenAge = ProviderTokenCache.issuedAt(of: token).map { Int64(time(nil)) - $0 }
        } catch {
            add("token", .problem, "no provider token can be made or kept: \(error)", fix: "make \(cache.path)'s folder writable")
            return nil
        }
        tokens = cache
    case .certificate(let file, _):
        do {
            identity = try clientIdentity(request)
            add("certificate", .ok, "\(file) holds a client certificate and its key")
        } catch let failure as CLIFailure {
            add(
                "certificate", .problem, failure.description,
                fix: failure.description.contains("passphrase")
                    ? "give its passphrase with --cert-passphrase-file or PUSHSEAL_CERT_PASSPHRASE"
                    : "give the certificate Apple issued with its private key (PEM, or a .p12)")
            return nil
        }
    }
    // The topic: a bundle id, with the suffix some push types need.
    let suffix: String? =
        switch request.pushType {
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        default: nil
        }
    if request.topic.contains(where: { $0 == " " || $0 == "/" }) || !request.topic.contains(".") {
        add("topic", .problem, "'\(request.topic)' does not look like a bundle id", fix: "give the app's bundle id, such as com.example.app")
    } else if let suffix, !request.topic.hasSuffix(suffix) {
        add(
            "topic", .problem, "a \(request.pushType.rawValue) push goes to the topic <bundle id>\(suffix), not '\(request.topic)'",
            fix: "give --topic \(request.topic)\(suffix)")
    } else {
        add("topic", .ok, "topic \(request.topic) for \(request.pushType.rawValue) pushes")
    }
    if let caFile = request.caFile {
        let count = TrustedCertificates.count(pem: (try? InputFiles.read(caFile, bound: .pem)) ?? [])
        if count == 0 {
            add("trust", .problem, "\(caFile) holds no PEM certificate", fix: "give the server's certificate or its CA's (-----BEGIN CERTIFICATE-----)")
            return nil
        }
        add("trust", .ok, "\(caFile): \(count) certificate\(count == 1 ? "" : "s") trusted besides the system's")
    }
    let connection: SendConnection
    do {
        connection = try probeConfiguration(request).connection(clientIdentity: identity)
    } catch {
        add("proxy", .problem, error.reason, fix: "give --proxy http://host:port, or --proxy '' for none")
        return nil
    }
    return Probe(tokens: tokens, connection: connection, tokenAge: tokenAge)
}

/// `send`'s configuration for the probe: one stream, no retry, and no longer than 15 s.
private func probeConfiguration(_ request: SendRequest) -> NotificationSender.Configuration {
    var configuration = request.configuration
    (configuration.connections, configuration.streams, configuration.timeout) = (1, 1, min(request.timeout, .seconds(15)))
    (configuration.retries, configuration.retryFor) = (0, .zero)
    (configuration.expiration, configuration.collapseID) = (nil, nil)
    return configuration
}

/// Sends the probe through `send`'s sender; its one result.
private func send(_ probe: Probe, request: SendRequest) -> NotificationSender.Result? {
    let outcome = Locked<NotificationSender.Result?>(nil)
    do {
        let sender = try NotificationSender(
            probeConfiguration(request), connection: probe.connection, tokens: probe.tokens, progress: SendProgress(),
            emit: { result in outcome.withLock { $0 = result } })
        try sender.add(Array(#"{"aps":{"alert":"pushseal doctor: a probe for no device"}}"#.utf8), to: probeDevice)
        sender.finish()
    } catch {
        return outcome.withLock { $0 }
    }
    return outcome.withLock { $0 }
}

/// What the probe's answer says of the set-up.
private func judge(
    _ result: NotificationSender.Result?, request: SendRequest, tokenAge: Int64?, proxyAddress: String?,
    report: (String, DoctorFinding.Level, String, String?) -> Void
) {
    func add(_ check: String, _ level: DoctorFinding.Level, _ says: String, fix: String? = nil) { report(check, level, says, fix) }
    let endpoint = request.endpoint
    let through = proxyAddress.map { " through the proxy \($0)" } ?? ""
    guard let result else {
        add("endpoint", .problem, "no answer from \(endpoint)", fix: "check the address and the network")
        return
    }
    if result.status == 0 {
        let reason = result.reason ?? "no answer"
        // A failure at the proxy's address is the proxy's, whatever the words say.
        if reason.contains("proxy") || proxyAddress.map({ reason.contains($0) }) == true {
            add(
                "proxy", .problem, proxyAddress.map { "through the proxy \($0): \(reason)" } ?? reason,
                fix: "check --proxy (or HTTPS_PROXY and NO_PROXY): the proxy must run there and allow CONNECT to port 443")
        } else if reason.contains("HTTP/2") {
            add("http/2", .problem, reason, fix: "APNs speaks HTTP/2 only: point --endpoint at an HTTP/2 server (ALPN h2)")
        } else if reason.contains("certificate") || reason.contains("TLS") {
            add("tls", .problem, reason, fix: endpoint.hasPrefix("https://api.") ? "check the system's CA certificates (ca-certificates)" : "trust the server's certificate with --cacert FILE")
        } else if reason.contains("cannot reach") || reason.contains("resolve") || reason.contains("name") {
            add("endpoint", .problem, reason, fix: "check the host and port, DNS, and whether a firewall lets port 443 out")
        } else {
            add("endpoint", .problem, reason, fix: "check the address and the network")
        }
        return
    }
    add("endpoint", .ok, "\(endpoint)\(through) answered over \(endpoint.hasPrefix("https://") ? "TLS and " : "")HTTP/2")
    // The clock, against the server's `date` where it sends one, and the token's age.
    if let date = result.serverDate, let serverTime = httpDate(date) {
        let skew = Int64(time(nil)) - serverTime
        if abs(skew) > 60 {
            add(
                "clock", .problem,
                "this machine's clock is \(abs(skew)) s \(skew > 0 ? "ahead of" : "behind") the server's: APNs refuses provider tokens dated in the future and expires them after an hour",
                fix: "synchronise the clock (timedatectl set-ntp true, or chrony)")
        } else {
            add("clock", .ok, "within \(abs(skew)) s of the server's")
        }
    } else {
        add("clock", .note, "the server sends no date to compare with; the answer below says whether the token's date was accepted")
    }
    if let tokenAge {
        add(
            "token", tokenAge < 0 ? .problem : .ok,
            tokenAge < 0 ? "the cached provider token is dated \(-tokenAge) s in the future" : "provider token made \(tokenAge) s ago (a new one every 50 minutes)",
            fix: tokenAge < 0 ? "synchronise the clock; the token is made again once it is older than 50 minutes" : nil)
    }
    let reason = result.reason ?? ""
    switch (result.status, reason) {
    case (400, "BadDeviceToken"):
        add(
            "credentials", .ok,
            request.credentials.isToken
                ? "the provider token was accepted (the probe was refused for its device token alone: BadDeviceToken)"
                : "the client certificate was accepted (the probe was refused for its device token alone: BadDeviceToken)")
        add("topic", .ok, "the server took topic \(request.topic)")
    case (_, "InvalidProviderToken"):
        add(
            "credentials", .problem, "the server refused the provider token (InvalidProviderToken): the key id, the team id and the .p8 do not belong together",
            fix: "give --key-id the id of this .p8 (its file name says AuthKey_<KEYID>.p8) and --team-id your team's (Membership details)")
    case (_, "ExpiredProviderToken"):
        add(
            "credentials", .problem, "the server called the provider token expired (ExpiredProviderToken): this machine's clock is likely wrong",
            fix: "synchronise the clock (timedatectl set-ntp true)")
    case (_, "MissingProviderToken"):
        add("credentials", .problem, "the server wants a provider token (MissingProviderToken)", fix: "give --auth-key, --key-id and --team-id")
    case (_, "BadCertificate"), (_, "BadCertificateEnvironment"):
        add(
            "credentials", .problem, "the server refused the client certificate (\(reason))",
            fix: reason == "BadCertificateEnvironment" ? "use --sandbox for a development certificate, --production for a production one" : "give the certificate Apple issued for this app")
    case (_, "TopicDisallowed"), (_, "BadTopic"), (_, "MissingTopic"), (_, "DeviceTokenNotForTopic"):
        add("credentials", .ok, "the credentials were accepted")
        add(
            "topic", .problem, "the server refused topic \(request.topic) (\(reason))",
            fix: "give --topic the app's bundle id, one the key's team owns")
    case (200, _):
        add("credentials", .note, "the server accepted a request for a device token that cannot exist: it does not check tokens as APNs does (a test endpoint?)")
    default:
        add("credentials", .problem, "the server answered \(result.status) \(reason) to the probe", fix: "see APNs' documentation of \(reason)")
    }
}

/// Seconds since 1970 of an HTTP date (`Sun, 06 Dec 2026 03:40:00 GMT`).
private func httpDate(_ text: String) -> Int64? {
    let words = text.split(separator: " ")
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    guard words.count == 6, words[5] == "GMT", let day = Int32(words[1]), let month = months.firstIndex(of: String(words[2])),
        let year = Int32(words[3])
    else { return nil }
    let clock = words[4].split(separator: ":").compactMap { Int32($0) }
    guard clock.count == 3 else { return nil }
    var parts = tm()
    parts.tm_year = year - 1900
    parts.tm_mon = Int32(month)
    parts.tm_mday = day
    parts.tm_hour = clock[0]
    parts.tm_min = clock[1]
    parts.tm_sec = clock[2]
    return Int64(timegm(&parts))
}

extension ProviderCredentials {
    var isToken: Bool {
        if case .token = self { return true }
        return false
    }
}

extension Specs {
    static let doctorSend = CommandSpec(
        name: ["doctor", "send"], overview: "Check a sender's set-up without sending a notification.",
        usage:
            "pushseal doctor send --topic BUNDLE --auth-key F.p8 --key-id K --team-id T [--sandbox|--endpoint URL] [--proxy URL] [--json]\n       pushseal doctor send --webpush FILE --vapid-subject URI [--cacert F] [--proxy URL] [--json]",
        options: send.options,
        discussion: """
            Checks the .p8 (readable, private, a P-256 key) or the client certificate, the key id
            against the file's name, the topic, the trust file and the proxy; then sends one request
            for a device token that cannot exist, which APNs refuses for the token alone:
            BadDeviceToken means the connection (TLS, HTTP/2, the proxy), the credentials and the
            topic were accepted; InvalidProviderToken means the credentials were not. The clock is
            checked against the server's date, where it sends one, and the provider token's age.
            Each problem comes with its fix. Exits 0 only when every check passes, 78 otherwise.

            With --webpush: the VAPID key and subject, every line of FILE as send --webpush reads
            it, and each push service asked once for a path that is no subscription, with a
            message sealed to a key nobody holds (nothing a browser receives): an answer such as
            404 means TLS, HTTP/2 and the proxy work; 401 or 403 that the VAPID token was refused.
            """)
}

func parseDoctorSend(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.doctorSend
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    if let stray = parsed.positionals.first {
        throw UsageError("doctor send sends no notification: '\(stray)' is not taken (give only send's connection options)", command: spec.name)
    }
    if let file = parsed.value("webpush") { return .doctorWebPush(try parseDoctorWebPush(parsed, spec: spec, file: file)) }
    // No devices and no alert: the probe has its own.
    let request = try delivery(parsed, spec: spec, alert: nil, batch: true)
    return .doctorSend(request, json: parsed.has("json"))
}
