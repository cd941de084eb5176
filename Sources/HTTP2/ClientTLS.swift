internal import CNGHTTP2
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The client's SSL_CTX: the listener's own TLS profile (`TLSContext.applyProfile`: TLS 1.2 or
/// later, its AEAD suites, no renegotiation or compression), ALPN offering `h2`
/// alone, and the peer's certificate checked against the system's CA store (OpenSSL's
/// default paths, which honour SSL_CERT_FILE and SSL_CERT_DIR) plus a trust file.
final class ClientTLS: @unchecked Sendable {
    // SSL_CTX is reference-counted and safe to share once configured; only SSL_new uses it.
    let context: OpaquePointer

    init(trustFile: String?, identity: TLSClientIdentity? = nil, allowsHTTP1: Bool = false) throws(HTTP2ClientError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTP2ClientError("cannot make a TLS context", underlying: OpenSSLFailure.takeQueued())
        }
        self.context = context
        ERR_clear_error()
        if let failed = TLSContext.applyProfile(context) {
            throw HTTP2ClientError(failed, underlying: OpenSSLFailure.takeQueued())
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        Self.trustSystemStore(context)
        if let trustFile {
            guard SSL_CTX_load_verify_locations(context, trustFile, nil) == 1 else {
                throw HTTP2ClientError("cannot use \(trustFile) as trusted certificates (PEM expected)", underlying: OpenSSLFailure.takeQueued())
            }
        }
        if let identity {
            let shown = identity.withParts { certificate, key, chain -> Bool in
                guard SSL_CTX_use_certificate(context, certificate) == 1, SSL_CTX_use_PrivateKey(context, key) == 1 else { return false }
                // SSL_CTX_add1_chain_cert, a macro: each takes its own reference.
                for link in chain where SSL_CTX_ctrl(context, SSL_CTRL_CHAIN_CERT, 1, UnsafeMutableRawPointer(link)) != 1 { return false }
                return SSL_CTX_check_private_key(context) == 1
            }
            guard shown else {
                throw HTTP2ClientError(
                    "the client certificate and its key do not go together, or OpenSSL refused them", underlying: OpenSSLFailure.takeQueued())
            }
        }
        // h2, and after it http/1.1 when the caller can speak it.
        var protocols: [UInt8] = [2] + Array("h2".utf8)
        if allowsHTTP1 { protocols += [8] + Array("http/1.1".utf8) }
        _ = SSL_CTX_set_alpn_protos(context, protocols, UInt32(protocols.count))
        ERR_clear_error()
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// The system's CA store, as OpenSSL's defaults name it (SSL_CERT_FILE and SSL_CERT_DIR
    /// honoured), read lazily where it can be: the hashed directory (/etc/ssl/certs on
    /// Debian) is consulted for the one issuer a handshake needs, where the bundle file
    /// would be parsed whole, ~140 certificates and 40 ms, on every run of `send`.
    private static func trustSystemStore(_ context: OpaquePointer) {
        let (systemFile, givenFile, directory) = CertificateChecks.trustLocations
        let hashed = isHashed(directory.split(separator: ":").first.map(String.init) ?? directory)
        if hashed { _ = SSL_CTX_load_verify_dir(context, directory) }
        // SSL_CERT_FILE is read unless it is the system's own bundle, which holds what the
        // hashed directory holds (update-ca-certificates writes both from one set).
        if let givenFile, !(hashed && resolved(givenFile) == resolved(systemFile)) {
            _ = SSL_CTX_load_verify_file(context, givenFile)
        } else if givenFile == nil, !hashed {
            // A system without hash links (none made by c_rehash): the bundle, whole.
            _ = SSL_CTX_load_verify_file(context, systemFile)
        }
        ERR_clear_error()
    }

    /// The path with every symbolic link followed; nil when it does not exist.
    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// True when `directory` holds OpenSSL's hash links (`1a2b3c4d.0`), which lazy lookup needs.
    private static func isHashed(_ directory: String) -> Bool {
        guard let listing = opendir(directory) else { return false }
        defer { closedir(listing) }
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name.count == 10, name[8] == UInt8(ascii: "."), name[9] == UInt8(ascii: "0"),
                name[..<8].allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
            {
                return true
            }
        }
        return false
    }

    /// A TLS connection on `descriptor` that names `host` (SNI for a name) and accepts only
    /// a certificate for it (a DNS name, or an IP address when the host is one).
    func connection(on descriptor: Int32, host: String) -> OpaquePointer? {
        ERR_clear_error()
        guard let tls = SSL_new(context) else {
            ERR_clear_error()
            return nil
        }
        SSL_set_fd(tls, descriptor)
        let isAddress = IPAddressText.isAddress(host)
        // SNI for a name; an address is sent none.
        if !isAddress { _ = pushseal_ssl_set_host_name(tls, host) }
        if let parameters = SSL_get0_param(tls) { CertificateChecks.expect(host, isAddress: isAddress, in: parameters) }
        SSL_set_connect_state(tls)
        ERR_clear_error()
        return tls
    }
}
