#if canImport(Glibc)
import Glibc
#endif
internal import CNGHTTP2

/// The client's SSL_CTX: TLS 1.2 or later with the server's AEAD suites, ALPN offering `h2`
/// alone, and the peer's certificate checked against the system's CA store (OpenSSL's
/// default paths, which honour SSL_CERT_FILE and SSL_CERT_DIR) plus a trust file.
final class ClientTLS: @unchecked Sendable {
    // SSL_CTX is reference-counted and safe to share once configured; only SSL_new uses it.
    let context: OpaquePointer

    init(trustFile: String?) throws(HTTP2ClientError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw HTTP2ClientError("cannot make a TLS context") }
        self.context = context
        ERR_clear_error()
        _ = pushseal_ssl_ctx_set_min_tls12(context)
        _ = pushseal_ssl_ctx_set_write_modes(context)
        _ = SSL_CTX_set_cipher_list(context, TLSContext.tls12Ciphers)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        // The system's store; a machine without one still trusts the trust file.
        _ = SSL_CTX_set_default_verify_paths(context)
        if let trustFile {
            guard SSL_CTX_load_verify_locations(context, trustFile, nil) == 1 else {
                ERR_clear_error()
                throw HTTP2ClientError("cannot use \(trustFile) as trusted certificates (PEM expected)")
            }
        }
        let h2: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        _ = SSL_CTX_set_alpn_protos(context, h2, UInt32(h2.count))
        ERR_clear_error()
    }

    deinit {
        SSL_CTX_free(context)
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
        let parameters = SSL_get0_param(tls)
        if IPAddressText.isAddress(host) {
            _ = X509_VERIFY_PARAM_set1_ip_asc(parameters, host)
        } else {
            _ = pushseal_ssl_set_host_name(tls, host)
            _ = X509_VERIFY_PARAM_set1_host(parameters, host, 0)
        }
        SSL_set_connect_state(tls)
        ERR_clear_error()
        return tls
    }
}
