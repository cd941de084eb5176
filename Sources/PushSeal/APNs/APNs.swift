import SealCrypto

/// Apple's provider API in types, one model for both sides of pushseal: `send` writes these
/// headers and reads these answers; `receive --listen` reads the one and writes the other;
/// the CLI checks its options against the same cases. As Apple documents them in "Sending
/// notification requests to APNs" and "Handling notification responses from APNs".
public enum APNs {
    /// The request headers, by name.
    package enum Header: String, Sendable {
        case topic = "apns-topic"
        case pushType = "apns-push-type"
        case priority = "apns-priority"
        case expiration = "apns-expiration"
        case collapseID = "apns-collapse-id"
        case id = "apns-id"
        case authorization
        /// On a 429 or 503: seconds to wait before sending again (HTTP's own header).
        case retryAfter = "retry-after"
    }

    /// `apns-push-type`.
    public enum PushType: String, CaseIterable, Sendable {
        case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets, controls

        /// The most bytes APNs takes in a payload of this type.
        public var payloadByteLimit: Int { self == .voip ? 5_120 : 4_096 }
    }

    /// `apns-priority`.
    public enum Priority: String, CaseIterable, Sendable {
        /// Deliver now.
        case now = "10"
        /// When convenient for the device's power (and the only one background pushes take).
        case whenConvenient = "5"
        /// Whenever: prioritize the device's power.
        case background = "1"
    }

    /// The longest `apns-collapse-id` APNs takes, in bytes.
    package static let collapseIDLimit = 64

    /// A reason APNs gives with a refusal, and the status it comes with.
    package enum Reason: String, CaseIterable, Sendable, CustomStringConvertible {
        case badCollapseId = "BadCollapseId"
        case badDeviceToken = "BadDeviceToken"
        case badExpirationDate = "BadExpirationDate"
        case badMessageId = "BadMessageId"
        case badPriority = "BadPriority"
        case badTopic = "BadTopic"
        case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
        case duplicateHeaders = "DuplicateHeaders"
        case idleTimeout = "IdleTimeout"
        case invalidPushType = "InvalidPushType"
        case missingDeviceToken = "MissingDeviceToken"
        case missingTopic = "MissingTopic"
        case payloadEmpty = "PayloadEmpty"
        case topicDisallowed = "TopicDisallowed"
        case badCertificate = "BadCertificate"
        case badCertificateEnvironment = "BadCertificateEnvironment"
        case expiredProviderToken = "ExpiredProviderToken"
        case forbidden = "Forbidden"
        case invalidProviderToken = "InvalidProviderToken"
        case missingProviderToken = "MissingProviderToken"
        case unrelatedKeyIdInToken = "UnrelatedKeyIdInToken"
        case badEnvironmentKeyInToken = "BadEnvironmentKeyInToken"
        case badPath = "BadPath"
        case methodNotAllowed = "MethodNotAllowed"
        case expiredToken = "ExpiredToken"
        case unregistered = "Unregistered"
        case payloadTooLarge = "PayloadTooLarge"
        case tooManyProviderTokenUpdates = "TooManyProviderTokenUpdates"
        case tooManyRequests = "TooManyRequests"
        case internalServerError = "InternalServerError"
        case serviceUnavailable = "ServiceUnavailable"
        case shutdown = "Shutdown"
        /// Not one of Apple's reasons: HTTP/2's own answer to a header list over the limit,
        /// which the listener gives.
        case headerListTooLarge = "HeaderListTooLarge"

        package var status: Int {
            switch self {
            case .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
                .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
                .missingTopic, .payloadEmpty, .topicDisallowed:
                400
            case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken,
                .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyInToken:
                403
            case .badPath: 404
            case .methodNotAllowed: 405
            case .expiredToken, .unregistered: 410
            case .payloadTooLarge: 413
            case .tooManyProviderTokenUpdates, .tooManyRequests: 429
            case .internalServerError: 500
            case .serviceUnavailable, .shutdown: 503
            case .headerListTooLarge: 431
            }
        }

        /// The name APNs writes in `{"reason": …}`.
        package var reason: String { rawValue }
        package var description: String { "\(status) \(rawValue)" }
    }

    /// Statuses worth sending again: answers that say "not now" (502 and 504 come from a
    /// proxy or load balancer in front of the server, with no APNs reason).
    package static let temporaryStatuses: Set<Int> = [429, 500, 502, 503, 504]
}

/// The listener's name for a reason it answers with.
package typealias APNsRejection = APNs.Reason

extension APNs.Reason {
    /// Every answer the listener can give for a request, in the order it checks for them.
    package static let table: [APNs.Reason] = [
        .duplicateHeaders, .badMessageId, .methodNotAllowed, .missingTopic, .topicDisallowed, .badCollapseId,
        .badPriority, .invalidPushType, .badPath, .missingDeviceToken, .badDeviceToken, .unregistered,
        .missingProviderToken, .invalidProviderToken, .expiredProviderToken, .payloadEmpty, .payloadTooLarge,
        .badExpirationDate, .tooManyProviderTokenUpdates
    ]

    /// Answers that do not come from judging the request itself: its headers' size, and
    /// the listener's load.
    package static let limits: [APNs.Reason] = [.headerListTooLarge, .serviceUnavailable]
}

extension APNs {
    /// A UUID in APNs' uppercase form, as APNs assigns when the sender gives none.
    package static func newIdentifier() -> String {
        // Every input from a file or stdin gets one: the random bytes stay on the stack.
        var raw: (UInt64, UInt64) = (0, 0)
        _ = try? withUnsafeMutableBytes(of: &raw) { try SecureRandom.fillPublic($0) }
        return withUnsafeMutableBytes(of: &raw) { random in
            random[6] = random[6] & 0x0F | 0x40
            random[8] = random[8] & 0x3F | 0x80
            let source = UnsafeRawPointer(random.baseAddress!)
            return withUnsafeTemporaryAllocation(byteCount: 36, alignment: 1) { text in
                let target = text.baseAddress!
                // 8-4-4-4-12 digits: four bytes at a time, each write's surplus digits
                // overwritten by the next, then the dashes.
                for (from, to) in [(0, 0), (4, 9), (6, 14), (8, 19), (10, 24), (12, 28)] {
                    Hex.writeDigits(of: source + from, to: target + to, uppercase: true)
                }
                for dash in [8, 13, 18, 23] { text[dash] = UInt8(ascii: "-") }
                return String(decoding: text, as: UTF8.self)
            }
        }
    }
}
