import Foundation
import MonotonicTime
import PushSealJSON
import TestRandom
import Testing

@testable import PushSeal
@testable import PushSealReceiver

@Suite("APNs payloads")
struct PayloadTests {
    let keyring = try! Keyring.generate(now: 1_000)

    @Test func payloadHasFallbackAlertMutableContentAndEnvelope() throws {
        let sealer = try PayloadSealer(keyring: keyring)
        let alert = try {
            var request = AlertRequest()
            request.title = "Secret title"
            request.body = "Secret body"
            return try request.alert(now: 1_000)
        }()
        let bytes = try sealer.payload(for: alert)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"aps":{"alert":{"title":"New notification","body":"Open the app to read it"},"mutable-content":1},"enc":"ps1."#))
        #expect(!text.contains("Secret"))
        let opener = PayloadOpener(keyring: keyring)
        let opened = try opener.open(try opener.envelope(inPayload: bytes), now: 1_000)
        #expect(opened == alert)
        // Any collection of bytes at the public edge: Foundation's Data, a slice.
        #expect(try opener.open(try opener.envelope(inPayload: Data(bytes)), now: 1_000) == alert)
        #expect(try opener.envelope(inPayload: bytes[...]) == opener.envelope(inPayload: bytes))
        #expect(try SealedAlert(plaintext: Data(alert.plaintext(paddedTo: 1))) == alert)
    }

    /// The plaintext is written member by member, without building the JSON object; it must
    /// stay byte for byte what the object would give, escapes and every field included.
    @Test func plaintextIsTheAlertsJSONByteForByte() throws {
        var fields = AlertFields()
        fields.title = "Deploy \"prod\"\n\u{1}"
        fields.subtitle = "ünïcode ✓"
        fields.body = "back\\slash\ttab"
        fields.badge = 7
        fields.sound = "default"
        fields.threadID = "t-1"
        fields.category = "DEPLOY"
        fields.targetContentID = "c"
        fields.interruptionLevel = .timeSensitive
        fields.relevanceScore = "0.5"
        let data = JSONObject([("url", .string("https://x/y")), ("n", .integer(3)), ("list", .array([.bool(true), .null]))])
        let alerts = [
            SealedAlert(fields: fields, data: data, id: "id\"1", sent: -5, expires: Int64.max),
            SealedAlert(title: "t", id: "a", sent: 0),
            SealedAlert(body: "only a body", id: "b", sent: 1_700_000_000)
        ]
        for alert in alerts {
            for pad in [1, 32, 100] {
                var expected = JSONWriter.bytes(.object(alert.json))
                if pad > 1, expected.count % pad != 0 { expected += Array(repeating: UInt8(ascii: " "), count: pad - expected.count % pad) }
                #expect(alert.plaintext(paddedTo: pad) == expected)
            }
        }
    }

    /// Batch lines are read by comparing names; every name and alias still finds its field.
    @Test func everyFieldNameAndAliasIsFound() {
        for field in AlertField.every {
            #expect(AlertField.named(field.key) == field)
            #expect(AlertField.spelling(field.key)?.isAlias == false)
            for alias in field.aliases {
                #expect(AlertField.named(alias) == field)
                #expect(AlertField.spelling(alias)?.isAlias == true)
            }
        }
        // The constant spellings are exactly the keys and aliases, each once.
        let spelled = AlertField.spellings.map { "\($0.name)" }.sorted()
        #expect(spelled == AlertField.every.flatMap { [$0.key] + $0.aliases }.sorted())
        #expect(AlertField.named("Title") == nil)
        #expect(AlertField.named("") == nil)
        #expect(AlertField.named(String(repeating: "x", count: 100)) == nil)
        // The writer's literal names are the fields' own.
        for field in AlertField.every { #expect(field.memberPrefix.description == "\"\(field.key)\":") }
    }

    /// Ids made eight digits at a time read as the bytes they came from: hex digits in
    /// order, every nibble value in both cases, and UUIDs of version 4 in APNs' uppercase.
    @Test func randomIdsAreTheHexOfTheirBytes() throws {
        var samples: [[UInt8]] = [[0x00, 0x09, 0x0A, 0x0F], [0x10, 0x9A, 0xAF, 0xFF], [0x01, 0x23, 0x45, 0x67], [0x89, 0xAB, 0xCD, 0xEF]]
        var random = ReplayableRandom()
        for _ in 0..<200 { samples.append((0..<4).map { _ in UInt8.random(in: 0...255, using: &random) }) }
        for bytes in samples {
            for uppercase in [false, true] {
                var text = [UInt8](repeating: 0, count: 8)
                bytes.withUnsafeBytes { source in
                    text.withUnsafeMutableBytes { Hex.writeDigits(of: source.baseAddress!, to: $0.baseAddress!, uppercase: uppercase) }
                }
                let expected = bytes.map { String(format: uppercase ? "%02X" : "%02x", $0) }.joined()
                #expect(String(decoding: text, as: UTF8.self) == expected)
            }
        }
        let id = try SealedAlert.randomID()
        #expect(id.count == 16 && id.allSatisfy { "0123456789abcdef".contains($0) })
        for _ in 0..<50 {
            let identifier = APNs.newIdentifier()
            let uuid = try #require(UUID(uuidString: identifier), "\(identifier)")
            #expect(uuid.uuidString == identifier, "uppercase, as APNs writes them")
            #expect(identifier.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
            let version = uuid.uuid.6 >> 4
            let variant = uuid.uuid.8 >> 6
            #expect(version == 4 && variant == 0b10)
        }
    }

    /// Record sources are written digit by digit on the stack: the same text as the
    /// numbers' own descriptions, at the edges of their ranges too.
    @Test func recordSourcesNameTheLineOrTheConnectionAndStream() {
        for line in [0, 1, 9, 10, 99, 100, 123_456_789, Int.max] {
            #expect(RecordSource.stdin(line: line) == "stdin:\(line)")
        }
        for (connection, stream) in [(1, Int32(1)), (10, 19_999), (Int.max, Int32.max), (0, 0)] {
            #expect(RecordSource.listen(connection: connection, stream: stream) == "listen:\(connection)/\(stream)")
        }
    }

    /// Alert fields and a request's APNs fields share their storage between copies: a
    /// change to one copy, or to a fresh set of fields, is seen by no other.
    @Test func fieldCopiesAreIndependentValues() throws {
        var first = AlertFields()
        var second = AlertFields()
        first.title = "one"
        #expect(second.title == nil && AlertFields().title == nil, "fresh fields share nothing that was set")
        second = first
        second.body = "two"
        second.title = "changed"
        #expect(first.title == "one" && first.body == nil)
        #expect(second.title == "changed" && second.body == "two")
        var third = second
        try third.set(.badge, json: .integer(3))
        #expect(second.badge == nil && third.badge == 3 && third != second)
        third.clear(.badge)
        #expect(third == second, "equal by value, not by storage")

        var arrival = APNsRequestFields(device: "ab", topic: "t")
        let kept = arrival
        arrival.topic = "other"
        arrival.priority = "5"
        #expect(kept == APNsRequestFields(device: "ab", topic: "t"))
        #expect(arrival.topic == "other" && arrival.priority == "5" && arrival.device == "ab")
    }

    @Test func aFieldAndItsAliasTogetherAreRefusedInEitherOrder() throws {
        for line in [#"{"body":"a","message":"b"}"#, #"{"message":"a","body":"b"}"#, #"{"level":"active","interruption-level":"passive"}"#] {
            guard case .object(let object) = try JSONParser.parse(line) else {
                Issue.record("not an object")
                continue
            }
            #expect(throws: PayloadError.self) { try AlertRequest(json: object) }
            #expect(throws: PayloadError.self) { try Array(line.utf8).withUnsafeBytes { try AlertRequest(line: $0) } }
        }
    }

    /// A batch line read as it is parsed is the request its parsed object makes.
    @Test func aLineReadMemberByMemberIsTheSameRequest() throws {
        let line = #"{"title":"Deploy","message":"done","badge":3,"data":{"n":1},"url":"https://x.test","ttl":"2h","id":"a1","to":"dev1"}"#
        guard case .object(let object) = try JSONParser.parse(line) else {
            Issue.record("not an object")
            return
        }
        let parsed = try AlertRequest(json: object)
        let read = try Array(line.utf8).withUnsafeBytes { try AlertRequest(line: $0) }
        #expect(read.fields == parsed.fields && read.data == parsed.data && read.url == parsed.url)
        #expect(read.timeToLive == parsed.timeToLive && read.id == parsed.id && read.recipient == parsed.recipient)
        #expect(throws: PayloadError.self) { try Array("[1]".utf8).withUnsafeBytes { try AlertRequest(line: $0) } }
        #expect(throws: JSONParseError.self) { try Array("{title:1}".utf8).withUnsafeBytes { try AlertRequest(line: $0) } }
    }

    @Test func oversizedAlertSaysHowManyBytesOver() throws {
        let sealer = try PayloadSealer(keyring: keyring)
        var request = AlertRequest()
        request.body = String(repeating: "x", count: 4_000)
        let alert = try request.alert(now: 0)
        #expect {
            try sealer.payload(for: alert)
        } throws: { error in
            guard let error = error as? PayloadError, error.code == .tooLarge else { return false }
            return error.reason.contains("over APNs' 4096-byte limit")
        }
    }

    @Test func largestBodyThatFitsIsAccepted() throws {
        let sealer = try PayloadSealer(keyring: keyring, pad: 1)
        var request = AlertRequest()
        request.id = "x"
        var low = 0
        var high = 4_096
        while low < high {
            let middle = (low + high + 1) / 2
            request.body = String(repeating: "y", count: middle)
            if (try? sealer.payload(for: try request.alert(now: 0))) != nil { low = middle } else { high = middle - 1 }
        }
        request.body = String(repeating: "y", count: low)
        #expect(try sealer.payload(for: try request.alert(now: 0)).count == 4_096)
    }

    @Test func alertNeedsTitleOrBody() {
        #expect(throws: PayloadError(.invalidAlert, "")) { try AlertRequest().alert(now: 0) }
    }

    @Test func batchLineWithUnknownFieldIsRefused() throws {
        guard case .object(let object) = try JSONParser.parse(#"{"title":"a","bogus":1}"#) else { return }
        #expect(throws: PayloadError(.invalidAlert, "")) { try AlertRequest(json: object) }
    }

    @Test func ttlBecomesExpiry() throws {
        guard case .object(let object) = try JSONParser.parse(#"{"body":"a","ttl":"1h","level":"timeSensitive","url":"u"}"#) else { return }
        let alert = try AlertRequest(json: object).alert(now: 100)
        #expect(alert.expires == 3_700)
        #expect(alert.interruptionLevel == .timeSensitive)
        #expect(alert.data["url"] == .string("u"))
    }

    @Test func missingFieldAndWrongShapesAreDistinct() throws {
        let opener = PayloadOpener(keyring: keyring)
        #expect(throws: EnvelopeError(.passthrough, "")) { try opener.envelope(inPayload: Array(#"{"aps":{}}"#.utf8)) }
        #expect(throws: EnvelopeError(.malformed, "")) { try opener.envelope(inPayload: Array(#"{"enc":5}"#.utf8)) }
        #expect(throws: PayloadError(.invalidPayload, "")) { try opener.envelope(inPayload: Array("[1]".utf8)) }
        #expect(throws: PayloadError(.invalidPayload, "")) { try opener.envelope(inPayload: Array("not json".utf8)) }
    }
}

/// Records write their elapsed time digit by digit; it must read as the same number text.
@Suite("delivery record numbers")
struct RecordNumberTests {
    @Test(arguments: [
        (Duration.zero, "0.000"), (.microseconds(1_500), "1.500"), (.nanoseconds(12_345_600), "12.346"),
        (.microseconds(7), "0.007"), (.seconds(30), "30000.000"), (.microseconds(90_050), "90.050"),
        (.nanoseconds(500), "0.001"), (.nanoseconds(499), "0.000"), (.nanoseconds(2_000_999_500), "2001.000"),
        (.microseconds(-1_500), "-1.500"), (.nanoseconds(-400_600), "-0.401"), (.nanoseconds(-2_500_000_700), "-2500.001")
    ])
    func elapsedMillisecondsHaveThreeDecimals(duration: Duration, text: String) {
        #expect(duration.millisecondsText == text)
    }
}
