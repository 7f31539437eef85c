/*
 * gp_log.h - gpuprio's diagnostics on stderr, one line each, prefixed "gpuprio: ".
 *
 * The level (GPUPRIO_LOG: error, warn, info, debug; default warn) is given to it by whoever reads
 * the options (gp_options.c): logging reads no configuration itself, so the options can warn
 * through it without the two depending on each other. The library's messages are how a user
 * learns that something is misconfigured, so each names the problem and what is accepted.
 * Logging never calls the GPU runtime and never changes errno.
 */
#ifndef GPUPRIO_LOG_H
#define GPUPRIO_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* The levels, least verbose first, as GPUPRIO_LOG and each line's prefix spell them. */
#define GP_LOG_LEVELS(X) X(ERROR, "error") X(WARN, "warn") X(INFO, "info") X(DEBUG, "debug")

enum gp_log_level {
#define GP_LOG_LEVEL_ENUM(id, name) GP_LOG_##id,
    GP_LOG_LEVELS(GP_LOG_LEVEL_ENUM)
#undef GP_LOG_LEVEL_ENUM
};

/* The levels' names, indexed by enum gp_log_level, NULL-terminated: GPUPRIO_LOG's choices. */
extern const char *const gp_log_level_names[];

void gp_log(enum gp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether messages of this level are written (to skip gathering what only they report). */
bool gp_log_on(enum gp_log_level level);
/* Messages up to this level are written from now on (default GP_LOG_WARN). */
void gp_log_set_level(enum gp_log_level level);
/* Messages are held back from now on (the shim's constructor, before the variables are read:
 * every preloaded process, `sh` and `cat` included, reads the variables and the configuration
 * file, and only those that use a GPU should say what is wrong with them or with their caps),
 * until gp_log_release writes them, in order: at the process's first call into the GPU runtime.
 * A process that never makes one says nothing of them. */
void gp_log_hold(void);
void gp_log_release(void);

/* Copies at most n bytes of in, up to its first NUL, into out (n + 1 bytes, always terminated),
 * each byte outside printable ASCII (0x20 to 0x7e) as '?': for a name another process wrote (a
 * process's comm, which prctl sets to any bytes), which gp_log, replacing only control bytes
 * below 0x20, would pass on to a terminal as DEL, C1 controls or broken UTF-8. */
void gp_log_printable(char *out, const char *in, size_t n);

#endif /* GPUPRIO_LOG_H */
