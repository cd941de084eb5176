#define _GNU_SOURCE
#include "csystem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int pushseal_pipe_cloexec(int ends[2]) {
    return pipe2(ends, O_CLOEXEC);
}

int pushseal_rename_noreplace(const char *from, const char *to) {
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    // No RENAME_NOREPLACE here: link() refuses an existing name just as atomically.
    if (link(from, to) != 0) return -1;
    return unlink(from);
}

// In C because a signal handler may only make async-signal-safe calls: kill() and plain
// loads and stores of sig_atomic_t.
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
static volatile sig_atomic_t forward_child = 0;
static volatile sig_atomic_t forward_pending = 0;

static void forward(int number, siginfo_t *info, void *context) {
    (void)context;
    // SI_KERNEL: the terminal's signal to the foreground process group, which the child is in.
    if (info != NULL && info->si_code == SI_KERNEL) return;
    pid_t child = (pid_t)forward_child;
    if (child > 0) {
        kill(child, number);
    } else if (child == 0) {
        forward_pending = number;
    }
    // Below zero: the command has exited and is about to be reaped; its pid is not ours to signal.
}

static struct sigaction forward_saved[sizeof forwarded / sizeof forwarded[0]];
static volatile sig_atomic_t forward_installed[sizeof forwarded / sizeof forwarded[0]];

int pushseal_forward_signals_begin(void) {
    forward_child = 0;
    forward_pending = 0;
    struct sigaction action = {0};
    action.sa_sigaction = forward;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigset_t set;
    sigemptyset(&set);
    for (size_t index = 0; index < sizeof forwarded / sizeof forwarded[0]; index++) {
        forward_installed[index] = 0;
        if (sigaction(forwarded[index], NULL, &forward_saved[index]) != 0) return -1;
        // A signal ignored on entry stays ignored, as a shell keeps it (nohup's SIGHUP): the
        // child inherits it ignored, and nothing is passed on.
        if (!(forward_saved[index].sa_flags & SA_SIGINFO) && forward_saved[index].sa_handler == SIG_IGN) continue;
        if (sigaction(forwarded[index], &action, NULL) != 0) return -1;
        forward_installed[index] = 1;
        sigaddset(&set, forwarded[index]);
    }
    // Whoever started pushseal may have left them blocked (a blocked signal is inherited),
    // and a blocked signal would wait, unforwarded, until the command ends by itself.
    return pthread_sigmask(SIG_UNBLOCK, &set, NULL) == 0 ? 0 : -1;
}

void pushseal_forward_signals_to(pid_t child) {
    forward_child = child;
    int pending = forward_pending;
    if (pending != 0) {
        forward_pending = 0;
        kill(child, pending);
    }
}

void pushseal_forward_signals_stop(void) {
    forward_child = -1;
}

void pushseal_forward_signals_end(void) {
    forward_child = 0;
    for (size_t index = 0; index < sizeof forwarded / sizeof forwarded[0]; index++) {
        if (forward_installed[index]) sigaction(forwarded[index], &forward_saved[index], NULL);
        forward_installed[index] = 0;
    }
}

static sigset_t inherited_mask;
static int inherited_pipe_ignored = 0;

void pushseal_record_inherited_signals(void) {
    pthread_sigmask(SIG_SETMASK, NULL, &inherited_mask);
    struct sigaction pipe_action;
    inherited_pipe_ignored = sigaction(SIGPIPE, NULL, &pipe_action) == 0
        && !(pipe_action.sa_flags & SA_SIGINFO) && pipe_action.sa_handler == SIG_IGN;
}

void pushseal_inherited_signal_mask(sigset_t *mask) {
    *mask = inherited_mask;
}

int pushseal_inherited_pipe_ignored(void) {
    return inherited_pipe_ignored;
}

void pushseal_name_thread(const char *name) {
    pthread_setname_np(pthread_self(), name);
}

int pushseal_accept_nonblocking(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int pushseal_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

int pushseal_child_exited(pid_t pid, int block) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int rc;
    do {
        rc = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return -1;
    return info.si_pid != 0;
}

extern char **environ;

pid_t pushseal_spawn_tied(const char *path, char *const argv[], const int streams[3],
                          const sigset_t *defaults, const sigset_t *mask, int new_group, int *error) {
    // The child reports a failure before exec through this pipe, and its close-on-exec write
    // end tells the parent the exec happened: the call returns only once the child runs the
    // program (vfork already waits for that; where a sanitizer turns vfork into fork, the
    // pipe does), so nobody measures or signals a half-made child.
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        *error = errno;
        return -1;
    }
    // Everything is blocked around vfork, as glibc's posix_spawn does: the child shares this
    // memory until it execs, and a handler of pushseal's running in it would act for both.
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    pid_t parent = getpid();
    pid_t pid = vfork();
    if (pid == 0) {
        // Only async-signal-safe calls from here to exec.
        int failure;
        for (int number = 1; number < NSIG; number++) {
            struct sigaction current;
            if (number == SIGKILL || number == SIGSTOP || sigaction(number, NULL, &current) != 0) continue;
            int handled = current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
            if (handled || sigismember(defaults, number) == 1) {
                struct sigaction standard;
                memset(&standard, 0, sizeof standard);
                standard.sa_handler = SIG_DFL;
                sigaction(number, &standard, NULL);
            }
        }
        for (int target = 0; target < 3; target++) {
            int source = streams[target];
            if (source == -2) {
                source = open("/dev/null", (target == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
                if (source < 0) goto failed;
            }
            if (source == target) {
                int flags = fcntl(target, F_GETFD);
                if (flags >= 0) fcntl(target, F_SETFD, flags & ~FD_CLOEXEC);
            } else if (source >= 0 && dup2(source, target) < 0) {
                goto failed;
            }
        }
        if (new_group && setpgid(0, 0) != 0) goto failed;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) goto failed;
        // pushseal may have died before the line above: then nobody would ever send it.
        if (getppid() != parent) _exit(127);
        sigprocmask(SIG_SETMASK, mask, NULL);
        execve(path, argv, environ);
    failed:
        failure = errno;
        (void)!write(report[1], &failure, sizeof failure);
        _exit(127);
    }
    int spawnError = pid < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    close(report[1]);
    if (pid > 0) {
        int failure = 0;
        ssize_t got;
        while ((got = read(report[0], &failure, sizeof failure)) < 0 && errno == EINTR) {}
        if (got == (ssize_t)sizeof failure) {
            // The exec failed: the child has exited; reap it so no zombie is left.
            int status;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            spawnError = failure;
            pid = -1;
        }
    }
    close(report[0]);
    if (pid < 0) *error = spawnError;
    return pid;
}
