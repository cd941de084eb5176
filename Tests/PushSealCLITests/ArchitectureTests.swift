import Foundation
import Testing

/// ARCHITECTURE.md's module table is the module graph: each module imports, and declares in
/// Package.swift, exactly the project modules its row allows.
@Suite("architecture")
struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Module → the project modules it may import, from the table's rows.
    static func table() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        var rows: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 5 else { continue }
            let module = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            rows[module] = Set(cells[3].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "` ")) }.filter { !$0.isEmpty })
        }
        return rows
    }

    /// The project modules the Swift files under Sources/`module` import.
    static func imports(of module: String, among projectModules: Set<String>) throws -> Set<String> {
        let folder = root.appendingPathComponent("Sources/" + module)
        let pattern = try NSRegularExpression(pattern: importPattern, options: .anchorsMatchLines)
        var found: Set<String> = []
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let name = String(text[Range(match.range(at: 1), in: text)!])
                if projectModules.contains(name) { found.insert(name) }
            }
        }
        return found
    }

    /// An import in any of its spellings: with attributes (`@_exported`, `@preconcurrency`,
    /// `@_spi(X)`, several at once), an access level (`public import`, `internal import`, …)
    /// and a kind (`import struct Module.Type`). The module is the first capture.
    static let importPattern =
        #"^[ \t]*(?:(?:@\w+(?:\([^)]*\))?|public|package|internal|fileprivate|private)[ \t]+)*import[ \t]+(?:(?:struct|class|enum|protocol|typealias|func|var|let)[ \t]+)?(\w+)"#

    /// The Swift source of every file under Sources/`module`.
    static func sources(of module: String) throws -> [String] {
        let folder = root.appendingPathComponent("Sources/" + module)
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        return try files.map { try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8) }
    }

    /// Target → its dependencies on project modules, as Package.swift declares them.
    static func declaredDependencies(among projectModules: Set<String>) throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"\.(?:target|executableTarget)\(\s*name: "(\w+)"(?:,\s*dependencies: \[([^\]]*)\])?"#)
        var declared: [String: Set<String>] = [:]
        for match in pattern.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)) {
            let name = String(manifest[Range(match.range(at: 1), in: manifest)!])
            let list = Range(match.range(at: 2), in: manifest).map { String(manifest[$0]) } ?? ""
            let names = try NSRegularExpression(pattern: #""(\w+)""#).matches(in: list, range: NSRange(list.startIndex..., in: list))
                .map { String(list[Range($0.range(at: 1), in: list)!]) }
            declared[name] = Set(names).intersection(projectModules)
        }
        return declared
    }

    @Test func everyModuleImportsWhatTheTableAllowsAndNothingElse() throws {
        let table = try Self.table()
        let sources = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path)
        #expect(Set(table.keys) == Set(sources), "every folder under Sources has a row, and every row a folder")
        let projectModules = Set(sources)
        for (module, allowed) in table.sorted(by: { $0.key < $1.key }) {
            #expect(try Self.imports(of: module, among: projectModules) == allowed, "\(module)'s imports")
        }
    }

    @Test func packageSwiftDeclaresTheSameGraph() throws {
        let table = try Self.table()
        let declared = try Self.declaredDependencies(among: Set(table.keys))
        for (module, allowed) in table.sorted(by: { $0.key < $1.key }) where !module.hasPrefix("C") || module == "CSystem" {
            #expect(declared[module] == allowed, "\(module) in Package.swift: \(declared[module].map { $0.sorted() } ?? [])")
        }
    }

    @Test func theImportPatternSeesEverySpelling() throws {
        let pattern = try NSRegularExpression(pattern: Self.importPattern, options: .anchorsMatchLines)
        let lines = [
            "import A", "public import B", "@_exported public import C", "@preconcurrency internal import D",
            "import struct E.Thing", "@_spi(Internal) @preconcurrency import F", "    import G", "package import H"
        ]
        let found = lines.compactMap { line in
            pattern.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)).map { String(line[Range($0.range(at: 1), in: line)!]) }
        }
        #expect(found == ["A", "B", "C", "D", "E", "F", "G", "H"])
        let notImports = ["// import X", "let important = 1", "/// import Y in a comment"]
        #expect(notImports.allSatisfy { pattern.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) == nil })
    }

    /// One wrapper per C library: the C functions a module's Swift calls belong to the
    /// libraries its row allows (libcrypto for SealCrypto, libssl and nghttp2 for HTTP2, …),
    /// and a `pushseal_` helper to a C module it may import.
    @Test func eachModuleCallsOnlyItsOwnCLibraries() throws {
        let owners: [(prefix: String, modules: Set<String>)] = [
            ("SSL_", ["HTTP2"]), ("nghttp2_", ["HTTP2"]),
            ("X509_", ["SealCrypto"]), ("EVP_", ["SealCrypto"]), ("PEM_", ["SealCrypto"]), ("BIO_", ["SealCrypto"]),
            ("EC_", ["SealCrypto"]), ("BN_", ["SealCrypto"]), ("OSSL_", ["SealCrypto"]), ("RAND_", ["SealCrypto"]),
            ("PKCS12_", ["SealCrypto"]), ("OPENSSL_", ["SealCrypto"]),
            // libssl reports through libcrypto's error queue, which HTTP2 empties and reads.
            ("ERR_", ["SealCrypto", "HTTP2"]),
            ("QRcode_", ["PushSealQR"]), ("png_", ["PushSealQR"])
        ]
        let table = try Self.table()
        // pushseal_ helpers: which C module declares each.
        var helperModule: [String: String] = [:]
        let helper = try NSRegularExpression(pattern: #"\b(pushseal_\w+)\s*\("#)
        for module in table.keys where module.hasPrefix("C") {
            let folder = Self.root.appendingPathComponent("Sources/" + module)
            let headers = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".h") } ?? []
            for header in headers {
                let text = try String(contentsOf: folder.appendingPathComponent(header), encoding: .utf8)
                for match in helper.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    helperModule[String(text[Range(match.range(at: 1), in: text)!])] = module
                }
            }
        }
        #expect(helperModule["pushseal_p256_ecdh"] == "CHPKE" && helperModule["pushseal_accept_nonblocking"] == "CSystem")
        let call = try NSRegularExpression(pattern: #"\b([A-Za-z]+_\w*)\("#)
        for module in table.keys.sorted() where !module.hasPrefix("C") {
            for text in try Self.sources(of: module) {
                for match in call.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    let name = String(text[Range(match.range(at: 1), in: text)!])
                    if let owner = owners.first(where: { name.hasPrefix($0.prefix) }) {
                        #expect(owner.modules.contains(module), "\(module) calls \(name), which is \(owner.modules.sorted())'s to call")
                    } else if let cModule = helperModule[name] {
                        #expect(table[module]?.contains(cModule) == true, "\(module) calls \(name) from \(cModule), which its row does not allow")
                    }
                }
            }
        }
    }

    /// A library error made in a `catch` that quotes the caught error keeps it beneath
    /// (`underlying:`, or its `errno`), so the chain reaches what the system or OpenSSL said.
    @Test func anErrorMadeFromACaughtOneKeepsIt() throws {
        var seen = 0
        for module in ["PushSeal", "SealCrypto", "HTTP2"] {
            for text in try Self.sources(of: module) {
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                for (index, line) in lines.enumerated() where line.contains("} catch") || line.trimmingCharacters(in: .whitespaces).hasPrefix("catch") {
                    var statement = ""
                    for next in lines[(index + 1)...].prefix(8) {
                        if next.trimmingCharacters(in: .whitespaces).hasPrefix("}") { break }
                        if !statement.isEmpty || next.range(of: #"throw \w+(Error|Failure)\("#, options: .regularExpression) != nil {
                            statement += next
                            guard statement.filter({ $0 == "(" }).count <= statement.filter({ $0 == ")" }).count else { continue }
                            if statement.range(of: #"\berror\b"#, options: .regularExpression) != nil {
                                seen += 1
                                let keeps = ["underlying:", "code: error.code", "errno: error.errno", "Error(error)"].contains { statement.contains($0) }
                                #expect(keeps, "\(module): a caught error quoted but not kept: \(statement.trimmingCharacters(in: .whitespaces))")
                            }
                            statement = ""
                        }
                    }
                }
            }
        }
        #expect(seen >= 15, "the scan finds the catches that quote their error")
    }

    /// The suite waits on conditions, never on the clock alone: a sleep in a test is a
    /// pause inside a loop that polls something (Swift or shell), a seeded random kill point,
    /// or the workload of a program under test (an extension that outlives its budget).
    @Test func noTestSleepsToSynchronise() throws {
        let sleep = try NSRegularExpression(pattern: #"usleep|Thread\.sleep|Task\.sleep|sleep [0-9]"#)
        let swiftSleep = try NSRegularExpression(pattern: #"usleep|Thread\.sleep|Task\.sleep"#)
        let loop = try NSRegularExpression(pattern: #"\bwhile\b|\bfor\b|\brepeat\b|\buntil\b"#)
        let workload = try NSRegularExpression(pattern: #"--extension|--then|"-c"|program|exec |\.sh"|#!/bin/sh"#)
        func matches(_ pattern: NSRegularExpression, _ text: String) -> Bool {
            pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        var seen = 0
        let tests = Self.root.appendingPathComponent("Tests")
        let files = FileManager.default.enumerator(atPath: tests.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files.sorted() {
            let lines = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            for (index, line) in lines.enumerated() where matches(sleep, line) && !line.contains("#expect") && !line.contains("NSRegularExpression") {
                seen += 1
                let context = lines[max(0, index - 4)...index].joined(separator: "\n")
                let allowed =
                    matches(swiftSleep, line)
                    ? matches(loop, context) || line.contains("using: &generator")
                    : matches(loop, context) || matches(workload, context)
                #expect(allowed, "Tests/\(file):\(index + 1) sleeps without polling anything: \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(seen >= 30, "the scan sees the suite's sleeps")
    }

    /// Scripts/fuzz.sh builds the CLI's modules by hand: every module `PushSealCLI` depends on
    /// (through the table) is built there, and every C file of those modules compiled.
    @Test func theFuzzBuildListsEveryModuleTheCLIIsMadeOf() throws {
        let table = try Self.table()
        var closure: Set<String> = []
        var next = ["PushSealCLI"]
        while let module = next.popLast() {
            guard closure.insert(module).inserted else { continue }
            next += table[module] ?? []
        }
        let script = try String(contentsOf: Self.root.appendingPathComponent("Scripts/fuzz.sh"), encoding: .utf8)
        let built = try NSRegularExpression(pattern: #"^build_module (\w+)"#, options: .anchorsMatchLines)
            .matches(in: script, range: NSRange(script.startIndex..., in: script)).map { String(script[Range($0.range(at: 1), in: script)!]) }
        let swiftModules = closure.filter { (try? Self.sources(of: $0).isEmpty) == false }
        #expect(Set(built) == swiftModules, "fuzz.sh builds \(built.sorted()); the CLI is made of \(swiftModules.sorted())")
        for module in closure.sorted() {
            let folder = Self.root.appendingPathComponent("Sources/" + module)
            let cFiles = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".c") } ?? []
            for file in cFiles {
                #expect(script.contains("Sources/\(module)/\(file)"), "fuzz.sh compiles Sources/\(module)/\(file)")
            }
        }
    }

    /// The public API is what a user needs and the catalogs document: the library products
    /// but the device kit declare at most 410 public declarations (a line that declares
    /// something `public`), and a module that is no product declares none but to inline.
    /// (400 until sender keys and duplicates added ten: the policy, the sender choice, two
    /// statuses and their two placeholder bodies, the sender's kid in the envelope and its
    /// layout, and the extension's two settings.)
    @Test func theProductsPublicAPIStaysSmall() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let library = try NSRegularExpression(pattern: #"\.library\(name: "(\w+)", targets: \["(\w+)"\]\)"#)
        let products = Set(
            library.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest))
                .map { String(manifest[Range($0.range(at: 2), in: manifest)!]) })
        #expect(products.isSuperset(of: ["PushSeal", "PushSealSend", "SealCrypto", "PushSealJSON", "EnvelopeFormat", "NotificationText"]))
        let declaration = try NSRegularExpression(pattern: #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*public\s+"#, options: .anchorsMatchLines)
        func count(_ module: String) throws -> Int {
            try Self.sources(of: module).reduce(0) { $0 + declaration.numberOfMatches(in: $1, range: NSRange($1.startIndex..., in: $1)) }
        }
        let total = try products.subtracting(["PushSealKit"]).reduce(0) { $0 + (try count($1)) }
        #expect(total <= 410, "the products declare \(total) public declarations")
        #expect(try count("PushSealReceiver") == 0 && count("HTTP2") == 0, "modules that are no product publish nothing")
    }

    /// The CLI sends as a Swift server does: `send` and `doctor send` are clients of the
    /// library's `NotificationSender` (and `send --webpush` of its `WebPushSender`), so the
    /// engine, the provider and their rules are assembled in the library and cannot drift apart.
    @Test func theCLISendsThroughTheLibrarysSender() throws {
        let assembly = try NSRegularExpression(pattern: #"\b(?:Sender|APNsProvider|HTTP2PushTransport)\s*(?:<[^>]*>)?\s*\("#)
        let cli = try Self.sources(of: "PushSealCLI").joined(separator: "\n")
        #expect(assembly.numberOfMatches(in: cli, range: NSRange(cli.startIndex..., in: cli)) == 0)
        #expect(cli.contains("try NotificationSender("))
    }
}
