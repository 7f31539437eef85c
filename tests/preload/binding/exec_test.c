/*
 * exec_test.c - exec under the shim. Run under LD_PRELOAD of the shim by exec.sh.
 *
 *   exec_test main STATUS    uses HIP (launches on the null stream, sync, checks the result and
 *                            gpuprio's count), leaves one kernel in flight, then execv()s itself
 *                            (/proc/self/exe) as "image".
 *   exec_test thread STATUS  the same first part, then a second thread execv()s the program as
 *                            "image" while the main thread is in an endless loop of launches.
 *   exec_test image STATUS PID MODE   the new image: it is still process PID (an exec, not a
 *                            fork), the shim is loaded again (LD_PRELOAD is inherited), its state
 *                            is fresh (the null stream's count starts at zero, not at what the old
 *                            image submitted), it is bound to the linked runtime, and HIP work
 *                            gives the right result and is counted. Exits STATUS.
 * Only the image can exit with STATUS (the old image exits 20.. on a failed check, 30 when exec
 * fails), so the runner checking for STATUS checks that the exec'd image ran to its end.
 * Why: launchers and shells exec (torchrun, bash -c 'exec python ...'); whatever state the shim
 * had (its binding, queues, locks held by the thread that did not call exec) must not leak into
 * the new image, and the status the user sees must be the new image's own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "binding_common.h"

static char status_arg[16];
static char pid_arg[32];
static char mode_arg[16];
static atomic_int launched;

/* On the null stream: a memset, `launches` kernels adding 1, a copy back (launches + 2
 * commands). Returns the value read, or a negative number naming the step that failed. */
static int null_stream_work(int launches)
{
    int *d = NULL, h = -100;
    if (hipMalloc((void **)&d, sizeof *d) != hipSuccess || hipMemset(d, 0, sizeof *d) != hipSuccess)
        return -1;
    for (int i = 0; i < launches; i++)
        if (launch_add(d, 1, 1000, NULL) != hipSuccess)
            return -2;
    if (hipMemcpy(&h, d, sizeof h, hipMemcpyDeviceToHost) != hipSuccess)
        return -3;
    hipFree(d);
    return h;
}

static _Noreturn void exec_image(void)
{
    char *args[] = {(char *)"exec_test", (char *)"image", status_arg, pid_arg, mode_arg, NULL};
    fflush(stdout);
    execv("/proc/self/exe", args);
    printf("FAIL: execv /proc/self/exe: %s\n", strerror(errno));
    fflush(stdout);
    _exit(30);
}

static void *exec_from_thread(void *arg)
{
    (void)arg;
    while (atomic_load(&launched) < 32)
        usleep(1000);
    exec_image();
    return NULL;
}

/* The old image: HIP used and checked, then exec from this thread or from a second one. */
static int old_image(const char *mode, const struct gp_api *api)
{
    int rc;
    int result = null_stream_work(7);
    long long submitted = gp_submitted(api, NULL, &rc);
    if (result != 7 || rc != 0 || submitted != 9) {
        printf("FAIL %s before exec: result %d, stream_stats %d (%lld commands)\n", mode, result,
               rc, submitted);
        return 20;
    }
    int *d = NULL;
    if (hipMalloc((void **)&d, sizeof *d) != hipSuccess)
        return 21;
    snprintf(pid_arg, sizeof pid_arg, "%ld", (long)getpid());
    snprintf(mode_arg, sizeof mode_arg, "%s", mode);
    if (strcmp(mode, "main") == 0) {
        if (launch_add(d, 1, 20000000, NULL) != hipSuccess) /* 20 ms, in flight at exec */
            return 22;
        exec_image();
    }
    pthread_t t;
    if (pthread_create(&t, NULL, exec_from_thread, NULL) != 0)
        return 23;
    for (int i = 1;; i++) {
        if (launch_add(d, 1, 100000, NULL) != hipSuccess)
            return 24;
        atomic_fetch_add(&launched, 1);
        if (i % 8 == 0 && hipStreamSynchronize(NULL) != hipSuccess)
            return 25;
    }
}

static int new_image(const char *pid, const char *mode, const struct gp_api *api)
{
    int rc;
    EXPECT(getpid() == (pid_t)atol(pid));
    long long submitted = gp_submitted(api, NULL, &rc);
    EXPECT(rc == 0 && submitted == 0);
    int result = null_stream_work(3);
    EXPECT(result == 3);
    submitted = gp_submitted(api, NULL, &rc);
    EXPECT(rc == 0 && submitted == 5);
    char path[4096] = "";
    EXPECT(api->runtime_path(path, sizeof path) == 0 && strcmp(path, linked_runtime()) == 0);
    EXPECT(mapped_runtimes() == 1);
    printf("%s image exec'd from %s: result %d, null stream %d (%lld commands), bound to %s\n",
           failures ? "FAIL" : "ok", mode, result, rc, submitted, path);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    struct gp_api api;
    if (argc < 3 || gp_api_find(&api) != 0) {
        printf("usage: exec_test main|thread STATUS (under LD_PRELOAD)\n");
        return 2;
    }
    if (strcmp(argv[1], "image") == 0 && argc == 5) {
        int r = new_image(argv[3], argv[4], &api);
        return r ? r : atoi(argv[2]);
    }
    if (strcmp(argv[1], "main") != 0 && strcmp(argv[1], "thread") != 0) {
        printf("unknown mode %s\n", argv[1]);
        return 2;
    }
    snprintf(status_arg, sizeof status_arg, "%s", argv[2]);
    return old_image(argv[1], &api);
}
