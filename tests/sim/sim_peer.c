/*
 * sim_peer.c - which process a record in a shared device belongs to, and whether it still runs.
 *
 * Processes that share a device (HIPSIM_SHARED) free what a dead process left in the shared
 * segment, so "dead" must be decided from outside, by pid. A pid alone is not enough: a zombie
 * (dead, not yet waited for) still answers kill(pid, 0), and after the parent waits, the pid
 * may be reused by an unrelated process. So a record carries the pid and the process's start
 * time (field 22 of /proc/PID/stat, in clock ticks since boot), and a process is gone when
 * /proc has no such pid, when it is a zombie, or when its start time differs. Without /proc,
 * kill(pid, 0) is the fallback.
 *
 * A stopped process (SIGSTOP, a debugger) is absent as well, though not gone: a real device runs
 * what a stopped process queued on without it, while here its kernels are its own threads, which
 * are stopped with it.
 */
#include "sim_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A process's state letter and start time; 0, or -errno (-ENOENT: no such process). */
static int proc_stat(int32_t pid, char *state, uint64_t *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int err = errno;
    close(fd);
    if (n < 0)
        return err == ESRCH ? -ENOENT : -EIO; /* it exited between open and read */
    if (n == 0)
        return -EIO;
    buf[n] = '\0';
    /* The command name (field 2) may hold anything, parentheses and spaces included. */
    char *p = strrchr(buf, ')');
    if (!p || sscanf(p + 1, " %c", state) != 1)
        return -EIO;
    for (int field = 3; field <= 22; field++) { /* to the space before field 22 */
        p = strchr(p + 1, ' ');
        if (!p)
            return -EIO;
    }
    *start = strtoull(p + 1, NULL, 10);
    return 0;
}

/* The calling process's pid as /proc shows it, which is what its peers look it up by: getpid()'s
 * unless /proc belongs to another pid namespace (a process unshared into a new one and still
 * seeing its parent's /proc, as tenant.namespace runs them). */
static int32_t proc_pid(void)
{
    char link[32];
    ssize_t n = readlink("/proc/self", link, sizeof link - 1);
    if (n <= 0)
        return (int32_t)getpid();
    link[n] = '\0';
    return (int32_t)strtol(link, NULL, 10);
}

void sim_peer_self(struct sim_peer *me)
{
    /* Per thread, so that no lock is needed; again after fork, when the pid changes. */
    static _Thread_local struct sim_peer cached;
    static _Thread_local pid_t cached_for;
    if (cached_for != getpid()) {
        int32_t pid = proc_pid();
        char state;
        uint64_t start = 0;
        if (proc_stat(pid, &state, &start) != 0)
            start = 0; /* unknown: only the pid is compared */
        cached.pid = pid;
        cached.start = start & SIM_PEER_START_MASK;
        cached_for = getpid();
    }
    *me = cached;
}

bool sim_peer_absent(int32_t pid, uint64_t start)
{
    if (pid <= 0)
        return true;
    char state = '?';
    uint64_t now_start = 0;
    int rc = proc_stat(pid, &state, &now_start);
    if (rc == -ENOENT)
        return true;
    if (rc == 0)
        return strchr("ZXxTt", state) || (start && (now_start & SIM_PEER_START_MASK) != start);
    return kill(pid, 0) < 0 && errno == ESRCH;
}
