/*
 * gpuprio.c - the gpuprio command: dispatches to its subcommands (run, top, set, metrics, doctor)
 * and answers --help, `help CMD` and --version itself.
 *
 * Each subcommand lives in its own file (cmd_run.c, cmd_top.c, cmd_set.c, cmd_metrics.c) with
 * its help text; docs/cli.md is the manual.
 */
#include <stdio.h>
#include <string.h>

#include "gpuprio.h"
#include "gp_priority.h"
#include "tool.h"

static const char usage[] =
    "Usage: gpuprio COMMAND [ARGS...]\n"
    "Give GPU streams priorities, across threads, streams and processes.\n"
    "\n"
    "Commands:\n"
    "  run [OPTIONS] [--] CMD [ARGS...]\n"
    "                 run CMD with gpuprio preloaded and the given settings (gpuprio help run)\n"
    "  top [--once] [--json] [-d SECONDS]\n"
    "                 show every scheduled queue of every process, like top\n"
    "  set PID PRIORITY [--stream HANDLE]\n"
    "                 change the priority of a running process (or of one of its streams)\n"
    "  metrics --once | --textfile DIR [--interval SECONDS]\n"
    "                 every queue's state and counters for Prometheus (node_exporter's textfile)\n"
    "  doctor [--json]\n"
    "                 say what is in effect for this user on this machine, and why\n"
    "  cdi [--output DIR]\n"
    "                 write a CDI spec: one container device per priority (podman, Docker...)\n"
    "  help [COMMAND] show this text, or a command's\n"
    "\n"
    "Options:\n"
    "  -h, --help     show this text\n"
    "  -V, --version  show the version\n"
    "\n"
    "Priorities: " GP_PRIORITY_ACCEPTED ".\n"
    "See docs/cli.md (the manual) and docs/configuration.md.\n";

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
    {"run", gp_cmd_run},         {"top", gp_cmd_top},       {"set", gp_cmd_set},
    {"metrics", gp_cmd_metrics}, {"doctor", gp_cmd_doctor}, {"cdi", gp_cmd_cdi},
};

static const struct command *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int help(const char *name)
{
    if (!name) {
        fputs(usage, stdout);
        return 0;
    }
    const struct command *c = find(name);
    if (!c) {
        fprintf(stderr, "gpuprio help: no command '%s' (run, top, set, metrics)\n", name);
        return GP_EXIT_USAGE;
    }
    /* `help CMD` is `CMD --help`: each command prints its own (run's is built from the options
     * table). */
    char *argv[] = {(char *)c->name, "--help", NULL};
    return c->fn(2, argv);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return GP_EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "-h") == 0 || strcmp(first, "--help") == 0)
        return help(NULL);
    if (strcmp(first, "-V") == 0 || strcmp(first, "--version") == 0) {
        printf("gpuprio %d.%d.%d\n", GPUPRIO_VERSION_MAJOR, GPUPRIO_VERSION_MINOR,
               GPUPRIO_VERSION_PATCH);
        return 0;
    }
    if (strcmp(first, "help") == 0) {
        if (argc > 3) {
            fputs("Usage: gpuprio help [COMMAND]\n", stderr);
            return GP_EXIT_USAGE;
        }
        return help(argc == 3 ? argv[2] : NULL);
    }
    const struct command *c = find(first);
    if (!c) {
        fprintf(stderr, "gpuprio: no command '%s' (run, top, set, metrics; gpuprio --help)\n",
                first);
        return GP_EXIT_USAGE;
    }
    return c->fn(argc - 1, argv + 1);
}
