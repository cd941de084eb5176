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

    package var text: String { PublicShare.line(prefix: Self.prefix, kid: kid, point: publicKey) }

    /// Reads a share; surrounding white space is ignored. The point must be on P-256.
    package init(parsing input: String) throws {
        (kid, publicKey) = try PublicShare.point(parsing: input, prefix: Self.prefix, what: "sender key share")
    }
}
