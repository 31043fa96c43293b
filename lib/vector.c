/* vector.c — element-wise operations (host side) and the "vector" kernel family (cl/vector.cl). */
#include "config.h"
#include "ocx_internal.h"

#include <stdlib.h>
#include <string.h>

/* Parameters of cl/vector.cl. Defaults: no loop in the kernel on every device type; one vector per
 * work-item, but two (WPT, below) for CPU arrays beyond the caches (the "large" class).
 * GPUs take groups of 256 items with 16-byte accesses; on the H200 (2^26 and 2^28 f32, one process)
 * that ran add at 4.23-4.25 and 4.37-4.38 TB/s, scale and copy at 4.05-4.08 and 4.21-4.24, where a
 * grid-stride loop over 64 groups per CU ran 4.16-4.17 / 4.18-4.21 and 3.87-3.96 / 3.95-4.00 (f16
 * add preferred the loop: 3.42 against 2.96-2.98 at 2^26; the tuner decides per dtype). PoCL runs
 * a work-group per thread and vectorises across work-items itself, which a loop inside the kernel
 * prevents (2^24 f32 add: 3.6 GB/s with the loop, 22-23 GB/s without, beside clpeak's 22.8). On a CPU the
 * vector is 16 elements (64 bytes: two AVX2 registers, a cache line) in groups of 512: against
 * 8 elements in groups of 128, the per-work-item bounds checks are paid half as often and
 * CLBlast's axpy/copy/scal went from 0.55-0.73x to 1.0-1.2x (PoCL, 2^20 f32, 2 cores). */
/* NT (CPUs): kernels whose result is only written store it past the caches when it is at least half
 * the global memory cache or 64 MiB, whichever is less (ocx__vector_nt_from) (2-core EPYC, PoCL,
 * 2^24 f32: add 24 -> 31-34 GB/s, copy 30 -> 42 GB/s).
 * WPT (CPUs, "large" class: 2): each work-item takes WPT vectors a global size apart, so each thread
 * of PoCL walks WPT streams of memory at once, as CLBlast's axpy/scal kernels do. 2^24 on a 2-core
 * EPYC (PoCL, ours and CLBlast's runs alternating, two runs): scale f32 0.89-0.97x CLBlast with one
 * stream, 1.02-1.09x with two; axpy f32 0.98-1.00 -> 1.04-1.09, f64 scale 0.92-0.95 -> 0.99-1.01,
 * axpy 0.96-0.98 -> 0.98-1.00; mul and copy stayed at 1.3-1.5x. Four streams slowed the write-only
 * kernels (their non-temporal stores) to 0.55-0.75x. In the caches one stream: on the 2-core AVX-512
 * EPYC, calls timed one at a time (each waited for, as ocx-bench times them) in batches of 16, axpy
 * of 2^16 and 2^18 f32 took 6.1 and 23.8-24.0 us of kernel time with one, 7.1-7.8 and 28.9-30.3 with
 * two (f64: 12.3-12.7 and 46.6-51.7 against 14.0-15.2 and 56-61); queued back to back the two ran
 * within +-10% of each other, split by operation (doc/performance.md). */
/* SPREAD (off unless a profile or OCX_VECTOR_PARAMS sets it): a call too short to give every
 * compute unit a group of WG items runs in smaller groups (halved down to OCX__SPREAD_MIN items)
 * until it does, or cannot. PoCL runs a work-group per thread and loops over all of its items, in
 * range or not. On the 2-core AVX-512 Xeon, where such a kernel takes about a microsecond, it paid
 * (ocx-bench vector, kernel time, median of 7 processes, x CLBlast's fast kernels, off / on): f32
 * axpy of 1000, 4096 and 8192 elements 0.60 / 0.92, 0.77 / 1.05, 0.88 / 1.05, mul 0.64 / 1.19,
 * 0.88 / 1.22, 1.11 / 1.23, scale of 4096 0.54 / 0.96; per call level within noise. On the GPU
 * machine's 16-core Xeon, where every such kernel took 15 us on either side, each extra group cost
 * about a microsecond more: f32 axpy of 4096 and 16384 ran 1.05 / 0.72 and 1.16 / 0.73, copy 1.02 /
 * 0.66 and 1.11 / 0.68; with SPREAD off, groups of 32 ran f32 of 4096-32768 at 0.57-0.69x where
 * groups of 512 ran 0.97-1.30x (doc/performance.md, "Short calls spread over the compute units").
 * Which way it goes is the machine's; the tuner's short-length timings were too noisy to decide it
 * (a search of the "small" class measured at 2^12 too confirmed 1.6x for what tools/profile-ab then
 * ran at 0.16-1.9x), so it is not searched, and GPUs (launch-bound there: 5-7.5 us either way on the
 * H100) keep it off too. Each group size is a build of its own (WG is a define). */
#define OCX__SPREAD_MIN 32
enum { P_WG, P_VW, P_GPC, P_GRID, P_NT, P_WPT, P_SPREAD, P_COUNT };
static const ocx__param_def vector_params[P_COUNT] = {
    /* name    gpu   cpu   min  max ladder */
    {"WG", 256, 512, 1, 1024, 1},
    {"VW", 4, 16, 1, 16, 1}, /* for f32/f16; f64 takes VW/2 */
    {"GROUPS_PER_CU", 64, 8, 1, 4096, 1, 1}, /* GRID=2 only; the host's grid, no -D define */
    {"GRID", 1, 1, 1, 2, 0}, /* 1: WPT vectors per work-item; 2: grid-stride loop */
    {"NT", 0, 1, 0, 1, 0, 0, 1}, /* 1: non-temporal stores of write-only results beyond the cache (run()) */
    {"WPT", 1, 1, 1, 8, 1, 0, 1}, /* GRID=1: vectors per work-item, a global size apart; CPUs' "large": 2 */
    {"SPREAD", 0, 0, 0, 1, 0, 1, 1}, /* 1: short calls in smaller groups, one a compute unit (above); off */
};

/* CPUs' "large" class (arrays beyond the caches): two streams a work-item (WPT, above). */
static int vector_class_defaults(const ocx_device_info *dev, ocx_dtype dtype, const char *size_class, int *v)
{
    (void)dtype;
    if (dev->type != OCX_DEVICE_CPU || strcmp(size_class, "large") != 0) return 0;
    v[P_WPT] = 2;
    return 1;
}

static const char *vector_invalid(const int *v, const ocx_device_info *dev, ocx_dtype dtype)
{
    if ((size_t)v[P_WG] > dev->max_work_group_size || (size_t)v[P_WG] > dev->max_work_item_sizes[0])
        return "WG exceeds the device's work-group size";
    (void)dtype; /* f64 takes VW/2 elements (run() below), so every VW suits every dtype */
    return NULL;
}

/* The grid-stride loop (GRID=2) ignores WPT and GRID=1 ignores GROUPS_PER_CU: those take fixed
 * values, so that the tuner builds each distinct kernel once. */
static void vector_canonical(int *v)
{
    if (v[P_GRID] == 2) v[P_WPT] = 1;
    else v[P_GPC] = vector_params[P_GPC].def_cpu;
}

const ocx__family ocx__family_vector = {.name = "vector",
                                        .source = "vector",
                                        .nparams = P_COUNT,
                                        .params = vector_params,
                                        .invalid = vector_invalid,
                                        .canonical = vector_canonical,
                                        .class_defaults = vector_class_defaults,
                                        .classes = ocx__classes_1d,
                                        .dtypes = OCX__DT_ALL};

/* The one launch path of this file: parameters → defines → geometry → ocx__launch. `items` is the
 * number of work-items that would cover the whole range (per element, or per vector when the kernel
 * takes its vectorised path); `apart`: the result shares no memory with an input; `extra`: defines
 * of the call's own (" -DNAME=V…", or NULL). */
static ocx_status run(ocx_context *ctx, ocx_stream *stream, ocx_dtype dtype, const char *kernel, size_t n,
                      int vectorised, int apart, unsigned nargs, const ocx__arg *args, size_t num_wait,
                      const ocx_event *wait, ocx_event *event, const char *extra)
{
    /* One kernel per program (-DKERNEL, numbered as in cl/vector.cl): PoCL compiles them all. Those
     * whose result is only written (VPATH_W there) can take non-temporal stores. */
    static const struct { const char *name; int write_only; } kernels[] = {
        {"vadd", 1},          {"vsub", 1},          {"vmul", 1},          {"vdiv", 1},
        {"axpby", 0},         {"scal", 0},          {"fill", 1},          {"copy_from_f32", 0},
        {"copy_from_f16", 0}, {"copy_from_f64", 0}, {"copy_same", 1}};
    int id = 0;
    for (int i = 0; i < (int)(sizeof kernels / sizeof *kernels); i++)
        if (!strcmp(kernels[i].name, kernel)) id = i + 1;
    OCX__FAIL_IF(!id, OCX_ERR_INTERNAL, "vector: no kernel %s", kernel);
    if (!n) { /* nothing to run: no lookup (ocx_last_params() keeps its record), the wait list honoured */
        ocx__launch_desc none = {"vector", "", kernel, 1, {0}, {0}, 0, NULL};
        return ocx__launch(ctx, stream, &none, num_wait, wait, event);
    }
    ocx__params p;
    const char *cls = ocx__size_class_1d(ctx, n);
    OCX__FORWARD(ocx__params_lookup(ctx, &ocx__family_vector, dtype, cls, &p));
    ocx__params_kernel(kernel);
    /* Non-temporal stores only for a kernel that writes its result without reading it, contiguous
     * (`vectorised`: the strided paths store element by element), into memory apart from its
     * inputs (`apart`: an in-place add reads its destination), where the result is at least
     * ocx__vector_nt_from (below; no cache reported: never); a smaller one is better left for
     * whatever reads it next. The other kernels, and f16 storage (moved as raw words,
     * cl/vector.cl), never take them: no second build of the same code. ocx_last_params() reports
     * NT=0 for a call that took none. */
    const int nt = kernels[id - 1].write_only && vectorised && apart && n >= ocx__vector_nt_from(ctx, dtype);
    int moved = p.v[P_NT] && !nt; /* the record (ocx_last_params) says what the call ran */
    if (!nt) p.v[P_NT] = 0;
    const size_t vw = ocx__vector_width(dtype, p.v[P_VW]);
    const size_t items = !vectorised ? n : ocx__vector_items(n, vw);
    const size_t per = ocx__div_up(items, (size_t)p.v[P_WPT]);
    size_t wg = (size_t)p.v[P_WG];
    if (p.v[P_SPREAD] && p.v[P_GRID] == 1) { /* one group a compute unit, where smaller groups give that */
        while (wg / 2 >= OCX__SPREAD_MIN && ocx__div_up(per, wg) < ctx->info.compute_units) wg /= 2;
        moved |= wg != (size_t)p.v[P_WG];
        p.v[P_WG] = (int)wg;
    }
    if (moved) ocx__params_record(&p, dtype, cls); /* VW as the parameter counts it, before f64's half */
    p.v[P_VW] = (int)vw;
    char options[512];
    ocx__dtype_defines(ctx, dtype, options, sizeof options);
    size_t ol = strlen(options);
    snprintf(options + ol, sizeof options - ol, " -DKERNEL=%d%s", id, extra ? extra : "");
    ocx__params_defines(&p, options, sizeof options);
    size_t groups = p.v[P_GRID] == 2 ? ocx__grid_groups(ctx, items, wg, (size_t)p.v[P_GPC]) : ocx__div_up(per, wg);
    ocx__launch_desc d = {"vector", options, kernel, 1, {groups * wg}, {wg}, nargs, args};
    return ocx__launch(ctx, stream, &d, num_wait, wait, event);
}

/* Non-temporal stores from a result of half the device's global memory cache, or of 64 MiB where
 * that is less. A server's last-level cache is shared by all of its cores (and virtual machines):
 * the 2-core AVX-512 Xeon reports 480 MiB, so half of it took them only from 2^26 f32 elements,
 * while its arrays of 2^24 already come from memory. There (PoCL, tools/profile-ab --kernel-time,
 * 21 rounds, the shipped profile with NT=0 against NT=1): add and copy of 2^24 and 2^25 f32 ran
 * 1.50-1.53x and 1.83-1.87x with them (20-21 rounds of 21), f64 2^23 and 2^24 1.44-1.53x and
 * 1.74-1.87x; 2^23 f32 (32 MiB) gained less (1.11-1.33x, 6-9 rounds of 11). A result read next
 * is then read from memory: an add followed by the asum of its result (a process each, three
 * rounds) ran 1.12-1.18x as fast with them at 2^24 f32, but 0.87-1.01x at 2^23 and 0.77-0.81x at
 * 2^22. */
#define OCX__NT_FROM_MAX ((size_t)64 << 20)
size_t ocx__vector_nt_from(const ocx_context *ctx, ocx_dtype dtype)
{
    const size_t cache = (size_t)ctx->info.global_mem_cache_bytes;
    const size_t from = cache / 2 < OCX__NT_FROM_MAX ? cache / 2 : OCX__NT_FROM_MAX;
    return dtype == OCX_F16 || cache == 0 ? SIZE_MAX : ocx__div_up(from, ocx_dtype_size(dtype));
}

static ocx_status binary(ocx_context *ctx, ocx_stream *stream, const char *kernel, size_t n, const ocx_buffer *x,
                         const ocx_buffer *y, ocx_buffer *z, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    ocx__event_clear(event, num_wait, wait);
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FORWARD(ocx__check_float(ctx, x, "x"));
    OCX__FORWARD(ocx__check_dtype(y, "y", x->dtype));
    OCX__FORWARD(ocx__check_dtype(z, "z", x->dtype));
    OCX__FORWARD(ocx__check_range(ctx, x, "x", 0, n, 1));
    OCX__FORWARD(ocx__check_range(ctx, y, "y", 0, n, 1));
    OCX__FORWARD(ocx__check_range(ctx, z, "z", 0, n, 1));
    OCX__FORWARD(ocx__check_alias(z, 1, x, 1, n, "z", "x"));
    OCX__FORWARD(ocx__check_alias(z, 1, y, 1, n, "z", "y"));
    ocx__arg args[] = {OCX__ARG_U64(n), OCX__ARG_MEM(x), OCX__ARG_U64(x->offset), OCX__ARG_MEM(y),
                       OCX__ARG_U64(y->offset), OCX__ARG_MEM(z), OCX__ARG_U64(z->offset)};
    int apart = !ocx__overlap(z, 0, n, x, 0, n) && !ocx__overlap(z, 0, n, y, 0, n);
    return run(ctx, stream, x->dtype, kernel, n, 1, apart, 7, args, num_wait, wait, event, NULL);
}

ocx_status ocx_add(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, const ocx_buffer *y,
                   ocx_buffer *z, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return binary(ctx, stream, "vadd", n, x, y, z, num_wait, wait, event);
}
ocx_status ocx_sub(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, const ocx_buffer *y,
                   ocx_buffer *z, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return binary(ctx, stream, "vsub", n, x, y, z, num_wait, wait, event);
}
ocx_status ocx_mul(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, const ocx_buffer *y,
                   ocx_buffer *z, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return binary(ctx, stream, "vmul", n, x, y, z, num_wait, wait, event);
}
ocx_status ocx_div(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, const ocx_buffer *y,
                   ocx_buffer *z, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return binary(ctx, stream, "vdiv", n, x, y, z, num_wait, wait, event);
}

/* A scalar argument in the arithmetic type of dtype (double for f64, float otherwise). */
static ocx__arg scalar_arg(ocx_dtype dtype, const double *value, float *f32)
{
    *f32 = (float)*value;
    if (dtype == OCX_F64) return (ocx__arg){OCX__ARG_VALUE, sizeof(cl_double), value};
    return (ocx__arg){OCX__ARG_VALUE, sizeof(cl_float), f32};
}

ocx_status ocx_axpby(ocx_context *ctx, ocx_stream *stream, size_t n, double alpha, const ocx_buffer *x, size_t incx,
                     double beta, ocx_buffer *y, size_t incy, size_t num_wait, const ocx_event *wait,
                     ocx_event *event)
{
    ocx__event_clear(event, num_wait, wait);
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FORWARD(ocx__check_float(ctx, x, "x"));
    OCX__FORWARD(ocx__check_dtype(y, "y", x->dtype));
    OCX__FORWARD(ocx__check_range(ctx, x, "x", 0, n, incx));
    OCX__FORWARD(ocx__check_range(ctx, y, "y", 0, n, incy));
    OCX__FORWARD(ocx__check_alias(y, incy, x, incx, n, "y", "x"));
    float a32, b32;
    ocx__arg args[] = {OCX__ARG_U64(n),        scalar_arg(x->dtype, &alpha, &a32),
                       OCX__ARG_MEM(x),        OCX__ARG_U64(x->offset),
                       OCX__ARG_U64(incx),     scalar_arg(x->dtype, &beta, &b32),
                       OCX__ARG_MEM(y),        OCX__ARG_U64(y->offset),
                       OCX__ARG_U64(incy)};
    /* Contiguous calls build the one form their beta takes (cl/vector.cl, FORM): a kernel without
     * the other forms' and the strided path's branches ran axpy on PoCL 1-2% faster (measured there). */
    const int contig = incx == 1 && incy == 1;
    const double b = x->dtype == OCX_F64 ? beta : (double)b32; /* as the kernel sees it: 1e-50 is 0 in f32 */
    const char *form = !contig ? NULL : b == 0 ? " -DFORM=0" : b == 1 ? " -DFORM=1" : " -DFORM=2";
    return run(ctx, stream, x->dtype, "axpby", n, contig, 1, 9, args, num_wait, wait, event, form);
}

ocx_status ocx_axpy(ocx_context *ctx, ocx_stream *stream, size_t n, double alpha, const ocx_buffer *x, size_t incx,
                    ocx_buffer *y, size_t incy, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return ocx_axpby(ctx, stream, n, alpha, x, incx, 1.0, y, incy, num_wait, wait, event);
}

/* scal and fill share a signature: (n, scalar, x, xo, incx). */
static ocx_status unary(ocx_context *ctx, ocx_stream *stream, const char *kernel, size_t n, double scalar,
                        ocx_buffer *x, size_t incx, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    ocx__event_clear(event, num_wait, wait);
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FORWARD(ocx__check_float(ctx, x, "x"));
    OCX__FORWARD(ocx__check_range(ctx, x, "x", 0, n, incx));
    float s32;
    ocx__arg args[] = {OCX__ARG_U64(n), scalar_arg(x->dtype, &scalar, &s32), OCX__ARG_MEM(x),
                       OCX__ARG_U64(x->offset), OCX__ARG_U64(incx)};
    return run(ctx, stream, x->dtype, kernel, n, incx == 1, 1, 5, args, num_wait, wait, event, NULL);
}

ocx_status ocx_scale(ocx_context *ctx, ocx_stream *stream, size_t n, double alpha, ocx_buffer *x, size_t incx,
                     size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return unary(ctx, stream, "scal", n, alpha, x, incx, num_wait, wait, event);
}

ocx_status ocx_fill(ocx_context *ctx, ocx_stream *stream, size_t n, double value, ocx_buffer *x, size_t incx,
                    size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    /* Rounded once, to f16 here, so that the kernel's float -> half conversion of the value is exact
     * (value -> float -> half could round twice: 1 + 2^-11 + 2^-40 gave 1). */
    if (x && x->dtype == OCX_F16) value = ocx_half_to_float(ocx__half_from_double(value));
    return unary(ctx, stream, "fill", n, value, x, incx, num_wait, wait, event);
}

ocx_status ocx_copy(ocx_context *ctx, ocx_stream *stream, size_t n, const ocx_buffer *x, size_t incx, ocx_buffer *y,
                    size_t incy, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    ocx__event_clear(event, num_wait, wait);
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FORWARD(ocx__check_float(ctx, x, "x"));
    OCX__FORWARD(ocx__check_float(ctx, y, "y"));
    OCX__FORWARD(ocx__check_range(ctx, x, "x", 0, n, incx));
    OCX__FORWARD(ocx__check_range(ctx, y, "y", 0, n, incy));
    OCX__FAIL_IF(ocx__overlap(x, 0, n ? (n - 1) * incx + 1 : 0, y, 0, n ? (n - 1) * incy + 1 : 0),
                 OCX_ERR_INVALID_ARGUMENT, "ocx_copy: x and y overlap");
    if (x->dtype == y->dtype && incx == 1 && incy == 1) {
        ocx__arg args[] = {OCX__ARG_U64(n), OCX__ARG_MEM(x), OCX__ARG_U64(x->offset), OCX__ARG_MEM(y),
                           OCX__ARG_U64(y->offset)};
        return run(ctx, stream, y->dtype, "copy_same", n, 1, 1, 5, args, num_wait, wait, event, NULL);
    }
    static const char *from[OCX_DTYPE_COUNT] = {"copy_from_f32", "copy_from_f16", "copy_from_f64"};
    ocx__arg args[] = {OCX__ARG_U64(n),        OCX__ARG_MEM(x), OCX__ARG_U64(x->offset), OCX__ARG_U64(incx),
                       OCX__ARG_MEM(y),        OCX__ARG_U64(y->offset), OCX__ARG_U64(incy)};
    return run(ctx, stream, y->dtype, from[x->dtype], n, 0, 1, 7, args, num_wait, wait, event, NULL);
}
