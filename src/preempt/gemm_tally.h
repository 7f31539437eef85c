/*
 * gemm_tally.h - what became of a process's long GEMM calls, for each BLAS entry point and each
 * device: calls sliced and their slices, calls left whole by reason. Said once at exit
 * (GPUPRIO_LOG=info, a line an entry point) and shown while the process runs (its record on the
 * device's board: gpuprio top, metrics), through the callback each change of a device's counts
 * calls. One tally a runtime (cuda_gemm.c, hip_gemm.c), counters only: lock-free.
 *
 * Which calls left whole are counted is decided here, for every runtime alike: those a higher
 * priority would wait behind (a long call), and those slicing could not judge (its form, a
 * capture, the library's check), whatever their length; not a call left whole only because
 * slicing is off or it is short.
 */
#ifndef GPUPRIO_GEMM_TALLY_H
#define GPUPRIO_GEMM_TALLY_H

#include <stdatomic.h>
#include <stdint.h>

#include "gemm_plan.h"

#define GEMM_TALLY_ENTRIES 3
/* The devices whose counts are kept apart (calls on others count only in the totals). */
#define GEMM_TALLY_DEVICES 64

struct gemm_counts {
    uint64_t sliced, slices;
    uint64_t whole[GEMM_WHOLE_COUNT]; /* calls left whole, by reason */
};

/* GEMM_TALLY_INIT(names, entries) as a static's initializer: names[entry] is the entry point's
 * name, for the exit line. */
struct gemm_tally {
    const char *const *names;
    unsigned entries;
    _Atomic uint64_t sliced[GEMM_TALLY_ENTRIES], slices[GEMM_TALLY_ENTRIES],
        whole[GEMM_TALLY_ENTRIES][GEMM_WHOLE_COUNT];
    _Atomic uint64_t device_sliced[GEMM_TALLY_DEVICES], device_slices[GEMM_TALLY_DEVICES],
        device_whole[GEMM_TALLY_DEVICES][GEMM_WHOLE_COUNT];
    void (*_Atomic on_counted)(int device);
};
#define GEMM_TALLY_INIT(names_, entries_)                                                          \
    {                                                                                              \
        .names = (names_), .entries = (entries_)                                                   \
    }

/* One slice issued for a call of entry on device (its queue's, or -1). */
void gemm_tally_slice(struct gemm_tally *t, unsigned entry, int device);
/* One call of entry on device issued as slices (shown). */
void gemm_tally_sliced(struct gemm_tally *t, unsigned entry, int device);
/* One call of entry on device left whole for why, counted where it matters (above): learned_ns
 * its learned time, target_ns GPUPRIO_GEMM_SLICE_US's. */
void gemm_tally_whole(struct gemm_tally *t, unsigned entry, int device, enum gemm_whole_reason why,
                      uint64_t learned_ns, uint64_t target_ns);

/* Called with the device after each change of its counts that a record shows (from the thread of
 * the call that counted, with no lock of gpuprio's held): set once, before any call. */
void gemm_tally_on_counted(struct gemm_tally *t, void (*fn)(int device));
/* The counts so far, all entry points together: of every device, or of one (all 0 for a device
 * out of range). */
void gemm_tally_total(struct gemm_tally *t, struct gemm_counts *out);
void gemm_tally_device(struct gemm_tally *t, int device, struct gemm_counts *out);
/* Said at GPUPRIO_LOG=info, one line per entry point that has any ("cublasGemmEx: 1 sliced (4
 * slices); 2 left whole: ..."). */
void gemm_tally_say(struct gemm_tally *t);
/* Every count back to 0: in a forked child, whose calls are its own. */
void gemm_tally_forget(struct gemm_tally *t);

#endif /* GPUPRIO_GEMM_TALLY_H */
