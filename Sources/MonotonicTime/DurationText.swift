import Dispatch

// Every conversion of a `Duration` the project makes, in one drawer: to integers (in
// MonotonicClock.swift, beside the clock), to Dispatch and `timespec`, and to text.

extension Duration {
    /// The duration as a Dispatch interval, never negative; saturates instead of trapping.
    package var dispatchInterval: DispatchTimeInterval {
        .nanoseconds(Int(clamping: max(0, saturatingNanoseconds)))
    }

    /// Milliseconds as a fraction, for figures (a benchmark's lateness, a program's budget).
    package var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }

    /// "500 ms", "10 s", "1.5 s": for messages.
    package var shortText: String {
        let milliseconds = saturatingMilliseconds
        if milliseconds < 1_000 { return "\(milliseconds) ms" }
        if milliseconds % 1_000 == 0 { return "\(milliseconds / 1_000) s" }
        return "\(Double(milliseconds) / 1_000) s"
    }

    /// Milliseconds with three decimals ("12.345"), as records and results show elapsed
    /// time: the one rounding, to whole microseconds, half away from zero.
    package var millisecondsText: String {
        var text = [UInt8]()
        appendMillisecondsText(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The same, appended as bytes: every record carries one.
    package func appendMillisecondsText(to output: inout [UInt8]) {
        // Whole microseconds, in integers: the two parts of a duration carry the same sign.
        let (seconds, attoseconds) = components
        let half: Int64 = attoseconds < 0 ? -500_000_000_000 : 500_000_000_000
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (sum, carry) = scaled.addingReportingOverflow((attoseconds + half) / 1_000_000_000_000)
        // Far beyond any delivery's time; held at the bound rather than trapping.
        let micros = overflow || carry ? (seconds < 0 ? Int64.min : .max) : sum
        let whole = micros / 1_000
        let fraction = Int(micros % 1_000).magnitude
        if micros < 0, whole == 0 { output.append(UInt8(ascii: "-")) }
        output.append(contentsOf: String(whole).utf8)
        output.append(UInt8(ascii: "."))
        output.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        output.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        output.append(UInt8(ascii: "0") + UInt8(fraction % 10))
    }
}
