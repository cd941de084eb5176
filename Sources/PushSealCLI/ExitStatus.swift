import PushSeal

/// The process exit codes, from BSD's sysexits.h so scripts can tell failures apart.
enum ExitStatus: Int32 {
    case ok = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    case cannotCreate = 73
    case ioError = 74
    case deadline = 75
    case noPermission = 77
    case configuration = 78
}

/// A failure found by the CLI itself (reading an input file, say), with its exit code.
struct CLIFailure: Error, CustomStringConvertible {
    let status: ExitStatus
    let description: String

    init(_ status: ExitStatus, _ description: String) {
        self.status = status
        self.description = description
    }
}

/// The one place that turns domain errors into exit codes.
func exitStatus(for error: any Error) -> ExitStatus {
    switch error {
    case is UsageError:
        return .usage
    case let failure as CLIFailure:
        return failure.status
    case let error as KeyringError:
        switch error.code {
        case .keyringMissing, .unknownKey, .keyDisabled, .keyDestroyed, .keyExpired, .noPrimary: return .noInput
        case .keyringExists, .cannotCreate: return .cannotCreate
        case .insecurePermissions: return .noPermission
        case .corrupt: return .configuration
        case .io: return .ioError
        case .notAllowed, .invalidShare, .conflict: return .dataError
        }
    case is EnvelopeError, is PayloadError:
        return .dataError
    default:
        return .ioError
    }
}
