/// How a notification reached the listener: the device it was addressed to and its APNs
/// request headers, as its record shows them: as they came, before `APNsRules` judges them
/// against `APNs`' types, so that a record shows even a push type APNs does not know.
package struct APNsRequestFields: Sendable, Equatable {
    package var device: String? {
        get { storage.device }
        set { unique().device = newValue }
    }
    package var topic: String? {
        get { storage.topic }
        set { unique().topic = newValue }
    }
    package var pushType: String? {
        get { storage.pushType }
        set { unique().pushType = newValue }
    }
    package var priority: String? {
        get { storage.priority }
        set { unique().priority = newValue }
    }
    package var expiration: String? {
        get { storage.expiration }
        set { unique().expiration = newValue }
    }
    package var collapseID: String? {
        get { storage.collapseID }
        set { unique().collapseID = newValue }
    }

    /// The fields sit in one box, shared by copies until one is changed: the listener
    /// copies a request's fields into its request, its record and the hand-over between
    /// threads, and each copy is then one reference rather than six strings.
    private final class Storage: @unchecked Sendable {
        // Changed only through `unique()`, so never while another copy can read it.
        var device, topic, pushType, priority, expiration, collapseID: String?

        init(device: String?, topic: String?, pushType: String?, priority: String?, expiration: String?, collapseID: String?) {
            self.device = device
            self.topic = topic
            self.pushType = pushType
            self.priority = priority
            self.expiration = expiration
            self.collapseID = collapseID
        }
    }

    private var storage: Storage

    package init(
        device: String? = nil, topic: String? = nil, pushType: String? = nil,
        priority: String? = nil, expiration: String? = nil, collapseID: String? = nil
    ) {
        storage = Storage(
            device: device, topic: topic, pushType: pushType, priority: priority,
            expiration: expiration, collapseID: collapseID)
    }

    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) {
            storage = Storage(
                device: device, topic: topic, pushType: pushType, priority: priority,
                expiration: expiration, collapseID: collapseID)
        }
        return storage
    }

    package static func == (lhs: APNsRequestFields, rhs: APNsRequestFields) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.device == rhs.device && lhs.topic == rhs.topic && lhs.pushType == rhs.pushType
                && lhs.priority == rhs.priority && lhs.expiration == rhs.expiration && lhs.collapseID == rhs.collapseID)
    }

    /// Each record key and value, in the order records write them: called for every
    /// record from the listener, so no array of them is made.
    package func forEachMember(_ body: (_ key: StaticString, _ value: String?) -> Void) {
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
    package var headers: [String: String] {
        var headers: [String: String] = [:]
        forEachHeader { name, value in
            if let value { headers[name.description] = value }
        }
        return headers
    }
}
