/*
 * cmd_run.c - `gpuprio run`: runs a command with gpuprio preloaded, like nice(1) runs one with a
 * niceness.
 *
 * Its settings are the variables of the options table (gp_options.def) that name a run option:
 * the options, their --help and their checking are generated from the table, and a value is
 * checked with the parser the library reads the variable with, so what is accepted here is what
 * the library accepts (tests/tools/options.sh shows it). It puts them into the environment,
 * prepends the preload libraries' absolute paths to LD_PRELOAD and execs the command in place of
 * itself: the command keeps the pid, and its exit status and the signal that ends it are the
 * caller's to see, unchanged. The tool's own failures exit 125, a command that cannot be run 126,
 * one that is not found 127 (as env(1) and nice(1) do).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "gp_options.h"
#include "tool.h"

/* The lines of --help wrap here. */
#define HELP_WIDTH 90
/* Where an option's description starts. */
#define HELP_INDENT 27

/* getopt_long's codes: the command's own options, then one per variable (OPT_VAR + its id). */
enum { OPT_SHIM = 256, OPT_VAR };

enum shim_choice { SHIM_AUTO, SHIM_ALL, SHIM_HIP, SHIM_CUDA };

struct run_opts {
    const char *value[GP_OPT_COUNT]; /* what each variable's option gave, or NULL */
    enum shim_choice shim;
};

/* Prints text from column col on, wrapped at spaces to HELP_WIDTH, continuing at HELP_INDENT. */
static void print_wrapped(FILE *out, const char *text, int col)
{
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > HELP_INDENT && col + 1 + (int)word > HELP_WIDTH) {
            fprintf(out, "\n%*s", HELP_INDENT, "");
            col = HELP_INDENT;
        } else if (col > HELP_INDENT) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)word, text);
        col += (int)word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

/* One option that sets a variable: its flags, what it is for, the variable, what it accepts
 * and its default, all from the table. */
static void print_option(FILE *out, enum gp_opt id)
{
    const struct gp_opt_desc *d = gp_opt_desc(id);
    char head[128], accepted[512], text[1024];
    int col = snprintf(head, sizeof head, "  %c%c%s--%s %s", d->run_short ? '-' : ' ',
                       d->run_short ? d->run_short : ' ', d->run_short ? ", " : "  ", d->run_flag,
                       d->run_metavar);
    gp_opt_accepted(id, accepted, sizeof accepted);
    snprintf(text, sizeof text, "%s (%s); accepted: %s%s%s", d->doc, d->name, accepted,
             d->def ? "; default " : "", d->def ? d->def : "");
    if (col + 2 > HELP_INDENT)
        fprintf(out, "%s\n%*s", head, HELP_INDENT, "");
    else
        fprintf(out, "%-*s", HELP_INDENT, head);
    print_wrapped(out, text, HELP_INDENT);
}

static void print_help(FILE *out)
{
    fputs("Usage: gpuprio run [OPTIONS] [--] COMMAND [ARGS...]\n"
          "Run COMMAND with gpuprio preloaded (LD_PRELOAD), so that its GPU streams are scheduled\n"
          "by priority together with every other gpuprio process of the user on the same device.\n"
          "\n"
          "Options:\n",
          out);
    for (int i = 0; i < GP_OPT_COUNT; i++)
        if (gp_opt_desc((enum gp_opt)i)->run_flag)
            print_option(out, (enum gp_opt)i);
    fputs(
        "      --shim WHICH         which libraries to preload: hip, cuda, or all (default: cuda\n"
        "                           where an NVIDIA driver is loaded and the CUDA library is\n"
        "                           installed, else hip)\n"
        "  -h, --help               show this text\n"
        "Settings not given are inherited from the environment.\n"
        "\n"
        "Exit status: COMMAND's own (a COMMAND killed by a signal kills gpuprio run the same way:\n"
        "it is the same process); 125 when gpuprio run itself fails (a bad option, a library not\n"
        "found), 126 when COMMAND cannot be run, 127 when it is not found.\n"
        "\n"
        "The libraries are found in GPUPRIO_LIBRARY_DIR if set, else next to gpuprio (../lib).\n",
        out);
}

static int fail(const char *fmt, const char *arg)
{
    fputs("gpuprio run: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return GP_EXIT_RUN_ERROR;
}

/* Each value given, with the parser the library reads its variable with. */
static int check(const struct run_opts *o)
{
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        if (!o->value[i] || gp_opt_parse((enum gp_opt)i, o->value[i], NULL) == 0)
            continue;
        const struct gp_opt_desc *d = gp_opt_desc((enum gp_opt)i);
        char accepted[512];
        gp_opt_accepted((enum gp_opt)i, accepted, sizeof accepted);
        fprintf(stderr, "gpuprio run: --%s '%s' is not valid (%s); accepted: %s\n", d->run_flag,
                o->value[i], d->name, accepted);
        return GP_EXIT_RUN_ERROR;
    }
    return 0;
}

/* The new LD_PRELOAD: our libraries first, then whatever was there. */
/* Whether an NVIDIA driver is loaded on this machine. */
static bool nvidia_driver(void)
{
    return access("/proc/driver/nvidia/version", F_OK) == 0 || access("/dev/nvidiactl", F_OK) == 0;
}

/*
 * Both libraries export the gpuprio_* API and a dlsym override, and the first one preloaded
 * answers for both, so by default only one is preloaded: the one for the machine's GPUs.
 */
static int preload(const struct run_opts *given)
{
    struct gp_shims shims;
    gp_shims_find(&shims); /* what was found is in shims; what was not, is "" */
    struct run_opts chosen = *given;
    const struct run_opts *o = &chosen;
    if (chosen.shim == SHIM_AUTO)
        chosen.shim = shims.cuda[0] && (nvidia_driver() || !shims.hip[0]) ? SHIM_CUDA : SHIM_HIP;
    if (o->shim != SHIM_CUDA && !shims.hip[0])
        return fail("cannot find libgpuprio-hip.so in %s (set GPUPRIO_LIBRARY_DIR to the "
                    "directory that holds it)",
                    shims.dir);
    if (o->shim == SHIM_CUDA && !shims.cuda[0])
        return fail("cannot find libgpuprio-cuda.so in %s (it is built only where the CUDA "
                    "headers are; set GPUPRIO_LIBRARY_DIR to the directory that holds it)",
                    shims.dir);
    const char *libs[2] = {o->shim != SHIM_CUDA ? shims.hip : NULL,
                           o->shim != SHIM_HIP && shims.cuda[0] ? shims.cuda : NULL};
    const char *old = getenv("LD_PRELOAD");
    size_t len = (old ? strlen(old) : 0) + 3;
    for (int i = 0; i < 2; i++) {
        if (!libs[i])
            continue;
        /* LD_PRELOAD separates names by colons and spaces: such a path cannot be given. */
        if (strpbrk(libs[i], ": \t"))
            return fail("cannot preload %s: LD_PRELOAD cannot hold a path with a colon or a "
                        "space",
                        libs[i]);
        len += strlen(libs[i]) + 1;
    }
    char *value = malloc(len);
    if (!value)
        return fail("%s", strerror(ENOMEM));
    value[0] = '\0';
    for (int i = 0; i < 2; i++)
        if (libs[i]) {
            if (value[0])
                strcat(value, ":");
            strcat(value, libs[i]);
        }
    if (old && *old) {
        strcat(value, ":");
        strcat(value, old);
    }
    int rc = setenv("LD_PRELOAD", value, 1);
    free(value);
    return rc == 0 ? 0 : fail("cannot set LD_PRELOAD: %s", strerror(errno));
}

static int set_env(const char *name, const char *value)
{
    if (value && setenv(name, value, 1) != 0)
        return fail("cannot set the environment: %s", strerror(errno));
    return 0;
}

int gp_cmd_run(int argc, char **argv)
{
    /* One option per variable that names one, then the command's own. */
    struct option longopts[GP_OPT_COUNT + 3];
    char shortopts[4 + 2 * GP_OPT_COUNT + 2] = "+:h";
    size_t n = 0, ns = strlen(shortopts);
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        const struct gp_opt_desc *d = gp_opt_desc((enum gp_opt)i);
        if (!d->run_flag)
            continue;
        longopts[n++] = (struct option){d->run_flag, required_argument, NULL, OPT_VAR + i};
        if (d->run_short) {
            shortopts[ns++] = d->run_short;
            shortopts[ns++] = ':';
        }
    }
    shortopts[ns] = '\0';
    longopts[n++] = (struct option){"shim", required_argument, NULL, OPT_SHIM};
    longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n] = (struct option){NULL, 0, NULL, 0};

    struct run_opts o = {0};
    opterr = 0;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1;) {
        /* A one-letter form stands for its variable's option. */
        for (int i = 0; c > 0 && c < 256 && i < GP_OPT_COUNT; i++)
            if (gp_opt_desc((enum gp_opt)i)->run_flag &&
                gp_opt_desc((enum gp_opt)i)->run_short == c)
                c = OPT_VAR + i;
        if (c >= OPT_VAR && c < OPT_VAR + GP_OPT_COUNT) {
            o.value[c - OPT_VAR] = optarg;
            continue;
        }
        switch (c) {
        case OPT_SHIM:
            if (strcmp(optarg, "hip") == 0)
                o.shim = SHIM_HIP;
            else if (strcmp(optarg, "cuda") == 0)
                o.shim = SHIM_CUDA;
            else if (strcmp(optarg, "all") == 0)
                o.shim = SHIM_ALL;
            else
                return fail("'%s' is not a library choice; accepted: hip, cuda, all", optarg);
            break;
        case 'h':
            print_help(stdout);
            return 0;
        case ':':
            return fail("%s needs a value (gpuprio run --help)", argv[optind - 1]);
        default:
            return fail("unknown option '%s' (gpuprio run --help)", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return fail("%s", "no command given (gpuprio run --help)");
    int rc = check(&o);
    if (!rc)
        rc = preload(&o);
    for (int i = 0; !rc && i < GP_OPT_COUNT; i++)
        rc = set_env(gp_opt_desc((enum gp_opt)i)->name, o.value[i]);
    if (rc)
        return rc;
    fflush(NULL);
    execvp(argv[optind], argv + optind);
    int err = errno;
    fprintf(stderr, "gpuprio run: %s: %s\n", argv[optind], strerror(err));
    return err == ENOENT ? GP_EXIT_NOT_FOUND : GP_EXIT_CANNOT_EXEC;
}
