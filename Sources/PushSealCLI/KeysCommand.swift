import PushSeal

/// Runs `pushseal keys …`. Results (kids, the table, a share) go to stdout; notes for
/// people go to stderr only when it is a terminal.
func runKeys(folder: String, lockTimeout: Duration, action: KeysAction, console: Console) throws {
    let store = KeyringStore(folder: folder, lockTimeout: lockTimeout) { [console] in
        console.diagnostic("waiting for another pushseal command to release the keyring lock (giving up after \(DurationText.format(lockTimeout)))")
    }
    let now = Timestamp.now()
    switch action {
    case .initialize:
        let keyring = try Keyring.generate(now: now)
        try store.create(keyring)
        let kid = keyring.primary!.id
        console.output(kid)
        try console.finish(done: "the keyring was created all the same, with primary key \(kid)")
        note(console, "created \(store.path) with primary key \(kid)")

    case .add:
        let kid = try store.update { try $0.add(now: now) }
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
                object["state"] = .string(entry.state.rawValue)
                object["created"] = .string(Timestamp.format(entry.created))
                object["expires"] = entry.expires.map { .string(Timestamp.format($0)) } ?? .null
                object["expired"] = .bool(entry.isExpired(at: now))
                return .object(object)
            }
            console.output(JSONWriter.string(.array(entries)))
        } else {
            let rows = [["KID", "STATE", "CREATED", "EXPIRES"]] + keyring.keys.map { entry in
                [entry.id,
                 entry.isExpired(at: now) ? "expired" : entry.state.rawValue,
                 Timestamp.format(entry.created),
                 entry.expires.map(Timestamp.format) ?? "-"]
            }
            for line in table(rows) { console.output(line) }
        }

    case .export(let kid):
        let keyring = try store.load()
        let chosen = try kid ?? keyring.encryptionKey().kid
        let key = try keyring.decryptionKey(for: chosen, now: now)
        console.output(KeyShare(kid: chosen, secret: key).text)

    case .importShare(let source):
        let text: String
        switch source {
        case .standardInput:
            text = String(decoding: try InputFiles.read("-"), as: UTF8.self)
        case .file(let path):
            text = String(decoding: try InputFiles.read(path), as: UTF8.self)
        case .argument(let share):
            console.warning("a key share typed as an argument shows in 'ps' and shell history; pipe it in with 'pushseal keys import -' next time")
            text = share
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
