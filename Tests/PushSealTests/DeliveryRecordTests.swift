import Testing

@testable import PushSeal
@testable import PushSealReceiver

/// A record has exactly one of four ends, and what it writes follows from that end alone.
@Suite("delivery records: one outcome each")
struct DeliveryRecordTests {
    private let arrival = APNsRequestFields(device: "ab", topic: "com.example.app")

    @Test func eachOutcomeHasItsStatusAndReason() {
        let malformed = DeliveryRecord(seq: 1, source: "stdin:1", problem: "not JSON", identifier: "ID-1")
        let rejected = DeliveryRecord(seq: 2, source: "listen", rejected: .badDeviceToken, identifier: "ID-2", arrival: arrival)
        let reset = DeliveryRecord(seq: 3, source: "listen", reset: "the client reset the stream", identifier: nil, arrival: arrival)

        #expect(malformed.status == .malformed && malformed.problem == "not JSON" && malformed.identifier == "ID-1")
        #expect(malformed.delivery == nil && malformed.rejection == nil && malformed.reset == nil)
        #expect(rejected.status == .rejected && rejected.rejection?.answer == .badDeviceToken && rejected.identifier == "ID-2")
        #expect(rejected.problem == nil && rejected.reset == nil)
        #expect(reset.status == .reset && reset.reset == "the client reset the stream" && reset.identifier == nil)
        if case .rejected(let answer, let identifier) = rejected.outcome {
            #expect(answer == .badDeviceToken && identifier == "ID-2")
        } else {
            Issue.record("a rejection is a rejected outcome: \(rejected.outcome)")
        }

        #expect(json(malformed).contains(#""apns-id":"ID-1","status":"malformed""#))
        #expect(json(malformed).hasSuffix(#""reason":"not JSON"}"#))
        #expect(json(rejected).contains(#""http-status":400,"reason":"BadDeviceToken"}"#))
        #expect(json(reset).contains(#""apns-id":null,"status":"reset""#))
        #expect(json(reset).hasSuffix(#""reason":"the client reset the stream"}"#))
        #expect(rejected.text == "#2 rejected  listen  device ab\n   (400 BadDeviceToken)")
        #expect(reset.text == "#3 reset  listen\n   the client reset the stream")
    }

    private func json(_ record: DeliveryRecord) -> String {
        var bytes: [UInt8] = []
        record.writeJSON(to: &bytes, envelopeField: "ps")
        return String(decoding: bytes, as: UTF8.self)
    }
}
