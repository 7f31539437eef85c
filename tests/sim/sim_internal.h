/*
 * sim_internal.h - shared state of the simulated HIP device (docs/simulator.md).
 *
 * One process-wide mutex (sim.lock) guards every runtime object: streams, events, commands,
 * captures, memory ranges and handles. The simulator favours obvious correctness over speed:
 * API calls take the lock briefly to queue a command; the hardware-queue workers take it only
 * to pick up and retire commands, and run kernels, copies and host functions without it. Every
 * retirement broadcasts sim.done_cv, on which host-side waits (synchronize, query loops) and
 * workers whose command depends on another one sleep.
 *
 * Commands are reference counted (under the lock): the hardware queue, the stream's "last"
 * pointer, events that recorded them and commands that depend on them each hold a reference.
 */
#ifndef HIPSIM_INTERNAL_H
#define HIPSIM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hipsim.h"

#define SIM_MAX_DEVICES 16
#define SIM_MAX_HW_QUEUES 64 /* per priority pool (HIPSIM_HW_QUEUES) */
/* Hardware queues are pooled per stream priority, as clr pools them (docs/simulator.md): pool
 * p's queues are hwq[p * SIM_MAX_HW_QUEUES ...], normal first so that a program that never asks
 * for a priority sees the queue indices it always did. Streams with a CU mask get a queue of
 * their own, from SIM_MAX_MASKED_QUEUES after the pools. */
enum sim_pool { SIM_POOL_NORMAL, SIM_POOL_HIGH, SIM_POOL_LOW, SIM_POOLS };
#define SIM_MAX_MASKED_QUEUES 64
#define SIM_MASKED_QUEUE_BASE (SIM_POOLS * SIM_MAX_HW_QUEUES)
#define SIM_HWQ_TOTAL (SIM_MASKED_QUEUE_BASE + SIM_MAX_MASKED_QUEUES)
#define SIM_MAX_SLOTS 64

/* A hardware queue's priority, in HIP's terms (-1 most urgent): its pool's; a masked stream's
 * queue is of normal priority, as hipExtStreamCreateWithCUMask's streams are. */
static inline int sim_hw_queue_priority(int hw_queue)
{
    int pool = hw_queue / SIM_MAX_HW_QUEUES;
    return pool == SIM_POOL_HIGH ? -1 : pool == SIM_POOL_LOW ? 1 : 0;
}
#define SIM_UNUSED(x) ((void)(x))

/* ---- configuration and faults (sim_core.c) ---- */

enum sim_fault {
    SIM_FAULT_NONE = 0,
    SIM_FAULT_NULL_STREAM_UNORDERED,
    SIM_FAULT_EVENT_QUERY_UNRECORDED,
    SIM_FAULT_PAGEABLE_ASYNC,
    SIM_FAULT_LAST_ERROR_NOT_STICKY,
    SIM_FAULT_FREE_NO_SYNC,
    SIM_FAULT_CALLBACK_EARLY,
    SIM_FAULT_WAIT_EVENT_IGNORED,
    SIM_FAULT_CAPTURE_RUNS,
    SIM_FAULT_PER_THREAD_SHARED,
    SIM_FAULT_ELAPSED_NO_NOTREADY,
    SIM_FAULT_STREAM_UNORDERED,
    SIM_FAULT_DROP_LAUNCH,
    SIM_FAULT_WAIT_VALUE_IGNORED,
    SIM_FAULT_PRIORITY_IGNORED, /* compute slots granted in ticket order, whatever the priority */
    SIM_FAULT_POOLS_SHARED,     /* streams of every priority share the normal pool's queues */
    SIM_FAULT_CU_MASK_IGNORED,  /* kernels of a masked stream may use every slot */
    SIM_FAULT_CAPTURE_MODE_IGNORED, /* calls unsafe during a capture break none */
};

struct sim_config {
    int devices;
    int hw_queues;
    int compute_slots;
    char shared_name[64]; /* empty: slots are private to the process */
    bool shared_users;    /* HIPSIM_SHARED_USERS=1: every user shares it, as a real GPU */
    char trace_path[256];
    enum sim_fault fault;
    /* Graphs and streams, as the tests of gpuprio's graph gates need them (docs/simulator.md). */
    bool graph_say;          /* HIPSIM_GRAPH_SAY=1: graph waits that hold say so on stderr */
    bool graph_clone_fails;  /* HIPSIM_GRAPH_CLONE_FAILS=1 */
    bool graph_memop_fails;  /* HIPSIM_GRAPH_MEMOP_FAILS=1 */
    bool gated_launch_fails; /* HIPSIM_GATED_LAUNCH_FAILS=1 */
    bool stream_ids;         /* hipStreamGetId answers; HIPSIM_STREAM_ID=0: as before HIP 7.1 */
    bool stream_reuse;       /* HIPSIM_STREAM_REUSE=1: new streams take destroyed ones' memory */
};

/* ---- commands (sim_engine.c) ---- */

enum sim_cmd_kind {
    SIM_CMD_KERNEL,
    SIM_CMD_COPY,
    SIM_CMD_SET,
    SIM_CMD_MARKER, /* an event record: nothing to do but complete in order */
    SIM_CMD_WAIT,   /* completes when its dependencies have */
    SIM_CMD_WAIT_VALUE,
    SIM_CMD_WRITE_VALUE,
    SIM_CMD_HOST_FN,
    SIM_CMD_FREE,
};

struct sim_kernel;

struct sim_cmd {
    enum sim_cmd_kind kind;
    int refs;
    bool done;
    struct sim_cmd *next; /* in its hardware queue */
    struct ihipStream_t *stream;
    int hw_queue;
    struct sim_cmd **deps;
    int ndeps;
    uint64_t submit_ns; /* when the runtime queued it (after any capture) */
    /* A value wait: when the read that let it through began. A kernel: that time of the last
     * value wait before it on its hardware queue (0: none): its gate passed between then and its
     * start. */
    uint64_t waited_ns;
    uint64_t start_ns, end_ns;
    union {
        struct {
            const struct sim_kernel *kernel;
            dim3 grid, block;
            size_t shared_mem;
            unsigned char *argbuf; /* argument copies, or the HIP_LAUNCH_PARAM buffer */
            size_t arglen;
            bool packed; /* argbuf came from HIP_LAUNCH_PARAM_BUFFER_POINTER */
        } kernel;
        struct {
            void *dst;
            const void *src;
            size_t bytes;
        } copy;
        struct {
            void *dst;
            uint32_t value;
            size_t elem_size; /* 1, 2 or 4 */
            size_t count;
        } set;
        struct {
            void *ptr;
            uint64_t value, mask;
            unsigned flags;
            int width; /* 32 or 64 */
            /* A wait of a graph's batch memory operation node: the launch's kernel nodes before
             * it, and all of them (what it says when it holds). */
            bool graph;
            unsigned kernels_before, kernels;
        } value;
        struct {
            hipHostFn_t fn;
            hipStreamCallback_t callback;
            hipStream_t handle; /* as the application passed it, for callbacks */
            void *user;
        } host;
        struct {
            void *ptr;
        } free;
    } u;
};

struct sim_cmd *sim_cmd_new(enum sim_cmd_kind kind);
struct sim_cmd *sim_cmd_clone(const struct sim_cmd *cmd);
void sim_cmd_ref(struct sim_cmd *cmd);
void sim_cmd_unref(struct sim_cmd *cmd);
int sim_cmd_add_dep(struct sim_cmd *cmd, struct sim_cmd *dep);

/* ---- streams ---- */

enum sim_stream_kind { SIM_STREAM_USER, SIM_STREAM_NULL, SIM_STREAM_PER_THREAD };

struct sim_capture;

struct ihipStream_t {
    uint64_t id;
    int device;
    unsigned flags;
    int priority;
    int hw_queue;
    bool masked;      /* created by hipExtStreamCreateWithCUMask */
    uint64_t cu_mask; /* then the mask it was given (its first 64 bits: the slots, or CUs) */
    enum sim_stream_kind kind;
    int refs;         /* the live handle plus each queued command */
    unsigned pending; /* queued commands not yet complete */
    struct sim_cmd *last;
    struct sim_capture *capture;
    struct ihipStream_t *next, *prev; /* the device's live streams */
};

struct sim_hw_queue {
    struct sim_cmd *head, *tail;
    pthread_cond_t cv;
    bool started;
    int device, index;
    uint64_t waited_ns; /* its last value wait's (sim_cmd), its worker's own */
};

struct sim_slots;

struct sim_device {
    int index;
    struct sim_hw_queue hwq[SIM_HWQ_TOTAL];
    unsigned next_hw_queue[SIM_POOLS]; /* round-robin within each pool */
    bool masked_queue_used[SIM_MAX_MASKED_QUEUES];
    unsigned stream_unordered_next; /* SIM_FAULT_STREAM_UNORDERED */
    struct ihipStream_t *null_stream;
    struct ihipStream_t *streams;
    unsigned pending;
    struct sim_slots *slots;
};

struct sim_state {
    pthread_mutex_t lock;
    pthread_cond_t done_cv;
    struct sim_config cfg;
    struct sim_device dev[SIM_MAX_DEVICES];
    uint64_t next_stream_id;
    int global_captures; /* active captures in hipStreamCaptureModeGlobal */
};

extern struct sim_state sim;

/* Initializes the simulator once; every API entry calls it first. */
void sim_init(void);
void sim_lock(void);
void sim_unlock(void);
/* Sleeps on sim.done_cv; the lock must be held. */
void sim_wait(void);

/* ---- handle registry (sim_core.c): which pointers are live objects of which type ---- */

enum sim_handle_type {
    SIM_H_STREAM = 1,
    SIM_H_EVENT,
    SIM_H_GRAPH,
    SIM_H_GRAPH_EXEC,
    SIM_H_MODULE,
    SIM_H_GRAPH_NODE
};
/* A handle hipDeviceReset destroyed stays in the registry as dead (its type + SIM_H_DEAD, its
 * memory never freed, so that its address is not handed out again): sim_handle_valid reports a
 * use of it as an error (stderr, hipsimStaleUses) and answers false. */
#define SIM_H_DEAD 16
int sim_handle_add(const void *p, enum sim_handle_type type);
bool sim_handle_valid(const void *p, enum sim_handle_type type);
void sim_handle_remove(const void *p);
/* Marks every live handle of type for which dies() says so dead (sim lock held). */
void sim_handles_kill(enum sim_handle_type type, bool (*dies)(void *p, void *arg), void *arg);
/* Reports a use of something hipDeviceReset destroyed (what: "event", "stream"...). */
void sim_stale_use(const char *what, const void *p);
/* The exit status of a process in which the simulator reported a misuse (sim_misuse). */
#define SIM_MISUSE_STATUS 86
/*
 * Reports a call that the real runtime would crash or corrupt memory on ("hipsim: error: " and
 * the message, on stderr). The call itself is refused by its caller; the process exits with
 * SIM_MISUSE_STATUS however it ends through exit, so that no test passes over one unseen (a
 * child of fork starts with none).
 */
void sim_misuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* hipDeviceReset's parts, for device, with the sim lock held: its created streams, its events and
 * the host registrations made while it was current die. */
void sim_streams_reset(struct sim_device *d);
void sim_events_reset(int device);
void sim_memory_reset(int device);
/* Whether [ptr, ptr + size) lies in a host registration hipDeviceReset destroyed and nothing
 * registered again (sim lock held). */
bool sim_memory_dead(const void *ptr, size_t size);

/* ---- the engine (sim_engine.c); lock held unless noted ---- */

/* Queues cmd on stream, adding the null-stream dependencies; takes over the caller's ref. */
void sim_enqueue(struct ihipStream_t *s, struct sim_cmd *cmd);
/*
 * Puts cmd on stream s: records it when s is capturing, queues it otherwise. Fails without
 * queuing when the use of the legacy null stream breaks a global capture. Consumes cmd.
 */
hipError_t sim_submit(struct ihipStream_t *s, struct sim_cmd *cmd);
/* Waits until cmd is complete. */
void sim_wait_cmd(const struct sim_cmd *cmd);
/* True when all of s's work (for the null stream: and all blocking streams') is complete. */
bool sim_stream_idle(const struct ihipStream_t *s);
void sim_wait_stream(const struct ihipStream_t *s);
void sim_wait_device(const struct sim_device *d);
void sim_wait_all_devices(void);

/* ---- compute slots (sim_slots.c); called without the lock ---- */

/* What a kernel asks of the device: its hardware queue's priority (HIP's terms: -1 most urgent,
 * 1 least), the slots it may use, and how many it can fill at most (width >= 1). */
struct sim_slot_request {
    int priority;
    uint64_t mask;
    unsigned width;
};
struct sim_slots *sim_slots_open(int device, int nslots, const char *shared_name,
                                 bool shared_users);
/* The device's compute slots (a shared device's may differ from HIPSIM_COMPUTE_SLOTS). */
unsigned sim_slots_count(const struct sim_slots *slots);
/* Waits for the kernel's turn: returns its ticket, and in *held the slots it was given, which
 * sim_slots_release gives back. */
uint64_t sim_slots_acquire(struct sim_slots *slots, const struct sim_slot_request *r,
                           uint64_t *held);
void sim_slots_release(struct sim_slots *slots, uint64_t ticket, uint64_t held);

/* ---- the processes that share a device (sim_peer.c) ---- */

/* Start times are kept to their low bits, so that a pid and its start fit in a word with room to
 * spare (sim_slots.c's tags): a reused pid whose process started a multiple of 2^16 clock ticks
 * (about 11 minutes) after the first is taken for it. */
#define SIM_PEER_START_MASK ((UINT64_C(1) << 16) - 1)
struct sim_peer {
    int32_t pid;
    uint64_t start; /* the process's start time in clock ticks since boot, low bits; 0: unknown */
};
void sim_peer_self(struct sim_peer *me);
/* Whether the process pid that started at start (low bits, 0: unknown) has ended (a zombie has) or
 * is stopped: either way it does not run its kernels, and what it holds of a device must be freed.
 */
bool sim_peer_absent(int32_t pid, uint64_t start);

/* ---- trace (sim_core.c); called without the lock ---- */

void sim_trace_record(const struct sim_cmd *cmd, const char *name, uint64_t tag);

/* ---- errors (sim_error.c) ---- */

/* Records err as the result of the thread's API call (ROCm 6 rules) and returns it. */
hipError_t sim_ret(hipError_t err);

/* ---- streams (sim_stream.c); lock held ---- */

/*
 * Resolves an application stream handle. spt: the entry point is a per-thread-default-stream
 * form, so 0 and hipStreamLegacy mean hipStreamPerThread (clr's PER_THREAD_DEFAULT_STREAM).
 * Returns hipErrorContextIsDestroyed for a handle that is not a live stream of this runtime.
 */
hipError_t sim_stream_resolve(hipStream_t handle, bool spt, struct ihipStream_t **out);
/* The slots a stream's kernels may use on its device (its mask, or all of them). */
uint64_t sim_stream_slots(const struct ihipStream_t *s);
/* Every slot of a device. */
uint64_t sim_device_slots(int device);
void sim_stream_unref(struct ihipStream_t *s);
int sim_current_device(void);
/* A non-blocking stream of device's, as clr makes for an executable graph's parallel branches,
 * held by the executable graph until it drops it. */
struct ihipStream_t *sim_stream_for_graph(int device);
void sim_stream_for_graph_drop(struct ihipStream_t *s);

/* ---- events (sim_event.c); lock held ---- */

hipError_t sim_event_record(hipEvent_t event, struct ihipStream_t *s);

/* ---- captures (sim_graph.c); lock held ---- */

void sim_capture_append(struct sim_capture *cap, struct sim_cmd *cmd);
bool sim_capture_invalidated(const struct sim_capture *cap);
void sim_capture_invalidate(struct sim_capture *cap);
void sim_capture_ref(struct sim_capture *cap);
void sim_capture_unref(struct sim_capture *cap);
void sim_invalidate_global_captures(void);
/* A capturing stream goes away: its capture is invalidated, and ended if s began it. */
void sim_capture_leave(struct ihipStream_t *s);
bool sim_capture_active(const struct sim_capture *cap);
/* A call clr deems unsafe during a capture, from the calling thread in mode: invalidates the
 * captures clr's rule names (with mode global or thread-local, those the thread began in either
 * mode; failing those, with mode global, every global-mode capture) and says whether there were
 * any. */
bool sim_capture_unsafe(hipStreamCaptureMode mode);
/* A wait on a stream that is not capturing (hipStreamQuery, hipStreamSynchronize), from the
 * calling thread in mode, as clr's Stream::StreamCaptureOngoing: outside relaxed mode it
 * invalidates every global-mode capture, or where there is none the thread's own, and says
 * whether there were any. */
bool sim_capture_ongoing(hipStreamCaptureMode mode);

/* ---- capture modes (sim_capture_mode.c); called without the lock ---- */

/* At the top of each call clr deems unsafe during a capture (hipMalloc, hipHostRegister...):
 * hipErrorStreamCaptureUnsupported where the calling thread's mode makes it break a capture, which
 * it then invalidated, else hipSuccess. */
hipError_t sim_unsafe_during_capture(void);
/* The calling thread's capture mode (hipThreadExchangeStreamCaptureMode; global until changed),
 * as the capture rules take it: relaxed under fault capture-mode-ignored, which breaks nothing.
 * With or without the lock. */
hipStreamCaptureMode sim_thread_capture_mode(void);

/* ---- memory (sim_memory.c); lock held ---- */

void sim_memory_release(void *ptr); /* frees a stream-ordered allocation */

/* ---- graph waits (sim_graph_exec.c); called by a hardware queue's worker without the lock ---- */

/* A graph's wait (cmd->u.value.graph) found its condition false: it holds. */
void sim_graph_wait_holds(const struct sim_cmd *cmd);
/* ... and has opened, held_ns after it began to hold. */
void sim_graph_wait_opened(const struct sim_cmd *cmd, uint64_t held_ns);

/* ---- kernels (sim_launch.c); called without the lock ---- */

/*
 * A kernel command for the kernel registered at function, with its arguments copied (args, one
 * pointer per argument, or extra's HIP_LAUNCH_PARAM buffer): what every launch entry point and a
 * graph's kernel node run. Fails as a launch does (hipErrorInvalidDeviceFunction,
 * hipErrorInvalidConfiguration...), *out then NULL.
 */
hipError_t sim_kernel_cmd(const void *function, dim3 grid, dim3 block, size_t shared_mem,
                          void **args, void **extra, struct sim_cmd **out);
void sim_kernel_run(struct sim_cmd *cmd);

uint64_t sim_now_ns(void);

#endif /* HIPSIM_INTERNAL_H */
