import Testing

@testable import HTTP2

/// The strict HTTP/1.1 answer reader: what the grammar allows, each way a body ends, and
/// everything else refused; the same answer however the bytes are cut.
@Suite("HTTP/1.1 answers")
struct HTTP1ResponseTests {
    static func read(_ text: String, cutEvery step: Int? = nil) -> HTTP1Response.Reading {
        var reader = HTTP1Response.Reader()
        let bytes = Array(text.utf8)
        let pieces = step.map { step in stride(from: 0, to: bytes.count, by: step).map { bytes[$0..<min($0 + step, bytes.count)] } } ?? [bytes[...]]
        var taken = 0
        for piece in pieces {
            switch reader.feed(piece) {
            case .incomplete: taken += piece.count
            case .complete(let response, let consumed): return .complete(response, consumed: taken + consumed)
            case .invalid(let words): return .invalid(words)
            }
        }
        return reader.end()
    }

    static func response(_ text: String) -> HTTP1Response? {
        if case .complete(let response, _) = read(text) { return response }
        return nil
    }

    @Test func aContentLengthBody() throws {
        let text = "HTTP/1.1 201 Created\r\nLocation: https://push.example/m/1\r\nContent-Length: 2\r\n\r\nokEXTRA"
        guard case .complete(let response, let consumed) = Self.read(text) else {
            Issue.record("not read")
            return
        }
        #expect(response.status == 201 && response.body == Array("ok".utf8) && !response.closesConnection)
        #expect(response.headers.first == HTTP2Client.Field("location", "https://push.example/m/1"))
        #expect(consumed == text.utf8.count - 5, "the bytes after the answer are not its")
    }

    @Test func aChunkedBodyWithExtensionsAndTrailers() {
        let response = Self.response("HTTP/1.1 410 Gone\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n")
        #expect(response?.status == 410 && response?.body == Array("hello world".utf8))
    }

    @Test func interimAnswersComeFirstAndABodyMayRunToTheClose() {
        let response = Self.response("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 429 Too Many\r\nRetry-After: 3\r\n\r\nslow down")
        #expect(response?.status == 429 && response?.body == Array("slow down".utf8) && response?.closesConnection == true)
        #expect(Self.response("HTTP/1.1 204 No Content\r\n\r\n")?.body == [])
        #expect(Self.response("HTTP/1.1 201 \r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n")?.closesConnection == true)
    }

    @Test func aHugeBodyIsCountedNotKept() {
        let size = 100_000
        let response = Self.response("HTTP/1.1 500 Oops\r\nContent-Length: \(size)\r\n\r\n" + String(repeating: "x", count: size))
        #expect(response?.bodyLength == size && response?.body.count == HTTP1Response.Limits.keptBody)
    }

    @Test(arguments: [
        ("HTTP/1.1 201 Created\nContent-Length: 0\r\n\r\n", "LF alone"),
        ("HTTP/1.1 201 Created\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n", "obs-fold"),
        ("HTTP/1.1 201 Created\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "two different Content-Lengths"),
        ("HTTP/1.1 201 Created\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", "both Content-Length and Transfer-Encoding"),
        ("HTTP/1.1 201 Created\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "a transfer coding other than chunked"),
        ("HTTP/1.1 20x Created\r\n\r\n", "three digits"),
        ("HTTP/2 201\r\n\r\n", "status line"),
        ("HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched protocols"),
        ("HTTP/1.1 201 Created\r\nBad Name: x\r\n\r\n", "name: value"),
        ("HTTP/1.1 201 Created\r\nContent-Length: -1\r\n\r\n", "not a number"),
        ("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n123456789\r\n", "1 to 8 hex digits"),
        ("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n", "not followed by CRLF"),
        ("HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nab", "closed in the middle"),
        ("", "closed before an answer")
    ])
    func whatTheGrammarDoesNotAllowIsRefused(text: String, words: String) {
        guard case .invalid(let said) = Self.read(text) else {
            Issue.record("\(text.debugDescription) was read")
            return
        }
        #expect(said.contains(words), "\(said)")
    }

    @Test func everyBoundSaysWhatHappensPastIt() {
        let long = "HTTP/1.1 201 Created\r\nX: " + String(repeating: "a", count: HTTP1Response.Limits.headBytes) + "\r\n\r\n"
        guard case .invalid(let words) = Self.read(long, cutEvery: 1_000) else {
            Issue.record("a long head was read")
            return
        }
        #expect(words.contains("pass \(HTTP1Response.Limits.headBytes) bytes"))
        let fields = "HTTP/1.1 201 Created\r\n" + String(repeating: "X: y\r\n", count: HTTP1Response.Limits.headerCount + 1) + "\r\n"
        guard case .invalid(let many) = Self.read(fields) else {
            Issue.record("too many fields were read")
            return
        }
        #expect(many.contains("more than \(HTTP1Response.Limits.headerCount) header fields"))
    }

    /// Whole, a byte at a time, or in pieces of any size: the same answer.
    @Test func theAnswerDoesNotDependOnHowTheBytesAreCut() {
        let answers = [
            "HTTP/1.1 201 Created\r\nLocation: /m/1\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 410 Gone\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: t\r\n\r\nNEXT",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Busy\r\nRetry-After: 3\r\nContent-Length: 4\r\n\r\nbusy",
            "HTTP/1.0 500 Oops\r\n\r\nuntil the close"
        ]
        for text in answers {
            let whole = Self.read(text)
            for step in 1...7 {
                #expect(Self.read(text, cutEvery: step) == whole, "\(text.debugDescription) cut every \(step)")
            }
        }
    }
}
