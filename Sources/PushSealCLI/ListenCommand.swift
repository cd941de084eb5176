import Locking
import PushSeal
import PushSealReceiver
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Runs `receive --listen`: serves Apple's provider API until SIGINT or SIGTERM, every
/// request answered as APNs would and recorded, every accepted one delivered by `runner`.
///
/// - Parameters:
///   - onStopSignal: where the first signal looks for what to do; set here to a graceful stop
///     (GOAWAY, deliveries in flight finish within their budget).
///   - haltListener: set here to the same stop, for when records cannot be written.
///   - inputEnd: already requested when a signal came during set-up: the listener then
///     stops as soon as it started.
///   - records: takes every record, never waiting.
func serveListener(
    _ listen: ListenRequest, keysFolder: String, runner: ExtensionRunner, console: Console,
    onStopSignal: Locked<(@Sendable () -> Void)?>, haltListener: Locked<(@Sendable () -> Void)?>,
    inputEnd: StopRequest, records: any RecordSink, memory: ListenerMemory
) throws {
    var keys: [String: ES256Key] = [:]
    for provider in listen.providerKeys {
        let bytes = try InputFiles.read(provider.file, bound: .pem)
        do {
            keys[provider.keyID] = try ES256Key(pem: bytes)
        } catch {
            throw CLIFailure(.dataError, "\(provider.file) is not an ES256 key (\(error.reason)); give the PEM public key or the .p8 file")
        }
    }
    let tokens = ProviderTokens(keys: keys, team: listen.team)
    let rules = APNsRules(
        devices: Set(listen.devices), unregistered: Set(listen.unregistered), topics: Set(listen.topics),
        tokens: tokens, unregisteredSince: Int64(time(nil)) * 1_000)

    var identity: ListenerIdentity?
    // Said once the address is bound: a listener that cannot start has only its failure to report.
    var certificateNote: String?
    if !listen.plaintext {
        (identity, certificateNote) = try listenerIdentity(certificateFile: listen.certificateFile, keyFile: listen.keyFile, keysFolder: keysFolder)
    }
    var limits = ListenerLimits()
    limits.idleTimeout = listen.idleTimeout
    limits.connections = memory.plan.connections
    limits.requestBytes = memory.plan.requestBytes
    let listener: APNsListener
    do {
        listener = try APNsListener(
            settings: .init(
                host: listen.host, port: listen.port, tls: identity, rules: rules, limits: limits,
                pendingLimit: memory.plan.pending, pendingBytes: memory.plan.pendingBytes),
            runner: runner, records: records)
    } catch {
        let status: ExitStatus =
            switch error.code {
            case .address: .unavailable
            case .identity: .noInput
            case .file: .cannotCreate
            case .resources: .ioError
            }
        throw CLIFailure(status, error.reason)
    }
    if let certificateNote { console.diagnostic(certificateNote) }
    if !tokens.verifiesSignatures {
        console.diagnostic("note: provider tokens are checked for shape and age only; give --provider-key KEYID=FILE (and --team) to verify their signatures")
    }
    let halt: @Sendable () -> Void = { listener.stop() }
    onStopSignal.withLock { $0 = halt }
    haltListener.withLock { $0 = halt }
    if let note = memory.note { console.diagnostic(note) }
    if let warning = memory.warning { console.warning(warning) }
    if listener.connectionLimit < limits.connections {
        console.diagnostic("note: at most \(listener.connectionLimit) connections at once: the descriptor limit is \(DescriptorLimit.current) (raise it with ulimit -n or LimitNOFILE=)")
    }
    listener.start()
    console.diagnostic("listening on \(listener.url)")
    // A signal that came while the listener was being set up still stops it.
    if inputEnd.isRequested { listener.stop() }
    listener.wait()
    let tally = listener.tally
    if tally.refusedForLoad > 0 {
        console.warning("\(tally.refusedForLoad) notification(s) were answered 503 ServiceUnavailable: records or deliveries were backed up")
    }
    if tally.serverResets > 0 || tally.calmedConnections > 0 {
        console.warning("\(tally.serverResets) stream(s) were reset for breaking HTTP/2's rules; \(tally.calmedConnections) connection(s) were sent away for floods (GOAWAY ENHANCE_YOUR_CALM)")
    }
    if tally.refusedConnections > 0 || tally.acceptPauses > 0 {
        console.warning("\(tally.refusedConnections) connection(s) were refused at the cap; accepting paused \(tally.acceptPauses) time(s) for want of descriptors")
    }
}

/// The listener's bounds for the memory it is given, and what to tell the operator of them.
struct ListenerMemory {
    let plan: ListenerMemoryPlan
    /// Said at start when a memory limit cut the defaults.
    let note: String?
    /// Said at start when the bounds chosen need more than the limit gives.
    let warning: String?

    init(_ listen: ListenRequest, memoryLimit: Int? = CgroupMemoryLimit.current()) {
        plan = ListenerMemoryPlan.fitting(memoryLimit: memoryLimit, connections: listen.maxConnections, pending: listen.maxPending)
        guard let memoryLimit else {
            note = nil
            warning = nil
            return
        }
        let megabytes = { (bytes: Int) in "\((bytes + (1 << 20) - 1) >> 20) MB" }
        let defaults = ListenerMemoryPlan.fitting(memoryLimit: nil, connections: listen.maxConnections, pending: listen.maxPending)
        warning =
            plan.bytesAtMost <= ListenerMemoryPlan.usable(memoryLimit)
            ? nil
            : "the memory limit is \(megabytes(memoryLimit)) (cgroup) but these bounds may take \(megabytes(plan.bytesAtMost)): the kernel may kill the listener before a bound acts (lower --max-connections or --max-pending)"
        note =
            plan == defaults || warning != nil
            ? nil
            : "note: the memory limit is \(megabytes(memoryLimit)) (cgroup): at most \(plan.connections) connections and \(plan.pending) notifications waiting for their records, \(megabytes(plan.bytesAtMost)) in all (--max-connections, --max-pending)"
    }
}

/// `receive --listen` and the options that go with it.
struct ListenRequest: Equatable {
    var host: String
    var port: Int
    /// Both or neither; neither (and not plaintext) uses the keyring folder's self-signed pair.
    var certificateFile: String?
    var keyFile: String?
    var plaintext: Bool
    var devices: [String]
    var unregistered: [String]
    var topics: [String]
    /// `KEYID=FILE` pairs, in the order given.
    var providerKeys: [ProviderKeyFile]
    var team: String?
    var idleTimeout: Duration
    /// The connection cap and the pending bound, when the operator chose them.
    var maxConnections: Int?
    var maxPending: Int?

    struct ProviderKeyFile: Equatable {
        var keyID: String
        var file: String
    }

    static let options = ["tls-cert", "tls-key", "plaintext", "device", "unregistered", "topic", "provider-key", "team", "idle-timeout", "max-connections", "max-pending"]
}

/// `[HOST:]PORT` (HOST 127.0.0.1 when left out, `[::1]` for IPv6; port 0 picks a free one).
func listenAddress(_ address: String, option: String, command: CommandSpec.Name) throws(UsageError) -> (host: String, port: Int) {
    var host = "127.0.0.1"
    var portText = Substring(address)
    if let colon = address.lastIndex(of: ":") {
        let given = address[..<colon]
        if !given.isEmpty { host = String(given) }
        portText = address[address.index(after: colon)...]
    }
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard let port = Int(portText), (0...65_535).contains(port) else {
        throw UsageError("--\(option) takes [HOST:]PORT, such as 8443, 127.0.0.1:0 or [::1]:8443 (port 0 picks a free one)", command: command)
    }
    return (host, port)
}

/// The certificate to serve: the files given, or the keyring folder's self-signed pair (made
/// on first use), with the line that says which and how to trust it.
func listenerIdentity(certificateFile: String?, keyFile: String?, keysFolder: String) throws -> (identity: ListenerIdentity, note: String?) {
    if let certificateFile, let keyFile {
        return (ListenerIdentity(certificateFile: certificateFile, keyFile: keyFile), nil)
    }
    if mkdir(keysFolder, 0o700) != 0, errno != EEXIST {
        throw CLIFailure(.cannotCreate, "cannot create \(keysFolder) for the TLS certificate: \(String(cString: strerror(errno)))")
    }
    let made: (identity: ListenerIdentity, created: Bool)
    do {
        made = try ListenerIdentity.selfSigned(in: keysFolder)
    } catch {
        throw CLIFailure(.cannotCreate, error.reason)
    }
    let note =
        "\(made.created ? "made a self-signed certificate" : "using the self-signed certificate") \(made.identity.certificateFile) (trust it with: curl --cacert \(made.identity.certificateFile))"
    return (made.identity, note)
}

/// The --listen options, or nil without --listen (when the others are usage errors).
func parseListen(_ parsed: ParsedArguments, spec: CommandSpec) throws(UsageError) -> ListenRequest? {
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }
    guard let address = parsed.value("listen") else {
        if let stray = ListenRequest.options.first(where: { parsed.has($0) || !parsed.all($0).isEmpty }) {
            throw fail("--\(stray) goes with --listen")
        }
        return nil
    }
    let (host, port) = try listenAddress(address, option: "listen", command: spec.name)
    let certificate = parsed.value("tls-cert")
    let key = parsed.value("tls-key")
    if (certificate == nil) != (key == nil) {
        throw fail("--tls-cert and --tls-key go together")
    }
    if parsed.has("plaintext"), certificate != nil {
        throw fail("--plaintext serves without TLS; give it or --tls-cert/--tls-key, not both")
    }
    func tokens(_ option: String) throws(UsageError) -> [String] {
        try CheckedValues.deviceTokens(parsed, option, command: spec.name)
    }
    var providerKeys: [ListenRequest.ProviderKeyFile] = []
    for pair in parsed.all("provider-key") {
        guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex, pair.index(after: equals) != pair.endIndex else {
            throw fail("--provider-key takes KEYID=FILE, such as ABC123DEFG=AuthKey_ABC123DEFG.p8")
        }
        providerKeys.append(.init(keyID: String(pair[..<equals]), file: String(pair[pair.index(after: equals)...])))
    }
    if Set(providerKeys.map(\.keyID)).count != providerKeys.count {
        throw fail("--provider-key names each key id once")
    }
    func count(_ option: String, atMost most: Int) throws(UsageError) -> Int? {
        guard let text = parsed.value(option) else { return nil }
        guard let value = Int(text), (1...most).contains(value) else {
            throw fail("\(parsed.origin(option)) must be a whole number from 1 to \(most)")
        }
        return value
    }
    let maxConnections = try count("max-connections", atMost: 65_536)
    let maxPending = try count("max-pending", atMost: 1_000_000)
    return ListenRequest(
        host: host, port: port, certificateFile: certificate, keyFile: key, plaintext: parsed.has("plaintext"),
        devices: try tokens("device"), unregistered: try tokens("unregistered"), topics: parsed.all("topic"),
        providerKeys: providerKeys, team: try CheckedValues.appleID(parsed, "team", command: spec.name),
        idleTimeout: try duration(parsed, "idle-timeout", in: DurationRange.idleTimeout, example: "30s or 5m", command: spec.name)
            ?? ListenerLimits().idleTimeout,
        maxConnections: maxConnections, maxPending: maxPending)
}
