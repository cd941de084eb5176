import Dispatch
import Locking
import PushSeal
import PushSealJSON
import PushSealSend
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

// What `send` (and `run`, which delivers its outcome as `send` does) is asked to do, read
// from the options: the devices, APNs settings, retries and credentials.

/// `pushseal send`: what to seal (or a ready payload), where to, and how.
struct SendRequest: Equatable {
    /// The alert to seal; nil when a ready payload comes on stdin (`-`).
    var alert: EncryptRequest?
    var devices: [DeviceToken]
    /// A file of tokens, or `-` for stdin.
    var devicesFile: String?
    var topic: String
    /// How APNs knows the sender: a provider token signed with a .p8, or a client certificate.
    var credentials: ProviderCredentials
    var endpoint: String
    var caFile: String?
    var priority: APNs.Priority?
    var collapseID: String?
    var pushType: APNs.PushType
    var expiration: String?
    /// `--retries`; nil: as often as `retryFor` allows.
    var retries: Int?
    /// No retry starts later than this after a device's first attempt.
    var retryFor: Duration
    var concurrency: Int
    /// HTTP/2 connections the devices are spread over.
    var connections: Int
    /// `--proxy`: nil when not given (the environment decides), empty for none.
    var proxy: String?
    /// How long one request may wait for its answer before it is given up (and retried).
    var timeout: Duration
    var json: Bool
    var keysFolder: String

    /// The library's sender configured as the options say: `send` is a client of
    /// `NotificationSender`, the engine a Swift server calls.
    var configuration: NotificationSender.Configuration {
        let shown: NotificationSender.Credentials =
            switch credentials {
            case .token(let authKey, let keyID, let teamID): .providerToken(keyFile: authKey, keyID: keyID, teamID: teamID)
            // The passphrase is read by the command, from its file or the environment.
            case .certificate(let file, _): .clientCertificate(file: file, passphrase: nil)
            }
        var configuration = NotificationSender.Configuration(topic: topic, credentials: shown, keysFolder: keysFolder, endpoint: endpoint)
        configuration.pushType = pushType
        configuration.priority = priority
        configuration.expiration = expiration
        configuration.collapseID = collapseID
        configuration.trustFile = caFile
        configuration.proxy = proxy
        configuration.connections = connections
        configuration.streams = concurrency
        configuration.timeout = timeout
        configuration.retries = retries
        configuration.retryFor = retryFor
        return configuration
    }
}

/// How APNs knows who sends: a provider token (`--auth-key`, `--key-id`, `--team-id`) or a
/// client certificate (`--cert`, its passphrase from `--cert-passphrase-file` or
/// PUSHSEAL_CERT_PASSPHRASE, never an argument), not both.
enum ProviderCredentials: Equatable {
    case token(authKey: String, keyID: String, teamID: String)
    /// The passphrase is read from `passphraseFile`, else from PUSHSEAL_CERT_PASSPHRASE.
    case certificate(file: String, passphraseFile: String?)
}

private func sendCredentials(_ parsed: ParsedArguments, spec: CommandSpec) throws(UsageError) -> ProviderCredentials {
    guard let certificate = parsed.value("cert") else {
        if parsed.value("cert-passphrase-file") != nil { throw UsageError("--cert-passphrase-file goes with --cert", command: spec.name) }
        let (authKey, keyID, teamID) = try providerCredentials(parsed, spec: spec)
        return .token(authKey: authKey, keyID: keyID, teamID: teamID)
    }
    // Options given on the command line clash; the same ones from the environment give way.
    let given = ["auth-key", "key-id", "team-id"].filter { parsed.value($0) != nil && parsed.fromEnvironment[$0] == nil }
    guard given.isEmpty else {
        throw UsageError(
            "--cert authenticates with a client certificate; --\(given[0]) belongs to a provider token: give one way, not both",
            command: spec.name)
    }
    return .certificate(file: certificate, passphraseFile: parsed.value("cert-passphrase-file"))
}

/// Where and how `send` (and `run`) deliver: devices, APNs settings, retries.
func delivery(_ parsed: ParsedArguments, spec: CommandSpec, alert: EncryptRequest?, batch: Bool) throws(UsageError) -> SendRequest {
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    func required(_ option: String, _ what: String) throws(UsageError) -> String {
        try requiredValue(parsed, option, what, command: spec.name)
    }
    let devicesFile = parsed.value("devices")
    let devices = try CheckedValues.deviceTokens(parsed, "device", command: spec.name).compactMap(DeviceToken.init)
    guard !devices.isEmpty || devicesFile != nil || batch else {
        throw fail(
            spec.name == Specs.run.name
                ? "no devices: give --device TOKEN (repeatable) or --devices FILE, or --print to print the payload"
                : "no devices: give --device TOKEN (repeatable), --devices FILE or --batch")
    }
    if parsed.has("sandbox"), parsed.has("production") { throw fail("--sandbox and --production contradict each other") }
    // A flag beats the environment; two flags that name different servers are a mistake.
    let server = parsed.has("sandbox") ? "--sandbox" : parsed.has("production") ? "--production" : nil
    if let server, parsed.value("endpoint") != nil, parsed.fromEnvironment["endpoint"] == nil {
        throw fail("--endpoint and \(server) name different servers; give one")
    }
    var endpoint = parsed.has("sandbox") ? NotificationSender.development : NotificationSender.production
    if server == nil, let given = parsed.value("endpoint") {
        guard given.hasPrefix("https://") || given.hasPrefix("http://"), given.count > 8 else {
            throw fail("\(parsed.origin("endpoint")) takes a URL such as https://127.0.0.1:8443 (http:// for HTTP/2 without TLS)")
        }
        let parsedEndpoint: SendEndpoint
        do {
            parsedEndpoint = try SendEndpoint(checking: given)
        } catch {
            throw fail("\(parsed.origin("endpoint")): \(error.reason)")
        }
        endpoint = parsedEndpoint.description
        // Over http:// the provider token travels in clear: only to this machine, unless asked.
        if !parsedEndpoint.secure, !parsedEndpoint.isLoopback, !parsed.has("allow-cleartext") {
            throw fail("\(parsed.origin("endpoint")) is http:// to \(parsedEndpoint.host), so the provider token would travel in clear; use https://, or --allow-cleartext on a network you trust")
        }
    }
    var priority: APNs.Priority?
    if let given = parsed.value("priority") {
        guard let known = APNs.Priority(rawValue: given) else { throw fail("--priority is 10 (now), 5 (when convenient) or 1 (background)") }
        priority = known
    }
    if let collapse = parsed.value("collapse-id"), collapse.utf8.count > APNs.collapseIDLimit {
        throw fail("--collapse-id is at most 64 bytes")
    }
    guard let pushType = APNs.PushType(rawValue: parsed.value("push-type") ?? "alert") else {
        throw fail("--push-type is one of \(APNs.PushType.allCases.map(\.rawValue).sorted().joined(separator: ", "))")
    }
    // APNs' rules for background pushes: no alert (it would be shown), priority 5.
    if pushType == .background {
        if alert != nil || batch {
            throw fail("--push-type background carries no alert, and pushseal seals an alert: send it as alert (the default), or pipe a payload without 'alert' into '-'")
        }
        guard priority == nil || priority == .whenConvenient else { throw fail("--push-type background goes with --priority 5, as APNs requires") }
        priority = .whenConvenient
    }
    var expiration = parsed.value("expiration")
    if let text = expiration, Int64(text).map({ $0 < 0 }) ?? true { throw fail("--expiration takes UNIX seconds") }
    if let ttl = alert?.timeToLive {
        guard expiration == nil else { throw fail("--ttl sets apns-expiration itself; give --ttl or --expiration") }
        expiration = String(Timestamp.now() + ttl.components.seconds)
    }
    let retries = try wholeNumber(parsed, "retries", in: 0...10, command: spec.name)
    let concurrency = try wholeNumber(parsed, "concurrency", in: 1...1_000, command: spec.name) ?? 1_000
    let connections = try wholeNumber(parsed, "connections", in: 1...64, command: spec.name) ?? 1
    let topic = try required("topic", "the app's bundle id")
    return SendRequest(
        alert: alert, devices: devices, devicesFile: devicesFile,
        topic: topic, credentials: try sendCredentials(parsed, spec: spec),
        endpoint: endpoint, caFile: parsed.value("cacert"), priority: priority,
        collapseID: parsed.value("collapse-id"), pushType: pushType, expiration: expiration,
        retries: retries,
        retryFor: try duration(parsed, "retry-for", in: DurationRange.retryFor, example: "1m", command: spec.name) ?? SendRetries.defaultRetryFor,
        concurrency: concurrency, connections: connections, proxy: parsed.value("proxy"),
        timeout: try duration(parsed, "timeout", in: DurationRange.requestTimeout, example: "30s", command: spec.name) ?? SendConnection.defaultTimeout,
        json: parsed.has("json"), keysFolder: keysFolder(parsed))
}
