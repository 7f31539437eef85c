/*
 * gate_copy.c - see gate_copy.h.
 *
 * The copy's first line carries its owner's incarnation in its vtime field (the device reads only
 * the words, and a copy's vtime is otherwise unused), so that a descriptor number that outlived
 * its owner, its pid reused by another process of the user, is never taken for the copy.
 */
#include "gate_copy.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct dg_line *gc_create(uint64_t incarnation, size_t size, int *fd)
{
    int f = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (f < 0)
        return NULL;
    struct dg_line *lines = MAP_FAILED;
    if (ftruncate(f, (off_t)size) == 0)
        lines = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
    if (lines == MAP_FAILED) {
        close(f);
        return NULL;
    }
    for (size_t i = 0; i < size / sizeof *lines; i++)
        atomic_store(&lines[i].word, DG_OPEN);
    atomic_store(&lines[0].vtime, incarnation);
    *fd = f;
    return lines;
}

/* The owner's copy, mapped if it is what it says; NULL otherwise. */
static struct dg_line *map_peer(pid_t pid, uint64_t incarnation, uint32_t copy_fd, size_t size)
{
    if (!copy_fd)
        return NULL;
    char name[64];
    snprintf(name, sizeof name, "/proc/%d/fd/%u", (int)pid, copy_fd - 1);
    /* Looked at before it is opened: the number may be stale (a line an older library reused,
     * which leaves copy_fd as it was), and opening whatever it names now (a terminal, a device,
     * a file on a hung mount) could block the board or have effects of its own. */
    struct stat shm, before, st;
    if (stat("/dev/shm", &shm) != 0 || stat(name, &before) != 0 || !S_ISREG(before.st_mode) ||
        before.st_dev != shm.st_dev || before.st_uid != geteuid() || before.st_size != (off_t)size)
        return NULL;
    int fd = open(name, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return NULL;
    struct dg_line *lines = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_dev == before.st_dev && st.st_ino == before.st_ino &&
        st.st_size == (off_t)size)
        lines = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (lines == MAP_FAILED)
        return NULL;
    if (atomic_load(&lines[0].vtime) != incarnation) {
        munmap(lines, size);
        return NULL;
    }
    return lines;
}

static int find(const struct gc_peers *p, uint64_t incarnation)
{
    for (int i = 0; i < GC_PEERS; i++)
        if (p->peer[i].incarnation == incarnation)
            return i;
    return -1;
}

static void drop(struct gc_peers *p, int i, size_t size)
{
    if (p->peer[i].lines)
        munmap(p->peer[i].lines, size);
    p->peer[i].lines = NULL;
    p->peer[i].incarnation = 0;
}

void gc_write(struct gc_peers *p, pid_t pid, uint64_t incarnation, uint32_t copy_fd,
              const struct dg_line *board_line, size_t i, size_t lines_size)
{
    if (!incarnation || i >= lines_size / sizeof *board_line)
        return;
    int at = find(p, incarnation);
    if (at < 0) {
        at = (int)(p->next++ % GC_PEERS);
        drop(p, at, lines_size);
        p->peer[at].incarnation = incarnation;
        p->peer[at].lines = map_peer(pid, incarnation, copy_fd, lines_size);
    }
    struct dg_line *copy = p->peer[at].lines;
    if (!copy)
        return;
    /* As dg_mirror: a store crossed by a later decision is put right by that decision's. */
    dg_copy_word(&copy[i], board_line);
}

void gc_forget(struct gc_peers *p, uint64_t incarnation, size_t lines_size)
{
    int at = incarnation ? find(p, incarnation) : -1;
    if (at >= 0)
        drop(p, at, lines_size);
}

void gc_reset(struct gc_peers *p, size_t lines_size)
{
    for (int i = 0; i < GC_PEERS; i++)
        drop(p, i, lines_size);
    p->next = 0;
}
