/*
 * gp_options.c - see gp_options.h. The descriptions are gp_options.def expanded into one table;
 * reading goes through gp_config.c, so a number or a word is refused with the same message
 * whichever variable it was given to. Priorities are the scheduler's scale (priority.h), parsed
 * here so that the CUDA shim and the scheduler share one reading of GPUPRIO_PRIORITY.
 */
#include "gp_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_config.h"
#include "gp_log.h"
#include "gp_priority.h"

/* Each TYPE and RUN of the list becomes the designated initializers of its fields. */
#define GP_UINT(lo, hi, u) .type = GP_OPT_TYPE_UINT, .min = (lo), .max = (hi), .unit = (u)
#define GP_WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define GP_CHOICE(...) .type = GP_OPT_TYPE_CHOICE, .choices = GP_WORDS(__VA_ARGS__)
#define GP_CHOICE_OF(names) .type = GP_OPT_TYPE_CHOICE, .choices = (names)
#define GP_PRIORITY .type = GP_OPT_TYPE_PRIORITY
#define GP_PRIORITY_LIST(n) .type = GP_OPT_TYPE_PRIORITY_LIST, .max = (n)
#define GP_PATH(words) .type = GP_OPT_TYPE_PATH, .accepted = (words)
#define GP_AMOUNT(hi, u) .type = GP_OPT_TYPE_AMOUNT, .max = (hi), .unit = (u)
#define GP_RUN(flag, letter, metavar)                                                              \
    .run_flag = (flag), .run_short = (letter), .run_metavar = (metavar)
#define GP_NO_RUN .run_flag = NULL

static const struct gp_opt_desc table[GP_OPT_COUNT] = {
#define GP_OPT(id, nm, type, dflt, run, text)                                                      \
    [GP_OPT_##id] = {.name = (nm), type, .def = (dflt), run, .doc = (text)},
#include "gp_options.def"
};

static struct {
    bool loaded;
    bool set; /* priority, list, amount: a valid value was given */
    union gp_opt_value v;
    char *owned; /* path: our copy of the text, which the application may change */
} values[GP_OPT_COUNT];

const struct gp_opt_desc *gp_opt_desc(enum gp_opt id)
{
    return &table[id];
}

int gp_opt_find(const char *name)
{
    for (int i = 0; i < GP_OPT_COUNT; i++)
        if (strcmp(table[i].name, name) == 0)
            return i;
    return -ENOENT;
}

int gp_opt_parse(enum gp_opt id, const char *text, union gp_opt_value *out)
{
    const struct gp_opt_desc *d = &table[id];
    union gp_opt_value v;
    if (!text || !*text)
        return -EINVAL;
    switch (d->type) {
    case GP_OPT_TYPE_UINT:
        if (!gp_parse_uint(text, d->min, d->max, &v.u))
            return -EINVAL;
        break;
    case GP_OPT_TYPE_CHOICE:
        if ((v.choice = gp_parse_choice(text, d->choices)) < 0)
            return -EINVAL;
        break;
    case GP_OPT_TYPE_PRIORITY:
        if (gp_priority_parse(text, &v.priority) != 0)
            return -EINVAL;
        break;
    case GP_OPT_TYPE_PRIORITY_LIST:
        v.list.n = gp_priority_parse_list(text, v.list.v,
                                          d->max < GP_OPT_LIST_MAX ? (int)d->max : GP_OPT_LIST_MAX);
        if (v.list.n < 0)
            return -EINVAL;
        break;
    case GP_OPT_TYPE_PATH:
        v.str = text;
        break;
    case GP_OPT_TYPE_AMOUNT: {
        size_t n = strlen(text);
        char number[32];
        v.amount.percent = text[n - 1] == '%';
        if (v.amount.percent)
            n--;
        if (n == 0 || n >= sizeof number)
            return -EINVAL;
        memcpy(number, text, n);
        number[n] = '\0';
        uint64_t u;
        if (!gp_parse_uint(number, 0, v.amount.percent ? 100 : d->max, &u))
            return -EINVAL;
        v.amount.value = (uint32_t)u;
        break;
    }
    }
    if (out)
        *out = v;
    return 0;
}

int gp_opt_accepted(enum gp_opt id, char *buf, size_t size)
{
    const struct gp_opt_desc *d = &table[id];
    switch (d->type) {
    case GP_OPT_TYPE_UINT:
        return snprintf(buf, size, "a whole number of %s from %llu to %llu", d->unit,
                        (unsigned long long)d->min, (unsigned long long)d->max);
    case GP_OPT_TYPE_CHOICE: {
        int n = 0;
        if (size)
            buf[0] = '\0';
        for (int i = 0; d->choices[i]; i++) {
            size_t used = (size_t)n < size ? (size_t)n : size;
            n += snprintf(buf + used, size - used, "%s%s", i ? ", " : "", d->choices[i]);
        }
        return n;
    }
    case GP_OPT_TYPE_PRIORITY:
        return snprintf(buf, size, "%s", GP_PRIORITY_ACCEPTED);
    case GP_OPT_TYPE_PRIORITY_LIST:
        return snprintf(buf, size,
                        "a comma-separated list of at most %llu priorities, "
                        "each " GP_PRIORITY_ACCEPTED,
                        (unsigned long long)d->max);
    case GP_OPT_TYPE_PATH:
        return snprintf(buf, size, "%s", d->accepted);
    case GP_OPT_TYPE_AMOUNT:
        return snprintf(buf, size,
                        "a whole number of %s from 0 to %llu or a percentage from 0%% to 100%%",
                        d->unit, (unsigned long long)d->max);
    }
    return 0;
}

static void load(enum gp_opt id)
{
    const struct gp_opt_desc *d = &table[id];
    union gp_opt_value def = {0};
    if (d->def)
        gp_opt_parse(id, d->def, &def); /* accepted: unit.config checks every default */
    free(values[id].owned);
    values[id].owned = NULL;
    values[id].set = false;
    values[id].v = def;
    values[id].loaded = true;

    /* Its own warning at the default level, whatever an earlier read set. */
    if (id == GP_OPT_LOG)
        gp_log_set_level((enum gp_log_level)def.choice);
    if (gp_config_ignored(d->name))
        gp_log(GP_LOG_WARN,
               "%s is ignored: this program runs with privileges its user does not have (setuid, "
               "setgid or file capabilities), whose environment may not choose what it loads, "
               "reads or asks for",
               d->name);
    switch (d->type) {
    case GP_OPT_TYPE_UINT:
        values[id].v.u = gp_config_uint(d->name, d->min, d->max, def.u, d->unit);
        break;
    case GP_OPT_TYPE_CHOICE:
        values[id].v.choice = gp_config_choice(d->name, d->choices, def.choice);
        break;
    default: {
        const char *text = gp_config_get(d->name);
        union gp_opt_value v;
        if (!text)
            break;
        if (gp_opt_parse(id, text, &v) == 0) {
            if (d->type == GP_OPT_TYPE_PATH && (values[id].owned = strdup(text)))
                v.str = values[id].owned;
            values[id].v = v;
            values[id].set = true;
            break;
        }
        char accepted[512];
        gp_opt_accepted(id, accepted, sizeof accepted);
        if (d->type == GP_OPT_TYPE_PRIORITY)
            gp_log(GP_LOG_WARN,
                   "%s='%s' is not a priority: expected %s; streams keep their own "
                   "priorities",
                   d->name, text, accepted);
        else
            gp_log(GP_LOG_WARN, "%s='%s' is not %s; ignored", d->name, text, accepted);
    }
    }
    if (id == GP_OPT_LOG)
        gp_log_set_level((enum gp_log_level)values[id].v.choice);
}

void gp_opts_load(void)
{
    for (int i = 0; i < GP_OPT_COUNT; i++)
        load((enum gp_opt)i);
}

static const union gp_opt_value *value(enum gp_opt id)
{
    if (!values[id].loaded)
        load(id);
    return &values[id].v;
}

uint64_t gp_opt_uint(enum gp_opt id)
{
    return value(id)->u;
}

int gp_opt_choice(enum gp_opt id)
{
    return value(id)->choice;
}

bool gp_opt_priority(enum gp_opt id, int *out)
{
    const union gp_opt_value *v = value(id);
    if (values[id].set)
        *out = v->priority;
    return values[id].set;
}

int gp_opt_priority_list(enum gp_opt id, const int **out)
{
    const union gp_opt_value *v = value(id);
    *out = v->list.v;
    return values[id].set ? v->list.n : 0;
}

bool gp_opt_amount(enum gp_opt id, struct gp_amount *out)
{
    const union gp_opt_value *v = value(id);
    if (values[id].set)
        *out = v->amount;
    return values[id].set;
}

unsigned gp_amount_of(const struct gp_amount *a, unsigned total)
{
    return a->percent ? (unsigned)(((uint64_t)a->value * total + 99) / 100) : a->value;
}

const char *gp_opt_str(enum gp_opt id)
{
    return value(id)->str;
}
