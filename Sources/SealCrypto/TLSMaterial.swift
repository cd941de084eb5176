internal import COpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key and certificate work TLS needs, on libcrypto, so that the HTTP/2 module keeps
/// to libssl's handshakes and libnghttp2: a private key read from PEM, a self-signed
/// certificate made for a test endpoint, and the certificates a trust file holds.

/// A private key read from an unencrypted PEM file, for a TLS server's identity. Owns one
/// reference to OpenSSL's key; `withKey` lends it to libssl (`SSL_CTX_use_PrivateKey`
/// takes its own reference).
package final class TLSPrivateKey: @unchecked Sendable {
    // An EVP_PKEY is read-only once loaded; OpenSSL allows sharing it between threads.
    private let key: OpaquePointer

    /// Reads `file`, saying what is wrong when it cannot: unreadable, encrypted (never
    /// prompted for: a service has nobody to answer), or not a key.
    package init(file: String) throws(SealCryptoError) {
        var bytes: [UInt8]
        do {
            bytes = try Self.readFile(file)
        } catch {
            throw SealCryptoError(.invalidKey, "cannot read the private key \(file): \(error.reason)", underlying: error.underlying)
        }
        defer { SecureMemory.wipe(&bytes) }
        // Searched as bytes: a String made of the file would be a copy of the key that
        // nothing wipes.
        if SecureMemory.contains(bytes, "-----BEGIN ENCRYPTED PRIVATE KEY-----") || SecureMemory.contains(bytes, "Proc-Type: 4,ENCRYPTED") {
            throw SealCryptoError(.invalidKey, "the private key \(file) is encrypted; give it unencrypted (openssl pkey -in \(file) -out plain.pem), kept with mode 0600")
        }
        ERR_clear_error()
        let key = bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            // A callback that gives no passphrase: OpenSSL's default would prompt on a terminal.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let key else {
            throw SealCryptoError.openSSL(.invalidKey, "cannot read the private key \(file) (an unencrypted PEM key expected)")
        }
        ERR_clear_error()
        self.key = key
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Lends OpenSSL's `EVP_PKEY *` for the length of `body`.
    package func withKey<Result>(_ body: (OpaquePointer) throws -> Result) rethrows -> Result {
        try body(key)
    }

    /// The failed call's `errno`, kept beneath the system's words.
    private static func systemFailure() -> SealCryptoError {
        let cause = SystemCallFailure(errno: errno)
        return SealCryptoError(.invalidKey, cause.description, underlying: cause)
    }

    /// The file (at most 1 MiB), read into one buffer sized once from its length and never
    /// grown: growing an array copies it, and the old storage would be freed unwiped. A
    /// failed read wipes what was read; the caller wipes the rest.
    private static func readFile(_ file: String) throws(SealCryptoError) -> [UInt8] {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Self.systemFailure() }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Self.systemFailure() }
        var bytes = [UInt8](repeating: 0, count: min(max(Int(status.st_size), 0), 1 << 20))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                let failure = Self.systemFailure()
                SecureMemory.wipe(&bytes)
                throw failure
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return bytes
    }
}

/// A self-signed certificate for a test endpoint on this machine: a P-256 key, valid for a
/// year, a trust anchor of its own (`curl --cacert`, Python's `cafile`).
package enum SelfSignedCertificate {
    /// A new certificate for `names` (subjectAltName syntax: `DNS:localhost,IP:127.0.0.1`)
    /// and its key, both as PEM. The key's bytes are the caller's to write and wipe.
    package static func make(names: String, commonName: String) throws(SealCryptoError) -> (certificate: [UInt8], key: [UInt8]) {
        func fail(_ step: String) -> SealCryptoError {
            SealCryptoError.openSSL(.libraryFailure, "cannot make a self-signed certificate (\(step))")
        }
        guard let keyContext = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw fail("key context") }
        defer { EVP_PKEY_CTX_free(keyContext) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(keyContext) == 1,
            EVP_PKEY_CTX_set_group_name(keyContext, "P-256") == 1,
            EVP_PKEY_keygen(keyContext, &key) == 1, let key
        else { throw fail("key") }
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
            X509_set_pubkey(certificate, key) == 1
        else { throw fail("fields") }
        let name = X509_get_subject_name(certificate)
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1,
            X509_set_issuer_name(certificate, name) == 1
        else { throw fail("name") }
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, certificate, certificate, nil, nil, 0)
        for (nid, value) in [
            (NID_basic_constraints, "critical,CA:TRUE"),
            (NID_key_usage, "critical,digitalSignature,keyCertSign"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_key_identifier, "hash"),
            (NID_authority_key_identifier, "keyid:always"),
            (NID_subject_alt_name, names)
        ] {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw fail("extension \(nid)") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { throw fail("extension \(nid)") }
        }
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw fail("signature") }
        let certificatePEM = try pemText { bio in PEM_write_bio_X509(bio, certificate) }
        let keyPEM = try pemText { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
        return (certificatePEM, keyPEM)
    }

    /// True when `file` holds a PEM certificate that is still valid a day from now (a
    /// long test run must not see it expire halfway).
    package static func isCurrent(file: String) -> Bool {
        guard let bio = BIO_new_file(file, "r") else {
            ERR_clear_error()
            return false
        }
        defer { BIO_free(bio) }
        guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else {
            ERR_clear_error()
            return false
        }
        defer { X509_free(certificate) }
        var soon = time(nil) + 86_400
        return X509_cmp_time(X509_get0_notAfter(certificate), &soon) > 0
    }

}

/// What `write` puts in a memory BIO, as bytes: PEM of a certificate or key. The buffer is
/// cleansed before it is freed; the copy is the caller's to wipe.
func pemText(_ write: (OpaquePointer) -> Int32) throws(SealCryptoError) -> [UInt8] {
    guard let bio = BIO_new(BIO_s_mem()) else { throw SealCryptoError.openSSL(.libraryFailure, "cannot make a memory buffer") }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { throw SealCryptoError.openSSL(.libraryFailure, "cannot write PEM") }
    var data: UnsafeMutablePointer<CChar>?
    let length = pushseal_bio_mem_data(bio, &data)
    guard length > 0, let data else { throw SealCryptoError.openSSL(.libraryFailure, "cannot write PEM") }
    defer { pushseal_cleanse(data, length) }
    return Array(UnsafeRawBufferPointer(start: data, count: length))
}

/// Certificates a client is told to trust (`--cacert FILE`), checked before any connection
/// so that a file that holds none is blamed on the file, not on the server.
package enum TrustedCertificates {
    /// How many PEM certificates `pem` holds, read as OpenSSL will read them.
    package static func count(pem: [UInt8]) -> Int {
        ERR_clear_error()
        defer { ERR_clear_error() }
        return pem.withUnsafeBytes { bytes -> Int in
            guard let base = bytes.baseAddress, let bio = BIO_new_mem_buf(base, Int32(clamping: bytes.count)) else { return 0 }
            defer { BIO_free(bio) }
            var count = 0
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                X509_free(certificate)
                count += 1
            }
            return count
        }
    }
}
