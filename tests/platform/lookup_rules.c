/*
 * lookup_rules.c - the lookup rules of the platform contract, the same on every platform
 * (src/shim/core/entries.c): dlsym and dlvsym hand out a wrapper only for a name the shim
 * intercepts whose symbol is the bound runtime's own function; every other lookup is answered
 * exactly as libc answers it, and a lookup of a name the shim does not intercept never loads or
 * binds a runtime.
 *
 *   lookup_rules RUNTIME LOOKALIKE DEPENDENT INTERCEPTED NOT_INTERCEPTED PREFIX
 *
 * Run under LD_PRELOAD of one platform's shim, with the runtime's directory on LD_LIBRARY_PATH
 * (so that a shim which bound the runtime on such a lookup would find it and load it). RUNTIME
 * is that platform's runtime (the simulator, the fake driver), loaded by this program with
 * RTLD_LOCAL as PyTorch loads its own; LOOKALIKE a library that is none (lookalike.c);
 * DEPENDENT one that needs the runtime (dependent.c); INTERCEPTED a function the shim wraps,
 * NOT_INTERCEPTED one the runtime exports and the shim does not; PREFIX the platform's prefix
 * ("hip", "cu"). The answers libc gives are asked of libc's own dlsym.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../expect.h"

static void *(*libc_dlsym)(void *, const char *);

/* The file name of the object that defines addr ("" when none). */
static const char *object_of(const void *addr)
{
    Dl_info info;
    return addr && dladdr(addr, &info) && info.dli_fname ? info.dli_fname : "";
}

static bool in_shim(const void *addr)
{
    return strstr(object_of(addr), "libgpuprio-") != NULL;
}

/* Whether the files a and b are one (the loader may have opened it under another name, by its
 * soname). */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

struct mapped {
    const char *path;
    bool found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct mapped *m = data;
    (void)size;
    if (info->dlpi_name && info->dlpi_name[0] && same_file(info->dlpi_name, m->path))
        m->found = true;
    return 0;
}

/* Whether the file at path is mapped in the process, under whatever name. */
static bool mapped(const char *path)
{
    struct mapped m = {path, false};
    dl_iterate_phdr(find_object, &m);
    return m.found;
}

/* dlsym must answer exactly what libc answers, and leave dlerror() as libc leaves it. */
static void expect_libc_answer(void *handle, const char *name)
{
    void *want = libc_dlsym(handle, name);
    bool want_error = dlerror() != NULL;
    void *got = dlsym(handle, name);
    bool got_error = dlerror() != NULL;
    if (got != want || got_error != want_error) {
        printf("FAIL: dlsym(%s) gave %p (%s), libc %p (%s)\n", name, got, object_of(got), want,
               object_of(want));
        failures++;
    }
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: lookup_rules RUNTIME LOOKALIKE DEPENDENT INTERCEPTED "
                        "NOT_INTERCEPTED PREFIX\n");
        return 2;
    }
    const char *runtime_path = argv[1], *intercepted = argv[4], *not_intercepted = argv[5];
    char prefixed[64];
    snprintf(prefixed, sizeof prefixed, "%sLookalikeOnly", argv[6]);

    /* libc's dlsym, the reference: dlvsym of a name the shim does not intercept is libc's too,
     * which the check below of where it lives confirms. */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    *(void **)&libc_dlsym = libc ? dlvsym(libc, "dlsym", "GLIBC_2.34") : NULL;
    if (!libc_dlsym && libc)
        *(void **)&libc_dlsym = dlvsym(libc, "dlsym", "GLIBC_2.2.5");
    if (!libc_dlsym || !strstr(object_of((void *)libc_dlsym), "libc.so")) {
        printf("FAIL: libc's dlsym not found\n");
        return 1;
    }
    if (!dlsym(RTLD_DEFAULT, "gpuprio_stream_stats")) {
        printf("FAIL: the gpuprio API is not in the process (run under LD_PRELOAD)\n");
        return 1;
    }

    /* Before the program has a runtime: names the shim does not intercept, through a handle that
     * is not the runtime's, are libc's answers, and bring no runtime in. */
    void *other = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    EXPECT(other != NULL);
    if (!other)
        return 1;
    EXPECT(!mapped(runtime_path));
    expect_libc_answer(other, "_ZN9lookalike5probeEv");
    expect_libc_answer(other, prefixed);
    expect_libc_answer(other, "no_such_symbol_anywhere");
    expect_libc_answer(other, "_ZN9lookalike9no_such_fEv");
    EXPECT(!mapped(runtime_path));

    /* The program loads its runtime, privately, as PyTorch does. */
    void *rt = dlopen(runtime_path, RTLD_NOW | RTLD_LOCAL);
    EXPECT(rt != NULL);
    if (!rt)
        return 1;

    /* An intercepted name on the runtime's handle: the wrapper, the shim's export. */
    void *wrapped = dlsym(rt, intercepted);
    EXPECT(dlerror() == NULL);
    EXPECT(wrapped && in_shim(wrapped));
    EXPECT(wrapped == dlsym(RTLD_DEFAULT, intercepted));
    EXPECT(same_file(object_of(libc_dlsym(rt, intercepted)), runtime_path));

    /* Any other name on the runtime's handle: libc's answer, the runtime's own function or
     * nothing (with libc's dlerror()). */
    expect_libc_answer(rt, not_intercepted);
    EXPECT(!in_shim(dlsym(rt, not_intercepted)));
    expect_libc_answer(rt, prefixed);
    expect_libc_answer(rt, "_ZN9lookalike5probeEv");
    EXPECT(dlsym(rt, "gpuprioNoSuchFunction") == NULL);
    const char *err = dlerror();
    EXPECT(err && strstr(err, "gpuprioNoSuchFunction"));

    /* A handle that is not the runtime's: its own function, even under an intercepted name. */
    expect_libc_answer(other, intercepted);
    EXPECT(!in_shim(dlsym(other, intercepted)));
    expect_libc_answer(other, prefixed);
    expect_libc_answer(libc, "getpid");

    /* A handle whose scope reaches the runtime (a framework that needs it): the name resolves to
     * the runtime's own function there, so calls through it are the runtime's, and the shim
     * hands out its wrapper, as it does to the framework's linked calls. */
    void *dep = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
    EXPECT(dep != NULL);
    if (dep) {
        EXPECT(libc_dlsym(dep, intercepted) == libc_dlsym(rt, intercepted));
        EXPECT(dlsym(dep, intercepted) == wrapped);
        expect_libc_answer(dep, not_intercepted);
        expect_libc_answer(dep, "dependent_marker");
    }

    printf("%s\n", failures ? "FAILED" : "OK");
    return failures != 0;
}
