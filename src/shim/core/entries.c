/*
 * entries.c - the shim's entry points in the bound runtime, and the one set of rules, for every
 * platform, by which run-time lookups hand out the shim's wrappers.
 *
 * Applications reach runtime functions by symbol (the shim's exports), by dlsym/dlvsym on the
 * runtime's handle (Triton; the CUDA runtime, for libcuda), and through the runtime's own
 * proc-address functions (hipGetProcAddress, cuGetProcAddress: how the CUDA runtime, and so
 * PyTorch, finds every driver function). A pointer found the second or third way must be the
 * wrapper, or calls through it are never scheduled; but a lookup is also how programs find
 * everything else, and there gpuprio must not be seen at all. So:
 *   - dlsym/dlvsym: the wrapper only for a name the shim intercepts, and only when the symbol
 *     found is the bound runtime's own function of that name (the handle reached the runtime:
 *     its own, or one whose scope includes it). A name the shim does not intercept is answered
 *     exactly as libc answered it, and binds nothing: the HIP shim used to bind the runtime for
 *     any name starting with "hip" or "_Z", so a C++ program's dlsym of its own symbols could
 *     load libamdhip64 into a process that had none.
 *   - proc-address lookups: the wrapper when the pointer the runtime returned is its own
 *     function of an entry point (matched by address, name unseen: the runtime picks variants).
 */
#include <dlfcn.h>
#include <string.h>

#include "core.h"
#include "gp_log.h"

pthread_once_t core_entries_once = PTHREAD_ONCE_INIT;

void core_entries_resolve(void)
{
    gp_log_release(); /* the process uses a GPU: what the constructor found wrong is said now */
    const struct core_shim *s = &core_shim;
    if (s->platform->bind() != 0)
        return;
    for (size_t i = 0; i < s->entries; i++)
        s->real[i] = s->platform->sym(s->names[i]);
    if (s->resolve_more)
        s->resolve_more();
}

/* The index of the entry point called name, or core_shim.entries when there is none. */
static size_t entry_named(const char *name)
{
    size_t i = 0;
    while (i < core_shim.entries && strcmp(name, core_shim.names[i]) != 0)
        i++;
    return i;
}

void *core_lookup(const char *name, void *sym)
{
    size_t i = entry_named(name);
    if (i == core_shim.entries || core_shim.platform->bind() != 0)
        return sym;
    core_resolve();
    return core_shim.real[i] == sym ? core_shim.wrappers[i] : sym;
}

/*
 * This rests on one assumption: the pointer a proc-address lookup returns for an exported
 * function is that export's own address (what dlsym on the runtime's handle gives).
 * tests/gpu/procaddress_probe.c confirms it for CUDA's driver 580. A pointer into the middle of
 * the runtime, or one at a listed function's name but another address, means the assumption
 * failed for that function: said at debug level, as calls through it are not scheduled.
 */
void core_hand_out(void **pfn)
{
    if (!pfn || !*pfn)
        return;
    core_resolve();
    const struct core_shim *s = &core_shim;
    for (size_t i = 0; i < s->entries; i++) {
        if (s->real[i] == *pfn) {
            *pfn = s->wrappers[i];
            return;
        }
    }
    /* A runtime that takes its exports' addresses through its GOT hands out ours already. */
    for (size_t i = 0; i < s->entries; i++)
        if (s->wrappers[i] == *pfn)
            return;
    /* An export the shim does not intercept is expected: most of the API. */
    Dl_info info;
    if (!dladdr(*pfn, &info) || !info.dli_sname)
        return;
    if (entry_named(info.dli_sname) < s->entries || info.dli_saddr != *pfn)
        gp_log(GP_LOG_DEBUG,
               "a %s proc-address lookup handed out %p (near %s), which is no export gpuprio "
               "wraps: calls through it are not scheduled",
               s->platform->name, *pfn, info.dli_sname);
}
