/*
 * override.c - GPUPRIO_HIP_LIBRARY, the first place the shim looks for the HIP runtime
 * (src/hal/hip/hip_bind.c). Run under LD_PRELOAD of the shim by override.sh, which sets the
 * variable and checks the exit status and stderr.
 *
 *   override bound PATH          GPUPRIO_HIP_LIBRARY names the runtime the program links (PATH):
 *                                gpuprio is bound to it under exactly that name, did not map a
 *                                second copy, and counted the program's commands on their stream.
 *                                Exits 0.
 *   override passthrough STATUS  GPUPRIO_HIP_LIBRARY is unusable (a missing file, the shim
 *                                itself): gpuprio is bound to nothing (-ENOENT from its API), no
 *                                second copy is mapped, and the program's HIP calls still reach
 *                                its runtime and give the right results. Exits STATUS, so that
 *                                the runner sees the program's own status come through.
 * Why: the override exists for processes where the runtime cannot be found otherwise; a correct
 * one must be used as given, and a wrong one must cost the user scheduling, never correctness.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "binding_common.h"

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int main(int argc, char **argv)
{
    struct gp_api api;
    if (argc != 3 || gp_api_find(&api) != 0) {
        printf("usage: override bound PATH | override passthrough STATUS (under LD_PRELOAD)\n");
        return 2;
    }
    const char *mode = argv[1];
    hipStream_t s = NULL;
    int result = add_three_on_stream(&s);
    int rc;
    long long submitted = gp_submitted(&api, s, &rc);
    char path[4096] = "";
    int path_rc = api.runtime_path(path, sizeof path);

    EXPECT(result == 3);
    EXPECT(mapped_runtimes() == 1);
    if (strcmp(mode, "bound") == 0) {
        /* The test's own premise: PATH is the copy the program links. */
        EXPECT(same_file(argv[2], linked_runtime()));
        EXPECT(path_rc == 0);
        EXPECT(strcmp(path, argv[2]) == 0);
        EXPECT(rc == 0 && submitted == 4);
    } else if (strcmp(mode, "passthrough") == 0) {
        EXPECT(path_rc == -ENOENT);
        EXPECT(rc == -ENOENT);
    } else {
        printf("unknown mode %s\n", mode);
        return 2;
    }
    if (s)
        EXPECT(hipStreamDestroy(s) == hipSuccess);
    printf("%s %s: result %d, runtime_path %d '%s', stream_stats %d (%lld commands), %d runtime(s) "
           "mapped\n",
           failures ? "FAIL" : "ok", mode, result, path_rc, path, rc, submitted, mapped_runtimes());
    if (failures)
        return 1;
    return strcmp(mode, "bound") == 0 ? 0 : atoi(argv[2]);
}
