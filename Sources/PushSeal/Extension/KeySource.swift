#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
public final class KeyringFileSource: KeySource {
    private struct Snapshot {
        var keyring: Keyring
        var checked: ContinuousClock.Instant
        var device: UInt64
        var inode: UInt64
        var modified: timespec
        var size: Int64
    }

    public let store: KeyringStore
    private let cached: Mutex<Snapshot?>

    /// Loads the keyring now, so a missing or unsafe one is reported before any delivery.
    public init(store: KeyringStore) throws {
        self.store = store
        cached = Mutex(try Self.read(store))
    }

    public func keyring(_ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void) {
        completion(Result { try current() })
    }

    /// How often the file is looked at again: often enough that a rotation shows within a
    /// blink, rarely enough that a stream of notifications does not stat once each.
    static let recheckInterval: Duration = .milliseconds(100)

    /// The keyring as it is on disk now; a stat now and then, a parse only after a change.
    public func current() throws -> Keyring {
        var info = stat()
        let now = ContinuousClock.now
        let changed = cached.withLock { snapshot -> Bool in
            guard var current = snapshot else { return true }
            if now - current.checked < Self.recheckInterval { return false }
            current.checked = now
            snapshot = current
            guard lstat(store.path, &info) == 0 else { return true }
            return UInt64(info.st_dev) != current.device || UInt64(info.st_ino) != current.inode
                || info.st_mtim.tv_sec != current.modified.tv_sec || info.st_mtim.tv_nsec != current.modified.tv_nsec
                || Int64(info.st_size) != current.size
        }
        if changed {
            let fresh = try Self.read(store)
            cached.withLock { $0 = fresh }
            return fresh.keyring
        }
        return try cached.withLock { snapshot in
            guard let snapshot else { throw KeyringError(.keyringMissing, "no keyring at \(store.path)") }
            return snapshot.keyring
        }
    }

    private static func read(_ store: KeyringStore) throws -> Snapshot {
        // Stat before reading: a change that lands in between shows as a new stat next time.
        var info = stat()
        let statted = lstat(store.path, &info) == 0
        let keyring = try store.load()
        guard statted else { throw KeyringError(.keyringMissing, "no keyring at \(store.path)") }
        return Snapshot(keyring: keyring, checked: ContinuousClock.now, device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                        modified: info.st_mtim, size: Int64(info.st_size))
    }
}
