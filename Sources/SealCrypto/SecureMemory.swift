internal import COpenSSL

/// Wiping of secret bytes that the optimiser is not allowed to skip.
package enum SecureMemory {
    /// True when `marker` occurs in `bytes`: a search of secret text (a PEM key) without
    /// the `String` copy that nothing would wipe.
    package static func contains(_ bytes: some Collection<UInt8>, _ marker: StaticString) -> Bool {
        let needle = UnsafeBufferPointer(start: marker.utf8Start, count: marker.utf8CodeUnitCount)
        var start = bytes.startIndex
        while start != bytes.endIndex {
            if bytes[start...].starts(with: needle) { return true }
            start = bytes.index(after: start)
        }
        return false
    }

    /// Overwrites every byte of `bytes` with zero, through OpenSSL's `OPENSSL_cleanse`.
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { pushseal_cleanse($0.baseAddress, $0.count) }
    }

    /// Overwrites a raw buffer with zero.
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        pushseal_cleanse(buffer.baseAddress, buffer.count)
    }

    /// Marks the process non-dumpable: no core file, and no ptrace or /proc/PID/mem by
    /// other users, can then expose a key. A process-wide setting, so only an executable's
    /// start-up calls it; returns whether the kernel agreed.
    @discardableResult
    package static func protectProcess() -> Bool {
        pushseal_set_not_dumpable() == 0
    }

    /// Whether the process could currently be dumped (false once a key was held).
    package static var isProcessDumpable: Bool { pushseal_is_dumpable() != 0 }
}

/// Comparisons whose running time does not depend on where the inputs differ.
package enum ConstantTime {
    /// True when both buffers hold the same bytes; lengths are not secret.
    package static func equal(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard lhs.count > 0 else { return true }
        return CRYPTO_memcmp(lhs.baseAddress, rhs.baseAddress, lhs.count) == 0
    }

    /// True when both byte arrays are equal.
    package static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in equal(l, r) } }
    }
}
