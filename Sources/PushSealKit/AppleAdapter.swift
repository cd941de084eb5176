// The Apple adapter: a Notification Service Extension an app can use as is or subclass, and a
// Keychain key store. Every decision about a payload is NotificationOpener's and every
// delivery goes through PendingDelivery, both tested on Linux; this file adds the per-request
// state, the hooks and the Keychain calls. On Linux it is compiled by Scripts/device-test.sh
// against a transcription of Apple's declarations (Tests/AppleAPI) and tested there; tvOS has
// no service extension and watchOS no critical sounds, so neither builds it.
import Foundation

#if canImport(UserNotifications) && canImport(Security) && !os(tvOS) && !os(watchOS)
import CryptoKit
import Security
import UserNotifications

/// Name it as the extension's principal class (NSExtensionPrincipalClass), or subclass it to
/// change the store, the field, the placeholder or what a locked phone shows, and to work on
/// the opened content (`didOpen`), on what time-up delivers (`willDeliverAtTimeUp`) or on the
/// log (`log`).
///
/// One instance may be handed several notifications, and time-up comes on another thread:
/// each `didReceive` has its own state, all of it behind one lock, and each is delivered
/// exactly once.
open class PushSealNotificationService: UNNotificationServiceExtension {
    // Not Sendable, as UNNotificationServiceExtension is not: a subclass then needs no
    // conformance of its own (Swift 6 asks every subclass of an `@unchecked Sendable` class
    // to restate it). `inFlight` is read and written under `lock` only; a Work's mutable
    // members likewise. The content objects are handed between threads as the system hands them.

    /// Where keys are looked up: the Keychain, in the group the app shares with its extension.
    open var keyStore: any KeyStore { KeychainKeyStore(accessGroup: nil) }
    open var field: String { "enc" }
    open var placeholder: Placeholder { .standard }
    /// What a notification shows when the key store cannot answer (`locked`): by default the
    /// payload's own fallback alert, as it came.
    open var lockedContent: LockedContent { .fallbackAlert }
    /// Whose messages open: by default only allowed senders' once the store keeps a sender's
    /// key (`.sender`, from a `pss1` line).
    open var senders: SenderPolicy { .automatic }
    /// Where the messages opened are remembered, so one arriving again is a `duplicate`: a
    /// `SeenMessages` file in the App Group container (every instance of the extension, in
    /// any process, shares it). Return one instance, made once (a `static let`). The
    /// default, nil, remembers nothing.
    open var seenMessages: SeenMessages? { nil }
    /// What a duplicate shows: the placeholder's `duplicate` body (the default), or nothing,
    /// which needs the `com.apple.developer.usernotifications.filtering` entitlement (without
    /// it iOS shows the notification as it came).
    open var duplicates: DuplicateHandling { .placeholder }
    /// The system's budget: time-up comes about 30 s after `didReceive`. Content a hook
    /// finishes with later is not delivered (time-up has delivered by then). The system sets
    /// it, so it is not for a subclass to change: a shorter one only dropped content the
    /// system would still have shown.
    static let budget: TimeInterval = 30

    /// One notification's state, from `didReceive` to its one delivery.
    final class Work: @unchecked Sendable {
        let request: UNNotificationRequest
        let pending: PendingDelivery<UNNotificationContent>
        let started: Date
        // Under the service's lock:
        var opened: OpenedNotification?
        var bestAttempt: UNNotificationContent?

        init(request: UNNotificationRequest, pending: PendingDelivery<UNNotificationContent>, started: Date) {
            self.request = request
            self.pending = pending
            self.started = started
        }
    }

    private let lock = NSLock()
    private var inFlight: [Work] = []

    /// The opener as this instance's settings make it; `hpkeAvailable` is the system's.
    var opener: NotificationOpener {
        var opener = NotificationOpener(
            keys: keyStore, field: field, placeholder: placeholder, lockedContent: lockedContent, senders: senders, seen: seenMessages)
        if #available(iOS 17.0, macOS 14.0, macCatalyst 17.0, tvOS 17.0, visionOS 1.0, watchOS 10.0, *) {} else { opener.hpkeAvailable = false }
        return opener
    }

    open override func didReceive(
        _ request: UNNotificationRequest,
        withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        let started = Date()
        let work = Work(
            request: request,
            pending: PendingDelivery(deadline: started.addingTimeInterval(Self.budget), handler: contentHandler),
            started: started)
        lock.withLock { inFlight.append(work) }
        let opened = opener.open(userInfo: request.content.userInfo, now: started)
        guard opened.status != .passthrough, opened.status != .original else {
            deliver(request.content, for: work, opened: opened, atTimeUp: false)
            return
        }
        if opened.status == .duplicate, duplicates == .suppress {
            // Empty content: with the filtering entitlement iOS shows nothing.
            deliver(UNNotificationContent(), for: work, opened: opened, atTimeUp: false)
            return
        }
        let content = Self.content(request.content, changedBy: opened.changes, userInfo: opened.userInfo(over: request.content.userInfo))
        let best = content.copy() as? UNNotificationContent ?? content
        lock.withLock {
            work.opened = opened
            work.bestAttempt = best
        }
        // Time-up came while the store was asked: it has delivered, so no hook is started for
        // content that can no longer be shown (the late opening is counted as ignored).
        guard work.pending.ending == nil else {
            work.pending.complete(with: content)
            return
        }
        // The content was made for this call and nothing else holds it (time-up works on its
        // own copy), so the hook gets it as its own: `sending`, which lets a hook hand it to a
        // `Task` under Swift 6's checking.
        let handOver = HandOver(content)
        didOpen(opened, content: handOver.take(), request: request, delivery: ContentDelivery(service: self, work: work))
    }

    /// Called once the payload is opened, whatever came of it (not for a passthrough, nor
    /// for content with no text), with the content about to be delivered. Change it (an
    /// attachment, a communication notification, a badge) and call `delivery.finish(with:)`
    /// once, now or from another task or thread before `delivery.deadline`. `content` is the
    /// hook's own (`sending`), so `Task { …; delivery.finish(with: content) }` compiles clean
    /// in Swift 6. The default finishes at once. Content finished after time-up is not
    /// delivered: time-up delivers the opened content as it was before this hook (through
    /// `willDeliverAtTimeUp`).
    open func didOpen(
        _ opened: OpenedNotification, content: sending UNMutableNotificationContent, request: UNNotificationRequest,
        delivery: ContentDelivery
    ) {
        delivery.finish(with: content)
    }

    open override func serviceExtensionTimeWillExpire() {
        let works = lock.withLock { inFlight }
        for work in works {
            let (opened, best) = lock.withLock { (work.opened, work.bestAttempt) }
            let content: UNMutableNotificationContent
            if let best, let copy = best.mutableCopy() as? UNMutableNotificationContent {
                // Opened, and a hook still at work: what was opened, without the hook's changes.
                content = copy
            } else {
                let original = work.request.content
                content = Self.content(original, changedBy: opener.placeholderChanges(for: nil), userInfo: original.userInfo)
            }
            deliver(willDeliverAtTimeUp(content, opened: opened, request: work.request), for: work, opened: opened, atTimeUp: true)
        }
    }

    /// What time-up delivers for a notification not yet delivered: `content` is the opened
    /// content when the opening finished (`opened` says how), else the placeholder with its
    /// `deadline` body. Return it, changed or not; it must be quick (the system is ending the
    /// extension).
    open func willDeliverAtTimeUp(
        _ content: UNMutableNotificationContent, opened: OpenedNotification?,
        request: UNNotificationRequest
    ) -> UNNotificationContent {
        content
    }

    /// Each notification's outcome, once, when it is delivered: its status and why, never
    /// its text. The default writes what a developer must see (a store that is
    /// misconfigured or failing, an unreadable message) to the system log and nothing for a
    /// message that opened.
    open func log(_ outcome: DeliveryOutcome) {
        guard outcome.status != .decrypted, outcome.status != .passthrough else { return }
        // The line as the format, its percent signs doubled: no argument to bridge.
        NSLog(outcome.description.replacingOccurrences(of: "%", with: "%%"))
    }

    @discardableResult
    fileprivate func deliver(_ content: UNNotificationContent, for work: Work, opened: OpenedNotification?, atTimeUp: Bool) -> Bool {
        let delivered = atTimeUp ? work.pending.expire(with: content) : work.pending.complete(with: content)
        guard delivered else { return false }
        lock.withLock { inFlight.removeAll { $0 === work } }
        let outcome: DeliveryOutcome
        let elapsed = Date().timeIntervalSince(work.started)
        let identifier = work.request.identifier
        switch (opened, atTimeUp) {
        case (nil, true):
            outcome = DeliveryOutcome(
                requestIdentifier: identifier, status: .deadline, kid: nil,
                reason: "time ran out before the payload was opened", storeError: nil, elapsed: elapsed)
        case (let opened?, true):
            outcome = DeliveryOutcome(
                requestIdentifier: identifier, status: opened.status, kid: opened.kid,
                reason: "delivered at time-up, before didOpen finished" + (opened.reason.map { "; \($0)" } ?? ""),
                storeError: opened.storeError, elapsed: elapsed)
        case (let opened, false):
            outcome = DeliveryOutcome(
                requestIdentifier: identifier, status: opened?.status ?? .passthrough, kid: opened?.kid,
                reason: opened?.reason, storeError: opened?.storeError, elapsed: elapsed)
        }
        log(outcome)
        return true
    }

    /// A copy of `original` with every field `changes` sets written over it.
    static func content(
        _ original: UNNotificationContent, changedBy changes: AlertContent,
        userInfo: [AnyHashable: Any]
    ) -> UNMutableNotificationContent {
        let content = original.mutableCopy() as? UNMutableNotificationContent ?? UNMutableNotificationContent()
        if let title = changes.title { content.title = title }
        if let subtitle = changes.subtitle { content.subtitle = subtitle }
        if let body = changes.body { content.body = body }
        if let badge = changes.badge { content.badge = NSNumber(value: badge) }
        if let threadIdentifier = changes.threadIdentifier { content.threadIdentifier = threadIdentifier }
        if let categoryIdentifier = changes.categoryIdentifier { content.categoryIdentifier = categoryIdentifier }
        if let targetContentIdentifier = changes.targetContentIdentifier { content.targetContentIdentifier = targetContentIdentifier }
        var critical = false
        if #available(iOS 15.0, macOS 12.0, macCatalyst 15.0, visionOS 1.0, *) {
            if let score = changes.relevanceScore { content.relevanceScore = score }
            if let level = changes.interruptionLevel {
                content.interruptionLevel =
                    switch level {
                    case .passive: .passive
                    case .active: .active
                    case .timeSensitive: .timeSensitive
                    case .critical: .critical
                    }
            }
            critical = content.interruptionLevel == .critical
        } else {
            critical = changes.interruptionLevel == .critical
        }
        if let sound = changes.sound {
            // A critical alert plays a critical sound (with the entitlement); any other plays it as usual.
            content.sound =
                switch (sound, critical) {
                case ("default", false): .default
                case ("default", true): .defaultCritical
                case (_, false): UNNotificationSound(named: UNNotificationSoundName(sound))
                case (_, true): .criticalSoundNamed(UNNotificationSoundName(sound))
                }
        }
        content.userInfo = userInfo
        return content
    }
}

/// What the adapter delivers for a message opened before (`duplicate`).
public enum DuplicateHandling: Sendable, Equatable {
    /// The placeholder, with its `duplicate` body: the user sees that it came again.
    case placeholder
    /// Nothing: empty content, which iOS drops when the extension has the
    /// `com.apple.developer.usernotifications.filtering` entitlement.
    case suppress
}

/// A value the adapter made for one call and keeps no reference to, handed to the hook as
/// its own.
private struct HandOver<Value>: @unchecked Sendable {
    // Unchecked: taken once, right where it is made; nothing else holds the value.
    private let value: Value

    init(_ value: Value) { self.value = value }

    func take() -> Value { value }
}

/// How a `didOpen` hook hands over its content: once, from any thread, before `deadline`.
public final class ContentDelivery: @unchecked Sendable {
    // Unchecked: both members are immutable; delivering is PendingDelivery's, which locks.
    private let service: PushSealNotificationService
    private let work: PushSealNotificationService.Work

    fileprivate init(service: PushSealNotificationService, work: PushSealNotificationService.Work) {
        self.service = service
        self.work = work
    }

    /// When time-up is due; finish before it.
    public var deadline: Date { work.pending.deadline }

    /// Delivers `content`, unless this notification was delivered already (by time-up, or
    /// an earlier call, which is then counted as ignored): true if it was this call.
    @discardableResult
    public func finish(with content: UNNotificationContent) -> Bool {
        service.deliver(content, for: work, opened: service.opened(of: work), atTimeUp: false)
    }
}

extension PushSealNotificationService {
    fileprivate func opened(of work: Work) -> OpenedNotification? {
        lock.withLock { work.opened }
    }
}

/// Keys in the Keychain (generic passwords of service "pushseal", account "<kind>.<kid>"),
/// readable after first unlock, on this device only, by every app and extension of
/// `accessGroup` (the full group: your App ID prefix, a dot, the group).
public struct KeychainKeyStore: KeyStore {
    public let accessGroup: String?

    public init(accessGroup: String?) {
        self.accessGroup = accessGroup
    }

    public func lookUp(id: String) -> KeyLookup {
        guard SealedEnvelope.isKeyID(Substring(id)) else { return .missing }
        for kind in StoredKey.kinds {
            var query = base(account: "\(kind).\(id)")
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { continue }
            guard status == errSecSuccess, let bytes = result as? Data else {
                return .unavailable(Self.error(status == errSecSuccess ? errSecParam : status, "reading key \(id)"))
            }
            return StoredKey.key(kind: kind, bytes: bytes, id: id)
        }
        return .missing
    }

    /// Keeps `key` under `id`, replacing what was there in one step: the item is added, or
    /// updated in place when it exists, so a failure leaves the old key as it was.
    public func store(_ key: OpeningKey, id: String) throws(KeyStoreError) {
        try StoredKey.check(id: id)
        let (account, others, bytes) = StoredKey.entry(for: key, id: id)
        let query = base(account: account)
        var item = query
        item[kSecValueData as String] = bytes
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        var status = SecItemAdd(item as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let changes: [String: Any] = [
                kSecValueData as String: bytes,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            ]
            status = SecItemUpdate(query as CFDictionary, changes as CFDictionary)
        }
        guard status == errSecSuccess else { throw Self.error(status, "storing key \(id)") }
        // One id, one key: a key of another kind under this id gives way.
        for other in others {
            let removed = SecItemDelete(base(account: other) as CFDictionary)
            guard removed == errSecSuccess || removed == errSecItemNotFound else { throw Self.error(removed, "replacing key \(id)") }
        }
    }

    /// Removes the key under `id`, so the device stops opening what is sealed to it (and says
    /// `key-missing`); true if there was one.
    @discardableResult
    public func remove(id: String) throws(KeyStoreError) -> Bool {
        try StoredKey.check(id: id)
        var removed = false
        for kind in StoredKey.kinds {
            let status = SecItemDelete(base(account: "\(kind).\(id)") as CFDictionary)
            if status == errSecSuccess { removed = true } else if status != errSecItemNotFound { throw Self.error(status, "removing key \(id)") }
        }
        return removed
    }

    /// The ids of the keys kept, sorted.
    public func ids() throws(KeyStoreError) -> [String] {
        Set(try accounts().compactMap(StoredKey.id(ofName:))).sorted()
    }

    /// Whether an allowed sender's key (`pss1.<kid>`) is kept.
    public func knowsSenders() throws(KeyStoreError) -> Bool {
        try accounts().contains { $0.hasPrefix("pss1.") && StoredKey.id(ofName: $0) != nil }
    }

    /// Every account of the service in the group.
    private func accounts() throws(KeyStoreError) -> [String] {
        var query = base(account: nil)
        query[kSecReturnAttributes as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess, let items = result as? [[String: Any]] else { throw Self.error(status, "listing keys") }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }
    }

    private func base(account: String?) -> [String: Any] {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "pushseal"]
        if let account { query[kSecAttrAccount as String] = account }
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        #if os(macOS)
        // The iOS-style keychain, where access groups and accessibility mean what they do on a phone.
        query[kSecUseDataProtectionKeychain as String] = true
        #endif
        return query
    }

    /// The store's error for an OSStatus: a locked phone, a set-up the developer must fix, or another failure.
    static func error(_ status: OSStatus, _ doing: String) -> KeyStoreError {
        let text = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "OSStatus \(status)"
        switch status {
        case errSecInteractionNotAllowed:
            return KeyStoreError(.locked, status: status, "\(doing): the Keychain is locked until the device is first unlocked (\(status): \(text))")
        case errSecMissingEntitlement:
            return KeyStoreError(
                .misconfigured, status: status,
                "\(doing): this target is not entitled to the access group (\(status): \(text)); give the app and the extension the same Keychain Sharing group, named with the App ID prefix")
        default:
            return KeyStoreError(.failed, status: status, "\(doing): \(status): \(text)")
        }
    }
}
#endif

/// One notification's outcome as the adapter delivered it, for logs: what happened and why,
/// never a word of the message.
public struct DeliveryOutcome: Sendable, CustomStringConvertible {
    /// The `apns-id` the system gave the request.
    public let requestIdentifier: String
    /// The runner's status names: decrypted, passthrough, key-missing, locked, deadline, …
    public let status: OpenedNotification.Status
    public let kid: String?
    public let reason: String?
    /// For `locked`: the store's error (its kind says whether a developer must act).
    public let storeError: KeyStoreError?
    /// From `didReceive` to the delivery, in seconds.
    public let elapsed: Double

    public init(
        requestIdentifier: String, status: OpenedNotification.Status, kid: String?, reason: String?,
        storeError: KeyStoreError?, elapsed: Double
    ) {
        self.requestIdentifier = requestIdentifier
        self.status = status
        self.kid = kid
        self.reason = reason
        self.storeError = storeError
        self.elapsed = elapsed
    }

    public var description: String {
        var line = "pushseal: \(requestIdentifier) \(status.rawValue)"
        if let kid { line += " kid \(kid)" }
        if let storeError, storeError.kind == .misconfigured { line += " MISCONFIGURED" }
        if let reason { line += ": \(reason)" }
        return line + String(format: " (%.1f ms)", elapsed * 1000)
    }
}
