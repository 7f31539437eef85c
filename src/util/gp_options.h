/*
 * gp_options.h - the GPUPRIO_* variables (the list is gp_options.def): reading them, once, and
 * their values through typed accessors; and, for `gpuprio run` and the tests, each one's
 * description and parser, so that what the command accepts is what the library accepts.
 *
 * The library reads every variable from its constructor (gp_opts_load), before any thread of
 * the application could ask. A bad value gives one warning naming the variable, the value and
 * what is accepted (held back, in the library, until the process's first GPU call: gp_log.h),
 * and the default is used: configuration never stops the application.
 */
#ifndef GPUPRIO_OPTIONS_H
#define GPUPRIO_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gp_opt {
#define GP_OPT(id, ...) GP_OPT_##id,
#include "gp_options.def"
    GP_OPT_COUNT
};

enum gp_opt_type {
    GP_OPT_TYPE_UINT,
    GP_OPT_TYPE_CHOICE,
    GP_OPT_TYPE_PRIORITY,
    GP_OPT_TYPE_PRIORITY_LIST,
    GP_OPT_TYPE_PATH,
    GP_OPT_TYPE_AMOUNT,
};

/* An amount of something the device has, as a count or as a share of what it has. */
struct gp_amount {
    uint32_t value;
    bool percent; /* value is a percentage (0..100) */
};

/* The most priorities a list option may hold (each list's own maximum is at most this). */
#define GP_OPT_LIST_MAX 64

/* One variable, as gp_options.def gives it. */
struct gp_opt_desc {
    const char *name; /* GPUPRIO_... */
    enum gp_opt_type type;
    const char *def;            /* the default as text; NULL: unset */
    uint64_t min, max;          /* uint: the range; priority list: the most items; amount: the
                                 * largest count */
    const char *unit;           /* uint, amount: what the number counts */
    const char *const *choices; /* choice: the words, NULL-terminated */
    const char *accepted;       /* path: what is expected, in words */
    const char *run_flag;       /* `gpuprio run --FLAG` sets it; NULL: no option does */
    char run_short;             /* the option's one-letter form, or 0 */
    const char *run_metavar;    /* what the option's value is called in --help */
    const char *doc;            /* what it is for, in a line */
};

/* A parsed value. */
union gp_opt_value {
    uint64_t u;   /* uint */
    int choice;   /* choice: the index among the words */
    int priority; /* priority */
    struct {
        int n;
        int v[GP_OPT_LIST_MAX];
    } list;                  /* priority list */
    const char *str;         /* path: the text parsed (not copied) */
    struct gp_amount amount; /* amount */
};

const struct gp_opt_desc *gp_opt_desc(enum gp_opt id);
/* The variable called name, or -ENOENT. */
int gp_opt_find(const char *name);
/* Parses text as id's variable would be; 0, or -EINVAL when it is not accepted (empty text
 * never is: an empty variable counts as unset). out may be NULL. */
int gp_opt_parse(enum gp_opt id, const char *text, union gp_opt_value *out);
/* What id accepts, in words, for messages and --help ("a whole number of commands from 1 to
 * 1024", "hpf, passthrough", ...). The length it needed, as snprintf. */
int gp_opt_accepted(enum gp_opt id, char *buf, size_t size);

/*
 * Reads every variable, GPUPRIO_LOG first (and sets gp_log's level from it), warning once per
 * bad value. From the library constructor; again to re-read (tests). A program that never calls
 * it (the gpuprio command) reads each variable on its first use instead, and only those it uses;
 * that is not thread-safe, which is why the library reads them all up front.
 */
void gp_opts_load(void);

/* The values read. Each accessor is for its type only. */
uint64_t gp_opt_uint(enum gp_opt id);
/* The index among the option's words (its enum's value). */
int gp_opt_choice(enum gp_opt id);
/* Whether the variable gives a priority (it is set and valid); *out is the priority if so. */
bool gp_opt_priority(enum gp_opt id, int *out);
/* The number of priorities the variable gives (0: unset or invalid); *out points at them. */
int gp_opt_priority_list(enum gp_opt id, const int **out);
/* Whether the variable gives an amount (it is set and valid); *out is the amount if so. */
bool gp_opt_amount(enum gp_opt id, struct gp_amount *out);
/* How many of `total` things an amount stands for: a count as it is, a percentage of total
 * rounded up (so that any share above 0% is at least one). */
unsigned gp_amount_of(const struct gp_amount *a, unsigned total);
/* The text, or the default, or NULL when neither is set. */
const char *gp_opt_str(enum gp_opt id);

#endif /* GPUPRIO_OPTIONS_H */
