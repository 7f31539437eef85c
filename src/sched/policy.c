/*
 * policy.c - see policy.h.
 */
#include "policy.h"

#include <limits.h>

const char *sched_policy_name(enum sched_policy p)
{
    return p == SCHED_POLICY_HPF ? "hpf" : "passthrough";
}

/*
 * Device by device, in order of first appearance: the highest active priority, then the
 * decisions. O(queues x devices) without allocating; devices are few.
 */
void sched_policy_hpf(struct sched_queue *q, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = q[j].device != q[i].device;
        if (!first)
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

void sched_policy_decide(enum sched_policy p, struct sched_queue *q, size_t n)
{
    if (p == SCHED_POLICY_HPF) {
        sched_policy_hpf(q, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        q[i].suspend = q[i].throttle = q[i].track = false;
}
