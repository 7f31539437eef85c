/*
 * policy.c - see policy.h.
 */
#include "policy.h"

#include <limits.h>

const char *sched_policy_name(enum sched_policy p)
{
    return p == SCHED_POLICY_HPF ? "hpf" : p == SCHED_POLICY_SHARE ? "share" : "passthrough";
}

/* Whether q[i] is its device's first queue: the policies decide device by device from there. */
static bool first_of_device(const struct sched_queue *q, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (q[j].device == q[i].device)
            return false;
    return true;
}

/*
 * Device by device, in order of first appearance: the highest active priority, then the
 * decisions. O(queues x devices) without allocating; devices are few.
 */
void sched_policy_hpf(struct sched_queue *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!first_of_device(q, i))
            continue;
        int top_active = INT_MIN, top = INT_MIN, bottom = INT_MAX;
        for (size_t j = i; j < n; j++) {
            if (q[j].device != q[i].device)
                continue;
            if (q[j].priority > top)
                top = q[j].priority;
            if (q[j].priority < bottom)
                bottom = q[j].priority;
            if (q[j].active && q[j].priority > top_active)
                top_active = q[j].priority;
        }
        for (size_t j = i; j < n; j++)
            if (q[j].device == q[i].device) {
                q[j].suspend = q[j].priority < top_active;
                q[j].throttle = q[j].priority < top;
                q[j].track = top != bottom;
            }
    }
}

void sched_policy_share(struct sched_queue *q, size_t n)
{
    sched_policy_hpf(q, n);
    for (size_t i = 0; i < n; i++) {
        if (!first_of_device(q, i))
            continue;
        /* The running group: the active queues not held back by a higher one. Every queue is
         * tracked (activity is known only so) and throttled (at Level 2 that is gates, which
         * cost nothing until they close), also alone: a queue that ran deep before another one
         * came could not be made to wait its turn. */
        size_t running = 0;
        uint64_t least = UINT64_MAX;
        for (size_t j = i; j < n; j++) {
            if (q[j].device != q[i].device)
                continue;
            q[j].track = q[j].throttle = true;
            if (q[j].active && !q[j].suspend) {
                running++;
                if (q[j].vtime < least)
                    least = q[j].vtime;
            }
        }
        size_t turn = n, least_served = n; /* whose turn it is */
        for (size_t j = i; j < n; j++) {
            if (q[j].device != q[i].device || !q[j].active || q[j].suspend)
                continue;
            if (q[j].running && q[j].vtime - least <= SCHED_SHARE_QUANTUM_NS &&
                (turn == n || q[j].identity > q[turn].identity))
                turn = j;
            if (q[j].vtime == least &&
                (least_served == n || q[j].identity > q[least_served].identity))
                least_served = j;
        }
        if (turn == n)
            turn = least_served;
        /* The highest priority owed its share: it runs, and every active queue above it waits. */
        int owed = INT_MIN;
        for (size_t j = i; j < n; j++)
            if (q[j].device == q[i].device && q[j].active && q[j].suspend && q[j].owed &&
                q[j].priority > owed)
                owed = q[j].priority;
        for (size_t j = i; j < n; j++) {
            if (q[j].device != q[i].device)
                continue;
            if (owed != INT_MIN) {
                if (q[j].priority == owed && q[j].active)
                    q[j].suspend = false;
                else if (q[j].priority > owed && q[j].active)
                    q[j].suspend = true;
            } else if (running > 1 && q[j].active && !q[j].suspend) {
                q[j].suspend = j != turn;
            }
        }
    }
}

void sched_policy_decide(enum sched_policy p, struct sched_queue *q, size_t n)
{
    if (p == SCHED_POLICY_HPF) {
        sched_policy_hpf(q, n);
        return;
    }
    if (p == SCHED_POLICY_SHARE) {
        sched_policy_share(q, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        q[i].suspend = q[i].throttle = q[i].track = false;
}
