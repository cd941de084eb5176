import HTTP2
import PushSeal
import SealCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the listener needs of the HTTP/2 engine underneath: which certificate (the engine's
/// own `TLSIdentity`, under the listener's name), which limits, and `ListenerError` back.

/// A certificate chain and its private key, as PEM files, for `https://`.
package typealias ListenerIdentity = TLSIdentity

extension TLSIdentity {
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

}

/// How much the listener takes on, and for how long: the HTTP/2 server's own limits, under
/// the listener's name; the defaults suit one machine's APNs stand-in. Past each bound the
/// client gets an answer (431, REFUSED_STREAM, GOAWAY), never silence.
package typealias ListenerLimits = HTTP2Server.Limits

extension HTTP2Server.Limits {
    /// Unfinished request bytes held at once, across every connection; one connection holds
    /// at most 1 MiB of them (or all, when the whole is less).
    package var requestBytes: Int {
        get { bufferBytes }
        set {
            bufferBytes = newValue
            connectionBufferBytes = min(1 << 20, newValue)
        }
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
