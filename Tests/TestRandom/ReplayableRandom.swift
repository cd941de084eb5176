import Foundation
import Locking

/// Random choices a failing test can replay: SplitMix64 from `PUSHSEAL_TEST_SEED` when set,
/// else from a fresh seed, which every message of the test names (`seed N`).
public struct ReplayableRandom: RandomNumberGenerator, Sendable {
    public let seed: UInt64
    private var state: UInt64

    public init() {
        seed = ProcessInfo.processInfo.environment["PUSHSEAL_TEST_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: .min ... .max)
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// One `ReplayableRandom` that concurrent work draws from in turn (its seed is still one
/// number to replay, though the order of the draws across threads may differ). Behind a
/// `Locked`, a pthread mutex ThreadSanitizer sees, as the project's own shared state is.
public final class SharedRandom: Sendable {
    private let generator: Locked<ReplayableRandom>
    public let seed: UInt64

    public init() {
        let random = ReplayableRandom()
        seed = random.seed
        generator = Locked(random)
    }

    public func draw<Value: Sendable>(_ body: (inout ReplayableRandom) -> Value) -> Value {
        generator.withLock { random in
            var copy = random
            defer { random = copy }
            return body(&copy)
        }
    }
}
