// The Apple adapter: a Notification Service Extension an app can use as is (or subclass) and a
// Keychain key store. It only forwards: every decision is NotificationOpener's or
// PendingDelivery's, which are tested on Linux. This file compiles only where UserNotifications
// and Security exist, so it has NOT been compiled by this project's machines (Linux); keep it
// small enough to review by eye.
#if canImport(UserNotifications) && canImport(Security)
import CryptoKit
import Foundation
import Security
import UserNotifications

/// Name it as the extension's principal class (NSExtensionPrincipalClass), or subclass it to
/// change the store, the field or the placeholder.
open class PushSealNotificationService: UNNotificationServiceExtension {
    /// Where keys are looked up: the Keychain, in the group the app shares with its extension.
    open var keyStore: any KeyStore { KeychainKeyStore(accessGroup: nil) }
    open var field: String { "enc" }
    open var placeholder: Placeholder { .standard }

    private var pending: PendingDelivery<UNNotificationContent>?
    private var original: UNNotificationContent?

    private var opener: NotificationOpener {
        NotificationOpener(keys: keyStore, field: field, placeholder: placeholder)
    }

    open override func didReceive(_ request: UNNotificationRequest,
                                  withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        // The system calls time up after about 30 s; the deadline here only orders the two.
        let pending = PendingDelivery<UNNotificationContent>(deadline: Date().addingTimeInterval(30), handler: contentHandler)
        self.pending = pending
        original = request.content
        let opened = opener.open(userInfo: request.content.userInfo)
        guard opened.status != .passthrough else {
            pending.complete(with: request.content)
            return
        }
        pending.complete(with: Self.content(request.content, changedBy: opened.changes, userInfo: opened.userInfo(over: request.content.userInfo)))
    }

    open override func serviceExtensionTimeWillExpire() {
        guard let pending, let original else { return }
        pending.expire(with: Self.content(original, changedBy: opener.placeholderChanges(for: nil), userInfo: original.userInfo))
    }

    /// A copy of `original` with every field `changes` sets written over it.
    static func content(_ original: UNNotificationContent, changedBy changes: AlertContent,
                        userInfo: [AnyHashable: Any]) -> UNNotificationContent {
        guard let content = original.mutableCopy() as? UNMutableNotificationContent else { return original }
        if let title = changes.title { content.title = title }
        if let subtitle = changes.subtitle { content.subtitle = subtitle }
        if let body = changes.body { content.body = body }
        if let badge = changes.badge { content.badge = NSNumber(value: badge) }
        if let threadIdentifier = changes.threadIdentifier { content.threadIdentifier = threadIdentifier }
        if let categoryIdentifier = changes.categoryIdentifier { content.categoryIdentifier = categoryIdentifier }
        if let targetContentIdentifier = changes.targetContentIdentifier { content.targetContentIdentifier = targetContentIdentifier }
        if let score = changes.relevanceScore { content.relevanceScore = score }
        if let level = changes.interruptionLevel {
            content.interruptionLevel = switch level {
            case .passive: .passive
            case .active: .active
            case .timeSensitive: .timeSensitive
            case .critical: .critical
            }
        }
        if let sound = changes.sound {
            let critical = content.interruptionLevel == .critical
            content.sound = switch (sound, critical) {
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

/// Keys in the Keychain (generic passwords of service "pushseal", account "<kind>.<kid>"),
/// readable after first unlock and by every app and extension of `accessGroup`.
public struct KeychainKeyStore: KeyStore {
    public let accessGroup: String?

    public init(accessGroup: String?) {
        self.accessGroup = accessGroup
    }

    public func key(id: String) -> OpeningKey? {
        if let secret = read(account: "psk1." + id), secret.count == 32 { return .secret(SymmetricKey(data: secret)) }
        if let scalar = read(account: "prk1." + id), let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: scalar) {
            return .recipient(key)
        }
        return nil
    }

    /// Keeps `key` under `id`, replacing what was there.
    public func store(_ key: OpeningKey, id: String) throws {
        let (account, bytes): (String, Data) = switch key {
        case .secret(let secret): ("psk1." + id, secret.withUnsafeBytes { Data($0) })
        case .recipient(let privateKey): ("prk1." + id, privateKey.rawRepresentation)
        }
        let query = base(account: account)
        SecItemDelete(query as CFDictionary)
        var item = query
        item[kSecValueData as String] = bytes
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else { throw OpeningError(.keyMissing, "the Keychain refused the key (\(status))") }
    }

    private func base(account: String) -> [String: Any] {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "pushseal",
                                    kSecAttrAccount as String: account]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private func read(account: String) -> Data? {
        var query = base(account: account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? Data
    }
}
#endif
