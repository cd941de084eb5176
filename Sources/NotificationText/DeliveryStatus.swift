/// How a notification ended up on screen, and why it was not opened when it was not: the
/// one vocabulary of pushseal's outcomes. The Linux runner's delivery records, `doctor` and
/// `decrypt`, and PushSealKit's `OpenedNotification` and `OpeningError` all speak it. A
/// struct with static members, not an enum, so a new status is an addition, not a break.
public struct DeliveryStatus: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public var description: String { rawValue }

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The sealed alert was opened and shown.
    public static let decrypted = DeliveryStatus("decrypted")
    /// Not eligible for an extension, or no envelope: shown as it came.
    public static let passthrough = DeliveryStatus("passthrough")
    /// No usable key with the envelope's kid (unknown, or destroyed): placeholder.
    public static let keyMissing = DeliveryStatus("key-missing")
    /// The kid's key is disabled: placeholder.
    public static let keyDisabled = DeliveryStatus("key-disabled")
    /// The kid's key is past its grace period: placeholder.
    public static let keyExpired = DeliveryStatus("key-expired")
    /// The receiver allows only senders it knows, and this message is not authenticated by
    /// one of them (sealed with no sender key, or by a sender unknown, disabled or retired
    /// here): placeholder, and nothing of the content.
    public static let senderUntrusted = DeliveryStatus("sender-untrusted")
    /// The same message (its key and sealed `id`) was opened here before: recorded, and not
    /// shown as new again.
    public static let duplicate = DeliveryStatus("duplicate")
    /// The tag did not verify: placeholder, and no plaintext anywhere.
    public static let authenticationFailed = DeliveryStatus("auth-failed")
    /// The payload or envelope could not be read: placeholder, or no notification at all.
    public static let malformed = DeliveryStatus("malformed")
    /// The sealed alert's `exp` has passed: placeholder.
    public static let expired = DeliveryStatus("expired")
    /// The keyring could not be read when the envelope needed it (damaged, removed or made
    /// unreadable while the receiver ran): the key may be there, so the message is not given
    /// up as key-missing; shown as it came, the sender's fallback alert.
    public static let locked = DeliveryStatus("locked")
    /// Sealed in a version this build does not read (`ps9`, a later sender's): placeholder.
    public static let unsupported = DeliveryStatus("unsupported")
    /// The budget ran out and the extension answered `serviceExtensionTimeWillExpire`.
    public static let deadline = DeliveryStatus("deadline")
    /// The extension produced nothing usable in time, so iOS shows the original content.
    public static let original = DeliveryStatus("original")
    /// An external extension's own content was shown.
    public static let modified = DeliveryStatus("modified")
    /// The listener refused the request as APNs would, so no device was reached.
    public static let rejected = DeliveryStatus("rejected")
    /// The listener's request stream was reset before it ended (by the client, a protocol
    /// error or a limit), so nothing was answered and no device was reached.
    public static let reset = DeliveryStatus("reset")
}
