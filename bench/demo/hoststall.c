/*
 * hoststall.c - how long the host kept a row's threads from running: what the client (workload.c)
 * uses to tell a request the host slowed down from one the shared device slowed down.
 *
 * The simulated device is host threads: a kernel is a thread that sleeps for its duration, and
 * the LC client is a thread that sleeps until a request is due. On a busy host (other processes
 * on its CPUs, or a virtual machine's CPU that is not running) those threads run late, and a
 * request takes longer for reasons that have nothing to do with sharing the device. On a 2-core
 * machine that happens to one request in a hundred or more, enough to move a P99 by several
 * milliseconds, in any row, LC alone's included. Two counters say how much of it happened:
 *   - each task's run delay (the second field of /proc/PID/task/TID/schedstat: time it was
 *     runnable but had no CPU), summed over the tasks of the row's processes, except gpuprio's
 *     own threads (named gpuprio-*: a delay of theirs is gpuprio's to carry) and the BE workers'
 *     submitting threads (demo-be: a BE launch held up only helps LC);
 *   - the simulator's lateness (hipsimLateNs): how much later than their durations the kernels
 *     ended, which also covers a CPU that did not run at all (a virtual machine's), invisible to
 *     run delay. In a cross-process row every process counts it in the row's page;
 *   - the time the process did not run at all while no kernel was under way (stopped by SIGSTOP
 *     or a debugger, a virtual machine's CPU not running, both invisible to run delay): a
 *     heartbeat thread wakes every BEAT_NS, and a gap of over BEAT_NS + BEAT_SLACK_NS between
 *     its wakes counts, as soon as it is under way (a reader that runs first sees it too).
 * A request's host delay is what these grew by from just before it was due to just after it
 * completed, plus how late its own thread woke (workload.c).
 *
 * The files stay open and are read with pread, so a reading costs a few microseconds per task;
 * the client takes its readings outside the latency it measures.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "demo.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hipsim.h"

/* ---- the heartbeat: time the process did not run ---- */

#define BEAT_NS (1000ull * 1000)
/* A wake later than this is not a busy CPU's delay (run delay counts that) but a process that
 * did not run. */
#define BEAT_SLACK_NS (2000ull * 1000)

static _Atomic uint64_t beat_last_ns, beat_lost_ns;

static uint64_t beat_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* How far past its next wake the heartbeat is at now, when that is a stop: 0 otherwise. Its wake
 * adds the same amount, so the sum with beat_lost_ns only grows. */
static uint64_t beat_gap_ns(uint64_t last, uint64_t now)
{
    return now > last + BEAT_NS + BEAT_SLACK_NS ? now - last - BEAT_NS : 0;
}

static void *beat(void *arg)
{
    (void)arg;
    (void)pthread_setname_np(pthread_self(), "demo-beat"); /* its run delay is not a request's */
    for (;;) {
        struct timespec ts = {0, (long)BEAT_NS};
        nanosleep(&ts, NULL);
        uint64_t now = beat_now_ns(), last = atomic_load(&beat_last_ns);
        atomic_fetch_add(&beat_lost_ns, beat_gap_ns(last, now));
        atomic_store(&beat_last_ns, now);
    }
    return NULL;
}

static void beat_start(void)
{
    atomic_store(&beat_last_ns, beat_now_ns());
    pthread_t t;
    if (pthread_create(&t, NULL, beat, NULL) == 0)
        pthread_detach(t);
    else
        atomic_store(&beat_last_ns, 0); /* no heartbeat: nothing counted */
}

/* What the heartbeat saw lost so far, including a gap still under way. */
static uint64_t beat_lost(void)
{
    uint64_t lost = atomic_load(&beat_lost_ns), last = atomic_load(&beat_last_ns);
    return lost + (last ? beat_gap_ns(last, beat_now_ns()) : 0);
}

void demo_probe_init(host_probe *p, const int *pids, int npids)
{
    static pthread_once_t beat_once = PTHREAD_ONCE_INIT;
    pthread_once(&beat_once, beat_start);
    memset(p, 0, sizeof *p);
    for (int i = 0; i < npids && i < MAX_ITEMS; i++)
        p->pids[p->npids++] = pids[i];
    if (p->npids == 0)
        p->pids[p->npids++] = (int)getpid();
}

/* Whether a thread of this name counts (its delays are the host's): not gpuprio's, not BE's
 * (demo-be, whose prefix also leaves out the heartbeat, demo-beat). */
static bool counted_name(const char *comm)
{
    return strncmp(comm, "gpuprio-", 8) != 0 && strncmp(comm, "demo-be", 7) != 0;
}

static ssize_t read_at0(int fd, char *buf, size_t size)
{
    ssize_t got = pread(fd, buf, size - 1, 0);
    buf[got > 0 ? got : 0] = '\0';
    return got;
}

/* Adds the tasks of process pid that the probe does not know yet. */
static void find_tasks(host_probe *p, int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        int tid = atoi(e->d_name);
        if (tid <= 0 || p->ntasks >= PROBE_MAX_TASKS)
            continue;
        bool known = false;
        for (int k = 0; k < p->ntasks && !known; k++)
            known = p->task[k].tid == tid && p->task[k].pid == pid;
        if (known)
            continue;
        struct probe_task *t = &p->task[p->ntasks++];
        *t = (struct probe_task){.pid = pid, .tid = tid, .comm_fd = -1, .stat_fd = -1};
        snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
        t->comm_fd = open(path, O_RDONLY | O_CLOEXEC);
        snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, tid);
        t->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (d)
        closedir(d);
}

static void forget_task(struct probe_task *t)
{
    if (t->comm_fd >= 0)
        close(t->comm_fd);
    if (t->stat_fd >= 0)
        close(t->stat_fd);
    t->comm_fd = t->stat_fd = -1;
}

uint64_t demo_probe_read(host_probe *p)
{
    for (int i = 0; i < p->npids; i++)
        find_tasks(p, p->pids[i]);
    uint64_t sum = 0;
    for (int k = 0; k < p->ntasks; k++) {
        struct probe_task *t = &p->task[k];
        char buf[128];
        /* A thread names itself once it runs: read the name each time until it does not count;
         * a task that ended keeps its last reading. */
        if (t->comm_fd >= 0 && read_at0(t->comm_fd, buf, sizeof buf) > 0 && !counted_name(buf)) {
            forget_task(t);
            p->forgotten_ns += t->run_delay_ns; /* what it counted stays: readings only grow */
            t->run_delay_ns = 0;
        }
        uint64_t on_cpu = 0, waited = 0;
        if (t->stat_fd >= 0 && read_at0(t->stat_fd, buf, sizeof buf) > 0 &&
            sscanf(buf, "%" SCNu64 " %" SCNu64, &on_cpu, &waited) == 2 && waited > t->run_delay_ns)
            t->run_delay_ns = waited;
        sum += t->run_delay_ns;
    }
    return p->forgotten_ns + sum + hipsimLateNs() + beat_lost();
}

void demo_probe_close(host_probe *p)
{
    for (int k = 0; k < p->ntasks; k++)
        forget_task(&p->task[k]);
    p->ntasks = 0;
}
