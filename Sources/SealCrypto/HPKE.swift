internal import CHPKE
internal import COpenSSL

/// The curve both key types live on. An EC_GROUP is read-only once made, so one is shared
/// by every thread; made on first use (Swift's lazy globals run their initialiser once).
nonisolated(unsafe) private let p256: OpaquePointer = {
    guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
        fatalError("OpenSSL has no P-256 group")
    }
    return group
}()

/// A P-256 public key: a recipient's share, or the ephemeral key an HPKE message carries.
/// Made only from a point that is on the curve (and so not the point at infinity).
public final class P256PublicKey: @unchecked Sendable {
    // Read-only once made: an EC_POINT is only read by the scalar multiplications that use it.
    let point: OpaquePointer
    /// The 65-byte uncompressed point, 0x04 ‖ x ‖ y (X9.63, CryptoKit's x963Representation).
    public let x963Representation: [UInt8]

    public static let byteCount = 65

    public init(x963Representation given: some Collection<UInt8>) throws(SealCryptoError) {
        let bytes = Array(given)
        guard bytes.count == Self.byteCount, bytes[0] == 0x04 else {
            throw SealCryptoError(.invalidKey, "a P-256 public key is 65 bytes starting 04, not \(bytes.count) bytes")
        }
        guard let point = bytes.withUnsafeBufferPointer({ pushseal_p256_point(p256, $0.baseAddress, $0.count) }) else {
            throw SealCryptoError.openSSL(.invalidKey, "not a point on P-256")
        }
        self.point = point
        x963Representation = bytes
    }

    /// The public point of `scalar`, taking ownership of `point`.
    fileprivate init?(taking point: OpaquePointer) {
        var bytes = [UInt8](repeating: 0, count: Self.byteCount)
        guard pushseal_p256_point_bytes(p256, point, &bytes) == 1 else {
            EC_POINT_free(point)
            return nil
        }
        self.point = point
        x963Representation = bytes
    }

    deinit {
        EC_POINT_free(point)
    }
}

/// A P-256 private key: a device's recipient key, or an HPKE sender's ephemeral key.
public final class P256PrivateKey: @unchecked Sendable {
    // A secure-heap BIGNUM marked constant-time, cleared when freed; read-only once made.
    private let scalar: OpaquePointer
    public let publicKey: P256PublicKey

    package static let scalarByteCount = 32

    /// A fresh key from OpenSSL's private random generator.
    public static func generate() throws(SealCryptoError) -> P256PrivateKey {
        guard let scalar = pushseal_p256_generate_scalar(p256) else {
            throw SealCryptoError.openSSL(.randomUnavailable, "OpenSSL could not make a P-256 key")
        }
        return try P256PrivateKey(taking: scalar)
    }

    /// The key whose private scalar is these 32 big-endian bytes (in [1, n-1]).
    package convenience init(scalar: SecureBytes) throws(SealCryptoError) {
        let made = scalar.withUnsafeBytes { bytes -> OpaquePointer? in
            guard bytes.count == Self.scalarByteCount else { return nil }
            return pushseal_p256_scalar(p256, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard let made else {
            throw SealCryptoError.openSSL(.invalidKey, "not a P-256 private scalar (32 bytes, from 1 to the group order)")
        }
        try self.init(taking: made)
    }

    /// The same from bytes the caller keeps (and wipes): published test vectors.
    public convenience init(scalar: some Collection<UInt8>) throws(SealCryptoError) {
        try self.init(scalar: scalar.withBytes { SecureBytes(copying: $0) })
    }

    private init(taking scalar: OpaquePointer) throws(SealCryptoError) {
        guard let point = pushseal_p256_public_point(p256, scalar), let publicKey = P256PublicKey(taking: point) else {
            BN_clear_free(scalar)
            throw SealCryptoError.openSSL(.libraryFailure, "OpenSSL could not compute a P-256 public key")
        }
        self.scalar = scalar
        self.publicKey = publicKey
    }

    deinit {
        BN_clear_free(scalar)
    }

    /// Lends the 32-byte scalar to `body` (for the keyring file); it is wiped once `body`
    /// returns and nothing else holds it.
    package func withScalar<Result>(_ body: (SecureBytes) throws -> Result) throws -> Result {
        let bytes = SecureBytes(count: Self.scalarByteCount)
        let ok = bytes.withUnsafeMutableBytes { pushseal_p256_scalar_bytes(scalar, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        guard ok == 1 else {
            throw SealCryptoError.openSSL(.libraryFailure, "OpenSSL could not read a P-256 private scalar")
        }
        return try body(bytes)
    }

    /// ECDH with `peer`: the shared point's x coordinate. (Tests reach it to check it
    /// against Wycheproof's vectors.)
    package func sharedSecret(with peer: P256PublicKey) throws(SealCryptoError) -> SecureBytes {
        let secret = SecureBytes(count: 32)
        let ok = secret.withUnsafeMutableBytes { pushseal_p256_ecdh(p256, scalar, peer.point, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        guard ok == 1 else {
            throw SealCryptoError.openSSL(.invalidKey, "ECDH on P-256 failed")
        }
        return secret
    }
}

/// HPKE (RFC 9180) in base mode, and in auth mode with a sender's static key, with one suite, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256 and
/// AES-256-GCM (KEM 0x0010, KDF 0x0001, AEAD 0x0002): CryptoKit's
/// `HPKE.Ciphersuite.P256_SHA256_AES_GCM_256`, so an iOS extension opens what this seals
/// with `HPKE.Recipient` alone.
///
/// Built on `CHPKE` (libcrypto's P-256 scalar multiplication called on the curve's own
/// objects, as `EVP_PKEY_derive` does underneath, and HKDF-SHA256 as one HMAC per half) and
/// the AES-GCM of `AESGCM`; OpenSSL 3.0 has no `OSSL_HPKE_*` (that came in 3.2). Every
/// shared secret and derived key is wiped once used.
package enum HPKE {
    /// Bytes of the encapsulated key (`enc`): the ephemeral public point, uncompressed.
    package static let encapsulatedKeyByteCount = P256PublicKey.byteCount

    static let kemSuite: [UInt8] = Array("KEM".utf8) + [0x00, 0x10]
    static let suite: [UInt8] = Array("HPKE".utf8) + [0x00, 0x10, 0x00, 0x01, 0x00, 0x02]

    /// Single shot: `enc ‖ ciphertext ‖ tag` of `plaintext` for `recipient`, bound to `info`,
    /// with empty associated data (the layout of Python cryptography's `Suite.encrypt`).
    package static func seal(_ plaintext: some Collection<UInt8>, to recipient: P256PublicKey, info: some Collection<UInt8>) throws -> [UInt8] {
        let (enc, context) = try sender(to: recipient, info: info)
        return enc + (try context.seal(plaintext))
    }

    /// Single shot in auth mode: sealed by `sender`, whose public key the recipient checks.
    package static func seal(
        _ plaintext: some Collection<UInt8>, to recipient: P256PublicKey, info: some Collection<UInt8>, authenticatedBy sender: P256PrivateKey
    ) throws -> [UInt8] {
        let (enc, context) = try self.sender(to: recipient, info: info, authenticatedBy: sender)
        return enc + (try context.seal(plaintext))
    }

    /// Opens what `seal` made (in auth mode when `sender` is given: only what that sender
    /// sealed opens); no plaintext byte comes out unless the tag verifies.
    package static func open(
        _ message: some Collection<UInt8>, with recipient: P256PrivateKey, info: some Collection<UInt8>, authenticatedBy sender: P256PublicKey? = nil
    ) throws -> [UInt8] {
        try message.withBytes { message in
            guard message.count >= encapsulatedKeyByteCount + AESGCM.tagByteCount else {
                throw SealCryptoError(.invalidSealedBox, "an HPKE message holds a 65-byte key and a 16-byte tag at least, this one has \(message.count) bytes")
            }
            let context = try receiver(enc: message[..<encapsulatedKeyByteCount], recipient: recipient, info: info, authenticatedBy: sender)
            return try context.open(sealed: UnsafeRawBufferPointer(rebasing: message[encapsulatedKeyByteCount...]))
        }
    }

    /// The sender's side of the key schedule: `enc` and the context that seals.
    /// - Parameters:
    ///   - sender: auth mode (RFC 9180 §5.1.3, `mode_auth`): the sender's static key is bound
    ///     into the shared secret (`AuthEncap`), so only a holder of it can have sealed what the
    ///     recipient opens with the matching public key. Nil is base mode.
    ///   - ephemeral: only the RFC's test vectors pass one; a reused ephemeral key
    ///     makes every message to that recipient share a key.
    package static func sender(
        to recipient: P256PublicKey, info: some Collection<UInt8>, authenticatedBy sender: P256PrivateKey? = nil, ephemeral: P256PrivateKey? = nil
    ) throws -> ([UInt8], Context) {
        let ephemeral = try ephemeral ?? P256PrivateKey.generate()
        let enc = ephemeral.publicKey.x963Representation
        var dh = try ephemeral.sharedSecret(with: recipient)
        var kemContext = enc + recipient.x963Representation
        if let sender {
            // AuthEncap: dh = DH(skE, pkR) ‖ DH(skS, pkR); kem_context = enc ‖ pkR ‖ pkS.
            let staticDH = try sender.sharedSecret(with: recipient)
            dh = dh.withUnsafeBytes { first in staticDH.withUnsafeBytes { SecureBytes(concatenating: [first, $0]) } }
            kemContext += sender.publicKey.x963Representation
        }
        let shared = try extractAndExpand(dh: dh, kemContext: kemContext)
        return (enc, try keySchedule(sharedSecret: shared, info: Array(info), mode: sender == nil ? 0x00 : 0x02))
    }

    /// The recipient's side: the context that opens, from `enc` (checked to be a point on
    /// the curve before it is used).
    /// - Parameter sender: auth mode: the public key of the sender it must have been sealed
    ///   by (`AuthDecap`); a message sealed by anyone else, or in base mode, does not open.
    package static func receiver(
        enc given: some Collection<UInt8>, recipient: P256PrivateKey, info: some Collection<UInt8>, authenticatedBy sender: P256PublicKey? = nil
    ) throws -> Context {
        let enc = Array(given)
        let ephemeral = try P256PublicKey(x963Representation: enc)
        var dh = try recipient.sharedSecret(with: ephemeral)
        var kemContext = enc + recipient.publicKey.x963Representation
        if let sender {
            // AuthDecap: dh = DH(skR, pkE) ‖ DH(skR, pkS).
            let staticDH = try recipient.sharedSecret(with: sender)
            dh = dh.withUnsafeBytes { first in staticDH.withUnsafeBytes { SecureBytes(concatenating: [first, $0]) } }
            kemContext += sender.x963Representation
        }
        let shared = try extractAndExpand(dh: dh, kemContext: kemContext)
        return try keySchedule(sharedSecret: shared, info: Array(info), mode: sender == nil ? 0x00 : 0x02)
    }

    /// An encryption context: the AEAD key and base nonce, and the sequence number that
    /// makes each message's nonce (RFC 9180 §5.2).
    package final class Context {
        private let key: SymmetricKey
        private let baseNonce: [UInt8]
        private var sequence: UInt64 = 0

        init(key: SymmetricKey, baseNonce: [UInt8]) {
            self.key = key
            self.baseNonce = baseNonce
        }

        private func nextNonce() -> [UInt8] {
            var nonce = baseNonce
            for index in 0..<8 { nonce[nonce.count - 1 - index] ^= UInt8(truncatingIfNeeded: sequence >> (8 * UInt64(index))) }
            sequence += 1
            return nonce
        }

        /// `ciphertext ‖ tag` of the next message.
        package func seal(_ plaintext: some Collection<UInt8>, authenticating aad: some Collection<UInt8> = [UInt8]()) throws -> [UInt8] {
            let box = try AESGCM.seal(plaintext, using: key, nonce: nextNonce(), authenticating: aad)
            return Array(box.combined[AESGCM.nonceByteCount...])
        }

        /// The next message's plaintext, only if its tag verifies.
        package func open(_ sealed: some Collection<UInt8>, authenticating aad: some Collection<UInt8> = [UInt8]()) throws -> [UInt8] {
            try sealed.withBytes { sealed in try aad.withBytes { try open(sealed: sealed, authenticating: $0) } }
        }

        /// The same over bytes the caller holds (`open` of a whole message reads in place).
        func open(sealed: UnsafeRawBufferPointer, authenticating aad: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) throws -> [UInt8] {
            guard sealed.count >= AESGCM.tagByteCount else {
                throw SealCryptoError(.invalidSealedBox, "an HPKE ciphertext ends in a 16-byte tag; this one has \(sealed.count) bytes")
            }
            return try nextNonce().withUnsafeBytes { nonce in
                try AESGCM.open(nonce: nonce, ciphertextAndTag: sealed, using: key, authenticating: aad)
            }
        }
    }

    // MARK: RFC 9180's building blocks

    /// DHKEM's ExtractAndExpand: the KEM's shared secret from the Diffie-Hellman output.
    static func extractAndExpand(dh: SecureBytes, kemContext: [UInt8]) throws -> SecureBytes {
        let prk = try labeledExtract(salt: nil, label: Label.eaePRK, ikm: dh)
        return try labeledExpand(prk: prk, label: Label.sharedSecret, info: kemContext, length: 32)
    }

    /// The key schedule without a PSK, in base mode (0x00) or auth mode (0x02): the AEAD key
    /// and base nonce. The mode is bound into both, so a message sealed in one mode never
    /// opens in the other.
    static func keySchedule(sharedSecret: SecureBytes, info: [UInt8], mode: UInt8 = 0x00) throws -> Context {
        let infoHash = try info.withUnsafeBytes { try publicHash(label: Label.infoHash, ikm: $0) }
        var context = [UInt8]()
        context.reserveCapacity(65)
        context.append(mode)
        context.append(contentsOf: try emptyPSKIDHash ?? publicHash(label: Label.pskIDHash, ikm: UnsafeRawBufferPointer(start: nil, count: 0)))
        context.append(contentsOf: infoHash)
        let secret = try labeledExtract(salt: sharedSecret, label: Label.secret, publicIKM: UnsafeRawBufferPointer(start: nil, count: 0))
        let key = try labeledExpand(prk: secret, label: Label.key, info: context, length: SymmetricKey.byteCount)
        let nonce = try labeledExpand(prk: secret, label: Label.baseNonce, info: context, length: AESGCM.nonceByteCount)
        return Context(key: try key.withUnsafeBytes { try SymmetricKey(bytes: $0) }, baseNonce: nonce.withUnsafeBytes { Array($0) })
    }

    /// `"HPKE-v1" ‖ suite_id ‖ label` for each label this suite uses, made once: every
    /// message runs six labelled steps.
    private enum Label {
        private static func labeled(_ suite: [UInt8], _ label: String) -> [UInt8] {
            Array("HPKE-v1".utf8) + suite + Array(label.utf8)
        }
        static let eaePRK = labeled(kemSuite, "eae_prk")
        static let sharedSecret = labeled(kemSuite, "shared_secret")
        static let pskIDHash = labeled(suite, "psk_id_hash")
        static let infoHash = labeled(suite, "info_hash")
        static let secret = labeled(suite, "secret")
        static let key = labeled(suite, "key")
        static let baseNonce = labeled(suite, "base_nonce")
    }

    /// Base mode's psk_id is empty, so its hash is one constant: worked out once.
    private static let emptyPSKIDHash = try? publicHash(label: Label.pskIDHash, ikm: UnsafeRawBufferPointer(start: nil, count: 0))

    /// LabeledExtract of a secret input (the Diffie-Hellman output): the labelled input is
    /// built in wiped memory. A nil salt is HKDF's default (the empty salt).
    static func labeledExtract(salt: SecureBytes?, label: [UInt8], ikm: SecureBytes) throws -> SecureBytes {
        let labeled = label.withUnsafeBytes { head in ikm.withUnsafeBytes { SecureBytes(concatenating: [head, $0]) } }
        return try labeled.withUnsafeBytes { try extract(salt: salt, labeledIKM: $0) }
    }

    /// LabeledExtract of a public input (`info`, the empty psk and ikm); the output is a
    /// secret only when the salt is (`secret`), so it comes back as `SecureBytes`.
    static func labeledExtract(salt: SecureBytes?, label: [UInt8], publicIKM ikm: UnsafeRawBufferPointer) throws -> SecureBytes {
        var labeled = label
        labeled.append(contentsOf: ikm)
        return try labeled.withUnsafeBytes { try extract(salt: salt, labeledIKM: $0) }
    }

    /// LabeledExtract with no salt of a public input: a public hash (`psk_id_hash`, `info_hash`).
    private static func publicHash(label: [UInt8], ikm: UnsafeRawBufferPointer) throws -> [UInt8] {
        try labeledExtract(salt: nil, label: label, publicIKM: ikm).withUnsafeBytes { Array($0) }
    }

    private static func extract(salt: SecureBytes?, labeledIKM: UnsafeRawBufferPointer) throws -> SecureBytes {
        guard let salt else { return try HKDF.step(extract: true, UnsafeRawBufferPointer(start: nil, count: 0), labeledIKM, length: 32) }
        return try salt.withUnsafeBytes { try HKDF.step(extract: true, $0, labeledIKM, length: 32) }
    }

    static func labeledExpand(prk: SecureBytes, label: [UInt8], info: [UInt8], length: Int) throws -> SecureBytes {
        var labeled = [UInt8]()
        labeled.reserveCapacity(2 + label.count + info.count)
        labeled.append(UInt8(length >> 8))
        labeled.append(UInt8(length & 0xff))
        labeled.append(contentsOf: label)
        labeled.append(contentsOf: info)
        return try prk.withUnsafeBytes { first in
            try labeled.withUnsafeBytes { second in try HKDF.step(extract: false, first, second, length: length) }
        }
    }
}
