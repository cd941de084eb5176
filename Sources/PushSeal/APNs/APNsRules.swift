import PushSealJSON

/// What the listener accepts, and the checks APNs makes of a request, in the order Pushy's
/// MockApnsServer makes them (the first failing check is the answer).
package struct APNsRules: Sendable {
    /// Known device tokens (lowercase hex); empty accepts every well-formed token.
    package var devices: Set<String>
    /// Tokens answered 410 Unregistered.
    package var unregistered: Set<String>
    /// Accepted topics; empty accepts any.
    package var topics: Set<String>
    package var tokens: ProviderTokens
    /// The 410 answer's `timestamp`: when the tokens stopped being valid (ms since 1970).
    package var unregisteredSince: Int64

    package init(
        devices: Set<String> = [], unregistered: Set<String> = [], topics: Set<String> = [],
        tokens: ProviderTokens, unregisteredSince: Int64
    ) {
        self.devices = Set(devices.map { $0.lowercased() })
        self.unregistered = Set(unregistered.map { $0.lowercased() })
        self.topics = topics
        self.tokens = tokens
        self.unregisteredSince = unregisteredSince
    }

    /// The most bytes APNs takes in a payload whose `apns-push-type` header is `header`:
    /// an alert's when there is none, or one APNs does not know.
    package static func payloadByteLimit(pushTypeHeader header: String?) -> Int {
        (header.flatMap(APNs.PushType.init(rawValue:)) ?? .alert).payloadByteLimit
    }
    /// Device tokens are hex: 32 bytes today, up to 100 allowed for.
    package static let deviceTokenLengths = 64...200

    /// A device token as APNs takes it: ASCII hex, an even number of digits, of a length
    /// devices use. (Character.isHexDigit would also let fullwidth digits through.)
    package static func isDeviceToken(_ text: some StringProtocol) -> Bool {
        // Through a contiguous buffer: the generic UTF8View walk was a sixth of send's time
        // at a million devices.
        String(text).withUTF8Bytes { bytes in
            deviceTokenLengths.contains(bytes.count) && bytes.count % 2 == 0 && bytes.allSatisfy(isHexDigit)
        }
    }

    @inline(__always)
    static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
    }

    /// A request as the listener judges it.
    package enum Verdict: Sendable {
        case accepted(identifier: String, arrival: APNsRequestFields)
        case rejected(APNsRejection, identifier: String, arrival: APNsRequestFields)
    }

    /// Judges one request. `bodyLength` is the whole body's, which may be longer than what
    /// was kept of it.
    package func judge(method: String, path: String, headers: [(name: String, value: String)], bodyLength: Int) -> Verdict {
        // One pass over the headers: this runs for every request.
        var arrival = APNsRequestFields(device: Self.deviceToken(in: path))
        var given: String?
        var authorization: String?
        var duplicated = false
        func take(_ value: String, into slot: inout String?) {
            duplicated = duplicated || slot != nil
            slot = value
        }
        for header in headers {
            switch header.name {
            case APNs.Header.topic.rawValue: take(header.value, into: &arrival.topic)
            case APNs.Header.pushType.rawValue: take(header.value, into: &arrival.pushType)
            case APNs.Header.priority.rawValue: take(header.value, into: &arrival.priority)
            case APNs.Header.expiration.rawValue: take(header.value, into: &arrival.expiration)
            case APNs.Header.collapseID.rawValue: take(header.value, into: &arrival.collapseID)
            case APNs.Header.id.rawValue: take(header.value, into: &given)
            case APNs.Header.authorization.rawValue: take(header.value, into: &authorization)
            default:
                // Unknown apns-* headers are ignored by APNs, but not when repeated.
                if header.name.hasPrefix("apns-"), !duplicated {
                    duplicated = headers.filter { $0.name == header.name }.count > 1
                }
            }
        }
        let device = arrival.device
        let identifier = given.flatMap { Self.isUUID($0) ? $0 : nil } ?? APNs.newIdentifier()
        func reject(_ rejection: APNsRejection) -> Verdict { .rejected(rejection, identifier: identifier, arrival: arrival) }

        if duplicated { return reject(.duplicateHeaders) }
        if let given, !Self.isUUID(given) { return reject(.badMessageId) }
        guard method == "POST" else { return reject(.methodNotAllowed) }
        guard let topic = arrival.topic, !topic.isEmpty else { return reject(.missingTopic) }
        if !topics.isEmpty, !topics.contains(topic) { return reject(.topicDisallowed) }
        if let collapse = arrival.collapseID, collapse.utf8.count > APNs.collapseIDLimit { return reject(.badCollapseId) }
        if let priority = arrival.priority, APNs.Priority(rawValue: priority) == nil { return reject(.badPriority) }
        if let type = arrival.pushType, APNs.PushType(rawValue: type) == nil { return reject(.invalidPushType) }
        guard let device else { return reject(.badPath) }
        // As APNs: the provider token before the device token, so a request refused for its
        // device token alone had its credentials accepted (`pushseal doctor send` relies on it).
        if let problem = tokens.check(authorization: authorization) { return reject(problem) }
        guard !device.isEmpty else { return reject(.missingDeviceToken) }
        guard Self.isDeviceToken(device) else { return reject(.badDeviceToken) }
        let token = device.withUTF8Bytes { $0.contains { $0 >= 0x41 && $0 <= 0x46 } } ? device.lowercased() : device
        if unregistered.contains(token) { return reject(.unregistered) }
        if !devices.isEmpty, !devices.contains(token) { return reject(.badDeviceToken) }
        guard bodyLength > 0 else { return reject(.payloadEmpty) }
        guard bodyLength <= Self.payloadByteLimit(pushTypeHeader: arrival.pushType) else { return reject(.payloadTooLarge) }
        if let expiration = arrival.expiration, Int64(expiration).map({ $0 < 0 }) ?? true {
            return reject(.badExpirationDate)
        }
        return .accepted(identifier: identifier, arrival: arrival)
    }

    /// The token in `/3/device/<token>`; "" when the path stops there, nil for other paths.
    package static func deviceToken(in path: String) -> String? {
        // Over the path's contiguous bytes: this runs for every request, and the generic
        // UTF8View walks it replaced were 3% of the listener's instructions.
        return path.withUTF8Bytes { bytes -> String? in
            let prefix: StaticString = "/3/device"
            let start = prefix.utf8CodeUnitCount
            guard bytes.count >= start, prefix.withUTF8Buffer({ $0.elementsEqual(bytes[..<start]) }) else { return nil }
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
            if end == start { return "" }
            guard bytes[start] == UInt8(ascii: "/") else { return nil }
            let token = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<end])
            return token.contains(UInt8(ascii: "/")) ? nil : String(decoding: token, as: UTF8.self)
        }
    }

    /// 8-4-4-4-12 hex digits, either case.
    package static func isUUID(_ text: String) -> Bool {
        text.withUTF8Bytes { bytes in
            guard bytes.count == 36 else { return false }
            for (index, byte) in bytes.enumerated() {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard byte == UInt8(ascii: "-") else { return false }
                } else {
                    guard isHexDigit(byte) else { return false }
                }
            }
            return true
        }
    }

    /// The JSON body of a rejection: `{"reason":"…"}`, with `timestamp` for 410.
    package func body(for rejection: APNsRejection) -> [UInt8] {
        var body = Array("{\"reason\":\"\(rejection.reason)\"".utf8)
        if rejection.status == 410 { body.append(contentsOf: ",\"timestamp\":\(unregisteredSince)".utf8) }
        body.append(UInt8(ascii: "}"))
        return body
    }
}
