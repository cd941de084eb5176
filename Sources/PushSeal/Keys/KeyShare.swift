import SealCrypto

/// A key as one line of text for moving it to a receiver: `psk1.<kid>.<base64url secret>`.
public struct KeyShare: Sendable {
    public static let prefix = "psk1."

    public let kid: String
    public let secret: SymmetricKey

    public init(kid: String, secret: SymmetricKey) {
        self.kid = kid
        self.secret = secret
    }

    /// The share line. This is the one place a secret is turned into text for output.
    public var text: String {
        secret.withUnsafeBytes { "\(Self.prefix)\(kid).\(Base64.encode($0, alphabet: .url))" }
    }

    /// Reads a share; surrounding white space is ignored. Errors never repeat the input.
    public init(parsing input: String) throws {
        var (kid, bytes) = try Self.split(input, prefix: Self.prefix, what: "key share", shape: "psk1.<kid>.<secret>", part: "secret")
        defer { SecureMemory.wipe(&bytes) }
        guard bytes.count == SymmetricKey.byteCount else {
            throw KeyringError(.invalidShare, "not a key share: the secret is \(bytes.count) bytes, 32 expected")
        }
        self.kid = kid
        secret = try SymmetricKey(bytes: bytes)
    }

    /// A share line's kid and decoded bytes: `<prefix><kid>.<base64url>`, surrounding white
    /// space ignored. Errors name the `what` and never repeat the input.
    static func split(_ input: String, prefix: String, what: String, shape: String, part: String) throws -> (kid: String, bytes: [UInt8]) {
        let (kid, text) = try splitText(input, prefix: prefix, what: what, shape: shape)
        do {
            return (kid, try Base64.decode(text, alphabet: .url))
        } catch {
            throw KeyringError(.invalidShare, "not a \(what): the \(part) is not base64url", underlying: error)
        }
    }

    /// A line's kid and what follows its last dot, as text: `<prefix><kid>.<part>`, every
    /// one-line form of `keys` (shares and retirement notices) read the same way.
    static func splitText(_ input: String, prefix: String, what: String, shape: String) throws -> (kid: String, part: String) {
        let trimmed = input.trimmingASCIIWhitespace()
        guard trimmed.hasPrefix(prefix) else {
            throw KeyringError(.invalidShare, "not a \(what): expected \(shape)")
        }
        let rest = trimmed.dropFirst(prefix.count)
        guard let dot = rest.lastIndex(of: "."), KeyID.isValid(rest[..<dot]) else {
            throw KeyringError(.invalidShare, "not a \(what): the key id must be 1 to 64 of A-Z a-z 0-9 _ -")
        }
        return (String(rest[..<dot]), String(rest[rest.index(after: dot)...]))
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and line breaks.
    package func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
