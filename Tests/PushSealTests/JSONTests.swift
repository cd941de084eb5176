import PushSeal
import Testing

@Suite("JSON reader and writer")
struct JSONTests {
    @Test func roundTripKeepsOrderNumbersAndSlashes() throws {
        let text = #"{"b":1,"a":[true,false,null,-0.5e3,"x/y"],"c":{"d":"é\u0001\n"}}"#
        let value = try JSONParser.parse(text)
        #expect(JSONWriter.string(value) == #"{"b":1,"a":[true,false,null,-0.5e3,"x/y"],"c":{"d":"é\u0001\n"}}"#)
    }

    @Test func escapedSlashAndSurrogatesAreDecoded() throws {
        let value = try JSONParser.parse(#"["a\/b","\ud83d\ude00"]"#)
        #expect(value == .array([.string("a/b"), .string("😀")]))
    }

    @Test(arguments: [
        (#"{"a":1,"a":2}"#, "duplicate key"),
        ("[1,]", "unexpected character"),
        ("01", "unexpected text"),
        (#""\ud800""#, "unpaired surrogate"),
        ("{} {}", "unexpected text"),
        ("", "unexpected end"),
        ("\"a\u{1}\"", "control character"),
        ("nul", "invalid literal"),
        ("1.", "invalid number"),
    ])
    func malformedInputIsRefused(text: String, reason: String) {
        #expect {
            try JSONParser.parse(text)
        } throws: { error in
            (error as? JSONParseError)?.reason.contains(reason) == true
        }
    }

    @Test func invalidUTF8IsRefused() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test func deepNestingIsRefusedWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let allowed = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONParser.parse(allowed) }
    }
}
