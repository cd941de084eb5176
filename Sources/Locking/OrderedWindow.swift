import Dispatch

/// Results that finish in any order on any thread, handed on in the order they were started,
/// with at most `size` of them started and not yet handed on: the one ordered window behind
/// `send`'s results, `receive`'s records and `encrypt --batch`'s lines. A caller waits for
/// room before it starts one (`enter`), numbers its results itself (0, 1, 2, … from `first`),
/// and `finish`es each as it comes; `wait` returns once every started one was handed on.
///
/// Public and inlinable, as `Locked` is, so the modules above specialise it for their values
/// instead of running generic code for every result.
public final class OrderedWindow<Value: Sendable>: Sendable {
    @usableFromInline let order: Locked<ReorderBuffer<Value>>
    @usableFromInline let room: DispatchSemaphore
    @usableFromInline let outstanding = DispatchGroup()
    @usableFromInline let release: @Sendable (Value) -> Void

    /// - Parameter release: gets each result in order, one at a time (under the window's lock).
    @inlinable
    public init(size: Int, first: Int = 0, release: @escaping @Sendable (Value) -> Void) {
        order = Locked(ReorderBuffer(first: first))
        room = DispatchSemaphore(value: max(1, size))
        self.release = release
    }

    /// Waits while `size` results are started and not handed on, then counts one more.
    @inlinable
    public func enter() {
        room.wait()
        outstanding.enter()
    }

    /// Result number `index` is done: it and every result now due are handed on, in order.
    /// Returns how many were.
    @inlinable
    @discardableResult
    public func finish(_ index: Int, _ value: Value) -> Int {
        let released = order.withLock { $0.finish(index, value, release: release) }
        for _ in 0..<released {
            room.signal()
            outstanding.leave()
        }
        return released
    }

    /// A started result that is dropped rather than handed on (a window whose results
    /// nobody reads): its room is free again.
    @inlinable
    public func drop() {
        room.signal()
        outstanding.leave()
    }

    /// Waits until every result started has been handed on (or dropped).
    @inlinable
    public func wait() {
        outstanding.wait()
    }
}

/// Results that finish in any order, handed on in the order they were started.
@usableFromInline
struct ReorderBuffer<Value> {
    @usableFromInline var next: Int
    @usableFromInline var waiting: [Int: Value] = [:]

    @inlinable
    init(first: Int) {
        next = first
    }

    /// Stores result number `index`, then passes every result now due to `release`, in
    /// order; returns how many it passed.
    @inlinable
    mutating func finish(_ index: Int, _ value: Value, release: (Value) -> Void) -> Int {
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
