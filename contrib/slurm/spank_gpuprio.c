/*
 * spank_gpuprio.c - the Slurm SPANK plugin: `srun --gpu-priority=P` and `#SBATCH
 * --gpu-priority=P` run a job's tasks under gpuprio at priority P (docs/clusters.md).
 *
 * The option is registered in every context (srun, sbatch and salloc, slurmstepd), so srun and
 * sbatch refuse a value that is not a priority before anything is submitted. Slurm carries the
 * value to slurmstepd, where each task, just before it executes the user's program, gets the
 * preload library put in front of its LD_PRELOAD and GPUPRIO_PRIORITY set. The site's policy
 * (defaults and caps per partition and QOS, spank_policy.h) is applied there, on the node, from
 * the node's plugstack.conf: a job learns its partition and QOS from what slurmstepd sets in the
 * job's environment, not from the user. A job refused for asking above its cap fails with a
 * message on its own stderr (the task's, where the user reads it).
 *
 * Nothing else is needed on the node: the jobs of every user meet on the board directory of
 * /etc/gpuprio.conf, which also holds the caps per user that other users' processes honour
 * (this plugin's caps only govern what the option and the environment ask).
 */
#include <slurm/spank.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gp_priority.h"
#include "spank_policy.h"

SPANK_PLUGIN(gpuprio, 1);

#ifndef GPUPRIO_SPANK_DEFAULT_LIBRARY
#error "GPUPRIO_SPANK_DEFAULT_LIBRARY (the preload library's installed path) must be defined"
#endif

static struct sp_conf conf;
static char asked[64]; /* --gpu-priority's value; "" when not given */

static int option_cb(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    if (!sp_asked_valid(optarg) || strlen(optarg) >= sizeof asked) {
        slurm_error("gpuprio: --gpu-priority=%s is not a priority (accepted: %s; or %s to run "
                    "without gpuprio)",
                    optarg ? optarg : "", GP_PRIORITY_ACCEPTED, SP_OFF_WORD);
        return -1;
    }
    snprintf(asked, sizeof asked, "%s", optarg);
    return 0;
}

static struct spank_option option = {
    "gpu-priority",
    "PRIORITY",
    "run the tasks' GPU work at PRIORITY with gpuprio (idle, low, normal, high, critical, an "
    "integer from -1000 to 1000, or off)",
    1,
    0,
    option_cb};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    char why[512];
    if (sp_conf_parse(&conf, ac, av, GPUPRIO_SPANK_DEFAULT_LIBRARY, why, sizeof why) < 0) {
        slurm_error("gpuprio: plugstack.conf: %s", why);
        return -1;
    }
    if (spank_context() == S_CTX_SLURMD || spank_context() == S_CTX_JOB_SCRIPT)
        return 0;
    if (spank_option_register(sp, &option) != ESPANK_SUCCESS) {
        slurm_error("gpuprio: cannot register --gpu-priority");
        return -1;
    }
    return 0;
}

/* The job environment's value of name into buf, or NULL when it has none. */
static const char *job_env(spank_t sp, const char *name, char *buf, int size)
{
    return spank_getenv(sp, name, buf, size) == ESPANK_SUCCESS ? buf : NULL;
}

/* LD_PRELOAD with the library in front, unless it is there already. */
static int preload(spank_t sp)
{
    char old[4096], now[sizeof old + SP_PATH_MAX + 1];
    const char *have = job_env(sp, "LD_PRELOAD", old, sizeof old);
    if (have) {
        /* ld.so splits LD_PRELOAD at spaces and colons. */
        char copy[sizeof old];
        snprintf(copy, sizeof copy, "%s", have);
        char *save = NULL;
        for (char *w = strtok_r(copy, " :", &save); w; w = strtok_r(NULL, " :", &save))
            if (strcmp(w, conf.library) == 0)
                return 0;
    }
    if (snprintf(now, sizeof now, "%s%s%s", conf.library, have && *have ? ":" : "",
                 have ? have : "") >= (int)sizeof now)
        return -1;
    return spank_setenv(sp, "LD_PRELOAD", now, 1) == ESPANK_SUCCESS ? 0 : -1;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!spank_remote(sp))
        return 0;
    char env_asked[64], partition[256], qos[256];
    const char *ask = asked[0] ? asked : NULL, *source = "--gpu-priority";
    if (!ask) {
        /* The user's own GPUPRIO_PRIORITY is an ask too, under the same caps; one that is not a
         * priority asks nothing (the library would ignore it, with a warning). */
        ask = job_env(sp, "GPUPRIO_PRIORITY", env_asked, sizeof env_asked);
        if (ask && !sp_asked_valid(ask))
            ask = NULL;
        source = "GPUPRIO_PRIORITY";
    }
    const char *part = job_env(sp, "SLURM_JOB_PARTITION", partition, sizeof partition);
    const char *q = job_env(sp, "SLURM_JOB_QOS", qos, sizeof qos);
    int priority = 0, cap = 0;
    bool capped = false;
    enum sp_outcome outcome = sp_resolve(&conf, ask, part, q, &priority, &capped, &cap);
    uint32_t job = 0;
    spank_get_item(sp, S_JOB_ID, &job);
    switch (outcome) {
    case SP_NONE:
        return 0;
    case SP_REFUSED:
        /* The task's stderr: the job's error output, where its user looks. */
        fprintf(stderr,
                "gpuprio: job %u refused: %s=%s is above the highest priority this site allows "
                "for its partition %s and QOS %s (%d); ask for %d or less\n",
                job, source, ask, part ? part : "(none)", q ? q : "(none)", cap, cap);
        return -1;
    case SP_CLAMPED:
        fprintf(stderr,
                "gpuprio: job %u: %s=%s is above the highest priority this site allows for its "
                "partition %s and QOS %s (%d); running at %d\n",
                job, source, ask, part ? part : "(none)", q ? q : "(none)", cap, priority);
        break;
    case SP_RUN:
        break;
    }
    char text[16];
    snprintf(text, sizeof text, "%d", priority);
    if (spank_setenv(sp, "GPUPRIO_PRIORITY", text, 1) != ESPANK_SUCCESS || preload(sp) < 0) {
        fprintf(stderr, "gpuprio: job %u: cannot set the task's environment\n", job);
        return -1;
    }
    return 0;
}
