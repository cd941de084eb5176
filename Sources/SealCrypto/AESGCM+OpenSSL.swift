internal import COpenSSL

/// One OpenSSL cipher context: created in init, freed in deinit. Every C return code is
/// checked; OpenSSL reports success as 1.
final class CipherContext {
    private let context: OpaquePointer

    init() throws {
        guard let context = EVP_CIPHER_CTX_new() else {
            throw SealCryptoError(.libraryFailure, "OpenSSL could not allocate a cipher context")
        }
        self.context = context
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
    }

    func seal(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        plaintext: UnsafeRawBufferPointer, ciphertext: UnsafeMutableRawBufferPointer,
        tag: UnsafeMutableRawBufferPointer
    ) throws {
        try check(EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil), "initialise encryption")
        try check(pushseal_gcm_set_iv_length(context, Int32(nonce.count)), "set the nonce length")
        try check(EVP_EncryptInit_ex(context, nil, nil, bytes(key), bytes(nonce)), "set the key and nonce")
        var written: Int32 = 0
        if aad.count > 0 {
            try check(EVP_EncryptUpdate(context, nil, &written, bytes(aad), Int32(aad.count)), "add the associated data")
        }
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
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        plaintext: UnsafeMutableRawBufferPointer
    ) throws {
        try check(EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil), "initialise decryption")
        try check(pushseal_gcm_set_iv_length(context, Int32(nonce.count)), "set the nonce length")
        try check(EVP_DecryptInit_ex(context, nil, nil, bytes(key), bytes(nonce)), "set the key and nonce")
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
        let end = plaintext.count > 0 ? mutableBytes(plaintext) + Int(written) : nil
        guard EVP_DecryptFinal_ex(context, end, &trailing) == 1 else {
            ERR_clear_error()
            throw SealCryptoError(.authenticationFailed, "authentication failed: the message was altered or sealed under another key")
        }
    }

    private func check(_ rc: Int32, _ step: String) throws {
        guard rc == 1 else {
            ERR_clear_error()
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
