/*
 * held_lock.h - a static mutex of a loaded library, found by name, for tests that take it from a
 * thread of their own: to fork while "another thread of gpuprio" holds it, at a moment no call
 * of the library can be made to hold it on cue. The library's symbol table (.symtab, kept in the
 * build tree's libraries) names it; a local name is looked for among the symbols of one source
 * file (its STT_FILE entry and those after it), since several files may have a "mu".
 */
#ifndef GPUPRIO_TEST_HELD_LOCK_H
#define GPUPRIO_TEST_HELD_LOCK_H

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
                sym[j].st_size == sizeof(pthread_mutex_t)) {
                found = (pthread_mutex_t *)(void *)((char *)info.dli_fbase + sym[j].st_value);
                matches++;
            }
        }
    }
out:
    munmap((void *)img, size);
    return matches == 1 ? found : NULL;
}

#endif /* GPUPRIO_TEST_HELD_LOCK_H */
