/*
 * ocx_internal.h — what the files of lib/ share. Internal non-static names are ocx__*.
 * Layers, bottom up: status → device, stream, cache → context, profile → buffer, program → launch →
 * vector, reduce, gemm. A lower layer never calls a higher one.
 */
#ifndef OCX_INTERNAL_H
#define OCX_INTERNAL_H

#include "ocx.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>

#if defined(__GNUC__)
#define OCX__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define OCX__PRINTF(f, a)
#endif

/* ---- status.c: errors and warnings -------------------------------------------------------------- */
/* Records a detailed message for the calling thread and returns `status`. */
ocx_status ocx__error(ocx_status status, const char *fmt, ...) OCX__PRINTF(2, 3);
/* Maps an OpenCL error code to a status (CL_OUT_OF_RESOURCES, CL_MEM_OBJECT_ALLOCATION_FAILURE → OCX_ERR_OUT_OF_MEMORY,
 * else OCX_ERR_OPENCL) and records "`what`: CL_NAME (code)". */
ocx_status ocx__cl_error(cl_int err, const char *what);
/* 1 for the OpenCL codes that mean memory ran out (host, device or a buffer too large): they say
 * nothing of the call's inputs. */
int ocx__cl_out_of_memory(cl_int err);
/* Internal work whose failures are no failure of the call leaves ocx_last_error() as it was:
 * ocx__error_save() copies the message whole, and ocx__error_restore() puts the copy back and frees
 * it (free() alone drops it). Without memory for the copy (NULL) the internal work's own message
 * stays in its place. */
char *ocx__error_save(void);
void ocx__error_restore(char *saved);
const char *ocx__cl_error_name(cl_int err);
/* A warning on stderr ("ocx: warning: …") unless OCX_QUIET is set. */
void ocx__warn(const char *fmt, ...) OCX__PRINTF(1, 2);
/* Reads an environment variable as an unsigned number; `def` when unset or empty, and (with one
 * warning) when it is not a whole number of 0 or more. */
unsigned long ocx__env_ulong(const char *name, unsigned long def);
/* The same for a choice of 0..max: a value above max is said in the same one warning and ignored. */
unsigned long ocx__env_ulong_upto(const char *name, unsigned long def, unsigned long max);
/* A path formatted for a caller's buffer of cap bytes (the public *_path functions), written only
 * where it fits: else OCX_ERR_INVALID_ARGUMENT, naming `who`, and out as it was. */
ocx_status ocx__path_out(char *out, size_t cap, const char *who, const char *fmt, ...) OCX__PRINTF(4, 5);
/* The user's home directory, as a shell expands "~": $HOME where absolute (a relative one is taken
 * as unset), else the password database's entry (services and containers often run without HOME).
 * 0, with out = "", where there is none. */
int ocx__home_dir(char *out, size_t cap);
/* A directory of the XDG base directories: "$var/sub" where $var is an absolute path (the
 * specification has relative ones ignored: XDG_CACHE_HOME=rel had put the cache under whatever
 * directory the process ran in), else "<home>/fallback/sub" (ocx__home_dir). 0, with out = "",
 * where there is neither, or where it does not fit in cap. */
int ocx__xdg_dir(const char *var, const char *fallback, const char *sub, char *out, size_t cap);
/* 1 for a switch's on words ("1", "yes", "on", "true", any case), 0 for its off words ("0", "no",
 * "off", "false"), -1 for anything else. */
int ocx__switch_word(const char *s);
/* 1 when the environment variable is set to something other than "", "0", "no", "off", "false"
 * (with one warning for anything but "1", "yes", "on", "true"). */
int ocx__env_flag(const char *name);

#define OCX__FAIL_IF(cond, status, ...)                                                            \
    do {                                                                                           \
        if (cond) return ocx__error((status), __VA_ARGS__);                                        \
    } while (0)
#define OCX__FORWARD(expr)                                                                         \
    do {                                                                                           \
        ocx_status ocx__st_ = (expr);                                                              \
        if (ocx__st_ != OCX_OK) return ocx__st_;                                                   \
    } while (0)
#define OCX__CL_FORWARD(expr, what)                                                                \
    do {                                                                                           \
        cl_int ocx__err_ = (expr);                                                                 \
        if (ocx__err_ != CL_SUCCESS) return ocx__cl_error(ocx__err_, (what));                      \
    } while (0)

/* ---- device.c ----------------------------------------------------------------------------------- */
typedef struct ocx__device_ref {
    cl_platform_id platform;
    cl_device_id device;
    unsigned platform_index, device_index; /* its numbers, as ocx_device_info's */
} ocx__device_ref;
ocx_status ocx__device_ref_get(size_t index, ocx__device_ref *ref);
/* Fills *info for an arbitrary device (interop), applying simulated limits. */
ocx_status ocx__device_query(cl_platform_id platform, cl_device_id device, ocx_device_info *info);
void ocx__normalize_name(const char *name, char *out, size_t cap);
/* 1 when `needle` occurs in `hay`, ignoring ASCII case. */
int ocx__contains_nocase(const char *hay, const char *needle);
/* 1 for a device of PoCL (its platform's name is "Portable Computing Language"). */
int ocx__is_pocl(const ocx_device_info *info);

/* ---- cache.c: the on-disk binary cache ---------------------------------------------------------- */
typedef struct ocx__cache_blob {
    unsigned char *data;
    size_t size;
    uint64_t dev, ino; /* the file it came from (another process may replace it meanwhile) */
} ocx__cache_blob;
/* Opens `path` for reading if it is a regular file (never waiting on a FIFO). NULL otherwise, with
 * errno (ENOENT: nothing there; EINVAL: not a regular file) and *why, a reason for a message. */
FILE *ocx__open_regular(const char *path, const char **why);
/* The cache directory: $OCX_CACHE_DIR, $XDG_CACHE_HOME/ocx, else ~/.cache/ocx (ocx__home_dir); ""
 * when disabled by OCX_CACHE=0 or there is no home directory (one warning). */
void ocx__cache_dir(char *out, size_t cap);
/* Looks `key_text` up. OCX_OK with blob filled (caller frees data), or OCX_ERR_IO when absent; a bad
 * file is deleted (returns OCX_ERR_IO and sets *rejected). */
ocx_status ocx__cache_load(const char *key_text, ocx__cache_blob *blob, int *rejected);
/* mkdir for the cache directory (ocx__cache_dir's; the binary cache's and the peaks' files): the
 * default location gets its parents created; an explicit OCX_CACHE_DIR only its last component (a
 * missing parent there is the user's typo, not ours). 0, or -1 with errno. */
int ocx__cache_ensure_dir(const char *dir);
/* Stores atomically (temporary file + rename). Failure means running uncached (one warning). */
ocx_status ocx__cache_store(const char *key_text, const unsigned char *data, size_t size);
/* Removes the regular files in dir that is_temp(name, arg) names and that are more than ten minutes
 * old: temporaries of writes that never finished (the process died before its rename); none lasts
 * that long in a live write. */
void ocx__sweep_stale_temps(const char *dir, int (*is_temp)(const char *name, const void *arg), const void *arg);
/* A new file "<prefix>.tmp-<pid>-<count>" (its name in tmp) for a write that a rename ends, opened
 * for writing; -1 with errno where none could be made. O_EXCL: a name already there (a link planted
 * in a shared directory such as /tmp) is never followed, and another name is tried; the mode is 0666
 * less the umask, as a plain file's (mkstemp's 0600 had kept a cache directory shared by a group
 * from every user but the entry's writer). ocx__is_temp(name, base): 1 when name is such a
 * temporary's for prefix <directory>/base (base "" for "<directory>/"). */
int ocx__open_temp(const char *prefix, char *tmp, size_t cap);
int ocx__is_temp(const char *name, const void *base);
/* Deletes the entry for key_text that `loaded` came from (a binary the driver rejected), unless
 * another process has stored a new one there since. */
void ocx__cache_remove(const char *key_text, const ocx__cache_blob *loaded);
/* The file name an entry has (tests corrupt it on purpose). */
void ocx__cache_path(const char *key_text, char *out, size_t cap);

/* ---- kernels.c (generated from the files in cl/) --------------------------------------------------------- */
typedef struct ocx__source {
    const char *name; /* file name without .cl: "vector" */
    const char *text; /* the OpenCL C source */
    const char *hash; /* 16 hex digits of XXH64 over text */
} ocx__source;
extern const ocx__source ocx__sources[];
extern const size_t ocx__source_count;
const ocx__source *ocx__source_find(const char *name);

/* ---- context.c / stream.c ----------------------------------------------------------------------- */
typedef struct ocx__program ocx__program; /* in-memory program cache entry (program.c) */

struct ocx_stream_s {
    ocx_context *ctx;
    cl_command_queue queue;
    int is_default;
    int profiling;        /* the queue has CL_QUEUE_PROFILING_ENABLE (ocx's own always; a caller's may not) */
    pthread_mutex_t lock; /* guards scratch, from ocx__stream_scratch until the user's last enqueue */
    cl_mem scratch;       /* reductions' partial results, GEMM's operand copies and split-K partials */
    size_t scratch_bytes;
    cl_mem tally;         /* one-launch reductions' counter of finished work-groups (ocx__stream_tally) */
};

struct ocx_context_s {
    cl_platform_id platform;
    cl_device_id device;
    int device_retained;        /* ocx_context_create_from_cl: the caller's device (a sub-device's
                                   reference counts), released by ocx_context_destroy */
    cl_context context;
    ocx_device_info info;
    ocx_stream stream;          /* the default stream */
    pthread_mutex_t lock;       /* guards programs, stats */
    /* guards staging, held through a staged transfer's waits: not `lock`, which every launch takes
     * (a blocking transfer waiting on an event that another thread's launch completes deadlocked) */
    pthread_mutex_t staging_lock;
    ocx__program *programs;     /* in-memory program cache (list) */
    ocx_context_stats stats;
    char *device_key;           /* platform, device, vendor, driver, ocx version: for cache keys */
    int hold_events;            /* every command's event is kept until it is done (PoCL: ocx__event_drop) */
    cl_mem staging;             /* pinned host staging (CL_MEM_ALLOC_HOST_PTR), lazily made */
    void *staging_ptr;
    size_t staging_bytes;
    struct ocx__profiles *profiles; /* profile files found for this device (profile.c), lazily loaded */
    atomic_int fuse_std_refused; /* reduce.c: the device failed to build a one-launch reduction as
                                    OpenCL C 2.0 or 3.0 (FENCE 3), so reductions take two launches */
};

/* Resolves NULL to the default stream and checks that the stream belongs to ctx. */
ocx_status ocx__stream_resolve(ocx_context *ctx, ocx_stream *stream, cl_command_queue *queue);
/* The stream's scratch buffer, at least `bytes` long, with stream->lock taken (NULL stream: the
 * default one, returned in *out_stream). The caller enqueues everything that uses the buffer, then
 * unlocks: commands on one in-order stream run in order, so the next user finds the buffer free.
 * On failure the lock is not held. */
ocx_status ocx__stream_scratch(ocx_context *ctx, ocx_stream *stream, size_t bytes, ocx_stream **out_stream,
                               cl_mem *scratch);
/* The stream's counter for one-launch reductions (cl/reduce.cl's FUSE), with stream->lock held (as
 * ocx__stream_scratch leaves it): a u32, zero when made and set back to zero by each launch that
 * counts on it, so zero whenever the stream's next command starts (a launch that never finished,
 * after a device fault, would leave it otherwise; the context's queues fail from then on). */
ocx_status ocx__stream_tally(ocx_context *ctx, ocx_stream *s, cl_mem *tally);
/* Releases the stream's scratch buffer (its lock held); the next ocx__stream_scratch makes a new one. */
void ocx__stream_scratch_drop(ocx_stream *s);
/* The lock and scratch of a stream (created ones and the context's default): init returns 0 on
 * success; fini releases the scratch buffer and the queue. */
int ocx__stream_init(ocx_stream *s);
void ocx__stream_fini(ocx_stream *s);

/* ---- buffer.c ----------------------------------------------------------------------------------- */
struct ocx_buffer_s {
    cl_context context; /* for mismatch checks only (not retained: mem keeps it alive) */
    cl_mem mem;         /* retained */
    ocx_dtype dtype;
    size_t offset;      /* element offset inside mem */
    size_t length;      /* elements */
    /* The memory object whose storage mem is (a wrapped sub-buffer's parent, else mem itself) and
     * mem's first byte in it: buffers overlap only within one root (ocx__overlap). Not retained. */
    cl_mem root;
    size_t root_byte;
};
/* Byte position of element `elem` of buf (counted from its view's start) inside buf->root. */
size_t ocx__root_byte(const ocx_buffer *buf, size_t elem);

/* ---- args.c: the one argument checker ---------------------------------------------------------- */
ocx_status ocx__check_context(const ocx_context *ctx);
/* Sets an enqueueing call's out-event to NULL (so that a failure leaves it so), unless it is an entry
 * of the wait list (one variable chaining calls: wait = &ev, event = &ev): that entry is read by the
 * enqueue, which then overwrites it; on failure the caller keeps it. */
void ocx__event_clear(ocx_event *event, size_t num_wait, const ocx_event *wait);
/* Checks wait list shape: num_wait > 0 needs a non-NULL array without NULL events, each of ctx's
 * context (ctx NULL: any). q: the queue the caller enqueues on, behind the wait list (NULL: the
 * caller waits for the events on the host); each event's queue other than q that still holds it
 * unsubmitted is flushed, as OpenCL requires of a wait across queues. */
ocx_status ocx__check_wait(const ocx_context *ctx, cl_command_queue q, size_t num_wait, const ocx_event *wait);
/* clWaitForEvents, answering CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST whenever an event has
 * failed, which not every driver does (NVIDIA's returns CL_SUCCESS for a failed user event). Every
 * wait in ocx goes through it. */
cl_int ocx__wait_events(cl_uint num, const cl_event *events);
/* Events of ours that nobody waits for. PoCL 3.1 frees a command's event inside
 * pocl_update_event_failed and then locks it ("PTHREAD ERROR in pocl_update_event_failed():
 * Invalid argument (22)" and an abort) when the command failed because an event it waited for,
 * in its wait list or ahead of it in the queue, failed, and PoCL's own reference was the last:
 * two launches behind a user event later set to a negative status were enough, even with no
 * event asked for. On such a platform (ctx->hold_events: PoCL) every enqueue asks for its event
 * (ocx__event_want) and ocx__event_drop holds it until it completed, or, failed, until ctx is
 * destroyed; elsewhere (ctx non-NULL) it is released at once. With ctx NULL (ocx_event_release: a
 * caller's event, of an unknown platform) a pending event is held too, and a failed one until its
 * queue is finished (at once where that was: its stream destroyed). */
static inline int ocx__event_want(const ocx_context *ctx, const ocx_event *event)
{
    return event != NULL || ctx->hold_events;
}
void ocx__event_drop(const ocx_context *ctx, cl_event ev);
/* After an enqueue that asked for ev as ocx__event_want said: *event = ev when the caller asked
 * for it, else ocx__event_drop. */
void ocx__event_give(const ocx_context *ctx, ocx_event *event, cl_event ev);
/* Releases every held event that ctx enqueued (non-NULL: its queues have finished,
 * ocx_context_destroy), every one of queue `finished` (non-NULL: after clFinish on it, whoever
 * released the event), and any other that completed. */
void ocx__events_release_held(const ocx_context *ctx, cl_command_queue finished);
/* Marks q a live stream's queue, until ocx__events_release_held names it finished: a failed event
 * that a caller releases after that is released at once (ocx__event_drop). */
ocx_status ocx__queue_live(cl_command_queue q);
/* For blocking calls: checks the wait list, then waits for it on the host, before the call enqueues
 * anything. An event that fails meanwhile fails the call with nothing of ours behind it. (A command
 * of ours that failed behind it returned OK from a blocking PoCL read, data unread; and where we
 * released such a failed command's event as the wait returned, PoCL 3.1's pocl_update_event_failed,
 * still running on the thread that failed the event, locked the freed event: "PTHREAD ERROR ...
 * Invalid argument (22)" and an abort, once in CI.) */
ocx_status ocx__wait_first(const ocx_context *ctx, size_t num_wait, const ocx_event *wait, const char *what);
/* Checks that `buf` (named `name` in messages) is non-NULL, belongs to ctx, and holds the elements
 * offset, offset+inc, …, offset+(n-1)*inc (nothing when n = 0). inc ≥ 1. */
ocx_status ocx__check_range(const ocx_context *ctx, const ocx_buffer *buf, const char *name, size_t offset,
                            size_t n, size_t inc);
/* Checks that the dtype is usable on ctx's device (f64 → fp64, etc.). */
ocx_status ocx__check_dtype_supported(const ocx_context *ctx, ocx_dtype dtype, const char *name);
/* Checks buf's dtype against the expected one. */
ocx_status ocx__check_dtype(const ocx_buffer *buf, const char *name, ocx_dtype expected);
/* 1 when the element ranges [a_off, a_off+a_len) of a and [b_off, …) of b share memory. */
int ocx__overlap(const ocx_buffer *a, size_t a_off, size_t a_len, const ocx_buffer *b, size_t b_off,
                 size_t b_len);

/* Outputs may be exactly their input (same elements, same stride) but must not partly overlap it. */
ocx_status ocx__check_alias(const ocx_buffer *out, size_t out_inc, const ocx_buffer *in, size_t in_inc, size_t n,
                            const char *out_name, const char *in_name);
/* Checks that the dtype is f32, f16 or f64 and usable on the device. */
ocx_status ocx__check_float(const ocx_context *ctx, const ocx_buffer *buf, const char *name);

/* ---- program.c ---------------------------------------------------------------------------------- */
/* Returns a kernel of the program built from `source` with `options` (-D defines); programs are
 * cached in memory per context and on disk. Call without ctx->lock held: the build runs unlocked, so
 * several threads may compile at once. The kernel is owned by the cache: hold ctx->lock while setting
 * its arguments and enqueueing (ocx__launch does). */
ocx_status ocx__kernel_get(ocx_context *ctx, const char *source, const char *options, const char *kernel,
                           cl_kernel *out);
/* Builds a program from source text directly (probes; uncached). */
ocx_status ocx__program_build_text(ocx_context *ctx, const char *text, const char *options, cl_program *out);
void ocx__programs_release(ocx_context *ctx);

/* ---- profile.c: kernel parameters --------------------------------------------------------------- */
/* Each kernel family declares its parameters, their ranges and its constraints once; the operations,
 * and later the tuner, go through this table. */
#define OCX__MAX_PARAMS 32
enum { OCX__LADDER_ALL, OCX__LADDER_POW2, OCX__LADDER_POW2_3 };
typedef struct ocx__param_def {
    const char *name;    /* the -D define */
    int def_gpu, def_cpu;/* built-in defaults per device type */
    int min, max;        /* range (inclusive); the minimum of every kernel parameter must be legal
                            on any device (≥ 1 except for on/off switches) */
    int ladder;          /* the legal values in [min, max] (OCX__LADDER_*): every integer, the powers
                            of two, or those and three times them */
    int host;            /* 1: used by the host only (a size threshold), or passed by it to one
                            kernel's program alone (gemm_dot's, which it fits to the device itself):
                            no -D define in the family's programs, never shrunk by the fitting */
    int added;           /* 1: added after profiles were written; an entry without it takes the
                            table's default for the device type (older entries stay valid) */
} ocx__param_def;
typedef struct ocx__family {
    const char *name;   /* "vector", "reduce", "gemm" */
    const char *source; /* cl/ file it builds */
    unsigned nparams;
    const ocx__param_def *params;
    /* NULL when the values are legal on this device for this dtype, else why not. */
    const char *(*invalid)(const int *values, const ocx_device_info *dev, ocx_dtype dtype);
    /* NULL, or sets the parameters that the others leave unused to fixed values, so that the tuner
     * sees candidates that build the same kernel as one. */
    void (*canonical)(int *values);
    /* NULL, or adjusts the built-in defaults of a size class for this device and dtype and returns 1
     * when it has defaults of its own for that class. A class other than "all" with defaults of its
     * own, other than those "all" has of its own, takes them before a profile's "all" entry (tuned
     * at other shapes) where no source has an entry for the class; any other class takes the first
     * source's "all" entry, else its built-in defaults (the table's where it has none of its own). */
    int (*class_defaults)(const ocx_device_info *dev, ocx_dtype dtype, const char *size_class, int *values);
    /* NULL, or the parameters (NULL-terminated names) that fitting defaults to a device lowers first,
     * in this order, when local memory is the only limit they exceed; then the general rule (the one
     * furthest above its minimum first). */
    const char *const *shrink_first;
    /* NULL, or adjusts the built-in defaults (every class) of a dtype to the device before they are
     * fitted to its limits: a path only some devices have (gemm_mma: wgmma on compute capability
     * 9.0), or a dtype with rules of its own (gemm_mma's f32, which it fits itself). */
    void (*device_defaults)(const ocx_device_info *dev, ocx_dtype dtype, int *values);
    /* NULL, or pairs of parameter names (NULL-terminated) that the tuner's hill-climb also steps
     * together, both doubled or both halved: a tile and the work-items that share it, so that each
     * work-item's part stays the same where a step of either alone changes it or breaks a limit. */
    const char *const *step_together;
    /* NULL, or pairs of parameter names (NULL-terminated) whose values exchanged give the same
     * work in the other orientation (GEMM: the M and N sides of a tiling); the tuner also climbs
     * from the best's mirror image, where no pair is searched on one side only. */
    const char *const *mirror;
    /* The size classes (NULL-terminated; NULL: every one) and dtypes (OCX__DT_ bits) its calls look
     * up: entries and queries for others are refused, as they would never be used. f32_classes:
     * those of f32 calls, where fewer (NULL: classes). */
    const char *const *classes, *const *f32_classes;
    unsigned dtypes;
    /* NULL, or a number that changes whenever what is legal for the family, or its defaults, can
     * change while a context lives (gemm_mma: the wgmma probe's verdicts, OCX_VENDOR_PATHS). A
     * context keeps each lookup's outcome (profile.c: memo) under this number as well. */
    unsigned (*state)(void);
} ocx__family;
#define OCX__DT(dtype) (1u << (dtype)) /* a float dtype's bit */
#define OCX__DT_F32 OCX__DT(OCX_F32)
#define OCX__DT_F16 OCX__DT(OCX_F16)
#define OCX__DT_F64 OCX__DT(OCX_F64)
#define OCX__DT_ALL (OCX__DT_F32 | OCX__DT_F16 | OCX__DT_F64)
/* 1 when fam's calls look parameters up for dtype in size_class. */
int ocx__family_uses(const ocx__family *fam, ocx_dtype dtype, const char *size_class);
/* The 1-D families' classes (vector, reduce: ocx__size_class_1d, and "all"). */
extern const char *const ocx__classes_1d[];
typedef struct ocx__params {
    const ocx__family *family;
    int v[OCX__MAX_PARAMS];
    const char *origin; /* "built-in", "forced" (tuner), or the profile file's path */
} ocx__params;
/* What ocx_last_params() reports, as recorded at each call: the values themselves, formatted only
 * when asked for (formatting every parameter on every call cost PoCL's 64^3 GEMM a fifth of its
 * host time). family NULL: nothing recorded yet. */
typedef struct ocx__params_rec {
    const ocx__family *family;
    int v[OCX__MAX_PARAMS];
    ocx_dtype dtype;
    char size_class[32];
    char source[1024];
    char kernel[32];
} ocx__params_rec;
/* Makes p what ocx_last_params() reports (lookups do; a caller that changes values after its
 * lookup records them again). */
void ocx__params_record(const ocx__params *p, ocx_dtype dtype, const char *size_class);
/* The kernel that ocx_last_params() names, after the operation's lookup (which clears it). */
void ocx__params_kernel(const char *name);
/* The calling thread's record, copied out and put back (around work that is not the caller's). */
void ocx__params_saved(ocx__params_rec *out);
void ocx__params_restore(const ocx__params_rec *in);
/* Parameters for (family, dtype, size class): a forced set (tuner), else the first profile file that
 * has a valid entry for them ($OCX_PROFILE_DIR, user data dir, installed), else the built-in defaults
 * fitted to the device. size_class NULL means "all". Records what was used for ocx_last_params(). */
ocx_status ocx__params_lookup(ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, const char *size_class,
                              ocx__params *out);
/* ocx__params_lookup with the size class "all". */
ocx_status ocx__params_get(const ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, ocx__params *out);
/* Built-in defaults for this device, fitted to its limits (no profile consulted). */
ocx_status ocx__params_default(const ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, ocx__params *out);
/* The same for a size class: the family's class defaults (class_defaults) over them, where legal. */
ocx_status ocx__params_class_default(const ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype,
                                     const char *size_class, ocx__params *out);
/* Checks a candidate: ranges, ladders, and the family's device constraints. NULL when legal. */
const char *ocx__params_check(const ocx__family *fam, const int *values, const ocx_device_info *dev,
                              ocx_dtype dtype);
/* 1 when v is on the ladder `kind` (OCX__LADDER_*); the ladder's next value below v (1 gives 0). */
int ocx__on_ladder(int kind, int v);
int ocx__ladder_below(int kind, int v);
/* Forces `values` for `fam` in the calling thread's next lookups (NULL: stop forcing). */
void ocx__params_force(const ocx__family *fam, const int *values);
/* The thread's forced family (NULL: none) and values, to put back with ocx__params_force. */
void ocx__params_forced(const ocx__family **fam, int *values);
/* Size classes of 1-D operations (vector, reduce) by element count: "small" below OCX__1D_MEDIUM
 * (launch-bound), "medium" below the large bound, "large" from there on. On GPUs the bound is
 * OCX__1D_LARGE (long enough for a GPU's steady-state bandwidth, where the best work-group count
 * differs from the medium sizes'); on CPUs OCX__1D_LARGE_CPU, where an array leaves the caches
 * and the best parameters change: on the 2-core AVX-512 Xeon (PoCL, f32) one stream a work-item
 * in 16 groups ran reductions of 2^18-2^22 elements at 1.05-2.0x the four streams in 4 groups that
 * win from 2^24 on (0.80-0.85x there for max and argmax at 2^24-2^25; tools/profile-ab). A class
 * without a profile entry of its own takes the "all" entry. The tuner measures each class inside
 * these bounds (tune.c), so they are the one place that defines them. */
#define OCX__1D_MEDIUM ((size_t)1 << 16)
#define OCX__1D_LARGE ((size_t)1 << 26)
#define OCX__1D_LARGE_CPU ((size_t)1 << 23)
size_t ocx__1d_large(const ocx_context *ctx);
const char *ocx__size_class_1d(const ocx_context *ctx, size_t n);
/* The element count of dtype from which the vector family's NT parameter takes effect (vector.c);
 * SIZE_MAX where it never does. */
size_t ocx__vector_nt_from(const ocx_context *ctx, ocx_dtype dtype);
/* The rounds of `rounds` that each of `candidates` confirmed together must win against the
 * defaults to be kept (tune.c: confirm()): as many as one no better than them wins at most one
 * time in 32 * candidates; rounds + 1 where no count is that rare. */
int ocx__tune_confirm_wins(int rounds, int candidates);
/* GEMM size classes by M*N*K (gemm.c): below OCX__GEMM_MEDIUM "medium" (the tuner measures it at
 * 512^3), from OCX__GEMM_LARGE on "large" (measured at 8192^3, GPUs only), "all" between (4096^3 on
 * GPUs). Each class holds every GEMM parameter, the direct kernel's threshold included; products
 * small enough for the direct kernel take its work-group shape from the "small" class (128^3). */
#define OCX__GEMM_MEDIUM 2147483648.0    /* 2^31: 1024^3 is medium, 2048^3 is not */
#define OCX__GEMM_LARGE 274877906944.0 /* 2^38 */
/* "short_k": products of at least OCX__GEMM_MEDIUM whose K is at most OCX__GEMM_SHORT_K, whatever
 * their volume (measured at 8192x8192x128, GPUs only). Each output tile then takes a few slices of
 * K, and its fixed costs (set-up, the pipeline's fill, the epilogue) weigh as much as its multiplies:
 * smaller tiles, and more work-groups a multiprocessor to overlap them, suit it (gemm.c, gemm_nv.c). */
#define OCX__GEMM_SHORT_K 256
const char *ocx__gemm_class(double volume, size_t k); /* volume: M*N*K */
/* Every size class name, NULL-terminated (profile.c). */
extern const char *const ocx__size_classes[];
/* double -> IEEE half, rounded once to nearest even (half.c). */
uint16_t ocx__half_from_double(double d);
void ocx__profiles_release(ocx_context *ctx);
/* The fuzz target's entry: parses `data` as a profile for `dev` and looks every family up through
 * it, aborting if anything illegal would reach a kernel. Returns how many lookups the file served. */
int ocx__profile_fuzz(const char *data, size_t size, const ocx_device_info *dev);
struct json_t;
/* ocx-tune --resume: *out is the profile at path as contexts would read it (the same warnings),
 * without the entries they would refuse or not reach (so those are tuned again); NULL where the
 * file is absent. OCX_ERR_IO where it is there but cannot be read, or is refused whole (not valid
 * JSON, another schema or device): such a file is not replaced. The caller owns the jansson root. */
ocx_status ocx__profile_resumable(ocx_context *ctx, const char *path, struct json_t **out);
/* Where ocx-tune's search goes after the defaults: the parameters other devices of this one's type
 * were tuned to, each from its own profile in the directories lookups read (profile.c). */
typedef struct ocx__seed {
    int v[OCX__MAX_PARAMS];
    char from[64];      /* the device's normalized name (cut to fit) */
    int same_vendor;    /* ranking: the same vendor's first, */
    unsigned cu_apart;  /* then the nearest count of compute units (UINT_MAX: none recorded), then by name */
} ocx__seed;
int ocx__profile_seeds(ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, const char *size_class,
                       ocx__seed *out, int cap);
/* Writes root (jansson dump flags) to path through a temporary file beside it and a rename, so a
 * reader sees the old file or the new one whole. The temporary's name is this call's own (process id
 * and a count), so threads of one process writing one path do not share it. 0, else an errno. */
int ocx__json_dump_atomic(struct json_t *root, const char *path, size_t flags);
/* The directory path lies in, into dir[cap] ("." for a bare name, "/" for one at the root). */
void ocx__parent_dir(const char *path, char *dir, size_t cap);
/* The family table, for the tuner and for profile validation. */
extern const ocx__family *const ocx__families[];
int ocx__param(const ocx__params *p, const char *name);
/* The index of the family's parameter `name`, or fam->nparams where it has none. */
unsigned ocx__param_index(const ocx__family *fam, const char *name);
/* Appends sep, name, '=' and v to buf (cap bytes, NUL-terminated; nothing where it would not fit).
 * No snprintf: the kernels' options are built on every call. */
void ocx__append_define(char *buf, size_t cap, const char *sep, const char *name, int v);
/* Appends fam's parameters in v to buf (cap bytes, NUL-terminated) as NAME=value, the first after
 * `first`, the others after `rest`; kernel_only: only the -D defines (host-only ones left out). */
void ocx__params_append(const ocx__family *fam, const int *v, const char *first, const char *rest, int kernel_only,
                        char *buf, size_t cap);
/* Appends " -DNAME=value" for every kernel parameter to buf (cap bytes, NUL-terminated). */
void ocx__params_defines(const ocx__params *p, char *buf, size_t cap);

/* ---- launch.c: the one path every operation takes ----------------------------------------------- */
typedef enum { OCX__ARG_VALUE = 0, OCX__ARG_LOCAL = 1 } ocx__arg_kind;
typedef struct ocx__arg {
    ocx__arg_kind kind;
    size_t size;
    const void *value;
} ocx__arg;
#define OCX__ARG_MEM(buf) ((ocx__arg){OCX__ARG_VALUE, sizeof(cl_mem), &(buf)->mem})
#define OCX__ARG_U64(v) ((ocx__arg){OCX__ARG_VALUE, sizeof(cl_ulong), &(cl_ulong){(cl_ulong)(v)}})
#define OCX__ARG_I32(v) ((ocx__arg){OCX__ARG_VALUE, sizeof(cl_int), &(cl_int){(cl_int)(v)}})
#define OCX__ARG_F32(v) ((ocx__arg){OCX__ARG_VALUE, sizeof(cl_float), &(cl_float){(cl_float)(v)}})
#define OCX__ARG_F64(v) ((ocx__arg){OCX__ARG_VALUE, sizeof(cl_double), &(cl_double){(cl_double)(v)}})
#define OCX__ARG_LOCAL_BYTES(n) ((ocx__arg){OCX__ARG_LOCAL, (n), NULL})

typedef struct ocx__launch_desc {
    const char *source;  /* cl/ file name without .cl */
    const char *options; /* -D defines */
    const char *kernel;  /* kernel function name */
    unsigned dims;
    size_t global[3];
    size_t local[3];     /* all 0: let the driver choose */
    unsigned nargs;
    const ocx__arg *args;
    cl_kernel prebuilt;  /* the kernel, when the caller already has it; NULL: found or built from
                            source, options and kernel */
} ocx__launch_desc;
/* program → kernel → arguments → enqueue after the wait list → event. Empty global range: a marker
 * only (the event still completes after the wait list). */
ocx_status ocx__launch(ocx_context *ctx, ocx_stream *stream, const ocx__launch_desc *d, size_t num_wait,
                       const ocx_event *wait, ocx_event *event);

/* Build options naming the dtype for the kernels (-DDTYPE=0/1/2, -DHAS_FP64=1 where usable). */
void ocx__dtype_defines(const ocx_context *ctx, ocx_dtype dtype, char *buf, size_t cap);
/* Work-group count for a grid-stride kernel: enough groups for `items`, at most `per_cu` per
 * compute unit, at least one. */
size_t ocx__grid_groups(const ocx_context *ctx, size_t items, size_t wg, size_t per_cu);
/* Work-items that cover n contiguous elements in vectors of vw: a vector each, the tail's elements
 * (fewer than a vector) on the first items too (cl/vector.cl's TAIL_LOOP, cl/reduce.cl's FOR_TAIL). */
size_t ocx__vector_items(size_t n, size_t vw);
/* The elements a vector holds for dtype, where the parameter VW counts f32/f16 elements: f64 takes
 * half as many, the same 16 bytes as f32 (H200, 2^28 f64: add 2.9 TB/s with double4, 4.2 TB/s
 * with double2; dot 3.7 against 4.55). */
size_t ocx__vector_width(ocx_dtype dtype, int vw);

/* ---- the kernel families (vector.c, reduce.c, gemm.c): what the tuner searches ------------------ */
extern const ocx__family ocx__family_vector;
extern const ocx__family ocx__family_reduce;
extern const ocx__family ocx__family_gemm;
extern const ocx__family ocx__family_gemm_mma;

/* ---- gemm_nv.c: GEMM on NVIDIA tensor cores --------------------------------------------------- */
/* OCX_VENDOR_PATHS is not "0" (off): NVIDIA's PTX paths may be taken (GEMM's tensor cores, the
 * reductions' device-wide fence). */
int ocx__vendor_paths_on(void);
/* 1 when GEMMs of `dtype` inputs (f16; f32 under OCX_COMPUTE_TF32X3) on ctx's device may take the
 * tensor-core kernel: OCX_VENDOR_PATHS allows it, the device is NVIDIA with compute capability >= 8.0,
 * and that dtype's probe passed in this process (once per device fingerprint). */
int ocx__gemm_nv_ready(ocx_context *ctx, ocx_dtype dtype);
/* In the calling thread, f16 (and TF32X3) GEMMs take the portable kernels (on) or may take the tensor
 * cores (off): the tuner measures the portable family with it. */
void ocx__gemm_nv_suspend(int on);
/* 1 when ocx__gemm_nv_ready (f16) and the instructions are the hardware's, not emulated. */
int ocx__gemm_nv_hardware(ocx_context *ctx);
/* Build options of the program that holds the kernels of cl/gemm_nv_mma.cl (mma_peak, wgmma_peak:
 * peaks.c); *wgmma_n: the parameters' wgmma width WN where they take wgmma, else 0. */
ocx_status ocx__gemm_nv_peak_options(ocx_context *ctx, char *options, size_t cap, int *wgmma_n);
/* Runs gemm.c's argument list (row-major view, m x n per entry, `batch` entries) through the
 * tensor-core kernel with the parameters of `size_class` (gemm.c's classes by M*N*K) for inputs of
 * `dtype` (f16, or f32 as three TF32 products). akf/bkf: the operands' fast dimensions; flags bits
 * 1/2: A/B aligned to 16 bytes (8 f16 or 4 f32 elements). */
ocx_status ocx__gemm_nv_launch(ocx_context *ctx, ocx_stream *stream, const char *size_class, size_t m, size_t n,
                               size_t batch, int akf, int bkf, ocx_dtype dtype, ocx_dtype cdtype, unsigned nargs,
                               const ocx__arg *args, size_t num_wait, const ocx_event *wait, ocx_event *event);

/* In the calling thread, ocx__launch builds the kernel and returns without enqueueing (on) or works
 * normally (off). The tuner compiles candidates ahead of timing with it; wait lists and events are
 * then ignored (*event stays NULL). */
void ocx__launch_build_only(int on);
int ocx__launch_is_build_only(void);
/* In the calling thread, programs compiled from source are not written to the disk cache (on), or
 * are (off): the tuner's candidates are not. Returns the setting it replaces. */
int ocx__program_no_store(int on);

size_t ocx__round_up(size_t x, size_t m);
/* Monotonic wall clock in seconds; a qsort comparison of doubles; the median of n values (sorts
 * them; -1 when n is 0). */
double ocx__now_s(void);
int ocx__cmp_double(const void *a, const void *b);
double ocx__median(double *v, int n);
size_t ocx__div_up(size_t x, size_t m);

#endif
