import PushSeal
import PushSealReceiver
import PushSealSend
import Testing

@testable import PushSealCLI

@Suite("command-line parsing")
struct ArgumentParsingTests {
    func parse(_ arguments: [String], environment: [String: String] = [:]) throws -> Command {
        try parseCommand(arguments, environment: environment)
    }

    @Test func encryptTakesShortLongAndEqualsForms() throws {
        guard case .encrypt(let request) = try parse(["encrypt", "-t", "T", "--body=B", "-g", "g1", "-l", "timeSensitive", "--badge", "2", "--data", "a=b", "--data", "n:=3", "--keys", "K"]) else {
            Issue.record("not an encrypt command")
            return
        }
        #expect(request.fields.title == "T")
        #expect(request.body == .text("B"))
        #expect(request.fields.threadID == "g1")
        #expect(request.fields.interruptionLevel == .timeSensitive)
        #expect(request.fields.badge == 2)
        #expect(request.data == [DataItem(key: "a", value: .string("b")), DataItem(key: "n", value: .number("3"))])
        #expect(request.keysFolder == "K")
        #expect(request.pad == 32 && request.field == "enc")
    }

    @Test func bodyWordsJoinAndDashMeansStdin() throws {
        guard case .encrypt(let words) = try parse(["encrypt", "-t", "T", "disk", "is", "full"]),
            case .encrypt(let stdin) = try parse(["encrypt", "-t", "T", "-"])
        else {
            Issue.record("not encrypt commands")
            return
        }
        #expect(words.body == .text("disk is full"))
        #expect(stdin.body == .standardInput)
    }

    @Test func environmentFillsInWhatFlagsLeaveOut() throws {
        let environment = ["PUSHSEAL_KEYS": "/env/keys", "PUSHSEAL_PAD": "64", "PUSHSEAL_FIELD": "x"]
        guard case .encrypt(let fromEnvironment) = try parse(["encrypt", "-b", "B"], environment: environment),
            case .encrypt(let fromFlags) = try parse(["encrypt", "-b", "B", "--keys", "K", "--pad", "16"], environment: environment)
        else {
            Issue.record("not encrypt commands")
            return
        }
        #expect(fromEnvironment.keysFolder == "/env/keys" && fromEnvironment.pad == 64 && fromEnvironment.field == "x")
        #expect(fromFlags.keysFolder == "K" && fromFlags.pad == 16)
    }

    @Test(arguments: [
        ["encrypt"],
        ["encrypt", "-t"],
        ["encrypt", "-t", "T", "--pad", "0"],
        ["encrypt", "-t", "T", "--badge", "-1"],
        ["encrypt", "-t", "T", "--level", "loud"],
        ["encrypt", "-t", "T", "--ttl", "soon"],
        ["encrypt", "-t", "T", "--bogus"],
        ["encrypt", "-t", "T", "-b", "B", "extra"],
        ["encrypt", "--batch", "-t", "T"],
        ["encrypt", "-t", "T", "--data", "novalue"],
        ["decrypt"],
        ["decrypt", "a", "b"],
        ["keys"], ["keys", "frobnicate"], ["keys", "promote"], ["keys", "rotate", "--grace", "1 day"],
        ["keys", "disable", "bad kid"], ["keys", "import"],
        ["launch"]
    ])
    func mistakesAreUsageErrors(_ arguments: [String]) {
        #expect(throws: UsageError.self) { try parse(arguments) }
    }

    @Test func helpIsAvailableAtEveryLevel() throws {
        #expect(try parse(["--help"]) == .help([]))
        #expect(try parse(["keys", "--help"]) == .help(["keys"]))
        #expect(try parse(["keys", "rotate", "--help"]) == .help(["keys", "rotate"]))
        #expect(try parse(["encrypt", "-h"]) == .help(["encrypt"]))
        #expect(try parse(["help", "keys", "import"]) == .help(["keys", "import"]))
        for spec in [Specs.root, Specs.keysGroup, Specs.encrypt, Specs.decrypt] + Specs.keys {
            let text = helpText(for: spec)
            #expect(text.hasPrefix("OVERVIEW: ") && text.contains("USAGE: pushseal"))
        }
    }

    @Test func importDistinguishesStdinFileAndTypedShare() throws {
        #expect(try parse(["keys", "import", "-"]) == .keys(folder: "Keys", lockTimeout: .seconds(30), action: .importShare(source: .standardInput)))
        #expect(try parse(["keys", "import", "share.txt"]) == .keys(folder: "Keys", lockTimeout: .seconds(30), action: .importShare(source: .file("share.txt"))))
        #expect(try parse(["keys", "import", "psk1.a.b"]) == .keys(folder: "Keys", lockTimeout: .seconds(30), action: .importShare(source: .argument("psk1.a.b"))))
    }

    @Test func graceDefaultsToThirtyDays() throws {
        #expect(try parse(["keys", "rotate"]) == .keys(folder: "Keys", lockTimeout: .seconds(30), action: .rotate(grace: .seconds(30 * 86_400))))
        #expect(try parse(["keys", "rotate", "--grace", "0s"]) == .keys(folder: "Keys", lockTimeout: .seconds(30), action: .rotate(grace: .zero)))
    }
}

/// Every default is stated once: a duration option's help says the default and range the
/// parser applies, written from the same constants, and the binary does what its help says.
@Suite("option defaults: one place each")
struct OptionDefaultTests {
    /// `(default: D...; LOW to HIGH)` in a help line: D, LOW and HIGH as durations.
    static func stated(_ help: String) -> (value: Duration, low: Duration, high: Duration)? {
        guard let open = help.range(of: "(default: ") else { return nil }
        let inside = help[open.upperBound...].prefix { $0 != ")" }
        let parts = inside.split(separator: ";")
        guard parts.count == 2, let value = DurationText.parse(String(parts[0].split(separator: ",")[0]), in: .zero...Duration.seconds(Int64.max / 2_000_000_000)) else { return nil }
        let bounds = parts[1].trimmingCharacters(in: .whitespaces).components(separatedBy: " to ")
        guard bounds.count == 2, let low = DurationText.parse(bounds[0], in: .zero...Duration.seconds(Int64.max / 2_000_000_000)),
            let high = DurationText.parse(bounds[1], in: .zero...Duration.seconds(Int64.max / 2_000_000_000))
        else { return nil }
        return (value, low, high)
    }

    @Test func everyDurationOptionStatesItsDefaultAndRangeAsTheParserHasThem() throws {
        let expected: [String: (Duration, ClosedRange<Duration>)] = [
            "grace": (Keyring.defaultGrace, DurationRange.grace),
            "lock-timeout": (KeyringStore.defaultLockTimeout, DurationRange.lockTimeout),
            "idle-timeout": (ListenerLimits().idleTimeout, DurationRange.idleTimeout),
            "budget": (ExtensionRunner.Timing.standard.budget, DurationRange.budget),
            "expiry-grace": (ExtensionRunner.Timing.standard.expiryGrace, DurationRange.expiryGrace),
            "retry-for": (SendRetries.defaultRetryFor, DurationRange.retryFor),
            "timeout": (SendConnection.defaultTimeout, DurationRange.requestTimeout)
        ]
        var seen: Set<String> = []
        for spec in Specs.all {
            for option in spec.options where expected[option.long] != nil {
                let (value, range) = expected[option.long]!
                let stated = try #require(Self.stated(option.help), "\(option.long): \(option.help)")
                #expect(stated.value == value && stated.low == range.lowerBound && stated.high == range.upperBound, "\(option.long): \(option.help)")
                seen.insert(option.long)
            }
        }
        #expect(seen == Set(expected.keys))
    }

    @Test func theBinaryTakesTheRangeItsHelpStates() throws {
        // The top of --retry-for's stated range is taken, one millisecond more refused.
        let help = try pushseal(["send", "--help"]).stdout
        let line = try #require(help.split(separator: "\n").first { $0.contains("--retry-for <") })
        let stated = try #require(Self.stated(String(line)))
        let base = ["send", "--device", String(repeating: "ab", count: 32), "--topic", "t", "--auth-key", "/nonexistent.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "-b", "x"]
        let over = try pushseal(base + ["--retry-for", "\(stated.high.components.seconds)s1ms"])
        #expect(over.status == 64 && over.stderr.contains("--retry-for must be a duration"), "\(over.stderr)")
        let within = try pushseal(base + ["--retry-for", "\(stated.high.components.seconds)s"])
        #expect(within.status != 64, "\(within.stderr)")
    }
}
