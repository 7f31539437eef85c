/*
 * levers.c - the hardware levers on HIP, queried back through the HIP API: the stream priority
 * and the CU mask that streams were created with under the shim (docs/configuration.md,
 * "Hardware levers"). levers.sh runs each mode with its environment and checks stderr.
 *
 *   levers list       GPUPRIO_STREAM_PRIORITIES=high,low,normal,critical,idle,high,low
 *   levers thread     no GPUPRIO_* priorities
 *   levers process    GPUPRIO_PRIORITY=low
 *   levers off        GPUPRIO_HW_PRIORITY=off, GPUPRIO_STREAM_PRIORITIES=high,low
 *   levers race       GPUPRIO_STREAM_PRIORITIES with 16 alternating entries
 *   levers reserve MASK       GPUPRIO_CU_RESERVE set, GPUPRIO_STREAM_PRIORITIES=high,low,...:
 *                             lower-priority blocking streams get MASK (hex)
 *   levers reserve-low MASK   GPUPRIO_PRIORITY=low and GPUPRIO_CU_RESERVE set
 *   levers unreserved         a GPUPRIO_CU_RESERVE that cannot be applied: no stream is masked
 *   levers fork-held MASK     as reserve-low, then forks while a thread of its own holds the
 *                             reservation's lock (hip_reserve.c's "mu", ../../cuda/held_lock.h):
 *                             the child's blocking stream gets MASK, within 60 s
 * The simulated device has 8 CUs in every mode (HIPSIM_COMPUTE_SLOTS, set before the first HIP
 * call). Prints OK or the failed checks; exits 1 on failure.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../cuda/held_lock.h"
#include "../sched/sched_test.h"

#define ALL_CUS 0xffu

static struct gp_api api;

/* EXPECT as an expression: whether cond held. */
static bool check(bool cond, const char *what, int line)
{
    if (!cond) {
        printf("FAIL %s:%d: %s\n", __FILE__, line, what);
        failures++;
    }
    return cond;
}
#define CHECK(cond) check((cond), #cond, __LINE__)

static int hw_priority(hipStream_t s)
{
    int p = 99;
    MUST(hipStreamGetPriority(s, &p));
    return p;
}

static unsigned cu_mask(hipStream_t s)
{
    uint32_t m = 0;
    MUST(hipExtStreamGetCUMask(s, 1, &m));
    return m;
}

static int gp_priority(hipStream_t s)
{
    int p = -9999;
    EXPECT(api.stream_get_priority(s, &p) == 0);
    return p;
}

#define CHECK_STREAM(s, hw, mask)                                                                  \
    do {                                                                                           \
        int got_hw = hw_priority(s);                                                               \
        unsigned got_mask = cu_mask(s);                                                            \
        if (!CHECK(got_hw == (hw) && got_mask == (mask)))                                          \
            printf("  priority %d, mask 0x%x; expected %d, 0x%x\n", got_hw, got_mask, (hw),        \
                   (unsigned)(mask));                                                              \
    } while (0)

/* GPUPRIO_STREAM_PRIORITIES=high,low,normal,critical,idle,high,low */
static void by_list(void)
{
    hipStream_t s[7];
    MUST(hipStreamCreate(&s[0]));                                  /* high */
    MUST(hipStreamCreateWithFlags(&s[1], hipStreamNonBlocking));   /* low */
    MUST(hipStreamCreateWithPriority(&s[2], hipStreamDefault, 0)); /* normal */
    MUST(hipStreamCreateWithPriority(&s[3], hipStreamDefault, 1)); /* critical, asked 1 */
    uint32_t four = 0x0f;
    MUST(hipExtStreamCreateWithCUMask(&s[4], 1, &four)); /* idle, its own mask */
    /* A creation that fails takes no place in the list. */
    hipStream_t bad;
    EXPECT(hipStreamCreateWithFlags(&bad, 0x80) == hipErrorInvalidValue);
    MUST(hipStreamCreate(&s[5])); /* high */
    MUST(hipStreamCreate(&s[6])); /* low */
    CHECK_STREAM(s[0], -1, ALL_CUS);
    CHECK_STREAM(s[1], 1, ALL_CUS);
    unsigned flags = 0;
    MUST(hipStreamGetFlags(s[1], &flags));
    EXPECT(flags == hipStreamNonBlocking);
    CHECK_STREAM(s[2], 0, ALL_CUS);
    CHECK_STREAM(s[3], 1, ALL_CUS); /* the application's priority is kept */
    CHECK_STREAM(s[4], 0, 0x0fu);   /* and its mask */
    CHECK_STREAM(s[5], -1, ALL_CUS);
    CHECK_STREAM(s[6], 1, ALL_CUS);
    static const int want[] = {GPUPRIO_PRIORITY_HIGH,   GPUPRIO_PRIORITY_LOW,
                               GPUPRIO_PRIORITY_NORMAL, GPUPRIO_PRIORITY_CRITICAL,
                               GPUPRIO_PRIORITY_IDLE,   GPUPRIO_PRIORITY_HIGH,
                               GPUPRIO_PRIORITY_LOW};
    for (int i = 0; i < 7; i++) {
        if (!CHECK(gp_priority(s[i]) == want[i]))
            printf("  stream %d: gpuprio priority %d, expected %d\n", i, gp_priority(s[i]),
                   want[i]);
        MUST(hipStreamDestroy(s[i]));
    }
}

static void by_thread(void)
{
    int (*clear)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpuprio_thread_clear_priority");
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    CHECK_STREAM(s, 0, ALL_CUS); /* nothing asked: as the application created it */
    MUST(hipStreamDestroy(s));
    EXPECT(api.thread_set_priority(GPUPRIO_PRIORITY_HIGH) == 0);
    MUST(hipStreamCreate(&s));
    CHECK_STREAM(s, -1, ALL_CUS);
    MUST(hipStreamDestroy(s));
    EXPECT(api.thread_set_priority(GPUPRIO_PRIORITY_IDLE) == 0);
    MUST(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    CHECK_STREAM(s, 1, ALL_CUS);
    MUST(hipStreamDestroy(s));
    EXPECT(api.thread_set_priority(GPUPRIO_PRIORITY_NORMAL) == 0);
    MUST(hipStreamCreate(&s));
    CHECK_STREAM(s, 0, ALL_CUS);
    MUST(hipStreamDestroy(s));
    EXPECT(clear && clear() == 0);
    MUST(hipStreamCreateWithPriority(&s, hipStreamDefault, -1));
    CHECK_STREAM(s, -1, ALL_CUS);
    MUST(hipStreamDestroy(s));
}

/* GPUPRIO_PRIORITY=low, or GPUPRIO_HW_PRIORITY=off with GPUPRIO_STREAM_PRIORITIES=high,low. */
static void same_for_all(int hw)
{
    hipStream_t a, b;
    MUST(hipStreamCreate(&a));
    MUST(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
    CHECK_STREAM(a, hw, ALL_CUS);
    CHECK_STREAM(b, hw, ALL_CUS);
    MUST(hipStreamDestroy(a));
    MUST(hipStreamDestroy(b));
}

#define RACERS 16
static hipStream_t raced[RACERS];
static pthread_barrier_t race_start;

static void *racer(void *arg)
{
    pthread_barrier_wait(&race_start);
    MUST(hipStreamCreate(&raced[(intptr_t)arg]));
    return NULL;
}

/* Threads creating streams at once: each stream's hardware priority is its own list entry's. */
static void race(void)
{
    pthread_t t[RACERS];
    pthread_barrier_init(&race_start, NULL, RACERS);
    for (intptr_t i = 0; i < RACERS; i++)
        pthread_create(&t[i], NULL, racer, (void *)i);
    int high = 0;
    for (int i = 0; i < RACERS; i++) {
        pthread_join(t[i], NULL);
        int gp = gp_priority(raced[i]);
        high += gp == GPUPRIO_PRIORITY_HIGH;
        if (!CHECK(hw_priority(raced[i]) == hip_priority_of(gp)))
            printf("  stream %d: gpuprio priority %d, HIP priority %d\n", i, gp,
                   hw_priority(raced[i]));
    }
    EXPECT(high == RACERS / 2); /* every entry was used once */
    for (int i = 0; i < RACERS; i++)
        MUST(hipStreamDestroy(raced[i]));
}

/* GPUPRIO_STREAM_PRIORITIES=high,low,low,low,low and GPUPRIO_CU_RESERVE: the low blocking
 * stream gets mask; non-blocking and explicitly prioritized ones cannot be masked; masks of the
 * application's are kept. */
static void reserve(unsigned mask)
{
    hipStream_t high, low, low_nb, low_own, low_asked;
    MUST(hipStreamCreate(&high));
    MUST(hipStreamCreate(&low));
    MUST(hipStreamCreateWithFlags(&low_nb, hipStreamNonBlocking));
    uint32_t three = 0x07;
    MUST(hipExtStreamCreateWithCUMask(&low_own, 1, &three));
    MUST(hipStreamCreateWithPriority(&low_asked, hipStreamDefault, -1));
    CHECK_STREAM(high, -1, ALL_CUS);
    CHECK_STREAM(low, 0, mask); /* masked streams are of normal priority (clr) */
    CHECK_STREAM(low_nb, 1, ALL_CUS);
    CHECK_STREAM(low_own, 0, 0x07u);
    CHECK_STREAM(low_asked, -1, ALL_CUS);
    unsigned flags = 99;
    MUST(hipStreamGetFlags(low, &flags));
    EXPECT(flags == hipStreamDefault);
    EXPECT(gp_priority(low) == GPUPRIO_PRIORITY_LOW);
    MUST(hipStreamDestroy(high));
    MUST(hipStreamDestroy(low));
    MUST(hipStreamDestroy(low_nb));
    MUST(hipStreamDestroy(low_own));
    MUST(hipStreamDestroy(low_asked));
}

/* GPUPRIO_PRIORITY=low with GPUPRIO_CU_RESERVE: below normal, every blocking stream is masked. */
static void reserve_low(unsigned mask)
{
    hipStream_t a, b;
    MUST(hipStreamCreate(&a));
    MUST(hipStreamCreateWithPriority(&b, hipStreamDefault, 0));
    CHECK_STREAM(a, 0, mask);
    CHECK_STREAM(b, 0, mask);
    MUST(hipStreamDestroy(a));
    MUST(hipStreamDestroy(b));
}

/* A reservation that cannot be made: nothing is masked, three times (one warning). */
static void unreserved(void)
{
    for (int i = 0; i < 3; i++) {
        hipStream_t s;
        MUST(hipStreamCreate(&s));
        CHECK_STREAM(s, 1, ALL_CUS);
        MUST(hipStreamDestroy(s));
    }
}

static unsigned forked_mask;

static int fork_held_child(void)
{
    reserve_low(forked_mask);
    fflush(stdout); /* the child ends with _exit */
    return failures ? 1 : 0;
}

/* A parent that made its masked streams forks while another of its threads creates one (holds
 * the lock): the child creates its own. */
static void fork_held(unsigned mask)
{
    reserve_low(mask);
    forked_mask = mask;
    const char *fail = held_lock_fork("hip_reserve.c", "mu", 60, fork_held_child);
    if (fail) {
        printf("FAIL fork-held: %s\n", fail);
        failures++;
    }
}

int main(int argc, char **argv)
{
    setenv("HIPSIM_COMPUTE_SLOTS", "8", 1);
    api = gp_api_find();
    const char *mode = argc > 1 ? argv[1] : "";
    unsigned mask = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 16) : 0;
    if (strcmp(mode, "list") == 0)
        by_list();
    else if (strcmp(mode, "thread") == 0)
        by_thread();
    else if (strcmp(mode, "process") == 0)
        same_for_all(1);
    else if (strcmp(mode, "off") == 0)
        same_for_all(0);
    else if (strcmp(mode, "race") == 0)
        race();
    else if (strcmp(mode, "reserve") == 0 && mask)
        reserve(mask);
    else if (strcmp(mode, "reserve-low") == 0 && mask)
        reserve_low(mask);
    else if (strcmp(mode, "unreserved") == 0)
        unreserved();
    else if (strcmp(mode, "fork-held") == 0 && mask)
        fork_held(mask);
    else {
        fprintf(stderr, "usage: levers list|thread|process|off|race|unreserved|"
                        "reserve MASK|reserve-low MASK|fork-held MASK\n");
        return 2;
    }
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
