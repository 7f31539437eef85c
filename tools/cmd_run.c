/*
 * cmd_run.c - `gpuprio run`: runs a command with gpuprio preloaded, like nice(1) runs one with a
 * niceness.
 *
 * It checks the settings (with the library's own parser, so what is accepted here is what the
 * library accepts), puts them into the environment (GPUPRIO_PRIORITY, GPUPRIO_POLICY,
 * GPUPRIO_WINDOW_US, GPUPRIO_WINDOW), prepends the preload libraries' absolute paths to
 * LD_PRELOAD and execs the command in place of itself: the command keeps the pid, and its exit
 * status and the signal that ends it are the caller's to see, unchanged. The tool's own failures
 * exit 125, a command that cannot be run 126, one that is not found 127 (as env(1) and nice(1)
 * do).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "gp_config.h"
#include "priority.h"
#include "tool.h"

const char gp_help_run[] =
    "Usage: gpuprio run [OPTIONS] [--] COMMAND [ARGS...]\n"
    "Run COMMAND with gpuprio preloaded (LD_PRELOAD), so that its GPU streams are scheduled\n"
    "by priority together with every other gpuprio process of the user on the same device.\n"
    "\n"
    "Options:\n"
    "  -p, --priority PRIORITY  the priority of every stream of COMMAND (GPUPRIO_PRIORITY):\n"
    "                           " GP_PRIORITY_ACCEPTED "\n"
    "      --policy POLICY      hpf (highest priority first) or passthrough (GPUPRIO_POLICY)\n"
    "      --window-us N        microseconds of GPU time a lower-priority queue may have in\n"
    "                           flight, 0 to 10000000; 0 counts commands only (GPUPRIO_WINDOW_US)\n"
    "      --window N           commands a lower-priority queue may have in flight, 1 to 1024\n"
    "                           (GPUPRIO_WINDOW)\n"
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
    "The libraries are found in GPUPRIO_LIBRARY_DIR if set, else next to gpuprio (../lib).\n";

enum { OPT_POLICY = 256, OPT_WINDOW, OPT_WINDOW_US, OPT_SHIM };

enum shim_choice { SHIM_AUTO, SHIM_ALL, SHIM_HIP, SHIM_CUDA };

struct run_opts {
    const char *priority, *policy, *window, *window_us;
    enum shim_choice shim;
};

static int fail(const char *fmt, const char *arg)
{
    fputs("gpuprio run: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return GP_EXIT_RUN_ERROR;
}

static int check(const struct run_opts *o)
{
    int p;
    if (o->priority && gp_priority_parse(o->priority, &p) != 0)
        return fail("'%s' is not a priority; accepted: " GP_PRIORITY_ACCEPTED, o->priority);
    if (o->policy && strcmp(o->policy, "hpf") != 0 && strcmp(o->policy, "passthrough") != 0)
        return fail("'%s' is not a policy; accepted: hpf, passthrough", o->policy);
    uint64_t n;
    if (o->window && !gp_parse_uint(o->window, 1, 1024, &n))
        return fail("'%s' is not a window; accepted: a whole number from 1 to 1024", o->window);
    if (o->window_us && !gp_parse_uint(o->window_us, 0, 10000000, &n))
        return fail("'%s' is not a budget; accepted: a whole number of microseconds from 0 to "
                    "10000000",
                    o->window_us);
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
    static const struct option longopts[] = {
        {"priority", required_argument, NULL, 'p'},
        {"policy", required_argument, NULL, OPT_POLICY},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"window-us", required_argument, NULL, OPT_WINDOW_US},
        {"shim", required_argument, NULL, OPT_SHIM},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct run_opts o = {0};
    opterr = 0;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "+:p:h", longopts, NULL)) != -1;) {
        switch (c) {
        case 'p':
            o.priority = optarg;
            break;
        case OPT_POLICY:
            o.policy = optarg;
            break;
        case OPT_WINDOW:
            o.window = optarg;
            break;
        case OPT_WINDOW_US:
            o.window_us = optarg;
            break;
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
            fputs(gp_help_run, stdout);
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
    if (!rc)
        rc = set_env("GPUPRIO_PRIORITY", o.priority);
    if (!rc)
        rc = set_env("GPUPRIO_POLICY", o.policy);
    if (!rc)
        rc = set_env("GPUPRIO_WINDOW", o.window);
    if (!rc)
        rc = set_env("GPUPRIO_WINDOW_US", o.window_us);
    if (rc)
        return rc;
    fflush(NULL);
    execvp(argv[optind], argv + optind);
    int err = errno;
    fprintf(stderr, "gpuprio run: %s: %s\n", argv[optind], strerror(err));
    return err == ENOENT ? GP_EXIT_NOT_FOUND : GP_EXIT_CANNOT_EXEC;
}
