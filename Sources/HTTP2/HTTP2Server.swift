internal import CNGHTTP2
import SealCrypto
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/2 server on libnghttp2 (and OpenSSL's libssl for TLS) that answers each
/// request with what `handler` returns.
///
/// - The handler runs on the connection's event-loop thread as soon as a request stream has
///   ended, and must not block: it decides an answer, it does no work on the request.
/// - A few event-loop threads share the connections; each connection lives on one of them.
/// - Every limit says what happens past it, and a hostile or broken client (garbage, a slow
///   or half-open connection, oversized headers, floods of frames or resets) loses its own
///   stream or connection and no other's.
/// - Every request stream a client opens reaches the handler exactly once: complete, with
///   headers too large, or reset before it ended (`Request.Ending`).
package final class HTTP2Server: Sendable {
    /// What the server accepts and how long it waits.
    package struct Limits: Sendable {
        /// SETTINGS_MAX_CONCURRENT_STREAMS: requests in flight on one connection.
        package var concurrentStreams = 1_000
        /// Header names and values of one request, in bytes (HPACK-decoded); past it the
        /// answer is 431, and past four times it the connection ends (GOAWAY
        /// ENHANCE_YOUR_CALM): a header block that large is a decompression bomb.
        package var headerBytes = 8_192
        /// Body bytes kept per request; the rest is counted (`Request.bodyLength`), not kept.
        package var bodyBytes = 8_192
        /// Bytes of unfinished requests (headers and kept body) one connection may hold; a
        /// stream that would pass it is reset with REFUSED_STREAM (safe to retry).
        package var connectionBufferBytes = 1 << 20
        /// The same, across all connections.
        package var bufferBytes = 16 << 20
        /// A connection with no request open for this long gets GOAWAY and is closed (PINGs
        /// and SETTINGS do not count); so is one that stops reading its answers this long.
        package var idleTimeout: Duration = .seconds(60)
        /// A request whose headers or body make no progress for this long (or for the idle
        /// timeout, when that is shorter) is reset (CANCEL).
        package var requestTimeout: Duration = .seconds(10)
        /// A TLS handshake must end within this.
        package var handshakeTimeout: Duration = .seconds(10)
        /// Connections open at once. At the cap the longest-idle connection of the loop that
        /// accepts is closed (GOAWAY) to admit the new one; with none idle, the new one is
        /// closed. Lowered at start when the descriptor limit is lower.
        package var connections = 1_024
        /// Resets of unanswered streams a client may send at once, and per second after that
        /// (nghttp2's own defaults); past them, GOAWAY ENHANCE_YOUR_CALM.
        package var resetBurst = 1_000
        package var resetsPerSecond = 33
        /// Bytes read from one connection before the others on its thread are served.
        package var readBudget = 64 * 1_024
        /// Accepting pauses this long when the process is out of descriptors.
        package var acceptPause: Duration = .milliseconds(100)
        /// On stop, connections still busy after this are closed regardless.
        package var drainTimeout: Duration = .seconds(5)
        /// Descriptors kept free for everything but connections (keyring, extension pipes,
        /// the runtime): the connection cap is lowered to leave them, or a quarter of the
        /// limit when that is less.
        package var reservedDescriptors = 256

        package init() {}
    }

    /// What the server did past its limits, for the operator.
    package final class Counters: Sendable {
        /// Times accepting paused for want of descriptors or memory.
        package let acceptPauses = Atomic<Int>(0)
        /// Idle connections closed to admit a new one at the cap.
        package let evicted = Atomic<Int>(0)
        /// New connections closed at the cap with no idle one to close instead.
        package let refused = Atomic<Int>(0)
        /// Streams the server reset for breaking HTTP/2's rules (nghttp2's own resets).
        package let serverResets = Atomic<Int>(0)
        /// Connections sent away (GOAWAY ENHANCE_YOUR_CALM) for spending their reset budget.
        package let calmed = Atomic<Int>(0)

        init() {}
    }

    /// One request, once its stream has ended.
    package struct Request: Sendable {
        package var method: String
        package var path: String
        /// In arrival order, names lowercased (HTTP/2 requires it); pseudo-headers left out.
        package var headers: [(name: String, value: String)]
        /// Up to `Limits.bodyBytes` of the body.
        package var body: [UInt8]
        /// The whole body's length, kept or not.
        package var bodyLength: Int
        /// Numbers the connection (from 1, in accept order) and the stream on it.
        package var connection: Int
        package var stream: Int32
        package var ending: Ending

        /// How the stream ended.
        package enum Ending: Sendable, Equatable {
            /// The request ended; the handler's response is sent.
            case complete
            /// The header list passed `Limits.headerBytes`; the response is sent, but the
            /// headers given are only those that fit.
            case headersTooLarge
            /// Reset (by the client, a protocol error or a limit) or cut off by the
            /// connection closing before it ended; nothing is sent. The reason is a fact for
            /// the record.
            case reset(String)
        }

        /// Every value of a header, in order.
        package func values(_ name: String) -> [String] {
            headers.compactMap { $0.name == name ? $0.value : nil }
        }
    }

    /// An answer: status, headers (lowercase names) and body.
    package struct Response: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]
        /// How many of `headers`, from the first, differ in every response (an id): they are
        /// sent without indexing, since entering them in HPACK's table would only push out
        /// entries that do repeat, at both ends, and cost the encoder a search each time.
        package var unindexedHeaders: Int

        package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [], unindexedHeaders: Int = 0) {
            self.status = status
            self.headers = headers
            self.body = body
            self.unindexedHeaders = unindexedHeaders
        }
    }

    /// Answers a request, once per stream. A stream that was reset (`ending` `.reset`) gets
    /// no answer, so its handler returns nil; a complete request answered nil gets a 500.
    package typealias Handler = @Sendable (Request) -> Response?

    /// The address the server is bound to (the real port when 0 was asked for).
    package let host: String
    package let port: Int
    package let usesTLS: Bool

    /// Connections admitted at once: `Limits.connections`, or fewer when the descriptor
    /// limit leaves less.
    package var connectionLimit: Int { shared.connectionLimit }
    /// What happened past the limits so far.
    package var counters: Counters { shared.counters }

    private let listener: Int32
    private let shared: ServerSide.Shared
    private let loops: [ServerSide]
    private let stopped = Atomic<Bool>(false)

    /// Binds and listens; no connection is accepted before `start`.
    /// - Parameters:
    ///   - tls: a certificate and key to serve HTTPS with (ALPN `h2`, or no ALPN at all);
    ///     nil for HTTP/2 in the clear with prior knowledge.
    ///   - threads: event-loop threads.
    ///   - roundEnded: called on an event-loop thread after each round of I/O (every
    ///     request that arrived together has been handled), so a handler can hand work on
    ///     in batches rather than one request at a time.
    ///   - connectionEnded: called on an event-loop thread when a connection has closed,
    ///     after the last handler call for it, with its number.
    package init(
        host: String, port: Int, tls: TLSIdentity?, limits: Limits = Limits(),
        threads: Int = 2, roundEnded: (@Sendable () -> Void)? = nil,
        connectionEnded: (@Sendable (Int) -> Void)? = nil,
        handler: @escaping Handler
    ) throws(HTTP2ServerError) {
        let context = try tls.map { identity throws(HTTP2ServerError) in try TLSContext(identity: identity) }
        let bound = try ListeningSocket.bind(host: host, port: port)
        self.host = host
        self.port = bound.port
        self.usesTLS = tls != nil
        listener = bound.descriptor
        let connectionNumbers = Atomic<Int>(0)
        var descriptors = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors)
        let available = Int(clamping: descriptors.rlim_cur)
        let shared = ServerSide.Shared(
            listener: bound.descriptor, tls: context, limits: limits,
            connectionLimit: max(1, min(limits.connections, available - min(limits.reservedDescriptors, available / 4))),
            handler: handler, roundEnded: roundEnded, connectionEnded: connectionEnded,
            nextConnection: { connectionNumbers.add(1, ordering: .relaxed).newValue })
        self.shared = shared
        var loops: [ServerSide] = []
        do {
            for _ in 0..<max(1, threads) {
                loops.append(try ServerSide(shared: shared))
            }
        } catch {
            // The deinit does not run for a server that never finished its init; the loops
            // made so far close their own descriptors as they go.
            close(bound.descriptor)
            throw error
        }
        // A ring: a loop at the cap with nothing idle of its own asks the next one.
        for (index, loop) in loops.enumerated() { loop.sibling = loops[(index + 1) % loops.count] }
        self.loops = loops
    }

    deinit {
        close(listener)
    }

    /// Starts accepting connections.
    package func start() {
        for loop in loops { loop.start() }
    }

    /// Stops accepting, sends GOAWAY on every connection, lets the requests already
    /// received be answered, and closes each connection once it is idle (or after
    /// `Limits.drainTimeout`). Returns at once; `wait` returns when all are closed.
    package func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for loop in loops { loop.stop() }
    }

    /// Waits until the event loops have ended (after `stop`).
    package func wait() {
        for loop in loops { loop.join() }
    }
}

/// Why the server could not start.
package struct HTTP2ServerError: ChainedError, Equatable {
    /// What part failed; errors compare equal when their codes match.
    package enum Code: Sendable {
        /// The address cannot be listened on (taken, not local, not an address).
        case address
        /// The certificate or key cannot be read, or they do not match.
        case identity
        /// The system or a library ran out of something.
        case resources
    }

    package let code: Code
    package let message: String
    /// The `errno` behind the failure, or 0.
    package let errno: Int32
    package var description: String { message }
    package var reason: String { message }
    /// The system's failure (`errno`), or the error of the library beneath.
    package let underlying: (any Error & Sendable)?

    init(_ code: Code, _ message: String, errno: Int32 = 0, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
        self.underlying = underlying ?? (errno == 0 ? nil : SystemCallFailure(errno: errno))
    }

    package static func == (lhs: HTTP2ServerError, rhs: HTTP2ServerError) -> Bool {
        lhs.code == rhs.code
    }
}
