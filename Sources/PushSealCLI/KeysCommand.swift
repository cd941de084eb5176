import PushSeal
import PushSealJSON
import PushSealReceiver
import PushSealSend
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Runs `pushseal keys …`. Results (kids, the table, a share) go to stdout; notes for
/// people go to stderr only when it is a terminal.
func runKeys(folder: String, lockTimeout: Duration, action: KeysAction, console: Console) throws {
    try KeysCommand(folder: folder, lockTimeout: lockTimeout, console: console).run(action)
}

/// `pushseal keys`: one method per subcommand, on one keyring store and one clock reading.
struct KeysCommand {
    let store: KeyringStore
    let console: Console
    /// The time every subcommand judges states and lifetimes by.
    let now: Int64

    init(folder: String, lockTimeout: Duration, console: Console) {
        store = KeyringStore(folder: folder, lockTimeout: lockTimeout) { [console] in
            console.diagnostic("waiting for another pushseal command to release the keyring lock (giving up after \(DurationText.format(lockTimeout)))")
        }
        self.console = console
        now = Timestamp.now()
    }

    func run(_ action: KeysAction) throws {
        switch action {
        case .initialize(let recipient, let sender): try initialize(kind: sender ? .sender : recipient ? .private : .secret)
        case .add(let recipient, let sender): try add(kind: sender ? .sender : recipient ? .private : nil)
        case .promote(let kid, let grace): try promote(kid, grace: grace)
        case .rotate(let grace, let sender): try rotate(grace: grace, sender: sender)
        case .list(let json): try list(json: json)
        case .export(let kid, let wantsPublic, let wantsPrivate, let picture, let sender):
            try export(kid, wantsPublic: wantsPublic, wantsPrivate: wantsPrivate, sender: sender, as: picture)
        case .exportRetirements: try exportRetirements()
        case .importShare(let source): try importShares(from: source)
        case .disable(let kid):
            try store.update { try $0.disable(kid) }
            console.output(kid)
        case .enable(let kid):
            try store.update { try $0.enable(kid, now: now) }
            console.output(kid)
        case .destroy(let kid):
            try store.update { try $0.destroy(kid) }
            console.output(kid)
        case .prune: try prune()
        case .vapid(let rotate): try vapid(rotate: rotate)
        }
    }

    /// `keys vapid`: the VAPID public key pages subscribe with, made on first use; a new one
    /// with `--rotate`. The keyring must be there: the key lives beside it.
    private func vapid(rotate: Bool) throws {
        _ = try store.load()
        let existing = rotate ? nil : try VAPIDKeyFile.load(folder: store.folder)
        let key = try existing ?? VAPIDKeyFile.make(folder: store.folder)
        console.output(Base64.encode(key.publicPoint, alphabet: .url))
        if rotate {
            console.warning("a new VAPID key is in \(VAPIDKeyFile.path(in: store.folder)): browsers subscribed with the old one take nothing more from this sender until they subscribe again")
        } else if existing == nil {
            note(console, "made a VAPID key in \(VAPIDKeyFile.path(in: store.folder)): the web app subscribes with the public key above")
        }
    }

    private func initialize(kind: KeyKind) throws {
        let keyring = try Keyring.generate(now: now, kind: kind)
        try store.create(keyring)
        let kid = keyring.keys[0].id
        console.output(kid)
        try console.finish(done: "the keyring was created all the same, with primary key \(kid)")
        note(console, "created \(store.path) with primary key \(kid)")
    }

    private func add(kind: KeyKind?) throws {
        let (kid, isPrimary) = try store.update { keyring in
            let kid = try keyring.add(now: now, kind: kind)
            return (kid, keyring.entry(kid)?.state == .primary)
        }
        console.output(kid)
        try console.finish(done: "key \(kid) was added all the same")
        if kind == .sender {
            note(
                console,
                isPrimary
                    ? "added sender key \(kid): what this keyring seals to a recipient key is now ps3, vouched for by it; give receivers 'pushseal keys export --sender'"
                    : "added sender key \(kid); give receivers 'pushseal keys export \(kid)', then 'pushseal keys promote \(kid)'")
        } else {
            note(console, "added key \(kid); share it with 'pushseal keys export \(kid)', then 'pushseal keys promote \(kid)'")
        }
    }

    private func promote(_ kid: String, grace: Duration) throws {
        let previous = try store.update { keyring in
            let previous = keyring.primary?.id
            try keyring.promote(kid, grace: grace, now: now)
            return previous
        }
        console.output(kid)
        if let previous, previous != kid {
            note(console, "\(kid) is primary; \(previous) decrypts until \(Timestamp.format(now + DurationText.seconds(grace)))")
        }
    }

    private func rotate(grace: Duration, sender: Bool) throws {
        let (kid, previous) = try store.update { keyring in
            let previous = sender ? keyring.senderPrimary?.id : keyring.primary?.id
            return (try keyring.rotate(grace: grace, now: now, sender: sender), previous)
        }
        console.output(kid)
        try console.finish(done: "the keyring was rotated all the same: the new primary key is \(kid)")
        if let previous {
            note(console, "new primary \(kid); \(previous) decrypts until \(Timestamp.format(now + DurationText.seconds(grace)))")
        }
    }

    private func list(json: Bool) throws {
        let keyring = try store.load()
        guard !json else {
            let entries = keyring.keys.map { entry -> JSONValue in
                var object = JSONObject()
                object["id"] = .string(entry.id)
                object["kind"] = .string(entry.kind.rawValue)
                object["state"] = .string(entry.shownState(at: now))
                object["created"] = .string(Timestamp.format(entry.created))
                object["expires"] = entry.expires.map { .string(Timestamp.format($0)) } ?? .null
                object["expired"] = .bool(entry.hasPassedExpiry(at: now))
                return .object(object)
            }
            return console.output(JSONWriter.string(.array(entries)))
        }
        let rows =
            [["KID", "KIND", "STATE", "CREATED", "EXPIRES"]]
            + keyring.keys.map { entry in
                [
                    entry.id, entry.kind.rawValue,
                    entry.shownState(at: now),
                    Timestamp.format(entry.created),
                    entry.expires.map(Timestamp.format) ?? "-"
                ]
            }
        for line in table(rows) { console.output(line) }
    }

    private func export(_ kid: String?, wantsPublic: Bool, wantsPrivate: Bool, sender: Bool, as picture: SharePicture?) throws {
        let keyring = try store.load()
        guard let chosen = kid ?? (sender ? keyring.senderPrimary?.id : keyring.primary?.id) else {
            throw sender ? KeyringError(.noSenderKey, "the keyring has no sender key") : KeyringError(.noPrimary, "the keyring has no primary key")
        }
        guard let entry = keyring.entry(chosen) else { throw KeyringError(.unknownKey, "no key \(chosen) in the keyring") }
        // A sender key leaves only as its public share, whatever was asked: its private half
        // is this sender's identity, and a second sender makes a key of its own.
        if entry.kind.isSenderKey || sender {
            guard entry.kind.isSenderKey else {
                throw KeyringError(.notASender, "key \(chosen) is \(entry.kind.article), not a sender key")
            }
            guard !wantsPrivate else {
                throw KeyringError(
                    .notAllowed, "sender key \(chosen) never leaves this keyring: a second sending machine makes a sender key of its own ('keys add --sender'), which receivers allow too")
            }
            guard entry.state != .destroyed, let point = entry.publicKey else { throw KeyringError(.keyDestroyed, "key \(chosen) was destroyed") }
            return try show(SenderShare(kid: chosen, publicKey: point).text, of: chosen, secret: false, as: picture, console: console)
        }
        if wantsPrivate {
            // Only by explicit request, and with a word on where it may go.
            guard entry.kind == .private else {
                throw KeyringError(.notAllowed, "key \(chosen) is not a recipient key pair, so it has no private share")
            }
            let key = try keyring.recipientKey(for: chosen, now: now)
            console.warning("this is key \(chosen)'s private key: it opens every message sealed to this device; import it only on another receiver of yours, never on a sender")
            return try show(PrivateShare(kid: chosen, privateKey: key).text(), of: chosen, secret: true, as: picture, console: console)
        }
        guard wantsPublic || entry.kind != .secret else {
            let key = try keyring.decryptionKey(for: chosen, now: now)
            return try show(KeyShare(kid: chosen, secret: key).text, of: chosen, secret: true, as: picture, console: console)
        }
        // A recipient key leaves only as its public share: the private scalar stays here.
        guard entry.kind != .secret else {
            throw KeyringError(.notAllowed, "key \(chosen) is a shared secret, which has no public share; 'keys export \(chosen)' prints it")
        }
        guard entry.state != .destroyed, let point = entry.publicKey else {
            throw KeyringError(.keyDestroyed, "key \(chosen) was destroyed")
        }
        try show(PublicShare(kid: chosen, publicKey: point).text, of: chosen, secret: false, as: picture, console: console)
    }

    private func exportRetirements() throws {
        let notices = try store.load().retirementNotices(now: now)
        for notice in notices { console.output(notice.text) }
        note(console, notices.isEmpty ? "no key is retiring: nothing for receivers to retire" : "import these on every receiver ('keys import -') so their copies retire too")
    }

    /// Reads one share, or several lines of shares and retirement notices (as `keys export`
    /// and `keys export --retirements` print them, piped in together); every line is read
    /// before the keyring changes, and all of them land in one change or none does.
    private func importShares(from source: ShareSource) throws {
        let text: String
        switch source {
        case .standardInput:
            text = String(decoding: try InputFiles.read("-", bound: .keyShares), as: UTF8.self)
        case .file(let path):
            text = String(decoding: try InputFiles.read(path, bound: .keyShares), as: UTF8.self)
        case .argument(let share):
            if !share.hasPrefix(PublicShare.prefix) && !share.hasPrefix(SenderShare.prefix) && !share.hasPrefix(RetirementNotice.prefix) {
                console.warning("a key share typed as an argument shows in 'ps' and shell history; pipe it in with 'pushseal keys import -' next time")
            }
            text = share
        }
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map { $0.trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
        var items: [ImportItem] = []
        for (number, line) in lines.enumerated() {
            do {
                items.append(try ImportItem(parsing: line))
            } catch let error as KeyringError where lines.count > 1 {
                throw KeyringError(error.code, "line \(number + 1): \(error.reason); nothing was imported", underlying: error.underlying)
            }
        }
        if items.isEmpty { items.append(try ImportItem(parsing: text)) }
        let notes = try store.update(creatingIfMissing: items.contains { !$0.isNotice }) { keyring in
            try items.map { try $0.apply(to: &keyring, at: store.path, now: now) }
        }
        for item in items { console.output(item.kid) }
        for line in notes { note(console, line) }
    }

    private func prune() throws {
        let pruned = try store.update { $0.prune(now: now) }
        for kid in pruned { console.output(kid) }
        try console.finish(done: pruned.isEmpty ? nil : "the keyring was pruned all the same: destroyed \(pruned.joined(separator: ", "))")
        note(console, pruned.isEmpty ? "no expired keys" : "destroyed \(pruned.count) expired key(s)")
    }
}

/// One line of `keys import`: a share of any kind, or a retirement notice.
private enum ImportItem {
    case secret(KeyShare)
    case publicKey(PublicShare)
    case privateKey(PrivateShare)
    case sender(SenderShare)
    case notice(RetirementNotice)

    init(parsing line: String) throws {
        let line = line.trimmingASCIIWhitespace()
        if line.hasPrefix(PrivateShare.prefix) {
            self = .privateKey(try PrivateShare(parsing: line))
        } else if line.hasPrefix(PublicShare.prefix) {
            self = .publicKey(try PublicShare(parsing: line))
        } else if line.hasPrefix(SenderShare.prefix) {
            self = .sender(try SenderShare(parsing: line))
        } else if line.hasPrefix(RetirementNotice.prefix) {
            self = .notice(try RetirementNotice(parsing: line))
        } else {
            self = .secret(try KeyShare(parsing: line))
        }
    }

    var kid: String {
        switch self {
        case .secret(let share): share.kid
        case .publicKey(let share): share.kid
        case .privateKey(let share): share.kid
        case .sender(let share): share.kid
        case .notice(let notice): notice.kid
        }
    }

    var isNotice: Bool {
        if case .notice = self { return true }
        return false
    }

    /// Applies the line; returns the note for people, which names the keyring by `path`.
    func apply(to keyring: inout Keyring, at path: String, now: Int64) throws -> String {
        let already = "key \(kid) was already in \(path)"
        switch self {
        case .privateKey(let share):
            return try keyring.importPrivate(share, now: now) ? "imported the private key \(kid) into \(path); it opens ps2 messages sealed to it" : already
        case .publicKey(let share):
            return try keyring.importPublic(share, now: now) ? "imported the public key \(kid) into \(path); seal to it with 'encrypt --to \(kid)'" : already
        case .secret(let share):
            return try keyring.importShare(share, now: now) ? "imported key \(kid) into \(path)" : already
        case .sender(let share):
            let first = !keyring.allowsOnlyKnownSenders
            guard try keyring.importSender(share, now: now) else { return already }
            return "allowed sender \(kid) in \(path)"
                + (first ? "; from now on only what an allowed sender sealed (ps3) opens here: ps1 and ps2 messages are sender-untrusted" : "")
        case .notice(let notice):
            switch try keyring.retire(notice) {
            case .retires(let time) where time <= now:
                return "key \(notice.kid) has retired: it opens nothing, and 'keys prune' destroys it"
            case .retires(let time):
                return "key \(notice.kid) retires at \(Timestamp.format(time)); then 'keys prune' destroys it"
            case .alreadySooner:
                return "key \(notice.kid) already retires no later than that"
            case .notHeld:
                return "no key \(notice.kid) in \(path): nothing to retire"
            }
        }
    }
}

private func note(_ console: Console, _ text: String) {
    if console.stderrIsTerminal { console.diagnostic(text) }
}

/// Left-aligned columns separated by two spaces.
private func table(_ rows: [[String]]) -> [String] {
    let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { column, cell in
            column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
        }.joined(separator: "  ")
    }
}

/// A share as its line, a QR code in the terminal or a PNG file. A secret share's QR code
/// never goes where it could be kept by accident: only to a terminal, or to the file named.
private func show(_ share: String, of kid: String, secret: Bool, as picture: SharePicture?, console: Console) throws {
    guard let picture else { return console.output(share) }
    let program = try CompanionProgram.locate("pushseal-qr", override: "PUSHSEAL_QR")
    switch picture {
    case .terminal:
        let terminal = isatty(1) == 1
        if secret, !terminal {
            throw CLIFailure(.usage, "a psk1 share is a secret, so its QR code is drawn only on a terminal, not into a pipe or file; run it in a terminal, or write an image with --qr-png FILE")
        }
        // Colour codes only for a terminal, as ls and git do: a file or pipe gets the blocks alone.
        let drawing = try CompanionProgram.output(of: program, [terminal ? "text" : "plain"], input: Array(share.utf8))
        console.output(bytes: drawing.last == UInt8(ascii: "\n") ? Array(drawing.dropLast()) : drawing)
        console.diagnostic(
            secret
                ? "the psk1 share of key \(kid): a secret; scan it on the receiving device only"
                : share.hasPrefix(SenderShare.prefix) ? "the pss1 share of sender key \(kid)" : "the ppk1 public share of key \(kid)")
    case .png(let file):
        let image = try CompanionProgram.output(of: program, ["png"], input: Array(share.utf8))
        try FileIO.replace(file, with: image)
        console.diagnostic(
            "wrote the QR code of key \(kid)'s \(secret ? "psk1 share to \(file) (mode 0600; a secret: delete it once scanned)" : "\(share.prefix(4)) share to \(file)")")
    }
}

extension Specs {
    static let keys: [CommandSpec] = [
        CommandSpec(
            name: ["keys", "init"], overview: "Create a keyring with one primary key.",
            usage: "pushseal keys init [--recipient | --sender] [--keys DIR]", options: [keysOption, lockTimeoutOption, recipientOption, senderKindOption],
            discussion:
                "Creates DIR (mode 0700) and DIR/keyring.json (mode 0600); prints the new key id.\nRefuses to overwrite an existing keyring. With --recipient (on the device's side) the key\nis a P-256 key pair: 'keys export --public' prints the share senders import. With --sender\nit is a sender key alone, for a sender that seals only to imported recipient keys."
        ),
        CommandSpec(
            name: ["keys", "add"], overview: "Add a key that decrypts but does not encrypt yet.",
            usage: "pushseal keys add [--recipient | --sender] [--keys DIR]", options: [keysOption, lockTimeoutOption, addRecipientOption, senderKindOption],
            discussion:
                "Step one of a two-step roll-out: export the new key to receivers, then 'keys promote' it.\nPrints the new key id. The key is of the primary's kind (a key pair in a recipient\nkeyring, a shared secret otherwise) unless --recipient asks for a key pair.\nWith --sender it is a sender key: the keyring's first one vouches at once for what it seals\nto recipient keys (ps3); a later one waits for 'keys promote'."
        ),
        CommandSpec(
            name: ["keys", "promote"], overview: "Make a key the primary.",
            usage: "pushseal keys promote KID [--grace 30d] [--keys DIR]", options: [keysOption, graceOption, lockTimeoutOption],
            discussion: "The previous primary keeps decrypting until the grace period passes.", arguments: .keyIDs),
        CommandSpec(
            name: ["keys", "rotate"], overview: "Make a new primary of its kind; the old one decrypts for --grace.",
            usage: "pushseal keys rotate [--sender] [--grace 30d] [--keys DIR]",
            options: [keysOption, graceOption, lockTimeoutOption, OptionSpec("sender", help: "Rotate the sender key instead of the primary.")],
            discussion:
                "Prints the new key id. Payloads sealed under the old primary still open until the grace\nperiod passes; then 'keys prune' destroys it. The new key is of the old one's kind: a shared\nsecret, or a key pair on a device. A device's public key is rotated on the device\n('keys rotate' there, then 'keys export --public' there and 'keys import' here).\nWith --sender the sender key is replaced: give receivers the new one ('keys export --sender')\nand the old one's retirement ('keys export --retirements'); they allow it until then."
        ),
        CommandSpec(
            name: ["keys", "list"], overview: "Show the keys, never their secrets.",
            usage: "pushseal keys list [--json] [--keys DIR]",
            options: [keysOption, lockTimeoutOption, OptionSpec("json", help: "Print a JSON array instead of a table.")],
            discussion: ""),
        CommandSpec(
            name: ["keys", "export"], overview: "Print a key as a one-line share for a receiver.",
            usage: "pushseal keys export [KID] [--public | --private | --sender | --retirements] [--qr | --qr-png FILE] [--keys DIR]",
            options: [
                keysOption, lockTimeoutOption,
                OptionSpec("sender", help: "Print the sender key's share (pss1.…) for receivers to allow; no secret."),
                OptionSpec("retirements", help: "Print when each retiring key stops opening (psr1.<kid>.<time>), for receivers to import; no secret."),
                OptionSpec("public", help: "Print a recipient key's public share (ppk1.…), which holds no secret."),
                OptionSpec("private", help: "Print a recipient key's private share (prk1.…), for another receiver of yours; a secret."),
                OptionSpec("qr", help: "Draw the share as a QR code in the terminal for a phone's camera (a psk1 share: only on a terminal)."),
                OptionSpec("qr-png", value: "file", help: "Write the share's QR code to FILE as a PNG image (mode 0600) instead of printing it.")
            ],
            discussion:
                "Prints psk1.<kid>.<secret> for the primary key, or for KID. This is the only command that\nshows a secret: send it over a channel you trust, e.g. 'pushseal keys export | ssh host pushseal keys import -'.\nWith --public it prints ppk1.<kid>.<point> for a recipient key: safe to paste anywhere.\nWith --private it prints prk1.<kid>.<scalar>, the device's private key, for a second receiver\nor a backup of yours: a secret that opens every message sealed to the device, never for a sender.\nWith --sender (or a sender key's KID) it prints pss1.<kid>.<point>, the share receivers import\nto allow this sender; a sender key's private half never leaves the keyring.\n--qr draws the share as a QR code instead (Unicode half blocks, dark on light); since a psk1\nshare is a secret, its QR code is drawn only when stdout is a terminal, never into a pipe or\na file, and an image of it is written only to the FILE --qr-png names.\nWith --retirements it prints psr1.<kid>.<unix time> for every key a rotation, promotion or\ndestroy retired here: a receiver imports them, and its copies stop opening then too.",
            arguments: .keyIDs),
        CommandSpec(
            name: ["keys", "import"], overview: "Add a shared key, a recipient's public or private key, or an allowed sender, to this keyring.",
            usage: "pushseal keys import SHARE|FILE|- [--keys DIR]", options: [keysOption, lockTimeoutOption],
            discussion:
                "Reads the share from stdin ('-') or a FILE, one per line (all of them import, or none);\ncreates the keyring if there is none. A psk1\nkey is added enabled: it decrypts, and 'keys promote KID' makes it the key that encrypts.\nA ppk1 public key only encrypts ('encrypt --to KID', or promote it to seal to it by default).\nA prk1 private key (from 'keys export --private' on another receiver of yours) opens ps2.\nA pss1 sender key (from 'keys export --sender' on a sender) is allowed: its ps3 messages open,\nand from then on nothing unauthenticated (ps1, ps2) does ('receive --senders any' overrides).\nA psk1 share typed as an argument works but shows in 'ps' and shell history, so it earns a\nwarning; a ppk1 share holds no secret and may be given as it is.\nA psr1 retirement notice (from 'keys export --retirements' on the sender) makes that key\nstop opening at its time, as the sender's copy does; then 'keys prune' destroys it.",
            arguments: .files),
        CommandSpec(
            name: ["keys", "disable"], overview: "Stop a key from decrypting.",
            usage: "pushseal keys disable KID [--keys DIR]", options: [keysOption, lockTimeoutOption],
            discussion: "Reversible with 'pushseal keys enable KID'. The primary cannot be disabled.", arguments: .keyIDs),
        CommandSpec(
            name: ["keys", "enable"], overview: "Let a disabled key decrypt again.",
            usage: "pushseal keys enable KID [--keys DIR]", options: [keysOption, lockTimeoutOption], discussion: "", arguments: .keyIDs),
        CommandSpec(
            name: ["keys", "destroy"], overview: "Wipe a key's secret for good.",
            usage: "pushseal keys destroy KID [--keys DIR]", options: [keysOption, lockTimeoutOption],
            discussion: "The id stays in the keyring so receivers can say why a message cannot be read.\nThe primary cannot be destroyed.", arguments: .keyIDs),
        CommandSpec(
            name: ["keys", "prune"], overview: "Destroy keys whose grace period has passed.",
            usage: "pushseal keys prune [--keys DIR]", options: [keysOption, lockTimeoutOption],
            discussion: "Prints the ids it destroyed, one per line."),
        CommandSpec(
            name: ["keys", "vapid"], overview: "Show the Web Push sender's VAPID public key (made on first use).",
            usage: "pushseal keys vapid [--rotate] [--keys DIR]",
            options: [OptionSpec("rotate", help: "Make a new VAPID key; browsers must subscribe again."), keysOption],
            discussion:
                "Prints the public key (base64url, 65 bytes) the receiving web app subscribes with. The private key is kept\nbeside the keyring in vapid-key.pem (0600) and signs each push service's VAPID token."
        )
    ]

    static let recipientOption = OptionSpec("recipient", help: "Make a recipient key pair (P-256, for ps2) instead of a shared secret.")

    static let addRecipientOption = OptionSpec("recipient", help: "Make a recipient key pair (P-256, for ps2) whatever the primary's kind.")

    static let senderKindOption = OptionSpec("sender", help: "Make a sender key pair (P-256), which vouches for what this keyring seals to recipient keys (ps3).")
}

enum KeysAction: Equatable {
    case initialize(recipient: Bool, sender: Bool = false)
    case add(recipient: Bool, sender: Bool = false)
    case promote(kid: String, grace: Duration)
    case rotate(grace: Duration, sender: Bool = false)
    case list(json: Bool)
    case export(kid: String?, public: Bool, private: Bool = false, picture: SharePicture? = nil, sender: Bool = false)
    /// `keys export --retirements`: the notices receivers import so their copies retire too.
    case exportRetirements
    case importShare(source: ShareSource)
    case disable(kid: String)
    case enable(kid: String)
    case destroy(kid: String)
    case prune
    /// `keys vapid [--rotate]`: the Web Push sender's VAPID public key.
    case vapid(rotate: Bool)
}

/// `keys export --qr` (a QR code in the terminal) or `--qr-png FILE`.
enum SharePicture: Equatable {
    case terminal
    case png(String)
}

/// Where `keys import` reads the share from.
enum ShareSource: Equatable {
    case standardInput
    case file(String)
    /// Typed on the command line: works, but earns a warning.
    case argument(String)
}

func parseKeys(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let names = Specs.keys.compactMap(\.name.last)
    guard let name = arguments.first, !name.hasPrefix("-") else {
        if arguments.contains("--help") || arguments.contains("-h") { return .help(["keys"]) }
        throw UsageError("missing a keys subcommand (\(names.joined(separator: ", ")))", command: ["keys"])
    }
    guard let spec = Specs.keys.first(where: { $0.name.last == name }) else {
        let guess = Suggestion.closest(to: name, among: names)
        throw UsageError("unknown keys subcommand '\(name)'" + (guess.map { " (did you mean '\($0)'?)" } ?? ""), command: ["keys"])
    }
    let parsed = try parseArguments(Array(arguments.dropFirst()), spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    let folder = keysFolder(parsed)

    func kid(optional: Bool = false) throws(UsageError) -> String? {
        guard parsed.positionals.count <= 1 else {
            throw UsageError("expected one key id, got \(parsed.positionals.count)", command: spec.name)
        }
        guard let kid = parsed.positionals.first else {
            if optional { return nil }
            throw UsageError("missing the key id (KID); 'pushseal keys list' shows them", command: spec.name)
        }
        guard KeyID.isValid(kid) else {
            throw UsageError("'\(kid.prefix(70))' is not a key id (1 to 64 of A-Z a-z 0-9 _ -)", command: spec.name)
        }
        return kid
    }
    func noArguments() throws(UsageError) {
        guard parsed.positionals.isEmpty else {
            throw UsageError("unexpected argument '\(parsed.positionals[0].prefix(70))'", command: spec.name)
        }
    }
    func oneKind() throws(UsageError) {
        guard !(parsed.has("recipient") && parsed.has("sender")) else {
            throw UsageError("give --recipient (a key pair that opens) or --sender (a key pair that vouches), not both", command: spec.name)
        }
    }
    func grace() throws(UsageError) -> Duration {
        try duration(parsed, "grace", in: DurationRange.grace, example: "30d, 12h or 0s", command: spec.name) ?? Keyring.defaultGrace
    }
    let lockTimeout =
        try duration(parsed, "lock-timeout", in: DurationRange.lockTimeout, example: "30s", command: spec.name)
        ?? KeyringStore.defaultLockTimeout

    let action: KeysAction
    switch name {
    case "init":
        try noArguments()
        try oneKind()
        action = .initialize(recipient: parsed.has("recipient"), sender: parsed.has("sender"))
    case "add":
        try noArguments()
        try oneKind()
        action = .add(recipient: parsed.has("recipient"), sender: parsed.has("sender"))
    case "promote": action = .promote(kid: try kid()!, grace: try grace())
    case "rotate":
        try noArguments()
        action = .rotate(grace: try grace(), sender: parsed.has("sender"))
    case "list":
        try noArguments()
        action = .list(json: parsed.has("json"))
    case "export" where parsed.has("retirements"):
        let other = ["public", "private", "sender", "qr", "qr-png"].first(where: parsed.has).map { "--\($0)" } ?? (parsed.positionals.isEmpty ? nil : "a KID")
        if let other {
            throw UsageError("--retirements prints the notices of every retiring key, so it takes no \(other)", command: spec.name)
        }
        action = .exportRetirements
    case "export":
        var picture: SharePicture?
        if let file = parsed.value("qr-png") {
            guard !parsed.has("qr") else { throw UsageError("give --qr (the terminal) or --qr-png FILE (an image), not both", command: spec.name) }
            guard !file.isEmpty else { throw UsageError("--qr-png needs a file name", command: spec.name) }
            picture = .png(file)
        } else if parsed.has("qr") {
            picture = .terminal
        }
        guard !(parsed.has("public") && parsed.has("private")) else {
            throw UsageError("give --public (the share senders import) or --private (the device's own key), not both", command: spec.name)
        }
        guard !(parsed.has("sender") && parsed.has("private")) else {
            throw UsageError("a sender key's private half never leaves the keyring: --sender prints its public share, so give it without --private", command: spec.name)
        }
        action = .export(
            kid: try kid(optional: true), public: parsed.has("public"), private: parsed.has("private"), picture: picture, sender: parsed.has("sender"))
    case "import":
        guard parsed.positionals.count == 1, let source = parsed.positionals.first else {
            throw UsageError("expected one SHARE: '-' to read it from stdin, or a file holding it", command: spec.name)
        }
        if source == "-" {
            action = .importShare(source: .standardInput)
        } else if [KeyShare.prefix, PublicShare.prefix, SenderShare.prefix, RetirementNotice.prefix].contains(where: source.hasPrefix) {
            action = .importShare(source: .argument(source))
        } else {
            action = .importShare(source: .file(source))
        }
    case "disable": action = .disable(kid: try kid()!)
    case "enable": action = .enable(kid: try kid()!)
    case "destroy": action = .destroy(kid: try kid()!)
    case "prune":
        try noArguments()
        action = .prune
    case "vapid":
        try noArguments()
        action = .vapid(rotate: parsed.has("rotate"))
    default: throw UsageError("unknown keys subcommand '\(name)'", command: ["keys"])
    }
    return .keys(folder: folder, lockTimeout: lockTimeout, action: action)
}
