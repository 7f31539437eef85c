/*
 * cap_paths.c - tenant.cap_paths: a user capped at `low` by the administrator's file
 * (GPUPRIO_CONFIG, written by the test) asks for more by every path a priority enters by, and
 * runs at the cap each time: GPUPRIO_PRIORITY=critical (the environment), a stream created with
 * the runtime's greatest priority (stream creation), gpuprio_thread_set_priority and
 * gpuprio_stream_set_priority (the API). A priority at or below the cap is kept as asked. The
 * stream created after the thread asked for critical gets the hardware priority of the cap, not
 * of critical. (`gpuprio set`, the fifth path, is tools.top_set's.) Prints "capped" when the
 * library said so once, on stderr, which cap_paths.sh checks.
 *
 *   cap_paths  (under LD_PRELOAD, GPUPRIO_PRIORITY=critical, GPUPRIO_CONFIG capping this user)
 */
#include "../sched/sched_test.h"

int main(void)
{
    struct gp_api api = gp_api_find();
    int p = 0;
    hipStream_t env, created, named;
    MUST(hipStreamCreate(&env)); /* GPUPRIO_PRIORITY=critical */
    EXPECT(api.stream_get_priority(env, &p) == 0 && p == GPUPRIO_PRIORITY_LOW);
    MUST(hipStreamCreateWithPriority(&created, 0, -1)); /* the runtime's greatest */
    EXPECT(api.stream_get_priority(created, &p) == 0 && p == GPUPRIO_PRIORITY_LOW);
    MUST(hipStreamCreate(&named));
    EXPECT(api.stream_set_priority(named, GPUPRIO_PRIORITY_CRITICAL) == 0);
    EXPECT(api.stream_get_priority(named, &p) == 0 && p == GPUPRIO_PRIORITY_LOW);
    EXPECT(api.stream_set_priority(named, GPUPRIO_PRIORITY_IDLE) == 0); /* below: as asked */
    EXPECT(api.stream_get_priority(named, &p) == 0 && p == GPUPRIO_PRIORITY_IDLE);
    EXPECT(api.thread_set_priority(GPUPRIO_PRIORITY_HIGH) == 0);
    EXPECT(api.thread_get_priority(&p) == 0 && p == GPUPRIO_PRIORITY_LOW);
    hipStream_t by_thread;
    MUST(hipStreamCreate(&by_thread));
    EXPECT(api.stream_get_priority(by_thread, &p) == 0 && p == GPUPRIO_PRIORITY_LOW);
    int hw = 99;
    MUST(hipStreamGetPriority(by_thread, &hw));
    EXPECT(hw == hip_priority_of(GPUPRIO_PRIORITY_LOW)); /* not critical's */
    MUST(hipStreamDestroy(env));
    MUST(hipStreamDestroy(created));
    MUST(hipStreamDestroy(named));
    MUST(hipStreamDestroy(by_thread));
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
