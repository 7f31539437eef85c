/*
 * lifetime.c - queues come and go with their streams and threads, and priorities come from the
 * documented sources in the documented order.
 *
 * Threads that use the null and per-thread streams and exit leave no queue behind; nor do
 * streams created and destroyed. Priority sources, strongest first: gpuprio_stream_set_priority,
 * the creating thread's gpuprio_thread_set_priority, GPUPRIO_STREAM_PRIORITIES (creation order;
 * the test runs with "critical,low"), the stream's own creation priority; clearing the thread's
 * priority (gpuprio_thread_clear_priority) undoes exactly what setting it did. Bad arguments give
 * -EINVAL or -ENOENT.
 */
#include <errno.h>
#include <pthread.h>

#include "sched_test.h"

static struct gp_api api;
static int (*thread_clear_priority)(void); /* gpuprio_thread_clear_priority */
static const void *kernel;

static void *short_lived(void *arg)
{
    (void)arg;
    EXPECT(api.thread_set_priority(GPUPRIO_PRIORITY_LOW) == 0);
    MUST(busy_launch(kernel, 1000, 0, NULL));
    MUST(busy_launch(kernel, 1000, 0, hipStreamPerThread));
    MUST(hipStreamSynchronize(hipStreamPerThread));
    MUST(hipDeviceSynchronize());
    return NULL;
}

static int priority_of(hipStream_t s)
{
    int p = -12345;
    EXPECT(api.stream_get_priority(s, &p) == 0);
    return p;
}

/* Its per-thread and null streams follow its priority, and go back to normal when it clears it.
 * In a thread of its own, which takes its queues along when it exits. */
static void *clears_per_thread(void *arg)
{
    (void)arg;
    EXPECT(api.thread_set_priority(9) == 0);
    MUST(busy_launch(kernel, 1000, 0, hipStreamPerThread));
    MUST(hipStreamSynchronize(hipStreamPerThread));
    EXPECT(priority_of(hipStreamPerThread) == 9 && priority_of(NULL) == 9);
    EXPECT(thread_clear_priority() == 0);
    EXPECT(priority_of(hipStreamPerThread) == GPUPRIO_PRIORITY_NORMAL);
    EXPECT(priority_of(NULL) == GPUPRIO_PRIORITY_NORMAL);
    return NULL;
}

/* Sets its own thread priority and creates a stream that takes it (*arg). */
static void *creates_with_priority(void *arg)
{
    EXPECT(api.thread_set_priority(5) == 0);
    MUST(hipStreamCreate((hipStream_t *)arg));
    return NULL;
}

int main(void)
{
    api = gp_api_find();
    kernel = busy_register();
    MUST(busy_launch(kernel, 1000, 0, NULL));
    MUST(hipDeviceSynchronize());
    int baseline = api.stats(NULL, 0);
    EXPECT(baseline >= 1);

    /* Priority sources. The first two streams take GPUPRIO_STREAM_PRIORITIES=critical,low. */
    hipStream_t a, b, c, d;
    MUST(hipStreamCreateWithPriority(&a, 0, -1));
    MUST(hipStreamCreate(&b));
    MUST(hipStreamCreateWithPriority(&c, 0, -1)); /* the list is used up: its own, mapped */
    EXPECT(priority_of(a) == GPUPRIO_PRIORITY_CRITICAL);
    EXPECT(priority_of(b) == GPUPRIO_PRIORITY_LOW);
    EXPECT(priority_of(c) == GPUPRIO_PRIORITY_HIGH);
    int tp;
    EXPECT(api.thread_get_priority(&tp) == -ENOENT);
    EXPECT(api.thread_set_priority(7) == 0);
    EXPECT(api.thread_get_priority(&tp) == 0 && tp == 7);
    EXPECT(priority_of(a) == 7 && priority_of(c) == 7); /* the thread's streams follow */
    MUST(hipStreamCreate(&d));
    EXPECT(priority_of(d) == 7);
    EXPECT(api.stream_set_priority(d, -3) == 0);
    EXPECT(priority_of(d) == -3);
    EXPECT(api.thread_set_priority(8) == 0);
    EXPECT(priority_of(d) == -3 && priority_of(a) == 8); /* the stream's own stays */
    EXPECT(priority_of(NULL) == 8);                      /* this thread's null stream */

    /* Clearing the thread's priority: every queue that took it goes back to what its other
     * sources give (a: the list's critical, c: its creation priority, the null and per-thread
     * streams: normal), d keeps its own, and a stream created now gets nothing from the thread.
     * Another thread's priority and the stream it created are not this thread's to clear. */
    *(void **)&thread_clear_priority = dlsym(RTLD_DEFAULT, "gpuprio_thread_clear_priority");
    EXPECT(thread_clear_priority != NULL);
    if (thread_clear_priority) {
        hipStream_t e, other = NULL;
        pthread_t th;
        pthread_create(&th, NULL, creates_with_priority, &other);
        pthread_join(th, NULL);
        pthread_create(&th, NULL, clears_per_thread, NULL);
        pthread_join(th, NULL);
        EXPECT(other && priority_of(other) == 5);
        EXPECT(thread_clear_priority() == 0);
        EXPECT(api.thread_get_priority(&tp) == -ENOENT);
        EXPECT(priority_of(a) == GPUPRIO_PRIORITY_CRITICAL);
        EXPECT(priority_of(c) == GPUPRIO_PRIORITY_HIGH);
        EXPECT(priority_of(d) == -3);
        EXPECT(priority_of(NULL) == GPUPRIO_PRIORITY_NORMAL);
        EXPECT(other && priority_of(other) == 5);
        MUST(hipStreamCreate(&e));
        EXPECT(priority_of(e) == GPUPRIO_PRIORITY_NORMAL);
        EXPECT(thread_clear_priority() == 0); /* none to clear: still 0, nothing changes */
        EXPECT(api.thread_get_priority(&tp) == -ENOENT);
        EXPECT(priority_of(a) == GPUPRIO_PRIORITY_CRITICAL && priority_of(e) == 0);
        EXPECT(api.thread_set_priority(8) == 0); /* and it can be set again */
        EXPECT(priority_of(a) == 8 && priority_of(e) == 8 && priority_of(NULL) == 8);
        MUST(hipStreamDestroy(e));
        if (other)
            MUST(hipStreamDestroy(other));
    }

    /* Bad arguments. */
    EXPECT(api.stream_set_priority(d, GPUPRIO_PRIORITY_MAX + 1) == -EINVAL);
    EXPECT(api.thread_set_priority(GPUPRIO_PRIORITY_MIN - 1) == -EINVAL);
    EXPECT(api.stream_set_priority((void *)(uintptr_t)0x1234, 0) == -ENOENT);
    EXPECT(api.stream_get_priority(d, NULL) == -EINVAL);
    EXPECT(api.thread_get_priority(NULL) == -EINVAL);
    EXPECT(api.stream_stats(d, NULL) == -EINVAL);
    EXPECT(api.stats(NULL, 1) == -EINVAL);
    MUST(hipStreamDestroy(a));
    MUST(hipStreamDestroy(b));
    MUST(hipStreamDestroy(c));
    MUST(hipStreamDestroy(d));
    EXPECT(api.stats(NULL, 0) == baseline);

    /* Threads that used the null and per-thread streams leave nothing behind. */
    for (int round = 0; round < 5; round++) {
        pthread_t th[8];
        for (int i = 0; i < 8; i++)
            pthread_create(&th[i], NULL, short_lived, NULL);
        for (int i = 0; i < 8; i++)
            pthread_join(th[i], NULL);
    }
    EXPECT(api.stats(NULL, 0) == baseline);

    /* Nor do streams created and destroyed. */
    for (int i = 0; i < 300; i++) {
        hipStream_t s;
        MUST(hipStreamCreate(&s));
        MUST(busy_launch(kernel, 100, 0, s));
        MUST(hipStreamDestroy(s));
    }
    MUST(hipDeviceSynchronize());
    int after = api.stats(NULL, 0);
    EXPECT(after == baseline);
    printf("queues: %d before, %d after 40 threads and 300 streams came and went\n", baseline,
           after);
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
