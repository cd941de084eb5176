internal import CNGHTTP2

#if canImport(Glibc)
import Glibc
#endif

/// One address from getaddrinfo, kept as bytes so it outlives the lookup.
struct SocketAddress: CustomStringConvertible {
    let family: Int32
    let bytes: [UInt8]

    static func resolve(host: String, port: Int) -> Result<[SocketAddress], ResolveFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &found)
        guard rc == 0 else { return .failure(ResolveFailure(words: String(cString: gai_strerror(rc)))) }
        defer { freeaddrinfo(found) }
        var addresses: [SocketAddress] = []
        var next = found
        while let entry = next {
            if let address = entry.pointee.ai_addr {
                addresses.append(
                    SocketAddress(
                        family: entry.pointee.ai_family,
                        bytes: Array(UnsafeRawBufferPointer(start: address, count: Int(entry.pointee.ai_addrlen)))))
            }
            next = entry.pointee.ai_next
        }
        return addresses.isEmpty ? .failure(ResolveFailure(words: "no address")) : .success(addresses)
    }

    var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        return bytes.withUnsafeBytes { raw -> String in
            let port: UInt16
            if family == AF_INET6 {
                var address = raw.load(as: sockaddr_in6.self)
                inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
                port = UInt16(bigEndian: address.sin6_port)
            } else {
                var address = raw.load(as: sockaddr_in.self)
                inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
                port = UInt16(bigEndian: address.sin_port)
            }
            let shown = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return family == AF_INET6 ? "[\(shown)]:\(port)" : "\(shown):\(port)"
        }
    }
}

struct ResolveFailure: Error, CustomStringConvertible {
    let words: String
    var description: String { words }
}
