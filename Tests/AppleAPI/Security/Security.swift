// swift-format-ignore-file: AlwaysUseLowerCamelCase

// A transcription for Linux, for tests only: the parts of Apple's Security framework that
// PushSealKit's Keychain store uses, with their Swift signatures and availability as Apple's
// documentation gives them (the page is named above each). Behind them is a simulated
// keychain held in memory (`KeychainSimulation`, which is not Apple's), so tests can lock it,
// withhold an entitlement or make a write fail, and see what the store makes of each status.
//
// CoreFoundation's types are transcribed as the Foundation classes they bridge to toll-free
// (`CFString` is `NSString`, `CFDictionary` is `NSDictionary`), since Linux has no
// CoreFoundation bridging: what compiles here is the store's Swift, not the CF bridging.
// CFString is Sendable in Apple's SDK and NSString is not on Linux, hence the constants'
// `nonisolated(unsafe)`: they are never written.
import Foundation

public typealias OSStatus = Int32
public typealias CFTypeRef = AnyObject
public typealias CFString = NSString
public typealias CFDictionary = NSDictionary

// Item class and attribute keys.
// https://developer.apple.com/documentation/security/ksecclass
nonisolated(unsafe) public let kSecClass: CFString = "class"
// https://developer.apple.com/documentation/security/ksecclassgenericpassword
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
// https://developer.apple.com/documentation/security/ksecattrservice
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
// https://developer.apple.com/documentation/security/ksecattraccount
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
// https://developer.apple.com/documentation/security/ksecattraccessgroup
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
// https://developer.apple.com/documentation/security/ksecattraccessible
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
// https://developer.apple.com/documentation/security/ksecattraccessibleafterfirstunlockthisdeviceonly
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
// https://developer.apple.com/documentation/security/ksecattraccessibleafterfirstunlock
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
// https://developer.apple.com/documentation/security/ksecvaluedata
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
// https://developer.apple.com/documentation/security/ksecreturndata
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
// https://developer.apple.com/documentation/security/ksecreturnattributes
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
// https://developer.apple.com/documentation/security/ksecmatchlimit
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
// https://developer.apple.com/documentation/security/ksecmatchlimitone
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
// https://developer.apple.com/documentation/security/ksecmatchlimitall
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
// https://developer.apple.com/documentation/security/ksecusedataprotectionkeychain
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, watchOS 6.0, *)
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"

// Result codes.
// https://developer.apple.com/documentation/security/errsecsuccess
public var errSecSuccess: OSStatus { 0 }
// https://developer.apple.com/documentation/security/errsecitemnotfound
public var errSecItemNotFound: OSStatus { -25300 }
// https://developer.apple.com/documentation/security/errsecduplicateitem
public var errSecDuplicateItem: OSStatus { -25299 }
// https://developer.apple.com/documentation/security/errsecinteractionnotallowed
public var errSecInteractionNotAllowed: OSStatus { -25308 }
// https://developer.apple.com/documentation/security/errsecmissingentitlement
public var errSecMissingEntitlement: OSStatus { -34018 }
// https://developer.apple.com/documentation/security/errsecnotavailable
public var errSecNotAvailable: OSStatus { -25291 }
// https://developer.apple.com/documentation/security/errsecparam
public var errSecParam: OSStatus { -50 }

/// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:)
@available(iOS 2.0, macOS 10.6, macCatalyst 13.1, tvOS 9.0, visionOS 1.0, watchOS 2.0, *)
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    KeychainSimulation.shared.copyMatching(query as! [String: Any], result)
}

/// https://developer.apple.com/documentation/security/secitemadd(_:_:)
@available(iOS 2.0, macOS 10.6, macCatalyst 13.1, tvOS 9.0, visionOS 1.0, watchOS 2.0, *)
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    KeychainSimulation.shared.add(attributes as! [String: Any])
}

/// https://developer.apple.com/documentation/security/secitemupdate(_:_:)
@available(iOS 2.0, macOS 10.6, macCatalyst 13.1, tvOS 9.0, visionOS 1.0, watchOS 2.0, *)
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    KeychainSimulation.shared.update(query as! [String: Any], attributesToUpdate as! [String: Any])
}

/// https://developer.apple.com/documentation/security/secitemdelete(_:)
@available(iOS 2.0, macOS 10.6, macCatalyst 13.1, tvOS 9.0, visionOS 1.0, watchOS 2.0, *)
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    KeychainSimulation.shared.delete(query as! [String: Any])
}

/// https://developer.apple.com/documentation/security/seccopyerrormessagestring(_:_:)
@available(iOS 11.3, macOS 10.3, macCatalyst 13.1, tvOS 11.3, visionOS 1.0, watchOS 4.3, *)
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    switch status {
    case errSecItemNotFound: "The specified item could not be found in the keychain."
    case errSecInteractionNotAllowed: "User interaction is not allowed."
    case errSecMissingEntitlement: "A required entitlement isn't present."
    case errSecDuplicateItem: "The specified item already exists in the keychain."
    default: "OSStatus \(status)" as NSString
    }
}

/// Not Apple's: the keychain behind the functions above, one per process, which tests set up.
/// Generic passwords are kept by access group, service and account. A locked device answers
/// `errSecInteractionNotAllowed` for items readable only after first unlock (as before the
/// first unlock after a reboot); an access group outside `entitledGroups` answers
/// `errSecMissingEntitlement`, as a build without Keychain Sharing does.
public final class KeychainSimulation: @unchecked Sendable {
    // Unchecked: every member is read and written under `lock`.
    public static let shared = KeychainSimulation()

    private struct Item {
        var data: Data
        var accessible: String
    }
    private let lock = NSLock()
    private var items: [String: Item] = [:]
    private var isLocked = false
    private var groups: Set<String> = []
    private var failures: [String: OSStatus] = [:]
    private var calls: [String] = []

    /// The group items go to when a query names none: the app's first group.
    public static let defaultGroup = "ABCDE12345.com.example.app"

    /// Back to an unlocked device with no items, entitled to the default group and `groups`.
    public func reset(entitledGroups: Set<String> = []) {
        lock.withLock {
            items = [:]
            isLocked = false
            groups = entitledGroups.union([Self.defaultGroup])
            failures = [:]
            calls = []
        }
    }

    /// Locks the device (no first unlock since reboot) or unlocks it.
    public func setLocked(_ locked: Bool) { lock.withLock { isLocked = locked } }

    /// The next call of `function` ("SecItemAdd", "SecItemUpdate", …) answers `status`.
    public func failNext(_ function: String, with status: OSStatus) { lock.withLock { failures[function] = status } }

    /// The functions called since the last reset, in order.
    public var callLog: [String] { lock.withLock { calls } }

    /// The accounts held in `group` (the default one when nil).
    public func accounts(group: String? = nil) -> [String] {
        lock.withLock { items.keys.filter { $0.hasPrefix((group ?? Self.defaultGroup) + "\u{1}") }.map { String($0.split(separator: "\u{1}").last ?? "") }.sorted() }
    }

    private func key(group: String, service: String, account: String) -> String {
        group + "\u{1}" + service + "\u{1}" + account
    }

    /// The status every call starts with: a planned failure, a missing entitlement, or nil.
    private func gate(_ function: String, _ query: [String: Any]) -> (OSStatus?, String) {
        calls.append(function)
        let group = query[kSecAttrAccessGroup as String] as? String ?? Self.defaultGroup
        if let status = failures.removeValue(forKey: function) { return (status, group) }
        guard groups.contains(group) else { return (errSecMissingEntitlement, group) }
        guard query[kSecClass as String] as? String == kSecClassGenericPassword as String else { return (errSecParam, group) }
        return (nil, group)
    }

    private func matching(_ query: [String: Any], group: String) -> [(String, Item)] {
        let service = query[kSecAttrService as String] as? String
        let account = query[kSecAttrAccount as String] as? String
        return items.filter { entry in
            let parts = entry.key.split(separator: "\u{1}", omittingEmptySubsequences: false).map(String.init)
            return parts[0] == group && (service == nil || parts[1] == service) && (account == nil || parts[2] == account)
        }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    private func lockedOut(_ item: Item) -> Bool {
        isLocked && item.accessible != "ak" && item.accessible != "dk"
    }

    func copyMatching(_ query: [String: Any], _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
        lock.withLock {
            let (failure, group) = gate("SecItemCopyMatching", query)
            if let failure { return failure }
            let found = matching(query, group: group)
            if found.contains(where: { lockedOut($0.1) }) { return errSecInteractionNotAllowed }
            guard !found.isEmpty else { return errSecItemNotFound }
            let all = query[kSecMatchLimit as String] as? String == kSecMatchLimitAll as String
            let wantsData = query[kSecReturnData as String] as? Bool == true
            func answer(_ entry: (String, Item)) -> AnyObject {
                guard query[kSecReturnAttributes as String] as? Bool == true else { return entry.1.data as NSData }
                let parts = entry.0.split(separator: "\u{1}", omittingEmptySubsequences: false).map(String.init)
                var attributes: [String: Any] = [
                    kSecAttrAccessGroup as String: parts[0], kSecAttrService as String: parts[1],
                    kSecAttrAccount as String: parts[2]
                ]
                if wantsData { attributes[kSecValueData as String] = entry.1.data }
                return attributes as NSDictionary
            }
            result?.pointee = all ? found.map(answer) as NSArray : answer(found[0])
            return errSecSuccess
        }
    }

    func add(_ attributes: [String: Any]) -> OSStatus {
        lock.withLock {
            let (failure, group) = gate("SecItemAdd", attributes)
            if let failure { return failure }
            guard let service = attributes[kSecAttrService as String] as? String,
                let account = attributes[kSecAttrAccount as String] as? String,
                let data = attributes[kSecValueData as String] as? Data
            else { return errSecParam }
            let accessible = attributes[kSecAttrAccessible as String] as? String ?? "ak"
            if isLocked && accessible != "ak" && accessible != "dk" { return errSecInteractionNotAllowed }
            let name = key(group: group, service: service, account: account)
            guard items[name] == nil else { return errSecDuplicateItem }
            items[name] = Item(data: data, accessible: accessible)
            return errSecSuccess
        }
    }

    func update(_ query: [String: Any], _ changes: [String: Any]) -> OSStatus {
        lock.withLock {
            let (failure, group) = gate("SecItemUpdate", query)
            if let failure { return failure }
            let found = matching(query, group: group)
            if found.contains(where: { lockedOut($0.1) }) { return errSecInteractionNotAllowed }
            guard !found.isEmpty else { return errSecItemNotFound }
            for (name, var item) in found {
                if let data = changes[kSecValueData as String] as? Data { item.data = data }
                if let accessible = changes[kSecAttrAccessible as String] as? String { item.accessible = accessible }
                items[name] = item
            }
            return errSecSuccess
        }
    }

    func delete(_ query: [String: Any]) -> OSStatus {
        lock.withLock {
            let (failure, group) = gate("SecItemDelete", query)
            if let failure { return failure }
            let found = matching(query, group: group)
            guard !found.isEmpty else { return errSecItemNotFound }
            for (name, _) in found { items[name] = nil }
            return errSecSuccess
        }
    }
}
