import SealCrypto

/// A device's private key as one line of text: `prk1.<kid>.<base64url 32-byte scalar>`. It
/// opens every ps2 message sealed to the device, so it moves only between the recipient's
/// own receivers (a backup, a second receiver of the same person), never to a sender.
public struct PrivateShare: Sendable {
    public static let prefix = "prk1."

    public let kid: String
    public let privateKey: P256PrivateKey

    public init(kid: String, privateKey: P256PrivateKey) {
        self.kid = kid
        self.privateKey = privateKey
    }

    /// The share line. With `KeyShare.text`, the only places a secret becomes text for output.
    public func text() throws -> String {
        try privateKey.withScalar { scalar in scalar.withUnsafeBytes { "\(Self.prefix)\(kid).\(Base64.encode($0, alphabet: .url))" } }
    }

    /// Reads a share; surrounding white space is ignored. The scalar must be 32 bytes, not 0
    /// and below the group order. Errors never repeat the input.
    public init(parsing input: String) throws {
        var (kid, scalar) = try KeyShare.split(input, prefix: Self.prefix, what: "private key share", shape: "prk1.<kid>.<scalar>", part: "scalar")
        defer { SecureMemory.wipe(&scalar) }
        guard scalar.count == 32 else {
            throw KeyringError(.invalidShare, "not a private key share: the scalar is \(scalar.count) bytes, 32 expected")
        }
        do {
            privateKey = try P256PrivateKey(scalar: scalar)
        } catch {
            throw KeyringError(.invalidShare, "not a private key share: \(error.reason)", underlying: error)
        }
        self.kid = kid
    }
}
