/// How a notification reached the listener: the device it was addressed to and its APNs
/// request headers, as its record shows them: as they came, before `APNsRules` judges them
/// against `APNs`' types, so that a record shows even a push type APNs does not know.
public struct APNsRequestFields: Sendable, Equatable {
    public var device: String?
    public var topic: String?
    public var pushType: String?
    public var priority: String?
    public var expiration: String?
    public var collapseID: String?

    public init(device: String? = nil, topic: String? = nil, pushType: String? = nil,
                priority: String? = nil, expiration: String? = nil, collapseID: String? = nil) {
        self.device = device
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
    }

    /// Each record key and value, in the order records write them: called for every
    /// record from the listener, so no array of them is made.
    public func forEachMember(_ body: (_ key: StaticString, _ value: String?) -> Void) {
        body("device", device)
        forEachHeader(body)
    }

    /// The `apns-*` headers among them, by name.
    private func forEachHeader(_ body: (_ name: StaticString, _ value: String?) -> Void) {
        body("apns-topic", topic)
        body("apns-push-type", pushType)
        body("apns-priority", priority)
        body("apns-expiration", expiration)
        body("apns-collapse-id", collapseID)
    }

    /// The headers an extension sees in its request (never `authorization`).
    public var headers: [String: String] {
        var headers: [String: String] = [:]
        forEachHeader { name, value in
            if let value { headers[name.description] = value }
        }
        return headers
    }
}
