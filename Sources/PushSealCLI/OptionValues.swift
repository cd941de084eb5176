import PushSeal
import PushSealReceiver
import SealCrypto
import SeenMessages

#if canImport(Glibc)
import Glibc
#endif

/// Every duration option's accepted range, in one place: the help and the checks use it.
enum DurationRange {
    static let grace = Duration.zero...Duration.seconds(3_650 * 86_400)
    static let budget = Duration.milliseconds(1)...Duration.seconds(86_400)
    static let expiryGrace = Duration.milliseconds(1)...Duration.seconds(3_600)
    static let timeToLive = AlertRequest.timeToLiveRange
    static let lockTimeout = Duration.zero...Duration.seconds(3_600)
    static let idleTimeout = Duration.seconds(1)...Duration.seconds(86_400)
    static let requestTimeout = Duration.milliseconds(100)...Duration.seconds(600)
    static let retryFor = Duration.zero...Duration.seconds(86_400)

    static func text(_ range: ClosedRange<Duration>) -> String {
        "from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound))"
    }

    /// `default: D; LOW to HIGH`, for an option's help: the default and the range the parser
    /// applies, written from the same constants, so help and behaviour cannot disagree.
    static func help(default value: Duration, _ range: ClosedRange<Duration>, note: String? = nil) -> String {
        "default: \(DurationText.format(value))\(note.map { ", \($0)" } ?? ""); \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound))"
    }
}

/// A duration option's value, or nil when absent; outside its range is a usage error that
/// names the flag or variable the user gave.
func duration(
    _ parsed: ParsedArguments, _ option: String, in range: ClosedRange<Duration>, example: String,
    command: CommandSpec.Name
) throws(UsageError) -> Duration? {
    guard let text = parsed.value(option) else { return nil }
    guard let duration = DurationText.parse(text, in: range) else {
        throw UsageError(
            "\(parsed.origin(option)) must be a duration \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)), such as \(example) (got '\(text.prefix(40))')",
            command: command)
    }
    return duration
}

/// A whole-number option in `range`, or nil when absent; anything else is a usage error.
func wholeNumber(_ parsed: ParsedArguments, _ option: String, in range: ClosedRange<Int>, command: CommandSpec.Name) throws(UsageError) -> Int? {
    guard let text = parsed.value(option) else { return nil }
    guard let value = Int(text), range.contains(value) else {
        throw UsageError("--\(option) is a whole number from \(range.lowerBound) to \(range.upperBound)", command: command)
    }
    return value
}

/// `--cacert FILE` must hold a certificate: said before connecting, blamed on the file.
func checkTrustFile(_ caFile: String?) throws {
    guard let caFile, TrustedCertificates.count(pem: try InputFiles.read(caFile, bound: .pem)) == 0 else { return }
    throw CLIFailure(.dataError, "\(caFile) holds no PEM certificate (-----BEGIN CERTIFICATE-----); give the server's certificate or its CA's")
}

func keysFolder(_ parsed: ParsedArguments) -> String {
    parsed.value("keys") ?? "Keys"
}

/// `--senders auto|required|any`.
func senderPolicy(_ parsed: ParsedArguments, command: CommandSpec.Name) throws(UsageError) -> SenderPolicy {
    guard let text = parsed.value("senders") else { return .automatic }
    guard let policy = SenderPolicy(rawValue: text) else {
        throw UsageError("\(parsed.origin("senders")) is auto, required or any", command: command)
    }
    return policy
}

/// `--seen FILE|none`: where opened messages are remembered; nil for none.
func seenStorePath(_ parsed: ParsedArguments, keysFolder: String) -> String? {
    guard let text = parsed.value("seen") else { return keysFolder + "/" + SeenMessages.fileName }
    return text == "none" ? nil : text
}

/// `--sender-key KID|none`: which sender key vouches for what is sealed to a recipient key.
func senderChoice(_ parsed: ParsedArguments) -> SenderChoice {
    guard let text = parsed.value("sender-key") else { return .primary }
    return text == "none" ? .none : .named(text)
}

/// `--jobs N`: how many cores to use; all of them unless told.
func jobs(_ parsed: ParsedArguments, command: CommandSpec.Name) throws(UsageError) -> Int {
    guard let text = parsed.value("jobs") else { return LineWorkerPool<Int>.availableCores }
    guard let count = Int(text), (1...1024).contains(count) else {
        throw UsageError("\(parsed.origin("jobs")) must be a whole number from 1 to 1024", command: command)
    }
    return count
}

/// `24MB`, `512KB`, `1GB` or plain bytes; units are powers of 1024, as `ps` reports.
func parseByteCount(_ text: String) -> Int? {
    let upper = text.uppercased()
    let units: [(String, Int)] = [("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1)]
    for (suffix, scale) in units where upper.hasSuffix(suffix) {
        guard let amount = Int(upper.dropLast(suffix.count)), amount <= Int.max / scale else { return nil }
        return amount * scale
    }
    return Int(upper)
}

/// An option that must be given (on the line or by its variable), or the usage error that
/// says what it is and which variable sets it.
func requiredValue(_ parsed: ParsedArguments, _ option: String, _ what: String, command: CommandSpec.Name) throws(UsageError) -> String {
    guard let value = parsed.value(option), !value.isEmpty else {
        throw UsageError("--\(option) is required: \(what) (or set PUSHSEAL_\(String(option.uppercased().map { $0 == "-" ? "_" : $0 })))", command: command)
    }
    return value
}

/// The values of a field that more than one command takes, checked in one place: a bad one
/// is a usage error that names the flag (or variable) it came from.
enum CheckedValues {
    /// The device tokens given to `option` (repeatable), lowercased.
    static func deviceTokens(_ parsed: ParsedArguments, _ option: String, command: CommandSpec.Name) throws(UsageError) -> [String] {
        let values = parsed.all(option).map { $0.lowercased() }
        for value in values where !APNsRules.isDeviceToken(value) {
            throw UsageError("--\(option) takes a device token in hex (64 digits for today's devices), not '\(value)'", command: command)
        }
        return values
    }

    /// `option`'s value as an Apple key id or team id, when given: `ABC123DEFG`, 10 capital
    /// letters and digits. Anything else is a typo APNs would answer only with
    /// InvalidProviderToken.
    static func appleID(_ parsed: ParsedArguments, _ option: String, command: CommandSpec.Name) throws(UsageError) -> String? {
        guard let value = parsed.value(option) else { return nil }
        guard value.utf8.count == 10, value.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }) else {
            throw UsageError("\(parsed.origin(option)) is 10 capital letters and digits, as Apple's developer account shows it (got '\(value.prefix(40))')", command: command)
        }
        return value
    }
}

/// The store of messages opened before, for `receive` (made when missing): a store that
/// cannot be opened is a setup error, said before anything is delivered.
func openSeenStore(_ path: String?) throws -> SeenMessages? {
    guard let path else { return nil }
    do {
        return try SeenMessages(path: path)
    } catch {
        throw CLIFailure(error.errno == EACCES || error.errno == EROFS ? .cannotCreate : .ioError, "\(error); give --seen FILE elsewhere, or --seen none to remember nothing")
    }
}

/// The same for `doctor` and `decrypt`, which ask it and change nothing: nil when there is none.
func existingSeenStore(_ path: String?) throws -> SeenMessages? {
    guard let path else { return nil }
    do {
        return try SeenMessages.existing(at: path)
    } catch {
        throw CLIFailure(.ioError, "\(error)")
    }
}

/// `--senders any` is said once: it opens what anyone holding a public share sealed.
func warnOfAnySender(_ policy: SenderPolicy, console: Console) {
    guard policy == .any else { return }
    console.warning("--senders any: messages sealed with no sender key open here too, and anyone holding a recipient key's public share can seal those")
}
