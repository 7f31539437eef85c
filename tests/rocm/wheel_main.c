/*
 * wheel_main.c - loads a framework library the way Python loads a ROCm wheel's extension
 * modules (dlopen RTLD_LOCAL; the real HIP runtime is copied into the wheel's directory under
 * the wheel's own file name), makes the calls of calls.c through it, prints how many HIP
 * runtime files are mapped (gpuprio must bind to the wheel's copy, never open a second one),
 * then ends as MODE says (calls.h: finish), or with "dlclose" unloads the framework first and
 * returns 4.
 *
 *   wheel_main FRAMEWORK MODE
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The number of distinct files named *libamdhip64* mapped in this process. */
static int runtimes_mapped(void)
{
    char line[4096], seen[8][4096];
    int n = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return -1;
    while (fgets(line, sizeof line, maps)) {
        const char *path = strchr(line, '/');
        if (!path || !strstr(path, "libamdhip64"))
            continue;
        int known = 0;
        for (int i = 0; i < n && !known; i++)
            known = strcmp(seen[i], path) == 0;
        if (!known && n < 8)
            snprintf(seen[n++], sizeof seen[0], "%s", path);
    }
    fclose(maps);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: wheel_main FRAMEWORK return|exit|thread|signal|dlclose\n");
        return 2;
    }
    void *framework = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!framework) {
        fprintf(stderr, "wheel_main: %s\n", dlerror());
        return 2;
    }
    int (*calls)(void) = (int (*)(void))dlsym(framework, "framework_calls");
    int (*finish)(const char *) = (int (*)(const char *))dlsym(framework, "framework_finish");
    if (!calls || !finish) {
        fprintf(stderr, "wheel_main: %s\n", dlerror());
        return 2;
    }
    printf("%d calls\n", calls());
    printf("HIP runtimes mapped: %d\n", runtimes_mapped());
    fflush(stdout);
    if (strcmp(argv[2], "dlclose") == 0)
        return dlclose(framework) == 0 ? 4 : 2;
    return finish(argv[2]);
}
