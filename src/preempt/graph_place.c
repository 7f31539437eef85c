/*
 * graph_place.c - where wait nodes go inside a graph (graph_place.h says what and why).
 *
 * The order is Kahn's: nodes without dependencies first, each node once all of its dependencies
 * were placed, ties in the runtime's list order. An edge's ends are found by binary search in the
 * nodes sorted by handle, so a graph's placement costs O((nodes + edges) log nodes). The walk
 * holds the runtime's handles as bytes, qsort's way.
 */
#include "graph_place.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devgate.h"

_Alignas(4096) uint64_t graph_place_open_page[4096 / sizeof(uint64_t)] = {DG_OPEN};

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

void *graph_place_nodes(const struct graph_place_calls *calls, void *ctx, size_t *n)
{
    *n = 0;
    size_t count = 0;
    if (calls->get_nodes(ctx, NULL, &count) || count == 0)
        return NULL;
    void *nodes = calloc(count, calls->handle_size);
    if (nodes && calls->get_nodes(ctx, nodes, &count) == 0) {
        *n = count;
        return nodes;
    }
    free(nodes);
    return NULL;
}

/* A graph as the walk read it: the runtime's handles (size bytes each), and as integers. */
struct graph_read {
    const struct graph_place_calls *calls;
    void *ctx;
    size_t size, n, edges;
    unsigned char *nodes, *from, *to;
    uintptr_t *ids, *from_ids, *to_ids;
};

/* Its edges (from[i] to to[i]; none where it has none): 0, or -EIO (also where the count changed
 * between the two calls, which gpuprio's own copy never does). */
static int read_edges(struct graph_read *g)
{
    size_t e = 0;
    if (g->calls->get_edges(g->ctx, NULL, NULL, &e))
        return -EIO;
    if (!(g->edges = e))
        return 0;
    g->from = calloc(e, g->size);
    g->to = calloc(e, g->size);
    if (g->from && g->to && g->calls->get_edges(g->ctx, g->from, g->to, &e) == 0 && e == g->edges)
        return 0;
    return -EIO;
}

/* n handles as integers (graph_place.h): a malloc'd copy, or NULL. */
static uintptr_t *ids_of(const unsigned char *handles, size_t n, size_t size)
{
    uintptr_t *ids = calloc(n ? n : 1, sizeof *ids);
    for (size_t i = 0; ids && i < n; i++)
        memcpy(&ids[i], handles + i * size, size < sizeof *ids ? size : sizeof *ids);
    return ids;
}

/* Puts a wait node, into wait, on the edges into g's node k, a kernel node with deps dependencies
 * (graph_place_waits chooses none without). 0, -ENOMEM, or a call's error. */
static int wait_before(const struct graph_read *g, size_t k, size_t deps, unsigned char *wait)
{
    const unsigned char *kernel = g->nodes + k * g->size;
    unsigned char *dep = calloc(deps, g->size), *kernels = calloc(deps, g->size);
    int rc = -ENOMEM;
    if (!dep || !kernels)
        goto out;
    for (size_t i = 0, j = 0; i < g->edges; i++)
        if (g->to_ids[i] == g->ids[k]) {
            memcpy(dep + j * g->size, g->from + i * g->size, g->size);
            memcpy(kernels + j++ * g->size, kernel, g->size);
        }
    if (!(rc = g->calls->add_wait(g->ctx, dep, deps, wait)) &&
        !(rc = g->calls->change_edges(g->ctx, false, dep, kernels, deps)))
        rc = g->calls->change_edges(g->ctx, true, wait, kernel, 1);
out:
    free(dep);
    free(kernels);
    return rc;
}

int graph_place_add_waits(const struct graph_place_calls *calls, void *ctx, uint64_t learned_ns,
                          uint64_t interval_ns, void **waits, size_t *gates, size_t *noted)
{
    struct graph_read g = {.calls = calls, .ctx = ctx, .size = calls->handle_size};
    size_t *order = NULL, *deps = NULL, *deps_in_order = NULL, kernels, counted, chosen, added = 0;
    uint64_t *weight = NULL;
    bool *gate = NULL;
    unsigned char *made = NULL; /* the wait nodes added */
    *waits = NULL;
    *gates = *noted = 0;
    int rc = -EINVAL; /* a handle must fit the integers graph_place_order takes */
    if (g.size == 0 || g.size > sizeof(uintptr_t))
        goto out;
    rc = -EIO;
    if (!(g.nodes = graph_place_nodes(calls, ctx, &g.n)) || read_edges(&g))
        goto out;
    rc = -ENOMEM;
    g.ids = ids_of(g.nodes, g.n, g.size);
    g.from_ids = ids_of(g.from, g.edges, g.size);
    g.to_ids = ids_of(g.to, g.edges, g.size);
    order = calloc(g.n, sizeof *order);
    deps = calloc(g.n, sizeof *deps);
    deps_in_order = calloc(g.n, sizeof *deps_in_order);
    weight = calloc(g.n, sizeof *weight);
    gate = calloc(g.n, sizeof *gate);
    made = calloc(g.n, g.size); /* room for a wait node per node: more than enough */
    if (!g.ids || !g.from_ids || !g.to_ids || !order || !deps || !deps_in_order || !weight ||
        !gate || !made)
        goto out;
    rc = graph_place_order(g.ids, g.n, g.from_ids, g.to_ids, g.edges, order, deps);
    for (size_t i = 0; i < g.n && !rc; i++) {
        rc = calls->weigh(ctx, g.nodes + order[i] * g.size, &weight[i]);
        deps_in_order[i] = deps[order[i]];
    }
    if (calls->weighed)
        calls->weighed(g.nodes, g.n);
    if (rc)
        goto out;
    graph_place_weigh(weight, g.n, learned_ns, &kernels, &counted);
    rc = -ENOENT;
    if (!(chosen = graph_place_waits(weight, deps_in_order, g.n, interval_ns, gate)))
        goto out;
    rc = 0;
    for (size_t i = 0; i < g.n && !rc; i++)
        if (gate[i])
            rc = wait_before(&g, order[i], deps_in_order[i], made + added++ * g.size);
    if (rc)
        goto out;
    *waits = made;
    *gates = chosen;
    *noted = counted;
    made = NULL;
out:
    free(g.nodes);
    free(g.from);
    free(g.to);
    free(g.ids);
    free(g.from_ids);
    free(g.to_ids);
    free(order);
    free(deps);
    free(deps_in_order);
    free(weight);
    free(gate);
    free(made);
    return rc;
}
