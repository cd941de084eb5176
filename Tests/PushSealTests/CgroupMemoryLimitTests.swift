import Foundation
import Testing

@testable import PushSeal
@testable import PushSealReceiver

/// The memory limit is read the way the kernel applies it: v1 or v2, the smallest along
/// the path, "max" and v1's huge number meaning none.
@Suite("listener memory: the cgroup limit and the bounds that fit it")
struct CgroupMemoryLimitTests {
    private func tree(_ files: [String: String]) throws -> String {
        let root = NSTemporaryDirectory() + "cgroup-\(UUID().uuidString)"
        for (path, text) in files {
            let full = root + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        return root
    }

    @Test func version2TakesTheSmallestLimitAlongThePath() throws {
        let root = try tree([
            "memory.max": "max\n", "system.slice/memory.max": "268435456\n",
            "system.slice/pushseal-listen.service/memory.max": "max\n"
        ])
        #expect(CgroupMemoryLimit.limit(membership: "0::/system.slice/pushseal-listen.service\n", root: root) == 268_435_456)
        #expect(CgroupMemoryLimit.limit(membership: "0::/\n", root: root) == nil)
    }

    @Test func version1ReadsTheMemoryHierarchyAndIgnoresItsNoLimitValue() throws {
        let root = try tree([
            "memory/memory.limit_in_bytes": "9223372036854771712\n",
            "memory/docker/abc/memory.limit_in_bytes": "67108864\n"
        ])
        let membership = "9:pids:/docker/abc\n4:memory:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n"
        #expect(CgroupMemoryLimit.limit(membership: membership, root: root) == 67_108_864)
        #expect(CgroupMemoryLimit.limit(membership: "4:cpu,memory:/\n", root: root) == nil)
    }

    @Test func aNamespacedPathThatIsNotMountedFallsBackToTheMountsTop() throws {
        let root = try tree(["memory.max": "134217728\n"])
        #expect(CgroupMemoryLimit.limit(membership: "0::/not/shown/here\n", root: root) == 134_217_728)
    }

    @Test func theBoundsShrinkTogetherToFitAndChosenOnesAreKept() {
        #expect(ListenerMemoryPlan.fitting(memoryLimit: nil) == .defaults)
        #expect(ListenerMemoryPlan.fitting(memoryLimit: 1 << 30) == .defaults)
        for limit in [48 << 20, 64 << 20, 128 << 20, 200 << 20] {
            let plan = ListenerMemoryPlan.fitting(memoryLimit: limit)
            #expect(plan.bytesAtMost <= ListenerMemoryPlan.usable(limit), "\(limit >> 20) MB: \(plan)")
            #expect(plan.pending < 16_384 && plan.connections < 1_024)
        }
        let chosen = ListenerMemoryPlan.fitting(memoryLimit: 64 << 20, connections: 50, pending: 1_000)
        #expect(chosen.connections == 50 && chosen.pending == 1_000)
        #expect(chosen.bytesAtMost <= ListenerMemoryPlan.usable(64 << 20))
        // Below what the floors need, the floors hold (and the listener warns).
        let tiny = ListenerMemoryPlan.fitting(memoryLimit: 8 << 20)
        #expect(tiny.connections == ListenerMemoryPlan.floors.connections && tiny.pending == ListenerMemoryPlan.floors.pending)
    }
}
