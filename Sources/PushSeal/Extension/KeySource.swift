import Locking
import MonotonicTime
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a decrypting extension gets its keys. A source that has them at hand answers
/// inside the call; a slow one (a network fetch, a locked keychain) answers later from
/// another thread, and the runner's deadline covers the wait.
///
/// `kid` is the key the envelope names: a source that caches may use it to look again
/// before answering that it has no such key.
public protocol KeySource: Sendable {
    func keyring(for kid: String, _ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void)
}

/// A keyring already in memory.
public struct FixedKeySource: KeySource {
    public let keyring: Keyring

    public init(_ keyring: Keyring) {
        self.keyring = keyring
    }

    public func keyring(for kid: String, _ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void) {
        completion(.success(keyring))
    }
}

/// A keyring folder, read once and read again when `keyring.json` changes on disk, so a
/// long-running receiver follows `keys rotate`, `keys import` and `keys destroy` without a
/// restart.
///
/// The file is looked at again at most every 100 ms, and at once whenever an envelope names
/// a kid the keyring in memory does not know: a payload sealed right after a rotation is
/// never judged by the keyring from before it. Only the current snapshot is kept, so when
/// the file changes the old keys (and the cipher contexts holding their schedules) are
/// released as soon as the deliveries using them finish.
public final class KeyringFileSource: KeySource {
    /// The keyring on disk became unusable (damaged, removed, made readable by others), or
    /// usable again: said once per change, so a receiver can say it on stderr.
    public enum Change: Sendable {
        case unusable(any Error)
        case usable
    }

    private final class Snapshot: Sendable {
        let keyring: Keyring
        let device: UInt64
        let inode: UInt64
        let modifiedSeconds: Int
        let modifiedNanoseconds: Int
        let size: Int64
        // The mode too: a `chmod 644` changes neither the contents nor their time, and a
        // keyring others can read is refused here as at start.
        let mode: UInt32

        init(keyring: Keyring, info: stat) {
            self.keyring = keyring
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            modifiedSeconds = Int(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
            size = Int64(info.st_size)
            mode = UInt32(info.st_mode)
        }

        func matches(_ info: stat) -> Bool {
            UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
                && Int(info.st_mtim.tv_sec) == modifiedSeconds && Int(info.st_mtim.tv_nsec) == modifiedNanoseconds
                && Int64(info.st_size) == size && UInt32(info.st_mode) == mode
        }
    }

    /// How often the file is looked at when nothing asks for a key it lacks: often enough
    /// that a `keys disable` shows within a blink, rarely enough that a stream of
    /// notifications does not stat once each.
    static let recheckInterval = Duration.milliseconds(100)

    public let store: KeyringStore
    private let shared: Locked<Snapshot>
    // Serialises reloads, so a burst of unknown kids makes one read, not one each.
    private let reloading = Lock()
    private let nextCheck: Atomic<UInt64>
    private let onChange: (@Sendable (Change) -> Void)?
    /// Whether the last read failed; under `reloading`.
    nonisolated(unsafe) private var unusable = false

    /// Loads the keyring now, so a missing or unsafe one is reported before any delivery.
    /// `onChange` hears when a later read fails after one that worked, and when one works again.
    public init(store: KeyringStore, onChange: (@Sendable (Change) -> Void)? = nil) throws {
        self.store = store
        shared = Locked(try Self.read(store))
        nextCheck = Atomic((MonotonicClock.system.now + Self.recheckInterval).nanoseconds)
        self.onChange = onChange
    }

    public func keyring(for kid: String, _ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void) {
        completion(Result { try current(knowing: kid) })
    }

    /// The keyring as it is on disk now: a stat now and then (and at once when `kid` is
    /// unknown), a parse only after a change.
    package func current(knowing kid: String? = nil) throws -> Keyring {
        if MonotonicClock.system.now.nanoseconds >= nextCheck.load(ordering: .acquiring) {
            // The next check is set only once this one is done, so every thread that comes
            // meanwhile looks too (a stat, in turn under the reload lock) instead of reading
            // the snapshot that is about to be replaced.
            try reloadIfChanged()
            nextCheck.store((MonotonicClock.system.now + Self.recheckInterval).nanoseconds, ordering: .releasing)
        }
        let keyring = shared.withLock { $0.keyring }
        guard let kid, !keyring.holds(kid) else { return keyring }
        try reloadIfChanged()
        return shared.withLock { $0.keyring }
    }

    private func reloadIfChanged() throws {
        try reloading.withLock {
            var info = stat()
            let unchanged = lstat(store.path, &info) == 0 && shared.withLock { $0.matches(info) }
            guard !unchanged else {
                // Back to exactly the file last read well (a chmod undone): usable again.
                if unusable {
                    unusable = false
                    onChange?(.usable)
                }
                return
            }
            let fresh: Snapshot
            do {
                fresh = try Self.read(store)
            } catch {
                if !unusable {
                    unusable = true
                    onChange?(.unusable(error))
                }
                throw error
            }
            shared.withLock { $0 = fresh }
            if unusable {
                unusable = false
                onChange?(.usable)
            }
        }
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
