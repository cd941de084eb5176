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

    /// The `pushseal …` commands of the shell blocks of README and docs/, as a reader copies
    /// them: continuation lines joined, pipes and `&&` split, comments dropped, and the
    /// reader's variables given values (`$TOKEN` a device token, `$kid` a key id).
    static func quotedCommands() throws -> [(document: String, words: [String])] {
        var commands: [(String, [String])] = []
        for document in try documents() {
            var fence: String?
            var pending = ""
            for line in try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8).components(separatedBy: "\n") {
                if line.hasPrefix("```") {
                    fence = fence == nil ? String(line.dropFirst(3)) : nil
                    continue
                }
                guard let kind = fence, ["sh", "bash", ""].contains(kind) else { continue }
                if line.hasSuffix("\\") {
                    pending += line.dropLast() + " "
                    continue
                }
                let whole = pending + line
                pending = ""
                for segment in whole.components(separatedBy: "|").flatMap({ $0.components(separatedBy: "&&") })
                    .flatMap({ $0.components(separatedBy: "$(") })
                {
                    let text = segment.trimmingCharacters(in: .whitespaces)
                    guard text.hasPrefix("pushseal ") else { continue }
                    commands.append((document, words(of: text)))
                }
            }
        }
        return commands
    }

    /// A command line's words as a shell splits them, up to a comment, a redirection or a
    /// closing parenthesis.
    static func words(of text: String) -> [String] {
        let values = [
            "TOKEN": String(repeating: "ab", count: 32), "DEVICE_TOKEN": String(repeating: "cd", count: 32),
            "DEVICE": String(repeating: "ef", count: 32), "kid": "3f9a0c1e"
        ]
        var words: [String] = []
        var word = ""
        var quote: Character?
        var inWord = false
        var characters = text[...]
        func variable() {
            let name = characters.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            characters = characters.dropFirst(name.count)
            word += values[String(name)] ?? "x"
        }
        while let character = characters.popFirst() {
            if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "$" && open == "\"" {
                    variable()
                } else {
                    word.append(character)
                }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " {
                if inWord { words.append(word) }
                (word, inWord) = ("", false)
            } else if character == ")" || (["#", ">", "<"].contains(character) && !inWord) {
                break
            } else if character == "$" {
                variable()
                inWord = true
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return Array(words.dropFirst())
    }

    /// Each quoted command is one the parser takes: no option renamed or gone, no value the
    /// documents show that the command refuses. (Run as a process, many need a network or
    /// a phone; the suite runs those paths elsewhere.)
    @Test func everyQuotedCommandIsOneTheParserTakes() throws {
        let commands = try Self.quotedCommands()
        #expect(commands.count >= 40, "the documents quote their commands")
        // As the documents set them up: the APNs settings in the environment.
        let environment = [
            "PUSHSEAL_TOPIC": "com.example.app", "PUSHSEAL_AUTH_KEY": "AuthKey.p8", "PUSHSEAL_KEY_ID": "ABC123DEFG",
            "PUSHSEAL_TEAM_ID": "DEF123GHIJ"
        ]
        for (document, words) in commands {
            let run = parsed(words, environment: environment)
            #expect(run.status == 0, "\(document): pushseal \(words.joined(separator: " ")): \(run.stderr)")
        }
    }

    @Test func aQuotedCommandIsSplitAsAShellWould() {
        #expect(
            Self.words(of: #"pushseal send --device "$TOKEN" -t "Deploy done" -b 'a b' > out.json  # note"#)
                == ["send", "--device", String(repeating: "ab", count: 32), "-t", "Deploy done", "-b", "a b"])
        #expect(Self.words(of: "pushseal keys export $kid)") == ["keys", "export", "3f9a0c1e"])
    }
}
