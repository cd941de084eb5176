import Testing

@testable import HTTP2

/// The client's parts that need no socket: endpoints, proxies and `NO_PROXY`, the request
/// queue that resent requests rejoin at the front.
@Suite("HTTP/2 client: its parts without a socket")
struct ClientPartsTests {
    @Test(arguments: [
        ("https://api.push.apple.com", true, "api.push.apple.com", 443, "https://api.push.apple.com"),
        ("http://127.0.0.1:8080/", false, "127.0.0.1", 8080, "http://127.0.0.1:8080"),
        ("https://[::1]:8443", true, "::1", 8443, "https://[::1]:8443")
    ])
    func endpointsAreReadAsGiven(url: String, secure: Bool, host: String, port: Int, shown: String) throws {
        let endpoint = try ClientEndpoint(url: url)
        #expect(endpoint.secure == secure && endpoint.host == host && endpoint.port == port && endpoint.description == shown)
    }

    @Test func anotherOriginKeepsEverythingButItsEndpointAndItsOwnProxy() throws {
        let proxy = try ClientProxy(url: "http://127.0.0.1:3128")
        var settings = HTTP2Client.Settings(
            endpoint: try ClientEndpoint(url: "https://api.push.apple.com"), trustFile: "/tmp/ca.pem", proxy: proxy, connections: 3,
            maximumStreams: 7, timeout: .seconds(5))
        let given = try settings.reaching("https://push.example.net:8443")
        #expect(given.endpoint.description == "https://push.example.net:8443")
        #expect(given.proxy == proxy && given.trustFile == "/tmp/ca.pem" && given.connections == 3 && given.maximumStreams == 7 && given.timeout == .seconds(5))
        // A proxy from the environment is chosen again for the new host, NO_PROXY and all.
        settings.proxyFollowsEnvironment = true
        let followed = try settings.reaching("http://127.0.0.1:9")
        #expect(followed.proxy == (try ClientProxy.fromEnvironment(for: followed.endpoint)))
        #expect(throws: HTTP2ClientError.self) { try settings.reaching("ftp://push.example.net") }
    }

    @Test(arguments: [
        ("ftp://host", "is not an https:// or http:// URL"), ("https://host/3/device", "has a path"),
        ("https://user@host", "has user information"), ("https://host:0", "not 1 to 65535"),
        ("https://::1", "outside brackets"), ("https://[::1", "unclosed ["), ("https://", "has no host")
    ])
    func badEndpointsAreRefusedSayingWhy(url: String, words: String) {
        #expect {
            _ = try ClientEndpoint(url: url)
        } throws: { error in
            "\(error)".contains(words)
        }
    }

    @Test func loopbackHostsAreKnown() throws {
        #expect(try ClientEndpoint(url: "http://127.0.0.5").isLoopback && ClientEndpoint(url: "https://localhost").isLoopback)
        #expect(try !ClientEndpoint(url: "https://api.push.apple.com").isLoopback)
    }

    @Test func aProxyURLTakesPort1080WhenNoneIsGiven() throws {
        let proxy = try ClientProxy(url: "http://proxy.example")
        #expect(proxy.host == "proxy.example" && proxy.port == 1_080)
    }

    @Test(arguments: [
        ("*", "api.push.apple.com", true), ("apple.com", "api.push.apple.com", true), (".apple.com", "apple.com", true),
        ("pple.com", "api.push.apple.com", false), ("127.0.0.0/8", "127.0.0.1", true), ("0.0.1", "127.0.0.1", false),
        ("[::1]", "::1", true), ("example.com, localhost", "localhost", true)
    ])
    func noProxyIsReadAsCurlReadsIt(list: String, host: String, excluded: Bool) {
        #expect(ClientProxy.excludes(list, host: host) == excluded)
    }

    @Test func aResentRequestRejoinsTheQueueAtTheFront() {
        var queue = RequestQueue()
        for id in 0..<3 { queue.append(ClientRequest(request: request(id))) }
        let first = queue.popFirst()!
        queue.prepend(first)
        #expect((0..<3).compactMap { _ in queue.popFirst()?.request.id } == [0, 1, 2] && queue.isEmpty)
    }

    @Test func theQueueCompactsWithoutLosingOrder() {
        var queue = RequestQueue()
        for id in 0..<10_000 { queue.append(ClientRequest(request: request(id))) }
        var taken: [Int] = []
        for _ in 0..<6_000 { taken.append(queue.popFirst()!.request.id) }
        for id in 10_000..<10_010 { queue.append(ClientRequest(request: request(id))) }
        while let next = queue.popFirst() { taken.append(next.request.id) }
        #expect(taken == Array(0..<10_010))
    }

    @Test func durationsAreShownShort() {
        #expect(Duration.milliseconds(500).shortText == "500 ms" && Duration.seconds(10).shortText == "10 s")
        #expect(Duration.milliseconds(1_500).shortText == "1.5 s")
    }
}
