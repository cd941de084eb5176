internal import COpenSSL
import Locking

/// Random bytes from OpenSSL's CSPRNG (`RAND_bytes`), suitable for keys and nonces.
public enum SecureRandom {
    /// Fills `buffer` with bytes for public values (nonces, message ids) from this thread's
    /// pool. Each `RAND_bytes` call costs about as much as sealing a short alert, so the pool
    /// draws 4 KiB at a time and hands every byte out once. Keys never come from here:
    /// `bytes(count:)` asks the generator directly, so no secret sits in a pool.
    public static func fillPublic(_ buffer: UnsafeMutableRawBufferPointer) throws {
        try RandomPool.current().fill(buffer)
    }

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
            throw SealCryptoError.openSSL(.randomUnavailable, "the system random generator is unavailable")
        }
    }
}

/// A per-thread buffer of `RAND_bytes` output for public random values.
final class RandomPool {
    private static let size = 4096
    private var bytes = [UInt8](repeating: 0, count: RandomPool.size)
    private var used = RandomPool.size

    private static let perThread = PerThread { RandomPool() }

    static func current() throws -> RandomPool {
        try perThread.get()
    }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
        var filled = 0
        while filled < buffer.count {
            if used == bytes.count {
                try SecureRandom.fill(&bytes)
                used = 0
            }
            let take = min(buffer.count - filled, bytes.count - used)
            bytes.withUnsafeBytes { pool in
                UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + take)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: pool[used..<(used + take)]))
            }
            // Moving `used` past the bytes is what guarantees no nonce is handed out twice.
            used += take
            filled += take
        }
    }
}
