/*
 * graph_place.c - where wait nodes go inside a graph (graph_place.h says what and why).
 *
 * The order is Kahn's: nodes without dependencies first, each node once all of its dependencies
 * were placed, ties in the runtime's list order. An edge's ends are found by binary search in the
 * nodes sorted by handle, so a graph's placement costs O((nodes + edges) log nodes).
 */
#include "graph_place.h"

#include <errno.h>
#include <stdlib.h>

/* A node's handle and its index in the runtime's list. */
struct node_at {
    uintptr_t node;
    size_t at;
};

static int by_node(const void *a, const void *b)
{
    uintptr_t x = ((const struct node_at *)a)->node, y = ((const struct node_at *)b)->node;
    return (x > y) - (x < y);
}

/* node's index (sorted: n of them), or n. */
static size_t index_of(const struct node_at *sorted, size_t n, uintptr_t node)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && sorted[lo].node == node ? sorted[lo].at : n;
}

int graph_place_order(const uintptr_t *nodes, size_t n, const uintptr_t *from, const uintptr_t *to,
                      size_t edges, size_t *order, size_t *deps)
{
    size_t nn = n ? n : 1, ne = edges ? edges : 1;
    struct node_at *sorted = calloc(nn, sizeof *sorted);
    size_t *head_of = calloc(ne, sizeof *head_of), *tail_of = calloc(ne, sizeof *tail_of);
    size_t *first =
        calloc(n + 1, sizeof *first); /* node j's out-edges: out[first[j]..first[j+1]) */
    size_t *out = calloc(ne, sizeof *out), *pending = calloc(nn, sizeof *pending);
    int rc = -ENOMEM;
    if (!sorted || !head_of || !tail_of || !first || !out || !pending)
        goto done;
    for (size_t j = 0; j < n; j++) {
        sorted[j] = (struct node_at){nodes[j], j};
        deps[j] = 0;
    }
    qsort(sorted, n, sizeof *sorted, by_node);
    rc = -EINVAL;
    for (size_t j = 1; j < n; j++)
        if (sorted[j].node == sorted[j - 1].node)
            goto done;
    for (size_t i = 0; i < edges; i++) {
        tail_of[i] = index_of(sorted, n, from[i]);
        head_of[i] = index_of(sorted, n, to[i]);
        if (tail_of[i] == n || head_of[i] == n)
            goto done;
        first[tail_of[i] + 1]++;
        deps[head_of[i]]++;
    }
    for (size_t j = 0; j < n; j++)
        first[j + 1] += first[j];
    for (size_t i = 0; i < edges; i++) /* pending[] counts each node's out-edges filled so far */
        out[first[tail_of[i]] + pending[tail_of[i]]++] = head_of[i];
    /* Kahn's, order[] its queue, pending[] now each node's dependencies not placed yet. */
    size_t placed = 0, queued = 0;
    for (size_t j = 0; j < n; j++)
        if (!(pending[j] = deps[j]))
            order[queued++] = j;
    while (placed < queued) {
        size_t j = order[placed++];
        for (size_t i = first[j]; i < first[j + 1]; i++)
            if (--pending[out[i]] == 0)
                order[queued++] = out[i];
    }
    rc = placed == n ? 0 : -ELOOP;
done:
    free(sorted);
    free(head_of);
    free(tail_of);
    free(first);
    free(out);
    free(pending);
    return rc;
}

void graph_place_weigh(uint64_t *weight, size_t n, uint64_t learned_ns, size_t *kernels,
                       size_t *noted)
{
    uint64_t noted_ns = 0;
    *kernels = *noted = 0;
    for (size_t i = 0; i < n; i++) {
        if (weight[i] == GRAPH_PLACE_NOT_KERNEL)
            continue;
        ++*kernels;
        if (weight[i] && weight[i] < GRAPH_PLACE_NOT_KERNEL - noted_ns) {
            ++*noted;
            noted_ns += weight[i];
        }
    }
    uint64_t rest = learned_ns > noted_ns ? learned_ns - noted_ns : 0;
    uint64_t share = *kernels > *noted ? rest / (*kernels - *noted) : 0;
    for (size_t i = 0; i < n; i++)
        if (weight[i] == 0)
            weight[i] = share;
}

size_t graph_place_waits(const uint64_t *weight, const size_t *deps, size_t n, uint64_t interval_ns,
                         bool *gate)
{
    uint64_t since = 0;        /* predicted time of the kernel nodes since the last wait node */
    size_t ran = 0, gates = 0; /* and how many */
    for (size_t i = 0; i < n; i++) {
        gate[i] = false;
        if (weight[i] == GRAPH_PLACE_NOT_KERNEL)
            continue;
        if (ran && deps[i] && (weight[i] >= interval_ns || since > interval_ns - weight[i])) {
            gate[i] = true;
            gates++;
            since = 0;
            ran = 0;
        }
        since = weight[i] < GRAPH_PLACE_NOT_KERNEL - since ? since + weight[i]
                                                           : GRAPH_PLACE_NOT_KERNEL - 1;
        ran++;
    }
    return gates;
}
