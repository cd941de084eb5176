import Foundation
import Locking
import SealCrypto

@testable import HTTP2

/// A server and clients of the project's HTTP/2 engine in one process, over 127.0.0.1.
final class Loopback: Sendable {
    let server: HTTP2Server
    /// The certificate the server shows, when it serves TLS.
    let certificateFile: String?
    let folder: String

    /// - Parameter tls: serve HTTPS with a self-signed certificate for localhost and 127.0.0.1.
    init(
        tls: Bool = false, limits: HTTP2Server.Limits = HTTP2Server.Limits(), connectionEnded: (@Sendable (Int) -> Void)? = nil,
        handler: @escaping HTTP2Server.Handler
    ) throws {
        folder = NSTemporaryDirectory() + "http2-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var identity: TLSIdentity?
        if tls {
            let made = try SelfSignedCertificate.make(names: "DNS:localhost,IP:127.0.0.1", commonName: "http2 test")
            try Data(made.certificate).write(to: URL(fileURLWithPath: folder + "/cert.pem"))
            try Data(made.key).write(to: URL(fileURLWithPath: folder + "/key.pem"))
            identity = TLSIdentity(certificateFile: folder + "/cert.pem", keyFile: folder + "/key.pem")
        }
        certificateFile = identity?.certificateFile
        server = try HTTP2Server(
            host: "127.0.0.1", port: 0, tls: identity, limits: limits, threads: 2, connectionEnded: connectionEnded, handler: handler)
        server.start()
    }

    deinit {
        server.stop()
        server.wait()
        try? FileManager.default.removeItem(atPath: folder)
    }

    var url: String { (certificateFile == nil ? "http://" : "https://") + "127.0.0.1:\(server.port)" }

    /// Client settings for this server: trusting its certificate, short timeouts.
    func settings(_ change: (inout HTTP2Client.Settings) -> Void = { _ in }) throws -> HTTP2Client.Settings {
        var settings = HTTP2Client.Settings(
            endpoint: try ClientEndpoint(url: url), trustFile: certificateFile, timeout: .seconds(10), connectTimeout: .seconds(5),
            connectAttempts: 2)
        change(&settings)
        return settings
    }

    /// Sends `requests` through a new client and returns every response, in id order, once
    /// the client has finished.
    func exchange(_ requests: [HTTP2Client.Request], _ change: (inout HTTP2Client.Settings) -> Void = { _ in }) throws
        -> [HTTP2Client.Response]
    {
        try Self.exchange(requests, settings: try settings(change))
    }

    static func exchange(_ requests: [HTTP2Client.Request], settings: HTTP2Client.Settings, beforeFinish: (HTTP2Client) -> Void = { _ in })
        throws -> [HTTP2Client.Response]
    {
        let responses = Locked<[HTTP2Client.Response]>([])
        let client = try HTTP2Client(settings) { batch in responses.withLock { $0 += batch } }
        client.submit(requests)
        beforeFinish(client)
        client.finish()
        return responses.withLock { $0 }.sorted { $0.id < $1.id }
    }
}

/// A request with an id, to a path, with a body.
func request(_ id: Int, path: String = "/", headers: [HTTP2Client.Field] = [], body: [UInt8] = []) -> HTTP2Client.Request {
    HTTP2Client.Request(id: id, path: path, headers: headers, body: body)
}

/// A port nothing listens on: bound, then closed.
func closedPort() -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(socket, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// An HTTP CONNECT proxy on 127.0.0.1, in this process: tunnels each connection to the
/// host and port it names, or answers `refusal` (a status line) instead. Records what it was
/// asked to connect to.
final class ConnectProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    let asked = Locked<[String]>([])
    private let refusal: String?

    init(refusal: String? = nil) throws {
        self.refusal = refusal
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(socket, $0, length) } }
        _ = Glibc.listen(socket, 16)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        listener = socket
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { shutdown(listener, Int32(SHUT_RDWR)) }

    var url: String { "http://127.0.0.1:\(port)" }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ client: Int32) {
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)), read(client, &byte, 1) == 1 { head.append(byte) }
        let line = String(decoding: head, as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
        asked.withLock { $0.append(line) }
        if let refusal {
            _ = Array("\(refusal)\r\nContent-Length: 0\r\n\r\n".utf8).withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            close(client)
            return
        }
        let target = line.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        let parts = target.split(separator: ":")
        let upstream = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(Int(parts.last ?? "0") ?? 0).bigEndian
        let connected = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let answer = connected == 0 ? "HTTP/1.1 200 Connection established\r\n\r\n" : "HTTP/1.1 502 Bad Gateway\r\n\r\n"
        _ = Array(answer.utf8).withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
        guard connected == 0 else {
            close(client)
            close(upstream)
            return
        }
        Thread.detachNewThread { Self.pump(from: upstream, to: client) }
        Self.pump(from: client, to: upstream)
    }

    private static func pump(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let wrote = buffer.withUnsafeBytes { write(target, $0.baseAddress! + sent, count - sent) }
                guard wrote > 0 else { break }
                sent += wrote
            }
        }
        shutdown(target, Int32(SHUT_WR))
        shutdown(source, Int32(SHUT_RD))
    }
}
