#define _GNU_SOURCE
#include "csystem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
