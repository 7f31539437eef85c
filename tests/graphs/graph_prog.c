/*
 * graph_prog.c - what the CUDA and the HIP graph_gates programs share (graph_prog.h): the chain's
 * arguments, the neighbour's FIFO protocol, the cue. Both programs speak the protocol with the one
 * pair of scripts (graph_gates.sh, graph_chaos.sh), so it is written once; what a burst is stays
 * each runtime's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "graph_prog.h"

static unsigned index_of[KERNELS], other_index = 1000, other_index2 = 2000;
long kernel_us = 3000;
void *params[KERNELS][2], *other_params[2] = {&other_index, &kernel_us},
                          *other_params2[2] = {&other_index2, &kernel_us};

void chain_params(void)
{
    for (int i = 0; i < KERNELS; i++) {
        index_of[i] = (unsigned)i + 1;
        params[i][0] = &index_of[i];
        params[i][1] = &kernel_us;
    }
}

void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void drain(void *stream)
{
    int (*stream_drain)(void *, unsigned) =
        (int (*)(void *, unsigned))dlsym(RTLD_DEFAULT, "gpuprio_stream_drain");
    if (stream_drain && stream_drain(stream, 10000) != 0)
        printf("FATAL: gpuprio_stream_drain failed\n");
}

/* A writer that connects, writes its line for an earlier open and closes (the reader of that line
 * closed and opened again in between) gives this open an end of file with no line: open again, as
 * the script's writers always send one more. */
bool line_through(const char *fifo)
{
    char line[16];
    for (;;) {
        FILE *f = fopen(fifo, "r");
        if (!f)
            return false;
        bool got = fgets(line, sizeof line, f) != NULL;
        fclose(f);
        if (got)
            return true;
    }
}

void cue(const char *go)
{
    FILE *f = go ? fopen(go, "w") : NULL;
    if (go && (!f || fputs("go\n", f) < 0 || fclose(f) != 0)) {
        printf("FATAL: cannot cue the neighbour through %s\n", go);
        exit(1);
    }
}

bool high_args(int argc, char **argv, enum high_mode *mode)
{
    if (argc < 3 || argc > 4 || strcmp(argv[1], "high") != 0)
        return false;
    if (argc == 4 && strcmp(argv[3], "exit") != 0 && strcmp(argv[3], "hold") != 0)
        return false;
    *mode = argc == 3 ? HIGH_IDLE : strcmp(argv[3], "exit") == 0 ? HIGH_EXIT : HIGH_HOLD;
    return true;
}

bool neighbour(const char *fifo, enum high_mode mode, void (*five)(void), void (*burst)(void))
{
    printf("ready\n");
    fflush(stdout);
    if (!line_through(fifo)) {
        printf("FATAL: no cue through %s\n", fifo);
        exit(1);
    }
    if (mode == HIGH_HOLD) {
        char line[16];
        int fd = open(fifo, O_RDONLY | O_NONBLOCK);
        if (fd < 0) {
            printf("FATAL: cannot open %s\n", fifo);
            exit(1);
        }
        while (read(fd, line, sizeof line) <= 0)
            five();
        close(fd);
    } else {
        burst();
        if (mode == HIGH_EXIT)
            return false;
    }
    if (!line_through(fifo)) {
        printf("FATAL: no second line through %s\n", fifo);
        exit(1);
    }
    return true;
}

bool run_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fn, arg) != 0 || pthread_join(t, NULL) != 0) {
        printf("FATAL: a thread failed\n");
        return false;
    }
    return true;
}

void say_launch(int n, const char *what)
{
    fprintf(stderr, "graph_gates: launch %d %s at %lld ms\n", n, what, wall_ms());
}

void wait_until_holding(int (*holding)(void))
{
    int ms = 0;
    for (; ms < 10000 && !holding(); ms++)
        sleep_us(1000);
    fprintf(stderr, "graph_gates: the first thread goes on %s\n",
            ms < 10000 ? "while a wait node holds its launches" : "with no wait node holding");
}
