#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one clock that deadlines, timeouts and elapsed times are kept in: CLOCK_MONOTONIC,
/// immune to the wall clock being set, read as whole nanoseconds.
///
/// A value, not a global, so that what keeps deadlines can be given another reading in a
/// test (a clock near the end of its range, or one that stands still). Wall-clock times
/// (expiry, `iat`) are `Timestamp`'s concern, not this clock's.
package struct MonotonicClock: Sendable {
    /// A reading of the clock. Arithmetic saturates: a deadline past the clock's range is
    /// "never", not a trap or a wrap to the past.
    package struct Instant: Sendable, Hashable, Comparable {
        package let nanoseconds: UInt64

        package init(nanoseconds: UInt64) {
            self.nanoseconds = nanoseconds
        }

        /// The latest instant: a deadline that never comes.
        package static let never = Instant(nanoseconds: .max)

        package static func < (left: Instant, right: Instant) -> Bool {
            left.nanoseconds < right.nanoseconds
        }

        /// `instant` moved by `duration`, held within the clock's range.
        package static func + (instant: Instant, duration: Duration) -> Instant {
            instant.advanced(byNanoseconds: duration.saturatingNanoseconds)
        }

        /// The same for a step already in nanoseconds (`Duration.saturatingNanoseconds`):
        /// a caller adding one fixed duration to every reading converts it once.
        package func advanced(byNanoseconds step: Int64) -> Instant {
            if step >= 0 {
                let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(step))
                return Instant(nanoseconds: overflow ? .max : sum)
            }
            let back = step.magnitude
            return Instant(nanoseconds: nanoseconds > back ? nanoseconds - back : 0)
        }

        /// The time from `earlier` to `later`; negative when `later` is the earlier one.
        package static func - (later: Instant, earlier: Instant) -> Duration {
            if later.nanoseconds >= earlier.nanoseconds {
                return .nanoseconds(Int64(clamping: later.nanoseconds - earlier.nanoseconds))
            }
            return .nanoseconds(-Int64(clamping: earlier.nanoseconds - later.nanoseconds))
        }
    }

    private let read: @Sendable () -> UInt64

    /// A clock with readings of the caller's choosing, for tests.
    package init(reading: @escaping @Sendable () -> UInt64) {
        read = reading
    }

    /// CLOCK_MONOTONIC itself.
    package static let system = MonotonicClock {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    package var now: Instant { Instant(nanoseconds: read()) }

    /// How long until `deadline` by this clock; zero once it has passed.
    package func remaining(until deadline: Instant) -> Duration {
        max(.zero, deadline - now)
    }
}

extension Duration {
    /// Whole nanoseconds, rounded toward zero, held at Int64's bounds instead of trapping or
    /// wrapping: the one conversion of a `Duration` to an integer, so a huge budget or
    /// timeout means "very long", never a crash or a negative wait.
    package var saturatingNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowAgain ? (seconds < 0 ? .min : .max) : sum
    }

    /// Whole milliseconds, rounded toward zero, held at Int64's bounds.
    package var saturatingMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflowAgain ? (seconds < 0 ? .min : .max) : sum
    }

    /// The duration as a `timespec` for nanosleep and friends: never negative, held at the
    /// largest wait the type can say.
    package var timespecValue: timespec {
        let nanoseconds = max(0, saturatingNanoseconds)
        return timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}
