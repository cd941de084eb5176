import PushSeal
import PushSealJSON
import PushSealReceiver
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
        ("1.", "invalid number")
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

    /// The member-by-member reader sees what `parse` builds, in order, and refuses what it
    /// refuses: duplicates among a few names (kept on the stack) and among many (hashed).
    @Test func membersOneByOneMatchTheParsedObject() throws {
        let many = "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        for text in [#" {"b":1,"a":[true,{"x":null}],"c":"é\n"} "#, "{}", many] {
            var seen: [(String, JSONValue)] = []
            let wasObject = try Array(text.utf8).withUnsafeBytes { bytes in
                try JSONParser.forEachMember(in: bytes) { seen.append(($0, $1)) }
            }
            #expect(wasObject)
            guard case .object(let object) = try JSONParser.parse(text) else {
                Issue.record("not an object")
                return
            }
            #expect(JSONObject(seen) == object && seen.map(\.0) == object.keys)
        }
        for text in [#"{"a":1,"b":2,"a":3}"#, String(many.dropLast()) + #","k39":0}"#, #"{"a":1} x"#, #"{"a":}"#] {
            #expect(throws: JSONParseError.self) {
                try Array(text.utf8).withUnsafeBytes { try JSONParser.forEachMember(in: $0) { _, _ in } }
            }
        }
        // JSON of another kind is not an object; text that is not JSON is still an error.
        #expect(try Array("[1]".utf8).withUnsafeBytes { try JSONParser.forEachMember(in: $0) { _, _ in } } == false)
        #expect(throws: JSONParseError.self) { try Array("[1".utf8).withUnsafeBytes { try JSONParser.forEachMember(in: $0) { _, _ in } } }
    }

    /// Names handed over as bytes are the decoded names: an escaped spelling of a name is
    /// that name, so it is a duplicate of the plain one, however many names came before.
    @Test func namesAsBytesAreDecodedAndDuplicatesAreFoundAcrossSpellings() throws {
        func names(_ text: String) throws -> [String] {
            var seen: [String] = []
            _ = try Array(text.utf8).withUnsafeBytes { bytes in
                try JSONParser.forEachMember(namedIn: bytes) { name, _ in seen.append(String(decoding: name, as: UTF8.self)) }
            }
            return seen
        }
        #expect(try names(#"{"title":1,"b\u0061dge":2,"é":3,"\ud83d\ude00":4,"":5,"a\"b":6}"#) == ["title", "badge", "é", "😀", "", "a\"b"])
        var matched: [Bool] = []
        _ = try Array(#"{"x":1}"#.utf8).withUnsafeBytes { bytes in
            try JSONParser.forEachMember(namedIn: bytes) { name, _ in matched = [JSONName.is(name, "x"), JSONName.is(name, "xy"), JSONName.is(name, "")] }
        }
        #expect(matched == [true, false, false])
        let padding = (0..<20).map { "\"k\($0)\":0," }.joined()
        for text in [
            #"{"a":1,"\u0061":2}"#, #"{"\u0061":1,"a":2}"#, #"{"é":1,"\u00e9":2}"#,
            "{" + padding + #""a":1,"\u0061":2}"#, #"{"a":1,"# + padding + #""\u0061":2}"#
        ] {
            #expect(throws: JSONParseError.self, "\(text)") { try names(text) }
            #expect(throws: JSONParseError.self, "\(text)") { try JSONParser.parse(text) }
        }
        // Bytes that are not UTF-8 are refused in a name as in any string.
        #expect(throws: JSONParseError.self) {
            try [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D].withUnsafeBytes { try JSONParser.forEachMember(namedIn: $0) { _, _ in } }
        }
    }

    /// Both readers agree on generated objects: whether the text is accepted, and the names
    /// and values in order. Names are drawn from spellings that mean the same name.
    @Test func namesAsBytesAgreeWithTheTreeOnGeneratedObjects() throws {
        let names = [#""a""#, #""\u0061""#, #""b""#, #""é""#, #""\u00e9""#, #""\"""#, #""""#, #""a\u0000""#, #""\ud800""#, "\"\u{1}\""]
        let values = ["1", "\"x\"", "{}", "[1,{\"a\":2}]", "null", "tru", "\"\\q\""]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...5, using: &generator)
            let members = (0..<count).map { _ in names.randomElement(using: &generator)! + ":" + values.randomElement(using: &generator)! }
            let text = "{" + members.joined(separator: ",") + "}"
            let tree = try? JSONParser.parse(text)
            var seen: [(String, JSONValue)] = []
            let read = try? Array(text.utf8).withUnsafeBytes { bytes in
                try JSONParser.forEachMember(namedIn: bytes) { seen.append((String(decoding: $0, as: UTF8.self), $1)) }
            }
            #expect((tree == nil) == (read == nil), "\(text)")
            if case .object(let object)? = tree {
                #expect(JSONObject(seen) == object && seen.map(\.0) == object.keys, "\(text)")
            }
        }
    }

    @Test(arguments: [Int64.min, -1_234_567_890, -1, 0, 7, 10, 1_733_380_000, Int64.max])
    func integersAreWrittenAsSwiftPrintsThem(_ value: Int64) {
        var bytes: [UInt8] = [UInt8(ascii: "x")]
        JSONWriter.writeInteger(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x\(value)")
    }

    @Test func deepNestingIsRefusedWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let allowed = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONParser.parse(allowed) }
    }
}

@Suite("terminal text and durations")
struct TerminalTextTests {
    @Test(arguments: [
        ("plain", "plain"),
        ("a\r\nb", #"a\r\nb"#),
        ("\u{1B}[31mred", #"\x1b[31mred"#),
        ("del\u{7F}", #"del\x7f"#),
        ("c1\u{85}", #"c1\u{85}"#),
        ("\u{202E}evil", #"\u{202E}evil"#),
        ("\u{2066}iso\u{2069}", #"\u{2066}iso\u{2069}"#)
    ])
    func controlAndBidiCharactersAreEscaped(_ text: String, shown: String) {
        #expect(TerminalText.escaping(text) == shown)
    }

    @Test func newlinesCanBeKeptForIndentedBodies() {
        #expect(TerminalText.escaping("a\nb\r", keepingNewlines: true) == "a\nb\\r")
    }

    @Test func bytesThatAreNotUTF8AreShownAsHex() {
        #expect(TerminalText.escapingBytes(Array("bad".utf8) + [0xFF] + Array(".json".utf8)) == #"bad\xff.json"#)
        #expect(TerminalText.escapingBytes(Array("é\u{1B}".utf8)) == #"é\x1b"#)
    }

    @Test func durationsMayHaveSeveralPartsFromTheLargestUnitDown() {
        #expect(DurationText.parse("1h30m") == .seconds(5_400))
        #expect(DurationText.parse("90m") == .seconds(5_400))
        #expect(DurationText.parse("2d12h") == .seconds(216_000))
        #expect(DurationText.parse("1m30s500ms") == .milliseconds(90_500))
        #expect(DurationText.parse("1w0d") == .seconds(604_800))
        for text in ["30m1h", "1h1h", "1h30", "h", "1hm", "1h 30m", "1ms5s"] {
            #expect(DurationText.parse(text) == nil, "\(text)")
        }
        #expect(DurationText.parse("364d23h59m", in: .seconds(1) ... .seconds(365 * 86_400)) != nil)
        #expect(DurationText.parse("365d1s", in: .seconds(1) ... .seconds(365 * 86_400)) == nil)
    }

    @Test(arguments: ["999999999999999w", "9223372036854775807s", "99999999999999999999d", "12", "1x", "-1s", "", "99999999999999w99999999999999d"])
    func absurdDurationsAreRefusedWithoutTrapping(_ text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test func durationsFormatInTheirLargestWholeUnit() {
        #expect(DurationText.format(.seconds(30 * 86_400)) == "30d")
        #expect(DurationText.format(.milliseconds(250)) == "250ms")
        #expect(DurationText.format(.zero) == "0s")
        #expect(DurationText.parse("3650d", in: .zero ... .seconds(3_650 * 86_400)) == .seconds(3_650 * 86_400))
        #expect(DurationText.parse("3651d", in: .zero ... .seconds(3_650 * 86_400)) == nil)
    }
}
