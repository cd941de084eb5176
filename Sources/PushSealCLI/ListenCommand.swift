#if canImport(Glibc)
import Glibc
#endif
import HTTP2Server
import PushSeal
import SealCrypto

/// Runs `receive --listen`: serves Apple's provider API until SIGINT or SIGTERM, every
/// request answered as APNs would and recorded, every accepted one delivered by `runner`.
///
/// - Parameters:
///   - stopper: where the first signal looks for what to do; set here to a graceful stop
///     (GOAWAY, deliveries in flight finish within their budget).
///   - stopListening: set here to the same stop, for when records cannot be written.
///   - emit: writes one record.
func serveListener(_ listen: ListenRequest, keysFolder: String, runner: ExtensionRunner, console: Console,
                   stopper: Locked<(@Sendable () -> Void)?>, stopListening: Locked<(@Sendable () -> Void)?>,
                   stop: StopRequest,
                   emit: @escaping @Sendable (DeliveryRecord) -> Void) throws {
    var keys: [String: ES256Key] = [:]
    for provider in listen.providerKeys {
        let bytes = try InputFiles.read(provider.file)
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

    var identity: TLSIdentity?
    if let certificate = listen.certificateFile, let key = listen.keyFile {
        identity = TLSIdentity(certificateFile: certificate, keyFile: key)
    } else if !listen.plaintext {
        if mkdir(keysFolder, 0o700) != 0, errno != EEXIST {
            throw CLIFailure(.cannotCreate, "cannot create \(keysFolder) for the TLS certificate: \(String(cString: strerror(errno)))")
        }
        let made: (identity: TLSIdentity, created: Bool)
        do {
            made = try TLSIdentity.selfSigned(in: keysFolder)
        } catch {
            throw CLIFailure(.cannotCreate, error.message)
        }
        identity = made.identity
        console.diagnostic("\(made.created ? "made a self-signed certificate" : "using the self-signed certificate") \(made.identity.certificateFile) (trust it with: curl --cacert \(made.identity.certificateFile))")
    }
    var limits = HTTP2Server.Limits()
    limits.idleTimeout = listen.idleTimeout
    let listener: APNsListener
    do {
        listener = try APNsListener(
            settings: .init(host: listen.host, port: listen.port, tls: identity, rules: rules, limits: limits),
            runner: runner, emit: emit)
    } catch {
        let status: ExitStatus = switch error.code {
        case .address: .unavailable
        case .identity: .noInput
        case .file: .cannotCreate
        case .resources: .ioError
        }
        throw CLIFailure(status, error.message)
    }
    if !tokens.verifiesSignatures {
        console.diagnostic("note: provider tokens are checked for shape and age only; give --provider-key KEYID=FILE (and --team) to verify their signatures")
    }
    let halt: @Sendable () -> Void = { listener.stop() }
    stopper.withLock { $0 = halt }
    stopListening.withLock { $0 = halt }
    listener.start()
    console.diagnostic("listening on \(listener.url)")
    // A signal that came while the listener was being set up still stops it.
    if stop.isRequested { listener.stop() }
    listener.wait()
}
