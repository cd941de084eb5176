#if canImport(Glibc)
import Glibc
#endif
internal import CNGHTTP2

/// A certificate chain and its private key, as PEM files, for serving HTTPS.
public struct TLSIdentity: Sendable, Equatable {
    public let certificateFile: String
    public let keyFile: String

    public init(certificateFile: String, keyFile: String) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    /// The names a self-signed certificate is made for: a test endpoint on this machine.
    public static let selfSignedNames = "DNS:localhost,IP:127.0.0.1,IP:::1"

    /// The self-signed identity in `folder` (`tls-cert.pem`, `tls-key.pem`), made on first
    /// use (a P-256 key, valid for a year, for `localhost`, `127.0.0.1` and `::1`) and
    /// made again once expired. Both files are written with mode 0600, the key never
    /// leaving memory otherwise.
    public static func selfSigned(in folder: String) throws(HTTP2ServerError) -> (identity: TLSIdentity, created: Bool) {
        let identity = TLSIdentity(certificateFile: folder + "/tls-cert.pem", keyFile: folder + "/tls-key.pem")
        if access(identity.certificateFile, R_OK) == 0, access(identity.keyFile, R_OK) == 0,
           (try? SelfSignedCertificate.isCurrent(identity.certificateFile)) == true {
            return (identity, false)
        }
        let made = try SelfSignedCertificate.make(names: selfSignedNames)
        try SelfSignedCertificate.write(made.key, to: identity.keyFile)
        try SelfSignedCertificate.write(made.certificate, to: identity.certificateFile)
        return (identity, true)
    }
}

/// Makes and checks the self-signed certificate, on libcrypto's X509 API.
enum SelfSignedCertificate {
    static func make(names: String) throws(HTTP2ServerError) -> (certificate: [UInt8], key: [UInt8]) {
        func fail(_ step: String) -> HTTP2ServerError {
            ERR_clear_error()
            return HTTP2ServerError(.file, "cannot make a self-signed certificate (\(step))")
        }
        guard let keyContext = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw fail("key context") }
        defer { EVP_PKEY_CTX_free(keyContext) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(keyContext) == 1,
              EVP_PKEY_CTX_set_group_name(keyContext, "P-256") == 1,
              EVP_PKEY_keygen(keyContext, &key) == 1, let key else { throw fail("key") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw fail("certificate") }
        defer { X509_free(certificate) }
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { throw fail("serial") }
        serial[0] &= 0x7F
        guard let serialNumber = BN_bin2bn(serial, Int32(serial.count), nil) else { throw fail("serial") }
        defer { BN_free(serialNumber) }
        guard pushseal_x509_set_version3(certificate) == 1,
              BN_to_ASN1_INTEGER(serialNumber, X509_get_serialNumber(certificate)) != nil,
              X509_gmtime_adj(X509_getm_notBefore(certificate), -3_600) != nil,
              X509_gmtime_adj(X509_getm_notAfter(certificate), 365 * 86_400) != nil,
              X509_set_pubkey(certificate, key) == 1 else { throw fail("fields") }
        let name = X509_get_subject_name(certificate)
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "pushseal receive --listen", -1, -1, 0) == 1,
              X509_set_issuer_name(certificate, name) == 1 else { throw fail("name") }
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, certificate, certificate, nil, nil, 0)
        // A trust anchor of its own (curl --cacert, Python's cafile), for this machine only.
        for (nid, value) in [
            (NID_basic_constraints, "critical,CA:TRUE"),
            (NID_key_usage, "critical,digitalSignature,keyCertSign"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_key_identifier, "hash"),
            (NID_authority_key_identifier, "keyid:always"),
            (NID_subject_alt_name, names),
        ] {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw fail("extension \(nid)") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { throw fail("extension \(nid)") }
        }
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw fail("signature") }
        let certificatePEM = try pem { bio in PEM_write_bio_X509(bio, certificate) }
        let keyPEM = try pem { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
        return (certificatePEM, keyPEM)
    }

    /// True when the certificate file can be read and has not expired.
    static func isCurrent(_ path: String) throws(HTTP2ServerError) -> Bool {
        guard let bio = BIO_new_file(path, "r") else { return false }
        defer { BIO_free(bio) }
        guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else {
            ERR_clear_error()
            return false
        }
        defer { X509_free(certificate) }
        // A day's margin, so a long test run does not see it expire halfway.
        var soon = time(nil) + 86_400
        return X509_cmp_time(X509_get0_notAfter(certificate), &soon) > 0
    }

    static func write(_ bytes: [UInt8], to path: String) throws(HTTP2ServerError) {
        let temporary = path + ".tmp"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw HTTP2ServerError(.file, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                throw HTTP2ServerError(.file, "cannot write \(path): \(reason)")
            }
            written += result
        }
        guard fsync(descriptor) == 0, close(descriptor) == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw HTTP2ServerError(.file, "cannot write \(path): \(reason)")
        }
    }

    private static func pem(_ write: (OpaquePointer) -> Int32) throws(HTTP2ServerError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw HTTP2ServerError(.resources, "cannot make a memory buffer") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw HTTP2ServerError(.resources, "cannot write PEM") }
        var data: UnsafeMutablePointer<CChar>?
        let length = pushseal_bio_mem_data(bio, &data)
        guard length > 0, let data else { throw HTTP2ServerError(.resources, "cannot write PEM") }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }
}
