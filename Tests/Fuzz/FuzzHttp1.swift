@testable import HTTP2

// HTTP1Response.Reader on any bytes: it never traps, its bounds hold, and the answer does not
// depend on how the bytes were cut (whole, at a point the input chooses, or a byte at a time).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP1(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    func read(_ pieces: [ArraySlice<UInt8>]) -> HTTP1Response.Reading {
        var reader = HTTP1Response.Reader()
        var taken = 0
        for piece in pieces {
            let reading = reader.feed(piece)
            switch reading {
            case .incomplete:
                taken += piece.count
                continue
            case .complete(let response, let consumed):
                precondition(consumed >= 0 && consumed <= piece.count, "consumed \(consumed) of \(piece.count)")
                precondition(response.body.count <= HTTP1Response.Limits.keptBody && response.bodyLength >= response.body.count)
                precondition((100...999).contains(response.status))
                // The same answer, said as a count of the whole input.
                return .complete(response, consumed: taken + consumed)
            case .invalid:
                return reading
            }
        }
        let end = reader.end()
        if case .complete(let response, _) = end { return .complete(response, consumed: size) }
        return end
    }
    let whole = read([bytes[...]])
    let cut = size > 0 ? Int(bytes[0]) % (size + 1) : 0
    let split = read([bytes[..<cut], bytes[cut...]])
    precondition(sameOutcome(whole, split), "cut at \(cut): \(whole) vs \(split)")
    if size <= 512 {
        let bytewise = read(bytes.indices.map { bytes[$0...$0] })
        precondition(sameOutcome(whole, bytewise), "a byte at a time: \(whole) vs \(bytewise)")
    }
    return 0
}

/// The same response (or both refused, whatever the words: where the fault was seen may differ).
func sameOutcome(_ a: HTTP1Response.Reading, _ b: HTTP1Response.Reading) -> Bool {
    switch (a, b) {
    case (.invalid, .invalid): true
    default: a == b
    }
}
