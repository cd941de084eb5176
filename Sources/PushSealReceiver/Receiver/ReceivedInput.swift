import PushSeal
import PushSealJSON
import SealCrypto

/// One input to the receiver, read into a request, or the reason it could not be.
package enum ReceivedInput: Sendable {
    case request(NotificationRequest)
    case unreadable(reason: String)

    /// The key `xcrun simctl push` files carry to name the app; not part of the payload.
    package static let simulatorBundleKey = "Simulator Target Bundle"

    /// Reads a payload as a receiver gets it. Accepted shapes:
    /// - an APNs payload: an object with `aps` (`.json`, or `.apns` for `simctl push`);
    /// - a wrapped one with the request headers: `{"apns-id":"…","headers":{…},"payload":{…}}`.
    /// `pushType` is the `apns-push-type` it came with, when a wrapped input does not say
    /// (the size limit depends on it).
    package init(bytes: UnsafeRawBufferPointer, pushType: String? = nil) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            self = .unreadable(reason: "not JSON: \(error)")
            return
        }
        guard case .object(var object) = value else {
            self = .unreadable(reason: "a payload is a JSON object, not \(value.kindName)")
            return
        }
        var headers: [String: String] = [:]
        if let pushType { headers[APNs.Header.pushType.rawValue] = pushType }
        var identifier: String?
        var wrapped = false
        if case .object(let payload)? = object["payload"], object["aps"] == nil {
            wrapped = true
            if case .object(let given)? = object["headers"] {
                for (name, value) in given {
                    if let text = value.stringValue { headers[name.lowercased()] = text }
                }
            }
            identifier = object["apns-id"]?.stringValue ?? headers["apns-id"]
            object = payload
        }
        guard case .object? = object["aps"] else {
            self = .unreadable(reason: "the payload has no 'aps' dictionary")
            return
        }
        // APNs refuses what is over its limit, so no device would ever run an extension on it.
        let limit = APNsRules.payloadByteLimit(pushTypeHeader: headers[APNs.Header.pushType.rawValue])
        let size = wrapped ? JSONWriter.bytes(.object(object)).count : Self.payloadByteCount(bytes)
        guard size <= limit else {
            self = .unreadable(reason: "the payload is \(size) bytes, over APNs' \(limit)-byte limit\(limit == Self.voipByteLimit ? " for voip" : "")")
            return
        }
        if let bundle = object[Self.simulatorBundleKey] {
            object[Self.simulatorBundleKey] = nil
            if let bundle = bundle.stringValue, headers["apns-topic"] == nil { headers["apns-topic"] = bundle }
        }
        self = .request(
            NotificationRequest(
                identifier: identifier ?? APNs.newIdentifier(),
                content: NotificationContent(payload: object),
                headers: headers))
    }

    /// Reads the body of an APNs request the listener accepted: a payload with `aps`,
    /// whose size APNs' rules have already passed.
    package init(payload bytes: UnsafeRawBufferPointer, identifier: String, arrival: APNsRequestFields) {
        guard let value = try? JSONParser.parse(bytes) else {
            self = .unreadable(reason: "the payload is not JSON")
            return
        }
        guard case .object(let object) = value, case .object? = object["aps"] else {
            self = .unreadable(reason: "the payload has no 'aps' dictionary")
            return
        }
        self = .request(
            NotificationRequest(
                identifier: identifier, content: NotificationContent(payload: object), arrival: arrival))
    }

    /// APNs' limit for `apns-push-type: voip`; every other type has `PayloadSealer.byteLimit`.
    package static let voipByteLimit = APNs.PushType.voip.payloadByteLimit

    /// A payload's size as APNs' limit judges it: its bytes without trailing white space (a
    /// file's last newline), docs/FORMAT.md §6 step 3.
    package static func payloadByteCount(_ bytes: UnsafeRawBufferPointer) -> Int {
        var end = bytes.count
        while end > 0, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[end - 1]) { end -= 1 }
        return end
    }

    package init(bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { ReceivedInput(bytes: $0) }
    }
}
