import MonotonicTime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Durations as people type them: `250ms`, `45s`, `90m`, `12h`, `30d`, `2w`, and several
/// of those from the largest unit down, as `1h30m` or `2d12h`.
package enum DurationText {
    private static let units: [(suffix: String, milliseconds: Int64)] = [
        ("w", 604_800_000), ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)
    ]

    /// Parses a duration of whole units (`0s` included), or of several parts with each unit
    /// smaller than the one before (`1h30m`), or returns nil; never traps, however many
    /// digits come.
    package static func parse(_ text: String) -> Duration? {
        var rest = Substring(text)
        var total: Int64 = 0
        var previous = Int64.max
        repeat {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 15, let amount = Int64(digits) else { return nil }
            rest = rest.dropFirst(digits.count)
            // "ms" before "m": the longest suffix that the text starts with.
            guard let unit = units.filter({ rest.hasPrefix($0.suffix) }).max(by: { $0.suffix.count < $1.suffix.count }),
                unit.milliseconds < previous
            else { return nil }
            rest = rest.dropFirst(unit.suffix.count)
            previous = unit.milliseconds
            let (milliseconds, overflow) = amount.multipliedReportingOverflow(by: unit.milliseconds)
            guard !overflow else { return nil }
            let (sum, sumOverflow) = total.addingReportingOverflow(milliseconds)
            guard !sumOverflow else { return nil }
            total = sum
        } while !rest.isEmpty
        return .milliseconds(total)
    }

    /// Parses a duration and accepts it only within `range`.
    package static func parse(_ text: String, in range: ClosedRange<Duration>) -> Duration? {
        parse(text).flatMap { range.contains($0) ? $0 : nil }
    }

    /// The duration in its largest whole unit: `30d`, `90m`, `250ms`.
    package static func format(_ duration: Duration) -> String {
        let milliseconds = duration.saturatingMilliseconds
        guard milliseconds != 0 else { return "0s" }
        let unit = units.first { milliseconds % $0.milliseconds == 0 } ?? units[units.count - 1]
        return "\(milliseconds / unit.milliseconds)\(unit.suffix)"
    }

    /// How long something took, for people: `850ms`, `2.4s`, `3m12s`, `1h02m`.
    package static func approximate(_ duration: Duration) -> String {
        let milliseconds = duration.saturatingMilliseconds
        let seconds = milliseconds / 1_000
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        switch milliseconds {
        case ..<1_000: return "\(milliseconds)ms"
        case ..<60_000: return "\(seconds).\(milliseconds % 1_000 / 100)s"
        case ..<3_600_000: return "\(seconds / 60)m\(two(seconds % 60))s"
        default: return "\(seconds / 3_600)h\(two(seconds % 3_600 / 60))m"
        }
    }

    /// Whole seconds in `duration`, rounded down.
    package static func seconds(_ duration: Duration) -> Int64 {
        duration.components.seconds
    }
}

/// UTC timestamps as whole Unix seconds, written in RFC 3339 (`2026-12-02T09:00:00Z`).
public enum Timestamp {
    /// Seconds since the Unix epoch, now (moved by `PUSHSEAL_TEST_CLOCK_OFFSET`).
    public static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) &+ testClockOffset
    }

    /// A test hook: `PUSHSEAL_TEST_CLOCK_OFFSET=SECONDS` (signed) moves the wall clock that
    /// `sent`, `exp` and key lifetimes are judged by, so a test can see a message expire
    /// without waiting for it. Read once; anything but a whole number is ignored.
    static let testClockOffset: Int64 = {
        guard let text = getenv("PUSHSEAL_TEST_CLOCK_OFFSET") else { return 0 }
        return Int64(String(cString: text)) ?? 0
    }()

    /// `seconds` as `YYYY-MM-DDTHH:MM:SSZ`.
    public static func format(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return
            "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))T\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))Z"
    }

    /// Reads `YYYY-MM-DDTHH:MM:SSZ`; nil for anything else.
    package static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for index in range {
                guard bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int32(bytes[index] - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Int64(timegm(&parts))
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
