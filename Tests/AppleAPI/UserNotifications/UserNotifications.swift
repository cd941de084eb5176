// A transcription for Linux, for tests only: the parts of Apple's UserNotifications that
// PushSealKit's adapter uses, each with its Swift signature and availability as Apple's
// documentation gives them (the page is named above each), so the adapter is compiled here
// by the same rules as on a device. It is not Apple's code and does nothing Apple's does
// beyond holding values: what it proves is that the adapter's calls type-check against
// these declarations and behave as tested, not what iOS does with the content.
//
// Nothing here is Sendable, as in Apple's SDK (the framework has no concurrency annotations
// yet), so the adapter is held to the strictest reading.
import Foundation

/// https://developer.apple.com/documentation/usernotifications/unnotificationinterruptionlevel
@available(iOS 15.0, macOS 12.0, macCatalyst 15.0, tvOS 15.0, visionOS 1.0, watchOS 8.0, *)
public enum UNNotificationInterruptionLevel: UInt, @unchecked Sendable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3
}

/// https://developer.apple.com/documentation/usernotifications/unnotificationsoundname
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, visionOS 1.0, watchOS 3.0, *)
@available(tvOS, unavailable)
public struct UNNotificationSoundName: Hashable, Equatable, RawRepresentable, @unchecked Sendable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// https://developer.apple.com/documentation/usernotifications/unnotificationsound
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, visionOS 1.0, watchOS 3.0, *)
@available(tvOS, unavailable)
open class UNNotificationSound: NSObject, NSCopying {
    // What the tests read back; Apple's class keeps these private.
    let soundName: String?
    let isCritical: Bool

    init(soundName: String?, isCritical: Bool) {
        self.soundName = soundName
        self.isCritical = isCritical
    }

    /// https://developer.apple.com/documentation/usernotifications/unnotificationsound/default
    open class var `default`: UNNotificationSound { UNNotificationSound(soundName: nil, isCritical: false) }

    /// https://developer.apple.com/documentation/usernotifications/unnotificationsound/defaultcritical
    @available(iOS 12.0, macOS 10.14, macCatalyst 13.1, visionOS 1.0, watchOS 5.0, *)
    open class var defaultCritical: UNNotificationSound { UNNotificationSound(soundName: nil, isCritical: true) }

    /// https://developer.apple.com/documentation/usernotifications/unnotificationsound/init(named:)
    public convenience init(named name: UNNotificationSoundName) {
        self.init(soundName: name.rawValue, isCritical: false)
    }

    /// https://developer.apple.com/documentation/usernotifications/unnotificationsound/criticalsoundnamed(_:)
    @available(iOS 12.0, macOS 10.14, macCatalyst 13.1, visionOS 1.0, *)
    @available(watchOS, unavailable)
    open class func criticalSoundNamed(_ name: UNNotificationSoundName) -> Self {
        // `as! Self`: the transcription's sounds are never subclassed.
        UNNotificationSound(soundName: name.rawValue, isCritical: true) as! Self
    }

    /// https://developer.apple.com/documentation/usernotifications/unnotificationsound/defaultcriticalsound(withaudiovolume:)
    @available(iOS 12.0, macOS 10.14, macCatalyst 13.1, visionOS 1.0, watchOS 5.0, *)
    open class func defaultCriticalSound(withAudioVolume volume: Float) -> Self {
        UNNotificationSound(soundName: nil, isCritical: true) as! Self
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }
}

/// https://developer.apple.com/documentation/usernotifications/unnotificationattachment
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, visionOS 1.0, watchOS 3.0, *)
@available(tvOS, unavailable)
open class UNNotificationAttachment: NSObject {
    open var identifier: String
    open var url: URL
    open var type: String

    /// https://developer.apple.com/documentation/usernotifications/unnotificationattachment/init(identifier:url:options:)
    public init(identifier: String, url: URL, options: [AnyHashable: Any]? = nil) throws {
        // Apple's refuses a file that is not there; so does this one.
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw NSError(domain: "UNErrorDomain", code: 100, userInfo: [NSLocalizedDescriptionKey: "Invalid attachment file URL"])
        }
        self.identifier = identifier
        self.url = url
        type = url.pathExtension
    }
}

/// https://developer.apple.com/documentation/usernotifications/unnotificationcontent
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, tvOS 10.0, visionOS 1.0, watchOS 3.0, *)
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying {
    // Storage shared with UNMutableNotificationContent, which makes these settable.
    var storedTitle = ""
    var storedSubtitle = ""
    var storedBody = ""
    var storedBadge: NSNumber?
    var storedSound: AnyObject?
    var storedThreadIdentifier = ""
    var storedCategoryIdentifier = ""
    var storedTargetContentIdentifier: String?
    var storedUserInfo: [AnyHashable: Any] = [:]
    var storedAttachments: [AnyObject] = []
    var storedInterruptionLevel: UInt = 1
    var storedRelevanceScore = 0.0

    public override init() {}

    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/title
    open var title: String { storedTitle }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/subtitle
    open var subtitle: String { storedSubtitle }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/body
    open var body: String { storedBody }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/badge
    @available(tvOS 10.0, *)
    open var badge: NSNumber? { storedBadge }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/sound
    @available(tvOS, unavailable)
    open var sound: UNNotificationSound? { storedSound as? UNNotificationSound }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/threadidentifier
    open var threadIdentifier: String { storedThreadIdentifier }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/categoryidentifier
    open var categoryIdentifier: String { storedCategoryIdentifier }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/targetcontentidentifier
    @available(iOS 13.0, macOS 10.15, *)
    open var targetContentIdentifier: String? { storedTargetContentIdentifier }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/userinfo
    open var userInfo: [AnyHashable: Any] { storedUserInfo }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/attachments
    @available(tvOS, unavailable)
    open var attachments: [UNNotificationAttachment] { storedAttachments.compactMap { $0 as? UNNotificationAttachment } }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/interruptionlevel
    @available(iOS 15.0, macOS 12.0, macCatalyst 15.0, tvOS 15.0, visionOS 1.0, watchOS 8.0, *)
    open var interruptionLevel: UNNotificationInterruptionLevel { UNNotificationInterruptionLevel(rawValue: storedInterruptionLevel) ?? .active }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/relevancescore
    @available(iOS 15.0, macOS 12.0, macCatalyst 15.0, tvOS 15.0, visionOS 1.0, watchOS 8.0, *)
    open var relevanceScore: Double { storedRelevanceScore }

    public func copy(with zone: NSZone? = nil) -> Any { copyStorage(into: UNNotificationContent()) }

    public func mutableCopy(with zone: NSZone? = nil) -> Any { copyStorage(into: UNMutableNotificationContent()) }

    private func copyStorage<Content: UNNotificationContent>(into copy: Content) -> Content {
        copy.storedTitle = storedTitle
        copy.storedSubtitle = storedSubtitle
        copy.storedBody = storedBody
        copy.storedBadge = storedBadge
        copy.storedSound = storedSound
        copy.storedThreadIdentifier = storedThreadIdentifier
        copy.storedCategoryIdentifier = storedCategoryIdentifier
        copy.storedTargetContentIdentifier = storedTargetContentIdentifier
        copy.storedUserInfo = storedUserInfo
        copy.storedAttachments = storedAttachments
        copy.storedInterruptionLevel = storedInterruptionLevel
        copy.storedRelevanceScore = storedRelevanceScore
        return copy
    }
}

/// https://developer.apple.com/documentation/usernotifications/unmutablenotificationcontent
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, tvOS 10.0, visionOS 1.0, watchOS 3.0, *)
open class UNMutableNotificationContent: UNNotificationContent {
    open override var title: String {
        get { storedTitle }
        set { storedTitle = newValue }
    }
    open override var subtitle: String {
        get { storedSubtitle }
        set { storedSubtitle = newValue }
    }
    open override var body: String {
        get { storedBody }
        set { storedBody = newValue }
    }
    @available(tvOS 10.0, *)
    open override var badge: NSNumber? {
        get { storedBadge }
        set { storedBadge = newValue }
    }
    @available(tvOS, unavailable)
    open override var sound: UNNotificationSound? {
        get { storedSound as? UNNotificationSound }
        set { storedSound = newValue }
    }
    open override var threadIdentifier: String {
        get { storedThreadIdentifier }
        set { storedThreadIdentifier = newValue }
    }
    open override var categoryIdentifier: String {
        get { storedCategoryIdentifier }
        set { storedCategoryIdentifier = newValue }
    }
    @available(iOS 13.0, macOS 10.15, *)
    open override var targetContentIdentifier: String? {
        get { storedTargetContentIdentifier }
        set { storedTargetContentIdentifier = newValue }
    }
    open override var userInfo: [AnyHashable: Any] {
        get { storedUserInfo }
        set { storedUserInfo = newValue }
    }
    @available(tvOS, unavailable)
    open override var attachments: [UNNotificationAttachment] {
        get { storedAttachments.compactMap { $0 as? UNNotificationAttachment } }
        set { storedAttachments = newValue }
    }
    @available(iOS 15.0, macOS 12.0, macCatalyst 15.0, tvOS 15.0, visionOS 1.0, watchOS 8.0, *)
    open override var interruptionLevel: UNNotificationInterruptionLevel {
        get { UNNotificationInterruptionLevel(rawValue: storedInterruptionLevel) ?? .active }
        set { storedInterruptionLevel = newValue.rawValue }
    }
    @available(iOS 15.0, macOS 12.0, macCatalyst 15.0, tvOS 15.0, visionOS 1.0, watchOS 8.0, *)
    open override var relevanceScore: Double {
        get { storedRelevanceScore }
        set { storedRelevanceScore = newValue }
    }
}

/// https://developer.apple.com/documentation/usernotifications/unnotificationtrigger
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, tvOS 10.0, visionOS 1.0, watchOS 3.0, *)
open class UNNotificationTrigger: NSObject {
    open var repeats: Bool { false }
}

/// https://developer.apple.com/documentation/usernotifications/unnotificationrequest
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, tvOS 10.0, visionOS 1.0, watchOS 3.0, *)
open class UNNotificationRequest: NSObject {
    open var identifier: String
    @NSCopying open var content: UNNotificationContent
    open var trigger: UNNotificationTrigger?

    /// https://developer.apple.com/documentation/usernotifications/unnotificationrequest/init(identifier:content:trigger:)
    public init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
    }
}

/// https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, visionOS 1.0, watchOS 6.0, *)
@available(tvOS, unavailable)
open class UNNotificationServiceExtension: NSObject {
    public override init() {}

    /// https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension/didreceive(_:withcontenthandler:)
    open func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        contentHandler(request.content)
    }

    /// https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension/serviceextensiontimewillexpire()
    open func serviceExtensionTimeWillExpire() {}
}
