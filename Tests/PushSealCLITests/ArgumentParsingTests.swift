import PushSeal
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
