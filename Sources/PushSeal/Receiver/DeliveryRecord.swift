import PushSealJSON

/// One line of `pushseal receive` output: what happened to one input.
public struct DeliveryRecord: Sendable {
    /// 1-based position of the input in arrival order.
    public let seq: Int
    /// Where the input came from: a file name, or `stdin:LINE`.
    public let source: String
    public let delivery: Delivery?
    /// Set when the input was not a notification at all.
    public let problem: String?
    /// Set for what came through the listener: the device and the APNs headers.
    public let arrival: APNsRequestFields?
    /// Set when the listener refused the request, with the `apns-id` it answered.
    public let rejection: (answer: APNsRejection, identifier: String)?
    /// The `apns-id` of an input that has no delivery: the one answered with a 200 for a
    /// body that is not a payload, or the client's for a reset stream.
    public let identifier: String?
    /// Set when the listener's request stream was reset before it ended: why.
    public let reset: String?

    public init(seq: Int, source: String, delivery: Delivery, arrival: APNsRequestFields? = nil) {
        self.seq = seq
        self.source = source
        self.delivery = delivery
        self.problem = nil
        self.arrival = arrival
        self.rejection = nil
        self.identifier = nil
        self.reset = nil
    }

    public init(seq: Int, source: String, problem: String, identifier: String? = nil, arrival: APNsRequestFields? = nil) {
        self.seq = seq
        self.source = source
        self.delivery = nil
        self.problem = problem
        self.arrival = arrival
        self.rejection = nil
        self.identifier = identifier
        self.reset = nil
    }

    public init(seq: Int, source: String, rejected answer: APNsRejection, identifier: String, arrival: APNsRequestFields) {
        self.seq = seq
        self.source = source
        self.delivery = nil
        self.problem = nil
        self.arrival = arrival
        self.rejection = (answer, identifier)
        self.identifier = identifier
        self.reset = nil
    }

    public init(seq: Int, source: String, reset reason: String, identifier: String?, arrival: APNsRequestFields) {
        self.seq = seq
        self.source = source
        self.delivery = nil
        self.problem = nil
        self.arrival = arrival
        self.rejection = nil
        self.identifier = identifier
        self.reset = reason
    }

    public var status: DeliveryStatus {
        if rejection != nil { return .rejected }
        if reset != nil { return .reset }
        return delivery?.status ?? .malformed
    }

    /// The JSON line: `seq`, `apns-id`, `status`, `title`, `subtitle`, `body`, `kid`,
    /// `elapsed_ms` first, then `source`; from the listener `device` and the `apns-*`
    /// headers (null when absent), and `http-status` when rejected; then `reason`, every
    /// other alert field and `userInfo` when they have a value. Written
    /// straight to bytes: it is the receiver's per-notification output.
    package func writeJSON(to output: inout [UInt8], envelopeField: String) {
        var record = RecordWriter()
        swap(&record.output, &output)
        defer { swap(&record.output, &output) }
        record.member("seq") { JSONWriter.writeInteger(Int64(seq), to: &$0) }
        // The delivery is read in place, through a borrowing helper: binding it with
        // `guard let` copied the delivery and its content for every record.
        guard delivery != nil else {
            if let identifier { record.string("apns-id", identifier) } else { record.raw("apns-id", "null") }
            record.string("status", status.rawValue)
            record.string("title", "")
            record.string("subtitle", "")
            record.string("body", "")
            record.raw("kid", "null")
            record.raw("elapsed_ms", "0.000")
            record.string("source", source)
            record.arrival(arrival)
            if let rejection { record.member("http-status") { JSONWriter.writeInteger(Int64(rejection.answer.status), to: &$0) } }
            record.string("reason", rejection?.answer.reason ?? reset ?? problem ?? "")
            record.output.append(UInt8(ascii: "}"))
            return
        }
        func delivered(_ delivery: borrowing Delivery) {
            record.string("apns-id", delivery.request.identifier)
            record.string("status", delivery.status.rawValue)
            record.string("title", delivery.content.title)
            record.string("subtitle", delivery.content.subtitle)
            record.string("body", delivery.content.body)
            record.string("kid", delivery.note.kid)
            record.member("elapsed_ms") { Self.writeMilliseconds(delivery.elapsed, to: &$0) }
            record.string("source", source)
            record.arrival(arrival)
            if let reason = delivery.note.reason { record.string("reason", reason) }
            for field in AlertField.every where !field.isText {
                guard let value = delivery.content.fields[field] else { continue }
                record.output.append(UInt8(ascii: ","))
                JSONWriter.writeString(field.key, to: &record.output)
                record.output.append(UInt8(ascii: ":"))
                JSONWriter.write(value, to: &record.output)
            }
            // userInfo without what the record already shows: the aps dictionary and the envelope.
            var wroteUserInfo = false
            for (key, value) in delivery.content.userInfo where key != "aps" && key != envelopeField {
                if wroteUserInfo {
                    record.output.append(UInt8(ascii: ","))
                } else {
                    record.member("userInfo") { $0.append(UInt8(ascii: "{")) }
                    wroteUserInfo = true
                }
                JSONWriter.writeString(key, to: &record.output)
                record.output.append(UInt8(ascii: ":"))
                JSONWriter.write(value, to: &record.output)
            }
            if wroteUserInfo { record.output.append(UInt8(ascii: "}")) }
        }
        delivered(delivery!)
        record.output.append(UInt8(ascii: "}"))
    }

    /// A record's members as they are written, `"name":value` after a comma or the opening
    /// brace. A struct with mutating methods rather than functions nested in `writeJSON`:
    /// those captured the output, and every member paid a run-time exclusivity check.
    private struct RecordWriter {
        var output: [UInt8] = []
        var first = true

        mutating func member(_ name: StaticString, _ write: (inout [UInt8]) -> Void) {
            output.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
            first = false
            output.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { output.append(contentsOf: $0) }
            // Byte by byte: appending an array literal costs a call and a buffer each time.
            output.append(UInt8(ascii: "\""))
            output.append(UInt8(ascii: ":"))
            write(&output)
        }

        mutating func string(_ name: StaticString, _ value: String?) {
            member(name) { out in
                if let value { JSONWriter.writeString(value, to: &out) } else { JSONWriter.writeNull(to: &out) }
            }
        }

        mutating func raw(_ name: StaticString, _ text: StaticString) {
            member(name) { out in text.withUTF8Buffer { out.append(contentsOf: $0) } }
        }

        /// The device and the `apns-*` headers of what came through the listener.
        mutating func arrival(_ arrival: APNsRequestFields?) {
            arrival?.forEachMember { key, value in string(key, value) }
        }
    }

    /// A few lines for a person at a terminal. Everything that came from outside (texts,
    /// file names, reasons) is escaped, so no payload can forge a record or drive the
    /// terminal; each text line is indented, so only record headers start at column 0.
    public var text: String {
        let source = TerminalText.escaping(self.source)
        if let rejection {
            let device = arrival?.device.map { "  device \(TerminalText.escaping($0))" } ?? ""
            return "#\(seq) rejected  \(source)\(device)\n   (\(rejection.answer.status) \(rejection.answer.reason))"
        }
        guard let delivery else {
            return "#\(seq) \(status.rawValue)  \(source)\n   \(TerminalText.escaping(reset ?? problem ?? ""))"
        }
        let content = delivery.content
        var facts = [Self.milliseconds(delivery.elapsed) + " ms"]
        if let kid = delivery.note.kid { facts.insert("kid \(TerminalText.escaping(kid))", at: 0) }
        var lines = ["#\(seq) \(delivery.status.rawValue)  \(source)  (\(facts.joined(separator: ", ")))"]
        for line in [content.title, content.subtitle, content.body] where !line.isEmpty {
            lines.append("   " + TerminalText.escaping(line, keepingNewlines: true).split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n   "))
        }
        if delivery.status != .decrypted, delivery.status != .modified, let reason = delivery.note.reason {
            lines.append("   (\(TerminalText.escaping(reason)))")
        }
        return lines.joined(separator: "\n")
    }

    /// Milliseconds with three decimals, as JSON number text.
    static func milliseconds(_ duration: Duration) -> String {
        var text = [UInt8]()
        writeMilliseconds(duration, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The same, appended as bytes: every record carries one.
    static func writeMilliseconds(_ duration: Duration, to output: inout [UInt8]) {
        // Whole microseconds, rounded half away from zero, in integers: the two parts of a
        // duration carry the same sign.
        let (seconds, attoseconds) = duration.components
        let half: Int64 = attoseconds < 0 ? -500_000_000_000 : 500_000_000_000
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (sum, carry) = scaled.addingReportingOverflow((attoseconds + half) / 1_000_000_000_000)
        // Far beyond any delivery's time; held at the bound rather than trapping.
        let micros = overflow || carry ? (seconds < 0 ? Int64.min : .max) : sum
        let whole = micros / 1_000
        let fraction = Int(micros % 1_000).magnitude
        if micros < 0, whole == 0 { output.append(UInt8(ascii: "-")) }
        JSONWriter.writeInteger(whole, to: &output)
        output.append(UInt8(ascii: "."))
        output.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        output.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        output.append(UInt8(ascii: "0") + UInt8(fraction % 10))
    }
}
