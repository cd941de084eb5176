import PushSeal
import PushSealJSON
import PushSealReceiver
import SeenMessages

/// Runs `pushseal doctor PAYLOAD|-`: says what an iPhone will do with a payload and why, one
/// finding per line, each problem with its fix. The verdict is the status `pushseal receive`
/// gives (the same code judges both). Exits 0 when nothing stands in the way, 65 when
/// something does, 66 when the seal could not be checked without --keys.
func runDoctor(_ request: DoctorRequest, console: Console) throws -> ExitStatus {
    var bytes = try InputFiles.read(request.source, bound: .payloadInput)
    // On stdin a payload ends with its line break, as `receive -` reads it: the break is not
    // part of it, so byte offsets and sizes agree with receive's record.
    if request.source == "-", bytes.last == UInt8(ascii: "\n") {
        bytes.removeLast()
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    }
    var keyring: Keyring?
    var receiving = PayloadJudgement.Receiving(senders: request.senders)
    if let folder = request.keysFolder {
        keyring = try KeyringStore(folder: folder).load()
        warnOfAnySender(request.senders, console: console)
        let seenPath = request.seenStore ?? folder + "/" + SeenMessages.fileName
        receiving.seen = try existingSeenStore(seenPath == "none" ? nil : seenPath)
    }
    let diagnosis = PayloadDiagnosis.of(
        bytes, field: request.field, pushType: request.pushType, priority: request.priority,
        keyring: keyring, keysName: request.keysFolder ?? "the keyring", receiving: receiving)
    let verdict = DoctorReport.verdict(diagnosis)
    if request.json {
        var members: [(String, JSONValue)] = [
            ("source", .string(request.source == "-" ? "stdin" : request.source)),
            ("status", diagnosis.status.map { .string($0.rawValue) } ?? .null),
            ("verdict", .string(verdict)),
            ("findings", .array(diagnosis.findings.map(DoctorReport.json)))
        ]
        members.append(("shown", diagnosis.shown.map { .object(JSONObject([("title", .string($0.title)), ("body", .string($0.body))])) } ?? .null))
        console.output(JSONWriter.string(.object(JSONObject(members))))
    } else {
        for finding in diagnosis.findings { console.output(DoctorReport.line(finding)) }
        console.output("verdict: \(verdict)")
    }
    if diagnosis.hasProblem || (diagnosis.status != nil && diagnosis.status != .decrypted) { return .dataError }
    return diagnosis.status == nil ? .noInput : .ok
}

/// How doctor's findings are written, for payloads and senders alike.
enum DoctorReport {
    /// `ok       size       612 of the 4096 bytes …`, and a `fix:` line under a problem.
    static func line(_ finding: DoctorFinding) -> String {
        let level = finding.level == .problem ? "PROBLEM" : finding.level.rawValue
        let head = level.padding(9) + finding.check.padding(11) + finding.says
        guard let fix = finding.fix else { return head }
        return head + "\n" + String(repeating: " ", count: 20) + "fix: " + fix
    }

    static func json(_ finding: DoctorFinding) -> JSONValue {
        .object(
            JSONObject([
                ("check", .string(finding.check)), ("level", .string(finding.level.rawValue)),
                ("says", .string(finding.says)), ("fix", finding.fix.map(JSONValue.string) ?? .null)
            ]))
    }

    static func verdict(_ diagnosis: PayloadDiagnosis) -> String {
        switch diagnosis.status {
        case .decrypted?: "it opens: the device shows the sealed alert"
        case .passthrough?: "the device shows the fallback as it came; nothing sealed is read"
        // Not a payload at all (receive's record shows no text): there is no placeholder to show.
        case .malformed? where diagnosis.extensionRuns == nil:
            "nothing is shown: it is not a payload a device could receive (malformed)"
        case let status?
        where status == .malformed || status == .unsupported || status == .keyMissing || status == .keyDisabled
            || status == .keyExpired || status == .authenticationFailed || status == .expired:
            "the device shows the placeholder (\(status.rawValue))"
        case let status?: "status \(status.rawValue)"
        case nil where diagnosis.hasProblem: "it will not arrive as meant: see the problems above"
        case nil: "could not check the seal without --keys: it reaches the extension sealed; give --keys DIR to check that it opens"
        }
    }
}

extension String {
    /// Left-aligned in `width` columns, with one space at least after it.
    fileprivate func padding(_ width: Int) -> String {
        self + String(repeating: " ", count: max(1, width - count))
    }
}

extension Specs {
    static let doctor = CommandSpec(
        name: ["doctor"], overview: "Say what an iPhone will do with a payload, and why; 'doctor send' checks a sender's set-up.",
        usage:
            "pushseal doctor PAYLOAD|- [--keys DIR] [--field enc] [--push-type alert] [--priority 10] [--senders auto|required|any] [--seen FILE] [--json]\n       pushseal doctor send --topic BUNDLE --auth-key F.p8 --key-id K --team-id T [--sandbox|--endpoint URL] [--proxy URL] [--json]",
        options: [
            OptionSpec("keys", value: "dir", environment: "PUSHSEAL_KEYS", help: "Also check that it opens with this keyring, and what it shows."),
            fieldOption,
            OptionSpec("push-type", value: "type", choices: APNs.PushType.allCases.map(\.rawValue).sorted(), help: "The apns-push-type it goes out with (default: alert)."),
            OptionSpec("priority", value: "10|5|1", choices: APNs.Priority.allCases.map(\.rawValue), help: "The apns-priority it goes out with (default: 10)."),
            OptionSpec("json", help: "Write the findings as one JSON object."),
            sendersOption,
            seenOption
        ],
        discussion: """
            Reads a payload from PAYLOAD or stdin ('-') and checks, as the receiver and PushSealKit do:
            whether iOS runs the Notification Service Extension (mutable-content 1, an alert to show,
            not a background push), its size against the push type's limit, the envelope's shape down
            to the precise base64 fault (padding, a space or line break, the standard alphabet, cut
            off), the version, and with --keys the key, whether it opens, exp, and what is shown.
            Each problem comes with its fix. The verdict is the status 'pushseal receive' gives the same
            payload (one judge, docs/FORMAT.md section 6). Exits 0 when nothing stands in the way, 65 when
            something does, 66 when the seal could not be checked for want of --keys.

            'pushseal doctor send' takes send's options (the .p8, key id, team id, topic, endpoint,
            proxy) and checks the set-up without sending a notification.
            """, arguments: .files)
}

struct DoctorRequest: Equatable {
    var source: String
    /// Nil: stop before opening.
    var keysFolder: String?
    var field: String
    var pushType: APNs.PushType
    var priority: APNs.Priority
    var json: Bool
    var senders: SenderPolicy = .automatic
    /// --seen: nil for the keyring folder's store (when --keys is given).
    var seenStore: String? = nil
}

func parseDoctor(_ arguments: [String], environment: [String: String]) throws(UsageError) -> Command {
    if arguments.first == "send" { return try parseDoctorSend(Array(arguments.dropFirst()), environment: environment) }
    let spec = Specs.doctor
    let parsed = try parseArguments(arguments, spec: spec, environment: environment)
    if parsed.helpRequested { return .help(spec.name) }
    guard parsed.positionals.count == 1, let source = parsed.positionals.first else {
        throw UsageError(
            parsed.positionals.isEmpty
                ? "missing the payload: a FILE, or '-' to read it from stdin ('pushseal doctor send' checks a sender)"
                : "expected one payload, got \(parsed.positionals.count)", command: spec.name)
    }
    let pushType = APNs.PushType(rawValue: parsed.value("push-type") ?? "alert") ?? .alert
    let priority = APNs.Priority(rawValue: parsed.value("priority") ?? "10") ?? .now
    return .doctor(
        DoctorRequest(
            source: source, keysFolder: parsed.value("keys"), field: parsed.value("field") ?? PayloadSealer.defaultField,
            pushType: pushType, priority: priority, json: parsed.has("json"), senders: try senderPolicy(parsed, command: spec.name),
            seenStore: parsed.value("seen")))
}
