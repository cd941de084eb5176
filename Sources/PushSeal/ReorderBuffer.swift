/// Results that finish in any order, handed on in the order they were started.
package struct ReorderBuffer<Value> {
    private var next: Int
    private var waiting: [Int: Value] = [:]

    package init(first: Int) {
        next = first
    }

    /// Stores result number `index`, then passes every result now due to `release`, in
    /// order; returns how many it passed.
    package mutating func finish(_ index: Int, _ value: Value, release: (Value) -> Void) -> Int {
        var released = 0
        if index == next {
            // The usual case (answers come back in order): no trip through the dictionary.
            release(value)
            next += 1
            released = 1
        } else {
            waiting[index] = value
        }
        // An empty dictionary is not searched: in order, nothing ever waits.
        while !waiting.isEmpty, let due = waiting.removeValue(forKey: next) {
            release(due)
            next += 1
            released += 1
        }
        return released
    }
}

extension ReorderBuffer: Sendable where Value: Sendable {}
