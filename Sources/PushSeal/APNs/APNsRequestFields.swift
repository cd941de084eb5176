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

    /// Record keys and values, in the order records write them.
    public var members: [(key: StaticString, value: String?)] {
        [("device", device), ("apns-topic", topic), ("apns-push-type", pushType), ("apns-priority", priority),
         ("apns-expiration", expiration), ("apns-collapse-id", collapseID)]
    }

    /// The headers an extension sees in its request (never `authorization`).
    public var headers: [String: String] {
        var headers: [String: String] = [:]
        for (key, value) in members.dropFirst() {
            if let value { headers[key.description] = value }
        }
        return headers
    }
}
