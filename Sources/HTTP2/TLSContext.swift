internal import CNGHTTP2
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The server's SSL_CTX: TLS 1.2 or later with AEAD suites only (Mozilla's "intermediate"
/// profile), the identity's certificate and key, and ALPN that picks `h2`. A client that offers no ALPN at all (some APNs libraries) is served
/// HTTP/2 all the same, as APNs does.
final class TLSContext: @unchecked Sendable {
    // SSL_CTX is reference-counted and safe to share once configured; only SSL_new uses it.
    let context: OpaquePointer

    init(identity: TLSIdentity) throws(HTTP2ServerError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw HTTP2ServerError(.resources, "cannot make a TLS context", underlying: OpenSSLFailure.takeQueued())
        }
        self.context = context
        func fail(_ message: String) -> HTTP2ServerError {
            HTTP2ServerError(.identity, message, underlying: OpenSSLFailure.takeQueued())
        }
        if let failed = Self.applyProfile(context) { throw fail(failed) }
        guard access(identity.certificateFile, R_OK) == 0 else {
            let cause = errno
            throw HTTP2ServerError(.identity, "cannot read the certificate \(identity.certificateFile): \(String(cString: strerror(cause)))", errno: cause)
        }
        guard SSL_CTX_use_certificate_chain_file(context, identity.certificateFile) == 1 else {
            throw fail("cannot read the certificate \(identity.certificateFile) (PEM expected)")
        }
        let key: TLSPrivateKey
        do {
            key = try TLSPrivateKey(file: identity.keyFile)
        } catch {
            throw HTTP2ServerError(.identity, error.reason, underlying: error)
        }
        ERR_clear_error()
        guard key.withKey({ SSL_CTX_use_PrivateKey(context, $0) }) == 1, SSL_CTX_check_private_key(context) == 1 else {
            throw fail("the key \(identity.keyFile) does not match the certificate \(identity.certificateFile)")
        }
        SSL_CTX_set_alpn_select_cb(
            context,
            { _, out, outLength, offered, offeredLength, _ in
                // h2 when offered; a client offering only other protocols gets no ALPN answer
                // and then fails at the HTTP/2 preface, on its own connection.
                var selected: UnsafeMutablePointer<UInt8>?
                let rc = nghttp2_select_next_protocol(&selected, outLength, offered, offeredLength)
                guard rc == 1, let selected else { return SSL_TLSEXT_ERR_NOACK }
                out?.pointee = UnsafePointer(selected)
                return SSL_TLSEXT_ERR_OK
            }, nil)
    }

    /// The one TLS profile of both sides, `send`'s client and the listener: TLS 1.2 or later,
    /// no renegotiation, no compression, and for TLS 1.2 the AEAD ECDHE suites alone (TLS
    /// 1.3's are all AEAD already; no CBC, no SHA-1 MACs, no static RSA key exchange). Each
    /// setting is checked: a context that cannot have one is not used. Returns what failed.
    static func applyProfile(_ context: OpaquePointer) -> String? {
        guard pushseal_ssl_ctx_set_min_tls12(context) == 1 else { return "cannot require TLS 1.2" }
        let options = pushseal_ssl_ctx_set_options(context)
        guard options & Int(pushseal_ssl_profile_options()) == Int(pushseal_ssl_profile_options()) else {
            return "cannot turn off renegotiation and compression"
        }
        _ = pushseal_ssl_ctx_set_write_modes(context)
        guard SSL_CTX_set_cipher_list(context, tls12Ciphers) == 1 else { return "cannot set the TLS 1.2 cipher suites" }
        return nil
    }

    deinit {
        SSL_CTX_free(context)
    }

    static let tls12Ciphers =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
}

extension TLSContext {
    /// A TLS connection that accepts a client on `descriptor`, or nil when OpenSSL cannot
    /// make one (out of memory).
    func connection(on descriptor: Int32) -> OpaquePointer? {
        ERR_clear_error()
        guard let tls = SSL_new(context) else {
            ERR_clear_error()
            return nil
        }
        SSL_set_fd(tls, descriptor)
        SSL_set_accept_state(tls)
        return tls
    }
}
