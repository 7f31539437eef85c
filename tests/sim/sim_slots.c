/*
 * sim_slots.c - the compute slots of a device, granted in ticket order.
 *
 * A kernel takes a ticket when it reaches the head of its hardware queue; ticket t runs once
 * fewer than nslots tickets before it are still unfinished (t < released + nslots). Tickets are
 * granted with no regard to priority, which is what makes a latency-critical kernel wait behind
 * best-effort ones. The same structure lives in private memory, or, with HIPSIM_SHARED, in a
 * POSIX shared-memory segment so that several processes contend for one device. Process death is
 * handled: the mutex is robust, and a waiter that has waited a while reaps tickets of processes
 * that no longer exist (a dead process's waiting ticket counts as if it ran in no time).
 */
#include "sim_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SLOTS_MAGIC 0x48495053u /* "HIPS" */
#define SLOTS_VERSION 1u
#define SLOTS_RING 1024u
#define SLOTS_REAP_MS 10

enum { TICKET_FREE, TICKET_WAITING, TICKET_RUNNING };

struct ticket_entry {
    uint64_t ticket;
    int32_t pid;
    int32_t state;
};

struct sim_slots {
    _Atomic uint32_t magic; /* set last by the creator */
    uint32_t version;
    uint32_t size;
    uint32_t nslots;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t next_ticket;
    uint64_t released;
    struct ticket_entry ring[SLOTS_RING];
};

static void slots_init(struct sim_slots *s, int nslots)
{
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&s->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    s->version = SLOTS_VERSION;
    s->size = sizeof *s;
    s->nslots = (uint32_t)nslots;
    atomic_store_explicit(&s->magic, SLOTS_MAGIC, memory_order_release);
}

static struct sim_slots *slots_private(int nslots)
{
    struct sim_slots *s = calloc(1, sizeof *s);
    if (s)
        slots_init(s, nslots);
    return s;
}

static struct sim_slots *slots_shared(int device, int nslots, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/hipsim-%u-%s-%d", (unsigned)getuid(), name, device);
    bool creator = true;
    int fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno == EEXIST) {
        creator = false;
        fd = shm_open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    if (fd < 0) {
        fprintf(stderr, "hipsim: cannot open shared device %s: %s\n", path, strerror(errno));
        return NULL;
    }
    struct sim_slots *s = NULL;
    if (creator && ftruncate(fd, sizeof *s) < 0)
        goto fail;
    for (int i = 0; !creator && i < 1000; i++) { /* the creator may still be sizing it */
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof *s)
            break;
        usleep(1000);
    }
    s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED) {
        s = NULL;
        goto fail;
    }
    close(fd);
    fd = -1;
    if (creator) {
        slots_init(s, nslots);
        return s;
    }
    for (int i = 0; i < 1000 && atomic_load_explicit(&s->magic, memory_order_acquire) !=
                                    SLOTS_MAGIC; i++)
        usleep(1000);
    if (atomic_load(&s->magic) != SLOTS_MAGIC || s->version != SLOTS_VERSION ||
        s->size != sizeof *s) {
        fprintf(stderr, "hipsim: shared device %s has another layout; remove it\n", path);
        munmap(s, sizeof *s);
        return NULL;
    }
    if ((int)s->nslots != nslots)
        fprintf(stderr, "hipsim: shared device %s has %u compute slots; using them\n", path,
                s->nslots);
    return s;
fail:
    fprintf(stderr, "hipsim: cannot map shared device %s: %s\n", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return NULL;
}

struct sim_slots *sim_slots_open(int device, int nslots, const char *shared_name)
{
    if (shared_name && shared_name[0]) {
        struct sim_slots *s = slots_shared(device, nslots, shared_name);
        if (s)
            return s;
        fprintf(stderr, "hipsim: device %d is private to this process\n", device);
    }
    return slots_private(nslots);
}

static void slots_lock(struct sim_slots *s)
{
    if (pthread_mutex_lock(&s->mu) == EOWNERDEAD)
        pthread_mutex_consistent(&s->mu);
}

static bool pid_dead(int32_t pid)
{
    return kill(pid, 0) < 0 && errno == ESRCH;
}

/* Releases the tickets of processes that died; the mutex is held. */
static void reap_dead(struct sim_slots *s)
{
    int32_t self = (int32_t)getpid();
    for (uint32_t i = 0; i < SLOTS_RING; i++) {
        struct ticket_entry *e = &s->ring[i];
        if (e->state != TICKET_FREE && e->pid != self && pid_dead(e->pid)) {
            e->state = TICKET_FREE;
            s->released++;
            pthread_cond_broadcast(&s->cv);
        }
    }
}

static void timed_wait(struct sim_slots *s, int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)ms * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == EOWNERDEAD)
        pthread_mutex_consistent(&s->mu);
    /* Wake-ups by other processes can be frequent, so reap by time, not only on timeouts. */
    static _Thread_local uint64_t last_reap_ns;
    uint64_t now = sim_now_ns();
    if (now - last_reap_ns >= (uint64_t)ms * 1000000u) {
        last_reap_ns = now;
        reap_dead(s);
    }
}

uint64_t sim_slots_acquire(struct sim_slots *s)
{
    slots_lock(s);
    while (s->next_ticket - s->released >= SLOTS_RING - s->nslots)
        timed_wait(s, SLOTS_REAP_MS);
    uint64_t t = s->next_ticket++;
    struct ticket_entry *e = &s->ring[t % SLOTS_RING];
    e->ticket = t;
    e->pid = (int32_t)getpid();
    e->state = TICKET_WAITING;
    while (t >= s->released + s->nslots)
        timed_wait(s, SLOTS_REAP_MS);
    e->state = TICKET_RUNNING;
    pthread_mutex_unlock(&s->mu);
    return t;
}

void sim_slots_release(struct sim_slots *s, uint64_t ticket)
{
    slots_lock(s);
    struct ticket_entry *e = &s->ring[ticket % SLOTS_RING];
    if (e->state != TICKET_FREE && e->ticket == ticket) {
        e->state = TICKET_FREE;
        s->released++;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}
