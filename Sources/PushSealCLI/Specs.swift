import PushSeal

/// The interface of every command: the parser reads these and the help is written from them.
enum Specs {
    static let keysOption = OptionSpec(
        "keys", value: "dir", environment: "PUSHSEAL_KEYS",
        help: "Keyring folder (default: ./Keys).")

    static let fieldOption = OptionSpec(
        "field", value: "name", environment: "PUSHSEAL_FIELD",
        help: "Payload field that carries the envelope (default: enc).")

    static let graceOption = OptionSpec(
        "grace", value: "duration", environment: "PUSHSEAL_GRACE",
        help: "How long the old primary keeps decrypting (\(DurationRange.help(default: Keyring.defaultGrace, DurationRange.grace, note: "APNs' longest storage")))."
    )

    static let lockTimeoutOption = OptionSpec(
        "lock-timeout", value: "duration", environment: "PUSHSEAL_LOCK_TIMEOUT",
        help: "Give up (exit 75) when another command holds the keyring longer (\(DurationRange.help(default: KeyringStore.defaultLockTimeout, DurationRange.lockTimeout))).")

    static let sendersOption = OptionSpec(
        "senders", value: "policy", environment: "PUSHSEAL_SENDERS",
        help:
            "Whose messages open: auto (the default: only allowed senders' once the keyring allows any), required (only allowed senders', even before one is imported) or any (also unauthenticated ones, with a warning)."
    )

    static let seenOption = OptionSpec(
        "seen", value: "file", environment: "PUSHSEAL_SEEN",
        help: "Where opened messages are remembered, so one arriving again is a duplicate (default: seen-messages in the keyring folder; none: remember nothing).")

    static let senderKeyOption = OptionSpec(
        "sender-key", value: "kid", environment: "PUSHSEAL_SENDER_KEY",
        help: "The sender key that vouches for messages to a recipient key (ps3) (default: the keyring's sender key, if it has one; none: seal ps2).")

    static let jobsOption = OptionSpec(
        "jobs", short: "j", value: "n", environment: "PUSHSEAL_JOBS",
        help: "Worker threads for streamed input (default: every core). Output order never changes.")

    static let root = CommandSpec(
        name: [], overview: "End-to-end encrypted push notifications for shell scripts and CI.",
        usage: "pushseal <command> [options]", options: [],
        discussion: """
            COMMANDS:
              keys         Create, rotate, share and retire the keys (see 'pushseal keys --help').
              encrypt      Seal an alert into an APNs payload.
              decrypt      Open a payload's sealed alert and print it as JSON.
              doctor       Say why a notification does not arrive or open; 'doctor send' checks a sender.
              receive      Deliver payloads through a Notification Service Extension emulator.
              send         Seal an alert and deliver it to APNs over HTTP/2.
              run          Run a command, then send its outcome as a sealed alert.
              token        Print an APNs provider token for curl and other tools.
              webapp       Export or serve the receiving web app ('pushseal webapp --help').
              completions  Print a completion script for bash, zsh or fish.
              manual       Print pushseal's man page (roff).
              help         Show help for a command ('pushseal help keys rotate').

            The real alert travels sealed with AES-256-GCM in one custom payload field; Apple,
            proxies and logs see only the fallback alert.

            \(exitCodeSummary)

            Example:
              pushseal keys init
              pushseal encrypt -t "Deploy finished" -b "api-7 is live" > payload.json
            """)

    static let keysGroup = CommandSpec(
        name: ["keys"], overview: "Manage the keyring.",
        usage: "pushseal keys <subcommand> [options]", options: [],
        discussion: """
            SUBCOMMANDS:
            \(subcommandLines(keys))

            Every subcommand takes --keys DIR (or PUSHSEAL_KEYS; default ./Keys).
            """)

    /// A group's SUBCOMMANDS section: each one's synopsis and overview, a line each.
    static func subcommandLines(_ specs: [CommandSpec]) -> String {
        specs.map { "  " + $0.synopsis + String(repeating: " ", count: max(2, 22 - $0.synopsis.count)) + $0.overview }.joined(separator: "\n")
    }

    /// The root help's exit codes, from the one table of them, wrapped.
    static var exitCodeSummary: String {
        var lines = [""]
        for (index, status) in ExitStatus.allCases.enumerated() {
            let last = index == ExitStatus.allCases.count - 1
            let item = (index == 0 ? "Exit codes: " : "") + "\(status.rawValue) \(status.label)" + (last ? "." : ",")
            if lines[lines.count - 1].count + item.count + 1 > 88 { lines.append("") }
            lines[lines.count - 1] += (lines[lines.count - 1].isEmpty ? "" : " ") + item
        }
        return lines.joined(separator: "\n")
    }

    /// Every command and subcommand, in the order help and the manual show them.
    static let all: [CommandSpec] =
        [root, keysGroup] + keys + [encrypt, decrypt, doctor, doctorSend, receive, send, run, token] + [webappGroup] + webapp + [completions, manual]

    static func spec(named name: CommandSpec.Name) -> CommandSpec? {
        all.first { $0.name == name }
    }

    /// The words that may follow `name` on the command line as its subcommands.
    static func subcommands(of name: CommandSpec.Name) -> [CommandSpec] {
        all.filter { $0.name.count == name.count + 1 && Array($0.name.dropLast()) == name }
    }
}

/// The help page of a command: OVERVIEW, USAGE, OPTIONS, then its own sections.
func helpText(for spec: CommandSpec) -> String {
    var lines = ["OVERVIEW: \(spec.overview)", "", "USAGE: \(spec.usage)"]
    if !spec.options.isEmpty {
        lines += ["", "OPTIONS:"]
        let rows =
            spec.options.map { option -> (String, String) in
                var left = option.short.map { "-\($0), " } ?? "    "
                left += "--\(option.long)"
                if let value = option.valueName { left += " <\(value)>" }
                var right = option.help
                if let variable = option.environment { right += " [$\(variable)]" }
                return (left, right)
            } + [("-h, --help", "Show help information.")]
        let width = rows.map(\.0.count).max() ?? 0
        for (left, right) in rows {
            lines.append("  " + left + String(repeating: " ", count: width - left.count + 2) + right)
        }
    }
    if !spec.discussion.isEmpty {
        lines += ["", spec.discussion]
    }
    // A group's page (`keys`) lists its subcommands; each subcommand's page has the codes.
    if spec.name != ["keys"], spec.name != ["webapp"] { lines += ExitCodes.help(for: spec.name) }
    return lines.joined(separator: "\n") + "\n"
}
