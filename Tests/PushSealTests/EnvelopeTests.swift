import PushSeal
import PushSealJSON
import SealCrypto
import Testing

@Suite("ps1 envelope")
struct EnvelopeTests {
    let key = try! SymmetricKey.generate()

    @Test func sealedTextHasHeaderKidAndBase64URLBox() throws {
        let envelope = try SealedEnvelope(parsing: EnvelopeSealer(key: .secret(kid: "3f9a0c1e", key: key)).envelope(sealing: Array("hello".utf8)))
        let parts = envelope.text.split(separator: ".")
        #expect(parts.count == 3)
        #expect(parts[0] == "ps1" && parts[1] == "3f9a0c1e")
        #expect(!envelope.text.contains("=") && !envelope.text.contains("+") && !envelope.text.contains("/"))
        let parsed = try SealedEnvelope(parsing: envelope.text)
        #expect(try parsed.open(with: key) == Array("hello".utf8))
    }

    @Test func headerIsAuthenticatedSoKidCannotBeSwapped() throws {
        let envelope = try SealedEnvelope(parsing: EnvelopeSealer(key: .secret(kid: "aaaaaaaa", key: key)).envelope(sealing: Array("hello".utf8)))
        let swapped = try SealedEnvelope(parsing: envelope.text.replacingOccurrences(of: "aaaaaaaa", with: "bbbbbbbb"))
        #expect(throws: EnvelopeError(.authenticationFailed, "")) { try swapped.open(with: key) }
    }

    @Test(arguments: [
        ("ps9.kid.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", EnvelopeError.Code.unsupported),
        // 30 bytes: enough for ps1, not for ps2's 65-byte key and 16-byte tag.
        ("ps2.kid.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", EnvelopeError.Code.malformed),
        ("ps1.kid", .malformed),
        ("ps1..AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", .malformed),
        ("ps1.k!d.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", .malformed),
        ("ps1.kid.AAAA", .malformed),
        ("ps1.kid.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", .malformed),
        ("ps1.\(String(repeating: "k", count: 65)).AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", .malformed),
        ("", .malformed)
    ])
    func malformedEnvelopesAreRefused(text: String, code: EnvelopeError.Code) {
        #expect(throws: EnvelopeError(code, "")) { try SealedEnvelope(parsing: text) }
    }

    @Test func alertPlaintextIsPaddedWithSpaces() throws {
        let alert = SealedAlert(title: "T", body: "B", id: "1", sent: 0)
        for pad in [1, 16, 32, 100] {
            let plaintext = alert.plaintext(paddedTo: pad)
            #expect(plaintext.count % pad == 0)
            #expect(try SealedAlert(plaintext: plaintext) == alert)
        }
        #expect(alert.plaintext(paddedTo: 32).last == UInt8(ascii: " "))
    }

    @Test func alertJSONUsesAPNsFieldNames() throws {
        var data = JSONObject()
        data["url"] = .string("https://example.com/a")
        var fields = AlertFields()
        for (field, value) in [
            (AlertField.title, "T"), (.subtitle, "S"), (.body, "B"), (.badge, "3"), (.sound, "default"),
            (.threadID, "g"), (.category, "c"), (.targetContentID, "t"),
            (.interruptionLevel, "timeSensitive"), (.relevanceScore, "0.5")
        ] {
            try fields.set(field, text: value)
        }
        let alert = SealedAlert(fields: fields, data: data, id: "abc", sent: 10, expires: 20)
        let text = JSONWriter.string(.object(alert.json))
        #expect(
            text
                == #"{"title":"T","subtitle":"S","body":"B","badge":3,"sound":"default","thread-id":"g","category":"c","target-content-id":"t","interruption-level":"time-sensitive","relevance-score":0.5,"data":{"url":"https://example.com/a"},"id":"abc","sent":10,"exp":20}"#
        )
        #expect(try SealedAlert(json: alert.json) == alert)
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
