/*
 * top_tty.c - `gpuprio top`'s live view on a real terminal: a pseudo-terminal this program makes,
 * with a small job-control shell of its own on it (a session leader that runs the command as a
 * foreground job in a process group of its own, takes the terminal back when the job stops and
 * gives it back on `fg`, as an interactive shell does). The terminal's modes are read from the
 * outside, through the pty's slave side, at each step.
 *
 *   top_tty GPUPRIO pipe       `gpuprio top -d 0.1 | head -1`: head ends after the first line,
 *                              and top's next frame meets a pipe without a reader (SIGPIPE). The
 *                              terminal was raw (-icanon -echo) while top ran, and is back to
 *                              icanon echo once the job is over.
 *   top_tty GPUPRIO suspend    `gpuprio top -d 0.2`, then Ctrl-Z: the job stops with the terminal
 *                              restored; `fg`: raw again, and top draws again; then q: restored,
 *                              exit status 0.
 *
 * The boards are read from an empty temporary directory (no processes: the view says so). Exits
 * 0 when every check held, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int failures;
static int master = -1, slave = -1; /* slave: this program's look at the terminal's modes */
static int to_shell = -1, from_shell = -1;
static char screen[1 << 20]; /* what the terminal showed, NUL-terminated (the latest 1 MiB) */
static size_t shown;
static char report[256]; /* the shell's latest report line */
static pid_t shell, job;

static void check(bool ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Whether the terminal is as a live view sets it: neither canonical nor echoing. */
static bool raw_now(void)
{
    struct termios t;
    return tcgetattr(slave, &t) == 0 && !(t.c_lflag & (ICANON | ECHO));
}

/* Whether the terminal is as it was before: canonical and echoing. */
static bool cooked_now(void)
{
    struct termios t;
    return tcgetattr(slave, &t) == 0 && (t.c_lflag & ICANON) && (t.c_lflag & ECHO);
}

static int frames(void)
{
    int n = 0;
    for (const char *p = screen; (p = strstr(p, "gpuprio top -")); p++)
        n++;
    return n;
}

/* Reads what the terminal shows and the shell reports, for up to ms; true when a report came
 * (into report). *saw_raw: whether the terminal was raw at any look meanwhile. */
static bool pump(unsigned ms, bool *saw_raw)
{
    uint64_t until = now_ms() + ms;
    for (;;) {
        if (saw_raw && raw_now())
            *saw_raw = true;
        uint64_t now = now_ms();
        if (now >= until)
            return false;
        struct pollfd p[2] = {{.fd = master, .events = POLLIN},
                              {.fd = from_shell, .events = POLLIN}};
        int n = poll(p, 2, saw_raw ? 1 : (int)(until - now));
        if (n < 0 && errno != EINTR)
            return false;
        if (p[0].revents & POLLIN) {
            char buf[4096];
            ssize_t got = read(master, buf, sizeof buf);
            if (got > 0) {
                if (shown + (size_t)got >= sizeof screen)
                    shown = 0; /* the latest only: frames are counted in what is kept */
                memcpy(screen + shown, buf, (size_t)got);
                shown += (size_t)got;
                screen[shown] = '\0';
            }
        }
        if (p[1].revents & (POLLIN | POLLHUP)) {
            size_t n_read = 0;
            char c;
            while (n_read < sizeof report - 1 && read(from_shell, &c, 1) == 1 && c != '\n')
                report[n_read++] = c;
            report[n_read] = '\0';
            return n_read > 0;
        }
    }
}

/* Waits up to ms for a report starting with what. */
static bool await_report(const char *what, unsigned ms, bool *saw_raw)
{
    uint64_t until = now_ms() + ms;
    for (uint64_t now; (now = now_ms()) < until;)
        if (pump((unsigned)(until - now), saw_raw) && !strncmp(report, what, strlen(what)))
            return true;
    return false;
}

/* Waits up to ms until cond() holds, reading the terminal meanwhile. */
static bool await(bool (*cond)(void), unsigned ms)
{
    uint64_t until = now_ms() + ms;
    while (!cond()) {
        if (now_ms() >= until)
            return false;
        pump(5, NULL);
    }
    return true;
}

static int min_frames;
static bool drawn(void)
{
    return frames() >= min_frames;
}

static void say(int fd, const char *text)
{
    if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        perror("top_tty: write");
}

/* The shell: a session leader with the terminal as its controlling one, which runs argv as a
 * foreground job in a process group of its own and reports to the harness what becomes of it:
 * "job PID", "stopped" (the terminal taken back, as a shell's prompt would), "continued" (after
 * "fg" from the harness: the terminal given back, SIGCONT sent), "exit N" or "signal N". */
static void run_shell(const char *tty, char **argv, int commands, int reports)
{
    setsid();
    int fd = open(tty, O_RDWR);
    if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) != 0)
        _exit(120);
    signal(SIGTTOU, SIG_IGN); /* tcsetpgrp from the background, as shells do */
    pid_t child = fork();
    if (child == 0) {
        setpgid(0, 0);
        tcsetpgrp(fd, getpid());
        signal(SIGTTOU, SIG_DFL);
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        execv(argv[0], argv);
        _exit(127);
    }
    setpgid(child, child);
    tcsetpgrp(fd, child);
    char line[64];
    snprintf(line, sizeof line, "job %d\n", (int)child);
    say(reports, line);
    for (;;) {
        int status;
        if (waitpid(child, &status, WUNTRACED) != child)
            _exit(121);
        if (WIFSTOPPED(status)) {
            tcsetpgrp(fd, getpgrp());
            say(reports, "stopped\n");
            char c;
            while (read(commands, &c, 1) == 1 && c != '\n') /* "fg" */
                ;
            tcsetpgrp(fd, child);
            kill(-child, SIGCONT);
            say(reports, "continued\n");
            continue;
        }
        snprintf(line, sizeof line, "%s %d\n", WIFEXITED(status) ? "exit" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        say(reports, line);
        _exit(0);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "pipe") && strcmp(argv[2], "suspend"))) {
        fprintf(stderr, "usage: top_tty GPUPRIO pipe|suspend\n");
        return 2;
    }
    const char *tool = argv[1];
    bool pipe_mode = !strcmp(argv[2], "pipe");
    char boards[] = "/tmp/gpuprio-top-tty-XXXXXX";
    if (!mkdtemp(boards)) {
        perror("top_tty: mkdtemp");
        return 2;
    }
    setenv("GPUPRIO_BOARD_DIR", boards, 1);
    setenv("GPUPRIO_CONFIG", "/nonexistent/gpuprio.conf", 1);
    unsetenv("LD_PRELOAD");
    alarm(120); /* whatever happens, the test ends (the children with their terminal's hangup) */

    master = posix_openpt(O_RDWR | O_NOCTTY);
    const char *tty =
        master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0 ? ptsname(master) : NULL;
    slave = tty ? open(tty, O_RDWR | O_NOCTTY) : -1;
    int commands[2], reports[2];
    if (slave < 0 || pipe(commands) != 0 || pipe(reports) != 0) {
        perror("top_tty: a pseudo-terminal");
        rmdir(boards);
        return 2;
    }
    struct winsize ws = {.ws_row = 24, .ws_col = 120};
    ioctl(master, TIOCSWINSZ, &ws);
    check(cooked_now(), "a new terminal is canonical and echoes");

    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' top -d 0.1 | head -1", tool);
    char *pipe_argv[] = {"/bin/sh", "-c", cmd, NULL};
    char *suspend_argv[] = {(char *)tool, "top", "-d", "0.2", NULL};
    shell = fork();
    if (shell == 0) {
        close(master);
        close(slave);
        close(commands[1]);
        close(reports[0]);
        run_shell(tty, pipe_mode ? pipe_argv : suspend_argv, commands[0], reports[1]);
    }
    close(commands[0]);
    close(reports[1]);
    to_shell = commands[1];
    from_shell = reports[0];
    if (!await_report("job ", 10000, NULL)) {
        check(false, "the shell started the job");
        goto out;
    }
    job = (pid_t)atoi(report + 4);

    if (pipe_mode) {
        bool saw_raw = false;
        bool ended = await_report("exit", 20000, &saw_raw);
        check(saw_raw, "the terminal was raw (-icanon -echo) while top ran");
        check(ended && !strcmp(report, "exit 0"), "the pipeline ended, with head's status 0");
        check(strstr(screen, "gpuprio top -") != NULL, "head printed top's first line");
        check(cooked_now(), "after top met the pipe without a reader: the terminal is canonical "
                            "and echoes again");
        goto out;
    }

    min_frames = 1;
    check(await(drawn, 10000), "top drew its view");
    check(await(raw_now, 5000), "the terminal is raw (-icanon -echo) while top runs");
    say(master, "\x1a"); /* Ctrl-Z */
    check(await_report("stopped", 10000, NULL), "Ctrl-Z stopped the job");
    check(cooked_now(), "stopped: the terminal is canonical and echoes again");
    int before = frames();
    say(to_shell, "fg\n");
    check(await_report("continued", 10000, NULL), "fg continued the job");
    min_frames = before + 1;
    check(await(raw_now, 5000), "continued: the terminal is raw again");
    check(await(drawn, 10000), "continued: top draws again");
    say(master, "q");
    check(await_report("exit", 10000, NULL) && !strcmp(report, "exit 0"), "q: top ended, status 0");
    check(cooked_now(), "after q: the terminal is canonical and echoes again");

out:
    if (job > 0)
        kill(-job, SIGKILL);
    if (shell > 0) {
        kill(shell, SIGKILL);
        waitpid(shell, NULL, 0);
    }
    rmdir(boards);
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
