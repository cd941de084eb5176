// A transcription for Linux, for tests only: the parts of Apple's UserNotifications that
// PushSealKit's adapter uses, each with its Swift signature and availability as Apple's
// documentation gives them (the page is named above each), so the adapter is compiled here
// by the same rules as on a device. It is not Apple's code and does nothing Apple's does
// beyond holding values: what it proves is that the adapter's calls type-check against
// these declarations and behave as tested, not what iOS does with the content.
//
// Nothing here is Sendable, as in Apple's SDK (the framework has no concurrency annotations
// yet), so the adapter is held to the strictest reading.
// Apple's module re-exports Foundation, so an extension that imports it alone has Foundation too.
@_exported import Foundation

/// https://developer.apple.com/documentation/usernotifications/unnotificationinterruptionlevel
@available(iOS 15.0, macOS 12.0, macCatalyst 15.0, tvOS 15.0, visionOS 1.0, watchOS 8.0, *)
public enum UNNotificationInterruptionLevel: UInt, @unchecked Sendable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3
}

/// https://developer.apple.com/documentation/usernotifications/unnotificationsoundname
@available(iOS 10.0, macOS 10.14, macCatalyst 13.0, tvOS 10.0, visionOS 1.0, watchOS 3.0, *)
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

/// https://developer.apple.com/documentation/usernotifications/unerror-swift.struct
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, tvOS 10.0, visionOS 1.0, watchOS 3.0, *)
public struct UNError: Error, Hashable {
    /// https://developer.apple.com/documentation/usernotifications/unerror-swift.struct/code
    public enum Code: Int, @unchecked Sendable {
        case notificationsNotAllowed = 1
        case attachmentInvalidURL = 100
        case attachmentUnrecognizedType = 101
        case attachmentInvalidFileSize = 102
        case attachmentNotInDataStore = 103
        case attachmentMoveIntoDataStoreFailed = 104
        case attachmentCorrupt = 105
        case notificationInvalidNoDate = 1400
        case notificationInvalidNoContent = 1401
        case contentProvidingObjectNotAllowed = 1500
        case contentProvidingInvalid = 1501
    }

    public let code: Code

    public init(_ code: Code) { self.code = code }

    public static var attachmentInvalidURL: Code { .attachmentInvalidURL }
    public static var attachmentUnrecognizedType: Code { .attachmentUnrecognizedType }
    public static var attachmentInvalidFileSize: Code { .attachmentInvalidFileSize }
    public static var contentProvidingObjectNotAllowed: Code { .contentProvidingObjectNotAllowed }
}

// Apple's name, as the SDK spells it.
// swift-format-ignore: AlwaysUseLowerCamelCase
/// https://developer.apple.com/documentation/usernotifications/unnotificationattachmentoptionstypehintkey
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, visionOS 1.0, watchOS 3.0, *)
@available(tvOS, unavailable)
public let UNNotificationAttachmentOptionsTypeHintKey = "UNNotificationAttachmentOptionsTypeHintKey"

/// https://developer.apple.com/documentation/usernotifications/unnotificationattachment
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, visionOS 1.0, watchOS 3.0, *)
@available(tvOS, unavailable)
open class UNNotificationAttachment: NSObject {
    private let storedIdentifier: String
    private let storedURL: URL
    private let storedType: String

    /// https://developer.apple.com/documentation/usernotifications/unnotificationattachment/identifier
    open var identifier: String { storedIdentifier }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationattachment/url
    open var url: URL { storedURL }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationattachment/type
    open var type: String { storedType }

    /// The types and largest sizes the documentation gives for attachments
    /// (https://developer.apple.com/documentation/usernotifications/unnotificationattachment):
    /// images 10 MB, audio 5 MB, movies 50 MB, told apart by the file's extension or a type hint.
    static let kinds: [(types: [String: String], limit: Int)] = [
        (["jpg": "public.jpeg", "jpeg": "public.jpeg", "gif": "com.compuserve.gif", "png": "public.png"], 10_000_000),
        (
            [
                "aif": "public.aiff-audio", "aiff": "public.aiff-audio", "wav": "com.microsoft.waveform-audio", "mp3": "public.mp3",
                "m4a": "public.mpeg-4-audio"
            ], 5_000_000
        ),
        (
            [
                "mpg": "public.mpeg", "mpeg": "public.mpeg", "mp2": "public.mpeg-2-video", "mp4": "public.mpeg-4",
                "m4v": "com.apple.m4v-video", "avi": "public.avi"
            ], 50_000_000
        )
    ]

    /// https://developer.apple.com/documentation/usernotifications/unnotificationattachment/init(identifier:url:options:)
    public convenience init(identifier: String, url URL: URL, options: [AnyHashable: Any]? = nil) throws {
        // Apple's refuses what is not a file that is there, a type it does not support, and a
        // file past its type's size: so does this one, with the same codes.
        guard URL.isFileURL, let attributes = try? FileManager.default.attributesOfItem(atPath: URL.path),
            attributes[.type] as? FileAttributeType == .typeRegular
        else { throw UNError(.attachmentInvalidURL) }
        let hint = options?[UNNotificationAttachmentOptionsTypeHintKey] as? String
        let extensionType = URL.pathExtension.lowercased()
        guard
            let kind = Self.kinds.first(where: { kind in
                hint.map { kind.types.values.contains($0) } ?? (kind.types[extensionType] != nil)
            })
        else { throw UNError(.attachmentUnrecognizedType) }
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        guard size > 0, size <= kind.limit else { throw UNError(.attachmentInvalidFileSize) }
        self.init(identifier: identifier, url: URL, type: hint ?? kind.types[extensionType]!)
    }

    init(identifier: String, url: URL, type: String) {
        storedIdentifier = identifier
        storedURL = url
        storedType = type
    }
}

/// https://developer.apple.com/documentation/usernotifications/unnotificationcontentproviding
@available(iOS 15.0, macOS 12.0, macCatalyst 15.0, visionOS 1.0, watchOS 8.0, *)
@available(tvOS, unavailable)
public protocol UNNotificationContentProviding: NSSecureCoding {}

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
    /// What `updating(from:)` was given: a test reads it back; Apple's keeps it private.
    public internal(set) var _contentProvider: AnyObject?

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
    @available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, watchOS 6.0, *)
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

    /// https://developer.apple.com/documentation/usernotifications/unnotificationcontent/updating(from:)
    /// A communication notification: the content as the provider (an `INSendMessageIntent`)
    /// makes it. Anything else is refused, as Apple's refuses what is not an intent it knows.
    @available(iOS 15.0, macOS 12.0, macCatalyst 15.0, visionOS 1.0, watchOS 8.0, *)
    @available(tvOS, unavailable)
    open func updating(from provider: any UNNotificationContentProviding) throws -> UNNotificationContent {
        guard String(describing: type(of: provider)) == "INSendMessageIntent" else {
            throw UNError(.contentProvidingObjectNotAllowed)
        }
        let updated = copyStorage(into: UNNotificationContent())
        updated._contentProvider = provider as AnyObject
        return updated
    }

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
        copy._contentProvider = _contentProvider
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
    @available(iOS 13.0, macOS 10.15, macCatalyst 13.1, tvOS 13.0, visionOS 1.0, watchOS 6.0, *)
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
    private let storedIdentifier: String
    private let storedContent: UNNotificationContent
    private let storedTrigger: UNNotificationTrigger?

    /// https://developer.apple.com/documentation/usernotifications/unnotificationrequest/identifier
    open var identifier: String { storedIdentifier }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationrequest/content
    open var content: UNNotificationContent { storedContent }
    /// https://developer.apple.com/documentation/usernotifications/unnotificationrequest/trigger
    open var trigger: UNNotificationTrigger? { storedTrigger }

    /// https://developer.apple.com/documentation/usernotifications/unnotificationrequest/init(identifier:content:trigger:)
    /// The content is copied, as Apple's `copy` property keeps it: changing the object passed
    /// in afterwards changes nothing here.
    public convenience init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.init(storedIdentifier: identifier, content: content.copy() as! UNNotificationContent, trigger: trigger)
    }

    init(storedIdentifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.storedIdentifier = storedIdentifier
        storedContent = content
        storedTrigger = trigger
    }
}

/// https://developer.apple.com/documentation/usernotifications/unnotification
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, tvOS 10.0, visionOS 1.0, watchOS 3.0, *)
open class UNNotification: NSObject {
    private let storedDate: Date
    private let storedRequest: UNNotificationRequest

    /// https://developer.apple.com/documentation/usernotifications/unnotification/date
    open var date: Date { storedDate }
    /// https://developer.apple.com/documentation/usernotifications/unnotification/request
    open var request: UNNotificationRequest { storedRequest }

    init(date: Date, request: UNNotificationRequest) {
        storedDate = date
        storedRequest = request
    }
}

/// https://developer.apple.com/documentation/usernotifications/unusernotificationcenter
/// Only what a service extension uses to see and remove what was delivered; the notifications
/// the system shows are put there by a test (`_didDeliver`).
@available(iOS 10.0, macOS 10.14, macCatalyst 13.1, tvOS 10.0, visionOS 1.0, watchOS 3.0, *)
open class UNUserNotificationCenter: NSObject {
    private let lock = NSLock()
    private var delivered: [UNNotification] = []
    nonisolated(unsafe) private static let shared = UNUserNotificationCenter()

    override init() {}

    /// https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/current()
    open class func current() -> UNUserNotificationCenter { shared }

    /// https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/getdeliverednotifications(completionhandler:)
    @available(tvOS, unavailable)
    open func getDeliveredNotifications(completionHandler: @escaping @Sendable ([UNNotification]) -> Void) {
        completionHandler(lock.withLock { delivered })
    }

    /// https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/deliverednotifications()
    @available(tvOS, unavailable)
    open func deliveredNotifications() async -> [UNNotification] {
        lock.withLock { delivered }
    }

    /// https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/removedeliverednotifications(withidentifiers:)
    @available(tvOS, unavailable)
    open func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {
        lock.withLock { delivered.removeAll { identifiers.contains($0.request.identifier) } }
    }

    /// https://developer.apple.com/documentation/usernotifications/unusernotificationcenter/removealldeliverednotifications()
    @available(tvOS, unavailable)
    open func removeAllDeliveredNotifications() {
        lock.withLock { delivered.removeAll() }
    }

    /// Not Apple's: what the system would show after delivering `content` for `request`.
    public func _didDeliver(_ content: UNNotificationContent, for request: UNNotificationRequest, at date: Date = Date()) {
        let shown = UNNotificationRequest(storedIdentifier: request.identifier, content: content.copy() as! UNNotificationContent, trigger: request.trigger)
        lock.withLock { delivered.append(UNNotification(date: date, request: shown)) }
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
