/// The one table of exit codes: for each command, the codes it exits with and what each says
/// there. Every command's help, the manual's EXIT STATUS and docs/sending.md's table are written
/// from it (a test keeps that one equal), and a test holds each command's exit sites to
/// its row, so one code cannot mean two things without the table saying so.
enum ExitCodes {
    struct Use: Equatable {
        let status: ExitStatus
        let meaning: String

        init(_ status: ExitStatus, _ meaning: String) {
            self.status = status
            self.meaning = meaning
        }
    }

    /// What every command may exit with.
    static let every: [Use] = [
        Use(.ok, "success"),
        Use(.usage, "usage: an unknown option, a missing argument (a Usage: line follows the error)"),
        Use(.dataError, "an argument that is not valid UTF-8"),
        Use(.ioError, "input or output failed: stdout that cannot be written, a full disk, an unreadable file"),
        Use(.readerClosed, "the reader of stdout went away ('| head -1'): nothing is printed, as cat ends by SIGPIPE")
    ]

    /// What a command that reads or changes the keyring may exit with.
    static let keyring: [Use] = [
        Use(.noInput, "no keyring, no such key named on the command line, no primary key"),
        Use(.temporaryFailure, "another command held the keyring's lock past --lock-timeout"),
        Use(.noPermission, "the keyring or its folder is readable by group or others (the message names the chmod)"),
        Use(.configuration, "the keyring file is damaged")
    ]

    static let stopped: [Use] = [
        Use(.interrupted, "stopped by SIGINT with work left undone, said in one line"),
        Use(.terminated, "stopped by SIGTERM with work left undone, said in one line")
    ]

    static let keys: [Use] =
        every + keyring + [
            Use(.dataError, "a share, kid or key that cannot be used here (a bad share line, another key of that kid)"),
            Use(.unavailable, "export --qr: pushseal-qr is missing"),
            Use(.cannotCreate, "a keyring already exists, a folder or file cannot be made")
        ]

    static let encrypt: [Use] =
        every + keyring + stopped + [
            Use(.dataError, "a bad alert or batch line, an alert over the push type's limit")
        ]

    static let decrypt: [Use] =
        every + keyring + [
            Use(.dataError, "the receiver would not show it decrypted: the status is named (malformed, auth-failed, key-missing, ...)")
        ]

    static let doctor: [Use] =
        every + keyring + [
            Use(.dataError, "something stands in the way: the verdict is not 'it opens'"),
            Use(.noInput, "no such payload file or keyring, or the seal could not be checked for want of --keys")
        ]

    static let doctorSend: [Use] =
        every + [
            Use(.noInput, "the .p8 file is missing; --webpush: the subscriptions file is missing"),
            Use(.noPermission, "the .p8 file cannot be read for want of permission"),
            Use(.dataError, "the .p8 file holds no P-256 key; --webpush: --cacert holds no certificate"),
            Use(.cannotCreate, "the provider token's folder cannot be made"),
            Use(.configuration, "a check failed: each failure is said with its fix")
        ]

    static let receive: [Use] =
        every + keyring + stopped + [
            Use(.ok, "every input got its record, whatever its status; --listen and --watch stopped by a signal"),
            Use(.noInput, "an input FILE is missing"),
            Use(.dataError, "--listen: a provider-token key (--provider-key) that cannot be used"),
            Use(.unavailable, "--listen: the address cannot be listened on"),
            Use(.cannotCreate, "--listen: the TLS identity cannot be made")
        ]

    static let send: [Use] =
        every + keyring + stopped + [
            Use(.dataError, "bad device tokens or batch lines (each said), or a .p8 that holds no P-256 key"),
            Use(.unavailable, "some devices were refused for good (400, 403, 404, 410, 413, or a request the client itself refused)"),
            Use(.cannotCreate, "the provider token's folder cannot be made"),
            Use(.ioError, "the provider token cannot be kept on disk"),
            Use(.temporaryFailure, "only temporary failures were left, or the endpoint could not be reached: try again later"),
            Use(
                .configuration,
                "the endpoint cannot work as configured: its certificate is not accepted, it does not speak HTTP/2, the proxy refused, an address or trust file cannot be used, or the server called a fresh provider token expired (the clock)"
            )
        ]

    static let token: [Use] =
        every + [
            Use(.noInput, "the .p8 file is missing"),
            Use(.noPermission, "the .p8 file cannot be read for want of permission"),
            Use(.dataError, "the .p8 file holds no P-256 key"),
            Use(.cannotCreate, "the provider token's folder cannot be made"),
            Use(.configuration, "a provider token could not be made")
        ]

    static let webapp: [Use] =
        every + [
            Use(.noInput, "serve: the --tls-cert or --tls-key file cannot be read, or they do not match"),
            Use(.unavailable, "the QR code library is missing (--no-qr goes without); serve: the address cannot be listened on"),
            Use(.cannotCreate, "export: the folder or a file cannot be written; serve: the self-signed certificate cannot be made"),
            Use(.configuration, "no VAPID key in the keyring folder ('pushseal keys vapid' makes one)")
        ]

    /// `run` ends with its command's own status; these are its own.
    static let run: [Use] = every + keyring

    /// The row of a command, by its name (`keys rotate` is `keys`'s).
    static func uses(for name: CommandSpec.Name) -> [Use] {
        switch name.first {
        case "keys": keys
        case "encrypt": encrypt
        case "decrypt": decrypt
        case "doctor": name.count > 1 ? doctorSend : doctor
        case "receive": receive
        case "send": send
        case "token": token
        case "run": run
        case "webapp": webapp
        default: every
        }
    }

    /// The rows, named as help and docs/sending.md name them.
    static let rows: [(name: String, uses: [Use])] = [
        ("keys", keys), ("encrypt", encrypt), ("decrypt", decrypt), ("doctor", doctor), ("doctor send", doctorSend),
        ("receive", receive), ("send", send), ("token", token), ("run", run),
        ("webapp", webapp)
    ]

    /// A command's codes, in order, each once: the shared meaning and the command's own, as one line.
    static func sorted(_ uses: [Use]) -> [Use] {
        var chosen: [ExitStatus: [String]] = [:]
        for use in uses { chosen[use.status, default: []].append(use.meaning) }
        return chosen.keys.sorted { $0.rawValue < $1.rawValue }.map { status in
            let meanings = chosen[status]!
            return Use(status, meanings.count == 1 ? meanings[0] : meanings.joined(separator: "; "))
        }
    }

    /// The lines of a command's help: `EXIT CODES:` and one line a code.
    static func help(for name: CommandSpec.Name) -> [String] {
        guard !name.isEmpty else { return [] }
        let uses = sorted(uses(for: name))
        return ["", "EXIT CODES:"] + uses.map { "  " + String($0.status.rawValue).padding(toLength: 5) + $0.meaning }
    }

    /// What a code means across the commands, as docs/sending.md's table and the manual say it:
    /// every command's meaning, then each command's own.
    static func said(of status: ExitStatus) -> (shared: String?, own: [(name: String, meaning: String)]) {
        let shared = every.first { $0.status == status }
        let own = rows.compactMap { name, uses -> (name: String, meaning: String)? in
            let meanings = uses.filter { $0.status == status && $0 != shared }.map(\.meaning)
            return meanings.isEmpty ? nil : (name, meanings.joined(separator: "; "))
        }
        return (shared?.meaning, own)
    }

    /// `run`'s statuses beyond the table: its command's own.
    static let runsOwn = "the status its command exited with (127: it cannot be started; 126: it is not executable)"

    /// docs/sending.md's table: a code a row, and which commands give it and why.
    static var markdown: String {
        var lines = ["| code | commands: meaning |", "| --- | --- |"]
        for status in ExitStatus.allCases {
            let (shared, own) = said(of: status)
            let said = (shared.map { ["all: \($0)"] } ?? []) + own.map { "`\($0.name)`: \($0.meaning)" }
            lines.append("| \(status.rawValue) | " + said.joined(separator: "<br>") + " |")
        }
        lines.append("| any other | `run`: \(runsOwn) |")
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func padding(toLength width: Int) -> String {
        self + String(repeating: " ", count: max(1, width - count))
    }
}
