/*
 * cuda_node_time.c - predicted times of captured nodes (cuda_node_time.h).
 *
 * Two generations of an open-addressing table: notes go into the young one, lookups read both,
 * and when the young one is half full the old one is dropped whole and the young one becomes
 * old. So the oldest notes go first, every operation is a few probes, and nothing is allocated.
 * The lock takes no other and is never held across a call into the driver.
 */
#include "cuda_node_time.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cuda_bind.h"
#include "gp_lockrank.h"

#define NODE_TIME_SLOTS 1024 /* per generation, a power of two; each holds half as many notes */

struct note {
    CUgraphNode node;
    uint64_t ns;
};
struct generation {
    struct note slot[NODE_TIME_SLOTS];
    size_t used;
};

static struct generation gens[2];
static int young;
static atomic_int kept; /* notes in both generations, an upper bound */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static size_t home_of(CUgraphNode node)
{
    uintptr_t p = (uintptr_t)node;
    return (size_t)((p >> 4) ^ (p >> 14) ^ (p >> 24)) & (NODE_TIME_SLOTS - 1);
}

/* node's slot in g, or the free slot where it would go (mu held). */
static struct note *slot_of(struct generation *g, CUgraphNode node)
{
    size_t i = home_of(node);
    while (g->slot[i].node && g->slot[i].node != node)
        i = (i + 1) & (NODE_TIME_SLOTS - 1);
    return &g->slot[i];
}

void cudahal_node_time_note(CUgraphNode node, uint64_t ns)
{
    if (!node)
        return;
    gp_mutex_lock(&mu, GP_RANK_NODE_TIMES);
    struct generation *y = &gens[young], *old = &gens[!young];
    struct note *n = slot_of(y, node);
    if (!ns) { /* forgotten where it is: a forget takes no slot, so evicts no other note */
        struct note *o = slot_of(old, node);
        if (n->node)
            n->ns = 0;
        if (o->node)
            o->ns = 0;
        gp_mutex_unlock(&mu, GP_RANK_NODE_TIMES);
        return;
    }
    if (!n->node && y->used == NODE_TIME_SLOTS / 2) { /* full: the old generation goes */
        atomic_fetch_sub(&kept, (int)old->used);
        memset(old, 0, sizeof *old);
        young = !young;
        y = old;
        old = &gens[!young];
        n = slot_of(y, node);
    }
    if (!n->node) {
        n->node = node;
        y->used++;
        atomic_fetch_add(&kept, 1);
    }
    n->ns = ns;
    struct note *shadowed = slot_of(old, node); /* the young note is read first; 0 forgets */
    if (shadowed->node)
        shadowed->ns = ns;
    gp_mutex_unlock(&mu, GP_RANK_NODE_TIMES);
}

uint64_t cudahal_node_time_of(CUgraphNode node)
{
    if (!node || !atomic_load(&kept))
        return 0;
    gp_mutex_lock(&mu, GP_RANK_NODE_TIMES);
    struct note *n = slot_of(&gens[young], node);
    if (!n->node)
        n = slot_of(&gens[!young], node);
    uint64_t ns = n->node ? n->ns : 0;
    gp_mutex_unlock(&mu, GP_RANK_NODE_TIMES);
    return ns;
}

int cudahal_node_time_any(void)
{
    return atomic_load(&kept) > 0;
}

void cudahal_node_time_forget_all(void)
{
    pthread_mutex_init(&mu, NULL);
    memset(gens, 0, sizeof gens);
    young = 0;
    atomic_store(&kept, 0);
}

/* ---- the capture's leaf ---- */

typedef CUresult (*capture_info_v3)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                    const CUgraphNode **, const CUgraphEdgeData **, size_t *);
typedef CUresult (*capture_info_v2)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                    const CUgraphNode **, size_t *);
static capture_info_v3 info_v3;
static capture_info_v2 info_v2;
static pthread_once_t info_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    *(void **)&info_v3 = cudahal_sym("cuStreamGetCaptureInfo_v3");
    if (!info_v3)
        *(void **)&info_v2 = cudahal_sym("cuStreamGetCaptureInfo_v2");
}

void cudahal_node_time_note_leaf(CUstream stream, uint64_t ns)
{
    pthread_once(&info_once, resolve);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    const CUgraphNode *leaves = NULL;
    const CUgraphEdgeData *edges = NULL; /* asked for: without it, edge data is a refusal */
    size_t count = 0;
    CUresult r = info_v3   ? info_v3(stream, &status, NULL, NULL, &leaves, &edges, &count)
                 : info_v2 ? info_v2(stream, &status, NULL, NULL, &leaves, &count)
                           : CUDA_ERROR_NOT_SUPPORTED;
    if (r == CUDA_SUCCESS && status == CU_STREAM_CAPTURE_STATUS_ACTIVE && count == 1 && leaves)
        cudahal_node_time_note(leaves[0], ns);
}
