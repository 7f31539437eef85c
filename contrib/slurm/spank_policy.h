/*
 * spank_policy.h - what the Slurm plugin (spank_gpuprio.c) decides, without Slurm: the site's
 * settings from its plugstack.conf line, and the priority a job's tasks run at.
 *
 * A site writes its policy as words after the plugin's path in plugstack.conf (docs/clusters.md):
 *
 *   library=PATH                the preload library (default: the HIP one of the install): an
 *                               absolute path with no space or colon (LD_PRELOAD's separators)
 *   default=P                   the priority of jobs that ask for none (unset: they run without
 *                               gpuprio)
 *   default.partition.NAME=P    ... in partition NAME; default.qos.NAME=P: of QOS NAME
 *   cap=P                       the highest priority a job may ask for; cap.partition.NAME=P and
 *                               cap.qos.NAME=P for one partition or QOS
 *   over_cap=refuse|clamp       what a job asking above its cap gets: refused (default), or the
 *                               cap with a warning
 *
 * A job's default is its QOS's, else its partition's, else the site's; every cap that applies
 * to it (the site's, its partition's, its QOS's) holds, so the lowest wins. Kept apart from
 * the SPANK glue so that it is unit-tested where Slurm is not installed (unit.spank_policy).
 */
#ifndef GPUPRIO_SPANK_POLICY_H
#define GPUPRIO_SPANK_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#define SP_NAMED_MAX 32 /* partitions and QOSes named, each of defaults and caps */
#define SP_NAME_MAX 64  /* a partition's or QOS's name */
#define SP_PATH_MAX 512

/* "off": the job asks to run without gpuprio (no default applies). */
#define SP_OFF_WORD "off"

enum sp_scope { SP_PARTITION, SP_QOS };

struct sp_named {
    enum sp_scope scope;
    char name[SP_NAME_MAX];
    int priority;
};

struct sp_conf {
    char library[SP_PATH_MAX];
    bool has_default, has_cap;
    int default_priority, cap;
    bool clamp; /* over_cap=clamp */
    struct sp_named defaults[SP_NAMED_MAX], caps[SP_NAMED_MAX];
    size_t ndefaults, ncaps;
};

/*
 * Reads the plugstack.conf words (argc, argv) into conf, library defaulting to default_library.
 * 0, or -EINVAL with one message in why (size bytes) naming the word and what is accepted.
 */
int sp_conf_parse(struct sp_conf *conf, int argc, char **argv, const char *default_library,
                  char *why, size_t size);

/* What a job's task gets. */
enum sp_outcome {
    SP_NONE,    /* run without gpuprio: nothing asked, no default (the environment as it is) */
    SP_OFF,     /* "off": run without gpuprio, even where the job's environment came with it (a
                   step of a batch script that runs under it) */
    SP_RUN,     /* run at *priority */
    SP_CLAMPED, /* asked above its cap, over_cap=clamp: run at the cap (*priority), say so */
    SP_REFUSED, /* asked above its cap, over_cap=refuse: do not run, say so */
};

/*
 * The priority of a task of a job in partition and qos (either NULL when unknown) that asked for
 * asked (a priority, SP_OFF_WORD, or NULL: nothing asked). The cap that applies goes to *cap
 * (with *capped), for messages. A default above the cap is the cap, without a message: it is the
 * site's own setting.
 */
enum sp_outcome sp_resolve(const struct sp_conf *conf, const char *asked, const char *partition,
                           const char *qos, int *priority, bool *capped, int *cap);

/* Whether text is a priority the option accepts (one, or SP_OFF_WORD). */
bool sp_asked_valid(const char *text);

#endif /* GPUPRIO_SPANK_POLICY_H */
