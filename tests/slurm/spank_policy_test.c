/*
 * spank_policy_test.c - unit.spank_policy: the Slurm plugin's reading of its plugstack.conf words
 * and its choice of a task's priority (contrib/slurm/spank_policy.h), without Slurm: defaults per
 * QOS over partition over site, every applicable cap holding (the lowest), refuse and clamp, off,
 * and one clear message for each kind of bad word.
 */
#include <string.h>

#include "check.h"
#include "spank_policy.h"

#define LIB "/usr/lib/x86_64-linux-gnu/libgpuprio-hip.so"

static struct sp_conf conf;
static char why[512];

static int parse(const char *line)
{
    char copy[2048], *argv[64];
    int argc = 0;
    snprintf(copy, sizeof copy, "%s", line);
    for (char *save = NULL, *w = strtok_r(copy, " ", &save); w && argc < 64;
         w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    why[0] = '\0';
    return sp_conf_parse(&conf, argc, argv, LIB, why, sizeof why);
}

/* The outcome and priority ("outcome priority") for asked in partition and qos. */
static const char *resolve(const char *asked, const char *partition, const char *qos)
{
    static char out[64];
    static const char *names[] = {"none", "off", "run", "clamped", "refused"};
    int p = -9999, cap = -9999;
    bool capped;
    enum sp_outcome o = sp_resolve(&conf, asked, partition, qos, &p, &capped, &cap);
    if (o == SP_NONE || o == SP_OFF)
        snprintf(out, sizeof out, "%s", names[o]);
    else
        snprintf(out, sizeof out, "%s %d", names[o], p);
    return out;
}

static void bad(const char *line, const char *message)
{
    CHECK_INT(parse(line), -22);
    if (!CHECK(strstr(why, message) != NULL))
        fprintf(stderr, "  '%s': '%s', expected '%s'\n", line, why, message);
}

int main(void)
{
    /* Nothing configured: a job that asks runs at what it asked, one that asks nothing without
     * gpuprio, the default library. */
    CHECK_INT(parse(""), 0);
    CHECK(strcmp(conf.library, LIB) == 0);
    CHECK(strcmp(resolve(NULL, "batch", NULL), "none") == 0);
    CHECK(strcmp(resolve("high", "batch", NULL), "run 10") == 0);
    CHECK(strcmp(resolve("-35", NULL, NULL), "run -35") == 0);
    CHECK(strcmp(resolve("OFF", NULL, NULL), "off") == 0);

    CHECK_INT(parse("library=/opt/g/libgpuprio-cuda.so default=low default.partition.inference="
                    "high default.qos.urgent=critical cap=high cap.partition.batch=normal "
                    "cap.qos.scavenger=idle"),
              0);
    CHECK(strcmp(conf.library, "/opt/g/libgpuprio-cuda.so") == 0);
    /* Defaults: QOS over partition over site. */
    CHECK(strcmp(resolve(NULL, "batch", "normal"), "run -10") == 0);
    CHECK(strcmp(resolve(NULL, "inference", "normal"), "run 10") == 0);
    CHECK(strcmp(resolve(NULL, NULL, NULL), "run -10") == 0);
    /* The QOS's default (critical) is above the site's cap (high): the cap, the site's choice. */
    CHECK(strcmp(resolve(NULL, "inference", "urgent"), "run 10") == 0);
    /* A default above the partition's cap is the cap. */
    CHECK(strcmp(resolve(NULL, "batch", "urgent"), "run 0") == 0);
    /* Caps: every one that applies; over one, refused (the default) with the cap as priority. */
    CHECK(strcmp(resolve("high", "inference", NULL), "run 10") == 0);
    CHECK(strcmp(resolve("critical", "inference", NULL), "refused 10") == 0);
    CHECK(strcmp(resolve("high", "batch", NULL), "refused 0") == 0);
    CHECK(strcmp(resolve("normal", "batch", NULL), "run 0") == 0);
    CHECK(strcmp(resolve("low", "batch", "scavenger"), "refused -20") == 0);
    CHECK(strcmp(resolve("idle", "batch", "scavenger"), "run -20") == 0);
    CHECK(strcmp(resolve("off", "batch", "scavenger"), "off") == 0);
    /* Names are matched whole and by case: another partition has only the site's cap. */
    CHECK(strcmp(resolve("high", "batch2", NULL), "run 10") == 0);
    CHECK(strcmp(resolve("high", "Batch", NULL), "run 10") == 0);
    int p, cap;
    bool capped;
    sp_resolve(&conf, "high", "batch", "scavenger", &p, &capped, &cap);
    CHECK(capped && cap == -20);

    CHECK_INT(parse("cap.partition.batch=normal over_cap=clamp"), 0);
    CHECK(strcmp(resolve("critical", "batch", NULL), "clamped 0") == 0);
    CHECK(strcmp(resolve("critical", "other", NULL), "run 20") == 0);
    CHECK(strcmp(resolve(NULL, "batch", NULL), "none") == 0);
    /* A partition's name may hold dots; the first two of the key separate. */
    CHECK_INT(parse("default.partition.gpu.a100=high"), 0);
    CHECK(strcmp(resolve(NULL, "gpu.a100", NULL), "run 10") == 0);

    /* The option's values. */
    CHECK(sp_asked_valid("high") && sp_asked_valid("off") && sp_asked_valid("-1000"));
    CHECK(!sp_asked_valid("urgent") && !sp_asked_valid("1001") && !sp_asked_valid("") &&
          !sp_asked_valid(NULL));

    /* Bad words: one message naming the word and what is accepted. */
    bad("default", "'default' is not KEY=VALUE (accepted: library=PATH");
    bad("=high", "'=high' is not KEY=VALUE");
    bad("priority=high", "'priority=high': unknown key (accepted: library=PATH");
    bad("defaults=high", "'defaults=high': unknown key");
    bad("default.partition.=high", "'default.partition.=high': unknown key");
    bad("cap.user.bob=low", "'cap.user.bob=low': unknown key");
    bad("cap=urgent", "'cap=urgent': 'urgent' is not a priority (accepted: idle, low, normal");
    bad("default=low default=high", "'default=high' sets it a second time");
    bad("cap.qos.a=low cap.qos.a=idle", "'cap.qos.a=idle' sets it a second time");
    bad("library=lib.so", "'library=lib.so': library takes an absolute path without spaces or "
                          "colons (which split LD_PRELOAD), once");
    bad("library=/a.so library=/b.so", "library takes an absolute path");
    bad("library=/opt/a.so:/tmp/evil.so", "without spaces or colons");
    bad("library=/opt/my\tdir/lib.so", "without spaces or colons");
    bad("over_cap=warn", "'over_cap=warn': over_cap takes refuse or clamp, once");
    char many[4096] = "", word[64];
    for (int i = 0; i <= SP_NAMED_MAX; i++) {
        snprintf(word, sizeof word, "cap.partition.p%d=low ", i);
        strcat(many, word);
    }
    bad(many, "at most 32 partitions and QOSes");
    char longname[200];
    snprintf(longname, sizeof longname, "cap.partition.%0*d=low", SP_NAME_MAX, 0);
    bad(longname, "a partition's or QOS's name is at most 63 bytes");
    return check_finish("spank_policy");
}
