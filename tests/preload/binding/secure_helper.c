/*
 * secure_helper.c - a program that loads the shim as a system-wide preload would load it into a
 * setuid program (secure.sh makes a copy of this one setuid), then makes one HIP call through it
 * (hipDeviceSynchronize), which binds the runtime (GPUPRIO_HIP_LIBRARY, if the shim honours it) and
 * releases what the constructor held back (warnings about the variables and the configuration
 * file).
 *
 *   secure_helper SHIM
 *
 * Prints "secure N", N the kernel's AT_SECURE (1: secure-execution mode), then the call's result.
 * The preload itself is a dlopen: the dynamic loader ignores LD_PRELOAD paths in secure-execution
 * mode, and /etc/ld.so.preload is the machine's, not a test's.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/auxv.h>

/* Sanitizer builds: LeakSanitizer must ptrace the process at its exit, which a process whose real
 * and effective uids differ forbids (and there it reads no ASAN_OPTIONS): leaks are checked in
 * the plain run only. The sanitizers' runtime calls this where it is linked in. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
    return getauxval(AT_SECURE) ? "detect_leaks=0" : "";
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: secure_helper SHIM\n");
        return 2;
    }
    printf("secure %lu\n", getauxval(AT_SECURE));
    fflush(stdout);
    void *shim = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!shim) {
        fprintf(stderr, "secure_helper: %s\n", dlerror());
        return 3;
    }
    int (*device_synchronize)(void) = (int (*)(void))dlsym(shim, "hipDeviceSynchronize");
    if (!device_synchronize) {
        fprintf(stderr, "secure_helper: the shim has no hipDeviceSynchronize\n");
        return 3;
    }
    printf("hipDeviceSynchronize: %d\n", device_synchronize());
    return 0;
}
