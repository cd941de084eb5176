/// How a client connection gets to the point of speaking HTTP/2, as decisions on values: what
/// name is looked up, in which order its addresses are tried, what the proxy is asked, what
/// its answer means, and whether TLS agreed on h2. `ClientConnection` does the I/O between
/// the stages; every judgment is here, testable without a socket.
struct Connector: Sendable {
    let endpoint: ClientEndpoint
    let proxy: ClientProxy?

    init(endpoint: ClientEndpoint, proxy: ClientProxy?) {
        self.endpoint = endpoint
        self.proxy = proxy
    }

    /// The name looked up and connected to: the proxy's when there is one, else the endpoint's.
    var target: (host: String, port: Int) { proxy.map { ($0.host, $0.port) } ?? (endpoint.host, endpoint.port) }

    /// Why the lookup found nothing, in words.
    func lookupFailed(_ problem: ResolveFailure) -> String {
        "cannot find \(proxy.map { "the proxy \($0.host)" } ?? endpoint.host) (\(problem))"
    }

    /// The addresses in the order to try them: from the one after the `shift` that took the
    /// connection and then made no progress before, so a first address that accepts and never
    /// answers does not take every attempt.
    func order<Address>(_ addresses: [Address], shift: Int) -> [Address] {
        guard !addresses.isEmpty else { return [] }
        let start = shift % addresses.count
        return Array(addresses[start...] + addresses[..<start])
    }

    /// The CONNECT request for the proxy, when there is one.
    var tunnelRequest: [UInt8]? {
        guard let proxy else { return nil }
        let target = endpoint.authorityWithPort
        var request = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
        if let credentials = proxy.credentials { request += "Proxy-Authorization: Basic \(credentials)\r\n" }
        return Array((request + "\r\n").utf8)
    }

    /// What the proxy's answer so far means.
    enum TunnelReply: Equatable {
        /// Not all of its head yet.
        case incomplete
        /// 200: the tunnel stands; `early` are the server's first bytes, read with the answer.
        case open(early: [UInt8])
        /// No tunnel, and why.
        case refused(String, HTTP2Client.EndpointProblem)
    }

    /// The most an answer's head may take before it cannot be HTTP.
    static let tunnelReplyLimit = 16_384

    /// Judges the proxy's answer, `received` being every byte it sent so far.
    func tunnelReply(_ received: [UInt8]) -> TunnelReply {
        let proxy = proxy.map(\.description) ?? "?"
        guard let headEnd = received.firstRange(of: [13, 10, 13, 10]) else {
            return received.count > Self.tunnelReplyLimit
                ? .refused("the proxy \(proxy) sent an answer too long to be HTTP", .unreachable) : .incomplete
        }
        // Bytes, not Characters: "\r\n" is one Character in Swift.
        let statusLine = String(decoding: received[..<headEnd.lowerBound].prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1] == "200" else {
            let shown = String(statusLine.filter { $0.isASCII && !$0.isNewline }.prefix(120))
            let hint = parts.count >= 2 && parts[1] == "407" ? "; give the user and password in the proxy URL (http://user:password@host:port)" : ""
            return .refused(
                "the proxy \(proxy) refused to tunnel to \(endpoint.authorityWithPort): \(shown.isEmpty ? "no HTTP answer" : shown)\(hint)",
                parts.count >= 2 && parts[0].hasPrefix("HTTP/1.") ? .proxyRefused : .unreachable)
        }
        return .open(early: Array(received[headEnd.upperBound...]))
    }

    /// What TLS agreed on, and what the connection speaks.
    enum Spoken: Equatable {
        case http2
        case http1
        /// Neither: why the connection cannot be used.
        case refused(String)
    }

    /// h2 when TLS agreed on it. Otherwise, when the caller allows HTTP/1.1, a server that chose
    /// http/1.1 or no protocol at all (one that knows no ALPN speaks HTTP/1.1) gets HTTP/1.1;
    /// else it is refused. APNs speaks HTTP/2 only: a server that will not is the wrong server,
    /// and the provider token must not go to it over anything else.
    func checkProtocol(_ negotiated: String?, allowsHTTP1: Bool = false) -> Spoken {
        if negotiated == "h2" { return .http2 }
        if allowsHTTP1, negotiated == nil || negotiated == "http/1.1" { return .http1 }
        return .refused(negotiated.map { "it chose \($0) instead of h2 in ALPN" } ?? "it answered TLS without ALPN h2")
    }
}
