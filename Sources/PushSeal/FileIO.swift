import SealCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin, checked wrappers over the POSIX read and write calls, retrying interruptions and
/// short transfers.
package enum FileIO {
    /// The text of `errno`, for messages.
    package static func lastError() -> String {
        String(cString: strerror(errno))
    }

    /// A permission mode as `chmod` takes it, for messages: `0644`.
    package static func modeText(_ mode: mode_t) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Reads the file at `path` to its end, within `bound`; the failure names the file.
    package static func readFile(_ path: String, bound: InputBound) throws(FileIOFailure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw FileIOFailure(code: code, message: "cannot read \(path): \(String(cString: strerror(code)))")
        }
        defer { close(descriptor) }
        do {
            return try readAll(descriptor, bound: bound)
        } catch {
            throw FileIOFailure(code: error.code, message: "cannot read \(path): \(error.message)")
        }
    }

    /// Reads an open descriptor to its end, but never more than `bound` bytes: past it,
    /// reading stops and the failure names the bound and what it is for (`what`), so
    /// `/dev/zero` or a runaway file costs at most `bound` bytes of memory.
    package static func readAll(_ descriptor: Int32, bound: InputBound) throws(FileIOFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(64 * 1024, bound.bytes + 1))
        while true {
            let room = bound.bytes + 1 - bytes.count
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, min($0.count, room)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileIOFailure(code: errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
            guard bytes.count <= bound.bytes else { throw FileIOFailure(message: "more than \(bound.limitText); stopped reading there") }
        }
    }

    /// Writes all of `bytes`, retrying short writes.
    package static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) throws(FileIOFailure) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileIOFailure(code: errno)
            }
            offset += count
        }
    }

    /// The calls `replace` makes once its temporary file is open, as values, so a test can
    /// make `fsync` or `close` fail the way a full disk or a network file system does.
    package struct FileCalls: Sendable {
        package var write: @Sendable (Int32, UnsafeRawPointer, Int) -> Int
        package var fsync: @Sendable (Int32) -> Int32
        package var close: @Sendable (Int32) -> Int32

        package init(
            write: @escaping @Sendable (Int32, UnsafeRawPointer, Int) -> Int,
            fsync: @escaping @Sendable (Int32) -> Int32, close: @escaping @Sendable (Int32) -> Int32
        ) {
            self.write = write
            self.fsync = fsync
            self.close = close
        }

        package static let system = FileCalls(write: systemWrite, fsync: systemFsync, close: systemClose)
    }

    /// Replaces the file at `path` with `bytes` (mode 0600) so that a reader sees the old
    /// file or the new one, never part of either, and the new one survives a crash: written
    /// to a temporary beside it, synced, renamed over it, and the folder synced. Every
    /// failure keeps its errno; `nothingCreated` tells the one where no file was made.
    package static func replace(_ path: String, with bytes: [UInt8], calls: FileCalls = .system) throws(FileIOFailure) {
        let temporary = "\(path).tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw FileIOFailure(code: errno, message: "cannot write \(temporary): \(lastError())", nothingCreated: true)
        }
        // Closed exactly once, whatever fails: after a failed `close` the number is no longer
        // ours, and closing it again could close another thread's newly opened file.
        var isOpen = true
        do throws(FileIOFailure) {
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { calls.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw FileIOFailure(code: errno)
                }
                offset += count
            }
            guard calls.fsync(descriptor) == 0 else { throw FileIOFailure(code: errno) }
            isOpen = false
            guard calls.close(descriptor) == 0 else { throw FileIOFailure(code: errno) }
        } catch {
            if isOpen { _ = calls.close(descriptor) }
            unlink(temporary)
            throw FileIOFailure(code: error.code, message: "cannot write \(temporary): \(error.message)")
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw FileIOFailure(code: code, message: "cannot replace \(path): \(String(cString: strerror(code)))")
        }
        let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let folderDescriptor = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderDescriptor >= 0 else { throw FileIOFailure(code: errno, message: "cannot sync \(folder): \(lastError())") }
        defer { close(folderDescriptor) }
        guard fsync(folderDescriptor) == 0 else { throw FileIOFailure(code: errno, message: "cannot sync \(folder): \(lastError())") }
    }
}

// The system's own calls, named apart from `FileCalls`' members that would shadow them.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, bytes, count) }
private func systemFsync(_ descriptor: Int32) -> Int32 { fsync(descriptor) }
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }

/// A failed system call, with the OS's own words.
/// How much a read of a file or stdin may take: what its contents can hold at most, and the
/// words that say so when the input is larger.
package struct InputBound: Sendable {
    package let bytes: Int
    /// What the input is, for the message: "a payload input".
    package let what: String
    /// Why no such input can be larger.
    package let because: String

    package init(_ bytes: Int, _ what: String, because: String) {
        self.bytes = bytes
        self.what = what
        self.because = because
    }

    /// What the bound is and why, for messages: "the 65536 bytes a payload input can be at most (…)".
    package var limitText: String { "the \(bytes) bytes \(what) can be at most (\(because))" }

    /// One receiver input: an APNs payload (at most 5,120 bytes) as a file holds it, white space
    /// and all, or wrapped with its request headers.
    package static let payloadInput = InputBound(
        64 * 1024, "a payload input", because: "a payload is at most 5120 bytes, 64 KiB with its headers and white space")
    /// One JSON line of a batch or a stream: an alert or a payload that fits a payload once
    /// sealed, each byte written at worst as a six-byte escape.
    package static let jsonLine = InputBound(
        64 * 1024, "one line", because: "what a line holds must fit a 5120-byte payload, at most six bytes per byte as JSON escapes")
    /// A keyring: some 200 bytes a key.
    package static let keyring = InputBound(16 * 1024 * 1024, "a keyring", because: "some 80,000 keys")
    /// Key shares to import, one per line.
    package static let keyShares = InputBound(
        1024 * 1024, "a file of key shares", because: "a share is one line of at most 200 bytes")
    /// A PEM file: a key, a certificate chain or a bundle of trusted certificates.
    package static let pem = InputBound(
        8 * 1024 * 1024, "a key or certificate file", because: "a bundle of every public CA is under 1 MiB")
    /// A small file of its own: a passphrase, a cached token, a companion's output.
    package static let small = InputBound(64 * 1024, "this file", because: "it holds one short value")
}

package struct FileIOFailure: ChainedError {
    /// The `errno` value, when the failure came from the system.
    package let code: Int32?
    package let message: String
    /// True when the call failed before making anything (the file could not be created).
    package let nothingCreated: Bool
    package var description: String { message }
    package var reason: String { message }
    /// The `errno`, as the chain's root.
    package var underlying: (any Error & Sendable)? { code.map { SystemCallFailure(errno: $0) } }

    package init(message: String) {
        self.code = nil
        self.message = message
        self.nothingCreated = false
    }

    package init(code: Int32?, message: String, nothingCreated: Bool = false) {
        self.code = code
        self.message = message
        self.nothingCreated = nothingCreated
    }

    package init(code: Int32) {
        self.code = code
        self.message = String(cString: strerror(code))
        self.nothingCreated = false
    }
}
