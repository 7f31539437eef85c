/*
 * sim_device.c - device facts, versions, and hipGetProcAddress.
 *
 * hipGetProcAddress looks names up in this library's own dynamic symbol table (found through
 * dl_iterate_phdr), not through dlsym: the real runtime uses an internal table, and a preloaded
 * shim that overrides dlsym must not see the runtime's own lookups.
 */
#include "sim_internal.h"

#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#define SIM_HIP_VERSION 60300000

hipError_t hipInit(unsigned int flags)
{
    sim_init();
    return sim_ret(flags ? hipErrorInvalidValue : hipSuccess);
}

/* As clr: the current device stands for its context, so this is never NULL (device + 1 here). */
hipError_t hipCtxGetCurrent(hipCtx_t *ctx)
{
    sim_init();
    if (!ctx)
        return sim_ret(hipErrorInvalidValue);
    *ctx = (hipCtx_t)(uintptr_t)(sim_current_device() + 1);
    return sim_ret(hipSuccess);
}

/*
 * ROCm's hipDeviceReset waits for the current device's work, then destroys what the process
 * made on it: its created streams, its events, the host memory registered while it was current
 * (the null and per-thread streams go on). Here the dead handles and registrations stay known as
 * dead, so that a later use of one, which on a real GPU touches freed memory, is reported
 * (sim_stale_use: stderr and hipsimStaleUses) and fails.
 */
hipError_t hipDeviceReset(void)
{
    sim_init();
    int device = sim_current_device();
    sim_lock();
    struct sim_device *d = &sim.dev[device];
    sim_wait_device(d);
    sim_streams_reset(d);
    sim_events_reset(device);
    sim_memory_reset(device);
    sim_unlock();
    return sim_ret(hipSuccess);
}

hipError_t hipGetDeviceCount(int *count)
{
    sim_init();
    if (!count)
        return sim_ret(hipErrorInvalidValue);
    *count = sim.cfg.devices;
    return sim_ret(hipSuccess);
}

hipError_t hipDeviceGet(hipDevice_t *device, int ordinal)
{
    sim_init();
    if (!device)
        return sim_ret(hipErrorInvalidValue);
    if (ordinal < 0 || ordinal >= sim.cfg.devices)
        return sim_ret(hipErrorInvalidDevice);
    *device = ordinal;
    return sim_ret(hipSuccess);
}

/*
 * The identity gpuprio's board is keyed by. A real bus id names one physical device for every
 * process; here processes that share a simulated device (HIPSIM_SHARED) get the same id. A
 * process's private device has none (hipErrorNotSupported): no other process can see it, so
 * there is nothing to share, and no board file is left behind for it.
 */
hipError_t hipDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    sim_init();
    if (!pciBusId || len <= 0)
        return sim_ret(hipErrorInvalidValue);
    if (device < 0 || device >= sim.cfg.devices)
        return sim_ret(hipErrorInvalidDevice);
    if (!sim.cfg.shared_name[0])
        return sim_ret(hipErrorNotSupported);
    int n = snprintf(pciBusId, (size_t)len, "sim:%s:%02d", sim.cfg.shared_name, device);
    return sim_ret(n < len ? hipSuccess : hipErrorInvalidValue);
}

hipError_t hipRuntimeGetVersion(int *version)
{
    sim_init();
    if (!version)
        return sim_ret(hipErrorInvalidValue);
    *version = SIM_HIP_VERSION;
    return sim_ret(hipSuccess);
}

hipError_t hipDriverGetVersion(int *version)
{
    return hipRuntimeGetVersion(version);
}

hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device)
{
    sim_init();
    if (!name || len <= 0)
        return sim_ret(hipErrorInvalidValue);
    if (device < 0 || device >= sim.cfg.devices)
        return sim_ret(hipErrorInvalidDevice);
    snprintf(name, (size_t)len, "hipsim simulated device %d", device);
    return sim_ret(hipSuccess);
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *prop, int device)
{
    sim_init();
    if (!prop)
        return sim_ret(hipErrorInvalidValue);
    if (device < 0 || device >= sim.cfg.devices)
        return sim_ret(hipErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "hipsim simulated device %d", device);
    snprintf(prop->gcnArchName, sizeof prop->gcnArchName, "gfx000:hipsim");
    prop->totalGlobalMem = (size_t)64 << 30;
    prop->multiProcessorCount = sim.cfg.compute_slots;
    prop->maxThreadsPerBlock = 1024;
    prop->warpSize = 64;
    prop->major = 9;
    prop->minor = 4;
    prop->concurrentKernels = 1;
    prop->pciBusID = device + 1;
    return sim_ret(hipSuccess);
}

hipError_t hipDeviceGetAttribute(int *value, hipDeviceAttribute_t attr, int device)
{
    sim_init();
    if (!value)
        return sim_ret(hipErrorInvalidValue);
    if (device < 0 || device >= sim.cfg.devices)
        return sim_ret(hipErrorInvalidDevice);
    switch (attr) {
    case hipDeviceAttributeMultiprocessorCount:
        *value = sim.cfg.compute_slots;
        break;
    case hipDeviceAttributeWarpSize:
        *value = 64;
        break;
    case hipDeviceAttributeMaxThreadsPerBlock:
        *value = 1024;
        break;
    case hipDeviceAttributeCanUseStreamWaitValue:
    case hipDeviceAttributeConcurrentKernels:
        *value = 1;
        break;
    default:
        *value = 0;
    }
    return sim_ret(hipSuccess);
}

/* ---- hipGetProcAddress ---- */

struct self_symtab {
    const ElfW(Sym) *syms;
    const char *strs;
    size_t nsyms;
    ElfW(Addr) base;
};

/* The number of dynamic symbols, from the GNU hash table (the highest symbol any chain ends at). */
static size_t gnu_hash_nsyms(const uint32_t *h)
{
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(h + 4) + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return last + 1;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    struct self_symtab *st = data;
    ElfW(Addr) me = (ElfW(Addr))(uintptr_t)&find_self;
    const ElfW(Dyn) *dyn = NULL;
    bool mine = false;
    SIM_UNUSED(size);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        ElfW(Addr) lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz)
            mine = true;
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
    }
    if (!mine || !dyn)
        return 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        /* glibc relocates these entries of a loaded object to absolute addresses. */
        if (dyn->d_tag == DT_SYMTAB)
            st->syms = (const ElfW(Sym) *)dyn->d_un.d_ptr;
        else if (dyn->d_tag == DT_STRTAB)
            st->strs = (const char *)dyn->d_un.d_ptr;
        else if (dyn->d_tag == DT_GNU_HASH)
            st->nsyms = gnu_hash_nsyms((const uint32_t *)dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_HASH && !st->nsyms)
            st->nsyms = ((const uint32_t *)dyn->d_un.d_ptr)[1];
    }
    st->base = info->dlpi_addr;
    return 1;
}

static struct self_symtab self_symtab;
static pthread_once_t self_symtab_once = PTHREAD_ONCE_INIT;

static void self_symtab_init(void)
{
    dl_iterate_phdr(find_self, &self_symtab);
}

static void *self_lookup(const char *name)
{
    pthread_once(&self_symtab_once, self_symtab_init);
    const struct self_symtab *st = &self_symtab;
    for (size_t i = 1; st->syms && i < st->nsyms; i++) {
        const ElfW(Sym) *s = &st->syms[i];
        if (s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_FUNC &&
            strcmp(st->strs + s->st_name, name) == 0)
            return (void *)(st->base + s->st_value);
    }
    return NULL;
}

hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                             hipDriverProcAddressQueryResult *symbolStatus)
{
    sim_init();
    SIM_UNUSED(hipVersion);
    if (!symbol || !pfn)
        return sim_ret(hipErrorInvalidValue);
    void *f = NULL;
    if (flags & HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
        char spt[256];
        if (snprintf(spt, sizeof spt, "%s_spt", symbol) < (int)sizeof spt)
            f = self_lookup(spt);
    }
    if (!f)
        f = self_lookup(symbol);
    *pfn = f;
    if (symbolStatus)
        *symbolStatus = f ? HIP_GET_PROC_ADDRESS_SUCCESS : HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return sim_ret(f ? hipSuccess : hipErrorNotFound);
}
