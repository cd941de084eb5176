#ifndef PUSHSEAL_CSYSTEM_H
#define PUSHSEAL_CSYSTEM_H

// The Linux calls Swift's Glibc module leaves out (behind _GNU_SOURCE, or not wrapped at all):
// pipe2, renameat2, accept4, pidfd_open and waitid, naming a thread, passing signals on to a
// child, and spawning a child tied to this process.

/// pipe2(O_CLOEXEC): both ends are close-on-exec from the start, so a child spawned by
/// another thread can never inherit them. Returns 0, or -1 with errno.
int pushseal_pipe_cloexec(int ends[2]);

/// Renames `from` to `to` only if `to` does not exist (renameat2 RENAME_NOREPLACE, or
/// link + unlink where the file system lacks it). Returns 0, or -1 with errno (EEXIST).
int pushseal_rename_noreplace(const char *from, const char *to);

#include <sys/types.h>

/// `pushseal run`: from now on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to
/// pushseal by another process are passed on to the child named with
/// `pushseal_forward_signals_to`; pushseal itself survives them. Signals the terminal sends
/// (Ctrl-C) already reach the child's process group, so they are not sent twice.
/// Returns 0, or -1 with errno.
int pushseal_forward_signals_begin(void);
/// Signals that were ignored when pushseal started (nohup's SIGHUP) are left ignored and not
/// passed on.
/// Names the child (a signal that came before is passed on now).
void pushseal_forward_signals_to(pid_t child);
/// The child has exited: nothing more is passed on, so no signal can reach its pid once it
/// is reaped and the number is free for another process.
void pushseal_forward_signals_stop(void);
/// Back to the handling each of those signals had before `begin`.
void pushseal_forward_signals_end(void);

#include <signal.h>

/// Notes the signal mask and SIGPIPE's disposition pushseal was started with, before it
/// changes either; called once by `main`, before any thread starts. Children that run the
/// user's commands get them back.
void pushseal_record_inherited_signals(void);
/// The signal mask recorded at start (empty if nothing was recorded).
void pushseal_inherited_signal_mask(sigset_t *mask);
/// 1 if SIGPIPE was ignored when pushseal started.
int pushseal_inherited_pipe_ignored(void);

#include <sys/types.h>

/// A descriptor that becomes readable when the child `pid` exits (pidfd_open), or -1 with
/// errno (ENOSYS before Linux 5.3).
int pushseal_pidfd_open(pid_t pid);
/// 1 when the child `pid` has exited, 0 while it runs, -1 with errno; the child is left
/// unreaped, so its pid and its process group's id stay taken. With `block`, waits for the exit.
int pushseal_child_exited(pid_t pid, int block);

/// Starts `path` (an absolute path) with `argv` and the current environment as a child
/// that the kernel kills (SIGKILL) when the calling thread ends, with pushseal killed by
/// SIGKILL or the OOM killer among the ways it can end (PR_SET_PDEATHSIG, which no
/// posix_spawn attribute sets). Call it from a thread that lives as long as the process.
/// `streams[i]` is the descriptor the child gets as i (0, 1, 2): a descriptor, -1 to
/// inherit i as it is, or -2 for /dev/null. Signals in `defaults` (and every one pushseal
/// handles) start at their default action, the mask starts as `mask`; with `new_group`,
/// the child leads a process group of its own. Returns the pid, or -1 with the errno of
/// what failed (the exec included) in `*error`.
pid_t pushseal_spawn_tied(const char *path, char *const argv[], const int streams[3],
                          const sigset_t *defaults, const sigset_t *mask, int new_group, int *error);

/// Names the calling thread (at most 15 bytes), for top, perf and /proc.
void pushseal_name_thread(const char *name);

/// accept4(SOCK_NONBLOCK | SOCK_CLOEXEC): a connection from `listener` that is non-blocking
/// and close-on-exec from the start. Returns the descriptor, or -1 with errno.
int pushseal_accept_nonblocking(int listener);

#endif
