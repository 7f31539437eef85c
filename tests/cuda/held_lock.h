/*
 * held_lock.h - forking while a thread holds one of gpuprio's locks, as a thread of the
 * application inside a call of gpuprio's might, at a moment no call of the library can be made
 * to hold it on cue: the test's own thread takes the lock, a static mutex of the shim found by
 * name in the shim's symbol table (.symtab, kept in the build tree's libraries). A local name is
 * looked for among the symbols of one source file (its STT_FILE entry and those after it), since
 * several files have a "mu" or a "table_mu".
 */
#ifndef GPUPRIO_TEST_HELD_LOCK_H
#define GPUPRIO_TEST_HELD_LOCK_H

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The mutex `name` defined in source file `file` of the loaded object that holds `anchor` (an
 * address inside it), or NULL when its symbol table does not have exactly one. */
static inline pthread_mutex_t *held_lock_find(const void *anchor, const char *file,
                                              const char *name)
{
    Dl_info info;
    if (!dladdr(anchor, &info) || !info.dli_fname || !info.dli_fbase)
        return NULL;
    int fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    const char *img = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (img == MAP_FAILED)
        return NULL;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    pthread_mutex_t *found = NULL;
    int matches = 0;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_type != ET_DYN || /* a shared library: its symbols' values are from its base */
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        goto out;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
            sh[i].sh_offset + sh[i].sh_size > size)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
        size_t n = sh[i].sh_size / sizeof *sym;
        const char *names = img + strs->sh_offset;
        int in_file = 0;
        for (size_t j = 0; j < n; j++) {
            if (sym[j].st_name >= strs->sh_size)
                continue;
            const char *sname = names + sym[j].st_name;
            if (ELF64_ST_TYPE(sym[j].st_info) == STT_FILE) {
                in_file = strcmp(sname, file) == 0;
                continue;
            }
            if (in_file && ELF64_ST_TYPE(sym[j].st_info) == STT_OBJECT &&
                ELF64_ST_BIND(sym[j].st_info) == STB_LOCAL && strcmp(sname, name) == 0 &&
                sym[j].st_size >= sizeof(pthread_mutex_t) /* AddressSanitizer pads */) {
                found = (pthread_mutex_t *)(void *)((char *)info.dli_fbase + sym[j].st_value);
                matches++;
            }
        }
    }
out:
    munmap((void *)img, size);
    return matches == 1 ? found : NULL;
}

/* The holding thread's lock, its pipe to say it has it, and its pipe to wait on. */
static pthread_mutex_t *held_lock_mu;
static int held_lock_taken[2], held_lock_release[2];

static inline void *held_lock_hold(void *arg)
{
    char c = 0;
    (void)arg;
    pthread_mutex_lock(held_lock_mu);
    if (write(held_lock_taken[1], &c, 1) == 1 && read(held_lock_release[0], &c, 1) != 1)
        c = 1;
    pthread_mutex_unlock(held_lock_mu);
    return NULL;
}

/* Forks while a thread of this process holds the shim's mutex `lock` of its source file `file`
 * (the shim: the object that exports gpuprio_stream_drain); the child ends with _exit(child()).
 * NULL when it ended with 0 within `seconds`, else what went wrong (one killed then). */
static inline const char *held_lock_fork(const char *file, const char *lock, int seconds,
                                         int (*child)(void))
{
    const void *shim = dlsym(RTLD_DEFAULT, "gpuprio_stream_drain");
    held_lock_mu = shim ? held_lock_find(shim, file, lock) : NULL;
    if (!held_lock_mu)
        return "the lock is not in the shim's symbol table";
    pthread_t holder;
    char c = 0;
    if (pipe(held_lock_taken) || pipe(held_lock_release) ||
        pthread_create(&holder, NULL, held_lock_hold, NULL))
        return "the holding thread did not start";
    if (read(held_lock_taken[0], &c, 1) != 1)
        return "the holding thread did not take the lock";
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(child()); /* exit() would have LeakSanitizer report the parent's threads' memory */
    const char *what = pid < 0 ? "fork failed" : NULL;
    int status = 0;
    pid_t got = 0;
    for (long ms = 0; pid > 0 && (got = waitpid(pid, &status, WNOHANG)) == 0; ms += 10) {
        if (ms >= 1000L * seconds) {
            what = "the child is stuck (killed)";
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        usleep(10000);
    }
    if (!what && (got != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
        what = "the child failed";
    if (write(held_lock_release[1], &c, 1) != 1 || pthread_join(holder, NULL) != 0)
        what = what ? what : "the holding thread did not end";
    close(held_lock_taken[0]);
    close(held_lock_taken[1]);
    close(held_lock_release[0]);
    close(held_lock_release[1]);
    return what;
}

#endif /* GPUPRIO_TEST_HELD_LOCK_H */
