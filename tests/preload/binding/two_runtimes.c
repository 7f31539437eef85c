/*
 * two_runtimes.c - two different copies of the HIP runtime mapped in one process. Run under
 * LD_PRELOAD of the shim by two_runtimes.sh, which checks the exit status and stderr.
 *
 *   two_runtimes two COPY STATUS  before its first HIP call, the program dlopen()s (RTLD_LOCAL)
 *                                 COPY, a second copy of the simulator it links, as a plugin
 *                                 bundling its own runtime would. gpuprio cannot know which copy
 *                                 the application means, so it must bind to neither (-ENOENT from
 *                                 its API) and pass calls through: the program's HIP calls reach
 *                                 its own runtime and give the right results. Exits STATUS.
 *   two_runtimes one COPY STATUS  the control: the same program without the dlopen; gpuprio is
 *                                 bound to the linked runtime and counts the program's commands.
 *                                 Exits STATUS.
 * Why: a kernel registered in one copy cannot be launched through the other, and streams of one
 * are unknown to the other; guessing would break the application, not just its scheduling.
 */
#include <errno.h>
#include <stdlib.h>

#include "binding_common.h"

int main(int argc, char **argv)
{
    struct gp_api api;
    if (argc != 4 || gp_api_find(&api) != 0) {
        printf("usage: two_runtimes one|two COPY STATUS (under LD_PRELOAD)\n");
        return 2;
    }
    int two = strcmp(argv[1], "two") == 0;
    void *copy = NULL;
    if (two) {
        copy = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        if (!copy) {
            printf("FAIL: dlopen %s: %s\n", argv[2], dlerror());
            return 1;
        }
    }
    /* The test's own premise: one runtime, or two. */
    EXPECT(mapped_runtimes() == (two ? 2 : 1));

    hipStream_t s = NULL;
    int result = add_three_on_stream(&s);
    int rc;
    long long submitted = gp_submitted(&api, s, &rc);
    char path[4096] = "";
    int path_rc = api.runtime_path(path, sizeof path);

    EXPECT(result == 3);
    if (two) {
        EXPECT(path_rc == -ENOENT);
        EXPECT(rc == -ENOENT);
    } else {
        EXPECT(path_rc == 0 && strcmp(path, linked_runtime()) == 0);
        EXPECT(rc == 0 && submitted == 4);
    }
    if (s)
        EXPECT(hipStreamDestroy(s) == hipSuccess);
    printf("%s %s: result %d, runtime_path %d '%s', stream_stats %d (%lld commands), %d runtime(s) "
           "mapped\n",
           failures ? "FAIL" : "ok", argv[1], result, path_rc, path, rc, submitted,
           mapped_runtimes());
    return failures ? 1 : atoi(argv[3]);
}
