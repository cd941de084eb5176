#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin, checked wrappers over the POSIX read and write calls, retrying interruptions and
/// short transfers.
package enum FileIO {
    /// The text of `errno`, for messages.
    static func lastError() -> String {
        String(cString: strerror(errno))
    }

    /// A permission mode as `chmod` takes it, for messages: `0644`.
    package static func modeText(_ mode: mode_t) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Reads everything from an open descriptor.
    package static func readAll(_ descriptor: Int32) throws(FileIOFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileIOFailure(code: errno)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
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

    /// Replaces the file at `path` with `bytes` (mode 0600) so that a reader sees the old
    /// file or the new one, never part of either, and the new one survives a crash: written
    /// to a temporary beside it, synced, renamed over it, and the folder synced.
    package static func replace(_ path: String, with bytes: [UInt8]) throws(FileIOFailure) {
        let temporary = "\(path).tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        // Only this failure carries the errno: nothing was created.
        guard descriptor >= 0 else { throw FileIOFailure(code: errno, message: "cannot write \(temporary): \(lastError())") }
        do throws(FileIOFailure) {
            try writeAll(descriptor, bytes)
            guard fsync(descriptor) == 0 else { throw FileIOFailure(message: lastError()) }
            guard close(descriptor) == 0 else { throw FileIOFailure(message: lastError()) }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw FileIOFailure(message: "cannot write \(temporary): \(error.message)")
        }
        guard rename(temporary, path) == 0 else {
            let message = lastError()
            unlink(temporary)
            throw FileIOFailure(message: "cannot replace \(path): \(message)")
        }
        let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let folderDescriptor = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderDescriptor >= 0 else { throw FileIOFailure(message: "cannot sync \(folder): \(lastError())") }
        defer { close(folderDescriptor) }
        guard fsync(folderDescriptor) == 0 else { throw FileIOFailure(message: "cannot sync \(folder): \(lastError())") }
    }
}

/// A failed system call, with the OS's own words.
package struct FileIOFailure: Error, Sendable, CustomStringConvertible {
    /// The `errno` value, when the failure came from the system.
    package let code: Int32?
    package let message: String
    package var description: String { message }

    package init(message: String) {
        self.code = nil
        self.message = message
    }

    package init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    package init(code: Int32) {
        self.code = code
        self.message = String(cString: strerror(code))
    }
}
