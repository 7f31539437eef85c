/*
 * last_error.c - ROCm 6 last-error rules.
 *
 * Each call's result becomes the thread's "last command error"; a result other than hipSuccess
 * and hipErrorNotReady also becomes the thread's sticky "last error". hipGetLastError returns and
 * resets the sticky error, hipPeekAtLastError only returns it, hipExtGetLastError returns and
 * resets the last command error. Results are stored before anything is printed, so that the
 * error-query calls directly follow the call they are about (hipGetErrorName is called only
 * afterwards).
 */
#include "conf.h"

static int not_a_kernel; /* its address was never registered as a kernel */

static void p(const char *label, hipError_t r)
{
    printf("%s -> %s\n", label, conf_err(r));
}

static hipError_t bad_call(void)
{
    hipStream_t s = NULL;
    return hipStreamCreateWithFlags(&s, 0x100); /* invalid flags: hipErrorInvalidValue */
}

static hipError_t thread_get, thread_ext, thread_launch, thread_get_after;

static void *other_thread(void *arg)
{
    (void)arg;
    thread_get = hipGetLastError();
    thread_ext = hipExtGetLastError();
    thread_launch = hipLaunchKernel(&not_a_kernel, conf_dim(1), conf_dim(1), NULL, 0, 0);
    thread_get_after = hipGetLastError();
    return NULL;
}

int main(void)
{
    hipError_t r[8];
    conf_init();
    hipStream_t s;
    void *m1 = NULL, *m2 = NULL, *m3 = NULL;

    printf("-- sticky last error\n");
    r[0] = hipGetLastError();
    p("hipGetLastError (nothing failed yet)", r[0]);
    r[0] = bad_call();
    r[1] = hipPeekAtLastError();
    r[2] = hipPeekAtLastError();
    p("hipStreamCreateWithFlags(0x100)", r[0]);
    p("hipPeekAtLastError", r[1]);
    p("hipPeekAtLastError again", r[2]);
    r[0] = hipMalloc(&m1, 16);
    r[1] = hipPeekAtLastError();
    r[2] = hipGetLastError();
    r[3] = hipGetLastError();
    p("hipMalloc", r[0]);
    p("hipPeekAtLastError after a success", r[1]);
    p("hipGetLastError", r[2]);
    p("hipGetLastError again", r[3]);

    printf("-- last command error (hipExtGetLastError)\n");
    r[0] = hipMalloc(&m2, 16);
    r[1] = hipExtGetLastError();
    p("hipMalloc", r[0]);
    p("hipExtGetLastError", r[1]);
    r[0] = bad_call();
    r[1] = hipExtGetLastError();
    r[2] = hipExtGetLastError();
    r[3] = hipGetLastError();
    p("hipStreamCreateWithFlags(0x100)", r[0]);
    p("hipExtGetLastError", r[1]);
    p("hipExtGetLastError again", r[2]);
    p("hipGetLastError", r[3]);
    r[0] = bad_call();
    r[1] = hipMalloc(&m3, 16);
    r[2] = hipExtGetLastError();
    r[3] = hipGetLastError();
    p("hipStreamCreateWithFlags(0x100)", r[0]);
    p("hipMalloc", r[1]);
    p("hipExtGetLastError (last call succeeded)", r[2]);
    p("hipGetLastError (the earlier error is sticky)", r[3]);

    printf("-- hipErrorNotReady is not sticky\n");
    MUST(hipStreamCreate(&s));
    MUST(conf_launch_sleep(s, 100 * CONF_MS));
    r[0] = hipStreamQuery(s);
    r[1] = hipExtGetLastError();
    r[2] = hipStreamQuery(s);
    r[3] = hipPeekAtLastError();
    r[4] = hipGetLastError();
    p("hipStreamQuery(busy)", r[0]);
    p("hipExtGetLastError", r[1]);
    p("hipStreamQuery(busy)", r[2]);
    p("hipPeekAtLastError", r[3]);
    p("hipGetLastError", r[4]);
    r[0] = bad_call();
    r[1] = hipStreamQuery(s);
    r[2] = hipExtGetLastError();
    r[3] = hipPeekAtLastError();
    r[4] = hipGetLastError();
    r[5] = hipGetLastError();
    p("hipStreamCreateWithFlags(0x100)", r[0]);
    p("hipStreamQuery(busy)", r[1]);
    p("hipExtGetLastError", r[2]);
    p("hipPeekAtLastError", r[3]);
    p("hipGetLastError", r[4]);
    p("hipGetLastError again", r[5]);
    MUST(hipStreamSynchronize(s));

    printf("-- launch of an unregistered function\n");
    r[0] = hipLaunchKernel(&not_a_kernel, conf_dim(1), conf_dim(1), NULL, 0, s);
    r[1] = hipGetLastError();
    p("hipLaunchKernel(unregistered)", r[0]);
    p("hipGetLastError", r[1]);

    printf("-- destroyed and unknown stream handles\n");
    hipStream_t gone, unknown = (hipStream_t)&not_a_kernel;
    MUST(hipStreamCreate(&gone));
    r[0] = hipStreamDestroy(gone);
    r[1] = hipStreamQuery(gone);
    r[2] = hipGetLastError();
    r[3] = conf_launch_sleep(gone, 0);
    r[4] = hipStreamQuery(unknown);
    r[5] = hipStreamSynchronize(unknown);
    r[6] = hipPeekAtLastError();
    r[7] = hipGetLastError();
    p("hipStreamDestroy", r[0]);
    p("hipStreamQuery(destroyed)", r[1]);
    p("hipGetLastError", r[2]);
    p("hipLaunchKernel(destroyed stream)", r[3]);
    p("hipStreamQuery(unknown handle)", r[4]);
    p("hipStreamSynchronize(unknown handle)", r[5]);
    p("hipPeekAtLastError", r[6]);
    p("hipGetLastError", r[7]);
    r[0] = hipStreamDestroy(0);
    r[1] = hipStreamDestroy(hipStreamLegacy);
    r[2] = hipStreamDestroy(hipStreamPerThread);
    r[3] = hipGetLastError();
    p("hipStreamDestroy(0)", r[0]);
    p("hipStreamDestroy(hipStreamLegacy)", r[1]);
    p("hipStreamDestroy(hipStreamPerThread)", r[2]);
    p("hipGetLastError", r[3]);

    printf("-- the last error is per thread\n");
    r[0] = bad_call();
    pthread_t t;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, NULL);
    r[1] = hipGetLastError();
    p("main: hipStreamCreateWithFlags(0x100)", r[0]);
    p("other thread: hipGetLastError", thread_get);
    p("other thread: hipExtGetLastError", thread_ext);
    p("other thread: hipLaunchKernel(unregistered)", thread_launch);
    p("other thread: hipGetLastError", thread_get_after);
    p("main: hipGetLastError", r[1]);

    MUST(hipFree(m1));
    MUST(hipFree(m2));
    MUST(hipFree(m3));
    MUST(hipStreamDestroy(s));
    return conf_done();
}
