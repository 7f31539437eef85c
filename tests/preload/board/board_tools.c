/*
 * board_tools.c - running the gpuprio command (top, metrics, set) as a given user next to the
 * workers, bounded in time, and checking that what it said parses: JSON (RFC 8259) and the
 * Prometheus text format. Used by tenant.admit, tenant.root_view, tenant.bad-conf and the
 * tenant.hostile_* tests.
 */
#include "board_harness.h"

struct parse {
    const char *p, *end;
    int depth;
};

static void j_space(struct parse *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static bool j_digits(struct parse *j)
{
    const char *from = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
        j->p++;
    return j->p > from;
}

static bool j_string(struct parse *j)
{
    if (j->p >= j->end || *j->p != '"')
        return false;
    for (j->p++; j->p < j->end; j->p++) {
        unsigned char c = (unsigned char)*j->p;
        if (c == '"') {
            j->p++;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c != '\\')
            continue;
        if (++j->p >= j->end)
            return false;
        if (*j->p == 'u') {
            for (int i = 0; i < 4; i++)
                if (++j->p >= j->end || !strchr("0123456789abcdefABCDEF", *j->p) || !*j->p)
                    return false;
        } else if (!*j->p || !strchr("\"\\/bfnrt", *j->p)) {
            return false;
        }
    }
    return false;
}

static bool j_number(struct parse *j)
{
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p < j->end && *j->p == '0')
        j->p++;
    else if (!j_digits(j))
        return false;
    if (j->p < j->end && *j->p == '.' && (++j->p, !j_digits(j)))
        return false;
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        return j_digits(j);
    }
    return true;
}

static bool j_literal(struct parse *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        return false;
    j->p += n;
    return true;
}

/* One JSON value, its members and elements (an object's or array's closing character: close). */
static bool j_value(struct parse *j);

static bool j_members(struct parse *j, char close)
{
    j->p++;
    j_space(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return true;
    }
    for (;;) {
        j_space(j);
        if (close == '}') {
            if (!j_string(j))
                return false;
            j_space(j);
            if (j->p >= j->end || *j->p++ != ':')
                return false;
        }
        if (!j_value(j))
            return false;
        j_space(j);
        if (j->p >= j->end)
            return false;
        char c = *j->p++;
        if (c == close)
            return true;
        if (c != ',')
            return false;
    }
}

static bool j_value(struct parse *j)
{
    j_space(j);
    if (j->p >= j->end || j->depth >= 64)
        return false;
    j->depth++;
    bool ok;
    switch (*j->p) {
    case '{':
        ok = j_members(j, '}');
        break;
    case '[':
        ok = j_members(j, ']');
        break;
    case '"':
        ok = j_string(j);
        break;
    case 't':
        ok = j_literal(j, "true");
        break;
    case 'f':
        ok = j_literal(j, "false");
        break;
    case 'n':
        ok = j_literal(j, "null");
        break;
    default:
        ok = j_number(j);
    }
    j->depth--;
    return ok;
}

bool json_parses(const char *text, size_t n)
{
    struct parse j = {text, text + n, 0};
    j_space(&j);
    if (j.p >= j.end || (*j.p != '{' && *j.p != '['))
        return false;
    bool ok = j_value(&j);
    j_space(&j);
    return ok && j.p == j.end;
}

/* Whether the n characters at p are word. */
static bool is_word(const char *p, size_t n, const char *word)
{
    return n == strlen(word) && !memcmp(p, word, n);
}

/* The length of the name of class `first`, then `rest`, at p (0: none). */
static size_t name_len(const char *p, const char *end, const char *first, const char *rest)
{
    size_t n = 0;
    while (p + n < end && p[n] && strchr(n ? rest : first, p[n]))
        n++;
    return n;
}

#define LOWER_UPPER "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
#define METRIC_FIRST LOWER_UPPER ":"
#define METRIC_REST LOWER_UPPER ":0123456789"
#define LABEL_REST LOWER_UPPER "0123456789"

/* A sample's value (or timestamp): a float as Go's ParseFloat takes it, or NaN, +Inf, -Inf. */
static bool m_float(const char *p, size_t n)
{
    char buf[64];
    if (!n || n >= sizeof buf)
        return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (!strcmp(buf, "NaN") || !strcmp(buf, "+Inf") || !strcmp(buf, "-Inf"))
        return true;
    char *stop;
    strtod(buf, &stop);
    return *stop == '\0' && strspn(buf, "+-0123456789.eE") == n;
}

bool metrics_parse(const char *text, size_t n, const char **why)
{
    char typed[256][96];
    size_t n_typed = 0, samples = 0;
    const char *end = text + n;
    *why = "empty, or its last line unended";
    if (!n || text[n - 1] != '\n' || strncmp(text, "# HELP ", 7) != 0)
        return false;
    for (const char *line = text; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        *why = "a line holds a NUL byte";
        if (memchr(line, '\0', (size_t)(eol - line)))
            return false;
        if (line == eol) {
            line = eol + 1;
            continue;
        }
        if (line[0] == '#') {
            bool help = !strncmp(line, "# HELP ", 7), type = !strncmp(line, "# TYPE ", 7);
            size_t len = (help || type) ? name_len(line + 7, eol, METRIC_FIRST, METRIC_REST) : 0;
            *why = "a HELP or TYPE line without a metric name";
            if ((help || type) && (!len || (line + 7 + len < eol && line[7 + len] != ' ')))
                return false;
            if (type) {
                const char *t = line + 7 + len + 1;
                size_t tn = t < eol ? (size_t)(eol - t) : 0;
                *why = "a TYPE that is none of counter, gauge, histogram, summary, untyped";
                if (!is_word(t, tn, "counter") && !is_word(t, tn, "gauge") &&
                    !is_word(t, tn, "histogram") && !is_word(t, tn, "summary") &&
                    !is_word(t, tn, "untyped"))
                    return false;
                if (n_typed < 256 && len < 96)
                    snprintf(typed[n_typed++], 96, "%.*s", (int)len, line + 7);
            }
            line = eol + 1;
            continue;
        }
        size_t len = name_len(line, eol, METRIC_FIRST, METRIC_REST);
        *why = "a sample without a metric name";
        if (!len)
            return false;
        bool declared = false;
        for (size_t i = 0; i < n_typed && !declared; i++) {
            size_t tk = strlen(typed[i]);
            declared =
                tk <= len && !strncmp(line, typed[i], tk) &&
                (tk == len || is_word(line + tk, len - tk, "_bucket") ||
                 is_word(line + tk, len - tk, "_sum") || is_word(line + tk, len - tk, "_count"));
        }
        *why = "a sample of a family with no TYPE before it";
        if (!declared)
            return false;
        const char *p = line + len;
        if (p < eol && *p == '{') {
            p++;
            while (p < eol && *p != '}') {
                size_t l = name_len(p, eol, LOWER_UPPER, LABEL_REST);
                *why = "a label that is not NAME=\"VALUE\"";
                if (!l || p + l + 1 >= eol || p[l] != '=' || p[l + 1] != '"')
                    return false;
                for (p += l + 2; p < eol && *p != '"'; p++)
                    if (*p == '\\' && (++p >= eol || !strchr("\\\"n", *p) || !*p)) {
                        *why = "a label value with an escape other than \\\\, \\\" or \\n";
                        return false;
                    }
                if (p >= eol)
                    return false;
                p++;
                if (p < eol && *p == ',')
                    p++;
            }
            *why = "labels not closed";
            if (p >= eol)
                return false;
            p++;
        }
        *why = "a sample whose value is not a number";
        if (p >= eol || *p != ' ')
            return false;
        p++;
        const char *space = memchr(p, ' ', (size_t)(eol - p));
        if (!m_float(p, (size_t)((space ? space : eol) - p)) ||
            (space && !m_float(space + 1, (size_t)(eol - space - 1))))
            return false;
        samples++;
        line = eol + 1;
    }
    *why = "no sample";
    return samples > 0;
}

/* What a tool run must say: top's JSON (an object or array, parsed whole), metrics' exposition
 * (parsed whole), or set's answer about a process whose board may change under it: anything,
 * with status 0 (set) or 1 (not reached, or its board changed under the command), never a
 * signal. */
enum tool_answer { TOOL_JSON, TOOL_METRICS, TOOL_SET };

/* Runs `gpuprio ARGS` as uid (0: root), killed after 20 s: 0 when it ended as it must (answer)
 * within TOOL_PROMPT_NS (a run that takes longer holds up whoever watches with it, and was
 * taken for a hang by everyone it was asked by), not counting the time it waited for a CPU that
 * others held (tool_ended): that is the host's load, not the tool's work or a wait of its own. */
#define TOOL_PROMPT_NS 5000000000ull

/* How long child (running, or ended and not yet reaped) waited on a run queue for a CPU, from
 * /proc/PID/schedstat (its one thread's); *ns unchanged where it cannot be read. */
static void run_delay(pid_t child, uint64_t *ns)
{
    char path[64];
    unsigned long long ran, waited;
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)child);
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "%llu %llu", &ran, &waited) == 2)
        *ns = waited;
    if (f)
        fclose(f);
}

bool tool_ended(pid_t child, int *status, uint64_t *delay_ns)
{
    siginfo_t info = {0};
    bool over =
        waitid(P_PID, (id_t)child, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == child;
    run_delay(child, delay_ns);
    return over && reap(child, status, 0) == child;
}
char set_said[4096];
uint64_t tool_slowest_ns;

static int run_tool(uid_t uid, const char *const *args, enum tool_answer answer)
{
    int out[2];
    if (pipe(out) != 0)
        return -1;
    size_t said_n = 0;
    if (answer == TOOL_SET)
        set_said[0] = '\0';
    uint64_t started = now_ns();
    pid_t child = fork_as(uid);
    if (child == 0) {
        dup2(out[1], 1);
        if (answer == TOOL_SET)
            dup2(out[1], 2);
        close(out[0]);
        const char *argv[8] = {tool};
        for (int i = 0; args[i] && i < 6; i++)
            argv[i + 1] = args[i];
        execv(tool, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    char *said = NULL;
    size_t got = 0, cap = 0;
    bool too_long = false; /* more than 64 MiB: not what top or metrics say of two boards */
    int status = -1;
    uint64_t until = started + 20000000000ull;
    /* Read while waiting: a full pipe must not block it. Reaped before the read, so that what a
     * tool wrote just before it ended is read before the loop ends (read, then reaped, it was
     * lost: "exit 0, output starting ''" under load). */
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    uint64_t delayed = 0; /* waiting for a CPU */
    for (;;) {
        char buf[65536];
        ssize_t n;
        bool over = tool_ended(child, &status, &delayed);
        while ((n = read(out[0], buf, sizeof buf)) > 0) {
            if (got + (size_t)n + 1 > cap && !too_long) {
                size_t want = cap ? 2 * cap : 65536;
                while (want < got + (size_t)n + 1)
                    want *= 2;
                char *grown = want <= (64u << 20) ? realloc(said, want) : NULL;
                if (grown) {
                    said = grown;
                    cap = want;
                } else {
                    too_long = true;
                }
            }
            if (!too_long) {
                memcpy(said + got, buf, (size_t)n);
                got += (size_t)n;
                said[got] = '\0';
            }
            for (ssize_t i = 0; answer == TOOL_SET && i < n && said_n < sizeof set_said - 1; i++) {
                set_said[said_n++] = buf[i];
                set_said[said_n] = '\0';
            }
        }
        if (over)
            break;
        if (now_ns() > until) {
            printf("  gpuprio %s as uid %u did not end within 20 s: killed\n", args[0],
                   (unsigned)uid);
            kill(child, SIGKILL);
            reap(child, &status, 0);
            close(out[0]);
            free(said);
            return -1;
        }
        usleep(2000);
    }
    close(out[0]);
    uint64_t wall = now_ns() - started, took = wall > delayed ? wall - delayed : 0;
    if (took > tool_slowest_ns)
        tool_slowest_ns = took;
    const char *why = "";
    bool ended = answer == TOOL_SET ? WIFEXITED(status) && WEXITSTATUS(status) <= 1
                                    : WIFEXITED(status) && WEXITSTATUS(status) == 0;
    bool parsed = answer == TOOL_SET ||
                  (!too_long && said &&
                   (answer == TOOL_JSON ? json_parses(said, got) : metrics_parse(said, got, &why)));
    if (answer == TOOL_JSON && !parsed)
        why = "not one JSON object or array";
    if (too_long)
        why = "more than 64 MiB";
    bool prompt = took <= TOOL_PROMPT_NS;
    if (!ended || !parsed || !prompt) {
        char head[17] = "";
        for (size_t i = 0; said && i < got && i < sizeof head - 1; i++)
            head[i] = (unsigned char)said[i] < 0x20 ? ' ' : said[i];
        printf("  gpuprio %s as uid %u: status %s %d after %.2f s (%.2f s of them waiting for a "
               "CPU)%s%s, output starting '%s'\n",
               args[0], (unsigned)uid, WIFEXITED(status) ? "exit" : "signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), (double)wall / 1e9,
               (double)(wall - took) / 1e9, parsed ? "" : "; does not parse: ", why, head);
    }
    free(said);
    return ended && parsed && prompt ? 0 : -1;
}

pid_t set_target;
int tool_runs;

int tools_fail(int rounds)
{
    static const char *const top[] = {"top", "--once", "--json", NULL};
    static const char *const metrics[] = {"metrics", "--once", NULL};
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)set_target);
    const char *const set[] = {"set", pid, "low", NULL}; /* its queues are above: never taken */
    int failed = 0;
    tool_runs = 0;
    tool_slowest_ns = 0;
    for (int i = 0; i < rounds; i++) {
        failed += run_tool(0, top, TOOL_JSON) != 0;
        failed += run_tool(0, metrics, TOOL_METRICS) != 0;
        failed += run_tool(USER_D, top, TOOL_JSON) != 0;
        failed += run_tool(USER_D, metrics, TOOL_METRICS) != 0;
        tool_runs += 4;
        if (set_target) {
            failed += run_tool(0, set, TOOL_SET) != 0;
            tool_runs++;
        }
    }
    return failed;
}

/* Reads what fd's file holds into a new string. */
static char *file_text(int fd)
{
    char *text = malloc(TOOL_OUT_MAX + 1);
    ssize_t n = text ? pread(fd, text, TOOL_OUT_MAX, 0) : -1;
    if (text)
        text[n > 0 ? n : 0] = '\0';
    return text;
}

struct tool_run run_tool_kept(uid_t uid, const char *const *args, unsigned bound)
{
    struct tool_run r = {false, 0, NULL, NULL};
    char out_path[128], err_path[128];
    snprintf(out_path, sizeof out_path, "%s/tool.out", dir);
    snprintf(err_path, sizeof err_path, "%s/tool.err", dir);
    int out = open(out_path, O_RDWR | O_CREAT | O_TRUNC, 0600),
        err = open(err_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    EXPECT(out >= 0 && err >= 0);
    uint64_t from = now_ns();
    pid_t child = fork_as(uid);
    if (child == 0) {
        dup2(out, 1);
        dup2(err, 2);
        const char *argv[8] = {tool};
        for (int i = 0; args[i] && i < 6; i++)
            argv[i + 1] = args[i];
        execv(tool, (char *const *)argv);
        _exit(127);
    }
    int status = -1;
    bool ended = false;
    uint64_t delayed = 0;
    while (!(ended = tool_ended(child, &status, &delayed)) &&
           now_ns() - from < bound * 1000000000ull)
        usleep(5000);
    r.seconds = (double)(now_ns() - from - (ended ? delayed : 0)) / 1e9;
    if (!ended) {
        printf("  gpuprio %s as uid %u did not end within %u s: killed\n", args[0], (unsigned)uid,
               bound);
        kill(child, SIGKILL);
        reap(child, &status, 0);
    }
    r.ok =
        ended && WIFEXITED(status) && WEXITSTATUS(status) == 0 && r.seconds * 1e9 <= TOOL_PROMPT_NS;
    r.out = file_text(out);
    r.err = file_text(err);
    close(out);
    close(err);
    return r;
}

int occurrences(const char *text, const char *what)
{
    int n = 0;
    for (const char *at = text; at && (at = strstr(at, what)); at += strlen(what))
        n++;
    return n;
}

int tool_status(uid_t uid, const char *const *args, char *said, size_t size)
{
    char path[128];
    snprintf(path, sizeof path, "%s/tool-status.out", dir);
    int out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    EXPECT(out >= 0);
    pid_t child = fork_as(uid);
    if (child == 0) {
        dup2(out, 1);
        dup2(out, 2);
        const char *argv[8] = {tool};
        for (int i = 0; args[i] && i < 6; i++)
            argv[i + 1] = args[i];
        execv(tool, (char *const *)argv);
        _exit(127);
    }
    int status = -1;
    uint64_t until = now_ns() + 20000000000ull;
    while (reap(child, &status, WNOHANG) != child) {
        if (now_ns() > until) {
            kill(child, SIGKILL);
            reap(child, &status, 0);
            break;
        }
        usleep(5000);
    }
    ssize_t n = pread(out, said, size - 1, 0);
    said[n > 0 ? n : 0] = '\0';
    close(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
