import Dispatch
import Locking
import PushSeal
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Seals alerts under a keyring's key and sends them to APNs: what `pushseal send` does, for
/// a Swift server (Vapor, Hummingbird, a worker). One engine for both: the same sealer, the
/// same retries and token cache, the same result for every device.
///
/// ```swift
/// let sender = try NotificationSender(.init(
///     topic: "com.example.app",
///     credentials: .providerToken(keyFile: "AuthKey_ABC123DEFG.p8", keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
///     keysFolder: "Keys"))
/// let result = try await sender.send(AlertRequest(title: "Deploy done", body: "main is live"), to: deviceToken)
/// await sender.shutdown()
/// ```
///
/// - Each notification is sealed as `encrypt` seals it (the keyring's primary key, or the
///   recipient key named), and the keyring is read again when its file changes, so a
///   rotation takes effect without a new sender.
/// - Results are values, one per device, never thrown: a refusal (`BadDeviceToken`,
///   `Unregistered`) and a failure after retries are outcomes. What throws is what no device
///   could get past: a bad alert, a device token that is not one, a set-up that cannot work.
/// - One HTTP/2 client and its thread serve every call; `shutdown()` waits for the answers
///   in flight, then closes it.
public final class NotificationSender: Sendable {
    /// How the sender proves to APNs who it is.
    public enum Credentials: Sendable {
        /// A provider token signed with Apple's `.p8` key; kept beside the keyring and made
        /// again as APNs requires (at most every 20 minutes, at least every hour).
        case providerToken(keyFile: String, keyID: String, teamID: String)
        /// The connection's client certificate: a PEM file of certificate and key, or PKCS#12.
        case clientCertificate(file: String, passphrase: String?)
        /// None: a server that asks for no credential (APNs asks for one of the two above,
        /// and so does `pushseal receive --listen`, which checks a token's shape at least).
        case none
    }

    /// Where and how to send.
    public struct Configuration: Sendable {
        public var topic: String
        public var credentials: Credentials
        /// The keyring folder whose key seals the alerts (`pushseal keys init` makes one).
        public var keysFolder: String
        /// A recipient key's id to seal to (ps2) instead of the primary key.
        public var recipient: String?
        /// `NotificationSender.production`, `.development`, or any server that speaks APNs'
        /// provider API (`http://` for HTTP/2 without TLS).
        public var endpoint: String
        /// What the device shows when the extension cannot open the seal.
        public var fallback: FallbackAlert
        public var pushType: APNs.PushType
        public var priority: APNs.Priority?
        /// A PEM file of certificates trusted besides the system's.
        public var trustFile: String?
        /// An `http://HOST:PORT` proxy; nil to take `https_proxy` and `no_proxy` from the
        /// environment; empty for none.
        public var proxy: String?
        public var connections: Int
        /// How long a notification waits for its answer once sent.
        public var timeout: Duration
        /// No retry starts later than this after a notification's first attempt.
        public var retryFor: Duration
        /// `pushseal send`'s further choices: `--retries`, `--concurrency`, `--expiration`,
        /// `--collapse-id` (the public API keeps APNs' defaults).
        package var retries: Int?
        package var streams = 1_000
        package var expiration: String?
        package var collapseID: String?

        public init(
            topic: String, credentials: Credentials, keysFolder: String = "Keys", endpoint: String = NotificationSender.production
        ) {
            self.topic = topic
            self.credentials = credentials
            self.keysFolder = keysFolder
            self.endpoint = endpoint
            fallback = .standard
            pushType = .alert
            connections = 1
            timeout = SendConnection.defaultTimeout
            retryFor = SendRetries.defaultRetryFor
        }
    }

    /// What became of one device's notification.
    public typealias Result = SendResult<DeviceToken>

    /// APNs in production.
    public static let production = "https://api.push.apple.com"
    /// APNs' sandbox, for development builds of an app.
    public static let development = "https://api.sandbox.push.apple.com"

    private let configuration: Configuration
    private let engine: Sender<APNsProvider>
    private let keyring: KeyringStore
    /// The sealer, and the keyring file it was made from (its change time and inode); nil
    /// until the first alert is sealed when the sender was made for ready payloads.
    private let sealer: Locked<(sealer: PayloadSealer, file: FileStamp)?>
    /// Who gets each result: the engine hands them out in the order notifications were added,
    /// and `feeder` adds them in the order their receivers were queued here. Unused when the
    /// sender was made with its own `emit` (`pushseal send`'s).
    private let receivers = Locked(ReceiverQueue())
    private let resultsGoToEmit: Bool
    /// Adds notifications one at a time, off the caller's task: the engine waits there while
    /// its window is full, never on Swift's cooperative threads.
    private let feeder = DispatchQueue(label: "pushseal.notification-sender")

    /// A sender for `configuration`: its keyring is read, its credential loaded and its
    /// endpoint checked now, so a set-up that cannot work throws here, before any send.
    public convenience init(_ configuration: Configuration) throws {
        let keyring = KeyringStore(folder: configuration.keysFolder)
        let stamp = FileStamp(path: keyring.path)
        let sealer = try Self.sealer(configuration, keyring: try keyring.load())
        try self.init(
            configuration, connection: try configuration.connection(clientIdentity: try Self.identity(configuration.credentials)),
            tokens: try Self.tokens(configuration), progress: SendProgress(), emit: nil)
        self.sealer.withLock { $0 = (sealer, stamp) }
    }

    /// `pushseal send`'s and `doctor send`'s sender: the same engine, provider and rules,
    /// with the credential the command read (its own words for a file it cannot use), the
    /// connection it checked, and every result handed to `emit` in the order notifications
    /// were added (`add(_:to:expiration:)`, from one thread).
    package init(
        _ configuration: Configuration, connection: SendConnection, tokens: ProviderTokenCache?, progress: SendProgress,
        emit: (@Sendable (Result) -> Void)?
    ) throws(SendError) {
        self.configuration = configuration
        keyring = KeyringStore(folder: configuration.keysFolder)
        sealer = Locked(nil)
        resultsGoToEmit = emit != nil
        let provider = APNsProvider(
            settings: .init(
                origin: connection.origin, topic: configuration.topic, pushType: configuration.pushType,
                priority: configuration.priority, expiration: configuration.expiration, collapseID: configuration.collapseID),
            tokens: tokens)
        let receivers = receivers
        engine = try Sender(
            settings: .init(retries: configuration.retries, retryFor: configuration.retryFor), provider: provider,
            connection: connection, progress: progress,
            emit: emit ?? { result in receivers.withLock { $0.next() }(result) })
    }

    /// Seals `alert` and sends it to `device` (a device token in hex); its result once APNs
    /// answers or the retries end.
    public func send(_ alert: AlertRequest, to device: String) async throws -> Result {
        precondition(!resultsGoToEmit, "this sender hands its results to its emit closure")
        let (token, payload) = try prepare(alert, to: [device])
        return await withCheckedContinuation { continuation in
            add(payload, to: token[0]) { continuation.resume(returning: $0) }
        }
    }

    /// Seals `alert` once and sends it to every device in `devices`; one result per device, in
    /// their order, as each comes. Throws before sending anything when the alert or a device
    /// token is not one.
    public func send(_ alert: AlertRequest, to devices: [String]) throws -> AsyncStream<Result> {
        precondition(!resultsGoToEmit, "this sender hands its results to its emit closure")
        let (tokens, payload) = try prepare(alert, to: devices)
        let (stream, continuation) = AsyncStream.makeStream(of: Result.self, bufferingPolicy: .unbounded)
        guard !tokens.isEmpty else {
            continuation.finish()
            return stream
        }
        let left = Locked(tokens.count)
        for token in tokens {
            add(payload, to: token) { result in
                continuation.yield(result)
                if left.withLock({ count -> Int in
                    count -= 1
                    return count
                }) == 0 {
                    continuation.finish()
                }
            }
        }
        return stream
    }

    /// Waits for every result still to come, then closes the connections. The sender takes
    /// nothing more after it.
    public func shutdown() async {
        let engine = engine
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            feeder.async {
                engine.finish()
                done.resume()
            }
        }
    }

    // MARK: - Ready payloads (pushseal send)

    /// Sends a payload sealed already (`send`'s alert, a `--batch` line's, or a ready
    /// payload from stdin) to `device`, on the caller's thread: waits while the window of
    /// results is full. Throws when no credential can be made for it; it still gets its result.
    /// - Parameter expiration: this one's `apns-expiration`, instead of the configuration's.
    package func add(_ payload: [UInt8], to device: DeviceToken, expiration: String? = nil) throws {
        try engine.add(device, payload: payload, expiration: expiration)
    }

    /// Why the whole send stopped (an endpoint that cannot be reached or trusted), if it did.
    package var failure: SendError? { engine.failure }

    /// No more retries, and what is not on the wire is not sent (a first SIGINT).
    package func stopRetrying() { engine.stopRetrying() }

    /// Waits for every result still to come, then closes the connections (the caller's
    /// thread; `shutdown()` is its async form).
    package func finish() { engine.finish() }

    // MARK: - Sealing

    /// The device tokens checked and the payload sealed, or why not.
    private func prepare(_ alert: AlertRequest, to devices: [String]) throws -> ([DeviceToken], [UInt8]) {
        let tokens = try devices.map { device throws(SendError) -> DeviceToken in
            guard let token = DeviceToken(device.lowercased()) else {
                throw SendError(.setup, "'\(device.prefix(80))' is not a device token (64 to 200 hex digits)")
            }
            return token
        }
        let now = Timestamp.now()
        let sealed = try alert.alert(now: now)
        return (tokens, try currentSealer().payload(for: sealed, visible: alert.visible))
    }

    /// The sealer for the keyring as it is on disk: made again when the file changed.
    private func currentSealer() throws -> PayloadSealer {
        let stamp = FileStamp(path: keyring.path)
        if let held = sealer.withLock({ $0?.file == stamp ? $0?.sealer : nil }) { return held }
        let made = try Self.sealer(configuration, keyring: try keyring.load())
        sealer.withLock { $0 = (made, stamp) }
        return made
    }

    private static func sealer(_ configuration: Configuration, keyring: Keyring) throws -> PayloadSealer {
        try PayloadSealer(
            keyring: keyring, to: configuration.recipient, fallback: configuration.fallback,
            byteLimit: configuration.pushType.payloadByteLimit)
    }

    private func add(_ payload: [UInt8], to device: DeviceToken, receiver: @escaping @Sendable (Result) -> Void) {
        let (engine, receivers) = (engine, receivers)
        feeder.async {
            receivers.withLock { $0.append(receiver) }
            // A token that cannot be made still gives this device its result (the engine
            // reports it before throwing), so the throw itself says nothing more.
            try? engine.add(device, payload: payload)
        }
    }

    // MARK: - Credentials

    private static func tokens(_ configuration: Configuration) throws -> ProviderTokenCache? {
        guard case .providerToken(let file, let keyID, let teamID) = configuration.credentials else { return nil }
        var bytes = try FileIO.readFile(file, bound: .pem)
        defer { SecureMemory.wipe(&bytes) }
        let key = try ES256Key(pem: bytes)
        guard key.canSign else { throw SendError(.token, "\(file) holds a public key; give the .p8 file Apple made") }
        return ProviderTokenCache(folder: configuration.keysFolder, key: key, keyID: keyID, teamID: teamID)
    }

    private static func identity(_ credentials: Credentials) throws -> TLSClientIdentity? {
        guard case .clientCertificate(let file, let passphrase) = credentials else { return nil }
        var bytes = try FileIO.readFile(file, bound: .pem)
        defer { SecureMemory.wipe(&bytes) }
        return try TLSClientIdentity(bytes: bytes, passphrase: passphrase.map { Array($0.utf8) })
    }
}

extension NotificationSender.Configuration {
    /// The HTTP/2 connection these settings ask for: the endpoint and proxy checked.
    package func connection(clientIdentity: TLSClientIdentity?) throws(SendError) -> SendConnection {
        try SendConnection(
            endpoint: SendEndpoint(checking: endpoint), proxy: proxy, trustFile: trustFile, connections: connections,
            streams: streams, timeout: timeout, clientIdentity: clientIdentity)
    }
}

/// The receivers of results to come, in the order their notifications were added.
private struct ReceiverQueue {
    private var waiting: [@Sendable (NotificationSender.Result) -> Void] = []
    private var head = 0

    mutating func append(_ receiver: @escaping @Sendable (NotificationSender.Result) -> Void) {
        waiting.append(receiver)
    }

    mutating func next() -> @Sendable (NotificationSender.Result) -> Void {
        defer {
            head += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            }
        }
        return waiting[head]
    }
}

/// A file as `stat` sees it, to tell when it was replaced or changed.
private struct FileStamp: Equatable {
    var inode: UInt64 = 0
    var seconds = 0
    var nanoseconds = 0

    init(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        inode = UInt64(info.st_ino)
        seconds = info.st_ctim.tv_sec
        nanoseconds = info.st_ctim.tv_nsec
    }
}
