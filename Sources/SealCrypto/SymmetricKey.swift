internal import COpenSSL
import Locking

/// A 256-bit AES key whose bytes are wiped from memory when the last reference goes away.
///
/// The bytes live in their own allocation rather than a Swift array so that no copy-on-write
/// duplicate can outlive the wipe.
public final class SymmetricKey: @unchecked Sendable {
    /// AES-256 takes exactly 32 key bytes.
    public static let byteCount = 32

    // Written once in init and wiped in deinit; never mutated in between, which is what
    // makes sharing across threads safe.
    private let storage: UnsafeMutableRawBufferPointer
    /// Idle cipher contexts already holding this key's schedule, per direction; they are
    /// freed with the key, so its schedule never outlives it.
    private let sealing = Locked<[CipherContext]>([])
    private let opening = Locked<[CipherContext]>([])

    /// Copies `bytes` into wiped-on-release storage; they must be exactly 32.
    public init<Bytes: Collection>(bytes: Bytes) throws where Bytes.Element == UInt8 {
        guard bytes.count == Self.byteCount else {
            throw SealCryptoError(.invalidKeySize, "an AES-256 key is 32 bytes, not \(bytes.count)")
        }
        storage = .allocate(byteCount: Self.byteCount, alignment: 16)
        storage.copyBytes(from: bytes)
    }

    /// A fresh key from OpenSSL's CSPRNG.
    public static func generate() throws -> SymmetricKey {
        var bytes = try SecureRandom.bytes(count: byteCount)
        defer { SecureMemory.wipe(&bytes) }
        return try SymmetricKey(bytes: bytes)
    }

    deinit {
        pushseal_cleanse(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    /// Lends the raw key bytes for the duration of `body`; do not let them escape.
    public func withUnsafeBytes<Result>(
        _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// Lends a cipher context set up with this key to `body`, one caller at a time.
    func withCipherContext<Result>(encrypting: Bool, _ body: (CipherContext) throws -> Result) throws -> Result {
        let pool = encrypting ? sealing : opening
        let context =
            try pool.withLock { $0.popLast() }
            ?? withUnsafeBytes { try CipherContext(key: $0, encrypting: encrypting) }
        let result = try body(context)
        // A context whose call failed is dropped rather than trusted with the next message.
        pool.withLock { $0.append(context) }
        return result
    }

    /// Compares two keys without leaking, through timing, where they differ.
    public func hasSameBytes(as other: SymmetricKey) -> Bool {
        withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in ConstantTime.equal(mine, theirs) }
        }
    }
}
