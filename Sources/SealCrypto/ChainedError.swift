internal import COpenSSL

#if canImport(Glibc)
import Glibc
#endif

/// What every error of pushseal's libraries is: a reason that states the facts for people,
/// and the failure underneath it when there was one (OpenSSL's error code, the system's
/// `errno`, or another library's error), so a caller or a bug report can follow the chain
/// down to what the system or a library said first.
public protocol ChainedError: Error, Sendable, CustomStringConvertible {
    /// A sentence for people; safe to print (never a key or plaintext byte).
    var reason: String { get }
    /// The failure beneath this one, or nil when pushseal's own checks found it.
    var underlying: (any Error & Sendable)? { get }
}

extension ChainedError {
    /// This error and every failure beneath it, outermost first.
    public var chain: [any Error & Sendable] {
        var chain: [any Error & Sendable] = [self]
        var next = underlying
        while let error = next, chain.count < 16 {
            chain.append(error)
            next = (error as? any ChainedError)?.underlying
        }
        return chain
    }

    /// The system's `errno` at the bottom of the chain, when a system call failed.
    package var systemErrno: Int32? {
        chain.lazy.compactMap { ($0 as? SystemCallFailure)?.errno }.first
    }
}

/// A system call that failed: its `errno` and the system's words for it.
public struct SystemCallFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let errno: Int32

    public init(errno: Int32) {
        self.errno = errno
    }

    public var description: String { String(cString: strerror(errno)) }
}

/// A failed OpenSSL call: the packed code `ERR_get_error` gave, and OpenSSL's words for it.
public struct OpenSSLFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: UInt

    public init(code: UInt) {
        self.code = code
    }

    public var description: String {
        ERR_reason_error_string(code).map { String(cString: $0) } ?? "OpenSSL error \(code)"
    }
}

extension OpenSSLFailure {
    /// This thread's oldest queued OpenSSL error, or nil when none is queued. The queue is
    /// emptied: an OpenSSL error belongs to the call that raised it, not to the next one.
    package static func takeQueued() -> OpenSSLFailure? {
        let code = ERR_get_error()
        ERR_clear_error()
        return code == 0 ? nil : OpenSSLFailure(code: code)
    }
}
