/*
 * gemm_tally.c - counts of what became of long GEMM calls (gemm_tally.h).
 */
#include "gemm_tally.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gp_log.h"

static bool device_kept(int device)
{
    return device >= 0 && device < GEMM_TALLY_DEVICES;
}

static void counted(struct gemm_tally *t, int device)
{
    void (*fn)(int) = atomic_load_explicit(&t->on_counted, memory_order_relaxed);
    if (fn && device_kept(device))
        fn(device);
}

void gemm_tally_slice(struct gemm_tally *t, unsigned entry, int device)
{
    atomic_fetch_add(&t->slices[entry], 1);
    if (device_kept(device))
        atomic_fetch_add(&t->device_slices[device], 1);
}

void gemm_tally_sliced(struct gemm_tally *t, unsigned entry, int device)
{
    atomic_fetch_add(&t->sliced[entry], 1);
    if (device_kept(device))
        atomic_fetch_add(&t->device_sliced[device], 1);
    counted(t, device);
}

void gemm_tally_whole(struct gemm_tally *t, unsigned entry, int device, enum gemm_whole_reason why,
                      uint64_t learned_ns, uint64_t target_ns)
{
    if (why != GEMM_WHOLE_UNSUPPORTED && why != GEMM_WHOLE_CAPTURING &&
        why != GEMM_WHOLE_CHECK_FAILED && (learned_ns <= target_ns || why == GEMM_WHOLE_OFF))
        return;
    static const bool shown[] = {
#define GEMM_WHOLE_SHOWN(name, what, shown) shown,
        GEMM_WHOLE_REASONS(GEMM_WHOLE_SHOWN)
#undef GEMM_WHOLE_SHOWN
    };
    atomic_fetch_add(&t->whole[entry][why], 1);
    if (device_kept(device))
        atomic_fetch_add(&t->device_whole[device][why], 1);
    if (shown[why]) /* a long call left whole for want of a higher priority changes no record */
        counted(t, device);
}

void gemm_tally_on_counted(struct gemm_tally *t, void (*fn)(int device))
{
    atomic_store(&t->on_counted, fn);
}

static void entry_counts(struct gemm_tally *t, unsigned entry, struct gemm_counts *out)
{
    out->sliced = atomic_load(&t->sliced[entry]);
    out->slices = atomic_load(&t->slices[entry]);
    for (int i = 0; i < GEMM_WHOLE_COUNT; i++)
        out->whole[i] = atomic_load(&t->whole[entry][i]);
}

void gemm_tally_total(struct gemm_tally *t, struct gemm_counts *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned e = 0; e < t->entries; e++) {
        struct gemm_counts n;
        entry_counts(t, e, &n);
        out->sliced += n.sliced;
        out->slices += n.slices;
        for (int i = 0; i < GEMM_WHOLE_COUNT; i++)
            out->whole[i] += n.whole[i];
    }
}

void gemm_tally_device(struct gemm_tally *t, int device, struct gemm_counts *out)
{
    memset(out, 0, sizeof *out);
    if (!device_kept(device))
        return;
    out->sliced = atomic_load(&t->device_sliced[device]);
    out->slices = atomic_load(&t->device_slices[device]);
    for (int i = 0; i < GEMM_WHOLE_COUNT; i++)
        out->whole[i] = atomic_load(&t->device_whole[device][i]);
}

void gemm_tally_say(struct gemm_tally *t)
{
    for (unsigned e = 0; e < t->entries; e++) {
        struct gemm_counts n;
        entry_counts(t, e, &n);
        char whole[512] = "";
        size_t used = 0;
        for (int i = 0; i < GEMM_WHOLE_COUNT && used < sizeof whole; i++)
            if (n.whole[i])
                used += (size_t)snprintf(whole + used, sizeof whole - used, "; %llu left whole: %s",
                                         (unsigned long long)n.whole[i], gemm_plan_reason(i));
        if (n.sliced || used)
            gp_log(GP_LOG_INFO, "%s: %llu sliced (%llu slices)%s", t->names[e],
                   (unsigned long long)n.sliced, (unsigned long long)n.slices, whole);
    }
}

void gemm_tally_forget(struct gemm_tally *t)
{
    for (unsigned e = 0; e < GEMM_TALLY_ENTRIES; e++) {
        atomic_store(&t->sliced[e], 0);
        atomic_store(&t->slices[e], 0);
        for (int i = 0; i < GEMM_WHOLE_COUNT; i++)
            atomic_store(&t->whole[e][i], 0);
    }
    for (int d = 0; d < GEMM_TALLY_DEVICES; d++) {
        atomic_store(&t->device_sliced[d], 0);
        atomic_store(&t->device_slices[d], 0);
        for (int i = 0; i < GEMM_WHOLE_COUNT; i++)
            atomic_store(&t->device_whole[d][i], 0);
    }
}
