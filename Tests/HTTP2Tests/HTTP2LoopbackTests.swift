import Foundation
import Locking
import Testing

@testable import HTTP2

/// The project's HTTP/2 client against its own server, in one process over 127.0.0.1: what
/// each side promises, seen from the other.
@Suite("HTTP/2: client and server in one process")
struct HTTP2LoopbackTests {
    static let echo: HTTP2Server.Handler = { request in
        HTTP2Server.Response(
            status: 200, headers: [("x-path", request.path), ("x-method", request.method), ("x-length", String(request.bodyLength))],
            body: request.body)
    }

    @Test func aRequestInTheClearGetsItsAnswer() throws {
        let loopback = try Loopback(handler: Self.echo)
        let responses = try loopback.exchange([request(7, path: "/3/device/abc", body: Array("hello".utf8))])
        #expect(responses.count == 1)
        #expect(responses[0].id == 7 && responses[0].status == 200 && responses[0].failure == nil)
        #expect(responses[0].header("x-path") == "/3/device/abc" && responses[0].header("x-method") == "POST")
        #expect(responses[0].body == Array("hello".utf8))
    }

    @Test func aRequestOverTLSGetsItsAnswer() throws {
        let loopback = try Loopback(tls: true, handler: Self.echo)
        let responses = try loopback.exchange([request(1, body: [1, 2, 3])])
        #expect(responses.map(\.status) == [200] && responses[0].body == [1, 2, 3])
    }

    @Test func responsesCarryNoPseudoHeaders() throws {
        let loopback = try Loopback(handler: Self.echo)
        let response = try #require(try loopback.exchange([request(1)]).first)
        #expect(!response.headers.contains { $0.name.hasPrefix(":") })
    }

    @Test func requestHeadersReachTheHandler() throws {
        let seen = Locked<[(String, String)]>([])
        let loopback = try Loopback { request in
            seen.withLock { $0 = request.headers }
            return HTTP2Server.Response(status: 204)
        }
        _ = try loopback.exchange([request(1, headers: [HTTP2Client.Field("apns-topic", "com.example.app")])])
        #expect(seen.withLock { $0 }.contains { $0.0 == "apns-topic" && $0.1 == "com.example.app" })
    }

    @Test func everyOneOfAThousandRequestsGetsExactlyOneResponse() throws {
        let loopback = try Loopback(handler: Self.echo)
        let responses = try loopback.exchange((0..<1_000).map { request($0, path: "/\($0)") })
        #expect(responses.map(\.id) == Array(0..<1_000))
        #expect(responses.allSatisfy { $0.status == 200 && $0.header("x-path") == "/\($0.id)" })
    }

    @Test func aServersStreamLimitQueuesRatherThanFails() throws {
        var limits = HTTP2Server.Limits()
        limits.concurrentStreams = 3
        let loopback = try Loopback(limits: limits, handler: Self.echo)
        let responses = try loopback.exchange((0..<300).map { request($0) })
        #expect(responses.count == 300 && responses.allSatisfy { $0.status == 200 })
    }

    @Test func aClientsOwnStreamLimitHoldsAsWell() throws {
        let loopback = try Loopback(handler: Self.echo)
        let responses = try loopback.exchange((0..<100).map { request($0) }) { $0.maximumStreams = 1 }
        #expect(responses.count == 100 && responses.allSatisfy { $0.status == 200 })
    }

    @Test func aBodyLargerThanTheWindowArrivesWhole() throws {
        var limits = HTTP2Server.Limits()
        limits.bodyBytes = 1 << 20
        let loopback = try Loopback(limits: limits, handler: Self.echo)
        // Four times nghttp2's initial 64 KiB window: flow control has to open it on the way.
        let body = (0..<(256 * 1_024)).map { UInt8($0 % 251) }
        let response = try #require(try loopback.exchange([request(1, body: body)]).first)
        #expect(response.header("x-length") == String(body.count))
    }

    @Test func aBodyPastTheServersLimitIsCountedButNotKept() throws {
        var limits = HTTP2Server.Limits()
        limits.bodyBytes = 100
        let kept = Locked((0, 0))
        let loopback = try Loopback(limits: limits) { request in
            kept.withLock { $0 = (request.body.count, request.bodyLength) }
            return HTTP2Server.Response(status: 413)
        }
        let response = try #require(try loopback.exchange([request(1, body: Array(repeating: 7, count: 5_000))]).first)
        #expect(response.status == 413)
        #expect(kept.withLock { $0 } == (100, 5_000))
    }

    @Test func aLargeResponseIsReadAndTheConnectionStaysUsable() throws {
        let loopback = try Loopback { request in
            HTTP2Server.Response(status: 200, body: request.path == "/large" ? Array(repeating: 0x61, count: 512 * 1_024) : [])
        }
        let responses = try loopback.exchange([request(1, path: "/large"), request(2, path: "/small")]) { $0.maximumStreams = 1 }
        #expect(responses.map(\.status) == [200, 200])
        #expect(!responses[0].body.isEmpty && responses[0].body.allSatisfy { $0 == 0x61 })
    }

    @Test func headersPastTheLimitReachTheHandlerMarkedSo() throws {
        var limits = HTTP2Server.Limits()
        limits.headerBytes = 256
        let endings = Locked<[HTTP2Server.Request.Ending]>([])
        let loopback = try Loopback(limits: limits) { request in
            endings.withLock { $0.append(request.ending) }
            return HTTP2Server.Response(status: request.ending == .headersTooLarge ? 431 : 200)
        }
        let responses = try loopback.exchange([request(1, headers: [HTTP2Client.Field("x-big", String(repeating: "b", count: 400))])])
        #expect(responses.map(\.status) == [431] && endings.withLock { $0 } == [.headersTooLarge])
    }

    /// Far past the limit (four times it) the headers are a decompression bomb: the
    /// connection ends, that request's outcome is unknown, and the next goes on another.
    @Test func headersFarPastTheLimitEndTheConnectionNotTheClient() throws {
        var limits = HTTP2Server.Limits()
        limits.headerBytes = 256
        let loopback = try Loopback(limits: limits, handler: Self.echo)
        let responses = try loopback.exchange([
            request(1), request(2, headers: [HTTP2Client.Field("x-big", String(repeating: "b", count: 2_000))]), request(3)
        ]) { $0.maximumStreams = 1 }
        #expect(responses.map(\.status) == [200, 0, 200])
        #expect(responses[1].failure?.kind == .unknownOutcome, "\(String(describing: responses[1].failure))")
    }

    @Test func aHandlerThatAnswersNothingGives500() throws {
        let loopback = try Loopback { _ in nil }
        #expect(try loopback.exchange([request(1)]).map(\.status) == [500])
    }

    /// Four connections asked for: every request is answered, no more than four carry them,
    /// and each one's end is reported. How many of the four carry requests is the client's
    /// choice of the moment (it opens another only while requests wait, and a connection's
    /// name lookup runs on Dispatch's threads), so the test does not count on a spread.
    @Test func manyConnectionsAnswerEveryRequestAndEachEndIsReported() throws {
        let seen = Locked<Set<Int>>([])
        let ended = Locked<Set<Int>>([])
        var limits = HTTP2Server.Limits()
        limits.concurrentStreams = 1
        let loopback = try Loopback(
            limits: limits, connectionEnded: { number in ended.withLock { _ = $0.insert(number) } },
            handler: { request in
                seen.withLock { _ = $0.insert(request.connection) }
                return HTTP2Server.Response(status: 200)
            })
        let responses = try loopback.exchange((0..<400).map { request($0) }) {
            $0.connections = 4
            $0.maximumStreams = 10
        }
        #expect(responses.count == 400 && responses.allSatisfy { $0.status == 200 })
        #expect((1...4).contains(seen.withLock { $0.count }), "at most the four connections asked for carried the requests")
        let allEnded = eventually { seen.withLock { $0 }.isSubset(of: ended.withLock { $0 }) }
        #expect(allEnded, "every connection's end is reported once the client closes")
        #expect(ended.withLock { $0.count } <= 4)
    }

    @Test func aStreamWithNoAnswerInTimeHasAnUnknownOutcome() throws {
        let release = DispatchSemaphore(value: 0)
        let loopback = try Loopback { request in
            // Holds the loop thread past the client's timeout, as a stalled server would.
            if request.path == "/slow" { _ = release.wait(timeout: .now() + 2) }
            return HTTP2Server.Response(status: 200)
        }
        let responses = try loopback.exchange([request(1, path: "/slow")]) { $0.timeout = .milliseconds(300) }
        release.signal()
        #expect(responses.count == 1 && responses[0].status == 0)
        #expect(responses[0].failure?.kind == .unknownOutcome, "\(String(describing: responses[0].failure))")
    }

    @Test func aStopAnswersWhatWasNeverSentAsNotSent() throws {
        let loopback = try Loopback(handler: Self.echo)
        let responses = try Loopback.exchange(
            (0..<50).map { request($0) }, settings: try loopback.settings { $0.endpoint = try! ClientEndpoint(url: "http://127.0.0.1:\(closedPort())") },
            beforeFinish: { $0.stop(grace: .milliseconds(100)) })
        #expect(responses.count == 50, "every request is answered, sent or not")
        #expect(responses.allSatisfy { $0.failure != nil && $0.status == 0 })
    }

    @Test func aPortWithNothingListeningIsUnreachableForEveryRequest() throws {
        let settings = HTTP2Client.Settings(
            endpoint: try ClientEndpoint(url: "http://127.0.0.1:\(closedPort())"), connectTimeout: .seconds(1), connectAttempts: 2)
        let responses = try Loopback.exchange((0..<5).map { request($0) }, settings: settings)
        #expect(responses.count == 5 && responses.allSatisfy { $0.failure?.kind == .endpoint(.unreachable) })
    }

    @Test func aCertificateNotTrustedFailsEveryRequestAsUntrusted() throws {
        let loopback = try Loopback(tls: true, handler: Self.echo)
        let responses = try loopback.exchange((0..<3).map { request($0) }) { $0.trustFile = nil }
        #expect(responses.count == 3 && responses.allSatisfy { $0.failure?.kind == .endpoint(.untrusted) }, "\(responses.map(\.failure))")
    }

    @Test func aTLSClientToAServerInTheClearIsNotHTTP2OrUnreachable() throws {
        let loopback = try Loopback(handler: Self.echo)
        let settings = try loopback.settings { $0.endpoint = try! ClientEndpoint(url: "https://127.0.0.1:\(loopback.server.port)") }
        let responses = try Loopback.exchange([request(1)], settings: settings)
        #expect(responses.count == 1 && responses[0].status == 0)
        if case .endpoint = responses[0].failure?.kind {} else { Issue.record("an endpoint failure, not \(String(describing: responses[0].failure))") }
    }

    @Test func aStoppedServerAnswersWhatItHadAndTakesNoMore() throws {
        let loopback = try Loopback(handler: Self.echo)
        #expect(try loopback.exchange([request(1)]).map(\.status) == [200])
        loopback.server.stop()
        loopback.server.wait()
        let after = try loopback.exchange([request(2)]) { $0.connectAttempts = 1 }
        #expect(after.count == 1 && after[0].status == 0 && after[0].failure != nil)
    }

    @Test func requestsGoThroughAConnectProxy() throws {
        let loopback = try Loopback(tls: true, handler: Self.echo)
        let proxy = try ConnectProxy()
        let responses = try loopback.exchange((0..<10).map { request($0) }) { $0.proxy = try! ClientProxy(url: proxy.url) }
        #expect(responses.count == 10 && responses.allSatisfy { $0.status == 200 })
        #expect(proxy.asked.withLock { $0 }.allSatisfy { $0 == "CONNECT 127.0.0.1:\(loopback.server.port) HTTP/1.1" })
    }

    @Test func aProxyThatRefusesTheTunnelIsSaidOnce() throws {
        let loopback = try Loopback(tls: true, handler: Self.echo)
        let proxy = try ConnectProxy(refusal: "HTTP/1.1 407 Proxy Authentication Required")
        let responses = try loopback.exchange((0..<3).map { request($0) }) { $0.proxy = try! ClientProxy(url: proxy.url) }
        #expect(responses.count == 3 && responses.allSatisfy { $0.failure?.kind == .endpoint(.proxyRefused) })
        #expect(responses[0].failure?.message.contains("407") == true, "\(String(describing: responses[0].failure))")
    }

    @Test func aTakenPortCannotBeListenedOn() throws {
        let loopback = try Loopback(handler: Self.echo)
        #expect(throws: HTTP2ServerError.self) {
            _ = try HTTP2Server(host: "127.0.0.1", port: loopback.server.port, tls: nil) { _ in nil }
        }
    }
}

/// Polls `condition` until it holds or 10 seconds pass.
func eventually(_ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}
