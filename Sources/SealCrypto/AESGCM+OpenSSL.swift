internal import COpenSSL

/// One OpenSSL cipher context: created in init, freed in deinit. Every C return code is
/// checked; OpenSSL reports success as 1.
///
/// Each thread keeps one context (`CipherContext.current()`) and the key schedule of the
/// last key it used, so a stream of messages under one key pays for the cipher lookup and
/// key expansion once: each message then only sets its nonce.
final class CipherContext {
    private let context: OpaquePointer
    // Held strongly: the identity check below must never match a different key that was
    // allocated where a released one used to be.
    private var preparedKey: SymmetricKey?
    private var preparedForEncryption = false

    // OpenSSL returns a static, read-only description of the cipher: safe to share.
    nonisolated(unsafe) private static let cipher: OpaquePointer? = EVP_aes_256_gcm()

    init() throws {
        guard let context = EVP_CIPHER_CTX_new() else {
            throw SealCryptoError(.libraryFailure, "OpenSSL could not allocate a cipher context")
        }
        self.context = context
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
    }

    private static let perThread = PerThread { try CipherContext() }

    /// This thread's context.
    static func current() throws -> CipherContext {
        try perThread.get()
    }

    private func prepare(_ key: SymmetricKey, encrypting: Bool) throws {
        if preparedKey === key, preparedForEncryption == encrypting { return }
        preparedKey = nil
        let mode: Int32 = encrypting ? 1 : 0
        try check(EVP_CipherInit_ex(context, Self.cipher, nil, nil, nil, mode), "initialise AES-256-GCM")
        try check(pushseal_gcm_set_iv_length(context, Int32(AESGCM.nonceByteCount)), "set the nonce length")
        try key.withUnsafeBytes { keyBytes in
            try check(EVP_CipherInit_ex(context, nil, nil, bytes(keyBytes), nil, mode), "set the key")
        }
        preparedKey = key
        preparedForEncryption = encrypting
    }

    func seal(
        key: SymmetricKey, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        plaintext: UnsafeRawBufferPointer, ciphertext: UnsafeMutableRawBufferPointer,
        tag: UnsafeMutableRawBufferPointer
    ) throws {
        try prepare(key, encrypting: true)
        try check(EVP_EncryptInit_ex(context, nil, nil, nil, bytes(nonce)), "set the nonce")
        var written: Int32 = 0
        if aad.count > 0 {
            try check(EVP_EncryptUpdate(context, nil, &written, bytes(aad), Int32(aad.count)), "add the associated data")
        }
        written = 0
        if plaintext.count > 0 {
            try check(
                EVP_EncryptUpdate(context, mutableBytes(ciphertext), &written, bytes(plaintext), Int32(plaintext.count)),
                "encrypt")
        }
        var trailing: Int32 = 0
        try check(EVP_EncryptFinal_ex(context, mutableBytes(ciphertext) + Int(written), &trailing), "finish encryption")
        try check(pushseal_gcm_get_tag(context, mutableBytes(tag), Int32(tag.count)), "read the tag")
    }

    func open(
        key: SymmetricKey, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        plaintext: UnsafeMutableRawBufferPointer
    ) throws {
        try prepare(key, encrypting: false)
        try check(EVP_DecryptInit_ex(context, nil, nil, nil, bytes(nonce)), "set the nonce")
        var written: Int32 = 0
        if aad.count > 0 {
            try check(EVP_DecryptUpdate(context, nil, &written, bytes(aad), Int32(aad.count)), "add the associated data")
        }
        written = 0
        if ciphertext.count > 0 {
            try check(
                EVP_DecryptUpdate(context, mutableBytes(plaintext), &written, bytes(ciphertext), Int32(ciphertext.count)),
                "decrypt")
        }
        try check(pushseal_gcm_set_tag(context, bytes(tag), Int32(tag.count)), "set the expected tag")
        var trailing: Int32 = 0
        let end = plaintext.count > 0 ? mutableBytes(plaintext) + Int(written) : mutableBytes(plaintext)
        guard EVP_DecryptFinal_ex(context, end, &trailing) == 1 else {
            ERR_clear_error()
            throw SealCryptoError(.authenticationFailed, "authentication failed: the message was altered or sealed under another key")
        }
    }

    private func check(_ rc: Int32, _ step: String) throws {
        guard rc == 1 else {
            ERR_clear_error()
            // A context left half-initialised must not be trusted for the next message.
            preparedKey = nil
            throw SealCryptoError(.libraryFailure, "OpenSSL failed to \(step)")
        }
    }
}

// GCM accepts empty buffers, whose base address may be nil; OpenSSL wants a valid pointer
// even for zero-length input, so a static byte stands in.
private nonisolated(unsafe) var emptyByte: UInt8 = 0

private func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
    guard let base = buffer.baseAddress else { return withUnsafePointer(to: &emptyByte) { $0 } }
    return base.assumingMemoryBound(to: UInt8.self)
}

private func mutableBytes(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8> {
    guard let base = buffer.baseAddress else { return withUnsafeMutablePointer(to: &emptyByte) { $0 } }
    return base.assumingMemoryBound(to: UInt8.self)
}
