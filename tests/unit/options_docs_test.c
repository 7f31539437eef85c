/*
 * options_docs_test.c - unit.options_docs: the documentation agrees with the options table
 * (src/util/gp_options.def), so that neither can change without the other.
 *
 *   options_docs_test CONFIGURATION_MD CLI_MD
 *
 * docs/configuration.md's table of variables has one row per option of the table, with its
 * default ("unset" when it has none) and what it accepts (a range "MIN to MAX", the words of a
 * choice, the priorities a list takes at most, a path's description), and no row for anything
 * else; neither file names a GPUPRIO_ variable the table lacks; docs/cli.md documents each
 * `gpuprio run` option of the table, with its range or words.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gp_options.h"

/* How docs/configuration.md says a priority is accepted (its "Priorities" section follows). */
#define DOCS_PRIORITY "a priority (below)"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf)
        exit(2);
    buf[n] = '\0';
    return buf;
}

/* The row of docs/configuration.md's table for name: its cells, without the bars around them. */
struct row {
    char cell[4][1024];
    int rows; /* how many rows name it */
};

/* Copies the cells of the table row starting at line (up to its newline) into r. */
static void split_row(const char *line, struct row *r)
{
    const char *end = strchr(line, '\n');
    if (!end)
        end = line + strlen(line);
    const char *p = line + 1; /* past the first bar */
    for (int c = 0; c < 4 && p < end; c++) {
        const char *bar = memchr(p, '|', (size_t)(end - p));
        if (!bar)
            bar = end;
        const char *a = p, *b = bar;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        snprintf(r->cell[c], sizeof r->cell[c], "%.*s", (int)(b - a), a);
        p = bar + 1;
    }
}

/* What configuration.md must say in the default and accepted cells of option id. A prefix of
 * the accepted cell, for a list (which goes on with an example). */
static void expected_cells(enum gp_opt id, char *def, size_t def_size, char *accepted,
                           size_t acc_size)
{
    const struct gp_opt_desc *d = gp_opt_desc(id);
    if (d->def)
        snprintf(def, def_size, "`%s`", d->def);
    else
        snprintf(def, def_size, "unset");
    switch (d->type) {
    case GP_OPT_TYPE_UINT:
        snprintf(accepted, acc_size, "%llu to %llu", (unsigned long long)d->min,
                 (unsigned long long)d->max);
        break;
    case GP_OPT_TYPE_CHOICE: {
        size_t n = 0;
        accepted[0] = '\0';
        for (int i = 0; d->choices[i] && n < acc_size; i++)
            n += (size_t)snprintf(accepted + n, acc_size - n, "%s`%s`", i ? ", " : "",
                                  d->choices[i]);
        break;
    }
    case GP_OPT_TYPE_PRIORITY:
        snprintf(accepted, acc_size, DOCS_PRIORITY);
        break;
    case GP_OPT_TYPE_PRIORITY_LIST:
        snprintf(accepted, acc_size, "up to %llu priorities, comma-separated",
                 (unsigned long long)d->max);
        break;
    case GP_OPT_TYPE_PATH:
        snprintf(accepted, acc_size, "%s", d->accepted);
        break;
    case GP_OPT_TYPE_AMOUNT:
        snprintf(accepted, acc_size, "0 to %llu, or a percentage `P%%` from 0 to 100",
                 (unsigned long long)d->max);
        break;
    }
}

static void check_table(const char *md, const char *path)
{
    static struct row rows[GP_OPT_COUNT];
    /* Every row of the table of variables. */
    for (const char *line = md; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (strncmp(line, "| `GPUPRIO_", 11) != 0)
            continue;
        struct row r = {0};
        split_row(line, &r);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(r.cell[0] + 1, "`"), r.cell[0] + 1);
        int id = gp_opt_find(name);
        if (!CHECK(id >= 0)) {
            fprintf(stderr, "  %s documents %s, which src/util/gp_options.def lacks\n", path, name);
            continue;
        }
        r.rows = rows[id].rows + 1;
        rows[id] = r;
    }
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        const char *name = gp_opt_desc((enum gp_opt)i)->name;
        if (!CHECK_INT(rows[i].rows, 1)) {
            fprintf(stderr, "  %s: %s has %d rows in the table of variables of %s (one wanted)\n",
                    name, name, rows[i].rows, path);
            continue;
        }
        char def[256], accepted[1024];
        expected_cells((enum gp_opt)i, def, sizeof def, accepted, sizeof accepted);
        if (!CHECK(strcmp(rows[i].cell[1], def) == 0))
            fprintf(stderr, "  %s: default \"%s\" in %s, \"%s\" in gp_options.def\n", name,
                    rows[i].cell[1], path, def);
        bool prefix = gp_opt_desc((enum gp_opt)i)->type == GP_OPT_TYPE_PRIORITY_LIST;
        bool same = prefix ? strncmp(rows[i].cell[2], accepted, strlen(accepted)) == 0
                           : strcmp(rows[i].cell[2], accepted) == 0;
        if (!CHECK(same))
            fprintf(stderr, "  %s: accepted \"%s\" in %s, \"%s\"%s from gp_options.def\n", name,
                    rows[i].cell[2], path, accepted, prefix ? "..." : "");
    }
}

/* Every GPUPRIO_ name in the text is one of the table's. */
static void check_names(const char *text, const char *path)
{
    for (const char *p = text; (p = strstr(p, "GPUPRIO_"));) {
        size_t n = 8;
        while ((p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9') || p[n] == '_')
            n++;
        if (n > 8) { /* not "GPUPRIO_*" */
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)n, p);
            if (!CHECK(gp_opt_find(name) >= 0))
                fprintf(stderr, "  %s names %s, which src/util/gp_options.def lacks\n", path, name);
        }
        p += n;
    }
}

/* docs/cli.md documents each run option ("`--FLAG METAVAR`"), with its range or its words in
 * the paragraph that follows. */
static void check_cli(const char *md, const char *path)
{
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        const struct gp_opt_desc *d = gp_opt_desc((enum gp_opt)i);
        if (!d->run_flag)
            continue;
        char flag[128];
        snprintf(flag, sizeof flag, "`--%s %s`", d->run_flag, d->run_metavar);
        const char *at = strstr(md, flag);
        if (!CHECK(at != NULL)) {
            fprintf(stderr, "  %s does not document %s (%s)\n", path, flag, d->name);
            continue;
        }
        const char *end = strstr(at, "\n\n");
        size_t len = end ? (size_t)(end - at) : strlen(at);
        char para[2048], want[256];
        snprintf(para, sizeof para, "%.*s", (int)len, at);
        for (char *c = para; *c; c++)
            if (*c == '\n')
                *c = ' ';
        if (d->type == GP_OPT_TYPE_UINT) {
            snprintf(want, sizeof want, "%llu to %llu", (unsigned long long)d->min,
                     (unsigned long long)d->max);
            if (!CHECK(strstr(para, want) != NULL))
                fprintf(stderr, "  %s: %s does not say \"%s\"\n", path, flag, want);
        }
        for (int w = 0; d->type == GP_OPT_TYPE_CHOICE && d->choices[w]; w++) {
            snprintf(want, sizeof want, "`%s`", d->choices[w]);
            if (!CHECK(strstr(para, want) != NULL))
                fprintf(stderr, "  %s: %s does not name %s\n", path, flag, want);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CONFIGURATION_MD CLI_MD\n", argv[0]);
        return 2;
    }
    char *config = slurp(argv[1]), *cli = slurp(argv[2]);
    check_table(config, argv[1]);
    check_names(config, argv[1]);
    check_names(cli, argv[2]);
    check_cli(cli, argv[2]);
    free(config);
    free(cli);
    return check_finish("unit.options_docs");
}
