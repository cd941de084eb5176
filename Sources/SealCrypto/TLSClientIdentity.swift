internal import COpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TLS client certificate and its private key, as APNs' certificate-based provider
/// authentication uses them: a PEM file holding the certificate (and any chain) and its key,
/// or a PKCS#12 (`.p12`) file as Keychain Access exports it. A passphrase is taken as bytes,
/// from wherever the caller read it (a file, the environment), never prompted for. Owns one
/// reference to each OpenSSL object and lends them to libssl, which takes its own.
package final class TLSClientIdentity: @unchecked Sendable {
    // X509 and EVP_PKEY are read-only once loaded; OpenSSL allows sharing them between threads.
    private let certificate: OpaquePointer
    private let key: OpaquePointer
    private let chain: [OpaquePointer]

    /// Reads `bytes`: PEM when they hold `-----BEGIN`, PKCS#12 otherwise.
    package init(bytes: [UInt8], passphrase: [UInt8]?) throws(SealCryptoError) {
        ERR_clear_error()
        defer { ERR_clear_error() }
        let isPEM = bytes.count > 10 && SecureMemory.contains(bytes.prefix(4096), "-----BEGIN")
        var certificate: OpaquePointer?
        var key: OpaquePointer?
        var chain: [OpaquePointer] = []
        var secret = (passphrase ?? []) + [0]
        defer { SecureMemory.wipe(&secret) }
        if isPEM {
            bytes.withUnsafeBytes { raw in
                func reader() -> OpaquePointer? { BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) }
                if let bio = reader() {
                    certificate = PEM_read_bio_X509(bio, nil, nil, nil)
                    // The rest of the certificates in the file are the chain.
                    while let next = PEM_read_bio_X509(bio, nil, nil, nil) { chain.append(next) }
                    BIO_free(bio)
                }
                ERR_clear_error()
                if let bio = reader() {
                    key = secret.withUnsafeMutableBytes { passphrase in
                        PEM_read_bio_PrivateKey(
                            bio, nil,
                            { buffer, size, _, userdata in
                                // The passphrase given, or none: OpenSSL never prompts on a terminal.
                                guard let buffer, let userdata else { return 0 }
                                let given = userdata.assumingMemoryBound(to: CChar.self)
                                let length = min(Int(strlen(given)), Int(size))
                                memcpy(buffer, given, length)
                                return Int32(length)
                            }, passphrase.baseAddress)
                    }
                    BIO_free(bio)
                }
            }
            guard let certificate else {
                throw SealCryptoError.openSSL(.invalidCertificate, "no PEM certificate (-----BEGIN CERTIFICATE-----) in it")
            }
            guard let key else {
                X509_free(certificate)
                chain.forEach { X509_free($0) }
                let encrypted = SecureMemory.contains(bytes, "ENCRYPTED")
                throw SealCryptoError.openSSL(
                    encrypted ? .encryptedKey : .invalidKey,
                    encrypted && passphrase == nil
                        ? "its private key is encrypted and no passphrase was given"
                        : encrypted ? "its private key does not open with the passphrase given" : "no PEM private key in it")
            }
            self.certificate = certificate
            self.key = key
            self.chain = chain
        } else {
            let parsed = bytes.withUnsafeBytes { raw -> OpaquePointer? in
                var cursor = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) as UnsafePointer<UInt8>?
                return d2i_PKCS12(nil, &cursor, raw.count)
            }
            guard let parsed else {
                throw SealCryptoError.openSSL(.invalidCertificate, "neither PEM nor a PKCS#12 (.p12) file")
            }
            defer { PKCS12_free(parsed) }
            var authorities: OpaquePointer?
            let opened = secret.withUnsafeBufferPointer { passphrase in
                passphrase.withMemoryRebound(to: CChar.self) { PKCS12_parse(parsed, $0.baseAddress, &key, &certificate, &authorities) }
            }
            guard opened == 1, let certificate, let key else {
                let reason = ERR_reason_error_string(ERR_peek_error()).map { String(cString: $0) } ?? ""
                if let certificate { X509_free(certificate) }
                if let key { EVP_PKEY_free(key) }
                throw SealCryptoError.openSSL(
                    reason.contains("unsupported") ? .invalidCertificate : .encryptedKey,
                    reason.contains("unsupported")
                        ? "the .p12 is encrypted with an algorithm OpenSSL 3 no longer reads by default (RC2 or 3DES, as older exports are)"
                        : passphrase == nil ? "the .p12 needs a passphrase and none was given" : "the .p12 does not open with the passphrase given")
            }
            if let authorities {
                for index in 0..<OPENSSL_sk_num(authorities) {
                    if let item = OPENSSL_sk_value(authorities, index) { chain.append(OpaquePointer(item)) }
                }
                // The certificates now belong to `chain`; only the stack itself is freed.
                OPENSSL_sk_free(authorities)
            }
            self.certificate = certificate
            self.key = key
            self.chain = chain
        }
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
        chain.forEach { X509_free($0) }
    }

    /// Lends the certificate (`X509 *`), its key (`EVP_PKEY *`) and the chain for `body`.
    package func withParts<Result>(_ body: (_ certificate: OpaquePointer, _ key: OpaquePointer, _ chain: [OpaquePointer]) throws -> Result) rethrows -> Result {
        try body(certificate, key, chain)
    }
}
