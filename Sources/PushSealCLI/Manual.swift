/// pushseal(1), written from `Specs` like the help pages and the completion scripts, so the
/// manual documents exactly the options this binary parses.
enum Manual {
    static func page(version: String, date: String) -> String {
        var out = [
            ".TH PUSHSEAL 1 \"\(date)\" \"pushseal \(escape(version))\" \"User Commands\"",
            ".SH NAME",
            "pushseal \\- end-to-end encrypted push notifications for shell scripts and CI",
            ".SH SYNOPSIS"
        ]
        // Every form each command's help shows, once: a command with subcommands of its own
        // that also runs by itself (doctor PAYLOAD) is listed too; `keys <subcommand>` is not.
        var listed: Set<String> = []
        for spec in Specs.all where !spec.name.isEmpty && !spec.usage.contains("<subcommand>") {
            // Each usage form on a line of its own, flush left: help indents its continuations.
            let forms = spec.usage.split(separator: "\n").map { String($0.drop { $0 == " " }) }.filter { listed.insert($0).inserted }
            guard !forms.isEmpty else { continue }
            out += [".PP", ".nf"] + forms.map(escapeLine) + [".fi"]
        }
        out += [
            ".SH DESCRIPTION",
            "pushseal seals an alert (title, subtitle, body and the rest) with AES\\-256\\-GCM into one",
            "custom field of an APNs payload whose visible alert is a harmless fallback, delivers it,",
            "and emulates the receiving Notification Service Extension that opens it again. Keys live",
            "in a keyring folder (\\fI./Keys\\fR by default) that pushseal creates, rotates, shares and retires.",
            ".SH COMMANDS"
        ]
        for spec in Specs.all where !spec.name.isEmpty {
            out += [".SS \"\(escape(spec.displayName))\"", escapeLine(spec.overview)]
            if !spec.options.isEmpty {
                out.append(".PP")
                for option in spec.options {
                    var head = "\\fB\\-\\-\(escape(option.long))\\fR"
                    if let short = option.short { head = "\\fB\\-\(escape(String(short)))\\fR, " + head }
                    if let value = option.valueName { head += " \\fI\(escape(value))\\fR" }
                    var help = option.help
                    if let variable = option.environment { help += " [$\(variable)]" }
                    out += [".TP", head, escapeLine(help)]
                }
            }
            if !spec.discussion.isEmpty, !spec.name.isEmpty {
                out += [".PP", ".nf"] + spec.discussion.split(separator: "\n", omittingEmptySubsequences: false).map { escapeLine(String($0)) } + [".fi"]
            }
        }
        out += [".SH ENVIRONMENT", "An option given on the command line beats its variable."]
        var seen: Set<String> = []
        for spec in Specs.all {
            for option in spec.options {
                guard let variable = option.environment, seen.insert(variable).inserted else { continue }
                out += [".TP", "\\fB\(escape(variable))\\fR", "Sets \\fB\\-\\-\(escape(option.long))\\fR."]
            }
        }
        out += [
            ".SH EXIT STATUS",
            "From sysexits(3), so scripts can tell failures apart; what a code means depends on the command that gives it:"
        ]
        for status in ExitStatus.allCases {
            out += [".TP", "\\fB\(status.rawValue)\\fR"]
            let (shared, own) = ExitCodes.said(of: status)
            if let shared { out.append(escapeLine("Every command: \(shared).") + "\n.br") }
            for (name, meaning) in own { out.append(escapeLine("\(name): \(meaning).") + "\n.br") }
        }
        out += [".TP", "\\fBother\\fR", escapeLine("run: \(ExitCodes.runsOwn).")]
        out += [
            ".SH FILES",
            ".TP", "\\fIKeys/keyring.json\\fR", "The keyring (mode 0600, its folder 0700). Never share it; share keys with \\fBkeys export\\fR.",
            ".TP", "\\fIKeys/tls\\-cert.pem\\fR, \\fIKeys/tls\\-key.pem\\fR", "The self\\-signed certificate \\fBreceive \\-\\-listen\\fR makes on first start.",
            ".SH SEE ALSO",
            "\\fBcurl\\fR(1), \\fBh2load\\fR(1), \\fBnotify\\-send\\fR(1)"
        ]
        return out.joined(separator: "\n") + "\n"
    }

    /// Text for roff: backslashes and hyphens made literal, a few typographic characters
    /// spelled as groff's named glyphs so every device renders them.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "…": out += "..."
            case "—": out += "\\(em"
            case "–": out += "\\(en"
            case "→": out += "\\(->"
            case "‖": out += "||"
            case "’": out += "'"
            default: out.append(character)
            }
        }
        return out
    }

    /// A line of text, kept from being read as a request when it starts with `.` or `'`.
    static func escapeLine(_ text: String) -> String {
        let escaped = escape(text)
        return escaped.first == "." || escaped.first == "'" ? "\\&" + escaped : escaped
    }
}

extension Specs {
    static let manual = CommandSpec(
        name: ["manual"], overview: "Print pushseal's man page (roff).",
        usage: "pushseal manual", options: [],
        discussion: """
            Written from the same tables as the help pages. Read it with 'pushseal manual | man -l -'
            or install it as man1/pushseal.1 (Scripts/install.sh does).
            """)
}

func parseManual(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let parsed = try parseArguments(arguments, spec: Specs.manual, environment: environment)
    if parsed.helpRequested { return .help(Specs.manual.name) }
    guard parsed.positionals.isEmpty else { throw UsageError("manual takes no arguments", command: Specs.manual.name) }
    return .manual
}
