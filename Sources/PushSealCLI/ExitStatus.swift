import PushSeal
import PushSealReceiver
import PushSealSend

#if canImport(Glibc)
import Glibc
#endif

/// The process exit codes, from BSD's sysexits.h so scripts can tell failures apart.
enum ExitStatus: Int32, CaseIterable {
    case ok = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    /// A service could not be had: the listening address is taken, say.
    case unavailable = 69
    case cannotCreate = 73
    case ioError = 74
    /// Try again later: another process held the keyring lock too long.
    case temporaryFailure = 75
    case noPermission = 77
    case configuration = 78
    /// Stopped by SIGINT (128 + 2), after finishing what was under way.
    case interrupted = 130
    /// The reader of stdout went away (128 + SIGPIPE, as `cat` ends): no message.
    case readerClosed = 141
    /// Stopped by SIGTERM (128 + 15), after finishing what was under way.
    case terminated = 143
}

extension ExitStatus {
    /// A few words for the root help's list.
    var label: String {
        switch self {
        case .ok: "ok"
        case .usage: "usage"
        case .dataError: "bad input or failed authentication"
        case .noInput: "missing input or key"
        case .unavailable: "refused for good or address taken"
        case .cannotCreate: "cannot create"
        case .ioError: "I/O"
        case .temporaryFailure: "try again later"
        case .noPermission: "permission"
        case .configuration: "configuration"
        case .interrupted: "SIGINT"
        case .readerClosed: "the reader went away"
        case .terminated: "SIGTERM"
        }
    }
}

/// A failure found by the CLI itself (reading an input file, say), with its exit code.
struct CLIFailure: Error, CustomStringConvertible {
    let status: ExitStatus
    let description: String
    /// The input itself is wrong (larger than any input can be), not the system or the
    /// command: a receiver records it as it records a malformed payload.
    var inputIsWrong = false

    init(_ status: ExitStatus, _ description: String, inputIsWrong: Bool = false) {
        self.status = status
        self.description = description
        self.inputIsWrong = inputIsWrong
    }
}

/// The exit code for an error a command did not turn into its own: the libraries' errors
/// by their codes, and a command's `CLIFailure` by the status it carries. (A signal's
/// status, 128 + N, is chosen where the signal is taken.)
func exitStatus(for error: any Error) -> ExitStatus {
    switch error {
    case is UsageError:
        return .usage
    case let failure as CLIFailure:
        return failure.status
    case let error as KeyringError:
        switch error.code {
        case .keyringMissing, .unknownKey, .keyDisabled, .keyDestroyed, .keyExpired, .noPrimary, .noSenderKey: return .noInput
        case .keyringExists, .cannotCreate: return .cannotCreate
        case .insecurePermissions: return .noPermission
        case .corrupt: return .configuration
        case .io: return .ioError
        case .lockTimeout: return .temporaryFailure
        case .notAllowed, .notARecipient, .notASender, .senderNotAllowed, .deviceKey, .invalidShare, .conflict: return .dataError
        }
    case is EnvelopeError, is PayloadError:
        return .dataError
    case let error as SendError:
        switch error.code {
        // Nothing reached it: a later try may.
        case .unreachable: return .temporaryFailure
        // The token could not be kept on disk.
        case .token where error.underlying is FileIOFailure: return .ioError
        // The endpoint, the proxy, the trust file or the clock as configured cannot work.
        case .untrusted, .refused, .setup, .token: return .configuration
        }
    case is CompanionProgram.Missing:
        return .unavailable
    default:
        return .ioError
    }
}

/// The error line for a failure: the library's fact, then (for the failures a command can
/// fix) what to run. Only the CLI knows its commands and options, so advice lives here.
func message(for error: any Error) -> String {
    var advice: String?
    var separator = "; "
    switch error {
    case let error as KeyringError:
        switch error.code {
        case .keyringMissing: advice = "create one with 'pushseal keys init', or name another folder with --keys (PUSHSEAL_KEYS)"
        case .keyringExists: advice = "'pushseal keys rotate' makes a new primary key in it"
        case .noPrimary: advice = "make one with 'pushseal keys add' and 'pushseal keys promote KID'"
        case .noSenderKey: advice = "make one with 'pushseal keys add --sender'"
        case .notASender: advice = "'pushseal keys list' shows this keyring's sender keys (kind sender)"
        case .unknownKey: advice = "'pushseal keys list' shows the keys; 'pushseal keys import' adds a shared one"
        case .keyDisabled: advice = "'pushseal keys enable KID' lets it decrypt again"
        case .invalidShare: advice = "'pushseal keys export' prints a share on the sending side"
        case .lockTimeout: advice = "try again later, or wait longer with --lock-timeout"
        case .notARecipient: advice = "--to takes a recipient key (imported with 'keys import ppk1…')"
        case .deviceKey:
            separator = ": "
            advice = "run 'pushseal keys rotate' there, then 'keys export --public' there and 'keys import' the line here"
        case .insecurePermissions:
            if let path = error.path {
                var info = stat()
                let isFolder = stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
                advice = "make it private: chmod \(isFolder ? "700" : "600") \(path)"
            }
        default: advice = nil
        }
    case let error as EnvelopeError where error.code == .passthrough:
        advice = "if the sender chose another field name, give it with --field"
    case let error as PayloadError where error.code == .tooLarge:
        advice = "shorten the alert, or lower --pad"
    default:
        advice = nil
    }
    return advice.map { "\(error)\(separator)\($0)" } ?? "\(error)"
}
