/// A command-line mistake: the message, and the command whose usage line should follow it.
struct UsageError: Error, Equatable {
    let message: String
    let command: CommandSpec.Name

    init(_ message: String, command: CommandSpec.Name) {
        self.message = message
        self.command = command
    }

    /// What stderr shows for it, line by line: the error, the command's usage, where its
    /// help is. The exit status is always 64.
    var report: [String] {
        let spec = Specs.spec(named: command) ?? Specs.root
        return ["error: \(message)", "Usage: \(spec.usage)", "See '\(spec.displayName) --help'."]
    }
}

/// One option a command accepts.
struct OptionSpec: Sendable {
    let long: String
    let short: Character?
    /// The placeholder shown in help (`<title>`); nil for a flag without a value.
    let valueName: String?
    let repeatable: Bool
    /// The environment variable that supplies the value when the option is absent.
    let environment: String?
    let help: String
    /// The only values the option takes, when they are few: shell completion offers them.
    let choices: [String]

    init(
        _ long: String, short: Character? = nil, value: String? = nil, repeatable: Bool = false,
        environment: String? = nil, choices: [String] = [], help: String
    ) {
        self.long = long
        self.short = short
        self.valueName = value
        self.repeatable = repeatable
        self.environment = environment
        self.choices = choices
        self.help = help
    }

    var takesValue: Bool { valueName != nil }

    /// What a shell should offer for the option's value.
    var valueCompletion: Completion {
        if !choices.isEmpty { return .words(choices) }
        switch valueName {
        case "dir": return .directories
        case "file": return .files
        case "command": return .commands
        case "kid": return .keyIDs
        default: return .nothing
        }
    }
}

/// What a shell offers at a position on the command line.
enum Completion: Equatable, Sendable {
    case nothing
    case files
    case directories
    case commands
    case words([String])
    /// The ids in the keyring the line names (--keys, else PUSHSEAL_KEYS, else ./Keys).
    case keyIDs
}

/// A subcommand's interface: enough to parse its arguments and to write its help.
struct CommandSpec: Sendable {
    typealias Name = [String]

    let name: Name
    let overview: String
    let usage: String
    let options: [OptionSpec]
    /// Extra help sections after OPTIONS (arguments, environment, examples).
    let discussion: String
    /// What the command's arguments (not its options) complete to.
    let arguments: Completion

    init(
        name: Name, overview: String, usage: String, options: [OptionSpec], discussion: String,
        arguments: Completion = .nothing
    ) {
        self.name = name
        self.overview = overview
        self.usage = usage
        self.options = options
        self.discussion = discussion
        self.arguments = arguments
    }

    var displayName: String { (["pushseal"] + name).joined(separator: " ") }

    /// The usage line's command and arguments without its options: `promote KID`,
    /// `import SHARE|FILE|-`, for the group help's list.
    var synopsis: String {
        // "pushseal keys promote KID [--grace 30d]": after "pushseal" and the group's words.
        let words = usage.split(separator: " ").dropFirst(name.count)
        return words.prefix { !$0.hasPrefix("-") && !$0.hasPrefix("[-") }.joined(separator: " ")
    }
}

/// Arguments sorted into options and positionals, before they mean anything.
struct ParsedArguments: Equatable {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    var helpRequested = false
    /// Options whose value came from the environment, with the variable's name.
    var fromEnvironment: [String: String] = [:]

    /// How the user gave `long`: `--long`, or the variable that supplied it, so an error
    /// names what they actually typed.
    func origin(_ long: String) -> String { fromEnvironment[long] ?? "--\(long)" }

    /// The last value given for `long`, which lets a later flag override an earlier one.
    func value(_ long: String) -> String? { values[long]?.last }
    func all(_ long: String) -> [String] { values[long] ?? [] }
    func has(_ long: String) -> Bool { flags.contains(long) }
}

/// Splits `arguments` by `spec`: `--name value`, `--name=value`, `-n value`, bundled short
/// flags, `--` to end options, and a lone `-` as a positional (stdin). Options from the
/// environment fill in only what the command line left out.
func parseArguments(
    _ arguments: [String], spec: CommandSpec, environment: [String: String]
) throws(UsageError) -> ParsedArguments {
    var parsed = ParsedArguments()
    var index = 0
    func fail(_ message: String) -> UsageError { UsageError(message, command: spec.name) }

    func store(_ option: OptionSpec, _ value: String?) throws(UsageError) {
        if let value {
            if !option.repeatable, parsed.values[option.long] != nil {
                throw fail("--\(option.long) was given more than once")
            }
            parsed.values[option.long, default: []].append(value)
        } else {
            parsed.flags.insert(option.long)
        }
    }

    func takeValue(for option: OptionSpec, shown: String) throws(UsageError) -> String {
        index += 1
        guard index < arguments.count else { throw fail("\(shown) needs a value \(option.valueName ?? "")") }
        return arguments[index]
    }

    while index < arguments.count {
        let argument = arguments[index]
        if argument == "--" {
            parsed.positionals.append(contentsOf: arguments[(index + 1)...])
            break
        } else if argument == "--help" || argument == "-h" {
            parsed.helpRequested = true
        } else if argument.hasPrefix("--") {
            let body = argument.dropFirst(2)
            let name = body.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            guard let option = spec.options.first(where: { $0.long == name }) else {
                let guess = Suggestion.closest(to: name, among: spec.options.map(\.long) + ["help"])
                throw fail("unknown option '--\(name)'" + (guess.map { " (did you mean '--\($0)'?)" } ?? ""))
            }
            if let equals = body.firstIndex(of: "=") {
                guard option.takesValue else { throw fail("--\(name) takes no value") }
                try store(option, String(body[body.index(after: equals)...]))
            } else if option.takesValue {
                try store(option, try takeValue(for: option, shown: "--\(name)"))
            } else {
                try store(option, nil)
            }
        } else if argument.hasPrefix("-") && argument.count > 1 {
            // A bundle of short options; one that takes a value ends the bundle.
            var characters = argument.dropFirst()
            while let letter = characters.first {
                characters = characters.dropFirst()
                guard let option = spec.options.first(where: { $0.short == letter }) else {
                    throw fail("unknown option '-\(letter)'")
                }
                if option.takesValue {
                    let value = characters.isEmpty ? try takeValue(for: option, shown: "-\(letter)") : String(characters)
                    try store(option, value)
                    break
                }
                try store(option, nil)
            }
        } else {
            parsed.positionals.append(argument)
        }
        index += 1
    }

    for option in spec.options {
        guard let variable = option.environment, let value = environment[variable], !value.isEmpty else { continue }
        if option.takesValue, parsed.values[option.long] == nil {
            parsed.values[option.long] = [value]
            parsed.fromEnvironment[option.long] = variable
        } else if !option.takesValue, !parsed.flags.contains(option.long), ["1", "true", "yes"].contains(value) {
            parsed.flags.insert(option.long)
        }
    }
    return parsed
}

/// "Did you mean": the one known word a mistyped one is closest to, as git and cargo offer.
enum Suggestion {
    /// The closest of `words` by edit distance (a swap of neighbours counts once), if it is
    /// close enough to be the word meant: within a third of its length, at least one edit.
    static func closest(to typed: String, among words: [String]) -> String? {
        let typed = Array(typed.lowercased())
        guard !typed.isEmpty else { return nil }
        var best: (word: String, distance: Int)?
        for word in words {
            let distance = self.distance(typed, Array(word.lowercased()))
            if distance < (best?.distance ?? .max) { best = (word, distance) }
        }
        guard let best, best.distance > 0, best.distance <= max(1, best.word.count / 3) else { return nil }
        return best.word
    }

    /// Optimal string alignment distance.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
