/*
 * cmd_metrics.c - `gpuprio metrics`: every queue's state and counters in the Prometheus text
 * exposition format, for dashboards: once on standard output (--once), or into
 * DIR/gpuprio.prom for node_exporter's textfile collector (--textfile DIR), once or every
 * --interval seconds until SIGINT or SIGTERM.
 *
 * Design:
 * - No HTTP server of its own: node_exporter (or any scraper of a file, or a cron job) already
 *   serves what it is given, with its own authentication and TLS, and a server here would be one
 *   more port and daemon to secure. The boards are read by queues.c, as for `gpuprio top`, and
 *   written by metrics_format.c.
 * - The file is replaced atomically: written whole into a temporary file in DIR itself
 *   (.gpuprio.prom.XXXXXX: the same filesystem, and a name the collector, which reads *.prom,
 *   ignores), given mode 0644 (node_exporter often runs as another user), synced, and renamed
 *   over gpuprio.prom. A reader sees the old file or the new one, never part of one. On any
 *   failure the temporary file is removed.
 * - The termination signals (SIGINT, SIGTERM, SIGHUP) are held while a file is written, so one
 *   that arrives then takes effect once the temporary file is renamed or removed. The repeating
 *   loop keeps them held and takes them with sigtimedwait, so one that arrives just before the
 *   wait is not lost either, and it exits 0.
 * - A DIR that does not exist or is not a directory is a bad argument (status 2), found before
 *   anything is read. A failure to write is status 1 when it happens the first time (a wrong
 *   DIR is found at once); once the file was written, a later failure (a full disk) is reported
 *   once and the loop goes on, so an exporter does not die of something passing.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "board.h"
#include "tool.h"

#define DEFAULT_INTERVAL 15.0
#define MIN_INTERVAL 0.1
#define MAX_INTERVAL 86400.0
#define PROM_NAME "gpuprio.prom"

static const char help_metrics[] =
    "Usage: gpuprio metrics --once\n"
    "       gpuprio metrics --textfile DIR [--interval SECONDS | --once]\n"
    "Write the state and counters of every queue that gpuprio schedules (of every process of\n"
    "the user; of every user when run as root, or on the shared board directory of the\n"
    "administrator's configuration file) in the Prometheus text exposition format: once\n"
    "on standard output, or into DIR/" PROM_NAME " for node_exporter's textfile collector\n"
    "(--collector.textfile.directory=DIR), replaced atomically every SECONDS until SIGINT or\n"
    "SIGTERM.\n"
    "\n"
    "Options:\n"
    "      --once              write once and exit (to standard output without --textfile)\n"
    "      --textfile DIR      write DIR/" PROM_NAME " (DIR must exist)\n"
    "      --interval SECONDS  with --textfile: time between writes (default 15; 0.1 to 86400)\n"
    "  -h, --help              show this text\n"
    "\n"
    "Families (docs/cli.md): gpuprio_boards; per queue, labelled device, device_index,\n"
    "pid, command, user, stream, thread (per-thread queues) and priority:\n"
    "gpuprio_queue_priority, gpuprio_queue_active, gpuprio_queue_decision (a decision\n"
    "label), gpuprio_queue_gated_on_device, gpuprio_queue_in_flight_commands,\n"
    "gpuprio_queue_submitted_commands_total, gpuprio_queue_completed_commands_total,\n"
    "gpuprio_queue_suspensions_total, gpuprio_queue_held_seconds_total; per process and\n"
    "device: gpuprio_process_unused_queues.\n"
    "\n"
    "Boards are read from GPUPRIO_BOARD_DIR (default /dev/shm). Exit status: 0; 1 when the\n"
    "board directory cannot be read or the output cannot be written; 2 for a bad option or DIR.\n";

static const char forms[] = "accepted: --once, or --textfile DIR [--interval SECONDS | --once]";

struct metrics_opts {
    bool once;
    const char *dir;
    double interval; /* 0: not given */
};

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpuprio metrics: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (gpuprio metrics --help)\n", stderr);
    va_end(ap);
    return GP_EXIT_USAGE;
}

/* Whether a is option name, alone or as "name=value". */
static bool is_option(const char *a, const char *name)
{
    size_t len = strlen(name);
    return strncmp(a, name, len) == 0 && (a[len] == '\0' || a[len] == '=');
}

/* The value of option argv[*i] (is_option): the rest of "name=value", or the next argument
 * (*i moves to it). NULL when there is none. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    if (a[strlen(name)] == '=')
        return a + strlen(name) + 1;
    return ++*i < argc ? argv[*i] : NULL;
}

/* A DIR for --textfile: 0, or an exit status after saying what is wrong with it. */
static int check_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return usage_error("--textfile '%s': no such directory; accepted: an existing "
                               "directory (node_exporter's --collector.textfile.directory)",
                               dir);
        fprintf(stderr, "gpuprio metrics: --textfile '%s': cannot be examined: %s\n", dir,
                strerror(errno));
        return GP_EXIT_FAILURE;
    }
    if (!S_ISDIR(st.st_mode))
        return usage_error("--textfile '%s' is not a directory; accepted: an existing directory "
                           "(node_exporter's --collector.textfile.directory)",
                           dir);
    return 0;
}

/* GP_PARSED_GO, GP_PARSED_HELP after --help, or an exit status. */
static int parse(int argc, char **argv, struct metrics_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--once") == 0) {
            o->once = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(help_metrics, stdout);
            return GP_PARSED_HELP;
        } else if (is_option(a, "--textfile")) {
            o->dir = option_value(argc, argv, &i, "--textfile");
            if (!o->dir || !*o->dir)
                return usage_error("--textfile needs a directory, in which " PROM_NAME
                                   " is written");
        } else if (is_option(a, "--interval")) {
            const char *v = option_value(argc, argv, &i, "--interval");
            if (!v)
                return usage_error("--interval needs a number of seconds");
            if (!gp_parse_seconds(v, MIN_INTERVAL, MAX_INTERVAL, &o->interval))
                return usage_error("'%s' is not an interval; accepted: seconds from 0.1 to 86400 "
                                   "(fractions allowed)",
                                   v);
        } else {
            return usage_error("unknown argument '%s'; %s", a, forms);
        }
    }
    if (o->interval && (!o->dir || o->once))
        return usage_error("--interval goes with --textfile DIR and without --once; %s", forms);
    if (!o->dir && !o->once)
        return usage_error("nowhere to write; %s", forms);
    if (!o->interval)
        o->interval = DEFAULT_INTERVAL;
    return o->dir ? check_dir(o->dir) : 0;
}

/* Writes s to out and flushes it: 0, or the negative errno value of the first failure. */
static int write_all(FILE *out, const struct gp_sample *s)
{
    errno = 0;
    gp_metrics_write(out, s);
    if (fflush(out) != 0 || ferror(out))
        return errno ? -errno : -EIO;
    return 0;
}

/* Replaces dir/gpuprio.prom with s, atomically. 0 or a negative errno value; on failure no
 * temporary file is left. */
static int replace_textfile(const char *dir, const struct gp_sample *s)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s/." PROM_NAME ".XXXXXX", dir) >= (int)sizeof tmp ||
        snprintf(path, sizeof path, "%s/" PROM_NAME, dir) >= (int)sizeof path)
        return -ENAMETOOLONG;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = 0;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        rc = -errno;
        close(fd);
        goto fail;
    }
    rc = write_all(f, s);
    /* mkstemp made it 0600; the collector may run as another user. */
    if (!rc && fchmod(fd, 0644) != 0)
        rc = -errno;
    /* Synced before the rename, so that a crash never leaves an empty gpuprio.prom. */
    if (!rc && fsync(fd) != 0)
        rc = -errno;
    if (fclose(f) != 0 && !rc)
        rc = -errno;
    if (rc)
        goto fail;
    if (rename(tmp, path) != 0) {
        rc = -errno;
        goto fail;
    }
    return 0;
fail:
    unlink(tmp);
    return rc;
}

/* The termination signals: held while a file is written, taken by the repeating loop. */
static void termination_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

/* replace_textfile with the termination signals held, so that one arriving meanwhile takes
 * effect after the temporary file is gone (renamed or removed), never in between. */
static int write_textfile(const char *dir, const struct gp_sample *s)
{
    sigset_t set, old;
    termination_signals(&set);
    sigprocmask(SIG_BLOCK, &set, &old);
    int rc = replace_textfile(dir, s);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static void write_failed(const char *dir, int rc)
{
    fprintf(stderr, "gpuprio metrics: cannot write %s/" PROM_NAME " (--textfile %s): %s\n", dir,
            dir, strerror(-rc));
}

static int once(const struct metrics_opts *o)
{
    struct gp_sample s = {0};
    struct gp_tool_view view; /* every device's boards, the caller's too */
    gp_tool_view_init(&view, false);
    int rc = gp_sample_or_report(&s, &view, "metrics");
    if (!rc && !o->dir && (rc = write_all(stdout, &s)) < 0) {
        fprintf(stderr, "gpuprio metrics: cannot write to standard output: %s\n", strerror(-rc));
        rc = GP_EXIT_FAILURE;
    } else if (!rc && o->dir && (rc = write_textfile(o->dir, &s)) < 0) {
        write_failed(o->dir, rc);
        rc = GP_EXIT_FAILURE;
    }
    gp_sample_free(&s);
    gp_tool_view_free(&view);
    return rc;
}

static int repeat(const struct metrics_opts *o)
{
    sigset_t stop;
    termination_signals(&stop);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    struct gp_sample s = {0};
    struct gp_tool_view view; /* every device's boards, the caller's too */
    gp_tool_view_init(&view, false);
    uint64_t interval_ns = (uint64_t)(o->interval * 1e9 + 0.5);
    uint64_t next = gp_tool_now_ns();
    bool written = false, failing = false;
    int rc;
    for (;;) {
        if ((rc = gp_sample_or_report(&s, &view, "metrics")))
            break;
        int w = write_textfile(o->dir, &s);
        if (w < 0 && !written) {
            write_failed(o->dir, w);
            rc = GP_EXIT_FAILURE;
            break;
        }
        if (w < 0 && !failing)
            write_failed(o->dir, w);
        else if (w == 0 && failing)
            fprintf(stderr, "gpuprio metrics: %s/" PROM_NAME " written again\n", o->dir);
        failing = w < 0;
        written = true;
        /* On a fixed schedule; after a stall (a suspended process), from now. */
        uint64_t now = gp_tool_now_ns();
        next = next + interval_ns > now ? next + interval_ns : now + interval_ns;
        /* At least one look, so that a signal that came during a write that took the whole
         * interval still ends the loop. -1 with EAGAIN at the time; with EINTR, again. */
        int sig;
        do {
            now = gp_tool_now_ns();
            uint64_t left = next > now ? next - now : 0;
            struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
            sig = sigtimedwait(&stop, NULL, &ts);
        } while (sig < 0 && gp_tool_now_ns() < next);
        if (sig > 0)
            break;
    }
    gp_sample_free(&s);
    gp_tool_view_free(&view);
    return rc;
}

int gp_cmd_metrics(int argc, char **argv)
{
    struct metrics_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc == GP_PARSED_HELP)
        return 0;
    if (rc)
        return rc;
    return o.once ? once(&o) : repeat(&o);
}
