#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starting the programs pushseal runs (`--extension` commands, send's transport, the
/// command of `pushseal run`) with their stdin and stdout where pushseal says.
enum ChildProcess {
    /// Starts `program` with `arguments` (argv[0] included).
    ///
    /// The child gets default handling of the signals pushseal ignores, blocks or handles
    /// itself, and an empty signal mask: ignored signals would otherwise stay ignored across exec.
    /// - Parameters:
    ///   - stderr: where the child's stderr goes (default: pushseal's own).
    ///   - ownGroup: puts the child in a process group of its own, so a signal to the group
    ///     reaches whatever a shell command starts.
    ///   - searchPath: looks `program` up in `PATH` when it has no slash, as a shell does.
    /// - Throws: the reason, its `code` the errno (ENOENT, EACCES, ...).
    static func spawn(_ program: String, _ arguments: [String], stdin: Int32, stdout: Int32, stderr: Int32? = nil,
                      ownGroup: Bool = false, searchPath: Bool = false) throws(FileIOFailure) -> pid_t {
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
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        for number in [SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2] { sigaddset(&defaults, number) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
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
