/// The shells `pushseal completions` writes for.
enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish
}

/// Completion scripts written from `Specs`, the tables the parser itself reads, so an option
/// can never be completed that the parser refuses, or accepted and never completed.
///
/// All three scripts work the same way: the words typed so far that name a command
/// (`pushseal keys rotate`) pick the command; after one of its options that takes a value,
/// the value is completed (its choices, files or folders); otherwise a word starting with
/// `-` completes to the command's options, and any other word to its subcommands or its
/// arguments.
enum CompletionScript {
    static func text(for shell: Shell) -> String {
        switch shell {
        case .bash: bash()
        case .zsh: zsh()
        case .fish: fish()
        }
    }

    /// A command's place on the command line: "pushseal", "pushseal keys rotate".
    private static func key(_ spec: CommandSpec) -> String { spec.displayName }

    /// The commands that can follow another on the command line, with the words that name them.
    private static var commandKeys: [String] { Specs.all.filter { !$0.name.isEmpty }.map(key) }

    /// What may follow a command that is not an option: its subcommands (and `help` at the top).
    private static func words(after spec: CommandSpec) -> [(word: String, help: String)] {
        var words = Specs.subcommands(of: spec.name).map { ($0.name.last ?? "", $0.overview) }
        if spec.name.isEmpty { words.append(("help", "Show help for a command.")) }
        return words
    }

    /// Every spelling of every option, `--help` included, with its help line.
    private static func optionWords(_ spec: CommandSpec) -> [(word: String, help: String)] {
        var words: [(String, String)] = []
        for option in spec.options {
            words.append(("--\(option.long)", option.help))
            if let short = option.short { words.append(("-\(short)", option.help)) }
        }
        words.append(("--help", "Show help information."))
        if spec.name.isEmpty { words.append(("--version", "Print the version.")) }
        return words
    }

    /// One line per command, in `Specs.all`'s order.
    private static func eachCommand(_ line: (CommandSpec) -> String) -> String {
        Specs.all.map(line).joined()
    }

    /// One line per option that takes a value, with the case patterns that match the
    /// command and the option just before the word being completed ("pushseal encrypt -l").
    private static func eachValueOption(_ line: (_ patterns: String, OptionSpec) -> String) -> String {
        Specs.all.flatMap { spec in
            spec.options.filter(\.takesValue).map { option in
                let spellings = ["--\(option.long)"] + (option.short.map { ["-\($0)"] } ?? [])
                return line(spellings.map { "\"\(key(spec)) \($0)\"" }.joined(separator: "|"), option)
            }
        }.joined()
    }

    // MARK: bash

    private static func bash() -> String {
        var out = """
            # bash completion for pushseal, written by 'pushseal completions bash' from its option tables.
            # The key ids of the keyring the line names (--keys, else $PUSHSEAL_KEYS, else ./Keys).
            _pushseal_kids() {
                local dir=${PUSHSEAL_KEYS:-Keys} i
                for ((i = 1; i < COMP_CWORD; i++)); do
                    case ${COMP_WORDS[i]} in
                        --keys) [[ ${COMP_WORDS[i+1]} == = ]] && dir=${COMP_WORDS[i+2]} || dir=${COMP_WORDS[i+1]} ;;
                        --keys=*) dir=${COMP_WORDS[i]#--keys=} ;;
                    esac
                done
                "${COMP_WORDS[0]}" keys list --keys "$dir" 2>/dev/null | awk 'NR > 1 { print $1 }'
            }
            _pushseal() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} at=pushseal i dashes=0
                # --name=value: bash splits at '=', so the option is the word before it.
                if [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi
                if [[ $cur == = ]]; then cur=; fi
                for ((i = 1; i < COMP_CWORD; i++)); do
                    if [[ ${COMP_WORDS[i]} == -- ]]; then dashes=$i; break; fi
                    case "$at ${COMP_WORDS[i]}" in
                        \(commandKeys.map { "\"\($0)\"" }.joined(separator: "|"))) at="$at ${COMP_WORDS[i]}" ;;
                    esac
                done
                COMPREPLY=()
                if ((dashes > 0)); then
                    # After '--' (pushseal run -- CMD ...): a command first, then files.
                    if ((COMP_CWORD == dashes + 1)); then COMPREPLY=($(compgen -c -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
                    return
                fi
                case "$at $prev" in

            """
        out += eachValueOption { patterns, option in "        \(patterns)) \(bashReply(option.valueCompletion)) return ;;\n" }
        out += """
                esac
                if [[ $cur == -* ]]; then
                    case "$at" in

            """
        out += eachCommand { spec in
            "            \"\(key(spec))\") COMPREPLY=($(compgen -W '\(optionWords(spec).map(\.word).joined(separator: " "))' -- \"$cur\")) ;;\n"
        }
        out += """
                    esac
                    return
                fi
                case "$at" in

            """
        out += eachCommand { spec in
            let subcommands = words(after: spec).map(\.word)
            return "        \"\(key(spec))\") \(bashReply(subcommands.isEmpty ? spec.arguments : .words(subcommands))) ;;\n"
        }
        out += """
                esac
            }
            complete -o filenames -o bashdefault -F _pushseal pushseal

            """
        return out
    }

    private static func bashReply(_ completion: Completion) -> String {
        switch completion {
        case .nothing: ":"
        case .files: "COMPREPLY=($(compgen -f -- \"$cur\"));"
        case .directories: "COMPREPLY=($(compgen -d -- \"$cur\"));"
        case .commands: "COMPREPLY=($(compgen -c -- \"$cur\"));"
        case .words(let words): "COMPREPLY=($(compgen -W '\(words.joined(separator: " "))' -- \"$cur\"));"
        case .keyIDs: "COMPREPLY=($(compgen -W \"$(_pushseal_kids)\" -- \"$cur\"));"
        }
    }

    // MARK: zsh

    private static func zsh() -> String {
        var out = """
            #compdef pushseal
            # zsh completion for pushseal, written by 'pushseal completions zsh' from its option tables.
            # The key ids of the keyring the line names (--keys, else $PUSHSEAL_KEYS, else ./Keys).
            _pushseal_kids() {
              local dir=${PUSHSEAL_KEYS:-Keys} i
              for ((i = 2; i < CURRENT; i++)); do
                case ${words[i]} in
                  (--keys) dir=${words[i+1]} ;;
                  (--keys=*) dir=${words[i]#--keys=} ;;
                esac
              done
              ${words[1]} keys list --keys "$dir" 2>/dev/null | awk 'NR > 1 { print $1 }'
            }
            _pushseal() {
              local at=pushseal i dashes=0
              for ((i = 2; i < CURRENT; i++)); do
                if [[ ${words[i]} == -- ]]; then dashes=$i; break; fi
                case "$at ${words[i]}" in
                  (\(commandKeys.map { "\"\($0)\"" }.joined(separator: "|"))) at="$at ${words[i]}" ;;
                esac
              done
              local cur=${words[CURRENT]} prev=${words[CURRENT-1]}
              local -a items
              if ((dashes > 0)); then
                # After '--' (pushseal run -- CMD ...): a command first, then files.
                if ((CURRENT == dashes + 1)); then _command_names -e; else _files; fi
                return
              fi
              case "$at $prev" in

            """
        out += eachValueOption { patterns, option in
            "    (\(patterns)) \(zshReply(option.valueCompletion, what: option.valueName ?? "value")) return ;;\n"
        }
        out += """
              esac
              if [[ $cur == -* ]]; then
                case "$at" in

            """
        out += eachCommand { spec in
            "      (\"\(key(spec))\") items=(\(optionWords(spec).map { zshQuote("\($0.word):\($0.help)") }.joined(separator: " "))); _describe option items ;;\n"
        }
        out += """
                esac
                return
              fi
              case "$at" in

            """
        out += eachCommand { spec in
            let subcommands = words(after: spec)
            let reply =
                subcommands.isEmpty
                ? zshReply(spec.arguments, what: "argument")
                : "items=(\(subcommands.map { zshQuote("\($0.word):\($0.help)") }.joined(separator: " "))); _describe command items;"
            return "    (\"\(key(spec))\") \(reply) ;;\n"
        }
        out += """
              esac
            }
            # Loaded from $fpath by compinit, it completes at once; sourced, it registers itself.
            if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
              _pushseal "$@"
            else
              compdef _pushseal pushseal
            fi

            """
        return out
    }

    private static func zshReply(_ completion: Completion, what: String) -> String {
        switch completion {
        case .nothing: "_message \(zshQuote(what));"
        case .files: "_files;"
        case .directories: "_files -/;"
        case .commands: "_command_names -e;"
        case .words(let words): "items=(\(words.map(zshQuote).joined(separator: " "))); compadd -a items;"
        case .keyIDs: "items=(${(f)\"$(_pushseal_kids)\"}); compadd -a items;"
        }
    }

    /// Single quotes, which zsh and fish both read literally but for the quote itself.
    private static func zshQuote(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }

    // MARK: fish

    private static func fish() -> String {
        var out = """
            # fish completion for pushseal, written by 'pushseal completions fish' from its option tables.
            function __pushseal_at --description 'True when the words typed so far name pushseal command $argv[1]'
                set -l at pushseal
                for word in (commandline -opc)[2..-1]
                    test "$word" = -- && break
                    switch "$at $word"
                        case \(commandKeys.map(fishQuote).joined(separator: " "))
                            set at "$at $word"
                    end
                end
                test "$at" = "$argv[1]"
            end
            function __pushseal_kids --description 'The key ids of the keyring the line names'
                set -l words (commandline -opc)
                set -l dir Keys
                set -q PUSHSEAL_KEYS; and set dir $PUSHSEAL_KEYS
                for i in (seq 2 (count $words))
                    switch $words[$i]
                        case --keys
                            set -l next (math $i + 1)
                            test $next -le (count $words); and set dir $words[$next]
                        case '--keys=*'
                            set dir (string replace -- --keys= '' $words[$i])
                    end
                end
                command -q $words[1]; or return
                command $words[1] keys list --keys $dir 2>/dev/null | awk 'NR > 1 { print $1 }'
            end
            complete -c pushseal -f

            """
        for spec in Specs.all {
            let condition = "-n " + fishQuote("__pushseal_at " + fishQuote(key(spec)))
            for (word, help) in words(after: spec) {
                out += "complete -c pushseal \(condition) -a \(word) -d \(fishQuote(help))\n"
            }
            for option in spec.options {
                var line = "complete -c pushseal \(condition) -l \(option.long)"
                if let short = option.short { line += " -s \(short)" }
                if option.takesValue {
                    switch option.valueCompletion {
                    case .nothing: line += " -x"
                    case .files: line += " -r -F"
                    case .directories: line += " -x -a '(__fish_complete_directories (commandline -ct))'"
                    case .commands: line += " -x -a '(__fish_complete_command)'"
                    case .words(let words): line += " -x -a " + fishQuote(words.joined(separator: " "))
                    case .keyIDs: line += " -x -a '(__pushseal_kids)'"
                    }
                }
                out += line + " -d \(fishQuote(option.help))\n"
            }
            out += "complete -c pushseal \(condition) -l help -s h -d 'Show help information.'\n"
            if words(after: spec).isEmpty {
                switch spec.arguments {
                case .nothing: break
                case .files: out += "complete -c pushseal \(condition) -F\n"
                case .directories: out += "complete -c pushseal \(condition) -a '(__fish_complete_directories (commandline -ct))'\n"
                case .commands: out += "complete -c pushseal \(condition) -a '(__fish_complete_command)'\n"
                case .words(let words): out += "complete -c pushseal \(condition) -a \(fishQuote(words.joined(separator: " ")))\n"
                case .keyIDs: out += "complete -c pushseal \(condition) -a '(__pushseal_kids)'\n"
                }
            }
        }
        return out
    }

    /// fish's single quotes: only `\` and `'` are special inside them.
    private static func fishQuote(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }
}

extension Specs {
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
}

func parseCompletions(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    let spec = Specs.completions
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    let names = Shell.allCases.map(\.rawValue).joined(separator: ", ")
    guard parsed.positionals.count == 1, let shell = Shell(rawValue: parsed.positionals[0]) else {
        throw UsageError(
            parsed.positionals.isEmpty ? "which shell? (\(names))" : "no completions for '\(parsed.positionals.joined(separator: " ").prefix(40))' (shells: \(names))",
            command: spec.name)
    }
    return .completions(shell)
}
