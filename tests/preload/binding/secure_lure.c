/*
 * secure_lure.c - what an unprivileged user would name in GPUPRIO_HIP_LIBRARY to have it loaded
 * into a privileged program: says so on stderr the moment it is loaded (secure.sh).
 */
#include <unistd.h>

__attribute__((constructor)) static void lure_loaded(void)
{
    static const char said[] = "LURE LOADED: a library named by the environment was loaded\n";
    if (write(STDERR_FILENO, said, sizeof said - 1) < 0)
        return;
}
