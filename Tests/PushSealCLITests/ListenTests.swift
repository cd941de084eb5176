import Foundation
import Locking
import PushSeal
import PushSealJSON
import SealCrypto
import Testing

/// A `pushseal receive --listen 0 …` for one test: started, its address read from stderr,
/// stopped with SIGTERM by `finish`.
final class Listener: Sendable {
    let process: RunningProcess
    let url: String
    let port: Int

    /// - Parameter wrapper: a program that runs the listener (`prlimit --nofile=…`), if any.
    /// - Parameter address: what --listen is given.
    init(_ arguments: [String], wrapper: [String] = [], address: String = "0") throws {
        if let program = wrapper.first {
            process = try RunningProcess(
                Array(wrapper.dropFirst()) + [pushsealBinary, "receive", "--listen", address] + arguments,
                executable: program)
        } else {
            process = try RunningProcess(["receive", "--listen", address] + arguments)
        }
        let running = process
        guard eventually(within: .seconds(20), { running.stderrSoFar.contains("listening on ") }) else {
            let run = running.wait(atMost: .seconds(1))
            throw ListenerDidNotStart(stderr: run.stderr)
        }
        let line = running.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("listening on ") }!
        url = String(line.dropFirst("listening on ".count))
        port = Int(url.split(separator: ":").last!)!
    }

    /// SIGTERM, then everything it wrote.
    func finish() -> Run {
        process.signal(SIGTERM)
        return process.wait(atMost: .seconds(60))
    }

    /// Its JSON records so far.
    var records: [[String: Any]] {
        process.stdoutSoFar.split(separator: "\n").map { jsonObject(String($0)) }
    }

    struct ListenerDidNotStart: Error, CustomStringConvertible {
        let stderr: String
        var description: String { "the listener did not start: \(stderr)" }
    }
}

/// A reply as curl saw it: status, headers (lowercased names) and body.
struct CurlReply {
    let status: Int
    let headers: [String: String]
    let body: String
    var reason: String? { jsonObject(body)["reason"] as? String }
}

/// One request through curl over HTTP/2.
func curl(
    _ url: String, cacert: String? = nil, method: String = "POST", headers: [String] = [],
    body: String? = nil
) throws -> CurlReply {
    let scratch = TemporaryFolder()
    var arguments = ["-s", "-S", "-X", method, "-D", scratch.file("headers"), "-o", scratch.file("body"), "--max-time", "30"]
    if let cacert {
        arguments += ["--http2", "--cacert", cacert]
    } else {
        arguments += ["--http2-prior-knowledge"]
    }
    for header in headers { arguments += ["-H", header] }
    if let body {
        scratch.write("payload", body)
        arguments += ["--data-binary", "@" + scratch.file("payload")]
    }
    let run = try runProcess("/usr/bin/curl", arguments + [url])
    guard run.status == 0 else { throw CurlFailed(stderr: run.stderr) }
    let lines = scratch.read("headers").components(separatedBy: "\r\n").filter { !$0.isEmpty }
    let status = Int(lines.first!.split(separator: " ")[1])!
    var fields: [String: String] = [:]
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return CurlReply(status: status, headers: fields, body: scratch.read("body"))
}

struct CurlFailed: Error, CustomStringConvertible {
    let stderr: String
    var description: String { "curl failed: \(stderr)" }
}

/// The Python clients (Reference/apns_clients.py): tokens signed with `cryptography`,
/// requests through `httpx`, `h2` and `aioapns`.
enum PythonClients {
    static let script = Bundle.module.url(forResource: "apns_clients", withExtension: "py", subdirectory: "Reference")!.path

    static func run(_ arguments: [String]) throws -> [String: Any] {
        let run = try runProcess("/usr/bin/env", ["python3", script] + arguments)
        #expect(run.status == 0, "\(run.stderr)")
        return jsonObject(run.stdout)
    }

    static func token(p8: String, kid: String, team: String, issuedAt: Int? = nil) throws -> String {
        let run = try runProcess("/usr/bin/env", ["python3", script, "token", p8, kid, team] + (issuedAt.map { [String($0)] } ?? []))
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// An Apple-style key pair in `folder`: AuthKey.p8 and AuthKey.pub.pem.
    static func keypair(in folder: TemporaryFolder) throws -> (p8: String, publicKey: String) {
        _ = try run(["keypair", folder.path])
        // Private, as Apple's download should be kept: send warns about a .p8 others can read.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder.file("AuthKey.p8"))
        return (folder.file("AuthKey.p8"), folder.file("AuthKey.pub.pem"))
    }
}

let deviceToken = String(repeating: "ab", count: 32)
let topic = "com.example.app"

/// A provider token of the right shape and age, signed by no one: what a listener without
/// --provider-key accepts.
func shapedToken(issuedAt: Int = Int(Date().timeIntervalSince1970)) -> String {
    func part(_ json: String) -> String { Base64.encode(Array(json.utf8)) }
    return part(#"{"alg":"ES256","kid":"ABC123DEFG"}"#) + "." + part(#"{"iss":"DEF123GHIJ","iat":\#(issuedAt)}"#)
        + "." + Base64.encode([UInt8](repeating: 7, count: 64))
}

/// The headers every accepted request in these tests carries.
let acceptable = ["apns-topic: \(topic)", "authorization: bearer \(shapedToken())"]

@Suite("receive --listen: an APNs-compatible endpoint")
struct ListenTests {
    // MARK: Real clients get APNs' answers

    @Test func curlOverTLSTrustsTheSelfSignedCertificateAndSeesTheDecryptedAlert() throws {
        let keyring = try KeyringFixture()
        let payload = try keyring.encrypt(["-t", "Deploy", "-b", "api-7 is live"]).stdout
        let listener = try Listener(["--json", "--keys", keyring.keys])
        let certificate = keyring.keys + "/tls-cert.pem"
        #expect(listener.url.hasPrefix("https://127.0.0.1:"))
        #expect(listener.process.stderrSoFar.contains("made a self-signed certificate \(certificate)"))
        #expect(listener.process.stderrSoFar.contains("checked for shape and age only"))
        for file in ["tls-cert.pem", "tls-key.pem"] {
            let mode = try FileManager.default.attributesOfItem(atPath: keyring.keys + "/" + file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        let identifier = "0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D"
        let reply = try curl(
            listener.url + "/3/device/" + deviceToken, cacert: certificate,
            headers: acceptable + [
                "apns-push-type: alert", "apns-priority: 10", "apns-id: \(identifier)",
                "apns-expiration: 0", "apns-collapse-id: deploys"
            ], body: payload)
        #expect(reply.status == 200)
        #expect(reply.headers["apns-id"] == identifier)
        #expect(reply.body.isEmpty)
        // Localhost is in the certificate too.
        let byName = try curl(
            "https://localhost:\(listener.port)/3/device/" + deviceToken, cacert: certificate,
            headers: acceptable, body: payload)
        #expect(byName.status == 200)
        let run = listener.finish()
        #expect(run.status == 0, "\(run.stderr)")
        let records = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == 2)
        let first = try #require(records.first { $0["apns-id"] as? String == identifier })
        #expect(first["status"] as? String == "decrypted")
        #expect(first["title"] as? String == "Deploy")
        #expect(first["body"] as? String == "api-7 is live")
        #expect(first["device"] as? String == deviceToken)
        #expect(first["apns-topic"] as? String == topic)
        #expect(first["apns-push-type"] as? String == "alert")
        #expect(first["apns-priority"] as? String == "10")
        #expect(first["apns-expiration"] as? String == "0")
        #expect(first["apns-collapse-id"] as? String == "deploys")
        #expect((first["source"] as? String)?.hasPrefix("listen:") == true)

        // The second start reuses the certificate it made.
        let before = try String(contentsOfFile: certificate, encoding: .utf8)
        let again = try Listener(["--json", "--keys", keyring.keys])
        #expect(again.process.stderrSoFar.contains("using the self-signed certificate \(certificate)"))
        #expect(again.finish().status == 0)
        #expect(try String(contentsOfFile: certificate, encoding: .utf8) == before)
    }

    @Test func plaintextSpeaksHTTP2WithPriorKnowledge() throws {
        let keyring = try KeyringFixture()
        let payload = try keyring.encrypt(["-t", "Plain", "-b", "text"]).stdout
        let listener = try Listener(["--plaintext", "--json", "--keys", keyring.keys])
        #expect(listener.url.hasPrefix("http://127.0.0.1:"))
        let reply = try curl(listener.url + "/3/device/" + deviceToken, headers: acceptable, body: payload)
        #expect(reply.status == 200)
        #expect(UUID(uuidString: reply.headers["apns-id"] ?? "") != nil, "a new apns-id when none was given")
        let run = listener.finish()
        #expect(run.status == 0)
        #expect(jsonObject(run.stdout)["apns-id"] as? String == reply.headers["apns-id"])
        #expect(jsonObject(run.stdout)["status"] as? String == "decrypted")
        // No TLS files were made for a plaintext listener.
        #expect(!FileManager.default.fileExists(atPath: keyring.keys + "/tls-cert.pem"))
    }

    @Test func pythonClientsHttpxAndAioapnsGetTheDocumentedAnswers() throws {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        let key = try PythonClients.keypair(in: folder)
        let payload = try keyring.encrypt(["-t", "From Python", "-b", "via httpx and aioapns"]).stdout
        folder.write("payload.json", payload)
        let listener = try Listener([
            "--json", "--keys", keyring.keys, "--provider-key", "KEY1234567=\(key.p8)", "--team", "TEAM123456",
            "--device", deviceToken, "--topic", topic
        ])
        #expect(!listener.process.stderrSoFar.contains("shape and age only"))
        let certificate = keyring.keys + "/tls-cert.pem"
        let token = try PythonClients.token(p8: key.p8, kid: "KEY1234567", team: "TEAM123456")
        let accepted = try PythonClients.run([
            "httpx", "https://localhost:\(listener.port)", certificate,
            "/3/device/" + deviceToken, topic, token, folder.file("payload.json")
        ])
        #expect(accepted["status"] as? Int == 200)
        #expect(accepted["version"] as? String == "HTTP/2")
        let unknown = try PythonClients.run([
            "httpx", "https://localhost:\(listener.port)", certificate,
            "/3/device/" + String(repeating: "cd", count: 32), topic, token, folder.file("payload.json")
        ])
        #expect(unknown["status"] as? Int == 400)
        #expect(unknown["content-type"] as? String == "application/json")
        #expect(jsonObject(unknown["body"] as? String ?? "")["reason"] as? String == "BadDeviceToken")

        // aioapns sends HTTP/2 over TLS without ALPN, and signs its own tokens with the .p8.
        let viaAioapns = try PythonClients.run([
            "aioapns", String(listener.port), certificate, key.p8, "KEY1234567",
            "TEAM123456", deviceToken, topic, folder.file("payload.json")
        ])
        #expect(viaAioapns["successful"] as? Bool == true, "\(viaAioapns)")
        #expect(viaAioapns["status"] as? String == "200")
        #expect(viaAioapns["apns-id"] as? String == viaAioapns["sent-id"] as? String)

        let run = listener.finish()
        #expect(run.status == 0, "\(run.stderr)")
        let statuses = run.stdout.split(separator: "\n").map { jsonObject(String($0))["status"] as? String ?? "" }
        // One payload, sent to one device by both clients: shown once.
        #expect(statuses.sorted() == ["decrypted", "duplicate", "rejected"])
    }

    // MARK: Provider tokens

    @Test func providerTokensAreVerifiedWithTheGivenKey() throws {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        let key = try PythonClients.keypair(in: folder)
        let other = TemporaryFolder()
        let otherKey = try PythonClients.keypair(in: other)
        let payload = try keyring.encrypt(["-t", "Signed", "-b", "token"]).stdout
        // The public key as PEM here; the .p8 itself works as well (the test above).
        let listener = try Listener([
            "--plaintext", "--json", "--keys", keyring.keys,
            "--provider-key", "KEY1234567=\(key.publicKey)", "--team", "TEAM123456"
        ])
        func send(_ token: String) throws -> CurlReply {
            try curl(
                listener.url + "/3/device/" + deviceToken,
                headers: ["apns-topic: \(topic)", "authorization: bearer \(token)"], body: payload)
        }
        let now = Int(Date().timeIntervalSince1970)
        let good = try send(PythonClients.token(p8: key.p8, kid: "KEY1234567", team: "TEAM123456"))
        #expect(good.status == 200)
        // The same token again: still good (and remembered).
        let cases: [(token: String, status: Int, reason: String?)] = [
            (try PythonClients.token(p8: key.p8, kid: "KEY1234567", team: "TEAM123456", issuedAt: now - 60), 200, nil),
            (try PythonClients.token(p8: otherKey.p8, kid: "KEY1234567", team: "TEAM123456"), 403, "InvalidProviderToken"),
            (try PythonClients.token(p8: key.p8, kid: "OTHERKEYID", team: "TEAM123456"), 403, "InvalidProviderToken"),
            (try PythonClients.token(p8: key.p8, kid: "KEY1234567", team: "OTHERTEAM1"), 403, "InvalidProviderToken"),
            (try PythonClients.token(p8: key.p8, kid: "KEY1234567", team: "TEAM123456", issuedAt: now - 3_700), 403, "ExpiredProviderToken"),
            (try PythonClients.token(p8: key.p8, kid: "KEY1234567", team: "TEAM123456", issuedAt: now + 3_600), 403, "InvalidProviderToken"),
            ("not.a.token", 403, "InvalidProviderToken")
        ]
        for (token, status, reason) in cases {
            let reply = try send(token)
            #expect(reply.status == status, "\(reason ?? "accepted")")
            if let reason { #expect(reply.reason == reason) }
        }
        let run = listener.finish()
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").count == 1 + cases.count)
    }

    // MARK: Every rejection in the table

    @Test func everyRejectionReasonIsAnsweredAsAPNsDoes() throws {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        let key = try PythonClients.keypair(in: folder)
        let payload = try keyring.encrypt(["-t", "Checked", "-b", "by the rules"]).stdout
        let gone = String(repeating: "ef", count: 32)
        let unknown = String(repeating: "cd", count: 32)
        let listener = try Listener([
            "--plaintext", "--json", "--keys", keyring.keys, "--provider-key", "KEY1234567=\(key.p8)",
            "--team", "TEAM123456", "--device", deviceToken, "--device", gone, "--unregistered", gone, "--topic", topic
        ])
        let token = try PythonClients.token(p8: key.p8, kid: "KEY1234567", team: "TEAM123456")
        let old = try PythonClients.token(
            p8: key.p8, kid: "KEY1234567", team: "TEAM123456",
            issuedAt: Int(Date().timeIntervalSince1970) - 7_200)
        let good = ["apns-topic: \(topic)", "authorization: bearer \(token)"]
        let path = "/3/device/" + deviceToken
        func row(_ headers: [String] = good, path: String = path, method: String = "POST", body: String? = nil)
            -> (path: String, method: String, headers: [String], body: String?)
        {
            (path, method, headers, body ?? payload)
        }
        let rows: [(reason: String, status: Int, request: (path: String, method: String, headers: [String], body: String?))] = [
            ("BadMessageId", 400, row(good + ["apns-id: not-a-uuid"])),
            ("MethodNotAllowed", 405, row(method: "PUT")),
            ("MissingTopic", 400, row(["authorization: bearer \(token)"])),
            ("TopicDisallowed", 400, row(["apns-topic: com.example.other", "authorization: bearer \(token)"])),
            ("BadCollapseId", 400, row(good + ["apns-collapse-id: " + String(repeating: "c", count: 65)])),
            ("BadPriority", 400, row(good + ["apns-priority: 7"])),
            ("InvalidPushType", 400, row(good + ["apns-push-type: carrier-pigeon"])),
            ("BadPath", 404, row(path: "/3/devices/" + deviceToken)),
            ("MissingDeviceToken", 400, row(path: "/3/device/")),
            ("BadDeviceToken", 400, row(path: "/3/device/not-hex")),
            ("BadDeviceToken", 400, row(path: "/3/device/" + unknown)),
            ("Unregistered", 410, row(path: "/3/device/" + gone)),
            ("MissingProviderToken", 403, row(["apns-topic: \(topic)"])),
            ("InvalidProviderToken", 403, row(["apns-topic: \(topic)", "authorization: bearer x.y.z"])),
            ("ExpiredProviderToken", 403, row(["apns-topic: \(topic)", "authorization: bearer \(old)"])),
            ("PayloadEmpty", 400, row(body: "")),
            ("PayloadTooLarge", 413, row(body: #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "p", count: 4_100) + #""}"#)),
            ("PayloadTooLarge", 413, row(good + ["apns-push-type: voip"], body: #"{"aps":{},"pad":""# + String(repeating: "p", count: 5_120) + #""}"#)),
            ("BadExpirationDate", 400, row(good + ["apns-expiration: tomorrow"]))
        ]
        for (reason, status, request) in rows {
            let reply = try curl(
                listener.url + request.path, method: request.method, headers: request.headers,
                body: request.body?.isEmpty == true ? nil : request.body)
            #expect(reply.status == status, "\(reason)")
            #expect(reply.reason == reason, "\(reason): \(reply.body)")
            #expect(reply.headers["content-type"] == "application/json", "\(reason)")
            #expect(reply.headers["apns-id"] != nil, "\(reason)")
            if status == 410 {
                let timestamp = try #require(jsonObject(reply.body)["timestamp"] as? Int)
                #expect(abs(timestamp - Int(Date().timeIntervalSince1970 * 1_000)) < 3_600_000)
            } else {
                #expect(jsonObject(reply.body).count == 1, "only the reason: \(reply.body)")
            }
        }
        // Duplicate headers take a client that sends them: h2, with its checks off.
        let duplicated = try PythonClients.run([
            "h2", "127.0.0.1", String(listener.port),
            String(
                data: try JSONSerialization.data(withJSONObject: [
                    [":method", "POST"], [":scheme", "http"], [":path", path], [":authority", "localhost"],
                    ["apns-topic", topic], ["apns-topic", topic], ["authorization", "bearer \(token)"]
                ]), encoding: .utf8)!, "-"
        ])
        #expect(duplicated["status"] as? Int == 400)
        #expect(jsonObject(duplicated["body"] as? String ?? "")["reason"] as? String == "DuplicateHeaders")
        #expect(duplicated["max_concurrent_streams"] as? Int == 1_000)
        // The voip limit is 5120: 5000 bytes of voip payload are fine.
        let voip = try curl(
            listener.url + path, headers: good + ["apns-push-type: voip"],
            body: #"{"aps":{},"pad":""# + String(repeating: "p", count: 4_900) + #""}"#)
        #expect(voip.status == 200)

        let run = listener.finish()
        #expect(run.status == 0)
        let records = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        let rejected = records.filter { $0["status"] as? String == "rejected" }
        #expect(rejected.count == rows.count + 1)
        #expect(Set(rejected.compactMap { $0["reason"] as? String }) == Set(rows.map(\.reason) + ["DuplicateHeaders"]))
        for record in rejected {
            #expect(record["http-status"] as? Int != nil)
            #expect(record["apns-id"] as? String != nil)
        }
        // Every answer the listener gives is covered here; the load, header-size and
        // token-update answers are crossed in ServiceLimitsTests.
        let given = APNsRejection.table.map(\.reason) + APNsRejection.limits.map(\.reason)
        let elsewhere = APNsRejection.limits.map(\.reason) + [APNsRejection.tooManyProviderTokenUpdates.reason]
        #expect(Set(given) == Set(rows.map(\.reason) + ["DuplicateHeaders"] + elsewhere))
    }

    // MARK: Into the runner

    @Test func headersReachTheExtensionAndAnswersDoNotWaitForIt() throws {
        let folder = TemporaryFolder()
        // Holds every delivery until the test lets it go, then answers with the headers it saw.
        folder.write(
            "extension.sh",
            """
            #!/bin/sh
            while [ ! -e \(folder.file("go")) ]; do sleep 0.05; done
            python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"title":"seen","body":json.dumps(r["headers"],sort_keys=True)}))'
            """)
        chmod(folder.file("extension.sh"), 0o755)
        let listener = try Listener(["--plaintext", "--json", "--extension", folder.file("extension.sh"), "--budget", "60s"])
        let payload = #"{"aps":{"alert":{"title":"t","body":"b"},"mutable-content":1}}"#
        var replies: [CurlReply] = []
        for index in 0..<3 {
            replies.append(
                try curl(
                    listener.url + "/3/device/" + deviceToken,
                    headers: [
                        "apns-push-type: alert", "apns-priority: 5", "apns-collapse-id: c\(index)"
                    ] + acceptable, body: payload))
        }
        // Every request was answered while every extension was still held.
        #expect(replies.allSatisfy { $0.status == 200 })
        #expect(listener.process.stdoutSoFar.isEmpty)
        folder.write("go", "")
        #expect(eventually(within: .seconds(30)) { listener.records.count == 3 })
        let run = listener.finish()
        #expect(run.status == 0)
        for record in run.stdout.split(separator: "\n").map({ jsonObject(String($0)) }) {
            #expect(record["status"] as? String == "modified")
            let headers = jsonObject(record["body"] as? String ?? "")
            #expect(headers["apns-topic"] as? String == topic)
            #expect(headers["apns-push-type"] as? String == "alert")
            #expect(headers["apns-priority"] as? String == "5")
            #expect((headers["apns-collapse-id"] as? String)?.hasPrefix("c") == true)
            #expect(headers["authorization"] == nil, "the provider token is not the extension's")
        }
    }

    @Test func headersReachTheThenProgramAfterDecrypting() throws {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        folder.write(
            "then.sh",
            """
            #!/bin/sh
            python3 -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"title":r["content"]["title"],"body":json.dumps(r["headers"],sort_keys=True)}))'
            """)
        chmod(folder.file("then.sh"), 0o755)
        let listener = try Listener(["--plaintext", "--json", "--keys", keyring.keys, "--then", folder.file("then.sh")])
        let payload = try keyring.encrypt(["-t", "Deploy", "-b", "api-7 is live"]).stdout
        let reply = try curl(
            listener.url + "/3/device/" + deviceToken,
            headers: [
                "apns-push-type: alert", "apns-priority: 10", "apns-expiration: 0"
            ] + acceptable, body: payload)
        #expect(reply.status == 200)
        #expect(eventually(within: .seconds(30)) { listener.records.count == 1 })
        let run = listener.finish()
        #expect(run.status == 0, "\(run.stderr)")
        let record = jsonObject(run.stdout)
        #expect(record["status"] as? String == "modified")
        #expect(record["title"] as? String == "Deploy", "the program saw the opened alert")
        let headers = jsonObject(record["body"] as? String ?? "")
        #expect(headers.count == 4, "\(headers)")
        #expect(headers["apns-topic"] as? String == topic)
        #expect(headers["apns-push-type"] as? String == "alert")
        #expect(headers["apns-priority"] as? String == "10")
        #expect(headers["apns-expiration"] as? String == "0")
    }

    /// `requests` requests from h2load over `connections` connections with `streams` in
    /// flight on each; returns h2load's report and the listener's records.
    private func load(requests: Int, connections: Int, streams: Int) throws -> (report: Run, records: [[String: Any]], status: Int32) {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        folder.write("payload.json", try keyring.encrypt(["-t", "Load", "-b", "one of many"]).stdout)
        let listener = try Listener(["--plaintext", "--json", "--keys", keyring.keys])
        let report = try runProcess(
            "/usr/bin/h2load",
            [
                "-n", String(requests), "-c", String(connections), "-m", String(streams), "-H", acceptable[0], "-H", acceptable[1],
                "-d", folder.file("payload.json"), listener.url + "/3/device/" + deviceToken
            ])
        let finished = listener.finish()
        return (report, finished.stdout.split(separator: "\n").map { jsonObject(String($0)) }, finished.status)
    }

    @Test func twoThousandRequestsOverOneConnectionWithAHundredStreamsAllGetRecords() throws {
        let (report, records, status) = try load(requests: 2_000, connections: 1, streams: 100)
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains("2000 succeeded"), "\(report.stdout)")
        #expect(report.stdout.contains("status codes: 2000 2xx"), "\(report.stdout)")
        #expect(status == 0)
        #expect(records.count == 2_000)
        // One payload to one device 2,000 times, a hundred at once: shown once, however the
        // streams race; every other arrival is a duplicate.
        #expect(records.filter { $0["status"] as? String == "decrypted" }.count == 1)
        #expect(records.filter { $0["status"] as? String == "duplicate" }.count == 1_999)
        #expect(Set(records.compactMap { $0["seq"] as? Int }) == Set(1...2_000))
    }

    @Test func manyConnectionsAtOnceAreAllAnswered() throws {
        let (report, records, status) = try load(requests: 2_000, connections: 50, streams: 10)
        #expect(report.stdout.contains("status codes: 2000 2xx"), "\(report.stdout)")
        #expect(status == 0)
        #expect(records.count == 2_000)
        #expect(Set(records.compactMap { ($0["source"] as? String)?.split(separator: "/").first }).count == 50)
    }

    @Test func oversizedHeadersAreAnswered431AndOthersStillServed() throws {
        let keyring = try KeyringFixture()
        let payload = try keyring.encrypt(["-t", "Big", "-b", "headers"]).stdout
        let listener = try Listener(["--plaintext", "--json", "--keys", keyring.keys])
        let big = try curl(
            listener.url + "/3/device/" + deviceToken,
            headers: acceptable + ["x-padding: " + String(repeating: "p", count: 9_000)], body: payload)
        #expect(big.status == 431)
        let fine = try curl(listener.url + "/3/device/" + deviceToken, headers: acceptable, body: payload)
        #expect(fine.status == 200)
        #expect(listener.finish().status == 0)
    }

    /// The reader of the records went away (`| head -c 1`): the listener stops, quietly, with 141.
    @Test func aReaderThatGoesAwayStopsTheListenerWith141() throws {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        folder.write("payload.json", try keyring.encrypt(["-t", "Nobody", "-b", "reads this"]).stdout)
        let run = try shell(
            """
            ( "$PUSHSEAL" receive --listen 0 --plaintext --json --keys "$KEYS" 2> "$DIR/err" | head -c 1 > /dev/null
              echo "${PIPESTATUS[0]}" > "$DIR/status" ) &
            for _ in $(seq 200); do grep -q 'listening on' "$DIR/err" 2>/dev/null && break; sleep 0.05; done
            url=$(grep -o 'http://[^ ]*' "$DIR/err")
            for _ in $(seq 40); do
              [ -e "$DIR/status" ] && break
              curl -s --http2-prior-knowledge --max-time 5 -o /dev/null -H "$TOPIC" -H "$AUTH" \
                --data-binary @"$DIR/payload.json" "$url/3/device/$DEVICE" || true
              sleep 0.05
            done
            wait
            cat "$DIR/status"; cat "$DIR/err" >&2
            """,
            environment: [
                "KEYS": keyring.keys, "DIR": folder.path, "TOPIC": acceptable[0], "AUTH": acceptable[1],
                "DEVICE": deviceToken
            ])
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "141", "\(run.stderr)")
        #expect(!run.stderr.contains("error:"), "\(run.stderr)")
    }

    // MARK: Stopping

    @Test func sigtermLetsDeliveriesInFlightFinishThenExitsZero() throws {
        let folder = TemporaryFolder()
        folder.write(
            "extension.sh",
            """
            #!/bin/sh
            cat >/dev/null
            touch \(folder.file("started"))
            while [ ! -e \(folder.file("go")) ]; do sleep 0.05; done
            echo '{"title":"finished","body":"after the signal"}'
            """)
        chmod(folder.file("extension.sh"), 0o755)
        let listener = try Listener(["--plaintext", "--json", "--extension", folder.file("extension.sh"), "--budget", "20s"])
        let reply = try curl(
            listener.url + "/3/device/" + deviceToken, headers: acceptable,
            body: #"{"aps":{"alert":{"title":"t","body":"b"},"mutable-content":1}}"#)
        #expect(reply.status == 200)
        #expect(eventually { FileManager.default.fileExists(atPath: folder.file("started")) })
        listener.process.signal(SIGTERM)
        // No new connection is taken once the signal has come.
        #expect(
            eventually {
                (try? runProcess("/usr/bin/curl", ["-s", "--http2-prior-knowledge", "--max-time", "5", listener.url]))?.status != 0
            })
        // The delivery in flight finishes only now, after the signal.
        folder.write("go", "")
        let run = listener.process.wait(atMost: .seconds(30))
        #expect(run.status == 0, "\(run.stderr)")
        let record = jsonObject(run.stdout)
        #expect(record["status"] as? String == "modified", "the extension finished within its budget")
        #expect(record["title"] as? String == "finished")
    }

    // MARK: Hostile clients

    @Test func hostileConnectionsCloseOnlyThemselves() throws {
        let keyring = try KeyringFixture()
        let payload = try keyring.encrypt(["-t", "Still", "-b", "here"]).stdout
        let listener = try Listener(["--plaintext", "--json", "--keys", keyring.keys, "--idle-timeout", "1s"])
        let kinds = ["garbage", "silent", "slow", "flood", "half-request", "bad-frame"]
        // What each client saw: closed by the server (hostile ones), or the status (the good one).
        let results = Locked<[String: String]>([:])
        DispatchQueue.concurrentPerform(iterations: kinds.count + 1) { index in
            if index == kinds.count {
                // A well-behaved client in the middle of it all.
                let reply = try? curl(listener.url + "/3/device/" + deviceToken, headers: acceptable, body: payload)
                results.withLock { $0["good"] = String(reply?.status ?? 0) }
            } else {
                let result = (try? PythonClients.run(["hostile", "127.0.0.1", String(listener.port), kinds[index]])) ?? [:]
                results.withLock { $0[kinds[index]] = (result["closed"] as? Bool == true) ? "closed" : "\(result)" }
            }
        }
        let seen = results.withLock { $0 }
        #expect(seen["good"] == "200")
        for kind in kinds {
            #expect(seen[kind] == "closed", "\(kind): \(seen[kind] ?? "")")
        }
        // And the listener still answers afterwards.
        let after = try curl(listener.url + "/3/device/" + deviceToken, headers: acceptable, body: payload)
        #expect(after.status == 200)
        let run = listener.finish()
        #expect(run.status == 0)
        // The half-request is a request too: it gets its record, as a reset stream.
        let records = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == 3, "the good request, the one after, and the half-request")
        let reset = records.filter { $0["status"] as? String == "reset" }
        #expect(reset.count == 1)
        #expect(reset.first?["reason"] as? String == "the request made no progress for 1.0 seconds", "\(reset)")
    }

    @Test func aTLSListenerClosesClientsThatDoNotHandshake() throws {
        let keyring = try KeyringFixture()
        let listener = try Listener(["--json", "--keys", keyring.keys, "--idle-timeout", "1s"])
        for kind in ["garbage", "silent"] {
            let result = try PythonClients.run(["hostile", "127.0.0.1", String(listener.port), kind])
            #expect(result["closed"] as? Bool == true, "\(kind)")
        }
        // Plain HTTP/2 against the TLS port is refused the same way.
        let plain = try runProcess(
            "/usr/bin/curl",
            [
                "-s", "--http2-prior-knowledge", "--max-time", "10",
                "http://127.0.0.1:\(listener.port)/3/device/" + deviceToken
            ])
        #expect(plain.status != 0)
        #expect(listener.finish().status == 0)
    }

    // MARK: Setup errors

    @Test(arguments: [
        (["receive", "--tls-cert", "c.pem", "--tls-key", "k.pem", "x.json"], "--tls-cert goes with --listen"),
        (["receive", "--listen", "eighty"], "--listen takes [HOST:]PORT"),
        (["receive", "--listen", "70000"], "--listen takes [HOST:]PORT"),
        (["receive", "--listen", "0", "--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
        (["receive", "--listen", "0", "--plaintext", "--tls-cert", "c.pem", "--tls-key", "k.pem"], "--plaintext serves without TLS"),
        (["receive", "--listen", "0", "--device", "xyz"], "--device takes a device token in hex"),
        (["receive", "--listen", "0", "--provider-key", "nofile"], "--provider-key takes KEYID=FILE"),
        (["receive", "--listen", "0", "payload.json"], "--listen takes its notifications from the network")
    ])
    func badListenOptionsAreUsageErrors(arguments: [String], message: String) throws {
        let run = parsed(arguments)
        #expect(run.status == 64)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func setupProblemsHaveTheirExitCodes() throws {
        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        folder.write("not-a-key.pem", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
        let notAKey = try pushseal(["receive", "--listen", "0", "--keys", keyring.keys, "--provider-key", "K=\(folder.file("not-a-key.pem"))"])
        #expect(notAKey.status == 65)
        #expect(notAKey.stderr.contains("is not an ES256 key"))
        let missing = try pushseal(["receive", "--listen", "0", "--keys", keyring.keys, "--provider-key", "K=\(folder.file("absent.p8"))"])
        #expect(missing.status == 66)
        let certificate = try pushseal([
            "receive", "--listen", "0", "--keys", keyring.keys,
            "--tls-cert", folder.file("absent.pem"), "--tls-key", folder.file("absent.key")
        ])
        #expect(certificate.status == 66)
        #expect(certificate.stderr.contains("cannot read the certificate"))
        let host = try pushseal(["receive", "--listen", "example.com:0", "--keys", keyring.keys])
        #expect(host.status == 69)
        #expect(host.stderr.contains("is not an IP address"))
        // A port already taken: 69, and a message that says so.
        let first = try Listener(["--plaintext", "--keys", keyring.keys])
        let taken = try pushseal(["receive", "--listen", "127.0.0.1:\(first.port)", "--plaintext", "--keys", keyring.keys])
        #expect(taken.status == 69)
        #expect(taken.stderr.contains("cannot listen on 127.0.0.1:\(first.port)"), "\(taken.stderr)")
        #expect(first.finish().status == 0)
    }
}

/// A file of this package, for tests that check the code's own tables.
func sourceFile(_ relative: String) -> String {
    var folder = URL(fileURLWithPath: #filePath)
    while folder.path != "/" {
        folder.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) { break }
    }
    return folder.appendingPathComponent(relative).path
}
