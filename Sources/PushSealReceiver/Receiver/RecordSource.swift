/// The `source` a record names when it is not a file's path: `stdin:LINE` or
/// `listen:CONNECTION/STREAM`. Every input has
/// one, so it is written on the stack and made a String once, not concatenated from parts.
package enum RecordSource {
    package static func stdin(line: Int) -> String {
        make("stdin:", line, nil)
    }

    package static func listen(connection: Int, stream: Int32) -> String {
        make("listen:", connection, Int(stream))
    }

    private static func make(_ prefix: StaticString, _ first: Int, _ second: Int?) -> String {
        // The prefix, two 20-digit numbers and a slash fit.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { text in
            var end = 0
            prefix.withUTF8Buffer {
                for byte in $0 {
                    text[end] = byte
                    end += 1
                }
            }
            func number(_ value: Int) {
                if value < 0 {
                    text[end] = UInt8(ascii: "-")
                    end += 1
                }
                var magnitude = value.magnitude
                let start = end
                repeat {
                    text[end] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                    magnitude /= 10
                    end += 1
                } while magnitude > 0
                // Made from the last digit: put them in reading order.
                var digits = UnsafeMutableBufferPointer(rebasing: text[start..<end])
                digits.reverse()
            }
            number(first)
            if let second {
                text[end] = UInt8(ascii: "/")
                end += 1
                number(second)
            }
            return String(decoding: UnsafeBufferPointer(rebasing: text[..<end]), as: UTF8.self)
        }
    }
}
