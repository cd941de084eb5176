/// What the user finally saw for one notification, and how it came to be.
public struct Delivery: Sendable {
    public let request: NotificationRequest
    /// The content shown on screen.
    public let content: NotificationContent
    public let note: DeliveryNote
    /// From the runner taking the notification to the content taking effect.
    public let elapsed: Duration

    public init(request: NotificationRequest, content: NotificationContent, note: DeliveryNote, elapsed: Duration) {
        self.request = request
        self.content = content
        self.note = note
        self.elapsed = elapsed
    }

    public var status: DeliveryStatus { note.status }
}
