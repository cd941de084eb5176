internal import CNGHTTP2

#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking TCP socket listening on a numeric address.
enum ListeningSocket {
    /// Binds `host` (an IPv4 or IPv6 literal, or `localhost`) and starts listening.
    /// Names other than `localhost` are refused rather than resolved: a static binary has no
    /// resolver of its own, and a test endpoint's address should be exact.
    static func bind(host: String, port: Int) throws(HTTP2ServerError) -> (descriptor: Int32, port: Int) {
        guard (0...65_535).contains(port) else { throw HTTP2ServerError(.address, "port \(port) is out of range (0 to 65535)") }
        let literal = host == "localhost" ? "127.0.0.1" : host
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: Int32
        func store<Address>(_ address: Address) -> socklen_t {
            withUnsafeBytes(of: address) { bytes in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            }
            return socklen_t(MemoryLayout<Address>.size)
        }
        var address4 = sockaddr_in()
        var address6 = sockaddr_in6()
        if inet_pton(AF_INET, literal, &address4.sin_addr) == 1 {
            family = AF_INET
            address4.sin_family = sa_family_t(AF_INET)
            address4.sin_port = in_port_t(UInt16(port).bigEndian)
            length = store(address4)
        } else if inet_pton(AF_INET6, literal.trimmingBrackets, &address6.sin6_addr) == 1 {
            family = AF_INET6
            address6.sin6_family = sa_family_t(AF_INET6)
            address6.sin6_port = in_port_t(UInt16(port).bigEndian)
            length = store(address6)
        } else {
            throw HTTP2ServerError(.address, "'\(host)' is not an IP address (use 127.0.0.1, ::1, 0.0.0.0 or localhost)")
        }
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HTTP2ServerError(.address, "cannot make a socket: \(String(cString: strerror(errno)))", errno: errno) }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 1_024) == 0 else {
            let cause = errno
            close(descriptor)
            throw HTTP2ServerError(.address, "cannot listen on \(host):\(port): \(String(cString: strerror(cause)))", errno: cause)
        }
        var actual = sockaddr_storage()
        var actualLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
        }
        let actualPort = withUnsafeBytes(of: actual) { bytes -> UInt16 in
            // sin_port and sin6_port sit at the same offset, right after the family.
            UInt16(bigEndian: bytes.load(fromByteOffset: 2, as: UInt16.self))
        }
        return (descriptor, Int(actualPort))
    }
}

extension String {
    fileprivate var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
