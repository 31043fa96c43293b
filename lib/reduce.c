/* reduce.c — reductions (host side) and the "reduce" kernel family (cl/reduce.cl).
 * A reduction is two launches on one stream: part_<op> (G work-groups → G partials in the stream's
 * scratch buffer), then final_<op> (one work-group → the result); or, where one work-group takes
 * all of x (SOLO), part_<op> alone, writing the result; or, with FUSE, part_<op> alone, its last
 * work-group combining the partials. */
#include "config.h"
#include "ocx_internal.h"

#include <stdlib.h>
#include <string.h>

/* Parameters of cl/reduce.cl. GPUs: many groups of 256 items, 16-byte loads interleaved between
 * work-items (coalesced); H200, 2^28 f32 sum (host clock over 10 back-to-back calls): 4.38 TB/s
 * with 32 groups per CU, as with 16 and 64; 8-wide lanes 3.99, 16-wide 1.99. (With a scratch
 * buffer created and released per call instead of the stream's, the same kernels ran 4.02.) PoCL
 * runs one work-group per thread: few items per group, each folding a contiguous chunk into 16
 * lanes (one AVX-512 register of f32), read as 4 streams in step (ACC: a core's one sequential
 * stream left its memory bandwidth unused). 2-core AVX2 EPYC, 2^24 f32, medians of 4 alternating
 * rounds (GB/s, 1 / 4 / 8 streams): sum 26.4 / 33.6 / 31.6, nrm2 26.7 / 33.6 / 30.7, dot (two
 * arrays) 30.4 / 28.8 / 23.7, argmax 12.7 / 13.8 / 12.2 (the pair scan, before argmin/argmax
 * scanned blocks on CPUs). */
static const ocx__param_def reduce_params[] = {
    /* name         gpu  cpu  min  max  ladder */
    {"WG", 256, 16, 1, 1024, 1},
    {"VW", 4, 16, 1, 16, 1}, /* for f32/f16; f64 takes VW/2 */
    /* How many groups per compute unit (the first pass's partials): the host's grid only, so no
     * -D define, and a tuner candidate that moves it alone builds nothing (PoCL: 1-1.6 s a program). */
    {"GROUPS_PER_CU", 32, 2, 1, 1024, 1, 1},
    {"LAYOUT", 1, 2, 1, 2, 0}, /* 1: interleaved, 2: contiguous chunk per work-item */
    {"ACC", 1, 4, 1, 8, 1, 0, 1}, /* vector accumulators (LAYOUT 2: streams) per work-item */
    /* One work-group, one launch (part_<op> writes the result) for n up to SOLO elements: a short
     * reduction's time is its launches (doc/performance.md: CPU 65536, GPU 4096 measured on the EPYC
     * and the H200). Counted in elements, so that it means the same whatever WG and VW a class has. */
    {"SOLO", 4096, 65536, 1, 1 << 24, 1, 1, 1},
    /* argmin/argmax in LAYOUT 2: 1 scans blocks of vectors and one block again (CPUs, where it was
     * measured: reduce.cl), 0 the (value, index) pairs lane by lane, as GPUs do in either layout.
     * Not searched; a switch, so that PoCL's tests run the GPUs' LAYOUT 2 scan (check_reduce). */
    {"ARGBLOCKS", 0, 1, 0, 1, 0, 0, 1},
    /* Many work-groups, one launch for n up to FUSE elements: the last of part_<op>'s groups to finish
     * combines the partials (reduce.cl's FUSED_FINAL), where the device is known to make one group's
     * writes visible to another within a launch (fuse_fence; elsewhere, and for longer x, final_<op>
     * in a second launch). Not searched. H100 (its profile, host clock, three alternating processes,
     * sum/max/argmax of f32, f16, f64; one launch against two, medians): 2^16 1.55-1.89x, 2^20
     * 1.09-1.63x, 2^22 0.80-1.47x (f64 0.80-0.92x), 2^24 0.94-1.06x, 2^26 and 2^28 0.97-1.01x.
     * CPUs (OpenCL C 3.0's atomics; sum, dot, max, argmax of f32 and f64, the same three rounds): on
     * the H100 machine's 16-core Xeon (PoCL 5.0), 2^17 and 2^20 1.45-1.62x, 2^22 1.18-1.54x, 2^24
     * 1.03-1.16x; on the 2-core Xeon (PoCL 3.1; two runs of 3 and 4 rounds) 2^17-2^20 0.92-1.35x,
     * 2^22 0.97-1.06x, 2^24 0.90-1.12x (f64 0.90-1.00x). What looked like check_reduce stalling
     * on that PoCL 5.0 with this default was its builds, a program for each side of FUSE (run). */
    {"FUSE", 1 << 20, 1 << 22, 0, 1 << 30, 0, 1, 1},
    /* FUSE's combine in the last group: 1 its item 0 alone, in order (a CPU runs a group on one
     * thread), 0 the group's tree, whose barriers sit in a branch. PoCL 3.1 (2-core Xeon, fresh
     * caches, OCX_CACHE=0 POCL_KERNEL_CACHE=0) built the eight f32 operations' programs in 12 s
     * without FUSE, 18-20 s with the tree, 13 s with item 0 alone. Not searched; a switch, so that
     * PoCL's tests run the tree too (check_reduce). Host-side: run() defines it for FUSE programs
     * alone, so that it splits no other program in two. */
    {"FUSE_SERIAL", 0, 1, 0, 1, 0, 1, 1},
};

/* FUSE's count (reduce.cl's FENCE), where a group's global writes are known to be visible to another
 * group of the same launch that saw its count (OpenCL 1.2 leaves that to the device):
 * - on GPUs of NVIDIA's own driver (one that answers cl_nv_device_attribute_query), PTX, a vendor
 *   path that OCX_VENDOR_PATHS=0 turns off: 2, an acquire-release atomic at device scope (compute
 *   capability 7.0 on), else 1, membar.gl around the atomic (CUDA's threadfence reduction); the
 *   volatile loads read the shared L2. NVIDIA's driver 580 lists neither OpenCL C 3.0 feature that 3
 *   needs (it compiles its mem_fence(CLK_GLOBAL_MEM_FENCE) to membar.cta, a fence for the work-group
 *   alone);
 * - 3 where the device's OpenCL C has acquire-release atomics at device scope (device_atomics: 3.0
 *   with its two features, or 2.x): the memory model of OpenCL C 2.0 orders the count, built with
 *   that -cl-std (fuse_std). PoCL 3.1's CPUs are such a device. A device whose compiler refuses
 *   such a build takes two launches from then on (run);
 * - -1 elsewhere: not known, two launches. */
static int fuse_fence(const ocx_context *ctx)
{
    /* a compute capability: NVIDIA's vendor string and its driver's answer (ocx__device_query) */
    if (ctx->info.type == OCX_DEVICE_GPU && ctx->info.nv_compute_capability[0] > 0 && ocx__vendor_paths_on())
        return ctx->info.nv_compute_capability[0] >= 7 ? 2 : 1;
    return ctx->info.device_atomics && !atomic_load(&ctx->fuse_std_refused) ? 3 : -1;
}

/* The OpenCL C standard FENCE 3 builds with (ahead of the library's own -cl-std=CL1.2). */
static const char *fuse_std(const ocx_context *ctx)
{
    return ctx->info.device_atomics == 30 ? "-cl-std=CL3.0 " : "-cl-std=CL2.0 ";
}

static const char *reduce_invalid(const int *v, const ocx_device_info *dev, ocx_dtype dtype)
{
    if ((size_t)v[0] > dev->max_work_group_size || (size_t)v[0] > dev->max_work_item_sizes[0])
        return "WG exceeds the device's work-group size";
    /* two local arrays of WG accumulators (8 bytes at most each), and FUSE's flag */
    if ((uint64_t)v[0] * 16 + 4 > dev->local_mem_bytes) return "WG exceeds the device's local memory";
    (void)dtype;
    return NULL;
}

const ocx__family ocx__family_reduce = {
    .name = "reduce",
    .source = "reduce",
    .nparams = sizeof reduce_params / sizeof *reduce_params,
    .params = reduce_params,
    .invalid = reduce_invalid,
    .classes = ocx__classes_1d,
    .dtypes = OCX__DT_ALL};

static const char *const op_names[] = {"sum", "asum", "dot", "nrm2", "min", "max", "argmin", "argmax"};
#define NOPS (sizeof op_names / sizeof *op_names)

/* The longest sequence of elements one accumulator lane of a sum (sum, asum, dot, nrm2) adds up:
 * the rest of the sum is a tree (lanes, work-items, groups). With few lanes the run grows with n:
 * in an ocx-tune run on the 2-core Xeon, 2 groups of 2 work-items with 2 lanes each (8 runs of
 * 2^21 elements) gave a dot product of 2^24 f32 elements 1.2e-5 away from the reference, against a
 * tolerance of 1e-5. Runs of 2^15 were not short enough for f16 data: its squares (and products)
 * have few significant bits, so the roundings of a run's additions lean one way and its error
 * grows with the run's length, not its square root. Sums of squares of f16 values ran 1.4e-5 away
 * (dot(x, x) of 2^20 values in [0.5, 1.5) on 2 groups of 2 work-items with 2 lanes each) and, under
 * the CPU defaults, 3.1e-5 (strided, one lane a work-item: 5.8 million values near 2^-16); at 2^12,
 * 3.0e-6 and 5.9e-7 (PoCL, 2-core EPYC; tests/check_reduce.c). The CPU defaults run 2^12 elements
 * a lane at 2^24 f32, so those calls keep their grid; at 10^8, 24 groups take it where 4 did (f32
 * sums of 2^26 and 10^8 ran level with the former grid: median ratios 1.02 and 1.07 in 8
 * alternating rounds, ocx-bench); GPUs run far shorter lanes. More groups than GROUPS_PER_CU asks
 * for make up the difference. */
#define MAX_RUN ((size_t)1 << 12)

static int is_arg(ocx_reduce_op op) { return op == OCX_REDUCE_ARGMIN || op == OCX_REDUCE_ARGMAX; }

/* The result dtype of a reduction of x's dtype. */
static ocx_dtype result_dtype(ocx_reduce_op op, ocx_dtype x)
{
    return is_arg(op) ? OCX_U32 : x == OCX_F64 ? OCX_F64 : OCX_F32;
}

static ocx_status check_args(ocx_context *ctx, ocx_reduce_op op, size_t n, const ocx_buffer *x, size_t incx,
                             const ocx_buffer *y, size_t incy)
{
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF((unsigned)op >= NOPS, OCX_ERR_INVALID_ARGUMENT, "reduce: unknown operation %d", (int)op);
    OCX__FORWARD(ocx__check_float(ctx, x, "x"));
    OCX__FORWARD(ocx__check_range(ctx, x, "x", 0, n, incx));
    if (op == OCX_REDUCE_DOT) {
        OCX__FORWARD(ocx__check_dtype(y, "y", x->dtype));
        OCX__FORWARD(ocx__check_range(ctx, y, "y", 0, n, incy));
    }
    OCX__FAIL_IF(n == 0 && op >= OCX_REDUCE_MIN, OCX_ERR_INVALID_ARGUMENT,
                 "%s of 0 elements is undefined (n must be at least 1)", op_names[op]);
    OCX__FAIL_IF(is_arg(op) && (uint64_t)n > 0xffffffffu, OCX_ERR_INVALID_ARGUMENT,
                 "%s: n = %zu; the index result is u32, so n must be below 2^32", op_names[op], n);
    return OCX_OK;
}

/* The launches (one or two), with the stream's scratch buffer held (the caller unlocks *held after
 * enqueueing what reads the buffer). The last one writes the result to out[oo] (and, for argmin/
 * argmax, the value to the scratch buffer at byte 16*G + 8); with out NULL, the result goes to the
 * scratch buffer at byte 16*G (*groups: G). In the tuner's build-only mode only the kernels are
 * built and *held is NULL (no lock taken). */
static ocx_status run(ocx_context *ctx, ocx_stream *stream, ocx_reduce_op op, size_t n, const ocx_buffer *x,
                      size_t incx, const ocx_buffer *y, size_t incy, const cl_mem *out, size_t oo, size_t num_wait,
                      const ocx_event *wait, ocx_event *event, ocx_stream **held, cl_mem *scratch_out, size_t *groups)
{
    ocx_dtype dt = x->dtype;
    ocx__params p;
    const char *cls = ocx__size_class_1d(ctx, n);
    OCX__FORWARD(ocx__params_lookup(ctx, &ocx__family_reduce, dt, cls, &p));
    const int fuse_at = ocx__param_index(&ocx__family_reduce, "FUSE"), fence = fuse_fence(ctx);
    if (p.v[fuse_at] && fence < 0) { /* two launches; ocx_last_params() says so */
        p.v[fuse_at] = 0;
        ocx__params_record(&p, dt, cls);
    }
    /* Only DTYPE, not ocx__dtype_defines' HAS_FP64 (reduce.cl reads f64 only as DTYPE=2): one program
     * per dtype whether or not the device (or OCX_DISABLE_FP64) offers fp64. */
    p.v[1] = (int)ocx__vector_width(dt, p.v[1]); /* VW: elements, not f32 slots */
    size_t wg = (size_t)ocx__param(&p, "WG"), vw = (size_t)ocx__param(&p, "VW");
    int contiguous = incx == 1 && (op != OCX_REDUCE_DOT || incy == 1);
    size_t items = !contiguous ? n : ocx__vector_items(n, vw);
    const size_t solo = (size_t)ocx__param(&p, "SOLO");
    size_t g = n <= solo ? 1 : ocx__grid_groups(ctx, items, wg, (size_t)ocx__param(&p, "GROUPS_PER_CU"));
    /* Sums: each accumulator lane adds up at most MAX_RUN elements in sequence, whatever the
     * parameters, so that a tuned grid stays within the accuracy reduce.cl's tree gives. */
    if (op < OCX_REDUCE_MIN) {
        size_t lanes = wg * (contiguous ? vw * (size_t)ocx__param(&p, "ACC") : 1), least = ocx__div_up(n, lanes * MAX_RUN);
        if (g < least) g = least;
    }
    if (g > 65536) g = 65536;
    /* One launch of many groups. The last group's item 0 alone (FUSE_SERIAL) adds up at most
     * MAX_RUN partials in sequence, as an accumulator lane adds up elements; more take two launches. */
    const int serial = ocx__param(&p, "FUSE_SERIAL");
    const int fuse = g > 1 && n <= (size_t)p.v[fuse_at] && (!serial || g <= MAX_RUN);
    const int second = g > 1 && !fuse; /* final_<op> writes the result */
    /* A program built with FUSE runs every mode of part_<op>. Where the last group's item 0 combines
     * the partials (FUSE_SERIAL), it runs the other modes as one without FUSE would, so one program
     * takes every length wherever the parameters let some take one launch (above SOLO, up to FUSE;
     * p.v[fuse_at] is 0 where the fence is not known): programs of their own for the lengths above
     * FUSE had cost PoCL a build (about a second) per operation and dtype again, and check_reduce on
     * the 16-core Xeon built 256 programs in 320 s against 139 in 200 s without one launch. The
     * group's tree takes a barrier in every mode, so its programs take only the lengths they run in
     * one launch. */
    const int fusable = fuse || (serial && (size_t)p.v[fuse_at] > solo);
    const int std_build = fusable && fence == 3; /* OpenCL C 2.0 or 3.0 (fuse_std) */
    char options[512];
    /* One program per operation: compiling all eight costs PoCL tens of seconds. MINMAX_APART: min
     * and max keep NaN apart on CPUs with one stream a work-item, where it ran about twice as fast in
     * cache (reduce.cl); with four streams, and on the H200, it cost. */
    const int cpu = ctx->info.type == OCX_DEVICE_CPU;
    snprintf(options, sizeof options, "%s-DDTYPE=%d -DOP=%d -DMINMAX_APART=%d -DFUSE=%d -DFENCE=%d -DFUSE_SERIAL=%d",
             std_build ? fuse_std(ctx) : "", dt == OCX_F16 ? 1 : dt == OCX_F64 ? 2 : 0, (int)op,
             cpu && (op == OCX_REDUCE_MIN || op == OCX_REDUCE_MAX) && ocx__param(&p, "ACC") == 1, fusable,
             fusable ? fence : 0, fusable && serial);
    ocx__params_defines(&p, options, sizeof options);

    /* The kernels are built before the stream's lock is taken, so that a first call's compilation
     * (or the tuner's, building candidates on several threads) holds up no other thread. */
    char part[32], final[32];
    cl_kernel kpart, kfinal = NULL;
    snprintf(part, sizeof part, "part_%s", op_names[op]);
    snprintf(final, sizeof final, "final_%s", op_names[op]);
    char *saved = std_build ? ocx__error_save() : NULL;
    const ocx_status built = ocx__kernel_get(ctx, "reduce", options, part, &kpart);
    if (built == OCX_ERR_BUILD && std_build) {
        /* A compiler that refuses OpenCL C 2.0 or 3.0 for it (only PoCL's has been seen to build
         * it) costs the context its one-launch reductions, not its reductions: the call goes on in
         * two launches (fuse_fence: -1 now), and one warning gives the compiler's first error.
         * Where the two-launch program fails to build as well, the standard was not the cause (a
         * bad OCX_BUILD_OPTIONS, say): the call fails with that build's error, no warning blames
         * the device, and the context's later calls may take one launch again. */
        const int first = atomic_exchange(&ctx->fuse_std_refused, 1) == 0;
        char *refusal = first ? ocx__error_save() : NULL;
        ocx__error_restore(saved);
        const ocx_status st =
            run(ctx, stream, op, n, x, incx, y, incy, out, oo, num_wait, wait, event, held, scratch_out, groups);
        if (first && st == OCX_ERR_BUILD) {
            atomic_store(&ctx->fuse_std_refused, 0);
        } else if (first) {
            const char *log = refusal ? strstr(refusal, "build log:") : NULL, *why = log ? strstr(log, "error") : NULL;
            if (!why) why = "no error line in the build log";
            ocx__warn("reduce: the device failed to build a one-launch reduction as OpenCL C %d.0; reductions take two "
                      "launches in this context (%.*s)", ctx->info.device_atomics / 10, (int)strcspn(why, "\n"), why);
        }
        free(refusal);
        return st;
    }
    free(saved);
    OCX__FORWARD(built);
    ocx__params_kernel(second ? final : part); /* the kernel that writes the result */
    if (second) OCX__FORWARD(ocx__kernel_get(ctx, "reduce", options, final, &kfinal));
    *held = NULL;
    if (ocx__launch_is_build_only()) return OCX_OK;

    /* scratch: values (8 bytes each) at 0, second values at 8G, host result at 16G (+8: its value) */
    cl_mem scratch, tally;
    OCX__FORWARD(ocx__stream_scratch(ctx, stream, 16 * g + 16, held, &scratch));
    ocx_status st = fuse ? ocx__stream_tally(ctx, *held, &tally) : OCX_OK;
    if (st != OCX_OK) {
        pthread_mutex_unlock(&(*held)->lock);
        return st;
    }
    size_t asz = dt == OCX_F64 ? 8 : 4, wsz = is_arg(op) ? 4 : asz;
    if (!out) {
        out = &scratch;
        oo = 16 * g / ocx_dtype_size(result_dtype(op, dt));
    }
    const ocx_buffer *yy = op == OCX_REDUCE_DOT ? y : x;
    size_t yinc = op == OCX_REDUCE_DOT ? incy : 1;
    /* Partials at the start of scratch (values at 0, second values at 8G); with one group, the
     * result where final_<op> would write it (reduce.cl's PART_OUT): argmin/argmax's value to
     * scratch at 16G + 8 and index to out, the others' value to out. */
    enum { MODE_PARTIALS, MODE_RESULT, MODE_COUNTED }; /* reduce.cl's: what part_<op> does after its partial */
    int fin = g == 1, arg = is_arg(op), mode = fin ? MODE_RESULT : fuse ? MODE_COUNTED : MODE_PARTIALS;
    const cl_mem *pv = fin && !arg ? out : &scratch, *pw = fin && arg ? out : &scratch;
    size_t pvo = !fin ? 0 : arg ? (16 * g + 8) / asz : oo, pwo = fin && arg ? oo : 8 * g / wsz;
    /* final_<op>'s outputs: the result to out[oo], argmin/argmax's value to scratch at 16G + 8 */
    const size_t ovo = (16 * g + 8) / asz;
    ocx__arg a1[] = {OCX__ARG_U64(n),
                     OCX__ARG_MEM(x),
                     OCX__ARG_U64(x->offset),
                     OCX__ARG_U64(incx),
                     OCX__ARG_MEM(yy),
                     OCX__ARG_U64(yy->offset),
                     OCX__ARG_U64(yinc),
                     {OCX__ARG_VALUE, sizeof(cl_mem), pv},
                     OCX__ARG_U64(pvo),
                     {OCX__ARG_VALUE, sizeof(cl_mem), pw},
                     OCX__ARG_U64(pwo),
                     OCX__ARG_I32(mode),
                     {OCX__ARG_VALUE, sizeof(cl_mem), out},
                     OCX__ARG_U64(oo),
                     {OCX__ARG_VALUE, sizeof(cl_mem), &scratch},
                     OCX__ARG_U64(ovo),
                     {OCX__ARG_VALUE, sizeof(cl_mem), fuse ? &tally : &scratch}};
    ocx__launch_desc d1 = {"reduce", options, part, 1, {g * wg}, {wg}, 17, a1, kpart};
    st = ocx__launch(ctx, stream, &d1, num_wait, wait, second ? NULL : event);
    if (st == OCX_OK && second) {
        ocx__arg a2[] = {OCX__ARG_I32((cl_int)g),
                         {OCX__ARG_VALUE, sizeof(cl_mem), &scratch},
                         {OCX__ARG_VALUE, sizeof(cl_mem), &scratch},
                         OCX__ARG_U64(8 * g / wsz),
                         {OCX__ARG_VALUE, sizeof(cl_mem), out},
                         OCX__ARG_U64(oo),
                         {OCX__ARG_VALUE, sizeof(cl_mem), &scratch},
                         OCX__ARG_U64(ovo)};
        ocx__launch_desc d2 = {"reduce", options, final, 1, {wg}, {wg}, 8, a2, kfinal};
        st = ocx__launch(ctx, stream, &d2, 0, NULL, event);
    }
    if (st != OCX_OK) pthread_mutex_unlock(&(*held)->lock);
    *scratch_out = scratch;
    *groups = g;
    return st;
}

ocx_status ocx_reduce(ocx_context *ctx, ocx_stream *stream, ocx_reduce_op op, size_t n, const ocx_buffer *x,
                      size_t incx, const ocx_buffer *y, size_t incy, ocx_buffer *result, size_t num_wait,
                      const ocx_event *wait, ocx_event *event)
{
    ocx__event_clear(event, num_wait, wait);
    OCX__FORWARD(check_args(ctx, op, n, x, incx, y, incy));
    OCX__FORWARD(ocx__check_dtype(result, "result", result_dtype(op, x->dtype)));
    OCX__FORWARD(ocx__check_range(ctx, result, "result", 0, 1, 1));
    OCX__FAIL_IF(ocx__overlap(result, 0, 1, x, 0, n ? (n - 1) * incx + 1 : 0), OCX_ERR_INVALID_ARGUMENT,
                 "%s: result overlaps x", op_names[op]);
    OCX__FAIL_IF(op == OCX_REDUCE_DOT && ocx__overlap(result, 0, 1, y, 0, n ? (n - 1) * incy + 1 : 0),
                 OCX_ERR_INVALID_ARGUMENT, "dot: result overlaps y");
    ocx_stream *held;
    cl_mem scratch;
    size_t g;
    OCX__FORWARD(run(ctx, stream, op, n, x, incx, y, incy, &result->mem, result->offset, num_wait, wait, event,
                     &held, &scratch, &g));
    if (held) pthread_mutex_unlock(&held->lock);
    return OCX_OK;
}

ocx_status ocx_reduce_host(ocx_context *ctx, ocx_stream *stream, ocx_reduce_op op, size_t n, const ocx_buffer *x,
                           size_t incx, const ocx_buffer *y, size_t incy, double *value, size_t *index,
                           size_t num_wait, const ocx_event *wait)
{
    OCX__FORWARD(check_args(ctx, op, n, x, incx, y, incy));
    OCX__FAIL_IF(!value && !(is_arg(op) && index), OCX_ERR_INVALID_ARGUMENT,
                 "%s: no place for the result (value%s is NULL)", op_names[op], is_arg(op) ? " and index" : "");
    OCX__FORWARD(ocx__wait_first(ctx, num_wait, wait, "ocx_reduce_host"));
    ocx_stream *held;
    cl_mem scratch;
    size_t g;
    OCX__FORWARD(run(ctx, stream, op, n, x, incx, y, incy, NULL, 0, num_wait, wait, NULL, &held, &scratch, &g));
    if (!held) return OCX_OK; /* build-only */
    cl_command_queue q = held->queue; /* the stream run() resolved */
    /* Enqueued (not waited for) under the lock: the next user of the scratch buffer runs after it. */
    unsigned char r[16];
    cl_event done = NULL;
    cl_int err = clEnqueueReadBuffer(q, scratch, CL_FALSE, 16 * g, 16, r, 0, NULL, &done);
    pthread_mutex_unlock(&held->lock);
    if (err == CL_SUCCESS) err = ocx__wait_events(1, &done);
    if (err != CL_SUCCESS) clFinish(q); /* the read must not land in r after this returns */
    ocx__event_drop(ctx, done);
    if (err != CL_SUCCESS) return ocx__cl_error(err, "reduce: reading the result");
    /* the result at 16G: a u32 index (arg) or the value; for arg, the value at 16G + 8 */
    double v;
    if (x->dtype == OCX_F64) {
        memcpy(&v, r + (is_arg(op) ? 8 : 0), 8);
    } else {
        float f;
        memcpy(&f, r + (is_arg(op) ? 8 : 0), 4);
        v = f;
    }
    if (value) *value = v;
    if (is_arg(op) && index) {
        uint32_t i;
        memcpy(&i, r, 4);
        *index = i;
    }
    return OCX_OK;
}
