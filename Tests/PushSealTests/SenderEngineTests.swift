import Dispatch
import Locking
import PushSeal
import PushSealSend
import TestRandom
import Testing

/// An in-process APNs: answers each request from a script, on threads of its own and in an
/// order of its choosing, as a server with many streams does. Records what it was sent.
final class FakeAPNs: PushTransport {
    /// One answer: a status (with a reason and headers), or no answer at all.
    enum Answer: Sendable {
        case status(Int, reason: String? = nil, headers: [PushRequest.Field] = [], timestamp: Int64? = nil)
        case failure(PushAnswer.Failure.Kind)
    }

    struct Sent: Sendable {
        let device: String
        let origin: String
        let headers: [PushRequest.Field]
        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    }

    private let answers: Locked<[String: [Answer]]>
    private let deliver: @Sendable ([PushAnswer]) -> Void
    private let random = SharedRandom()
    private let log = Locked<[Sent]>([])
    private let stopped = Locked(false)
    private let inFlight = DispatchGroup()

    /// - Parameter answers: per device, the answers in turn; past the last, 200.
    init(_ answers: [String: [Answer]], deliver: @escaping @Sendable ([PushAnswer]) -> Void) {
        self.answers = Locked(answers)
        self.deliver = deliver
    }

    var sent: [Sent] { log.withLock { $0 } }
    var seed: UInt64 { random.seed }

    func submit(_ requests: [PushRequest]) {
        for request in requests {
            let device = String(request.path.dropFirst("/3/device/".count))
            log.withLock { $0.append(Sent(device: device, origin: request.origin, headers: request.headers)) }
            let answer = answers.withLock { answers -> Answer in
                guard var queue = answers[device], !queue.isEmpty else { return .status(200) }
                defer { answers[device] = queue }
                return queue.removeFirst()
            }
            let id = request.headers.first { $0.name == "apns-id" }?.value ?? ""
            var response = PushAnswer(id: request.id, status: 0, headers: [], body: [])
            switch answer {
            case let .status(status, reason, headers, timestamp):
                response.status = status
                response.headers = [PushRequest.Field("apns-id", id)] + headers
                if let reason {
                    let stamp = timestamp.map { ",\"timestamp\":\($0)" } ?? ""
                    response.body = Array("{\"reason\":\"\(reason)\"\(stamp)}".utf8)
                }
            case let .failure(kind):
                response.failure = PushAnswer.Failure(kind: kind, message: "the fake's \(kind)")
            }
            // Answered from another thread, after up to 2 ms: out of order across devices.
            let delay = random.draw { Int.random(in: 0...2_000, using: &$0) }
            inFlight.enter()
            let answered = response
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(delay)) { [self] in
                deliver([answered])
                inFlight.leave()
            }
        }
    }

    func stop(grace: Duration) { stopped.withLock { $0 = true } }

    func finish() { inFlight.wait() }
}

/// A token source that counts what it mints.
final class CountingTokens: PushCredentials {
    private let state = Locked((serial: 1, renewed: [CredentialRejection]()))
    let mintsHere: Bool

    init(mintsHere: Bool = false) { self.mintsHere = mintsHere }

    func credential(replacing rejected: String?, because reason: CredentialRejection) throws -> String {
        state.withLock { state in
            if let rejected, rejected == "token-\(state.serial)" {
                state.serial += 1
                state.renewed.append(reason)
            }
            return "token-\(state.serial)"
        }
    }

    func minted(_ token: String) -> Bool { mintsHere }

    var renewed: [CredentialRejection] { state.withLock { $0.renewed } }
}

/// `Sender`'s retry and ordering engine against the in-process fake: every device gets one
/// result, in the order added, whatever order answers come in and whatever each one says.
@Suite("send's engine, against an in-process provider")
struct SenderEngineTests {
    static func device(_ index: Int) -> String { String(format: "%064x", index) }
    static func token(_ index: Int) -> DeviceToken { DeviceToken(device(index))! }

    /// Sends `count` devices through a Sender over a fake with `answers`; its results in order.
    static func send(
        _ count: Int, answers: [String: [FakeAPNs.Answer]], tokens: (any PushCredentials)? = CountingTokens(),
        retries: Int? = 3, stopFirst: Bool = false
    )
        throws -> (results: [Sender<APNsProvider>.Result], fake: FakeAPNs)
    {
        let results = Locked<[Sender<APNsProvider>.Result]>([])
        let fake = Locked<FakeAPNs?>(nil)
        let provider = APNsProvider(settings: .init(origin: "fake", topic: "com.example.app"), tokens: tokens)
        let sender = try Sender(
            settings: .init(retries: retries, retryFor: .seconds(30)), provider: provider,
            window: 64, backoff: { _ in .milliseconds(1) }, emit: { result in results.withLock { $0.append(result) } },
            transport: { deliver in
                let made = FakeAPNs(answers, deliver: deliver)
                fake.withLock { $0 = made }
                return made
            })
        if stopFirst { sender.stopRetrying() }
        for index in 0..<count { try sender.add(token(index), payload: Array("{}".utf8)) }
        sender.finish()
        return (results.withLock { $0 }, fake.withLock { $0! })
    }

    @Test func resultsComeInTheOrderDevicesWereAddedWhateverTheOrderOfAnswers() throws {
        let (results, fake) = try Self.send(500, answers: [:])
        #expect(results.map(\.target.hex) == (0..<500).map(Self.device), "seed \(fake.seed)")
        #expect(results.allSatisfy { $0.outcome == .ok && $0.status == 200 && $0.attempts == 1 })
        // Every request carries APNs' headers, and each notification an id of its own.
        #expect(fake.sent.allSatisfy { $0.header("apns-topic") == "com.example.app" && $0.header("apns-push-type") == "alert" })
        #expect(Set(fake.sent.compactMap { $0.header("apns-id") }).count == 500)
        #expect(fake.sent.allSatisfy { $0.header("authorization") == "bearer token-1" })
    }

    @Test func aTemporaryAnswerIsRetriedWithTheSameIdUntilItSucceeds() throws {
        let busy = Self.device(1)
        let (results, fake) = try Self.send(3, answers: [busy: [.status(503, reason: "ServiceUnavailable"), .status(429, reason: "TooManyRequests")]])
        let result = try #require(results.first { $0.target.hex == busy })
        #expect(result.outcome == .ok && result.attempts == 3)
        let ids = fake.sent.filter { $0.device == busy }.compactMap { $0.header("apns-id") }
        #expect(ids.count == 3 && Set(ids).count == 1, "one notification, one id, however many tries")
        #expect(results.filter { $0.target.hex != busy }.allSatisfy { $0.attempts == 1 })
    }

    @Test func retriesStopAtTheCapAndTheLastAnswerIsTheResult() throws {
        let failing = Self.device(0)
        let (results, _) = try Self.send(1, answers: [failing: Array(repeating: .status(500, reason: "InternalServerError"), count: 10)], retries: 2)
        #expect(results.count == 1)
        #expect(results[0].outcome == .failed && results[0].attempts == 3 && results[0].status == 500)
        #expect(results[0].reason == "InternalServerError")
    }

    @Test func aRefusalIsFinalAndKeepsItsTimestamp() throws {
        let gone = Self.device(0)
        let (results, fake) = try Self.send(2, answers: [gone: [.status(410, reason: "Unregistered", timestamp: 1_700_000_000_000)]])
        #expect(results[0].outcome == .refused && results[0].status == 410 && results[0].reason == "Unregistered")
        #expect(results[0].timestamp == 1_700_000_000_000 && results[0].attempts == 1)
        #expect(fake.sent.filter { $0.device == gone }.count == 1)
        #expect(results[1].outcome == .ok)
    }

    @Test func anAnswerThatNeverCameIsSentAgainOnceAndSaysSo() throws {
        let once = Self.device(0)
        let twice = Self.device(1)
        let (results, _) = try Self.send(
            2,
            answers: [
                once: [.failure(.unknownOutcome)],
                twice: [.failure(.unknownOutcome), .failure(.unknownOutcome)]
            ])
        #expect(results[0].outcome == .ok && results[0].retriedAfterUnknownOutcome && results[0].attempts == 2)
        #expect(results[1].outcome == .failed && results[1].attempts == 2, "never a third time: it may have been delivered")
    }

    /// A request the client itself refuses (nghttp2 would not take its headers) is final:
    /// no connection would send it, so it is not retried for --retry-for, and it counts as
    /// refused for good (exit 69), not as a temporary failure.
    @Test func aRequestTheClientRefusesIsFinalAndNotRetried() throws {
        let refused = Self.device(0)
        let (results, fake) = try Self.send(2, answers: [refused: [.failure(.refused)]])
        #expect(results[0].outcome == .refused && results[0].attempts == 1 && results[0].status == 0)
        #expect(results[0].reason == "the fake's refused")
        #expect(fake.sent.filter { $0.device == refused }.count == 1, "sent once, never again")
        #expect(results[1].outcome == .ok)
    }

    @Test func anExpiredTokenIsRenewedOnceAndTheNotificationSentAgain() throws {
        let device = Self.device(0)
        let tokens = CountingTokens()
        let (results, fake) = try Self.send(1, answers: [device: [.status(403, reason: "ExpiredProviderToken")]], tokens: tokens)
        #expect(results[0].outcome == .ok && results[0].attempts == 2)
        #expect(tokens.renewed == [.expired])
        #expect(fake.sent.map { $0.header("authorization") } == ["bearer token-1", "bearer token-2"])
        // Refused twice: the second refusal is the result, with no third try.
        let again = try Self.send(1, answers: [device: [.status(403, reason: "ExpiredProviderToken"), .status(403, reason: "ExpiredProviderToken")]])
        #expect(again.results[0].outcome == .refused && again.results[0].reason == "ExpiredProviderToken" && again.results[0].attempts == 2)
    }

    @Test func anInvalidTokenIsReplacedOnlyWhenItCameFromTheCache() throws {
        let device = Self.device(0)
        let invalid: [String: [FakeAPNs.Answer]] = [device: [.status(403, reason: "InvalidProviderToken")]]
        let cached = CountingTokens(mintsHere: false)
        #expect(try Self.send(1, answers: invalid, tokens: cached).results[0].outcome == .ok)
        #expect(cached.renewed == [.invalid])
        // Made from the key in hand and still refused: the key is wrong, and a new one is no better.
        let minted = CountingTokens(mintsHere: true)
        let refused = try Self.send(1, answers: invalid, tokens: minted).results[0]
        #expect(refused.outcome == .refused && refused.reason == "InvalidProviderToken" && minted.renewed.isEmpty)
    }

    @Test func anEndpointThatCannotBeReachedIsNamedInTheResult() throws {
        let (results, _) = try Self.send(1, answers: [Self.device(0): [.failure(.origin(.unreachable))]], tokens: nil)
        #expect(results.count == 1)
        #expect(results[0].outcome == .failed && results[0].reason?.hasPrefix("cannot reach fake (") == true, "\(results)")
    }

    @Test func afterAStopAFailingDeviceIsReportedNotRetried() throws {
        let failing = Self.device(0)
        let (results, fake) = try Self.send(1, answers: [failing: Array(repeating: .status(503), count: 5)], retries: nil, stopFirst: true)
        #expect(results[0].outcome == .failed && results[0].status == 503)
        #expect(fake.sent.count == 1)
    }
}
