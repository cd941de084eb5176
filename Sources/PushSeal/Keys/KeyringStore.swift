import MonotonicTime
import SealCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A keyring folder on disk: `keyring.json` (0600) in a folder that only its owner may
/// enter (0700), like ssh keeps `~/.ssh`.
///
/// Every change runs under an exclusive `flock` on the folder's lock file, reads the current
/// keyring, writes a temporary file, fsyncs it, renames it over `keyring.json` and fsyncs
/// the folder. A crash therefore leaves the old or the new keyring, never a torn one, and
/// concurrent changes apply one after another without losing any.
public struct KeyringStore: Sendable {
    package static let fileName = "keyring.json"
    static let lockName = ".keyring.lock"

    public let folder: String
    /// How long a change waits for another process's lock before giving up.
    package var lockTimeout: Duration
    /// Called once when a change has waited a second for the lock, so a person can be told.
    package var waitingForLock: (@Sendable () -> Void)?

    public static let defaultLockTimeout: Duration = .seconds(30)

    public init(
        folder: String, lockTimeout: Duration = KeyringStore.defaultLockTimeout,
        waitingForLock: (@Sendable () -> Void)? = nil
    ) {
        self.folder = folder
        self.lockTimeout = lockTimeout
        self.waitingForLock = waitingForLock
    }

    public var path: String { folder + "/" + Self.fileName }

    /// Whether a keyring file exists here (it may still be unreadable).
    public var exists: Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Reads the keyring, refusing one that others could read.
    public func load() throws -> Keyring {
        try checkFolder()
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT:
                throw KeyringError(.keyringMissing, "no keyring at \(path)")
            case ELOOP:
                throw KeyringError(.insecurePermissions, "\(path) is a symbolic link; pushseal only reads a regular keyring file")
            case EACCES:
                throw KeyringError(.insecurePermissions, "cannot read \(path): permission denied")
            default:
                throw systemError(.io, "cannot read \(path)")
            }
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw systemError(.io, "cannot read \(path)") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw KeyringError(.corrupt, "\(path) is not a regular file")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw KeyringError(.insecurePermissions, "\(path) is accessible by group or others (mode \(FileIO.modeText(mode)))", path: path)
        }
        let bytes: [UInt8]
        do {
            bytes = try FileIO.readAll(descriptor, bound: .keyring)
        } catch {
            throw KeyringError(.io, "cannot read \(path): \(error.message)", underlying: error)
        }
        return try KeyringFile.decode(bytes, path: path)
    }

    /// Writes a brand-new keyring; refuses to replace one that exists.
    public func create(_ keyring: Keyring) throws {
        try prepareFolder()
        try withLock {
            guard !exists else {
                throw KeyringError(.keyringExists, "a keyring already exists at \(path)")
            }
            try replace(with: keyring)
        }
    }

    /// Applies `change` to the current keyring under the lock and saves the result. With
    /// `creatingIfMissing`, a missing keyring starts empty (a receiver's first import);
    /// without it, a missing keyring is reported before anything (folder, lock file) is made.
    package func update<Result>(
        creatingIfMissing: Bool = false,
        _ change: (inout Keyring) throws -> Result
    ) throws -> Result {
        if creatingIfMissing {
            try prepareFolder()
        } else {
            guard exists else { throw KeyringError(.keyringMissing, "no keyring at \(path)") }
            try prepareFolder()
        }
        return try withLock {
            var keyring = creatingIfMissing && !exists ? Keyring() : try load()
            let result = try change(&keyring)
            try replace(with: keyring)
            return result
        }
    }

    // MARK: Locking and atomic replacement

    /// Runs `body` under the folder's lock: every process that changes a file in the
    /// keyring folder (the keyring, the provider-token cache) takes it.
    package func withLock<Result>(_ body: () throws -> Result) throws -> Result {
        let lockPath = folder + "/" + Self.lockName
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw systemError(.cannotCreate, "cannot open the lock file \(lockPath)")
        }
        defer { close(descriptor) }
        try lock(descriptor, path: lockPath)
        defer { flock(descriptor, LOCK_UN) }
        removeAbandonedTemporaryFiles()
        return try body()
    }

    /// Takes the lock, polling so that a wait can be reported after a second and given up
    /// after `lockTimeout`.
    private func lock(_ descriptor: Int32, path lockPath: String) throws {
        let clock = MonotonicClock.system
        let start = clock.now
        var told = false
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw systemError(.io, "cannot lock \(lockPath)")
            }
            let waited = clock.now - start
            if waited >= lockTimeout {
                throw KeyringError(.lockTimeout, "another process has held the keyring lock \(lockPath) for over \(DurationText.format(lockTimeout))")
            }
            if !told, waited >= .seconds(1) {
                told = true
                waitingForLock?()
            }
            var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
            nanosleep(&pause, nil)
        }
    }

    /// A writer killed before its rename leaves `keyring.json.tmp-<pid>` behind. Only the
    /// lock holder writes, so while we hold it every such file is abandoned.
    private func removeAbandonedTemporaryFiles() {
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        let prefix = Self.fileName + ".tmp-"
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(prefix) { unlink(folder + "/" + name) }
        }
    }

    private func replace(with keyring: Keyring) throws {
        var text = KeyringFile.encode(keyring)
        defer { SecureMemory.wipe(&text) }
        // No input may make the keyring unreadable: what is about to replace it must read
        // back as itself (a timestamp past year 9999 would not, for one).
        do {
            var again = KeyringFile.encode(try KeyringFile.decode(text, path: path))
            defer { SecureMemory.wipe(&again) }
            guard again == text else { throw KeyringError(.corrupt, "it reads back differently") }
        } catch {
            throw KeyringError(.notAllowed, "the change would leave a keyring that cannot be read back (\(error)); nothing was changed", underlying: error)
        }
        do {
            try FileIO.replace(path, with: text)
        } catch {
            throw KeyringError(error.nothingCreated ? .cannotCreate : .io, error.message, underlying: error)
        }
    }

    /// Creates the folder when missing and makes it private: changing a keyring is the
    /// owner's explicit act, so tightening a freshly cloned 0755 `Keys/` is what they mean.
    private func prepareFolder() throws {
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw systemError(.cannotCreate, "cannot create the keyring folder \(folder)")
        }
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw KeyringError(.cannotCreate, "\(folder) is not a folder")
        }
        if info.st_mode & 0o077 != 0 {
            guard chmod(folder, 0o700) == 0 else {
                throw systemError(.insecurePermissions, "cannot make \(folder) private", path: folder)
            }
        }
    }

    private func checkFolder() throws {
        var info = stat()
        guard stat(folder, &info) == 0 else {
            if errno == ENOENT {
                throw KeyringError(.keyringMissing, "no keyring at \(path)")
            }
            throw systemError(.io, "cannot open the keyring folder \(folder)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw KeyringError(.keyringMissing, "\(folder) is not a folder")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw KeyringError(
                .insecurePermissions, "the keyring folder \(folder) is accessible by group or others (mode \(FileIO.modeText(mode)))",
                path: folder)
        }
    }

    /// A failure of the system call just made: `what`, then the system's words, with its
    /// `errno` kept as the cause.
    private func systemError(_ code: KeyringError.Code, _ what: String, path: String? = nil) -> KeyringError {
        let cause = FileIOFailure(code: errno)
        return KeyringError(code, "\(what): \(cause.message)", path: path, underlying: cause)
    }
}
