/*
 * board_shares.c - GPUPRIO_POLICY=share: weights between equal priorities, a minimum share below
 * a higher priority, and shares across users set in the administrator's file, measured from the
 * simulator's trace. ctest: share.weights, share.min, tenant.shares.
 */
#include "board_harness.h"

/* GPU time of tag's kernels within [from, until), from the trace. */
static uint64_t busy_within(int tag, uint64_t from, uint64_t until)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < nk; i++) {
        uint64_t a = k[i].start > from ? k[i].start : from, b = k[i].end < until ? k[i].end : until;
        if (k[i].tag == tag && b > a)
            sum += b - a;
    }
    return sum;
}

/* What two processes of one priority (tags 1 and 3) got while both had work, from the trace. */
struct turns {
    double device_ratio; /* tag 1's device time over tag 3's (reported) */
    double turn_ratio;   /* the median of tag 1's turn over tag 3's next (asserted) */
    int pairs;           /* how many such pairs of turns */
    int stretched;       /* kernels that ran over three times their length: host stalls */
    double ms;           /* how long both had work */
};

static int by_start(const void *a, const void *b)
{
    const struct kernel *x = *(const struct kernel *const *)a,
                        *y = *(const struct kernel *const *)b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/*
 * The turns of tags 1 and 3 (kernels of length kernel_ns) while both had work: a turn is a run of
 * one tag's kernels that none of the other's interrupts, and lasts from its first kernel's start
 * to its last one's end (the time the device was given to it, idle moments within included; the
 * moment between turns in which the next one's process notices its turn, a listener's wake-up
 * where the two are users who decide each for their own queues, is neither's). Weights give
 * turns of wall time (the scheduler's vtime, docs/configuration.md, "Shares"), and a turn's end
 * is decided at a look: so each turn of tag 1 over tag 3's next is the weights' ratio, whatever
 * the host does to the simulated device's time within them. The device time itself is not: the
 * simulator's kernels are host threads, and under load one of 300 us may run for 100 ms (its
 * thread not run again), or the device idle between kernels; a kernel still in flight when a turn
 * ends runs into the next, charged to it, which matches the next turn's own in flight only while
 * kernels are short next to a turn. The first and last turns, cut by both having work, are left
 * out.
 */
static struct turns turns_of(uint64_t kernel_ns)
{
    struct turns t = {0, 0, 0, 0, 0};
    uint64_t a0, a1, b0, b1;
    span_of(TAG_HIGH, &a0, &a1);
    span_of(TAG_LOW, &b0, &b1);
    uint64_t from = a0 > b0 ? a0 : b0, until = a1 < b1 ? a1 : b1;
    if (until <= from)
        return t;
    t.ms = (double)(until - from) / 1e6;
    t.device_ratio = (double)busy_within(TAG_HIGH, from, until) /
                     (double)(busy_within(TAG_LOW, from, until) + 1);
    const struct kernel **run = malloc((nk ? nk : 1) * sizeof *run);
    uint64_t *first = malloc((nk ? nk : 1) * sizeof *first),
             *last = malloc((nk ? nk : 1) * sizeof *last);
    int *tag = malloc((nk ? nk : 1) * sizeof *tag);
    double *ratio = malloc((nk ? nk : 1) * sizeof *ratio);
    size_t n = 0, runs = 0;
    for (size_t i = 0; run && i < nk; i++)
        if ((k[i].tag == TAG_HIGH || k[i].tag == TAG_LOW) && k[i].end > from && k[i].start < until)
            run[n++] = &k[i];
    qsort(run, n, sizeof *run, by_start);
    for (size_t i = 0; first && last && tag && i < n; i++) {
        t.stretched += run[i]->end - run[i]->start > 3 * kernel_ns;
        if (!runs || tag[runs - 1] != run[i]->tag) {
            first[runs] = run[i]->start;
            last[runs] = run[i]->end;
            tag[runs++] = run[i]->tag;
        }
        last[runs - 1] = run[i]->end > last[runs - 1] ? run[i]->end : last[runs - 1];
    }
    for (size_t i = 1; ratio && i + 2 < runs; i++)
        if (tag[i] == TAG_HIGH && tag[i + 1] == TAG_LOW)
            ratio[t.pairs++] = (double)(last[i] - first[i]) / (double)(last[i + 1] - first[i + 1]);
    if (t.pairs) {
        qsort(ratio, (size_t)t.pairs, sizeof *ratio, by_value);
        t.turn_ratio = ratio[t.pairs / 2];
    }
    free(run);
    free(first);
    free(last);
    free(tag);
    free(ratio);
    return t;
}

/* Starts two ready workers (tags 1 and 3) of kernels of kernel_us and waits for both: their
 * turns, from the trace. */
static struct turns turns_between(struct proc *a, struct proc *b, uint64_t kernel_us)
{
    go(a);
    go(b);
    EXPECT(finish(a, NULL) == 0);
    EXPECT(finish(b, NULL) == 0);
    read_trace();
    return turns_of(kernel_us * 1000);
}

/* Weights 3 and 1: tag 1's turns three times tag 3's, within 10%, over enough turns to tell. */
static bool weighed_3_to_1(const struct turns *t)
{
    return t->pairs >= 10 && t->turn_ratio >= 2.7 && t->turn_ratio <= 3.3;
}

/* What the low-priority worker got over the high-priority one's run, from the trace. */
struct low_share {
    double device; /* its kernels' time (reported) */
    double turns;  /* its turns' (turns_of: its runs of kernels, first start to last end) */
    double ms;     /* the high one's run */
};

/* The low-priority worker l (tag 3) saturating from 20 ms before the high-priority one h (tag 1)
 * starts, until h ends: l's share of the time over h's run, from the trace; h's suspensions into
 * high_suspensions. A share is owed and paid in wall time (docs/configuration.md, "Shares"), so
 * its measure is the low one's turns: a turn in which the device idles a while (the simulator's
 * kernels are host threads) is still the low one's, and is paid as such. */
static unsigned long long high_suspensions;
static struct low_share low_share_next_to(struct proc *h, struct proc *l)
{
    go(l);
    usleep(20000);
    go(h);
    EXPECT(finish(h, NULL) == 0);
    high_suspensions = last_suspensions;
    kill(l->pid, SIGTERM); /* its work is not needed past the high process's */
    finish(l, NULL);
    read_trace();
    uint64_t h0, h1, turns = 0, first = 0, last = 0;
    span_of(TAG_HIGH, &h0, &h1);
    const struct kernel **by = malloc((nk ? nk : 1) * sizeof *by);
    size_t n = 0;
    for (size_t i = 0; by && i < nk; i++)
        if ((k[i].tag == TAG_HIGH || k[i].tag == TAG_LOW) && k[i].end > h0 && k[i].start < h1)
            by[n++] = &k[i];
    if (by)
        qsort(by, n, sizeof *by, by_start);
    for (size_t i = 0; by && i <= n; i++) {
        bool low = i < n && by[i]->tag == TAG_LOW;
        if (low && !last)
            first = by[i]->start > h0 ? by[i]->start : h0;
        if (low)
            last = by[i]->end > last ? by[i]->end : last;
        if (!low && last) { /* a run of low kernels ended */
            turns += (last < h1 ? last : h1) - first;
            last = 0;
        }
    }
    free(by);
    double span = (double)(h1 - h0 + 1);
    return (struct low_share){(double)busy_within(TAG_LOW, h0, h1) / span, (double)turns / span,
                              (double)(h1 - h0) / 1e6};
}

/*
 * The low kernels (tag 3) that started while the high-priority process (tag 1) ran, from the
 * trace. The high one is active from each kernel's submission (its admission, which closes the
 * low one's gate, comes first) until its grace window after that kernel's end (its watcher sees
 * the end later still). A low kernel whose gate let it through meanwhile is the scheduler's
 * fault: its gate's read lies between when its read began (waited) and its start, and where the
 * high one was active all that time, the read found the gate closed, unless something opened it.
 * A kernel past its gate before may still start in that time (the device orders it behind the
 * high ones queued, then runs it): at most one, as each 1-ms kernel has a gate of its own
 * (GPUPRIO_GATE_US, 100 us). The rest start in gaps the high one left idle longer than the grace
 * window, which ends its activity by design (docs/scheduler.md): the high process's host not
 * running it between a burst's synchronization and the next launch.
 */
struct low_starts {
    int opened;               /* low kernels let through by a gate while the high one was active */
    int ahead;                /* the most low kernels started ahead of one waiting high kernel */
    int past_gate, in_gaps;   /* low kernels started while it was active (passed before), or not */
    int gaps;                 /* the high process's gaps between bursts longer than the window */
    uint64_t gaps_ns, gap_ns; /* low device time from kernels started in gaps; the longest gap */
};

/* Whether tag 1 was active all the time from `from` to `to` by the trace (above). */
static bool high_active_through(uint64_t from, uint64_t to, uint64_t grace_ns)
{
    for (uint64_t t = from;;) {
        uint64_t covered = t; /* how far activity around t reaches */
        for (size_t j = 0; j < nk; j++)
            if (k[j].tag == TAG_HIGH && k[j].submit <= t && t < k[j].end + grace_ns &&
                k[j].end + grace_ns > covered)
                covered = k[j].end + grace_ns;
        if (covered == t)
            return false;
        if (covered > to)
            return true;
        t = covered;
    }
}

static struct low_starts low_starts_next_to_high(uint64_t grace_ns)
{
    struct low_starts s = {0, most_overtaking(TAG_HIGH), 0, 0, 0, 0, 0};
    uint64_t h0, h1;
    span_of(TAG_HIGH, &h0, &h1);
    for (size_t i = 0; i < nk; i++) {
        if (k[i].tag != TAG_LOW || k[i].start < h0 || k[i].start >= h1)
            continue;
        if (k[i].waited && high_active_through(k[i].waited, k[i].start, grace_ns)) {
            s.opened++;
            printf("  low kernel %zu: its gate let it through between %.3f and %.3f ms, while "
                   "the high process was active\n",
                   i, ((double)k[i].waited - (double)h0) / 1e6,
                   ((double)k[i].start - (double)h0) / 1e6);
        } else if (high_active_through(k[i].start, k[i].start, grace_ns)) {
            s.past_gate++;
        } else {
            s.in_gaps++;
            s.gaps_ns += (k[i].end < h1 ? k[i].end : h1) - k[i].start;
        }
    }
    /* The gaps: from a burst's last kernel's end to the next burst's first submission. */
    int bursts = 0;
    for (size_t i = 0; i < nk; i++)
        bursts = k[i].tag == TAG_HIGH && k[i].burst > bursts ? k[i].burst : bursts;
    uint64_t *ended = calloc((size_t)bursts + 2, sizeof *ended);
    uint64_t *submitted = malloc(((size_t)bursts + 2) * sizeof *submitted);
    for (int b = 0; submitted && b < bursts + 2; b++)
        submitted[b] = UINT64_MAX;
    for (size_t i = 0; ended && submitted && i < nk; i++)
        if (k[i].tag == TAG_HIGH) {
            int b = k[i].burst;
            ended[b] = k[i].end > ended[b] ? k[i].end : ended[b];
            submitted[b] = k[i].submit < submitted[b] ? k[i].submit : submitted[b];
        }
    for (int b = 1; ended && submitted && b < bursts; b++) {
        if (!ended[b] || submitted[b + 1] == UINT64_MAX || submitted[b + 1] < ended[b])
            continue;
        uint64_t gap = submitted[b + 1] - ended[b];
        s.gaps += gap > grace_ns;
        s.gap_ns = gap > s.gap_ns ? gap : s.gap_ns;
    }
    free(ended);
    free(submitted);
    return s;
}

/*
 * Two saturating processes of equal priority with weights 3 and 1: while both run, the first's
 * turns last three times the second's, within 10% (the median over the turns); without the
 * share policy they run kernel by kernel (about 1:1), so the check can fail. Each one's device
 * time is reported: on a loaded host it is the host's as much as the weights' (turns_of).
 */
void share_weights(void)
{
    static const char *const heavy[] = {"1", "saturate", "4000", "300", NULL};
    static const char *const light[] = {"3", "saturate", "4000", "300", NULL};
    struct turns t[2];
    for (int share = 0; share < 2; share++) {
        const char *policy = share ? "share" : NULL;
        static const char *const weight_3[] = {"GPUPRIO_WEIGHT=3", NULL};
        static const char *const weight_1[] = {"GPUPRIO_WEIGHT=1", NULL};
        struct proc a = spawn_ready_env(weight_3, "normal", policy, heavy);
        struct proc b = spawn_ready_env(weight_1, "normal", policy, light);
        t[share] = turns_between(&a, &b, 300);
        printf("weights 3 and 1, %s: turns of %.2f to 1 (the median of %d pairs), %.2f to 1 of "
               "the device's time over the %.0f ms both ran (%d kernels of 300 us ran over "
               "900 us: the host's stalls)\n",
               share ? "share policy" : "hpf", t[share].turn_ratio, t[share].pairs,
               t[share].device_ratio, t[share].ms, t[share].stretched);
        if (!share)
            next_trace("hpf");
    }
    EXPECT(!weighed_3_to_1(&t[0]));
    EXPECT(weighed_3_to_1(&t[1]));
}

/* P99 of the wait (submission to start) of tag's kernels, in microseconds. */
static double wait_p99_us(int tag)
{
    size_t n = 0;
    uint64_t *w = malloc((nk ? nk : 1) * sizeof *w);
    for (size_t i = 0; w && i < nk; i++)
        if (k[i].tag == tag && k[i].start >= k[i].submit)
            w[n++] = k[i].start - k[i].submit;
    for (size_t i = 1; i < n; i++) /* insertion sort: a few thousand */
        for (size_t j = i; j > 0 && w[j - 1] > w[j]; j--) {
            uint64_t t = w[j];
            w[j] = w[j - 1];
            w[j - 1] = t;
        }
    double p = n ? (double)w[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] / 1e3 : -1;
    free(w);
    return p;
}

/*
 * A low-priority process with a 10% minimum share next to a saturating high-priority one: its
 * turns (low_share_next_to) take at least 9% of the GPU's time while the high one runs, which
 * yields to it (is suspended);
 * the high-priority kernels' P99 wait with and without it is reported, the share's cost.
 * Without the share the high one never yields, and no low kernel starts while it is active by
 * the trace (low_starts); what the low one gets then is the time the high one's host left the
 * device idle for longer than the grace window, which is reported, not bounded: the machine's
 * measure, not the scheduler's (2.7 to 9.4% on a loaded 2-core host, under 1% on a quiet one).
 */
void share_min(void)
{
    /* Kernels of a millisecond: a turn of a few milliseconds holds a few of them. */
    static const char *const high[] = {"1", "burst", "200", "4", "1000", "0", NULL};
    static const char *const low[] = {"3", "saturate", "3000", "1000", NULL};
    const unsigned grace_us = 150; /* the default, set for the test's own reading */
    char grace[48];
    snprintf(grace, sizeof grace, "GPUPRIO_GRACE_US=%u", grace_us);
    struct low_share got[2];
    double p99[2];
    unsigned long long yielded[2];
    struct low_starts without = {0, 0, 0, 0, 0, 0, 0};
    for (int share = 0; share < 2; share++) {
        const char *const h_env[] = {grace, NULL};
        const char *const l_env[] = {grace, share ? "GPUPRIO_SHARE=10" : "GPUPRIO_SHARE=0", NULL};
        struct proc h = spawn_ready_env(h_env, "high", "share", high);
        struct proc l = spawn_ready_env(l_env, "low", "share", low);
        got[share] = low_share_next_to(&h, &l);
        double ms = got[share].ms;
        yielded[share] = high_suspensions;
        p99[share] = wait_p99_us(TAG_HIGH);
        printf("a low-priority process %s a minimum share of 10%% next to a saturating "
               "high-priority one: turns of %.1f%% of the GPU's time over its %.0f ms (its "
               "kernels ran %.1f%%), the high one suspended %llu times; the high-priority "
               "kernels' P99 wait %.0f us\n",
               share ? "with" : "without", 100 * got[share].turns, ms, 100 * got[share].device,
               yielded[share], p99[share]);
        if (!share) {
            without = low_starts_next_to_high(grace_us * 1000ull);
            printf("  without: %d low kernels started in the %d gaps the high process left "
                   "between its bursts longer than its %u-us grace window (the longest %.1f "
                   "ms), %.1f%% of the GPU's time; %d while it was active, past their gates "
                   "before, at most %d ahead of a waiting high kernel; %d let through by a gate "
                   "while it was active\n",
                   without.in_gaps, without.gaps, grace_us, (double)without.gap_ns / 1e6,
                   100 * (double)without.gaps_ns / (ms * 1e6), without.past_gate, without.ahead,
                   without.opened);
        }
        next_trace(share ? "with" : "without");
    }
    EXPECT(yielded[0] == 0);
    EXPECT(without.opened == 0 && without.ahead <= 1);
    EXPECT(got[1].turns >= 0.09 && yielded[1] > 0);
}

/*
 * Shares set per user by the administrator's file (GPUPRIO_POLICY=share in every process):
 * weights 3 (user A) and 1 (B, the default) between two saturating processes of one priority
 * give turns within 10% of 3:1 (turns_of). A 10% share for B's low-priority load next to A's
 * saturating high-priority bursts gets B at least 9%, A's queue suspended for B's turns; B's own
 * GPUPRIO_SHARE=10 without a share in the file makes A yield nothing (A takes B's owed flag only
 * from a user the file gives a share).
 */
void tenant_shares(void)
{
    static const char *const heavy[] = {"1", "saturate", "4000", "300", NULL};
    static const char *const light[] = {"3", "saturate", "4000", "300", NULL};
    static const char *const high[] = {"1", "burst", "200", "4", "1000", "0", NULL};
    static const char *const low[] = {"3", "saturate", "3000", "1000", NULL};
    tenants_setup();
    write_conf("weight.4241 = 3\n");
    spawn_uid = USER_A;
    struct proc a = spawn_ready("normal", "share", heavy);
    spawn_uid = USER_B;
    struct proc b = spawn_ready("normal", "share", light);
    spawn_uid = 0;
    struct turns t = turns_between(&a, &b, 300);
    printf("users with weights 3 and 1 from the file: turns of %.2f to 1 (the median of %d "
           "pairs), %.2f to 1 of the device's time over the %.0f ms both ran (%d kernels of "
           "300 us ran over 900 us)\n",
           t.turn_ratio, t.pairs, t.device_ratio, t.ms, t.stretched);
    EXPECT(weighed_3_to_1(&t));

    struct low_share got[2];
    unsigned long long yielded[2];
    for (int in_file = 1; in_file >= 0; in_file--) {
        write_conf(in_file ? "share.4242 = 10%\n" : "");
        spawn_uid = USER_A;
        struct proc h = spawn_ready("high", "share", high);
        spawn_uid = USER_B;
        static const char *const share_10[] = {"GPUPRIO_SHARE=10", NULL}; /* the file's wins */
        struct proc l = spawn_ready_env(share_10, "low", "share", low);
        spawn_uid = 0;
        got[in_file] = low_share_next_to(&h, &l);
        yielded[in_file] = high_suspensions;
        printf("user %u's low load, a 10%% share %s: turns of %.1f%% of the device's time (its "
               "kernels ran %.1f%%) next to user %u's saturating high one, which was suspended "
               "%llu times\n",
               USER_B, in_file ? "from the file" : "of its own only", 100 * got[in_file].turns,
               100 * got[in_file].device, USER_A, yielded[in_file]);
    }
    EXPECT(got[1].turns >= 0.09 && yielded[1] > 0);
    EXPECT(yielded[0] == 0);
}
