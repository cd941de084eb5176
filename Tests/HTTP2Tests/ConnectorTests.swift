import Testing

@testable import HTTP2

/// The client's connecting stages as decisions on values: no socket, no proxy, no server.
@Suite("HTTP/2 client: the connector's stages")
struct ConnectorTests {
    static let endpoint = try! ClientEndpoint(url: "https://api.push.apple.com")
    static let proxied = Connector(endpoint: endpoint, proxy: try! ClientProxy(url: "http://proxy.example:3128"))
    static let direct = Connector(endpoint: endpoint, proxy: nil)

    @Test func theProxyIsLookedUpWhenThereIsOne() {
        #expect(Self.proxied.target == ("proxy.example", 3_128))
        #expect(Self.direct.target == ("api.push.apple.com", 443))
        #expect(Self.proxied.lookupFailed(ResolveFailure(words: "no such host")) == "cannot find the proxy proxy.example (no such host)")
    }

    @Test func addressesAreTriedFromTheOneAfterThoseThatStalled() {
        #expect(Self.direct.order([1, 2, 3], shift: 0) == [1, 2, 3])
        #expect(Self.direct.order([1, 2, 3], shift: 4) == [2, 3, 1])
        #expect(Self.direct.order([Int](), shift: 2).isEmpty)
    }

    @Test func theProxyIsAskedForATunnelToTheEndpointWithItsPort() throws {
        let request = String(decoding: try #require(Self.proxied.tunnelRequest), as: UTF8.self)
        #expect(request == "CONNECT api.push.apple.com:443 HTTP/1.1\r\nHost: api.push.apple.com:443\r\n\r\n")
        #expect(Self.direct.tunnelRequest == nil)
        let withUser = Connector(endpoint: Self.endpoint, proxy: try ClientProxy(url: "http://me:secret@proxy.example"))
        #expect(String(decoding: withUser.tunnelRequest ?? [], as: UTF8.self).contains("Proxy-Authorization: Basic bWU6c2VjcmV0\r\n"))
    }

    @Test func aTunnelReplyIsJudgedWhenItsHeadIsWhole() {
        #expect(Self.proxied.tunnelReply(Array("HTTP/1.1 200 Connection".utf8)) == .incomplete)
        #expect(Self.proxied.tunnelReply(Array("HTTP/1.1 200 Connection established\r\n\r\nPRI".utf8)) == .open(early: Array("PRI".utf8)))
        guard case .refused(let words, .proxyRefused) = Self.proxied.tunnelReply(Array("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n".utf8))
        else {
            Issue.record("a 407 is the proxy's refusal")
            return
        }
        #expect(words.contains("407") && words.contains("give the user and password in the proxy URL"))
        guard case .refused(_, .unreachable) = Self.proxied.tunnelReply(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) else {
            Issue.record("an answer that is not HTTP is no proxy")
            return
        }
        #expect(Self.proxied.tunnelReply(Array(repeating: 0x61, count: Connector.tunnelReplyLimit + 1)) != .incomplete)
    }

    @Test func tlsMustAgreeOnH2() {
        #expect(Self.direct.checkProtocol("h2") == .http2)
        #expect(Self.direct.checkProtocol("http/1.1") == .refused("it chose http/1.1 instead of h2 in ALPN"))
        #expect(Self.direct.checkProtocol(nil) == .refused("it answered TLS without ALPN h2"))
    }

    /// Where the caller speaks HTTP/1.1 too (Web Push), a server that chose it, or no protocol
    /// at all, gets it; one that chose something else is still refused.
    @Test func http1WhenTheCallerAllowsIt() {
        #expect(Self.direct.checkProtocol("h2", allowsHTTP1: true) == .http2)
        #expect(Self.direct.checkProtocol("http/1.1", allowsHTTP1: true) == .http1)
        #expect(Self.direct.checkProtocol(nil, allowsHTTP1: true) == .http1)
        #expect(Self.direct.checkProtocol("spdy/3", allowsHTTP1: true) == .refused("it chose spdy/3 instead of h2 in ALPN"))
    }
}
