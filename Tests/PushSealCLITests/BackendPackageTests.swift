import Foundation
import Testing

/// A backend developer follows the "Sending from a Swift server" article as written: its
/// manifest (pushseal by path instead of its URL) and its code, built as a package of its
/// own, sending through the public API to `pushseal receive --listen`, which checks the
/// provider token and opens every alert with the keyring.
@Suite("a Swift server sends through the public API")
struct BackendPackageTests {
    static let root = ArchitectureTests.root
    static let article = "Sources/PushSealSend/PushSealSend.docc/SendingFromAServer.md"

    /// The article's Swift blocks: the manifest, and the program in reading order.
    static func articleCode() throws -> (manifest: String, program: String) {
        let text = try String(contentsOf: root.appendingPathComponent(article), encoding: .utf8)
        var blocks: [String] = []
        var current: [String]?
        for line in text.components(separatedBy: "\n") {
            if current == nil, line == "```swift" {
                current = []
            } else if let body = current, line.hasPrefix("```") {
                blocks.append(body.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        let manifests = blocks.filter { $0.hasPrefix("// swift-tools-version") }
        return (manifests.first ?? "", blocks.filter { !$0.hasPrefix("// swift-tools-version") }.joined(separator: "\n\n"))
    }

    @Test func theArticlesPackageSealsAndSendsToAListener() throws {
        let (manifest, program) = try Self.articleCode()
        let url = #".package(url: "https://example.com/you/pushseal.git", branch: "main")"#
        #expect(manifest.contains(url), "the manifest depends on pushseal by its URL, which the test replaces with the path")
        let package = Self.root.appendingPathComponent(".build/backend-package/Notifier")
        try FileManager.default.createDirectory(at: package.appendingPathComponent("Sources/Notifier"), withIntermediateDirectories: true)
        // By path, under the name its URL gives it: a package is known by its folder's name.
        let link = package.appendingPathComponent("deps/pushseal")
        try FileManager.default.createDirectory(at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: Self.root)
        let local = #".package(path: "deps/pushseal")"#
        try Data(manifest.replacingOccurrences(of: url, with: local).utf8).write(to: package.appendingPathComponent("Package.swift"))
        try Data(program.utf8).write(to: package.appendingPathComponent("Sources/Notifier/main.swift"))
        let build = try runProcess(
            "/usr/bin/env", ["swift", "build", "--package-path", package.path, "--scratch-path", package.appendingPathComponent(".build").path],
            watchdog: 1_200)
        try #require(build.status == 0, "the article's package builds: \(build.stdout.suffix(3_000)) \(build.stderr.suffix(2_000))")

        let keyring = try KeyringFixture()
        let folder = TemporaryFolder()
        let (p8, publicKey) = try PythonClients.keypair(in: folder)
        let listener = try Listener(["--json", "--keys", keyring.keys, "--provider-key", "KEY1234567=\(publicKey)", "--team", "TEAM123456"])
        let devices = (1...3).map { String(repeating: String($0), count: 64) }
        let run = try runProcess(
            package.appendingPathComponent(".build/debug/Notifier").path, devices,
            environment: [
                "APNS_TOPIC": "com.example.app", "APNS_KEY_FILE": p8, "APNS_KEY_ID": "KEY1234567", "APNS_TEAM_ID": "TEAM123456",
                "PUSHSEAL_KEYS": keyring.keys, "APNS_ENDPOINT": listener.url, "APNS_TRUST_FILE": keyring.keys + "/tls-cert.pem"
            ])
        let records = listener.finish().stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(run.status == 0, "\(run.stderr)")
        // One send to the first device, then the stream to all three: four results, in order.
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(run.stdout)")
        #expect(zip(lines, [devices[0]] + devices).allSatisfy { $0.hasPrefix("ok \($1) ") }, "\(lines)")
        #expect(records.count == 4)
        #expect(records.allSatisfy { $0["status"] as? String == "decrypted" && $0["title"] as? String == "Deploy finished" })
        #expect(records.allSatisfy { $0["body"] as? String == "api-7 is live" })
        // Each result names the notification the listener saw.
        let seen = Set(records.compactMap { $0["apns-id"] as? String })
        #expect(lines.allSatisfy { line in seen.contains { line.contains($0) } })
    }
}
