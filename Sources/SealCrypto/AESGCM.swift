/// AES-256-GCM with a 96-bit nonce and a 128-bit tag, the only parameters the `ps1`
/// envelope and CryptoKit's `AES.GCM` use.
package enum AESGCM {
    /// Bytes in a nonce (IV). GCM is specified for any length, but 12 avoids the GHASH
    /// derivation step and is what CryptoKit generates.
    package static let nonceByteCount = 12
    /// Bytes in an authentication tag; shorter tags are refused, never accepted.
    package static let tagByteCount = 16

    /// Encrypts and authenticates `plaintext`, binding `authenticatedData` to it.
    ///
    /// - Parameter nonce: leave `nil` for a fresh random nonce. Only tests pass one:
    ///   reusing a nonce under the same key reveals the XOR of the plaintexts.
    package static func seal(
        _ plaintext: some Collection<UInt8>,
        using key: SymmetricKey,
        nonce: [UInt8]? = nil,
        authenticating authenticatedData: some Collection<UInt8> = [UInt8]()
    ) throws -> SealedBox {
        try plaintext.withBytes { input in
            try authenticatedData.withBytes { aad in try sealBox(input, using: key, nonce: nonce, authenticating: aad) }
        }
    }

    private static func sealBox(
        _ input: UnsafeRawBufferPointer, using key: SymmetricKey, nonce: [UInt8]?, authenticating aad: UnsafeRawBufferPointer
    ) throws -> SealedBox {
        let count = sealedByteCount(input.count)
        // Every byte is written by the seal, so the box is not zeroed first.
        let combined = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try seal(input, using: key, nonce: nonce, authenticating: aad, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
        return try SealedBox(combined: combined)
    }

    /// Bytes in the sealed box of a `plaintextCount`-byte message: nonce ‖ ciphertext ‖ tag.
    package static func sealedByteCount(_ plaintextCount: Int) -> Int {
        nonceByteCount + plaintextCount + tagByteCount
    }

    /// The same, written into `combined` (exactly `sealedByteCount(plaintext.count)` bytes)
    /// in CryptoKit's `combined` layout, so a caller that only encodes the box (`encrypt
    /// --batch`, once per line) needs no array for it.
    package static func seal(
        _ plaintext: UnsafeRawBufferPointer,
        using key: SymmetricKey,
        nonce: [UInt8]? = nil,
        authenticating authenticatedData: UnsafeRawBufferPointer,
        into combined: UnsafeMutableRawBufferPointer
    ) throws {
        precondition(combined.count == sealedByteCount(plaintext.count), "the box must fit the plaintext exactly")
        let nonceBytes = UnsafeMutableRawBufferPointer(rebasing: combined[..<nonceByteCount])
        if let nonce {
            guard nonce.count == nonceByteCount else {
                throw SealCryptoError(.invalidNonceSize, "a nonce is \(nonceByteCount) bytes, not \(nonce.count)")
            }
            nonce.withUnsafeBytes { nonceBytes.copyMemory(from: $0) }
        } else {
            try SecureRandom.fillPublic(nonceBytes)
        }
        let ciphertextEnd = nonceByteCount + plaintext.count
        let ciphertext = UnsafeMutableRawBufferPointer(rebasing: combined[nonceByteCount..<ciphertextEnd])
        let tag = UnsafeMutableRawBufferPointer(rebasing: combined[ciphertextEnd...])
        try key.withCipherContext(encrypting: true) {
            try $0.seal(
                nonce: UnsafeRawBufferPointer(nonceBytes), aad: authenticatedData,
                plaintext: plaintext, ciphertext: ciphertext, tag: tag)
        }
    }

    /// Verifies the tag and returns the plaintext.
    ///
    /// No plaintext byte leaves this function unless the tag verifies: decryption happens
    /// into a private buffer that is wiped when verification fails.
    package static func open(
        _ box: SealedBox,
        using key: SymmetricKey,
        authenticating authenticatedData: some Collection<UInt8> = [UInt8]()
    ) throws -> [UInt8] {
        var plaintext = [UInt8](repeating: 0, count: box.ciphertextByteCount)
        try box.combined.withUnsafeBytes { combined in
            try authenticatedData.withBytes { aad in
                try plaintext.withUnsafeMutableBytes { try open(combined: combined, using: key, authenticating: aad, into: $0) }
            }
        }
        return plaintext
    }

    /// The same from a nonce and `ciphertext ‖ tag` wherever they lie (HPKE makes its nonce
    /// apart from the message), so nothing is copied into a box first. The caller has
    /// checked that a whole tag is there.
    static func open(
        nonce: UnsafeRawBufferPointer, ciphertextAndTag sealed: UnsafeRawBufferPointer,
        using key: SymmetricKey, authenticating aad: UnsafeRawBufferPointer
    ) throws -> [UInt8] {
        var plaintext = [UInt8](repeating: 0, count: sealed.count - tagByteCount)
        try plaintext.withUnsafeMutableBytes { output in
            try open(nonce: nonce, ciphertextAndTag: sealed, using: key, authenticating: aad, into: output)
        }
        return plaintext
    }

    /// Bytes of plaintext in a sealed box of `combinedCount` bytes (at least a nonce and a tag).
    package static func plaintextByteCount(_ combinedCount: Int) -> Int {
        combinedCount - nonceByteCount - tagByteCount
    }

    /// Opens a box in CryptoKit's `combined` layout into `plaintext`, which holds exactly
    /// `plaintextByteCount(combined.count)` bytes: the receiver opens into memory of its
    /// own (on the stack) rather than a new array. When the tag does not verify, `plaintext`
    /// is wiped before the error is thrown, so it never holds unauthenticated bytes.
    package static func open(
        combined: UnsafeRawBufferPointer, using key: SymmetricKey,
        authenticating aad: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer
    ) throws {
        guard combined.count >= nonceByteCount + tagByteCount else { throw SealedBox.tooShort(combined.count) }
        try open(
            nonce: UnsafeRawBufferPointer(rebasing: combined[..<nonceByteCount]),
            ciphertextAndTag: UnsafeRawBufferPointer(rebasing: combined[nonceByteCount...]),
            using: key, authenticating: aad, into: plaintext)
    }

    private static func open(
        nonce: UnsafeRawBufferPointer, ciphertextAndTag sealed: UnsafeRawBufferPointer,
        using key: SymmetricKey, authenticating aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws {
        precondition(output.count == sealed.count - tagByteCount, "the plaintext buffer must fit the ciphertext exactly")
        do {
            let ciphertext = UnsafeRawBufferPointer(rebasing: sealed[..<(sealed.count - tagByteCount)])
            let tag = UnsafeRawBufferPointer(rebasing: sealed[(sealed.count - tagByteCount)...])
            try key.withCipherContext(encrypting: false) {
                try $0.open(nonce: nonce, aad: aad, ciphertext: ciphertext, tag: tag, plaintext: output)
            }
        } catch {
            SecureMemory.wipe(output)
            throw error
        }
    }
}

/// A sealed message in CryptoKit's `combined` layout: nonce ‖ ciphertext ‖ tag.
package struct SealedBox: Sendable, Equatable {
    /// The whole box as one buffer; nonce, ciphertext and tag are views of it.
    package let combined: [UInt8]

    /// Wraps a combined buffer, refusing one too short to hold a nonce and a full tag.
    package init(combined: some Collection<UInt8>) throws {
        let combined = Array(combined)
        guard combined.count >= AESGCM.nonceByteCount + AESGCM.tagByteCount else { throw Self.tooShort(combined.count) }
        self.combined = combined
    }

    static func tooShort(_ count: Int) -> SealCryptoError {
        SealCryptoError(
            .invalidSealedBox,
            "a sealed box holds at least a \(AESGCM.nonceByteCount)-byte nonce and a \(AESGCM.tagByteCount)-byte tag, this one has \(count) bytes")
    }

    /// Assembles a box from its parts; the nonce must be 12 bytes and the tag 16.
    package init(nonce: some Collection<UInt8>, ciphertext: some Collection<UInt8>, tag: some Collection<UInt8>) throws {
        guard nonce.count == AESGCM.nonceByteCount else {
            throw SealCryptoError(.invalidNonceSize, "a nonce is \(AESGCM.nonceByteCount) bytes, not \(nonce.count)")
        }
        guard tag.count == AESGCM.tagByteCount else {
            throw SealCryptoError(.invalidSealedBox, "a tag is \(AESGCM.tagByteCount) bytes, not \(tag.count)")
        }
        try self.init(combined: Array(nonce) + Array(ciphertext) + Array(tag))
    }

    package var nonce: ArraySlice<UInt8> { combined[..<AESGCM.nonceByteCount] }
    package var ciphertext: ArraySlice<UInt8> {
        combined[AESGCM.nonceByteCount..<(combined.count - AESGCM.tagByteCount)]
    }
    package var tag: ArraySlice<UInt8> { combined[(combined.count - AESGCM.tagByteCount)...] }
    var ciphertextByteCount: Int { AESGCM.plaintextByteCount(combined.count) }
}
