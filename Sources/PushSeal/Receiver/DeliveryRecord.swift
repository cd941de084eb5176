/// One line of `pushseal receive` output: what happened to one input.
public struct DeliveryRecord: Sendable {
    /// 1-based position of the input in arrival order.
    public let seq: Int
    /// Where the input came from: a file name, or `stdin:LINE`.
    public let source: String
    public let delivery: Delivery?
    /// Set when the input was not a notification at all.
    public let problem: String?

    public init(seq: Int, source: String, delivery: Delivery) {
        self.seq = seq
        self.source = source
        self.delivery = delivery
        self.problem = nil
    }

    public init(seq: Int, source: String, problem: String) {
        self.seq = seq
        self.source = source
        self.delivery = nil
        self.problem = problem
    }

    public var status: DeliveryStatus { delivery?.status ?? .malformed }

    /// The JSON line: `seq`, `apns-id`, `status`, `title`, `subtitle`, `body`, `kid`,
    /// `elapsed_ms` first, then `source`, and `reason`, `badge`, `sound`, `thread-id`,
    /// `category`, `interruption-level`, `userInfo` when they have a value.
    public func json(envelopeField: String) -> JSONObject {
        var object = JSONObject()
        object.append("seq", .integer(seq))
        guard let delivery else {
            object.append("apns-id", .null)
            object.append("status", .string(DeliveryStatus.malformed.rawValue))
            object.append("title", .string(""))
            object.append("subtitle", .string(""))
            object.append("body", .string(""))
            object.append("kid", .null)
            object.append("elapsed_ms", .number("0.000"))
            object.append("source", .string(source))
            object.append("reason", .string(problem ?? ""))
            return object
        }
        let content = delivery.content
        object.append("apns-id", .string(delivery.request.identifier))
        object.append("status", .string(delivery.status.rawValue))
        object.append("title", .string(content.title))
        object.append("subtitle", .string(content.subtitle))
        object.append("body", .string(content.body))
        object.append("kid", delivery.note.kid.map(JSONValue.string) ?? .null)
        object.append("elapsed_ms", .number(Self.milliseconds(delivery.elapsed)))
        object.append("source", .string(source))
        object.append("reason", delivery.note.reason.map(JSONValue.string))
        object.append("badge", content.badge.map { .integer($0) })
        object.append("sound", content.sound.map(JSONValue.string))
        object.append("thread-id", content.threadIdentifier.isEmpty ? nil : JSONValue.string(content.threadIdentifier))
        object.append("category", content.categoryIdentifier.isEmpty ? nil : JSONValue.string(content.categoryIdentifier))
        object.append("interruption-level", content.interruptionLevel.map { .string($0.rawValue) })
        var userInfo = content.userInfo
        userInfo["aps"] = nil
        userInfo[envelopeField] = nil
        object.append("userInfo", userInfo.isEmpty ? nil : .object(userInfo))
        return object
    }

    /// A few lines for a person at a terminal.
    public var text: String {
        guard let delivery else {
            return "#\(seq) malformed  \(source)\n   \(problem ?? "")"
        }
        let content = delivery.content
        var facts = [Self.milliseconds(delivery.elapsed) + " ms"]
        if let kid = delivery.note.kid { facts.insert("kid \(kid)", at: 0) }
        var lines = ["#\(seq) \(delivery.status.rawValue)  \(source)  (\(facts.joined(separator: ", ")))"]
        for line in [content.title, content.subtitle, content.body] where !line.isEmpty {
            lines.append("   " + line.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n   "))
        }
        if delivery.status != .decrypted, delivery.status != .modified, let reason = delivery.note.reason {
            lines.append("   (\(reason))")
        }
        return lines.joined(separator: "\n")
    }

    /// Milliseconds with three decimals, as JSON number text.
    static func milliseconds(_ duration: Duration) -> String {
        let micros = Int64((duration.milliseconds * 1_000).rounded())
        let fraction = String(micros % 1_000)
        return "\(micros / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
