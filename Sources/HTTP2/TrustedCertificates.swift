internal import CNGHTTP2

/// Certificates a client is told to trust (`--cacert FILE`), checked before any connection
/// so that a file that holds none is blamed on the file, not on the server.
public enum TrustedCertificates {
    /// How many PEM certificates `pem` holds, read as OpenSSL will read them.
    public static func count(pem: [UInt8]) -> Int {
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
