/*
 * priority_test.c - unit.priority: gpuprio's priority scale (src/sched/priority.c), without any
 * GPU runtime. gp_priority_parse (level names in any case, surrounding spaces and tabs, integers
 * at and beyond -1000/1000, garbage, very long strings, NULL), gp_priority_parse_list (one and
 * several items, empty items, trailing commas, the item limit, no write past it),
 * gp_priority_from_stream_priority (HIP's -1/0/1 and clamping), its inverse
 * gp_priority_to_stream_priority, and gp_priority_valid.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpuprio.h"
#include "gp_priority.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define UNTOUCHED 123456789

/* Parses text expecting success and value. */
static void expect_parse(const char *text, int value, const char *file, int line)
{
    int out = UNTOUCHED;
    int rc = gp_priority_parse(text, &out);
    if (!check_int_at(rc, 0, file, line, "gp_priority_parse(text) == 0") ||
        !check_int_at(out, value, file, line, "parsed value == expected"))
        fprintf(stderr, "  text \"%s\"\n", text);
}
#define EXPECT_PARSE(text, value) expect_parse((text), (value), __FILE__, __LINE__)

/* Parses text expecting -EINVAL and *out left alone. */
static void expect_reject(const char *text, const char *file, int line)
{
    int out = UNTOUCHED;
    int rc = gp_priority_parse(text, &out);
    if (!check_int_at(rc, -EINVAL, file, line, "gp_priority_parse(text) == -EINVAL") ||
        !check_int_at(out, UNTOUCHED, file, line, "output untouched on error"))
        fprintf(stderr, "  text \"%s\"\n", text ? text : "(null)");
}
#define EXPECT_REJECT(text) expect_reject((text), __FILE__, __LINE__)

static void test_parse_names(void)
{
    static const struct {
        const char *text;
        int value;
    } names[] = {
        {"idle", GPUPRIO_PRIORITY_IDLE},         {"low", GPUPRIO_PRIORITY_LOW},
        {"normal", GPUPRIO_PRIORITY_NORMAL},     {"high", GPUPRIO_PRIORITY_HIGH},
        {"critical", GPUPRIO_PRIORITY_CRITICAL}, {"IDLE", GPUPRIO_PRIORITY_IDLE},
        {"LOW", GPUPRIO_PRIORITY_LOW},           {"NORMAL", GPUPRIO_PRIORITY_NORMAL},
        {"HIGH", GPUPRIO_PRIORITY_HIGH},         {"CRITICAL", GPUPRIO_PRIORITY_CRITICAL},
        {"Idle", GPUPRIO_PRIORITY_IDLE},         {"lOw", GPUPRIO_PRIORITY_LOW},
        {"NoRmAl", GPUPRIO_PRIORITY_NORMAL},     {"hIGH", GPUPRIO_PRIORITY_HIGH},
        {"Critical", GPUPRIO_PRIORITY_CRITICAL},
    };
    for (size_t i = 0; i < N(names); i++)
        EXPECT_PARSE(names[i].text, names[i].value);
    /* The documented values of the names. */
    CHECK_INT(GPUPRIO_PRIORITY_IDLE, -20);
    CHECK_INT(GPUPRIO_PRIORITY_LOW, -10);
    CHECK_INT(GPUPRIO_PRIORITY_NORMAL, 0);
    CHECK_INT(GPUPRIO_PRIORITY_HIGH, 10);
    CHECK_INT(GPUPRIO_PRIORITY_CRITICAL, 20);
    CHECK_INT(GPUPRIO_PRIORITY_MIN, -1000);
    CHECK_INT(GPUPRIO_PRIORITY_MAX, 1000);
}

static void test_parse_spaces(void)
{
    EXPECT_PARSE(" high", 10);
    EXPECT_PARSE("high ", 10);
    EXPECT_PARSE("\thigh\t", 10);
    EXPECT_PARSE(" \t Low \t ", -10);
    EXPECT_PARSE("  -5  ", -5);
    EXPECT_PARSE("\t1000", 1000);
    EXPECT_PARSE("-1000\t", -1000);
    /* Padding does not count against any length limit. */
    char padded[300];
    memset(padded, ' ', sizeof padded);
    memcpy(padded + 140, "critical", 8);
    padded[sizeof padded - 1] = '\0';
    EXPECT_PARSE(padded, 20);
    memset(padded, '\t', sizeof padded - 1);
    memcpy(padded + 200, "-42", 3);
    EXPECT_PARSE(padded, -42);
    /* Spaces inside are not trimmed. */
    EXPECT_REJECT("hi gh");
    EXPECT_REJECT("1 0");
    EXPECT_REJECT("- 5");
    EXPECT_REJECT("high low");
}

static void test_parse_integers(void)
{
    EXPECT_PARSE("0", 0);
    EXPECT_PARSE("-0", 0);
    EXPECT_PARSE("1", 1);
    EXPECT_PARSE("-1", -1);
    EXPECT_PARSE("15", 15);
    EXPECT_PARSE("+10", 10);
    EXPECT_PARSE("999", 999);
    EXPECT_PARSE("1000", 1000);
    EXPECT_PARSE("-999", -999);
    EXPECT_PARSE("-1000", -1000);
    EXPECT_REJECT("1001");
    EXPECT_REJECT("-1001");
    EXPECT_REJECT("10000");
    EXPECT_REJECT("2147483647");
    EXPECT_REJECT("2147483648");
    EXPECT_REJECT("-2147483648");
    EXPECT_REJECT("-2147483649");
    EXPECT_REJECT("4294967306"); /* 2^32 + 10: 10 if truncated to 32 bits */
    EXPECT_REJECT("9223372036854775807");
    EXPECT_REJECT("9223372036854775808");
    EXPECT_REJECT("99999999999999999999999");
    EXPECT_REJECT("-99999999999999999999999");

    /* Every integer near the scale: accepted exactly when valid, as itself. */
    int mismatches = 0;
    for (int v = -1100; v <= 1100; v++) {
        char text[16];
        snprintf(text, sizeof text, "%d", v);
        int out = UNTOUCHED;
        int rc = gp_priority_parse(text, &out);
        int want_ok = v >= -1000 && v <= 1000;
        if (want_ok ? rc != 0 || out != v : rc != -EINVAL || out != UNTOUCHED) {
            if (mismatches++ == 0)
                fprintf(stderr, "  \"%s\": rc %d out %d\n", text, rc, out);
        }
    }
    CHECK_INT(mismatches, 0);
}

static void test_parse_garbage(void)
{
    static const char *const garbage[] = {
        "",    " ",       "\t",      " \t ",    "10x",          "x10",         "hi",
        "hig", "highe",   "higher",  "highest", "nor mal",      "+",           "-",
        "+-1", "--1",     "0x10",    "0x1",     "1e3",          "10.0",        "1.",
        ".5",  "high,",   ",high",   "high\n",  "\nhigh",       "5\n",         "\"high\"",
        "'5'", "normal0", "0normal", "low-",    "\xe2\x88\x9e", "h\xc3\xadgh", "one",
        "ten", "max",     "min",     "default", "none",
    };
    for (size_t i = 0; i < N(garbage); i++)
        EXPECT_REJECT(garbage[i]);
    EXPECT_REJECT(NULL);

    /* Very long strings: garbage, a name followed by garbage, digits. */
    enum { LONG = 4096 };
    char *s = malloc(LONG + 1);
    CHECK(s != NULL);
    if (!s)
        return;
    memset(s, 'a', LONG);
    s[LONG] = '\0';
    EXPECT_REJECT(s);
    memcpy(s, "high", 4);
    EXPECT_REJECT(s);
    memset(s, '9', LONG);
    EXPECT_REJECT(s);
    s[0] = '-';
    EXPECT_REJECT(s);
    memset(s, '1', LONG);
    s[LONG - 1] = 'x';
    EXPECT_REJECT(s);
    /* A name then a long run of other characters, then spaces. */
    memset(s, ' ', LONG);
    memcpy(s, "critical", 8);
    s[8] = '!';
    EXPECT_REJECT(s);
    free(s);
}

/* Parses text into an array of exactly max ints on the heap (so ASan sees any write past it);
 * expects rc and, when rc > 0, the values. */
static void expect_list(const char *text, int max, int rc_want, const int *want, const char *file,
                        int line)
{
    int *out = malloc((size_t)(max > 0 ? max : 1) * sizeof *out);
    if (!check_at(out != NULL, file, line, "malloc"))
        return;
    for (int i = 0; i < max; i++)
        out[i] = UNTOUCHED;
    int rc = gp_priority_parse_list(text, out, max);
    bool ok = check_int_at(rc, rc_want, file, line, "gp_priority_parse_list(text) == expected");
    for (int i = 0; ok && i < rc_want; i++)
        ok = check_int_at(out[i], want[i], file, line, "list item == expected");
    if (!ok)
        fprintf(stderr, "  text \"%s\", max %d\n", text, max);
    free(out);
}
#define EXPECT_LIST(text, max, ...)                                                                \
    do {                                                                                           \
        static const int want_[] = {__VA_ARGS__};                                                  \
        expect_list((text), (max), (int)N(want_), want_, __FILE__, __LINE__);                      \
    } while (0)
#define EXPECT_LIST_REJECT(text, max) expect_list((text), (max), -EINVAL, NULL, __FILE__, __LINE__)

static void test_parse_list(void)
{
    EXPECT_LIST("high", 1, 10);
    EXPECT_LIST("high", 64, 10);
    EXPECT_LIST("-1000", 4, -1000);
    EXPECT_LIST("high,normal,low", 3, 10, 0, -10);
    EXPECT_LIST("high,normal,low", 64, 10, 0, -10);
    EXPECT_LIST(" critical , -5,\tIDLE ,1000,-1000", 8, 20, -5, -20, 1000, -1000);
    EXPECT_LIST("1,1,1,1", 4, 1, 1, 1, 1);
    EXPECT_LIST("+3,-0", 2, 3, 0);

    /* Empty items anywhere fail. */
    EXPECT_LIST_REJECT("high,,low", 8);
    EXPECT_LIST_REJECT("high, ,low", 8);
    EXPECT_LIST_REJECT("high,\t,low", 8);
    EXPECT_LIST_REJECT("high,", 8);
    EXPECT_LIST_REJECT("high, ", 8);
    EXPECT_LIST_REJECT(",high", 8);
    EXPECT_LIST_REJECT(",", 8);
    EXPECT_LIST_REJECT(",,", 8);
    EXPECT_LIST_REJECT("", 8);
    EXPECT_LIST_REJECT(" ", 8);
    /* A bad item anywhere fails. */
    EXPECT_LIST_REJECT("high,1001", 8);
    EXPECT_LIST_REJECT("-1001,high", 8);
    EXPECT_LIST_REJECT("high,hi", 8);
    EXPECT_LIST_REJECT("high;low", 8);
    EXPECT_LIST_REJECT("high low", 8);

    /* The item limit: exactly max is fine, one more fails (and writes nothing past max). */
    EXPECT_LIST("1,2,3", 3, 1, 2, 3);
    EXPECT_LIST_REJECT("1,2,3", 2);
    EXPECT_LIST_REJECT("1,2,3", 1);
    EXPECT_LIST_REJECT("1", 0);
    EXPECT_LIST_REJECT("1,2,3,", 3);
    int canary[3] = {UNTOUCHED, UNTOUCHED, UNTOUCHED};
    CHECK_INT(gp_priority_parse_list("1,2,3", canary, 2), -EINVAL);
    CHECK_INT(canary[2], UNTOUCHED);

    /* GPUPRIO_STREAM_PRIORITIES takes up to 64. */
    char text[64 * 6 + 8] = "";
    int want[65];
    size_t used = 0;
    for (int i = 0; i < 65; i++) {
        want[i] = i * 31 % 2001 - 1000;
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%d", i ? "," : "", want[i]);
    }
    CHECK(used < sizeof text);
    char *last = strrchr(text, ',');
    expect_list(text, 64, -EINVAL, NULL, __FILE__, __LINE__); /* 65 items */
    expect_list(text, 65, 65, want, __FILE__, __LINE__);
    *last = '\0';
    expect_list(text, 64, 64, want, __FILE__, __LINE__);
    expect_list(text, 63, -EINVAL, NULL, __FILE__, __LINE__);

    /* A long item is still one bad item, not an overflow. */
    char longitem[1024];
    memset(longitem, '7', sizeof longitem - 1);
    longitem[sizeof longitem - 1] = '\0';
    longitem[0] = '1';
    longitem[1] = ',';
    EXPECT_LIST_REJECT(longitem, 8);
}

static void test_from_stream_priority(void)
{
    CHECK_INT(gp_priority_from_stream_priority(-1), GPUPRIO_PRIORITY_HIGH);
    CHECK_INT(gp_priority_from_stream_priority(0), GPUPRIO_PRIORITY_NORMAL);
    CHECK_INT(gp_priority_from_stream_priority(1), GPUPRIO_PRIORITY_LOW);
    /* One named level per step. */
    CHECK_INT(gp_priority_from_stream_priority(-2), GPUPRIO_PRIORITY_CRITICAL);
    CHECK_INT(gp_priority_from_stream_priority(2), GPUPRIO_PRIORITY_IDLE);
    /* Clamped to the scale. */
    CHECK_INT(gp_priority_from_stream_priority(100), GPUPRIO_PRIORITY_MIN);
    CHECK_INT(gp_priority_from_stream_priority(-100), GPUPRIO_PRIORITY_MAX);
    CHECK_INT(gp_priority_from_stream_priority(101), GPUPRIO_PRIORITY_MIN);
    CHECK_INT(gp_priority_from_stream_priority(-101), GPUPRIO_PRIORITY_MAX);
    CHECK_INT(gp_priority_from_stream_priority(1000), GPUPRIO_PRIORITY_MIN);
    CHECK_INT(gp_priority_from_stream_priority(-1000), GPUPRIO_PRIORITY_MAX);
    CHECK_INT(gp_priority_from_stream_priority(INT_MAX), GPUPRIO_PRIORITY_MIN);
    CHECK_INT(gp_priority_from_stream_priority(INT_MAX - 1), GPUPRIO_PRIORITY_MIN);
    CHECK_INT(gp_priority_from_stream_priority(INT_MIN), GPUPRIO_PRIORITY_MAX);
    CHECK_INT(gp_priority_from_stream_priority(INT_MIN + 1), GPUPRIO_PRIORITY_MAX);
    CHECK_INT(gp_priority_from_stream_priority(INT_MAX / 10 + 1), GPUPRIO_PRIORITY_MIN);
    CHECK_INT(gp_priority_from_stream_priority(INT_MIN / 10 - 1), GPUPRIO_PRIORITY_MAX);

    /* Always valid, and more urgent stream priorities never map lower. */
    int bad = 0, prev = INT_MAX;
    for (int s = -300; s <= 300; s++) {
        int p = gp_priority_from_stream_priority(s);
        if (!gp_priority_valid(p) || p > prev || (s >= -100 && s <= 100 && p != -10 * s))
            bad++;
        prev = p;
    }
    CHECK_INT(bad, 0);
}

static void test_to_stream_priority(void)
{
    /* CUDA's range (least 0, greatest -5 on an H100): normal and below share the default. */
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_IDLE, 0, -5), 0);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_LOW, 0, -5), 0);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_NORMAL, 0, -5), 0);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_HIGH, 0, -5), -1);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_CRITICAL, 0, -5), -2);
    CHECK_INT(gp_priority_to_stream_priority(50, 0, -5), -5);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_MAX, 0, -5), -5);
    /* HIP's (least 1, greatest -1). */
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_IDLE, 1, -1), 1);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_LOW, 1, -1), 1);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_NORMAL, 1, -1), 0);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_HIGH, 1, -1), -1);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_CRITICAL, 1, -1), -1);
    CHECK_INT(gp_priority_to_stream_priority(GPUPRIO_PRIORITY_MIN, 1, -1), 1);
    /* Nearest step: 4 is normal's, 5 and 14 high's, -5 low's. */
    CHECK_INT(gp_priority_to_stream_priority(4, 0, -5), 0);
    CHECK_INT(gp_priority_to_stream_priority(5, 0, -5), -1);
    CHECK_INT(gp_priority_to_stream_priority(14, 0, -5), -1);
    CHECK_INT(gp_priority_to_stream_priority(-5, 1, -1), 1);

    /* The inverse of gp_priority_from_stream_priority within a wide range, never out of range,
     * and a higher priority never gets a less urgent stream priority. */
    int bad = 0, prev = INT_MAX;
    for (int s = -100; s <= 100; s++)
        if (gp_priority_to_stream_priority(gp_priority_from_stream_priority(s), 100, -100) != s)
            bad++;
    for (int p = GPUPRIO_PRIORITY_MIN; p <= GPUPRIO_PRIORITY_MAX; p++) {
        int s = gp_priority_to_stream_priority(p, 1, -1);
        if (s < -1 || s > 1 || s > prev)
            bad++;
        prev = s;
    }
    CHECK_INT(bad, 0);
}

static void test_valid(void)
{
    CHECK(gp_priority_valid(0));
    CHECK(gp_priority_valid(GPUPRIO_PRIORITY_MIN));
    CHECK(gp_priority_valid(GPUPRIO_PRIORITY_MAX));
    CHECK(gp_priority_valid(GPUPRIO_PRIORITY_IDLE));
    CHECK(gp_priority_valid(GPUPRIO_PRIORITY_LOW));
    CHECK(gp_priority_valid(GPUPRIO_PRIORITY_NORMAL));
    CHECK(gp_priority_valid(GPUPRIO_PRIORITY_HIGH));
    CHECK(gp_priority_valid(GPUPRIO_PRIORITY_CRITICAL));
    CHECK(gp_priority_valid(-1));
    CHECK(gp_priority_valid(1));
    CHECK(!gp_priority_valid(GPUPRIO_PRIORITY_MIN - 1));
    CHECK(!gp_priority_valid(GPUPRIO_PRIORITY_MAX + 1));
    CHECK(!gp_priority_valid(INT_MIN));
    CHECK(!gp_priority_valid(INT_MAX));
    CHECK(!gp_priority_valid(INT_MIN + 1));
    CHECK(!gp_priority_valid(INT_MAX - 1));
    int count = 0;
    for (int p = -2000; p <= 2000; p++)
        count += gp_priority_valid(p) != 0;
    CHECK_INT(count, 2001);
}

int main(void)
{
    test_parse_names();
    test_parse_spaces();
    test_parse_integers();
    test_parse_garbage();
    test_parse_list();
    test_from_stream_priority();
    test_to_stream_priority();
    test_valid();
    return check_finish("unit.priority");
}
