import PushSealJSON
import SealCrypto

/// What carries an envelope over Web Push: `{"<field>":"<envelope>"}`, no `aps` (a browser
/// shows nothing by itself: the receiving web app's service worker opens the envelope and
/// shows the notification). RFC 8291 then encrypts it once more for the subscription, so it
/// must fit one record: at most `WebPushEncryption.maximumMessageByteCount` bytes.
package struct WebPushPayload: Sendable, PayloadWrapping {
    package static let byteLimit = WebPushEncryption.maximumMessageByteCount

    package let field: String
    /// `{"<field>":"`: the same bytes before every envelope.
    private let prefix: [UInt8]

    package init(field: String = APNsPayload.defaultField) throws {
        try APNsPayload.validate(field: field)
        self.field = field
        var prefix = [UInt8(ascii: "{")]
        JSONWriter.writeString(field, to: &prefix)
        prefix.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: "\"")])
        self.prefix = prefix
    }

    /// Appends the payload around an envelope, or throws `tooLarge` (by how many bytes)
    /// before sealing anything. `output` is left as it was when anything throws.
    package func append(envelopeByteCount: Int, to output: inout [UInt8], writeEnvelope: (inout [UInt8]) throws -> Void) throws {
        let size = prefix.count + envelopeByteCount + 2
        guard size <= Self.byteLimit else {
            throw PayloadError(
                .tooLarge, "the Web Push message would be \(size) bytes, \(size - Self.byteLimit) over the \(Self.byteLimit) bytes one push message carries")
        }
        try appendClosingString(after: prefix, to: &output, writeEnvelope: writeEnvelope)
    }
}
