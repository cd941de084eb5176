#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// A spool folder watched for notifications: each new `*.json` or `*.apns` file is
/// delivered, its record written and flushed, and only then moved to `processed/`. A file
/// that is not a payload gets its record too and moves to `failed/`, with the reason beside
/// it in `NAME.reason`.
///
/// Nothing is lost: a file leaves the folder only after its record is out, so a receiver
/// killed at any point finds the rest on restart; one killed between writing a record and
/// moving the file delivers that file again (at most twice in all). Producers should write
/// elsewhere (or to a dot-file) and rename into the folder, so no file is read half-written.
public final class SpoolFolder: Sendable {
    public static let processedName = "processed"
    public static let failedName = "failed"

    public let folder: String
    private let runner: ExtensionRunner
    private let sink: @Sendable (DeliveryRecord) -> Void
    private let flush: @Sendable () -> Void
    private let inFlight = Locked(Set<String>())
    private let output = Locked(())
    private let outstanding = DispatchGroup()
    private let submitted = Atomic<Int>(0)

    /// - Parameters:
    ///   - sink: writes one record; `flush` must make it durable before files move.
    public init(folder: String, runner: ExtensionRunner,
                sink: @escaping @Sendable (DeliveryRecord) -> Void, flush: @escaping @Sendable () -> Void) {
        self.folder = folder
        self.runner = runner
        self.sink = sink
        self.flush = flush
    }

    var processedFolder: String { folder + "/" + Self.processedName }
    var failedFolder: String { folder + "/" + Self.failedName }

    /// Creates `processed/` and `failed/` when missing.
    public func prepare() throws {
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
    public func scan() -> Int {
        let names = waitingFiles()
        var started = 0
        for name in names {
            let isNew = inFlight.withLock { $0.insert(name).inserted }
            guard isNew else { continue }
            started += 1
            process(name)
        }
        return started
    }

    /// Waits for every started file to be delivered and moved.
    public func waitUntilIdle() {
        outstanding.wait()
    }

    /// Scans every `interval` until the process is stopped; with `once`, delivers what is
    /// there now and returns.
    public func run(pollInterval: Duration = .milliseconds(50), once: Bool = false) {
        repeat {
            scan()
            if once { break }
            var remaining = timespec(tv_sec: Int(pollInterval.components.seconds),
                                     tv_nsec: Int(pollInterval.components.attoseconds / 1_000_000_000))
            var left = timespec()
            while nanosleep(&remaining, &left) != 0 && errno == EINTR { remaining = left }
        } while true
        waitUntilIdle()
    }

    private func waitingFiles() -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard !name.hasPrefix("."), name.hasSuffix(".json") || name.hasSuffix(".apns") else { continue }
            var info = stat()
            guard lstat(folder + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            names.append(name)
        }
        return names.sorted()
    }

    private func process(_ name: String) {
        let seq = submitted.add(1, ordering: .relaxed).newValue
        outstanding.enter()
        let path = folder + "/" + name
        let input: ReceivedInput
        switch Self.read(path) {
        case .success(let bytes): input = ReceivedInput(bytes: bytes)
        case .failure(let failure): input = .unreadable(reason: "cannot read: \(failure.message)")
        }
        switch input {
        case .unreadable(let reason):
            record(DeliveryRecord(seq: seq, source: name, problem: reason), name: name, failedBecause: reason)
        case .request(let request):
            runner.deliver(request) { [self] delivery in
                record(DeliveryRecord(seq: seq, source: name, delivery: delivery), name: name, failedBecause: nil)
            }
        }
    }

    private func record(_ record: DeliveryRecord, name: String, failedBecause reason: String?) {
        output.withLock { _ in
            sink(record)
            flush()
        }
        let source = folder + "/" + name
        if let reason {
            let reasonPath = failedFolder + "/" + name + ".reason"
            let descriptor = open(reasonPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            if descriptor >= 0 {
                try? FileIO.writeAll(descriptor, Array((reason + "\n").utf8))
                close(descriptor)
            }
            rename(source, failedFolder + "/" + name)
        } else {
            rename(source, processedFolder + "/" + name)
        }
        inFlight.withLock { _ = $0.remove(name) }
        outstanding.leave()
    }

    private static func read(_ path: String) -> Result<[UInt8], FileIOFailure> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return .failure(FileIOFailure(message: FileIO.lastError())) }
        defer { close(descriptor) }
        do {
            return .success(try FileIO.readAll(descriptor))
        } catch {
            return .failure(error)
        }
    }
}
