/// Web Push's message encryption (RFC 8291): the `aes128gcm` content coding (RFC 8188) of
/// one record, under a key made from an ECDH between a fresh key pair of the sender's and
/// the subscription's `p256dh` key, mixed with the subscription's 16-byte `auth` secret. The
/// push service carries the body and cannot read it; the browser that subscribed opens it.
///
/// Body: salt (16) ‖ record size (4, big-endian) ‖ key id length (1, 65) ‖ the sender's
/// public key (65) ‖ AES-128-GCM of (message ‖ 0x02), the one and last record.
package enum WebPushEncryption {
    package static let authSecretByteCount = 16
    package static let saltByteCount = 16
    /// The record size the header names: the whole message is one record within it.
    package static let recordSize = 4096
    /// Salt, record size, key id length and the sender's public key.
    package static let headerByteCount = saltByteCount + 4 + 1 + P256PublicKey.byteCount
    /// Push services take bodies of 4096 bytes at least (RFC 8030 §7.2), so a message is at
    /// most what fits one: 4096 less the header, the delimiter and the tag.
    package static let maximumMessageByteCount = 4096 - headerByteCount - 1 - AESGCM.tagByteCount

    /// The body's size for a message of `count` bytes.
    package static func sealedByteCount(_ count: Int) -> Int { headerByteCount + count + 1 + AESGCM.tagByteCount }

    /// The body that carries `message` to the browser holding `subscriber`'s private key.
    /// - Parameters:
    ///   - auth: the subscription's `auth` secret, 16 bytes.
    ///   - ephemeral, salt: only RFC 8291's example passes them; each message needs its own.
    package static func seal(
        _ message: some Collection<UInt8>, to subscriber: P256PublicKey, auth: some Collection<UInt8>,
        ephemeral: P256PrivateKey? = nil, salt: [UInt8]? = nil
    ) throws -> [UInt8] {
        let message = Array(message)
        guard message.count <= maximumMessageByteCount else {
            throw SealCryptoError(
                .invalidSealedBox,
                "a Web Push message is at most \(maximumMessageByteCount) bytes; this one is \(message.count), \(message.count - maximumMessageByteCount) over")
        }
        let ephemeral = try ephemeral ?? P256PrivateKey.generate()
        let salt = try salt ?? SecureRandom.bytes(count: saltByteCount)
        guard salt.count == saltByteCount else {
            throw SealCryptoError(.invalidSealedBox, "a Web Push salt is \(saltByteCount) bytes, not \(salt.count)")
        }
        let senderKey = ephemeral.publicKey.x963Representation
        let (key, nonce) = try contentKey(
            ecdh: try ephemeral.sharedSecret(with: subscriber), auth: Array(auth), salt: salt,
            subscriberKey: subscriber.x963Representation, senderKey: senderKey)

        var body = [UInt8]()
        body.reserveCapacity(sealedByteCount(message.count))
        body += salt
        body += [UInt8(recordSize >> 24 & 0xff), UInt8(recordSize >> 16 & 0xff), UInt8(recordSize >> 8 & 0xff), UInt8(recordSize & 0xff)]
        body.append(UInt8(senderKey.count))
        body += senderKey
        // The one record: the message, then 0x02 (the last record's delimiter), no padding.
        var record = message
        record.append(0x02)
        defer { SecureMemory.wipe(&record) }
        let sealedStart = body.count
        body += [UInt8](repeating: 0, count: record.count + AESGCM.tagByteCount)
        try key.withUnsafeBytes { key in
            try nonce.withUnsafeBytes { nonce in
                try record.withUnsafeBytes { record in
                    try body.withUnsafeMutableBytes { out in
                        let ciphertext = UnsafeMutableRawBufferPointer(rebasing: out[sealedStart..<(sealedStart + record.count)])
                        let tag = UnsafeMutableRawBufferPointer(rebasing: out[(sealedStart + record.count)...])
                        try CipherContext(key: key, encrypting: true).seal(
                            nonce: nonce, aad: UnsafeRawBufferPointer(start: nil, count: 0), plaintext: record, ciphertext: ciphertext, tag: tag)
                    }
                }
            }
        }
        return body
    }

    /// The message in `body`, opened with the subscription's private key and `auth` secret;
    /// nothing comes out unless the tag verifies. (The receiving web app does this in the
    /// browser; tests and stand-ins here.)
    package static func open(_ body: some Collection<UInt8>, with subscriber: P256PrivateKey, auth: some Collection<UInt8>) throws -> [UInt8] {
        let body = Array(body)
        guard body.count >= headerByteCount + 1 + AESGCM.tagByteCount else {
            throw SealCryptoError(.invalidSealedBox, "a Web Push body has an 86-byte header and a 17-byte record at least; this one has \(body.count) bytes")
        }
        let salt = Array(body[0..<saltByteCount])
        let size = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let keyLength = Int(body[20])
        guard keyLength == P256PublicKey.byteCount else {
            throw SealCryptoError(.invalidSealedBox, "a Web Push body names the sender's 65-byte key, not \(keyLength) bytes")
        }
        let senderKey = Array(body[21..<headerByteCount])
        let record = body[headerByteCount...]
        guard record.count <= size, size >= 18 else {
            throw SealCryptoError(.invalidSealedBox, "a Web Push body of more than one record (\(record.count) bytes in records of \(size)) is not one pushseal sends")
        }
        let (key, nonce) = try contentKey(
            ecdh: try subscriber.sharedSecret(with: try P256PublicKey(x963Representation: senderKey)), auth: Array(auth), salt: salt,
            subscriberKey: subscriber.publicKey.x963Representation, senderKey: senderKey)
        var plain = [UInt8](repeating: 0, count: record.count - AESGCM.tagByteCount)
        try key.withUnsafeBytes { key in
            try nonce.withUnsafeBytes { nonce in
                try record.withUnsafeBytes { record in
                    try plain.withUnsafeMutableBytes { out in
                        try CipherContext(key: key, encrypting: false).open(
                            nonce: nonce, aad: UnsafeRawBufferPointer(start: nil, count: 0),
                            ciphertext: UnsafeRawBufferPointer(rebasing: record[..<out.count]),
                            tag: UnsafeRawBufferPointer(rebasing: record[out.count...]), plaintext: out)
                    }
                }
            }
        }
        // Padding is zeros after the delimiter; the last (here the only) record's is 0x02.
        guard let end = plain.lastIndex(where: { $0 != 0 }), plain[end] == 0x02 else {
            SecureMemory.wipe(&plain)
            throw SealCryptoError(.invalidSealedBox, "the Web Push record does not end as a last record (0x02 and zeros)")
        }
        plain.removeSubrange(end...)
        return plain
    }

    /// RFC 8291 §3.4 and RFC 8188 §2.2: the content encryption key and nonce.
    private static func contentKey(
        ecdh: SecureBytes, auth: [UInt8], salt: [UInt8], subscriberKey: [UInt8], senderKey: [UInt8]
    ) throws -> (key: SecureBytes, nonce: SecureBytes) {
        guard auth.count == authSecretByteCount else {
            throw SealCryptoError(.invalidKeySize, "a subscription's auth secret is \(authSecretByteCount) bytes, not \(auth.count)")
        }
        let keyInfo = Array("WebPush: info".utf8) + [0] + subscriberKey + senderKey
        let authKey = try auth.withUnsafeBytes { auth in try ecdh.withUnsafeBytes { try HKDF.step(extract: true, auth, $0, length: 32) } }
        let material = try authKey.withUnsafeBytes { prk in try keyInfo.withUnsafeBytes { try HKDF.step(extract: false, prk, $0, length: 32) } }
        let prk = try salt.withUnsafeBytes { salt in try material.withUnsafeBytes { try HKDF.step(extract: true, salt, $0, length: 32) } }
        func expand(_ label: String, _ length: Int) throws -> SecureBytes {
            let info = Array("Content-Encoding: \(label)".utf8) + [0]
            return try prk.withUnsafeBytes { prk in try info.withUnsafeBytes { try HKDF.step(extract: false, prk, $0, length: length) } }
        }
        return (try expand("aes128gcm", 16), try expand("nonce", AESGCM.nonceByteCount))
    }
}
