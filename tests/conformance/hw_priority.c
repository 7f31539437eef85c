/*
 * hw_priority.c - stream priorities reach the hardware: streams of different priorities never
 * share a hardware queue, and the dispatcher starts the most urgent waiting kernel first.
 *
 * ROCm (clr) keeps a pool of hardware queues per stream priority, and AMD's command processor
 * dispatches from the more urgent queues first; a running kernel is never preempted. Both show
 * through the API (docs/simulator.md, "Hardware model"):
 *   - pools: with the null stream's queue busy behind a held kernel (conf.h), a host function on
 *     a new high-priority non-blocking stream runs at once (fault "pools-shared" would put the
 *     stream on the null stream's queue, behind the kernel);
 *   - dispatch: while a held kernel has the device's one compute slot, a kernel from a
 *     least-priority stream asks for the slot, then one from a greatest-priority stream; the
 *     latter runs first when the slot frees (fault "priority-ignored": in the order they asked).
 * The sleeps between submissions give each kernel time to reach the head of its hardware queue
 * and ask for the slot; the slot stays taken however long they take.
 */
#include "conf.h"

static conf_log order;
static atomic_int ran;
static conf_hold busy;

int main(void)
{
    conf_init();
    int least = 99, greatest = 99;
    SHOW("hipDeviceGetStreamPriorityRange", hipDeviceGetStreamPriorityRange(&least, &greatest));
    printf("least %d, greatest %d\n", least, greatest);

    printf("-- a pool of hardware queues per priority\n");
    hipStream_t n[3], high;
    for (int i = 0; i < 3; i++)
        MUST(hipStreamCreateWithFlags(&n[i], hipStreamNonBlocking));
    MUST(hipStreamCreateWithPriority(&high, hipStreamNonBlocking, greatest));
    MUST(conf_launch_hold(NULL, &busy));
    conf_hset set = {&ran, 1};
    MUST(hipLaunchHostFunc(high, conf_host_set, &set));
    printf("high stream's host function ran beside the null stream's kernel: %s\n",
           conf_yes(conf_await(&ran, 1, 2000)));
    conf_release(&busy);
    MUST(hipDeviceSynchronize());

    printf("-- the most urgent waiting kernel starts first\n");
    hipStream_t low_a, low_b;
    MUST(hipStreamCreateWithPriority(&low_a, hipStreamNonBlocking, least));
    MUST(hipStreamCreateWithPriority(&low_b, hipStreamNonBlocking, least));
    conf_log_reset(&order);
    MUST(conf_launch_log(low_a, &order, 1, 0));
    MUST(conf_launch_hold(low_a, &busy));
    if (!conf_await(&busy.started, 1, 2000))
        printf("held kernel did not start within 2 s\n");
    MUST(conf_launch_log(low_b, &order, 2, 0));
    conf_sleep_ms(30);
    MUST(conf_launch_log(high, &order, 3, 0));
    conf_sleep_ms(30);
    conf_release(&busy);
    SHOW("hipDeviceSynchronize", hipDeviceSynchronize());
    conf_log_print("start order", &order);

    for (int i = 0; i < 3; i++)
        MUST(hipStreamDestroy(n[i]));
    MUST(hipStreamDestroy(high));
    MUST(hipStreamDestroy(low_a));
    MUST(hipStreamDestroy(low_b));
    return 0;
}
