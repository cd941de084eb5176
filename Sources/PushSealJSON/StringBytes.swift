extension String {
    /// Calls `body` with the text's UTF-8 bytes, read in place where they are contiguous
    /// (always, for a native String). `withUTF8` needs a mutable copy, which retains and
    /// releases the text: the per-notification paths (records, envelopes, the listener's
    /// checks) read their strings through this instead.
    @inlinable
    package func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}
