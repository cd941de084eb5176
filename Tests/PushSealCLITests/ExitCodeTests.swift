import Foundation
import PushSeal
import PushSealSend
import Testing

@testable import PushSealCLI

/// pushseal's, not Swift Testing's of the same name.
typealias ExitStatus = PushSealCLI.ExitStatus

/// One table of exit codes (`ExitCodes`): every exit site of a command's files uses a code
/// its row gives, and help, the manual and the README say what the table says.
@Suite("exit codes: one table, and every exit site in it")
struct ExitCodeTests {
    static let sources = VectorTests.repository.appendingPathComponent("Sources/PushSealCLI")

    /// Each file with exit sites, and the commands whose rows its codes must be in.
    static let files: [(file: String, commands: [CommandSpec.Name])] = [
        ("DecryptCommand.swift", [["decrypt"]]), ("DoctorCommand.swift", [["doctor"]]),
        ("DoctorSendCommand.swift", [["doctor", "send"]]), ("EncryptCommand.swift", [["encrypt"]]),
        ("KeysCommand.swift", [["keys", "export"]]), ("ListenCommand.swift", [["receive"]]),
        ("ReceiveCommand.swift", [["receive"]]), ("SendCommand.swift", [["send"]]), ("SendRequest.swift", [["send"]]),
        ("ProviderTokenSetup.swift", [["send"], ["token"], ["doctor", "send"]]), ("TokenCommand.swift", [["token"]]),
        ("RunCommand.swift", [["run"]]), ("main.swift", allNames),
        // The input files' reader, for every command that reads a FILE or a .p8.
        ("Console.swift", [["decrypt"], ["doctor"], ["doctor", "send"], ["encrypt"], ["keys", "import"], ["receive"], ["send"], ["token"]])
    ]
    static let allNames: [CommandSpec.Name] = Specs.all.map(\.name).filter { !$0.isEmpty }

    /// The ExitStatus cases a Swift file names (`.ok` aside, a name other enums share), and
    /// 130 and 143 where it exits with 128 + a signal.
    static func codes(in text: String) -> Set<ExitStatus> {
        var found: Set<ExitStatus> = []
        let names: [String: ExitStatus] = [
            "usage": .usage, "dataError": .dataError, "noInput": .noInput, "unavailable": .unavailable,
            "cannotCreate": .cannotCreate, "ioError": .ioError, "temporaryFailure": .temporaryFailure,
            "noPermission": .noPermission, "configuration": .configuration, "interrupted": .interrupted,
            "readerClosed": .readerClosed, "terminated": .terminated
        ]
        for (name, status) in names where text.range(of: "\\.\(name)\\b", options: .regularExpression) != nil {
            found.insert(status)
        }
        if text.contains("128 + signal") { found.formUnion([.interrupted, .terminated]) }
        return found
    }

    @Test func everyExitSiteUsesACodeItsCommandsRowGives() throws {
        for (file, commands) in Self.files {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            for status in Self.codes(in: text) {
                for command in commands {
                    let row = ExitCodes.uses(for: command).map(\.status)
                    #expect(row.contains(status), "\(file) exits \(status.rawValue), which \(command.joined(separator: " "))'s row lacks")
                }
            }
        }
        // The libraries' errors, mapped in one place: every code the mapping gives is in the
        // rows of the commands that read the keyring (SendError's in send's).
        let keyringErrors: [ExitStatus] = [.noInput, .cannotCreate, .noPermission, .configuration, .ioError, .temporaryFailure, .dataError]
        for name in [["keys", "rotate"], ["encrypt"], ["decrypt"], ["doctor"], ["receive"], ["send"]] {
            for status in keyringErrors where name.first == "keys" || status != .cannotCreate {
                #expect(ExitCodes.uses(for: name).contains { $0.status == status }, "\(name) can exit \(status.rawValue)")
            }
        }
    }

    /// What fails on the old table: 78 meant "the keyring is damaged" for every command, while
    /// send gave it for an untrusted certificate.
    @Test func sendsSeventyEightSaysWhatSendMeansByIt() {
        let meaning = ExitCodes.sorted(ExitCodes.uses(for: ["send"])).first { $0.status == .configuration }?.meaning ?? ""
        #expect(meaning.contains("certificate is not accepted") && meaning.contains("HTTP/2") && meaning.contains("proxy"))
        let keys = ExitCodes.sorted(ExitCodes.uses(for: ["keys", "list"])).first { $0.status == .configuration }?.meaning ?? ""
        #expect(keys == "the keyring file is damaged")
    }

    @Test func helpTheManualAndTheReadmeSayWhatTheTableSays() throws {
        for spec in Specs.all where !spec.name.isEmpty && spec.name != ["keys"] && spec.name != ["webapp"] {
            let help = helpText(for: spec)
            #expect(help.contains("\nEXIT CODES:\n"), "\(spec.displayName)")
            for use in ExitCodes.sorted(ExitCodes.uses(for: spec.name)) {
                #expect(help.contains("  \(use.status.rawValue)"), "\(spec.displayName) \(use.status.rawValue)")
            }
        }
        let run = try pushseal(["manual"])
        for status in ExitStatus.allCases {
            #expect(run.stdout.contains(".TP\n\\fB\(status.rawValue)\\fR\n"), "the manual's EXIT STATUS lacks \(status.rawValue)")
        }
        let sending = try String(contentsOf: VectorTests.repository.appendingPathComponent("docs/sending.md"), encoding: .utf8)
        #expect(sending.contains(ExitCodes.markdown + "\n"), "docs/sending.md's exit-code table is not the table; it is:\n\(ExitCodes.markdown)")
    }
}
