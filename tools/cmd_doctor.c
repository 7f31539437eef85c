/*
 * cmd_doctor.c - gpuprio doctor: what the library would put in effect for this user on this
 * machine, and why, before anything runs: the runtime it would bind to (the shim's own search,
 * gp_bind.c), per device the level and its reason, the gate bound and the hardware priority
 * range; the board directory and how Level 2's gates work there (on the board's own lines, or
 * mirrored where the runtimes cannot register its files); the administrator's
 * file (gp_conf.c); every GPUPRIO_* setting and where it came from (gp_options.def). Each problem
 * comes with its fix, and the exit status says whether there was any (0: everything asked for is
 * in effect, 1: not), so that scripts and installers can check a machine.
 *
 * It asks the runtimes what a process would find; it starts no work on a device. On a machine
 * without a GPU or a runtime it says so, which is no problem in itself.
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
#include "gp_conf.h"
#include "gp_dl.h"
#include "gp_options.h"
#include "tool.h"
#ifdef GP_DOCTOR_WITH_HIP
#include "hip_compat.h" /* the attribute's number, which HIP's versions renumber */
#endif

static const char doctor_usage[] =
    "Usage: gpuprio doctor [--json]\n"
    "Say what gpuprio would put in effect for this user on this machine, and why: per device\n"
    "the runtime, the level, the gate bound and the hardware priorities; the board directory;\n"
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
    int level;
    char level_why[256];
    unsigned gate_us; /* 0: no gates */
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
 * process knows (MPS before Volta, a refusal for another reason). A board directory whose files
 * the runtimes cannot register makes it mirrored gates, still Level 2. */
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
        d->gate_us = gate_us ? (unsigned)gate_us : 100;
    }
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
    int v = 0, n = 0;
    if (version && version(&v) == 0)
        f->version = v;
    if (!count || count(&n) != 0 || n <= 0) {
        snprintf(f->why_none, sizeof f->why_none, "the runtime sees no device");
        return;
    }
    f->ndevices = n < MAX_DEVICES ? n : MAX_DEVICES;
    for (int i = 0; i < f->ndevices; i++) {
        struct device_facts *d = &f->dev[i];
        d->index = i;
        d->can_wait = -1;
        if (name && name(d->name, sizeof d->name, i) != 0)
            d->name[0] = '\0';
#ifdef GP_DOCTOR_WITH_HIP
        int can = 0;
        if (attribute && attribute(&can, hipDeviceAttributeCanUseStreamWaitValue, i) == 0)
            d->can_wait = can != 0;
#else
        (void)attribute;
#endif
        if (set_device && range && set_device(i) == 0 && range(&d->least, &d->greatest) == 0)
            d->has_priorities = true;
        decide_level(d, "HIP", board);
    }
}

/* CUDA's driver API enums are fixed by its ABI (cuda.h, which this build may not have): 122 is
 * CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, the one cuda_gate.c asks; 92 is the
 * deprecated v1 attribute, which a CUDA 13 driver answers 0 (an H100 was said to be Level 1). */
#define CU_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS 122

static void ask_cuda(struct runtime_facts *f, const struct board_facts *board)
{
    void *h = bind(f, "libcuda", "cuLaunchKernel", cuda_sonames);
    if (!h)
        return;
    int (*init)(unsigned) = (int (*)(unsigned))gp_dlsym(h, "cuInit");
    version_fn version = (version_fn)gp_dlsym(h, "cuDriverGetVersion");
    count_fn count = (count_fn)gp_dlsym(h, "cuDeviceGetCount");
    int (*name)(char *, int, int) = (int (*)(char *, int, int))gp_dlsym(h, "cuDeviceGetName");
    int (*attribute)(int *, int, int) =
        (int (*)(int *, int, int))gp_dlsym(h, "cuDeviceGetAttribute");
    int v = 0, n = 0;
    if (version && version(&v) == 0)
        f->version = v;
    if (!init || init(0) != 0 || !count || count(&n) != 0 || n <= 0) {
        snprintf(f->why_none, sizeof f->why_none, "the driver sees no device");
        return;
    }
    f->ndevices = n < MAX_DEVICES ? n : MAX_DEVICES;
    for (int i = 0; i < f->ndevices; i++) {
        struct device_facts *d = &f->dev[i];
        d->index = i;
        d->can_wait = -1;
        if (name && name(d->name, sizeof d->name, i) != 0)
            d->name[0] = '\0';
        int can = 0;
        if (attribute && attribute(&can, CU_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, i) == 0)
            d->can_wait = can != 0;
        /* CUDA gives the range of a context's streams only: not asked here. */
        decide_level(d, "CUDA", board);
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
        problem("correct the file as the warning above says (docs/configuration.md, "
                "\"Tenants\"); until then each user's processes schedule among themselves",
                "the administrator's file %s is refused", c->path);
    if (!conf)
        return;
    uid_t uid = geteuid();
    c->admitted = gp_conf_admits(conf, uid);
    c->shared = conf->board_dir[0] != '\0';
    for (int i = 0; i < GP_CONF_SETTINGS; i++)
        c->has[i] = gp_conf_lookup(conf, (enum gp_conf_setting)i, uid, &c->value[i], NULL) == 0;
    if (c->shared && !c->admitted)
        problem("ask the administrator to add this user to the file's admit line",
                "the administrator's file names a shared board directory and does not admit "
                "this user: its processes schedule only among themselves");
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

static void print_json(const struct runtime_facts *rts, int nrts, const struct board_facts *b,
                       const struct conf_facts *c)
{
    printf("{\"runtimes\": [");
    for (int r = 0; r < nrts; r++) {
        const struct runtime_facts *f = &rts[r];
        printf("%s{\"runtime\": ", r ? ", " : "");
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
        for (int i = 0; i < f->ndevices; i++) {
            const struct device_facts *d = &f->dev[i];
            printf("%s{\"index\": %d, \"name\": ", i ? ", " : "", d->index);
            json_str(d->name);
            printf(", \"can_wait_on_host_memory\": %s", d->can_wait < 0 ? "null"
                                                        : d->can_wait   ? "true"
                                                                        : "false");
            if (d->has_priorities)
                printf(", \"hardware_priorities\": {\"least\": %d, \"greatest\": %d}", d->least,
                       d->greatest);
            else
                printf(", \"hardware_priorities\": null");
            printf(", \"level\": %d, \"level_why\": ", d->level);
            json_str(d->level_why);
            if (d->gate_us)
                printf(", \"gate_us\": %u}", d->gate_us);
            else
                printf(", \"gate_us\": null}");
        }
        printf("]}");
    }
    printf("], \"board\": {\"dir\": ");
    json_str(b->dir);
    printf(", \"from\": ");
    json_str(b->from);
    printf(", \"exists\": %s, \"filesystem\": ", b->exists ? "true" : "false");
    json_str(b->fs);
    printf(", \"gates_can_live_there\": %s, \"gates\": %s", b->registrable ? "true" : "false",
           !b->exists       ? "null"
           : b->registrable ? "\"direct\""
                            : "\"mirrored\"");
    if (b->exists)
        printf(", \"owner_uid\": %u, \"mode\": \"%04o\"}", b->uid, b->mode);
    else
        printf(", \"owner_uid\": null, \"mode\": null}");
    printf(", \"config\": {\"path\": ");
    json_str(c->path);
    printf(", \"present\": %s, \"used\": %s, \"admitted\": %s", c->present ? "true" : "false",
           c->used ? "true" : "false", c->used ? (c->admitted ? "true" : "false") : "null");
    static const char *const keys[] = {"cap", "share", "weight"};
    for (int i = 0; i < GP_CONF_SETTINGS; i++)
        if (c->has[i])
            printf(", \"%s\": %d", keys[i], c->value[i]);
        else
            printf(", \"%s\": null", keys[i]);
    printf("}, \"settings\": [");
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
    printf("], \"problems\": [");
    for (int i = 0; i < nproblems; i++) {
        printf("%s{\"problem\": ", i ? ", " : "");
        json_str(problems[i].what);
        printf(", \"fix\": ");
        json_str(problems[i].fix);
        putchar('}');
    }
    printf("]}\n");
}

static void print_text(const struct runtime_facts *rts, int nrts, const struct board_facts *b,
                       const struct conf_facts *c)
{
    bool any_device = false;
    for (int r = 0; r < nrts; r++) {
        const struct runtime_facts *f = &rts[r];
        if (!f->bound) {
            printf("%s: none (%s; %s names one)\n", f->what, f->why_none, f->env);
            continue;
        }
        printf("%s: %s (found: %s", f->what, f->path, f->source);
        if (f->version >= 0)
            printf(", version %d", f->version);
        printf(")\n");
        if (!f->ndevices)
            printf("  no device: %s\n", f->why_none);
        for (int i = 0; i < f->ndevices; i++) {
            const struct device_facts *d = &f->dev[i];
            any_device = true;
            printf("  device %d%s%s: Level %d (%s)", d->index, d->name[0] ? " " : "", d->name,
                   d->level, d->level_why);
            if (d->gate_us)
                printf(", gate bound %u us (300 in an MPS client unless GPUPRIO_GATE_US is set)",
                       d->gate_us);
            putchar('\n');
            if (d->has_priorities)
                printf("    hardware stream priorities: %d (least) to %d (greatest)%s\n", d->least,
                       d->greatest,
                       gp_opt_choice(GP_OPT_HW_PRIORITY) == 0
                           ? ", given to created streams"
                           : ", not used (GPUPRIO_HW_PRIORITY=off)");
        }
    }
    if (!any_device)
        printf("no GPU: nothing is scheduled on this machine; what follows is what would apply\n");
    printf("board directory: %s (from %s)", b->dir, b->from);
    if (b->exists && b->registrable)
        printf(", on %s, owner uid %u, mode %04o: Level 2's gates can live there (direct)\n", b->fs,
               b->uid, b->mode);
    else if (b->exists)
        printf(
            ", on %s, owner uid %u, mode %04o: Level 2's gates cannot live there, so they are "
            "mirrored: each process registers a private copy of its gate lines and keeps it up "
            "with the board, and another process's decision reaches its streams once its board "
            "listener wakes (tens of microseconds; at once on tmpfs: GPUPRIO_BOARD_DIR=/dev/shm, "
            "the default, or a tmpfs volume)\n",
            b->fs, b->uid, b->mode);
    else
        printf(": does not exist\n");
    printf("administrator's file: %s: %s", c->path ? c->path : "(none)",
           !c->present ? "absent (each user's processes schedule among themselves)"
           : !c->used  ? "refused"
           : c->shared ? (c->admitted ? "used; this user is admitted to its shared board directory"
                                      : "used; this user is NOT admitted")
                       : "used");
    static const char *const keys[] = {"cap", "share", "weight"};
    for (int i = 0; i < GP_CONF_SETTINGS; i++)
        if (c->has[i])
            printf("; %s %d", keys[i], c->value[i]);
    putchar('\n');
    printf("settings:\n");
    for (int i = 0; i < GP_OPT_COUNT; i++) {
        const char *value = NULL;
        const char *from = setting_source((enum gp_opt)i, &value);
        printf("  %s=%s (%s)\n", gp_opt_desc((enum gp_opt)i)->name, value ? value : "(unset)",
               from);
    }
    if (!nproblems) {
        printf("no problems: everything asked for is in effect\n");
        return;
    }
    printf("problems:\n");
    for (int i = 0; i < nproblems; i++)
        printf("  %s\n    fix: %s\n", problems[i].what, problems[i].fix);
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
    /* The settings, printed before the problems, add the refused values to them. */
    if (json)
        print_json(rts, 2, &board, &conf);
    else
        print_text(rts, 2, &board, &conf);
    fflush(stdout);
    return nproblems ? GP_EXIT_FAILURE : 0;
}
