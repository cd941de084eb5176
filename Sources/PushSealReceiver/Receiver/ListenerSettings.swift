import HTTP2
import PushSeal
import SealCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The listener's own words for what the HTTP/2 engine underneath needs: the caller says
/// which certificate, which limits, and gets `ListenerError` back, never the engine's types.

/// A certificate chain and its private key, as PEM files, for `https://`.
package struct ListenerIdentity: Sendable, Equatable {
    package let certificateFile: String
    package let keyFile: String

    package init(certificateFile: String, keyFile: String) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    /// The names a self-signed certificate is made for: a test endpoint on this machine.
    package static let selfSignedNames = "DNS:localhost,IP:127.0.0.1,IP:::1"

    /// The self-signed identity in `folder` (`tls-cert.pem`, `tls-key.pem`), made on first
    /// use (a P-256 key, valid for a year, for `localhost`, `127.0.0.1` and `::1`) and
    /// made again once expired. Both files are written with mode 0600, the key never
    /// leaving memory otherwise.
    package static func selfSigned(in folder: String) throws(ListenerError) -> (identity: ListenerIdentity, created: Bool) {
        let identity = ListenerIdentity(certificateFile: folder + "/tls-cert.pem", keyFile: folder + "/tls-key.pem")
        if access(identity.certificateFile, R_OK) == 0, access(identity.keyFile, R_OK) == 0,
            SelfSignedCertificate.isCurrent(file: identity.certificateFile)
        {
            return (identity, false)
        }
        var made: (certificate: [UInt8], key: [UInt8])
        do {
            made = try SelfSignedCertificate.make(names: selfSignedNames, commonName: "pushseal receive --listen")
        } catch {
            throw ListenerError(.resources, error.reason, underlying: error)
        }
        defer { SecureMemory.wipe(&made.key) }
        do {
            try FileIO.replace(identity.keyFile, with: made.key)
            try FileIO.replace(identity.certificateFile, with: made.certificate)
        } catch {
            throw ListenerError(.file, error.message, path: folder, underlying: error)
        }
        return (identity, true)
    }

    var engine: TLSIdentity { TLSIdentity(certificateFile: certificateFile, keyFile: keyFile) }
}

/// How much the listener takes on, and for how long; the defaults suit one machine's APNs
/// stand-in. Past each bound the client gets an answer (431, REFUSED_STREAM, GOAWAY), never
/// silence.
package struct ListenerLimits: Sendable {
    var engine = HTTP2Server.Limits()

    package init() {}

    /// A connection with no request open for this long is closed (GOAWAY).
    package var idleTimeout: Duration {
        get { engine.idleTimeout }
        set { engine.idleTimeout = newValue }
    }
    /// A request whose headers or body make no progress for this long is reset.
    package var requestTimeout: Duration {
        get { engine.requestTimeout }
        set { engine.requestTimeout = newValue }
    }
    /// A TLS handshake must end within this.
    package var handshakeTimeout: Duration {
        get { engine.handshakeTimeout }
        set { engine.handshakeTimeout = newValue }
    }
    /// Requests in flight on one connection (SETTINGS_MAX_CONCURRENT_STREAMS).
    package var concurrentStreams: Int {
        get { engine.concurrentStreams }
        set { engine.concurrentStreams = newValue }
    }
    /// Connections open at once; the longest-idle one makes room for a new one at the cap.
    package var connections: Int {
        get { engine.connections }
        set { engine.connections = newValue }
    }
    /// Unfinished request bytes held at once, across every connection; one connection holds
    /// at most 1 MiB of them (or all, when the whole is less).
    package var requestBytes: Int {
        get { engine.bufferBytes }
        set {
            engine.bufferBytes = newValue
            engine.connectionBufferBytes = min(1 << 20, newValue)
        }
    }
    /// On stop, connections still busy after this are closed regardless.
    package var drainTimeout: Duration {
        get { engine.drainTimeout }
        set { engine.drainTimeout = newValue }
    }
}

/// Why a listener could not start; `errno` keeps the system's code when it had one.
package typealias ListenerError = PushSealError<ListenerFailure>

/// The kinds of `ListenerError`.
package enum ListenerFailure: Hashable, Sendable {
    /// The address cannot be listened on (taken, not local, not an address).
    case address
    /// The certificate or key cannot be read, or they do not match.
    case identity
    /// A file could not be written (the self-signed pair).
    case file
    /// The system or a library ran out of something.
    case resources
}

extension PushSealError where Kind == ListenerFailure {
    init(_ engine: HTTP2ServerError) {
        let code: ListenerFailure =
            switch engine.code {
            case .address: .address
            case .identity: .identity
            case .resources: .resources
            }
        self.init(code, engine.message, underlying: engine)
    }
}
