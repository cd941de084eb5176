import CSystem
import Dispatch
import Locking
import MonotonicTime
import PushSeal
import PushSealJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a user's own extension program for each notification.
///
/// The protocol: the command runs under `/bin/sh -c` in its own process group and gets one
/// JSON request on stdin, `{"identifier":…,"headers":{…},"content":{…},"budget_ms":…}`,
/// whose `content` has every alert field (`title`, `subtitle`, `body`, `badge`, `sound`,
/// `thread-id`, `category`, `target-content-id`, `interruption-level`, `relevance-score`)
/// and `userInfo` (the whole payload). It answers with one JSON object on stdout in the same
/// shape as `content` (members left out keep their value) and exits 0.
/// At the deadline it gets SIGTERM, its `serviceExtensionTimeWillExpire`: it may still
/// print content and exit 0. After the grace it gets SIGKILL. It is also killed when its
/// resident memory passes the limit (24 MB, Apple's cap for a service extension). A crash,
/// a kill, a non-zero exit or output that is not a content object delivers the original.
///
/// Nothing here blocks the caller: each program gets a thread of its own that writes its
/// request, reads its answer and reaps it, and at most `ExtensionProcesses.limit` programs
/// run at once (the others wait for a slot, with their clock already running).
package final class ProcessExtension: NotificationServiceExtension {
    /// Apple's memory cap for a Notification Service Extension.
    package static let defaultMemoryLimit = 24 * 1024 * 1024

    package struct Settings: Sendable {
        package var command: String
        package var memoryLimit: Int
        package var timing: ExtensionRunner.Timing
        package var processes: ExtensionProcesses

        package init(
            command: String, memoryLimit: Int = ProcessExtension.defaultMemoryLimit,
            timing: ExtensionRunner.Timing = .standard, processes: ExtensionProcesses
        ) {
            self.command = command
            self.memoryLimit = memoryLimit
            self.timing = timing
            self.processes = processes
        }
    }

    private enum Phase: Sendable {
        /// Waiting for a process slot.
        case waiting
        /// Spawning; the deadline, if it comes now, is passed on once the pid is known.
        case starting(expired: Bool)
        case running(ChildProcess)
        /// The deadline came before a slot did; the original was delivered.
        case cancelled
        case finished
    }

    private struct State: Sendable {
        var phase = Phase.waiting
        var waitingDelivery: (original: NotificationContent, handler: ContentHandler)?
        var killReason: String?
        nonisolated(unsafe) var timers: [any DispatchSourceTimer] = []
        /// The program's place in `MemoryWatch`, while it runs.
        var memoryWatch: Int?
    }

    private let settings: Settings
    private let state = Locked(State())
    private static let queue = DispatchQueue(label: "pushseal.process-extension", attributes: .concurrent)

    package init(settings: Settings) {
        self.settings = settings
    }

    /// Whether this program's memory is still checked: from its start until it is reaped.
    package var isWatchingMemory: Bool {
        guard let key = state.withLock({ $0.memoryWatch }) else { return false }
        return MemoryWatch.shared.isWatching(key)
    }

    package func didReceive(_ request: NotificationRequest, contentHandler: ContentHandler) {
        state.withLock { $0.waitingDelivery = (request.content, contentHandler) }
        settings.processes.whenFree { [self] in start(request, contentHandler) }
    }

    package func serviceExtensionTimeWillExpire() {
        enum Action {
            case none
            case cancel(NotificationContent, ContentHandler)
            case terminate(ChildProcess)
        }
        let action = state.withLock { state -> Action in
            switch state.phase {
            case .waiting:
                state.phase = .cancelled
                guard let (original, handler) = state.waitingDelivery else { return .none }
                return .cancel(original, handler)
            case .starting:
                state.phase = .starting(expired: true)
                return .none
            case .running(let child):
                return .terminate(child)
            case .cancelled, .finished:
                return .none
            }
        }
        switch action {
        case .none:
            return
        case .cancel(let original, let handler):
            handler(
                original,
                note: DeliveryNote(
                    status: .original,
                    reason: "the deadline passed while \(settings.processes.limit) other extension processes were running"))
        case .terminate(let child):
            child.signal(SIGTERM)
            let killer = DispatchSource.makeTimerSource(queue: Self.queue)
            killer.schedule(deadline: .now() + settings.timing.expiryGrace.dispatchInterval, leeway: .milliseconds(1))
            killer.setEventHandler { [self] in
                let alive = state.withLock { state -> Bool in
                    guard case .running = state.phase else { return false }
                    if state.killReason == nil { state.killReason = "killed after ignoring the deadline" }
                    return true
                }
                if alive { child.signal(SIGKILL) }
            }
            // Resumed before anything else: libdispatch must never release a source that
            // was not resumed, even a cancelled one.
            killer.resume()
            let running = state.withLock { state -> Bool in
                guard case .running = state.phase else { return false }
                state.timers.append(killer)
                return true
            }
            if !running { killer.cancel() }
        }
    }

    /// Runs once a process slot is free.
    private func start(_ request: NotificationRequest, _ contentHandler: ContentHandler) {
        let original = request.content
        func fail(_ reason: String) {
            settings.processes.release()
            contentHandler(original, note: DeliveryNote(status: .original, reason: reason))
        }
        let cancelled = state.withLock { state -> Bool in
            state.waitingDelivery = nil
            if case .cancelled = state.phase { return true }
            state.phase = .starting(expired: false)
            return false
        }
        // The original was delivered when the deadline came; only the slot is left to free.
        guard !cancelled else { return settings.processes.release() }
        let child: ChildProcess
        do {
            child = try spawn(settings.command)
        } catch {
            return fail("cannot start the extension: \(error)")
        }
        settings.processes.started(child)
        // The deadline may have come while the process started; it must still hear it.
        let expiredMeanwhile = state.withLock { state -> Bool in
            defer { state.phase = .running(child) }
            if case .starting(expired: true) = state.phase { return true }
            return false
        }

        let requestBytes = JSONWriter.bytes(.object(Self.requestJSON(request, budget: settings.timing.budget)))
        // Watched before its thread starts: a program that exits at once is reaped on that
        // thread, which removes the watch only if it is already there (registered after, it
        // would tick at 100 Hz for the rest of a long --listen).
        let memory = ResidentMemory(pid: child.pid)
        let watched = MemoryWatch.shared.add { [self] in checkMemory(child, memory) }
        state.withLock { $0.memoryWatch = watched }
        // The program's own thread talks to it with plain blocking calls: no worker and no
        // delivery ever waits on them, and the deadline timers act regardless.
        OwnThread.start(named: "extension-io") { [self] in
            // A program that exits without reading its request closes the pipe: the write
            // then fails with EPIPE in this thread, whatever the process does with SIGPIPE.
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            converse(child, request: requestBytes, original: original, handler: contentHandler)
        }
        if expiredMeanwhile { serviceExtensionTimeWillExpire() }
    }

    /// Writes the request, reads the answer to the end, reaps the program and delivers.
    /// A program that exits without reading its request just closes the pipe (EPIPE).
    private func converse(_ child: ChildProcess, request: [UInt8], original: NotificationContent, handler: ContentHandler) {
        _ = try? FileIO.writeAll(child.descriptor(.input), request)
        child.close(.input)
        let output = child.descriptor(.output)
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            // Content larger than any APNs payload could justify is not kept.
            if answer.count < 1 << 20 { answer.append(contentsOf: chunk[..<count]) }
        }
        child.close(.output)
        // stdout closed: the program is exiting (or closed it early, and then the kill after
        // the grace ends it). Anything the command left behind in its group goes with it, at
        // the reap.
        let status = child.wait() ?? 0
        let (killReason, timers, memoryWatch) = state.withLock { state in
            let result = (state.killReason, state.timers, state.memoryWatch)
            state.timers = []
            state.memoryWatch = nil
            state.phase = .finished
            return result
        }
        timers.forEach { $0.cancel() }
        if let memoryWatch { MemoryWatch.shared.remove(memoryWatch) }
        settings.processes.finished(child)

        let exited = status & 0x7F == 0
        let code = (status >> 8) & 0xFF
        guard exited, code == 0 else {
            let reason = killReason ?? (exited ? "the extension exited with status \(code)" : "the extension was killed by signal \(status & 0x7F)")
            handler(original, note: DeliveryNote(status: .original, reason: reason))
            return
        }
        guard case .object(let object)? = try? JSONParser.parse(answer) else {
            handler(original, note: DeliveryNote(status: .original, reason: "the extension's output is not a JSON content object"))
            return
        }
        handler(Self.content(object, over: original))
    }

    private func checkMemory(_ child: ChildProcess, _ memory: ResidentMemory) {
        // After the exit the pid may name another process: it is not killed.
        guard !child.hasExited, let resident = memory.bytes(), resident > settings.memoryLimit else { return }
        state.withLock {
            if $0.killReason == nil {
                $0.killReason = "killed: resident memory \(resident / 1_048_576) MB passed the \(settings.memoryLimit / 1_048_576) MB limit"
            }
        }
        child.signal(SIGKILL)
    }

    // MARK: The JSON protocol

    /// Every alert field (null when unset), then `userInfo`.
    static func contentJSON(_ content: NotificationContent) -> JSONObject {
        var object = JSONObject()
        for field in AlertField.every {
            object[field.key] = content.fields[field] ?? (field.isText ? .string("") : .null)
        }
        object["userInfo"] = .object(content.userInfo)
        return object
    }

    static func requestJSON(_ request: NotificationRequest, budget: Duration) -> JSONObject {
        var object = JSONObject()
        object["identifier"] = .string(request.identifier)
        object["headers"] = .object(JSONObject(request.headers.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }))
        object["content"] = .object(contentJSON(request.content))
        object["budget_ms"] = .integer(Int64(budget.milliseconds))
        return object
    }

    /// The program's answer over the original: members it leaves out keep their value, and
    /// a value of the wrong kind is ignored, as in a payload.
    static func content(_ answer: JSONObject, over original: NotificationContent) -> NotificationContent {
        var content = original
        for field in AlertField.every {
            if let value = answer[field.key] { try? content.fields.set(field, json: value == .string("") && field.isText ? .null : value) }
        }
        if case .object(let userInfo)? = answer["userInfo"] { content.userInfo = userInfo }
        return content
    }

    // MARK: Processes

    private func spawn(_ command: String) throws(FileIOFailure) -> ChildProcess {
        // bash runs a lone command with exec, so the extension itself is the process that
        // gets the signals and whose exit status counts; plain sh may stay in between.
        let shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh"
        return try ChildProcess(
            shell, [shell, "-c", command], stdin: .pipe, stdout: .pipe, ownGroup: true,
            signals: .extensionContract)
    }
}

/// The resident memory of one extension's processes, from /proc: a compound command's
/// shell is small, the program under it is what counts.
///
/// The check runs every 10 ms for every running extension, so the top process's `statm`
/// and children list stay open and are read again from the start each time: no path is
/// looked up, and a descriptor names its process even after the pid is reused. Only a
/// compound command's descendants are opened anew at each check. Owned by its check in
/// `MemoryWatch`, which never runs twice at once; the descriptors close with it.
final class ResidentMemory: @unchecked Sendable {
    private let pid: pid_t
    // Opened at the first check that can: when descriptors have run out, the next check
    // tries again rather than leaving the program unwatched.
    private var statm: Int32 = -1
    private var children: Int32 = -1

    init(pid: pid_t) {
        self.pid = pid
    }

    deinit {
        if statm >= 0 { close(statm) }
        if children >= 0 { close(children) }
    }

    /// Bytes resident in the process and everything it started, or nil when /proc cannot
    /// tell.
    func bytes() -> Int? {
        guard var total = residentBytes() else { return nil }
        var queue = Self.numbers(in: children) ?? []
        var seen = 1
        while let next = queue.popLast(), seen < 64 {
            seen += 1
            // A descendant is opened for this check only; its descriptors close with it.
            let descendant = ResidentMemory(pid: pid_t(truncatingIfNeeded: next))
            guard let resident = descendant.residentBytes() else { continue }
            total += resident
            queue += Self.numbers(in: descendant.children) ?? []
        }
        return total
    }

    /// This process's own resident bytes: statm's second number is the resident set in
    /// pages, the count status's VmRSS gives.
    private func residentBytes() -> Int? {
        if statm < 0 { statm = open("/proc/\(pid)/statm", O_RDONLY | O_CLOEXEC) }
        if children < 0 { children = open("/proc/\(pid)/task/\(pid)/children", O_RDONLY | O_CLOEXEC) }
        guard let pages = Self.numbers(in: statm), pages.count >= 2 else { return nil }
        return pages[1] * Self.pageSize
    }

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// The decimal numbers in the /proc file open as `descriptor`, read from its start, or
    /// nil when it cannot be read.
    private static func numbers(in descriptor: Int32) -> [Int]? {
        guard descriptor >= 0 else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { buffer -> [Int]? in
            var numbers: [Int] = []
            // A number may straddle two reads, so the digits so far carry over.
            var digits: Int?
            var offset = 0
            while true {
                let count = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
                if count < 0 {
                    if errno == EINTR { continue }
                    return nil
                }
                if count == 0 { break }
                offset += count
                for byte in buffer[..<count] {
                    if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                        digits = (digits ?? 0) &* 10 &+ Int(byte &- UInt8(ascii: "0"))
                    } else if let number = digits {
                        numbers.append(number)
                        digits = nil
                    }
                }
            }
            if let digits { numbers.append(digits) }
            return numbers
        }
    }
}

/// One timer that checks every running extension's memory every 10 ms. A timer per
/// program woke a thread per program a hundred times a second: with 50 programs waiting
/// out a slow answer, that alone was a third of a core. The timer exists only while some
/// program runs.
final class MemoryWatch: Sendable {
    static let shared = MemoryWatch()

    private struct Watched: Sendable {
        var checks: [Int: @Sendable () -> Void] = [:]
        var nextKey = 0
        nonisolated(unsafe) var timer: (any DispatchSourceTimer)?
    }

    private let watched = Locked(Watched())
    private let queue = DispatchQueue(label: "pushseal.memory-watch")

    /// Runs `check` every 10 ms, from 5 ms on, until `remove` with the key returned.
    func add(_ check: @escaping @Sendable () -> Void) -> Int {
        watched.withLock { watched in
            let key = watched.nextKey
            watched.nextKey += 1
            watched.checks[key] = check
            if watched.timer == nil {
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now() + .milliseconds(5), repeating: .milliseconds(10), leeway: .milliseconds(2))
                timer.setEventHandler { [self] in tick() }
                timer.resume()
                watched.timer = timer
            }
            return key
        }
    }

    /// Whether `key` is still checked.
    func isWatching(_ key: Int) -> Bool {
        watched.withLock { $0.checks[key] != nil }
    }

    func remove(_ key: Int) {
        watched.withLock { watched in
            watched.checks[key] = nil
            if watched.checks.isEmpty {
                watched.timer?.cancel()
                watched.timer = nil
            }
        }
    }

    private func tick() {
        // The checks run outside the lock: one may kill its program, whose reaping removes it.
        let checks = watched.withLock { Array($0.checks.values) }
        for check in checks { check() }
    }
}
