/*
 * gp_conf_file.c - see gp_conf_file.h.
 */
#include "gp_conf_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_config.h"
#include "gp_log.h"
#include "gp_options.h"
#include "gp_priority.h"

#define NOT_USED "; the file is not used: each user's processes schedule only among themselves"
#define KEYS                                                                                       \
    "keys: board_dir, admit, and cap., share. and weight. each followed by default, USER or "      \
    "@GROUP"

static int refuse(const char *path, unsigned line, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (line)
        gp_log(GP_LOG_WARN, "the configuration file %s, line %u: %s" NOT_USED, path, line, what);
    else
        gp_log(GP_LOG_WARN, "the configuration file %s %s" NOT_USED, path, what);
    return -EINVAL;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* A user (name or uid) or, after '@', a group (name or gid). 0 or -ENOENT. */
static int parse_who(const char *text, unsigned line, struct gp_conf_who *who)
{
    who->group = text[0] == '@';
    who->line = line;
    const char *name = text + who->group;
    uint64_t id;
    char buf[4096];
    if (gp_parse_uint(name, 0, UINT32_MAX - 1, &id)) {
        who->id = (unsigned)id;
        if (who->group) {
            struct group g, *found = NULL;
            getgrgid_r((gid_t)id, &g, buf, sizeof buf, &found);
            who->unknown = !found;
        } else {
            struct passwd p, *found = NULL;
            getpwuid_r((uid_t)id, &p, buf, sizeof buf, &found);
            who->unknown = !found;
        }
        return 0;
    }
    who->unknown = false;
    if (who->group) {
        struct group g, *found = NULL;
        getgrnam_r(name, &g, buf, sizeof buf, &found);
        if (found)
            who->id = (unsigned)found->gr_gid;
        return found ? 0 : -ENOENT;
    }
    struct passwd p, *found = NULL;
    getpwnam_r(name, &p, buf, sizeof buf, &found);
    if (found)
        who->id = (unsigned)found->pw_uid;
    return found ? 0 : -ENOENT;
}

/* Whether user uid is a member of group gid (its primary group or a supplementary one). */
static bool member(uid_t uid, unsigned gid)
{
    char buf[4096];
    struct passwd p, *found = NULL;
    getpwuid_r(uid, &p, buf, sizeof buf, &found);
    if (!found)
        return false;
    if ((unsigned)found->pw_gid == gid)
        return true;
    gid_t groups[256];
    int n = sizeof groups / sizeof *groups;
    if (getgrouplist(found->pw_name, found->pw_gid, groups, &n) < 0)
        return false; /* more groups than that: those beyond are not looked at */
    for (int i = 0; i < n; i++)
        if ((unsigned)groups[i] == gid)
            return true;
    return false;
}

static bool matches(const struct gp_conf_who *who, uid_t uid)
{
    return who->group ? member(uid, who->id) : who->id == (unsigned)uid;
}

static int parse_admit(struct gp_conf *c, char *value, unsigned line)
{
    c->admit_all = false;
    for (char *save = NULL, *item = strtok_r(value, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        item = trim(item);
        if (!*item)
            continue;
        if (c->n_admit == GP_CONF_MAX_ENTRIES)
            return refuse(c->path, line,
                          "admit names more than %d users and groups (at most %d for each key)",
                          GP_CONF_MAX_ENTRIES, GP_CONF_MAX_ENTRIES);
        if (parse_who(item, line, &c->admit[c->n_admit]) != 0)
            return refuse(c->path, line,
                          "'%s' is not a user or group here (accepted: a user name or uid, or "
                          "@ and a group name or gid, separated by commas)",
                          item);
        c->n_admit++;
    }
    return c->n_admit ? 0 : refuse(c->path, line, "admit names nobody");
}

static const struct {
    const char *prefix; /* the key's, with its dot */
    const char *accepted;
} settings[GP_CONF_SETTINGS] = {
    [GP_CONF_CAP] = {"cap.", GP_PRIORITY_ACCEPTED},
    [GP_CONF_SHARE] = {"share.", "a percentage from 0 to 100, with or without %"},
    [GP_CONF_WEIGHT] = {"weight.", "a whole number from 1 to 1000"},
};

static bool parse_value(enum gp_conf_setting what, const char *text, int *out)
{
    uint64_t v;
    char number[16];
    switch (what) {
    case GP_CONF_CAP:
        return gp_priority_parse(text, out) == 0;
    case GP_CONF_SHARE:
        snprintf(number, sizeof number, "%.*s", (int)strcspn(text, "%"), text);
        if (strlen(text) > strlen(number) + (text[strlen(number)] == '%') ||
            !gp_parse_uint(number, 0, 100, &v))
            return false;
        *out = (int)v;
        return true;
    case GP_CONF_WEIGHT:
        if (!gp_parse_uint(text, 1, 1000, &v))
            return false;
        *out = (int)v;
        return true;
    default:
        return false;
    }
}

static int parse_setting(struct gp_conf *c, enum gp_conf_setting what, const char *who_text,
                         const char *value, unsigned line)
{
    struct gp_conf_table *t = &c->set[what];
    const char *key = settings[what].prefix;
    int v;
    if (!parse_value(what, value, &v))
        return refuse(c->path, line, "'%s' is not a valid %.*s (accepted: %s)", value,
                      (int)strlen(key) - 1, key, settings[what].accepted);
    if (!strcmp(who_text, "default")) {
        if (t->has_default)
            return refuse(c->path, line, "%sdefault is set twice (first on line %u)", key,
                          t->default_line);
        t->has_default = true;
        t->default_value = v;
        t->default_line = line;
        return 0;
    }
    struct gp_conf_who who;
    if (parse_who(who_text, line, &who) != 0)
        return refuse(c->path, line,
                      "'%s' is not a user or group here (accepted: %sdefault, %sUSER and "
                      "%s@GROUP, by name or id)",
                      who_text, key, key, key);
    for (unsigned i = 0; i < t->n; i++)
        if (t->who[i].group == who.group && t->who[i].id == who.id)
            return refuse(c->path, line, "%s%s is set twice (first on line %u)", key, who_text,
                          t->who[i].line);
    if (t->n == GP_CONF_MAX_ENTRIES)
        return refuse(c->path, line,
                      "%s%s is one more than the %d users and groups key %.*s may name (at most %d "
                      "%sUSER and %s@GROUP lines, %sdefault besides)",
                      key, who_text, GP_CONF_MAX_ENTRIES, (int)strlen(key) - 1, key,
                      GP_CONF_MAX_ENTRIES, key, key, key);
    t->who[t->n] = who;
    t->value[t->n++] = v;
    return 0;
}

/* The shared board directory must keep each user's board its owner's: owned by root, and nobody
 * else may rename or remove files in it (not writable by group or others, or sticky). */
static int check_board_dir(struct gp_conf *c, const char *dir, unsigned line)
{
    struct stat st;
    if (dir[0] != '/')
        return refuse(c->path, line, "board_dir '%s' is not an absolute path", dir);
    if (lstat(dir, &st) != 0)
        return refuse(c->path, line, "board_dir %s cannot be examined: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return refuse(c->path, line, "board_dir %s is not a directory (a symbolic link is not)",
                      dir);
    if (st.st_uid != 0)
        return refuse(c->path, line, "board_dir %s is not owned by root", dir);
    if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))
        return refuse(c->path, line,
                      "board_dir %s lets others remove files in it (make it sticky: chmod +t, "
                      "or writable by root only)",
                      dir);
    if (strlen(dir) >= sizeof c->board_dir)
        return refuse(c->path, line, "board_dir is too long");
    snprintf(c->board_dir, sizeof c->board_dir, "%s", dir);
    c->board_dir_line = line;
    return 0;
}

/* Whether the bits of mode (rwx in the lowest three) let one read and search a directory. */
static bool lists(mode_t bits)
{
    return (bits & 05) == 05;
}

/* Whether who (a user, or every member of a group) can list the directory st. */
static bool can_list(const struct stat *st, const struct gp_conf_who *who)
{
    if (lists(st->st_mode))
        return true; /* others can */
    if (who->group)
        return who->id == (unsigned)st->st_gid && lists(st->st_mode >> 3);
    if (who->id == 0)
        return true; /* root */
    return (who->id == (unsigned)st->st_uid && lists(st->st_mode >> 6)) ||
           (member((uid_t)who->id, (unsigned)st->st_gid) && lists(st->st_mode >> 3));
}

/* Every admitted user's processes find the others' boards by listing the shared directory: one
 * that some cannot list (mode 1733, say) would leave them scheduling alone without a word. Checked
 * once the whole file is read, since admit may come after board_dir. */
static int check_listable(struct gp_conf *c)
{
    struct stat st;
    if (!c->board_dir[0] || stat(c->board_dir, &st) != 0)
        return 0;
    char who[64] = "";
    if (c->admit_all && !lists(st.st_mode))
        snprintf(who, sizeof who, "the users it admits (everyone)");
    for (unsigned i = 0; !who[0] && !c->admit_all && i < c->n_admit; i++)
        if (!can_list(&st, &c->admit[i]))
            snprintf(who, sizeof who, "%s %s%u (line %u)", c->admit[i].group ? "group" : "user",
                     c->admit[i].group ? "@" : "", c->admit[i].id, c->admit[i].line);
    if (!who[0])
        return 0;
    return refuse(c->path, c->board_dir_line,
                  "the board directory %s has mode %04o: %s cannot list it, and would schedule "
                  "alone without a word (the users the file admits must be able to read and search "
                  "it: chmod o+rx, usually mode 1777)",
                  c->board_dir, (unsigned)(st.st_mode & 07777), who);
}

static int by_line(const void *a, const void *b)
{
    const struct gp_conf_who *x = *(const struct gp_conf_who *const *)a,
                             *y = *(const struct gp_conf_who *const *)b;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* One warning for a file that names numeric ids no user or group here has (the first few, by
 * line): accepted, but a typo there makes an entry match nobody, without a word otherwise. */
static void warn_unknown_ids(const struct gp_conf *c)
{
    const struct gp_conf_who *unknown[GP_CONF_MAX_ENTRIES * (GP_CONF_SETTINGS + 1)];
    size_t n = 0;
    for (unsigned i = 0; i < c->n_admit; i++)
        if (c->admit[i].unknown)
            unknown[n++] = &c->admit[i];
    for (int what = 0; what < GP_CONF_SETTINGS; what++)
        for (unsigned i = 0; i < c->set[what].n; i++)
            if (c->set[what].who[i].unknown)
                unknown[n++] = &c->set[what].who[i];
    if (!n)
        return;
    qsort(unknown, n, sizeof *unknown, by_line);
    char list[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && i < 4; i++) {
        int w = snprintf(list + used, sizeof list - used, "%sline %u: %s %u", i ? ", " : "",
                         unknown[i]->line, unknown[i]->group ? "group" : "user", unknown[i]->id);
        used += w > 0 && (size_t)w < sizeof list - used ? (size_t)w : 0;
    }
    gp_log(GP_LOG_WARN,
           "the configuration file %s names %s not known on this machine (%s%s); %s (a "
           "container's users need no account), but check for a typo: such an entry applies to "
           "nobody else",
           c->path, n == 1 ? "an id" : "ids", list, n > 4 ? ", and others" : "",
           n == 1 ? "it is taken as a numeric id" : "they are taken as numeric ids");
}

static int parse_line(struct gp_conf *c, char *text, unsigned line)
{
    char *hash = strchr(text, '#');
    if (hash)
        *hash = '\0';
    text = trim(text);
    if (!*text)
        return 0;
    char *eq = strchr(text, '=');
    if (!eq)
        return refuse(c->path, line, "'%s' is not KEY = VALUE (" KEYS ")", text);
    *eq = '\0';
    char *key = trim(text), *value = trim(eq + 1);
    if (!*value)
        return refuse(c->path, line, "%s has no value", key);
    if (!strcmp(key, "board_dir")) {
        if (c->board_dir[0])
            return refuse(c->path, line, "board_dir is set twice");
        return check_board_dir(c, value, line);
    }
    if (!strcmp(key, "admit")) {
        if (!c->admit_all)
            return refuse(c->path, line, "admit is set twice");
        return parse_admit(c, value, line);
    }
    for (int what = 0; what < GP_CONF_SETTINGS; what++) {
        size_t n = strlen(settings[what].prefix);
        if (!strncmp(key, settings[what].prefix, n) && key[n])
            return parse_setting(c, (enum gp_conf_setting)what, key + n, value, line);
    }
    return refuse(c->path, line, "unknown key '%s' (" KEYS ")", key);
}

int gp_conf_load(const char *path, struct gp_conf *c)
{
    memset(c, 0, sizeof *c);
    c->admit_all = true;
    snprintf(c->path, sizeof c->path, "%s", path);
    /* O_NONBLOCK: a FIFO (or a device) at the path must not hold the application or a command
     * at its open; it is refused by its type below. A regular file's reads never block. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT)
            return -ENOENT;
        int err = errno;
        refuse(path, 0, "cannot be read: %s", strerror(err));
        return -err;
    }
    struct stat st;
    int rc = -EINVAL;
    FILE *f = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        refuse(path, 0,
               "is not a regular file (a FIFO, a device or a directory is refused: "
               "GPUPRIO_CONFIG must name a regular file)");
        goto out;
    }
    if (st.st_uid != 0 || (st.st_mode & 022)) {
        refuse(path, 0, "%s (it must be owned by root and writable by root only)",
               st.st_uid != 0 ? "is not owned by root" : "is writable by others");
        goto out;
    }
    f = fdopen(fd, "r");
    if (!f)
        goto out;
    fd = -1;
    char *text = NULL;
    size_t size = 0;
    ssize_t n;
    rc = 0;
    for (unsigned line = 1; !rc && (n = getline(&text, &size, f)) >= 0; line++) {
        if (memchr(text, '\0', (size_t)n))
            rc = refuse(path, line, "the line holds a NUL byte (the file must be text)");
        else if (line == 1 && !strncmp(text, "\xef\xbb\xbf", 3))
            rc = refuse(path, line,
                        "the file starts with a UTF-8 byte-order mark (save it as plain text, "
                        "without one)");
        /* The limit is the line's characters, its newline not counted (configuration.md). */
        else if ((size_t)n - (text[n - 1] == '\n') > GP_CONF_LINE_MAX)
            rc = refuse(path, line, "the line is longer than %d characters", GP_CONF_LINE_MAX);
        else
            rc = parse_line(c, text, line);
    }
    free(text);
    if (!rc)
        rc = check_listable(c);
    if (!rc)
        warn_unknown_ids(c);
out:
    if (f)
        fclose(f);
    if (fd >= 0)
        close(fd);
    return rc;
}

static struct gp_conf conf;
static bool conf_used;
static const char *shared_dir; /* for this process's user, decided once: asked on every decision */
static pthread_once_t conf_once = PTHREAD_ONCE_INIT;

static void load_once(void)
{
    const char *path = gp_opt_str(GP_OPT_CONFIG);
    conf_used = gp_conf_load(path ? path : GP_CONF_PATH, &conf) == 0;
    if (conf_used && conf.board_dir[0] && gp_conf_admits(&conf, geteuid()))
        shared_dir = conf.board_dir;
}

const struct gp_conf *gp_conf_get(void)
{
    pthread_once(&conf_once, load_once);
    return conf_used ? &conf : NULL;
}

int gp_conf_lookup(const struct gp_conf *c, enum gp_conf_setting what, uid_t uid, int *value,
                   unsigned *line)
{
    if (!c)
        return -ENOENT;
    const struct gp_conf_table *t = &c->set[what];
    bool found = false;
    for (unsigned i = 0; i < t->n; i++)
        if (!t->who[i].group && t->who[i].id == (unsigned)uid) {
            *value = t->value[i];
            *line = t->who[i].line;
            return 0;
        }
    for (unsigned i = 0; i < t->n; i++)
        if (t->who[i].group && (!found || t->value[i] > *value) && matches(&t->who[i], uid)) {
            *value = t->value[i];
            *line = t->who[i].line;
            found = true;
        }
    if (found)
        return 0;
    if (!t->has_default)
        return -ENOENT;
    *value = t->default_value;
    *line = t->default_line;
    return 0;
}

bool gp_conf_admits(const struct gp_conf *c, uid_t uid)
{
    if (!c)
        return false;
    if (c->admit_all)
        return true;
    for (unsigned i = 0; i < c->n_admit; i++)
        if (matches(&c->admit[i], uid))
            return true;
    return false;
}

const char *gp_conf_shared_dir(void)
{
    pthread_once(&conf_once, load_once);
    return shared_dir;
}
