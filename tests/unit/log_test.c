/*
 * log_test.c - unit.log: gp_log_printable (src/util/gp_log.c), which makes another process's
 * name safe to print: a hostile process of the same user sets its comm (prctl) to any bytes, and
 * GPUPRIO_LOG=info names it; gp_log itself replaces only bytes below 0x20, so DEL, C1 controls
 * (0x9b is a CSI on some terminals) and broken UTF-8 would reach the terminal.
 */
#include <string.h>

#include "check.h"
#include "gp_log.h"

static void printable(void)
{
    char out[17];
    gp_log_printable(out, "python3", 16);
    CHECK(strcmp(out, "python3") == 0);
    gp_log_printable(out, " ~!az", 16); /* the edges of printable ASCII stay */
    CHECK(strcmp(out, " ~!az") == 0);
    gp_log_printable(out,
                     "a\x1b[2Jb\x7f\x9b"
                     "c\xc3\xa9\n",
                     16);
    CHECK(strcmp(out, "a?[2Jb??c???") == 0);
    /* A comm fills its 16 bytes without a terminator: at most n bytes are read, and out ends. */
    char full[16];
    memcpy(full, "0123456789abcdef", sizeof full);
    memset(out, 'x', sizeof out);
    gp_log_printable(out, full, sizeof full);
    CHECK(strcmp(out, "0123456789abcdef") == 0);
    gp_log_printable(out, "", 16);
    CHECK(out[0] == '\0');
    gp_log_printable(out, "abc", 0);
    CHECK(out[0] == '\0');
}

int main(void)
{
    printable();
    return check_finish("unit.log");
}
