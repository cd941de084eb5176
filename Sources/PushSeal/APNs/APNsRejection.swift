/// An answer APNs gives to a request it refuses: its `reason` and HTTP status, as Apple
/// documents them ("Handling notification responses from APNs").
public struct APNsRejection: Hashable, Sendable, CustomStringConvertible {
    public let reason: String
    public let status: Int
    public var description: String { "\(status) \(reason)" }

    init(_ reason: String, _ status: Int) {
        self.reason = reason
        self.status = status
    }

    public static let badCollapseId = APNsRejection("BadCollapseId", 400)
    public static let badDeviceToken = APNsRejection("BadDeviceToken", 400)
    public static let badExpirationDate = APNsRejection("BadExpirationDate", 400)
    public static let badMessageId = APNsRejection("BadMessageId", 400)
    public static let badPriority = APNsRejection("BadPriority", 400)
    public static let duplicateHeaders = APNsRejection("DuplicateHeaders", 400)
    public static let invalidPushType = APNsRejection("InvalidPushType", 400)
    public static let missingDeviceToken = APNsRejection("MissingDeviceToken", 400)
    public static let missingTopic = APNsRejection("MissingTopic", 400)
    public static let payloadEmpty = APNsRejection("PayloadEmpty", 400)
    public static let topicDisallowed = APNsRejection("TopicDisallowed", 400)
    public static let expiredProviderToken = APNsRejection("ExpiredProviderToken", 403)
    public static let invalidProviderToken = APNsRejection("InvalidProviderToken", 403)
    public static let missingProviderToken = APNsRejection("MissingProviderToken", 403)
    public static let badPath = APNsRejection("BadPath", 404)
    public static let methodNotAllowed = APNsRejection("MethodNotAllowed", 405)
    public static let unregistered = APNsRejection("Unregistered", 410)
    public static let payloadTooLarge = APNsRejection("PayloadTooLarge", 413)
    public static let tooManyProviderTokenUpdates = APNsRejection("TooManyProviderTokenUpdates", 429)
    /// Not one of Apple's reasons: HTTP/2's own answer to a header list over the limit.
    public static let headerListTooLarge = APNsRejection("HeaderListTooLarge", 431)
    /// The listener holds as many notifications as it can before their records are out.
    public static let serviceUnavailable = APNsRejection("ServiceUnavailable", 503)

    /// Every answer the listener can give, in the order it checks for them.
    public static let table: [APNsRejection] = [
        duplicateHeaders, badMessageId, methodNotAllowed, missingTopic, topicDisallowed, badCollapseId,
        badPriority, invalidPushType, badPath, missingDeviceToken, badDeviceToken, unregistered,
        missingProviderToken, invalidProviderToken, expiredProviderToken, payloadEmpty, payloadTooLarge,
        badExpirationDate, tooManyProviderTokenUpdates,
    ]

    /// Answers that do not come from judging the request itself: its headers' size, and
    /// the listener's load.
    public static let limits: [APNsRejection] = [headerListTooLarge, serviceUnavailable]
}
