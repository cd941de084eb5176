#ifndef PUSHSEAL_CSYSTEM_H
#define PUSHSEAL_CSYSTEM_H

// The few Linux calls Swift's Glibc module leaves out (they sit behind _GNU_SOURCE).

/// pipe2(O_CLOEXEC): both ends are close-on-exec from the start, so a child spawned by
/// another thread can never inherit them. Returns 0, or -1 with errno.
int pushseal_pipe_cloexec(int ends[2]);

/// Renames `from` to `to` only if `to` does not exist (renameat2 RENAME_NOREPLACE, or
/// link + unlink where the file system lacks it). Returns 0, or -1 with errno (EEXIST).
int pushseal_rename_noreplace(const char *from, const char *to);

#endif
