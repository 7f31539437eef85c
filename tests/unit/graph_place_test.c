/*
 * graph_place_test.c - unit.graph_place: where wait nodes go inside a graph
 * (src/preempt/graph_place.c), without any runtime.
 *
 * The order: known graphs (a chain listed backwards, a diamond, roots kept in list order), an
 * edge to a node not in the list, a cycle, no nodes; random graphs of up to 300 nodes under
 * shuffled handles, where every node must come once and after each of its dependencies, with its
 * count of dependencies right. The weights: notes kept, the rest of the learned time shared by
 * the kernel nodes without one, none below zero, sums that would overflow. The wait nodes: one
 * every interval's worth of equal nodes, one before and after a node of an interval or more,
 * none before a node without dependencies or a kernel node first since the last wait node, and on
 * random sequences the rule of graph_place.h against the sums taken exactly. The walk, over a fake
 * runtime (an in-memory graph that logs its calls): wait nodes before the kernel nodes chosen,
 * taking their dependencies; a call failing before, between and while adding wait nodes, the
 * graph left as far as the walk went; an empty graph, one without kernel nodes, a cycle.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph_place.h"

#define K GRAPH_PLACE_NOT_KERNEL

static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Handles that are neither sorted nor small, as a runtime's pointers. */
static uintptr_t handle(size_t i)
{
    return (uintptr_t)(0x7f0000001000ull + ((i * 2654435761u) % 100003) * 64);
}

static void test_order_known(void)
{
    /* A chain listed backwards: 2 -> 1 -> 0 in list indices. */
    uintptr_t nodes[4] = {handle(0), handle(1), handle(2), handle(3)};
    uintptr_t from[3] = {nodes[2], nodes[1]}, to[3] = {nodes[1], nodes[0]};
    size_t order[4], deps[4];
    CHECK_INT(graph_place_order(nodes, 3, from, to, 2, order, deps), 0);
    CHECK(order[0] == 2 && order[1] == 1 && order[2] == 0);
    CHECK(deps[0] == 1 && deps[1] == 1 && deps[2] == 0);

    /* A diamond 0 -> {1, 2} -> 3, and a root 3rd in the list: roots in list order, then each
     * node once all of its dependencies are placed. */
    uintptr_t d[5] = {handle(10), handle(11), handle(12), handle(13), handle(14)};
    uintptr_t df[4] = {d[0], d[0], d[1], d[2]}, dt[4] = {d[1], d[2], d[3], d[3]};
    size_t dorder[5], ddeps[5];
    CHECK_INT(graph_place_order(d, 5, df, dt, 4, dorder, ddeps), 0);
    CHECK(dorder[0] == 0 && dorder[1] == 4 && dorder[2] == 1 && dorder[3] == 2 && dorder[4] == 3);
    CHECK(ddeps[3] == 2 && ddeps[4] == 0);

    /* Handles far apart, the top bit set: a chain 2 -> 0 -> 1 in list indices. */
    uintptr_t far[3] = {(uintptr_t)1 << 63, UINTPTR_MAX - 15, 0x10};
    uintptr_t ff[2] = {far[2], far[0]}, ft[2] = {far[0], far[1]};
    CHECK_INT(graph_place_order(far, 3, ff, ft, 2, order, deps), 0);
    CHECK(order[0] == 2 && order[1] == 0 && order[2] == 1);

    /* An edge's end not in the list: above, between and below the nodes' handles. */
    uintptr_t lo = handle(0) < handle(1) ? handle(0) : handle(1);
    uintptr_t strays[3] = {UINTPTR_MAX, lo + 8, 8};
    for (int i = 0; i < 3; i++) {
        CHECK_INT(graph_place_order(nodes, 3, &strays[i], &nodes[0], 1, order, deps), -EINVAL);
        CHECK_INT(graph_place_order(nodes, 3, &nodes[0], &strays[i], 1, order, deps), -EINVAL);
    }
    CHECK_INT(graph_place_order(nodes, 0, &nodes[0], &nodes[1], 1, order, deps), -EINVAL);
    /* A handle listed twice. */
    uintptr_t twice[3] = {nodes[0], nodes[1], nodes[0]};
    CHECK_INT(graph_place_order(twice, 3, NULL, NULL, 0, order, deps), -EINVAL);
    /* A cycle; a node depending on itself; no nodes. */
    uintptr_t cf[3] = {nodes[0], nodes[1], nodes[2]}, ct[3] = {nodes[1], nodes[2], nodes[1]};
    CHECK_INT(graph_place_order(nodes, 3, cf, ct, 3, order, deps), -ELOOP);
    CHECK_INT(graph_place_order(nodes, 3, &nodes[1], &nodes[1], 1, order, deps), -ELOOP);
    CHECK_INT(graph_place_order(nodes, 0, NULL, NULL, 0, order, deps), 0);
    /* An edge listed twice counts twice, and holds its node until both are done. */
    uintptr_t ef[2] = {nodes[1], nodes[1]}, et[2] = {nodes[0], nodes[0]};
    CHECK_INT(graph_place_order(nodes, 2, ef, et, 2, order, deps), 0);
    CHECK(order[0] == 1 && order[1] == 0 && deps[0] == 2 && deps[1] == 0);
}

/* Random DAGs: a hidden rank per node, edges only from a lower rank to a higher one. */
static void test_order_random(void)
{
    enum { MAX = 300, EDGES = 1200 };
    static uintptr_t nodes[MAX], from[EDGES], to[EDGES];
    static size_t rank[MAX], order[MAX], deps[MAX], want_deps[MAX], seen_at[MAX];
    static size_t from_at[EDGES], to_at[EDGES]; /* the edges' ends' indices */
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + next_random() % MAX, e = next_random() % (EDGES + 1);
        for (size_t i = 0; i < n; i++)
            rank[i] = i;
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = next_random() % (i + 1), t = rank[i];
            rank[i] = rank[j];
            rank[j] = t;
        }
        for (size_t i = 0; i < n; i++) {
            nodes[i] = handle(i + (size_t)round * MAX);
            want_deps[i] = 0;
        }
        size_t edges = 0;
        for (size_t i = 0; i < e && n > 1; i++) {
            size_t a = next_random() % n, b = next_random() % n;
            if (rank[a] == rank[b])
                continue;
            if (rank[a] > rank[b]) {
                size_t t = a;
                a = b;
                b = t;
            }
            from_at[edges] = a;
            to_at[edges] = b;
            from[edges] = nodes[a];
            to[edges++] = nodes[b];
            want_deps[b]++;
        }
        if (!CHECK_INT(graph_place_order(nodes, n, from, to, edges, order, deps), 0))
            continue;
        for (size_t i = 0; i < n; i++)
            seen_at[i] = SIZE_MAX;
        bool once = true;
        for (size_t i = 0; i < n; i++) {
            once = once && order[i] < n && seen_at[order[i]] == SIZE_MAX;
            if (order[i] < n)
                seen_at[order[i]] = i;
        }
        CHECK(once);
        bool after = true;
        for (size_t i = 0; once && i < edges; i++)
            after = after && seen_at[from_at[i]] < seen_at[to_at[i]];
        CHECK(after);
        bool counted = true;
        for (size_t i = 0; i < n; i++)
            counted = counted && deps[i] == want_deps[i];
        CHECK(counted);
    }
}

static void test_weigh(void)
{
    /* Two notes (300 and 200), three kernel nodes without one, two other nodes: 1000 learned. */
    uint64_t w[7] = {300, 0, K, 0, 200, K, 0};
    size_t kernels, noted;
    graph_place_weigh(w, 7, 1000, &kernels, &noted);
    CHECK_INT(kernels, 5);
    CHECK_INT(noted, 2);
    CHECK(w[0] == 300 && w[4] == 200 && w[2] == K && w[5] == K);
    CHECK(w[1] == 166 && w[3] == 166 && w[6] == 166); /* (1000 - 500) / 3 */

    /* Notes longer than the learned time: the others weigh nothing. */
    uint64_t v[3] = {800, 0, 0};
    graph_place_weigh(v, 3, 500, &kernels, &noted);
    CHECK(v[0] == 800 && v[1] == 0 && v[2] == 0 && noted == 1 && kernels == 3);

    /* Notes whose sum would reach GRAPH_PLACE_NOT_KERNEL: the one that would is not counted as
     * noted (nor replaced); one just below is. */
    uint64_t big[3] = {K - 10, 10, 0};
    graph_place_weigh(big, 3, 5, &kernels, &noted);
    CHECK(noted == 1 && kernels == 3 && big[0] == K - 10 && big[1] == 10 && big[2] == 0);
    uint64_t fits[3] = {K - 10, 9, 0};
    graph_place_weigh(fits, 3, 5, &kernels, &noted);
    CHECK(noted == 2 && kernels == 3 && fits[1] == 9 && fits[2] == 0);

    /* No kernel node at all. */
    uint64_t none[2] = {K, K};
    graph_place_weigh(none, 2, 100, &kernels, &noted);
    CHECK(kernels == 0 && noted == 0 && none[0] == K && none[1] == K);
}

static void test_waits_known(void)
{
    enum { N = 10 };
    uint64_t w[N];
    size_t deps[N];
    bool gate[N];
    for (size_t i = 0; i < N; i++)
        w[i] = 30, deps[i] = 1;
    /* Three of 30 fit an interval of 100; the fourth would pass it. */
    CHECK_INT(graph_place_waits(w, deps, N, 100, gate), 3);
    for (size_t i = 0; i < N; i++)
        CHECK(gate[i] == (i == 3 || i == 6 || i == 9));

    /* A node of an interval or more has a wait node before it and after it. */
    w[4] = 100;
    CHECK_INT(graph_place_waits(w, deps, N, 100, gate), 4);
    for (size_t i = 0; i < N; i++)
        CHECK(gate[i] == (i == 3 || i == 4 || i == 5 || i == 8));

    /* None before the first kernel node, a node without dependencies, or another node; a node
     * without dependencies where one would go delays it to the next kernel node. */
    uint64_t v[6] = {K, 60, K, 60, 60, 60};
    size_t d[6] = {0, 1, 1, 0, 1, 1};
    bool g[6];
    CHECK_INT(graph_place_waits(v, d, 6, 100, g), 2);
    CHECK(!g[0] && !g[1] && !g[2] && !g[3] && g[4] && g[5]);
}

/* The rule of graph_place.h, with sums taken exactly (128 bits). */
static void test_waits_random(void)
{
    enum { N = 200 };
    uint64_t w[N];
    size_t deps[N];
    bool gate[N];
    for (int round = 0; round < 2000; round++) {
        size_t n = next_random() % (N + 1);
        uint64_t interval = 1 + next_random() % 1000;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = next_random();
            w[i] = r % 5 == 0 ? K : r % 97 == 0 ? K - 1 - r % 3 : (r >> 8) % (2 * interval);
            deps[i] = (r >> 20) % 4 != 0;
        }
        size_t gates = graph_place_waits(w, deps, n, interval, gate);
        unsigned __int128 since = 0;
        size_t ran = 0, counted = 0;
        bool rule = true;
        for (size_t i = 0; i < n; i++) {
            if (w[i] == K) {
                rule = rule && !gate[i];
                continue;
            }
            bool want = ran && deps[i] && (w[i] >= interval || since + w[i] > interval);
            rule = rule && gate[i] == want;
            counted += want;
            if (want)
                since = 0, ran = 0;
            since += w[i];
            ran++;
        }
        CHECK(rule);
        CHECK_INT(gates, counted);
    }
}

/* A runtime's graph in memory: nodes (kernel nodes with a note or none, other nodes), edges, and
 * each call logged as a letter (N nodes, E edges, W weigh, A add_wait, R and D: edges removed and
 * added); the fails-th call of letter `failing` fails (-EPERM). */
enum { FAKE_NODES = 16, FAKE_EDGES = 32 };
struct fake {
    size_t n, edges;
    uintptr_t nodes[FAKE_NODES], from[FAKE_EDGES], to[FAKE_EDGES];
    uint64_t weight[FAKE_NODES]; /* the weigh call's answer */
    char log[64], failing;
    int fails;
};

static size_t weighed_calls, weighed_nodes;

static int logged(struct fake *f, char call)
{
    size_t len = strlen(f->log), seen = 0;
    for (size_t i = 0; i < len; i++)
        seen += f->log[i] == call;
    if (len + 1 < sizeof f->log)
        f->log[len] = call;
    return call == f->failing && (int)seen + 1 == f->fails ? -EPERM : 0;
}

static int fake_nodes(void *ctx, void *nodes, size_t *n)
{
    struct fake *f = ctx;
    int rc = logged(f, 'N');
    for (size_t i = 0; !rc && nodes && i < *n && i < f->n; i++)
        ((uintptr_t *)nodes)[i] = f->nodes[i];
    *n = f->n;
    return rc;
}

static int fake_edges(void *ctx, void *from, void *to, size_t *n)
{
    struct fake *f = ctx;
    int rc = logged(f, 'E');
    for (size_t i = 0; !rc && from && i < *n && i < f->edges; i++) {
        ((uintptr_t *)from)[i] = f->from[i];
        ((uintptr_t *)to)[i] = f->to[i];
    }
    *n = f->edges;
    return rc;
}

static int fake_weigh(void *ctx, const void *node, uint64_t *weight)
{
    struct fake *f = ctx;
    for (size_t i = 0; i < f->n; i++)
        if (f->nodes[i] == *(const uintptr_t *)node)
            *weight = f->weight[i];
    return logged(f, 'W');
}

static void fake_weighed(const void *nodes, size_t n)
{
    weighed_calls += nodes != NULL;
    weighed_nodes = n;
}

static bool has_edge(const struct fake *f, uintptr_t from, uintptr_t to)
{
    for (size_t i = 0; i < f->edges; i++)
        if (f->from[i] == from && f->to[i] == to)
            return true;
    return false;
}

static size_t deps_of(const struct fake *f, uintptr_t node)
{
    size_t deps = 0;
    for (size_t i = 0; i < f->edges; i++)
        deps += f->to[i] == node;
    return deps;
}

/* Adds (add) or removes the n edges from[i] to to[i]: -EINVAL where one is there already, or
 * is not there to remove. */
static int change(struct fake *f, bool add, const uintptr_t *from, const uintptr_t *to, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < f->edges && !(f->from[j] == from[i] && f->to[j] == to[i]))
            j++;
        if (add && j == f->edges && f->edges < FAKE_EDGES) {
            f->from[f->edges] = from[i];
            f->to[f->edges++] = to[i];
        } else if (!add && j < f->edges) {
            f->from[j] = f->from[--f->edges];
            f->to[j] = f->to[f->edges];
        } else {
            return -EINVAL;
        }
    }
    return 0;
}

static int fake_change_edges(void *ctx, bool add, const void *from, const void *to, size_t n)
{
    int rc = logged(ctx, add ? 'D' : 'R');
    return rc ? rc : change(ctx, add, from, to, n);
}

/* A node that is not a kernel node, with an edge from each of deps. */
static int fake_add_wait(void *ctx, const void *deps, size_t n, void *wait)
{
    struct fake *f = ctx;
    int rc = logged(f, 'A');
    if (rc || f->n == FAKE_NODES)
        return rc ? rc : -ENOMEM;
    uintptr_t node = 0xa000 + f->n, *to = calloc(n, sizeof *to);
    for (size_t i = 0; to && i < n; i++)
        to[i] = node;
    f->weight[f->n] = K;
    f->nodes[f->n++] = node;
    rc = to ? change(f, true, deps, to, n) : -ENOMEM;
    free(to);
    *(uintptr_t *)wait = node;
    return rc;
}

static const struct graph_place_calls fake_calls = {
    .handle_size = sizeof(uintptr_t),
    .get_nodes = fake_nodes,
    .get_edges = fake_edges,
    .weigh = fake_weigh,
    .weighed = fake_weighed,
    .add_wait = fake_add_wait,
    .change_edges = fake_change_edges,
};

/* c0 (not a kernel node) -> k1 -> {k2a, k2b}; {k2a, k2b, c0} -> k3 -> k4 -> c5 (not a kernel
 * node), listed out of order; k2a and k2b noted at 10. Learned 500: k1, k3 and k4 weigh 160 each,
 * so with an interval of 200 wait nodes go before k3 (three dependencies) and k4. */
enum { C0, K1, K2A, K2B, K3, K4, C5 };
static struct fake diamond(void)
{
    struct fake f = {.n = 7, .edges = 8};
    static const size_t listed[7] = {K3, C0, K1, K4, K2A, K2B, C5};
    static const uint64_t weight[7] = {K, 0, 10, 10, 0, 0, K};
    static const size_t from[8] = {C0, K1, K1, K2A, K2B, C0, K3, K4};
    static const size_t to[8] = {K1, K2A, K2B, K3, K3, K3, K4, C5};
    for (size_t i = 0; i < 7; i++) {
        f.nodes[i] = handle(listed[i]);
        f.weight[i] = weight[listed[i]];
    }
    for (size_t i = 0; i < 8; i++) {
        f.from[i] = handle(from[i]);
        f.to[i] = handle(to[i]);
    }
    return f;
}

static int walk(struct fake *f, uint64_t learned_ns, uint64_t interval_ns, uintptr_t **waits,
                size_t *gates, size_t *noted)
{
    void *got = NULL;
    weighed_calls = weighed_nodes = 0;
    int rc = graph_place_add_waits(&fake_calls, f, learned_ns, interval_ns, &got, gates, noted);
    *waits = got;
    return rc;
}

static void test_walk(void)
{
    struct fake f = diamond();
    uintptr_t *waits;
    size_t gates, noted;
    CHECK_INT(walk(&f, 500, 200, &waits, &gates, &noted), 0);
    CHECK(gates == 2 && noted == 2 && waits);
    CHECK(!strcmp(f.log, "NNEEWWWWWWWARDARD"));
    CHECK(weighed_calls == 1 && weighed_nodes == 7);
    if (waits && gates == 2) {
        uintptr_t w3 = waits[0], w4 = waits[1];
        CHECK(has_edge(&f, handle(K2A), w3) && has_edge(&f, handle(K2B), w3) &&
              has_edge(&f, handle(C0), w3) && deps_of(&f, w3) == 3);
        CHECK(has_edge(&f, w3, handle(K3)) && deps_of(&f, handle(K3)) == 1);
        CHECK(has_edge(&f, handle(K3), w4) && deps_of(&f, w4) == 1);
        CHECK(has_edge(&f, w4, handle(K4)) && deps_of(&f, handle(K4)) == 1);
        CHECK(has_edge(&f, handle(C0), handle(K1)) && has_edge(&f, handle(K1), handle(K2A)) &&
              has_edge(&f, handle(K1), handle(K2B)) && has_edge(&f, handle(K4), handle(C5)));
        CHECK_INT(f.edges, 10);
    }
    free(waits);

    /* By count where nothing is noted: every kernel node weighs 100, so one every two. */
    f = diamond();
    for (size_t i = 0; i < f.n; i++)
        f.weight[i] = f.weight[i] == K ? K : 0;
    CHECK_INT(walk(&f, 500, 200, &waits, &gates, &noted), 0);
    CHECK(gates == 2 && noted == 0 && !strcmp(f.log, "NNEEWWWWWWWARDARD"));
    CHECK(waits && deps_of(&f, waits[0]) == 1 && has_edge(&f, waits[0], handle(K2B)));
    free(waits);
}

/* A call failing stops the walk there, nothing reported, the graph left as far as it went. */
static void test_walk_fails(void)
{
    static const struct {
        char failing;
        int fails, rc;
        const char *log;
        size_t edges, nodes, weighed;
    } cases[] = {
        {'N', 1, -EIO, "N", 8, 7, 0},
        {'N', 2, -EIO, "NN", 8, 7, 0},
        {'E', 1, -EIO, "NNE", 8, 7, 0},
        {'E', 2, -EIO, "NNEE", 8, 7, 0},
        {'W', 3, -EPERM, "NNEEWWW", 8, 7, 1},
        /* The first wait node is in, the second not added. */
        {'A', 2, -EPERM, "NNEEWWWWWWWARDA", 9, 8, 1},
        /* Added, its edges not moved: it stays, and k4 still depends on k3. */
        {'R', 2, -EPERM, "NNEEWWWWWWWARDAR", 10, 9, 1},
        /* The first one's dependencies left k3, which depends on nothing then. */
        {'D', 1, -EPERM, "NNEEWWWWWWWARD", 8, 8, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct fake f = diamond();
        f.failing = cases[c].failing;
        f.fails = cases[c].fails;
        uintptr_t *waits;
        size_t gates = 1, noted = 1;
        CHECK_INT(walk(&f, 500, 200, &waits, &gates, &noted), cases[c].rc);
        CHECK(!waits && gates == 0 && noted == 0);
        CHECK(!strcmp(f.log, cases[c].log));
        CHECK(f.edges == cases[c].edges && f.n == cases[c].nodes);
        CHECK_INT(weighed_calls, cases[c].weighed);
        if (cases[c].failing == 'R')
            CHECK(has_edge(&f, handle(K3), handle(K4)) && has_edge(&f, handle(K3), f.nodes[8]));
        if (cases[c].failing == 'D')
            CHECK(deps_of(&f, handle(K3)) == 0 && deps_of(&f, f.nodes[7]) == 3);
    }
}

/* No nodes; no kernel node; no kernel node after another; a cycle. */
static void test_walk_nothing(void)
{
    uintptr_t *waits;
    size_t gates, noted, n = 1;
    struct fake f = {0};
    CHECK_INT(walk(&f, 500, 200, &waits, &gates, &noted), -EIO);
    CHECK(!waits && gates == 0 && !strcmp(f.log, "N") && weighed_calls == 0);
    CHECK(!graph_place_nodes(&fake_calls, &f, &n) && n == 0);

    f = diamond();
    for (size_t i = 0; i < f.n; i++)
        f.weight[i] = K;
    CHECK_INT(walk(&f, 500, 200, &waits, &gates, &noted), -ENOENT);
    CHECK(!waits && gates == 0 && !strcmp(f.log, "NNEEWWWWWWW") && weighed_calls == 1);
    CHECK_INT(f.edges, 8);

    /* Parallel kernel nodes: none has a kernel node before it. */
    f = (struct fake){.n = 3, .nodes = {handle(0), handle(1), handle(2)}, .weight = {0, 0, 0}};
    CHECK_INT(walk(&f, 3000, 100, &waits, &gates, &noted), -ENOENT);
    CHECK(!strcmp(f.log, "NNEWWW"));

    f = diamond();
    f.from[f.edges] = handle(K4); /* k4 -> k1 */
    f.to[f.edges++] = handle(K1);
    CHECK_INT(walk(&f, 500, 200, &waits, &gates, &noted), -ELOOP);
    CHECK(!strcmp(f.log, "NNEE") && weighed_calls == 1);

    f = diamond();
    uintptr_t *nodes = graph_place_nodes(&fake_calls, &f, &n);
    CHECK(nodes && n == 7 && nodes[0] == handle(K3) && nodes[6] == handle(C5));
    free(nodes);
}

int main(void)
{
    test_order_known();
    test_order_random();
    test_weigh();
    test_waits_known();
    test_waits_random();
    test_walk();
    test_walk_fails();
    test_walk_nothing();
    return check_finish("unit.graph_place");
}
