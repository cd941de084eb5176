import HTTP2
import SealCrypto
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `pushseal-bench push-service FOLDER [ORIGINS]`: a push service that does nothing but answer
/// 201, the floor under `send --webpush` in the benchmark (the Python stand-in of the tests
/// opens every message, and would be what is measured). ORIGINS servers (3 by default), each
/// on a port of its own, so a subscriptions file spans that many push services. Writes a
/// self-signed certificate to FOLDER/cert.pem, prints "ports P1 P2 …", serves until stdin
/// closes, then prints "requests N".
func runPushService(folder: String, origins: Int) {
    let made = try! SelfSignedCertificate.make(names: "IP:127.0.0.1", commonName: "pushseal-bench push-service")
    let certificate = folder + "/cert.pem"
    let key = folder + "/key.pem"
    for (path, bytes) in [(certificate, made.certificate), (key, made.key)] {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(descriptor >= 0, "cannot write \(path)")
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }
    let requests = Atomic<Int>(0)
    var limits = HTTP2Server.Limits()
    limits.bodyBytes = 0
    let servers = (0..<origins).map { _ in
        try! HTTP2Server(host: "127.0.0.1", port: 0, tls: TLSIdentity(certificateFile: certificate, keyFile: key), limits: limits, threads: 1) {
            request in
            guard case .complete = request.ending else { return nil }
            let number = requests.add(1, ordering: .relaxed).newValue
            return HTTP2Server.Response(status: 201, headers: [("location", "/message/\(number)")], unindexedHeaders: 1)
        }
    }
    for server in servers { server.start() }
    // Said with one write(2): the script waits for this line, and print's buffer would hold it.
    var line = "ports " + servers.map { String($0.port) }.joined(separator: " ") + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
    var byte: UInt8 = 0
    while read(0, &byte, 1) > 0 {}
    for server in servers { server.stop() }
    for server in servers { server.wait() }
    print("requests \(requests.load(ordering: .relaxed))")
}
