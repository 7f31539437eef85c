/*
 * policy_test.c - unit.policy: the scheduling policies of src/sched/policy.c, without any GPU
 * runtime. sched_policy_hpf (highest priority first) and sched_policy_decide are checked on
 * hand-written cases (empty input, one queue, nothing active, suspension of every lower
 * priority on the device but not of ties, throttling, tracking, devices kept apart, queues
 * appearing and disappearing between calls, extreme priorities) and against a brute-force
 * reference written from policy.h's description, on 100 interleaved devices and on thousands of
 * random cases with a fixed seed. The passthrough policy must clear every decision.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy.h"

#define Q(dev, prio, act)                                                                          \
    ((struct sched_queue){.device = (dev), .priority = (prio), .active = (act)})
#define N(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The reference, pair by pair, as policy.h states it: a queue is suspended when an active queue
 * of higher priority is on its device, throttled when any queue of higher priority is, and
 * tracked when any queue of a different priority is.
 */
static void reference_hpf(const struct sched_queue *in, struct sched_queue *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = in[i];
        out[i].suspend = out[i].throttle = out[i].track = false;
        for (size_t j = 0; j < n; j++) {
            if (in[j].device != in[i].device)
                continue;
            if (in[j].priority > in[i].priority) {
                out[i].throttle = true;
                if (in[j].active)
                    out[i].suspend = true;
            }
            if (in[j].priority != in[i].priority)
                out[i].track = true;
        }
    }
}

static void print_queues(const char *what, const struct sched_queue *q, size_t n)
{
    fprintf(stderr, "  %s (%zu queues):\n", what, n);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "    [%zu] device %d priority %d %s -> suspend %d throttle %d track %d\n",
                i, q[i].device, q[i].priority, q[i].active ? "active" : "idle", q[i].suspend,
                q[i].throttle, q[i].track);
}

/* Sets every output, so that a policy leaving one alone is caught. */
static void set_outputs(struct sched_queue *q, size_t n, bool v)
{
    for (size_t i = 0; i < n; i++)
        q[i].suspend = q[i].throttle = q[i].track = v;
}

/*
 * Runs HPF on a copy of in[0..n) (through sched_policy_hpf, or sched_policy_decide when
 * via_decide), with the outputs first set to stale, and compares with the reference: decisions
 * equal, inputs untouched. Prints both on a mismatch. Whether they matched.
 */
static bool matches_reference(const struct sched_queue *in, size_t n, bool stale, bool via_decide,
                              const char *file, int line)
{
    struct sched_queue got[256], want[256];
    if (!check_at(n <= N(got), file, line, "n <= 256 (test capacity)"))
        return false;
    if (n)
        memcpy(got, in, n * sizeof *in);
    set_outputs(got, n, stale);
    if (via_decide)
        sched_policy_decide(SCHED_POLICY_HPF, got, n);
    else
        sched_policy_hpf(got, n);
    reference_hpf(in, want, n);
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok = ok && got[i].device == want[i].device && got[i].priority == want[i].priority &&
             got[i].active == want[i].active && got[i].suspend == want[i].suspend &&
             got[i].throttle == want[i].throttle && got[i].track == want[i].track;
    if (!check_at(ok, file, line, "HPF decisions == reference")) {
        print_queues("sched_policy_hpf", got, n);
        print_queues("reference", want, n);
    }
    return ok;
}
#define CHECK_REFERENCE(in, n) matches_reference((in), (n), false, false, __FILE__, __LINE__)

/*
 * Checks q[0..n) against expect: one word per queue, of the letters S (suspend), T (throttle),
 * K (track), or '-' for none, e.g. "STK -TK --K ---".
 */
static void check_decisions(const struct sched_queue *q, size_t n, const char *expect,
                            const char *file, int line)
{
    char got[4 * 256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used + 5 < sizeof got; i++) {
        used += (size_t)snprintf(got + used, sizeof got - used, "%s", i ? " " : "");
        if (!q[i].suspend && !q[i].throttle && !q[i].track) {
            used += (size_t)snprintf(got + used, sizeof got - used, "-");
            continue;
        }
        used += (size_t)snprintf(got + used, sizeof got - used, "%s%s%s", q[i].suspend ? "S" : "",
                                 q[i].throttle ? "T" : "", q[i].track ? "K" : "");
    }
    if (!check_at(strcmp(got, expect) == 0, file, line, "decisions == expected"))
        fprintf(stderr, "  got      \"%s\"\n  expected \"%s\"\n", got, expect);
}
#define CHECK_DECISIONS(q, n, expect) check_decisions((q), (n), (expect), __FILE__, __LINE__)

/* HPF on q (in place, stale outputs set to true first), then the expected decisions, and the
 * reference agrees with them. */
#define CHECK_HPF(q, expect)                                                                       \
    do {                                                                                           \
        CHECK_REFERENCE((q), N(q));                                                                \
        set_outputs((q), N(q), true);                                                              \
        sched_policy_hpf((q), N(q));                                                               \
        CHECK_DECISIONS((q), N(q), (expect));                                                      \
    } while (0)

static void test_names(void)
{
    CHECK(strcmp(sched_policy_name(SCHED_POLICY_HPF), "hpf") == 0);
    CHECK(strcmp(sched_policy_name(SCHED_POLICY_PASSTHROUGH), "passthrough") == 0);
}

static void test_empty(void)
{
    /* No queues at all: nothing is read or written. */
    sched_policy_hpf(NULL, 0);
    sched_policy_decide(SCHED_POLICY_HPF, NULL, 0);
    sched_policy_decide(SCHED_POLICY_PASSTHROUGH, NULL, 0);
    struct sched_queue q[2] = {Q(0, 10, true), Q(0, 0, true)};
    set_outputs(q, N(q), true);
    sched_policy_hpf(q, 0);
    CHECK_DECISIONS(q, N(q), "STK STK");
    sched_policy_decide(SCHED_POLICY_HPF, q, 0);
    CHECK_DECISIONS(q, N(q), "STK STK");
    sched_policy_decide(SCHED_POLICY_PASSTHROUGH, q, 0);
    CHECK_DECISIONS(q, N(q), "STK STK");
    /* Only the first n are looked at: q[1] (lower, would be suspended) is outside. */
    sched_policy_hpf(q, 1);
    CHECK_DECISIONS(q, N(q), "- STK");
}

static void test_one_queue(void)
{
    static const int prios[] = {INT_MIN, -1000, -10, 0, 10, 1000, INT_MAX};
    for (size_t i = 0; i < N(prios); i++)
        for (int active = 0; active < 2; active++) {
            struct sched_queue q[] = {Q(3, prios[i], active)};
            CHECK_HPF(q, "-");
        }
}

static void test_nothing_active(void)
{
    /* Nothing is suspended, but lower queues are throttled and all are tracked. */
    struct sched_queue q[] = {Q(0, 10, false), Q(0, 0, false), Q(0, -10, false), Q(0, 0, false)};
    CHECK_HPF(q, "K TK TK TK");
    struct sched_queue r[] = {Q(0, -10, false), Q(0, 0, false), Q(0, 10, false)};
    CHECK_HPF(r, "TK TK K");
}

static void test_highest_active_suspends_lower(void)
{
    /* Highest priority active: every lower queue is suspended, active or not; its tie (10,
     * idle) is not. */
    struct sched_queue q[] = {Q(0, 0, true),   Q(0, 10, true),  Q(0, 0, false),
                              Q(0, 10, false), Q(0, -10, true), Q(0, -20, false)};
    CHECK_HPF(q, "STK K STK K STK STK");

    /* Only a middle priority is active: it suspends what is below it, and is itself throttled
     * (not suspended) by the idle queue above. */
    struct sched_queue m[] = {Q(0, 10, false), Q(0, 0, true), Q(0, -10, false), Q(0, -10, true)};
    CHECK_HPF(m, "K TK STK STK");

    /* Only the lowest is active: nothing is suspended. */
    struct sched_queue l[] = {Q(0, 10, false), Q(0, 0, false), Q(0, -10, true)};
    CHECK_HPF(l, "K TK TK");

    /* Two active ties at the top do not suspend each other; the lower is suspended. */
    struct sched_queue t[] = {Q(0, 5, true), Q(0, 5, true), Q(0, 4, true)};
    CHECK_HPF(t, "K K STK");

    /* The order of the queues does not matter: the same queues, reversed. */
    struct sched_queue rev[] = {Q(0, -20, false), Q(0, -10, true), Q(0, 10, false),
                                Q(0, 0, false),   Q(0, 10, true),  Q(0, 0, true)};
    CHECK_HPF(rev, "STK STK K STK K STK");
}

static void test_equal_priorities(void)
{
    /* One priority everywhere: nothing suspended, throttled or tracked, active or not. */
    struct sched_queue q[] = {Q(0, 10, true), Q(0, 10, false), Q(0, 10, true), Q(0, 10, false)};
    CHECK_HPF(q, "- - - -");
    struct sched_queue idle[] = {Q(1, -3, false), Q(1, -3, false)};
    CHECK_HPF(idle, "- -");
    /* Each device has one priority, different from the other device's: still nothing. */
    struct sched_queue d[] = {Q(0, 10, true), Q(1, -10, true), Q(0, 10, false), Q(1, -10, false),
                              Q(2, 0, true)};
    CHECK_HPF(d, "- - - - -");
}

static void test_throttle_and_track(void)
{
    /* A higher queue throttles lower ones whether it is active or not, and tracking follows
     * from priorities differing, not from activity. */
    struct sched_queue idle_above[] = {Q(0, 1, false), Q(0, 0, false)};
    CHECK_HPF(idle_above, "K TK");
    struct sched_queue active_above[] = {Q(0, 1, true), Q(0, 0, false)};
    CHECK_HPF(active_above, "K STK");
    struct sched_queue active_below[] = {Q(0, 1, false), Q(0, 0, true)};
    CHECK_HPF(active_below, "K TK");
    /* Adjacent priorities (1 apart) count as different. */
    struct sched_queue adj[] = {Q(0, 0, true), Q(0, -1, true), Q(0, 0, false)};
    CHECK_HPF(adj, "K STK K");
}

static void test_devices_apart(void)
{
    /* Device 0's active high queue does nothing to device 1's lower queues. */
    struct sched_queue q[] = {Q(0, 10, true), Q(1, 0, false), Q(1, 0, true), Q(0, 0, false)};
    CHECK_HPF(q, "K - - STK");
    /* Interleaved, with device numbers that are not small indices. */
    struct sched_queue r[] = {Q(-1, 0, true),        Q(7, 20, false),  Q(INT_MAX, 5, true),
                              Q(7, -20, true),       Q(-1, 10, false), Q(INT_MAX, 5, false),
                              Q(INT_MIN, -5, false), Q(7, 20, true),   Q(-1, 10, true)};
    CHECK_HPF(r, "STK K - STK K - - K K");
}

/* 100 devices, queues interleaved, priorities and activity scattered: against the reference,
 * and per device against what the device alone gives. */
static void test_many_devices(void)
{
    enum { DEVICES = 100, CAP = 256 };
    struct sched_queue q[CAP];
    size_t n = 0;
    unsigned long long seed = 42;
    for (int round = 0; round < 3; round++)
        for (int d = 0; d < DEVICES; d++)
            if (round == 0 || (d + round) % 3 != 0) {
                int dev = (d * 37) % DEVICES; /* a permutation of 0..99 */
                /* Every tenth device has one priority throughout: nothing to decide there. */
                int prio = d % 10 == 9 ? 7 : (int)check_rand_below(&seed, 41) - 20;
                q[n++] = Q(dev, prio, check_rand_below(&seed, 3) == 0);
            }
    /* Shuffle, so devices appear in no particular order. */
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = check_rand_below(&seed, (unsigned)(i + 1));
        struct sched_queue t = q[i];
        q[i] = q[j];
        q[j] = t;
    }
    CHECK(n > 2 * DEVICES);
    CHECK_REFERENCE(q, n);

    struct sched_queue all[CAP];
    memcpy(all, q, n * sizeof *q);
    set_outputs(all, n, true);
    sched_policy_hpf(all, n);
    size_t suspended = 0, throttled = 0, tracked = 0;
    bool same = true;
    for (int d = 0; d < DEVICES; d++) {
        struct sched_queue one[CAP];
        size_t idx[CAP], m = 0;
        for (size_t i = 0; i < n; i++)
            if (q[i].device == d) {
                idx[m] = i;
                one[m++] = q[i];
            }
        sched_policy_hpf(one, m);
        for (size_t k = 0; k < m; k++)
            same = same && one[k].suspend == all[idx[k]].suspend &&
                   one[k].throttle == all[idx[k]].throttle && one[k].track == all[idx[k]].track;
    }
    CHECK(same);
    for (size_t i = 0; i < n; i++) {
        suspended += all[i].suspend;
        throttled += all[i].throttle;
        tracked += all[i].track;
    }
    /* The case is not vacuous: some of each decision, and not everything. */
    CHECK(suspended > 0 && suspended < n);
    CHECK(throttled > suspended && throttled < n);
    CHECK(tracked > throttled && tracked < n);
}

/* The policy keeps no state: successive arrays (queues appearing, disappearing, changing
 * activity) each get the decisions of their own contents. */
static void test_successive_calls(void)
{
    struct sched_queue a[] = {Q(0, 10, false), Q(0, 0, true)};
    CHECK_HPF(a, "K TK");
    a[0].active = true; /* the high queue gets work */
    sched_policy_hpf(a, N(a));
    CHECK_DECISIONS(a, N(a), "K STK");
    sched_policy_hpf(a, N(a)); /* again: the same */
    CHECK_DECISIONS(a, N(a), "K STK");
    a[0].active = false; /* ... and goes idle */
    sched_policy_hpf(a, N(a));
    CHECK_DECISIONS(a, N(a), "K TK");

    /* The high queue disappears: the one left is alone, whatever it was told before. */
    struct sched_queue b[] = {a[1]};
    b[0].suspend = b[0].throttle = b[0].track = true;
    sched_policy_hpf(b, N(b));
    CHECK_DECISIONS(b, N(b), "-");

    /* A new, higher queue appears, idle, then active; a queue on another device appears. */
    struct sched_queue c[] = {b[0], Q(0, 20, false)};
    sched_policy_hpf(c, N(c));
    CHECK_DECISIONS(c, N(c), "TK K");
    c[1].active = true;
    sched_policy_hpf(c, N(c));
    CHECK_DECISIONS(c, N(c), "STK K");
    struct sched_queue d[] = {c[0], Q(1, -5, true), c[1]};
    sched_policy_hpf(d, N(d));
    CHECK_DECISIONS(d, N(d), "STK - K");

    /* The high queue goes away again: the earlier suspension does not linger. */
    struct sched_queue e[] = {d[0], d[1]};
    sched_policy_hpf(e, N(e));
    CHECK_DECISIONS(e, N(e), "- -");

    /* A queue's priority changes between calls. */
    struct sched_queue f[] = {Q(0, 0, true), Q(0, 0, true)};
    sched_policy_hpf(f, N(f));
    CHECK_DECISIONS(f, N(f), "- -");
    f[1].priority = 1;
    sched_policy_hpf(f, N(f));
    CHECK_DECISIONS(f, N(f), "STK K");
    f[1].priority = -1;
    sched_policy_hpf(f, N(f));
    CHECK_DECISIONS(f, N(f), "K STK");
}

static void test_extreme_priorities(void)
{
    struct sched_queue scale[] = {Q(0, -1000, true), Q(0, 1000, true), Q(0, 0, false)};
    CHECK_HPF(scale, "STK K STK");
    struct sched_queue neg[] = {Q(0, -1000, false), Q(0, -999, true), Q(0, -1000, true)};
    CHECK_HPF(neg, "STK K STK");

    /* The int range itself (the policy does not assume gpuprio's scale). */
    struct sched_queue ends[] = {Q(0, INT_MIN + 1, true), Q(0, INT_MAX, true)};
    CHECK_HPF(ends, "STK K");
    struct sched_queue ends_idle[] = {Q(0, INT_MIN + 1, true), Q(0, INT_MAX, false)};
    CHECK_HPF(ends_idle, "TK K");
    struct sched_queue lowest[] = {Q(0, INT_MIN, true), Q(0, INT_MIN + 1, true)};
    CHECK_HPF(lowest, "STK K");
    struct sched_queue lowest_only_active[] = {Q(0, INT_MIN, true), Q(0, INT_MIN + 1, false)};
    CHECK_HPF(lowest_only_active, "TK K");
    struct sched_queue highest[] = {Q(0, INT_MAX - 1, true), Q(0, INT_MAX, true)};
    CHECK_HPF(highest, "STK K");
    struct sched_queue minmax[] = {Q(0, INT_MAX, true), Q(0, INT_MIN, false)};
    CHECK_HPF(minmax, "K STK");
    /* Ties at the very ends are still ties. */
    struct sched_queue all_min[] = {Q(0, INT_MIN, true), Q(0, INT_MIN, false)};
    CHECK_HPF(all_min, "- -");
    struct sched_queue all_max[] = {Q(0, INT_MAX, true), Q(0, INT_MAX, false)};
    CHECK_HPF(all_max, "- -");
    struct sched_queue all_max_idle[] = {Q(0, INT_MAX, false), Q(0, INT_MAX, false)};
    CHECK_HPF(all_max_idle, "- -");
    struct sched_queue all_min_idle[] = {Q(0, INT_MIN, false), Q(0, INT_MIN, false)};
    CHECK_HPF(all_min_idle, "- -");
}

static void test_decide(void)
{
    /* decide(HPF) is HPF, overwriting stale outputs. */
    struct sched_queue q[] = {Q(0, 10, true), Q(0, 0, false), Q(1, 0, true),
                              Q(1, 0, false), Q(2, 5, false), Q(2, -5, true)};
    struct sched_queue h[N(q)];
    memcpy(h, q, sizeof q);
    set_outputs(h, N(h), true);
    sched_policy_decide(SCHED_POLICY_HPF, h, N(h));
    CHECK_DECISIONS(h, N(h), "K STK - - K TK");
    matches_reference(q, N(q), true, true, __FILE__, __LINE__);
    matches_reference(q, N(q), false, true, __FILE__, __LINE__);

    /* Passthrough clears all three outputs, whatever they were and whatever the input. */
    struct sched_queue p[N(q)];
    memcpy(p, q, sizeof q);
    set_outputs(p, N(p), true);
    sched_policy_decide(SCHED_POLICY_PASSTHROUGH, p, N(p));
    CHECK_DECISIONS(p, N(p), "- - - - - -");
    bool inputs_kept = true;
    for (size_t i = 0; i < N(p); i++)
        inputs_kept = inputs_kept && p[i].device == q[i].device && p[i].priority == q[i].priority &&
                      p[i].active == q[i].active;
    CHECK(inputs_kept);
    /* ... including right after HPF set them. */
    sched_policy_decide(SCHED_POLICY_HPF, p, N(p));
    CHECK_DECISIONS(p, N(p), "K STK - - K TK");
    sched_policy_decide(SCHED_POLICY_PASSTHROUGH, p, N(p));
    CHECK_DECISIONS(p, N(p), "- - - - - -");
    /* Mixed stale outputs. */
    p[0].suspend = true;
    p[2].throttle = true;
    p[4].track = true;
    sched_policy_decide(SCHED_POLICY_PASSTHROUGH, p, N(p));
    CHECK_DECISIONS(p, N(p), "- - - - - -");
}

/* Random cases against the reference, fixed seed. Stops at the first mismatch (printed). */
static void test_random(void)
{
    enum { CASES = 5000 };
    static const int extremes[] = {INT_MIN, INT_MIN + 1, -1000,       -1,     0,
                                   1,       1000,        INT_MAX - 1, INT_MAX};
    unsigned long long seed = 0x67707072696fULL;
    for (int c = 0; c < CASES; c++) {
        struct sched_queue q[64];
        size_t n = check_rand_below(&seed, 41);
        unsigned devices = 1 + check_rand_below(&seed, 6);
        unsigned mode = check_rand_below(&seed, 3);
        unsigned active_pct = check_rand_below(&seed, 101);
        for (size_t i = 0; i < n; i++) {
            int dev = (int)check_rand_below(&seed, devices);
            if (devices == 6) /* sparse device numbers, negative ones too */
                dev = dev * 1000003 - 2;
            int prio;
            if (mode == 0) /* few levels: many ties */
                prio = 10 * ((int)check_rand_below(&seed, 5) - 2);
            else if (mode == 1) /* gpuprio's scale */
                prio = (int)check_rand_below(&seed, 2001) - 1000;
            else
                prio = extremes[check_rand_below(&seed, N(extremes))];
            q[i] = Q(dev, prio, check_rand_below(&seed, 100) < active_pct);
        }
        bool stale = check_rand_below(&seed, 2);
        bool via_decide = check_rand_below(&seed, 2);
        if (!matches_reference(q, n, stale, via_decide, __FILE__, __LINE__)) {
            fprintf(stderr, "  random case %d (stale %d, via decide %d)\n", c, stale, via_decide);
            return;
        }
    }
}

/* Decisions as three letters per queue: s(uspend) t(hrottle) k (track), '-' where not. */
static void expect_decisions(const struct sched_queue *q, size_t n, const char *const *want,
                             int line)
{
    for (size_t i = 0; i < n; i++) {
        char got[4] = {q[i].suspend ? 's' : '-', q[i].throttle ? 't' : '-', q[i].track ? 'k' : '-',
                       0};
        if (!CHECK(strcmp(got, want[i]) == 0))
            fprintf(stderr, "  line %d, queue %zu: %s, expected %s\n", line, i, got, want[i]);
    }
}
#define EXPECT_DECISIONS(q, ...)                                                                   \
    expect_decisions(q, N(q), (const char *const[]){__VA_ARGS__}, __LINE__)

/*
 * share: hpf, except that every queue is tracked and throttled, that an active queue owed its
 * minimum share runs and every active queue above it waits, and that the running queues of one
 * priority take turns by vtime: the one that ran keeps its turn until it is the quantum ahead of
 * the least, then the least served runs, ties to the greatest identity; idle queues are never in
 * a turn. hpf ignores owed and vtime.
 */
static void test_share(void)
{
    const uint64_t ahead = SCHED_SHARE_QUANTUM_NS + 1;
    struct sched_queue q[] = {Q(0, 0, true), Q(0, 0, true), Q(0, 0, false)};
    q[0].identity = 1;
    q[1].identity = 2;
    q[1].vtime = SCHED_SHARE_QUANTUM_NS; /* neither ran: the least served one runs */
    sched_policy_share(q, N(q));
    EXPECT_DECISIONS(q, "-tk", "stk", "-tk");
    q[1].running = true; /* within the quantum, the one that ran keeps its turn */
    sched_policy_share(q, N(q));
    EXPECT_DECISIONS(q, "stk", "-tk", "-tk");
    q[1].vtime = ahead; /* beyond it: the turn passes */
    sched_policy_share(q, N(q));
    EXPECT_DECISIONS(q, "-tk", "stk", "-tk");
    q[1].vtime = 0; /* a tie, or both ran: the greater identity, whatever the order */
    q[1].running = false;
    sched_policy_share(q, N(q));
    EXPECT_DECISIONS(q, "stk", "-tk", "-tk");
    q[0].running = q[1].running = true;
    sched_policy_share(q, N(q));
    EXPECT_DECISIONS(q, "stk", "-tk", "-tk");
    q[0].identity = 3;
    sched_policy_share(q, N(q));
    EXPECT_DECISIONS(q, "-tk", "stk", "-tk");
    q[1].active = false; /* alone: nobody suspended (every queue is tracked and throttled) */
    q[1].vtime = 10 * ahead;
    sched_policy_share(q, N(q));
    EXPECT_DECISIONS(q, "-tk", "-tk", "-tk");

    struct sched_queue p[] = {Q(0, 10, true), Q(0, 0, true), Q(0, -10, true), Q(1, -10, true)};
    p[2].owed = p[3].owed = true;
    sched_policy_share(p, N(p));
    /* The owed low queue runs; both above it wait; on device 1 it is alone. */
    EXPECT_DECISIONS(p, "stk", "stk", "-tk", "-tk");
    p[2].active = false; /* owed but idle: as hpf */
    sched_policy_share(p, N(p));
    EXPECT_DECISIONS(p, "-tk", "stk", "stk", "-tk");
    p[2].active = true;
    p[1].owed = true; /* the highest owed one takes the turn */
    sched_policy_share(p, N(p));
    EXPECT_DECISIONS(p, "stk", "-tk", "stk", "-tk");
    sched_policy_decide(SCHED_POLICY_HPF, p, N(p));
    EXPECT_DECISIONS(p, "--k", "stk", "stk", "---");
    CHECK(strcmp(sched_policy_name(SCHED_POLICY_SHARE), "share") == 0);
}

int main(void)
{
    test_names();
    test_empty();
    test_one_queue();
    test_nothing_active();
    test_highest_active_suspends_lower();
    test_equal_priorities();
    test_throttle_and_track();
    test_devices_apart();
    test_many_devices();
    test_successive_calls();
    test_extreme_priorities();
    test_decide();
    test_random();
    test_share();
    return check_finish("unit.policy");
}
