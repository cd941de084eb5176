#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SealCrypto
import Synchronization

/// Where a decrypting extension gets its keys. A source that has them at hand answers
/// inside the call; a slow one (a network fetch, a locked keychain) answers later from
/// another thread, and the runner's deadline covers the wait.
public protocol KeySource: Sendable {
    func keyring(_ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void)
}

/// A keyring already in memory.
public struct FixedKeySource: KeySource {
    public let keyring: Keyring

    public init(_ keyring: Keyring) {
        self.keyring = keyring
    }

    public func keyring(_ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void) {
        completion(.success(keyring))
    }
}

/// A keyring folder, read once and read again only when `keyring.json` changes on disk, so
/// a long-running receiver follows `keys rotate` and `keys import` without a restart.
///
/// Many threads ask for the keyring once per notification, so the common path takes no
/// lock: each thread keeps the snapshot it last saw with its generation number, and only a
/// new generation (after a reload) sends it to the shared copy.
public final class KeyringFileSource: KeySource {
    fileprivate final class Snapshot: Sendable {
        let keyring: Keyring
        let device: UInt64
        let inode: UInt64
        let modifiedSeconds: Int
        let modifiedNanoseconds: Int
        let size: Int64

        init(keyring: Keyring, info: stat) {
            self.keyring = keyring
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            modifiedSeconds = Int(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
            size = Int64(info.st_size)
        }

        func matches(_ info: stat) -> Bool {
            UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
                && Int(info.st_mtim.tv_sec) == modifiedSeconds && Int(info.st_mtim.tv_nsec) == modifiedNanoseconds
                && Int64(info.st_size) == size
        }
    }

    /// How often the file is looked at again: often enough that a rotation shows within a
    /// blink, rarely enough that a stream of notifications does not stat once each.
    static let recheckInterval: Duration = .milliseconds(100)
    private static let instances = Atomic<Int>(0)

    public let store: KeyringStore
    /// Tells this source's entries in the per-thread caches apart from any other source's.
    private let instance: Int
    private let shared: Locked<Snapshot>
    private let generation = Atomic<Int>(0)
    private let nextCheck: Atomic<Int64>

    /// Loads the keyring now, so a missing or unsafe one is reported before any delivery.
    public init(store: KeyringStore) throws {
        self.store = store
        instance = Self.instances.add(1, ordering: .relaxed).newValue
        shared = Locked(try Self.read(store))
        nextCheck = Atomic(monotonicNanoseconds() + Self.recheckInterval.nanoseconds)
    }

    public func keyring(_ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void) {
        completion(Result { try current() })
    }

    /// The keyring as it is on disk now; a stat now and then, a parse only after a change.
    public func current() throws -> Keyring {
        let now = monotonicNanoseconds()
        let due = nextCheck.load(ordering: .relaxed)
        if now >= due, nextCheck.compareExchange(expected: due, desired: now + Self.recheckInterval.nanoseconds, ordering: .relaxed).exchanged {
            try reloadIfChanged()
        }
        let current = generation.load(ordering: .acquiring)
        let cache = ThreadKeyringCache.current()
        if let entry = cache.entries[instance], entry.generation == current {
            return entry.snapshot.keyring
        }
        let snapshot = shared.withLock { $0 }
        cache.entries[instance] = (current, snapshot)
        return snapshot.keyring
    }

    private func reloadIfChanged() throws {
        var info = stat()
        let unchanged = lstat(store.path, &info) == 0 && shared.withLock { $0.matches(info) }
        guard !unchanged else { return }
        let fresh = try Self.read(store)
        shared.withLock { $0 = fresh }
        generation.add(1, ordering: .releasing)
    }

    private static func read(_ store: KeyringStore) throws -> Snapshot {
        // Stat before reading: a change that lands in between shows as a new stat next time.
        var info = stat()
        let statted = lstat(store.path, &info) == 0
        let keyring = try store.load()
        guard statted else { throw KeyringError(.keyringMissing, "no keyring at \(store.path)") }
        return Snapshot(keyring: keyring, info: info)
    }
}

/// Each thread's last-seen keyring snapshots, by source.
private final class ThreadKeyringCache {
    var entries: [Int: (generation: Int, snapshot: KeyringFileSource.Snapshot)] = [:]

    private static let perThread = PerThread { ThreadKeyringCache() }

    static func current() -> ThreadKeyringCache {
        // Making a cache cannot fail.
        try! perThread.get()
    }
}

private func monotonicNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
