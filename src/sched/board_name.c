/*
 * board_name.c - where boards live and what they are called: the board directory, a device key
 * made safe for a file name, and the names of users' boards (their uid, device and alternates:
 * board.h). Names come from a directory anyone can write to: they are parsed, never trusted.
 */
#include "board_impl.h"

const char *gp_board_dir(void)
{
    const char *shared = gp_conf_shared_dir();
    return shared ? shared : gp_opt_str(GP_OPT_BOARD_DIR);
}

bool gp_board_shared(void)
{
    return gp_conf_shared_dir() != NULL;
}

int gp_board_dir_exposure(const char *dir, char *what, size_t size)
{
    what[0] = '\0';
    struct stat st;
    if (stat(dir, &st) != 0)
        return -errno;
    /* What the administrator's board_dir must be (gp_conf_file.c), the user's own directory
     * allowed too. */
    bool foreign = st.st_uid != geteuid() && st.st_uid != 0;
    mode_t w = st.st_mode & 022;
    bool shared_writes = w && !(st.st_mode & S_ISVTX);
    bool relative = dir[0] != '/';
    if (!foreign && !shared_writes && !relative)
        return 0;
    char owner[80] = "", mode[128] = "";
    if (foreign)
        snprintf(owner, sizeof owner, "%sowned by uid %u, another user", relative ? "; " : "",
                 (unsigned)st.st_uid);
    if (shared_writes)
        snprintf(mode, sizeof mode, "%swritable by %s without the sticky bit (mode %04o)",
                 relative || foreign ? "; " : "",
                 w == 022   ? "group and others"
                 : w == 020 ? "group"
                            : "others",
                 (unsigned)(st.st_mode & 07777));
    snprintf(what, size, "%s%s%s%s",
             relative ? "a relative path (started in another directory, a process uses other "
                        "boards)"
                      : "",
             owner, mode,
             foreign || shared_writes
                 ? ": another user can rename or remove this user's boards in it"
                 : "");
    return 0;
}

int gp_board_dir_fs(const char *dir, char *name, size_t size, bool *registrable)
{
    /* The magic numbers of linux/magic.h, for the types a board directory is commonly on. */
    static const struct {
        unsigned long magic;
        const char *name;
        bool registrable;
    } known[] = {
        {0x01021994, "tmpfs", true},  {0x958458f6, "hugetlbfs", true},
        {0xef53, "ext4", false},      {0x58465342, "xfs", false},
        {0x9123683e, "btrfs", false}, {0x794c7630, "overlayfs", false},
        {0x6969, "nfs", false},       {0x65735546, "fuse", false},
        {0x2fc12fc1, "zfs", false},   {0xff534d42, "cifs", false},
        {0x01021997, "9p", false},
    };
    struct statfs st;
    if (statfs(dir, &st) != 0)
        return -errno;
    const char *found = "unknown";
    *registrable = false;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if ((unsigned long)st.f_type == known[i].magic) {
            found = known[i].name;
            *registrable = known[i].registrable;
        }
    snprintf(name, size, "%s", found);
    return 0;
}

/* Whether c stands for itself in a device key in a file name (safe_key). */
static bool safe_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

/* The device key as it appears in file names. */
static void safe_key(const char *key, char safe[GP_BOARD_KEY_MAX])
{
    size_t i = 0;
    for (; key[i] && i < GP_BOARD_KEY_MAX - 1; i++)
        safe[i] = safe_char(key[i]) ? key[i] : '_';
    safe[i] = '\0';
}

int gp_board_path(const char *key, char *buf, size_t size)
{
    char safe[GP_BOARD_KEY_MAX];
    safe_key(key, safe);
    int n = snprintf(buf, size, "%s/gpuprio-%u-v%u-%s", gp_board_dir(), (unsigned)geteuid(),
                     GP_BOARD_VERSION, safe);
    return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

bool gp_board_name_parse(const char *name, uid_t *uid, char *device, size_t size)
{
    if (strncmp(name, "gpuprio-", 8) != 0 || name[8] < '0' || name[8] > '9')
        return false;
    /* One spelling per uid (no leading zeros, no sign): a user's board has one name, and one
     * alternate at a time (gp_board_open). */
    if (name[8] == '0' && name[9] >= '0' && name[9] <= '9')
        return false;
    char *end;
    errno = 0;
    unsigned long id = strtoul(name + 8, &end, 10);
    if (errno || id > UINT32_MAX || end[0] != '-' || end[1] != 'v' || end[2] < '0' || end[2] > '9')
        return false;
    /* The device: "vVERSION-KEY", the key as safe_key writes it (never a '+'), then nothing or
     * an alternate's '+' and 16 lower-case hexadecimal digits. */
    const char *from = end + 1;
    size_t len = strcspn(from, "+");
    size_t digits = strspn(from + 1, "0123456789");
    if (from[1 + digits] != '-' || from[2 + digits] == '\0' || from[2 + digits] == '+')
        return false;
    for (size_t i = 2 + digits; i < len; i++)
        if (!safe_char(from[i]))
            return false;
    const char *rest = from + len;
    if (*rest == '+' && (strspn(rest + 1, "0123456789abcdef") != 16 || rest[17] != '\0'))
        return false;
    if (len >= size)
        return false;
    memcpy(device, from, len);
    device[len] = '\0';
    *uid = (uid_t)id;
    return true;
}

void gp_board_key_device(unsigned version, const char *key, char *device, size_t size)
{
    char safe[GP_BOARD_KEY_MAX];
    safe_key(key, safe);
    snprintf(device, size, "v%u-%s", version, safe);
}

bool gp_board_name_of(const char *name, const char *key, uid_t *uid)
{
    char want[GP_BOARD_DEVICE_MAX], device[GP_BOARD_DEVICE_MAX];
    gp_board_key_device(GP_BOARD_VERSION, key, want, sizeof want);
    uid_t named;
    if (!gp_board_name_parse(name, &named, device, sizeof device) || strcmp(device, want) != 0)
        return false;
    *uid = named;
    return true;
}

void gp_board_device_of(const struct gp_board_file *f, char *device, size_t size)
{
    char key[GP_BOARD_KEY_MAX];
    memcpy(key, f->h.key, sizeof key); /* a copy of another user's file: maybe unterminated */
    key[sizeof key - 1] = '\0';
    gp_board_key_device((unsigned)f->h.version, key, device, size);
}

bool gp_board_device_is(const struct gp_board_file *f, const char *device)
{
    char want[GP_BOARD_DEVICE_MAX];
    gp_board_device_of(f, want, sizeof want);
    return strcmp(want, device) == 0;
}
