import Foundation

#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif

/// The pairing lines `pushseal keys export` prints, read into keys: `psk1.<kid>.<secret>`
/// (a shared secret the device stores), `ppk1.<kid>.<point>` (a recipient's public key,
/// which the device checks against the private key it keeps), `prk1.<kid>.<scalar>` (the
/// device's private key) and `pss1.<kid>.<point>` (a sender the device allows).
public enum KeyShare {
    /// A `psk1` line: the key id and the 32-byte secret. Errors never repeat the input.
    public static func secret(parsing line: String) throws(OpeningError) -> (kid: String, key: SymmetricKey) {
        let (kid, bytes) = try split(line, prefix: "psk1.", what: "key share")
        guard bytes.count == 32 else { throw OpeningError(.malformed, "not a key share: the secret is \(bytes.count) bytes, 32 expected") }
        return (kid, SymmetricKey(data: bytes))
    }

    /// A `ppk1` line: the key id and the P-256 public key (65-byte uncompressed point).
    public static func publicKey(parsing line: String) throws(OpeningError) -> (kid: String, key: P256.KeyAgreement.PublicKey) {
        let (kid, bytes) = try split(line, prefix: "ppk1.", what: "public key share")
        guard bytes.count == 65, let key = try? P256.KeyAgreement.PublicKey(x963Representation: bytes) else {
            throw OpeningError(.malformed, "not a public key share: the point is not a P-256 point")
        }
        return (kid, key)
    }

    /// A `pss1` line: a sender's key id and its P-256 public key, for the store as
    /// `.sender(key)`: that sender's ps3 messages open, and from then on nothing
    /// unauthenticated does. Take it from the sender by a way you trust (a QR code on its
    /// screen): whoever's line is kept may write to this device.
    public static func sender(parsing line: String) throws(OpeningError) -> (kid: String, key: P256.KeyAgreement.PublicKey) {
        let (kid, bytes) = try split(line, prefix: "pss1.", what: "sender key share")
        guard bytes.count == 65, let key = try? P256.KeyAgreement.PublicKey(x963Representation: bytes) else {
            throw OpeningError(.malformed, "not a sender key share: the point is not a P-256 point")
        }
        return (kid, key)
    }

    /// The public line for a private key the device keeps: what it shows the sender, who
    /// runs `pushseal keys import` with it and seals with `--to <kid>`.
    public static func publicLine(kid: String, for key: P256.KeyAgreement.PrivateKey) -> String {
        "ppk1.\(kid).\(Base64URL.encode(key.publicKey.x963Representation))"
    }

    /// A new key pair for this device, under a random 8-hex-digit id as `pushseal keys init
    /// --recipient` makes them: keep the private key, show `publicLine(kid:for:)`.
    public static func newRecipient() -> (kid: String, key: P256.KeyAgreement.PrivateKey) {
        var random = SystemRandomNumberGenerator()
        return (String(format: "%08x", UInt32.random(in: .min ... .max, using: &random)), P256.KeyAgreement.PrivateKey())
    }

    /// The private half a recipient keeps, as one line: `prk1.<kid>.<base64url scalar>`.
    /// Secret: for the device's own store (or moving it between devices), never for a sender.
    public static func privateLine(kid: String, for key: P256.KeyAgreement.PrivateKey) -> String {
        "prk1.\(kid).\(Base64URL.encode(key.rawRepresentation))"
    }

    /// A `prk1` line: the key id and the P-256 private key (its 32-byte scalar).
    public static func privateKey(parsing line: String) throws(OpeningError) -> (kid: String, key: P256.KeyAgreement.PrivateKey) {
        let (kid, bytes) = try split(line, prefix: "prk1.", what: "private key")
        guard bytes.count == 32, let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: bytes) else {
            throw OpeningError(.malformed, "not a private key: the scalar is not a P-256 private key")
        }
        return (kid, key)
    }

    private static func split(_ line: String, prefix: String, what: String) throws(OpeningError) -> (String, Data) {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(prefix) else { throw OpeningError(.malformed, "not a \(what): expected \(prefix)<kid>.<base64url>") }
        let rest = trimmed.dropFirst(prefix.count)
        guard let dot = rest.lastIndex(of: "."), SealedEnvelope.isKeyID(rest[..<dot]) else {
            throw OpeningError(.malformed, "not a \(what): the key id must be 1 to 64 of A-Z a-z 0-9 _ -")
        }
        guard let bytes = Base64URL.decode(rest[rest.index(after: dot)...]) else {
            throw OpeningError(.malformed, "not a \(what): the key is not base64url")
        }
        return (String(rest[..<dot]), bytes)
    }
}
