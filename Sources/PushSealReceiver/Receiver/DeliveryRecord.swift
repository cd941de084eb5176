import MonotonicTime
import PushSeal
import PushSealJSON

/// One line of `pushseal receive` output: what happened to one input.
package struct DeliveryRecord: Sendable {
    /// 1-based position of the input in arrival order.
    package let seq: Int
    /// Where the input came from: a file's path (a watched folder's file included),
    /// `stdin:LINE`, or `listen:CONNECTION/STREAM` for a request the listener took.
    package let source: String
    /// Set for what came through the listener: the device and the APNs headers.
    package let arrival: APNsRequestFields?
    /// What became of the input: exactly one of four ends.
    package let outcome: Outcome

    /// The four ends an input can have.
    package enum Outcome: Sendable {
        /// The extension runner delivered it (decrypted, a placeholder, Apple's fallback…).
        case delivered(Delivery)
        /// It was not a notification at all: why, and the `apns-id` answered for it (the
        /// listener answers a body that is not a payload with a 200).
        case malformed(problem: String, identifier: String?)
        /// The listener refused it with an APNs error, answered with this `apns-id`.
        case rejected(APNsRejection, identifier: String)
        /// The listener's request stream was reset before it ended: why, and the client's
        /// `apns-id` when it sent one.
        case reset(reason: String, identifier: String?)
    }

    package init(seq: Int, source: String, arrival: APNsRequestFields? = nil, outcome: Outcome) {
        self.seq = seq
        self.source = source
        self.arrival = arrival
        self.outcome = outcome
    }

    package init(seq: Int, source: String, delivery: Delivery, arrival: APNsRequestFields? = nil) {
        self.init(seq: seq, source: source, arrival: arrival, outcome: .delivered(delivery))
    }

    package init(seq: Int, source: String, problem: String, identifier: String? = nil, arrival: APNsRequestFields? = nil) {
        self.init(seq: seq, source: source, arrival: arrival, outcome: .malformed(problem: problem, identifier: identifier))
    }

    package init(seq: Int, source: String, rejected answer: APNsRejection, identifier: String, arrival: APNsRequestFields) {
        self.init(seq: seq, source: source, arrival: arrival, outcome: .rejected(answer, identifier: identifier))
    }

    package init(seq: Int, source: String, reset reason: String, identifier: String?, arrival: APNsRequestFields) {
        self.init(seq: seq, source: source, arrival: arrival, outcome: .reset(reason: reason, identifier: identifier))
    }

    /// The delivery, when the runner made one.
    package var delivery: Delivery? {
        if case .delivered(let delivery) = outcome { return delivery }
        return nil
    }

    /// Why the input was not a notification, when it was not.
    package var problem: String? {
        if case .malformed(let problem, _) = outcome { return problem }
        return nil
    }

    /// The listener's refusal and the `apns-id` it answered, when it refused.
    package var rejection: (answer: APNsRejection, identifier: String)? {
        if case .rejected(let answer, let identifier) = outcome { return (answer, identifier) }
        return nil
    }

    /// Why the listener's request stream was reset, when it was.
    package var reset: String? {
        if case .reset(let reason, _) = outcome { return reason }
        return nil
    }

    /// The `apns-id` of an input that has no delivery: the one answered for it, or the
    /// client's for a reset stream.
    package var identifier: String? {
        switch outcome {
        case .delivered: nil
        case .malformed(_, let identifier), .reset(_, let identifier): identifier
        case .rejected(_, let identifier): identifier
        }
    }

    package var status: DeliveryStatus {
        switch outcome {
        case .delivered(let delivery): delivery.status
        case .malformed: .malformed
        case .rejected: .rejected
        case .reset: .reset
        }
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
        guard case .delivered(let delivery) = outcome else {
            if let identifier { record.string("apns-id", identifier) } else { record.raw("apns-id", "null") }
            record.string("status", status.rawValue)
            record.string("title", "")
            record.string("subtitle", "")
            record.string("body", "")
            record.raw("kid", "null")
            record.raw("elapsed_ms", "0.000")
            record.string("source", source)
            record.arrival(arrival)
            switch outcome {
            case .rejected(let answer, _):
                record.member("http-status") { JSONWriter.writeInteger(Int64(answer.status), to: &$0) }
                record.string("reason", answer.reason)
            case .reset(let reason, _), .malformed(let reason, _):
                record.string("reason", reason)
            case .delivered:
                break
            }
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
            record.member("elapsed_ms") { delivery.elapsed.appendMillisecondsText(to: &$0) }
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
        delivered(delivery)
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

    /// How records are written out: one JSON object a line, or a few lines of text for a
    /// person at a terminal with a blank line after each. The bytes of a record are made
    /// here, whatever writes them.
    package enum Format: Sendable {
        case json(envelopeField: String)
        case text

        /// The record's bytes, line ending included.
        package func bytes(of record: DeliveryRecord) -> [UInt8] {
            var bytes: [UInt8]
            switch self {
            case .json(let field):
                bytes = []
                bytes.reserveCapacity(512)
                record.writeJSON(to: &bytes, envelopeField: field)
            case .text:
                bytes = Array((record.text + "\n").utf8)
            }
            bytes.append(UInt8(ascii: "\n"))
            return bytes
        }
    }

    /// A few lines for a person at a terminal. Everything that came from outside (texts,
    /// file names, reasons) is escaped, so no payload can forge a record or drive the
    /// terminal; each text line is indented, so only record headers start at column 0.
    package var text: String {
        let source = TerminalText.escaping(self.source)
        let delivery: Delivery
        switch outcome {
        case .delivered(let delivered):
            delivery = delivered
        case .rejected(let answer, _):
            let device = arrival?.device.map { "  device \(TerminalText.escaping($0))" } ?? ""
            return "#\(seq) rejected  \(source)\(device)\n   (\(answer.status) \(answer.reason))"
        case .malformed(let reason, _), .reset(let reason, _):
            return "#\(seq) \(status.rawValue)  \(source)\n   \(TerminalText.escaping(reason))"
        }
        let content = delivery.content
        var facts = [delivery.elapsed.millisecondsText + " ms"]
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
}
