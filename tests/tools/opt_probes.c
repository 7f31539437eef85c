/*
 * opt_probes.c - what tests/tools/options.sh tries on `gpuprio run` and the library, from the
 * options table (src/util/gp_options.def) and tests/unit/opt_probes.h.
 *
 *   tools_opt_probes names   every variable of the table, one a line
 *   tools_opt_probes         for each option of `gpuprio run`:
 *                              option<TAB>FLAG<TAB>METAVAR<TAB>VARIABLE
 *                            then one line per probe value:
 *                              probe<TAB>FLAG<TAB>VARIABLE<TAB>ok|bad<TAB>VALUE
 *                            ok or bad: what the table's parser says; VALUE with every byte
 *                            written \NNN (octal), for printf(1), since values hold spaces and
 *                            tabs.
 */
#include <stdio.h>
#include <string.h>

#include "gp_options.h"
#include "opt_probes.h"

static void print_probe(const char *value, void *arg)
{
    enum gp_opt id = *(enum gp_opt *)arg;
    const struct gp_opt_desc *d = gp_opt_desc(id);
    printf("probe\t%s\t%s\t%s\t", d->run_flag, d->name,
           gp_opt_parse(id, value, NULL) == 0 ? "ok" : "bad");
    for (const char *c = value; *c; c++)
        printf("\\%03o", (unsigned char)*c);
    putchar('\n');
}

int main(int argc, char **argv)
{
    bool names = argc == 2 && strcmp(argv[1], "names") == 0;
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        enum gp_opt id = (enum gp_opt)i;
        const struct gp_opt_desc *d = gp_opt_desc(id);
        if (names)
            printf("%s\n", d->name);
        else if (d->run_flag) {
            printf("option\t%s\t%s\t%s\n", d->run_flag, d->run_metavar, d->name);
            opt_probes(d, print_probe, &id);
        }
    }
    return 0;
}
