import Foundation
import Testing

/// README.md and docs/ as a reader follows them: every relative link reaches a file that
/// exists, and every `#anchor` a heading of that file, as GitHub spells it; README stays a
/// five-minute read with one line per document.
@Suite("documents: links and the README")
struct DocsTests {
    static let root = ArchitectureTests.root

    /// README.md and every Markdown file under docs/, as paths from the repository's root.
    static func documents() throws -> [String] {
        let docs = root.appendingPathComponent("docs")
        let found = FileManager.default.enumerator(atPath: docs.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".md") } ?? []
        return ["README.md"] + found.sorted().map { "docs/" + $0 }
    }

    /// Every document's text, for tests that look for what the documents say.
    static func allText() throws -> String {
        try documents().map { try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8) }.joined(separator: "\n")
    }

    /// The anchors GitHub makes of a file's headings: lowercased, punctuation but `-` and `_`
    /// dropped, spaces to dashes; a repeated heading gets `-1`, `-2`, ….
    static func anchors(of text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        var fenced = false
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            guard !title.isEmpty, line.dropFirst(line.prefix { $0 == "#" }.count).first == " " else { continue }
            let slug = String(
                title.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " " }
                    .map(Character.init)
            ).replacingOccurrences(of: " ", with: "-")
            let count = seen[slug, default: 0]
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
            seen[slug] = count + 1
        }
        return anchors
    }

    /// The `](target)` links of a text outside code blocks and spans.
    static func links(in text: String) -> [String] {
        var links: [String] = []
        var fenced = false
        let pattern = try! NSRegularExpression(pattern: #"\]\(([^)\s]+)\)"#)
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced else { continue }
            let prose = line.replacingOccurrences(of: #"`[^`]*`"#, with: "", options: .regularExpression)
            for match in pattern.matches(in: prose, range: NSRange(prose.startIndex..., in: prose)) {
                links.append(String(prose[Range(match.range(at: 1), in: prose)!]))
            }
        }
        return links
    }

    @Test func everyRelativeLinkAndAnchorResolves() throws {
        var checked = 0
        for document in try Self.documents() {
            let url = Self.root.appendingPathComponent(document)
            let text = try String(contentsOf: url, encoding: .utf8)
            for link in Self.links(in: text) where !link.contains("://") && !link.hasPrefix("mailto:") {
                checked += 1
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let target = parts[0].isEmpty ? url : url.deletingLastPathComponent().appendingPathComponent(String(parts[0])).standardized
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: target.path, isDirectory: &isFolder) else {
                    Issue.record("\(document): the link \(link) names \(target.path), which does not exist")
                    continue
                }
                if parts.count == 2, !isFolder.boolValue, target.pathExtension == "md" {
                    let anchors = Self.anchors(of: try String(contentsOf: target, encoding: .utf8))
                    #expect(anchors.contains(String(parts[1])), "\(document): the link \(link) names no heading of \(target.lastPathComponent)")
                }
            }
        }
        #expect(checked >= 20, "the documents link to each other")
    }

    @Test func theREADMEIsAFiveMinuteReadThatNamesEveryDocument() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.components(separatedBy: "\n")
        #expect(lines.count < 250, "README.md has \(lines.count) lines")
        for document in try Self.documents().dropFirst() where !document.hasPrefix("docs/vectors/") {
            #expect(readme.contains("](\(document))"), "README.md links to \(document)")
        }
    }

    @Test func theAnchorRuleFollowsGitHub() {
        let anchors = Self.anchors(of: "# pushseal\n## Sending to APNs: `pushseal send`\n## Keys and rotation\n## Keys and rotation\n```\n# not a heading\n```")
        #expect(anchors == ["pushseal", "sending-to-apns-pushseal-send", "keys-and-rotation", "keys-and-rotation-1"])
    }
}
