import Dispatch
import Locking
import PushSeal
import PushSealJSON
import SealCrypto

#if canImport(Glibc)
import Glibc
#endif

/// A set of 64-bit fingerprints in 256 open-addressed tables (chosen by the top byte), each
/// grown by half when four fifths full: memory follows the count closely, and a growth
/// copies one table, not all of them.
struct FingerprintSet {
    private var tables = [[UInt64]](repeating: [], count: 256)
    private var counts = [Int](repeating: 0, count: 256)

    /// Sizes every table for `count` fingerprints in all, spread evenly.
    mutating func reserve(_ count: Int) {
        let each = count / tables.count * 5 / 4 + 64
        for table in tables.indices where tables[table].count < each && counts[table] == 0 {
            tables[table] = [UInt64](repeating: 0, count: each)
        }
    }

    /// True when `fingerprint` was not in the set (it is now).
    mutating func insert(_ fingerprint: UInt64) -> Bool {
        // 0 marks an empty slot.
        let value = fingerprint == 0 ? 1 : fingerprint
        let table = Int(value >> 56)
        if (counts[table] + 1) * 5 > tables[table].count * 4 { grow(table) }
        let inserted = tables[table].withUnsafeMutableBufferPointer { Self.place(value, in: $0) }
        if inserted { counts[table] += 1 }
        return inserted
    }

    private mutating func grow(_ table: Int) {
        var bigger = [UInt64](repeating: 0, count: tables[table].count * 3 / 2 + 64)
        bigger.withUnsafeMutableBufferPointer { slots in
            for value in tables[table] where value != 0 { _ = Self.place(value, in: slots) }
        }
        tables[table] = bigger
    }

    /// Linear probing from a slot chosen by the bits below the top byte (which every value
    /// of one table shares).
    private static func place(_ value: UInt64, in slots: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        var index = Int((value << 8).multipliedFullWidth(by: UInt64(slots.count)).high)
        while slots[index] != 0 {
            if slots[index] == value { return false }
            index = index + 1 == slots.count ? 0 : index + 1
        }
        slots[index] = value
        return true
    }
}
