import Foundation
import Testing

/// The path a new user takes: a package of their own that depends on pushseal by path, built
/// from scratch on Linux with only PUSHSEAL_SWIFT_CRYPTO set, opening what `pushseal encrypt`
/// sealed with a share from `pushseal keys export`.
@Suite("PushSealKit: a package that depends on pushseal")
struct NewUserPackageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let manifest = """
        // swift-tools-version:6.0
        import PackageDescription

        let package = Package(
            name: "Consumer",
            dependencies: [.package(path: "deps/pushseal")],
            targets: [.executableTarget(name: "Consumer", dependencies: [.product(name: "PushSealKit", package: "pushseal")])]
        )
        """

    static let program = """
        import Foundation
        import PushSealKit

        // consumer SHARE < payloads: one line per payload, "status|title|body".
        let (kid, key) = try KeyShare.secret(parsing: CommandLine.arguments[1])
        let opener = NotificationOpener(keys: InMemoryKeyStore([kid: .secret(key)]))
        while let line = readLine() {
            let opened = opener.open(json: Data(line.utf8))
            print("\\(opened.status.rawValue)|\\(opened.title)|\\(opened.body)")
        }
        """

    @Test func aPackageThatDependsOnPushsealOpensWhatTheCLISeals() throws {
        let environment = ProcessInfo.processInfo.environment
        let tool = try CrossImplementationTests.Tool()
        guard let crypto = environment["PUSHSEAL_SWIFT_CRYPTO"] else {
            Issue.record("PUSHSEAL_SWIFT_CRYPTO is not set: run Scripts/device-test.sh")
            return
        }
        // Built beside the kit's own build, so a second run is incremental; the package itself is made anew.
        let work = Self.root.appendingPathComponent(".build/new-user")
        let package = work.appendingPathComponent("Consumer")
        try? FileManager.default.removeItem(at: package)
        try FileManager.default.createDirectory(at: package.appendingPathComponent("Sources/Consumer"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: package.appendingPathComponent("deps"), withIntermediateDirectories: true)
        // The dependency is named by its folder, as a clone of the repository would be.
        try FileManager.default.createSymbolicLink(at: package.appendingPathComponent("deps/pushseal"), withDestinationURL: Self.root)
        try Data(Self.manifest.utf8).write(to: package.appendingPathComponent("Package.swift"))
        try Data(Self.program.utf8).write(to: package.appendingPathComponent("Sources/Consumer/main.swift"))

        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = ["swift", "build", "--package-path", package.path, "--scratch-path", work.appendingPathComponent("scratch").path]
        var childEnvironment = environment
        // A new user's build: swift-crypto from where PUSHSEAL_SWIFT_CRYPTO says, no transcription of Apple's API.
        childEnvironment["PUSHSEAL_APPLE_TRANSCRIPTION"] = nil
        childEnvironment["PUSHSEAL_SWIFT_CRYPTO"] = crypto
        build.environment = childEnvironment
        let log = Pipe()
        build.standardOutput = log
        build.standardError = log
        try build.run()
        let output = log.fileHandleForReading.readDataToEndOfFile()
        build.waitUntilExit()
        try #require(build.terminationStatus == 0, "swift build of the consumer: \(String(decoding: output.suffix(3000), as: UTF8.self))")

        _ = try tool.run(["keys", "init", "--keys", "K"])
        let share = try tool.run(["keys", "export", "--keys", "K"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let payloads = try tool.run(
            ["encrypt", "--batch", "--keys", "K"],
            stdin: """
                {"title": "Deploy", "body": "api-7 is live"}
                {"title": "Disk", "body": "91% on /var"}

                """)
        let tampered = payloads.split(separator: "\n")[1].replacingOccurrences(of: "\"}", with: "A\"}")
        let opened = try Self.run(
            work.appendingPathComponent("scratch/debug/Consumer").path, [share],
            stdin: payloads.split(separator: "\n")[0] + "\n" + tampered + "\n")
        #expect(
            opened == "decrypted|Deploy|api-7 is live\nmalformed|Encrypted notification|This message could not be decrypted on this device.\n"
                || opened == "decrypted|Deploy|api-7 is live\nauth-failed|Encrypted notification|This message could not be decrypted on this device.\n",
            "\(opened)")
    }

    static func run(_ executable: String, _ arguments: [String], stdin: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
