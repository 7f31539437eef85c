/*
 * sim_pinning.h - the rule by which the real runtimes refuse to register host memory, shared by
 * the simulated HIP runtime (hipHostRegister, sim_memory.c) and the fake CUDA driver
 * (cuMemHostRegister, tests/cuda/fake_cuda.c), so that both refuse what HIP and CUDA refuse.
 */
#ifndef SIM_PINNING_H
#define SIM_PINNING_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether [ptr, ptr + size) holds a shared mapping of a file on a filesystem other than tmpfs
 * and hugetlbfs, which the real runtimes refuse to register: they pin the pages for as long as
 * the registration lasts, and Linux refuses long-term pinning of such files' pages (they must
 * stay writable back to their file). Anonymous memory, private or shared, is always registrable.
 * Read from /proc/self/maps: where that cannot be read, or a file is gone (" (deleted)"), the
 * mapping counts as registrable, as the simulators' was before.
 */
bool sim_unpinnable_file_mapping(const void *ptr, size_t size);

#endif /* SIM_PINNING_H */
