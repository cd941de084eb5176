// A transcription for Linux, for tests only: the parts of Apple's Intents that a Notification
// Service Extension uses to make a communication notification (an `INSendMessageIntent`
// handed to `UNNotificationContent.updating(from:)`), each with its Swift signature and
// availability as Apple's documentation gives them (the page is named above each). It holds
// values and does nothing Apple's does with them; `donate` records the interaction.
//
// Nothing here is Sendable, as in Apple's SDK.
// Apple's module re-exports Foundation, so an extension that imports it alone has Foundation too.
@_exported import Foundation
import UserNotifications

/// https://developer.apple.com/documentation/intents/inpersonhandletype
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 3.2, *)
public enum INPersonHandleType: Int, @unchecked Sendable {
    case unknown = 0
    case emailAddress = 1
    case phoneNumber = 2
}

/// https://developer.apple.com/documentation/intents/inpersonhandle
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 3.2, *)
open class INPersonHandle: NSObject {
    private let storedValue: String?
    private let storedType: INPersonHandleType

    /// https://developer.apple.com/documentation/intents/inpersonhandle/value
    open var value: String? { storedValue }
    /// https://developer.apple.com/documentation/intents/inpersonhandle/type
    open var type: INPersonHandleType { storedType }

    /// https://developer.apple.com/documentation/intents/inpersonhandle/init(value:type:)
    public init(value: String?, type: INPersonHandleType) {
        storedValue = value
        storedType = type
    }
}

/// https://developer.apple.com/documentation/intents/inimage
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 3.2, *)
open class INImage: NSObject {
    private let storedData: Data?

    /// https://developer.apple.com/documentation/intents/inimage/init(imagedata:)
    public init(imageData: Data) {
        storedData = imageData
    }

    /// https://developer.apple.com/documentation/intents/inimage/init(named:)
    public convenience init(named name: String) {
        self.init(imageData: Data(name.utf8))
    }
}

/// https://developer.apple.com/documentation/intents/inspeakablestring
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 3.2, *)
open class INSpeakableString: NSObject {
    private let storedPhrase: String

    /// https://developer.apple.com/documentation/intents/inspeakablestring/spokenphrase
    open var spokenPhrase: String { storedPhrase }

    /// https://developer.apple.com/documentation/intents/inspeakablestring/init(spokenphrase:)
    public init(spokenPhrase: String) {
        storedPhrase = spokenPhrase
    }
}

/// https://developer.apple.com/documentation/intents/inperson
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 3.2, *)
open class INPerson: NSObject {
    private let storedHandle: INPersonHandle?
    private let storedNameComponents: PersonNameComponents?
    private let storedDisplayName: String?
    private let storedImage: INImage?
    private let storedContactIdentifier: String?
    private let storedCustomIdentifier: String?
    private let storedIsMe: Bool

    /// https://developer.apple.com/documentation/intents/inperson/personhandle
    open var personHandle: INPersonHandle? { storedHandle }
    /// https://developer.apple.com/documentation/intents/inperson/namecomponents
    open var nameComponents: PersonNameComponents? { storedNameComponents }
    /// https://developer.apple.com/documentation/intents/inperson/displayname
    open var displayName: String { storedDisplayName ?? storedHandle?.value ?? "" }
    /// https://developer.apple.com/documentation/intents/inperson/image
    open var image: INImage? { storedImage }
    /// https://developer.apple.com/documentation/intents/inperson/contactidentifier
    open var contactIdentifier: String? { storedContactIdentifier }
    /// https://developer.apple.com/documentation/intents/inperson/customidentifier
    open var customIdentifier: String? { storedCustomIdentifier }
    /// https://developer.apple.com/documentation/intents/inperson/isme
    @available(iOS 12.0, macOS 10.14, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 5.0, *)
    open var isMe: Bool { storedIsMe }

    /// https://developer.apple.com/documentation/intents/inperson/init(personhandle:namecomponents:displayname:image:contactidentifier:customidentifier:)
    public init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?
    ) {
        storedHandle = personHandle
        storedNameComponents = nameComponents
        storedDisplayName = displayName
        storedImage = image
        storedContactIdentifier = contactIdentifier
        storedCustomIdentifier = customIdentifier
        storedIsMe = false
    }

    /// https://developer.apple.com/documentation/intents/inperson/init(personhandle:namecomponents:displayname:image:contactidentifier:customidentifier:isme:)
    @available(iOS 12.0, macOS 10.14, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 5.0, *)
    public init(
        personHandle: INPersonHandle, nameComponents: PersonNameComponents?, displayName: String?, image: INImage?,
        contactIdentifier: String?, customIdentifier: String?, isMe: Bool
    ) {
        storedHandle = personHandle
        storedNameComponents = nameComponents
        storedDisplayName = displayName
        storedImage = image
        storedContactIdentifier = contactIdentifier
        storedCustomIdentifier = customIdentifier
        storedIsMe = isMe
    }
}

/// https://developer.apple.com/documentation/intents/inintent
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 3.2, *)
open class INIntent: NSObject, NSCopying, NSSecureCoding {
    public override init() {}

    public required init?(coder: NSCoder) { nil }

    public func encode(with coder: NSCoder) {}

    public static var supportsSecureCoding: Bool { true }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// https://developer.apple.com/documentation/intents/inintent/identifier
    open var identifier: String? { nil }
}

/// https://developer.apple.com/documentation/intents/inintentresponse
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 3.2, *)
open class INIntentResponse: NSObject {
    public override init() {}
}

/// https://developer.apple.com/documentation/intents/inoutgoingmessagetype
@available(iOS 14.0, macOS 12.0, macCatalyst 14.0, visionOS 1.0, watchOS 7.0, *)
@available(tvOS, unavailable)
public enum INOutgoingMessageType: Int, @unchecked Sendable {
    case unknown = 0
    case outgoingMessageText = 1
    case outgoingMessageAudio = 2
}

/// https://developer.apple.com/documentation/intents/insendmessageattachment
/// (made by Apple from an audio file only; a notification passes `nil`)
@available(iOS 14.0, macOS 12.0, macCatalyst 14.0, visionOS 1.0, watchOS 7.0, *)
@available(tvOS, unavailable)
open class INSendMessageAttachment: NSObject {}

/// https://developer.apple.com/documentation/intents/insendmessageintent
@available(iOS 10.0, macOS 12.0, macCatalyst 13.1, visionOS 1.0, watchOS 3.2, *)
@available(tvOS, unavailable)
open class INSendMessageIntent: INIntent, UNNotificationContentProviding {
    private var storedRecipients: [INPerson]?
    private var storedType = INOutgoingMessageType.unknown
    private var storedContent: String?
    private var storedGroupName: INSpeakableString?
    private var storedConversation: String?
    private var storedService: String?
    private var storedSender: INPerson?

    /// https://developer.apple.com/documentation/intents/insendmessageintent/recipients
    open var recipients: [INPerson]? { storedRecipients }
    /// https://developer.apple.com/documentation/intents/insendmessageintent/outgoingmessagetype
    @available(iOS 14.0, macOS 12.0, macCatalyst 14.0, visionOS 1.0, watchOS 7.0, *)
    open var outgoingMessageType: INOutgoingMessageType { storedType }
    /// https://developer.apple.com/documentation/intents/insendmessageintent/content
    open var content: String? { storedContent }
    /// https://developer.apple.com/documentation/intents/insendmessageintent/speakablegroupname
    open var speakableGroupName: INSpeakableString? { storedGroupName }
    /// https://developer.apple.com/documentation/intents/insendmessageintent/conversationidentifier
    open var conversationIdentifier: String? { storedConversation }
    /// https://developer.apple.com/documentation/intents/insendmessageintent/servicename
    open var serviceName: String? { storedService }
    /// https://developer.apple.com/documentation/intents/insendmessageintent/sender
    open var sender: INPerson? { storedSender }

    /// https://developer.apple.com/documentation/intents/insendmessageintent/init(recipients:outgoingmessagetype:content:speakablegroupname:conversationidentifier:servicename:sender:attachments:)
    @available(iOS 14.0, macOS 12.0, macCatalyst 14.0, visionOS 1.0, watchOS 7.0, *)
    public init(
        recipients: [INPerson]?, outgoingMessageType: INOutgoingMessageType, content: String?,
        speakableGroupName: INSpeakableString?, conversationIdentifier: String?, serviceName: String?, sender: INPerson?,
        attachments: [INSendMessageAttachment]?
    ) {
        storedRecipients = recipients
        storedType = outgoingMessageType
        storedContent = content
        storedGroupName = speakableGroupName
        storedConversation = conversationIdentifier
        storedService = serviceName
        storedSender = sender
        super.init()
    }

    public required init?(coder: NSCoder) { nil }
}

/// https://developer.apple.com/documentation/intents/ininteractiondirection
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 3.2, *)
public enum INInteractionDirection: Int, @unchecked Sendable {
    case unspecified = 0
    case outgoing = 1
    case incoming = 2
}

/// https://developer.apple.com/documentation/intents/ininteraction
@available(iOS 10.0, macOS 10.12, macCatalyst 13.1, tvOS 14.0, visionOS 1.0, watchOS 3.2, *)
open class INInteraction: NSObject {
    private let storedIntent: INIntent
    private let storedResponse: INIntentResponse?

    /// https://developer.apple.com/documentation/intents/ininteraction/intent
    open var intent: INIntent { storedIntent }
    /// https://developer.apple.com/documentation/intents/ininteraction/intentresponse
    open var intentResponse: INIntentResponse? { storedResponse }
    /// https://developer.apple.com/documentation/intents/ininteraction/direction
    open var direction: INInteractionDirection = .unspecified

    /// https://developer.apple.com/documentation/intents/ininteraction/init(intent:response:)
    public init(intent: INIntent, response: INIntentResponse?) {
        storedIntent = intent
        storedResponse = response
    }

    /// https://developer.apple.com/documentation/intents/ininteraction/donate(completion:)
    open func donate(completion: ((Error?) -> Void)? = nil) {
        completion?(nil)
    }

    /// https://developer.apple.com/documentation/intents/ininteraction/donate(completion:)
    /// (its `async` form)
    open func donate() async throws {}
}
