internal import COpenSSL

/// A P-256 key for ES256 (ECDSA with SHA-256, the raw 64-byte r‖s signatures of JWS), as
/// APNs provider tokens use: a public key to verify with, or the private key of an
/// Apple `.p8` file, which can also sign.
package final class ES256Key: @unchecked Sendable {
    // EVP_PKEY is reference-counted and read-only once loaded; OpenSSL allows concurrent
    // verification and signing with one key, each call making its own digest context.
    private let key: OpaquePointer
    /// True when the key holds the private part (a `.p8` file).
    package let canSign: Bool

    /// Reads PEM text: `PUBLIC KEY`, or `PRIVATE KEY` (PKCS#8, Apple's `.p8`) or
    /// `EC PRIVATE KEY`. Anything but a P-256 key is refused.
    package init(pem: some Collection<UInt8>) throws(SealCryptoError) {
        func read(_ load: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
            pem.withBytes { bytes in
                guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
                defer { BIO_free(bio) }
                return load(bio)
            }
        }
        var loaded: OpaquePointer?
        var isPrivate = false
        // A passphrase-protected key (PKCS#8 `ENCRYPTED PRIVATE KEY`, or a traditional PEM with
        // `Proc-Type: 4,ENCRYPTED`) is refused as such: OpenSSL's default would prompt for the
        // passphrase on the terminal and wait, which a script never answers.
        if SecureMemory.contains(pem, "-----BEGIN ENCRYPTED PRIVATE KEY-----") || SecureMemory.contains(pem, "Proc-Type: 4,ENCRYPTED") {
            throw SealCryptoError(.encryptedKey, "the private key is encrypted with a passphrase")
        }
        if SecureMemory.contains(pem, "PRIVATE KEY-----") {
            // A callback that gives no passphrase: OpenSSL never prompts, whatever the PEM says.
            loaded = read { PEM_read_bio_PrivateKey($0, nil, { _, _, _, _ in 0 }, nil) }
            isPrivate = true
        } else if SecureMemory.contains(pem, "PUBLIC KEY-----") {
            loaded = read { PEM_read_bio_PUBKEY($0, nil, nil, nil) }
        }
        guard let loaded else {
            throw SealCryptoError.openSSL(.invalidKey, "not a PEM public key or PKCS#8 private key")
        }
        ERR_clear_error()
        var group = [CChar](repeating: 0, count: 64)
        var groupLength = 0
        guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_EC,
            EVP_PKEY_get_group_name(loaded, &group, group.count, &groupLength) == 1,
            ["prime256v1", "P-256"].contains(String(decoding: group.prefix(groupLength).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        else {
            EVP_PKEY_free(loaded)
            throw SealCryptoError.openSSL(.invalidKey, "not a P-256 (ES256) key")
        }
        key = loaded
        canSign = isPrivate
    }

    /// A new P-256 signing key (a Web Push sender's VAPID key).
    package static func generate() throws(SealCryptoError) -> ES256Key {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw SealCryptoError.openSSL(.libraryFailure, "OpenSSL could not make a key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var made: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_keygen(context, &made) == 1, let made
        else {
            throw SealCryptoError.openSSL(.libraryFailure, "OpenSSL could not make a P-256 key")
        }
        return ES256Key(taking: made)
    }

    private init(taking key: OpaquePointer) {
        self.key = key
        canSign = true
    }

    /// The private key as PKCS#8 PEM, to keep in a 0600 file; the caller wipes the bytes.
    package func privateKeyPEM() throws(SealCryptoError) -> [UInt8] {
        guard canSign else { throw SealCryptoError(.invalidKey, "a public key has no private part") }
        return try pemText { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
    }

    /// The public point, uncompressed (65 bytes, 0x04 ‖ x ‖ y): VAPID's `k`, the
    /// `applicationServerKey` a page subscribes with.
    package var publicPoint: [UInt8] {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key, "pub", &point, point.count, &length) == 1, length == 65, point[0] == 0x04 else {
            ERR_clear_error()
            return []
        }
        return point
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// SHA-256 of the public key (its DER SubjectPublicKeyInfo), in hex: names the key
    /// without revealing anything, so what was made with one key is never taken for another's.
    package var fingerprint: String {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { return "" }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        guard written == length else { return "" }
        var digest = [UInt8](repeating: 0, count: 32)
        var size: UInt32 = 0
        guard EVP_Digest(der, der.count, &digest, &size, EVP_sha256(), nil) == 1 else { return "" }
        return digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// True when `signature` (r‖s, 64 bytes) is this key's ES256 signature of `message`.
    package func isValidSignature(_ signature: some Collection<UInt8>, for message: UnsafeRawBufferPointer) -> Bool {
        let raw = Array(signature)
        guard raw.count == 64 else { return false }
        guard let der = Self.derSignature(raw) else { return false }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        let verified =
            EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1
            && der.withUnsafeBufferPointer { derBytes in
                EVP_DigestVerify(
                    context, derBytes.baseAddress, derBytes.count,
                    message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1
            }
        ERR_clear_error()
        return verified
    }

    /// Signs `message`: r‖s, 64 bytes. Only a private key can.
    package func signature(for message: UnsafeRawBufferPointer) throws(SealCryptoError) -> [UInt8] {
        guard canSign else { throw SealCryptoError(.invalidKey, "a public key cannot sign") }
        guard let context = EVP_MD_CTX_new() else { throw SealCryptoError(.libraryFailure, "OpenSSL could not allocate a digest context") }
        defer { EVP_MD_CTX_free(context) }
        var der = [UInt8](repeating: 0, count: 80)
        var length = der.count
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, &der, &length, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1
        else {
            throw SealCryptoError.openSSL(.libraryFailure, "OpenSSL could not sign")
        }
        let raw: [UInt8]? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let parsed = d2i_ECDSA_SIG(nil, &cursor, length) else { return nil }
            defer { ECDSA_SIG_free(parsed) }
            var out = [UInt8](repeating: 0, count: 64)
            guard BN_bn2binpad(ECDSA_SIG_get0_r(parsed), &out, 32) == 32,
                out.withUnsafeMutableBufferPointer({ BN_bn2binpad(ECDSA_SIG_get0_s(parsed), $0.baseAddress! + 32, 32) }) == 32
            else { return nil }
            return out
        }
        guard let raw else { throw SealCryptoError(.libraryFailure, "OpenSSL gave an unreadable signature") }
        return raw
    }

    /// r‖s as the DER `ECDSA-Sig-Value` OpenSSL verifies.
    private static func derSignature(_ raw: [UInt8]) -> [UInt8]? {
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = BN_bin2bn(raw, 32, nil) else { return nil }
        guard let s = raw.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress! + 32, 32, nil) }) else {
            BN_free(r)
            return nil
        }
        // set0 takes ownership of both numbers.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &out)
        guard length > 0, let out else { return nil }
        defer { CRYPTO_free(out, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}
