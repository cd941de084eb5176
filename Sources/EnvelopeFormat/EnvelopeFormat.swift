/// The sealed field's wire format, `<version>.<kid>.<base64url(sealed bytes)>` (`ps3` names its
/// sender too: `ps3.<kid>.<sender kid>.<base64url(sealed bytes)>`): one definition
/// for the sender and the Linux receiver (PushSeal) and the device kit (PushSealKit). It knows
/// the versions and their sizes, the key id rule and where the three parts lie; it does no
/// crypto and no base64 (each side decodes the sealed part with its own).
public enum EnvelopeVersion: String, Sendable, CaseIterable {
    /// AES-256-GCM with a shared secret; sealed bytes are nonce ‖ ciphertext ‖ tag.
    case ps1
    /// HPKE to the device's P-256 key; sealed bytes are enc ‖ ciphertext ‖ tag.
    case ps2
    /// ps2 authenticated by the sender's own P-256 key (HPKE's auth mode): the header names
    /// the sender key too; sealed bytes are enc ‖ ciphertext ‖ tag.
    case ps3

    /// Every version's tag: AES-256-GCM's, in both.
    public static let tagByteCount = 16
    /// ps1's random nonce.
    public static let nonceByteCount = 12
    /// ps2's encapsulated key: an uncompressed P-256 point.
    public static let encapsulatedKeyByteCount = 65

    /// What comes before the ciphertext: the nonce (ps1) or the encapsulated key (ps2).
    @inlinable
    public var prefixByteCount: Int {
        switch self {
        case .ps1: Self.nonceByteCount
        case .ps2, .ps3: Self.encapsulatedKeyByteCount
        }
    }

    /// Whether the envelope names the key of the sender that sealed it (`ps3`), a third part
    /// before the sealed bytes.
    @inlinable
    package var namesSender: Bool { self == .ps3 }

    /// The fewest sealed bytes an envelope of this version can have: its prefix and a tag
    /// around an empty ciphertext.
    @inlinable
    public var minimumSealedByteCount: Int { prefixByteCount + Self.tagByteCount }

    /// The version these bytes name, compared as bytes (the receiver reads one per notification).
    @inlinable
    public init?(utf8 name: UnsafeRawBufferPointer) {
        guard name.count == 3, name[0] == UInt8(ascii: "p"), name[1] == UInt8(ascii: "s") else { return nil }
        switch name[2] {
        case UInt8(ascii: "1"): self = .ps1
        case UInt8(ascii: "2"): self = .ps2
        case UInt8(ascii: "3"): self = .ps3
        default: return nil
        }
    }

    /// Whether `name` is a version's name, `"ps"` and a number (1 to 9999, no leading zero):
    /// the names later versions will have. docs/FORMAT.md §3's `version-name`.
    @inlinable
    public static func isLaterVersionName(_ name: UnsafeRawBufferPointer) -> Bool {
        guard (3...6).contains(name.count), name[0] == UInt8(ascii: "p"), name[1] == UInt8(ascii: "s"),
            name[2] != UInt8(ascii: "0")
        else { return false }
        return name[2...].allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The versions this build reads, for messages: "ps1, ps2 and ps3".
    public static var readable: String {
        let names = allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " and " + names.last!
    }
}

/// The key id rule: 1 to 64 of `A–Z a–z 0–9 _ -` (keys pushseal makes use 8 lowercase hex digits).
public enum KeyIDRule {
    public static let maximumLength = 64

    @inlinable
    public static func isValid(_ kid: some StringProtocol) -> Bool {
        (1...maximumLength).contains(kid.utf8.count) && kid.utf8.allSatisfy(isKeyIDByte)
    }

    /// The same over UTF-8 bytes: the receiver checks the kid of every envelope it reads.
    @inlinable
    public static func isValid(utf8 kid: UnsafeRawBufferPointer) -> Bool {
        (1...maximumLength).contains(kid.count) && kid.allSatisfy(isKeyIDByte)
    }

    @inlinable
    public static func isKeyIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }
}

/// Why a text is not an envelope this build can read. Each side words it for its users.
public enum EnvelopeFormatError: Error, Sendable, Equatable {
    /// Not `<version>.<kid>.<sealed>` at all.
    case notAnEnvelope
    /// A version this build does not read (`ps9`, say): a later sender's, which a receiver
    /// reports as unsupported rather than damaged, whatever follows the name. The name is
    /// `ps` and at most four digits, so it is always plain enough to show.
    case unsupportedVersion(String?)
    /// The key id breaks `KeyIDRule`.
    case invalidKeyID
    /// The sender's key id (`ps3`) breaks `KeyIDRule`.
    case invalidSenderKeyID
}

/// Where an envelope's parts lie in its UTF-8 bytes.
public struct EnvelopeLayout: Sendable, Equatable {
    public let version: EnvelopeVersion
    /// The kid's bytes: the recipient's key (or the shared secret's).
    public let kid: Range<Int>
    /// The sender key's kid (`ps3`); nil for a version that names no sender.
    public let sender: Range<Int>?
    /// The base64url text of the sealed bytes: everything after the second dot.
    public let sealed: Range<Int>

    /// Finds the parts of `bytes`, checking the version and the kid (not the sealed text,
    /// which the caller decodes). docs/FORMAT.md §3: the version is the text before the
    /// first dot (all of it when there is none); `ps1`, `ps2` and `ps3` are read; any other
    /// `ps<number>` is a later version, unsupported whatever follows it; anything else is
    /// not an envelope.
    @inlinable
    public init(utf8 bytes: UnsafeRawBufferPointer) throws(EnvelopeFormatError) {
        let dot = UInt8(ascii: ".")
        let firstDot = bytes.firstIndex(of: dot)
        let name = UnsafeRawBufferPointer(rebasing: bytes[..<(firstDot ?? bytes.count)])
        guard let version = EnvelopeVersion(utf8: name) else {
            guard EnvelopeVersion.isLaterVersionName(name) else { throw .notAnEnvelope }
            throw .unsupportedVersion(String(decoding: name, as: UTF8.self))
        }
        // The kid's end is looked for from the front: neither a kid nor base64url has a dot,
        // so a dot further on is the sealed part's decoder's to refuse.
        guard let firstDot, let secondDot = bytes[(firstDot + 1)...].firstIndex(of: dot) else { throw .notAnEnvelope }
        guard KeyIDRule.isValid(utf8: UnsafeRawBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])) else {
            throw .invalidKeyID
        }
        self.version = version
        kid = (firstDot + 1)..<secondDot
        guard version.namesSender else {
            sender = nil
            sealed = (secondDot + 1)..<bytes.count
            return
        }
        guard let thirdDot = bytes[(secondDot + 1)...].firstIndex(of: dot) else { throw .notAnEnvelope }
        guard KeyIDRule.isValid(utf8: UnsafeRawBufferPointer(rebasing: bytes[(secondDot + 1)..<thirdDot])) else {
            throw .invalidSenderKeyID
        }
        sender = (secondDot + 1)..<thirdDot
        sealed = (thirdDot + 1)..<bytes.count
    }
}

/// The header `<version>.<kid>` (`ps3`: `<version>.<kid>.<sender kid>`): what the seal
/// authenticates (ps1's associated data, ps2's and ps3's HPKE info), so no part can be swapped.
@inlinable
public func envelopeHeader(_ version: EnvelopeVersion, kid: some StringProtocol, sender: String? = nil) -> String {
    sender.map { "\(version.rawValue).\(kid).\($0)" } ?? "\(version.rawValue).\(kid)"
}

/// Whose messages a receiver opens (docs/FORMAT.md §6 step 9): one rule for the Linux
/// runner and the device kit.
public enum SenderPolicy: String, Sendable, CaseIterable {
    /// Only allowed senders' (`ps3` by a sender key the receiver allows) once the receiver
    /// allows any sender; anyone's before. The default.
    case automatic = "auto"
    /// Only allowed senders', even before any is allowed: nothing opens until one is.
    case required
    /// Anyone's: `ps1` and `ps2` open even where senders are allowed (a `ps3` envelope still
    /// opens only with its sender's key).
    case any

    /// Whether an envelope that names no sender is refused (`sender-untrusted`), for a
    /// receiver that does (`knowsSenders`) or does not allow any sender yet.
    @inlinable
    package func requiresSender(knowsSenders: Bool) -> Bool {
        switch self {
        case .automatic: knowsSenders
        case .required: true
        case .any: false
        }
    }
}
