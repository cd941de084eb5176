#if canImport(Glibc)
import Glibc
#endif
internal import CCurl
import PushSeal
import SealCrypto

/// One libcurl multi handle sending requests to one endpoint over one HTTP/2 connection
/// (CURLPIPE_MULTIPLEX, one connection per host): the first request alone, so the
/// connection and its SETTINGS are in place, then up to `maximumStreams` at once (libcurl
/// also keeps to the server's SETTINGS_MAX_CONCURRENT_STREAMS).
///
/// Per request costs are what limit the rate, so easy handles are reused (libcurl's own
/// advice: creating one is a dozen allocations and every option set again), requests are
/// taken and answers handed on in batches, one wake-up and one write per batch.
final class CurlSession: @unchecked Sendable {
    // Unchecked: `running` and the curl handles are used on the thread inside `run` only;
    // other threads reach the session through `pending` (locked) and curl_multi_wakeup,
    // which libcurl documents as callable from any thread.
    private let multi: UnsafeMutableRawPointer
    private let base: String
    private let caFile: String?
    private let maximumStreams: Int
    private let timeoutMilliseconds: Int
    private let pending = Locked<(queue: [TransportFrame.Request], ended: Bool)>(([], false))
    private var running: [UInt32: Transfer] = [:]
    /// Easy handles whose transfer is over, kept for the next requests.
    private var idle: [Transfer] = []
    private var connected = false

    /// An easy handle, and what it keeps alive for libcurl while its request is in flight.
    final class Transfer {
        let easy: UnsafeMutableRawPointer
        var id: UInt32 = 0
        var body: [UInt8] = []
        var headers: UnsafeMutablePointer<curl_slist>?
        var response: [UInt8] = []
        var apnsID = ""
        /// libcurl's own words for a failure (which certificate check failed, say), owned
        /// here for as long as the handle lives.
        let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: 256)

        init(easy: UnsafeMutableRawPointer) {
            self.easy = easy
            errorText.initialize(repeating: 0, count: 256)
        }

        /// What went wrong, in libcurl's detailed words when it gave them.
        func failure(_ result: CURLcode) -> String {
            errorText[0] != 0 ? String(cString: errorText) : String(cString: curl_easy_strerror(result))
        }

        /// Ready for another request; the options that never change stay set.
        func clear() {
            curl_slist_free_all(headers)
            headers = nil
            body = []
            response.removeAll(keepingCapacity: true)
            apnsID = ""
            errorText[0] = 0
        }

        deinit {
            curl_slist_free_all(headers)
            curl_easy_cleanup(easy)
            errorText.deallocate()
        }
    }

    init(base: String, caFile: String?, maximumStreams: Int, timeoutMilliseconds: Int) {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        multi = curl_multi_init()
        self.base = base
        self.caFile = caFile
        self.timeoutMilliseconds = timeoutMilliseconds
        // Without TLS, one request at a time (see `start`).
        self.maximumStreams = base.hasPrefix("http://") ? 1 : max(1, maximumStreams)
        _ = pushseal_multi_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = pushseal_multi_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1)
        _ = pushseal_multi_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, self.maximumStreams)
    }

    /// Queues requests; callable from any thread.
    func enqueue(_ requests: [TransportFrame.Request]) {
        guard !requests.isEmpty else { return }
        pending.withLock { $0.queue.append(contentsOf: requests) }
        curl_multi_wakeup(multi)
    }

    /// No more requests will come; `run` returns once the queued ones are answered.
    func endOfInput() {
        pending.withLock { $0.ended = true }
        curl_multi_wakeup(multi)
    }

    /// Sends until input has ended and every request has its answer in `emit`, which gets
    /// the answers that came together.
    func run(emit: ([TransportFrame.Response]) -> Void) {
        var answers: [TransportFrame.Response] = []
        let collect: (TransportFrame.Response) -> Void = { answers.append($0) }
        while true {
            // Until the first answer, one request: it opens the connection that the
            // others then share instead of each racing to open its own.
            let room = (connected ? maximumStreams : 1) - running.count
            if room > 0 {
                let (taken, ended) = pending.withLock { state -> ([TransportFrame.Request], Bool) in
                    let count = min(room, state.queue.count)
                    defer { state.queue.removeFirst(count) }
                    return (Array(state.queue.prefix(count)), state.ended)
                }
                for request in taken { start(request, emit: collect) }
                if ended, taken.isEmpty, running.isEmpty, pending.withLock({ $0.queue.isEmpty }) {
                    if !answers.isEmpty { emit(answers) }
                    return
                }
            }
            var active: Int32 = 0
            curl_multi_perform(multi, &active)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                finish(easy, result: pushseal_message_result(message), emit: collect)
            }
            if !answers.isEmpty {
                emit(answers)
                answers.removeAll(keepingCapacity: true)
            }
            curl_multi_poll(multi, nil, 0, 1_000, nil)
        }
    }

    /// A fresh easy handle with every option that is the same for each request.
    private func makeTransfer() -> Transfer? {
        guard let easy = curl_easy_init() else { return nil }
        let transfer = Transfer(easy: easy)
        _ = pushseal_easy_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorText)
        // HTTP/2 only, as APNs speaks: over TLS by ALPN, in the clear with prior knowledge.
        let clear = base.hasPrefix("http://")
        _ = pushseal_easy_long(easy, CURLOPT_HTTP_VERSION, Int(clear ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE : CURL_HTTP_VERSION_2TLS))
        // libcurl 7.88 (Debian 12) fails every request after the first on a reused or
        // multiplexed HTTP/2 connection without TLS ("Error in the HTTP2 framing layer",
        // against any server): there, each request gets a connection of its own.
        if clear { _ = pushseal_easy_long(easy, CURLOPT_FORBID_REUSE, 1) }
        _ = pushseal_easy_long(easy, CURLOPT_PIPEWAIT, 1)
        // libcurl's own trace on stderr, for diagnosing a server, with the provider token
        // taken out of every line that would show it.
        if getenv("PUSHSEAL_CURL_VERBOSE") != nil {
            _ = pushseal_easy_long(easy, CURLOPT_VERBOSE, 1)
            _ = pushseal_easy_debug(easy) { _, type, data, size, _ in
                let marks: [curl_infotype: String] = [CURLINFO_TEXT: "* ", CURLINFO_HEADER_IN: "< ", CURLINFO_HEADER_OUT: "> "]
                guard let mark = marks[type], let data else { return 0 }
                let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
                var trace = ""
                for line in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
                    trace += mark + CurlSession.hidingToken(in: String(line)) + "\n"
                }
                try? FileIO.writeAll(2, Array(trace.utf8))
                return 0
            }
        }
        _ = pushseal_easy_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = pushseal_easy_long(easy, CURLOPT_CONNECTTIMEOUT_MS, 10_000)
        // A stream that stalls is given up on (and retried) rather than waited for forever.
        _ = pushseal_easy_long(easy, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        _ = pushseal_easy_long(easy, CURLOPT_POST, 1)
        if let caFile { _ = pushseal_easy_pointer(easy, CURLOPT_CAINFO, caFile) }
        let user = Unmanaged.passUnretained(transfer).toOpaque()
        _ = pushseal_easy_pointer(easy, CURLOPT_PRIVATE, user)
        _ = pushseal_easy_pointer(easy, CURLOPT_WRITEDATA, user)
        _ = pushseal_easy_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
            let length = size * count
            // An APNs answer is a short JSON object; more than that is not one.
            if transfer.response.count < 16_384, let data {
                transfer.response.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            }
            return length
        }
        _ = pushseal_easy_pointer(easy, CURLOPT_HEADERDATA, user)
        _ = pushseal_easy_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, user in
            let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
            let length = size * count
            // Only apns-id is wanted; other lines are passed over without making a String.
            if let data, length > 8 {
                let line = UnsafeRawBufferPointer(start: data, count: length)
                if zip(line.prefix(8), "apns-id:".utf8).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) {
                    transfer.apnsID = String(decoding: line.dropFirst(8), as: UTF8.self).trimmingCharacters(in: " \r\n\t")
                }
            }
            return length
        }
        return transfer
    }

    private func start(_ request: TransportFrame.Request, emit: (TransportFrame.Response) -> Void) {
        guard let transfer = idle.popLast() ?? makeTransfer() else {
            return emit(.init(id: request.id, status: 0, apnsID: "", body: [], failure: "libcurl could not make a request", unprocessed: true))
        }
        let easy = transfer.easy
        transfer.id = request.id
        transfer.body = request.body
        _ = pushseal_easy_pointer(easy, CURLOPT_URL, base + request.path)
        // The body stays alive in the transfer until the request is over.
        transfer.body.withUnsafeBytes { bytes in
            _ = pushseal_easy_pointer(easy, CURLOPT_POSTFIELDS, bytes.baseAddress)
        }
        _ = pushseal_easy_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(transfer.body.count))
        // libcurl's form content type means nothing to APNs; leave it out.
        var list = curl_slist_append(nil, "Content-Type:")
        for header in request.headers { list = curl_slist_append(list, "\(header.name): \(header.value)") }
        transfer.headers = list
        _ = pushseal_easy_pointer(easy, CURLOPT_HTTPHEADER, list)
        running[request.id] = transfer
        curl_multi_add_handle(multi, easy)
    }

    private func finish(_ easy: UnsafeMutableRawPointer, result: CURLcode, emit: (TransportFrame.Response) -> Void) {
        guard let user = pushseal_private(easy) else { return }
        let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
        curl_multi_remove_handle(multi, easy)
        running[transfer.id] = nil
        defer {
            transfer.clear()
            if idle.count < maximumStreams { idle.append(transfer) }
        }
        let status = pushseal_response_code(easy)
        if result == CURLE_OK, status > 0 {
            connected = true
            emit(.init(id: transfer.id, status: Int32(status), apnsID: transfer.apnsID, body: transfer.response,
                       failure: "", unprocessed: false))
        } else {
            // No answer: the server cannot have acted on a request it never took (no
            // connection, a refused stream, a GOAWAY before it), which is what a resend needs.
            let neverTaken: Set<CURLcode> = [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_HTTP2_STREAM,
                                             CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION]
            let problem: TransportFrame.EndpointProblem? = switch result {
            case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST: .unreachable
            case CURLE_OPERATION_TIMEDOUT where !connected: .unreachable
            case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CONNECT_ERROR: .untrusted
            default: nil
            }
            emit(.init(id: transfer.id, status: 0, apnsID: "", body: [],
                       failure: transfer.failure(result), unprocessed: neverTaken.contains(result),
                       endpointProblem: problem))
        }
    }
}

extension CurlSession {
    /// The line with whatever follows `authorization:` replaced: the trace is for people,
    /// and a provider token is a credential for an hour.
    static func hidingToken(in line: String) -> String {
        let name = Array("authorization:".utf8)
        let bytes = Array(line.utf8)
        guard bytes.count >= name.count,
              let start = (0...(bytes.count - name.count)).first(where: { at in
                  (0..<name.count).allSatisfy { bytes[at + $0] | 0x20 == name[$0] | 0x20 }
              }) else { return line }
        return String(decoding: bytes[..<(start + name.count)], as: UTF8.self) + " (hidden)" + (line.hasSuffix("]") ? "]" : "")
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(self).trimmingCharacters(in: set)
    }
}
