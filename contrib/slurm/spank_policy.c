/*
 * spank_policy.c - see spank_policy.h.
 */
#include "spank_policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gp_priority.h"
#include "gpuprio.h"

#define SP_ACCEPTED                                                                                \
    "library=PATH, default=P, default.partition.NAME=P, default.qos.NAME=P, cap=P, "               \
    "cap.partition.NAME=P, cap.qos.NAME=P, over_cap=refuse|clamp"

/* Parses "partition.NAME" or "qos.NAME" (rest, after "default." or "cap.") into n. */
static int parse_named(const char *rest, size_t len, struct sp_named *n)
{
    static const struct {
        const char *prefix;
        enum sp_scope scope;
    } scopes[] = {{"partition.", SP_PARTITION}, {"qos.", SP_QOS}};
    for (size_t i = 0; i < sizeof scopes / sizeof scopes[0]; i++) {
        size_t plen = strlen(scopes[i].prefix);
        if (len > plen && strncmp(rest, scopes[i].prefix, plen) == 0) {
            size_t nlen = len - plen;
            if (nlen >= sizeof n->name)
                return -ENAMETOOLONG;
            memcpy(n->name, rest + plen, nlen);
            n->name[nlen] = '\0';
            n->scope = scopes[i].scope;
            return 0;
        }
    }
    return -EINVAL;
}

static int add_named(struct sp_named *list, size_t *n, const struct sp_named *item,
                     const char *word, char *why, size_t size)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i].scope == item->scope && strcmp(list[i].name, item->name) == 0) {
            snprintf(why, size, "'%s' sets it a second time", word);
            return -EINVAL;
        }
    if (*n == SP_NAMED_MAX) {
        snprintf(why, size, "'%s': at most %d partitions and QOSes each for defaults and caps",
                 word, SP_NAMED_MAX);
        return -EINVAL;
    }
    list[(*n)++] = *item;
    return 0;
}

int sp_conf_parse(struct sp_conf *conf, int argc, char **argv, const char *default_library,
                  char *why, size_t size)
{
    memset(conf, 0, sizeof *conf);
    snprintf(conf->library, sizeof conf->library, "%s", default_library);
    bool seen_library = false, seen_over = false;
    for (int i = 0; i < argc; i++) {
        const char *word = argv[i], *eq = strchr(word, '=');
        if (!eq || eq == word) {
            snprintf(why, size, "'%s' is not KEY=VALUE (accepted: %s)", word, SP_ACCEPTED);
            return -EINVAL;
        }
        size_t klen = (size_t)(eq - word);
        const char *value = eq + 1;
        if (klen == 7 && strncmp(word, "library", 7) == 0) {
            if (seen_library || value[0] != '/' || strlen(value) >= sizeof conf->library ||
                strpbrk(value, " \t:")) {
                snprintf(why, size,
                         "'%s': library takes an absolute path without spaces or colons (which "
                         "split LD_PRELOAD), once",
                         word);
                return -EINVAL;
            }
            snprintf(conf->library, sizeof conf->library, "%s", value);
            seen_library = true;
            continue;
        }
        if (klen == 8 && strncmp(word, "over_cap", 8) == 0) {
            if (seen_over || (strcmp(value, "refuse") != 0 && strcmp(value, "clamp") != 0)) {
                snprintf(why, size, "'%s': over_cap takes refuse or clamp, once", word);
                return -EINVAL;
            }
            conf->clamp = strcmp(value, "clamp") == 0;
            seen_over = true;
            continue;
        }
        bool is_default = klen >= 7 && strncmp(word, "default", 7) == 0;
        bool is_cap = !is_default && klen >= 3 && strncmp(word, "cap", 3) == 0;
        size_t base = is_default ? 7 : 3;
        if ((!is_default && !is_cap) || (klen > base && word[base] != '.')) {
            snprintf(why, size, "'%s': unknown key (accepted: %s)", word, SP_ACCEPTED);
            return -EINVAL;
        }
        int p;
        if (gp_priority_parse(value, &p) < 0) {
            snprintf(why, size, "'%s': '%s' is not a priority (accepted: %s)", word, value,
                     GP_PRIORITY_ACCEPTED);
            return -EINVAL;
        }
        if (klen == base) {
            bool *has = is_default ? &conf->has_default : &conf->has_cap;
            if (*has) {
                snprintf(why, size, "'%s' sets it a second time", word);
                return -EINVAL;
            }
            *has = true;
            *(is_default ? &conf->default_priority : &conf->cap) = p;
            continue;
        }
        struct sp_named n = {.priority = p};
        int rc = parse_named(word + base + 1, klen - base - 1, &n);
        if (rc == -ENAMETOOLONG) {
            snprintf(why, size, "'%s': a partition's or QOS's name is at most %d bytes", word,
                     SP_NAME_MAX - 1);
            return -EINVAL;
        }
        if (rc < 0) {
            snprintf(why, size, "'%s': unknown key (accepted: %s)", word, SP_ACCEPTED);
            return -EINVAL;
        }
        rc = is_default ? add_named(conf->defaults, &conf->ndefaults, &n, word, why, size)
                        : add_named(conf->caps, &conf->ncaps, &n, word, why, size);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static const struct sp_named *find(const struct sp_named *list, size_t n, enum sp_scope scope,
                                   const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (list[i].scope == scope && strcmp(list[i].name, name) == 0)
            return &list[i];
    return NULL;
}

enum sp_outcome sp_resolve(const struct sp_conf *conf, const char *asked, const char *partition,
                           const char *qos, int *priority, bool *capped, int *cap)
{
    *capped = conf->has_cap;
    *cap = conf->cap;
    const struct sp_named *c[] = {find(conf->caps, conf->ncaps, SP_PARTITION, partition),
                                  find(conf->caps, conf->ncaps, SP_QOS, qos)};
    for (size_t i = 0; i < 2; i++)
        if (c[i] && (!*capped || c[i]->priority < *cap)) {
            *capped = true;
            *cap = c[i]->priority;
        }
    if (asked && strcasecmp(asked, SP_OFF_WORD) == 0)
        return SP_OFF;
    int p;
    if (asked) {
        if (gp_priority_parse(asked, &p) < 0)
            return SP_REFUSED; /* the option's callback refused it already */
        *priority = p;
        if (*capped && p > *cap) {
            *priority = *cap;
            return conf->clamp ? SP_CLAMPED : SP_REFUSED;
        }
        return SP_RUN;
    }
    const struct sp_named *d = find(conf->defaults, conf->ndefaults, SP_QOS, qos);
    if (!d)
        d = find(conf->defaults, conf->ndefaults, SP_PARTITION, partition);
    if (d)
        p = d->priority;
    else if (conf->has_default)
        p = conf->default_priority;
    else
        return SP_NONE;
    *priority = *capped && p > *cap ? *cap : p;
    return SP_RUN;
}

bool sp_asked_valid(const char *text)
{
    int p;
    return text && (strcasecmp(text, SP_OFF_WORD) == 0 || gp_priority_parse(text, &p) == 0);
}
