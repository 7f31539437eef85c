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

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gp_priority.h"
#include "spank_policy.h"

SPANK_PLUGIN(gpuprio, 1);

#ifndef GPUPRIO_SPANK_DEFAULT_LIBRARY
#error "GPUPRIO_SPANK_DEFAULT_LIBRARY (the preload library's installed path) must be defined"
#endif

static struct sp_conf conf;
static char asked[64]; /* --gpu-priority's value; "" when not given */

static int option_cb(int val, const char *value, int remote)
{
    (void)val;
    (void)remote;
    if (!sp_asked_valid(value) || strlen(value) >= sizeof asked) {
        slurm_error("gpuprio: --gpu-priority=%s is not a priority (accepted: %s; or %s to run "
                    "without gpuprio)",
                    value ? value : "", GP_PRIORITY_ACCEPTED, SP_OFF_WORD);
        return -1;
    }
    snprintf(asked, sizeof asked, "%s", value);
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

/* The job's LD_PRELOAD, however long (malloc'd; "" when unset), or NULL where it cannot be read:
 * a value never read whole must not be overwritten by one without the user's libraries. */
static char *job_preload(spank_t sp)
{
    for (int size = 4096; size <= 1 << 20; size *= 4) {
        char *buf = malloc((size_t)size);
        if (!buf)
            return NULL;
        spank_err_t r = spank_getenv(sp, "LD_PRELOAD", buf, size);
        if (r == ESPANK_SUCCESS)
            return buf;
        free(buf);
        if (r == ESPANK_ENV_NOEXIST)
            return strdup("");
        if (r != ESPANK_NOSPACE)
            return NULL;
    }
    return NULL;
}

/* LD_PRELOAD's words (ld.so splits it at spaces and colons) but the library's, in order, into to
 * (strlen(from) + 1 bytes): whether the library was one of them; -1 out of memory. */
static int without_library(const char *from, char *to)
{
    char *copy = strdup(from), *save = NULL;
    int found = 0;
    to[0] = '\0';
    if (!copy)
        return -1;
    for (char *w = strtok_r(copy, " :", &save); w; w = strtok_r(NULL, " :", &save)) {
        if (strcmp(w, conf.library) == 0)
            found = 1;
        else
            strcat(strcat(to, to[0] ? ":" : ""), w);
    }
    free(copy);
    return found;
}

/* LD_PRELOAD with the library in front, unless it is there already; with off, without it. */
static int preload(spank_t sp, bool off)
{
    char *have = job_preload(sp);
    if (!have)
        return -1;
    size_t size = strlen(have) + SP_PATH_MAX + 2;
    char *rest = malloc(size), *now = malloc(size);
    int rc = -1;
    int found = rest && now ? without_library(have, rest) : -1;
    if (found < 0)
        goto out;
    if (off) {
        rc = 0;
        if (found)
            rc = (rest[0] ? spank_setenv(sp, "LD_PRELOAD", rest, 1)
                          : spank_unsetenv(sp, "LD_PRELOAD")) == ESPANK_SUCCESS
                     ? 0
                     : -1;
        goto out;
    }
    if (found) { /* there already */
        rc = 0;
        goto out;
    }
    snprintf(now, size, "%s%s%s", conf.library, have[0] ? ":" : "", have);
    rc = spank_setenv(sp, "LD_PRELOAD", now, 1) == ESPANK_SUCCESS ? 0 : -1;
out:
    free(have);
    free(rest);
    free(now);
    return rc;
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
    case SP_OFF:
        /* A step of a batch script that runs under gpuprio inherits its environment. */
        if (preload(sp, true) < 0 || spank_unsetenv(sp, "GPUPRIO_PRIORITY") != ESPANK_SUCCESS) {
            fprintf(stderr, "gpuprio: job %u: cannot take gpuprio out of the task's environment\n",
                    job);
            return -1;
        }
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
    if (access(conf.library, R_OK) != 0) {
        fprintf(stderr,
                "gpuprio: job %u runs without gpuprio: its library %s cannot be read on this node "
                "(%s; plugstack.conf's library= names it)\n",
                job, conf.library, strerror(errno));
        return 0;
    }
    char text[16];
    snprintf(text, sizeof text, "%d", priority);
    if (spank_setenv(sp, "GPUPRIO_PRIORITY", text, 1) != ESPANK_SUCCESS || preload(sp, false) < 0) {
        fprintf(stderr, "gpuprio: job %u: cannot set the task's environment\n", job);
        return -1;
    }
    return 0;
}
