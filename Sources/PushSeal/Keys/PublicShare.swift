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

    public var text: String { Self.line(prefix: Self.prefix, kid: kid, point: publicKey) }

    /// Reads a share; surrounding white space is ignored. The point must be on P-256.
    public init(parsing input: String) throws {
        (kid, publicKey) = try Self.point(parsing: input, prefix: Self.prefix, what: "public key share")
    }

    /// A line of a kid and a P-256 point, `<prefix><kid>.<base64url(point)>`: a recipient's
    /// public share, or a sender's (`SenderShare`).
    package static func line(prefix: String, kid: String, point: P256PublicKey) -> String {
        "\(prefix)\(kid).\(Base64.encode(point.x963Representation, alphabet: .url))"
    }

    /// Reads such a line; the point must be on P-256. Errors name `what`, never the input.
    package static func point(parsing input: String, prefix: String, what: String) throws -> (kid: String, point: P256PublicKey) {
        let (kid, point) = try KeyShare.split(input, prefix: prefix, what: what, shape: "\(prefix)<kid>.<point>", part: "point")
        do {
            return (kid, try P256PublicKey(x963Representation: point))
        } catch {
            throw KeyringError(.invalidShare, "not a \(what): \(error.reason)", underlying: error)
        }
    }
}
