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
        let trimmed = input.trimmingASCIIWhitespace()
        guard trimmed.hasPrefix(Self.prefix) else {
            throw KeyringError(.invalidShare, "not a key share: expected psk1.<kid>.<secret>")
        }
        let rest = trimmed.dropFirst(Self.prefix.count)
        guard let dot = rest.lastIndex(of: "."), KeyID.isValid(rest[..<dot]) else {
            throw KeyringError(.invalidShare, "not a key share: the key id must be 1 to 64 of A-Z a-z 0-9 _ -")
        }
        var bytes: [UInt8]
        do {
            bytes = try Base64.decode(String(rest[rest.index(after: dot)...]), alphabet: .url)
        } catch {
            throw KeyringError(.invalidShare, "not a key share: the secret is not base64url")
        }
        defer { SecureMemory.wipe(&bytes) }
        guard bytes.count == SymmetricKey.byteCount else {
            throw KeyringError(.invalidShare, "not a key share: the secret is \(bytes.count) bytes, 32 expected")
        }
        kid = String(rest[..<dot])
        secret = try SymmetricKey(bytes: bytes)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and line breaks.
    public func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
