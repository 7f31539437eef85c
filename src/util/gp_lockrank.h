/*
 * gp_lockrank.h - the lock hierarchy: every lock the library takes has a rank, and a thread
 * takes locks only in increasing rank, so no two threads can each hold a lock the other waits
 * for. The list below is the hierarchy; it is the one place that says it.
 *
 * In debug and sanitizer builds (GP_LOCKRANK defined: CMake does it for Debug builds and with
 * GPUPRIO_SANITIZE), every acquisition is checked against the locks the thread holds, in the
 * manner of jemalloc's witness.h: taking a lock of a rank at or below one already held prints
 * both and aborts, like a failed assert, so a test fails on the wrong order instead of a user
 * deadlocking once a month. Elsewhere the checks compile to nothing.
 *
 * Waiting on a condition variable releases and retakes its mutex inside the wait; the thread
 * holds the same locks before and after, so nothing is checked there.
 */
#ifndef GPUPRIO_LOCKRANK_H
#define GPUPRIO_LOCKRANK_H

#include <pthread.h>

/* X(NAME, what the lock protects), lowest rank first: a lock may be taken while holding only
 * locks listed above it. */
#define GP_LOCK_RANKS(X)                                                                           \
    X(CU_RESERVE, "a device's GPUPRIO_CU_RESERVE mask, worked out once (hip_reserve.c)")           \
    X(BOARDS, "joining a device's board (sched_board.c; may ask the runtime for the device)")      \
    X(SCHED, "the scheduling lock: decisions, queues becoming active or idle, admission waits")    \
    X(REGISTRY, "the registry of queues (xqueue.c; read for every pass over the queues)")          \
    X(BOARD, "a board's decision lock, shared with other processes (board.c)")                     \
    X(WATCHER, "the watcher's list of queues with markers (xq_watcher.c)")                         \
    X(SUBMIT, "one queue's submitters: recording a marker and queueing it (xqueue submit_mu)")     \
    X(STREAM_QUERY, "the watcher's queries against captures and stream ends (xq_admission.c)")     \
    X(QUEUE, "one queue's ring of markers (xqueue mu)")                                            \
    X(FREE_QUEUES, "the registry's list of queues to reuse (xqueue.c)")                            \
    X(MARKER_POOL, "a device's pool of markers (hal)")                                             \
    X(GEMM_FORMS, "the GEMM call forms read before (cuda_gemm.c; takes nothing else)")             \
    X(GEMM_TIMES, "learned times of whole GEMMs (gemm_clock.c; takes nothing else)")               \
    X(BLAS_WORKSPACES, "the workspaces set on cuBLAS handles (cuda_gemmex.c; takes nothing else)") \
    X(GRAPH_LAUNCH, "one executable graph's launches and its gated copy (graph.c)")                \
    X(GRAPH_TABLE, "the executable graphs known (graph.c; takes nothing else)")                    \
    X(GRAPH_TARGETS, "the wait nodes' operations, one per gate word (hip_graph_gate.c; takes "     \
                     "nothing else)")                                                              \
    X(NODE_TIMES, "predicted times of captured nodes (cuda_node_time.c; takes nothing else)")      \
    X(LOG, "log lines held back until the process uses a GPU (gp_log.c; takes nothing else)")

enum gp_lock_rank {
    GP_RANK_NONE,
#define GP_RANK_ENUM(name, what) GP_RANK_##name,
    GP_LOCK_RANKS(GP_RANK_ENUM)
#undef GP_RANK_ENUM
        GP_RANK_COUNT
};

#ifdef GP_LOCKRANK
/* Before taking a lock of this rank; aborts when the thread holds one of this rank or above. */
void gp_rank_acquire(enum gp_lock_rank rank);
/* After releasing it (in any order). */
void gp_rank_release(enum gp_lock_rank rank);
#else
static inline void gp_rank_acquire(enum gp_lock_rank rank)
{
    (void)rank;
}
static inline void gp_rank_release(enum gp_lock_rank rank)
{
    (void)rank;
}
#endif

static inline void gp_mutex_lock(pthread_mutex_t *m, enum gp_lock_rank rank)
{
    gp_rank_acquire(rank);
    pthread_mutex_lock(m);
}

static inline void gp_mutex_unlock(pthread_mutex_t *m, enum gp_lock_rank rank)
{
    pthread_mutex_unlock(m);
    gp_rank_release(rank);
}

static inline void gp_rwlock_rdlock(pthread_rwlock_t *l, enum gp_lock_rank rank)
{
    gp_rank_acquire(rank);
    pthread_rwlock_rdlock(l);
}

static inline void gp_rwlock_wrlock(pthread_rwlock_t *l, enum gp_lock_rank rank)
{
    gp_rank_acquire(rank);
    pthread_rwlock_wrlock(l);
}

static inline void gp_rwlock_unlock(pthread_rwlock_t *l, enum gp_lock_rank rank)
{
    pthread_rwlock_unlock(l);
    gp_rank_release(rank);
}

#endif /* GPUPRIO_LOCKRANK_H */
