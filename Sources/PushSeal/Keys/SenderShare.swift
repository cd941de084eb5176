import SealCrypto

/// A sender key's public half as one line of text: `pss1.<kid>.<base64url(65-byte point)>`.
/// A receiver imports it as an allowed sender; like a recipient's `ppk1` it holds no secret
/// and may be pasted anywhere, but it must come from the sender by a way the receiver
/// trusts: whoever's share is imported may write to the device.
package struct SenderShare: Sendable {
    package static let prefix = "pss1."

    package let kid: String
    package let publicKey: P256PublicKey

    package init(kid: String, publicKey: P256PublicKey) {
        self.kid = kid
        self.publicKey = publicKey
    }

    package var text: String { "\(Self.prefix)\(kid).\(Base64.encode(publicKey.x963Representation, alphabet: .url))" }

    /// Reads a share; surrounding white space is ignored. The point must be on P-256.
    package init(parsing input: String) throws {
        let (kid, point) = try KeyShare.split(input, prefix: Self.prefix, what: "sender key share", shape: "pss1.<kid>.<point>", part: "point")
        do {
            publicKey = try P256PublicKey(x963Representation: point)
        } catch {
            throw KeyringError(.invalidShare, "not a sender key share: \(error.reason)", underlying: error)
        }
        self.kid = kid
    }
}
