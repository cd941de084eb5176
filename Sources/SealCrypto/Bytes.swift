extension Collection where Element == UInt8 {
    /// Lends the bytes as one raw buffer: in place when the collection keeps them contiguous
    /// (an array, a slice, Foundation's `Data`, a buffer pointer), else from one temporary
    /// copy, wiped once `body` returns (the bytes may be a key). What lets the public API
    /// take any collection of bytes, as swift-crypto takes `DataProtocol`.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        if let result = try withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) { return result }
        var copy = Array(self)
        defer { SecureMemory.wipe(&copy) }
        return try copy.withUnsafeBytes(body)
    }
}
