/// The emulation of `UNNotificationServiceExtension`: one fresh instance per notification.
///
/// `didReceive` must eventually call the content handler; the runner calls
/// `serviceExtensionTimeWillExpire` on another thread when the budget runs out, and the
/// extension should then deliver its best attempt at once.
public protocol NotificationServiceExtension: AnyObject, Sendable {
    func didReceive(_ request: NotificationRequest, contentHandler: ContentHandler)
    func serviceExtensionTimeWillExpire()
}

/// What an extension says about its content beyond the content itself, for the record.
public struct DeliveryNote: Sendable, Equatable {
    public var status: DeliveryStatus
    public var kid: String?
    /// Why a placeholder or the original was shown; never secret.
    public var reason: String?

    public init(status: DeliveryStatus, kid: String? = nil, reason: String? = nil) {
        self.status = status
        self.kid = kid
        self.reason = reason
    }
}

/// The block iOS passes to `didReceive`. The first call takes effect; later calls are
/// ignored and counted, as on iOS.
public struct ContentHandler: Sendable {
    let deliver: @Sendable (NotificationContent, DeliveryNote?) -> Void

    public init(_ deliver: @escaping @Sendable (NotificationContent, DeliveryNote?) -> Void) {
        self.deliver = deliver
    }

    /// Apple's form: hand over the content to show.
    public func callAsFunction(_ content: NotificationContent) {
        deliver(content, nil)
    }

    /// Hands over the content with a note for the delivery record.
    public func callAsFunction(_ content: NotificationContent, note: DeliveryNote) {
        deliver(content, note)
    }
}
