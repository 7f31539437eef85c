/*
 * config_test.c - unit.config: reading GPUPRIO_* variables (src/util/gp_config.c, logging through
 * src/util/gp_log.c), without any GPU runtime. gp_config_get, gp_config_uint and
 * gp_config_choice: unset or empty gives the default silently; valid values are returned; a bad
 * value (out of range, negative, not a number, overflowing, not a choice) gives the default and
 * exactly one "gpuprio: warn: " line on stderr naming the variable, the value and what is
 * accepted. stderr is captured by pointing fd 2 at a temporary file. Also gp_log: the default
 * level, GPUPRIO_LOG through gp_opts_load, errno kept, long lines cut to one line.
 *
 * And the options table (src/util/gp_options.def, gp_options.c): every entry is well formed
 * (its default is a value it accepts, names and run options unique, choices in their enums'
 * order); for every option and every probe value (opt_probes.h), the library's reader
 * (gp_opts_load) warns exactly when the parser `gpuprio run` checks with (gp_opt_parse) refuses,
 * once, naming the variable, and the accessors then give what the parser gave; the exact
 * message of each type; values read once (a later change of the environment is not seen).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gp_config.h"
#include "gp_log.h"
#include "gp_options.h"
#include "opt_probes.h"
#include "policy.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define VAR "GPUPRIO_UNIT_TEST_VALUE"

/* stderr capture: fd 2 points at a temporary file between capture_begin and capture_end. */
static FILE *capture_file;
static int saved_stderr = -1;
static char captured[8192];

static void capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    saved_stderr = dup(STDERR_FILENO);
    if (!capture_file || saved_stderr < 0 || dup2(fileno(capture_file), STDERR_FILENO) < 0) {
        perror("unit.config: cannot capture stderr");
        exit(2);
    }
}

/* Restores stderr; what was written in between is in captured (NUL-terminated). */
static const char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    saved_stderr = -1;
    rewind(capture_file);
    size_t n = fread(captured, 1, sizeof captured - 1, capture_file);
    captured[n] = '\0';
    fclose(capture_file);
    capture_file = NULL;
    return captured;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void set_var(const char *value)
{
    if (value)
        setenv(VAR, value, 1);
    else
        unsetenv(VAR);
}

/*
 * Checks that out is one "gpuprio: warn: " line (ending in a newline, nothing else) containing
 * each of the NULL-terminated strings given.
 */
static void check_one_warning(const char *out, const char *file, int line, ...)
{
    if (!check_at(out[0] != '\0', file, line, "a warning on stderr"))
        return;
    bool ok = check_int_at((long long)count_lines(out), 1, file, line, "one line on stderr");
    ok = check_at(strncmp(out, "gpuprio: warn: ", 15) == 0, file, line,
                  "line starts with \"gpuprio: warn: \"") &&
         ok;
    size_t len = strlen(out);
    ok = check_at(len > 0 && out[len - 1] == '\n', file, line, "line ends with a newline") && ok;
    va_list ap;
    va_start(ap, line);
    for (const char *want; (want = va_arg(ap, const char *));) {
        if (!check_at(strstr(out, want) != NULL, file, line, "warning contains expected text")) {
            fprintf(stderr, "  missing \"%s\"\n", want);
            ok = false;
        }
    }
    va_end(ap);
    if (!ok)
        fprintf(stderr, "  stderr was \"%s\"\n", out);
}
#define CHECK_ONE_WARNING(out, ...) check_one_warning((out), __FILE__, __LINE__, __VA_ARGS__, NULL)

/* Checks that nothing was written. */
#define CHECK_SILENT(out)                                                                          \
    do {                                                                                           \
        if (!CHECK((out)[0] == '\0'))                                                              \
            fprintf(stderr, "  stderr was \"%s\"\n", (out));                                       \
    } while (0)

/* gp_config_uint(VAR, ...) with VAR set to value (NULL: unset), stderr captured. */
static uint64_t read_uint(const char *value, uint64_t min, uint64_t max, uint64_t def,
                          const char **out)
{
    set_var(value);
    capture_begin();
    uint64_t v = gp_config_uint(VAR, min, max, def, "widgets");
    *out = capture_end();
    return v;
}

/* A value that must be accepted silently. */
static void expect_uint_ok(const char *value, uint64_t min, uint64_t max, uint64_t want,
                           const char *file, int line)
{
    const char *out;
    uint64_t v = read_uint(value, min, max, 77, &out);
    bool ok = check_at(v == want, file, line, "gp_config_uint(value) == expected");
    ok = check_at(out[0] == '\0', file, line, "no message") && ok;
    if (!ok)
        fprintf(stderr, "  value \"%s\" in [%llu, %llu]: got %llu, stderr \"%s\"\n",
                value ? value : "(unset)", (unsigned long long)min, (unsigned long long)max,
                (unsigned long long)v, out);
}
#define EXPECT_UINT_OK(value, min, max, want)                                                      \
    expect_uint_ok((value), (min), (max), (want), __FILE__, __LINE__)

/* A value that must give the default and one warning naming the variable, value and range. */
static void expect_uint_bad(const char *value, uint64_t min, uint64_t max, uint64_t def,
                            const char *file, int line)
{
    const char *out;
    uint64_t v = read_uint(value, min, max, def, &out);
    if (!check_at(v == def, file, line, "gp_config_uint(bad value) == default"))
        fprintf(stderr, "  value \"%s\" in [%llu, %llu]: got %llu\n", value,
                (unsigned long long)min, (unsigned long long)max, (unsigned long long)v);
    char named[1100], range[128], using[64];
    snprintf(named, sizeof named, VAR "='%s'", value);
    snprintf(range, sizeof range, "widgets from %llu to %llu", (unsigned long long)min,
             (unsigned long long)max);
    snprintf(using, sizeof using, "using %llu", (unsigned long long)def);
    check_one_warning(out, file, line, named, range, using, NULL);
}
#define EXPECT_UINT_BAD(value, min, max, def)                                                      \
    expect_uint_bad((value), (min), (max), (def), __FILE__, __LINE__)

static void test_get(void)
{
    set_var(NULL);
    CHECK(gp_config_get(VAR) == NULL);
    set_var("");
    CHECK(gp_config_get(VAR) == NULL);
    set_var("x");
    const char *v = gp_config_get(VAR);
    CHECK(v != NULL && strcmp(v, "x") == 0);
    set_var(" ");
    v = gp_config_get(VAR);
    CHECK(v != NULL && strcmp(v, " ") == 0);
}

static void test_uint_default(void)
{
    EXPECT_UINT_OK(NULL, 1, 1024, 77);
    EXPECT_UINT_OK("", 1, 1024, 77);
    EXPECT_UINT_OK(NULL, 0, UINT64_MAX, 77);
    EXPECT_UINT_OK("", 0, 0, 77);
}

static void test_uint_valid(void)
{
    EXPECT_UINT_OK("1", 1, 1024, 1);
    EXPECT_UINT_OK("4", 1, 1024, 4);
    EXPECT_UINT_OK("1024", 1, 1024, 1024);
    EXPECT_UINT_OK("0", 0, 10000000, 0);
    EXPECT_UINT_OK("10000000", 0, 10000000, 10000000);
    EXPECT_UINT_OK("3600000", 1, 3600000, 3600000);
    EXPECT_UINT_OK("007", 1, 10, 7);
    EXPECT_UINT_OK("5", 5, 5, 5);
    EXPECT_UINT_OK("18446744073709551615", 0, UINT64_MAX, UINT64_MAX);
    EXPECT_UINT_OK("18446744073709551614", 0, UINT64_MAX - 1, UINT64_MAX - 1);
    EXPECT_UINT_OK("4294967296", 0, UINT64_MAX, 4294967296ULL);
}

static void test_uint_bad(void)
{
    /* The exact message, once. */
    const char *out;
    uint64_t v = read_uint("2000", 1, 1024, 4, &out);
    CHECK(v == 4);
    if (!CHECK(strcmp(out, "gpuprio: warn: " VAR "='2000' is not a whole number of widgets from 1 "
                           "to 1024; using 4\n") == 0))
        fprintf(stderr, "  stderr was \"%s\"\n", out);

    /* Out of range, both sides. */
    EXPECT_UINT_BAD("0", 1, 1024, 4);
    EXPECT_UINT_BAD("1025", 1, 1024, 4);
    EXPECT_UINT_BAD("10000001", 0, 10000000, 150);
    EXPECT_UINT_BAD("4", 5, 5, 5);
    EXPECT_UINT_BAD("6", 5, 5, 5);
    EXPECT_UINT_BAD("4294967297", 1, 100000, 20); /* 2^32 + 1: 1 if truncated */
    /* Negative. */
    EXPECT_UINT_BAD("-1", 1, 1024, 4);
    EXPECT_UINT_BAD("-1", 0, 10000000, 150);
    EXPECT_UINT_BAD("-5", 0, UINT64_MAX, 150);
    EXPECT_UINT_BAD("-18446744073709551615", 0, 10000000, 150); /* 1 if negated */
    /* Negative after leading white space: strtoull negates these modulo 2^64. */
    EXPECT_UINT_BAD(" -1", 0, UINT64_MAX, 150);
    EXPECT_UINT_BAD("\t-18446744073709551615", 0, 10000000, 150);
    EXPECT_UINT_BAD(" -18446744073709551615", 1, 1024, 4);
    /* Not a number. */
    static const char *const garbage[] = {"abc",  "four", "10x", "x10", "1.5",  "1e3",
                                          "0x10", " ",    "\t",  "+",   "-",    "--1",
                                          "1 2",  "5 ",   "1,5", "1_0", "0b11", "four hundred"};
    for (size_t i = 0; i < N(garbage); i++)
        EXPECT_UINT_BAD(garbage[i], 1, 1024, 4);
    /* A value with a newline in it: the default, and still one line (gp_log.h: "one line
     * each"), whatever the value holds. */
    v = read_uint("4\nX", 1, 1024, 4, &out);
    CHECK(v == 4);
    CHECK_ONE_WARNING(out, VAR "='4", "widgets from 1 to 1024", "using 4");
    /* A variable without a default (0 below a range from 1) stays unset, and says so. */
    v = read_uint("0", 1, 1024, 0, &out);
    CHECK(v == 0);
    CHECK_ONE_WARNING(out, VAR "='0'", "widgets from 1 to 1024", "; leaving it unset");
    /* Overflow. */
    EXPECT_UINT_BAD("99999999999999999999999", 1, 1024, 4);
    EXPECT_UINT_BAD("99999999999999999999999", 0, UINT64_MAX, 4);
    EXPECT_UINT_BAD("18446744073709551616", 0, UINT64_MAX, 4);
    EXPECT_UINT_BAD("-99999999999999999999999", 0, UINT64_MAX, 4);

    /* A very long value: still one line, cut, starting with the variable. */
    char longv[3000];
    memset(longv, '9', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    v = read_uint(longv, 1, 1024, 4, &out);
    CHECK(v == 4);
    CHECK_ONE_WARNING(out, VAR "='999");
    CHECK(strlen(out) <= 1024);
}

/* gp_config_choice(VAR, choices, def) with VAR set to value (NULL: unset), stderr captured. */
static int read_choice(const char *value, const char *const *choices, int def, const char **out)
{
    set_var(value);
    capture_begin();
    int v = gp_config_choice(VAR, choices, def);
    *out = capture_end();
    return v;
}

static void test_choice(void)
{
    static const char *const policies[] = {"hpf", "passthrough", NULL};
    static const char *const levels[] = {"error", "warn", "info", "debug", NULL};
    static const char *const one[] = {"only", NULL};
    const char *out;

    /* Unset or empty: the default, silently. */
    CHECK_INT(read_choice(NULL, policies, 0, &out), 0);
    CHECK_SILENT(out);
    CHECK_INT(read_choice("", policies, 1, &out), 1);
    CHECK_SILENT(out);
    CHECK_INT(read_choice(NULL, levels, 1, &out), 1);
    CHECK_SILENT(out);

    /* Valid: the index, silently. */
    CHECK_INT(read_choice("hpf", policies, 1, &out), 0);
    CHECK_SILENT(out);
    CHECK_INT(read_choice("passthrough", policies, 0, &out), 1);
    CHECK_SILENT(out);
    for (int i = 0; levels[i]; i++) {
        CHECK_INT(read_choice(levels[i], levels, 1, &out), i);
        CHECK_SILENT(out);
    }
    CHECK_INT(read_choice("only", one, 0, &out), 0);
    CHECK_SILENT(out);

    /* The exact message, once. */
    CHECK_INT(read_choice("fifo", policies, 0, &out), 0);
    if (!CHECK(strcmp(out, "gpuprio: warn: " VAR "='fifo' is not one of hpf, passthrough; using "
                           "hpf\n") == 0))
        fprintf(stderr, "  stderr was \"%s\"\n", out);
    CHECK_INT(read_choice("fifo", policies, 1, &out), 1);
    CHECK_ONE_WARNING(out, VAR "='fifo'", "hpf, passthrough", "using passthrough");

    /* Not a choice: prefixes, extensions, numbers, padding. */
    static const char *const bad[] = {"hp", "hpfx", "hpf,passthrough", "0",    "1",
                                      " ",  "pass", "passthrough2",    "hpf ", " hpf"};
    for (size_t i = 0; i < N(bad); i++) {
        char named[64];
        snprintf(named, sizeof named, VAR "='%s'", bad[i]);
        CHECK_INT(read_choice(bad[i], policies, 0, &out), 0);
        CHECK_ONE_WARNING(out, named, "is not one of hpf, passthrough", "using hpf");
    }
    CHECK_INT(read_choice("verbose", levels, 1, &out), 1);
    CHECK_ONE_WARNING(out, VAR "='verbose'", "error, warn, info, debug", "using warn");
    CHECK_INT(read_choice("other", one, 0, &out), 0);
    CHECK_ONE_WARNING(out, VAR "='other'", "not one of only;", "using only");

    /* Many long choices (more than the message's room): the last is still found, and a bad
     * value still gives one line. */
    static char names[20][40];
    const char *many[21];
    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof names[i], "choice-number-%02d-with-a-long-name", i);
        many[i] = names[i];
    }
    many[20] = NULL;
    CHECK_INT(read_choice(names[19], many, 3, &out), 19);
    CHECK_SILENT(out);
    CHECK_INT(read_choice("nope", many, 3, &out), 3);
    CHECK_ONE_WARNING(out, VAR "='nope'", "choice-number-00-with-a-long-name, choice-number-01",
                      "using choice-number-03-with-a-long-name");
}

static void test_log(void)
{
    /* Default level warn: info and debug are dropped, warn and error printed. */
    capture_begin();
    gp_log(GP_LOG_INFO, "info %d", 1);
    gp_log(GP_LOG_DEBUG, "debug %d", 2);
    const char *out = capture_end();
    CHECK_SILENT(out);
    capture_begin();
    gp_log(GP_LOG_ERROR, "an error %d", 3);
    out = capture_end();
    CHECK(strcmp(out, "gpuprio: error: an error 3\n") == 0);

    /* Logging never changes errno. */
    capture_begin();
    errno = EDOM;
    gp_log(GP_LOG_WARN, "kept %s", "errno");
    int e = errno;
    out = capture_end();
    CHECK_INT(e, EDOM);
    CHECK(strcmp(out, "gpuprio: warn: kept errno\n") == 0);

    /* A line longer than the buffer is cut, but stays one line. */
    static char big[4000];
    memset(big, 'x', sizeof big - 1);
    capture_begin();
    gp_log(GP_LOG_WARN, "%s", big);
    out = capture_end();
    CHECK_INT(count_lines(out), 1);
    CHECK(strncmp(out, "gpuprio: warn: xxx", 18) == 0);
    CHECK(strlen(out) <= 1024 && out[strlen(out) - 1] == '\n');

    /* GPUPRIO_LOG, read by gp_opts_load: a bad value is named once, and warn kept... */
    setenv("GPUPRIO_LOG", "loud", 1);
    capture_begin();
    gp_opts_load();
    gp_log(GP_LOG_WARN, "still warn");
    gp_log(GP_LOG_INFO, "not info");
    out = capture_end();
    CHECK_INT(count_lines(out), 2);
    CHECK(strstr(out, "GPUPRIO_LOG='loud' is not one of error, warn, info, debug; using warn\n") !=
          NULL);
    CHECK(strstr(out, "gpuprio: warn: still warn\n") != NULL);
    CHECK(strstr(out, "not info") == NULL);
    /* ... info shows info, and error silences configuration warnings. */
    setenv("GPUPRIO_LOG", "info", 1);
    capture_begin();
    gp_opts_load();
    gp_log(GP_LOG_INFO, "now info");
    gp_log(GP_LOG_DEBUG, "not debug");
    out = capture_end();
    CHECK(strcmp(out, "gpuprio: info: now info\n") == 0);
    setenv("GPUPRIO_LOG", "error", 1);
    capture_begin();
    gp_opts_load();
    out = capture_end();
    CHECK_SILENT(out);
    uint64_t v = read_uint("bad", 1, 1024, 4, &out);
    CHECK(v == 4);
    CHECK_SILENT(out);
    setenv("GPUPRIO_LOG", "warn", 1);
    gp_opts_load();
    unsetenv("GPUPRIO_LOG");
}

/* ---- the options table ---- */

/* Unsets every variable of the table. */
static void unset_all(void)
{
    for (int i = 0; i < GP_OPT_COUNT; i++)
        unsetenv(gp_opt_desc((enum gp_opt)i)->name);
}

/* gp_opts_load with stderr captured. */
static const char *load_captured(void)
{
    capture_begin();
    gp_opts_load();
    return capture_end();
}

static void test_table(void)
{
    bool shorts[256] = {false};
    shorts['h'] = true; /* gpuprio run's own */
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        const struct gp_opt_desc *d = gp_opt_desc((enum gp_opt)i);
        bool ok = CHECK(strncmp(d->name, "GPUPRIO_", 8) == 0);
        ok = CHECK_INT(gp_opt_find(d->name), i) && ok;
        ok = CHECK(d->doc && d->doc[0]) && ok;
        /* The default is a value the variable itself accepts. */
        ok = CHECK(!d->def || gp_opt_parse((enum gp_opt)i, d->def, NULL) == 0) && ok;
        /* A number without a default reads 0 while unset, so 0 must not be a value it takes. */
        ok = CHECK(d->type != GP_OPT_TYPE_UINT ||
                   (d->min <= d->max && d->unit && (d->def || d->min >= 1))) &&
             ok;
        ok = CHECK(d->type != GP_OPT_TYPE_CHOICE || (d->def && d->choices && d->choices[0])) && ok;
        ok = CHECK(d->type != GP_OPT_TYPE_PRIORITY_LIST ||
                   (d->max >= 1 && d->max <= GP_OPT_LIST_MAX)) &&
             ok;
        ok = CHECK(d->type != GP_OPT_TYPE_PATH || (d->accepted && d->accepted[0])) && ok;
        ok = CHECK(d->type != GP_OPT_TYPE_AMOUNT || (d->max >= 1 && d->unit)) && ok;
        if (d->run_flag) {
            ok = CHECK(d->run_metavar && d->run_metavar[0]) && ok;
            ok = CHECK(strcmp(d->run_flag, "shim") != 0 && strcmp(d->run_flag, "help") != 0) && ok;
            for (int j = 0; j < i; j++) {
                const char *other = gp_opt_desc((enum gp_opt)j)->run_flag;
                ok = CHECK(!other || strcmp(other, d->run_flag) != 0) && ok;
            }
            if (d->run_short) {
                ok = CHECK(isalnum((unsigned char)d->run_short)) && ok;
                ok = CHECK(!shorts[(unsigned char)d->run_short]) && ok;
                shorts[(unsigned char)d->run_short] = true;
            }
        } else {
            ok = CHECK(!d->run_short) && ok;
        }
        if (!ok)
            fprintf(stderr, "  in the entry of %s\n", d->name);
    }
    CHECK_INT(gp_opt_find("GPUPRIO_NOT_AN_OPTION"), -ENOENT);
    /* Choices are read as their enums' values. */
    union gp_opt_value v;
    for (int p = SCHED_POLICY_HPF; p <= SCHED_POLICY_PASSTHROUGH; p++) {
        CHECK(gp_opt_parse(GP_OPT_POLICY, sched_policy_name((enum sched_policy)p), &v) == 0 &&
              v.choice == p);
    }
    for (int l = GP_LOG_ERROR; l <= GP_LOG_DEBUG; l++)
        CHECK(gp_opt_parse(GP_OPT_LOG, gp_log_level_names[l], &v) == 0 && v.choice == l);
    CHECK(gp_opt_parse(GP_OPT_BOARD, "on", &v) == 0 && v.choice == 0); /* sched_board.c */
    /* The variables the HALs name (gp_bind.c finds them by name). */
    CHECK(gp_opt_find("GPUPRIO_HIP_LIBRARY") >= 0);
    CHECK(gp_opt_find("GPUPRIO_CUDA_LIBRARY") >= 0);
}

/* Whether the accessor of id gives v. */
static bool reads_as(enum gp_opt id, const union gp_opt_value *v)
{
    switch (gp_opt_desc(id)->type) {
    case GP_OPT_TYPE_UINT:
        return gp_opt_uint(id) == v->u;
    case GP_OPT_TYPE_CHOICE:
        return gp_opt_choice(id) == v->choice;
    case GP_OPT_TYPE_PRIORITY: {
        int p;
        return gp_opt_priority(id, &p) && p == v->priority;
    }
    case GP_OPT_TYPE_PRIORITY_LIST: {
        const int *l;
        return gp_opt_priority_list(id, &l) == v->list.n &&
               memcmp(l, v->list.v, (size_t)v->list.n * sizeof *l) == 0;
    }
    case GP_OPT_TYPE_PATH:
        return gp_opt_str(id) && strcmp(gp_opt_str(id), v->str) == 0;
    case GP_OPT_TYPE_AMOUNT: {
        struct gp_amount a;
        return gp_opt_amount(id, &a) && a.value == v->amount.value &&
               a.percent == v->amount.percent;
    }
    }
    return false;
}

struct probe_run {
    enum gp_opt id;
    int accepted, refused;
};

/* One probe value: the reader warns exactly when the parser refuses. */
static void probe_one(const char *value, void *arg)
{
    struct probe_run *r = arg;
    const struct gp_opt_desc *d = gp_opt_desc(r->id);
    union gp_opt_value parsed, def;
    bool ok = gp_opt_parse(r->id, value, &parsed) == 0;
    setenv(d->name, value, 1);
    const char *out = load_captured();
    char named[OPT_PROBE_LEN + 64];
    snprintf(named, sizeof named, "gpuprio: warn: %s='", d->name);
    bool warned = strncmp(out, named, strlen(named)) == 0;
    bool good = check_int_at(warned, !ok, __FILE__, __LINE__,
                             "the reader warns iff the parser "
                             "refuses");
    good = check_int_at((long long)count_lines(out), !ok, __FILE__, __LINE__,
                        "one line when refused, none when accepted") &&
           good;
    if (ok) {
        r->accepted++;
        good = check_at(reads_as(r->id, &parsed), __FILE__, __LINE__, "read as parsed") && good;
    } else {
        r->refused++;
        /* refused: the default, as if unset */
        if (d->def && gp_opt_parse(r->id, d->def, &def) == 0)
            good =
                check_at(reads_as(r->id, &def), __FILE__, __LINE__, "default when refused") && good;
        else if (d->type == GP_OPT_TYPE_PRIORITY) {
            int p;
            good = check_at(!gp_opt_priority(r->id, &p), __FILE__, __LINE__, "unset") && good;
        } else if (d->type == GP_OPT_TYPE_PRIORITY_LIST) {
            const int *l;
            good = check_int_at(gp_opt_priority_list(r->id, &l), 0, __FILE__, __LINE__,
                                "no priorities") &&
                   good;
        } else if (d->type == GP_OPT_TYPE_AMOUNT) {
            struct gp_amount a;
            good = check_at(!gp_opt_amount(r->id, &a), __FILE__, __LINE__, "unset") && good;
        }
    }
    if (!good)
        fprintf(stderr, "  %s='%s': parser %s; stderr \"%s\"\n", d->name, value,
                ok ? "accepts" : "refuses", out);
    unsetenv(d->name);
}

/* For every option and probe value, the library's reader and the parser agree. */
static void test_reader_agrees_with_parser(void)
{
    unset_all();
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        struct probe_run r = {.id = (enum gp_opt)i};
        opt_probes(gp_opt_desc(r.id), probe_one, &r);
        /* Not vacuous: both kinds of value were tried (any text is a path). */
        CHECK(r.accepted > 0);
        CHECK(r.refused > 0 || gp_opt_desc(r.id)->type == GP_OPT_TYPE_PATH);
    }
    gp_opts_load();
}

static void test_options_read(void)
{
    unset_all();
    /* Unset: the defaults, silently. */
    const char *out = load_captured();
    CHECK_SILENT(out);
    CHECK(gp_opt_uint(GP_OPT_WINDOW) == 16);
    CHECK(gp_opt_uint(GP_OPT_WINDOW_US) == 500);
    CHECK(gp_opt_uint(GP_OPT_GRACE_US) == 150);
    CHECK(gp_opt_uint(GP_OPT_WATCHDOG_MS) == 500);
    CHECK(gp_opt_uint(GP_OPT_POLL_US) == 20);
    CHECK(gp_opt_uint(GP_OPT_SLOW_US) == 200);
    CHECK_INT(gp_opt_choice(GP_OPT_POLICY), SCHED_POLICY_HPF);
    CHECK_INT(gp_opt_choice(GP_OPT_LOG), GP_LOG_WARN);
    CHECK_INT(gp_opt_choice(GP_OPT_BOARD), 0);
    int p = 99;
    CHECK(!gp_opt_priority(GP_OPT_PRIORITY, &p) && p == 99);
    const int *list;
    CHECK_INT(gp_opt_priority_list(GP_OPT_STREAM_PRIORITIES, &list), 0);
    CHECK(strcmp(gp_opt_str(GP_OPT_BOARD_DIR), "/dev/shm") == 0);
    CHECK(gp_opt_str(GP_OPT_CUDA_LIBRARY) == NULL);
    CHECK(gp_opt_str(GP_OPT_LIBRARY_DIR) == NULL);

    /* Set: the values. */
    setenv("GPUPRIO_WINDOW", "3", 1);
    setenv("GPUPRIO_POLICY", "passthrough", 1);
    setenv("GPUPRIO_PRIORITY", "High", 1);
    setenv("GPUPRIO_STREAM_PRIORITIES", "low, critical,-7", 1);
    setenv("GPUPRIO_BOARD_DIR", "/tmp/boards", 1);
    out = load_captured();
    CHECK_SILENT(out);
    CHECK(gp_opt_uint(GP_OPT_WINDOW) == 3);
    CHECK_INT(gp_opt_choice(GP_OPT_POLICY), SCHED_POLICY_PASSTHROUGH);
    CHECK(gp_opt_priority(GP_OPT_PRIORITY, &p) && p == 10);
    if (CHECK_INT(gp_opt_priority_list(GP_OPT_STREAM_PRIORITIES, &list), 3))
        CHECK(list[0] == -10 && list[1] == 20 && list[2] == -7);
    CHECK(strcmp(gp_opt_str(GP_OPT_BOARD_DIR), "/tmp/boards") == 0);

    /* Read once: a later change of the environment is not seen until read again. */
    setenv("GPUPRIO_WINDOW", "5", 1);
    setenv("GPUPRIO_BOARD_DIR", "/tmp/other", 1);
    CHECK(gp_opt_uint(GP_OPT_WINDOW) == 3);
    CHECK(strcmp(gp_opt_str(GP_OPT_BOARD_DIR), "/tmp/boards") == 0);
    unset_all();

    /* The exact message of each type, once each, all of them in one read. */
    setenv("GPUPRIO_WINDOW", "0", 1);
    setenv("GPUPRIO_POLICY", "fifo", 1);
    setenv("GPUPRIO_PRIORITY", "urgent", 1);
    setenv("GPUPRIO_STREAM_PRIORITIES", "high,,low", 1);
    setenv("GPUPRIO_CU_RESERVE", "2.5%", 1);
    out = load_captured();
    CHECK_INT(count_lines(out), 5);
    CHECK(strstr(out, "gpuprio: warn: GPUPRIO_WINDOW='0' is not a whole number of commands from "
                      "1 to 1024; using 16\n") != NULL);
    CHECK(strstr(out, "gpuprio: warn: GPUPRIO_POLICY='fifo' is not one of hpf, passthrough, share; "
                      "using hpf\n") != NULL);
    CHECK(strstr(out, "gpuprio: warn: GPUPRIO_PRIORITY='urgent' is not a priority: expected "
                      "idle, low, normal, high, critical, or an integer from -1000 to 1000 "
                      "(higher runs first); streams keep their own priorities\n") != NULL);
    CHECK(strstr(out, "gpuprio: warn: GPUPRIO_STREAM_PRIORITIES='high,,low' is not a "
                      "comma-separated list of at most 64 priorities, each idle, low, normal, "
                      "high, critical, or an integer from -1000 to 1000 (higher runs first); "
                      "ignored\n") != NULL);
    CHECK(strstr(out, "gpuprio: warn: GPUPRIO_CU_RESERVE='2.5%' is not a whole number of compute "
                      "units from 0 to 65535 or a percentage from 0% to 100%; ignored\n") != NULL);
    if (count_lines(out) != 5)
        fprintf(stderr, "  stderr was \"%s\"\n", out);
    CHECK(gp_opt_uint(GP_OPT_WINDOW) == 16);
    CHECK_INT(gp_opt_choice(GP_OPT_POLICY), SCHED_POLICY_HPF);
    CHECK(!gp_opt_priority(GP_OPT_PRIORITY, &p));
    CHECK_INT(gp_opt_priority_list(GP_OPT_STREAM_PRIORITIES, &list), 0);
    struct gp_amount reserve;
    CHECK(!gp_opt_amount(GP_OPT_CU_RESERVE, &reserve));
    /* GPUPRIO_LOG is read first: at error, the others' warnings are not written. */
    setenv("GPUPRIO_LOG", "error", 1);
    out = load_captured();
    CHECK_SILENT(out);
    CHECK(gp_opt_uint(GP_OPT_WINDOW) == 16);
    /* A bad GPUPRIO_LOG is reported at the default level, whatever the previous read set. */
    setenv("GPUPRIO_LOG", "loud", 1);
    out = load_captured();
    CHECK(strstr(out, "GPUPRIO_LOG='loud' is not one of error, warn, info, debug; using warn\n") !=
          NULL);
    CHECK(strstr(out, "GPUPRIO_WINDOW='0'") != NULL);
    unset_all();
    gp_opts_load();
}

int main(void)
{
    unsetenv(VAR);
    test_get();
    test_uint_default();
    test_uint_valid();
    test_uint_bad();
    test_choice();
    test_table();
    test_options_read();
    test_reader_agrees_with_parser();
    test_log(); /* last: changes the log level */
    unsetenv(VAR);
    return check_finish("unit.config");
}
