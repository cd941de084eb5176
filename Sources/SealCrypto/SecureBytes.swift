internal import COpenSSL

/// Secret bytes with one owner: shared secrets, HKDF outputs, private scalars.
///
/// One allocation, which no copy-on-write can duplicate behind the owner's back (a Swift
/// array wiped through `inout` wipes a fresh copy when another reference shares its
/// buffer), wiped with `OPENSSL_cleanse` exactly once, when the last reference goes. The
/// bytes are only ever lent out.
package final class SecureBytes: @unchecked Sendable {
    // Written in init (or through `withUnsafeMutableBytes` by the code that made it, before
    // it is shared), wiped and freed in deinit.
    private let storage: UnsafeMutableRawBufferPointer

    package var count: Int { storage.count }

    /// `count` zero bytes, to be filled through `withUnsafeMutableBytes`.
    package init(count: Int) {
        // A zero-byte allocation still gets a base address, which OpenSSL calls want.
        let base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        storage = UnsafeMutableRawBufferPointer(start: base, count: count)
    }

    /// A copy of `bytes`, which stay the caller's to wipe.
    package convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if bytes.count > 0 { storage.copyMemory(from: bytes) }
    }

    /// Takes over `bytes`: copies them in and wipes the array in place. The array must be
    /// its buffer's only reference (a fresh local), or the wipe would reach a copy instead.
    package convenience init(moving bytes: inout [UInt8]) {
        self.init(count: bytes.count)
        bytes.withUnsafeMutableBytes { source in
            if source.count > 0 { storage.copyMemory(from: UnsafeRawBufferPointer(source)) }
            pushseal_cleanse(source.baseAddress, source.count)
        }
        bytes = []
    }

    /// The parts one after another, as the labelled inputs of HKDF are made.
    convenience init(concatenating parts: [UnsafeRawBufferPointer]) {
        self.init(count: parts.reduce(0) { $0 + $1.count })
        var offset = 0
        for part in parts where part.count > 0 {
            UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + part.count)]).copyMemory(from: part)
            offset += part.count
        }
    }

    deinit {
        pushseal_cleanse(storage.baseAddress, storage.count)
        storage.baseAddress?.deallocate()
    }

    /// Lends the bytes for the length of `body`; they must not escape it.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// Lends the bytes for writing, to the code that made this buffer.
    package func withUnsafeMutableBytes<Result>(_ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(storage)
    }
}
