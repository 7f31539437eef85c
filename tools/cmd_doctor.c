/*
 * cmd_doctor.c - gpuprio doctor: what the library would put in effect for this user on this
 * machine, and why, before anything runs: the runtime it would bind to (the shim's own search,
 * gp_bind.c), per device the level and its reason, the gate bound, the hardware priority range
 * and whether created streams get it, MPS (CUDA) and what GPUPRIO_CU_RESERVE reserves there;
 * the board directory and how Level 2's gates work there (on the board's own lines, or
 * mirrored where the runtimes cannot register its files); what runs on its boards now, read as
 * top reads them (never created): the lower queues whose longest recent command exceeds the gate
 * bound, which a higher priority waits for whole, and the processes' GEMM counts; the
 * administrator's file (gp_conf_file.c); every GPUPRIO_* setting and where it came from
 * (gp_options.def). Each problem comes with its fix, and the exit status says whether there was any
 * (0: everything asked for is in effect, 1: not), so that scripts and installers can check a
 * machine.
 *
 * It asks the runtimes what a process would find; it starts no work on a device (CUDA gives its
 * priority range only to a context: the device's primary context is retained for the question,
 * then released). On a machine without a GPU or a runtime it says so, which is no problem in
 * itself.
 */
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "board.h"
#include "gp_bind.h"
#include "gp_conf_file.h"
#include "gp_dl.h"
#include "gp_options.h"
#include "gpuprio.h"
#include "tool.h"
#ifdef GP_DOCTOR_WITH_HIP
#include "hip_compat.h"  /* the attributes' numbers, which HIP's versions renumber */
#include "hip_reserve.h" /* the most CUs a reservation handles */
#endif

static const char doctor_usage[] =
    "Usage: gpuprio doctor [--json]\n"
    "Say what gpuprio would put in effect for this user on this machine, and why: per device\n"
    "the runtime, the level, the gate bound, the hardware priorities, MPS and the reserved\n"
    "compute units; the board directory, and the lower queues on its boards that run commands\n"
    "longer than the gate bound, and the GEMMs left whole;\n"
    "the administrator's file; every GPUPRIO_* setting and where it came from. Each problem\n"
    "comes with its fix.\n"
    "\n"
    "  --json      one JSON object instead of text\n"
    "  -h, --help  show this text\n"
    "\n"
    "Exit status: 0 when everything asked for is in effect, 1 when a problem was found,\n"
    "2 on a bad option.\n";

/* ---- what was found, then printed as text or JSON ---- */

#define MAX_PROBLEMS 32
#define MAX_DEVICES 16

struct problem {
    char what[512], fix[512];
};

struct device_facts {
    int index;
    char name[128];
    int can_wait; /* 1, 0, -1 unknown */
    bool has_priorities;
    int least, greatest;
    const char *no_range; /* why has_priorities is false */
    bool cuda;            /* MPS is a question (NVIDIA's) */
    int mps_client;       /* CUDA: 1, 0, -1 unknown */
    int cc_major;         /* CUDA: compute capability major, 0 unknown */
    int level;
    char level_why[256];
    unsigned gate_us; /* 0: no gates */
    bool gate_mps_default;
    /* GPUPRIO_CU_RESERVE on this device, when it asks for a reservation */
    struct {
        bool asked;
        char setting[24]; /* the variable's value */
        const char *by;   /* "cu_mask" (HIP), "mps_share" (CUDA under MPS), NULL: neither */
        bool in_effect;
        unsigned reserved, of; /* compute units (cu_mask) or percent of the SMs (mps_share) */
        char what[320];
    } cu;
};

struct runtime_facts {
    const char *what, *env;
    bool bound;
    char path[PATH_MAX];
    const char *source;
    int version; /* -1 unknown */
    char why_none[256];
    int ndevices;
    struct device_facts dev[MAX_DEVICES];
};

struct board_facts {
    const char *dir, *from;
    bool exists;
    char fs[32];
    bool registrable;
    unsigned uid;
    unsigned mode;
    char exposure[400]; /* gp_board_dir_exposure: "" when safe */
};

struct conf_facts {
    const char *path;
    bool present, used, admitted, shared;
    bool has[GP_CONF_SETTINGS];
    int value[GP_CONF_SETTINGS];
};

static struct problem problems[MAX_PROBLEMS];
static int nproblems;

static void problem(const char *fix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(const char *fix, const char *fmt, ...)
{
    if (nproblems == MAX_PROBLEMS)
        return;
    struct problem *p = &problems[nproblems++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->what, sizeof p->what, fmt, ap);
    va_end(ap);
    snprintf(p->fix, sizeof p->fix, "%s", fix);
}

/* ---- the runtimes: the shim's own search, then what they say of their devices ---- */

/* The HALs' descriptors (src/hal/hip/hip_bind.c, src/hal/cuda/cuda_bind.c): what they search. */
static const char *const hip_sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                          "libamdhip64.so.5", "libamdhip64.so", NULL};
static const char *const cuda_sonames[] = {"libcuda.so.1", NULL};

static const char *source_name(enum gp_bind_source s)
{
    switch (s) {
    case GP_BIND_FROM_OVERRIDE:
        return "environment";
    case GP_BIND_FROM_MAPPED:
        return "loaded";
    case GP_BIND_FROM_NEXT:
        return "next";
    case GP_BIND_FROM_DLOPEN:
        return "soname";
    }
    return "?";
}

/* The runtime's own calls, looked up in the bound library; HIP's and CUDA's error type is an
 * int-sized enum whose success is 0 in both. */
typedef int (*count_fn)(int *);
typedef int (*version_fn)(int *);

static void *bind(struct runtime_facts *f, const char *stem, const char *probe,
                  const char *const *sonames)
{
    struct gp_runtime rt = {.what = f->what,
                            .env = f->env,
                            .stem = stem,
                            .probe = probe,
                            .sonames = sonames,
                            .result = -EAGAIN};
    gp_bind_search(&rt);
    f->version = -1;
    if (rt.result != 0) {
        snprintf(f->why_none, sizeof f->why_none, "%s",
                 rt.result == -ENOENT   ? "none found where the library looks for it"
                 : rt.result == -ELOOP  ? "the library found is not the runtime"
                 : rt.result == -EEXIST ? "two copies are loaded"
                                        : "it could not be bound");
        const char *named = getenv(f->env);
        if (named && *named) {
            char fix[256];
            snprintf(fix, sizeof fix, "set %s to the path of the application's %s.so*, or unset it",
                     f->env, stem);
            problem(fix, "%s=%s: %s", f->env, named, f->why_none);
        }
        return NULL;
    }
    f->bound = true;
    snprintf(f->path, sizeof f->path, "%s", rt.binding.path);
    f->source = source_name(rt.binding.source);
    return rt.binding.handle;
}

/* Level 2 as the library decides it (sched_board.c, prepare_gates), less what only a running
 * process knows (a refusal to register the gates). A board directory whose files the runtimes
 * cannot register makes it mirrored gates, still Level 2. The gate bound: GPUPRIO_GATE_US, else
 * 100 us, 300 in an MPS client. */
static void decide_level(struct device_facts *d, const char *runtime,
                         const struct board_facts *board)
{
    uint64_t asked = gp_opt_uint(GP_OPT_LEVEL);
    uint64_t gate_us = gp_opt_uint(GP_OPT_GATE_US);
    d->level = 1;
    if (asked < 2) {
        snprintf(d->level_why, sizeof d->level_why, "GPUPRIO_LEVEL=1 asks for it");
    } else if (gp_opt_choice(GP_OPT_BOARD) != 0) {
        snprintf(d->level_why, sizeof d->level_why,
                 "GPUPRIO_BOARD=off: no board, so no gates on the device");
    } else if (d->mps_client == 1 && d->cc_major > 0 && d->cc_major < 7) {
        snprintf(d->level_why, sizeof d->level_why,
                 "an MPS client on a GPU before Volta: compute capability %d", d->cc_major);
        problem("run without MPS, or on a GPU from Volta on; GPUPRIO_LEVEL=1 says Level 1 is "
                "what you want",
                "%s device %d: Level 1 only: an MPS client on a GPU before Volta shares hardware "
                "work queues with the other clients, and a closed gate could hold theirs",
                runtime, d->index);
    } else if (d->can_wait == 0) {
        snprintf(d->level_why, sizeof d->level_why, "the device cannot wait on host memory");
        problem("nothing in gpuprio's settings: a newer driver where the device supports it; "
                "GPUPRIO_LEVEL=1 says Level 1 is what you want",
                "%s device %d: Level 1 only: it cannot wait on a value in host memory, so a "
                "higher priority waits for the work already queued on it",
                runtime, d->index);
    } else {
        d->level = 2;
        snprintf(d->level_why, sizeof d->level_why, "%s%s",
                 d->can_wait < 0 ? "asked for; whether the device can wait on host memory is "
                                   "unknown"
                                 : "asked for, and the device can wait on host memory",
                 board->registrable ? ""
                                    : "; its gates mirrored: the board directory's files "
                                      "cannot be registered");
        d->gate_mps_default = !gate_us && d->mps_client == 1;
        d->gate_us = gate_us ? (unsigned)gate_us : d->gate_mps_default ? 300 : 100;
    }
}

/* ---- GPUPRIO_CU_RESERVE (docs/configuration.md, "Hardware levers"; docs/mps.md) ---- */

static const char *amount_text(char *buf, size_t size, const struct gp_amount *a)
{
    snprintf(buf, size, "%u%s", (unsigned)a->value, a->percent ? "%" : "");
    return buf;
}

/* Whether the variable asks for a reservation; *a and d->cu.setting if so. */
static bool cu_asked(struct device_facts *d, struct gp_amount *a)
{
    if (!gp_opt_amount(GP_OPT_CU_RESERVE, a) || a->value == 0)
        return false;
    d->cu.asked = true;
    amount_text(d->cu.setting, sizeof d->cu.setting, a);
    return true;
}

/* A reservation whose fate on this device is not known: no problem, said as it is. */
static void cu_unknown(struct device_facts *d, const char *why)
{
    struct gp_amount a;
    if (cu_asked(d, &a))
        snprintf(d->cu.what, sizeof d->cu.what, "GPUPRIO_CU_RESERVE=%s: unknown: %s", d->cu.setting,
                 why);
}

/* A reservation that cannot take effect: the device's line, and a problem with its fix. */
static void cu_refused(struct device_facts *d, const char *runtime, const char *fix,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void cu_refused(struct device_facts *d, const char *runtime, const char *fix,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->cu.what, sizeof d->cu.what, fmt, ap);
    va_end(ap);
    problem(fix, "%s device %d: %s", runtime, d->index, d->cu.what);
}

#ifdef GP_DOCTOR_WITH_HIP
/* HIP: the library confines the streams below the process's highest priority to the device's
 * CUs less the reserved ones, with a CU mask (hip_reserve.c, whose refusals are these). The
 * device is the current one. */
static void decide_cu_hip(struct device_facts *d, void *h, int (*attribute)(int *, int, int))
{
    struct gp_amount a;
    if (!cu_asked(d, &a))
        return;
    const char *text = d->cu.setting;
    d->cu.by = "cu_mask";
    int (*get_mask)(void *, uint32_t, uint32_t *) =
        (int (*)(void *, uint32_t, uint32_t *))gp_dlsym(h, "hipExtStreamGetCUMask");
    if (!gp_dlsym(h, "hipExtStreamCreateWithCUMask")) {
        cu_refused(d, "HIP", "a HIP runtime with CU masks, or unset GPUPRIO_CU_RESERVE",
                   "GPUPRIO_CU_RESERVE=%s: the HIP runtime has no hipExtStreamCreateWithCUMask, "
                   "so streams cannot be confined to CUs; no compute units are reserved",
                   text);
        return;
    }
    int cus = 0;
    uint32_t mask[HIPHAL_RESERVE_WORDS] = {0};
    uint32_t words = 0;
    bool ok = attribute && get_mask &&
              attribute(&cus, hipDeviceAttributeMultiprocessorCount, d->index) == 0 && cus > 0 &&
              cus <= HIPHAL_RESERVE_MAX_CUS;
    if (ok) {
        words = ((uint32_t)cus + 31) / 32;
        ok = get_mask(NULL, words, mask) == 0;
    }
    if (!ok) {
        cu_refused(
            d, "HIP",
            "unset GPUPRIO_CU_RESERVE: the runtime does not say which compute units there are",
            "GPUPRIO_CU_RESERVE=%s: cannot read the device's compute units and CU mask "
            "(devices of at most %d CUs are supported); no compute units are reserved",
            text, HIPHAL_RESERVE_MAX_CUS);
        return;
    }
    unsigned enabled = 0;
    for (uint32_t i = 0; i < words; i++)
        enabled += (unsigned)__builtin_popcount(mask[i]);
    unsigned reserve = gp_amount_of(&a, enabled);
    d->cu.of = enabled;
    if (reserve >= enabled) {
        char fix[160];
        snprintf(fix, sizeof fix,
                 "set GPUPRIO_CU_RESERVE to a count below %u or a percentage that leaves at "
                 "least one compute unit, or unset it",
                 enabled);
        cu_refused(d, "HIP", fix,
                   "GPUPRIO_CU_RESERVE=%s: the device has %u compute units for a process, and "
                   "this would leave the lower priorities none; no compute units are reserved",
                   text, enabled);
        return;
    }
    d->cu.in_effect = true;
    d->cu.reserved = reserve;
    snprintf(d->cu.what, sizeof d->cu.what,
             "%u of the %u compute units kept for a process's highest priority: streams "
             "below it are created confined to the other %u (GPUPRIO_CU_RESERVE=%s)",
             reserve, enabled, enabled - reserve, text);
}
#endif

/* CUDA: only an MPS client's share of the SMs can be limited, as a percentage set before the
 * driver starts, for a process at normal priority or below (cuda_mps.c); without MPS the driver
 * has no such share. */
static void decide_cu_cuda(struct device_facts *d)
{
    struct gp_amount a;
    if (d->mps_client < 0) {
        cu_unknown(d, "it limits MPS clients only, and whether a process would be one is unknown");
        return;
    }
    if (!cu_asked(d, &a))
        return;
    const char *text = d->cu.setting;
    if (d->mps_client == 0) {
        cu_refused(d, "CUDA",
                   "run the processes as MPS clients (docs/mps.md), or unset GPUPRIO_CU_RESERVE",
                   "GPUPRIO_CU_RESERVE=%s has no effect: a process would not be an MPS client, "
                   "and without MPS the driver has no share of the SMs to limit",
                   text);
        return;
    }
    d->cu.by = "mps_share";
    if (!a.percent) {
        char fix[96];
        snprintf(fix, sizeof fix, "give it as a percentage (GPUPRIO_CU_RESERVE=%u%%, say)",
                 a.value < 100 ? a.value : 25);
        cu_refused(d, "CUDA", fix,
                   "GPUPRIO_CU_RESERVE=%s is a count of compute units, but MPS takes a client's "
                   "share of SMs as a percentage before the driver starts; nothing is reserved",
                   text);
        return;
    }
    if (a.value >= 100) {
        cu_refused(d, "CUDA", "set GPUPRIO_CU_RESERVE to a percentage below 100%",
                   "GPUPRIO_CU_RESERVE=100%% would leave a client no SM; nothing is reserved");
        return;
    }
    int priority = GPUPRIO_PRIORITY_NORMAL;
    bool above = gp_opt_priority(GP_OPT_PRIORITY, &priority) && priority > GPUPRIO_PRIORITY_NORMAL;
    d->cu.in_effect = true;
    d->cu.reserved = a.value;
    d->cu.of = 100;
    snprintf(d->cu.what, sizeof d->cu.what,
             "%u%% of the SMs kept for priorities above normal: a client at normal priority or "
             "below is limited to the other %u%% (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, set before "
             "the driver starts)%s",
             a.value, 100 - a.value,
             above ? "; GPUPRIO_PRIORITY here is above normal: such a process uses every SM" : "");
}

/* The runtime's version and its devices (up to MAX_DEVICES), each with its index and name, its
 * ability to wait on host memory not yet known; false, with why_none said, where it sees none
 * (or is not ready: CUDA's driver that cuInit refused). */
static bool take_devices(struct runtime_facts *f, version_fn version, bool ready, count_fn count,
                         int (*name)(char *, int, int), const char *runtime)
{
    int v = 0, n = 0;
    if (version && version(&v) == 0)
        f->version = v;
    if (!ready || !count || count(&n) != 0 || n <= 0) {
        snprintf(f->why_none, sizeof f->why_none, "the %s sees no device", runtime);
        return false;
    }
    f->ndevices = n < MAX_DEVICES ? n : MAX_DEVICES;
    for (int i = 0; i < f->ndevices; i++) {
        struct device_facts *d = &f->dev[i];
        d->index = i;
        d->can_wait = -1;
        if (name && name(d->name, sizeof d->name, i) != 0)
            d->name[0] = '\0';
    }
    return true;
}

static void ask_hip(struct runtime_facts *f, const struct board_facts *board)
{
    void *h = bind(f, "libamdhip64", "hipLaunchKernel", hip_sonames);
    if (!h)
        return;
    version_fn version = (version_fn)gp_dlsym(h, "hipRuntimeGetVersion");
    count_fn count = (count_fn)gp_dlsym(h, "hipGetDeviceCount");
    int (*set_device)(int) = (int (*)(int))gp_dlsym(h, "hipSetDevice");
    int (*name)(char *, int, int) = (int (*)(char *, int, int))gp_dlsym(h, "hipDeviceGetName");
    int (*attribute)(int *, int, int) =
        (int (*)(int *, int, int))gp_dlsym(h, "hipDeviceGetAttribute");
    int (*range)(int *, int *) =
        (int (*)(int *, int *))gp_dlsym(h, "hipDeviceGetStreamPriorityRange");
    if (!take_devices(f, version, true, count, name, "runtime"))
        return;
    for (int i = 0; i < f->ndevices; i++) {
        struct device_facts *d = &f->dev[i];
#ifdef GP_DOCTOR_WITH_HIP
        int can = 0;
        if (attribute && attribute(&can, hipDeviceAttributeCanUseStreamWaitValue, i) == 0)
            d->can_wait = can != 0;
#endif
        bool current = set_device && set_device(i) == 0;
        if (current && range && range(&d->least, &d->greatest) == 0)
            d->has_priorities = true;
        else
            d->no_range = "the runtime did not say";
        decide_level(d, "HIP", board);
#ifdef GP_DOCTOR_WITH_HIP
        if (current)
            decide_cu_hip(d, h, attribute);
        else
            cu_unknown(d, "the device could not be selected");
#else
        (void)attribute;
        cu_unknown(d, "this gpuprio was built without HIP's headers");
#endif
    }
}

/* CUDA's driver API enums are fixed by its ABI (cuda.h, which this build may not have): 122 is
 * CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, the one cuda_gate.c asks; 92 is the
 * deprecated v1 attribute, which a CUDA 13 driver answers 0 (an H100 was said to be Level 1).
 * 133 is CU_DEVICE_ATTRIBUTE_MPS_ENABLED (older headers do not name it), 75 the compute
 * capability's major, and 0 CU_EXEC_AFFINITY_TYPE_SM_COUNT: what cuda_mps.c asks. */
#define CU_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS 122
#define CU_ATTRIBUTE_MPS_ENABLED 133
#define CU_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_EXEC_AFFINITY_SM_COUNT 0

/* The driver's calls past cuInit that the doctor makes, looked up in the bound library (the _v2
 * names are those the driver's headers map the plain ones to). */
struct cuda_calls {
    int (*attribute)(int *, int, int);
    int (*affinity_support)(int *, int, int);
    int (*device_get)(int *, int);
    int (*retain)(void **, int);
    int (*release)(int);
    int (*push)(void *);
    int (*pop)(void **);
    int (*range)(int *, int *);
};

/* Whether a process would be an MPS client on device d, as cuda_mps.c decides it: the MPS
 * attribute, or where the driver lacks it, whether SM-count execution affinity is supported
 * (only Volta and later MPS clients have it). */
static void ask_mps(struct device_facts *d, const struct cuda_calls *cu)
{
    int v = 0;
    d->mps_client = -1;
    if (cu->attribute && cu->attribute(&v, CU_ATTRIBUTE_MPS_ENABLED, d->index) == 0)
        d->mps_client = v != 0;
    else if (cu->affinity_support &&
             cu->affinity_support(&v, CU_EXEC_AFFINITY_SM_COUNT, d->index) == 0)
        d->mps_client = v ? 1 : -1;
    if (cu->attribute && cu->attribute(&v, CU_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->index) == 0)
        d->cc_major = v;
}

/* CUDA gives the stream priority range of the current context only: the device's primary context
 * is retained and made current for the question, then popped and released (a standalone process:
 * nobody else's context is touched). */
static void ask_cuda_range(struct device_facts *d, const struct cuda_calls *cu)
{
    int dev = 0;
    void *ctx = NULL, *popped = NULL;
    d->no_range = "the driver did not say";
    if (!cu->device_get || !cu->retain || !cu->release || !cu->push || !cu->pop || !cu->range)
        return;
    if (cu->device_get(&dev, d->index) != 0 || cu->retain(&ctx, dev) != 0) {
        d->no_range = "no context could be made on the device";
        return;
    }
    if (cu->push(ctx) == 0) {
        d->has_priorities = cu->range(&d->least, &d->greatest) == 0;
        cu->pop(&popped);
    }
    cu->release(dev);
}

static void ask_cuda(struct runtime_facts *f, const struct board_facts *board)
{
    void *h = bind(f, "libcuda", "cuLaunchKernel", cuda_sonames);
    if (!h)
        return;
    int (*init)(unsigned) = (int (*)(unsigned))gp_dlsym(h, "cuInit");
    version_fn version = (version_fn)gp_dlsym(h, "cuDriverGetVersion");
    count_fn count = (count_fn)gp_dlsym(h, "cuDeviceGetCount");
    int (*name)(char *, int, int) = (int (*)(char *, int, int))gp_dlsym(h, "cuDeviceGetName");
    struct cuda_calls cu;
    *(void **)&cu.attribute = gp_dlsym(h, "cuDeviceGetAttribute");
    *(void **)&cu.affinity_support = gp_dlsym(h, "cuDeviceGetExecAffinitySupport");
    *(void **)&cu.device_get = gp_dlsym(h, "cuDeviceGet");
    *(void **)&cu.retain = gp_dlsym(h, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.release = gp_dlsym(h, "cuDevicePrimaryCtxRelease_v2");
    *(void **)&cu.push = gp_dlsym(h, "cuCtxPushCurrent_v2");
    *(void **)&cu.pop = gp_dlsym(h, "cuCtxPopCurrent_v2");
    *(void **)&cu.range = gp_dlsym(h, "cuCtxGetStreamPriorityRange");
    bool initialized = init && init(0) == 0;
    if (!take_devices(f, version, initialized, count, name, "driver"))
        return;
    for (int i = 0; i < f->ndevices; i++) {
        struct device_facts *d = &f->dev[i];
        d->cuda = true;
        int can = 0;
        if (cu.attribute && cu.attribute(&can, CU_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, i) == 0)
            d->can_wait = can != 0;
        ask_mps(d, &cu);
        ask_cuda_range(d, &cu);
        decide_level(d, "CUDA", board);
        decide_cu_cuda(d);
    }
}

/* ---- the board directory and the administrator's file ---- */

static void look_at_board(struct board_facts *b)
{
    b->dir = gp_board_dir();
    b->from = gp_board_shared()                                             ? "file"
              : getenv("GPUPRIO_BOARD_DIR") && *getenv("GPUPRIO_BOARD_DIR") ? "environment"
                                                                            : "default";
    struct stat st;
    b->exists = stat(b->dir, &st) == 0 && S_ISDIR(st.st_mode);
    b->registrable = false;
    if (!b->exists) {
        snprintf(b->fs, sizeof b->fs, "none");
        problem("create it (mode 0700 for one user), or set GPUPRIO_BOARD_DIR to a directory "
                "on tmpfs such as /dev/shm",
                "the board directory %s does not exist: processes schedule alone, each on its "
                "own",
                b->dir);
        return;
    }
    b->uid = st.st_uid;
    b->mode = st.st_mode & 07777;
    /* As the library warns (sched_board.c): the user's choice, so a problem, not a refusal. */
    if (gp_board_dir_exposure(b->dir, b->exposure, sizeof b->exposure) == 0 && b->exposure[0])
        problem("use an absolute path to a directory owned by this user or root, not writable by "
                "group or others unless sticky (chmod +t), such as /dev/shm or one of mode 0700",
                "the board directory %s is unsafe: %s, and this user's processes would then stop "
                "scheduling together",
                b->dir, b->exposure);
    /* Not a problem: off tmpfs and hugetlbfs Level 2 mirrors its gates, which costs a
     * cross-process decision the owner's wake-up (said in the board line). */
    if (gp_board_dir_fs(b->dir, b->fs, sizeof b->fs, &b->registrable) != 0)
        snprintf(b->fs, sizeof b->fs, "unknown");
}

static void look_at_conf(struct conf_facts *c)
{
    c->path = gp_opt_str(GP_OPT_CONFIG);
    struct stat st;
    c->present = c->path && stat(c->path, &st) == 0;
    const struct gp_conf *conf = gp_conf_get();
    c->used = conf != NULL;
    if (c->present && !c->used)
        problem("correct the file as the warning above says (docs/configuration.md, \"Users "
                "sharing a GPU\"); until then each user's processes schedule among themselves",
                "the administrator's file %s is refused", c->path);
    if (!conf)
        return;
    uid_t uid = geteuid();
    c->admitted = gp_conf_admits(conf, uid);
    c->shared = conf->board_dir[0] != '\0';
    unsigned line; /* gp_conf_lookup writes it */
    for (int i = 0; i < GP_CONF_SETTINGS; i++)
        c->has[i] = gp_conf_lookup(conf, (enum gp_conf_setting)i, uid, &c->value[i], &line) == 0;
    if (c->shared && !c->admitted)
        problem("ask the administrator to add this user to the file's admit line",
                "the administrator's file names a shared board directory and does not admit "
                "this user: its processes schedule only among themselves");
}

/* ---- what runs now: the boards, read as top reads them (never created) ---- */

/* The rows of each list the text gives; JSON gives them all. */
#define BOARD_TEXT_ROWS 16

struct run_facts {
    bool read;        /* the board directories could be read */
    unsigned gate_us; /* what a lower queue's longest command is compared with */
    struct gp_sample s;
    const struct gp_record_row **owners; /* s's records, gp_sample_owners */
    /* Per row of s: whether another process has a queue of higher priority on its device (NULL:
     * out of memory, none taken to). */
    bool *higher_elsewhere;
};

static bool same_process(const struct gp_queue_row *a, const struct gp_queue_row *b)
{
    return a->id.pid == b->id.pid && a->id.incarnation == b->id.incarnation;
}

/* f->higher_elsewhere, in one pass over each device's rows (sorted by priority, highest first):
 * the device's first row, and the first of another process than that one, are the highest
 * priorities a row of another process can be below. */
static void find_higher_elsewhere(struct run_facts *f)
{
    const struct gp_sample *s = &f->s;
    f->higher_elsewhere = s->n ? calloc(s->n, sizeof *f->higher_elsewhere) : NULL;
    if (!f->higher_elsewhere)
        return;
    for (size_t from = 0, to; from < s->n; from = to) {
        const struct gp_queue_row *top = &s->rows[from], *second = NULL;
        for (to = from; to < s->n && strcmp(s->rows[to].id.key, top->id.key) == 0; to++)
            if (!second && !same_process(&s->rows[to], top))
                second = &s->rows[to];
        for (size_t i = from; i < to; i++) {
            const struct gp_queue_row *r = &s->rows[i],
                                      *above = same_process(r, top) ? second : top;
            f->higher_elsewhere[i] = above && above->priority > r->priority;
        }
    }
}

/* The gate bound: the greatest of the devices found at Level 2, else the settings'
 * (GPUPRIO_GATE_US, unset 100 us). */
static unsigned gate_bound_us(const struct runtime_facts *rts, int nrts)
{
    unsigned most = 0;
    for (int r = 0; r < nrts; r++)
        for (int i = 0; i < rts[r].ndevices; i++)
            most = rts[r].dev[i].gate_us > most ? rts[r].dev[i].gate_us : most;
    uint64_t asked = gp_opt_uint(GP_OPT_GATE_US);
    return most ? most : asked ? (unsigned)asked : 100;
}

static void look_at_boards(struct run_facts *f, const struct runtime_facts *rts, int nrts)
{
    f->gate_us = gate_bound_us(rts, nrts);
    struct gp_tool_view view;
    gp_tool_view_init(&view, false);
    f->read = gp_sample_take(&f->s, &view) == 0;
    gp_tool_view_free(&view);
    f->owners = gp_sample_owners(&f->s);
    find_higher_elsewhere(f);
}

/* A lower queue whose longest recent command exceeds the gate bound: a higher priority waits for
 * such a command whole, however the gates are set. */
static bool runs_long(const struct run_facts *f, const struct gp_queue_row *r)
{
    return gp_row_lower(r) && r->longest_us > f->gate_us;
}

/* From a command this long, a higher priority waits less as an MPS client (docs/mps.md, "With
 * MPS or without": for a kernel it waits for SMs, not for the kernel's end; MPS costs short
 * requests more than it saves them next to short kernels). */
#define MPS_SHORTER_WAIT_US 1000

/* Row i of runs_long, whose command is long enough for MPS to shorten the wait for it, in a
 * process known not to be an MPS client (a CUDA process: HIP's records say nothing of MPS), below
 * another process's priority: a higher priority of its own process shares its context, where it
 * already waits for SMs, MPS or not. */
static bool waits_less_under_mps(const struct run_facts *f, size_t i)
{
    const struct gp_queue_row *r = &f->s.rows[i];
    const struct gp_record_row *p = runs_long(f, r) && r->longest_us >= MPS_SHORTER_WAIT_US &&
                                            f->higher_elsewhere && f->higher_elsewhere[i]
                                        ? gp_sample_record(&f->s, f->owners, r)
                                        : NULL;
    return p && p->mps == GP_MPS_NOT_CLIENT;
}

static bool counts_gemms(const struct gp_record_row *p)
{
    char text[8];
    return gp_gemm_text(text, sizeof text, "", p->gemm_sliced, p->gemm_slices, p->gemm_whole);
}

/* ---- the settings ---- */

static const char *setting_source(enum gp_opt id, const char **value)
{
    const struct gp_opt_desc *d = gp_opt_desc(id);
    const char *env = getenv(d->name);
    if (env && *env) {
        *value = env;
        if (gp_opt_parse(id, env, NULL) != 0) {
            char accepted[256];
            gp_opt_accepted(id, accepted, sizeof accepted);
            char fix[512];
            snprintf(fix, sizeof fix, "set %s to %s, or unset it", d->name, accepted);
            problem(fix, "%s='%s' is not accepted: the default is used instead", d->name, env);
            return "environment (refused)";
        }
        return "environment";
    }
    if (id == GP_OPT_BOARD_DIR && gp_board_shared()) {
        *value = gp_board_dir();
        return "file";
    }
    *value = d->def;
    return "default";
}

/* ---- printing ---- */

/* Whether the library gives created streams the device's priorities (creation.c,
 * core_hw_priority: GPUPRIO_HW_PRIORITY's first word is "on"), where the device has any. */
static bool hw_given(const struct device_facts *d)
{
    return d->has_priorities && d->least != d->greatest && gp_opt_choice(GP_OPT_HW_PRIORITY) == 0;
}

static const char *const conf_keys[GP_CONF_SETTINGS] = {"cap", "share", "weight"};

/* ---- printing: JSON ---- */

static void json_str(const char *s)
{
    if (!s) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            printf("\\u%04x", *p); /* paths and names: bytes above ASCII as Latin-1, valid JSON */
        else
            putchar(*p);
    }
    putchar('"');
}

static const char *json_bool(bool b)
{
    return b ? "true" : "false";
}

/* 1, 0, -1 unknown */
static const char *json_tristate(int v)
{
    return v < 0 ? "null" : json_bool(v);
}

/* The device's "cu_reserve": null unless GPUPRIO_CU_RESERVE asks for a reservation. */
static void json_cu_reserve(const struct device_facts *d)
{
    printf(", \"cu_reserve\": ");
    if (!d->cu.asked) {
        printf("null");
        return;
    }
    printf("{\"setting\": ");
    json_str(d->cu.setting);
    printf(", \"by\": ");
    json_str(d->cu.by);
    printf(", \"in_effect\": %s", json_bool(d->cu.in_effect));
    if (d->cu.in_effect)
        printf(", \"reserved\": %u, \"of\": %u, \"unit\": \"%s\"", d->cu.reserved, d->cu.of,
               strcmp(d->cu.by, "cu_mask") == 0 ? "compute units" : "percent of SMs");
    else
        printf(", \"reserved\": null, \"of\": null, \"unit\": null");
    printf(", \"what\": ");
    json_str(d->cu.what);
    putchar('}');
}

/* One device's object, after a comma unless it is the first. */
static void json_device(const struct device_facts *d, bool first)
{
    printf("%s{\"index\": %d, \"name\": ", first ? "" : ", ", d->index);
    json_str(d->name);
    printf(", \"can_wait_on_host_memory\": %s", json_tristate(d->can_wait));
    if (d->has_priorities)
        printf(", \"hardware_priorities\": {\"least\": %d, \"greatest\": %d, "
               "\"given_to_streams\": %s}",
               d->least, d->greatest, json_bool(hw_given(d)));
    else
        printf(", \"hardware_priorities\": null");
    if (d->cuda) {
        printf(", \"mps\": {\"client\": %s, \"compute_capability_major\": ",
               json_tristate(d->mps_client));
        if (d->cc_major > 0)
            printf("%d}", d->cc_major);
        else
            printf("null}");
    } else {
        printf(", \"mps\": null");
    }
    printf(", \"level\": %d, \"level_why\": ", d->level);
    json_str(d->level_why);
    if (d->gate_us)
        printf(", \"gate_us\": %u", d->gate_us);
    else
        printf(", \"gate_us\": null");
    json_cu_reserve(d);
    putchar('}');
}

/* One runtime's object with its devices, after a comma unless it is the first. */
static void json_runtime(const struct runtime_facts *f, bool first)
{
    printf("%s{\"runtime\": ", first ? "" : ", ");
    json_str(f->what);
    printf(", \"library\": ");
    json_str(f->bound ? f->path : NULL);
    printf(", \"found_by\": ");
    json_str(f->bound ? f->source : NULL);
    if (f->version >= 0)
        printf(", \"version\": %d", f->version);
    else
        printf(", \"version\": null");
    printf(", \"why_none\": ");
    json_str(f->why_none[0] ? f->why_none : NULL);
    printf(", \"devices\": [");
    for (int i = 0; i < f->ndevices; i++)
        json_device(&f->dev[i], i == 0);
    printf("]}");
}

static void json_board(const struct board_facts *b)
{
    printf("\"board\": {\"dir\": ");
    json_str(b->dir);
    printf(", \"from\": ");
    json_str(b->from);
    printf(", \"exists\": %s, \"filesystem\": ", json_bool(b->exists));
    json_str(b->fs);
    printf(", \"gates_can_live_there\": %s, \"gates\": %s", json_bool(b->registrable),
           !b->exists       ? "null"
           : b->registrable ? "\"direct\""
                            : "\"mirrored\"");
    if (b->exists)
        printf(", \"owner_uid\": %u, \"mode\": \"%04o\"", b->uid, b->mode);
    else
        printf(", \"owner_uid\": null, \"mode\": null");
    printf(", \"unsafe\": ");
    json_str(b->exposure[0] ? b->exposure : NULL);
    putchar('}');
}

static void json_boards(const struct run_facts *f)
{
    printf("\"boards\": {\"read\": %s, \"boards\": %u, \"gate_bound_us\": %u, \"long_commands\": [",
           json_bool(f->read), f->s.boards, f->gate_us);
    for (size_t i = 0, n = 0; i < f->s.n; i++) {
        const struct gp_queue_row *r = &f->s.rows[i];
        if (!runs_long(f, r))
            continue;
        printf("%s{\"device\": ", n++ ? ", " : "");
        json_str(r->id.key);
        printf(", \"device_index\": %d, \"pid\": %u, \"command\": ", (int)r->id.device,
               (unsigned)r->id.pid);
        json_str(r->id.comm);
        printf(", \"stream\": \"0x%llx\", \"priority\": %d, \"longest_command_ns\": %llu, "
               "\"waits_less_under_mps\": %s}",
               (unsigned long long)r->stream, (int)r->priority,
               (unsigned long long)r->longest_us * 1000, json_bool(waits_less_under_mps(f, i)));
    }
    printf("], \"gemm\": [");
    for (size_t i = 0, n = 0; i < f->s.nrec; i++) {
        const struct gp_record_row *p = &f->s.records[i];
        if (!counts_gemms(p))
            continue;
        printf("%s{\"device\": ", n++ ? ", " : "");
        json_str(p->id.key);
        printf(", \"device_index\": %d, \"pid\": %u, \"command\": ", (int)p->id.device,
               (unsigned)p->id.pid);
        json_str(p->id.comm);
        printf(", \"sliced\": %llu, \"slices\": %llu, \"whole\": {",
               (unsigned long long)p->gemm_sliced, (unsigned long long)p->gemm_slices);
        for (int k = 0; k < GP_RECORD_GEMM_WHOLE_COUNT; k++)
            printf("%s\"%s\": %llu", k ? ", " : "", gp_gemm_whole_labels[k],
                   (unsigned long long)p->gemm_whole[k]);
        printf("}}");
    }
    printf("]}");
}

static void json_config(const struct conf_facts *c)
{
    printf("\"config\": {\"path\": ");
    json_str(c->path);
    printf(", \"present\": %s, \"used\": %s, \"admitted\": %s", json_bool(c->present),
           json_bool(c->used), c->used ? json_bool(c->admitted) : "null");
    for (int i = 0; i < GP_CONF_SETTINGS; i++)
        if (c->has[i])
            printf(", \"%s\": %d", conf_keys[i], c->value[i]);
        else
            printf(", \"%s\": null", conf_keys[i]);
    putchar('}');
}

/* Before the problems: a refused setting adds one (setting_source). */
static void json_settings(void)
{
    printf("\"settings\": [");
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        const char *value = NULL;
        const char *from = setting_source((enum gp_opt)i, &value);
        printf("%s{\"name\": ", i ? ", " : "");
        json_str(gp_opt_desc((enum gp_opt)i)->name);
        printf(", \"value\": ");
        json_str(value);
        printf(", \"from\": ");
        json_str(from);
        putchar('}');
    }
    putchar(']');
}

static void json_problems(void)
{
    printf("\"problems\": [");
    for (int i = 0; i < nproblems; i++) {
        printf("%s{\"problem\": ", i ? ", " : "");
        json_str(problems[i].what);
        printf(", \"fix\": ");
        json_str(problems[i].fix);
        putchar('}');
    }
    putchar(']');
}

static void print_json(const struct runtime_facts *rts, int nrts, const struct board_facts *b,
                       const struct run_facts *f, const struct conf_facts *c)
{
    printf("{\"runtimes\": [");
    for (int r = 0; r < nrts; r++)
        json_runtime(&rts[r], r == 0);
    printf("], ");
    json_board(b);
    printf(", ");
    json_boards(f);
    printf(", ");
    json_config(c);
    printf(", ");
    json_settings();
    printf(", ");
    json_problems();
    printf("}\n");
}

/* ---- printing: text ---- */

static void text_priorities(const struct device_facts *d)
{
    if (!d->has_priorities)
        printf("    hardware stream priorities: unknown (%s)\n", d->no_range);
    else if (d->least == d->greatest)
        printf("    hardware stream priorities: none (the device's range is %d to %d): "
               "priorities act by admission and gates only\n",
               d->least, d->greatest);
    else
        printf("    hardware stream priorities: %d (least) to %d (greatest)%s\n", d->least,
               d->greatest,
               hw_given(d) ? ", given to created streams of a priority other than normal"
                           : ", not used (GPUPRIO_HW_PRIORITY=off)");
}

static void text_mps(const struct device_facts *d)
{
    if (!d->cuda)
        printf("    MPS: not applicable (NVIDIA's Multi-Process Service)\n");
    else if (d->mps_client == 1)
        printf("    MPS: a process would be a client: stream priorities compare across "
               "processes%s\n",
               d->cc_major > 0 && d->cc_major < 7
                   ? "; before Volta its clients share hardware work queues"
                   : "");
    else if (d->mps_client == 0)
        printf("    MPS: not a client: stream priorities order a process's own streams "
               "only (the device time-slices processes)\n");
    else
        printf("    MPS: unknown (the driver says neither the MPS attribute nor "
               "SM-count execution affinity)\n");
}

/* A device's lines under its runtime's. */
static void text_device(const struct device_facts *d)
{
    printf("  device %d%s%s: Level %d (%s)", d->index, d->name[0] ? " " : "", d->name, d->level,
           d->level_why);
    if (d->gate_us)
        printf(", gate bound %u us%s", d->gate_us,
               d->gate_mps_default ? " (an MPS client's default)"
               : d->cuda && d->mps_client < 0 && !gp_opt_uint(GP_OPT_GATE_US)
                   ? " (300 in an MPS client)"
                   : "");
    putchar('\n');
    text_priorities(d);
    text_mps(d);
    if (d->cu.asked)
        printf("    CU reservation: %s\n", d->cu.what);
    else
        printf("    CU reservation: none (GPUPRIO_CU_RESERVE unset or 0)\n");
}

/* Returns how many devices it printed. */
static int text_runtime(const struct runtime_facts *f)
{
    if (!f->bound) {
        printf("%s: none (%s; %s names one)\n", f->what, f->why_none, f->env);
        return 0;
    }
    printf("%s: %s (found: %s", f->what, f->path, f->source);
    if (f->version >= 0)
        printf(", version %d", f->version);
    printf(")\n");
    if (!f->ndevices)
        printf("  no device: %s\n", f->why_none);
    for (int i = 0; i < f->ndevices; i++)
        text_device(&f->dev[i]);
    return f->ndevices;
}

static void text_board(const struct board_facts *b)
{
    printf("board directory: %s (from %s%s%s)", b->dir, b->from, b->exposure[0] ? "; unsafe: " : "",
           b->exposure);
    if (b->exists && b->registrable)
        printf(", on %s, owner uid %u, mode %04o: Level 2's gates can live there (direct)\n", b->fs,
               b->uid, b->mode);
    else if (b->exists)
        printf(
            ", on %s, owner uid %u, mode %04o: Level 2's gates cannot live there, so they are "
            "mirrored: each process registers a copy of its gate lines in /dev/shm and keeps it "
            "up with the board, and its user's other processes write it as they decide, so "
            "their decisions reach its streams at once, even while it is stopped; where they "
            "cannot open it (another pid namespace, as containers are) they reach them once its board "
            "listener wakes, and not while it is stopped (what it queued then runs beside their "
            "work). Other users' decisions never gate it: for their priorities it is held on "
            "the host, at most its window in flight (at once for all of it on tmpfs: "
            "GPUPRIO_BOARD_DIR=/dev/shm, the default, or a tmpfs volume)\n",
            b->fs, b->uid, b->mode);
    else
        printf(": does not exist\n");
}

/* A printable copy of a name from a board (gp_printable). */
static const char *printable(char *out, size_t size, const char *in)
{
    gp_printable(out, size, in);
    return out;
}

static void text_boards(const struct run_facts *f)
{
    if (!f->read) {
        printf("boards: cannot be read (said above)\n");
        return;
    }
    printf("boards: %u read\n", f->s.boards);
    size_t n = 0, gemms = 0;
    bool mps_helps = false;
    char key[64], comm[GP_COMM_MAX], took[24], text[400];
    for (size_t i = 0; i < f->s.n; i++) {
        const struct gp_queue_row *r = &f->s.rows[i];
        mps_helps = mps_helps || waits_less_under_mps(f, i);
        if (!runs_long(f, r) || n++ >= BOARD_TEXT_ROWS)
            continue;
        if (n == 1)
            printf("  lower queues whose longest recent command exceeds the gate bound (%u us): a "
                   "higher priority waits for such a command whole\n",
                   f->gate_us);
        gp_duration_text(took, sizeof took, (uint64_t)r->longest_us * 1000);
        printf("    %s: pid %u (%s), queue 0x%llx, priority %d: %s\n",
               printable(key, sizeof key, r->id.key), (unsigned)r->id.pid,
               printable(comm, sizeof comm, r->id.comm), (unsigned long long)r->stream,
               (int)r->priority, took);
    }
    if (n > BOARD_TEXT_ROWS)
        printf("    ... %zu more\n", n - BOARD_TEXT_ROWS);
    if (mps_helps)
        printf("  some of these run commands of %u us or more outside MPS: as MPS clients (on "
               "NVIDIA) a higher priority would wait for SMs, not for such a command's end "
               "(docs/mps.md, \"With MPS or without\")\n",
               MPS_SHORTER_WAIT_US);
    if (!n)
        printf("  no lower queue ran a command longer than the gate bound (%u us) recently\n",
               f->gate_us);
    for (size_t i = 0; i < f->s.nrec; i++) {
        const struct gp_record_row *p = &f->s.records[i];
        if (!gp_gemm_text(text, sizeof text, "", p->gemm_sliced, p->gemm_slices, p->gemm_whole) ||
            gemms++ >= BOARD_TEXT_ROWS)
            continue;
        if (gemms == 1)
            printf("  GEMMs per process and device (left whole: those a higher priority would wait "
                   "for, by reason):\n");
        printf("    %s (its device %d): pid %u (%s): %s\n", printable(key, sizeof key, p->id.key),
               (int)p->id.device, (unsigned)p->id.pid, printable(comm, sizeof comm, p->id.comm),
               text);
    }
    if (gemms > BOARD_TEXT_ROWS)
        printf("    ... %zu more\n", gemms - BOARD_TEXT_ROWS);
}

static void text_config(const struct conf_facts *c)
{
    printf("administrator's file: %s: %s", c->path ? c->path : "(none)",
           !c->present ? "absent (each user's processes schedule among themselves)"
           : !c->used  ? "refused"
           : c->shared ? (c->admitted ? "used; this user is admitted to its shared board directory"
                                      : "used; this user is NOT admitted")
                       : "used");
    for (int i = 0; i < GP_CONF_SETTINGS; i++)
        if (c->has[i])
            printf("; %s %d", conf_keys[i], c->value[i]);
    putchar('\n');
}

/* Before the problems: a refused setting adds one (setting_source). */
static void text_settings(void)
{
    printf("settings:\n");
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        const char *value = NULL;
        const char *from = setting_source((enum gp_opt)i, &value);
        printf("  %s=%s (%s)\n", gp_opt_desc((enum gp_opt)i)->name, value ? value : "(unset)",
               from);
    }
}

static void text_problems(void)
{
    if (!nproblems) {
        printf("no problems: everything asked for is in effect\n");
        return;
    }
    printf("problems:\n");
    for (int i = 0; i < nproblems; i++)
        printf("  %s\n    fix: %s\n", problems[i].what, problems[i].fix);
}

static void print_text(const struct runtime_facts *rts, int nrts, const struct board_facts *b,
                       const struct run_facts *f, const struct conf_facts *c)
{
    int devices = 0;
    for (int r = 0; r < nrts; r++)
        devices += text_runtime(&rts[r]);
    if (!devices)
        printf("no GPU: nothing is scheduled on this machine; what follows is what would apply\n");
    text_board(b);
    text_boards(f);
    text_config(c);
    text_settings();
    text_problems();
}

int gp_cmd_doctor(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(doctor_usage, stdout);
            return 0;
        } else {
            fprintf(stderr, "gpuprio doctor: unknown argument '%s'\n%s", argv[i], doctor_usage);
            return GP_EXIT_USAGE;
        }
    }
    /* The library reads every variable up front, and warns of bad ones; so does the doctor,
     * whose settings list names them again with their fix. */
    gp_opts_load();
    struct board_facts board = {0};
    struct conf_facts conf = {0};
    look_at_conf(&conf);
    look_at_board(&board);
    static struct runtime_facts rts[2];
    rts[0] = (struct runtime_facts){.what = "HIP runtime", .env = "GPUPRIO_HIP_LIBRARY"};
    rts[1] = (struct runtime_facts){.what = "CUDA driver", .env = "GPUPRIO_CUDA_LIBRARY"};
    ask_hip(&rts[0], &board);
    ask_cuda(&rts[1], &board);
    static struct run_facts run;
    look_at_boards(&run, rts, 2);
    /* The settings, printed before the problems, add the refused values to them. */
    if (json)
        print_json(rts, 2, &board, &run, &conf);
    else
        print_text(rts, 2, &board, &run, &conf);
    free(run.owners);
    free(run.higher_elsewhere);
    gp_sample_free(&run.s);
    fflush(stdout);
    return nproblems ? GP_EXIT_FAILURE : 0;
}
