import HTTP2

/// `pushseal webapp serve`: the receiving web app's files over HTTPS (HTTP/2, the listener's
/// engine), for trying it on this machine or a LAN. Browsers run service workers only in a
/// secure context, and speak HTTP/2 only over TLS, so there is no plain mode. Read-only:
/// GET and HEAD of the files it was given; every request gets one line through `log`,
/// which must not wait (it runs on an event-loop thread).
package final class WebAppServer: Sendable {
    /// One file the server answers with.
    package struct File: Sendable {
        package var contentType: String
        package var bytes: [UInt8]

        package init(contentType: String, bytes: [UInt8]) {
            self.contentType = contentType
            self.bytes = bytes
        }
    }

    /// What every answer carries: the page loads nothing but its own files, and a browser
    /// asks again rather than keep an old service worker or config.
    static let commonHeaders: [(name: String, value: String)] = [
        ("cache-control", "no-cache"),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        (
            "content-security-policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
        )
    ]

    private let server: HTTP2Server

    package var url: String {
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        return "https://\(host):\(server.port)/"
    }

    /// Binds; nothing is served before `start`.
    package init(host: String, port: Int, tls: ListenerIdentity, files: [String: File], log: @escaping @Sendable (String) -> Void) throws(ListenerError) {
        var limits = HTTP2Server.Limits()
        limits.connections = 64
        limits.bodyBytes = 0
        do {
            server = try HTTP2Server(host: host, port: port, tls: tls, limits: limits, threads: 1) { request in
                guard case .complete = request.ending else {
                    if case .reset(let why) = request.ending { log("\(request.method) \(TerminalText.escaping(request.path)) reset (\(why))") }
                    return nil
                }
                let response = Self.answer(request, files: files)
                log("\(request.method) \(TerminalText.escaping(request.path)) \(response.status)")
                return response
            }
        } catch {
            throw ListenerError(error)
        }
    }

    static func answer(_ request: HTTP2Server.Request, files: [String: File]) -> HTTP2Server.Response {
        var path = String(request.path.prefix { $0 != "?" && $0 != "#" })
        if path == "/" { path = "/index.html" }
        guard request.method == "GET" || request.method == "HEAD" else {
            return HTTP2Server.Response(status: 405, headers: [("allow", "GET, HEAD")] + commonHeaders)
        }
        guard path.hasPrefix("/"), let file = files[String(path.dropFirst())] else {
            return HTTP2Server.Response(status: 404, headers: [("content-type", "text/plain; charset=utf-8")] + commonHeaders, body: Array("not found\n".utf8))
        }
        return HTTP2Server.Response(
            status: 200, headers: [("content-type", file.contentType)] + commonHeaders,
            body: request.method == "HEAD" ? [] : file.bytes)
    }

    package func start() { server.start() }
    package func stop() { server.stop() }
    package func wait() { server.wait() }
}
