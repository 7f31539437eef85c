/*
 * host_funcs.c - hipLaunchHostFunc and hipStreamAddCallback.
 *
 * They run in stream order, interleaved with kernels, on a thread of the runtime (not the
 * caller's), and block their stream while they run. A callback gets the stream handle it was
 * added with and hipSuccess. Fault "callback-early" runs them at enqueue time on the caller.
 */
#include "conf.h"

static pthread_t main_thread;
static atomic_int ran_on_caller;
static conf_log order;

typedef struct cb_data {
    conf_log *log;
    int value;
    hipStream_t expect;
    atomic_int calls;
    atomic_int stream_ok;
    atomic_int status;
} cb_data;

static void note_thread(void)
{
    if (pthread_equal(pthread_self(), main_thread))
        atomic_fetch_add(&ran_on_caller, 1);
}

static void host_log(void *p)
{
    note_thread();
    conf_host_log(p);
}

static void callback(hipStream_t stream, hipError_t status, void *p)
{
    cb_data *c = p;
    note_thread();
    atomic_fetch_add(&c->calls, 1);
    atomic_store(&c->stream_ok, stream == c->expect);
    atomic_store(&c->status, (int)status);
    if (c->log)
        conf_log_add(c->log, c->value);
}

static void host_hold(void *p)
{
    note_thread();
    conf_host_hold(p);
}

static void print_cb(const char *name, cb_data *c)
{
    printf("%s: calls %d, got the stream it was added to: %s, status %s\n", name,
           atomic_load(&c->calls), conf_yes(atomic_load(&c->stream_ok)),
           conf_err((hipError_t)atomic_load(&c->status)));
}

int main(void)
{
    conf_init();
    main_thread = pthread_self();
    hipStream_t s;
    MUST(hipStreamCreate(&s));
    static conf_hlog h1 = {&order, 1}, h5 = {&order, 5};
    static cb_data c3 = {.log = &order, .value = 3}, c6 = {.log = &order, .value = 6};
    static cb_data cbad = {.log = NULL, .value = 0};
    c3.expect = s;
    c6.expect = 0;

    printf("-- host functions and callbacks interleaved with kernels\n");
    conf_log_reset(&order);
    MUST(conf_launch_log(s, &order, 0, 30 * CONF_MS));
    SHOW("hipLaunchHostFunc(s, log 1)", hipLaunchHostFunc(s, host_log, &h1));
    MUST(conf_launch_log(s, &order, 2, 0));
    SHOW("hipStreamAddCallback(s, log 3, 0)", hipStreamAddCallback(s, callback, &c3, 0));
    MUST(conf_launch_log(s, &order, 4, 20 * CONF_MS));
    SHOW("hipLaunchHostFunc(s, log 5)", hipLaunchHostFunc(s, host_log, &h5));
    /* The null stream waits for s (a blocking stream), so this runs last. */
    SHOW("hipStreamAddCallback(0, log 6, 0)", hipStreamAddCallback(0, callback, &c6, 0));
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    conf_log_print("order", &order);
    print_cb("callback on s", &c3);
    print_cb("callback on stream 0", &c6);

    printf("-- a host function does not run before the kernel ahead of it\n");
    static atomic_int flag;
    static conf_hset set_flag = {&flag, 1};
    static conf_hold kernel_ahead;
    MUST(conf_launch_hold(s, &kernel_ahead));
    SHOW("hipLaunchHostFunc(s, set flag)", hipLaunchHostFunc(s, conf_host_set, &set_flag));
    conf_sleep_ms(20);
    printf("after 20 ms: host function ran: %s\n", conf_yes(atomic_load(&flag) == 1));
    conf_release_after(&kernel_ahead, 20);
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    printf("after sync: host function ran: %s\n", conf_yes(atomic_load(&flag) == 1));

    printf("-- a running host function blocks its stream\n");
    static atomic_int kflag;
    static conf_hold host_fn;
    /* Released by the program once it has looked; the timer frees a caller that fault
     * "callback-early" made run the host function itself. */
    conf_release_after(&host_fn, 2000);
    SHOW("hipLaunchHostFunc(s, held host function)", hipLaunchHostFunc(s, host_hold, &host_fn));
    MUST(conf_launch_flag(s, &kflag, 1, 0));
    conf_sleep_ms(20);
    SHOW("after 20 ms: hipStreamQuery(s)", hipStreamQuery(s));
    printf("after 20 ms: kernel behind it ran: %s\n", conf_yes(atomic_load(&kflag) == 1));
    conf_release_after(&host_fn, 20);
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    printf("after sync: kernel behind it ran: %s\n", conf_yes(atomic_load(&kflag) == 1));

    printf("-- flags must be 0\n");
    SHOW("hipStreamAddCallback(s, cb, 1)", hipStreamAddCallback(s, callback, &cbad, 1));
    SHOW("hipStreamSynchronize(s)", hipStreamSynchronize(s));
    printf("callback added with flags 1 ran: %s\n", conf_yes(atomic_load(&cbad.calls) != 0));

    printf("host functions that ran on the calling thread: %d\n", atomic_load(&ran_on_caller));
    MUST(hipStreamDestroy(s));
    return conf_done();
}
