/*
 * hip_reserve.h - GPUPRIO_CU_RESERVE on HIP: the CU mask that keeps reserved compute units free
 * of lower-priority streams, and the CUs a created stream may use.
 */
#ifndef GPUPRIO_HIP_RESERVE_H
#define GPUPRIO_HIP_RESERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "hip_compat.h"
#include "xqueue.h"

/* The most CUs a device may have for a reservation (a larger one gets none, with a warning). */
#define HIPHAL_RESERVE_MAX_CUS 1024
#define HIPHAL_RESERVE_WORDS (HIPHAL_RESERVE_MAX_CUS / 32)

/*
 * The CU mask lower-priority streams of the calling thread's current device are created with, in
 * mask[0..*words) (room for HIPHAL_RESERVE_WORDS): true when GPUPRIO_CU_RESERVE reserves CUs
 * there. Asks the runtime nothing unless the variable is set. Worked out once per device, on a
 * thread of gpuprio's own (the caller's error state is left alone); a reservation that cannot be
 * made is reported once, and the device gets none.
 */
bool hiphal_reserve_mask(uint32_t *mask, uint32_t *words);

/*
 * The CUs of stream, a stream just created on device by the calling thread, as the runtime
 * reports them (XQ_CU_ALL or XQ_CU_MASKED; all 0 when it cannot say). Right after the creator
 * succeeded, where the queries cannot fail.
 */
void hiphal_stream_cus(hipStream_t stream, int device, struct xq_cus *out);

/* Every device's mask forgotten and their lock made anew: in a forked child, where a thread of
 * the parent may have held it while working a mask out. */
void hiphal_reserve_forget_all(void);

#endif /* GPUPRIO_HIP_RESERVE_H */
