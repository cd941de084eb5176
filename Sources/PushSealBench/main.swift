// Measures what no test may time: how late ExtensionRunner delivers past a deadline; and
// stands in for a push service that only answers, under `send --webpush`'s benchmark.
// Prints figures; never fails on them. Run by Scripts/bench.sh:
//   pushseal-bench deadline [COUNT] [BUDGET_MS]
//   pushseal-bench push-service FOLDER [ORIGINS]
import Dispatch
import PushSeal
import PushSealReceiver
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A key source that never answers, so the decrypting extension can only be saved by
/// serviceExtensionTimeWillExpire.
struct SilentKeySource: KeySource {
    func keyring(for kid: String, _ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void) {}
}

/// An extension that answers nothing, not even at expiry: iOS then shows the original.
final class SilentExtension: NotificationServiceExtension {
    func didReceive(_ request: NotificationRequest, contentHandler: ContentHandler) {}
    func serviceExtensionTimeWillExpire() {}
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}

func measure(
    _ name: String, count: Int, timing: ExtensionRunner.Timing, expected: Duration,
    makeExtension: @escaping @Sendable () -> any NotificationServiceExtension
) {
    let keyring = try! Keyring.generate(now: Timestamp.now())
    var request = AlertRequest()
    request.title = "t"
    let payload = try! PayloadSealer(keyring: keyring).payload(for: try! request.alert(now: Timestamp.now()))
    guard case .request(let notification) = ReceivedInput(bytes: payload) else { fatalError("bad payload") }

    let runner = ExtensionRunner(timing: timing, makeExtension: makeExtension)
    let lateness = Mutex<[Double]>([])
    let statuses = Mutex<Set<String>>([])
    let done = DispatchGroup()
    for _ in 0..<count {
        done.enter()
        runner.deliver(notification) { delivery in
            lateness.withLock { $0.append((delivery.elapsed - expected).milliseconds) }
            statuses.withLock { _ = $0.insert(delivery.status.rawValue) }
            done.leave()
        }
    }
    done.wait()
    let sorted = lateness.withLock { $0 }.sorted()
    func format(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = String(abs(hundredths) % 100)
        return "\(hundredths / 100).\(fraction.count < 2 ? "0" : "")\(fraction)"
    }
    print(
        "\(name)\t\(count)\t\(statuses.withLock { $0.sorted().joined(separator: ",") })\tp50 \(format(percentile(sorted, 0.5))) ms\tp99 \(format(percentile(sorted, 0.99))) ms\tmax \(format(sorted.last ?? 0)) ms"
    )
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "seen-fill", let path = arguments.dropFirst().first, let count = arguments.dropFirst(2).first.flatMap({ Int($0) }) {
    try fillSeenStore(path: path, count: count)
    exit(0)
}
if arguments.first == "seen", let count = arguments.dropFirst().first.flatMap({ Int($0) }),
    let asked = arguments.dropFirst(2).first.flatMap({ Int($0) })
{
    try measureSeenStore(holding: count, asking: asked)
    exit(0)
}
if arguments.first == "push-service", let folder = arguments.dropFirst().first {
    runPushService(folder: folder, origins: arguments.dropFirst(2).first.flatMap { Int($0) } ?? 3)
    exit(0)
}
guard arguments.first == "deadline" else {
    print("usage: pushseal-bench deadline [COUNT] [BUDGET_MS] | push-service FOLDER [ORIGINS] | seen-fill FILE COUNT | seen COUNT ASKED")
    exit(64)
}
let count = arguments.dropFirst().first.flatMap { Int($0) } ?? 200
let budget = Duration.milliseconds(arguments.dropFirst(2).first.flatMap { Int64($0) } ?? 100)
let grace = Duration.milliseconds(50)
let timing = ExtensionRunner.Timing(budget: budget, expiryGrace: grace)
measure("deadline placeholder (decrypting extension, key never arrives)", count: count, timing: timing, expected: budget) {
    DecryptingExtension(keys: SilentKeySource())
}
measure("original after grace (extension silent even at expiry)", count: count, timing: timing, expected: budget + grace) {
    SilentExtension()
}
