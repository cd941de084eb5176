#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The messages a receiver has opened, remembered so that one arriving again is a
/// `duplicate` and not shown as new: one definition for the Linux runner (beside its
/// keyring) and the device kit (in its App Group container, shared by every instance of the
/// extension). Pure Swift on POSIX files, no crypto.
///
/// **On disk.** One file of fixed size: a 4 KiB header (magic, bucket count, a random hash
/// key) and `bucketCount` buckets of 4 KiB, each 256 slots of 16 bytes: a 64-bit fingerprint
/// of the message and the Unix second until which it is remembered (0: empty). The default,
/// 8,192 buckets, is 32 MiB and holds 2,097,152 messages; a million spread over it fill a
/// bucket to 122 on average, so none overflows in practice.
///
/// **Past the bound.** A message whose bucket is full takes the slot of the one there that
/// expires first (an expired one, when there is one): what the store forgets first is what
/// expired first, and the file never grows.
///
/// **Crash safety.** The file is made whole (written, synced, renamed into place) before it
/// is used; after that each remembered message is one aligned 16-byte write inside one disk
/// sector, so a crash at any moment leaves every other slot as it was. A process that dies
/// loses nothing (the write is in the kernel's cache); a power cut may forget the last
/// moments' messages, which could then show once more.
///
/// **Sharing.** Every check-and-remember holds an exclusive `flock` on the file (and a lock
/// among the threads of this process), so two receivers given the same message at once show
/// it once between them.
///
/// **Memory.** A lookup reads the one bucket it needs; nothing is cached but the header.
public final class SeenMessages: @unchecked Sendable {
    /// The file's name in the folder it is kept in.
    public static let fileName = "seen-messages"
    /// How long a message that carries no `exp` is remembered: as long as APNs may keep a
    /// notification it could not deliver.
    public static let defaultLifetime: Int64 = 30 * 86_400
    public static let defaultBucketCount = 8_192

    static let magic = Array("pushseal seen/1\n".utf8)
    static let pageSize = 4_096
    static let slotSize = 16
    static let slotsPerBucket = pageSize / slotSize

    public let path: String
    public let bucketCount: Int
    /// How many messages it holds before it forgets the soonest to expire.
    public var capacity: Int { bucketCount * Self.slotsPerBucket }

    private let descriptor: Int32
    private let key: (UInt64, UInt64, UInt64, UInt64)
    private let threads = ThreadLock()

    /// Opens the store at `path`, making it (whole, with a fresh random key) when there is
    /// none. A file that is not a store of this kind is refused, never overwritten: the
    /// messages it remembers would open again.
    public convenience init(path: String, bucketCount: Int = SeenMessages.defaultBucketCount) throws(SeenMessagesError) {
        try self.init(path: path, bucketCount: bucketCount, readOnly: false)
    }

    /// The store at `path` to ask only (`contains`), or nil when there is none: what `doctor`
    /// opens, which changes nothing on disk.
    public static func existing(at path: String) throws(SeenMessagesError) -> SeenMessages? {
        guard access(path, F_OK) == 0 else { return nil }
        return try SeenMessages(path: path, bucketCount: defaultBucketCount, readOnly: true)
    }

    private let readOnly: Bool

    private init(path: String, bucketCount: Int, readOnly: Bool) throws(SeenMessagesError) {
        precondition(bucketCount > 0 && bucketCount <= 1 << 20)
        self.path = path
        self.readOnly = readOnly
        var fd = open(path, (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0, errno == ENOENT, !readOnly {
            try Self.create(path: path, bucketCount: bucketCount)
            fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        }
        guard fd >= 0 else { throw SeenMessagesError(path: path, "cannot be opened", errno: errno) }
        var header = [UInt8](repeating: 0, count: Self.pageSize)
        let read = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, Self.pageSize, 0) }
        var info = stat()
        let statted = fstat(fd, &info) == 0
        guard read == Self.pageSize, statted, Array(header[0..<16]) == Self.magic else {
            close(fd)
            throw SeenMessagesError(path: path, "is not a pushseal store of seen messages (remove it to start afresh: the messages it remembered could show again)")
        }
        let count = Int(Self.loadUInt32(header, at: 16))
        guard count > 0, count <= 1 << 20, Int64(info.st_size) == Int64(Self.pageSize) * Int64(count + 1) else {
            close(fd)
            throw SeenMessagesError(path: path, "is damaged: its size does not match its header (remove it to start afresh)")
        }
        descriptor = fd
        self.bucketCount = count
        key = (Self.loadUInt64(header, at: 32), Self.loadUInt64(header, at: 40), Self.loadUInt64(header, at: 48), Self.loadUInt64(header, at: 56))
    }

    deinit {
        close(descriptor)
    }

    /// What names one message: the key it was sealed to (or under), the sender key that
    /// vouched for it (none for ps1 and ps2), and its sealed `id`; with `device`, on that
    /// device, where one store serves many (pushseal's listener stands for every device it
    /// is sent to). A receiver remembers this, never the content.
    public static func identity(kid: String, sender: String?, id: String, device: String? = nil) -> [UInt8] {
        Array((device ?? "").utf8) + [0] + Array(kid.utf8) + [0] + Array((sender ?? "").utf8) + [0] + Array(id.utf8)
    }

    /// Remembers `message` until `expires` (Unix seconds) unless it is remembered already:
    /// true the first time, false for a message seen before and not yet expired at `now`.
    public func remember(_ message: some Collection<UInt8>, until expires: Int64, now: Int64) throws(SeenMessagesError) -> Bool {
        precondition(!readOnly, "a store opened to ask only remembers nothing")
        return try check(message, now: now, rememberingUntil: max(expires, now + 1))
    }

    /// Whether `message` was remembered and has not expired at `now`; changes nothing (what
    /// `doctor` asks).
    public func contains(_ message: some Collection<UInt8>, now: Int64) throws(SeenMessagesError) -> Bool {
        try !check(message, now: now, rememberingUntil: nil)
    }

    /// How many messages are remembered and not expired at `now` (a full scan: for tests and
    /// reports, not for every message).
    public func count(now: Int64) throws(SeenMessagesError) -> Int {
        var total = 0
        var page = [UInt8](repeating: 0, count: Self.pageSize)
        for bucket in 0..<bucketCount {
            try read(bucket: bucket, into: &page)
            for slot in 0..<Self.slotsPerBucket where Int64(bitPattern: Self.loadUInt64(page, at: slot * Self.slotSize + 8)) > now {
                total += 1
            }
        }
        return total
    }

    /// True when the message was not there (and, with a time, is remembered now).
    private func check(_ message: some Collection<UInt8>, now: Int64, rememberingUntil expires: Int64?) throws(SeenMessagesError) -> Bool {
        let bytes = Array(message)
        let fingerprint = SipHash.hash(bytes, key.0, key.1)
        let bucket = Int(SipHash.hash(bytes, key.2, key.3) % UInt64(bucketCount))
        return try threads.withLock { () throws(SeenMessagesError) -> Bool in
            guard flock(descriptor, expires == nil ? LOCK_SH : LOCK_EX) == 0 else {
                throw SeenMessagesError(path: path, "cannot be locked", errno: errno)
            }
            defer { flock(descriptor, LOCK_UN) }
            var page = [UInt8](repeating: 0, count: Self.pageSize)
            try read(bucket: bucket, into: &page)
            // The slot to take if the message is new: an empty or expired one, else the one
            // that expires first.
            var victim = 0
            var victimExpiry = Int64.max
            for slot in 0..<Self.slotsPerBucket {
                let offset = slot * Self.slotSize
                let slotExpiry = Int64(bitPattern: Self.loadUInt64(page, at: offset + 8))
                if slotExpiry > now, Self.loadUInt64(page, at: offset) == fingerprint { return false }
                let effective = slotExpiry > now ? slotExpiry : Int64.min
                if effective < victimExpiry {
                    victim = slot
                    victimExpiry = effective
                }
            }
            guard let expires else { return true }
            var slot = [UInt8](repeating: 0, count: Self.slotSize)
            Self.storeUInt64(fingerprint, into: &slot, at: 0)
            Self.storeUInt64(UInt64(bitPattern: expires), into: &slot, at: 8)
            let offset = off_t(Self.pageSize * (bucket + 1) + victim * Self.slotSize)
            let written = slot.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, Self.slotSize, offset) }
            guard written == Self.slotSize else { throw SeenMessagesError(path: path, "cannot be written", errno: errno) }
            return true
        }
    }

    private func read(bucket: Int, into page: inout [UInt8]) throws(SeenMessagesError) {
        let offset = off_t(Self.pageSize * (bucket + 1))
        let read = page.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, Self.pageSize, offset) }
        guard read == Self.pageSize else { throw SeenMessagesError(path: path, "cannot be read", errno: errno) }
    }

    /// Writes a new, empty store: a temporary file with the header, sized (sparse: the disk
    /// holds only the buckets written to), synced, then renamed into place, so a crash never
    /// leaves half a header. A store made meanwhile by another receiver is kept.
    private static func create(path: String, bucketCount: Int) throws(SeenMessagesError) {
        var random = SystemRandomNumberGenerator()
        var header = [UInt8](repeating: 0, count: pageSize)
        header.replaceSubrange(0..<16, with: magic)
        storeUInt32(UInt32(bucketCount), into: &header, at: 16)
        for index in 0..<4 { storeUInt64(random.next(), into: &header, at: 32 + 8 * index) }
        let temporary = "\(path).\(getpid()).new"
        let fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SeenMessagesError(path: path, "cannot be created", errno: errno) }
        let written = header.withUnsafeBytes { pwrite(fd, $0.baseAddress, pageSize, 0) }
        let made = written == pageSize && ftruncate(fd, off_t(pageSize * (bucketCount + 1))) == 0 && fsync(fd) == 0
        let failure = errno
        close(fd)
        guard made else {
            unlink(temporary)
            throw SeenMessagesError(path: path, "cannot be created", errno: failure)
        }
        // link, not rename: a store another receiver made first is theirs to keep.
        if link(temporary, path) != 0, errno != EEXIST {
            let failure = errno
            unlink(temporary)
            throw SeenMessagesError(path: path, "cannot be created", errno: failure)
        }
        unlink(temporary)
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let folderFD = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderFD >= 0 {
            fsync(folderFD)
            close(folderFD)
        }
    }

    static func loadUInt64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * index) }
        return value
    }

    static func loadUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * index) }
        return value
    }

    static func storeUInt64(_ value: UInt64, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<8 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    static func storeUInt32(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }
}

/// Why the store of seen messages could not be used: its path, what failed, the system's
/// reason.
public struct SeenMessagesError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let errno: Int32?
    public let description: String

    init(path: String, _ what: String, errno: Int32? = nil) {
        self.path = path
        self.errno = errno
        description = "the store of seen messages \(path) \(what)" + (errno.map { ": " + String(cString: strerror($0)) } ?? "")
    }
}

/// A pthread mutex: the store's lock among this process's threads (`flock` is held per
/// open file, so it does not keep them apart).
final class ThreadLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// SipHash-2-4 (Aumasson and Bernstein): a keyed 64-bit hash. With a key only the store
/// knows, nobody can choose messages that crowd one bucket or share a fingerprint.
enum SipHash {
    static func hash(_ bytes: [UInt8], _ k0: UInt64, _ k1: UInt64) -> UInt64 {
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ k0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ k1
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        func round() {
            v0 &+= v1
            v1 = (v1 << 13) | (v1 >> 51)
            v1 ^= v0
            v0 = (v0 << 32) | (v0 >> 32)
            v2 &+= v3
            v3 = (v3 << 16) | (v3 >> 48)
            v3 ^= v2
            v0 &+= v3
            v3 = (v3 << 21) | (v3 >> 43)
            v3 ^= v0
            v2 &+= v1
            v1 = (v1 << 17) | (v1 >> 47)
            v1 ^= v2
            v2 = (v2 << 32) | (v2 >> 32)
        }
        let whole = bytes.count / 8 * 8
        var index = 0
        while index < whole {
            var word: UInt64 = 0
            for byte in 0..<8 { word |= UInt64(bytes[index + byte]) << (8 * byte) }
            v3 ^= word
            round()
            round()
            v0 ^= word
            index += 8
        }
        var last = UInt64(truncatingIfNeeded: bytes.count) << 56
        for byte in 0..<(bytes.count - whole) { last |= UInt64(bytes[whole + byte]) << (8 * byte) }
        v3 ^= last
        round()
        round()
        v0 ^= last
        v2 ^= 0xff
        for _ in 0..<4 { round() }
        return v0 ^ v1 ^ v2 ^ v3
    }
}
