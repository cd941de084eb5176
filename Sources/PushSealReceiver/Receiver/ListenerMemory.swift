#if canImport(Glibc)
import PushSeal
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much memory the listener's bounds allow it at most, and the bounds chosen so that
/// it fits the memory it is given: under a cgroup memory limit (a container, systemd's
/// `MemoryMax=`) the defaults shrink together so that the listener's own bounds act (503,
/// GOAWAY) before the kernel's OOM killer does, which would lose records already promised.
package struct ListenerMemoryPlan: Sendable, Equatable {
    /// Connections open at once.
    package var connections: Int
    /// Notifications answered 200 whose records are not out yet.
    package var pending: Int
    /// The payload bytes those may hold.
    package var pendingBytes: Int
    /// Unfinished request bytes (headers and bodies of streams not yet ended), in all.
    package var requestBytes: Int
    /// Record bytes waiting for stdout.
    package var recordBytes: Int

    /// Measured with the release build on 2 cores (`Scripts/bench/soak.sh`, docs/performance.md's
    /// memory section): the process at start, an open TLS connection (OpenSSL's buffers and
    /// nghttp2's session), and a notification waiting for its delivery (its request, content
    /// and record, payload apart).
    package static let baseBytes = 15 << 20
    package static let bytesPerConnection = 37 << 10
    package static let bytesPerPending = 4 << 10
    /// The share of a memory limit the bounds may fill: the rest is room for the
    /// allocator's fragmentation, thread stacks and extension programs' pipes.
    package static let usableShare = (numerator: 3, denominator: 4)

    package static let defaults = ListenerMemoryPlan(
        connections: 1_024, pending: 16_384, pendingBytes: 16 << 20, requestBytes: 16 << 20, recordBytes: 8 << 20)
    /// The least each bound is cut to, however small the limit.
    package static let floors = ListenerMemoryPlan(
        connections: 16, pending: 64, pendingBytes: 256 << 10, requestBytes: 1 << 20, recordBytes: 256 << 10)

    package init(connections: Int, pending: Int, pendingBytes: Int, requestBytes: Int, recordBytes: Int) {
        self.connections = connections
        self.pending = pending
        self.pendingBytes = pendingBytes
        self.requestBytes = requestBytes
        self.recordBytes = recordBytes
    }

    /// The most memory these bounds let the listener take, all of them full at once.
    package var bytesAtMost: Int {
        Self.baseBytes + connections * Self.bytesPerConnection + pending * Self.bytesPerPending
            + pendingBytes + requestBytes + recordBytes
    }

    /// The bounds for a listener given `memoryLimit` bytes (nil: no limit), with the
    /// connection cap and the pending bound the operator chose kept as given. Every bound
    /// not chosen is the default when all fits, else cut by one factor (down to its floor)
    /// so that the whole fits the usable share of the limit.
    package static func fitting(memoryLimit: Int?, connections chosenConnections: Int? = nil, pending chosenPending: Int? = nil) -> ListenerMemoryPlan {
        var plan = defaults
        if let chosenConnections { plan.connections = chosenConnections }
        if let chosenPending { plan.pending = chosenPending }
        guard let memoryLimit, plan.bytesAtMost > usable(memoryLimit) else { return plan }
        // What is fixed (the process, chosen bounds) comes first; the rest shares what is left.
        let fixed =
            baseBytes + (chosenConnections.map { $0 * bytesPerConnection } ?? 0)
            + (chosenPending.map { $0 * bytesPerPending } ?? 0)
        let scalable = plan.bytesAtMost - fixed
        let room = max(0, usable(memoryLimit) - fixed)
        func cut(_ value: Int, _ floor: Int) -> Int {
            max(floor, Int((Double(value) * Double(room) / Double(scalable)).rounded(.down)))
        }
        if chosenConnections == nil { plan.connections = cut(defaults.connections, floors.connections) }
        if chosenPending == nil { plan.pending = cut(defaults.pending, floors.pending) }
        plan.pendingBytes = cut(defaults.pendingBytes, floors.pendingBytes)
        plan.requestBytes = cut(defaults.requestBytes, floors.requestBytes)
        plan.recordBytes = cut(defaults.recordBytes, floors.recordBytes)
        return plan
    }

    /// The part of `memoryLimit` the bounds may fill.
    package static func usable(_ memoryLimit: Int) -> Int {
        memoryLimit / usableShare.denominator * usableShare.numerator
    }
}

/// The memory limit the kernel enforces on this process's cgroup, cgroup v2 (`memory.max`)
/// or v1 (`memory.limit_in_bytes`), the smallest along the path up to the root, since a
/// parent's limit binds its children too. Nil when none is set or none can be read.
package enum CgroupMemoryLimit {
    package static func current() -> Int? {
        guard let membership = readText("/proc/self/cgroup") else { return nil }
        return limit(membership: membership, root: "/sys/fs/cgroup")
    }

    /// The limit for the cgroups listed in `membership` (the text of /proc/PID/cgroup), with
    /// the cgroup file systems mounted under `root`.
    package static func limit(membership: String, root: String) -> Int? {
        var limits: [Int] = []
        for line in membership.split(separator: "\n") {
            // hierarchy-ID:controllers:path; v2's line is "0::/path".
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = String(fields[2])
            if fields[0] == "0", fields[1].isEmpty {
                limits += along(path, under: root, file: "memory.max")
            } else if fields[1].split(separator: ",").contains("memory") {
                limits += along(path, under: root + "/memory", file: "memory.limit_in_bytes")
            }
        }
        return limits.min()
    }

    /// The limits set in `file` of `path` and each folder above it, under `mount`. In a
    /// container the path may name a folder the mount does not show (a cgroup namespace
    /// shows its own root as the mount's top); the mount's top counts then.
    private static func along(_ path: String, under mount: String, file: String) -> [Int] {
        var limits: [Int] = []
        var components = path.split(separator: "/").map(String.init)
        while true {
            let folder = ([mount] + components).joined(separator: "/")
            if let text = readText(folder + "/" + file), let value = parse(text) { limits.append(value) }
            guard !components.isEmpty else { return limits }
            components.removeLast()
        }
    }

    /// A limit in bytes; nil for "max" and for v1's "no limit" (a page-rounded 2^63 − 1).
    private static func parse(_ text: String) -> Int? {
        let trimmed = text.split(whereSeparator: { $0 == "\n" || $0 == " " }).first.map(String.init) ?? ""
        guard let value = Int(trimmed), value > 0, value < 1 << 60 else { return nil }
        return value
    }

    private static func readText(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard let bytes = try? FileIO.readAll(descriptor, bound: .small) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
