import Dispatch
import Locking
import PushSeal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lines gathered into one unit of work: one buffer and where each line ends, so a batch
/// costs two allocations however many lines it holds.
package struct LineBatch: Sendable {
    package private(set) var bytes: [UInt8] = []
    private var ends: [Int] = []
    private var numbers: [Int] = []
    private var tags: [Int] = []

    package var count: Int { ends.count }
    package var isEmpty: Bool { ends.isEmpty }

    mutating func append(_ line: UnsafeRawBufferPointer, number: Int, tag: Int) {
        bytes.append(contentsOf: line)
        ends.append(bytes.count)
        numbers.append(number)
        tags.append(tag)
    }

    /// Calls `body` with each line, its line number and the tag it was added with, in order.
    package func forEach(_ body: (UnsafeRawBufferPointer, _ number: Int, _ tag: Int) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { all in
            var start = 0
            for index in ends.indices {
                try body(UnsafeRawBufferPointer(rebasing: all[start..<ends[index]]), numbers[index], tags[index])
                start = ends[index]
            }
        }
    }
}

/// Spreads lines over worker threads in batches and, when given `emit`, hands each batch's
/// result back in input order, so output stays stable however the work is scheduled. A
/// caller that orders its own output (the receiver's records) passes no `emit` and pays for
/// no second reordering.
///
/// With one job everything runs on the calling thread: no hand-off at all.
package final class LineWorkerPool<Result: Sendable>: Sendable {
    /// The processors this process may run on.
    package static var availableCores: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    package let jobs: Int
    private let batchLines: Int
    private let process: @Sendable (LineBatch) -> Result
    private let emit: (@Sendable (Result) -> Void)?
    private let queue = DispatchQueue(label: "pushseal.lines", attributes: .concurrent)
    /// Two batches per worker keep every core busy while bounding memory; emit runs under
    /// the window's lock, so results leave in order and one at a time.
    private let window: OrderedWindow<Result>
    private let pending = Locked<(batch: LineBatch, index: Int)>((LineBatch(), 0))

    /// - Parameters:
    ///   - process: runs on a worker; must be safe to run on several batches at once.
    ///   - emit: receives results one at a time, in input order; nil drops them.
    package init(
        jobs: Int, batchLines: Int = 512, process: @escaping @Sendable (LineBatch) -> Result,
        emit: (@Sendable (Result) -> Void)? = nil
    ) {
        self.jobs = max(1, jobs)
        self.batchLines = batchLines
        self.process = process
        self.emit = emit
        window = OrderedWindow(size: 2 * max(1, jobs)) { result in emit?(result) }
    }

    /// Adds a line; dispatches a batch when it is full. `tag` travels with the line (the
    /// receiver's sequence number, say).
    package func add(_ line: UnsafeRawBufferPointer, number: Int, tag: Int = 0) {
        let full: (LineBatch, Int)? = pending.withLock { state in
            state.batch.append(line, number: number, tag: tag)
            guard state.batch.count >= batchLines else { return nil }
            let ready = (state.batch, state.index)
            state.batch = LineBatch()
            state.index += 1
            return ready
        }
        if let (batch, index) = full { dispatch(batch, index: index) }
    }

    /// Dispatches the lines gathered so far without waiting for a full batch: for a slow
    /// stream, whose lines should not wait for the next ones.
    package func dispatchPending() {
        let rest: (LineBatch, Int)? = pending.withLock { state in
            guard !state.batch.isEmpty else { return nil }
            let ready = (state.batch, state.index)
            state.batch = LineBatch()
            state.index += 1
            return ready
        }
        if let (batch, index) = rest { dispatch(batch, index: index) }
    }

    /// Dispatches what is left and waits until every result has been emitted.
    package func finish() {
        dispatchPending()
        window.wait()
    }

    private func dispatch(_ batch: LineBatch, index: Int) {
        if jobs == 1 {
            let result = process(batch)
            emit?(result)
            return
        }
        window.enter()
        queue.async { [self] in
            let result = process(batch)
            guard emit != nil else { return window.drop() }
            window.finish(index, result)
        }
    }
}
