/*
 * sim_pinning.c - see sim_pinning.h. Plain C and libc only: it is built into the simulator and
 * into the fake CUDA driver.
 */
#include "sim_pinning.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

bool sim_unpinnable_file_mapping(const void *ptr, size_t size)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps)
        return false;
    uintptr_t first = (uintptr_t)ptr, end = first + size;
    bool refused = false;
    char line[4096 + 128];
    while (!refused && fgets(line, sizeof line, maps)) {
        unsigned long lo, hi, inode;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %n", &lo, &hi, perms, &inode, &path_at) < 4 ||
            hi <= first || lo >= end || perms[3] != 's' || !inode || !path_at)
            continue;
        char *path = line + path_at;
        path[strcspn(path, "\n")] = '\0';
        struct statfs st;
        if (path[0] != '/' || statfs(path, &st) != 0)
            continue;
        refused = st.f_type != 0x01021994 /* TMPFS_MAGIC */ &&
                  st.f_type != 0x958458f6 /* HUGETLBFS_MAGIC */;
    }
    fclose(maps);
    return refused;
}
