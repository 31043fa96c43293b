/*
 * ocx.h — the whole public interface of libocx, a vendor-neutral compute library on OpenCL 1.2.
 *
 * Reading guide
 *   - Every fallible call returns an ocx_status: OCX_OK (0) or a negative error. New objects come back
 *     through an out-parameter, which is set to NULL on failure.
 *   - ocx_last_error() gives the detailed message of the calling thread's last failure: which argument,
 *     which OpenCL code, the build log.
 *   - Work is enqueued on a stream (an in-order OpenCL command queue). Passing NULL as the stream means
 *     the context's default stream. Every enqueueing call takes a wait list (num_wait, wait) of events
 *     that must complete first, and an optional `event` out-parameter (NULL: none wanted). An event
 *     returned to the caller is owned by the caller: release it with ocx_event_release(). A failed
 *     call sets *event to NULL, except where `event` is itself an entry of the wait list (calls
 *     chained through one variable, `1, &ev, &ev`): the call waits for that event, overwrites the
 *     entry with its own (keep a copy to release the old one), and leaves it as it was on failure.
 *     Events of other streams (or of other queues of the context) may be waited for: ocx flushes the
 *     queue behind such an event where its command is still unsubmitted, as OpenCL requires.
 *     An event of the wait list that has already failed (a negative execution status) fails the call
 *     with OCX_ERR_OPENCL; one that fails later fails the command (ocx_event_wait says so). Fail a
 *     user event only once the calls that wait on it have returned: one failed by another thread
 *     while such a call enqueues, after ocx's check, may leave the command queued for good on
 *     PoCL 3.1 (it never runs a command enqueued behind an event that has already failed), and
 *     everything that waits for it then (finish, destroy) blocks. A
 *     blocking call (ocx_buffer_read/write, ocx_reduce_host) waits for its wait list before it
 *     enqueues anything: an event that fails meanwhile fails the call with OCX_ERR_OPENCL, nothing done.
 *     Behind a command of its stream that fails while it waits, whether a blocking transfer runs is
 *     the driver's choice; where it does not, the call fails (PoCL: OCX_ERR_OPENCL, "did not run";
 *     a driver whose blocking enqueue itself fails says so in its own words).
 *   - Nothing blocks unless its name or documentation says so (blocking reads/writes, finish, wait).
 *   - Objects: create/destroy pairs; every destroy accepts NULL. A context may be used from several
 *     threads at once; a stream should be fed from one thread at a time.
 *
 * Environment read by the library
 *   OCX_DEVICE          device choice (see ocx_device_select)
 *   OCX_CACHE=0         disable the on-disk binary cache; OCX_CACHE_DIR overrides its directory
 *   OCX_LIMIT_WG, OCX_LIMIT_LOCAL_MEM, OCX_DISABLE_FP16, OCX_DISABLE_FP64
 *                       simulate a smaller device (testing portability on a large one); a limit
 *                       of 0, or one above the device's own, changes nothing
 *   OCX_LIMIT_SCRATCH=N a stream's scratch above N bytes fails as out of memory, whatever buffer the
 *                       stream holds (tests of the GEMM's fallbacks; reductions, which need it,
 *                       then fail so); 0: no limit
 *   OCX_PROFILE_DIR     the first directory searched for profiles (ocx_context_profile)
 *   OCX_PROFILE_SYSTEM_DIR  replaces the installed $(datadir)/ocx/profiles in that search (tests;
 *                       a nonexistent directory leaves the shipped profiles out)
 *   OCX_STAGING         host transfers through pinned memory (ocx_buffer_write; README)
 *   OCX_VENDOR_PATHS    NVIDIA's tensor-core path: 0 off, mma.sync, force, emulate, unchecked (README)
 *   OCX_BUILD_OPTIONS, OCX_BUILD_LOG=1
 *                       developers: extra OpenCL build options (-D/-U/-I without an argument, or of
 *                       a macro ocx defines: OCX_ERR_INVALID_ARGUMENT); the build log of every
 *                       program, each then built from source
 *   OCX_GEMM_PARAMS, OCX_VECTOR_PARAMS, OCX_REDUCE_PARAMS, OCX_GEMM_MMA_PARAMS="NAME=V,..."
 *                       developers: override the looked-up kernel parameters (ocx_last_params() lists
 *                       the names; a name given again overrides it); checked like a profile entry,
 *                       and an unknown name, a value that is not a number or one this device cannot
 *                       run fails every call of that family that runs a kernel with
 *                       OCX_ERR_INVALID_ARGUMENT, naming the variable (a call that runs no kernel
 *                       looks nothing up: a vector operation of 0 elements, a GEMM with nothing to
 *                       compute; a reduction of 0 elements runs one, which writes its result)
 *   OCX_QUIET=1         no warnings, on stderr or to a handler (ocx_set_warning_handler).
 */
#ifndef OCX_H
#define OCX_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(OCX_BUILDING_LIBRARY) && defined(__GNUC__)
#define OCX_API __attribute__((visibility("default")))
#else
#define OCX_API
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Version                                                                                        */
/* ---------------------------------------------------------------------------------------------- */
#define OCX_VERSION_MAJOR 0
#define OCX_VERSION_MINOR 1
#define OCX_VERSION_PATCH 0
#define OCX_VERSION_NUMBER (OCX_VERSION_MAJOR * 10000 + OCX_VERSION_MINOR * 100 + OCX_VERSION_PATCH)
#define OCX_VERSION_STRING "0.1.0"

/*! ocx_version_number() : @return OCX_VERSION_NUMBER of the library actually linked. */
OCX_API unsigned ocx_version_number(void);
/*! ocx_version_string() : @return "MAJOR.MINOR.PATCH" of the library actually linked. */
OCX_API const char *ocx_version_string(void);

/* ---------------------------------------------------------------------------------------------- */
/* Status                                                                                         */
/* ---------------------------------------------------------------------------------------------- */
/* X(symbol, value, name, message). The values are pinned: they never change between versions. */
#define OCX_STATUS_LIST(X)                                                                         \
    X(OCX_OK, 0, "ok", "success")                                                                  \
    X(OCX_ERR_INVALID_ARGUMENT, -1, "invalid-argument", "an argument is NULL, zero where it may not be, or out of its domain") \
    X(OCX_ERR_NO_DEVICE, -2, "no-device", "no OpenCL device is available, or none matches the request") \
    X(OCX_ERR_OUT_OF_MEMORY, -3, "out-of-memory", "host or device memory could not be allocated") \
    X(OCX_ERR_BUILD, -4, "build-failure", "an OpenCL program failed to build (the log is in ocx_last_error())") \
    X(OCX_ERR_UNSUPPORTED, -5, "unsupported", "the operation or data type is not supported on this device") \
    X(OCX_ERR_OPENCL, -6, "opencl-error", "an OpenCL call failed (its code is in ocx_last_error())") \
    X(OCX_ERR_IO, -7, "io-error", "a file could not be read or written") \
    X(OCX_ERR_OUT_OF_RANGE, -8, "out-of-range", "a size, offset or stride reaches beyond a buffer") \
    X(OCX_ERR_DTYPE, -9, "dtype-mismatch", "a buffer has the wrong data type for this operation") \
    X(OCX_ERR_CONTEXT_MISMATCH, -10, "context-mismatch", "an object belongs to another context") \
    X(OCX_ERR_INTERNAL, -11, "internal-error", "internal error in ocx (please report it)")

typedef enum ocx_status {
#define OCX_X_ENUM(sym, val, name, msg) sym = val,
    OCX_STATUS_LIST(OCX_X_ENUM)
#undef OCX_X_ENUM
} ocx_status;

/*! ocx_status_name() : @return a short stable name ("out-of-range"), or "unknown-status". Never NULL. */
OCX_API const char *ocx_status_name(ocx_status status);
/*! ocx_status_message() : @return a one-line description of the status. Never NULL. */
OCX_API const char *ocx_status_message(ocx_status status);
/*! ocx_last_error() :
 *  @return the detailed message of the last failed call made by this thread (empty string if none).
 *  The text is thread-local and valid until the thread's next failing ocx call. Never NULL. */
OCX_API const char *ocx_last_error(void);
/*! ocx_set_warning_handler() : where the library's warnings go (a profile entry refused, a cache
 *  that cannot be written, a vendor path that failed its probe, …). NULL, the default: stderr, as
 *  "ocx: warning: <message>". A handler gets each warning as one line without the prefix or a
 *  newline, on the thread that warned (several may call it at once), and must not call back into
 *  ocx. Process-wide; the last call wins, and once it returns no call of the handler it replaced
 *  is still running (its `user` may be freed). OCX_QUIET=1 silences warnings either way. */
typedef void (*ocx_warning_fn)(const char *message, void *user);
OCX_API void ocx_set_warning_handler(ocx_warning_fn handler, void *user);

/* ---------------------------------------------------------------------------------------------- */
/* Data types                                                                                     */
/* ---------------------------------------------------------------------------------------------- */
typedef enum ocx_dtype {
    OCX_F32 = 0, /* float */
    OCX_F16 = 1, /* IEEE half, stored as uint16_t on the host; arithmetic in f32 unless stated */
    OCX_F64 = 2, /* double, where the device has cl_khr_fp64 */
    OCX_I32 = 3, /* int32_t */
    OCX_U32 = 4  /* uint32_t */
} ocx_dtype;
#define OCX_DTYPE_COUNT 5

/*! ocx_dtype_size() : @return bytes per element, 0 for an unknown dtype. */
OCX_API size_t ocx_dtype_size(ocx_dtype dtype);
/*! ocx_dtype_name() : @return "f32", "f16", … or "unknown". Never NULL. */
OCX_API const char *ocx_dtype_name(ocx_dtype dtype);

/* ---------------------------------------------------------------------------------------------- */
/* Devices                                                                                        */
/* ---------------------------------------------------------------------------------------------- */
typedef enum ocx_device_type {
    OCX_DEVICE_OTHER = 0,
    OCX_DEVICE_GPU = 1,
    OCX_DEVICE_CPU = 2,
    OCX_DEVICE_ACCELERATOR = 3
} ocx_device_type;

/* Capabilities after simulated limits (OCX_LIMIT_*, OCX_DISABLE_*) are applied. */
typedef struct ocx_device_info {
    size_t index;                 /* position in the flat list of all devices (SIZE_MAX for a context
                                     from ocx_context_create_from_cl on a device not in that list) */
    unsigned platform_index, device_index; /* platform number, device number inside the platform */
    ocx_device_type type;
    char name[256];               /* as the driver reports it */
    char normalized_name[256];    /* lower case, [a-z0-9-], PoCL's "pthread-"/"cpu-" prefix removed */
    char vendor[256];
    char driver_version[128];
    char device_version[128];     /* "OpenCL 3.0 ..." */
    char platform_name[256];
    char platform_version[128];
    char fingerprint[17];         /* 16 hex digits: hash of vendor, name, driver, platform, units */
    unsigned compute_units;
    unsigned clock_mhz;
    uint64_t global_mem_bytes;
    uint64_t global_mem_cache_bytes; /* CL_DEVICE_GLOBAL_MEM_CACHE_SIZE (0: none reported; the vector
                                        operations then never use non-temporal stores) */
    uint64_t max_alloc_bytes;
    uint64_t local_mem_bytes;
    /* The most local memory a kernel may declare in its source (__local arrays). local_mem_bytes,
     * except on NVIDIA GPUs of compute capability 8.0 or more, whose OpenCL driver reports 48 KiB
     * but builds and runs kernels with more, up to the architecture's shared memory per thread block
     * less 1 KiB (9.0 and 10.x: 226 KiB; 8.0, 8.7: 162 KiB; others: 98 KiB). Measured on an H200
     * with a 224 KiB array. Memory passed as a __local kernel argument stays within local_mem_bytes. */
    uint64_t local_mem_max_bytes;
    size_t max_work_group_size;
    size_t max_work_item_sizes[3];
    unsigned preferred_vector_width_float;
    int has_fp16;                 /* cl_khr_fp16: half arithmetic in kernels */
    int has_fp64;                 /* cl_khr_fp64 */
    int host_unified_memory;      /* CL_DEVICE_HOST_UNIFIED_MEMORY (CPUs, integrated GPUs) */
    int limited;                  /* 1 when a simulated limit changed any value above */
    unsigned nv_compute_capability[2]; /* NVIDIA GPUs (cl_nv_device_attribute_query): major, minor;
                                          0, 0 elsewhere */
    int device_atomics;           /* 30 or 20: the OpenCL C version (3.0, 2.x) in which the device's
                                     kernels have acquire-release atomics at device scope (3.0: it
                                     lists the features __opencl_c_atomic_order_acq_rel and
                                     __opencl_c_atomic_scope_device); 0: neither. One-launch
                                     reductions ("FUSE", ocx_reduce) count with them where no
                                     vendor path does */
} ocx_device_info;

/*! ocx_device_type_name() : @return "gpu", "cpu", "accelerator" or "other" (also for an unknown
 *  value). Never NULL. */
OCX_API const char *ocx_device_type_name(ocx_device_type type);

/*! ocx_device_count() : number of OpenCL devices over all platforms, in *count.
 *  @return OCX_OK (also when there are none: *count = 0), or OCX_ERR_INVALID_ARGUMENT for NULL. */
OCX_API ocx_status ocx_device_count(size_t *count);

/*! ocx_device_get_info() : fills *info for device `index` of the flat list (0 ≤ index < count).
 *  @return OCX_OK, OCX_ERR_INVALID_ARGUMENT (NULL), OCX_ERR_NO_DEVICE (index out of range). */
OCX_API ocx_status ocx_device_get_info(size_t index, ocx_device_info *info);

/*! ocx_device_select() : resolves a device specification to an index of the flat list.
 *  spec forms: "N" (flat index), "P:D" (platform P, its device D), "gpu" / "cpu" / "accelerator"
 *  (the first device of that type), or any other text with a letter or digit: a case-insensitive
 *  substring of the device's name, vendor, platform name or platform version ("nvidia", "pocl"). Digits alone are always an
 *  index: a "GTX 1080" is chosen by "gtx 1080", not by "1080". Spaces around it do not count. NULL or "" (or only spaces) means: $OCX_DEVICE if set, else the first GPU, else the first
 *  device.
 *  @return OCX_OK, or OCX_ERR_NO_DEVICE with a message naming the spec and listing the devices. */
OCX_API ocx_status ocx_device_select(const char *spec, size_t *index);

/* ---------------------------------------------------------------------------------------------- */
/* Contexts, streams and events                                                                   */
/* ---------------------------------------------------------------------------------------------- */
typedef struct ocx_context_s ocx_context;
typedef struct ocx_stream_s ocx_stream;
typedef struct ocx_buffer_s ocx_buffer;
typedef cl_event ocx_event; /* a plain OpenCL event: interoperable with the caller's own queues */

/*! ocx_context_create() : a context on the device chosen by `spec` (see ocx_device_select; NULL:
 *  $OCX_DEVICE, else the default), with a default stream. *ctx is NULL on failure.
 *  Thread-safe. */
OCX_API ocx_status ocx_context_create(const char *spec, ocx_context **ctx);

/*! ocx_context_create_from_cl() : interop. Wraps the caller's context, device and command queue;
 *  the queue becomes the default stream. All three are retained and released once by
 *  ocx_context_destroy(); the caller keeps its own references. `queue` must belong to `context`
 *  and `device`, and must be in-order. `queue` may be NULL: ocx then creates its own (with
 *  profiling); a queue of the caller's made without CL_QUEUE_PROFILING_ENABLE gives events that
 *  ocx_event_elapsed_ns() cannot time (OCX_ERR_UNSUPPORTED). */
OCX_API ocx_status ocx_context_create_from_cl(cl_context context, cl_device_id device,
                                              cl_command_queue queue, ocx_context **ctx);

/*! ocx_context_destroy() : finishes all streams, releases everything the context holds. Buffers and
 *  streams created on it must be destroyed first (a buffer may still be destroyed afterwards: that
 *  only releases its memory). Accepts NULL. */
OCX_API void ocx_context_destroy(ocx_context *ctx);

/*! ocx_context_device_info() : capabilities of the context's device (with simulated limits). */
OCX_API ocx_status ocx_context_device_info(const ocx_context *ctx, ocx_device_info *info);

/*! ocx_context_cl() : the OpenCL objects underneath (borrowed: do not release). Any out-pointer may be NULL. */
OCX_API ocx_status ocx_context_cl(const ocx_context *ctx, cl_context *context, cl_device_id *device);

/* Counters of where the context's programs came from; they prove that the caches work. */
typedef struct ocx_context_stats {
    uint64_t programs_compiled;    /* built from OpenCL C source */
    uint64_t programs_from_disk;   /* loaded from the on-disk binary cache */
    uint64_t programs_from_memory; /* found in the context's in-memory program cache */
    uint64_t disk_cache_writes;    /* binaries stored in the on-disk cache */
    uint64_t disk_cache_rejected;  /* cache files found bad, deleted and rebuilt */
} ocx_context_stats;
/*! ocx_context_get_stats() : copies the context's counters into *stats. */
OCX_API ocx_status ocx_context_get_stats(const ocx_context *ctx, ocx_context_stats *stats);

/* Vendor-specific kernel paths (bits of ocx_context_vendor_paths()). */
#define OCX_PATH_NV_TENSOR_CORES 1u /* f16-input GEMMs (f32 accumulation) on NVIDIA tensor cores (mma.sync; wgmma on 9.0) */
#define OCX_PATH_NV_TF32X3 2u /* f32 GEMMs under OCX_COMPUTE_TF32X3 on NVIDIA tensor cores (mma.sync) */
/*! ocx_context_vendor_paths() : which vendor-specific paths operations on ctx take, as OCX_PATH_*
 *  bits in *paths. A bit is set when the device is NVIDIA with compute capability >= 8.0 (on any
 *  device under the test modes OCX_VENDOR_PATHS=force and emulate), OCX_VENDOR_PATHS is not "0",
 *  and that path's probe kernel built and computed a known product exactly in this process (this
 *  call, or the path's first GEMM, runs the probe on a stream of its own, with the parameters a
 *  call would take and, where those fail, with the built-in ones: a bad OCX_GEMM_MMA_PARAMS fails
 *  the calls that read it, not the verdict; the verdict is kept per device fingerprint for the
 *  process, except that a probe that ran out of memory leaves none: its call takes the portable
 *  path and a later call probes again, three probes at most; the developers' mode
 *  OCX_VENDOR_PATHS=unchecked skips the probe). On compute capability 9.0 the f16 kernel takes
 *  wgmma (built as sm_90a PTX); where that fails its probe, mma.sync (OCX_VENDOR_PATHS=mma.sync
 *  asks for it). OCX_PATH_NV_TENSOR_CORES has a portable fallback that gives results of the same
 *  accuracy; without OCX_PATH_NV_TF32X3, OCX_COMPUTE_TF32X3 products take the f32 kernels (more
 *  accurate). OCX_VENDOR_PATHS=0 forces the portable kernels. */
OCX_API ocx_status ocx_context_vendor_paths(ocx_context *ctx, unsigned *paths);

/*! ocx_context_stream() : the context's default stream (owned by the context; never destroy it). */
OCX_API ocx_stream *ocx_context_stream(ocx_context *ctx);

/*! ocx_stream_create() : a new in-order stream (command queue with profiling) on ctx's device.
 *  Work on different streams may overlap; order across streams comes from events. */
OCX_API ocx_status ocx_stream_create(ocx_context *ctx, ocx_stream **stream);
/*! ocx_stream_destroy() : waits for the stream's work, then releases it and its scratch buffer (the
 *  reductions' partial results, GEMM's operand copies and split-K partial products). Accepts NULL;
 *  ignores the default stream (the context owns it). Where commands of it failed (an event in a
 *  wait list failed) whose events ocx still holds, it waits 200 ms more before releasing them: the
 *  thread that failed them may still be at work on them (PoCL 3.1 aborted the process otherwise).
 *  So does ocx_context_destroy(), for the events of the context's commands it still holds. */
OCX_API void ocx_stream_destroy(ocx_stream *stream);
/*! ocx_stream_trim() : releases the stream's scratch buffer (NULL: the default stream's), which stays
 *  otherwise until the stream is destroyed, at least as large as the largest use made of it (below
 *  1 MiB it grows by doubling): for a GEMM, its operand copies and split-K partial products together
 *  (ocx_gemm). The next call that needs a scratch buffer creates it again. Work already enqueued
 *  with it is unaffected (OpenCL frees it once that work is done). *released (may be NULL): the
 *  bytes the buffer held, 0 where there was none. Waits for a call that is enqueueing on the stream
 *  from another thread. */
OCX_API ocx_status ocx_stream_trim(ocx_context *ctx, ocx_stream *stream, size_t *released);
/*! ocx_stream_flush() : submits queued work to the device without waiting. NULL: default stream. */
OCX_API ocx_status ocx_stream_flush(ocx_context *ctx, ocx_stream *stream);
/*! ocx_stream_finish() : blocks until all work on the stream is done. NULL: default stream. */
OCX_API ocx_status ocx_stream_finish(ocx_context *ctx, ocx_stream *stream);
/*! ocx_stream_marker() : an event that completes when everything enqueued on the stream so far and
 *  the events of the wait list have completed. *event is owned by the caller; `event` is required
 *  here (NULL: OCX_ERR_INVALID_ARGUMENT), the marker being the event. */
OCX_API ocx_status ocx_stream_marker(ocx_context *ctx, ocx_stream *stream, size_t num_wait,
                                     const ocx_event *wait, ocx_event *event);
/*! ocx_stream_cl_queue() : the command queue underneath (borrowed). NULL stream: NULL. */
OCX_API cl_command_queue ocx_stream_cl_queue(const ocx_stream *stream);

/*! ocx_event_wait() : blocks until all `num` events completed; they may belong to several contexts.
 *  @return OCX_ERR_OPENCL if one failed (after waiting for the others). */
OCX_API ocx_status ocx_event_wait(size_t num, const ocx_event *events);
/*! ocx_event_release() : releases an event returned by ocx. Accepts NULL. An event whose command
 *  has not completed is held until it has (PoCL 3.1 aborted when such a command later failed):
 *  until a later release or ocx_stream_finish() finds it complete. One whose command failed is
 *  held until its stream (the default stream: its context) is destroyed, so a long-lived stream
 *  whose work is often cancelled by failing its wait lists grows by an event a failed command. */
OCX_API void ocx_event_release(ocx_event event);
/*! ocx_event_elapsed_ns() : device time between the start and the end of a completed command's
 *  event, from OpenCL profiling (ocx streams have profiling on; an interop context's own queue may
 *  not: OCX_ERR_UNSUPPORTED). Blocks until the event completes; a failed command's event:
 *  OCX_ERR_OPENCL. */
OCX_API ocx_status ocx_event_elapsed_ns(ocx_event event, uint64_t *ns);

/* ---------------------------------------------------------------------------------------------- */
/* Buffers                                                                                        */
/* ---------------------------------------------------------------------------------------------- */
/* A buffer is a typed range of device memory: (cl_mem, dtype, element offset, length in elements).
 * Offsets and counts in every call are in elements, relative to the buffer (or view). Each call
 * checks them against the length and fails with OCX_ERR_OUT_OF_RANGE without touching memory. */

/*! ocx_buffer_create() : `length` elements of `dtype` on ctx's device (contents undefined). length
 *  0 is allowed (an empty buffer). OCX_F64 needs fp64 on the device (else OCX_ERR_UNSUPPORTED). */
OCX_API ocx_status ocx_buffer_create(ocx_context *ctx, ocx_dtype dtype, size_t length, ocx_buffer **buf);

/*! ocx_buffer_wrap() : interop. A buffer over the caller's cl_mem, which is retained (and released
 *  once by ocx_buffer_destroy). `length` elements must fit in the cl_mem's size. */
OCX_API ocx_status ocx_buffer_wrap(ocx_context *ctx, cl_mem mem, ocx_dtype dtype, size_t length,
                                   ocx_buffer **buf);

/*! ocx_buffer_view() : a view of `length` elements of `parent` from element `offset`, sharing its
 *  memory (retained: the view stays valid after the parent is destroyed). Views of views add up. */
OCX_API ocx_status ocx_buffer_view(const ocx_buffer *parent, size_t offset, size_t length,
                                   ocx_buffer **view);

/*! ocx_buffer_destroy() : releases the buffer's reference to its memory. Accepts NULL. The caller
 *  must make sure no enqueued work still uses it (OpenCL keeps the memory alive until it is done). */
OCX_API void ocx_buffer_destroy(ocx_buffer *buf);

/*! Accessors (NULL buffer: 0 / NULL). ocx_buffer_cl_mem() is borrowed; ocx_buffer_offset() is the
 *  element offset of a view inside that cl_mem. */
OCX_API size_t ocx_buffer_length(const ocx_buffer *buf);
OCX_API ocx_dtype ocx_buffer_dtype(const ocx_buffer *buf);
OCX_API size_t ocx_buffer_offset(const ocx_buffer *buf);
OCX_API cl_mem ocx_buffer_cl_mem(const ocx_buffer *buf);

/*! ocx_buffer_write() : copies `count` elements from host `src` to buf[offset…]. Blocking: returns
 *  when `src` may be reused. OCX_STAGING=1 sends large transfers to a discrete GPU through pinned
 *  staging memory (off by default: measured no faster on an H200, see README); such a transfer
 *  runs in chunks, and its `event` is a marker after the last one: complete on return like any
 *  blocking call's, but ocx_event_elapsed_ns() then times the marker, not the transfer. A context
 *  has one staging buffer: while another stream's transfer uses it, a transfer goes directly. */
OCX_API ocx_status ocx_buffer_write(ocx_context *ctx, ocx_stream *stream, ocx_buffer *buf, size_t offset,
                                    size_t count, const void *src, size_t num_wait,
                                    const ocx_event *wait, ocx_event *event);
/*! ocx_buffer_write_async() : like ocx_buffer_write but returns at once; `src` must stay valid and
 *  unchanged until the work completes (wait on `event`, or finish the stream). */
OCX_API ocx_status ocx_buffer_write_async(ocx_context *ctx, ocx_stream *stream, ocx_buffer *buf,
                                          size_t offset, size_t count, const void *src, size_t num_wait,
                                          const ocx_event *wait, ocx_event *event);
/*! ocx_buffer_read() : copies `count` elements of buf[offset…] to host `dst`. Blocking (staged
 *  as ocx_buffer_write is, with the same kind of event). */
OCX_API ocx_status ocx_buffer_read(ocx_context *ctx, ocx_stream *stream, const ocx_buffer *buf,
                                   size_t offset, size_t count, void *dst, size_t num_wait,
                                   const ocx_event *wait, ocx_event *event);
/*! ocx_buffer_read_async() : returns at once; `dst` is filled when the work completes. */
OCX_API ocx_status ocx_buffer_read_async(ocx_context *ctx, ocx_stream *stream, const ocx_buffer *buf,
                                         size_t offset, size_t count, void *dst, size_t num_wait,
                                         const ocx_event *wait, ocx_event *event);
/*! ocx_buffer_fill() : sets `count` elements from `offset` to the one element at host `value`
 *  (of the buffer's dtype; copied before the call returns). Asynchronous. Where `count` is 0,
 *  `value` may be NULL, as the host pointers of the transfers above may. */
OCX_API ocx_status ocx_buffer_fill(ocx_context *ctx, ocx_stream *stream, ocx_buffer *buf, size_t offset,
                                   size_t count, const void *value, size_t num_wait,
                                   const ocx_event *wait, ocx_event *event);
/*! ocx_buffer_copy() : device-to-device copy of `count` elements between buffers of one dtype.
 *  Overlapping ranges of the same memory are rejected (OCX_ERR_INVALID_ARGUMENT). Asynchronous. */
OCX_API ocx_status ocx_buffer_copy(ocx_context *ctx, ocx_stream *stream, const ocx_buffer *src,
                                   size_t src_offset, ocx_buffer *dst, size_t dst_offset, size_t count,
                                   size_t num_wait, const ocx_event *wait, ocx_event *event);

/* ---------------------------------------------------------------------------------------------- */
/* Half-precision helpers (host side)                                                             */
/* ---------------------------------------------------------------------------------------------- */
/*! ocx_half_from_float() : IEEE binary16 bits nearest to f (round to nearest even; inf/NaN kept). */
OCX_API uint16_t ocx_half_from_float(float f);
/*! ocx_half_to_float() : the exact float value of binary16 bits h. */
OCX_API float ocx_half_to_float(uint16_t h);

/* ---------------------------------------------------------------------------------------------- */
/* Kernel parameters, device profiles and tuning                                                  */
/* ---------------------------------------------------------------------------------------------- */
/* Each kernel family ("vector", "reduce", "gemm", and "gemm_mma": f16 GEMM on NVIDIA tensor cores,
 * see ocx_context_vendor_paths) has parameters (work-group size, vector width,
 * tiles, …) chosen per (family, dtype, size class). They come from the first of:
 *   1. $OCX_PROFILE_DIR/<device>.json
 *   2. $XDG_DATA_HOME/ocx/profiles/<device>.json (else ~/.local/share/ocx/profiles/<device>.json)
 *   3. the installed $(datadir)/ocx/profiles/<device>.json (profiles shipped with ocx)
 *   4. built-in defaults per vendor and device type,
 * where <device> is ocx_device_info.normalized_name and a profile is a JSON file written by ocx-tune.
 * Entries are checked against the device's limits (a parameter added in a later version may be
 * absent: it takes its built-in value); a bad file falls back to the next source and a bad entry
 * counts as absent (see "all" below), each with one warning, so no profile can make a kernel fail.
 * Files are read once per context: a new profile takes effect in contexts created after it is
 * written, without rebuilding ocx.
 * Size classes: vector operations and reductions of n elements are "small" below 2^16, "medium"
 * below 2^26 and "large" from 2^26 on (on CPUs from 2^23 on: beyond the caches); GEMM products of M*N*K below 2^31 are "medium", the others
 * "short_k" where K <= 256, else "large" from 2^38 on and "all" between; those small enough for the
 * direct kernel (up to DIRECT^3, a parameter of their class: 16^3 on CPUs by default) take the
 * "small" class's work-group shape up to 160^3, and their own class's above it (a DIRECT above
 * 160 from OCX_GEMM_PARAMS or a profile).
 * A profile without an entry for a class uses its "all" entry (the source's, before the next
 * source is consulted), except where the class has built-in defaults of its own on the device
 * (GEMM's "medium" and "short_k" on GPUs, f32 "large" on NVIDIA's, the TF32X3 tiles' "large"; on CPUs
 * GEMM's "small" and the vector family's "large"): those come before any source's "all" entry. */

typedef struct ocx_params_info {
    char family[32];     /* "vector", "reduce", "gemm", "gemm_mma" */
    char dtype[8];       /* "f32", … */
    char size_class[32]; /* "small", "medium", "large", "all", or a family's own class */
    char source[1024];   /* "built-in", "forced" (during tuning), "environment (OCX_<FAMILY>_PARAMS)"
                          * or the profile file's path (a longer path cut to 1023 bytes) */
    char params[512];    /* "WG=256 VW=4 …", as a profile entry or OCX_<FAMILY>_PARAMS gives them
                          * (so they can be fed back): vector operations' and reductions' VW counts
                          * 4-byte words (f64 kernels take half as many doubles), and NT=1 lets
                          * add, sub, mul, div, fill and copy (one dtype, not f16, contiguous)
                          * store a result apart from their inputs past the caches where it is
                          * at least half the device's global memory cache or 64 MiB, whichever
                          * is less; from ocx_last_params(), NT=0 for a call that took none */
    char kernel[32];     /* the kernel that computed the result (ocx_last_params; empty from
                          * ocx_context_params): "gemm_tiled", "gemm_direct", "gemm_dot" (matrix-vector
                          * products), "gemm_cols", "gemm_mma" (tensor cores) for ocx_gemm; the
                          * operation's own for vector operations ("vadd", "axpby", …); for reductions
                          * "part_sum", … where one launch computes the result (one work-group, or
                          * FUSE), "final_sum", … where a second launch does. A call that runs no kernel (a GEMM with M,
                          * N or the batch 0, or alpha = 0 and beta = 1; a vector operation of 0
                          * elements) looks nothing up and leaves the record as it was. */
} ocx_params_info;

/*! ocx_last_params() : the parameters the calling thread's last parameterised operation used, and
 *  where they came from. @return OCX_ERR_INVALID_ARGUMENT when the thread ran none yet. */
OCX_API ocx_status ocx_last_params(ocx_params_info *info);

/*! ocx_context_params() : the parameters an operation of `family` on `dtype` (f32, f16 or f64) in
 *  `size_class` (NULL: "all"; else one of the classes above) would use on ctx's device, without
 *  running anything. An unknown family, dtype or class, or one the family never looks up ("short_k"
 *  belongs to gemm and gemm_mma's f16 alone; gemm_mma has neither f64 nor "small"):
 *  OCX_ERR_INVALID_ARGUMENT; f64 on a device without cl_khr_fp64: OCX_ERR_UNSUPPORTED. */
OCX_API ocx_status ocx_context_params(ocx_context *ctx, const char *family, ocx_dtype dtype,
                                      const char *size_class, ocx_params_info *info);

typedef struct ocx_profile_info {
    char path[1024];          /* a longer path cut to 1023 bytes */
    char driver_version[128]; /* the driver the profile was measured with */
    char date[64];
    size_t entries;           /* those that lookups can use on this device (no f64 entry where
                                 it has no cl_khr_fp64) */
    int stale;                /* 1: measured with another driver version (still used) */
    unsigned compute_units;   /* those of the device it was measured on (0: not recorded); a
                                 profile is matched by vendor and name, so a CPU of another core
                                 count may use it (ocx-info says so) */
} ocx_profile_info;

/*! ocx_context_profile() : the index-th usable profile file for ctx's device, in search order.
 *  @return OCX_ERR_IO when there is no such file. */
OCX_API ocx_status ocx_context_profile(ocx_context *ctx, size_t index, ocx_profile_info *info);

/*! ocx_profile_user_path() : where ocx-tune writes ctx's device profile by default:
 *  $XDG_DATA_HOME/ocx/profiles/<device>.json, else ~/.local/share/ocx/profiles/<device>.json (~:
 *  $HOME where absolute, else the user's home directory in the password database; a relative
 *  XDG_DATA_HOME is ignored). @return OCX_ERR_IO where there is neither an absolute XDG_DATA_HOME
 *  nor a home directory, OCX_ERR_INVALID_ARGUMENT where cap is too small; path is written only on
 *  success. */
OCX_API ocx_status ocx_profile_user_path(const ocx_context *ctx, char *path, size_t cap);

/* Progress of a tuning run, passed to ocx_tune_options.progress after every candidate. */
typedef struct ocx_tune_progress {
    const char *family, *dtype, *size_class; /* the entry being tuned */
    size_t entry, entries;                   /* its number, of how many */
    unsigned tried, failed;                  /* candidates of this entry so far, each counted
                                                once (not the confirmation's measurements) */
    double best_rate, default_rate;          /* in `unit`; ≤ 0: none yet */
    const char *unit;                        /* "GB/s" or "GFLOP/s" */
    double elapsed_s, budget_s;              /* of the whole run */
    const char *message;                     /* "preparing", "done", "stopped" (a stop cut the entry
                                                short: left out), "candidate failed to build",
                                                "candidate failed to run or verify", "seeds from
                                                the profiles of …" (other devices' tuned
                                                parameters, measured next), "confirming …" (a
                                                candidate measured again beside the defaults,
                                                with the rounds it won), or NULL (a candidate
                                                measured) */
    const char *candidate;                   /* the searched parameters of the candidate just
                                                measured or failed ("MWG=128 NWG=256 …", as
                                                OCX_<FAMILY>_PARAMS takes them; valid during the
                                                call only), else NULL */
    double rate;                             /* that candidate's rate in `unit` (≤ 0: it failed) */
} ocx_tune_progress;

typedef struct ocx_tune_options {
    const char *families;  /* comma-separated: "vector,reduce,gemm,gemm_mma"; NULL or "": all (the
                              f32 "gemm_mma" entries, for OCX_COMPUTE_TF32X3, only when both this
                              and dtypes name them; never "short_k", which those products leave to
                              the f32 kernels) */
    const char *dtypes;    /* comma-separated: "f32,f16,f64"; NULL or "": f32 and f16 (quick: f32) */
    double budget_s;       /* wall-clock budget of the whole run; ≤ 0: 60 s */
    int quick;             /* smaller problems and fewer repetitions */
    const char *out_path;  /* the profile to write (required): see ocx_profile_user_path() */
    int resume;            /* keep the entries already in out_path that contexts would read (same device
                            * and driver; others dropped) and do the rest */
    void (*progress)(void *user, const ocx_tune_progress *p);
    void *user;
    volatile int *stop;    /* set *stop to 1 (a signal handler may) to end early */
    const char *classes;   /* comma-separated size classes: "all,small,medium,large,short_k"; NULL or
                              "": every class but "short_k" (quick: "all", and on CPUs vector's
                              and reduce's "large" too). "medium" is GEMM's alone (vector and
                              reduce have no such entry: their "all" serves those sizes). GEMM's
                              "large" is tuned on GPUs only.
                              "short_k" (GEMM, K <= 256) is tuned on GPUs and only when named. */
    unsigned long long seed; /* the order candidates are sampled in: each entry draws from its own
                              generator seeded from this and its place in the run, so a seed
                              replays a run's candidates (cut where the budget differs); 0: a
                              seed from the clock */
} ocx_tune_options;

/*! ocx_tune() : measures the kernel families on ctx's device and writes the best parameters found
 *  into a profile at opt->out_path, rewritten after every finished entry (so an interrupted run
 *  keeps the entries it finished, not the one it was in, and `resume` continues it, tuning again
 *  any entry that contexts would refuse). out_path must be a regular file, absent, or a symbolic
 *  link to one (written through), in a directory we may write: checked before any tuning. One run
 *  at a time writes a file: a run holds a lock on ".NAME.lock" beside the file written (removed at
 *  the end; a process that dies releases it and leaves the file, empty and harmless), and a second run on the same file, in this process or
 *  another, fails with OCX_ERR_IO (where no lock can be had, a file system without locks or another
 *  user's lock file, the run goes on unlocked, with a warning). Every candidate's result is checked
 *  against a host reference before it is timed. Each entry's search starts from the built-in
 *  defaults, then tries up to three seeds (GPUs: one): the parameters other devices of this one's
 *  type were tuned to, from their entries for the same family, dtype and size class in their
 *  profiles on the search path (a profile that records no device "type" gives none). Blocks for
 *  about opt->budget_s. Contexts created afterwards read the profile when it lies on the search
 *  path (see above).
 *  Candidates are timed by profiling events on ctx's default stream, whose queue must have
 *  profiling (an interop context's own queue may not).
 *  @return OCX_OK (also when *stop ended it: the entries finished are written, nothing if none was,
 *  a resumed file then left as it was),
 *  OCX_ERR_INVALID_ARGUMENT (unknown family, dtype or size class, a list naming none, one with an
 *  empty name ("f32,,f16", a trailing comma) or a name twice, no out_path or
 *  "", a budget_s that is not finite, `resume` under simulated limits: the file's entries are the
 *  whole device's),
 *  OCX_ERR_UNSUPPORTED (nothing asked for is tunable on this device, the default queue has no
 *  profiling, or no entry was finished within the budget), OCX_ERR_OUT_OF_MEMORY (no entry
 *  finished, the last skipped for want of memory or every candidate of it out of memory),
 *  OCX_ERR_IO (out_path unusable, or another run writing it, or something other than an empty lock
 *  file where the lock goes; for `resume`, there but unreadable or not a profile of this version and
 *  device, which is then left as it is). */
OCX_API ocx_status ocx_tune(ocx_context *ctx, const ocx_tune_options *opt);

/* ---------------------------------------------------------------------------------------------- */
/* Measured peaks and the roofline                                                                */
/* ---------------------------------------------------------------------------------------------- */
/* The device's ceilings, measured by micro-kernels (cl/peaks.cl), and the roofline model over them:
 * an operation of arithmetic intensity AI = flops / bytes can reach at most
 *   min(peak FLOP/s, bandwidth × AI),
 * where an operation's bytes are what it reads plus what it writes. Rates are in units of 1e9 per second (GB/s, GFLOP/s). A figure of 0 means "not measured" (f16
 * without cl_khr_fp16, f64 without cl_khr_fp64). Global memory bandwidth and launch latency are
 * measured as clpeak 1.1.2 measures them ("Global memory bandwidth", "Kernel launch latency"), so the
 * two tools can be compared figure for figure. Results are cached per device fingerprint in the
 * binary cache directory as peaks-<fp>.json (peaks-<fp>-quick.json for quick mode; no caching under
 * OCX_CACHE=0) and reused by later calls. */
typedef struct ocx_peaks {
    char fingerprint[17];      /* the device's ocx_device_info.fingerprint */
    int quick;                 /* 1: measured with small sizes (tests); rougher figures */
    int from_cache;            /* 1: this result was read from the cache file, not measured now */
    double global_gbps;        /* global memory bandwidth, the roofline's bandwidth roof: bytes read ÷
                                  time of read kernels in which each work-item sums 16 floatN of an
                                  array (2 GiB on a GPU, 512 MiB on a CPU, at most half the largest
                                  allocation) and writes one float (not counted: 1/(16N) of the
                                  traffic); host clock over back-to-back launches; the faster of
                                  two access patterns, the best width N of 1, 2, 4, 8, 16 */
    unsigned global_width;     /* the float vector width N that gave global_gbps */
    double copy_gbps;          /* copy kernel over the same array, b[i] = a[i]: bytes read + written
                                  ÷ device time (median), best vector width */
    double f32_gflops;         /* FMA throughput (2 flops per mad), best vector width */
    double f16_gflops;         /* 0 unless cl_khr_fp16 */
    double f64_gflops;         /* 0 unless cl_khr_fp64 */
    double h2d_pageable_gbps;  /* blocking clEnqueueWriteBuffer from malloc'd memory (the host's
                                  clock around each call, as a caller waits; median) */
    double d2h_pageable_gbps;
    double h2d_pinned_gbps;    /* from/to a mapped CL_MEM_ALLOC_HOST_PTR buffer */
    double d2h_pinned_gbps;
    double launch_latency_us;  /* kernel launch latency: from enqueue to the start of execution on the
                                  device (profiling CL_PROFILING_COMMAND_START − _QUEUED) of a small
                                  read kernel, one work-group per compute unit, each launch on an idle
                                  queue; mean over 20000 launches (fewer when they take over 3 s) */
    double launch_wall_us;     /* the same launches on the host clock: enqueue until clFinish returns
                                  (median); includes the kernel's run and the wake-up of the host */
    double measure_s;          /* wall time the measurement took (from the original run when cached) */
    double tc_f16_gflops;      /* tensor cores: f16 multiply, f32 accumulate (by the instructions the
                                  GEMM takes: wgmma on compute capability 9.0, else mma.sync; 2 flops
                                  per multiply-add) where ocx_context_vendor_paths() has
                                  OCX_PATH_NV_TENSOR_CORES; else 0. The compute roof of f16 GEMMs
                                  that take that path (ocx_roofline_eval does not apply it by dtype) */
} ocx_peaks;

#define OCX_PEAKS_REFRESH 1u /* measure again even when a cached result exists (and store it) */
#define OCX_PEAKS_QUICK 2u   /* small sizes, few repetitions, FMA at one vector width (the device's preferred, at least 4): rough figures */

/*! ocx_measure_peaks() : fills *out with ctx's device ceilings, from the cache file when one for this
 *  device fingerprint (and capabilities, mode, and tensor-core instruction that OCX_VENDOR_PATHS
 *  leaves the GEMM: none, mma.sync or wgmma) exists and OCX_PEAKS_REFRESH is not set; else
 *  measures them (blocking: a few seconds on a GPU, tens of seconds on a CPU; the device should be
 *  otherwise idle) and stores them. A cache file that does not parse or does not match is replaced.
 *  Uses the default stream; thread-safe like any enqueueing call, but concurrent work skews figures.
 *  @return OCX_OK, OCX_ERR_INVALID_ARGUMENT (NULL, unknown flag bits), OCX_ERR_OUT_OF_MEMORY, or the
 *  error of a failed kernel or transfer. A cache that cannot be written is only a warning. */
OCX_API ocx_status ocx_measure_peaks(ocx_context *ctx, unsigned flags, ocx_peaks *out);

/*! ocx_peaks_cache_path() : the cache file ocx_measure_peaks() uses for ctx's device in the mode of
 *  `flags` ("" when caching is off, and under simulated limits, whose figures are not the device's
 *  and are measured every time). @return OCX_ERR_INVALID_ARGUMENT for NULL, unknown flag bits or
 *  a too small cap; path is written only on success. */
OCX_API ocx_status ocx_peaks_cache_path(const ocx_context *ctx, unsigned flags, char *path, size_t cap);

/* Where one measured operation stands against the roofs. */
typedef struct ocx_roofline {
    double intensity;       /* flops / bytes; 0 when either is 0 (then the op has only one roof) */
    double achieved_gflops; /* flops / ns */
    double achieved_gbps;   /* bytes / ns */
    double peak_gflops;     /* the compute roof used for the dtype (0 when flops = 0) */
    double bound_gflops;    /* min(peak_gflops, bandwidth × intensity); peak_gflops when bytes = 0;
                               0 when flops = 0 */
    double bound_gbps;      /* the bandwidth roof when flops = 0 (pure traffic), else bound / AI */
    double efficiency;      /* achieved / bound as a fraction (1.0 = on the roof; may exceed 1 when
                               caches beat the measured bandwidth) */
    int memory_bound;       /* 1 when the bandwidth roof is the lower one (or the op has no flops) */
} ocx_roofline;

/*! ocx_roofline_eval() : places an operation that moved `bytes` and did `flops` in `ns` nanoseconds
 *  on the roofline of `peaks`, for arithmetic in `dtype` (its compute roof: f32 → f32_gflops; f16 →
 *  the larger of f16_gflops and f32_gflops, since f16 storage computes in f32 unless native; f64 →
 *  f64_gflops; integers → f32_gflops). `bandwidth_gbps` > 0 replaces peaks->global_gbps as the
 *  bandwidth roof (host transfers are bound by the link, not by device memory). Pure arithmetic,
 *  no device work; thread-safe.
 *  @return OCX_OK, or OCX_ERR_INVALID_ARGUMENT: NULL, ns ≤ 0, negative or non-finite bytes/flops,
 *  both 0, a roof it needs that is not positive and finite (f64 on a device without fp64,
 *  unmeasured peaks), or figures beyond a double's range (finite inputs, such as 1e308 flops in a
 *  picosecond, ns = 1e-3, or 1e300 flops over a subnormal byte count); *out is then zeroed. */
OCX_API ocx_status ocx_roofline_eval(const ocx_peaks *peaks, ocx_dtype dtype, double flops, double bytes,
                                     double ns, double bandwidth_gbps, ocx_roofline *out);

/* ---------------------------------------------------------------------------------------------- */
/* Element-wise vector operations                                                                 */
/* ---------------------------------------------------------------------------------------------- */
/* Common rules of this section:
 *   - n elements; n = 0 enqueues nothing but still honours the wait list and returns an event.
 *   - Buffers are typed; all operands of one call have the same dtype (ocx_copy excepted), one of
 *     f32, f16 (storage: arithmetic in f32, one rounding when stored, to nearest even) or f64 (needs
 *     cl_khr_fp64, else OCX_ERR_UNSUPPORTED). Scalars (alpha, beta, value) are given as double and
 *     converted to the arithmetic type.
 *   - incx/incy are element strides ≥ 1, relative to the buffer (or view): element i of x is
 *     x[i*incx]. The last element touched must lie inside the buffer (else OCX_ERR_OUT_OF_RANGE).
 *   - Aliasing: an output may be the very same range as an input (z = x + z, y = a*y + y) through
 *     the same cl_mem (one buffer, its views); any other overlap between an output and another operand is rejected with
 *     OCX_ERR_INVALID_ARGUMENT: ranges are compared whole (from the first to the last element a
 *     stride reaches), and buffers wrapped from sub-buffers of one cl_mem (ocx_buffer_wrap) overlap
 *     where their storage does (OpenCL leaves writing one while reading the other undefined).
 *   - Asynchronous: returns once enqueued on `stream` (NULL: default) after the wait list.
 */

/*! ocx_add(), ocx_sub(), ocx_mul(), ocx_div() : z[i] = x[i] op y[i] for i < n (contiguous). */
OCX_API ocx_status ocx_add(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, const ocx_buffer *y,
                           ocx_buffer *z, size_t num_wait, const ocx_event *wait, ocx_event *event);
OCX_API ocx_status ocx_sub(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, const ocx_buffer *y,
                           ocx_buffer *z, size_t num_wait, const ocx_event *wait, ocx_event *event);
OCX_API ocx_status ocx_mul(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, const ocx_buffer *y,
                           ocx_buffer *z, size_t num_wait, const ocx_event *wait, ocx_event *event);
OCX_API ocx_status ocx_div(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, const ocx_buffer *y,
                           ocx_buffer *z, size_t num_wait, const ocx_event *wait, ocx_event *event);

/*! ocx_axpy() : y[i*incy] = alpha*x[i*incx] + y[i*incy]. */
OCX_API ocx_status ocx_axpy(ocx_context *ctx, ocx_stream *stream, size_t n, double alpha, const ocx_buffer *x,
                            size_t incx, ocx_buffer *y, size_t incy, size_t num_wait, const ocx_event *wait,
                            ocx_event *event);
/*! ocx_axpby() : y = alpha*x + beta*y. beta = 0: y is written without being read (NaN in y does
 *  not leak into the result). */
OCX_API ocx_status ocx_axpby(ocx_context *ctx, ocx_stream *stream, size_t n, double alpha, const ocx_buffer *x,
                             size_t incx, double beta, ocx_buffer *y, size_t incy, size_t num_wait,
                             const ocx_event *wait, ocx_event *event);
/*! ocx_scale() : x[i*incx] = alpha*x[i*incx]. */
OCX_API ocx_status ocx_scale(ocx_context *ctx, ocx_stream *stream, size_t n, double alpha, ocx_buffer *x,
                             size_t incx, size_t num_wait, const ocx_event *wait, ocx_event *event);
/*! ocx_fill() : x[i*incx] = value (rounded once to x's dtype). */
OCX_API ocx_status ocx_fill(ocx_context *ctx, ocx_stream *stream, size_t n, double value, ocx_buffer *x,
                            size_t incx, size_t num_wait, const ocx_event *wait, ocx_event *event);
/*! ocx_copy() : y[i*incy] = x[i*incx]. When the dtypes differ (f32, f16, f64) this is a conversion,
 *  rounded once to nearest even; inf and NaN are preserved, overflow to f16 gives inf; when they
 *  are the same, the elements' bits are copied (NaN payloads too). x and y must not overlap. */
OCX_API ocx_status ocx_copy(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, size_t incx,
                            ocx_buffer *y, size_t incy, size_t num_wait, const ocx_event *wait, ocx_event *event);

/* ---------------------------------------------------------------------------------------------- */
/* Reductions                                                                                     */
/* ---------------------------------------------------------------------------------------------- */
/* Common rules of this section:
 *   - x holds n elements x[i*incx] (incx ≥ 1, relative to the buffer or view), of f32, f16 or f64
 *     (f64 needs cl_khr_fp64, else OCX_ERR_UNSUPPORTED). f16 and f32 accumulate in f32, f64 in f64.
 *   - Accumulation is a tree: each work-item folds a share of x, work-groups combine their items in
 *     local memory, and a second pass combines the work-groups' partials. No long serial sum: an
 *     accumulator adds at most 4096 elements of x in sequence (for any n up to 2^28; beyond, a share
 *     of n / 65536 at most). A short x (up to "SOLO" elements, a reduce parameter) is folded by one
 *     work-group in one launch. Up to "FUSE" elements (a reduce parameter: 2^20 on GPUs, 2^22 on
 *     CPUs), the last work-group of the first pass combines the partials in the same launch (on
 *     CPUs its first work-item alone, for at most 4096 work-groups), where the device orders the
 *     other groups' writes before its count: through OpenCL C's
 *     acquire-release atomics at device scope (ocx_device_info.device_atomics), or on GPUs of
 *     NVIDIA's driver through PTX (unless OCX_VENDOR_PATHS=0); elsewhere two launches
 *     (ocx_last_params() says FUSE=0), and so on a device whose compiler refuses the one-launch
 *     kernel as OpenCL C 2.0 or 3.0 while it builds the two-launch one (one warning; the context
 *     then keeps to two launches; where both builds fail, the call fails with OCX_ERR_BUILD and
 *     no warning, and a later call tries one launch again).
 *   - Semantics: the sum (asum, dot, nrm2) of 0 elements is 0; min, max, argmin and argmax of 0
 *     elements are an error (OCX_ERR_INVALID_ARGUMENT). A NaN in x makes min/max NaN and argmin/argmax
 *     the index of the first NaN; ties give the lowest index (+0 and -0 are a tie: min and max may
 *     return either zero, argmin and argmax the lower index). nrm2 scales wherever squaring would
 *     overflow or underflow, so values near those thresholds do neither; inf in x gives inf, NaN NaN.
 *     On a device that flushes subnormals to zero, only subnormal elements of x count as 0.
 *   - argmin/argmax return a u32 index: n must be below 2^32 (else OCX_ERR_INVALID_ARGUMENT).
 */
typedef enum ocx_reduce_op {
    OCX_REDUCE_SUM = 0,    /* Σ x[i] */
    OCX_REDUCE_ASUM = 1,   /* Σ |x[i]| */
    OCX_REDUCE_DOT = 2,    /* Σ x[i]*y[i] (the only operation that reads y) */
    OCX_REDUCE_NRM2 = 3,   /* sqrt(Σ x[i]²) */
    OCX_REDUCE_MIN = 4,    /* the smallest x[i] */
    OCX_REDUCE_MAX = 5,    /* the largest x[i] */
    OCX_REDUCE_ARGMIN = 6, /* the lowest i where x[i] is smallest (or the first NaN) */
    OCX_REDUCE_ARGMAX = 7  /* the lowest i where x[i] is largest (or the first NaN) */
} ocx_reduce_op;

/*! ocx_reduce() : reduces n elements of x (and y, for OCX_REDUCE_DOT: same dtype, stride incy ≥ 1;
 *  ignored otherwise and may be NULL) and writes the result to element 0 of `result`:
 *  f32 for f32 and f16 inputs, f64 for f64 inputs, u32 (the index) for argmin/argmax. `result` must
 *  not overlap x or y. Asynchronous: returns once enqueued on `stream` (NULL: default) after the wait
 *  list; *event (if non-NULL) completes when the result is written.
 *  @return OCX_OK, or OCX_ERR_INVALID_ARGUMENT (NULL, unknown op, n = 0 for min/max/arg*, overlap),
 *  OCX_ERR_DTYPE (x not a float type, y or result of the wrong dtype), OCX_ERR_OUT_OF_RANGE (x or y
 *  shorter than its strided range, empty result), OCX_ERR_UNSUPPORTED (f64 without fp64). */
OCX_API ocx_status ocx_reduce(ocx_context *ctx, ocx_stream *stream, ocx_reduce_op op, size_t n,
                              const ocx_buffer *x, size_t incx, const ocx_buffer *y, size_t incy,
                              ocx_buffer *result, size_t num_wait, const ocx_event *wait, ocx_event *event);

/*! ocx_reduce_host() : like ocx_reduce(), but blocks and returns the result on the host: *value
 *  gets the value (for argmin/argmax: x[*index]), *index the index (argmin/argmax only; ignored
 *  otherwise). value may be NULL for argmin/argmax when index is not; otherwise it is required.
 *  @return as ocx_reduce(), plus OCX_ERR_INVALID_ARGUMENT when there is nowhere to put the result. */
OCX_API ocx_status ocx_reduce_host(ocx_context *ctx, ocx_stream *stream, ocx_reduce_op op, size_t n,
                                   const ocx_buffer *x, size_t incx, const ocx_buffer *y, size_t incy,
                                   double *value, size_t *index, size_t num_wait, const ocx_event *wait);

/* ---------------------------------------------------------------------------------------------- */
/* Matrix multiply (GEMM)                                                                         */
/* ---------------------------------------------------------------------------------------------- */
/* C = alpha * op(A) * op(B) + beta * C with BLAS semantics. Common rules of this section:
 *   - op(A) is M x K, op(B) is K x N, C is M x N. op(X) = X (OCX_OP_N) or its transpose (OCX_OP_T).
 *   - layout says how every matrix is stored. OCX_ROW_MAJOR: element (i, j) of a stored matrix X is
 *     X[offx + i*ldx + j], so ldx ≥ its number of columns; OCX_COL_MAJOR: X[offx + i + j*ldx], so
 *     ldx ≥ its number of rows (always ldx ≥ 1). A is stored M x K when opa = N, K x M when T; B is
 *     stored K x N when opb = N, N x K when T.
 *   - Offsets are in elements, relative to the buffer (or view). Every element a matrix spans must lie
 *     inside its buffer, and so must its offset (and a batch's last offset) where it spans none, as A
 *     and B do where K = 0 (else OCX_ERR_OUT_OF_RANGE); a leading dimension below the minimum is
 *     OCX_ERR_INVALID_ARGUMENT; NULL buffers are OCX_ERR_INVALID_ARGUMENT.
 *   - dtypes: A and B share one dtype. f32 → C f32. f64 → C f64 (needs cl_khr_fp64, else
 *     OCX_ERR_UNSUPPORTED). f16 → C f16 or f32: mixed precision, products accumulated in f32 on every
 *     device, rounded once (to nearest even) when stored in f16. Anything else is OCX_ERR_DTYPE.
 *     alpha and beta are given as double and converted to the arithmetic type.
 *   - Degenerate cases as in BLAS: M or N = 0 → nothing is done; K = 0 or alpha = 0 → C = beta*C (A and
 *     B are not read); beta = 0 → C is written without being read (a NaN already in C does not leak).
 *   - C must not overlap A or B (OCX_ERR_INVALID_ARGUMENT).
 *   - Asynchronous: returns once enqueued on `stream` (NULL: default) after the wait list; `event`
 *     (may be NULL) completes when C is written. Thread-safe like every enqueueing call.
 *   - Small products take a direct kernel, larger ones the tiled kernel; both handle any shape, leading
 *     dimension and offset. Matrix-vector products with K of 64 or more take a dot-product kernel
 *     that reads the large operand once: at most DOTN columns (a GEMM parameter: GPUs 16, f64 8, f16
 *     that the tensor cores would take 12 where the large operand holds 2^23 elements or more and 8
 *     from 2^26; CPUs 4; 0: never) where op(A) is K-fast and op(B) is one column or K-fast, or at most DOTN rows
 *     where op(B) is K-fast and op(A) is one row or K-fast; on GPUs (the parameter COLS) at most 4
 *     rows where op(B) is N-fast, or 4 columns where op(A) is M-fast, take a kernel whose work-items
 *     own columns of C (not under OCX_COMPUTE_F16). Where the GEMM parameter PACK is 1 (the default),
 *     the tiled kernel may first copy an operand it would read with strides into the stream's scratch
 *     buffer, on the same stream: on CPUs a K-fast B, and, where the product's other dimension is at
 *     least the parameter PACKN (CPUs 128), a transposed A of 4 MiB or more, or an N-fast B whose row
 *     pitch is a multiple of 4 KiB where K is at least 1024; for the kernels that stage tiles in local
 *     memory (GPUs) a K-fast one (A not transposed in row-major, B transposed) where the other dimension
 *     is at least PACKN (GPUs 4096; for A, K above 256 as well). f16 operands of the STAGE=1 kernel
 *     (CPUs) from 2^20 multiply-adds on are both copied, widened to f32 (exactly), unless
 *     OCX_COMPUTE_F16: the kernel then converts no element at each load (same results, 3x faster
 *     on PoCL). A copy's rows are padded to an odd multiple of 64 bytes. On the STAGE=1 kernel, where
 *     M*N/(M + N) is at least the parameter PANEL (CPUs 384; GPUs 0: never), or a quarter of it
 *     where op(A) is M-fast or N >= M (for a column-major product, of its row-major C^T), and
 *     M*N*K at least 2*PANEL^3, both operands are copied instead into panels that the kernel reads
 *     k after k (ocx_last_params() reports PANEL=0 for a call that took none). `event` is then the
 *     GEMM kernel's: it completes after the copies, and its profiling time covers the kernel alone.
 *   - Where the tiles of a single product (not a batch; not the direct, dot-product or tensor-core
 *     kernels, nor OCX_COMPUTE_F16) number fewer than the device's compute units and K is at least
 *     four times the parameter KSPLIT (GPUs 256; CPUs 0: never), or the column kernel's work-groups
 *     fewer than four a compute unit and K at least KSPLIT (rounded up to a multiple of 4), K is
 *     split: up to 64 partial products over
 *     chunks of K go to the stream's scratch buffer (after any copies; not where they would take
 *     over half the device's largest allocation), then are added up in order into C (the result
 *     is deterministic; its rounding differs from one pass over K). `event` is then the summing
 *     kernel's: it completes when C is written, and its profiling time covers that kernel alone.
 *   - For the tiled kernel without local memory (GEMM parameter STAGE=1, the CPUs' default) a K
 *     above twice the block length, the parameter KBLK (CPUs 512; GPUs 0: never), four times that
 *     where the kernel reads panels of any type but f64, runs as one launch per block (rounded up
 *     to a multiple of 16) along K, each adding into C (beta applied by the first;
 *     ocx_last_params() reports the block length, 0 for one pass): not for offset-array batches
 *     nor an f16 C. `event` is then the last block's (its profiling time covers that launch
 *     alone); an OpenCL failure after the first block leaves C part summed.
 *   - The STAGE=1 kernel on a CPU, reading an N-fast B in place whose rows lie 4 KiB or more apart
 *     (e.g. 16 x 4096 x 4096 f32), prefetches B's row the parameter PFD ahead of each k (CPUs 32;
 *     other devices never); ocx_last_params() reports PFD=0 for a call that took none. Results are
 *     the same.
 *   - The scratch buffer (copies, partial products) is kept between calls, as large as the most
 *     used at once on the stream, until ocx_stream_trim() or until the stream is destroyed (the
 *     default stream's: the context); without the memory the operands are read in place and K is
 *     not split.
 */
typedef enum ocx_layout { OCX_ROW_MAJOR = 0, OCX_COL_MAJOR = 1 } ocx_layout;
typedef enum ocx_op { OCX_OP_N = 0, OCX_OP_T = 1 } ocx_op;
/* The arithmetic of a GEMM. OCX_COMPUTE_DEFAULT: f32 for f32 and f16 inputs, f64 for f64.
 * OCX_COMPUTE_F16: native half arithmetic for f16 inputs and output (needs cl_khr_fp16, else
 * OCX_ERR_UNSUPPORTED; faster where the device has fast half, far less accurate for large K).
 * OCX_COMPUTE_TF32X3: f32 A, B and C (else OCX_ERR_DTYPE), each product a*b taken on NVIDIA tensor
 * cores (OCX_PATH_NV_TF32X3) as three TF32 products of a head (sign, exponent, 10 mantissa bits) and a
 * tail (the rest, rounded to TF32) of each operand, ah*bh + ah*bt + at*bh, accumulated in f32. A
 * product's relative error is below 2^-19 where f32's is 2^-24, which the f32 sums' rounding (K *
 * 2^-24 at worst) outweighs from K of 32 or so, for operands of magnitude 2^-104 or more (a smaller
 * one's tail may leave TF32's normal range, and the tensor cores may read it, or a subnormal operand,
 * as zero: times an infinity that gives NaN). Infinities and NaNs propagate as in f32, except a NaN
 * whose payload lies entirely in the low 13 mantissa bits, which reads as an infinity. Where the path
 * is off, and for products that the direct, dot-product or column kernel takes or of the "short_k"
 * class (K <= 256 from 2^31 multiply-adds, where it ran slower), the f32 kernels run instead. */
typedef enum ocx_gemm_compute {
    OCX_COMPUTE_DEFAULT = 0,
    OCX_COMPUTE_F16 = 1,
    OCX_COMPUTE_TF32X3 = 2
} ocx_gemm_compute;

/*! ocx_gemm() : C = alpha*op(A)*op(B) + beta*C (rules above).
 *  @return OCX_OK once enqueued, or the error of the first argument found wrong (nothing enqueued);
 *  an OpenCL failure after the copies or the first partial products were enqueued returns its
 *  error with those left on the stream (C is then not written). */
OCX_API ocx_status ocx_gemm(ocx_context *ctx, ocx_stream *stream, ocx_layout layout, ocx_op opa, ocx_op opb,
                            size_t m, size_t n, size_t k, double alpha, const ocx_buffer *a, size_t offa,
                            size_t lda, const ocx_buffer *b, size_t offb, size_t ldb, double beta, ocx_buffer *c,
                            size_t offc, size_t ldc, size_t num_wait, const ocx_event *wait, ocx_event *event);

/*! ocx_gemm_strided_batched() : `batch` independent products in one launch; product i uses the
 *  matrices at offa + i*stridea, offb + i*strideb, offc + i*stridec. stridea or strideb may be 0 (one
 *  A or B shared by all); the C matrices must not share an element: they may lie apart (stridec at
 *  least the span of one C) or side by side within ldc, as in BLAS's interleaved batches (row-major:
 *  stridec ≥ N and (batch-1)*stridec + N ≤ ldc; column-major the same with M). batch = 0 does nothing
 *  (the event still completes after the wait list). */
OCX_API ocx_status ocx_gemm_strided_batched(ocx_context *ctx, ocx_stream *stream, ocx_layout layout, ocx_op opa,
                                            ocx_op opb, size_t m, size_t n, size_t k, double alpha,
                                            const ocx_buffer *a, size_t offa, size_t lda, size_t stridea,
                                            const ocx_buffer *b, size_t offb, size_t ldb, size_t strideb,
                                            double beta, ocx_buffer *c, size_t offc, size_t ldc, size_t stridec,
                                            size_t batch, size_t num_wait, const ocx_event *wait, ocx_event *event);

/*! ocx_gemm_batched() : `batch` independent products in one launch; product i uses the matrices at
 *  offa[i], offb[i], offc[i] (host arrays of `batch` offsets, read before the call returns). The C
 *  matrices must lie apart: each one's span (first to last element) meets no other's (interleaved
 *  C matrices: ocx_gemm_strided_batched). */
OCX_API ocx_status ocx_gemm_batched(ocx_context *ctx, ocx_stream *stream, ocx_layout layout, ocx_op opa, ocx_op opb,
                                    size_t m, size_t n, size_t k, double alpha, const ocx_buffer *a,
                                    const size_t *offa, size_t lda, const ocx_buffer *b, const size_t *offb,
                                    size_t ldb, double beta, ocx_buffer *c, const size_t *offc, size_t ldc,
                                    size_t batch, size_t num_wait, const ocx_event *wait, ocx_event *event);

/*! ocx_gemm_ex() : ocx_gemm_strided_batched() with a choice of arithmetic (ocx_gemm_compute). */
OCX_API ocx_status ocx_gemm_ex(ocx_context *ctx, ocx_stream *stream, ocx_layout layout, ocx_op opa, ocx_op opb,
                               size_t m, size_t n, size_t k, double alpha, const ocx_buffer *a, size_t offa,
                               size_t lda, size_t stridea, const ocx_buffer *b, size_t offb, size_t ldb,
                               size_t strideb, double beta, ocx_buffer *c, size_t offc, size_t ldc, size_t stridec,
                               size_t batch, ocx_gemm_compute compute, size_t num_wait, const ocx_event *wait,
                               ocx_event *event);

#ifdef __cplusplus
}
#endif
#endif /* OCX_H */
