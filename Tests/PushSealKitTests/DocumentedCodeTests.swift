import Foundation
import Testing

/// Every Swift block in the README and the DocC articles, compiled as written: each becomes a
/// target of a package that depends on pushseal by path, built on Linux against swift-crypto and
/// the transcription of Apple's API (the path README's "Compiling your extension on Linux"
/// documents), in Swift 6 mode with warnings as errors. A block without an `import` goes on
/// the program of the block before it in the same file, as a reader reads an article; a block
/// that begins `// swift-tools-version` is a manifest, loaded by SwiftPM. Code Apple's SDK
/// refuses (a get-only property set) is refused against the transcription too.
@Suite("Documented code compiles as written")
struct DocumentedCodeTests {
    static let root = NewUserPackageTests.root

    /// One fenced ```swift block: where it is, and its text.
    struct Block {
        let file: String
        let line: Int
        let text: String

        var imports: [String] {
            text.split(separator: "\n").compactMap { line in
                line.hasPrefix("import ") ? String(line.dropFirst("import ".count).prefix { $0 != " " }) : nil
            }
        }
    }

    /// The documents whose Swift blocks are compiled: the README, docs/ and every DocC article.
    static func documents() throws -> [String] {
        var files = ["README.md"]
        let docs = root.appendingPathComponent("docs")
        for document in (try? FileManager.default.contentsOfDirectory(atPath: docs.path))?.sorted() ?? [] where document.hasSuffix(".md") {
            files.append("docs/" + document)
        }
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            for catalog in (try? FileManager.default.contentsOfDirectory(atPath: sources.appendingPathComponent(module).path)) ?? []
            where catalog.hasSuffix(".docc") {
                let folder = "Sources/\(module)/\(catalog)"
                for article in try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path).sorted()
                where article.hasSuffix(".md") {
                    files.append("\(folder)/\(article)")
                }
            }
        }
        return files
    }

    static func blocks(in file: String) throws -> [Block] {
        let lines = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n")
        var blocks: [Block] = []
        var start: Int?
        var body: [String] = []
        for (index, line) in lines.enumerated() {
            if start == nil, line == "```swift" {
                start = index + 1
                body = []
            } else if let first = start, line.hasPrefix("```") {
                blocks.append(Block(file: file, line: first, text: body.joined(separator: "\n")))
                start = nil
            } else if start != nil {
                body.append(line)
            }
        }
        return blocks
    }

    /// A program of one or more blocks, and whether it has statements at the top level
    /// (a script: `main.swift`) or only declarations (a file of a library, as an extension's is).
    struct Program {
        var blocks: [Block]
        var text: String { blocks.map(\.text).joined(separator: "\n\n") }
        var imports: Set<String> { Set(blocks.flatMap(\.imports)) }
        var isScript: Bool {
            let declarations = [
                "import ", "//", "@", "#", "}", ")", "func ", "final ", "class ", "struct ", "enum ", "extension ", "protocol ", "let ",
                "var ", "private ", "public ", "fileprivate ", "internal ", "open ", "typealias ", "actor "
            ]
            let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
            let firstLevel = lines.filter { !$0.hasPrefix(" ") && !$0.hasPrefix("\t") }
            // A `let`/`var` at the top followed by an indented line that is not a declaration's body
            // is still a declaration; a line such as `try …`, `if …` or `request.x = …` is not.
            return firstLevel.contains { line in !declarations.contains { line.hasPrefix($0) } }
        }
    }

    static func programs() throws -> (programs: [Program], manifests: [Block], orphans: [Block]) {
        var programs: [Program] = []
        var manifests: [Block] = []
        var orphans: [Block] = []
        for file in try documents() {
            var current: Int?
            for block in try blocks(in: file) {
                if block.text.hasPrefix("// swift-tools-version") {
                    manifests.append(block)
                } else if !block.imports.isEmpty {
                    programs.append(Program(blocks: [block]))
                    current = programs.count - 1
                } else if let current {
                    programs[current].blocks.append(block)
                } else {
                    orphans.append(block)
                }
            }
        }
        return (programs, manifests, orphans)
    }

    @Test func everySwiftBlockInTheREADMEAndTheArticlesCompilesAsWritten() throws {
        guard let crypto = ProcessInfo.processInfo.environment["PUSHSEAL_SWIFT_CRYPTO"] else {
            Issue.record("PUSHSEAL_SWIFT_CRYPTO is not set: run Scripts/device-test.sh")
            return
        }
        let (programs, manifests, orphans) = try Self.programs()
        for orphan in orphans {
            Issue.record("\(orphan.file):\(orphan.line): a Swift block with no import and no block before it to continue")
        }
        #expect(programs.count >= 9, "the README's and the articles' programs are all found")
        #expect(programs.contains { $0.imports.contains("PushSeal") } && programs.contains { $0.imports.contains("Intents") })

        let work = Self.root.appendingPathComponent(".build/doc-code")
        let package = work.appendingPathComponent("Documented")
        try? FileManager.default.removeItem(at: package)
        try FileManager.default.createDirectory(at: package.appendingPathComponent("deps"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: package.appendingPathComponent("deps/pushseal"), withDestinationURL: Self.root)
        var targets: [String] = []
        for (index, program) in programs.enumerated() {
            let name = "Doc\(index)"
            let folder = package.appendingPathComponent("Sources/\(name)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let origin = program.blocks.map { "\($0.file):\($0.line)" }.joined(separator: ", ")
            try Data("// \(origin)\n\(program.text)\n".utf8).write(to: folder.appendingPathComponent(program.isScript ? "main.swift" : "Code.swift"))
            let products = ["PushSealKit", "PushSeal", "PushSealSend"].filter { program.imports.contains($0) }.map { #".product(name: "\#($0)", package: "pushseal")"# }
            targets.append(
                #"    .\#(program.isScript ? "executableTarget" : "target")(name: "\#(name)", dependencies: [\#(products.joined(separator: ", "))], swiftSettings: strict),"#)
        }
        let manifest = """
            // swift-tools-version:6.0
            import PackageDescription

            let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]
            let package = Package(
                name: "Documented",
                dependencies: [.package(path: "deps/pushseal")],
                targets: [
            \(targets.joined(separator: "\n"))
                ]
            )
            """
        try Data(manifest.utf8).write(to: package.appendingPathComponent("Package.swift"))
        var environment = ProcessInfo.processInfo.environment
        environment["PUSHSEAL_SWIFT_CRYPTO"] = crypto
        environment["PUSHSEAL_APPLE_TRANSCRIPTION"] = "1"
        let scratch = work.appendingPathComponent("scratch")
        let build = try Self.run("/usr/bin/env", ["swift", "build", "--package-path", package.path, "--scratch-path", scratch.path], environment: environment)
        try #require(build.status == 0, "swift build of the documented code:\n\(Self.located(build.output, programs: programs))")

        // Code the SDK refuses is refused here: each of these sets a get-only property.
        let modules = scratch.appendingPathComponent("debug/Modules").path
        let refused: [(String, String)] = [
            ("import UserNotifications\nfunc f(_ r: UNNotificationRequest) { r.content = UNNotificationContent() }", "content"),
            ("import UserNotifications\nfunc f(_ r: UNNotificationRequest) { r.identifier = \"x\" }", "identifier"),
            ("import Foundation\nimport UserNotifications\nfunc f(_ a: UNNotificationAttachment) { a.url = URL(fileURLWithPath: \"/x\") }", "url"),
            ("import UserNotifications\nfunc f(_ c: UNNotificationContent) { c.title = \"x\" }", "title"),
            ("import Intents\nfunc f(_ i: INSendMessageIntent) { i.sender = nil }", "sender")
        ]
        let checks = work.appendingPathComponent("refused")
        try FileManager.default.createDirectory(at: checks, withIntermediateDirectories: true)
        for (index, (code, property)) in refused.enumerated() {
            let file = checks.appendingPathComponent("refused\(index).swift")
            try Data(code.utf8).write(to: file)
            let check = try Self.run("/usr/bin/env", ["swiftc", "-typecheck", "-swift-version", "6", "-I", modules, file.path], environment: environment)
            #expect(check.status != 0 && check.output.contains("'\(property)' is a get-only property"), "\(code)\n\(check.output)")
        }
        // The same calls reading the properties compile, so the refusals are the properties' own.
        let allowed = checks.appendingPathComponent("allowed.swift")
        try Data(
            """
            import Foundation
            import Intents
            import UserNotifications
            func f(_ r: UNNotificationRequest, _ a: UNNotificationAttachment, _ i: INSendMessageIntent) -> [Any?] {
                [r.content, r.identifier, a.url, r.content.title, i.sender]
            }
            """.utf8
        ).write(to: allowed)
        let check = try Self.run("/usr/bin/env", ["swiftc", "-typecheck", "-swift-version", "6", "-I", modules, allowed.path], environment: environment)
        #expect(check.status == 0, "\(check.output)")

        // A manifest block loads as a manifest (its dependency is not fetched: only the file is checked).
        for (index, block) in manifests.enumerated() {
            let folder = work.appendingPathComponent("manifest\(index)")
            try? FileManager.default.removeItem(at: folder)
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("Sources/NotificationService"), withIntermediateDirectories: true)
            try Data("\(block.text)\n".utf8).write(to: folder.appendingPathComponent("Package.swift"))
            let dump = try Self.run("/usr/bin/env", ["swift", "package", "--package-path", folder.path, "dump-package"], environment: environment)
            let product = ["PushSealKit", "PushSealSend"].contains { dump.output.contains("\"\($0)\"") }
            #expect(dump.status == 0 && product, "\(block.file):\(block.line): \(dump.output.suffix(2000))")
        }
    }

    /// The README's attachment hook is the one its behaviour test runs, word for word.
    @Test func theAttachmentTestRunsTheREADMEsHook() throws {
        let readme = try Self.documents().flatMap { try Self.blocks(in: $0) }.first { $0.text.contains("URLSession.shared.download(for:") }
        let block = try #require(readme, "the README's attachment example")
        let lines = block.text.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex { $0.contains("override func didOpen") })
        let end = try #require(lines[start...].firstIndex { $0 == "    }" })
        let hook = lines[start...end].joined().filter { !$0.isWhitespace }
        let test = try String(contentsOf: Self.root.appendingPathComponent("Tests/PushSealKitTests/AppleAdapterTests.swift"), encoding: .utf8)
        #expect(test.filter { !$0.isWhitespace }.contains(hook))
    }

    /// The compiler's messages with each Doc target's file named by the document it came from.
    static func located(_ output: String, programs: [Program]) -> String {
        var text = String(output.suffix(6000))
        for (index, program) in programs.enumerated().reversed() {
            text = text.replacingOccurrences(of: "Sources/Doc\(index)/", with: "[\(program.blocks[0].file):\(program.blocks[0].line)] ")
        }
        return text
    }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let log = Pipe()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let output = log.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
