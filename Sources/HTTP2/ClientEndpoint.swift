#if canImport(Glibc)
import SealCrypto
import Glibc
#endif

/// Where a client connects: `https://host[:port]` (TLS, ALPN h2) or `http://host[:port]`
/// (HTTP/2 with prior knowledge). IPv6 literals are written in brackets, as in URLs.
package struct ClientEndpoint: Sendable, Equatable, CustomStringConvertible {
    package let secure: Bool
    /// The host without brackets: a name, an IPv4 or an IPv6 literal.
    package let host: String
    package let port: Int

    package init(url: String) throws(HTTP2ClientError) {
        let secure: Bool
        let rest: Substring
        if url.hasPrefix("https://") {
            (secure, rest) = (true, url.dropFirst(8))
        } else if url.hasPrefix("http://") {
            (secure, rest) = (false, url.dropFirst(7))
        } else {
            throw HTTP2ClientError("\(url) is not an https:// or http:// URL")
        }
        let authority = rest.prefix { $0 != "/" }
        guard rest.dropFirst(authority.count).allSatisfy({ $0 == "/" }) else {
            throw HTTP2ClientError("\(url) has a path; give the server alone (https://host[:port])")
        }
        guard !authority.contains("@") else { throw HTTP2ClientError("\(url) has user information; the server takes none") }
        let (host, port) = try Self.split(authority, defaultPort: secure ? 443 : 80, in: url)
        self.secure = secure
        self.host = host
        self.port = port
    }

    /// The `:authority` of requests: the host (in brackets when IPv6) and a port other than the scheme's.
    package var authority: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? shown : "\(shown):\(port)"
    }

    package var description: String { (secure ? "https://" : "http://") + authority }

    /// True for an address of this machine: 127.0.0.0/8, ::1 or the name localhost.
    package var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.") && IPAddressText.isIPv4(host)
    }

    /// Splits `host[:port]` or `[v6][:port]`.
    static func split(_ authority: Substring, defaultPort: Int, in url: String) throws(HTTP2ClientError) -> (String, Int) {
        var host = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw HTTP2ClientError("\(url) has an unclosed [ in its host") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw HTTP2ClientError("\(url) has text after its IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            // Two colons outside brackets is an IPv6 address written bare: which colon ends it
            // (`::1` or `::` and port 1?) cannot be told, as RFC 3986 says.
            guard authority.firstIndex(of: ":") == colon else {
                throw HTTP2ClientError("\(url) has an IPv6 address outside brackets; write it as [\(authority)] (with :PORT after the ])")
            }
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { throw HTTP2ClientError("\(url) has no host") }
        var port = defaultPort
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                throw HTTP2ClientError("\(url) has a port that is not 1 to 65535")
            }
            port = value
        }
        return (String(host), port)
    }
}

/// An HTTP proxy that tunnels to the endpoint with `CONNECT`, as `HTTPS_PROXY` names one:
/// `http://[user:password@]host[:port]` (port 1080 when none, as curl assumes).
package struct ClientProxy: Sendable, Equatable, CustomStringConvertible {
    package let host: String
    package let port: Int
    /// `Proxy-Authorization: Basic …` from the URL's user information, percent-decoded.
    let credentials: String?

    package init(url given: String) throws(HTTP2ClientError) {
        // A bare host:port is what many set HTTPS_PROXY to; it means http://.
        let url = given.contains("://") ? given : "http://" + given
        guard url.hasPrefix("http://") else {
            throw HTTP2ClientError("the proxy \(Self.hidingPassword(given)) is not an http:// proxy (TLS to the proxy itself is not supported)")
        }
        var authority = url.dropFirst(7).prefix { $0 != "/" }
        var credentials: String?
        if let at = authority.lastIndex(of: "@") {
            let user = authority[..<at]
            authority = authority[authority.index(after: at)...]
            guard let decoded = Self.percentDecoded(user) else {
                throw HTTP2ClientError("the proxy \(Self.hidingPassword(given)) has badly escaped user information")
            }
            credentials = Self.base64(Array(decoded.utf8))
        }
        let (host, port) = try ClientEndpoint.split(authority, defaultPort: 1_080, in: Self.hidingPassword(given))
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    /// The proxy as it may be shown: never its password.
    package var description: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return "http://\(credentials == nil ? "" : "(user)@")\(shown):\(port)"
    }

    /// The proxy the environment names for `endpoint`: `https_proxy`/`HTTPS_PROXY` for TLS,
    /// `http_proxy` for h2c (not `HTTP_PROXY`, which a CGI request can set, as curl reasons),
    /// unless `no_proxy`/`NO_PROXY` excludes the host. Nil when none applies.
    package static func fromEnvironment(for endpoint: ClientEndpoint) throws(HTTP2ClientError) -> ClientProxy? {
        let names = endpoint.secure ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]
        guard let value = names.lazy.compactMap(environment).first(where: { !$0.isEmpty }) else { return nil }
        let exclusions = ["no_proxy", "NO_PROXY"].lazy.compactMap(environment).first ?? ""
        if excludes(exclusions, host: endpoint.host) { return nil }
        return try ClientProxy(url: value)
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// NO_PROXY as curl reads it, comma separated: `*` for every host; a name matches the
    /// host and its subdomains (a leading dot optional); an IP address matches that address
    /// alone, and an address with a prefix length (`127.0.0.0/8`, `fd00::/8`) the addresses
    /// in its range. An address host is never matched as a name's suffix: `0.0.1` is not
    /// 127.0.0.1.
    static func excludes(_ list: String, host: String) -> Bool {
        let host = host.lowercased()
        let hostAddress = IPAddressText.bytes(host)
        for entry in list.split(separator: ",") {
            var name = entry.trimmingSpaces().lowercased()
            if name == "*" { return true }
            if name.hasPrefix("[") { name = String(name.dropFirst().prefix { $0 != "]" }) }
            if name.hasPrefix(".") { name.removeFirst() }
            guard !name.isEmpty else { continue }
            if let hostAddress {
                if IPAddressText.range(name, contains: hostAddress) { return true }
            } else if host == name || host.hasSuffix("." + name) {
                return true
            }
        }
        return false
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hidingPassword(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@") else { return url }
        let scheme = url.hasPrefix("http://") ? "http://" : url.hasPrefix("https://") ? "https://" : ""
        return scheme + "(user)" + String(url[at...])
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Whether a host is an address rather than a name: for choosing SNI (names only) and the
/// certificate check (DNS names or IP addresses).
enum IPAddressText {
    static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }

    static func isAddress(_ text: String) -> Bool { isIPv4(text) || isIPv6(text) }

    /// The address's bytes (4 for IPv4, 16 for IPv6), or nil for a name.
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// Whether `entry` (an address, or an address/prefix length) holds `address`.
    static func range(_ entry: String, contains address: [UInt8]) -> Bool {
        let parts = entry.split(separator: "/", maxSplits: 1)
        guard let network = bytes(String(parts[0])), network.count == address.count else { return false }
        var bits = network.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length) else { return false }
            bits = length
        }
        for index in 0..<network.count {
            let take = min(8, max(0, bits - index * 8))
            let mask: UInt8 = take == 0 ? 0 : ~UInt8(0) << (8 - take)
            if network[index] & mask != address[index] & mask { return false }
        }
        return true
    }
}

/// Why a client could not be set up (a bad endpoint or proxy URL, a trust file it cannot use).
package struct HTTP2ClientError: ChainedError {
    package let message: String
    package var description: String { message }
    package var reason: String { message }
    /// The failure beneath: the system's (`errno`), OpenSSL's, or a file's.
    package let underlying: (any Error & Sendable)?

    package init(_ message: String, underlying: (any Error & Sendable)? = nil) {
        self.message = message
        self.underlying = underlying
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
