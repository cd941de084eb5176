import CSystem
import Dispatch
import Locking
import MonotonicTime
import PushSeal

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One program pushseal started, and everything that belongs to it: pushseal's ends of its
/// pipes, its process group, its exit and its one reap (`--extension` commands, send's
/// transport, the command of `pushseal run`, the companions, notify-send).
///
/// The reap is the line no signal crosses: the exit is first awaited without reaping (the
/// pid, and the group's id, stay taken by the zombie), then, under the lock that `signal`
/// takes, what the program left in its group is killed and the zombie reaped. So a timer
/// that fires late, or a forced exit, can never signal a pid that another process has since
/// been given.
package final class ChildProcess: Sendable {
    /// What a child's signals start as.
    enum Signals {
        /// What pushseal itself inherited: SIGPIPE back to default unless it was ignored when
        /// pushseal started (pushseal ignores it), and the signal mask pushseal started with,
        /// less the signals `run` passes on.
        /// Everything pushseal handles returns to default by exec itself, and what was
        /// ignored on entry (nohup's SIGHUP) stays ignored.
        case inherited
        /// The extension contract: SIGTERM is the deadline and must reach the program, so
        /// SIGTERM, SIGINT and SIGPIPE start at their defaults, with nothing blocked. The
        /// program is also killed by the kernel if pushseal dies without reaping it (SIGKILL,
        /// the OOM killer): an extension never outlives its receiver.
        case extensionContract
    }

    /// Where one of the child's stdin, stdout and stderr goes.
    enum Stream {
        /// A descriptor of pushseal's, which stays its caller's.
        case inherit(Int32)
        /// A new pipe; this child owns pushseal's end (`descriptor(_:)`).
        case pipe
        /// /dev/null.
        case null
    }

    /// Pushseal's ends of the child's pipes.
    enum End: Int {
        case input = 0
        case output = 1
        case errorOutput = 2
    }

    package let pid: pid_t
    /// Signals go to the whole group, and what is left in it is killed at the reap.
    let ownGroup: Bool
    /// Readable once the child exits; -1 where pidfd_open is not available. Closed only when
    /// the child is released, so no waiter can find its number reused.
    private let exitDescriptor: Int32

    private struct State: Sendable {
        /// Pushseal's end of each pipe; -1 when there is none or it was closed.
        var ends: [Int32]
        /// The wait status, once reaped.
        var status: Int32?
    }
    private let state: Locked<State>

    /// Starts `program` with `arguments` (argv[0] included).
    ///
    /// - Parameters:
    ///   - ownGroup: puts the child in a process group of its own, so a signal to the group
    ///     reaches whatever a shell command starts.
    ///   - searchPath: looks `program` up in `PATH` when it has no slash, as a shell does.
    ///   - signals: what its signal dispositions and mask start as.
    /// - Throws: the reason, its `code` the errno (ENOENT, EACCES, ...); every descriptor made
    ///   for it is closed by then.
    init(
        _ program: String, _ arguments: [String], stdin: Stream, stdout: Stream, stderr: Stream = .inherit(2),
        ownGroup: Bool = false, searchPath: Bool = false, signals: Signals = .inherited
    ) throws(FileIOFailure) {
        var ours: [Int32] = [-1, -1, -1]
        var theirs: [Int32] = [-1, -1, -1]
        func closeAll() {
            for descriptor in ours + theirs where descriptor >= 0 { Glibc.close(descriptor) }
        }
        let streams = [stdin, stdout, stderr]
        for (index, stream) in streams.enumerated() {
            guard case .pipe = stream else { continue }
            var ends: [Int32] = [-1, -1]
            // Close-on-exec from birth: a child another thread spawns never inherits these.
            guard pushseal_pipe_cloexec(&ends) == 0 else {
                let failure = FileIOFailure(code: errno)
                closeAll()
                throw failure
            }
            // The child reads its stdin from the pipe's read end and writes the others.
            (theirs[index], ours[index]) = index == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (index, stream) in streams.enumerated() {
            let target = Int32(index)
            switch stream {
            case .inherit(let descriptor) where descriptor == target:
                break
            case .inherit(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            case .pipe:
                posix_spawn_file_actions_adddup2(&actions, theirs[index], target)
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", index == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        switch signals {
        case .inherited:
            if pushseal_inherited_pipe_ignored() == 0 { sigaddset(&defaults, SIGPIPE) }
            pushseal_inherited_signal_mask(&mask)
            // Except those `run` passes on: a signal forwarded but blocked would never land.
            for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2] { sigdelset(&mask, number) }
        case .extensionContract:
            for number in [SIGPIPE, SIGTERM, SIGINT] { sigaddset(&defaults, number) }
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if ownGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc: Int32
        if case .extensionContract = signals, program.hasPrefix("/") {
            let targets: [Int32] = streams.enumerated().map { index, stream in
                switch stream {
                case .inherit(let descriptor): descriptor
                case .pipe: theirs[index]
                case .null: -2
                }
            }
            (pid, rc) = TiedSpawner.shared.run { () -> (pid_t, Int32) in
                var error: Int32 = 0
                let pid = pushseal_spawn_tied(program, &argv, targets, &defaults, &mask, ownGroup ? 1 : 0, &error)
                return (pid, pid > 0 ? 0 : error)
            }
        } else {
            rc =
                searchPath
                ? posix_spawnp(&pid, program, &actions, &attributes, &argv, environ)
                : posix_spawn(&pid, program, &actions, &attributes, &argv, environ)
        }
        guard rc == 0 else {
            closeAll()
            throw FileIOFailure(code: rc, message: String(cString: strerror(rc)))
        }
        for descriptor in theirs where descriptor >= 0 { Glibc.close(descriptor) }
        self.pid = pid
        self.ownGroup = ownGroup
        exitDescriptor = pushseal_pidfd_open(pid)
        state = Locked(State(ends: ours))
    }

    deinit {
        // An owner that never reaped leaves a zombie behind; its descriptors at least go.
        for descriptor in state.withLock({ $0.ends }) where descriptor >= 0 { Glibc.close(descriptor) }
        if exitDescriptor >= 0 { Glibc.close(exitDescriptor) }
    }

    /// Pushseal's end of one of the child's pipes; -1 when it has none or it was closed.
    func descriptor(_ end: End) -> Int32 {
        state.withLock { $0.ends[end.rawValue] }
    }

    /// Closes pushseal's end of a pipe (the child sees end of input, or a broken pipe).
    func close(_ end: End) {
        let descriptor = state.withLock { state -> Int32 in
            defer { state.ends[end.rawValue] = -1 }
            return state.ends[end.rawValue]
        }
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Sends `number` to the child, or to its whole group; false once it has been reaped.
    @discardableResult
    func signal(_ number: Int32) -> Bool {
        state.withLock { state in
            guard state.status == nil else { return false }
            return kill(ownGroup ? -pid : pid, number) == 0
        }
    }

    /// `signal`, for a path that must not wait for a lock another thread may hold (a forced
    /// exit): the lock is only held for a signal or the reap of a zombie, so a few tries find
    /// it free. False only when it could not be had.
    func signalWithoutWaiting(_ number: Int32) -> Bool {
        for _ in 0..<100 {
            let had = state.withLockIfAvailable { state -> Bool in
                if state.status == nil { kill(ownGroup ? -pid : pid, number) }
                return true
            }
            if had == true { return true }
            usleep(100)
        }
        return false
    }

    /// True once the child has exited (it may not be reaped yet); never waits.
    var hasExited: Bool {
        state.withLock { $0.status } != nil || pushseal_child_exited(pid, 0) != 0
    }

    /// A descriptor to poll for the child's exit beside its pipes; -1 where there is none.
    var exitPollDescriptor: Int32 { exitDescriptor }

    /// Waits for the child to exit, then reaps it, once: its wait status. What it left in its
    /// own group is killed first, while the unreaped child still holds the group's id. Nil
    /// when `limit` passed first: the child runs on, unreaped.
    ///
    /// - Parameter beforeReap: runs after the exit and before the reap (`run` stops passing
    ///   signals on there).
    func wait(within limit: Duration? = nil, beforeReap: () -> Void = {}) -> Int32? {
        if let status = state.withLock({ $0.status }) { return status }
        guard awaitExit(within: limit) else { return nil }
        beforeReap()
        return state.withLock { state in
            if let status = state.status { return status }
            if ownGroup { kill(-pid, SIGKILL) }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            state.status = status
            return status
        }
    }

    /// Waits until the child has exited, leaving it unreaped; false when `limit` passed first.
    private func awaitExit(within limit: Duration?) -> Bool {
        let deadline = limit.map { MonotonicClock.system.now + $0 }
        while true {
            // An error (ECHILD: not our child any more) must not wait forever either.
            if pushseal_child_exited(pid, 0) != 0 { return true }
            let remaining = deadline.map { MonotonicClock.system.remaining(until: $0) }
            if remaining == .zero { return false }
            if exitDescriptor >= 0 {
                var entry = pollfd(fd: exitDescriptor, events: Int16(POLLIN), revents: 0)
                // Rounded up, so a wait of less than a millisecond does not spin.
                let timeout = remaining.map { Int32(clamping: $0.saturatingMilliseconds + 1) } ?? -1
                _ = poll(&entry, 1, timeout)
            } else if remaining == nil {
                _ = pushseal_child_exited(pid, 1)
            } else {
                usleep(2_000)
            }
        }
    }

    /// Runs a short helper with no input or output to its end; true when it exits 0.
    package static func succeeds(_ program: String, _ arguments: [String]) -> Bool {
        guard let child = try? ChildProcess(program, [program] + arguments, stdin: .null, stdout: .null, stderr: .null) else {
            return false
        }
        return child.wait() == 0
    }
}

/// The signal state pushseal started with, noted before `main` changes any of it.
package enum InheritedSignals {
    /// Call first thing in `main`, before any thread starts or any disposition changes.
    package static func record() {
        pushseal_record_inherited_signals()
    }
}

/// The thread that starts extension programs. The kernel's parent-death signal follows the
/// thread that started a child, not the process: started from a worker that later ends,
/// a program would be killed halfway. This thread lives as long as pushseal, so its
/// children die only with pushseal.
final class TiedSpawner: Sendable {
    static let shared = TiedSpawner()

    /// One caller's work; the caller waits for `done`, so what `body` captures outlives it.
    private struct Job: @unchecked Sendable {
        let body: () -> Void
        let done: DispatchSemaphore
    }

    private let jobs = Locked<[Job]>([])
    private let ready = DispatchSemaphore(value: 0)

    private init() {
        OwnThread.start(named: "spawner") { [self] in
            while true {
                ready.wait()
                while let done = runNext() { done.signal() }
            }
        }
    }

    /// Runs the oldest job; the job is released before its caller is told.
    private func runNext() -> DispatchSemaphore? {
        guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return nil }
        job.body()
        return job.done
    }

    /// Runs `body` on the spawner thread and returns its result; the caller waits the
    /// moment a vfork and exec take.
    func run<Result: Sendable>(_ body: () -> Result) -> Result {
        withoutActuallyEscaping(body) { body in
            var result: Result?
            withoutActuallyEscaping({ result = body() }) { job in
                let done = DispatchSemaphore(value: 0)
                jobs.withLock { $0.append(Job(body: job, done: done)) }
                ready.signal()
                done.wait()
            }
            return result!
        }
    }
}
