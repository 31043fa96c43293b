/* bench_gemm.c — GEMM rates (row-major, C = A*B) beside CLBlast in the same process (as shipped and,
 * on NVIDIA, with the tuned parameter set of ../shared/anchors/clblast-h200-sgemm.md) and OpenBLAS on
 * the host, with the roofline bound from a measured FMA kernel.
 *
 * OCX_BENCH_GEMM_SIZES="MxNxK,…" replaces the size list ("N": N x N x N); OCX_BENCH_GEMM_DTYPES="f32,f16,f16f32,f64,f32x3"
 * the dtypes (f16: f16 in and out, f16f32: f16 in, f32 out, f32x3: f32 under OCX_COMPUTE_TF32X3, on
 * NVIDIA tensor cores where OCX_PATH_NV_TF32X3 is on, beside CLBlast's f32); OCX_BENCH_GEMM_OPS="NN,TN,NT,TT" the
 * transposes of A and B (default NN; the stored matrices keep their shapes' leading dimensions). The ocx
 * and CLBlast times are wall times from the call to clFinish (median), so launch overhead and
 * CLBlast's helper kernels count; ocx's device time from profiling events is printed beside: from
 * a marker enqueued just before the call to the end of the event it returns, so that operand copies
 * and split K's partial products count with the GEMM kernel. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#ifdef HAVE_CLBLAST
#include <clblast_c.h>
#endif
#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif

typedef struct gemm_case {
    size_t m, n, k;
    ocx_buffer *a, *b, *c;
    int tuned_pass; /* second pass: CLBlast with the tuned parameters */
    int ta, tb;     /* op(A), op(B) transposed */
    ocx_gemm_compute compute;
} gemm_case;

/* Leading dimensions of row-major A (m x k, or k x m stored when transposed) and B. */
static size_t lda_of(const gemm_case *g) { return g->ta ? g->m : g->k; }
static size_t ldb_of(const gemm_case *g) { return g->tb ? g->k : g->n; }

static int run_ocx(bench *b, void *arg, cl_event *ev)
{
    gemm_case *g = arg;
    return ocx_gemm_ex(b->ctx, NULL, OCX_ROW_MAJOR, g->ta ? OCX_OP_T : OCX_OP_N, g->tb ? OCX_OP_T : OCX_OP_N, g->m,
                       g->n, g->k, 1.0, g->a, 0, lda_of(g), 0, g->b, 0, ldb_of(g), 0, 0.0, g->c, 0, g->n, 0, 1,
                       g->compute, 0, NULL, ev);
}

/* The median device time of the call (see the file's comment), or -1. */
static double device_ns(bench *b, gemm_case *g)
{
    double *t = calloc((size_t)b->reps, sizeof *t), med = -1;
    int ok = t != NULL;
    for (int r = -1; ok && r < b->reps; r++) { /* r = -1: a warm-up */
        ocx_event mark = NULL, ev = NULL;
        cl_ulong from = 0, to = 0;
        ok = ocx_stream_marker(b->ctx, NULL, 0, NULL, &mark) == OCX_OK && run_ocx(b, g, &ev) == OCX_OK &&
             clWaitForEvents(1, &ev) == CL_SUCCESS &&
             clGetEventProfilingInfo(mark, CL_PROFILING_COMMAND_END, sizeof from, &from, NULL) == CL_SUCCESS &&
             clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof to, &to, NULL) == CL_SUCCESS && to >= from;
        if (ok && r >= 0) t[r] = (double)(to - from);
        ocx_event_release(mark);
        ocx_event_release(ev);
    }
    if (ok) med = bench_median(t, b->reps);
    free(t);
    return med;
}

#ifdef HAVE_CLBLAST
static int run_clblast(bench *b, void *arg, cl_event *ev)
{
    gemm_case *g = arg;
    cl_mem a = ocx_buffer_cl_mem(g->a), bb = ocx_buffer_cl_mem(g->b), c = ocx_buffer_cl_mem(g->c);
    CLBlastStatusCode s;
    CLBlastTranspose ta = g->ta ? CLBlastTransposeYes : CLBlastTransposeNo, tb = g->tb ? CLBlastTransposeYes : CLBlastTransposeNo;
    if (ocx_buffer_dtype(g->a) == OCX_F64)
        s = CLBlastDgemm(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, 1.0, a, 0, lda_of(g), bb, 0, ldb_of(g), 0.0, c,
                         0, g->n, &b->queue, ev);
    else
        s = CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, g->m, g->n, g->k, 1.0f, a, 0, lda_of(g), bb, 0, ldb_of(g), 0.0f,
                         c, 0, g->n, &b->queue, ev);
    if (s != CLBlastSuccess) fprintf(stderr, "ocx-bench: CLBlast status %d\n", (int)s);
    return s == CLBlastSuccess ? 0 : -1;
}

/* The H200-tuned Xgemm set (anchors file); applied only on NVIDIA devices. */
static int clblast_tune(bench *b)
{
    static const char *names[16] = {"GEMMK", "KREG", "KWG",  "KWI", "MDIMA", "MDIMC", "MWG", "NDIMB",
                                    "NDIMC", "NWG",  "SA",   "SB",  "STRM",  "STRN",  "VWM", "VWN"};
    static const size_t values[16] = {0, 1, 32, 2, 8, 16, 128, 16, 8, 128, 1, 1, 1, 1, 4, 4};
    cl_device_id dev;
    if (ocx_context_cl(b->ctx, NULL, &dev) != OCX_OK) return -1;
    return CLBlastOverrideParameters(dev, "Xgemm", CLBlastPrecisionSingle, 16, names, values) == CLBlastSuccess ? 0 : -1;
}
#endif

/* Median wall time of one call up to clFinish, after a warm-up: launch overhead included, and the
 * only fair clock for a peer such as CLBlast whose event covers only its last kernel. */
static double wall_ns(bench *b, bench_run_fn fn, void *arg)
{
    double t[64];
    int reps = b->reps < 64 ? b->reps : 64;
    for (int r = -1; r < reps; r++) {
        cl_event ev = NULL;
        double t0 = bench_now_ns();
        if (fn(b, arg, &ev) != 0) {
            fprintf(stderr, "ocx-bench: run failed: %s\n", ocx_last_error());
            return -1;
        }
        clFinish(b->queue);
        if (r >= 0) t[r] = bench_now_ns() - t0;
        if (ev) clReleaseEvent(ev);
    }
    return bench_median(t, reps);
}
#ifdef HAVE_OPENBLAS
/* Median wall time of cblas_sgemm on the host (the CPU reference). */
static double openblas_ns(bench *b, const gemm_case *g)
{
    size_t m = g->m, n = g->n, k = g->k;
    float *A = malloc(m * k * sizeof *A), *B = malloc(k * n * sizeof *B), *C = malloc(m * n * sizeof *C);
    if (!A || !B || !C) return free(A), free(B), free(C), -1;
    bench_random(A, m * k, -1, 1, 1);
    bench_random(B, k * n, -1, 1, 2);
    double best[64];
    int reps = b->reps < 64 ? b->reps : 64;
    for (int r = -1; r < reps; r++) {
        double t0 = bench_now_ns();
        cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans, g->tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                    (int)k, 1.0f, A, (int)lda_of(g), B, (int)ldb_of(g), 0.0f, C, (int)n);
        if (r >= 0) best[r] = bench_now_ns() - t0;
    }
    free(A), free(B), free(C);
    return bench_median(best, reps);
}
#endif

/* Fills a buffer of dtype with random values through an f32 staging buffer and ocx_copy. */
static int fill_random(bench *b, ocx_buffer *x, size_t n, unsigned seed)
{
    float *h = malloc(n * sizeof *h);
    ocx_buffer *s = NULL;
    int rc = -1;
    if (!h) return -1;
    bench_random(h, n, -1, 1, seed);
    if (ocx_buffer_dtype(x) == OCX_F32) {
        rc = ocx_buffer_write(b->ctx, NULL, x, 0, n, h, 0, NULL, NULL) ? -1 : 0;
    } else if (ocx_buffer_create(b->ctx, OCX_F32, n, &s) == OCX_OK) {
        rc = ocx_buffer_write(b->ctx, NULL, s, 0, n, h, 0, NULL, NULL) || ocx_copy(b->ctx, NULL, n, s, 1, x, 1, 0, NULL, NULL) ||
                     ocx_stream_finish(b->ctx, NULL)
                 ? -1
                 : 0;
    }
    ocx_buffer_destroy(s);
    free(h);
    return rc;
}

#define MAX_SIZES 32

int bench_gemm_env(void)
{
    static const char *const dtypes[] = {"f32", "f16", "f16f32", "f64", "f32x3", NULL};
    static const char *const ops[] = {"NN", "NT", "TN", "TT", NULL};
    size_t list[MAX_SIZES][3], n;
    return bench_env_sizes("OCX_BENCH_GEMM_SIZES", 3, list, MAX_SIZES, &n) |
           bench_env_names("OCX_BENCH_GEMM_DTYPES", dtypes) | bench_env_names("OCX_BENCH_GEMM_OPS", ops);
}

int bench_gemm(bench *b)
{
    static const size_t gpu[][3] = {{64, 64, 64},       {128, 128, 128},  {256, 256, 256},    {1024, 1024, 1024},
                                    {4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 512, 8192}, {512, 8192, 8192},
                                    {4096, 4096, 256},  {16384, 16384, 64}};
    static const size_t cpu[][3] = {{64, 64, 64}, {128, 128, 128}, {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}};
    static const size_t quick[][3] = {{64, 64, 64}, {256, 256, 256}};
    size_t list[MAX_SIZES][3], nsizes = 0;
    /* main checked every OCX_BENCH_GEMM_* list (bench_gemm_env) */
    if (bench_env_sizes("OCX_BENCH_GEMM_SIZES", 3, list, MAX_SIZES, &nsizes) != 0) return 1;
    if (!nsizes) {
        const size_t(*src)[3] = b->quick ? quick : b->info.type == OCX_DEVICE_GPU ? gpu : cpu;
        nsizes = b->quick ? 2 : b->info.type == OCX_DEVICE_GPU ? 10 : 5;
        memcpy(list, src, nsizes * sizeof *list);
    }
    /* Transposes: "NN" unless OCX_BENCH_GEMM_OPS lists others (rows other than NN say which). */
    int ops[4][2] = {{0, 0}}, nops = 0;
    char opl[64];
    snprintf(opl, sizeof opl, "%s", getenv("OCX_BENCH_GEMM_OPS") ? getenv("OCX_BENCH_GEMM_OPS") : "");
    for (char *save = NULL, *o = strtok_r(opl, ",", &save); o && nops < 4; o = strtok_r(NULL, ",", &save)) {
        ops[nops][0] = o[0] == 'T';
        ops[nops++][1] = o[1] == 'T';
    }
    if (nops == 0) nops = 1;
    const char *dts = getenv("OCX_BENCH_GEMM_DTYPES");
    if (!dts || !*dts) dts = b->info.type == OCX_DEVICE_GPU ? "f32,f16f32,f16,f64" : "f32,f16f32";
    int rc = 0;
    bench_header(b, "gemm (row-major, NN unless the size says :TN etc., C = op(A)*op(B); wall time to clFinish; GFLOP/s = 2MNK/time; ratio = peer time / ocx time)");
    int is_nvidia = strstr(b->info.vendor, "NVIDIA") != NULL;
    for (int pass = 0; pass < 2; pass++) {
    char dtl[64];
    snprintf(dtl, sizeof dtl, "%s", pass ? (strstr(dts, "f32x3") ? "f32,f32x3" : "f32") : dts);
    if (pass == 1) {
        int tuned = 0;
#ifdef HAVE_CLBLAST
        tuned = is_nvidia && clblast_tune(b) == 0;
#endif
        if (!tuned) break;
        bench_note(b, "gemm: CLBlast now runs the tuned Xgemm set of the anchors file");
    }
    for (char *save = NULL, *dt = strtok_r(dtl, ",", &save); dt; dt = strtok_r(NULL, ",", &save)) {
        ocx_dtype in = !strcmp(dt, "f64") ? OCX_F64 : !strncmp(dt, "f16", 3) ? OCX_F16 : OCX_F32;
        ocx_dtype out = !strcmp(dt, "f16f32") ? OCX_F32 : in;
        ocx_gemm_compute compute = !strcmp(dt, "f32x3") ? OCX_COMPUTE_TF32X3 : OCX_COMPUTE_DEFAULT;
        if (in == OCX_F64 && !b->info.has_fp64) continue;
        for (size_t si = 0; si < nsizes * (size_t)nops; si++) {
            const int *op2 = ops[si % (size_t)nops];
            gemm_case g = {list[si / (size_t)nops][0], list[si / (size_t)nops][1], list[si / (size_t)nops][2], NULL, NULL,
                           NULL, pass, op2[0], op2[1], compute};
            if (ocx_buffer_create(b->ctx, in, g.m * g.k, &g.a) || ocx_buffer_create(b->ctx, in, g.k * g.n, &g.b) ||
                ocx_buffer_create(b->ctx, out, g.m * g.n, &g.c) || fill_random(b, g.a, g.m * g.k, 1) ||
                fill_random(b, g.b, g.k * g.n, 2)) {
                bench_note(b, "gemm: %zux%zux%zu %s does not fit: %s", g.m, g.n, g.k, dt, ocx_last_error());
                ocx_buffer_destroy(g.a), ocx_buffer_destroy(g.b), ocx_buffer_destroy(g.c);
                continue;
            }
            char size[64];
            int sl = snprintf(size, sizeof size, "%zux%zux%zu", g.m, g.n, g.k);
            if (g.ta || g.tb) snprintf(size + sl, sizeof size - (size_t)sl, ":%c%c", g.ta ? 'T' : 'N', g.tb ? 'T' : 'N');
            double flops = 2.0 * g.m * g.n * g.k;
            /* The fewest bytes a GEMM must move: A and B read once, C written (beta = 0). */
            double bytes = (double)ocx_dtype_size(in) * (g.m * g.k + g.k * g.n) + (double)ocx_dtype_size(out) * g.m * g.n;
            double ns = wall_ns(b, run_ocx, &g), dev_ns = device_ns(b, &g);
            ocx_params_info used; /* which parameters ran, and from where */
            int have_used = ocx_last_params(&used) == OCX_OK;
            if (ns < 0) { /* failed (said on stderr): no row */
                rc = 1;
                ocx_buffer_destroy(g.a), ocx_buffer_destroy(g.b), ocx_buffer_destroy(g.c);
                continue;
            }
            double peer = 0;
            const char *peer_name = "clblast";
#ifdef HAVE_CLBLAST
            if (in == out && in != OCX_F16) peer = wall_ns(b, run_clblast, &g);
#endif
            /* f16 on tensor cores: the row says so ("gemm-tc": the tensor cores' roof), and the portable
             * kernel is measured beside it (OCX_VENDOR_PATHS=0 for one measurement). */
            unsigned paths = 0;
            int tc = in == OCX_F16 && ocx_context_vendor_paths(b->ctx, &paths) == OCX_OK &&
                     (paths & OCX_PATH_NV_TENSOR_CORES);
            /* f32x3 on the tensor cores: "gemm-x3" (the f32 kernels run the direct and "short_k" sizes) */
            int x3 = compute == OCX_COMPUTE_TF32X3 && have_used && !strcmp(used.family, "gemm_mma");
            const char *op = tc ? "gemm-tc" : x3 ? "gemm-x3" : "gemm";
            if (!g.tuned_pass) bench_row(b, "gemm", op, dt, size, ns, bytes, flops, peer_name, peer);
#ifdef HAVE_CLBLAST
            if (g.tuned_pass) {
                /* Second pass: CLBlast with the tuned set, ocx measured again beside it. */
                bench_row(b, "gemm", op, dt, size, ns, bytes, flops, "clblast-tuned", peer);
                ocx_buffer_destroy(g.a), ocx_buffer_destroy(g.b), ocx_buffer_destroy(g.c);
                continue;
            }
#endif
#ifdef HAVE_OPENBLAS
            if (in == OCX_F32 && out == OCX_F32 && b->info.type == OCX_DEVICE_CPU)
                bench_row(b, "gemm", "gemm", dt, size, ns, bytes, flops, "openblas", openblas_ns(b, &g));
#endif
            if (tc && !g.tuned_pass) {
                char *saved = bench_env_set("OCX_VENDOR_PATHS", "0");
                double portable = wall_ns(b, run_ocx, &g);
                bench_env_restore("OCX_VENDOR_PATHS", saved);
                bench_row(b, "gemm", op, dt, size, ns, bytes, flops, "ocx-portable", portable);
            }
            if (!g.tuned_pass && have_used)
                bench_note(b, "gemm: %s %s ran %s, %s/%s %s (from %s)", size, dt,
                           used.kernel[0] ? used.kernel : "no kernel", used.family, used.size_class, used.params,
                           used.source);
            if (!g.tuned_pass && dev_ns > 0) {
                /* The kernel's share of the compute roof its row is placed under (no bytes: that roof alone). */
                ocx_roofline r;
                int roof = bench_roofline(b, op, dt, flops, 0, dev_ns, 0, &r);
                const char *name = tc ? "tensor-core" : in == OCX_F64 ? "f64 FMA"
                                   : roof && r.peak_gflops > b->peaks.f32_gflops ? "f16 FMA" /* native f16 */
                                   : "f32 FMA";
                bench_note(b, "gemm: %s %s: device time %.1f us = %.1f GFLOP/s (%.0f%% of the %s peak)", size, dt,
                           dev_ns / 1e3, flops / dev_ns, roof ? 100.0 * r.efficiency : 0.0, name);
            }
            ocx_buffer_destroy(g.a), ocx_buffer_destroy(g.b), ocx_buffer_destroy(g.c);
        }
    }
    }
    (void)is_nvidia;
    return rc;
}
