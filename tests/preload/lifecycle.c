/*
 * lifecycle.c - process lifecycle under the shim: the exit status is always the application's.
 *
 *   lifecycle return   queues a long kernel and returns 7 from main without waiting for it
 *   lifecycle thread   a second thread calls exit(9) while main keeps launching
 *   lifecycle signal   raises SIGTERM with work queued (the shell sees 143)
 *   lifecycle ctor     a library constructor used HIP before main; main checks its result
 *   lifecycle fork     the parent used the GPU, then a forked child uses it and checks a result
 * lifecycle.sh runs each many times with and without the shim and compares the statuses.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hipsim.h"

static const void *add_kernel;

static uint64_t add(hipsimLaunch *l)
{
    int *p = *(int **)l->args[0];
    *p += *(int *)l->args[1];
    return *(uint64_t *)l->args[2];
}

static hipError_t launch_add(int *dst, int value, uint64_t ns, hipStream_t s)
{
    void *args[] = {&dst, &value, &ns};
    dim3 one = {1, 1, 1};
    return hipLaunchKernel(add_kernel, one, one, args, 0, s);
}

static void register_kernel(void)
{
    size_t sizes[] = {sizeof(int *), sizeof(int), sizeof(uint64_t)};
    add_kernel = hipsimRegisterKernel("add", add, 3, sizes);
}

static int ctor_result = -1;

/* HIP used from a constructor, before main: the shim must already forward correctly. */
__attribute__((constructor)) static void use_hip_before_main(void)
{
    register_kernel();
    int *d;
    if (hipMalloc((void **)&d, sizeof *d) != hipSuccess || hipMemset(d, 0, sizeof *d) != hipSuccess)
        return;
    if (launch_add(d, 5, 0, NULL) == hipSuccess && hipDeviceSynchronize() == hipSuccess)
        ctor_result = *d;
    hipFree(d);
}

static void *exit_from_thread(void *arg)
{
    (void)arg;
    usleep(20000);
    exit(9);
}

static int run_fork(void)
{
    int *d;
    if (hipMalloc((void **)&d, sizeof *d) != hipSuccess || hipMemset(d, 0, sizeof *d) ||
        launch_add(d, 1, 0, NULL) || hipDeviceSynchronize())
        return 20;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        hipStream_t s;
        if (hipStreamCreate(&s) || launch_add(d, 41, 1000000, s) || hipStreamSynchronize(s))
            _exit(21);
        _exit(*d == 42 ? 0 : 22);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 23;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int *d;
    if (hipMalloc((void **)&d, sizeof *d) != hipSuccess)
        return 10;
    if (strcmp(mode, "return") == 0) {
        launch_add(d, 1, 200000000, NULL); /* 200 ms, never waited for */
        return 7;
    }
    if (strcmp(mode, "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, exit_from_thread, NULL);
        for (;;)
            launch_add(d, 1, 1000000, NULL);
    }
    if (strcmp(mode, "signal") == 0) {
        launch_add(d, 1, 200000000, NULL);
        raise(SIGTERM);
        return 11;
    }
    if (strcmp(mode, "ctor") == 0)
        return ctor_result == 5 ? 0 : 12;
    if (strcmp(mode, "fork") == 0)
        return run_fork();
    fprintf(stderr, "usage: lifecycle return|thread|signal|ctor|fork\n");
    return 2;
}
