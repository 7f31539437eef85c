/*
 * cmd_cdi.c - `gpuprio cdi [--output DIR]`: writes a Container Device Interface spec with one
 * device per priority (gpuprio.dev/priority=high, ...), so that `podman run --device
 * gpuprio.dev/priority=high IMAGE` (and Docker, containerd and CRI-O, which read the same specs)
 * runs the container under gpuprio with nothing of gpuprio in its image (docs/clusters.md).
 *
 * Every device shares the spec's edits: the preload library mounted read-only at
 * /opt/gpuprio/lib (a path no image uses, so nothing of the image is hidden) and named in
 * LD_PRELOAD, the board directory mounted at its own path and named in GPUPRIO_BOARD_DIR, and the
 * administrator's /etc/gpuprio.conf mounted read-only where it exists, so that the containers of
 * every user meet on its shared directory under its caps. Each device adds only its
 * GPUPRIO_PRIORITY. The spec is YAML of the version Debian 12's podman reads (cdiVersion 0.5.0;
 * nothing in it needs a later one), written to DIR/gpuprio.yaml through a temporary file and a
 * rename, so an engine never reads half a spec.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_conf_file.h"
#include "gpuprio.h"
#include "tool.h"

#define CDI_VERSION "0.5.0"
#define CDI_KIND "gpuprio.dev/priority"
#define CDI_LIB_DIR "/opt/gpuprio/lib"
#define CDI_DEFAULT_BOARD_DIR "/run/gpuprio"

/* The devices: one per named level, from one list. */
#define CDI_LEVELS(X)                                                                              \
    X(critical, GPUPRIO_PRIORITY_CRITICAL)                                                         \
    X(high, GPUPRIO_PRIORITY_HIGH)                                                                 \
    X(normal, GPUPRIO_PRIORITY_NORMAL)                                                             \
    X(low, GPUPRIO_PRIORITY_LOW)                                                                   \
    X(idle, GPUPRIO_PRIORITY_IDLE)

static const char help_cdi[] =
    "Usage: gpuprio cdi [--output DIR] [--board-dir DIR] [--shim hip|cuda|all]\n"
    "Write a Container Device Interface (CDI) spec with one device per priority,\n" CDI_KIND
    "=critical, high, normal, low and idle, for podman, Docker, containerd and\n"
    "CRI-O: `podman run --device " CDI_KIND "=high IMAGE` runs the container under gpuprio\n"
    "at that priority, with nothing of gpuprio in the image.\n"
    "\n"
    "Each device mounts the preload library read-only at " CDI_LIB_DIR " and names it in\n"
    "LD_PRELOAD, mounts the board directory at its own path (GPUPRIO_BOARD_DIR), mounts\n"
    "/etc/gpuprio.conf read-only where it exists, and sets GPUPRIO_PRIORITY.\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR     write DIR/gpuprio.yaml (/etc/cdi or /var/run/cdi, where the\n"
    "                       engines look); without it, the spec goes to standard output\n"
    "      --board-dir DIR  the board directory the containers share: by default the shared\n"
    "                       directory of /etc/gpuprio.conf, else " CDI_DEFAULT_BOARD_DIR "\n"
    "      --shim WHICH     the library to preload: hip, cuda, or all (default: cuda where an\n"
    "                       NVIDIA driver is loaded or only it is installed, else hip)\n"
    "  -h, --help           show this text\n"
    "\n"
    "The image needs a glibc at least as new as the one gpuprio was built against.\n"
    "\n"
    "Exit status: 0 when the spec was written; 1 when it could not be (a library not\n"
    "found, a path a spec cannot hold, DIR not writable); 2 for a bad option.\n";

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpuprio cdi: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return GP_EXIT_FAILURE;
}

/* Whether path can be written in the spec as it is: absolute, printable ASCII without the
 * characters YAML's double quotes or LD_PRELOAD's lists would take apart. */
static bool plain_path(const char *path)
{
    if (path[0] != '/')
        return false;
    for (const char *p = path; *p; p++)
        if (*p < 0x21 || *p > 0x7e || *p == '"' || *p == '\\' || *p == ':')
            return false;
    return true;
}

static bool nvidia_driver(void)
{
    return access("/proc/driver/nvidia/version", F_OK) == 0 || access("/dev/nvidiactl", F_OK) == 0;
}

struct cdi_spec {
    const char *libs[2]; /* host paths, NULL when not preloaded */
    char board_dir[PATH_MAX];
    bool conf; /* mount /etc/gpuprio.conf (the file in use: GPUPRIO_CONFIG's for tests) */
    char conf_path[PATH_MAX];
};

static void write_mount(FILE *f, const char *host, const char *container, const char *mode)
{
    fprintf(f,
            "    - hostPath: \"%s\"\n      containerPath: \"%s\"\n      options: [\"%s\", "
            "\"nosuid\", \"nodev\", \"bind\"]\n",
            host, container, mode);
}

static void write_spec(FILE *f, const struct cdi_spec *s)
{
    fprintf(f,
            "# Written by gpuprio cdi (gpuprio %d.%d.%d): one device per priority, each running\n"
            "# the container under gpuprio (docs/clusters.md). Written again by the command;\n"
            "# edits here are lost.\n",
            GPUPRIO_VERSION_MAJOR, GPUPRIO_VERSION_MINOR, GPUPRIO_VERSION_PATCH);
    fprintf(f, "cdiVersion: \"%s\"\nkind: \"%s\"\ndevices:\n", CDI_VERSION, CDI_KIND);
#define X(name, value)                                                                             \
    fprintf(f, "  - name: \"%s\"\n    containerEdits:\n      env: [\"GPUPRIO_PRIORITY=%d\"]\n",    \
            #name, value);
    CDI_LEVELS(X)
#undef X
    fputs("containerEdits:\n  env:\n    - \"LD_PRELOAD=", f);
    for (int i = 0, n = 0; i < 2; i++)
        if (s->libs[i])
            fprintf(f, "%s" CDI_LIB_DIR "/%s", n++ ? ":" : "", strrchr(s->libs[i], '/') + 1);
    fprintf(f, "\"\n    - \"GPUPRIO_BOARD_DIR=%s\"\n  mounts:\n", s->board_dir);
    for (int i = 0; i < 2; i++)
        if (s->libs[i]) {
            char in[PATH_MAX];
            snprintf(in, sizeof in, CDI_LIB_DIR "/%s", strrchr(s->libs[i], '/') + 1);
            write_mount(f, s->libs[i], in, "ro");
        }
    write_mount(f, s->board_dir, s->board_dir, "rw");
    if (s->conf)
        write_mount(f, s->conf_path, GP_CONF_PATH, "ro");
}

/* Writes the spec to dir/gpuprio.yaml through a temporary file renamed into place. */
static int write_file(const char *dir, const struct cdi_spec *s)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/gpuprio.yaml", dir) >= (int)sizeof path ||
        snprintf(tmp, sizeof tmp, "%s/.gpuprio.yaml.XXXXXX", dir) >= (int)sizeof tmp)
        return fail("%s: the path is too long", dir);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return fail("cannot write in %s: %s", dir, strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return fail("cannot write in %s: %s", dir, strerror(errno));
    }
    write_spec(f, s);
    int err = ferror(f) ? EIO : 0;
    if (fchmod(fd, 0644) < 0 || fsync(fd) < 0)
        err = errno;
    if (fclose(f) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) < 0)
        err = errno;
    if (err) {
        unlink(tmp);
        return fail("cannot write %s: %s", path, strerror(err));
    }
    printf("%s\n", path);
    return 0;
}

int gp_cmd_cdi(int argc, char **argv)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
                                          {"board-dir", required_argument, NULL, 'b'},
                                          {"shim", required_argument, NULL, 's'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *output = NULL, *board_dir = NULL, *shim = NULL;
    optind = 1;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "+o:h", longs, NULL)) != -1;) {
        switch (c) {
        case 'o':
            output = optarg;
            break;
        case 'b':
            board_dir = optarg;
            break;
        case 's':
            shim = optarg;
            break;
        case 'h':
            fputs(help_cdi, stdout);
            return 0;
        default:
            fprintf(stderr, "gpuprio cdi: bad option '%s' (gpuprio cdi --help)\n",
                    argv[optind - 1]);
            return GP_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gpuprio cdi: unexpected argument '%s' (gpuprio cdi --help)\n",
                argv[optind]);
        return GP_EXIT_USAGE;
    }
    if (shim && strcmp(shim, "hip") != 0 && strcmp(shim, "cuda") != 0 && strcmp(shim, "all") != 0) {
        fprintf(stderr, "gpuprio cdi: '%s' is not a library choice; accepted: hip, cuda, all\n",
                shim);
        return GP_EXIT_USAGE;
    }

    struct cdi_spec s = {{NULL, NULL}, "", false, ""};
    struct gp_shims shims;
    gp_shims_find(&shims);
    if (!shim)
        shim = shims.cuda[0] && (nvidia_driver() || !shims.hip[0]) ? "cuda" : "hip";
    bool hip = strcmp(shim, "cuda") != 0, cuda = strcmp(shim, "hip") != 0;
    if (hip && !shims.hip[0])
        return fail("cannot find libgpuprio-hip.so in %s (set GPUPRIO_LIBRARY_DIR to the "
                    "directory that holds it)",
                    shims.dir);
    if (cuda && !shims.cuda[0] && strcmp(shim, "cuda") == 0)
        return fail("cannot find libgpuprio-cuda.so in %s (it is built only where the CUDA "
                    "headers are)",
                    shims.dir);
    s.libs[0] = hip ? shims.hip : NULL;
    s.libs[1] = cuda && shims.cuda[0] ? shims.cuda : NULL;

    const struct gp_conf *conf = gp_conf_get();
    if (!board_dir)
        board_dir = conf && conf->board_dir[0] ? conf->board_dir : CDI_DEFAULT_BOARD_DIR;
    snprintf(s.board_dir, sizeof s.board_dir, "%s", board_dir);
    if (conf) {
        s.conf = true;
        snprintf(s.conf_path, sizeof s.conf_path, "%s", conf->path);
    }
    const char *paths[] = {s.libs[0], s.libs[1], s.board_dir, s.conf ? s.conf_path : NULL};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (paths[i] && !plain_path(paths[i]))
            return fail("cannot write '%s' in a spec: give an absolute path of printable "
                        "characters without spaces, colons, quotes or backslashes",
                        paths[i]);
    /* A missing directory fails each container's start: say so now, and write the spec all the
     * same (the directory may be made at boot, as the package's tmpfiles.d entry makes it). */
    struct stat st;
    if (stat(s.board_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        fprintf(stderr,
                "gpuprio cdi: warning: the board directory %s is not there; the containers "
                "cannot start until it is (install -d -m 1777 %s)\n",
                s.board_dir, s.board_dir);
    if (!output) {
        write_spec(stdout, &s);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : GP_EXIT_FAILURE;
    }
    return write_file(output, &s);
}
