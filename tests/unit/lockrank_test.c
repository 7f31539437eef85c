/*
 * lockrank_test.c - the lock hierarchy's checker (src/util/gp_lockrank.h), built in checking
 * mode: locks taken in rank order pass, released in any order; each thread has its own ranks;
 * a lock taken below or at the rank of one held aborts the process with both named. Each case
 * runs in a child process, whose stderr and end are examined.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "gp_lockrank.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

/* Runs fn in a child; returns its wait status, and what it wrote on stderr in out. */
static int in_child(void (*fn)(void), char *out, size_t size)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        fn();
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    for (ssize_t r; n < size - 1 && (r = read(fds[0], out + n, size - 1 - n)) > 0;)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    int status = -1;
    waitpid(pid, &status, 0);
    return status;
}

static void in_order(void)
{
    gp_mutex_lock(&a, GP_RANK_SCHED);
    gp_rwlock_rdlock(&rw, GP_RANK_REGISTRY);
    gp_mutex_lock(&b, GP_RANK_QUEUE);
    gp_mutex_unlock(&a, GP_RANK_SCHED); /* released out of order: fine */
    gp_rwlock_unlock(&rw, GP_RANK_REGISTRY);
    gp_mutex_unlock(&b, GP_RANK_QUEUE);
    gp_mutex_lock(&a, GP_RANK_SCHED); /* nothing held any more */
    gp_mutex_unlock(&a, GP_RANK_SCHED);
}

static void reversed(void)
{
    gp_mutex_lock(&b, GP_RANK_QUEUE);
    gp_mutex_lock(&a, GP_RANK_SCHED);
}

static void same_rank_twice(void)
{
    gp_mutex_lock(&a, GP_RANK_QUEUE);
    gp_mutex_lock(&b, GP_RANK_QUEUE);
}

static void *take_sched(void *arg)
{
    (void)arg;
    gp_mutex_lock(&a, GP_RANK_SCHED);
    gp_mutex_unlock(&a, GP_RANK_SCHED);
    return NULL;
}

/* A lock held by one thread does not rank the locks another takes. */
static void per_thread(void)
{
    gp_mutex_lock(&b, GP_RANK_QUEUE);
    pthread_t t;
    pthread_create(&t, NULL, take_sched, NULL);
    pthread_join(t, NULL);
    gp_mutex_unlock(&b, GP_RANK_QUEUE);
}

static void expect_pass(const char *name, void (*fn)(void))
{
    char err[512];
    int status = in_child(fn, err, sizeof err);
    if (!CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0) || !CHECK(err[0] == '\0'))
        fprintf(stderr, "  %s: status %#x, stderr '%s'\n", name, status, err);
}

static void expect_abort(const char *name, void (*fn)(void), const char *says)
{
    char err[512];
    int status = in_child(fn, err, sizeof err);
    if (!CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) || !CHECK(strstr(err, says)))
        fprintf(stderr, "  %s: status %#x, stderr '%s', expected '%s'\n", name, status, err, says);
}

int main(void)
{
    expect_pass("in order", in_order);
    expect_pass("per thread", per_thread);
    expect_abort("reversed", reversed,
                 "gpuprio: lock order violated: taking SCHED (the scheduling lock");
    expect_abort("reversed names the held lock", reversed, "while holding QUEUE");
    expect_abort("same rank twice", same_rank_twice, "taking QUEUE");
    return check_finish("unit.lockrank");
}
