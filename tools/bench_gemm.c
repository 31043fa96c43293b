/* bench_gemm.c — GEMM rates (row-major, C = A*B) beside CLBlast in the same process (as shipped and,
 * on NVIDIA, with the tuned parameter set of doc/performance.md, "The peers' figures") and OpenBLAS on
 * the host, with the roofline bound from a measured FMA kernel.
 *
 * OCX_BENCH_GEMM_SIZES="MxNxK,…" replaces the size list ("N": N x N x N); OCX_BENCH_GEMM_DTYPES="f32,f16,f16f32,f64,f32x3"
 * the dtypes (f16: f16 in and out, f16f32: f16 in, f32 out, f32x3: f32 under OCX_COMPUTE_TF32X3, on
 * NVIDIA tensor cores where OCX_PATH_NV_TF32X3 is on, beside CLBlast's f32); OCX_BENCH_GEMM_OPS="NN,TN,NT,TT" the
 * transposes of A and B (default NN; the stored matrices keep their shapes' leading dimensions). One
 * run of ocx's is checked first (32 entries of C against the host in double): a wrong one gets no
 * row. The ocx, CLBlast and OpenBLAS times are wall times from the call to clFinish (median), taken
 * in turns (ocx, CLBlast, OpenBLAS, ocx, ...) so that a drifting machine slows all alike; launch overhead and
 * CLBlast's helper kernels count; ocx's device time from profiling events is printed beside: from
 * a marker enqueued just before the call to the end of the event it returns, so that operand copies
 * and split K's partial products count with the GEMM kernel. */
#include "config.h"

#include <math.h>
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

/* The H200-tuned Xgemm set (doc/performance.md, "The peers' figures"); applied only on NVIDIA devices. */
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

/* Median wall times of one call up to clFinish (launch overhead included, and the only fair clock
 * for a peer such as CLBlast whose event covers only its last kernel) of each of the nf runs, after
 * a warm-up of each, taken in turns (fns[0], fns[1], ..., fns[0], ...) so that a machine whose speed
 * drifts slows all alike (bench_time_pair_ns). ns[i] < 0 where fns[i] failed (said on stderr). */
static void wall_ns_turns(bench *b, int nf, bench_run_fn const *fns, void *const *args, double *ns)
{
    double t[4][64];
    int reps = b->reps < 64 ? b->reps : 64;
    for (int f = 0; f < nf; f++) ns[f] = 0;
    for (int r = -1; r < reps; r++)
        for (int f = 0; f < nf; f++) {
            if (ns[f] < 0) continue;
            cl_event ev = NULL;
            double t0 = bench_now_ns();
            if (fns[f](b, args[f], &ev) != 0) {
                fprintf(stderr, "ocx-bench: run failed: %s\n", f ? "(the peer's)" : ocx_last_error());
                ns[f] = -1;
                continue;
            }
            clFinish(b->queue);
            if (r >= 0) t[f][r] = bench_now_ns() - t0;
            if (ev) clReleaseEvent(ev);
        }
    for (int f = 0; f < nf; f++)
        if (ns[f] == 0) ns[f] = bench_median(t[f], reps);
}

static double wall_ns(bench *b, bench_run_fn fn, void *arg)
{
    double ns;
    wall_ns_turns(b, 1, &fn, &arg, &ns);
    return ns;
}

/* The host's operands for a peer on the host (OpenBLAS) and for the check of ocx's result: A and B as
 * the device holds them. */
typedef struct host_case {
    const gemm_case *g;
    float *a, *b, *c;
} host_case;

#ifdef HAVE_OPENBLAS
/* cblas_sgemm on the host (the CPU reference), as a run of wall_ns_turns. */
static int run_openblas(bench *b, void *arg, cl_event *ev)
{
    const host_case *h = arg;
    const gemm_case *g = h->g;
    (void)b;
    *ev = NULL;
    cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans, g->tb ? CblasTrans : CblasNoTrans, (int)g->m,
                (int)g->n, (int)g->k, 1.0f, h->a, (int)lda_of(g), h->b, (int)ldb_of(g), 0.0f, h->c, (int)g->n);
    return 0;
}
#endif

/* One run of ocx's, its C checked at 32 entries (its corners among them) against double products of
 * the stored A and B, before its time is reported: a fast wrong kernel must not show a rate. 0 when
 * right; else said on stderr. */
static int check_c(bench *b, const host_case *h, const char *label)
{
    const gemm_case *g = h->g;
    cl_event ev = NULL;
    const int ran = run_ocx(b, (void *)g, &ev) == 0;
    if (ev) clReleaseEvent(ev);
    if (!ran) {
        fprintf(stderr, "ocx-bench: gemm %s: %s\n", label, ocx_last_error());
        return 1;
    }
    const ocx_dtype in = ocx_buffer_dtype(g->a), out = ocx_buffer_dtype(g->c);
    /* f32 sums of up to 16384 terms (TF32X3's three products among them, which keep f32's accuracy)
     * stay far within 1e-4 of the sum of the terms' magnitudes; an f16 C adds its one rounding, 2^-11
     * of the result (a tolerance of 4e-3 of the magnitudes had passed a K tile left out at 8192^3) */
    const double rel = in == OCX_F64 ? 1e-10 : 1e-4, rounding = out == OCX_F16 ? 1e-3 : 0;
    uint64_t s = 0x2545f4914f6cdd1dull;
    for (int t = 0; t < 32; t++) {
        bench_rng(&s);
        const size_t i = t < 2 ? 0 : t < 4 ? g->m - 1 : (size_t)(s % g->m);
        const size_t j = t % 2 == 0 && t < 4 ? 0 : t < 4 ? g->n - 1 : (size_t)((s >> 32) % g->n);
        double want = 0, mag = 0;
        for (size_t p = 0; p < g->k; p++) {
            const double x = h->a[g->ta ? p * g->m + i : i * g->k + p], y = h->b[g->tb ? j * g->k + p : p * g->n + j];
            want += x * y, mag += fabs(x * y);
        }
        char what[160];
        snprintf(what, sizeof what, "gemm %s C[%zu][%zu]", label, i, j);
        if (bench_check(b, what, bench_read_at(b, g->c, i * g->n + j), want, rel * mag + rounding * fabs(want)))
            return 1;
    }
    return 0;
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
    bench_header(b, "gemm (row-major, NN unless the size says :TN etc., C = op(A)*op(B); checked at 32 entries of C; "
                    "wall time to clFinish, ocx and its peers in turns; GFLOP/s = 2MNK/time; ratio = peer time / ocx time)");
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
        if (!bench_runs_dtype(b, "gemm", in)) continue;
        for (size_t si = 0; si < nsizes * (size_t)nops; si++) {
            const int *op2 = ops[si % (size_t)nops];
            gemm_case g = {list[si / (size_t)nops][0], list[si / (size_t)nops][1], list[si / (size_t)nops][2], NULL, NULL,
                           NULL, pass, op2[0], op2[1], compute};
            host_case h = {&g, NULL, NULL, NULL};
            /* sides whose products overflow fit no more than sides too large (they had wrapped, made
             * small buffers, and failed the run) */
            const size_t most = g.m > g.n ? g.m : g.n, least = g.m > g.n ? g.n : g.m;
            if ((most && g.k > SIZE_MAX / most) || (least && most > SIZE_MAX / least)) {
                bench_note(b, "gemm: %zux%zux%zu %s does not fit: its matrices' sizes overflow", g.m, g.n, g.k, dt);
                continue;
            }
            if (ocx_buffer_create(b->ctx, in, g.m * g.k, &g.a) || ocx_buffer_create(b->ctx, in, g.k * g.n, &g.b) ||
                ocx_buffer_create(b->ctx, out, g.m * g.n, &g.c) || bench_fill(b, g.a, g.m * g.k, 1, &h.a) ||
                bench_fill(b, g.b, g.k * g.n, 2, &h.b)) {
                bench_note(b, "gemm: %zux%zux%zu %s does not fit: %s", g.m, g.n, g.k, dt, ocx_last_error());
                goto next;
            }
            char size[64];
            int sl = snprintf(size, sizeof size, "%zux%zux%zu", g.m, g.n, g.k);
            if (g.ta || g.tb) snprintf(size + sl, sizeof size - (size_t)sl, ":%c%c", g.ta ? 'T' : 'N', g.tb ? 'T' : 'N');
            double flops = 2.0 * g.m * g.n * g.k;
            /* The fewest bytes a GEMM must move: A and B read once, C written (beta = 0). */
            double bytes = (double)ocx_dtype_size(in) * (g.m * g.k + g.k * g.n) + (double)ocx_dtype_size(out) * g.m * g.n;
            /* One run checked first (its C sampled), then ocx and its peers timed in turns. */
            char label[96];
            snprintf(label, sizeof label, "%s %s", size, dt);
            if (check_c(b, &h, label)) { /* said on stderr: no row */
                rc = 1;
                goto next;
            }
            bench_run_fn fns[3] = {run_ocx};
            void *args[3] = {&g};
            double t[3] = {0, 0, 0};
            int nf = 1, clb = -1, obl = -1;
#ifdef HAVE_CLBLAST
            if (in == out && in != OCX_F16) clb = nf, fns[nf] = run_clblast, args[nf++] = &g;
#endif
#ifdef HAVE_OPENBLAS
            if (!g.tuned_pass && in == OCX_F32 && out == OCX_F32 && b->info.type == OCX_DEVICE_CPU &&
                (h.c = malloc(g.m * g.n * sizeof *h.c)) != NULL)
                obl = nf, fns[nf] = run_openblas, args[nf++] = &h;
#endif
            wall_ns_turns(b, nf, fns, args, t);
            double ns = t[0], dev_ns = ns < 0 ? -1 : device_ns(b, &g);
            ocx_params_info used; /* which parameters ran, and from where */
            int have_used = ocx_last_params(&used) == OCX_OK;
            if (ns < 0) { /* failed (said on stderr): no row */
                rc = 1;
                goto next;
            }
            double peer = clb > 0 && t[clb] > 0 ? t[clb] : 0;
            const char *peer_name = "clblast";
            /* f16 on tensor cores: the row says so ("gemm-tc": the tensor cores' roof), and the portable
             * kernel is measured beside it (OCX_VENDOR_PATHS=0 for one measurement). */
            unsigned paths = 0;
            int tc = in == OCX_F16 && ocx_context_vendor_paths(b->ctx, &paths) == OCX_OK &&
                     (paths & OCX_PATH_NV_TENSOR_CORES);
            /* f32x3 on the tensor cores: "gemm-x3" (the f32 kernels run the direct and "short_k" sizes) */
            int x3 = compute == OCX_COMPUTE_TF32X3 && have_used && !strcmp(used.family, "gemm_mma");
            const char *op = tc ? "gemm-tc" : x3 ? "gemm-x3" : "gemm";
            if (g.tuned_pass) { /* second pass: CLBlast with the tuned set, ocx measured again beside it */
                bench_row(b, "gemm", op, dt, size, ns, bytes, flops, "clblast-tuned", peer);
                goto next;
            }
            bench_row(b, "gemm", op, dt, size, ns, bytes, flops, peer_name, peer);
            if (obl > 0 && t[obl] > 0) bench_row(b, "gemm", "gemm", dt, size, ns, bytes, flops, "openblas", t[obl]);
            if (tc) { /* the portable kernel, checked like the rest */
                char *saved = bench_env_set("OCX_VENDOR_PATHS", "0");
                double portable = check_c(b, &h, label) ? -1 : wall_ns(b, run_ocx, &g);
                bench_env_restore("OCX_VENDOR_PATHS", saved);
                if (portable >= 0) bench_row(b, "gemm", op, dt, size, ns, bytes, flops, "ocx-portable", portable);
                else rc = 1;
            }
            if (have_used)
                bench_note(b, "gemm: %s %s ran %s, %s/%s %s (from %s)", size, dt,
                           used.kernel[0] ? used.kernel : "no kernel", used.family, used.size_class, used.params,
                           used.source);
            if (dev_ns > 0) {
                /* The kernel's share of the compute roof its row is placed under (no bytes: that roof alone). */
                ocx_roofline r;
                int roof = bench_roofline(b, op, dt, flops, 0, dev_ns, 0, &r);
                const char *name = tc ? "tensor-core" : in == OCX_F64 ? "f64 FMA"
                                   : roof && r.peak_gflops > b->peaks.f32_gflops ? "f16 FMA" /* native f16 */
                                   : "f32 FMA";
                bench_note(b, "gemm: %s %s: device time %.1f us = %.1f GFLOP/s (%.0f%% of the %s peak)", size, dt,
                           dev_ns / 1e3, flops / dev_ns, roof ? 100.0 * r.efficiency : 0.0, name);
            }
        next:
            free(h.a), free(h.b), free(h.c);
            ocx_buffer_destroy(g.a), ocx_buffer_destroy(g.b), ocx_buffer_destroy(g.c);
        }
    }
    }
    (void)is_nvidia;
    return rc;
}
