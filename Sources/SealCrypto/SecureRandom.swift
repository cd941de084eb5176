internal import COpenSSL

/// Random bytes from OpenSSL's CSPRNG (`RAND_bytes`), suitable for keys and nonces.
public enum SecureRandom {
    /// Returns `count` random bytes, or throws if the generator is not seeded.
    public static func bytes(count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try fill(&bytes)
        return bytes
    }

    /// Overwrites `bytes` with random bytes.
    public static func fill(_ bytes: inout [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        let rc = bytes.withUnsafeMutableBytes {
            RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32($0.count))
        }
        guard rc == 1 else {
            throw SealCryptoError(.randomUnavailable, "the system random generator is unavailable")
        }
    }
}
