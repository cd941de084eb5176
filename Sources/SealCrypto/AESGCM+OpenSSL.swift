internal import COpenSSL

/// One OpenSSL cipher context holding one key's schedule for one direction: created in
/// init, freed (and so wiped by OpenSSL) in deinit. Every C return code is checked; OpenSSL
/// reports success as 1.
///
/// Contexts belong to their `SymmetricKey`, which lends them out one caller at a time, so a
/// stream of messages under one key pays for the cipher lookup and key expansion once, and
/// the schedule is gone as soon as the key is: after `keys destroy`, no thread keeps it.
final class CipherContext: @unchecked Sendable {
    // Only ever used by the one caller that took it from its key's pool.
    private let context: OpaquePointer
    // GCM accepts empty buffers, whose base address may be nil; OpenSSL wants a valid
    // pointer even for zero-length input and never touches a byte through it.
    private let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

    // OpenSSL returns static, read-only descriptions of the ciphers: safe to share. AES-128
    // is Web Push's (RFC 8291's aes128gcm); every pushseal envelope is AES-256.
    nonisolated(unsafe) private static let cipher256: OpaquePointer? = EVP_aes_256_gcm()
    nonisolated(unsafe) private static let cipher128: OpaquePointer? = EVP_aes_128_gcm()

    init(key: UnsafeRawBufferPointer, encrypting: Bool) throws {
        guard let context = EVP_CIPHER_CTX_new() else {
            throw SealCryptoError(.libraryFailure, "OpenSSL could not allocate a cipher context")
        }
        self.context = context
        scratch.initialize(to: 0)
        let mode: Int32 = encrypting ? 1 : 0
        precondition(key.count == 32 || key.count == 16, "an AES-GCM key is 32 or 16 bytes")
        try check(EVP_CipherInit_ex(context, key.count == 16 ? Self.cipher128 : Self.cipher256, nil, nil, nil, mode), "initialise AES-GCM")
        try check(pushseal_gcm_set_iv_length(context, Int32(AESGCM.nonceByteCount)), "set the nonce length")
        try check(EVP_CipherInit_ex(context, nil, nil, key.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, mode), "set the key")
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
        scratch.deallocate()
    }

    private func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
        guard let base = buffer.baseAddress else { return UnsafePointer(scratch) }
        return base.assumingMemoryBound(to: UInt8.self)
    }

    private func mutableBytes(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8> {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? scratch
    }

    func seal(
        nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        plaintext: UnsafeRawBufferPointer, ciphertext: UnsafeMutableRawBufferPointer,
        tag: UnsafeMutableRawBufferPointer
    ) throws {
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
        nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        plaintext: UnsafeMutableRawBufferPointer
    ) throws {
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
            throw SealCryptoError.openSSL(.authenticationFailed, "authentication failed: the message was altered or sealed under another key")
        }
    }

    private func check(_ rc: Int32, _ step: String) throws {
        guard rc == 1 else {
            throw SealCryptoError.openSSL(.libraryFailure, "OpenSSL failed to \(step)")
        }
    }
}
