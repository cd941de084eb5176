internal import COpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libcrypto's certificate-verification calls the HTTP/2 client needs around a handshake
/// (the handshake itself is libssl's): which name the peer's certificate must carry, what a
/// verification result means, and where the system keeps its trusted certificates.
package enum CertificateChecks {
    /// Makes `name` (a host name, or an IP address when `isAddress`) the one the peer's
    /// certificate must be made out to, in a connection's verify parameters
    /// (`SSL_get0_param`).
    package static func expect(_ name: String, isAddress: Bool, in parameters: OpaquePointer) {
        if isAddress {
            _ = X509_VERIFY_PARAM_set1_ip_asc(parameters, name)
        } else {
            _ = X509_VERIFY_PARAM_set1_host(parameters, name, 0)
        }
    }

    /// A failed verification (`SSL_get_verify_result`) in OpenSSL's words, and whether it
    /// failed on the name; nil when it succeeded.
    package static func failure(ofResult result: Int) -> (words: String, nameMismatch: Bool)? {
        guard result != X509_V_OK else { return nil }
        let words = String(cString: X509_verify_cert_error_string(result))
        return (words, result == X509_V_ERR_HOSTNAME_MISMATCH || result == X509_V_ERR_IP_ADDRESS_MISMATCH)
    }

    /// Where OpenSSL looks for trusted certificates: the system bundle file, the file and
    /// folder the environment gives (SSL_CERT_FILE, SSL_CERT_DIR), and the folder in use
    /// (the environment's, else the system's).
    package static var trustLocations: (systemFile: String, givenFile: String?, directory: String) {
        let systemFile = String(cString: X509_get_default_cert_file())
        let givenFile = getenv(String(cString: X509_get_default_cert_file_env())).map { String(cString: $0) }
        let givenDirectory = getenv(String(cString: X509_get_default_cert_dir_env())).map { String(cString: $0) }
        return (systemFile, givenFile, givenDirectory ?? String(cString: X509_get_default_cert_dir()))
    }
}
