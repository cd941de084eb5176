// The Apple adapter, compiled against the transcription of Apple's API in Tests/AppleAPI
// (Scripts/device-test.sh sets PUSHSEAL_APPLE_TRANSCRIPTION) and driven as iOS drives an
// extension: didReceive with a content handler, time-up from another thread, the Keychain
// answering as a locked phone or a build without Keychain Sharing does.
#if canImport(UserNotifications) && canImport(Security)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import CryptoKit
import Intents
import Security
@testable import UserNotifications
@testable import PushSealKit

/// What the system saw: each content handler call and each logged outcome.
final class ExtensionRecorder: @unchecked Sendable {
    // Unchecked: every member is read and written under `lock`.
    private let lock = NSLock()
    private var delivered: [String: [UNNotificationContent]] = [:]
    private var logged: [DeliveryOutcome] = []

    func handler(for identifier: String) -> (UNNotificationContent) -> Void {
        { content in self.lock.withLock { self.delivered[identifier, default: []].append(content) } }
    }

    func deliveries(_ identifier: String) -> [UNNotificationContent] { lock.withLock { delivered[identifier] ?? [] } }
    func log(_ outcome: DeliveryOutcome) { lock.withLock { logged.append(outcome) } }
    var outcomes: [DeliveryOutcome] { lock.withLock { logged } }
}

/// The extension as an app subclasses it, its store and hooks set by the test.
class RecordingService: PushSealNotificationService, @unchecked Sendable {
    let store: any KeyStore
    let recorder: ExtensionRecorder

    init(store: any KeyStore, recorder: ExtensionRecorder) {
        self.store = store
        self.recorder = recorder
    }

    override var keyStore: any KeyStore { store }
    override func log(_ outcome: DeliveryOutcome) { recorder.log(outcome) }
}

@Suite("PushSealKit: the Apple adapter against Apple's API", .serialized)
struct AppleAdapterTests {
    static var fallback: [String: Any] { ["title": "New notification", "body": "Open the app to read it"] }

    /// A request as iOS builds it from a payload: the alert's text in the content, the whole payload in userInfo.
    static func request(
        _ id: String, sealed alert: [String: Any]?, kid: String = "k1", key: SymmetricKey,
        aps: [String: Any] = ["alert": fallback, "mutable-content": 1]
    ) throws -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        if let alert = aps["alert"] as? [String: Any] {
            content.title = alert["title"] as? String ?? alert["title-loc-key"] as? String ?? ""
            content.body = alert["body"] as? String ?? alert["loc-key"] as? String ?? ""
        }
        var userInfo: [AnyHashable: Any] = ["aps": aps]
        if let alert { userInfo["enc"] = try NotificationOpenerTests.sealed(alert, kid: kid, key: key) }
        content.userInfo = userInfo
        return UNNotificationRequest(identifier: id, content: content, trigger: nil)
    }

    init() {
        KeychainSimulation.shared.reset()
    }

    @Test func aPhoneLockedSinceRebootKeepsTheFallbackAlertAndSaysLocked() throws {
        let key = SymmetricKey(size: .bits256)
        let keychain = KeychainKeyStore(accessGroup: nil)
        try keychain.store(.secret(key), id: "k1")
        KeychainSimulation.shared.setLocked(true)
        let recorder = ExtensionRecorder()
        let service = RecordingService(store: keychain, recorder: recorder)
        service.didReceive(try Self.request("A", sealed: ["title": "db-3 down", "body": "page"], key: key), withContentHandler: recorder.handler(for: "A"))
        let shown = try #require(recorder.deliveries("A").first)
        #expect(recorder.deliveries("A").count == 1)
        #expect(shown.title == "New notification" && shown.body == "Open the app to read it", "the fallback, not the no-key placeholder")
        let outcome = try #require(recorder.outcomes.first)
        #expect(outcome.status == .locked && outcome.storeError?.kind == .locked && outcome.storeError?.status == errSecInteractionNotAllowed)
        // After the first unlock the same message opens.
        KeychainSimulation.shared.setLocked(false)
        service.didReceive(try Self.request("B", sealed: ["title": "db-3 down", "body": "page"], key: key), withContentHandler: recorder.handler(for: "B"))
        #expect(recorder.deliveries("B").first?.title == "db-3 down")
    }

    /// A service as an app with sender keys and the App Group's store of opened messages
    /// subclasses it.
    final class RememberingService: RecordingService, @unchecked Sendable {
        let seen: SeenMessages
        let handling: DuplicateHandling

        init(store: any KeyStore, recorder: ExtensionRecorder, seen: SeenMessages, duplicates: DuplicateHandling = .placeholder) {
            self.seen = seen
            handling = duplicates
            super.init(store: store, recorder: recorder)
        }

        override var seenMessages: SeenMessages? { seen }
        override var duplicates: DuplicateHandling { handling }
    }

    /// A request as iOS builds it from a vector's payload.
    static func request(_ id: String, payload: String) throws -> UNNotificationRequest {
        let userInfo = try JSONSerialization.jsonObject(with: Data(payload.utf8)) as! [AnyHashable: Any]
        let content = UNMutableNotificationContent()
        let alert = (userInfo["aps"] as? [String: Any])?["alert"] as? [String: Any]
        content.title = alert?["title"] as? String ?? ""
        content.body = alert?["body"] as? String ?? ""
        content.userInfo = userInfo
        return UNNotificationRequest(identifier: id, content: content, trigger: nil)
    }

    /// The Keychain holds the device's key and an allowed sender's (their pairing lines):
    /// what that sender sealed opens with Apple's auth-mode HPKE, a forgery made with the
    /// public share alone is refused with its own words, and a message delivered to two
    /// instances of the extension (two processes sharing the App Group's store) shows once.
    @Test func anAllowedSendersMessageOpensOnceAndAForgeryIsRefused() throws {
        let document = try FormatVectorTests.document("ps3")
        let keychain = KeychainKeyStore(accessGroup: nil)
        for line in document["receiver"] as! [String] {
            if line.hasPrefix("pss1.") {
                let (kid, key) = try KeyShare.sender(parsing: line)
                try keychain.store(.sender(key), id: kid)
            } else {
                let (kid, key) = try KeyShare.privateKey(parsing: line)
                try keychain.store(.recipient(key), id: kid)
            }
        }
        #expect(try keychain.knowsSenders() && keychain.ids().count == 2)
        let positive = (document["positive"] as! [[String: Any]])[0]
        let forged = (document["negative"] as! [[String: Any]]).first { $0["name"] as? String == "unauthenticated where a sender is required" }!
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("group-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("seen-messages").path
        let recorder = ExtensionRecorder()
        let first = RememberingService(store: keychain, recorder: recorder, seen: try SeenMessages(path: path))
        let second = RememberingService(store: keychain, recorder: recorder, seen: try SeenMessages(path: path))
        let quiet = RememberingService(store: keychain, recorder: recorder, seen: try SeenMessages(path: path), duplicates: .suppress)

        first.didReceive(try Self.request("A", payload: positive["payload"] as! String), withContentHandler: recorder.handler(for: "A"))
        second.didReceive(try Self.request("B", payload: forged["payload"] as! String), withContentHandler: recorder.handler(for: "B"))
        second.didReceive(try Self.request("C", payload: positive["payload"] as! String), withContentHandler: recorder.handler(for: "C"))
        quiet.didReceive(try Self.request("D", payload: positive["payload"] as! String), withContentHandler: recorder.handler(for: "D"))
        #expect(recorder.deliveries("A").first?.title == "Deploy finished")
        let refused = try #require(recorder.deliveries("B").first)
        #expect(refused.title == Placeholder.standard.title && refused.body == Placeholder.standard.untrustedSender)
        let repeated = try #require(recorder.deliveries("C").first)
        #expect(repeated.body == Placeholder.standard.duplicate)
        let suppressed = try #require(recorder.deliveries("D").first)
        #expect(suppressed.title.isEmpty && suppressed.body.isEmpty, "empty content: the filtering entitlement drops it")
        #expect(["A", "B", "C", "D"].allSatisfy { recorder.deliveries($0).count == 1 })
        #expect(recorder.outcomes.map(\.status) == [.decrypted, .senderUntrusted, .duplicate, .duplicate])
    }

    /// The Keychain keeps no key under an id no envelope can carry: it could never open anything.
    @Test(arguments: ["x/../../victim", "..", "", "a b", String(repeating: "a", count: 65)])
    func theKeychainRefusesIdsNoEnvelopeCanCarry(_ id: String) throws {
        let keychain = KeychainKeyStore(accessGroup: nil)
        #expect(throws: KeyStoreError.self) { try keychain.store(.secret(SymmetricKey(size: .bits256)), id: id) }
        #expect(throws: KeyStoreError.self) { try keychain.remove(id: id) }
        #expect(try keychain.ids().isEmpty)
        guard case .missing = keychain.lookUp(id: id) else {
            Issue.record("an id no envelope carries names no key")
            return
        }
    }

    @Test func aMissingKeychainEntitlementIsReportedAsMisconfiguredOnTheFirstTry() throws {
        let key = SymmetricKey(size: .bits256)
        let recorder = ExtensionRecorder()
        let service = RecordingService(store: KeychainKeyStore(accessGroup: "ZZZZZ99999.com.example.unshared"), recorder: recorder)
        service.didReceive(try Self.request("A", sealed: ["title": "T"], key: key), withContentHandler: recorder.handler(for: "A"))
        #expect(recorder.deliveries("A").first?.title == "New notification")
        let outcome = try #require(recorder.outcomes.first)
        #expect(outcome.status == .locked && outcome.storeError?.kind == .misconfigured && outcome.storeError?.status == errSecMissingEntitlement)
        #expect(outcome.description.contains("MISCONFIGURED") && outcome.description.contains("Keychain Sharing"))
        // The store's own calls say the same.
        #expect(throws: KeyStoreError.self) { try KeychainKeyStore(accessGroup: "ZZZZZ99999.com.example.unshared").store(.secret(key), id: "k1") }
    }

    @Test func theKeychainStoreListsRemovesAndReplacesAKeyInOneStep() throws {
        let keychain = KeychainKeyStore(accessGroup: nil)
        let first = SymmetricKey(size: .bits256)
        let second = SymmetricKey(size: .bits256)
        try keychain.store(.secret(first), id: "k1")
        try keychain.store(.recipient(P256.KeyAgreement.PrivateKey()), id: "r1")
        #expect(try keychain.ids() == ["k1", "r1"])
        // A replacement that fails leaves the old key: it is an update in place, never a delete first.
        KeychainSimulation.shared.failNext("SecItemUpdate", with: errSecNotAvailable)
        let before = KeychainSimulation.shared.callLog.count
        #expect(throws: KeyStoreError(.failed, status: errSecNotAvailable, "")) { try keychain.store(.secret(second), id: "k1") }
        #expect(Array(KeychainSimulation.shared.callLog[before...]) == ["SecItemAdd", "SecItemUpdate"], "no delete before the failed update")
        guard case .found(.secret(let held)) = keychain.lookUp(id: "k1") else {
            Issue.record("the old key is kept")
            return
        }
        #expect(held == first)
        try keychain.store(.secret(second), id: "k1")
        guard case .found(.secret(let replaced)) = keychain.lookUp(id: "k1") else {
            Issue.record("the new key is kept")
            return
        }
        #expect(replaced == second)
        #expect(try keychain.remove(id: "r1") == true)
        #expect(try keychain.remove(id: "r1") == false)
        guard case .missing = keychain.lookUp(id: "r1") else {
            Issue.record("a removed key is missing")
            return
        }
        #expect(try keychain.ids() == ["k1"])
        // A locked phone cannot take a key either, and says why.
        KeychainSimulation.shared.setLocked(true)
        #expect(throws: KeyStoreError(.locked, status: errSecInteractionNotAllowed, "")) { try keychain.store(.secret(first), id: "k2") }
    }

    /// A service whose hook holds a request's delivery while its sealed data says "hold".
    final class HoldingService: RecordingService, @unchecked Sendable {
        private let lock = NSLock()
        private var held: [ContentDelivery] = []
        private var late: [String] = []

        var holding: [ContentDelivery] { lock.withLock { held } }
        var timeUps: [String] { lock.withLock { late } }

        override func didOpen(
            _ opened: OpenedNotification, content: UNMutableNotificationContent, request: UNNotificationRequest,
            delivery: ContentDelivery
        ) {
            if opened.data["hold"] != nil {
                lock.withLock { held.append(delivery) }
                return
            }
            content.subtitle = "seen by didOpen"
            delivery.finish(with: content)
        }

        override func willDeliverAtTimeUp(
            _ content: UNMutableNotificationContent, opened: OpenedNotification?,
            request: UNNotificationRequest
        ) -> UNNotificationContent {
            lock.withLock { late.append("\(request.identifier) \(opened?.status.rawValue ?? "not opened")") }
            content.subtitle = "(time-up)"
            return content
        }
    }

    @Test func twoNotificationsOnOneInstanceEachGetTheirOwnContentOnce() throws {
        let key = SymmetricKey(size: .bits256)
        let recorder = ExtensionRecorder()
        let service = HoldingService(store: InMemoryKeyStore(["k1": .secret(key)]), recorder: recorder)
        service.didReceive(try Self.request("A", sealed: ["title": "first", "data": ["hold": true]], key: key), withContentHandler: recorder.handler(for: "A"))
        service.didReceive(try Self.request("B", sealed: ["title": "second"], key: key), withContentHandler: recorder.handler(for: "B"))
        #expect(recorder.deliveries("A").isEmpty)
        #expect(recorder.deliveries("B").map(\.title) == ["second"] && recorder.deliveries("B").first?.subtitle == "seen by didOpen")
        // Time-up: A, still held by its hook, gets what was opened for it; B is not delivered again.
        service.serviceExtensionTimeWillExpire()
        #expect(recorder.deliveries("A").map(\.title) == ["first"] && recorder.deliveries("A").first?.subtitle == "(time-up)")
        #expect(recorder.deliveries("B").count == 1)
        #expect(service.timeUps == ["A decrypted"])
        // The hook finishing after time-up changes nothing.
        #expect(service.holding.count == 1)
        #expect(service.holding[0].finish(with: UNMutableNotificationContent()) == false)
        #expect(recorder.deliveries("A").count == 1)
        #expect(recorder.outcomes.map(\.requestIdentifier).sorted() == ["A", "B"], "one outcome each")
    }

    /// A store that answers only when the test lets it, as a slow or stuck Keychain would.
    final class StuckStore: KeyStore, @unchecked Sendable {
        let key: SymmetricKey
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        init(key: SymmetricKey) { self.key = key }
        func lookUp(id: String) -> KeyLookup {
            entered.signal()
            release.wait()
            return .found(.secret(key))
        }
    }

    @Test func timeUpBeforeTheOpeningDeliversTheDeadlinePlaceholderOnce() throws {
        let key = SymmetricKey(size: .bits256)
        let store = StuckStore(key: key)
        let recorder = ExtensionRecorder()
        let service = HoldingService(store: store, recorder: recorder)
        // Sealed data that would make the hook hold it: it must not be asked at all.
        nonisolated(unsafe) let request = try Self.request("A", sealed: ["title": "late", "data": ["hold": true]], key: key)
        let finished = DispatchSemaphore(value: 0)
        // The system's objects are not Sendable; the thread is handed them as iOS hands them over.
        nonisolated(unsafe) let handler = recorder.handler(for: "A")
        Thread {
            service.didReceive(request, withContentHandler: handler)
            finished.signal()
        }.start()
        store.entered.wait()
        service.serviceExtensionTimeWillExpire()
        let shown = try #require(recorder.deliveries("A").first)
        #expect(shown.title == Placeholder.standard.title && shown.body == Placeholder.standard.deadline && shown.subtitle == "(time-up)")
        #expect(service.timeUps == ["A not opened"])
        store.release.signal()
        finished.wait()
        #expect(recorder.deliveries("A").count == 1, "the opening that came late is not delivered")
        #expect(service.holding.isEmpty, "no hook is started for an opening that came after time-up")
        #expect(recorder.outcomes.map(\.status) == [.deadline])
    }

    @Test func criticalAlertsPlayCriticalSoundsAndOthersDoNot() throws {
        let key = SymmetricKey(size: .bits256)
        let recorder = ExtensionRecorder()
        let service = RecordingService(store: InMemoryKeyStore(["k1": .secret(key)]), recorder: recorder)
        let cases: [(String, [String: Any], String?, Bool)] = [
            ("siren", ["title": "Page", "interruption-level": "critical", "sound": "siren.caf"], "siren.caf", true),
            ("default critical", ["title": "Page", "interruption-level": "critical", "sound": "default"], nil, true),
            ("chime", ["title": "Note", "interruption-level": "active", "sound": "chime.caf"], "chime.caf", false),
            ("default", ["title": "Note", "sound": "default"], nil, false)
        ]
        for (id, alert, name, critical) in cases {
            service.didReceive(try Self.request(id, sealed: alert, key: key), withContentHandler: recorder.handler(for: id))
            let sound = try #require(recorder.deliveries(id).first?.sound, "\(id)")
            #expect(sound.soundName == name && sound.isCritical == critical, "\(id)")
        }
        #expect(recorder.deliveries("siren").first?.interruptionLevel == .critical)
    }

    @Test func aLocalizedFallbackIsOpenedByTheExtension() throws {
        let key = SymmetricKey(size: .bits256)
        let recorder = ExtensionRecorder()
        let service = RecordingService(store: InMemoryKeyStore(["k1": .secret(key)]), recorder: recorder)
        service.didReceive(
            try Self.request("A", sealed: ["title": "T", "body": "B"], key: key, aps: ["alert": ["loc-key": "NEW_MESSAGE"], "mutable-content": 1]),
            withContentHandler: recorder.handler(for: "A"))
        #expect(recorder.deliveries("A").first?.title == "T" && recorder.deliveries("A").first?.body == "B")
    }

    /// The README's first example: a subclass that logs each outcome. Nothing sealed reaches the log.
    final class LoggingService: PushSealNotificationService, @unchecked Sendable {
        let lines = NSLock()
        nonisolated(unsafe) var written: [String] = []
        override var keyStore: any KeyStore { testStore }
        nonisolated(unsafe) var testStore: any KeyStore = InMemoryKeyStore()
        override func log(_ outcome: DeliveryOutcome) {
            lines.withLock { written.append(outcome.description) }
        }
    }

    @Test func aLoggingSubclassGetsEveryOutcomeAndNoPlaintext() throws {
        let key = SymmetricKey(size: .bits256)
        let service = LoggingService()
        service.testStore = InMemoryKeyStore(["k1": .secret(key)])
        let recorder = ExtensionRecorder()
        service.didReceive(try Self.request("opened", sealed: ["title": "SECRET-TITLE", "body": "SECRET-BODY"], key: key), withContentHandler: recorder.handler(for: "opened"))
        service.didReceive(try Self.request("nokey", sealed: ["title": "SECRET-TITLE"], kid: "k9", key: key), withContentHandler: recorder.handler(for: "nokey"))
        var tampered = try Self.request("tampered", sealed: ["title": "SECRET-TITLE"], key: SymmetricKey(size: .bits256))
        tampered = UNNotificationRequest(identifier: "tampered", content: tampered.content, trigger: nil)
        service.didReceive(tampered, withContentHandler: recorder.handler(for: "tampered"))
        service.didReceive(try Self.request("plain", sealed: nil, key: key), withContentHandler: recorder.handler(for: "plain"))
        let written = service.lines.withLock { service.written }
        #expect(written.count == 4)
        #expect(written.contains { $0.hasPrefix("pushseal: opened decrypted kid k1") })
        #expect(written.contains { $0.hasPrefix("pushseal: nokey key-missing kid k9") })
        #expect(written.contains { $0.hasPrefix("pushseal: tampered auth-failed kid k1") })
        #expect(written.contains { $0.hasPrefix("pushseal: plain passthrough") })
        #expect(!written.contains { $0.contains("SECRET") })
    }

    /// The README's second example: a subclass that downloads the image the sealed data names
    /// and attaches it, within the budget; an attachment that cannot be had still delivers the text.
    /// Its `didOpen` is the README's word for word (`DocumentedCodeTests` compares them).
    final class AttachmentService: PushSealNotificationService {
        nonisolated(unsafe) var testStore: any KeyStore = InMemoryKeyStore()
        override var keyStore: any KeyStore { testStore }

        override func didOpen(
            _ opened: OpenedNotification, content: sending UNMutableNotificationContent,
            request: UNNotificationRequest, delivery: ContentDelivery
        ) {
            guard opened.status == .decrypted, let link = opened.data["image"]?.stringValue, let url = URL(string: link) else {
                delivery.finish(with: content)
                return
            }
            Task {
                var download = URLRequest(url: url)
                download.timeoutInterval = max(1, delivery.deadline.timeIntervalSinceNow - 2) // leave time to deliver
                if let (file, response) = try? await URLSession.shared.download(for: download),
                    (response as? HTTPURLResponse)?.statusCode == 200
                {
                    let named = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString + "." + url.pathExtension)
                    if (try? FileManager.default.moveItem(at: file, to: named)) != nil,
                        let attachment = try? UNNotificationAttachment(identifier: "image", url: named)
                    {
                        content.attachments = [attachment]
                    }
                }
                delivery.finish(with: content) // the text is shown even when the image is not
            }
        }
    }

    /// The README's communication notification: the opened content, updated from an intent
    /// naming the sealed sender, is what the system is handed.
    final class MessageService: PushSealNotificationService {
        nonisolated(unsafe) var testStore: any KeyStore = InMemoryKeyStore()
        override var keyStore: any KeyStore { testStore }

        override func didOpen(
            _ opened: OpenedNotification, content: sending UNMutableNotificationContent,
            request: UNNotificationRequest, delivery: ContentDelivery
        ) {
            guard opened.status == .decrypted, let name = opened.data["from"]?.stringValue else {
                delivery.finish(with: content)
                return
            }
            let sender = INPerson(
                personHandle: INPersonHandle(value: name, type: .unknown), nameComponents: nil,
                displayName: name, image: nil, contactIdentifier: nil, customIdentifier: name)
            let intent = INSendMessageIntent(
                recipients: nil, outgoingMessageType: .outgoingMessageText, content: content.body,
                speakableGroupName: nil, conversationIdentifier: content.threadIdentifier,
                serviceName: nil, sender: sender, attachments: nil)
            let interaction = INInteraction(intent: intent, response: nil)
            interaction.direction = .incoming
            interaction.donate(completion: nil)
            // The opened content stays what is shown if the system refuses the intent.
            delivery.finish(with: (try? content.updating(from: intent)) ?? content)
        }
    }

    @Test func aCommunicationNotificationIsTheOpenedContentUpdatedFromTheIntent() throws {
        let key = SymmetricKey(size: .bits256)
        let service = MessageService()
        service.testStore = InMemoryKeyStore(["k1": .secret(key)])
        let recorder = ExtensionRecorder()
        service.didReceive(
            try Self.request("A", sealed: ["title": "Ada", "body": "lunch?", "data": ["from": "Ada"]], key: key),
            withContentHandler: recorder.handler(for: "A"))
        service.didReceive(try Self.request("B", sealed: ["title": "CPU", "body": "91%"], key: key), withContentHandler: recorder.handler(for: "B"))
        let shown = try #require(recorder.deliveries("A").first)
        #expect(shown.title == "Ada" && shown.body == "lunch?")
        let intent = try #require(shown._contentProvider as? INSendMessageIntent)
        #expect(intent.sender?.displayName == "Ada" && intent.content == "lunch?")
        #expect(recorder.deliveries("B").first.map { $0._contentProvider == nil && $0.title == "CPU" } == true)
    }

    /// Attachments are checked as the SDK checks them: a file URL that is there, a supported
    /// type (by extension or hint) and a size within its type's limit.
    @Test func attachmentsAreRefusedAsTheSDKRefusesThem() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushseal-attach-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func file(_ name: String, bytes: Int) throws -> URL {
            let url = folder.appendingPathComponent(name)
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: UInt64(bytes))
            try handle.close()
            return url
        }
        func code(_ url: URL, options: [AnyHashable: Any]? = nil) -> UNError.Code? {
            do {
                _ = try UNNotificationAttachment(identifier: "a", url: url, options: options)
                return nil
            } catch let error as UNError {
                return error.code
            } catch {
                return .attachmentCorrupt
            }
        }
        #expect(code(try file("chart.png", bytes: 2048)) == nil)
        #expect(try UNNotificationAttachment(identifier: "a", url: try file("c.jpg", bytes: 10)).type == "public.jpeg")
        #expect(code(folder.appendingPathComponent("absent.png")) == .attachmentInvalidURL)
        #expect(code(URL(string: "https://example.com/chart.png")!) == .attachmentInvalidURL)
        #expect(code(try file("notes.txt", bytes: 10)) == .attachmentUnrecognizedType)
        #expect(code(try file("big.png", bytes: 10_000_001)) == .attachmentInvalidFileSize)
        #expect(code(try file("song.mp3", bytes: 5_000_001)) == .attachmentInvalidFileSize)
        #expect(code(try file("clip.mp4", bytes: 20_000_000)) == nil)
        #expect(code(try file("blob", bytes: 10), options: [UNNotificationAttachmentOptionsTypeHintKey: "public.png"]) == nil)
    }

    /// What was delivered can be seen and removed from a hook, as an app removes an earlier
    /// notification that a newer one replaces.
    @Test func deliveredNotificationsCanBeListedAndRemoved() async throws {
        let center = UNUserNotificationCenter.current()
        center.removeAllDeliveredNotifications()
        let key = SymmetricKey(size: .bits256)
        for id in ["old", "new"] {
            let request = try Self.request(id, sealed: ["title": id], key: key)
            center._didDeliver(request.content, for: request)
        }
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["old", "new"])
        center.removeDeliveredNotifications(withIdentifiers: ["old"])
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["new"])
        center.removeAllDeliveredNotifications()
    }

    @Test func anAttachmentIsDownloadedWithinTheBudget() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushseal-images-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(repeating: 0x89, count: 2048).write(to: folder.appendingPathComponent("chart.png"))
        // A real HTTP server on loopback, port 0, started and stopped here.
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = ["-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", folder.path]
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            // SIGKILL: a signal the test process ignores or blocks would be inherited as such.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        var banner = ""
        while !banner.contains("\n"), let chunk = try output.fileHandleForReading.read(upToCount: 1), !chunk.isEmpty {
            banner += String(decoding: chunk, as: UTF8.self)
        }
        let port = try #require(banner.split(separator: " ").firstIndex(of: "port").map { banner.split(separator: " ")[$0 + 1] })
        let key = SymmetricKey(size: .bits256)
        let service = AttachmentService()
        service.testStore = InMemoryKeyStore(["k1": .secret(key)])
        let recorder = ExtensionRecorder()
        let done = DispatchSemaphore(value: 0)
        let record = recorder.handler(for: "A")
        for (id, image) in [("A", "http://127.0.0.1:\(port)/chart.png"), ("B", "http://127.0.0.1:\(port)/missing.png")] {
            let request = try Self.request(id, sealed: ["title": "CPU", "data": ["image": image]], key: key)
            service.didReceive(request) { content in
                if id == "A" { record(content) } else { recorder.handler(for: "B")(content) }
                done.signal()
            }
        }
        for _ in 0..<2 { _ = done.wait(timeout: .now() + 60) }
        let shown = try #require(recorder.deliveries("A").first)
        #expect(shown.title == "CPU" && shown.attachments.count == 1 && shown.attachments.first?.identifier == "image")
        #expect(recorder.deliveries("B").first?.title == "CPU" && recorder.deliveries("B").first?.attachments.isEmpty == true)
    }
}
#endif
