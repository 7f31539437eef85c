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
 * random sequences the rule of graph_place.h against the sums taken exactly.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

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

int main(void)
{
    test_order_known();
    test_order_random();
    test_weigh();
    test_waits_known();
    test_waits_random();
    return check_finish("unit.graph_place");
}
