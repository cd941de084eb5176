import SealCrypto

/// A recipient's public key as one line of text: `ppk1.<kid>.<base64url(65-byte point)>`.
/// Safe to paste anywhere: it seals messages to the device and opens none.
public struct PublicShare: Sendable {
    public static let prefix = "ppk1."

    public let kid: String
    public let publicKey: P256PublicKey

    public init(kid: String, publicKey: P256PublicKey) {
        self.kid = kid
        self.publicKey = publicKey
    }

    public var text: String { "\(Self.prefix)\(kid).\(Base64.encode(publicKey.x963Representation, alphabet: .url))" }

    /// Reads a share; surrounding white space is ignored. The point must be on P-256.
    public init(parsing input: String) throws {
        let (kid, point) = try KeyShare.split(input, prefix: Self.prefix, what: "public key share", shape: "ppk1.<kid>.<point>", part: "point")
        do {
            publicKey = try P256PublicKey(x963Representation: point)
        } catch {
            throw KeyringError(.invalidShare, "not a public key share: \(error.reason)", underlying: error)
        }
        self.kid = kid
    }
}
