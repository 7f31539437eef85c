/*
 * capture_mode.c - each thread's capture mode, and the calls that break a capture (ROCm/clr's
 * CHECK_STREAM_CAPTURE_SUPPORTED, docs/simulator.md "Capture modes and unsafe calls").
 *
 * hipThreadExchangeStreamCaptureMode sets the calling thread's mode and gives back the old one
 * (global until changed, on every new thread). While a capture is in progress, hipMalloc,
 * hipHostRegister and the other allocation and registration calls made from a thread in global
 * mode fail with hipErrorStreamCaptureUnsupported and invalidate the captures clr's rule names:
 * the thread's own global or thread-local captures, else every global one; from a thread in
 * thread-local mode only its own; from a thread in relaxed mode none. A capture in global or
 * thread-local mode is ended by the thread that began it (else hipErrorStreamCaptureWrongThread,
 * and it goes on), and by no other once that thread has exited. hipStreamQuery and
 * hipStreamSynchronize of a stream that is not capturing (clr's StreamCaptureOngoing), from a
 * thread not in relaxed mode, fail the same way and invalidate every global capture, or where there
 * is none the thread's own. Fault "capture-mode-ignored" lets every such call through.
 */
#include "conf.h"

#include <pthread.h>
#include <stdbool.h>

static hipStream_t s, idle; /* idle: a stream with no work, never captured */
static char page[4096] __attribute__((aligned(4096)));

static void print_status(const char *label)
{
    hipStreamCaptureStatus st = (hipStreamCaptureStatus)99;
    hipError_t r = hipStreamIsCapturing(s, &st);
    printf("%s -> %s, %s\n", label, conf_err(r), conf_capture_status(st));
}

static const char *mode_name(hipStreamCaptureMode m)
{
    return m == hipStreamCaptureModeGlobal        ? "Global"
           : m == hipStreamCaptureModeThreadLocal ? "ThreadLocal"
           : m == hipStreamCaptureModeRelaxed     ? "Relaxed"
                                                  : "?";
}

/* Sets the thread's mode to m, printing the one it replaced. */
static void set_mode(const char *who, hipStreamCaptureMode m)
{
    hipStreamCaptureMode old = m;
    hipError_t r = hipThreadExchangeStreamCaptureMode(&old);
    printf("%s: exchange to %s -> %s, was %s\n", who, mode_name(m), conf_err(r), mode_name(old));
}

/* Ends the capture on s, printing the result and whether a graph came back. */
static void end(const char *label)
{
    hipGraph_t g = NULL;
    hipError_t r = hipStreamEndCapture(s, &g);
    printf("%s -> %s, graph %s\n", label, conf_err(r), conf_yes(g != NULL));
    if (g)
        MUST(hipGraphDestroy(g));
}

/* What another thread does, in its mode (none: the new thread's own). */
enum job { MALLOC, REGISTER, END, BEGIN, QUERY, SYNC };
struct other {
    enum job job;
    bool set;
    hipStreamCaptureMode mode;
};

static void *other_main(void *arg)
{
    struct other *o = arg;
    if (o->set)
        set_mode("  other thread", o->mode);
    if (o->job == MALLOC) {
        void *p = NULL;
        hipError_t r = hipMalloc(&p, 64);
        printf("  other thread: hipMalloc -> %s\n", conf_err(r));
        if (p)
            MUST(hipFree(p));
    } else if (o->job == REGISTER) {
        hipError_t r = hipHostRegister(page, sizeof page, hipHostRegisterMapped);
        printf("  other thread: hipHostRegister -> %s\n", conf_err(r));
        if (r == hipSuccess)
            SHOW("  other thread: hipHostUnregister", hipHostUnregister(page));
    } else if (o->job == QUERY) {
        SHOW("  other thread: hipStreamQuery(idle)", hipStreamQuery(idle));
    } else if (o->job == SYNC) {
        SHOW("  other thread: hipStreamSynchronize(idle)", hipStreamSynchronize(idle));
    } else if (o->job == BEGIN) {
        SHOW("  other thread: hipStreamBeginCapture(s, Global)",
             hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    } else {
        end("  other thread: hipStreamEndCapture");
    }
    return NULL;
}

static void on_other_thread(enum job job, bool set, hipStreamCaptureMode mode)
{
    struct other o = {job, set, mode};
    pthread_t t;
    if (pthread_create(&t, NULL, other_main, &o) != 0 || pthread_join(t, NULL) != 0) {
        printf("FATAL: thread\n");
        exit(1);
    }
}

static void malloc_here(const char *label)
{
    void *p = NULL;
    hipError_t r = hipMalloc(&p, 64);
    printf("%s -> %s\n", label, conf_err(r));
    if (p)
        MUST(hipFree(p));
}

int main(void)
{
    conf_init();
    MUST(hipStreamCreate(&s));
    MUST(hipStreamCreate(&idle));

    printf("-- hipThreadExchangeStreamCaptureMode\n");
    SHOW("hipThreadExchangeStreamCaptureMode(NULL)", hipThreadExchangeStreamCaptureMode(NULL));
    hipStreamCaptureMode bad = (hipStreamCaptureMode)7;
    SHOW("hipThreadExchangeStreamCaptureMode(7)", hipThreadExchangeStreamCaptureMode(&bad));
    set_mode("main", hipStreamCaptureModeRelaxed);
    set_mode("main", hipStreamCaptureModeThreadLocal);
    set_mode("main", hipStreamCaptureModeGlobal);

    printf("-- a global capture, the calls on this thread in global mode\n");
    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    malloc_here("hipMalloc");
    print_status("hipStreamIsCapturing");
    end("hipStreamEndCapture");
    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    SHOW("hipHostRegister", hipHostRegister(page, sizeof page, hipHostRegisterMapped));
    print_status("hipStreamIsCapturing");
    end("hipStreamEndCapture");
    malloc_here("hipMalloc after the capture");

    printf("-- a global capture, the calls on another thread\n");
    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    on_other_thread(REGISTER, true, hipStreamCaptureModeRelaxed);
    print_status("hipStreamIsCapturing");
    on_other_thread(MALLOC, true, hipStreamCaptureModeThreadLocal);
    print_status("hipStreamIsCapturing");
    on_other_thread(END, false, hipStreamCaptureModeGlobal);
    print_status("hipStreamIsCapturing");
    on_other_thread(REGISTER, false, hipStreamCaptureModeGlobal);
    print_status("hipStreamIsCapturing");
    end("hipStreamEndCapture");

    printf("-- a thread-local capture\n");
    SHOW("hipStreamBeginCapture(s, ThreadLocal)",
         hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal));
    on_other_thread(MALLOC, false, hipStreamCaptureModeGlobal);
    print_status("hipStreamIsCapturing");
    set_mode("main", hipStreamCaptureModeThreadLocal);
    malloc_here("hipMalloc");
    print_status("hipStreamIsCapturing");
    set_mode("main", hipStreamCaptureModeGlobal);
    end("hipStreamEndCapture");

    printf("-- a relaxed capture\n");
    SHOW("hipStreamBeginCapture(s, Relaxed)",
         hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
    malloc_here("hipMalloc");
    on_other_thread(MALLOC, false, hipStreamCaptureModeGlobal);
    print_status("hipStreamIsCapturing");
    on_other_thread(END, false, hipStreamCaptureModeGlobal);
    print_status("hipStreamIsCapturing");

    printf("-- waits on another stream during a capture (StreamCaptureOngoing)\n");
    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    on_other_thread(QUERY, true, hipStreamCaptureModeRelaxed);
    on_other_thread(SYNC, true, hipStreamCaptureModeRelaxed);
    print_status("hipStreamIsCapturing");
    on_other_thread(QUERY, false, hipStreamCaptureModeGlobal);
    print_status("hipStreamIsCapturing");
    end("hipStreamEndCapture");
    SHOW("hipStreamBeginCapture(s, Global)", hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    on_other_thread(SYNC, true, hipStreamCaptureModeThreadLocal);
    print_status("hipStreamIsCapturing");
    end("hipStreamEndCapture");
    SHOW("hipStreamBeginCapture(s, ThreadLocal)",
         hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal));
    on_other_thread(QUERY, false, hipStreamCaptureModeGlobal);
    print_status("hipStreamIsCapturing");
    SHOW("hipStreamQuery(idle)", hipStreamQuery(idle));
    print_status("hipStreamIsCapturing");
    end("hipStreamEndCapture");
    SHOW("hipStreamQuery(idle) after the capture", hipStreamQuery(idle));

    /* The thread that began it is gone: no later thread is it, whatever it reuses of the first
     * one's memory (clr's list of its captures died with it). Last: nobody can end it. */
    printf("-- a global capture begun on a thread that exited\n");
    on_other_thread(BEGIN, false, hipStreamCaptureModeGlobal);
    on_other_thread(END, false, hipStreamCaptureModeGlobal);
    print_status("hipStreamIsCapturing");

    printf("-- cleanup\n");
    SHOW("hipStreamDestroy", hipStreamDestroy(s));
    MUST(hipStreamDestroy(idle));
    return conf_done();
}
