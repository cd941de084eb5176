import PushSealJSON

/// What carries an envelope to APNs: `{"aps":<fallback alert>,"<field>":"<envelope>"}`,
/// within APNs' byte limit for the push type. The envelope is sealed elsewhere
/// (`EnvelopeSealer`); this writes what is around it.
package struct APNsPayload: Sendable, PayloadWrapping {
    /// APNs refuses an alert's payload over 4096 bytes (5120 for voip).
    package static let byteLimit = APNs.PushType.alert.payloadByteLimit
    package static let defaultField = "enc"

    package let fallback: FallbackAlert
    package let field: String
    /// The most bytes a payload may have: APNs' limit for the push type it goes out as.
    package let byteLimit: Int
    /// `{"aps":{…},"<field>":"`: the same bytes before every envelope, built once.
    private let prefix: [UInt8]

    package init(fallback: FallbackAlert = .standard, field: String = defaultField, byteLimit: Int = APNsPayload.byteLimit) throws {
        try Self.validate(field: field)
        guard fallback.hasText else {
            throw PayloadError(.invalidAlert, "the fallback alert needs a title, a body or a localization key, or iOS will not run the extension")
        }
        self.init(checked: fallback, field: field, byteLimit: byteLimit)
    }

    /// The standard fallback alert in the standard field, which need no checks.
    package static func standard(byteLimit: Int = APNsPayload.byteLimit) -> APNsPayload {
        APNsPayload(checked: .standard, field: defaultField, byteLimit: byteLimit)
    }

    private init(checked fallback: FallbackAlert, field: String, byteLimit: Int) {
        self.fallback = fallback
        self.field = field
        self.byteLimit = byteLimit
        prefix = Self.prefix(fallback, field: field)
    }

    /// The field must be a custom key beside `aps`.
    package static func validate(field: String) throws {
        guard !field.isEmpty, field != "aps", field.utf8.count <= 64 else {
            throw PayloadError(.invalidAlert, "the envelope field must be a name of 1 to 64 bytes other than 'aps'")
        }
    }

    /// `{"aps":{…},"<field>":"`.
    private static func prefix(_ fallback: FallbackAlert, field: String) -> [UInt8] {
        var prefix = Array("{\"aps\":".utf8)
        JSONWriter.write(.object(fallback.aps()), to: &prefix)
        prefix.append(UInt8(ascii: ","))
        JSONWriter.writeString(field, to: &prefix)
        prefix.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: "\"")])
        return prefix
    }

    package func append(envelopeByteCount: Int, to output: inout [UInt8], writeEnvelope: (inout [UInt8]) throws -> Void) throws {
        try append(envelopeByteCount: envelopeByteCount, visible: VisibleMetadata(), to: &output, writeEnvelope: writeEnvelope)
    }

    /// Appends the payload around an envelope, or throws `tooLarge` before sealing anything
    /// when the payload would be over the limit. `output` is left as it was when anything throws.
    /// - Parameters:
    ///   - envelopeByteCount: the envelope's length (`EnvelopeSealer.envelopeByteCount`).
    ///   - visible: overrides the fallback's visible metadata for this payload alone (a batch
    ///     line's `visible-sound`, `visible-level`); only such payloads build their own `aps`.
    ///   - output: where the payload is appended.
    ///   - writeEnvelope: appends the envelope itself.
    package func append(
        envelopeByteCount: Int, visible: VisibleMetadata, to output: inout [UInt8],
        writeEnvelope: (inout [UInt8]) throws -> Void
    ) throws {
        let prefix: [UInt8]
        if visible.isEmpty {
            prefix = self.prefix
        } else {
            var fallback = self.fallback
            fallback.visible = fallback.visible.overridden(by: visible)
            prefix = Self.prefix(fallback, field: field)
        }
        let size = prefix.count + envelopeByteCount + 2
        guard size <= byteLimit else {
            throw PayloadError(.tooLarge, "the payload would be \(size) bytes, \(size - byteLimit) over APNs' \(byteLimit)-byte limit")
        }
        try appendClosingString(after: prefix, to: &output, writeEnvelope: writeEnvelope)
    }
}
