internal import COpenSSL
import Locking

/// Random bytes from OpenSSL's CSPRNG (`RAND_bytes`), suitable for keys and nonces.
package enum SecureRandom {
    /// Fills `buffer` with bytes for public values (nonces, message ids) from this thread's
    /// pool. Each `RAND_bytes` call costs about as much as sealing a short alert, so the pool
    /// draws 4 KiB at a time and hands every byte out once. Keys never come from here:
    /// `bytes(count:)` asks the generator directly, so no secret sits in a pool.
    package static func fillPublic(_ buffer: UnsafeMutableRawBufferPointer) throws {
        try RandomPool.current().fill(buffer)
    }

    /// Returns `count` random bytes, or throws if the generator is not seeded.
    package static func bytes(count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try fill(&bytes)
        return bytes
    }

    /// Overwrites `bytes` with random bytes.
    package static func fill(_ bytes: inout [UInt8]) throws {
        try bytes.withUnsafeMutableBytes { try fill($0) }
    }

    static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        guard RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 else {
            throw SealCryptoError.openSSL(.randomUnavailable, "the system random generator is unavailable")
        }
    }
}

/// A per-thread buffer of `RAND_bytes` output for public random values.
///
/// The bytes and the read position live in memory the pool owns, not in stored `var`s: a
/// batch draws from it twice a line, and each access to a class's `var` is checked for
/// exclusivity at run time. Only its own thread ever touches a pool.
final class RandomPool {
    private static let size = 4096
    private let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: RandomPool.size, alignment: 16)
    /// How many of `bytes` are handed out; `size` when the pool must be refilled first.
    private let used = UnsafeMutablePointer<Int>.allocate(capacity: 1)

    private static let perThread = PerThread { RandomPool() }

    private init() {
        used.initialize(to: Self.size)
    }

    deinit {
        bytes.deallocate()
        used.deallocate()
    }

    static func current() throws -> RandomPool {
        try perThread.get()
    }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
        var filled = 0
        while filled < buffer.count {
            if used.pointee == Self.size {
                try SecureRandom.fill(bytes)
                used.pointee = 0
            }
            let start = used.pointee
            let take = min(buffer.count - filled, Self.size - start)
            UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + take)])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + take)]))
            // Moving `used` past the bytes is what guarantees no nonce is handed out twice.
            used.pointee = start + take
            filled += take
        }
    }
}
