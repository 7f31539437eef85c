/*
 * hip_reserve.h - GPUPRIO_CU_RESERVE on HIP: the CU mask that keeps reserved compute units free
 * of lower-priority streams.
 */
#ifndef GPUPRIO_HIP_RESERVE_H
#define GPUPRIO_HIP_RESERVE_H

#include <stdbool.h>
#include <stdint.h>

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

#endif /* GPUPRIO_HIP_RESERVE_H */
