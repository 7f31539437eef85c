/*
 * conf_test.c - unit.conf: the administrator's configuration file (src/util/gp_conf_file.c). Which
 * files are used (root's, writable by root only, every line understood, a sticky shared
 * directory of root's) and which are refused (-EINVAL, with the file not used); an absent file is
 * -ENOENT. Caps: a user's own wins over its groups', a group's applies to its members, the default
 * to everyone else, none without one; and who is admitted. The messages themselves are checked
 * end to end by tenant.bad-conf, and here those that once named something else than the problem
 * (a NUL byte, a byte-order mark) or nothing (a shared directory the admitted users cannot list).
 * Needs root (files of root's); skipped (77) otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "gp_conf_file.h"
#include "gpuprio.h"

static char dir[64], path[128], shared[128];

/* Loads a file of text (after a board_dir line when with_dir) with mode into c. */
static int load(const char *text, mode_t mode, bool with_dir, struct gp_conf *c)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -EIO;
    if (with_dir)
        fprintf(f, "board_dir = %s\n", shared);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
    return gp_conf_load(path, c);
}

/* What gp_conf_load said (its one warning) while loading text, captured from stderr. */
static char said[2048];

static int load_saying(const char *text, size_t len, bool with_dir, struct gp_conf *c)
{
    unlink(path); /* a fresh file of root's */
    FILE *f = fopen(path, "w");
    if (!f)
        return -EIO;
    if (with_dir)
        fprintf(f, "board_dir = %s\n", shared);
    fwrite(text, 1, len, f);
    fclose(f);
    chmod(path, 0644);
    char log[160];
    snprintf(log, sizeof log, "%s/said", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    int rc = gp_conf_load(path, c);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    memset(said, 0, sizeof said);
    f = fopen(log, "r");
    if (f) {
        if (fread(said, 1, sizeof said - 1, f) == 0)
            said[0] = '\0';
        fclose(f);
    }
    return rc;
}

/* Refused, with one message that names the line and says text. */
static void refused_saying(const char *text, size_t len, bool with_dir, const char *says)
{
    struct gp_conf c;
    int rc = load_saying(text, len, with_dir, &c);
    if (!CHECK_INT(rc, -EINVAL) || !CHECK(strstr(said, says) != NULL) ||
        !CHECK(strstr(said, "the file is not used") == strrchr(said, ';') + 2))
        fprintf(stderr, "  expected '%s', said '%s'\n", says, said);
}

/* The messages that used to name something else than the problem, or nothing. */
static void messages(void)
{
    refused_saying("cap.default = low\0 high\n", 24, false,
                   "line 1: the line holds a NUL byte (the file must be text)");
    refused_saying("\xef\xbb\xbf"
                   "cap.default = low\n",
                   21, false, "line 1: the file starts with a UTF-8 byte-order mark");
    char longer[1100];
    memset(longer, '#', sizeof longer);
    longer[sizeof longer - 1] = '\n';
    refused_saying(longer, sizeof longer, false, "line 1: the line is longer than 1024 characters");
    /* The boundary (configuration.md: "lines of at most 1024 characters", the newline not
     * counted): 1024 characters are used, with a newline or as the last line without one; 1025
     * are refused either way. A key's line, so that being used is seen in the result. */
    struct gp_conf c;
    char edge[1026];
    static const char key[] = "cap.default = low";
    for (int without_newline = 0; without_newline < 2; without_newline++) {
        for (size_t chars = 1024; chars <= 1025; chars++) {
            memset(edge, ' ', sizeof edge);
            memcpy(edge, key, sizeof key - 1);
            edge[chars] = '\n';
            size_t len = chars + !without_newline;
            if (chars == 1024) {
                int cap = 99;
                unsigned at = 0;
                if (!CHECK_INT(load_saying(edge, len, false, &c), 0) || !CHECK(said[0] == '\0') ||
                    !CHECK_INT(gp_conf_lookup(&c, GP_CONF_CAP, 4242, &cap, &at), 0) ||
                    !CHECK_INT(cap, GPUPRIO_PRIORITY_LOW))
                    fprintf(stderr, "  a line of 1024 characters%s: said '%s'\n",
                            without_newline ? " (no newline)" : "", said);
            } else {
                refused_saying(edge, len, false, "line 1: the line is longer than 1024 characters");
            }
        }
    }
    /* At most 64 users and groups for each key (configuration.md): the 65th is one message,
     * naming its line, the key and the limit, and the file is not used; 64 are fine. */
    char many[65 * 24 + 32];
    for (int keyed = 0; keyed < 3; keyed++) {
        static const char *const prefix[] = {"cap.", "share.", "weight."};
        static const char *const value[] = {"low", "5", "2"};
        for (int entries = 64; entries <= 65; entries++) {
            size_t used = 0;
            for (int i = 0; i < entries; i++)
                used += (size_t)snprintf(many + used, sizeof many - used, "%s%d = %s\n",
                                         prefix[keyed], 5000 + i, value[keyed]);
            if (entries == 64) {
                CHECK_INT(load_saying(many, used, false, &c), 0);
                continue;
            }
            char want[200];
            snprintf(want, sizeof want,
                     "line 65: %s5064 is one more than the 64 users and groups key %.*s may name "
                     "(at most 64 %sUSER and %s@GROUP lines, %sdefault besides)",
                     prefix[keyed], (int)strlen(prefix[keyed]) - 1, prefix[keyed], prefix[keyed],
                     prefix[keyed], prefix[keyed]);
            refused_saying(many, used, false, want);
            CHECK(strchr(said, '\n') == strrchr(said, '\n')); /* one message */
        }
    }
    size_t used = (size_t)snprintf(many, sizeof many, "admit = 0");
    for (int i = 1; i < 65; i++)
        used += (size_t)snprintf(many + used, sizeof many - used, ", %d", 5000 + i);
    used += (size_t)snprintf(many + used, sizeof many - used, "\n");
    refused_saying(many, used, false,
                   "line 1: admit names more than 64 users and groups (at most 64 for each key)");
    CHECK(strchr(said, '\n') == strrchr(said, '\n'));
    /* A shared directory the admitted users cannot list (root's, sticky, 1733): they would each
     * schedule alone without a word. */
    char line[400];
    chmod(shared, 01733);
    snprintf(line, sizeof line,
             "line 1: the board directory %s has mode 1733: the users it admits "
             "(everyone) cannot list it",
             shared);
    refused_saying("", 0, true, line);
    refused_saying("admit = 4241\n", 13, true, "user 4241 (line 2) cannot list it");
    /* Only root and the directory's group may list it, and the file admits that group only. */
    chmod(shared, 01770);
    CHECK(chown(shared, 0, 4250) == 0);
    CHECK_INT(load_saying("admit = @4250\n", 14, true, &c), 0);
    refused_saying("admit = @4250, 4241\n", 20, true, "user 4241 (line 2) cannot list it");
    CHECK(chown(shared, 0, 0) == 0);
    chmod(shared, 01777);
    CHECK_INT(load_saying("admit = 0\n", 10, true, &c), 0);
    CHECK(said[0] == '\0'); /* root: known, nothing to say */
    /* Ids no user or group here has: accepted (containers run uids without accounts), with one
     * warning for the file naming each line and id; a name nobody has refuses the file. */
    static const char ids[] = "admit = 0, 77777\ncap.77777 = low\ncap.@77778 = high\n";
    CHECK_INT(load_saying(ids, sizeof ids - 1, false, &c), 0);
    CHECK(c.admit[1].unknown && !c.admit[0].unknown);
    char want[400];
    snprintf(want, sizeof want,
             "the configuration file %s names ids not known on this machine (line 1: user 77777, "
             "line 2: user 77777, line 3: group 77778); they are taken as numeric ids",
             path);
    if (!CHECK(strstr(said, want) != NULL) || !CHECK(strstr(said, "not used") == NULL) ||
        !CHECK(strchr(said, '\n') == strrchr(said, '\n')))
        fprintf(stderr, "  expected '%s', said '%s'\n", want, said);
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_CAP, 77777, &(int){0}, &(unsigned){0}), 0);
    CHECK(gp_conf_admits(&c, 77777));
    CHECK_INT(load_saying("admit = 4241\n", 13, true, &c), 0);
    snprintf(want, sizeof want,
             "names an id not known on this machine (line 2: user 4241); it is "
             "taken as a numeric id");
    if (getpwuid(4241) == NULL && !CHECK(strstr(said, want) != NULL))
        fprintf(stderr, "  expected '%s', said '%s'\n", want, said);
    refused_saying("cap.nosuchuser = low\n", 21, false,
                   "line 1: 'nosuchuser' is not a user or group here");
    refused_saying("admit = 0, @nosuchgroup\n", 24, true,
                   "line 2: '@nosuchgroup' is not a user or group here");
}

int main(void)
{
    if (geteuid() != 0) {
        printf("SKIPPED: the files must be root's\n");
        return 77;
    }
    snprintf(dir, sizeof dir, "/tmp/gpuprio-unit-conf-XXXXXX");
    if (!mkdtemp(dir))
        return 2;
    snprintf(path, sizeof path, "%s/gpuprio.conf", dir);
    snprintf(shared, sizeof shared, "%s/shared", dir);
    mkdir(shared, 0700);
    chmod(shared, 01777);
    static struct gp_conf c;

    CHECK_INT(gp_conf_load("/nonexistent/gpuprio.conf", &c), -ENOENT);
    CHECK_INT(gp_conf_lookup(NULL, GP_CONF_CAP, 0, &(int){0}, &(unsigned){0}), -ENOENT);
    CHECK(!gp_conf_admits(NULL, 0));

    /* A good file: comments, blank lines, spaces, names and ids. */
    CHECK_INT(load("# the tenants\n\n  admit = 4241, @0 # root's group\n"
                   "cap.default = normal\ncap.4241=critical\ncap.@0 = low\ncap.root = high\n",
                   0644, true, &c),
              0);
    CHECK(strcmp(c.board_dir, shared) == 0);
    int cap = 99;
    unsigned line = 0;
    /* Lines count from the board_dir line. */
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_CAP, 4241, &cap, &line), 0); /* its own */
    CHECK_INT(cap, GPUPRIO_PRIORITY_CRITICAL);
    CHECK_INT(line, 6);
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_CAP, 0, &cap, &line),
              0); /* its own wins over its group's */
    CHECK_INT(cap, GPUPRIO_PRIORITY_HIGH);
    CHECK_INT(line, 8);
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_CAP, 4242, &cap, &line), 0); /* the default */
    CHECK_INT(cap, GPUPRIO_PRIORITY_NORMAL);
    CHECK_INT(line, 5);
    CHECK(gp_conf_admits(&c, 4241));
    CHECK(gp_conf_admits(&c, 0)); /* by its group */
    CHECK(!gp_conf_admits(&c, 4242));

    /* A group's cap applies to its members (root is in group 0); without a default, nobody
     * else is capped, and without admit everyone is admitted. */
    CHECK_INT(load("cap.@0 = low\n", 0600, false, &c), 0);
    CHECK(c.board_dir[0] == '\0');
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_CAP, 0, &cap, &line), 0);
    CHECK_INT(cap, GPUPRIO_PRIORITY_LOW);
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_CAP, 4242, &cap, &line), -ENOENT);
    CHECK(gp_conf_admits(&c, 4242));

    /* Shares and weights, as caps are: a user's own, its groups' (the greatest), the default. */
    CHECK_INT(load("share.4241 = 10%\nshare.@0 = 5\nshare.default = 0\nweight.root = 3\n", 0644,
                   false, &c),
              0);
    int v = -1;
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_SHARE, 4241, &v, &line), 0);
    CHECK_INT(v, 10);
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_SHARE, 0, &v, &line), 0);
    CHECK_INT(v, 5);
    CHECK_INT(line, 2);
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_SHARE, 4242, &v, &line), 0);
    CHECK_INT(v, 0);
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_WEIGHT, 0, &v, &line), 0);
    CHECK_INT(v, 3);
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_WEIGHT, 4241, &v, &line), -ENOENT);
    CHECK_INT(gp_conf_lookup(&c, GP_CONF_CAP, 4241, &v, &line), -ENOENT);

    /* Refused as a whole. */
    static const struct {
        const char *text;
        mode_t mode;
    } bad[] = {
        {"", 0664},                         /* writable by its group */
        {"", 0646},                         /* writable by others */
        {"cap.default = 2000\n", 0644},     /* out of the scale */
        {"cap.nosuchuser = low\n", 0644},   /* no such user */
        {"cap.@nosuchgroup = low\n", 0644}, /* no such group */
        {"cap. = low\n", 0644},             /* nobody */
        {"cap.4241 = low\ncap.4241 = high\n", 0644},
        {"admit = \n", 0644},
        {"admit = ,\n", 0644},
        {"admit = 1\nadmit = 2\n", 0644},
        {"board_dir = relative\n", 0644},
        {"board_dir = /nonexistent\n", 0644},
        {"board_dir = /etc/passwd\n", 0644},
        {"colour = blue\n", 0644},
        {"share.default = 101\n", 0644},
        {"share.default = 10%%\n", 0644},
        {"share.default = 10 %\n", 0644},
        {"weight.default = 0\n", 0644},
        {"weight.default = 1001\n", 0644},
        {"weight.default = 2.5\n", 0644},
        {"just words\n", 0644},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (!CHECK_INT(load(bad[i].text, bad[i].mode, false, &c), -EINVAL))
            fprintf(stderr, "  accepted: '%s' mode %o\n", bad[i].text, (unsigned)bad[i].mode);
    /* Twice board_dir, and a shared directory others can remove files in. */
    CHECK_INT(load("board_dir = /tmp\n", 0644, true, &c), -EINVAL);
    chmod(shared, 0777);
    CHECK_INT(load("", 0644, true, &c), -EINVAL);
    chmod(shared, 0755);
    CHECK_INT(load("", 0644, true, &c), 0); /* root's alone: fine without the sticky bit */
    /* A file of another user's. */
    CHECK_INT(load("", 0644, false, &c), 0);
    CHECK(chown(path, 4241, 0) == 0);
    CHECK_INT(gp_conf_load(path, &c), -EINVAL);

    messages();

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_finish("unit.conf");
}
