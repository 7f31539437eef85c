/*
 * gp_conf_file.h - the administrator's configuration file, /etc/gpuprio.conf (GPUPRIO_CONFIG names
 * another for tests): scheduling across users (a shared board directory, the users admitted to
 * it) and the highest priority each user or group may use (docs/configuration.md, "Users sharing
 * a GPU"; the trust model is docs/board.md's, "Users sharing a GPU").
 *
 * The file is all or nothing. It is used only when it is a regular file owned by root, not
 * writable by group or others, every line of it is understood, and its board directory (if it
 * names one) is a directory owned by root that nobody else can rename or remove files in (not
 * writable by group or others, or sticky). Anything else is one warning naming the file, the line
 * and what is accepted, and the file is not used: each user's processes schedule among
 * themselves, on boards nobody else reads, as without a file, where nobody's priority can reach
 * anyone else's queues, so no cap is loosened towards another user. An absent file is today's
 * behaviour, silently.
 *
 *   # comment
 *   board_dir = /run/gpuprio      the shared board directory: admitted users schedule together
 *   admit = alice, @research, 1001 whose boards count (users, @groups, numeric ids; default all)
 *   cap.default = normal          the highest priority of users without a cap of their own
 *   cap.alice = critical          a user's (by name or uid)
 *   cap.@research = low           a group's: a user in several capped groups gets the highest
 *   share.@research = 10%         the minimum share of its queues (GPUPRIO_POLICY=share)
 *   weight.alice = 3              their weight against equal priorities (GPUPRIO_POLICY=share)
 */
#ifndef GPUPRIO_GP_CONF_FILE_H
#define GPUPRIO_GP_CONF_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#define GP_CONF_PATH "/etc/gpuprio.conf"
/* The most entries one key takes (cap., share., weight.: users and groups; admit: items), and
 * the longest line, in characters without its newline; more refuses the file
 * (docs/configuration.md). */
#define GP_CONF_MAX_ENTRIES 64
#define GP_CONF_LINE_MAX 1024

/* A user or a group named in the file, and the line that named it. */
struct gp_conf_who {
    bool group;
    unsigned id; /* uid or gid */
    unsigned line;
    /* Given as a number no user (group) of this machine has: taken as it is (containers run uids
     * without accounts), with one warning per file (a name nobody has refuses the file). */
    bool unknown;
};

/* What the file sets per user: keys KEY.default, KEY.USER and KEY.@GROUP. */
enum gp_conf_setting {
    GP_CONF_CAP,    /* cap: the highest priority */
    GP_CONF_SHARE,  /* share: the minimum share, in percent (GPUPRIO_SHARE) */
    GP_CONF_WEIGHT, /* weight: against equal priorities (GPUPRIO_WEIGHT) */
    GP_CONF_SETTINGS
};

/* One setting's entries: a user's own wins over its groups', of several groups' the greatest
 * value, then the default. */
struct gp_conf_table {
    unsigned n;
    struct gp_conf_who who[GP_CONF_MAX_ENTRIES];
    int value[GP_CONF_MAX_ENTRIES];
    bool has_default;
    int default_value;
    unsigned default_line;
};

struct gp_conf {
    char path[PATH_MAX];
    char board_dir[PATH_MAX]; /* "" when the file names none */
    unsigned board_dir_line;
    bool admit_all; /* no admit line */
    unsigned n_admit;
    struct gp_conf_who admit[GP_CONF_MAX_ENTRIES];
    struct gp_conf_table set[GP_CONF_SETTINGS];
};

/* The file in use, read on the first call (its one warning then), or NULL when there is none or
 * it was refused. */
const struct gp_conf *gp_conf_get(void);
/* Reads and checks path into c; 0, -ENOENT when it does not exist, or another negative errno with
 * the warning already given. For gp_conf_get and tests. */
int gp_conf_load(const char *path, struct gp_conf *c);

/* What the file sets for uid: 0 with *value, and *line where the file sets it; -ENOENT when it
 * sets nothing for uid (or c is NULL). */
int gp_conf_lookup(const struct gp_conf *c, enum gp_conf_setting what, uid_t uid, int *value,
                   unsigned *line);
/* Whether uid's boards count on the shared board directory. */
bool gp_conf_admits(const struct gp_conf *c, uid_t uid);
/* The shared board directory for the process's user (as it was when the file was read): NULL
 * unless the file names one and admits it. */
const char *gp_conf_shared_dir(void);

#endif /* GPUPRIO_GP_CONF_FILE_H */
