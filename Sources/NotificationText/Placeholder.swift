/// The text shown when a sealed alert cannot be shown; the receiver's words, never secret.
/// One title, and a body for each reason: the user learns whether to fetch a key, distrust
/// the message, or just open the app. The Linux runner and PushSealKit share this one
/// definition, so a phone and `pushseal receive` say the same words.
public struct Placeholder: Sendable, Equatable {
    public var title: String
    /// No usable key for the message's kid (unknown, destroyed, disabled or past its grace).
    public var keyMissing: String
    /// The message was altered or damaged (auth-failed, malformed).
    public var unreadable: String
    /// The sealed `exp` has passed.
    public var expired: String
    /// Time ran out before it was opened.
    public var deadline: String
    /// Sealed in a way this receiver cannot open: a later envelope version, or ps2 on a
    /// phone whose system has no HPKE (before iOS 17).
    public var unsupported: String
    /// Not sealed by a sender this receiver allows (`sender-untrusted`): the content is not
    /// shown, and the words say not to act on the message.
    public var untrustedSender: String
    /// Opened here before (`duplicate`): shown where a receiver shows a repeat at all.
    public var duplicate: String

    /// The statuses a body may be given for.
    public static let reasons: [DeliveryStatus] = [.keyMissing, .authenticationFailed, .expired, .deadline, .unsupported, .senderUntrusted, .duplicate]

    public static let standard = Placeholder(
        title: "Encrypted notification", keyMissing: "This device does not have the key to open this message.",
        unreadable: "This message could not be decrypted on this device.", expired: "This message has expired.",
        deadline: "This message could not be opened in time.",
        unsupported: "This message needs a newer version of the app or system to open.",
        untrustedSender: "This message is not from a sender this device trusts, so it is not shown.",
        duplicate: "This message was already shown.")

    public init(
        title: String, keyMissing: String, unreadable: String, expired: String, deadline: String,
        unsupported: String = Placeholder.standard.unsupported, untrustedSender: String = Placeholder.standard.untrustedSender,
        duplicate: String = Placeholder.standard.duplicate
    ) {
        self.title = title
        self.keyMissing = keyMissing
        self.unreadable = unreadable
        self.expired = expired
        self.deadline = deadline
        self.unsupported = unsupported
        self.untrustedSender = untrustedSender
        self.duplicate = duplicate
    }

    /// One body for every reason.
    public init(title: String, body: String) {
        self.init(
            title: title, keyMissing: body, unreadable: body, expired: body, deadline: body, unsupported: body, untrustedSender: body,
            duplicate: body)
    }

    /// Sets the body shown for `status` (one of `reasons`; false for another).
    public mutating func setBody(_ body: String, for status: DeliveryStatus) -> Bool {
        switch status {
        case .keyMissing: keyMissing = body
        case .authenticationFailed: unreadable = body
        case .expired: expired = body
        case .deadline: deadline = body
        case .unsupported: unsupported = body
        case .senderUntrusted: untrustedSender = body
        case .duplicate: duplicate = body
        default: return false
        }
        return true
    }

    /// The body shown with `status`: a missing, disabled or expired key says the key is
    /// missing; a damaged or altered message says it could not be read.
    public func body(for status: DeliveryStatus) -> String {
        switch status {
        case .keyMissing, .keyDisabled, .keyExpired: keyMissing
        case .expired: expired
        case .deadline: deadline
        case .unsupported: unsupported
        case .senderUntrusted: untrustedSender
        case .duplicate: duplicate
        default: unreadable
        }
    }
}
