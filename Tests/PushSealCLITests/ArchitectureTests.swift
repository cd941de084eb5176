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
        let pattern = try NSRegularExpression(pattern: #"^(?:@_exported |internal |package |@_spi\(\w+\) |@preconcurrency )?import (\w+)"#, options: .anchorsMatchLines)
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

    /// Target → its dependencies on project modules, as Package.swift declares them.
    static func declaredDependencies(among projectModules: Set<String>) throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"\.(?:target|executableTarget)\(name: "(\w+)"(?:, dependencies: \[([^\]]*)\])?"#)
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
}
