import Dispatch
import Locking
import PushSeal
import PushSealJSON
import PushSealSend
import SealCrypto
import Testing

/// A second push service, shaped as Web Push is: a subscription (its push service's origin
/// and a path) instead of a device token, a message body that is the envelope alone, a
/// `vapid` credential, 201 for accepted and 404/410 for a subscription that is gone. Written
/// here, in the tests, against the seam alone: `Sender`, HTTP2 and the CLI are not touched.
struct SubscriptionProvider: PushProvider {
    struct Subscription: Sendable, Equatable {
        let origin: String
        let path: String
    }

    /// `{"m":"<envelope>"}`, at most 4078 bytes, as Web Push's record size allows.
    struct MessageWrapping: PayloadWrapping {
        func append(envelopeByteCount: Int, to output: inout [UInt8], writeEnvelope: (inout [UInt8]) throws -> Void) throws {
            guard envelopeByteCount + 8 <= 4_078 else { throw PayloadError(.tooLarge, "over the record size") }
            output.append(contentsOf: Array(#"{"m":""#.utf8))
            try writeEnvelope(&output)
            output.append(contentsOf: Array(#""}"#.utf8))
        }
    }

    let wrapping = MessageWrapping()
    let credentials: (any PushCredentials)?
    var serviceName: String { "the push service" }

    func request(id: Int, to target: Subscription, payload: [UInt8], notificationID: String, expiration: String?, credential: String?)
        -> PushRequest
    {
        var headers = [PushRequest.Field("ttl", expiration ?? "2419200"), PushRequest.Field("topic", notificationID)]
        if let credential { headers.append(PushRequest.Field("authorization", "vapid t=\(credential)")) }
        return PushRequest(id: id, origin: target.origin, path: target.path, headers: headers, body: payload)
    }

    func verdict(on answer: PushAnswer) -> PushVerdict {
        switch answer.status {
        case 201: .delivered(id: answer.header("location"))
        case 401, 403: .credentialRefused(.invalid, status: answer.status, reason: "vapid refused", id: nil)
        case 429, 500, 503: .temporary(status: answer.status, reason: "busy", retryAfter: nil)
        default: .refused(status: answer.status, reason: answer.status == 410 ? "gone" : "HTTP \(answer.status)", id: nil, timestamp: nil)
        }
    }
}

/// An in-process push service for the second provider: answers by path, records origins.
final class FakePushService: PushTransport {
    private let deliver: @Sendable ([PushAnswer]) -> Void
    private let answers: [String: Int]
    let received = Locked<[PushRequest]>([])

    init(answers: [String: Int], deliver: @escaping @Sendable ([PushAnswer]) -> Void) {
        self.answers = answers
        self.deliver = deliver
    }

    func submit(_ requests: [PushRequest]) {
        received.withLock { $0 += requests }
        deliver(
            requests.map { request in
                let status = answers[request.path] ?? 201
                return PushAnswer(
                    id: request.id, status: status, headers: status == 201 ? [PushRequest.Field("location", "/m/\(request.id)")] : [],
                    body: [])
            })
    }

    func stop(grace: Duration) {}
    func finish() {}
}

/// Sends `payload` to each target through `Sender` and the in-process service (answering
/// by path from `answers`, else 201); the results in order, and the requests it received.
func sendThroughFakeService<Provider: PushProvider>(
    _ provider: Provider, to targets: [Provider.Target], payload: [UInt8], answers: [String: Int]
) throws -> (results: [SendResult<Provider.Target>], sent: [PushRequest]) {
    let results = Locked<[SendResult<Provider.Target>]>([])
    let service = Locked<FakePushService?>(nil)
    let sender = try Sender(
        settings: .init(retries: 0), provider: provider, window: 8,
        emit: { result in results.withLock { $0.append(result) } },
        transport: { deliver in
            let made = FakePushService(answers: answers, deliver: deliver)
            service.withLock { $0 = made }
            return made
        })
    for target in targets { try sender.add(target, payload: payload) }
    sender.finish()
    return (results.withLock { $0 }, service.withLock { $0!.received.withLock { $0 } })
}

@Suite("a second provider through the same engine")
struct SecondProviderTests {
    @Test func aSubscriptionProviderSealsAndSendsThroughSenderUntouched() throws {
        let key = try SymmetricKey.generate()
        let sealer = EnvelopeSealer(key: .secret(kid: "c0ffee01", key: key))
        let provider = SubscriptionProvider(credentials: nil)
        let payload = try provider.wrapping.payload(sealing: Array(#"{"title":"Deploy done"}"#.utf8), with: sealer)
        let targets = [
            SubscriptionProvider.Subscription(origin: "https://push.one.example", path: "/s/1"),
            SubscriptionProvider.Subscription(origin: "https://push.two.example", path: "/s/2"),
            SubscriptionProvider.Subscription(origin: "https://push.one.example", path: "/s/gone")
        ]
        let (got, sent) = try sendThroughFakeService(provider, to: targets, payload: payload, answers: ["/s/gone": 410])

        #expect(got.map(\.target) == targets)
        #expect(got.map(\.outcome) == [.ok, .ok, .refused])
        #expect(got[0].notificationID == "/m/0" && got[2].reason == "gone")
        // Each request names its subscription's origin, and its body is the provider's wrapping
        // of an envelope that opens with the key.
        #expect(sent.map(\.origin) == targets.map(\.origin))
        let body = try #require(try JSONParser.parse(sent[0].body).objectValue?["m"]?.stringValue)
        #expect(try SealedEnvelope(parsing: body).open(with: key) == Array(#"{"title":"Deploy done"}"#.utf8))
    }

    @Test func aWrappingThatRefusesTheSizeSealsNothing() throws {
        let sealer = EnvelopeSealer(key: .secret(kid: "c0ffee01", key: try SymmetricKey.generate()))
        #expect(throws: PayloadError.self) {
            try SubscriptionProvider.MessageWrapping().payload(sealing: Array(repeating: 0x61, count: 4_000), with: sealer)
        }
    }
}
