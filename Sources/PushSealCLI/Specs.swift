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
        help: "How long the old primary keeps decrypting (default: 30d, APNs' longest storage; 0s to 3650d).")

    static let lockTimeoutOption = OptionSpec(
        "lock-timeout", value: "duration", environment: "PUSHSEAL_LOCK_TIMEOUT",
        help: "Give up (exit 75) when another command holds the keyring longer (default: 30s; 0s to 1h).")

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
          receive      Deliver payloads through a Notification Service Extension emulator.
          send         Seal an alert and deliver it to APNs over HTTP/2.
          run          Run a command, then send its outcome as a sealed alert.
          token        Print an APNs provider token for curl and other tools.
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
        \(keys.map { "  " + $0.synopsis + String(repeating: " ", count: max(2, 22 - $0.synopsis.count)) + $0.overview }.joined(separator: "\n"))

        Every subcommand takes --keys DIR (or PUSHSEAL_KEYS; default ./Keys).
        """)

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

    static let keys: [CommandSpec] = [
        CommandSpec(
            name: ["keys", "init"], overview: "Create a keyring with one primary key.",
            usage: "pushseal keys init [--recipient] [--keys DIR]", options: [keysOption, lockTimeoutOption, recipientOption],
            discussion: "Creates DIR (mode 0700) and DIR/keyring.json (mode 0600); prints the new key id.\nRefuses to overwrite an existing keyring. With --recipient (on the device's side) the key\nis a P-256 key pair: 'keys export --public' prints the share senders import."),
        CommandSpec(
            name: ["keys", "add"], overview: "Add a key that decrypts but does not encrypt yet.",
            usage: "pushseal keys add [--recipient] [--keys DIR]", options: [keysOption, lockTimeoutOption, addRecipientOption],
            discussion: "Step one of a two-step roll-out: export the new key to receivers, then 'keys promote' it.\nPrints the new key id. The key is of the primary's kind (a key pair in a recipient\nkeyring, a shared secret otherwise) unless --recipient asks for a key pair."),
        CommandSpec(
            name: ["keys", "promote"], overview: "Make a key the primary.",
            usage: "pushseal keys promote KID [--grace 30d] [--keys DIR]", options: [keysOption, graceOption, lockTimeoutOption],
            discussion: "The previous primary keeps decrypting until the grace period passes.", arguments: .keyIDs),
        CommandSpec(
            name: ["keys", "rotate"], overview: "Make a new primary of its kind; the old one decrypts for --grace.",
            usage: "pushseal keys rotate [--grace 30d] [--keys DIR]", options: [keysOption, graceOption, lockTimeoutOption],
            discussion: "Prints the new key id. Payloads sealed under the old primary still open until the grace\nperiod passes; then 'keys prune' destroys it. The new key is of the old one's kind: a shared\nsecret, or a key pair on a device. A device's public key is rotated on the device\n('keys rotate' there, then 'keys export --public' there and 'keys import' here)."),
        CommandSpec(
            name: ["keys", "list"], overview: "Show the keys, never their secrets.",
            usage: "pushseal keys list [--json] [--keys DIR]",
            options: [keysOption, lockTimeoutOption, OptionSpec("json", help: "Print a JSON array instead of a table.")],
            discussion: ""),
        CommandSpec(
            name: ["keys", "export"], overview: "Print a key as a one-line share for a receiver.",
            usage: "pushseal keys export [KID] [--public] [--qr | --qr-png FILE] [--keys DIR]",
            options: [keysOption, lockTimeoutOption,
                      OptionSpec("public", help: "Print a recipient key's public share (ppk1.…), which holds no secret."),
                      OptionSpec("qr", help: "Draw the share as a QR code in the terminal for a phone's camera (a psk1 share: only on a terminal)."),
                      OptionSpec("qr-png", value: "file", help: "Write the share's QR code to FILE as a PNG image (mode 0600) instead of printing it.")],
            discussion: "Prints psk1.<kid>.<secret> for the primary key, or for KID. This is the only command that\nshows a secret: send it over a channel you trust, e.g. 'pushseal keys export | ssh host pushseal keys import -'.\nWith --public it prints ppk1.<kid>.<point> for a recipient key: safe to paste anywhere.\n--qr draws the share as a QR code instead (Unicode half blocks, dark on light); since a psk1\nshare is a secret, its QR code is drawn only when stdout is a terminal, never into a pipe or\na file, and an image of it is written only to the FILE --qr-png names.", arguments: .keyIDs),
        CommandSpec(
            name: ["keys", "import"], overview: "Add a shared key, or a recipient's public key, to this keyring.",
            usage: "pushseal keys import SHARE|FILE|- [--keys DIR]", options: [keysOption, lockTimeoutOption],
            discussion: "Reads the share from stdin ('-') or a FILE; creates the keyring if there is none. A psk1\nkey is added enabled: it decrypts, and 'keys promote KID' makes it the key that encrypts.\nA ppk1 public key only encrypts ('encrypt --to KID', or promote it to seal to it by default).\nA psk1 share typed as an argument works but shows in 'ps' and shell history, so it earns a\nwarning; a ppk1 share holds no secret and may be given as it is.",
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
    ]

    /// The option for each alert field: the encrypt parser, its help and the batch-line
    /// names all follow `AlertField`, so no field can have an option and be lost elsewhere.
    static let alertFieldOptions: [(field: AlertField, option: OptionSpec)] = AlertField.every.map { field in
        let option: OptionSpec = switch field {
        case .title: OptionSpec("title", short: "t", value: "title", help: "Alert title (sealed).")
        case .subtitle: OptionSpec("subtitle", value: "subtitle", help: "Alert subtitle (sealed).")
        case .body: OptionSpec("body", short: "b", value: "body", help: "Alert body (sealed).")
        case .badge: OptionSpec("badge", value: "n", help: "App icon badge number.")
        case .sound: OptionSpec("sound", short: "s", value: "name", help: "Sound to play ('default' for the system sound).")
        case .threadID: OptionSpec("group", short: "g", value: "id", help: "Thread id that groups notifications (thread-id).")
        case .category: OptionSpec("category", value: "id", help: "Notification category (actions).")
        case .targetContentID: OptionSpec("target-content-id", value: "id", help: "Which window or content the notification brings forward.")
        case .interruptionLevel: OptionSpec("level", short: "l", value: "level", choices: InterruptionLevel.all.map(\.rawValue), help: "passive, active, time-sensitive (or timeSensitive) or critical.")
        case .relevanceScore: OptionSpec("relevance-score", value: "0-1", help: "How the notification ranks in its summary (a number from 0 to 1).")
        }
        return (field, option)
    }

    /// The alert and sealing options `encrypt` and `send` share (one parser reads them).
    static func sealingOptions(ttl ttlHelp: String) -> [OptionSpec] {
        alertFieldOptions.map(\.option) + [
            OptionSpec("message", short: "m", value: "body", help: "Same as --body."),
            OptionSpec("url", value: "url", help: "URL for the app to open, sealed as data.url."),
            OptionSpec("data", value: "key=value", repeatable: true, help: "Custom data merged into userInfo; key:=JSON for non-strings."),
            OptionSpec("ttl", value: "duration", environment: "PUSHSEAL_TTL", help: ttlHelp),
            OptionSpec("fallback-title", value: "title", environment: "PUSHSEAL_FALLBACK_TITLE", help: "Visible title when nothing decrypts (default: New notification)."),
            OptionSpec("fallback-body", value: "body", environment: "PUSHSEAL_FALLBACK_BODY", help: "Visible body when nothing decrypts (default: Open the app to read it)."),
            fieldOption,
            OptionSpec("pad", value: "bytes", environment: "PUSHSEAL_PAD", help: "Pad the sealed alert to a multiple of this (default: 32)."),
            OptionSpec("truncate", help: "Cut a body too long for APNs' payload limit to fit, on a character boundary, ending with '…'."),
        ]
    }

    static let recipientOption = OptionSpec("recipient", help: "Make a recipient key pair (P-256, for ps2) instead of a shared secret.")
    static let addRecipientOption = OptionSpec("recipient", help: "Make a recipient key pair (P-256, for ps2) whatever the primary's kind.")

    static let toOption = OptionSpec("to", value: "kid", environment: "PUSHSEAL_TO",
                                     help: "Seal to this recipient's public key (ps2) instead of the primary key.")

    static let encrypt = CommandSpec(
        name: ["encrypt"], overview: "Seal an alert into an APNs payload.",
        usage: "pushseal encrypt [options] [BODY...|-]",
        options: sealingOptions(ttl: "Receivers show a placeholder after this long (e.g. 1h or 1h30m; 1s to 365d).") + [
            OptionSpec("batch", help: "Read alerts as JSON lines on stdin; write one payload per line."),
            toOption,
            jobsOption,
            keysOption,
        ],
        discussion: """
        ARGUMENTS:
          BODY...   The body as words, or '-' to read it from stdin. stdin is read only when
                    '-' says so, so pushseal never hangs under cron or CI.

        BATCH LINES (--batch): one JSON object per line with title, subtitle, body (or message),
          badge, sound, thread-id (or group), category, target-content-id, interruption-level
          (or level), relevance-score, url, data, ttl, id. The same rules as the options apply.
          A bad line is reported on stderr with its line number and skipped; the exit status
          is then 65.

        INPUT: text must be valid UTF-8 (exit 65 otherwise). A body read from stdin may be at
          most 4096 bytes: reading stops there, since no larger alert fits a payload.

        EXAMPLES:
          pushseal encrypt -t "Disk on db-3" -b "91% used"
          df -h | pushseal encrypt -t "Disk on db-3" -
          pushseal encrypt -t Deploy -b done | curl --http2 -H "apns-topic: $TOPIC" ... --data @- \\
              https://api.push.apple.com/3/device/$TOKEN
        """)

    static let decrypt = CommandSpec(
        name: ["decrypt"], overview: "Open a payload's sealed alert and print it as JSON.",
        usage: "pushseal decrypt FILE|- [--field enc] [--keys DIR]",
        options: [fieldOption, keysOption],
        discussion: """
        Reads a payload (or a bare ps1 or ps2 envelope) from FILE or stdin ('-') and prints the sealed
        alert as one line of JSON. An altered envelope exits 65 and prints nothing on stdout.
        """, arguments: .files)

    static let receive = CommandSpec(
        name: ["receive"], overview: "Show what a device would display: run payloads through an emulated Notification Service Extension.",
        usage: "pushseal receive FILE...|- [--json] [--budget 30s] [--extension CMD] [--keys DIR]\n       pushseal receive --watch DIR [--once] [options]\n       pushseal receive --listen [HOST:]PORT [--tls-cert F --tls-key F | --plaintext] [--device TOKEN]... [options]",
        options: [
            OptionSpec("json", help: "Write one JSON record per line instead of text."),
            OptionSpec("watch", value: "dir", help: "Deliver *.json and *.apns files dropped into DIR, then move them to DIR/processed/."),
            OptionSpec("once", help: "With --watch: deliver the files there now, then exit."),
            OptionSpec("listen", value: "[host:]port", help: "Serve Apple's provider API over HTTP/2 on HOST (default 127.0.0.1) and PORT (0: a free one)."),
            OptionSpec("tls-cert", value: "file", help: "With --listen: the PEM certificate chain to serve (default: a self-signed one in the keyring folder)."),
            OptionSpec("tls-key", value: "file", help: "With --listen: the PEM private key of --tls-cert."),
            OptionSpec("plaintext", help: "With --listen: HTTP/2 without TLS (prior knowledge, as curl --http2-prior-knowledge)."),
            OptionSpec("device", value: "token", repeatable: true, help: "With --listen: a known device token; others get BadDeviceToken (default: any well-formed one)."),
            OptionSpec("unregistered", value: "token", repeatable: true, help: "With --listen: a token answered 410 Unregistered."),
            OptionSpec("topic", value: "bundle", repeatable: true, help: "With --listen: an accepted apns-topic; others get TopicDisallowed (default: any)."),
            OptionSpec("provider-key", value: "kid=file", repeatable: true, help: "With --listen: verify provider tokens with key id KID's public key or .p8 FILE."),
            OptionSpec("team", value: "teamid", help: "With --listen: the only team id (iss) accepted in provider tokens."),
            OptionSpec("idle-timeout", value: "duration", help: "With --listen: close a connection quiet this long (default: 60s; 1s to 24h)."),
            OptionSpec("budget", value: "duration", environment: "PUSHSEAL_BUDGET", help: "Time the extension has per notification, from the moment it is taken (default: 30s, Apple's; 1ms to 24h)."),
            OptionSpec("expiry-grace", value: "duration", help: "Wait after serviceExtensionTimeWillExpire before showing the original (default: 1s; 1ms to 1h)."),
            OptionSpec("extension", value: "command", help: "Run your own extension program instead of the decrypting one."),
            OptionSpec("then", value: "command", help: "After decrypting, run your own extension program on the opened alert, within the same budget."),
            OptionSpec("notify", help: "Also show each delivery as a desktop notification (notify-send, the freedesktop notification service)."),
            OptionSpec("max-extensions", value: "n", help: "At most this many extension programs run at once; others wait, their clock running (default: 64)."),
            OptionSpec("memory-limit", value: "size", help: "Kill an --extension program above this resident memory (default: 24MB)."),
            OptionSpec("placeholder-title", value: "title", environment: "PUSHSEAL_PLACEHOLDER_TITLE", help: "Shown when a sealed alert cannot be opened (default: Encrypted notification)."),
            OptionSpec("placeholder-body", value: "body", environment: "PUSHSEAL_PLACEHOLDER_BODY", help: "Shown when a sealed alert cannot be opened, whatever the reason."),
            OptionSpec("placeholder-for", value: "reason=body", repeatable: true,
                       help: "The body for one reason: key-missing, auth-failed (also malformed), expired or deadline."),
            jobsOption,
            fieldOption,
            keysOption,
        ],
        discussion: """
        INPUTS:
          FILE...   APNs payloads (.json, or .apns files as 'xcrun simctl push' takes them),
                    delivered in the order given. '-' reads one payload per line from stdin.
          --watch   A spool folder: files that cannot be read move to DIR/failed/ with a
                    NAME.reason beside them. Write files elsewhere and rename them in.
          --listen  An APNs-compatible endpoint: POST /3/device/TOKEN over HTTP/2 (TLS by
                    default, loopback by default). Each request is answered as APNs would
                    (200 with apns-id, or the status and {"reason":...}) and every accepted
                    one is delivered. Records carry device and the apns-* headers; a refused
                    request's record is 'rejected' with http-status and reason.

        STATUSES: decrypted, passthrough, key-missing, key-disabled, key-expired, auth-failed,
          malformed, expired, deadline, original, modified (an --extension's own content),
          rejected (--listen refused the request). Every input gets exactly one record, in
          input order (with --watch and --listen: as delivered).
          Payloads over APNs' 4096 bytes (5120 for voip) are malformed, as APNs would refuse them.

        STOPPING: SIGINT or SIGTERM stops taking input, ends running extension programs
          (SIGTERM, then SIGKILL after --expiry-grace) and writes every record still due;
          with FILEs or stdin it then says input was left unread and exits 130 or 143, as
          send does; --listen (after GOAWAY, letting deliveries in flight finish within
          their budget) and --watch exit 0, a signal being their normal stop. A second
          signal stops at once (exit 130 or 143).

        EXIT STATUS: 0 every input got its record (whatever its status); 64 usage; 66 a FILE
          or the keyring is missing; 74 records could not be written (full disk) or a --watch
          file could not be moved; 77 permission; 78 the keyring is damaged; 141 the reader
          of the records went away (| head), without a word.

        EXAMPLES:
          pushseal encrypt -t Hi -b there | pushseal receive -
          pushseal receive --json --budget 2s payloads/*.json
          pushseal receive --extension ./my-extension.py --budget 500ms payload.apns
          pushseal receive --listen 8443 --json
        """, arguments: .files)

    static let send = CommandSpec(
        name: ["send"], overview: "Seal an alert and deliver it to APNs over HTTP/2, one result line per device.",
        usage: "pushseal send --device TOKEN...|--devices FILE|- --topic BUNDLE --auth-key F.p8 --key-id K --team-id T [alert options] [BODY...]\n       pushseal encrypt ... | pushseal send --device TOKEN... [options] -\n       pushseal send --batch [options] < alerts.jsonl",
        options: sealingOptions(ttl: "Sealed exp and apns-expiration this far ahead (e.g. 1h or 1h30m; 1s to 365d).") + [
            OptionSpec("device", value: "token", repeatable: true, help: "A device token (hex) to send to."),
            OptionSpec("devices", value: "file", help: "Device tokens, one per line ('-': stdin; blank lines and # comments skipped)."),
            OptionSpec("batch", help: "Read JSON lines on stdin, each a device and its own alert: {\"device\": TOKEN, \"title\": …}."),
            toOption,
            OptionSpec("topic", value: "bundle", environment: "PUSHSEAL_TOPIC", help: "apns-topic: the app's bundle id (required)."),
            authKeyOption,
            keyIDOption,
            teamIDOption,
            OptionSpec("sandbox", help: "Send to APNs' sandbox (development builds)."),
            OptionSpec("production", help: "Send to APNs' production servers (the default)."),
            OptionSpec("endpoint", value: "url", environment: "PUSHSEAL_ENDPOINT", help: "Another APNs-compatible server, such as pushseal receive --listen."),
            OptionSpec("allow-cleartext", help: "Let an http:// --endpoint be another machine (the provider token then travels in clear)."),
            OptionSpec("cacert", value: "file", help: "Trust the certificates in FILE (PEM) for --endpoint."),
            OptionSpec("priority", value: "10|5|1", choices: APNs.Priority.allCases.map(\.rawValue), help: "apns-priority."),
            OptionSpec("collapse-id", value: "id", help: "apns-collapse-id (at most 64 bytes)."),
            OptionSpec("push-type", value: "type", choices: APNs.PushType.allCases.map(\.rawValue).sorted(), help: "apns-push-type (default: alert)."),
            OptionSpec("expiration", value: "unix", help: "apns-expiration: UNIX seconds (0: deliver now or never)."),
            OptionSpec("retries", value: "n", help: "Send again after 429, 500, 502, 503, 504 or no answer, at most N times (default: 3)."),
            OptionSpec("retry-for", value: "duration", help: "Start no retry later than this after a device's first attempt (default: 1m)."),
            OptionSpec("concurrency", value: "n", help: "At most N requests in flight on each connection (default: the server's limit, up to 1000)."),
            OptionSpec("connections", value: "n", help: "Spread the devices over N HTTP/2 connections (default: 1; 1 to 64)."),
            OptionSpec("proxy", value: "url", help: "Tunnel through this HTTP proxy (http://[user:password@]host:port; '' for none). Default: $HTTPS_PROXY unless $NO_PROXY names the host."),
            OptionSpec("timeout", value: "duration", help: "Give up on an answer this long after its request went out, and on a connection attempt (default: 30s; 100ms to 600s)."),
            OptionSpec("json", help: "Write one JSON result per line instead of text."),
            keysOption,
        ],
        discussion: """
        ARGUMENTS:
          BODY...   The body as words. '-' instead sends a ready payload read from stdin (what
                    'pushseal encrypt' printed) to every device.

        BATCH LINES (--batch): one JSON object per line: "device" (hex) and the alert's own
          fields as in 'pushseal encrypt --batch' (title, subtitle, body, level, url, data,
          ttl, ...). Each line is sealed on its own; a line's ttl also sets its
          apns-expiration. A bad line is reported on stderr with its number and skipped.

        RESULTS: one line per device, in the order given: 'ok TOKEN APNS-ID', or
          'fail TOKEN STATUS REASON [TIMESTAMP]', each ending '(retried after an unknown
          outcome)' when the device may have got it twice. With --json: {"device","status"
          (ok, refused, failed),"http-status","apns-id","reason","timestamp","attempts",
          "retried-after-unknown-outcome","elapsed_ms"}. A device given twice is sent once.

        PROVIDER TOKEN: signed with --auth-key (ES256), kept in the keyring folder (mode 0600),
          or in $XDG_CACHE_HOME/pushseal (~/.cache/pushseal) when there is none, and shared
          by every pushseal process for 50 minutes; minted again only then, or when APNs
          answers ExpiredProviderToken for a token at least 20 minutes old (the request is
          then sent once more; a younger one means a clock is wrong, and the result says so).
          A cached token made with another key is never used.

        RETRIES: 429, 500, 502, 503 and 504 are sent again with exponential backoff and
          jitter (or after the server's retry-after), at most --retries times and within
          --retry-for of the first attempt; other refusals are final. What the server did not
          process (a refused stream, past a GOAWAY) goes out again at once on another
          connection; a request that went out and got no answer is sent again once at most.

        CONNECTING: HTTP/2 only (ALPN h2 over TLS; prior knowledge over http://), the
          system's CA store plus --cacert, every address of the name in turn. HTTPS_PROXY
          (http_proxy for http://) and NO_PROXY are honoured; --proxy beats them. Four
          failed attempts, with backoff, fail every device at once with one line.

        STOPPING: a first SIGINT or SIGTERM stops taking devices, sending and retrying;
          answers already on their way get 5 s, are printed, then pushseal exits 130
          (SIGINT) or 143 (SIGTERM). A second signal exits at once.

        EXIT STATUS: 0 every device accepted; 69 some refused for good; 75 only temporary
          failures left, or the endpoint cannot be reached; 78 its certificate is not
          accepted, it does not speak HTTP/2, or the proxy refused; 64 usage; 65 a bad
          payload, batch line or .p8; 66 a missing file; 74 results could not be written
          (sending stops: nobody would see them).

        EXAMPLES:
          pushseal send --device "$TOKEN" --topic com.example.app -t "Deploy" -b "api-7 is live"
          pushseal encrypt -t Hi -b there | pushseal send --devices tokens.txt -
          pushseal send --endpoint https://127.0.0.1:8443 --cacert Keys/tls-cert.pem --device "$TOKEN" -b test
        """)

    static let run = CommandSpec(
        name: ["run"], overview: "Run a command, then send (or print) its outcome as a sealed alert.",
        usage: "pushseal run [send options] [--tail 5] [--print] -- CMD [ARGS...]",
        options: send.options.filter { !["batch", "body", "message"].contains($0.long) } + [
            OptionSpec("tail", value: "n", help: "Seal the last N lines of the command's output into the body (default: 5; 0: none, and the output is left alone)."),
            OptionSpec("print", help: "Print the payload on stdout instead of sending it (no APNs options needed)."),
            OptionSpec("results", value: "stream", choices: ["stderr", "stdout"], help: "Where the delivery results go: stderr (the default; stdout is the command's) or stdout."),
        ],
        discussion: """
        Runs CMD with its arguments as given (no shell), its stdin, stdout and stderr passed
        through, and keeps the last --tail lines of its output. When it ends, one alert goes
        out: the title says whether it worked (--title replaces it), the sealed body holds the
        command line, the exit status, how long it ran and those lines; a failure is
        time-sensitive unless --level says otherwise. The sealed data carries "command",
        "exit-status" and "duration-ms" for an app to read.

        EXIT STATUS: the command's own (128+N when signal N ended it); 127 when it cannot be
          started, 126 when it is not executable. The alert is sent either way; when it
          cannot be, pushseal says why on stderr and still exits with the command's status.

        SIGNALS: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to pushseal are
          passed on to the command (a Ctrl-C at the terminal reaches it directly, once).

        With --print the command's stdout goes to stderr, so stdout carries only the payload.
        The delivery results ("ok TOKEN APNS-ID" per device) go to stderr, so that the
        command's own output on stdout stays as it was; --results stdout puts them there.

        EXAMPLES:
          pushseal run --device "$TOKEN" -- make test
          pushseal run --print --tail 10 -- ./backup.sh | pushseal send --device "$TOKEN" -
        """, arguments: .commands)

    static let authKeyOption = OptionSpec("auth-key", value: "file", environment: "PUSHSEAL_AUTH_KEY", help: "The .p8 signing key from Apple (read from the file; never give it as an argument).")
    static let keyIDOption = OptionSpec("key-id", value: "keyid", environment: "PUSHSEAL_KEY_ID", help: "The .p8 key's id (kid).")
    static let teamIDOption = OptionSpec("team-id", value: "teamid", environment: "PUSHSEAL_TEAM_ID", help: "Your Apple team id (iss).")

    static let token = CommandSpec(
        name: ["token"], overview: "Print an APNs provider token for curl and other tools.",
        usage: "pushseal token --auth-key F.p8 --key-id K --team-id T [--keys DIR]",
        options: [authKeyOption, keyIDOption, teamIDOption, keysOption],
        discussion: """
        Prints the ES256 provider token (a JWT) that send uses, from the same cache: a token is
        reused for 50 minutes, as Apple asks, so a loop of curl calls never meets
        TooManyProviderTokenUpdates. The cache lives in the keyring folder when there is one
        (--keys, default ./Keys), else in ~/.cache/pushseal, mode 0600. The token lets anyone
        send to your apps for up to an hour: it goes to stdout only, never to a log.

        EXAMPLE:
          curl --http2 -H "authorization: bearer $(pushseal token)" -H "apns-topic: $TOPIC" \\
               -H "apns-push-type: alert" --data @payload.json \\
               "https://api.push.apple.com/3/device/$DEVICE_TOKEN"
        """)

    static let completions = CommandSpec(
        name: ["completions"], overview: "Print a completion script for bash, zsh or fish.",
        usage: "pushseal completions bash|zsh|fish", options: [],
        discussion: """
        The script is written from the same option tables the parser reads, so it always
        matches this binary. Load it with:
          bash:  source <(pushseal completions bash)   (or save it as ~/.local/share/bash-completion/completions/pushseal)
          zsh:   pushseal completions zsh > "${fpath[1]}/_pushseal"   (then: compinit)
          fish:  pushseal completions fish > ~/.config/fish/completions/pushseal.fish
        """, arguments: .words(Shell.allCases.map(\.rawValue)))

    static let manual = CommandSpec(
        name: ["manual"], overview: "Print pushseal's man page (roff).",
        usage: "pushseal manual", options: [],
        discussion: """
        Written from the same tables as the help pages. Read it with 'pushseal manual | man -l -'
        or install it as man1/pushseal.1 (Scripts/install.sh does).
        """)

    /// Every command and subcommand, in the order help and the manual show them.
    static let all: [CommandSpec] = [root, keysGroup] + keys + [encrypt, decrypt, receive, send, run, token, completions, manual]

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
        let rows = spec.options.map { option -> (String, String) in
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
    return lines.joined(separator: "\n") + "\n"
}
