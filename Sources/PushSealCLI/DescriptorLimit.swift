import Locking
import PushSeal
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The process's descriptor limit (RLIMIT_NOFILE).
enum DescriptorLimit {
    static var current: Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(clamping: limit.rlim_cur)
    }

    /// Descriptors this process may still open: the soft limit less those open now.
    static var free: Int {
        guard let listing = opendir("/proc/self/fd") else { return current }
        defer { closedir(listing) }
        var open = -1 // the listing's own descriptor
        while let entry = readdir(listing) {
            if entry.pointee.d_name.0 != CChar(UInt8(ascii: ".")) { open += 1 }
        }
        return current - open
    }

    /// Raises the soft limit to the hard one: a server's connections each take a descriptor,
    /// and the usual soft limit (1024) is below what it admits. Called from `main`, which
    /// owns process-wide settings.
    static func raiseToHard() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
