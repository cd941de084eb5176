#if canImport(Glibc)
import Glibc
#endif
import PushSeal
import PushSealJSON

/// Runs `pushseal keys …`. Results (kids, the table, a share) go to stdout; notes for
/// people go to stderr only when it is a terminal.
func runKeys(folder: String, lockTimeout: Duration, action: KeysAction, console: Console) throws {
    let store = KeyringStore(folder: folder, lockTimeout: lockTimeout) { [console] in
        console.diagnostic("waiting for another pushseal command to release the keyring lock (giving up after \(DurationText.format(lockTimeout)))")
    }
    let now = Timestamp.now()
    switch action {
    case .initialize(let recipient):
        let keyring = try Keyring.generate(now: now, kind: recipient ? .private : .secret)
        try store.create(keyring)
        let kid = keyring.primary!.id
        console.output(kid)
        try console.finish(done: "the keyring was created all the same, with primary key \(kid)")
        note(console, "created \(store.path) with primary key \(kid)")

    case .add(let recipient):
        let kid = try store.update { try $0.add(now: now, kind: recipient ? .private : nil) }
        console.output(kid)
        try console.finish(done: "key \(kid) was added all the same")
        note(console, "added key \(kid); share it with 'pushseal keys export \(kid)', then 'pushseal keys promote \(kid)'")

    case .promote(let kid, let grace):
        let previous = try store.update { keyring in
            let previous = keyring.primary?.id
            try keyring.promote(kid, grace: grace, now: now)
            return previous
        }
        console.output(kid)
        if let previous, previous != kid {
            note(console, "\(kid) is primary; \(previous) decrypts until \(Timestamp.format(now + DurationText.seconds(grace)))")
        }

    case .rotate(let grace):
        let (kid, previous) = try store.update { keyring in
            let previous = keyring.primary?.id
            return (try keyring.rotate(grace: grace, now: now), previous)
        }
        console.output(kid)
        try console.finish(done: "the keyring was rotated all the same: the new primary key is \(kid)")
        if let previous {
            note(console, "new primary \(kid); \(previous) decrypts until \(Timestamp.format(now + DurationText.seconds(grace)))")
        }

    case .list(let json):
        let keyring = try store.load()
        if json {
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
            console.output(JSONWriter.string(.array(entries)))
        } else {
            let rows = [["KID", "KIND", "STATE", "CREATED", "EXPIRES"]] + keyring.keys.map { entry in
                [entry.id, entry.kind.rawValue,
                 entry.shownState(at: now),
                 Timestamp.format(entry.created),
                 entry.expires.map(Timestamp.format) ?? "-"]
            }
            for line in table(rows) { console.output(line) }
        }

    case .export(let kid, let wantsPublic, let picture):
        let keyring = try store.load()
        guard let chosen = kid ?? keyring.primary?.id else { throw KeyringError(.noPrimary, "the keyring has no primary key") }
        guard let entry = keyring.entry(chosen) else { throw KeyringError(.unknownKey, "no key \(chosen) in the keyring") }
        if wantsPublic || entry.kind != .secret {
            // A recipient key leaves only as its public share: the private scalar stays here.
            guard entry.kind != .secret else {
                throw KeyringError(.notAllowed, "key \(chosen) is a shared secret, which has no public share; 'keys export \(chosen)' prints it")
            }
            guard entry.state != .destroyed, let point = entry.publicKey else {
                throw KeyringError(.keyDestroyed, "key \(chosen) was destroyed")
            }
            try show(PublicShare(kid: chosen, publicKey: point).text, of: chosen, secret: false, as: picture, console: console)
        } else {
            let key = try keyring.decryptionKey(for: chosen, now: now)
            try show(KeyShare(kid: chosen, secret: key).text, of: chosen, secret: true, as: picture, console: console)
        }

    case .importShare(let source):
        let text: String
        switch source {
        case .standardInput:
            text = String(decoding: try InputFiles.read("-"), as: UTF8.self)
        case .file(let path):
            text = String(decoding: try InputFiles.read(path), as: UTF8.self)
        case .argument(let share):
            if !share.hasPrefix(PublicShare.prefix) {
                console.warning("a key share typed as an argument shows in 'ps' and shell history; pipe it in with 'pushseal keys import -' next time")
            }
            text = share
        }
        if text.trimmingASCIIWhitespace().hasPrefix(PublicShare.prefix) {
            let share = try PublicShare(parsing: text)
            let added = try store.update(creatingIfMissing: true) { try $0.importPublic(share, now: now) }
            console.output(share.kid)
            note(console, added ? "imported the public key \(share.kid) into \(store.path); seal to it with 'encrypt --to \(share.kid)'"
                                : "key \(share.kid) was already in \(store.path)")
            return
        }
        let share = try KeyShare(parsing: text)
        let added = try store.update(creatingIfMissing: true) { try $0.importShare(share, now: now) }
        console.output(share.kid)
        note(console, added ? "imported key \(share.kid) into \(store.path)" : "key \(share.kid) was already in \(store.path)")

    case .disable(let kid):
        try store.update { try $0.disable(kid) }
        console.output(kid)

    case .enable(let kid):
        try store.update { try $0.enable(kid, now: now) }
        console.output(kid)

    case .destroy(let kid):
        try store.update { try $0.destroy(kid) }
        console.output(kid)

    case .prune:
        let pruned = try store.update { $0.prune(now: now) }
        for kid in pruned { console.output(kid) }
        try console.finish(done: pruned.isEmpty ? nil : "the keyring was pruned all the same: destroyed \(pruned.joined(separator: ", "))")
        note(console, pruned.isEmpty ? "no expired keys" : "destroyed \(pruned.count) expired key(s)")
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
        console.diagnostic(secret ? "the psk1 share of key \(kid): a secret; scan it on the receiving device only"
                                  : "the ppk1 public share of key \(kid)")
    case .png(let file):
        let image = try CompanionProgram.output(of: program, ["png"], input: Array(share.utf8))
        try FileIO.replace(file, with: image)
        console.diagnostic("wrote the QR code of key \(kid)'s \(secret ? "psk1 share to \(file) (mode 0600; a secret: delete it once scanned)" : "ppk1 share to \(file)")")
    }
}
