/*
 * user_names.c - gpuprio top and metrics look each user's name up once per sample they print,
 * however many users the sample has: root reading every device reads up to 32 users of each, and
 * a cache of 33 names looked the others up again for every row and every metrics family. A
 * made-up sample of 40 users (two rows and a record each) is printed as metrics, as top's JSON
 * and as its table, with getpwuid_r counted (this program's own, which the tool's code calls in
 * this executable): 40 lookups each, and every name as looked up.
 *
 *   tools_user_names    (exit status 0 when every check passed)
 */
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "tool.h"

#define USERS 40

static unsigned lookups;

/* The system's lookup, counted: user UID is named "u" and the uid. */
int getpwuid_r(uid_t uid, struct passwd *pwd, char *buf, size_t buflen, struct passwd **result)
{
    lookups++;
    memset(pwd, 0, sizeof *pwd);
    snprintf(buf, buflen, "u%u", (unsigned)uid);
    pwd->pw_name = buf;
    pwd->pw_uid = uid;
    *result = pwd;
    return 0;
}

static int failed;

int main(void)
{
    static struct gp_queue_row rows[2 * USERS];
    static struct gp_record_row records[USERS];
    for (unsigned i = 0; i < 2 * USERS; i++) {
        struct gp_slot_id *id = &rows[i].id;
        snprintf(id->key, sizeof id->key, "0000:c%u:00.0", i % 2);
        snprintf(id->comm, sizeof id->comm, "p%u", i / 2);
        id->pid = 1000 + i / 2;
        id->uid = 5000 + i / 2;
        rows[i].stream = 0x100 + i;
        records[i / 2].id = *id;
    }
    struct gp_sample s = {.rows = rows, .n = 2 * USERS, .records = records, .nrec = USERS};
    FILE *null = fopen("/dev/null", "w");
    if (!null || !freopen("/dev/null", "w", stdout))
        return 2;
    gp_metrics_write(null, &s);
    fprintf(stderr, "metrics: %u lookups (expected %u)\n", lookups, USERS);
    failed += lookups != USERS;
    lookups = 0;
    gp_print_json(&s, true);
    fprintf(stderr, "top --json --all: %u lookups (expected %u)\n", lookups, USERS);
    failed += lookups != USERS;
    lookups = 0;
    gp_print_table(&s, 0, true);
    fprintf(stderr, "top's table: %u lookups (expected %u)\n", lookups, USERS);
    failed += lookups != USERS;
    lookups = 0;
    /* And each name is the one looked up, the first user's and the last's. */
    struct gp_users u = {.n = 0};
    for (unsigned i = 0; i < USERS; i++)
        gp_user_name(&u, 5000 + i);
    char want[16];
    for (unsigned i = 0; i < USERS; i += USERS - 1) {
        snprintf(want, sizeof want, "u%u", 5000 + i);
        const char *got = gp_user_name(&u, 5000 + i);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "user %u: '%s', expected '%s'\n", 5000 + i, got, want);
            failed++;
        }
    }
    gp_users_free(&u);
    fprintf(stderr, "names again: %u lookups (expected %u)\n", lookups, USERS);
    failed += lookups != USERS;
    fclose(null);
    fprintf(stderr, "%s\n", failed ? "FAILED" : "all passed");
    return failed ? 1 : 0;
}
