/// Reads one HTTP/1.1 response from the bytes a server sends, strictly (RFC 9112): a status
/// line, header fields, then a body by `Content-Length`, by `chunked` transfer coding, or up to
/// the connection's close. For a client whose server offers no h2 in ALPN (some push services'
/// load balancers), where one malformed answer must end the connection, not be guessed at:
/// anything the grammar does not allow is `invalid`, and every size has a bound that says
/// what happens past it. Fed in any pieces; the result never depends on how the bytes were cut.
struct HTTP1Response: Equatable {
    var status: Int
    var headers: [HTTP2Client.Field]
    /// Up to `Limits.keptBody` bytes of the body; the rest is counted, not kept.
    var body: [UInt8]
    var bodyLength: Int
    /// The server will close the connection after this answer (`Connection: close`, HTTP/1.0,
    /// or a body that ends with the connection): no request may follow on it.
    var closesConnection: Bool

    /// Past each bound the response is `invalid`, and the connection is closed.
    enum Limits {
        /// The status line and header fields, all together.
        static let headBytes = 16_384
        static let headerCount = 100
        /// A chunk-size line, extensions included.
        static let chunkLineBytes = 1_024
        /// Trailer fields after the last chunk.
        static let trailerBytes = 4_096
        /// Body bytes kept; an error answer's reason is a few hundred.
        static let keptBody = 16_384
        /// Interim (1xx) answers before the final one.
        static let interimAnswers = 8
    }

    /// How far the bytes so far go.
    enum Reading: Equatable {
        /// Not a whole response yet.
        case incomplete
        /// A whole response, and how many of the bytes fed it took (the rest belong to the
        /// connection: with no request outstanding they are a protocol error).
        case complete(HTTP1Response, consumed: Int)
        /// Not HTTP/1.1 as the grammar says; the words say where.
        case invalid(String)
    }

    /// An incremental reader: `feed` the bytes as they come, `end` when the connection closes.
    struct Reader {
        private enum Stage: Equatable {
            case head
            case fixed(remaining: Int)
            case chunkSize
            case chunkData(remaining: Int)
            case chunkDataEnd
            case trailers
            case untilClose
            case done
        }

        private var stage = Stage.head
        private var pending: [UInt8] = []
        private var response = HTTP1Response(status: 0, headers: [], body: [], bodyLength: 0, closesConnection: false)
        private var interim = 0
        private var trailerBytes = 0
        /// Whether the request was HEAD (its answer has no body whatever it says).
        let headRequest: Bool

        init(headRequest: Bool = false) {
            self.headRequest = headRequest
        }

        /// Takes the next bytes. After `complete` or `invalid` the reader is spent.
        mutating func feed(_ bytes: some Collection<UInt8>) -> Reading {
            guard stage != .done else { return .invalid("bytes after the response") }
            let before = pending.count
            pending.append(contentsOf: bytes)
            var at = 0
            while true {
                switch step(&at) {
                case .more:
                    continue
                case .wait:
                    pending.removeFirst(at)
                    if stage == .head, pending.count > Limits.headBytes {
                        return invalid("the status line and header fields pass \(Limits.headBytes) bytes")
                    }
                    return .incomplete
                case .failed(let words):
                    return invalid(words)
                case .finished:
                    stage = .done
                    // What this call's bytes gave the response; the rest is not its.
                    let consumed = at - before
                    return .complete(response, consumed: max(0, consumed))
                }
            }
        }

        /// The connection closed: a body read up to the close ends here; anything else was cut.
        mutating func end() -> Reading {
            switch stage {
            case .untilClose:
                stage = .done
                return .complete(response, consumed: 0)
            case .head where pending.isEmpty && response.status == 0:
                return invalid("the connection closed before an answer")
            default:
                return invalid("the connection closed in the middle of the answer")
            }
        }

        private enum Step: Equatable {
            case more, wait, finished
            case failed(String)
        }

        private mutating func invalid(_ words: String) -> Reading {
            stage = .done
            pending = []
            return .invalid(words)
        }

        /// The index just past the next CRLF at or after `at`, or nil; a bare LF or CR is refused.
        private func lineEnd(from at: Int, limit: Int) -> Result<Int?, StepFailure> {
            var index = at
            while index < pending.count {
                let byte = pending[index]
                if byte == 13 {
                    guard index + 1 < pending.count else { return .success(nil) }
                    guard pending[index + 1] == 10 else { return .failure(StepFailure("a CR not followed by LF")) }
                    return .success(index + 2)
                }
                if byte == 10 { return .failure(StepFailure("a line ended by LF alone")) }
                if index - at >= limit { return .failure(StepFailure("a line longer than \(limit) bytes")) }
                index += 1
            }
            return .success(nil)
        }

        private struct StepFailure: Error {
            let words: String
            init(_ words: String) { self.words = words }
        }

        private mutating func step(_ at: inout Int) -> Step {
            switch stage {
            case .head:
                return readHead(&at)
            case .fixed(let remaining):
                let take = min(remaining, pending.count - at)
                keep(at, take)
                at += take
                if remaining - take == 0 { return .finished }
                stage = .fixed(remaining: remaining - take)
                return .wait
            case .untilClose:
                keep(at, pending.count - at)
                at = pending.count
                return .wait
            case .chunkSize:
                switch lineEnd(from: at, limit: Limits.chunkLineBytes) {
                case .failure(let failure): return .failed(failure.words)
                case .success(nil):
                    return pending.count - at > Limits.chunkLineBytes ? .failed("a chunk-size line longer than \(Limits.chunkLineBytes) bytes") : .wait
                case .success(let end?):
                    let line = pending[at..<(end - 2)]
                    // chunk-size [ chunk-ext ]: the hex digits up to ';' (extensions ignored).
                    let digits = line.prefix { $0 != UInt8(ascii: ";") }
                    guard !digits.isEmpty, digits.count <= 8, digits.allSatisfy(Self.isHexDigit) else {
                        return .failed("a chunk size that is not 1 to 8 hex digits")
                    }
                    let size = digits.reduce(0) { $0 << 4 | Self.hexValue($1) }
                    at = end
                    stage = size == 0 ? .trailers : .chunkData(remaining: size)
                    return .more
                }
            case .chunkData(let remaining):
                let take = min(remaining, pending.count - at)
                keep(at, take)
                at += take
                stage = remaining - take == 0 ? .chunkDataEnd : .chunkData(remaining: remaining - take)
                return remaining - take == 0 ? .more : .wait
            case .chunkDataEnd:
                guard pending.count - at >= 2 else { return .wait }
                guard pending[at] == 13, pending[at + 1] == 10 else { return .failed("a chunk not followed by CRLF") }
                at += 2
                stage = .chunkSize
                return .more
            case .trailers:
                switch lineEnd(from: at, limit: Limits.trailerBytes) {
                case .failure(let failure): return .failed(failure.words)
                case .success(nil):
                    return trailerBytes + pending.count - at > Limits.trailerBytes ? .failed("trailer fields pass \(Limits.trailerBytes) bytes") : .wait
                case .success(let end?):
                    trailerBytes += end - at
                    guard trailerBytes <= Limits.trailerBytes else { return .failed("trailer fields pass \(Limits.trailerBytes) bytes") }
                    let empty = end - at == 2
                    if !empty, Self.field(pending[at..<(end - 2)]) == nil { return .failed("a trailer field that is not name: value") }
                    at = end
                    return empty ? .finished : .more
                }
            case .done:
                return .failed("bytes after the response")
            }
        }

        private mutating func keep(_ at: Int, _ count: Int) {
            response.bodyLength += count
            let room = Limits.keptBody - response.body.count
            if room > 0 { response.body.append(contentsOf: pending[at..<(at + min(room, count))]) }
        }

        private mutating func readHead(_ at: inout Int) -> Step {
            // The whole head first: status line, fields, the empty line.
            guard let end = pending[at...].firstRange(of: [13, 10, 13, 10]) else {
                if pending.count - at > Limits.headBytes { return .failed("the status line and header fields pass \(Limits.headBytes) bytes") }
                return .wait
            }
            guard end.upperBound - at <= Limits.headBytes else { return .failed("the status line and header fields pass \(Limits.headBytes) bytes") }
            let head = pending[at..<end.lowerBound]
            // Only CRLF ends a line; a lone CR or LF inside the head is refused.
            var lines: [ArraySlice<UInt8>] = []
            var start = head.startIndex
            var index = head.startIndex
            while index < head.endIndex {
                let byte = head[index]
                if byte == 13 {
                    guard index + 1 < head.endIndex, head[index + 1] == 10 else { return .failed("a CR not followed by LF") }
                    lines.append(head[start..<index])
                    index += 2
                    start = index
                    continue
                }
                if byte == 10 { return .failed("a line ended by LF alone") }
                index += 1
            }
            lines.append(head[start..<head.endIndex])
            at = end.upperBound

            // status-line = HTTP-version SP 3DIGIT SP [ reason-phrase ]
            let statusLine = lines[0]
            let http11 = Array("HTTP/1.1 ".utf8)
            let http10 = Array("HTTP/1.0 ".utf8)
            let version = Array(statusLine.prefix(9))
            guard version == http11 || version == http10, statusLine.count >= 12 else {
                return .failed("the answer does not start with an HTTP/1.1 status line")
            }
            let code = statusLine.dropFirst(9).prefix(3)
            guard code.allSatisfy({ (48...57).contains($0) }), code.first != 48 else { return .failed("a status code that is not three digits") }
            let afterCode = statusLine.dropFirst(12)
            guard afterCode.isEmpty || afterCode.first == 32 else { return .failed("no space after the status code") }
            guard afterCode.allSatisfy({ $0 == 9 || (32...126).contains($0) || $0 >= 128 }) else {
                return .failed("a control character in the reason phrase")
            }
            let status = code.reduce(0) { $0 * 10 + Int($1 - 48) }

            guard lines.count - 1 <= Limits.headerCount else { return .failed("more than \(Limits.headerCount) header fields") }
            var headers: [HTTP2Client.Field] = []
            var contentLength: Int?
            var chunked = false
            var closes = version == http10
            for line in lines.dropFirst() {
                if line.first == 32 || line.first == 9 { return .failed("a folded header line (obs-fold)") }
                guard let (name, value) = Self.field(line) else { return .failed("a header field that is not name: value") }
                let lower = name.lowercased()
                switch lower {
                case "content-length":
                    // One value, or the same value repeated (as a list or as several fields).
                    for part in value.split(separator: ",", omittingEmptySubsequences: false) {
                        let digits = part.trimmingCharacters(in: " \t")
                        guard !digits.isEmpty, digits.count <= 15, digits.utf8.allSatisfy({ (48...57).contains($0) }), let length = Int(digits) else {
                            return .failed("a Content-Length that is not a number")
                        }
                        if let contentLength, contentLength != length { return .failed("two different Content-Lengths") }
                        contentLength = length
                    }
                case "transfer-encoding":
                    let codings = value.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: " \t") }
                    // Only chunked is known here, and it must be the last coding.
                    guard codings == ["chunked"] else { return .failed("a transfer coding other than chunked (\(value.prefix(40)))") }
                    guard !chunked else { return .failed("chunked given twice") }
                    chunked = true
                case "connection":
                    if value.lowercased().split(separator: ",").contains(where: { $0.trimmingCharacters(in: " \t") == "close" }) { closes = true }
                default:
                    break
                }
                if headers.count < 32 { headers.append(.init(lower, String(value.prefix(1_024)))) }
            }
            if chunked, contentLength != nil { return .failed("both Content-Length and Transfer-Encoding") }

            // An interim answer (100 Continue, 103 Early Hints) comes before the real one.
            if (100...199).contains(status) {
                guard status != 101 else { return .failed("the server switched protocols") }
                interim += 1
                guard interim <= Limits.interimAnswers else { return .failed("more than \(Limits.interimAnswers) interim answers") }
                return .more
            }
            response.status = status
            response.headers = headers
            response.closesConnection = closes
            if headRequest || status == 204 || status == 304 {
                return .finished
            }
            if chunked {
                stage = .chunkSize
                return .more
            }
            if let contentLength {
                if contentLength == 0 { return .finished }
                stage = .fixed(remaining: contentLength)
                return .more
            }
            // Neither: the body is what comes until the server closes.
            response.closesConnection = true
            stage = .untilClose
            return .more
        }

        /// `name: value` with a token name and no space before the colon; the value trimmed.
        static func field(_ line: ArraySlice<UInt8>) -> (String, String)? {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else { return nil }
            let name = line[line.startIndex..<colon]
            guard name.allSatisfy(isTokenCharacter) else { return nil }
            let value = line[(colon + 1)...]
            guard value.allSatisfy({ $0 == 9 || (32...126).contains($0) || $0 >= 128 }) else { return nil }
            return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self).trimmingCharacters(in: " \t"))
        }

        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
        }

        static func isHexDigit(_ byte: UInt8) -> Bool {
            (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
        }

        static func hexValue(_ byte: UInt8) -> Int {
            switch byte {
            case 48...57: Int(byte - 48)
            case 65...70: Int(byte - 55)
            default: Int(byte - 87)
            }
        }
    }
}

extension String {
    /// Without the given characters at either end.
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(self.drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(self).trimmingCharacters(in: set)
    }
}
