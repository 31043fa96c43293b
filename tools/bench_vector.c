/* bench_vector.c — streaming operations: rates against the device's measured copy bandwidth, and
 * CLBlast's matching routine in the same process where it is present.
 * OCX_BENCH_VECTOR_SIZES="N,…" replaces the list of element counts; OCX_BENCH_VECTOR_DTYPES="f32,…"
 * the dtypes (f32, f16, f64); OCX_BENCH_VECTOR_OPS="axpy,sum,…" the operations (add, mul, axpy, scale,
 * copy, fill; sum, asum, dot, nrm2, min, max, argmin, argmax). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#ifdef HAVE_CLBLAST
#include <clblast_c.h>
#endif

typedef struct vec_case {
    const char *op;
    ocx_buffer *x, *y, *z;
    size_t n;
} vec_case;

static int run_copy_raw(bench *b, void *arg, cl_event *ev)
{
    vec_case *c = arg;
    return ocx_buffer_copy(b->ctx, NULL, c->x, 0, c->z, 0, c->n, 0, NULL, ev);
}

static int run_ocx(bench *b, void *arg, cl_event *ev)
{
    vec_case *c = arg;
    if (!strcmp(c->op, "add")) return ocx_add(b->ctx, NULL, c->n, c->x, c->y, c->z, 0, NULL, ev);
    if (!strcmp(c->op, "mul")) return ocx_mul(b->ctx, NULL, c->n, c->x, c->y, c->z, 0, NULL, ev);
    if (!strcmp(c->op, "axpy")) return ocx_axpy(b->ctx, NULL, c->n, 0.5, c->x, 1, c->y, 1, 0, NULL, ev);
    if (!strcmp(c->op, "scale")) return ocx_scale(b->ctx, NULL, c->n, 1.0, c->y, 1, 0, NULL, ev);
    if (!strcmp(c->op, "copy")) return ocx_copy(b->ctx, NULL, c->n, c->x, 1, c->z, 1, 0, NULL, ev);
    if (!strcmp(c->op, "fill")) return ocx_fill(b->ctx, NULL, c->n, 1.0, c->z, 1, 0, NULL, ev);
    return -1;
}

#ifdef HAVE_CLBLAST
static int run_clblast(bench *b, void *arg, cl_event *ev)
{
    vec_case *c = arg;
    cl_mem x = ocx_buffer_cl_mem(c->x), y = ocx_buffer_cl_mem(c->y), z = ocx_buffer_cl_mem(c->z);
    CLBlastStatusCode s = CLBlastNotImplemented;
    ocx_dtype dt = ocx_buffer_dtype(c->x);
    if (dt == OCX_F32) {
        if (!strcmp(c->op, "axpy")) s = CLBlastSaxpy(c->n, 0.5f, x, 0, 1, y, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "scale")) s = CLBlastSscal(c->n, 1.0f, y, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "copy")) s = CLBlastScopy(c->n, x, 0, 1, z, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "mul")) s = CLBlastShad(c->n, 1.0f, x, 0, 1, y, 0, 1, 0.0f, z, 0, 1, &b->queue, ev);
    } else if (dt == OCX_F64) {
        if (!strcmp(c->op, "axpy")) s = CLBlastDaxpy(c->n, 0.5, x, 0, 1, y, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "scale")) s = CLBlastDscal(c->n, 1.0, y, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "copy")) s = CLBlastDcopy(c->n, x, 0, 1, z, 0, 1, &b->queue, ev);
    }
    return s == CLBlastSuccess ? 0 : -1;
}
#endif

/* Bytes each op moves per element (reads + writes), in units of the element size. (CLBlast's Xhad,
 * mul's peer, reads z as well, beta*z even where beta is 0: 4 to ocx's 3.) */
static double traffic(const char *op)
{
    if (!strcmp(op, "add") || !strcmp(op, "mul") || !strcmp(op, "axpy")) return 3;
    if (!strcmp(op, "fill")) return 1;
    return 2;
}

/* Flops each op does per element (copy and fill none: the memory roof alone). */
static double arithmetic(const char *op)
{
    return !strcmp(op, "axpy") ? 2 : !strcmp(op, "copy") || !strcmp(op, "fill") ? 0 : 1;
}

/* Indices a result is checked at: the ends and 62 drawn from the seed. */
#define CHECKS 64
static size_t check_index(size_t n, int t, uint64_t *s)
{
    const uint64_t r = bench_rng(s);
    return t == 0 ? 0 : t == 1 ? n - 1 : (size_t)(r % n);
}

/* One run of ocx's op checked at CHECKS elements before it is timed (a fast wrong kernel must not
 * show a rate): x and y hold hx and hy where not in place; the in-place ops (axpy, and scale by 2
 * here) are checked against y as read before the run. 0 when right. */
static int check_vec(bench *b, vec_case *c, const float *hx, const float *hy)
{
    const ocx_dtype dt = ocx_buffer_dtype(c->x);
    const double rel = dt == OCX_F16 ? 1e-3 : dt == OCX_F64 ? 1e-12 : 1e-6;
    const int in_place = !strcmp(c->op, "axpy") || !strcmp(c->op, "scale");
    double before[CHECKS];
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int t = 0; in_place && t < CHECKS; t++) before[t] = bench_read_at(b, c->y, check_index(c->n, t, &s));
    ocx_status st = !strcmp(c->op, "scale") ? ocx_scale(b->ctx, NULL, c->n, 2.0, c->y, 1, 0, NULL, NULL)
                                            : run_ocx(b, c, NULL) ? OCX_ERR_INTERNAL : OCX_OK;
    if (st != OCX_OK) {
        fprintf(stderr, "ocx-bench: %s: %s\n", c->op, ocx_last_error());
        return 1;
    }
    s = 0x9e3779b97f4a7c15ull;
    for (int t = 0; t < CHECKS; t++) {
        const size_t i = check_index(c->n, t, &s);
        const double x = hx[i], y = hy[i];
        double want = !strcmp(c->op, "add") ? x + y : !strcmp(c->op, "mul") ? x * y
                      : !strcmp(c->op, "copy")                             ? x
                      : !strcmp(c->op, "fill")                             ? 1.0
                      : !strcmp(c->op, "axpy")                             ? before[t] + 0.5 * x
                                                                           : 2.0 * before[t];
        char what[96];
        snprintf(what, sizeof what, "%s %s %zu [%zu]", c->op, ocx_dtype_name(dt), c->n, i);
        if (bench_check(b, what, bench_read_at(b, in_place ? c->y : c->z, i), want,
                        rel * (fabs(want) + fabs(x) + (in_place ? fabs(before[t]) : fabs(y))) + 1e-30))
            return 1;
    }
    return 0;
}

static int has_peer(const char *op, ocx_dtype dt)
{
#ifdef HAVE_CLBLAST
    if (dt == OCX_F32) return strcmp(op, "add") && strcmp(op, "fill");
    if (dt == OCX_F64) return !strcmp(op, "axpy") || !strcmp(op, "scale") || !strcmp(op, "copy");
#endif
    return 0;
}

/* ---- reductions: two kernels each (ours and CLBlast's), so they are timed on the host clock over
 * batches of back-to-back runs (launch gaps amortised), median of the batches; a peer's batches
 * alternate with ours (as bench_time_pair_ns does). ------------------------------------------- */
typedef struct red_case {
    ocx_reduce_op op;
    ocx_buffer *x, *y, *r, *ri, *scratch; /* scratch: the peer's result, 512 bytes of any dtype (u32: f64
                                              had failed every row on devices without cl_khr_fp64) */
    size_t n;
} red_case;

static const char *const red_names[] = {"sum", "asum", "dot", "nrm2", "min", "max", "argmin", "argmax"};

static int red_ocx(bench *b, void *arg, cl_event *ev)
{
    (void)ev; /* timed on the host's clock (bench_batch_pair_ns) */
    red_case *c = arg;
    const int index = c->op == OCX_REDUCE_ARGMIN || c->op == OCX_REDUCE_ARGMAX;
    return ocx_reduce(b->ctx, NULL, c->op, c->n, c->x, 1, c->y, 1, index ? c->ri : c->r, 0, NULL, NULL) != OCX_OK;
}

#ifdef HAVE_CLBLAST
static int red_clblast(bench *b, void *arg, cl_event *ev)
{
    (void)ev;
    red_case *c = arg;
    cl_mem x = ocx_buffer_cl_mem(c->x), y = ocx_buffer_cl_mem(c->y), r = ocx_buffer_cl_mem(c->scratch);
    CLBlastStatusCode s = CLBlastNotImplemented;
    if (ocx_buffer_dtype(c->x) == OCX_F32) {
        switch (c->op) {
        case OCX_REDUCE_SUM: s = CLBlastSsum(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_ASUM: s = CLBlastSasum(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_DOT: s = CLBlastSdot(c->n, r, 0, x, 0, 1, y, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_NRM2: s = CLBlastSnrm2(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_ARGMIN: s = CLBlastiSmin(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_ARGMAX: s = CLBlastiSmax(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        default: break;
        }
    } else {
        switch (c->op) {
        case OCX_REDUCE_SUM: s = CLBlastDsum(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_ASUM: s = CLBlastDasum(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_DOT: s = CLBlastDdot(c->n, r, 0, x, 0, 1, y, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_NRM2: s = CLBlastDnrm2(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_ARGMIN: s = CLBlastiDmin(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        case OCX_REDUCE_ARGMAX: s = CLBlastiDmax(c->n, r, 0, x, 0, 1, &b->queue, NULL); break;
        default: break;
        }
    }
    if (s != CLBlastSuccess) fprintf(stderr, "ocx-bench: CLBlast %s: status %d\n", red_names[c->op], (int)s);
    return s != CLBlastSuccess;
}
#endif

/* 1 when name is listed in the comma-separated list of environment variable var, or var is unset. */
static int wanted(const char *var, const char *name)
{
    const char *list = getenv(var);
    if (!list || !*list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}
static int dtype_wanted(ocx_dtype dt) { return wanted("OCX_BENCH_VECTOR_DTYPES", ocx_dtype_name(dt)); }
static int op_wanted(const char *op) { return wanted("OCX_BENCH_VECTOR_OPS", op); }

/* ocx's reduction checked against the host's, in double over the values x and y hold, before it is
 * timed: sums within 1e-5 of the sum of magnitudes (f64: 1e-12), extremes exactly, indices the
 * first. 0 when right. The sums are compensated (Neumaier): summed in order in plain double, the
 * norm of 2^28 values had come out 2.1e-12 from the exact one, and ocx's f64 nrm2 (3.3e-15 from
 * it) failed. */
static int check_reduction(bench *b, red_case *c, const float *hx, const float *hy)
{
    const ocx_dtype dt = ocx_buffer_dtype(c->x);
    double want = 0, lost = 0, mag = 0, got = NAN;
    size_t at = 0, got_at = (size_t)-1;
    for (size_t i = 0; i < c->n; i++) {
        const double x = hx[i], t = c->op == OCX_REDUCE_DOT ? x * hy[i] : c->op == OCX_REDUCE_NRM2 ? x * x
                                                                       : c->op == OCX_REDUCE_ASUM ? fabs(x) : x;
        if (c->op <= OCX_REDUCE_NRM2) {
            const double sum = want + t; /* products of two floats are exact in double */
            lost += fabs(want) >= fabs(t) ? (want - sum) + t : (t - sum) + want;
            want = sum, mag += fabs(t);
        } else if (i == 0 || ((c->op == OCX_REDUCE_MIN || c->op == OCX_REDUCE_ARGMIN) ? x < want : x > want)) {
            want = x, at = i;
        }
    }
    want += lost;
    if (c->op == OCX_REDUCE_NRM2) want = sqrt(want), mag = want;
    const int arg = c->op == OCX_REDUCE_ARGMIN || c->op == OCX_REDUCE_ARGMAX;
    if (ocx_reduce_host(b->ctx, NULL, c->op, c->n, c->x, 1, c->y, 1, &got, arg ? &got_at : NULL, 0, NULL) != OCX_OK) {
        fprintf(stderr, "ocx-bench: %s: %s\n", red_names[c->op], ocx_last_error());
        return 1;
    }
    char what[96];
    snprintf(what, sizeof what, "%s %s %zu", red_names[c->op], ocx_dtype_name(dt), c->n);
    return arg ? bench_check(b, what, (double)got_at, (double)at, 0)
               : bench_check(b, what, got, want, (dt == OCX_F64 ? 1e-12 : 1e-5) * mag);
}

/* Reductions of n elements of each dtype; bytes = elements read (x, and y for dot). */
static int bench_reductions(bench *b, const size_t *sizes, size_t nsizes)
{
    ocx_dtype dtypes[] = {OCX_F32, OCX_F16, OCX_F64};
    int rc = 0, any = 0;
    for (size_t op = 0; op < sizeof red_names / sizeof *red_names; op++) any |= op_wanted(red_names[op]);
    if (!any) return 0;
    bench_header(b, "reductions (bytes = elements read; host clock over batches of 10 runs, both passes; "
                    "peer: CLBlast Xsum/Xasum/Xdot/Xnrm2/iXmin/iXmax)");
    for (size_t si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        for (size_t di = 0; di < 3; di++) {
            ocx_dtype dt = dtypes[di];
            if (!dtype_wanted(dt) || !bench_runs_dtype(b, "reduce", dt)) continue;
            red_case c = {OCX_REDUCE_SUM, NULL, NULL, NULL, NULL, NULL, n};
            float *hx = NULL, *hy = NULL;
            if (ocx_buffer_create(b->ctx, dt, n, &c.x) || ocx_buffer_create(b->ctx, dt, n, &c.y) ||
                ocx_buffer_create(b->ctx, dt == OCX_F64 ? OCX_F64 : OCX_F32, 1, &c.r) ||
                ocx_buffer_create(b->ctx, OCX_U32, 1, &c.ri) || ocx_buffer_create(b->ctx, OCX_U32, 128, &c.scratch)) {
                bench_note(b, "reduce: %zu %s elements do not fit: %s", n, ocx_dtype_name(dt), ocx_last_error());
                goto next;
            }
            if (bench_fill(b, c.x, n, 3, &hx) || bench_fill(b, c.y, n, 4, &hy)) {
                bench_note(b, "reduce: %zu %s elements could not be filled: %s", n, ocx_dtype_name(dt), ocx_last_error());
                rc = 1;
                goto next;
            }
            char size[32];
            snprintf(size, sizeof size, "%zu", n);
            for (int op = 0; op < 8; op++) {
                if (!op_wanted(red_names[op])) continue;
                c.op = (ocx_reduce_op)op;
                bench_run_fn peer = NULL;
#ifdef HAVE_CLBLAST
                if (dt != OCX_F16 && op != OCX_REDUCE_MIN && op != OCX_REDUCE_MAX) peer = red_clblast;
#endif
                if (check_reduction(b, &c, hx, hy)) { /* said on stderr: no row */
                    rc = 1;
                    continue;
                }
                double peer_ns = 0, ns = bench_batch_pair_ns(b, red_ocx, &c, peer, &c, &peer_ns);
                if (ns < 0) {
                    rc = 1;
                    continue;
                }
                /* flops: an add (or a comparison) an element, a multiply too for dot and nrm2 */
                double bytes = (op == OCX_REDUCE_DOT ? 2.0 : 1.0) * (double)ocx_dtype_size(dt) * (double)n;
                double flops = (op == OCX_REDUCE_DOT || op == OCX_REDUCE_NRM2 ? 2.0 : 1.0) * (double)n;
                bench_row(b, "reduce", red_names[op], ocx_dtype_name(dt), size, ns, bytes, flops, "clblast", peer_ns);
            }
        next:
            free(hx);
            free(hy);
            ocx_buffer_destroy(c.x);
            ocx_buffer_destroy(c.y);
            ocx_buffer_destroy(c.r);
            ocx_buffer_destroy(c.ri);
            ocx_buffer_destroy(c.scratch);
        }
    }
    return rc;
}

static const char *const vec_ops[] = {"add", "mul", "axpy", "scale", "copy", "fill"};
#define MAX_SIZES 16

int bench_vector_env(void)
{
    static const char *const dtypes[] = {"f32", "f16", "f64", NULL};
    const char *ops[sizeof vec_ops / sizeof *vec_ops + sizeof red_names / sizeof *red_names + 1] = {NULL};
    size_t k = 0, list[MAX_SIZES][3], n;
    for (size_t i = 0; i < sizeof vec_ops / sizeof *vec_ops; i++) ops[k++] = vec_ops[i];
    for (size_t i = 0; i < sizeof red_names / sizeof *red_names; i++) ops[k++] = red_names[i];
    return bench_env_sizes("OCX_BENCH_VECTOR_SIZES", 1, list, MAX_SIZES, &n) |
           bench_env_names("OCX_BENCH_VECTOR_DTYPES", dtypes) | bench_env_names("OCX_BENCH_VECTOR_OPS", ops);
}

int bench_vector(bench *b)
{
    size_t sizes_gpu[] = {(size_t)1 << 20, (size_t)1 << 24, (size_t)1 << 28};
    size_t sizes_cpu[] = {(size_t)1 << 20, (size_t)1 << 24};
    size_t sizes_quick[] = {(size_t)1 << 22};
    size_t *sizes = b->quick ? sizes_quick : b->info.type == OCX_DEVICE_GPU ? sizes_gpu : sizes_cpu;
    size_t nsizes = b->quick ? 1 : b->info.type == OCX_DEVICE_GPU ? 3 : 2;
    size_t listed[MAX_SIZES][3], nlisted = 0, counts[MAX_SIZES];
    /* main checked every OCX_BENCH_VECTOR_* list (bench_vector_env) */
    if (bench_env_sizes("OCX_BENCH_VECTOR_SIZES", 1, listed, MAX_SIZES, &nlisted) != 0) return 1;
    if (nlisted) {
        for (size_t i = 0; i < nlisted; i++) counts[i] = listed[i][0];
        sizes = counts, nsizes = nlisted;
    }
    size_t largest = 0; /* the copy rate reported is the largest size's, in whatever order listed */
    for (size_t si = 0; si < nsizes; si++) largest = sizes[si] > largest ? sizes[si] : largest;
    ocx_dtype dtypes[] = {OCX_F32, OCX_F16, OCX_F64};
    int rc = 0;
    char title[512];
    snprintf(title, sizeof title,
             "vector operations and reductions (bytes = reads + writes; %%bound = share of the roofline bound; "
             "each checked before it is timed; %smul's peer Xhad reads z too: 4 elements to ocx's 3)",
             b->host_clock ? "element-wise operations on the host clock over batches of 10 calls, clcopy by its "
                             "event; "
                           : "");
    bench_header(b, title);
    for (size_t si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        for (size_t di = 0; di < 3; di++) {
            ocx_dtype dt = dtypes[di];
            if (!dtype_wanted(dt) || !bench_runs_dtype(b, "vector", dt)) continue;
            vec_case c = {NULL, NULL, NULL, NULL, n};
            if (ocx_buffer_create(b->ctx, dt, n, &c.x) || ocx_buffer_create(b->ctx, dt, n, &c.y) ||
                ocx_buffer_create(b->ctx, dt, n, &c.z)) {
                bench_note(b, "vector: %zu %s elements do not fit: %s", n, ocx_dtype_name(dt), ocx_last_error());
                ocx_buffer_destroy(c.x);
                ocx_buffer_destroy(c.y);
                ocx_buffer_destroy(c.z);
                continue;
            }
            /* Random non-zero inputs, kept on the host for the checks. */
            float *hx = NULL, *hy = NULL;
            if (bench_fill(b, c.x, n, 1, &hx) || bench_fill(b, c.y, n, 2, &hy)) {
                bench_note(b, "vector: %zu %s elements could not be filled: %s", n, ocx_dtype_name(dt), ocx_last_error());
                rc = 1;
                goto next;
            }
            double es = (double)ocx_dtype_size(dt);
            char size[32];
            snprintf(size, sizeof size, "%zu", n);
            c.op = "raw-copy";
            double copy_ns = bench_time_ns(b, run_copy_raw, &c);
            if (copy_ns > 0 && dt == OCX_F32 && n == largest) b->copy_gbps = 2 * es * n / copy_ns;
            if (copy_ns >= 0)
                bench_row(b, "vector", "clcopy", ocx_dtype_name(dt), size, copy_ns, 2 * es * n, 0, NULL, 0);
            else
                rc = 1; /* said on stderr */
            for (size_t oi = 0; oi < sizeof vec_ops / sizeof *vec_ops; oi++) {
                if (!op_wanted(vec_ops[oi])) continue;
                c.op = vec_ops[oi];
                bench_run_fn peer = NULL;
#ifdef HAVE_CLBLAST
                if (has_peer(c.op, dt)) peer = run_clblast;
#endif
                if (check_vec(b, &c, hx, hy)) { /* said on stderr: no row */
                    rc = 1;
                    continue;
                }
                double peer_ns = 0, ns = b->host_clock ? bench_batch_pair_ns(b, run_ocx, &c, peer, &c, &peer_ns)
                                                       : bench_time_pair_ns(b, run_ocx, &c, peer, &c, &peer_ns);
                if (ns < 0) {
                    rc = 1;
                    continue;
                }
                bench_row(b, "vector", c.op, ocx_dtype_name(dt), size, ns, traffic(c.op) * es * n, arithmetic(c.op) * n,
                          "clblast", peer_ns);
            }
        next:
            free(hx);
            free(hy);
            ocx_buffer_destroy(c.x);
            ocx_buffer_destroy(c.y);
            ocx_buffer_destroy(c.z);
        }
    }
    (void)has_peer;
    return rc | bench_reductions(b, sizes, nsizes);
}
