/*
 * opt_probes.h - values worth trying on an option of the table (gp_options.def), derived from
 * its description: both sides of each bound, each word and near misses of it, priorities at and
 * past the scale's ends, lists at and past their length, and text no option takes. Shared by
 * unit.config (the library's reader against the parser) and tests/tools/opt_probes.c
 * (`gpuprio run` against the library).
 *
 * The empty value is not among them: for the library an empty variable is an unset one (the
 * default, silently), while `gpuprio run --window ''` is refused; each side documents its own.
 */
#ifndef GPUPRIO_UNIT_OPT_PROBES_H
#define GPUPRIO_UNIT_OPT_PROBES_H

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gp_options.h"

#define OPT_PROBE_LEN 1024

/* Calls fn(value, arg) for each probe value of d. */
static inline void opt_probes(const struct gp_opt_desc *d, void (*fn)(const char *, void *),
                              void *arg)
{
    static const char *const junk[] = {"abc", " ", "-", "1.5", "0x10", "1e3", "--1", "x"};
    char v[OPT_PROBE_LEN];
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        fn(junk[i], arg);
    switch (d->type) {
    case GP_OPT_TYPE_UINT: {
        unsigned long long lo = d->min, hi = d->max;
        const unsigned long long around[] = {lo - 1, lo, lo + 1, hi - 1, hi, hi + 1};
        for (size_t i = 0; i < sizeof around / sizeof around[0]; i++) {
            if ((i == 0 && lo == 0) || (i == 5 && hi == ~0ULL))
                continue; /* would wrap around */
            snprintf(v, sizeof v, "%llu", around[i]);
            fn(v, arg);
        }
        static const char *const forms[] = {"0%llu", " %llu", "%llu ", "+%llu", "-%llu", "%llu,"};
        for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
            snprintf(v, sizeof v, forms[i], hi);
            fn(v, arg);
        }
        fn("-1", arg);
        fn("18446744073709551616", arg);
        fn("99999999999999999999999", arg);
        break;
    }
    case GP_OPT_TYPE_CHOICE:
        for (int i = 0; d->choices[i]; i++) {
            const char *c = d->choices[i];
            fn(c, arg);
            size_t n = strlen(c);
            for (size_t j = 0; j <= n; j++)
                v[j] = (char)toupper((unsigned char)c[j]);
            fn(v, arg);
            snprintf(v, sizeof v, "%sx", c);
            fn(v, arg);
            snprintf(v, sizeof v, "%.*s", (int)(n - 1), c);
            fn(v, arg);
            snprintf(v, sizeof v, " %s", c);
            fn(v, arg);
            snprintf(v, sizeof v, "%s ", c);
            fn(v, arg);
            if (d->choices[i + 1]) {
                snprintf(v, sizeof v, "%s,%s", c, d->choices[i + 1]);
                fn(v, arg);
            }
        }
        break;
    case GP_OPT_TYPE_PRIORITY: {
        static const char *const p[] = {
            "idle",  "low",  "normal", "high", "critical",   "HIGH",  "Low",   "-1000",  "1000",
            "-1001", "1001", "0",      "+5",   "-5",         " high", "high ", "\thigh", "urgent",
            "10 0",  "1,2",  "highx",  "crit", "2147483648", "-0",    "007"};
        for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
            fn(p[i], arg);
        break;
    }
    case GP_OPT_TYPE_PRIORITY_LIST: {
        static const char *const l[] = {"high",  "high,low", "low, high",   "high,,low", ",",
                                        "high,", ",high",    "high,urgent", "1001,low",  "-5,5"};
        for (size_t i = 0; i < sizeof l / sizeof l[0]; i++)
            fn(l[i], arg);
        /* max items, then one more */
        for (unsigned long long extra = 0; extra < 2; extra++) {
            size_t n = 0;
            for (unsigned long long i = 0; i < d->max + extra && n + 5 < sizeof v; i++)
                n += (size_t)snprintf(v + n, sizeof v - n, "%slow", i ? "," : "");
            fn(v, arg);
        }
        break;
    }
    case GP_OPT_TYPE_PATH:
        fn("/tmp", arg);
        fn("relative/dir", arg);
        fn("with space", arg);
        break;
    case GP_OPT_TYPE_AMOUNT: {
        static const char *const a[] = {"0",    "1",    "0%",   "1%",  "25%",  "100%",
                                        "101%", "%",    "25 %", "-1%", "25%%", "%25",
                                        "2.5%", "1e2%", " 5%",  "5% ", "0x1%", "-1"};
        for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
            fn(a[i], arg);
        snprintf(v, sizeof v, "%llu", (unsigned long long)d->max);
        fn(v, arg);
        snprintf(v, sizeof v, "%llu", (unsigned long long)d->max + 1);
        fn(v, arg);
        break;
    }
    }
}

#endif /* GPUPRIO_UNIT_OPT_PROBES_H */
