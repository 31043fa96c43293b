/* peaks.c — the device's measured ceilings (cl/peaks.cl), cached per device fingerprint as a small
 * JSON file beside the binary cache, and the roofline arithmetic over them.
 *
 * These figures follow clpeak 1.1.2 (the Debian package) by definition, so that the two can be compared:
 *   global memory bandwidth — clpeak's src/global_bandwidth.cpp and kernels/global_bandwidth_kernels.cl:
 *     an array of N floats, N = min(max alloc / 2 bytes, 2^29 floats on a GPU, 2^27 on a CPU) rounded
 *     down to a multiple of wg × 16 × 16; each work-item sums 16 floatW of it in one of two patterns
 *     (work-group blocks, clpeak's "local_offset"; grid-wide slabs, "global_offset") and writes one
 *     float; rate = N × 4 bytes (what is read: the writes, 1/(16 W) of it, are not counted) ÷ the time
 *     of one launch on the host clock over back-to-back launches after two warm-ups (clpeak's default
 *     timer: one batch of 50 launches on a GPU, 20 on a CPU; here the median of 5 batches of 10 or 4);
 *     the faster pattern per width W, the best of W = 1, 2, 4, 8, 16 reported.
 *   kernel launch latency — clpeak's src/kernel_latency.cpp: its float read kernel over one work-group
 *     per compute unit, two warm-ups, then each launch followed by clFinish; CL_PROFILING_COMMAND_START
 *     − _QUEUED, the mean over 20000 launches (1.1.2 takes QUEUED → START, as its binary shows; later
 *     clpeak sources take QUEUED → END).
 *   host↔device transfers — clpeak's src/transfer_bandwidth.cpp: blocking clEnqueueWriteBuffer and
 *     clEnqueueReadBuffer timed on the host clock (its default timer); here 256 MiB, the median of
 *     several after two warm-ups, from pageable memory and from pinned (CL_MEM_ALLOC_HOST_PTR) memory.
 *
 * Cache file (peaks-<fingerprint>.json, or peaks-<fingerprint>-quick.json):
 *   {"format": 2, "ocx_version": "0.1.0", "fingerprint": "…", "device": "…", "driver": "…",
 *    "quick": false, "fp16": false, "fp64": true, "global_gbps": 21.3, …every double of ocx_peaks…}
 * A file whose format, fingerprint, mode or capabilities differ, or whose figures are missing,
 * non-numeric, negative, above 10^8 or inconsistent (f64 figure without fp64), is ignored with one warning and
 * replaced by a fresh measurement. Format 2: global_gbps counts bytes read only (format 1 added the
 * read kernel's writes) over clpeak's array and patterns, and launch_latency_us is queued → start (format
 * 1: queued → end of an empty kernel); files of format 1 are measured again. Format 3 adds
 * tc_f16_gflops. Format 4 times host transfers on the host clock (format 3: their events). Format 5
 * takes the better of mad() and fma() for the CPU FMA figure. Format 6
 * measures tc_f16_gflops with wgmma where the tensor-core GEMM takes it (compute capability 9.0).
 * Format 7: a quick FMA figure takes the device's preferred vector width (format 6: 4 wide, a third
 * of an AVX-512 CPU's throughput). Format 8 names the tensor-core instruction tc_f16_gflops timed
 * ("none", "mma.sync" or "wgmma"): OCX_VENDOR_PATHS and the probe choose it, and a figure measured
 * under one choice is not reused under another (format 7 kept a 0 measured with the path off).
 */
#include "config.h"
#include "ocx_internal.h"
#include "peaks_internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PEAKS_FORMAT 8 /* 5: the CPU FMA figure is the better of mad() and fma(); 6: tc_f16_gflops by wgmma where the GEMM takes it; 7: quick FMA at the preferred width; 8: the tensor-core instruction named */

static atomic_ulong measurements;

unsigned long ocx__peaks_measurements(void) { return atomic_load(&measurements); }

/* ---- the roofline ------------------------------------------------------------------------------ */

static double compute_roof(const ocx_peaks *p, ocx_dtype dtype)
{
    switch (dtype) {
    case OCX_F16: return p->f16_gflops > p->f32_gflops ? p->f16_gflops : p->f32_gflops;
    case OCX_F64: return p->f64_gflops;
    default: return p->f32_gflops;
    }
}

/* Where every figure of out is finite: finite inputs whose quotients overflow a double (flops near
 * 1e308 in a fraction of a nanosecond, a subnormal byte count) gave an infinite efficiency, or NaN
 * (an intensity that underflows to 0). */
static ocx_status roofline_finite(ocx_roofline *out, double flops, double bytes, double ns)
{
    const double v[] = {out->intensity, out->achieved_gflops, out->achieved_gbps, out->bound_gflops,
                        out->bound_gbps, out->efficiency};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (!isfinite(v[i])) {
            memset(out, 0, sizeof *out);
            return ocx__error(OCX_ERR_INVALID_ARGUMENT,
                              "ocx_roofline_eval: %g flops and %g bytes in %g ns give figures beyond a double's range", flops,
                              bytes, ns);
        }
    return OCX_OK;
}

ocx_status ocx_roofline_eval(const ocx_peaks *peaks, ocx_dtype dtype, double flops, double bytes, double ns,
                             double bandwidth_gbps, ocx_roofline *out)
{
    OCX__FAIL_IF(!peaks || !out, OCX_ERR_INVALID_ARGUMENT, "ocx_roofline_eval: peaks and out must not be NULL");
    memset(out, 0, sizeof *out);
    OCX__FAIL_IF(!(ns > 0) || !isfinite(ns), OCX_ERR_INVALID_ARGUMENT, "ocx_roofline_eval: time %g ns is not positive",
                 ns);
    OCX__FAIL_IF(!(flops >= 0) || !(bytes >= 0) || !isfinite(flops) || !isfinite(bytes), OCX_ERR_INVALID_ARGUMENT,
                 "ocx_roofline_eval: flops (%g) and bytes (%g) must be finite and not negative", flops, bytes);
    OCX__FAIL_IF(flops == 0 && bytes == 0, OCX_ERR_INVALID_ARGUMENT,
                 "ocx_roofline_eval: an operation with neither flops nor bytes has no roof");
    OCX__FAIL_IF((unsigned)dtype >= OCX_DTYPE_COUNT, OCX_ERR_INVALID_ARGUMENT, "ocx_roofline_eval: unknown dtype %d",
                 (int)dtype);
    OCX__FAIL_IF(isnan(bandwidth_gbps) || isinf(bandwidth_gbps), OCX_ERR_INVALID_ARGUMENT,
                 "ocx_roofline_eval: bandwidth %g GB/s is not finite", bandwidth_gbps);
    double bw = bandwidth_gbps > 0 ? bandwidth_gbps : peaks->global_gbps;
    OCX__FAIL_IF(bytes > 0 && !(bw > 0), OCX_ERR_INVALID_ARGUMENT,
                 "ocx_roofline_eval: no bandwidth roof (peaks not measured?)");
    OCX__FAIL_IF(bytes > 0 && isinf(bw), OCX_ERR_INVALID_ARGUMENT, "ocx_roofline_eval: the bandwidth roof is infinite");
    /* the compute roof, where flops need one, checked before anything is written to *out */
    const double peak = flops > 0 ? compute_roof(peaks, dtype) : 0;
    OCX__FAIL_IF(flops > 0 && !(peak > 0), OCX_ERR_INVALID_ARGUMENT,
                 "ocx_roofline_eval: no %s compute roof on this device", ocx_dtype_name(dtype));
    OCX__FAIL_IF(isinf(peak), OCX_ERR_INVALID_ARGUMENT, "ocx_roofline_eval: the %s compute roof is infinite",
                 ocx_dtype_name(dtype));
    out->achieved_gflops = flops / ns;
    out->achieved_gbps = bytes / ns;
    if (flops == 0) { /* pure traffic: the bandwidth roof alone */
        out->bound_gbps = bw;
        out->efficiency = out->achieved_gbps / bw;
        out->memory_bound = 1;
        return roofline_finite(out, flops, bytes, ns);
    }
    out->peak_gflops = peak;
    if (bytes == 0) { /* traffic unknown: the compute roof alone */
        out->bound_gflops = peak;
        out->efficiency = out->achieved_gflops / peak;
        return roofline_finite(out, flops, bytes, ns);
    }
    out->intensity = flops / bytes;
    double slope = bw * out->intensity;
    out->memory_bound = slope < peak;
    out->bound_gflops = out->memory_bound ? slope : peak;
    out->bound_gbps = out->bound_gflops / out->intensity;
    out->efficiency = out->achieved_gflops / out->bound_gflops;
    return roofline_finite(out, flops, bytes, ns);
}

/* ---- the cache file ---------------------------------------------------------------------------- */

/* The tensor-core instruction measure_tensor_cores times on ctx under the present OCX_VENDOR_PATHS,
 * looked up once a call of ocx_measure_peaks: its name for the cache file ("none": the figure is
 * 0; "mma.sync"; "wgmma") and the peak kernel's build options. */
typedef struct tc_path {
    const char *name;
    char options[512];
    int wgmma_n;
} tc_path;

static void tensor_core_path(ocx_context *ctx, tc_path *tc)
{
    tc->wgmma_n = 0;
    tc->name = "none";
    if (ocx__gemm_nv_hardware(ctx) &&
        ocx__gemm_nv_peak_options(ctx, tc->options, sizeof tc->options, &tc->wgmma_n) == OCX_OK)
        tc->name = tc->wgmma_n ? "wgmma" : "mma.sync";
}

/* The doubles of ocx_peaks by name: one table for the writer, the reader and the tests. */
static const struct {
    const char *name;
    size_t offset;
} fields[] = {
#define F(x) {#x, offsetof(ocx_peaks, x)}
    F(global_gbps),       F(copy_gbps),         F(f32_gflops),      F(f16_gflops),
    F(f64_gflops),        F(h2d_pageable_gbps), F(d2h_pageable_gbps), F(h2d_pinned_gbps),
    F(d2h_pinned_gbps),   F(launch_latency_us), F(launch_wall_us),  F(measure_s),
    F(tc_f16_gflops),
#undef F
};
#define NFIELDS (sizeof fields / sizeof fields[0])
#define FIELD(p, i) (*(double *)((char *)(p) + fields[i].offset))

ocx_status ocx_peaks_cache_path(const ocx_context *ctx, unsigned flags, char *path, size_t cap)
{
    OCX__FAIL_IF(!path || cap == 0, OCX_ERR_INVALID_ARGUMENT, "ocx_peaks_cache_path: path must not be NULL");
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF(flags & ~(OCX_PEAKS_REFRESH | OCX_PEAKS_QUICK), OCX_ERR_INVALID_ARGUMENT,
                 "ocx_peaks_cache_path: unknown flag bits 0x%x", flags & ~(OCX_PEAKS_REFRESH | OCX_PEAKS_QUICK));
    /* Under simulated limits the figures (a copy kernel's work-groups, say) are not the device's:
     * neither read from its file nor written there. The path is written only on success: "" means
     * no caching, so a failure must not leave one. */
    char dir[4096] = "";
    if (!ctx->info.limited) ocx__cache_dir(dir, sizeof dir);
    if (!dir[0]) return ocx__path_out(path, cap, "ocx_peaks_cache_path", "%s", "");
    return ocx__path_out(path, cap, "ocx_peaks_cache_path", "%s/peaks-%s%s.json", dir, ctx->info.fingerprint,
                         (flags & OCX_PEAKS_QUICK) ? "-quick" : "");
}

/* Above every figure a device gives in the file's units (GB/s, GFLOP/s, microseconds, seconds): an
 * H200's tensor cores run 10^6 GFLOP/s, its memory 5 * 10^3 GB/s. */
#define PEAKS_IMPLAUSIBLE 1e8

/* NULL when the parsed file is a valid result for ctx in this mode (and fills *p), else why not. */
static const char *peaks_from_json(const ocx_context *ctx, int quick, const char *tc_name, json_t *root,
                                   ocx_peaks *p)
{
    if (!json_is_object(root)) return "not a JSON object";
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_integer(fmt) || json_integer_value(fmt) != PEAKS_FORMAT) return "unknown format";
    const char *fp = json_string_value(json_object_get(root, "fingerprint"));
    if (!fp || strcmp(fp, ctx->info.fingerprint) != 0) return "another device's fingerprint";
    json_t *q = json_object_get(root, "quick"), *h = json_object_get(root, "fp16"), *d = json_object_get(root, "fp64");
    if (!json_is_boolean(q) || json_is_true(q) != quick) return "another measuring mode";
    if (!json_is_boolean(h) || !json_is_boolean(d) || json_is_true(h) != !!ctx->info.has_fp16 ||
        json_is_true(d) != !!ctx->info.has_fp64)
        return "measured with other device capabilities";
    const char *tc = json_string_value(json_object_get(root, "tensor_cores"));
    if (!tc || strcmp(tc, tc_name) != 0)
        return "measured with another tensor-core path (OCX_VENDOR_PATHS)";
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < NFIELDS; i++) {
        json_t *v = json_object_get(root, fields[i].name);
        if (!json_is_number(v)) return "a figure is missing or not a number";
        double x = json_number_value(v);
        if (!isfinite(x) || x < 0) return "a figure is negative or not finite";
        if (x > PEAKS_IMPLAUSIBLE) return "a figure no device measures (edited?)";
        FIELD(p, i) = x;
    }
    json_t *w = json_object_get(root, "global_width");
    if (!json_is_integer(w) || json_integer_value(w) < 1 || json_integer_value(w) > 16) return "bad global_width";
    p->global_width = (unsigned)json_integer_value(w);
    if (!(p->global_gbps > 0) || !(p->copy_gbps > 0) || !(p->f32_gflops > 0) || !(p->launch_latency_us >= 0))
        return "a required figure is zero";
    if ((p->f16_gflops > 0) != !!ctx->info.has_fp16 || (p->f64_gflops > 0) != !!ctx->info.has_fp64 ||
        (p->tc_f16_gflops > 0 && strcmp(tc, "none") == 0))
        return "figures disagree with the device's capabilities";
    snprintf(p->fingerprint, sizeof p->fingerprint, "%s", ctx->info.fingerprint);
    p->quick = quick;
    return NULL;
}

static int peaks_load(const ocx_context *ctx, const char *path, int quick, const char *tc_name, ocx_peaks *p)
{
    const char *why;
    FILE *f = ocx__open_regular(path, &why);
    if (!f && errno == ENOENT) return 0;
    json_error_t jerr;
    json_t *root = f ? json_loadf(f, 0, &jerr) : NULL;
    if (f) {
        fclose(f);
        why = root ? peaks_from_json(ctx, quick, tc_name, root, p) : jerr.text;
    }
    json_decref(root);
    if (why) {
        ocx__warn("peaks cache %s: %s; measuring again", path, why);
        return 0;
    }
    p->from_cache = 1;
    return 1;
}

static void peaks_store(const ocx_context *ctx, const char *path, const char *tc_name, const ocx_peaks *p)
{
    char dir[4400];
    ocx__parent_dir(path, dir, sizeof dir);
    json_t *root = json_pack("{s:i, s:s, s:s, s:s, s:s, s:b, s:b, s:b, s:s, s:i}", "format", PEAKS_FORMAT,
                             "ocx_version", OCX_VERSION_STRING, "fingerprint", ctx->info.fingerprint, "device",
                             ctx->info.name, "driver", ctx->info.driver_version, "quick", p->quick, "fp16",
                             ctx->info.has_fp16, "fp64", ctx->info.has_fp64, "tensor_cores",
                             tc_name, "global_width", (int)p->global_width);
    for (size_t i = 0; root && i < NFIELDS; i++)
        json_object_set_new(root, fields[i].name, json_real(FIELD(p, i)));
    const int err = !root                              ? ENOMEM
                    : ocx__cache_ensure_dir(dir) != 0 ? errno
                                                      : ocx__json_dump_atomic(root, path, JSON_INDENT(2));
    if (err) ocx__warn("peaks cache %s could not be written (%s); the figures are not kept", path, strerror(err));
    json_decref(root);
}

/* ---- measuring --------------------------------------------------------------------------------- */

#define MAX_REPS 128

/* Profiling span of one finished event, from one CL_PROFILING_COMMAND_* stamp to a later one (0 when
 * the driver's stamps run backwards). */
static ocx_status event_span(cl_event ev, cl_profiling_info from, cl_profiling_info to, double *ns)
{
    cl_ulong a = 0, b = 0;
    OCX__CL_FORWARD(ocx__wait_events(1, &ev), "clWaitForEvents");
    OCX__CL_FORWARD(clGetEventProfilingInfo(ev, from, sizeof a, &a, NULL), "clGetEventProfilingInfo");
    OCX__CL_FORWARD(clGetEventProfilingInfo(ev, to, sizeof b, &b, NULL), "clGetEventProfilingInfo");
    *ns = b > a ? (double)(b - a) : 0.0;
    return OCX_OK;
}

/* Device time (start → end) of one finished event. */
static ocx_status event_ns(cl_event ev, double *ns)
{
    return event_span(ev, CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END, ns);
}

/* Median device time of `reps` launches after one warm-up. */
static ocx_status time_kernel(ocx_context *ctx, const ocx__launch_desc *d, int reps, double *ns)
{
    double t[MAX_REPS];
    for (int r = -1; r < reps; r++) {
        cl_event ev = NULL;
        OCX__FORWARD(ocx__launch(ctx, NULL, d, 0, NULL, &ev));
        double x = 0;
        ocx_status st = event_ns(ev, &x);
        clReleaseEvent(ev);
        OCX__FORWARD(st);
        if (r >= 0) t[r] = x;
    }
    *ns = ocx__median(t, reps);
    return OCX_OK;
}

/* Time of one launch the way clpeak's default timer takes it: two warm-up launches and a finish, then
 * launches back to back (each flushed) and one finish, host clock ÷ launches. `batches` such batches
 * of `per` launches; the median batch. */
static ocx_status time_back_to_back(ocx_context *ctx, const ocx__launch_desc *d, int batches, int per, double *ns)
{
    double t[MAX_REPS];
    cl_command_queue q = ctx->stream.queue;
    for (int w = 0; w < 2; w++) OCX__FORWARD(ocx__launch(ctx, NULL, d, 0, NULL, NULL));
    OCX__CL_FORWARD(clFinish(q), "peaks: clFinish");
    for (int k = 0; k < batches; k++) {
        double t0 = ocx__now_s();
        for (int i = 0; i < per; i++) {
            OCX__FORWARD(ocx__launch(ctx, NULL, d, 0, NULL, NULL));
            OCX__CL_FORWARD(clFlush(q), "peaks: clFlush");
        }
        OCX__CL_FORWARD(clFinish(q), "peaks: clFinish");
        t[k] = (ocx__now_s() - t0) * 1e9 / per;
    }
    *ns = ocx__median(t, batches);
    return OCX_OK;
}

static ocx_status make_mem(ocx_context *ctx, cl_mem_flags flags, size_t bytes, cl_mem *out)
{
    cl_int err;
    *out = clCreateBuffer(ctx->context, flags, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        *out = NULL;
        return ocx__cl_error(err, "peaks: clCreateBuffer");
    }
    return OCX_OK;
}

/* Gives a buffer defined contents (1.0f everywhere), touching every page. */
static ocx_status fill_ones(ocx_context *ctx, cl_mem m, size_t bytes)
{
    cl_float one = 1.0f;
    OCX__CL_FORWARD(clEnqueueFillBuffer(ctx->stream.queue, m, &one, sizeof one, 0, bytes, 0, NULL, NULL),
                    "peaks: clEnqueueFillBuffer");
    OCX__CL_FORWARD(clFinish(ctx->stream.queue), "peaks: clFinish after the fill");
    return OCX_OK;
}

/* The work-group size of every peak kernel: a power of two ≤ 256 the device accepts (clpeak's is
 * min(max work-item size, 256)). */
static size_t peak_wg(const ocx_context *ctx)
{
    size_t lim = ctx->info.max_work_group_size < ctx->info.max_work_item_sizes[0] ? ctx->info.max_work_group_size
                                                                                   : ctx->info.max_work_item_sizes[0];
    size_t wg = 256;
    while (wg > 1 && wg > lim) wg /= 2;
    return wg;
}

typedef struct plan {
    int quick, reps;
    size_t wg;
    size_t bw_bytes;  /* the array the bandwidth kernels read (clpeak's size) */
    int bw_batches, bw_per; /* back-to-back timing of the read kernels: batches × launches */
    size_t xfer_bytes;
    double fma_target_ns;
} plan;

#define BW_FETCH 16 /* clpeak's FETCH_PER_WI */

/* Global memory bandwidth (clpeak's definition, see the top of this file) and the copy kernel. */
static ocx_status measure_bandwidth(ocx_context *ctx, const plan *pl, ocx_peaks *p)
{
    static const unsigned widths[] = {1, 2, 4, 8, 16};
    static const char *const patterns[] = {"bw_read_group", "bw_read_grid"};
    cl_mem a = NULL, b = NULL;
    ocx_status st = make_mem(ctx, CL_MEM_READ_WRITE, pl->bw_bytes, &a);
    if (st == OCX_OK) st = make_mem(ctx, CL_MEM_READ_WRITE, pl->bw_bytes, &b);
    if (st == OCX_OK) st = fill_ones(ctx, a, pl->bw_bytes);
    for (size_t i = 0; st == OCX_OK && i < sizeof widths / sizeof widths[0]; i++) {
        unsigned vw = widths[i];
        if (pl->quick && vw != 4) continue;
        char opt[96];
        snprintf(opt, sizeof opt, "-DDTYPE=0 -DVW=%u -DFETCH=%d", vw, BW_FETCH);
        size_t vecs = pl->bw_bytes / (sizeof(cl_float) * vw);
        ocx__arg args[] = {{OCX__ARG_VALUE, sizeof(cl_mem), &a}, {OCX__ARG_VALUE, sizeof(cl_mem), &b}};
        double best = 0, ns = 0;
        for (int k = 0; st == OCX_OK && k < 2; k++) {
            ocx__launch_desc rd = {"peaks", opt, patterns[k], 1, {vecs / BW_FETCH}, {pl->wg}, 2, args};
            st = time_back_to_back(ctx, &rd, pl->bw_batches, pl->bw_per, &ns);
            if (st == OCX_OK && ns > 0 && (best == 0 || ns < best)) best = ns;
        }
        if (st != OCX_OK) break;
        double gbps = best > 0 ? pl->bw_bytes / best : 0;
        if (gbps > p->global_gbps) {
            p->global_gbps = gbps;
            p->global_width = vw;
        }
        ocx__launch_desc cp = {"peaks", opt, "bw_copy", 1, {vecs}, {pl->wg}, 2, args};
        st = time_kernel(ctx, &cp, pl->reps, &ns);
        gbps = ns > 0 ? 2.0 * pl->bw_bytes / ns : 0;
        if (st == OCX_OK && gbps > p->copy_gbps) p->copy_gbps = gbps;
    }
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    return st;
}

/* Times a compute loop whose count *iters (an argument of d) starts small: one probe launch, the
 * count scaled so that a launch lasts about pl->fma_target_ns, then the median of pl->reps. */
static ocx_status time_scaled(ocx_context *ctx, const plan *pl, const ocx__launch_desc *d, cl_int *iters,
                              double *ns)
{
    OCX__FORWARD(time_kernel(ctx, d, 1, ns));
    double scale = *ns > 0 ? pl->fma_target_ns / *ns : 64;
    if (scale > 1) *iters = (cl_int)fmin(*iters * scale, 1 << 20);
    return time_kernel(ctx, d, pl->reps, ns);
}

/* The one vector width a quick FMA measurement takes: the device's preferred float width, at least 4
 * (GPUs prefer 1 and hide latency across work-items; CPUs need their register width: 4-wide vectors
 * on the AVX-512 Xeon measured 125 GFLOP/s quick against 465 at 16 wide, under the GEMM's own 260). */
static unsigned quick_fma_width(const ocx_context *ctx)
{
    unsigned vw = 4;
    while (vw < 16 && vw * 2 <= ctx->info.preferred_vector_width_float) vw *= 2;
    return vw;
}

/* FMA throughput of one dtype: best over vector widths and, on CPUs, over mad() and fma() (see
 * fma_peak; on GPUs both are the FMA instruction). The loop count comes as an argument and is scaled
 * from a probe so that one launch lasts about pl->fma_target_ns. */
static ocx_status measure_fma(ocx_context *ctx, const plan *pl, int dtype_code, double *gflops)
{
    static const unsigned widths[] = {1, 2, 4, 8, 16};
    size_t groups = (size_t)(ctx->info.compute_units ? ctx->info.compute_units : 1) *
                    (ctx->info.type == OCX_DEVICE_CPU ? 4 : 16);
    size_t global = groups * pl->wg;
    size_t es = dtype_code == 1 ? 2 : dtype_code == 2 ? 8 : 4;
    cl_mem out = NULL;
    OCX__FORWARD(make_mem(ctx, CL_MEM_WRITE_ONLY, global * es, &out));
    ocx_status st = OCX_OK;
    *gflops = 0;
    const int ops = ctx->info.type == OCX_DEVICE_CPU ? 2 : 1; /* FMAOP 0 (mad), 1 (fma) */
    const size_t nwidths = sizeof widths / sizeof widths[0];
    const unsigned quick_vw = quick_fma_width(ctx);
    for (size_t k = 0; st == OCX_OK && k < nwidths * (size_t)ops; k++) {
        const unsigned vw = widths[k / (size_t)ops];
        const int op = (int)(k % (size_t)ops);
        if (pl->quick && vw != quick_vw) continue;
        char opt[96];
        snprintf(opt, sizeof opt, "-DDTYPE=%d -DVW=%u -DFMAOP=%d", dtype_code, vw, op);
        cl_ushort a16 = 0x3c00; /* 1.0 in binary16 */
        cl_float a32 = 1.0f;
        cl_double a64 = 1.0;
        cl_int iters = 8;
        ocx__arg args[] = {{OCX__ARG_VALUE, sizeof(cl_mem), &out},
                           dtype_code == 1   ? (ocx__arg){OCX__ARG_VALUE, sizeof a16, &a16}
                           : dtype_code == 2 ? (ocx__arg){OCX__ARG_VALUE, sizeof a64, &a64}
                                             : (ocx__arg){OCX__ARG_VALUE, sizeof a32, &a32},
                           {OCX__ARG_VALUE, sizeof iters, &iters}};
        ocx__launch_desc d = {"peaks", opt, "fma_peak", 1, {global}, {pl->wg}, 3, args};
        double ns = 0;
        st = time_scaled(ctx, pl, &d, &iters, &ns);
        double flops = (double)global * iters * 32 * 2 * vw;
        if (st == OCX_OK && ns > 0 && flops / ns > *gflops) *gflops = flops / ns;
    }
    clReleaseMemObject(out);
    return st;
}

/* Tensor-core throughput (f16 multiply, f32 accumulate) where the NVIDIA path runs on the hardware,
 * with the instructions the GEMM takes: cl/gemm_nv_mma.cl's wgmma_peak (operands in local memory,
 * work-groups of two warpgroups as the GEMM's defaults, two a compute unit) where its parameters
 * take wgmma, else the register-only mma_peak (mma.sync). */
static ocx_status measure_tensor_cores(ocx_context *ctx, const plan *pl, const tc_path *tc, double *gflops)
{
    *gflops = 0;
    if (strcmp(tc->name, "none") == 0) return OCX_OK;
    const int wgmma_n = tc->wgmma_n;
    const size_t units = ctx->info.compute_units ? ctx->info.compute_units : 1;
    size_t wg = wgmma_n ? 256 : 128, global = units * (wgmma_n ? 2 : 8) * wg;
    cl_mem out = NULL;
    OCX__FORWARD(make_mem(ctx, CL_MEM_WRITE_ONLY, global * sizeof(cl_float), &out));
    cl_int iters = 16;
    ocx__arg args[] = {{OCX__ARG_VALUE, sizeof(cl_mem), &out}, {OCX__ARG_VALUE, sizeof iters, &iters}};
    ocx__launch_desc d = {"gemm_nv_mma", tc->options, wgmma_n ? "wgmma_peak" : "mma_peak", 1, {global}, {wg}, 2, args};
    double ns = 0;
    ocx_status st = time_scaled(ctx, pl, &d, &iters, &ns);
    /* a warpgroup's round: 64 x WN x 64 x 2; a warp's (mma.sync): 8 x 4096 */
    double flops = wgmma_n ? (double)(global / 128) * iters * 64.0 * wgmma_n * 64 * 2
                           : (double)(global / 32) * iters * 8 * 4096;
    if (st == OCX_OK && ns > 0) *gflops = flops / ns;
    clReleaseMemObject(out);
    return st;
}

/* Median bandwidth of blocking writes (or reads) between `host` and a device buffer, after two
 * warm-up transfers (the first touches fresh pages). Timed on the host clock around each blocking
 * call, as clpeak 1.1.2 times them and as a caller waits for them: a pageable read's event can end
 * before the driver's copy out of its staging memory does (H200: 15.4-15.8 GB/s by the event where
 * clpeak, on the host clock, measured 12.3-13.3 in the same rounds). */
static ocx_status time_transfer(ocx_context *ctx, const plan *pl, cl_mem dev, void *host, int write, double *gbps)
{
    double t[MAX_REPS];
    for (int r = -2; r < pl->reps; r++) {
        double t0 = ocx__now_s();
        cl_int err = write ? clEnqueueWriteBuffer(ctx->stream.queue, dev, CL_TRUE, 0, pl->xfer_bytes, host, 0, NULL, NULL)
                           : clEnqueueReadBuffer(ctx->stream.queue, dev, CL_TRUE, 0, pl->xfer_bytes, host, 0, NULL, NULL);
        double ns = (ocx__now_s() - t0) * 1e9;
        if (err != CL_SUCCESS) return ocx__cl_error(err, write ? "peaks: clEnqueueWriteBuffer" : "peaks: clEnqueueReadBuffer");
        if (r >= 0) t[r] = ns;
    }
    double ns = ocx__median(t, pl->reps);
    *gbps = ns > 0 ? pl->xfer_bytes / ns : 0;
    return OCX_OK;
}

static ocx_status measure_transfers(ocx_context *ctx, const plan *pl, ocx_peaks *p)
{
    cl_mem dev = NULL, pinned = NULL;
    void *pinned_ptr = NULL;
    unsigned char *pageable = malloc(pl->xfer_bytes);
    OCX__FAIL_IF(!pageable, OCX_ERR_OUT_OF_MEMORY, "peaks: %zu bytes of host memory", pl->xfer_bytes);
    memset(pageable, 1, pl->xfer_bytes); /* touch every page first */
    ocx_status st = make_mem(ctx, CL_MEM_READ_WRITE, pl->xfer_bytes, &dev);
    if (st == OCX_OK) st = make_mem(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, pl->xfer_bytes, &pinned);
    if (st == OCX_OK) {
        cl_int err;
        pinned_ptr = clEnqueueMapBuffer(ctx->stream.queue, pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                        pl->xfer_bytes, 0, NULL, NULL, &err);
        if (err != CL_SUCCESS) st = ocx__cl_error(err, "peaks: clEnqueueMapBuffer");
        else memset(pinned_ptr, 2, pl->xfer_bytes);
    }
    if (st == OCX_OK) st = time_transfer(ctx, pl, dev, pageable, 1, &p->h2d_pageable_gbps);
    if (st == OCX_OK) st = time_transfer(ctx, pl, dev, pageable, 0, &p->d2h_pageable_gbps);
    if (st == OCX_OK) st = time_transfer(ctx, pl, dev, pinned_ptr, 1, &p->h2d_pinned_gbps);
    if (st == OCX_OK) st = time_transfer(ctx, pl, dev, pinned_ptr, 0, &p->d2h_pinned_gbps);
    if (pinned_ptr) {
        clEnqueueUnmapMemObject(ctx->stream.queue, pinned, pinned_ptr, 0, NULL, NULL);
        clFinish(ctx->stream.queue);
    }
    if (pinned) clReleaseMemObject(pinned);
    if (dev) clReleaseMemObject(dev);
    free(pageable);
    return st;
}

#define LATENCY_LAUNCHES 20000 /* clpeak's kernelLatencyIters */
#define LATENCY_BUDGET_S 3.0     /* fewer launches on a device too slow for 20000 in this time */

/* Kernel launch latency as clpeak 1.1.2 counts it (see the top of this file): the float read kernel,
 * one work-group per compute unit reading 16 floats per work-item, two warm-ups, then launches each
 * followed by clFinish; the mean of START − QUEUED. Beside it the host's view of the same launches:
 * enqueue until clFinish returns (median). */
static ocx_status measure_latency(ocx_context *ctx, const plan *pl, ocx_peaks *p)
{
    size_t units = ctx->info.compute_units ? ctx->info.compute_units : 1, items = units * pl->wg;
    int reps = pl->quick ? 64 : LATENCY_LAUNCHES;
    double *wall = malloc((size_t)reps * sizeof *wall);
    OCX__FAIL_IF(!wall, OCX_ERR_OUT_OF_MEMORY, "peaks: %d doubles", reps);
    cl_mem a = NULL, b = NULL;
    ocx_status st = make_mem(ctx, CL_MEM_READ_WRITE, items * BW_FETCH * sizeof(cl_float), &a);
    if (st == OCX_OK) st = make_mem(ctx, CL_MEM_READ_WRITE, items * sizeof(cl_float), &b);
    if (st == OCX_OK) st = fill_ones(ctx, a, items * BW_FETCH * sizeof(cl_float));
    char opt[96];
    snprintf(opt, sizeof opt, "-DDTYPE=0 -DVW=1 -DFETCH=%d", BW_FETCH);
    ocx__arg args[] = {{OCX__ARG_VALUE, sizeof(cl_mem), &a}, {OCX__ARG_VALUE, sizeof(cl_mem), &b}};
    ocx__launch_desc d = {"peaks", opt, "bw_read_group", 1, {items}, {pl->wg}, 2, args};
    for (int w = 0; st == OCX_OK && w < 2; w++) st = ocx__launch(ctx, NULL, &d, 0, NULL, NULL);
    if (st == OCX_OK) {
        cl_int err = clFinish(ctx->stream.queue);
        if (err != CL_SUCCESS) st = ocx__cl_error(err, "peaks: clFinish");
    }
    double sum = 0, t_start = ocx__now_s();
    int n = 0;
    while (st == OCX_OK && n < reps && (n < 64 || ocx__now_s() - t_start < LATENCY_BUDGET_S)) {
        cl_event ev = NULL;
        double t0 = ocx__now_s();
        st = ocx__launch(ctx, NULL, &d, 0, NULL, &ev);
        if (st != OCX_OK) break;
        cl_int err = clFinish(ctx->stream.queue);
        double t1 = ocx__now_s(), ns = 0;
        st = err != CL_SUCCESS ? ocx__cl_error(err, "peaks: clFinish")
                               : event_span(ev, CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_START, &ns);
        clReleaseEvent(ev);
        sum += ns;
        wall[n++] = (t1 - t0) * 1e9;
    }
    if (st == OCX_OK) {
        p->launch_latency_us = sum / n / 1e3;
        p->launch_wall_us = ocx__median(wall, n) / 1e3;
    }
    free(wall);
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    return st;
}

static ocx_status measure(ocx_context *ctx, int quick, const tc_path *tc, ocx_peaks *p)
{
    atomic_fetch_add(&measurements, 1);
    double t0 = ocx__now_s();
    memset(p, 0, sizeof *p);
    snprintf(p->fingerprint, sizeof p->fingerprint, "%s", ctx->info.fingerprint);
    p->quick = quick;
    int cpu = ctx->info.type == OCX_DEVICE_CPU;
    plan pl = {.quick = quick, .reps = quick ? 3 : 9, .wg = peak_wg(ctx), .fma_target_ns = quick ? 2e6 : 20e6};
    /* The bandwidth array: clpeak's N floats (2 GiB on a GPU, 512 MiB on a CPU, at most half the
     * largest allocation), a multiple of wg × 16 × 16 floats so that every width's grid is whole
     * work-groups; quick: 8 MiB. Launches per width and pattern: clpeak's 50 (GPU) or 20 (CPU), in 5
     * batches; quick: 3 × 3. */
    size_t unit = pl.wg * BW_FETCH * 16, max_items = (size_t)(ctx->info.max_alloc_bytes / sizeof(cl_float) / 2);
    size_t want = quick ? (size_t)1 << 21 : cpu ? (size_t)1 << 27 : (size_t)1 << 29;
    size_t items = (want < max_items ? want : max_items) / unit * unit;
    OCX__FAIL_IF(items == 0, OCX_ERR_OUT_OF_MEMORY, "peaks: the device allows allocations of %llu bytes only",
                 (unsigned long long)ctx->info.max_alloc_bytes);
    pl.bw_bytes = items * sizeof(cl_float);
    pl.bw_batches = quick ? 3 : 5;
    pl.bw_per = quick ? 3 : cpu ? 4 : 10;
    /* Transfers of 256 MiB (smaller where allocations are limited); quick: 4 MiB. On PoCL, 64 MiB copies
     * ran at 60-70% of the rate of 256 MiB ones (per-call overhead), and GPUs reach their link rate well
     * below either. */
    size_t xcap = (size_t)(ctx->info.max_alloc_bytes / 2) & ~(((size_t)1 << 20) - 1);
    pl.xfer_bytes = quick ? (size_t)4 << 20 : xcap < ((size_t)256 << 20) ? xcap : (size_t)256 << 20;
    OCX__FAIL_IF(pl.xfer_bytes == 0, OCX_ERR_OUT_OF_MEMORY, "peaks: the device allows allocations of %llu bytes only",
                 (unsigned long long)ctx->info.max_alloc_bytes);

    /* The default stream's earlier commands first: the measurement's fills, transfers and maps ask
     * for no event, which PoCL 3.1 does not survive behind a command that fails (ocx__event_drop);
     * and a timing must not include a caller's work. */
    OCX__CL_FORWARD(clFinish(ctx->stream.queue), "peaks: clFinish before measuring");
    OCX__FORWARD(measure_bandwidth(ctx, &pl, p));
    OCX__FORWARD(measure_fma(ctx, &pl, 0, &p->f32_gflops));
    if (ctx->info.has_fp16) OCX__FORWARD(measure_fma(ctx, &pl, 1, &p->f16_gflops));
    if (ctx->info.has_fp64) OCX__FORWARD(measure_fma(ctx, &pl, 2, &p->f64_gflops));
    OCX__FORWARD(measure_tensor_cores(ctx, &pl, tc, &p->tc_f16_gflops));
    OCX__FORWARD(measure_transfers(ctx, &pl, p));
    OCX__FORWARD(measure_latency(ctx, &pl, p));
    p->measure_s = ocx__now_s() - t0;
    return OCX_OK;
}

ocx_status ocx_measure_peaks(ocx_context *ctx, unsigned flags, ocx_peaks *out)
{
    OCX__FAIL_IF(!out, OCX_ERR_INVALID_ARGUMENT, "ocx_measure_peaks: out must not be NULL");
    memset(out, 0, sizeof *out);
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF(flags & ~(OCX_PEAKS_REFRESH | OCX_PEAKS_QUICK), OCX_ERR_INVALID_ARGUMENT,
                 "ocx_measure_peaks: unknown flags 0x%x", flags);
    int quick = !!(flags & OCX_PEAKS_QUICK);
    char path[4300];
    OCX__FORWARD(ocx_peaks_cache_path(ctx, flags, path, sizeof path));
    tc_path tc;
    tensor_core_path(ctx, &tc);
    if (path[0] && !(flags & OCX_PEAKS_REFRESH) && peaks_load(ctx, path, quick, tc.name, out)) return OCX_OK;
    ocx_peaks p;
    OCX__FORWARD(measure(ctx, quick, &tc, &p));
    if (path[0]) peaks_store(ctx, path, tc.name, &p);
    *out = p;
    return OCX_OK;
}
