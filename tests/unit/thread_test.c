/*
 * thread_test.c - unit.thread: gp_thread_serial (src/util/gp_thread.c) gives every thread of the
 * process its own number, stable within the thread, and never the number of a thread that has
 * ended, even where the C library hands the ended thread's pthread_t to the next one (glibc
 * does: the shim's graph launches told per-thread streams apart by thread, issue 45).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "gp_thread.h"

#define THREADS 8

struct seen {
    uint64_t serial, again;
    pthread_t self;
};

static void *note(void *arg)
{
    struct seen *s = arg;
    s->serial = gp_thread_serial();
    s->again = gp_thread_serial();
    s->self = pthread_self();
    return NULL;
}

int main(void)
{
    struct seen seen[THREADS];
    uint64_t main_serial = gp_thread_serial();
    CHECK(main_serial != 0);
    CHECK_INT(gp_thread_serial(), main_serial);
    int reused = 0;
    for (int i = 0; i < THREADS; i++) { /* one after the other: each joined before the next */
        pthread_t t;
        CHECK_INT(pthread_create(&t, NULL, note, &seen[i]), 0);
        CHECK_INT(pthread_join(t, NULL), 0);
        CHECK(seen[i].serial != 0);
        CHECK_INT(seen[i].again, seen[i].serial);
        CHECK(seen[i].serial != main_serial);
        for (int j = 0; j < i; j++) {
            CHECK(seen[i].serial != seen[j].serial);
            reused += pthread_equal(seen[i].self, seen[j].self) != 0;
        }
    }
    /* Not a requirement, only what makes the check above mean something here. */
    printf("unit.thread: %d of the later threads had an earlier thread's pthread_t\n", reused);
    return check_finish("unit.thread");
}
