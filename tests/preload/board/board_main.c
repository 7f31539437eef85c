/*
 * board_main.c - board_test's entry: picks the subtest from board_tests.def, gives it a private
 * board directory and simulated device, runs it, removes what it left. The subtests are in the
 * topic files (board_boards.c, board_gates.c, board_watchdog.c, board_tenants.c,
 * board_shares.c, board_hostile.c); board_harness.c starts and reads their workers.
 *
 *   board_test SUBTEST WORKER SHIM    board_test --list
 */
#include "board_harness.h"

enum { NEEDS_NONE = 0, NEEDS_TOOL = 1, NEEDS_USERS = 2 };

static const struct subtest {
    const char *name;
    unsigned needs;
} subtests[] = {
#define BOARD_SUBTEST(subtest, call, needs) {subtest, needs},
#include "board_tests.def"
};
enum { N_SUBTESTS = sizeof subtests / sizeof subtests[0] };

/* Runs subtests[i]. */
static void run_subtest(size_t i)
{
    size_t row = 0;
#define BOARD_SUBTEST(subtest, call, needs)                                                        \
    if (i == row++) {                                                                              \
        call;                                                                                      \
        return;                                                                                    \
    }
#include "board_tests.def"
}

static void list(FILE *to, const char *indent)
{
    for (size_t i = 0; i < N_SUBTESTS; i++)
        fprintf(to, "%s%s%s%s\n", indent, subtests[i].name,
                subtests[i].needs & NEEDS_USERS ? "  (as other users: root)" : "",
                subtests[i].needs & NEEDS_TOOL ? "  (GPUPRIO_TOOL)" : "");
}

static int usage(void)
{
    fprintf(stderr, "usage: board_test [disk-][ns-]SUBTEST WORKER SHIM | board_test --list\n"
                    "subtests (board_tests.def):\n");
    list(stderr, "  ");
    return 2;
}

/* The row of subtest t, or -1. */
static int subtest_of(const char *t)
{
    for (size_t i = 0; i < N_SUBTESTS; i++)
        if (!strcmp(subtests[i].name, t))
            return (int)i;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        list(stdout, "");
        return 0;
    }
    if (argc != 4)
        return usage();
    const char *t = argv[1], *parent = "/dev/shm";
    bool disk = !strncmp(t, "disk-", 5);
    t += disk ? 5 : 0;
    bool ns = !strncmp(t, "ns-", 3);
    t += ns ? 3 : 0;
    int row = subtest_of(t);
    if (row < 0) {
        fprintf(stderr, "unknown subtest %s\n", t);
        return usage();
    }
    worker = argv[2];
    shim = argv[3];
    tool = getenv("GPUPRIO_TOOL");
    if ((subtests[row].needs & NEEDS_TOOL) && !tool) {
        fprintf(stderr, "%s needs GPUPRIO_TOOL (the gpuprio command)\n", argv[1]);
        return 2;
    }
    if (disk) {
        struct statfs fs;
        parent = "/var/tmp";
        on_disk = true;
        if (statfs(parent, &fs) != 0 || fs.f_type == 0x01021994 /* TMPFS_MAGIC */ ||
            fs.f_type == 0x958458f6 /* HUGETLBFS_MAGIC */) {
            printf("SKIPPED: %s is not on a disk filesystem (or cannot be looked at), so the board "
                   "cannot be put on one\n",
                   parent);
            return 77;
        }
    }
    snprintf(dir, sizeof dir, "%s/gpuprio-board-test-XXXXXX", parent);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(name, sizeof name, "board%d", (int)getpid());
    snprintf(trace, sizeof trace, "%s/trace", dir);
    setenv("HIPSIM_SHARED", name, 1);
    setenv("HIPSIM_COMPUTE_SLOTS", "1", 1);
    setenv("HIPSIM_TRACE", trace, 1);
    setenv("GPUPRIO_BOARD_DIR", dir, 1);
    setenv("GPUPRIO_WINDOW", "2", 1);
    signal(SIGPIPE, SIG_IGN);

    if (ns) {
        if (system("unshare --pid --fork --kill-child true") != 0) {
            printf("SKIPPED: pid namespaces cannot be created here (unshare --pid, as root)\n");
            return 77;
        }
        in_namespaces = true;
    }
    if ((subtests[row].needs & NEEDS_USERS) && !can_become_others()) {
        printf("SKIPPED: the tenant tests run workers as uids %u and %u, which this process "
               "cannot become (not root, or a user namespace without them)\n",
               USER_A, USER_B);
        return 77;
    }
    run_subtest((size_t)row);

    char cmd[128], segment[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (getenv("BOARD_TEST_DEBUG"))
        printf("kept %s\n", dir);
    else if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
    snprintf(segment, sizeof segment, "/hipsim-%u-%s-0", (unsigned)getuid(), name);
    shm_unlink(segment);
    snprintf(segment, sizeof segment, "/hipsim-all-%s-0", name);
    shm_unlink(segment);
    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
