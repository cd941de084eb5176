import Dispatch
import Foundation
import NotificationText
import PushSeal
import PushSealJSON
import PushSealReceiver
import SealCrypto
import Synchronization
import TestRandom
import Testing

/// An extension whose behaviour each test scripts.
final class ScriptedExtension: NotificationServiceExtension {
    enum Answer: Sendable {
        case now(NotificationContent)
        case twice(NotificationContent)
        case after(Duration, NotificationContent)
        case never
    }
    let answer: Answer
    let answersAtExpiry: NotificationContent?
    let expiryThread = Mutex<String?>(nil)
    let receiveThread = Mutex<String?>(nil)
    let handler = Mutex<ContentHandler?>(nil)

    init(answer: Answer, answersAtExpiry: NotificationContent? = nil) {
        self.answer = answer
        self.answersAtExpiry = answersAtExpiry
    }

    func didReceive(_ request: NotificationRequest, contentHandler: ContentHandler) {
        receiveThread.withLock { $0 = threadName() }
        handler.withLock { $0 = contentHandler }
        switch answer {
        case .now(let content): contentHandler(content)
        case .twice(let content):
            contentHandler(content)
            contentHandler(content)
        case .after(let delay, let content):
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay.milliseconds))) { contentHandler(content) }
        case .never: break
        }
    }

    func serviceExtensionTimeWillExpire() {
        expiryThread.withLock { $0 = threadName() }
        if let answersAtExpiry, let handler = handler.withLock({ $0 }) { handler(answersAtExpiry) }
    }
}

func threadName() -> String { "\(pthread_self())" }

func payloadRequest(_ json: String) -> NotificationRequest {
    guard case .request(let request) = ReceivedInput(bytes: Array(json.utf8)) else { fatalError("not a payload: \(json)") }
    return request
}

let eligible = payloadRequest(#"{"aps":{"alert":{"title":"Fallback","body":"fallback body"},"mutable-content":1},"enc":"x"}"#)
let shown = NotificationContent(title: "Shown", body: "by the extension")
let shortTiming = ExtensionRunner.Timing(budget: .milliseconds(200), expiryGrace: .milliseconds(100))

@Suite("extension runner: Apple's rules")
struct ExtensionRunnerTests {
    @Test(arguments: [
        #"{"aps":{"alert":{"title":"T","body":"B"}}}"#,
        #"{"aps":{"alert":{"title":"T"},"mutable-content":0}}"#,
        #"{"aps":{"mutable-content":1,"badge":3}}"#,
        #"{"aps":{"alert":{},"mutable-content":1}}"#,
        #"{"aps":{"content-available":1}}"#
    ])
    func ineligibleNotificationsPassThroughWithoutTheExtension(_ payload: String) async {
        let created = Atomic<Int>(0)
        let runner = ExtensionRunner {
            created.add(1, ordering: .relaxed)
            return ScriptedExtension(answer: .now(shown))
        }
        let delivery = await runner.deliver(payloadRequest(payload))
        #expect(delivery.status == .passthrough)
        #expect(delivery.content == payloadRequest(payload).content)
        #expect(created.load(ordering: .relaxed) == 0)
    }

    @Test(arguments: [
        #"{"aps":{"alert":"just a string","mutable-content":1}}"#,
        #"{"aps":{"alert":{"subtitle":"only a subtitle"},"mutable-content":1}}"#
    ])
    func stringAndDictionaryAlertsAreEligible(_ payload: String) async {
        let runner = ExtensionRunner { ScriptedExtension(answer: .now(shown)) }
        #expect(await runner.deliver(payloadRequest(payload)).content.title == "Shown")
    }

    @Test func eachNotificationGetsAFreshInstance() async {
        // Holding the instances keeps their identities from being reused.
        let instances = Mutex<[ScriptedExtension]>([])
        let runner = ExtensionRunner {
            let instance = ScriptedExtension(answer: .now(shown))
            instances.withLock { $0.append(instance) }
            return instance
        }
        for _ in 0..<5 { _ = await runner.deliver(eligible) }
        let seen = instances.withLock { $0.map(ObjectIdentifier.init) }
        #expect(seen.count == 5 && Set(seen).count == 5)
    }

    @Test func aRunnersDeadlineWatchEndsWithItsLastDeadline() async {
        // Fifty runners, one notification each: each watch's thread ends once its last
        // deadline is past, instead of waiting forever. Asked of these runners, not counted
        // in /proc: other suites' runners may be watching 30-second deadlines meanwhile.
        let timing = ExtensionRunner.Timing(budget: .milliseconds(20), expiryGrace: .milliseconds(10))
        var runners: [ExtensionRunner] = []
        for _ in 0..<50 {
            let runner = ExtensionRunner(timing: timing) { ScriptedExtension(answer: .now(shown)) }
            _ = await runner.deliver(eligible)
            runners.append(runner)
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while runners.contains(where: \.isWatchingDeadlines), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        #expect(runners.filter(\.isWatchingDeadlines).isEmpty)
    }

    @Test func onlyTheFirstContentHandlerCallCounts() async {
        let runner = ExtensionRunner { ScriptedExtension(answer: .twice(shown)) }
        let delivery = await runner.deliver(eligible)
        #expect(delivery.content == shown)
        #expect(runner.ignoredContentHandlerCalls == 1)
    }

    @Test func contentWithoutAlertTextShowsTheOriginal() async {
        let runner = ExtensionRunner { ScriptedExtension(answer: .now(NotificationContent(badge: 4))) }
        let delivery = await runner.deliver(eligible)
        #expect(delivery.status == .original)
        #expect(delivery.content == eligible.content)
    }

    @Test func expiryRunsOnAnotherThreadAndItsAnswerIsShown() throws {
        let instance = ScriptedExtension(answer: .never, answersAtExpiry: NotificationContent(title: "Best effort"))
        let runner = ExtensionRunner(timing: shortTiming) { instance }
        // didReceive runs on a thread of our own that then waits, so the expiry call can
        // only have come from somewhere else.
        let result = Mutex<Delivery?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let caller = Thread {
            let delivered = DispatchSemaphore(value: 0)
            runner.deliver(eligible) { delivery in
                result.withLock { $0 = delivery }
                delivered.signal()
            }
            delivered.wait()
            finished.signal()
        }
        caller.start()
        finished.wait()
        let delivery = try #require(result.withLock { $0 })
        #expect(delivery.status == .deadline)
        #expect(delivery.content.title == "Best effort")
        #expect(delivery.elapsed >= shortTiming.budget)
        #expect(instance.expiryThread.withLock { $0 } != nil)
        #expect(instance.expiryThread.withLock { $0 } != instance.receiveThread.withLock { $0 })
    }

    @Test func silenceEvenAtExpiryShowsTheOriginalAfterTheGrace() async {
        let runner = ExtensionRunner(timing: shortTiming) { ScriptedExtension(answer: .never) }
        let delivery = await runner.deliver(eligible)
        #expect(delivery.status == .original)
        #expect(delivery.content == eligible.content)
        #expect(delivery.elapsed >= shortTiming.budget + shortTiming.expiryGrace)
    }

    @Test func aLateAnswerAfterTheFallbackIsIgnoredAndCounted() async throws {
        let runner = ExtensionRunner(timing: ExtensionRunner.Timing(budget: .milliseconds(50), expiryGrace: .milliseconds(20))) {
            ScriptedExtension(answer: .after(.milliseconds(400), shown))
        }
        let delivery = await runner.deliver(eligible)
        #expect(delivery.status == .original)
        // The answer comes 400 ms in; a loaded machine may run it later, so wait for it.
        let deadline = ContinuousClock.now + .seconds(10)
        while runner.ignoredContentHandlerCalls == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(runner.ignoredContentHandlerCalls == 1)
    }

    @Test func aSlowNotificationDoesNotHoldBackAFastOne() async {
        // One runner, two notifications: the first never answers, the second at once.
        let made = Atomic<Int>(0)
        let runner = ExtensionRunner(timing: ExtensionRunner.Timing(budget: .seconds(5), expiryGrace: .seconds(1))) { [shown] in
            made.add(1, ordering: .relaxed).newValue == 1 ? ScriptedExtension(answer: .never) : ScriptedExtension(answer: .now(shown))
        }
        let slowDone = Atomic<Bool>(false)
        runner.deliver(eligible) { _ in slowDone.store(true, ordering: .relaxed) }
        let fast = await runner.deliver(eligible)
        #expect(fast.status == .modified)
        #expect(slowDone.load(ordering: .relaxed) == false)
        runner.expireAll()
    }

    @Test func theDeadlineHoldsWhileDidReceiveBlocks() throws {
        let instance = BlockingExtension()
        let runner = ExtensionRunner(timing: shortTiming) { instance }
        let result = Mutex<Delivery?>(nil)
        let delivered = DispatchSemaphore(value: 0)
        let caller = Thread {
            runner.deliver(eligible) { delivery in
                result.withLock { $0 = delivery }
                delivered.signal()
            }
        }
        caller.start()
        // The delivery comes while didReceive is still blocked, from the clock started
        // when the notification was taken.
        #expect(delivered.wait(timeout: .now() + .seconds(10)) == .success)
        instance.released.signal()
        let delivery = try #require(result.withLock { $0 })
        #expect(delivery.status == .original)
        #expect(delivery.elapsed >= shortTiming.budget + shortTiming.expiryGrace)
    }

    @Test func expireAllEndsEveryDeliveryInFlightWithItsOneRecord() async {
        let runner = ExtensionRunner(timing: ExtensionRunner.Timing(budget: .seconds(30), expiryGrace: .milliseconds(50))) {
            ScriptedExtension(answer: .never, answersAtExpiry: NotificationContent(title: "Stopped"))
        }
        let count = Atomic<Int>(0)
        let done = DispatchGroup()
        for _ in 0..<20 {
            done.enter()
            runner.deliver(eligible) { delivery in
                if delivery.status == .deadline { count.add(1, ordering: .relaxed) }
                done.leave()
            }
        }
        runner.expireAll()
        #expect(done.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(count.load(ordering: .relaxed) == 20)
    }

    @Test func manyNotificationsInFlightEachGetExactlyOneDelivery() async {
        let random = SharedRandom()
        let runner = ExtensionRunner(timing: ExtensionRunner.Timing(budget: .milliseconds(100), expiryGrace: .milliseconds(50))) {
            let delay = random.draw { Bool.random(using: &$0) ? Int64.random(in: 0...200, using: &$0) : nil }
            return ScriptedExtension(answer: delay.map { .after(.milliseconds($0), shown) } ?? .now(shown))
        }
        let statuses = await withTaskGroup(of: DeliveryStatus.self) { group in
            for _ in 0..<300 { group.addTask { await runner.deliver(eligible).status } }
            return await group.reduce(into: [DeliveryStatus]()) { $0.append($1) }
        }
        #expect(statuses.count == 300, "seed \(random.seed)")
        #expect(Set(statuses).isSubset(of: [.modified, .deadline, .original]), "seed \(random.seed)")
    }
}

/// An extension that blocks its caller inside didReceive, as careless code does.
final class BlockingExtension: NotificationServiceExtension {
    let released = DispatchSemaphore(value: 0)

    func didReceive(_ request: NotificationRequest, contentHandler: ContentHandler) {
        released.wait()
    }

    func serviceExtensionTimeWillExpire() {}
}

/// A key source whose keyring cannot be read, as a damaged or vanished keyring.json.
struct FailingKeySource: KeySource {
    func keyring(for kid: String, _ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void) {
        completion(.failure(KeyringError(.corrupt, "keyring.json is not a keyring")))
    }
}

/// A key source that answers after a delay, as a network fetch would.
struct SlowKeySource: KeySource {
    let keyring: Keyring
    let delay: Duration

    func keyring(for kid: String, _ completion: @escaping @Sendable (Result<Keyring, any Error>) -> Void) {
        let keyring = keyring
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay.milliseconds))) {
            completion(.success(keyring))
        }
    }
}

@Suite("decrypting extension")
struct DecryptingExtensionTests {
    let now: Int64 = 1_800_000_000
    let keyring: Keyring

    init() throws {
        keyring = try Keyring.generate(now: 1_800_000_000)
    }

    func seal(_ configure: (inout AlertRequest) -> Void = { _ in }, keyring: Keyring? = nil) throws -> String {
        var request = AlertRequest()
        request.title = "Secret title"
        request.body = "Secret body"
        configure(&request)
        return String(decoding: try PayloadSealer(keyring: keyring ?? self.keyring).payload(for: try request.alert(now: now)), as: UTF8.self)
    }

    func deliver(_ payload: String, keys: any KeySource, timing: ExtensionRunner.Timing = .standard, at time: Int64? = nil) async -> Delivery {
        let moment = time ?? now
        let settings = DecryptingExtension.Settings(placeholder: Placeholder(title: "Locked", body: "Open the app"), now: { moment })
        let runner = ExtensionRunner(timing: timing) { DecryptingExtension(keys: keys, settings: settings) }
        return await runner.deliver(payloadRequest(payload))
    }

    @Test func opensTheAlertAndMergesData() async throws {
        let payload = try seal {
            $0.subtitle = "sub"
            $0.badge = 7
            $0.sound = "chime"
            $0.threadID = "ops"
            $0.category = "ALERT"
            $0.interruptionLevel = .critical
            $0.data["ticket"] = .integer(42)
            $0.url = "https://example.com/t/42"
        }
        let delivery = await deliver(payload, keys: FixedKeySource(keyring))
        #expect(delivery.status == .decrypted)
        #expect(delivery.note.kid == keyring.primary?.id)
        let content = delivery.content
        #expect(content.title == "Secret title" && content.subtitle == "sub" && content.body == "Secret body")
        #expect(content.badge == 7 && content.sound == "chime" && content.threadIdentifier == "ops")
        #expect(content.categoryIdentifier == "ALERT" && content.interruptionLevel == .critical)
        #expect(content.userInfo["ticket"] == .integer(42))
        #expect(content.userInfo["url"] == .string("https://example.com/t/42"))
        #expect(content.userInfo["aps"] != nil)
    }

    /// The opened alert over its fallback: its text replaces all of the fallback's, even
    /// text it does not have; its other fields replace the payload's where it sets them,
    /// and the payload's stay where it does not.
    @Test func theOpenedAlertShowsOverThePayloadsFields() async throws {
        var request = AlertRequest()
        request.title = "Secret title"
        request.threadID = "sealed"
        request.badge = 0
        let (kid, key) = try keyring.encryptionKey()
        let envelope = try SealedEnvelope(parsing: EnvelopeSealer(key: .secret(kid: kid, key: key)).envelope(sealing: try request.alert(now: now).plaintext(paddedTo: 1)))
        let payload =
            #"{"aps":{"alert":{"title":"fb","subtitle":"fb sub","body":"fb body"},"badge":2,"sound":"ping","thread-id":"payload","category":"CAT","mutable-content":1},"enc":""#
            + envelope.text + #""}"#
        let delivery = await deliver(payload, keys: FixedKeySource(keyring))
        #expect(delivery.status == .decrypted)
        let content = delivery.content
        #expect(content.title == "Secret title" && content.subtitle == "" && content.body == "")
        #expect(content.badge == 0 && content.threadIdentifier == "sealed", "set by the sealed alert")
        #expect(content.sound == "ping" && content.categoryIdentifier == "CAT", "kept from the payload")
        #expect(content.targetContentIdentifier == nil && content.interruptionLevel == nil)
    }

    /// docs/FORMAT.md §5: `data` must not name `aps` or the field; a receiver refuses such an
    /// alert as malformed (shows the placeholder) rather than quietly dropping members.
    @Test(arguments: ["aps", "enc"])
    func sealedDataNamingApsOrTheEnvelopeFieldIsMalformed(name: String) async throws {
        var request = AlertRequest()
        request.title = "Secret title"
        request.data[name] = .string("replaced")
        request.data["kept"] = .integer(1)
        // pushseal's sender refuses such data; another sender may write it.
        #expect(throws: PayloadError.self) { try PayloadSealer(keyring: keyring).payload(for: try request.alert(now: now)) }
        let (kid, key) = try keyring.encryptionKey()
        let envelope = try SealedEnvelope(parsing: EnvelopeSealer(key: .secret(kid: kid, key: key)).envelope(sealing: try request.alert(now: now).plaintext(paddedTo: 1)))
        let payload = #"{"aps":{"alert":{"title":"fallback"},"mutable-content":1},"enc":""# + envelope.text + #""}"#
        let delivery = await deliver(payload, keys: FixedKeySource(keyring))
        #expect(delivery.status == .malformed && delivery.content.title != "Secret title")
        #expect(delivery.content.userInfo["aps"]?.objectValue?["mutable-content"] == .integer(1))
        #expect(delivery.content.userInfo["enc"] == .string(envelope.text))
        #expect(delivery.content.userInfo["kept"] == nil, "nothing sealed reaches userInfo")
    }

    @Test func eachFailureShowsThePlaceholderWithItsStatus() async throws {
        var rotated = keyring
        let old = rotated.primary!.id
        _ = try rotated.rotate(grace: .seconds(10), now: now)
        var disabled = rotated
        try disabled.disable(old)
        var destroyed = rotated
        try destroyed.destroy(old)
        let payload = try seal()
        let enc = envelopeText(payload)
        let tampered = payload.replacingOccurrences(of: enc, with: alteringMiddle(enc))
        let expiring = try seal { $0.timeToLive = .seconds(60) }

        let cases: [(String, any KeySource, Int64, DeliveryStatus)] = [
            (payload, FixedKeySource(Keyring()), now, .keyMissing),
            (payload, FixedKeySource(disabled), now, .keyDisabled),
            (payload, FixedKeySource(rotated), now + 11, .keyExpired),
            (payload, FixedKeySource(destroyed), now, .keyMissing),
            (tampered, FixedKeySource(keyring), now, .authenticationFailed),
            (payload.replacingOccurrences(of: "\"ps1.", with: "\"ps9."), FixedKeySource(keyring), now, .unsupported),
            (#"{"aps":{"alert":{"title":"F"},"mutable-content":1},"enc":17}"#, FixedKeySource(keyring), now, .malformed),
            (expiring, FixedKeySource(keyring), now + 61, .expired)
        ]
        for (input, keys, time, status) in cases {
            let delivery = await deliver(input, keys: keys, at: time)
            #expect(delivery.status == status, "\(status)")
            #expect(delivery.content.title == "Locked" && delivery.content.body == "Open the app")
            #expect(!"\(delivery.content)".contains("Secret"))
            #expect(!(delivery.note.reason ?? "").contains("Secret"))
        }
        #expect(await deliver(payload, keys: FixedKeySource(rotated), at: now + 9).status == .decrypted)
    }

    @Test func noEnvelopeFieldPassesThrough() async {
        let delivery = await deliver(#"{"aps":{"alert":{"title":"Plain"},"mutable-content":1}}"#, keys: FixedKeySource(keyring))
        #expect(delivery.status == .passthrough)
        #expect(delivery.content.title == "Plain")
    }

    @Test func aKeyringThatCannotBeReadIsLockedAndShowsTheFallbackAsItCame() async throws {
        let delivery = await deliver(try seal(), keys: FailingKeySource())
        #expect(delivery.status == .locked)
        #expect(delivery.content.title == FallbackAlert.standard.title && delivery.content.body == FallbackAlert.standard.body)
        #expect(delivery.note.reason?.contains("keyring could not be read") == true)
        // A key that is truly not there stays key-missing.
        let missing = await deliver(try seal(), keys: FixedKeySource(try Keyring.generate(now: now)))
        #expect(missing.status == .keyMissing && missing.content.title == "Locked")
    }

    @Test func slowKeySourcePastTheBudgetGivesDeadlinePlaceholder() async throws {
        let timing = ExtensionRunner.Timing(budget: .milliseconds(150), expiryGrace: .milliseconds(500))
        let delivery = await deliver(try seal(), keys: SlowKeySource(keyring: keyring, delay: .milliseconds(600)), timing: timing)
        #expect(delivery.status == .deadline)
        #expect(delivery.content.title == "Locked")
        #expect(delivery.elapsed >= timing.budget)
        // The same slow source well inside its budget: a budget near the delay would race a
        // loaded machine's scheduling (the whole suite runs at once on two cores).
        let roomy = ExtensionRunner.Timing(budget: .seconds(20), expiryGrace: .milliseconds(500))
        let inTime = await deliver(try seal(), keys: SlowKeySource(keyring: keyring, delay: .milliseconds(5)), timing: roomy)
        #expect(inTime.status == .decrypted)
    }
}

/// One character of the sealed box changed; the middle never carries padding bits, so the
/// result stays canonical base64url and must fail authentication.
func alteringMiddle(_ enc: String) -> String {
    var characters = Array(enc)
    let middle = characters.count - 20
    characters[middle] = characters[middle] == "A" ? "B" : "A"
    return String(characters)
}

func envelopeText(_ payload: String) -> String {
    guard case .object(let object) = try! JSONParser.parse(payload), let enc = object["enc"]?.stringValue else { fatalError() }
    return enc
}

@Suite("receiver inputs and records")
struct ReceiverTests {
    @Test func recordsLeaveInInputOrderWhateverOrderDeliveriesFinish() throws {
        let random = SharedRandom()
        let runner = ExtensionRunner(timing: ExtensionRunner.Timing(budget: .seconds(5), expiryGrace: .seconds(1))) {
            ScriptedExtension(answer: .after(.milliseconds(random.draw { Int64.random(in: 0...60, using: &$0) }), shown))
        }
        let seen = Mutex<[Int]>([])
        let receiver = OrderedReceiver(runner: runner, maximumInFlight: 16, render: { $0.seq }, emit: { seq in seen.withLock { $0.append(seq) } })
        let payload = Array(#"{"aps":{"alert":{"title":"F"},"mutable-content":1}}"#.utf8)
        for index in 0..<100 {
            if index % 10 == 3 {
                receiver.submit(source: "line \(index)", bytes: UnsafeRawBufferPointer(start: nil, count: 0))
            } else {
                payload.withUnsafeBytes { receiver.submit(source: "line \(index)", bytes: $0) }
            }
        }
        receiver.finish()
        #expect(seen.withLock { $0 } == Array(1...100))
    }

    @Test func simulatorFilesAndWrappedRequestsAreRead() {
        guard case .request(let simulator) = ReceivedInput(bytes: Array(#"{"Simulator Target Bundle":"com.example.app","aps":{"alert":"hi"}}"#.utf8)) else {
            Issue.record("simctl file not read")
            return
        }
        #expect(simulator.headers["apns-topic"] == "com.example.app")
        #expect(simulator.content.userInfo["Simulator Target Bundle"] == nil)
        #expect(simulator.identifier.count == 36)

        guard case .request(let wrapped) = ReceivedInput(bytes: Array(#"{"apns-id":"ID-1","headers":{"apns-push-type":"alert"},"payload":{"aps":{"alert":"hi"}}}"#.utf8)) else {
            Issue.record("wrapped request not read")
            return
        }
        #expect(wrapped.identifier == "ID-1" && wrapped.headers["apns-push-type"] == "alert")
    }

    @Test(arguments: ["", "garbage", "[]", "42", #"{"no":"aps"}"#, #"{"aps":"string"}"#])
    func nonPayloadsAreUnreadableNotCrashes(_ text: String) {
        guard case .unreadable = ReceivedInput(bytes: Array(text.utf8)) else {
            Issue.record("accepted \(text)")
            return
        }
    }
}

@Suite("keyring file source")
struct KeyringFileSourceTests {
    @Test func followsRotationsOnDiskFromEveryThread() async throws {
        let folder = NSTemporaryDirectory() + "pushseal-source-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = KeyringStore(folder: folder)
        try store.create(try Keyring.generate(now: 0))
        let source = try KeyringFileSource(store: store)
        #expect(try source.current().keys.count == 1)
        let added = try store.update { try $0.add(now: 0) }
        // The file is looked at again within 100 ms: once one caller sees the new key, all do.
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? source.current().keys.count) != 2, ContinuousClock.now < deadline { await Task.yield() }
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { (try? source.current().keys.count) ?? -1 } }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 2, count: 8))
        #expect(try source.current().entry(added) != nil)
    }
}
