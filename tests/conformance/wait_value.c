/*
 * wait_value.c - hipStreamWaitValue32/64 and hipStreamWriteValue32/64.
 *
 * For each condition (Gte, Eq, And, Nor; 32 and 64 bits) a stream waits on a word, then has a
 * kernel that sets a flag. After 30 ms the stream is still busy and the kernel has not run (fault
 * "wait-value-ignored" lets it run at once); a write that does not satisfy the condition keeps it
 * blocked; a host write or a hipStreamWriteValue on another stream that satisfies it releases it.
 * The word lives in hipHostMalloc memory and the host accesses it atomically.
 */
#include "conf.h"

typedef struct wv_case {
    const char *name;
    int bits;
    unsigned flags;
    uint64_t value, mask;
    uint64_t initial;
    int has_partial;
    uint64_t partial; /* a write that leaves the condition false */
    int release_by_stream;
    uint64_t release; /* a write that makes the condition true */
} wv_case;

static const wv_case cases[] = {
    {"Gte32", 32, hipStreamWaitValueGte, 5, 0xffffffffu, 0, 1, 3, 0, 7},
    {"Eq32", 32, hipStreamWaitValueEq, 0x10, 0xf0, 0x20, 1, 0x0f, 0, 0x1f},
    {"And32", 32, hipStreamWaitValueAnd, 0x4, 0xffffffffu, 0x3, 1, 0x8, 1, 0xc},
    {"Nor32", 32, hipStreamWaitValueNor, 0x0000ffffu, 0xffffffffu, 0xffff0000u, 0, 0, 1,
     0x7fff0000u},
    {"Gte64", 64, hipStreamWaitValueGte, 0x100000000ull, ~0ull, 0xffffffffull, 1, 0xfffffffeull, 0,
     0x100000001ull},
    {"Eq64", 64, hipStreamWaitValueEq, 0x1234567800000000ull, 0xffffffff00000000ull,
     0x12345679ffffffffull, 0, 0, 1, 0x12345678deadbeefull},
    {"And64", 64, hipStreamWaitValueAnd, 0x100000000ull, ~0ull, 0xffffffffull, 0, 0, 0,
     0x100000000ull},
    {"Nor64", 64, hipStreamWaitValueNor, 0xffffffffull, ~0ull, 0xffffffff00000000ull, 0, 0, 1,
     0x7fffffff00000000ull},
};

static _Atomic uint32_t *w32;
static _Atomic uint64_t *w64;
static atomic_int ran;

static void store(int bits, uint64_t v)
{
    if (bits == 32)
        atomic_store(w32, (uint32_t)v);
    else
        atomic_store(w64, v);
}

static hipError_t wait_on(hipStream_t s, const wv_case *c)
{
    if (c->bits == 32)
        return hipStreamWaitValue32(s, (void *)w32, (uint32_t)c->value, c->flags,
                                    (uint32_t)c->mask);
    return hipStreamWaitValue64(s, (void *)w64, c->value, c->flags, c->mask);
}

static hipError_t write_on(hipStream_t s, int bits, uint64_t v)
{
    if (bits == 32)
        return hipStreamWriteValue32(s, (void *)w32, (uint32_t)v, 0);
    return hipStreamWriteValue64(s, (void *)w64, v, 0);
}

static void run_case(hipStream_t sw, hipStream_t sr, const wv_case *c)
{
    char label[128];
    store(c->bits, c->initial);
    atomic_store(&ran, 0);
    snprintf(label, sizeof label, "[%s] hipStreamWaitValue%d", c->name, c->bits);
    SHOW(label, wait_on(sw, c));
    MUST(conf_launch_flag(sw, &ran, 1, 0));
    conf_sleep_ms(30);
    snprintf(label, sizeof label, "[%s] after 30 ms: hipStreamQuery", c->name);
    SHOW(label, hipStreamQuery(sw));
    printf("[%s] after 30 ms: kernel ran: %s\n", c->name, conf_yes(atomic_load(&ran)));
    if (c->has_partial) {
        store(c->bits, c->partial);
        conf_sleep_ms(30);
        snprintf(label, sizeof label, "[%s] after a non-matching host write: hipStreamQuery",
                 c->name);
        SHOW(label, hipStreamQuery(sw));
    }
    if (c->release_by_stream) {
        snprintf(label, sizeof label, "[%s] release: hipStreamWriteValue%d on another stream",
                 c->name, c->bits);
        SHOW(label, write_on(sr, c->bits, c->release));
    } else {
        printf("[%s] release: host write\n", c->name);
        store(c->bits, c->release);
    }
    snprintf(label, sizeof label, "[%s] hipStreamSynchronize", c->name);
    SHOW(label, hipStreamSynchronize(sw));
    printf("[%s] kernel ran: %s\n", c->name, conf_yes(atomic_load(&ran)));
    MUST(hipStreamSynchronize(sr));
}

int main(void)
{
    conf_init();
    hipStream_t sw, sr;
    void *mem = NULL;
    MUST(hipStreamCreate(&sw));
    MUST(hipStreamCreate(&sr));
    MUST(hipHostMalloc(&mem, 64, 0));
    w64 = (_Atomic uint64_t *)mem;
    w32 = (_Atomic uint32_t *)((char *)mem + 32);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(sw, sr, &cases[i]);

    printf("-- a condition already true does not block (unsigned compare)\n");
    atomic_store(w32, 0x80000000u);
    atomic_store(&ran, 0);
    SHOW("hipStreamWaitValue32(Gte 1) on 0x80000000",
         hipStreamWaitValue32(sw, (void *)w32, 1, hipStreamWaitValueGte, 0xffffffffu));
    MUST(conf_launch_flag(sw, &ran, 1, 0));
    printf("kernel ran within 2 s: %s\n", conf_yes(conf_await(&ran, 1, 2000)));
    SHOW("hipStreamSynchronize", hipStreamSynchronize(sw));

    printf("-- hipStreamWriteValue happens in stream order\n");
    atomic_store(w32, 0);
    atomic_store(w64, 0);
    static conf_hold ahead;
    MUST(conf_launch_hold(sr, &ahead));
    SHOW("hipStreamWriteValue32(1) behind a held kernel",
         hipStreamWriteValue32(sr, (void *)w32, 1, 0));
    SHOW("hipStreamWriteValue64(2^40) behind it",
         hipStreamWriteValue64(sr, (void *)w64, 1ull << 40, 0));
    conf_sleep_ms(20);
    printf("after 20 ms: 32-bit word written: %s\n", conf_yes(atomic_load(w32) != 0));
    printf("after 20 ms: 64-bit word written: %s\n", conf_yes(atomic_load(w64) != 0));
    conf_release_after(&ahead, 20);
    SHOW("hipStreamSynchronize", hipStreamSynchronize(sr));
    printf("32-bit word: 0x%x\n", (unsigned)atomic_load(w32));
    printf("64-bit word: 0x%llx\n", (unsigned long long)atomic_load(w64));

    MUST(hipHostFree(mem));
    MUST(hipStreamDestroy(sw));
    MUST(hipStreamDestroy(sr));
    return conf_done();
}
