#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// Starting the programs pushseal runs (`--extension` commands, send's transport, the
/// command of `pushseal run`) with their stdin and stdout where pushseal says.
enum ChildProcess {
    /// What a child's signals start as.
    enum Signals {
        /// What pushseal itself inherited: SIGPIPE back to default unless it was ignored when
        /// pushseal started (pushseal ignores it), and the signal mask pushseal started with,
        /// less the signals `run` passes on.
        /// Everything pushseal handles returns to default by exec itself, and what was
        /// ignored on entry (nohup's SIGHUP) stays ignored.
        case inherited
        /// The extension contract: SIGTERM is the deadline and must reach the program, so
        /// SIGTERM, SIGINT and SIGPIPE start at their defaults, with nothing blocked.
        case extensionContract
    }

    /// Starts `program` with `arguments` (argv[0] included).
    ///
    /// - Parameters:
    ///   - stderr: where the child's stderr goes (default: pushseal's own).
    ///   - ownGroup: puts the child in a process group of its own, so a signal to the group
    ///     reaches whatever a shell command starts.
    ///   - searchPath: looks `program` up in `PATH` when it has no slash, as a shell does.
    ///   - signals: what its signal dispositions and mask start as.
    /// - Throws: the reason, its `code` the errno (ENOENT, EACCES, ...).
    static func spawn(_ program: String, _ arguments: [String], stdin: Int32, stdout: Int32, stderr: Int32? = nil,
                      ownGroup: Bool = false, searchPath: Bool = false, signals: Signals = .inherited) throws(FileIOFailure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr, 2) }

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
        let rc = searchPath
            ? posix_spawnp(&pid, program, &actions, &attributes, &argv, environ)
            : posix_spawn(&pid, program, &actions, &attributes, &argv, environ)
        guard rc == 0 else { throw FileIOFailure(code: rc, message: String(cString: strerror(rc))) }
        return pid
    }
}

/// The signal state pushseal started with, noted before `main` changes any of it.
public enum InheritedSignals {
    /// Call first thing in `main`, before any thread starts or any disposition changes.
    public static func record() {
        pushseal_record_inherited_signals()
    }
}
