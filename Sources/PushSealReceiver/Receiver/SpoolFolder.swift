import CSystem
import Dispatch
import Locking
import MonotonicTime
import PushSeal
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A spool folder watched for notifications: each new `*.json` or `*.apns` file is
/// delivered, its record written and flushed, and only then moved to `processed/`. A file
/// that is not a payload gets its record too and moves to `failed/`, with the reason beside
/// it in `NAME.reason`.
///
/// Nothing is lost, repeated or overwritten:
/// - a file leaves the folder only after its record is out, so a receiver killed at any
///   point finds the rest on restart; one killed between writing a record and moving the
///   file delivers that file again (at most twice in all);
/// - a record that cannot be written, or a file that cannot be moved, stops the watch with
///   that error (the file stays where it is), instead of delivering it again and again;
/// - a name already taken in `processed/` or `failed/` gets a `.N` suffix, never replaces
///   the file there;
/// - names are handled as the bytes they are, so a name that is not UTF-8 is delivered and
///   moved like any other (its record shows it with `\xNN` escapes).
///
/// Producers should write elsewhere (or to a dot-file) and rename into the folder, so no
/// file is read half-written.
package final class SpoolFolder: Sendable {
    package static let processedName = "processed"
    package static let failedName = "failed"

    package let folder: String
    private let runner: ExtensionRunner
    private let sink: @Sendable (DeliveryRecord, _ written: @escaping @Sendable (String?) -> Void) -> Void
    private let inFlight = Locked(Set<[UInt8]>())
    private let outstanding = DispatchGroup()
    private let submitted = Atomic<Int>(0)
    /// The first error that stops the watch.
    private let failure = Locked<FileIOFailure?>(nil)
    private let stop: StopRequest?

    /// - Parameters:
    ///   - sink: takes one record without waiting, and calls `written` once it is out
    ///     (written and flushed: nil) or never will be (why); only then is the file moved.
    ///     A failure stops the watch and leaves the file in place. `written` may run on
    ///     any thread.
    ///   - stop: ends `run` when requested (a signal, a closed output).
    package init(
        folder: String, runner: ExtensionRunner, stop: StopRequest? = nil,
        sink: @escaping @Sendable (DeliveryRecord, _ written: @escaping @Sendable (String?) -> Void) -> Void
    ) {
        self.folder = folder
        self.runner = runner
        self.stop = stop
        self.sink = sink
    }

    var processedFolder: String { folder + "/" + Self.processedName }
    var failedFolder: String { folder + "/" + Self.failedName }

    /// Creates `processed/` and `failed/` when missing.
    package func prepare() throws(FileIOFailure) {
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw FileIOFailure(message: "\(folder) is not a folder")
        }
        for path in [processedFolder, failedFolder] where mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw FileIOFailure(message: "cannot create \(path): \(FileIO.lastError())")
        }
    }

    /// Starts delivering every waiting file not already in flight, oldest name first;
    /// returns how many it started.
    @discardableResult
    package func scan() -> Int {
        var started = 0
        for name in waitingFiles() {
            guard failure.withLock({ $0 == nil }), stop?.isRequested != true else { break }
            let isNew = inFlight.withLock { $0.insert(name).inserted }
            guard isNew else { continue }
            started += 1
            process(name)
        }
        return started
    }

    /// Waits for every started file to be delivered and moved.
    package func waitUntilIdle() {
        outstanding.wait()
    }

    /// Scans every `pollInterval` until a stop is requested or an error stops the watch;
    /// with `once`, delivers what is there now and returns. Throws the error that stopped it,
    /// after every delivery already started has its record.
    package func run(pollInterval: Duration = .milliseconds(50), once: Bool = false) throws(FileIOFailure) {
        repeat {
            scan()
            if once || failure.withLock({ $0 != nil }) { break }
            if let stop {
                guard stop.sleep(pollInterval) else { break }
            } else {
                var remaining = pollInterval.timespecValue
                var left = timespec()
                while nanosleep(&remaining, &left) != 0 && errno == EINTR { remaining = left }
            }
        } while failure.withLock({ $0 == nil })
        waitUntilIdle()
        if let failure = failure.withLock({ $0 }) { throw failure }
    }

    private func waitingFiles() -> [[UInt8]] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            guard name.first != UInt8(ascii: "."), name.hasSuffix(".json") || name.hasSuffix(".apns") else { continue }
            var info = stat()
            guard Self.path(folder, name, { lstat($0, &info) }) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            names.append(name)
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    private func process(_ name: [UInt8]) {
        let seq = submitted.add(1, ordering: .relaxed).newValue
        outstanding.enter()
        let source = TerminalText.escapingBytes(name)
        let input: ReceivedInput
        switch read(name) {
        case .success(let bytes): input = ReceivedInput(bytes: bytes)
        case .failure(let failure): input = .unreadable(reason: "cannot read: \(failure.message)")
        }
        switch input {
        case .unreadable(let reason):
            record(DeliveryRecord(seq: seq, source: source, problem: reason), name: name, failedBecause: reason)
        case .request(let request):
            runner.deliver(request) { [self] delivery in
                record(DeliveryRecord(seq: seq, source: source, delivery: delivery), name: name, failedBecause: nil)
            }
        }
    }

    private func record(_ record: DeliveryRecord, name: [UInt8], failedBecause reason: String?) {
        // The delivering thread (a runner's timer among them) only hands the record over;
        // the file is moved once its record is out.
        sink(record) { [self] problem in
            defer { outstanding.leave() }
            let shown = TerminalText.escapingBytes(name)
            do throws(FileIOFailure) {
                if let problem { throw FileIOFailure(message: "cannot write the record of \(shown): \(problem)") }
                if let reason {
                    try writeReason(reason, for: name)
                    try move(name, into: Self.failedName)
                } else {
                    try move(name, into: Self.processedName)
                }
            } catch {
                // The file stays, and stays marked in flight, so it is neither lost nor repeated.
                failure.withLock { if $0 == nil { $0 = error } }
                stop?.request()
                return
            }
            inFlight.withLock { _ = $0.remove(name) }
        }
    }

    private func writeReason(_ reason: String, for name: [UInt8]) throws(FileIOFailure) {
        let target = try freeName(name + Array(".reason".utf8), in: Self.failedName)
        let descriptor = Self.path(failedFolder, target) { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else {
            throw FileIOFailure(message: "cannot write the reason for \(TerminalText.escapingBytes(name)) in \(Self.failedName)/: \(FileIO.lastError())")
        }
        defer { close(descriptor) }
        do {
            try FileIO.writeAll(descriptor, Array((reason + "\n").utf8))
        } catch {
            throw FileIOFailure(code: error.code, message: "cannot write the reason for \(TerminalText.escapingBytes(name)) in \(Self.failedName)/: \(error.message)")
        }
    }

    /// Moves a delivered file into `processed/` or `failed/` without replacing anything there.
    private func move(_ name: [UInt8], into subfolder: String) throws(FileIOFailure) {
        var attempt = 0
        while true {
            let target = attempt == 0 ? name : name + Array(".\(attempt)".utf8)
            let rc = Self.path(folder, name) { from in
                Self.path(folder + "/" + subfolder, target) { to in pushseal_rename_noreplace(from, to) }
            }
            if rc == 0 { return }
            guard errno == EEXIST, attempt < 10_000 else {
                throw FileIOFailure(message: "cannot move \(TerminalText.escapingBytes(name)) into \(subfolder)/: \(FileIO.lastError())")
            }
            attempt += 1
        }
    }

    /// `name`, or `name.N` for the first N not taken in `subfolder`.
    private func freeName(_ name: [UInt8], in subfolder: String) throws(FileIOFailure) -> [UInt8] {
        var info = stat()
        for attempt in 0..<10_000 {
            let candidate = attempt == 0 ? name : name + Array(".\(attempt)".utf8)
            if Self.path(folder + "/" + subfolder, candidate, { lstat($0, &info) }) != 0 && errno == ENOENT { return candidate }
        }
        throw FileIOFailure(message: "no free name for \(TerminalText.escapingBytes(name)) in \(subfolder)/")
    }

    private func read(_ name: [UInt8]) -> Result<[UInt8], FileIOFailure> {
        let descriptor = Self.path(folder, name) { open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard descriptor >= 0 else { return .failure(FileIOFailure(message: FileIO.lastError())) }
        defer { close(descriptor) }
        // A file larger than any input is refused by its size, unread: the watcher runs in
        // a small memory budget (pushseal-watch.service's MemoryMax), and one huge file read
        // whole would end it before it could move the file aside, again on every restart.
        var info = stat()
        if fstat(descriptor, &info) == 0, Int(info.st_size) > InputBound.payloadInput.bytes {
            return .failure(FileIOFailure(message: "the file is \(info.st_size) bytes, more than \(InputBound.payloadInput.limitText); not read"))
        }
        do {
            return .success(try FileIO.readAll(descriptor, bound: .payloadInput))
        } catch {
            return .failure(error)
        }
    }

    /// Calls `body` with `folder/name` as a C string built from the name's own bytes.
    private static func path<Result>(_ folder: String, _ name: [UInt8], _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        var bytes = Array(folder.utf8)
        bytes.append(UInt8(ascii: "/"))
        bytes.append(contentsOf: name)
        bytes.append(0)
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count, body)
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func hasSuffix(_ suffix: String) -> Bool {
        let tail = Array(suffix.utf8)
        return count >= tail.count && self[(count - tail.count)...].elementsEqual(tail)
    }
}
