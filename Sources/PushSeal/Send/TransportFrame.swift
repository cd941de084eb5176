/// The frames `pushseal send` and its HTTP/2 transport (`pushseal-curl`, the process that
/// runs libcurl) exchange over pipes: each a little-endian length, then its fields.
///
/// The transport is a separate program so that `pushseal` itself stays one static binary:
/// libcurl cannot be linked statically on Debian, and loading it at every start would
/// double the start-up of every other command.
public enum TransportFrame {
    /// One request: the path on the endpoint, its headers and body.
    public struct Request: Sendable, Equatable {
        public var id: UInt32
        public var path: String
        public var headers: [Header]
        public var body: [UInt8]

        public init(id: UInt32, path: String, headers: [Header], body: [UInt8]) {
            self.id = id
            self.path = path
            self.headers = headers
            self.body = body
        }
    }

    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The answer to one request: the HTTP status and the `apns-id` and body it came with,
    /// or (status 0) why there was no answer.
    public struct Response: Sendable, Equatable {
        public var id: UInt32
        public var status: Int32
        public var apnsID: String
        public var body: [UInt8]
        /// Set when no answer came (status 0): the transport's reason (connection refused,
        /// certificate not trusted, stream reset, …).
        public var failure: String
        /// True when the server never processed the request (a refused stream, a GOAWAY
        /// past it), so sending it again cannot deliver it twice.
        public var unprocessed: Bool
        /// Set when no answer came because the endpoint cannot be reached or its
        /// certificate is not trusted: a fact about the setup, not the notification.
        public var endpointProblem: EndpointProblem?

        public init(id: UInt32, status: Int32, apnsID: String, body: [UInt8], failure: String, unprocessed: Bool,
                    endpointProblem: EndpointProblem? = nil) {
            self.id = id
            self.status = status
            self.apnsID = apnsID
            self.body = body
            self.failure = failure
            self.unprocessed = unprocessed
            self.endpointProblem = endpointProblem
        }
    }

    public enum EndpointProblem: UInt32, Sendable {
        case unreachable = 1
        case untrusted = 2
    }

    public static func encode(_ request: Request) -> [UInt8] {
        var out = Writer()
        out.u32(request.id)
        out.string(request.path)
        out.u32(UInt32(request.headers.count))
        for header in request.headers {
            out.string(header.name)
            out.string(header.value)
        }
        out.bytes(request.body)
        return out.framed()
    }

    public static func encode(_ response: Response) -> [UInt8] {
        var out = Writer()
        out.u32(response.id)
        out.u32(UInt32(bitPattern: response.status))
        out.string(response.apnsID)
        out.bytes(response.body)
        out.string(response.failure)
        out.u32(response.unprocessed ? 1 : 0)
        out.u32(response.endpointProblem?.rawValue ?? 0)
        return out.framed()
    }

    public static func decodeRequest(_ frame: [UInt8]) -> Request? {
        var input = Reader(frame)
        guard let id = input.u32(), let path = input.string(), let count = input.u32(), count < 1_000 else { return nil }
        var headers: [Header] = []
        for _ in 0..<count {
            guard let name = input.string(), let value = input.string() else { return nil }
            headers.append(Header(name, value))
        }
        guard let body = input.bytes() else { return nil }
        return Request(id: id, path: path, headers: headers, body: body)
    }

    public static func decodeResponse(_ frame: [UInt8]) -> Response? {
        var input = Reader(frame)
        guard let id = input.u32(), let status = input.u32(), let apnsID = input.string(),
              let body = input.bytes(), let failure = input.string(), let unprocessed = input.u32(),
              let problem = input.u32() else { return nil }
        return Response(id: id, status: Int32(bitPattern: status), apnsID: apnsID, body: body,
                        failure: failure, unprocessed: unprocessed == 1, endpointProblem: EndpointProblem(rawValue: problem))
    }

    /// Splits whole frames off the front of `buffer`, leaving a partial one in place.
    public static func takeFrames(from buffer: inout [UInt8]) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var start = 0
        while buffer.count - start >= 4 {
            let length = Int(buffer[start]) | Int(buffer[start + 1]) << 8 | Int(buffer[start + 2]) << 16 | Int(buffer[start + 3]) << 24
            guard buffer.count - start - 4 >= length else { break }
            frames.append(Array(buffer[(start + 4)..<(start + 4 + length)]))
            start += 4 + length
        }
        if start > 0 { buffer.removeFirst(start) }
        return frames
    }

    private struct Writer {
        var bytes: [UInt8] = [0, 0, 0, 0]

        mutating func u32(_ value: UInt32) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func string(_ text: String) {
            self.bytes(Array(text.utf8))
        }

        mutating func bytes(_ data: [UInt8]) {
            u32(UInt32(data.count))
            bytes.append(contentsOf: data)
        }

        func framed() -> [UInt8] {
            var out = bytes
            let length = UInt32(out.count - 4).littleEndian
            withUnsafeBytes(of: length) { for index in 0..<4 { out[index] = $0[index] } }
            return out
        }
    }

    private struct Reader {
        let data: [UInt8]
        var offset = 0

        init(_ data: [UInt8]) {
            self.data = data
        }

        mutating func u32() -> UInt32? {
            guard data.count - offset >= 4 else { return nil }
            defer { offset += 4 }
            return UInt32(data[offset]) | UInt32(data[offset + 1]) << 8 | UInt32(data[offset + 2]) << 16 | UInt32(data[offset + 3]) << 24
        }

        mutating func bytes() -> [UInt8]? {
            guard let count = u32().map(Int.init), data.count - offset >= count else { return nil }
            defer { offset += count }
            return Array(data[offset..<(offset + count)])
        }

        mutating func string() -> String? {
            bytes().map { String(decoding: $0, as: UTF8.self) }
        }
    }
}
