/*
 * cmd_top.c - `gpuprio top`: every queue on every board of the user, refreshed like top(1).
 *
 * Rows are the queues that joined scheduling (ran something, or were named): only they hold a
 * board slot. The queues a process created and never used (PyTorch's pools: about 145 streams a
 * process, a few of which run) are counted in its record, so the line above the table gives each
 * process's queues and unused queues, and --all adds one row per process and device with its
 * count, rather than 145 rows of nothing.
 *
 * submitted/s is the difference between two samples of a queue's submitted counter divided by
 * the time between them: between refreshes in the live view, and for --once and --json between
 * two samples taken 200 ms apart (so a script gets a rate too, at the cost of 200 ms).
 *
 * The live view needs no curses: it clears the screen with ANSI escapes, and when standard input
 * is a terminal it reads keys without echo (q quits) through termios. The terminal is restored on
 * every way out, as less(1) and top(1) do: q, Ctrl-C, SIGTERM and SIGHUP end the view; SIGPIPE
 * (`gpuprio top | head -1`, whose reader is gone) and SIGQUIT restore it in their handler and
 * then end the process as their default action would; Ctrl-Z (SIGTSTP) restores it before the
 * process stops, and SIGCONT sets it up again (in the foreground) and redraws.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "board.h"
#include "tool.h"

#define ONCE_INTERVAL_NS 200000000ull

static const char help_top[] =
    "Usage: gpuprio top [--once] [--json] [--all] [-d SECONDS]\n"
    "Show the queues (streams) that gpuprio schedules, in every process of the user (of every\n"
    "user when run as root, or on the shared board directory of the administrator's\n"
    "configuration file), on every device: one line per queue that has run something (or\n"
    "whose priority was set), refreshed like top. Above the table, each process with its\n"
    "queues and its unused ones (created, never ran anything: they take no part in scheduling\n"
    "and are only counted), and its long GEMMs: calls sliced, and left whole by reason (CUDA,\n"
    "GPUPRIO_GEMM_SLICE_US).\n"
    "\n"
    "Options:\n"
    "  -d, --delay SECONDS  time between refreshes (default 2; 0.1 to 3600)\n"
    "      --once           print the processes and the table once and exit\n"
    "      --json           print one JSON document (an array of queues) and exit\n"
    "      --all            also one row (JSON object) per process and device with its count of\n"
    "                       unused queues\n"
    "  -h, --help           show this text\n"
    "Keys: q quits (Ctrl-C too).\n"
    "\n"
    "Columns: DEVICE (the device's identity, its PCI bus id), PID, COMMAND, QUEUE (stream\n"
    "handle, /thread for a per-thread queue; \"N unused\" in an --all row), PRIO (higher runs\n"
    "first), STATE (active: has work, or finished it very recently; idle: ran, now quiet), GATE\n"
    "(the scheduler's decision: suspended, throttled, tracked or none), LVL (where it is held\n"
    "back: 1 on the host, 2 on the device by gates), INFL (commands in flight), SUBMIT/S\n"
    "(commands submitted per second; --once and --json measure over 200 ms), HELD (time\n"
    "threads were held back).\n"
    "\n"
    "Boards are read from GPUPRIO_BOARD_DIR (default /dev/shm). Exit status: 0; 1 when the\n"
    "board directory cannot be read; 2 for a bad option.\n";

static volatile sig_atomic_t stop, redraw;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* The terminal as it was, and as the live view sets it, while the view has it (tty_set). Only
 * async-signal-safe calls below: they run in signal handlers. */
static struct termios tty_saved, tty_raw;
static volatile sig_atomic_t tty_set;

static void tty_restore(void)
{
    if (tty_set)
        tcsetattr(STDIN_FILENO, TCSANOW, &tty_saved);
}

/* The view's settings again, where it still has the terminal and is in the foreground (in the
 * background, the next SIGCONT, which `fg` sends, comes back here). */
static void tty_resume(void)
{
    if (tty_set && tcgetpgrp(STDIN_FILENO) == getpgrp())
        tcsetattr(STDIN_FILENO, TCSANOW, &tty_raw);
}

static void handle(int sig, void (*fn)(int))
{
    struct sigaction sa = {.sa_handler = fn};
    sigemptyset(&sa.sa_mask);
    /* A background process's tcsetattr stops it with SIGTTOU, unless that is blocked. */
    sigaddset(&sa.sa_mask, SIGTTOU);
    sigaction(sig, &sa, NULL);
}

/* SIGPIPE, SIGQUIT: the terminal restored, then the signal's default action (the process ends,
 * by that signal, once the handler returns and unblocks it). */
static void on_fatal(int sig)
{
    tty_restore();
    handle(sig, SIG_DFL);
    raise(sig);
}

/* SIGTSTP (Ctrl-Z): the terminal restored, then stopped here until SIGCONT, then set up again. */
static void on_suspend(int sig)
{
    int saved_errno = errno;
    tty_restore();
    handle(sig, SIG_DFL);
    raise(sig);
    sigset_t suspend;
    sigemptyset(&suspend);
    sigaddset(&suspend, sig);
    sigprocmask(SIG_UNBLOCK, &suspend, NULL); /* stops (unless the process group is orphaned) */
    handle(sig, on_suspend);
    tty_resume();
    redraw = 1;
    errno = saved_errno;
}

static void on_continue(int sig)
{
    (void)sig;
    int saved_errno = errno;
    tty_resume();
    redraw = 1;
    errno = saved_errno;
}

struct top_opts {
    bool once, json, all;
    double delay;
};

static int usage_error(const char *fmt, const char *arg)
{
    fputs("gpuprio top: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (gpuprio top --help)\n", stderr);
    return GP_EXIT_USAGE;
}

static int parse(int argc, char **argv, struct top_opts *o)
{
    o->delay = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = NULL;
        if (strcmp(a, "--once") == 0)
            o->once = true;
        else if (strcmp(a, "--json") == 0)
            o->json = true;
        else if (strcmp(a, "--all") == 0)
            o->all = true;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(help_top, stdout);
            return GP_PARSED_HELP;
        } else if (strcmp(a, "-d") == 0 || strcmp(a, "--delay") == 0) {
            if (++i == argc)
                return usage_error("%s needs a number of seconds", a);
            value = argv[i];
        } else if (strncmp(a, "--delay=", 8) == 0)
            value = a + 8;
        else if (strncmp(a, "-d", 2) == 0)
            value = a + 2;
        else
            return usage_error("unknown argument '%s'", a);
        if (value && !gp_parse_seconds(value, 0.1, 3600, &o->delay))
            return usage_error("'%s' is not a delay; accepted: seconds from 0.1 to 3600", value);
    }
    return GP_PARSED_GO;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stop)
        ;
}

static int once(const struct top_opts *o)
{
    struct gp_sample a = {0}, b = {0};
    struct gp_tool_view view; /* every device's boards, the caller's too */
    gp_tool_view_init(&view, false);
    int rc = gp_sample_or_report(&a, &view, "top");
    if (!rc) {
        sleep_ns(ONCE_INTERVAL_NS);
        rc = gp_sample_or_report(&b, &view, "top");
    }
    if (!rc) {
        gp_sample_rates(&b, &a);
        if (o->json) {
            gp_print_json(&b, o->all);
        } else {
            gp_print_processes(&b, 0);
            gp_print_table(&b, 0, o->all);
        }
    }
    gp_sample_free(&a);
    gp_sample_free(&b);
    gp_tool_view_free(&view);
    return rc;
}

/* Waits up to ns for a key; true when it was q (or input ended). */
static bool wait_key(bool tty, uint64_t ns)
{
    if (!tty) {
        sleep_ns(ns);
        return false;
    }
    uint64_t end = gp_tool_now_ns() + ns;
    while (!stop) {
        if (redraw) { /* continued after a stop: the screen is the shell's now */
            redraw = 0;
            return false;
        }
        uint64_t now = gp_tool_now_ns();
        if (now >= end)
            return false;
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        int n = poll(&p, 1, (int)((end - now + 999999) / 1000000));
        if (n < 0 && errno != EINTR)
            return false;
        if (n > 0) {
            char c;
            ssize_t got = read(STDIN_FILENO, &c, 1);
            if (got == 0 || (got == 1 && (c == 'q' || c == 'Q')))
                return true;
            if (got == 1 && (c == ' ' || c == '\n'))
                return false; /* refresh now */
        }
    }
    return true;
}

static int live(const struct top_opts *o)
{
    bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tty_saved) == 0;
    handle(SIGINT, on_signal);
    handle(SIGTERM, on_signal);
    handle(SIGHUP, on_signal);
    if (tty) {
        tty_raw = tty_saved;
        tty_raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO); /* keys at once, not echoed; ISIG stays */
        tty_raw.c_cc[VMIN] = 1;
        tty_raw.c_cc[VTIME] = 0;
        handle(SIGPIPE, on_fatal);
        handle(SIGQUIT, on_fatal);
        handle(SIGTSTP, on_suspend);
        handle(SIGCONT, on_continue);
        tty_set = 1;
        tcsetattr(STDIN_FILENO, TCSANOW, &tty_raw);
    }

    struct gp_sample prev = {0}, cur = {0};
    struct gp_tool_view view; /* every device's boards, the caller's too */
    gp_tool_view_init(&view, false);
    int rc = gp_sample_or_report(&prev, &view, "top");
    uint64_t wait = ONCE_INTERVAL_NS; /* the first frame: a rate over 200 ms */
    while (!rc && !stop && !wait_key(tty, wait)) {
        if ((rc = gp_sample_or_report(&cur, &view, "top")))
            break;
        gp_sample_rates(&cur, &prev);
        struct winsize ws;
        bool sized = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0;
        time_t t = time(NULL);
        char when[16];
        strftime(when, sizeof when, "%H:%M:%S", localtime(&t));
        uint64_t unused = 0, unslotted = 0;
        for (size_t i = 0; i < cur.nrec; i++) {
            unused += cur.records[i].unused_queues;
            unslotted += cur.records[i].unslotted_queues;
        }
        char no_slot[48] = "";
        if (unslotted)
            snprintf(no_slot, sizeof no_slot, ", %" PRIu64 " without a slot", unslotted);
        printf("\033[H\033[2J"
               "gpuprio top - %s - %zu queue%s, %" PRIu64 " unused%s, on %u board%s in %s - every "
               "%gs, q quits\n",
               when, cur.n, cur.n == 1 ? "" : "s", unused, no_slot, cur.boards,
               cur.boards == 1 ? "" : "s", view.names, o->delay);
        /* What is left for the table: the lines above, its heading and a "... more" line. */
        size_t above = 1 + gp_print_processes(&cur, sized ? ws.ws_col : 0) + 2;
        size_t rows = !sized ? 0 : ws.ws_row > above ? (size_t)ws.ws_row - above : 1;
        gp_print_table(&cur, rows, o->all);
        fflush(stdout);
        struct gp_sample swap = prev;
        prev = cur;
        cur = swap;
        wait = (uint64_t)(o->delay * 1e9);
    }
    tty_restore();
    tty_set = 0;
    gp_sample_free(&prev);
    gp_sample_free(&cur);
    gp_tool_view_free(&view);
    return rc;
}

int gp_cmd_top(int argc, char **argv)
{
    struct top_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc == GP_PARSED_HELP)
        return 0;
    if (rc)
        return rc;
    return o.once || o.json ? once(&o) : live(&o);
}
