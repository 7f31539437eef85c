/*
 * misuse_test.c - a process in which the simulator reported a misuse ("hipsim: error") ends with
 * SIM_MISUSE_STATUS however it exits, so a test cannot pass over one that nothing greps for.
 *
 *   misuse_test none       no misuse: returns 3, which must stay its status
 *   misuse_test legacy     hipStreamGetDevice(hipStreamLegacy), refused; then returns 3
 *   misuse_test thread     the same on a thread, then exit(4) from main
 *   misuse_test fork       the same, then a child of fork returns 3: its status, which this
 *                          process passes on with _exit (past its own exit handlers)
 *
 * Prints the call's result first; the test checks the status (tests/sim/CMakeLists.txt).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hipsim.h"

static void *misuse(void *arg)
{
    (void)arg;
    hipDevice_t device = -1;
    hipError_t err = hipStreamGetDevice(hipStreamLegacy, &device);
    printf("hipStreamGetDevice(hipStreamLegacy) -> %d (refused: %s)\n", (int)err,
           err == hipErrorInvalidHandle ? "yes" : "no");
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int device = -1;
    if (hipGetDevice(&device) != hipSuccess)
        return 1;
    if (strcmp(mode, "legacy") == 0) {
        misuse(NULL);
    } else if (strcmp(mode, "thread") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, misuse, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 1;
        exit(4);
    } else if (strcmp(mode, "fork") == 0) {
        misuse(NULL);
        fflush(stdout);
        pid_t child = fork();
        if (child == 0)
            return 3;
        int status;
        if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
            _exit(1);
        _exit(WEXITSTATUS(status));
    } else if (strcmp(mode, "none") != 0) {
        fprintf(stderr, "usage: misuse_test none|legacy|thread|fork\n");
        return 2;
    }
    return 3;
}
