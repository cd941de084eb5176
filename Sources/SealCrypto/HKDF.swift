internal import CHPKE

/// HKDF-SHA256 (RFC 5869) one step at a time: the key derivation of HPKE (ps2) and of Web
/// Push's message encryption (RFC 8291), each of which labels its inputs its own way.
enum HKDF {
    /// HMAC-SHA256 with its digest fetched and set once; each HKDF step works on a copy.
    /// (OpenSSL's EVP_KDF HKDF looked the digest up and parsed its parameters at every
    /// step, which cost four times the hashing.)
    nonisolated(unsafe) private static let hmac = pushseal_hmac_sha256_template()

    /// Extract (`first` the salt, `second` the input keying material; 32 bytes out) or
    /// Expand (`first` the pseudorandom key, `second` the info; `length` bytes out).
    static func step(
        extract: Bool, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
        length: Int
    ) throws(SealCryptoError) -> SecureBytes {
        let out = SecureBytes(count: length)
        let ok = out.withUnsafeMutableBytes { output in
            pushseal_hkdf_sha256(
                hmac, extract ? 1 : 0, first.baseAddress?.assumingMemoryBound(to: UInt8.self), first.count,
                second.baseAddress?.assumingMemoryBound(to: UInt8.self), second.count,
                output.baseAddress?.assumingMemoryBound(to: UInt8.self), length)
        }
        guard ok == 1 else {
            throw SealCryptoError.openSSL(.libraryFailure, "OpenSSL's HKDF failed")
        }
        return out
    }
}
