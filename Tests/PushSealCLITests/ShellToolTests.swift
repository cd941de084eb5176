import Foundation
import Testing

/// `pushseal completions` and `pushseal manual`, each run in the program that reads it:
/// bash, zsh and fish load the scripts and complete, man and groff render the page.
@Suite("completions and manual")
struct ShellToolTests {
    /// Every command path and the long options its --help lists: what the parser accepts.
    static let commands: [[String]] = [
        ["keys", "init"], ["keys", "rotate"], ["keys", "export"], ["keys", "import"], ["encrypt"], ["decrypt"],
        ["receive"], ["send"], ["run"], ["token"]
    ]

    static func helpOptions(_ command: [String]) throws -> Set<String> {
        let help = try pushseal(command + ["--help"]).stdout
        // The OPTIONS section only: the rest of the page may mention options in passing.
        let section = help.split(separator: "\n", omittingEmptySubsequences: false).drop { $0 != "OPTIONS:" }.dropFirst().prefix { !$0.isEmpty }
        let options = section.compactMap { line -> String? in
            let words = line.split(separator: " ")
            return words.first { $0.hasPrefix("--") }.map { String($0.split(separator: "=")[0]) }
        }
        return Set(options)
    }

    static func script(_ shell: String) throws -> String {
        let run = try pushseal(["completions", shell])
        #expect(run.status == 0, "\(run.stderr)")
        // The caller removes it; zsh wants the name it would have in $fpath.
        let path = NSTemporaryDirectory() + "pushseal-completion-\(UUID().uuidString)-" + (shell == "zsh" ? "_pushseal" : shell)
        try run.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    // MARK: bash

    static func bash(_ script: String, _ words: [String]) throws -> [String] {
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let run = try runProcess(
            "/bin/bash",
            [
                "--norc", "-c",
                """
                source "$1"
                COMP_WORDS=(\(quoted)); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
                _pushseal
                printf '%s\\n' "${COMPREPLY[@]}"
                """, "bash", script
            ])
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandsOptionsAndValues() throws {
        let script = try Self.script("bash")
        defer { try? FileManager.default.removeItem(atPath: script) }
        #expect(try Self.bash(script, ["pushseal", ""]) == ["keys", "encrypt", "decrypt", "doctor", "receive", "send", "run", "token", "webapp", "completions", "manual", "help"])
        #expect(try Self.bash(script, ["pushseal", "keys", "ro"]) == ["rotate"])
        #expect(try Self.bash(script, ["pushseal", "encrypt", "--le"]) == ["--level"])
        #expect(try Self.bash(script, ["pushseal", "encrypt", "--level", ""]) == ["passive", "active", "time-sensitive", "critical"])
        #expect(try Self.bash(script, ["pushseal", "encrypt", "--level", "=", "t"]) == ["time-sensitive"], "--level=t")
        #expect(try Self.bash(script, ["pushseal", "send", "--priority", ""]) == ["10", "5", "1"])
        #expect(try Self.bash(script, ["pushseal", "completions", ""]) == ["bash", "zsh", "fish"])
        #expect(try Self.bash(script, ["pushseal", "encrypt", "--title", ""]).isEmpty, "a free-text value offers nothing")
        let folder = TemporaryFolder()
        folder.write("payload.json", "{}")
        #expect(try Self.bash(script, ["pushseal", "decrypt", folder.file("pay")]) == [folder.file("payload.json")])
        #expect(try Self.bash(script, ["pushseal", "run", "--", "ech"]).contains("echo"), "a command after --")
    }

    /// The scripts come from the parser's own tables: every option --help lists completes,
    /// and nothing else does.
    @Test(arguments: commands)
    func everyShellOffersExactlyTheOptionsTheParserTakes(_ command: [String]) throws {
        let expected = try Self.helpOptions(command)
        #expect(expected.contains("--help") && expected.count > 1)
        let bash = try Self.script("bash")
        let zsh = try Self.script("zsh")
        let fish = try Self.script("fish")
        defer { [bash, zsh, fish].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        let fromBash = try Self.bash(bash, ["pushseal"] + command + ["--"]).filter { $0.hasPrefix("--") }
        #expect(Set(fromBash) == expected, "bash")
        let fromZsh = try Self.zsh(zsh, ["pushseal"] + command + ["--"]).compactMap { $0.split(separator: ":").first.map(String.init) }
            .filter { $0.hasPrefix("--") }
        #expect(Set(fromZsh) == expected, "zsh")
        let fromFish = try Self.fish(fish, "pushseal \(command.joined(separator: " ")) --").compactMap { $0.split(separator: "\t").first.map(String.init) }
        #expect(Set(fromFish) == expected, "fish")
    }

    /// `keys promote <TAB>` and `--to <TAB>` offer the ids of the keyring the line names
    /// (--keys, else PUSHSEAL_KEYS), in all three shells, by running the pushseal on PATH.
    @Test func keyIDsCompleteFromTheKeyringTheLineNames() throws {
        let keyring = try KeyringFixture()
        let rotated = try keyring.keysCommand(["rotate"]).stdout.trimmingCharacters(in: .newlines)
        let ids = try keyring.keysCommand(["list"]).stdout.split(separator: "\n").dropFirst().map { String($0.split(separator: " ")[0]) }.sorted()
        #expect(ids.count == 2 && ids.contains(rotated))
        let path = URL(fileURLWithPath: pushsealBinary).deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let bash = try Self.script("bash")
        let zsh = try Self.script("zsh")
        let fish = try Self.script("fish")
        defer { for script in [bash, zsh, fish] { try? FileManager.default.removeItem(atPath: script) } }
        func lines(_ run: Run) -> [String] {
            #expect(run.stderr.isEmpty, "\(run.stderr)")
            return run.stdout.split(separator: "\n").map(String.init).sorted()
        }
        let fromBash = try runProcess(
            "/bin/bash",
            [
                "--norc", "-c",
                """
                source "$1"
                COMP_WORDS=(pushseal keys promote --keys "$2" ""); COMP_CWORD=5; _pushseal; printf '%s\\n' "${COMPREPLY[@]}"
                COMP_WORDS=(pushseal encrypt --to ""); COMP_CWORD=3; PUSHSEAL_KEYS="$2" _pushseal; printf '%s\\n' "${COMPREPLY[@]}"
                """, "bash", bash, keyring.keys
            ], environment: ["PATH": path])
        #expect(lines(fromBash) == (ids + ids).sorted())
        let fromZsh = try runProcess(
            "/usr/bin/zsh",
            [
                "-f", "-c",
                """
                compadd() { [[ $1 == -a ]] && print -l -- ${(P)2} }
                compdef() { : }
                _describe() { : }
                source "$1"
                words=(pushseal keys destroy --keys "$2" ""); CURRENT=${#words}; _pushseal
                """, "zsh", zsh, keyring.keys
            ], environment: ["PATH": path])
        #expect(lines(fromZsh) == ids)
        let fromFish = try runProcess(
            "/usr/bin/fish", ["--no-config", "-c", "source $argv[1]; complete -C \"pushseal keys export --keys=$argv[2] \"", fish, keyring.keys],
            environment: ["PATH": path])
        #expect(lines(fromFish) == ids)
    }

    // MARK: zsh

    /// zsh runs the completion function itself; the completion system's builtins that
    /// would draw a menu (_describe, compadd, _files) print what they were given instead.
    static func zsh(_ script: String, _ words: [String]) throws -> [String] {
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let run = try runProcess(
            "/usr/bin/zsh",
            [
                "-f", "-c",
                """
                _describe() { print -l -- ${(P)2} }
                compadd() { [[ $1 == -a ]] && print -l -- ${(P)2} }
                _files() { print -- "<files $*>" }
                _message() { print -- "<message $*>" }
                _command_names() { print -- "<commands>" }
                compdef() { print -- "<compdef $*>" }
                source "$1"
                words=(\(quoted)); CURRENT=${#words}
                _pushseal
                """, "zsh", script
            ])
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("<compdef") }
    }

    @Test func zshCompletesCommandsOptionsAndValues() throws {
        let script = try Self.script("zsh")
        defer { try? FileManager.default.removeItem(atPath: script) }
        #expect(try String(contentsOfFile: script, encoding: .utf8).hasPrefix("#compdef pushseal\n"), "loadable from $fpath")
        let top = try Self.zsh(script, ["pushseal", ""])
        #expect(top.contains("keys:Manage the keyring.") && top.contains("run:Run a command, then send (or print) its outcome as a sealed alert."))
        #expect(try Self.zsh(script, ["pushseal", "keys", ""]).contains { $0.hasPrefix("rotate:") })
        #expect(try Self.zsh(script, ["pushseal", "encrypt", "--level", ""]) == ["passive", "active", "time-sensitive", "critical"])
        #expect(try Self.zsh(script, ["pushseal", "receive", "--keys", ""]) == ["<files -/>"])
        #expect(try Self.zsh(script, ["pushseal", "decrypt", ""]) == ["<files >"])
        #expect(try Self.zsh(script, ["pushseal", "run", "--", ""]) == ["<commands>"])
        #expect(try Self.zsh(script, ["pushseal", "encrypt", "-"]).contains("-t:Alert title (sealed)."))
        // Sourced (not autoloaded) it registers itself with compdef.
        let sourced = try runProcess("/usr/bin/zsh", ["-f", "-c", "compdef() { print -- \"$*\" }; source \"$1\"", "zsh", script])
        #expect(sourced.stdout == "_pushseal pushseal\n")
    }

    /// The same script through zsh's own completion system: compinit loads it from $fpath
    /// in an interactive zsh on a pseudo-terminal (zpty), and Tab completes.
    @Test func zshsCompletionSystemCompletesOnTab() throws {
        let folder = TemporaryFolder()
        folder.write("_pushseal", try pushseal(["completions", "zsh"]).stdout)
        folder.write(
            "drive.zsh",
            #"""
            zmodload zsh/zpty
            zpty -b z zsh -f -i
            zpty -w z "PS1='%% '; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D; zstyle ':completion:*' menu no; LISTMAX=1000; pushseal() { :; }"
            # Types $1, presses Tab, and reads what the terminal shows until $2 appears (10 s at most).
            tab() {
              local out="" line i
              zpty -w -n z "$1"$'\t'
              for i in {1..100}; do
                while zpty -r -t z line; do out+=$line; done
                [[ $out == *"$2"* ]] && break
                sleep 0.1
              done
              print -r -- "${out//$'\r'/}"
              zpty -w -n z $'\C-u'
            }
            tab 'pushseal encrypt --lev' 'encrypt --level'
            tab 'pushseal keys ' 'rotate'
            tab 'pushseal encrypt --level ' 'time-sensitive'
            zpty -d z
            """#)
        let run = try runProcess("/usr/bin/zsh", ["-f", folder.file("drive.zsh"), folder.path])
        let shown = run.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;?]*[A-Za-z]", with: "", options: .regularExpression)
        #expect(shown.contains("pushseal encrypt --level "), "Tab completed the option: \(shown.suffix(600)) \(run.stderr)")
        #expect(shown.contains("rotate") && shown.contains("-- Make a new primary of its kind"), "subcommands listed with their help")
        #expect(shown.contains("time-sensitive") && shown.contains("critical"))
    }

    // MARK: fish

    static func fish(_ script: String, _ line: String) throws -> [String] {
        let run = try runProcess("/usr/bin/fish", ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, line])
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    @Test func fishCompletesCommandsOptionsAndValues() throws {
        let script = try Self.script("fish")
        defer { try? FileManager.default.removeItem(atPath: script) }
        let top = try Self.fish(script, "pushseal ")
        #expect(top.contains("keys\tManage the keyring.") && top.contains("send\tSeal an alert and deliver it to APNs over HTTP/2, one result line per device."))
        #expect(try Self.fish(script, "pushseal keys ro") == ["rotate\tMake a new primary of its kind; the old one decrypts for --grace."])
        #expect(
            try Self.fish(script, "pushseal encrypt --level ").map { String($0.split(separator: "\t")[0]) }.sorted()
                == ["active", "critical", "passive", "time-sensitive"])
        #expect(try Self.fish(script, "pushseal completions ") == ["bash", "fish", "zsh"])
        #expect(try Self.fish(script, "pushseal encrypt --title ").isEmpty, "a free-text value offers nothing")
        let folder = TemporaryFolder()
        folder.write("payload.json", "{}")
        #expect(try Self.fish(script, "pushseal decrypt \(folder.file("pay"))") == [folder.file("payload.json")])
    }

    @Test func anUnknownShellIsAUsageError() throws {
        let run = parsed(["completions", "tcsh"])
        #expect(run.status == 64)
        #expect(run.stderr.hasPrefix("error: no completions for 'tcsh' (shells: bash, zsh, fish)\n"))
        #expect(parsed(["completions"]).status == 64)
    }

    // MARK: manual

    @Test func manRendersTheManualWithoutWarnings() throws {
        let folder = TemporaryFolder()
        let page = try pushseal(["manual"])
        #expect(page.status == 0)
        folder.write("pushseal.1", page.stdout)
        let man = try runProcess("/usr/bin/man", ["--warnings", "-l", folder.file("pushseal.1")], environment: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
        #expect(man.status == 0)
        #expect(man.stderr.isEmpty, "man's warnings: \(man.stderr)")
        let groff = try runProcess("/usr/bin/groff", ["-man", "-ww", "-z", "-Tutf8", folder.file("pushseal.1")])
        #expect(groff.stderr.isEmpty, "groff's warnings: \(groff.stderr)")
        // Every command and every option the parser takes is in it.
        let text = man.stdout.replacingOccurrences(of: "\u{2010}", with: "-").replacingOccurrences(of: "\u{2212}", with: "-")
        for command in Self.commands + [["completions"], ["manual"]] {
            #expect(text.contains("pushseal " + command.joined(separator: " ")), "\(command)")
            for option in try Self.helpOptions(command) where option != "--help" {
                #expect(text.contains(option), "\(command) \(option)")
            }
        }
        #expect(text.contains("PUSHSEAL_KEYS") && text.contains("EXIT STATUS") && text.contains("143"))
        // A dated title, and every usage form of a command at the same indentation.
        #expect(page.stdout.split(separator: "\n").first?.wholeMatch(of: /\.TH PUSHSEAL 1 "[0-9]{4}-[0-9]{2}-[0-9]{2}" "pushseal [0-9.]+" "User Commands"/) != nil)
        let synopsis = text.components(separatedBy: "SYNOPSIS\n")[1].components(separatedBy: "\nDESCRIPTION")[0]
        let indents = Set(synopsis.split(separator: "\n").map { (line: Substring) in line.prefix { $0 == " " }.count })
        #expect(indents == [7], "\(synopsis)")
        // Help and the manual show the same forms: every form a command's --help gives is in
        // the SYNOPSIS as written.
        let forms = Set(synopsis.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for command in Self.commands + [["completions"], ["manual"], ["doctor"], ["doctor", "send"]] {
            let help = try pushseal(command + ["--help"]).stdout.components(separatedBy: "\n")
            guard let start = help.firstIndex(where: { $0.hasPrefix("USAGE: ") }) else { continue }
            var usage = [String(help[start].dropFirst("USAGE: ".count))]
            usage += help[(start + 1)...].prefix { $0.hasPrefix("       ") }.map { $0.trimmingCharacters(in: .whitespaces) }
            for form in usage { #expect(forms.contains(form), "\(command): '\(form)' is not in the manual's SYNOPSIS") }
        }
    }
}

/// `keys export --qr` and `--qr-png`, read back by zbar (Reference/qr_decode.py), which
/// shares no code with libqrencode.
@Suite("pairing by QR code")
struct QRCodeTests {
    static let decoder = Bundle.module.url(forResource: "qr_decode", withExtension: "py", subdirectory: "Reference")!.path

    static func decode(_ arguments: [String], stdin: String? = nil) throws -> String {
        let run = try runProcess("/usr/bin/env", ["python3", decoder] + arguments, stdin: stdin)
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout
    }

    @Test func aSecretShareIsDrawnOnATerminalAndReadsBackByteForByte() throws {
        let keyring = try KeyringFixture()
        let share = try keyring.export()
        let decoded = try Self.decode(["terminal", pushsealBinary, "keys", "export", "--qr", "--keys", keyring.keys])
        #expect(decoded == share)
    }

    @Test func aSecretShareIsNeverDrawnIntoAPipeOrAFile() throws {
        let keyring = try KeyringFixture()
        let share = try keyring.export()
        let secret = String(share.split(separator: ".")[2])
        let piped = try keyring.keysCommand(["export", "--qr"])
        #expect(piped.status == 64)
        #expect(piped.stdout.isEmpty)
        #expect(piped.stderr.hasPrefix("error: a psk1 share is a secret, so its QR code is drawn only on a terminal"))
        #expect(!piped.stderr.contains(secret))
        let redirected = try shell(#""$PUSHSEAL" keys export --qr --keys "$K" > "$K/qr.txt""#, environment: ["K": keyring.keys])
        #expect(redirected.status == 64)
        #expect(try String(contentsOfFile: keyring.keys + "/qr.txt", encoding: .utf8).isEmpty)
    }

    @Test func thePNGOfASecretShareIsPrivateAndReadsBack() throws {
        let keyring = try KeyringFixture()
        let share = try keyring.export()
        let image = keyring.folder.file("share.png")
        let run = try keyring.keysCommand(["export", "--qr-png", image])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty, "the image goes to the file named, nothing to stdout")
        #expect(try Self.decode(["png", image]) == share)
        let mode = try FileManager.default.attributesOfItem(atPath: image)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: image)).prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    @Test func aPublicShareMayGoAnywhere() throws {
        let device = TemporaryFolder()
        let keys = device.file("Keys")
        #expect(try pushseal(["keys", "init", "--recipient", "--keys", keys]).status == 0)
        let share = try pushseal(["keys", "export", "--public", "--keys", keys]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(share.hasPrefix("ppk1."))
        let drawn = try pushseal(["keys", "export", "--public", "--qr", "--keys", keys])
        #expect(drawn.status == 0, "a ppk1 QR code may go into a pipe: \(drawn.stderr)")
        // Into a pipe or a file the blocks come without colour codes, as ls and git do.
        #expect(drawn.stdout.contains("\u{2580}") && !drawn.stdout.contains("\u{1B}"), "half blocks, no escapes")
        #expect(try Self.decode(["text"], stdin: drawn.stdout) == share)
        let full = try shell(#""$PUSHSEAL" keys export --public --qr --keys "$K" > /dev/full"#, environment: ["K": keys])
        #expect(full.status == 74)
        #expect(full.stderr.contains("error: cannot write to stdout: No space left on device"))
        let image = device.file("public.png")
        #expect(try pushseal(["keys", "export", "--public", "--qr-png", image, "--keys", keys]).status == 0)
        #expect(try Self.decode(["png", image]) == share)
    }

    @Test func mistakesAreOneLineErrors() throws {
        let keyring = try KeyringFixture()
        let both = parsed(["keys", "export", "--qr", "--qr-png", keyring.folder.file("x.png"), "--keys", keyring.keys])
        #expect(both.status == 64)
        #expect(both.stderr.hasPrefix("error: give --qr (the terminal) or --qr-png FILE (an image), not both\n"))
        let unwritable = try keyring.keysCommand(["export", "--qr-png", "/nonexistent/x.png"])
        #expect(unwritable.status != 0 && unwritable.stderr.hasPrefix("error: cannot write /nonexistent/x.png"), "\(unwritable.stderr)")
        let missing = try pushseal(
            ["keys", "export", "--qr-png", keyring.folder.file("y.png"), "--keys", keyring.keys],
            environment: ["PUSHSEAL_QR": "/nonexistent/pushseal-qr"])
        #expect(missing.status == 69)
        #expect(
            missing.stderr == "error: pushseal-qr is not at /nonexistent/pushseal-qr, where PUSHSEAL_QR points; set PUSHSEAL_QR to the program's path, or unset it to use the one beside pushseal\n")
        // Copied alone, without its companion: where it looked, and the variable that points elsewhere.
        let alone = keyring.folder.file("pushseal")
        try FileManager.default.copyItem(atPath: pushsealBinary, toPath: alone)
        let lonely = try runProcess(alone, ["keys", "export", "--qr-png", keyring.folder.file("z.png"), "--keys", keyring.keys])
        #expect(lonely.status == 69)
        #expect(
            lonely.stderr
                == "error: pushseal-qr is not beside pushseal (looked for \(keyring.folder.file("pushseal-qr"))); install it there (Scripts/install.sh does), or set PUSHSEAL_QR to its path\n")
        #expect(!FileManager.default.fileExists(atPath: keyring.folder.file("y.png")))
    }
}

/// `receive --notify` on a private session bus (dbus-run-session): a freedesktop
/// notification service (Reference/notification_service.py) answers, and dbus-monitor
/// captures the Notify calls notify-send makes.
@Suite("desktop notifications")
struct DesktopNotificationTests {
    static let service = Bundle.module.url(forResource: "notification_service", withExtension: "py", subdirectory: "Reference")!.path

    /// Runs `receive --notify` with `arguments` on a bus of its own, with a notification
    /// service and dbus-monitor on it; the run, the calls the service got, and what the monitor saw.
    static func onPrivateBus(_ keyring: KeyringFixture, _ arguments: String, expecting calls: Int) throws -> (run: Run, calls: [[String: Any]], monitor: String) {
        let folder = keyring.folder
        folder.write(
            "session.sh",
            #"""
            cd "$F"
            /usr/bin/python3 "$SERVICE" service.jsonl & service=$!
            for _ in $(seq 200); do
              dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner \
                string:org.freedesktop.Notifications 2>/dev/null | grep -q true && break
              sleep 0.05
            done
            dbus-monitor --session "type=method_call,interface=org.freedesktop.Notifications,member=Notify" > monitor.txt 2>/dev/null & monitor=$!
            # dbus-monitor's first lines say it is watching.
            for _ in $(seq 200); do [ -s monitor.txt ] && break; sleep 0.05; done
            eval "\"\$PUSHSEAL\" receive --notify --keys \"\$K\" $ARGUMENTS" > records.txt
            status=$?
            for _ in $(seq 200); do [ "$(grep -c 'member=Notify' monitor.txt)" -ge "$CALLS" ] && break; sleep 0.05; done
            kill $monitor $service
            exit $status
            """#)
        // The test runner's threads block signals, and children inherit that: the bus, the
        // service and the monitor would then outlive their SIGTERMs. Python clears the mask first.
        let run = try shell(
            #"/usr/bin/python3 -c "$UNBLOCK" dbus-run-session -- bash "$F/session.sh""#,
            environment: [
                "F": folder.path, "K": keyring.keys, "SERVICE": service, "ARGUMENTS": arguments, "CALLS": String(calls),
                "UNBLOCK": "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])"
            ])
        let calls = folder.read("service.jsonl").split(separator: "\n").map { jsonObject(String($0)) }
        return (Run(status: run.status, stdout: folder.read("records.txt"), stderr: run.stderr), calls, folder.read("monitor.txt"))
    }

    @Test func eachDeliveryIsShownWithWhatThePhoneWouldShow() throws {
        let keyring = try KeyringFixture()
        let folder = keyring.folder
        folder.write("sealed.json", try keyring.encrypt(["-t", "Deploy finished", "--subtitle", "api", "-b", "api-7 <is> live", "-l", "passive"]).stdout)
        folder.write("tampered.json", try keyring.encrypt(["-t", "Secret", "-b", "never shown"]).stdout.replacingOccurrences(of: "\"enc\":\"ps1.", with: "\"enc\":\"ps1.0badbeef"))
        folder.write("plain.json", #"{"aps":{"alert":{"title":"Plain","body":"not sealed"}}}"#)
        let (run, calls, monitor) = try Self.onPrivateBus(keyring, "--json sealed.json tampered.json plain.json", expecting: 3)
        #expect(run.status == 0, "\(run.stderr)")
        let records = run.stdout.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(records.count == 3, "records as ever")
        #expect(calls.count == 3, "one notification per delivery: \(calls)")
        let byTitle = Dictionary(uniqueKeysWithValues: calls.map { ($0["summary"] as? String ?? "", $0) })
        let decrypted = try #require(byTitle["Deploy finished"])
        #expect(decrypted["body"] as? String == "api\napi-7 &lt;is&gt; live", "subtitle and body; markup escaped")
        #expect(decrypted["app_name"] as? String == "pushseal")
        let hints = decrypted["hints"] as? [String: Any]
        #expect(hints?["x-pushseal-status"] as? String == "decrypted")
        #expect(hints?["urgency"] as? Int == 0, "passive is low urgency")
        let placeholder = try #require(byTitle["Encrypted notification"], "the placeholder, as the phone shows it: \(calls)")
        #expect((placeholder["hints"] as? [String: Any])?["x-pushseal-status"] as? String == "key-missing")
        #expect(byTitle["Plain"]?["body"] as? String == "not sealed")
        #expect(!calls.contains { ($0["body"] as? String)?.contains("never shown") == true })
        // The calls on the bus itself, as dbus-monitor saw them.
        #expect(monitor.components(separatedBy: "member=Notify").count - 1 == 3)
        #expect(monitor.contains(#"string "Deploy finished""#) && monitor.contains(#"string "Encrypted notification""#))
    }

    @Test func withoutANotificationServiceEveryRecordStillComesAndOneWarningSaysWhy() throws {
        let keyring = try KeyringFixture()
        keyring.folder.write("a.json", try keyring.encrypt(["-t", "A"]).stdout)
        keyring.folder.write("b.json", try keyring.encrypt(["-t", "B"]).stdout)
        let run = try shell(
            #"cd "$F" && "$PUSHSEAL" receive --notify --json --keys "$K" a.json b.json"#,
            environment: ["F": keyring.folder.path, "K": keyring.keys, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        #expect(run.status == 0)
        #expect(run.stdout.split(separator: "\n").count == 2)
        let warnings = run.stderr.split(separator: "\n")
        #expect(warnings.count == 1 && warnings[0].hasPrefix("warning: notify-send failed"), "\(run.stderr)")
    }

    @Test func withoutNotifySendItIsASetupError() throws {
        let keyring = try KeyringFixture()
        let run = try runProcess(pushsealBinary, ["receive", "--notify", "--keys", keyring.keys, "-"], environment: ["PATH": "/nonexistent"])
        #expect(run.status == 69)
        #expect(run.stderr == "error: --notify shows deliveries with notify-send, which is not on PATH (Debian: apt install libnotify-bin)\n")
    }
}

/// `Scripts/install.sh` into a temporary prefix, and its systemd units checked by systemd.
@Suite("install and services")
struct InstallTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func install(_ arguments: [String]) throws -> Run {
        // The binaries this test run built: install.sh would otherwise build the release ones.
        try runProcess(
            "/bin/bash", [repository + "/Scripts/install.sh"] + arguments,
            environment: ["PUSHSEAL_BIN_DIR": URL(fileURLWithPath: pushsealBinary).deletingLastPathComponent().path])
    }

    @Test func installsTheBinaryManualCompletionsAndUnitsIntoAPrefix() throws {
        let folder = TemporaryFolder()
        let prefix = folder.file("prefix")
        let run = try Self.install([prefix])
        #expect(run.status == 0, "\(run.stderr)")
        for (file, mode) in [
            ("bin/pushseal", 0o755), ("bin/pushseal-qr", 0o755),
            ("share/man/man1/pushseal.1", 0o644), ("share/bash-completion/completions/pushseal", 0o644),
            ("share/zsh/site-functions/_pushseal", 0o644), ("share/fish/vendor_completions.d/pushseal.fish", 0o644),
            ("lib/systemd/system/pushseal-watch.service", 0o644), ("lib/systemd/system/pushseal-listen.service", 0o644)
        ] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: prefix + "/" + file)
            #expect(attributes?[.posixPermissions] as? Int == mode, "\(file)")
        }
        #expect(try runProcess(prefix + "/bin/pushseal", ["--version"]).stdout.hasPrefix("pushseal "))
        // What was installed is what the installed binary writes.
        #expect(try String(contentsOfFile: prefix + "/share/man/man1/pushseal.1", encoding: .utf8) == (try pushseal(["manual"]).stdout))
        let bash = try runProcess(
            "/bin/bash",
            [
                "--norc", "-c", "source \"$1\" && complete -p pushseal", "bash",
                prefix + "/share/bash-completion/completions/pushseal"
            ])
        #expect(bash.stdout.contains("-F _pushseal pushseal"))
        let man = try runProcess("/usr/bin/man", ["--warnings", "pushseal"], environment: ["MANPATH": prefix + "/share/man", "MANPAGER": "cat", "MANWIDTH": "80"])
        #expect(man.status == 0 && man.stderr.isEmpty && man.stdout.contains("pushseal run"), "man pushseal finds the page: \(man.stderr)")
        // A second install replaces the first.
        #expect(try Self.install([prefix]).status == 0)
    }

    @Test func theUnitsVerifyAndAreHardened() throws {
        let folder = TemporaryFolder()
        let prefix = folder.file("prefix")
        #expect(try Self.install([prefix]).status == 0)
        let units = ["watch", "listen"].map { prefix + "/lib/systemd/system/pushseal-\($0).service" }
        for unit in units {
            let text = try String(contentsOfFile: unit, encoding: .utf8)
            #expect(text.contains("ExecStart=\(prefix)/bin/pushseal receive --"), "the unit runs the installed binary")
            let memory = unit.hasSuffix("listen.service") ? "MemoryMax=256M" : "MemoryMax=24M"
            for line in ["DynamicUser=yes", "ProtectSystem=strict", "NoNewPrivileges=yes", "StateDirectory=pushseal", memory, "LimitNOFILE=65536"] {
                #expect(text.contains("\n" + line + "\n"), "\(unit): \(line)")
            }
        }
        // systemd's own check: syntax, the binary, the man page Documentation= names.
        let verify = try runProcess("/usr/bin/systemd-analyze", ["verify"] + units, environment: ["MANPATH": prefix + "/share/man"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stderr.isEmpty && verify.stdout.isEmpty, "\(verify.stdout)\(verify.stderr)")
        for unit in units {
            let security = try runProcess("/usr/bin/systemd-analyze", ["security", "--offline=yes", "--no-pager", unit])
            let level = security.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") }
            let score = level.flatMap { line in line.split(separator: " ").compactMap { Double($0) }.first }
            #expect((score ?? 10) <= 2.0, "systemd rates the unit well exposed: \(level ?? "")")
        }
    }

    /// The units' own command lines, run as systemd would run them (with %S, the state
    /// directory's root, in a temporary folder; this machine has no systemd to start them):
    /// a typo in an option would pass `verify` but fail here.
    @Test func theUnitsCommandLinesWork() throws {
        let folder = TemporaryFolder()
        let prefix = folder.file("prefix")
        #expect(try Self.install([prefix]).status == 0)
        let state = folder.file("state")
        func commands(_ unit: String, _ key: String) throws -> [[String]] {
            let text = try String(contentsOfFile: prefix + "/lib/systemd/system/pushseal-\(unit).service", encoding: .utf8)
            return text.split(separator: "\n").filter { $0.hasPrefix(key + "=") }.map { line in
                line.dropFirst(key.count + 1).replacingOccurrences(of: "%S", with: state).split(separator: " ").map(String.init)
            }
        }
        // systemd makes the state directory (StateDirectory=pushseal, mode 0700); the operator
        // puts the keyring in it (see the README).
        try FileManager.default.createDirectory(atPath: state + "/pushseal", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(try pushseal(["keys", "init", "--keys", state + "/pushseal/Keys"]).status == 0)
        for command in try commands("watch", "ExecStartPre") {
            #expect(try runProcess(command[0], Array(command.dropFirst())).status == 0, "\(command)")
        }
        let watch = try #require(try commands("watch", "ExecStart").first)
        let watcher = try RunningProcess(Array(watch.dropFirst()), executable: watch[0])
        let payload = try pushseal(["encrypt", "--keys", state + "/pushseal/Keys", "-t", "From the spool"]).stdout
        try payload.write(toFile: state + "/pushseal/drop.tmp", atomically: true, encoding: .utf8)
        #expect(rename(state + "/pushseal/drop.tmp", state + "/pushseal/spool/one.json") == 0)
        #expect(eventually { watcher.stdoutSoFar.contains("\"title\":\"From the spool\"") }, "\(watcher.stderrSoFar)")
        watcher.signal(SIGTERM)
        #expect(watcher.wait().status == 0)

        // The listener's line, on a free port instead of 8443.
        let listen = try #require(try commands("listen", "ExecStart").first).map { $0 == "127.0.0.1:8443" ? "127.0.0.1:0" : $0 }
        let listener = try RunningProcess(Array(listen.dropFirst()), executable: listen[0])
        #expect(eventually { listener.stderrSoFar.contains("listening on https://127.0.0.1:") }, "\(listener.stderrSoFar)")
        listener.signal(SIGTERM)
        #expect(listener.wait().status == 0)
        #expect(FileManager.default.fileExists(atPath: state + "/pushseal/Keys/tls-cert.pem"), "its certificate is kept in the state directory")
    }

    @Test func moreThanOnePrefixIsAUsageError() throws {
        let run = try Self.install(["/tmp/a", "/tmp/b"])
        #expect(run.status == 64)
        #expect(run.stderr == "usage: Scripts/install.sh [PREFIX]\n")
    }
}
