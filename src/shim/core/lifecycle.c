/*
 * lifecycle.c - the library's start and what a forked child must forget, the same for every
 * platform's shim.
 *
 * The constructor only reads configuration (and lets the platform settle what its runtime reads
 * when it starts: before_runtime) and hands the scheduler the platform's markers and device
 * identity: it makes no runtime call and starts no thread (the runtime is bound on the
 * application's first call that reaches for it, entries.c). A forked child keeps none of the
 * parent's scheduling state: its thread ids, markers (events of the parent's runtime state),
 * queues and board slots are the parent's.
 */
#include <pthread.h>

#include "core.h"
#include "gp_log.h"
#include "gp_options.h"
#include "gp_thread.h"
#include "scheduler.h"

static void after_fork_child(void)
{
    gp_tid_forget();
    core_shim.platform->markers_after_fork();
    sched_reset();
    xq_reset();
}

__attribute__((constructor)) static void core_load(void)
{
    /* What is wrong with the variables, the configuration file and the caps is said at the
     * first runtime call, once: not by every process of a script (sh, cat, timeout, under
     * `gpuprio run` or a container's LD_PRELOAD) that uses no GPU. */
    gp_log_hold();
    gp_opts_load();
    if (core_shim.platform->before_runtime)
        core_shim.platform->before_runtime();
    sched_configure(core_markers());
    sched_set_device_ops(&(struct sb_device_ops){.key = core_shim.platform->device_key,
                                                 .gates_prepare = core_gates_prepare,
                                                 .mps = core_shim.platform->mps ? core_mps : NULL});
    pthread_atfork(NULL, NULL, after_fork_child);
}
