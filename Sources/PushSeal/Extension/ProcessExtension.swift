#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Runs a user's own extension program for each notification.
///
/// The protocol: the command runs under `/bin/sh -c` in its own process group and gets one
/// JSON request on stdin, `{"identifier":…,"headers":{…},"content":{…},"budget_ms":…}`,
/// whose `content` has `title`, `subtitle`, `body`, `badge`, `sound`, `thread-id`,
/// `category` and `userInfo` (the whole payload). It answers with one JSON object on stdout
/// in the same shape as `content` (members left out keep their value) and exits 0.
/// At the deadline it gets SIGTERM, its `serviceExtensionTimeWillExpire`: it may still
/// print content and exit 0. After the grace it gets SIGKILL. It is also killed when its
/// resident memory passes the limit (24 MB, Apple's cap for a service extension). A crash,
/// a kill, a non-zero exit or output that is not a content object delivers the original.
public final class ProcessExtension: NotificationServiceExtension {
    /// Apple's memory cap for a Notification Service Extension.
    public static let defaultMemoryLimit = 24 * 1024 * 1024

    public struct Settings: Sendable {
        public var command: String
        public var memoryLimit: Int
        public var timing: ExtensionRunner.Timing

        public init(command: String, memoryLimit: Int = ProcessExtension.defaultMemoryLimit, timing: ExtensionRunner.Timing = .standard) {
            self.command = command
            self.memoryLimit = memoryLimit
            self.timing = timing
        }
    }

    private struct State {
        var pid: pid_t = 0
        var killReason: String?
        nonisolated(unsafe) var timers: [any DispatchSourceTimer] = []
        nonisolated(unsafe) var reader: (any DispatchSourceRead)?
        var output: [UInt8] = []
    }

    private let settings: Settings
    private let state = Locked(State())
    private static let spawnLock = Locked(())
    private static let queue = DispatchQueue(label: "pushseal.process-extension", attributes: .concurrent)
    private static let ignoreBrokenPipes: Void = {
        // A child that exits without reading its request must not take the receiver down
        // with SIGPIPE; the write then fails with EPIPE, which is handled.
        signal(SIGPIPE, SIG_IGN)
    }()

    public init(settings: Settings) {
        _ = Self.ignoreBrokenPipes
        self.settings = settings
    }

    public func didReceive(_ request: NotificationRequest, contentHandler: ContentHandler) {
        let original = request.content
        func fail(_ reason: String) {
            contentHandler(original, note: DeliveryNote(status: .original, reason: reason))
        }
        var input: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        let started: Result<pid_t, FileIOFailure> = Self.spawnLock.withLock { _ in
            // Pipes and spawns happen under one lock: a pipe made while another thread
            // spawns could leak into that child before it is marked close-on-exec, and then
            // this child would never see the end of its input.
            guard Self.makePipe(&input), Self.makePipe(&output) else {
                return .failure(FileIOFailure(message: FileIO.lastError()))
            }
            return Result { try spawn(settings.command, stdin: input[0], stdout: output[1]) }
                .mapError { $0 as? FileIOFailure ?? FileIOFailure(message: "\($0)") }
        }
        let pid: pid_t
        switch started {
        case .success(let spawned):
            pid = spawned
        case .failure(let error):
            [input[0], input[1], output[0], output[1]].filter { $0 >= 0 }.forEach { close($0) }
            return fail("cannot start the extension: \(error.message)")
        }
        close(input[0])
        close(output[1])
        state.withLock { $0.pid = pid }

        let requestBytes = JSONWriter.bytes(.object(Self.requestJSON(request, budget: settings.timing.budget)))
        _ = try? FileIO.writeAll(input[1], requestBytes)
        close(input[1])

        let descriptor = output[0]
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let reader = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: Self.queue)
        reader.setEventHandler { [self] in
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    // Content larger than any APNs payload could justify is not read further.
                    state.withLock { if $0.output.count < 1 << 20 { $0.output.append(contentsOf: chunk[..<count]) } }
                    continue
                }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
                reader.cancel()
                return
            }
        }
        reader.setCancelHandler { [self] in
            close(descriptor)
            Self.queue.async { self.finish(pid: pid, original: original, handler: contentHandler) }
        }
        let monitor = DispatchSource.makeTimerSource(queue: Self.queue)
        monitor.schedule(deadline: .now() + .milliseconds(5), repeating: .milliseconds(10), leeway: .milliseconds(2))
        monitor.setEventHandler { [self] in checkMemory(pid: pid) }
        state.withLock {
            $0.reader = reader
            $0.timers.append(monitor)
        }
        reader.resume()
        monitor.resume()
    }

    public func serviceExtensionTimeWillExpire() {
        let pid = state.withLock { $0.pid }
        guard pid > 0 else { return }
        kill(-pid, SIGTERM)
        let killer = DispatchSource.makeTimerSource(queue: Self.queue)
        killer.schedule(deadline: .now() + settings.timing.expiryGrace.dispatchInterval, leeway: .milliseconds(1))
        killer.setEventHandler { [self] in
            state.withLock { if $0.killReason == nil { $0.killReason = "killed after ignoring the deadline" } }
            kill(-pid, SIGKILL)
        }
        state.withLock { $0.timers.append(killer) }
        killer.resume()
    }

    private func checkMemory(pid: pid_t) {
        guard let resident = Self.residentBytes(of: pid), resident > settings.memoryLimit else { return }
        state.withLock {
            if $0.killReason == nil {
                $0.killReason = "killed: resident memory \(resident / 1_048_576) MB passed the \(settings.memoryLimit / 1_048_576) MB limit"
            }
        }
        kill(-pid, SIGKILL)
    }

    private func finish(pid: pid_t, original: NotificationContent, handler: ContentHandler) {
        // stdout closed: the child is exiting (or closed it early; then wait for the kill).
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let (output, killReason, timers) = state.withLock { state in
            let result = (state.output, state.killReason, state.timers)
            state.timers = []
            state.reader = nil
            state.pid = 0
            return result
        }
        timers.forEach { $0.cancel() }
        // Reap anything the command left behind in its group.
        kill(-pid, SIGKILL)

        let exited = status & 0x7F == 0
        let code = (status >> 8) & 0xFF
        guard exited, code == 0 else {
            let reason = killReason ?? (exited ? "the extension exited with status \(code)" : "the extension was killed by signal \(status & 0x7F)")
            handler(original, note: DeliveryNote(status: .original, reason: reason))
            return
        }
        guard case .object(let answer)? = try? JSONParser.parse(output) else {
            handler(original, note: DeliveryNote(status: .original, reason: "the extension's output is not a JSON content object"))
            return
        }
        handler(Self.content(answer, over: original))
    }

    // MARK: The JSON protocol

    static func contentJSON(_ content: NotificationContent) -> JSONObject {
        var object = JSONObject()
        object["title"] = .string(content.title)
        object["subtitle"] = .string(content.subtitle)
        object["body"] = .string(content.body)
        object["badge"] = content.badge.map { .integer($0) } ?? .null
        object["sound"] = content.sound.map(JSONValue.string) ?? .null
        object["thread-id"] = .string(content.threadIdentifier)
        object["category"] = .string(content.categoryIdentifier)
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

    static func content(_ answer: JSONObject, over original: NotificationContent) -> NotificationContent {
        var content = original
        if let title = answer["title"]?.stringValue { content.title = title }
        if let subtitle = answer["subtitle"]?.stringValue { content.subtitle = subtitle }
        if let body = answer["body"]?.stringValue { content.body = body }
        if let badge = answer["badge"]?.integerValue { content.badge = Int(exactly: badge) }
        if let sound = answer["sound"]?.stringValue { content.sound = sound }
        if let thread = answer["thread-id"]?.stringValue { content.threadIdentifier = thread }
        if let category = answer["category"]?.stringValue { content.categoryIdentifier = category }
        if case .object(let userInfo)? = answer["userInfo"] { content.userInfo = userInfo }
        return content
    }

    // MARK: Processes

    private func spawn(_ command: String, stdin: Int32, stdout: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, so signals reach whatever the shell starts; default
        // signal handling, since the receiver ignores SIGPIPE.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGTERM)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        // bash runs a lone command with exec, so the extension itself is the process that
        // gets the signals and whose exit status counts; plain sh may stay in between.
        let shell = access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh"
        let arguments = [shell, "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, shell, &actions, &attributes, &argv, environ)
        guard rc == 0 else { throw FileIOFailure(message: String(cString: strerror(rc))) }
        return pid
    }

    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Resident memory of a process and everything it started, from /proc: a compound
    /// command's shell is small, the program under it is what counts.
    static func residentBytes(of pid: pid_t) -> Int? {
        var total = 0
        var queue = [pid]
        var seen = 0
        while let next = queue.popLast(), seen < 64 {
            seen += 1
            guard let status = readProcFile("/proc/\(next)/status") else { continue }
            if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
               let kilobytes = Int(line.dropFirst(6).filter(\.isNumber)) {
                total += kilobytes * 1024
            }
            if let children = readProcFile("/proc/\(next)/task/\(next)/children") {
                queue += children.split(separator: " ").compactMap { pid_t($0.filter(\.isNumber)) }
            }
        }
        return seen > 0 ? total : nil
    }

    private static func readProcFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return (try? FileIO.readAll(descriptor)).map { String(decoding: $0, as: UTF8.self) }
    }
}
