/* check_gemm.c — GEMM against a double-precision host reference.
 *
 * Every case fills A, B and C (including the gaps that leading dimensions and offsets leave) with
 * random non-zero values, runs the product, then checks every element of the C buffer: inside a C
 * matrix against the reference within a bound derived from K and the dtypes, outside untouched. */
#define _GNU_SOURCE /* strcasestr */
#include "ocx_internal.h" /* ocx__launch_build_only */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const size_t sizes[] = {1, 2, 3, 7, 17, 31, 33, 64, 65, 127, 129, 257};
#define NSIZES (sizeof sizes / sizeof *sizes)
static const double scalars[] = {0, 1, -1, 0.5};

typedef enum { MODE_SINGLE, MODE_STRIDED, MODE_ARRAYS } gemm_mode;

typedef struct gcase {
    ocx_dtype in, out;
    ocx_layout layout;
    ocx_op opa, opb;
    size_t m, n, k;
    size_t lda_extra, ldb_extra, ldc_extra;
    size_t offa, offb, offc;
    double alpha, beta;
    gemm_mode mode;
    size_t batch;
    int stride0_a; /* strided mode: all entries share one A */
    int nan_c;     /* C starts as NaN (only meaningful with beta = 0) */
    const char *kernel_env; /* OCX_GEMM_PARAMS for this case (NULL: defaults) */
    ocx_gemm_compute compute; /* single and strided modes */
    int view;                 /* A and B are views 5 elements into larger buffers */
    int host_mem;             /* > 0: A and B wrap cl_mems over host memory this many bytes past a 64-byte
                               * boundary */
    int interleave_c;         /* strided mode: the C matrices side by side within ldc, one element
                               * between neighbours (BLAS's interleaved batches) */
    int exact;                /* integers (A, B in [-2, 2], C in [-4, 4]) whose products and sums are
                               * exact in the arithmetic (half for OCX_COMPUTE_F16 while |sums| < 2048):
                               * every element must match the reference exactly */
} gcase;

static void describe(const gcase *g, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "%s->%s %s op%c%c m=%zu n=%zu k=%zu ld+(%zu,%zu,%zu) off(%zu,%zu,%zu) alpha=%g beta=%g mode=%d batch=%zu "
             "nan_c=%d host_mem=%d interleave_c=%d params=%s",
             ocx_dtype_name(g->in), ocx_dtype_name(g->out), g->layout == OCX_ROW_MAJOR ? "row" : "col",
             g->opa == OCX_OP_N ? 'N' : 'T', g->opb == OCX_OP_N ? 'N' : 'T', g->m, g->n, g->k, g->lda_extra,
             g->ldb_extra, g->ldc_extra, g->offa, g->offb, g->offc, g->alpha, g->beta, (int)g->mode, g->batch, g->nan_c,
             g->host_mem, g->interleave_c, g->kernel_env ? g->kernel_env : "default");
}

/* Index of element (i, j) of a stored matrix. */
static size_t at(ocx_layout layout, size_t ld, size_t i, size_t j)
{
    return layout == OCX_ROW_MAJOR ? i * ld + j : i + j * ld;
}

static size_t span(ocx_layout layout, size_t rows, size_t cols, size_t ld)
{
    if (!rows || !cols) return 0;
    return layout == OCX_ROW_MAJOR ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}

/* Runs one case; returns 0 when it passed, else fills why. */
static int run_case(const gcase *g, uint64_t *rng, char *why, size_t cap)
{
    size_t ar = g->opa == OCX_OP_N ? g->m : g->k, ac = g->opa == OCX_OP_N ? g->k : g->m;
    size_t br = g->opb == OCX_OP_N ? g->k : g->n, bc = g->opb == OCX_OP_N ? g->n : g->k;
    size_t lda = (g->layout == OCX_ROW_MAJOR ? ac : ar) + g->lda_extra;
    size_t ldb = (g->layout == OCX_ROW_MAJOR ? bc : br) + g->ldb_extra;
    size_t batch = g->mode == MODE_SINGLE ? 1 : g->batch;
    const size_t inner_c = g->layout == OCX_ROW_MAJOR ? g->n : g->m;
    size_t ldc = (g->interleave_c ? batch * (inner_c + 1) : inner_c) + g->ldc_extra;
    if (lda < 1) lda = 1;
    if (ldb < 1) ldb = 1;
    if (ldc < 1) ldc = 1;
    size_t sa = span(g->layout, ar, ac, lda), sb = span(g->layout, br, bc, ldb), sc = span(g->layout, g->m, g->n, ldc);
    /* Entry i: strided entries are spaced by span + 3 (a gap the kernel must not touch), or
     * interleaved C ones by a row (column) of C and one element; array entries go in reverse order
     * to show the offsets are really taken from the array. */
    size_t stra = g->stride0_a ? 0 : sa + 3, strb = sb + 3, strc = g->interleave_c ? inner_c + 1 : sc + 3;
    size_t *offa = malloc(batch * sizeof *offa), *offb = malloc(batch * sizeof *offb),
           *offc = malloc(batch * sizeof *offc);
    ck_assert(offa && offb && offc);
    for (size_t i = 0; i < batch; i++) {
        size_t slot = g->mode == MODE_ARRAYS ? batch - 1 - i : i;
        offa[i] = g->offa + slot * stra;
        offb[i] = g->offb + slot * strb;
        offc[i] = g->offc + slot * strc;
    }
    size_t na = g->offa + (batch - 1) * stra + sa + 2, nb = g->offb + (batch - 1) * strb + sb + 2,
           nc = g->offc + (batch - 1) * strc + sc + 2;
    size_t ein = ocx_dtype_size(g->in), eout = ocx_dtype_size(g->out);
    void *ha = malloc(na * ein), *hb = malloc(nb * ein), *hc = malloc(nc * eout);
    double *ra = malloc(na * sizeof *ra), *rb = malloc(nb * sizeof *rb), *rc = malloc(nc * sizeof *rc);
    if (g->exact) {
        trand_ints(rng, g->in, ha, ra, na, 2);
        trand_ints(rng, g->in, hb, rb, nb, 2);
        trand_ints(rng, g->out, hc, rc, nc, 4);
    } else {
        trand_fill(rng, g->in, ha, ra, na, -1, 1);
        trand_fill(rng, g->in, hb, rb, nb, -1, 1);
        trand_fill(rng, g->out, hc, rc, nc, -1, 1);
    }
    if (g->nan_c)
        for (size_t i = 0; i < nc; i++) {
            tset(g->out, hc, i, NAN);
            rc[i] = NAN;
        }
    ocx_buffer *A, *B, *C = tbuffer(g->out, nc, hc), *parent[2] = {NULL, NULL};
    char *host[2] = {NULL, NULL};
    if (g->host_mem) {
        /* CL_MEM_USE_HOST_PTR: the kernels read the caller's memory, less aligned than their vectors */
        cl_context cc;
        cl_device_id dev;
        ck_ok(ocx_context_cl(tctx, &cc, &dev));
        void *src[2] = {ha, hb};
        size_t len[2] = {na, nb};
        ocx_buffer **bufs[2] = {&A, &B};
        for (int i = 0; i < 2; i++) {
            const size_t bytes = (len[i] ? len[i] : 1) * ein;
            host[i] = aligned_alloc(64, (bytes + (size_t)g->host_mem + 63) / 64 * 64);
            ck_assert_ptr_nonnull(host[i]);
            memcpy(host[i] + g->host_mem, src[i], len[i] * ein);
            cl_int err;
            cl_mem mem =
                clCreateBuffer(cc, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host[i] + g->host_mem, &err);
            ck_assert_int_eq(err, CL_SUCCESS);
            ck_ok(ocx_buffer_wrap(tctx, mem, g->in, len[i], bufs[i]));
            clReleaseMemObject(mem);
        }
    } else if (g->view) {
        /* Each parent holds 5 elements before the view (copies of its first ones). */
        void *src[2] = {ha, hb};
        size_t len[2] = {na, nb};
        ocx_buffer **views[2] = {&A, &B};
        for (int i = 0; i < 2; i++) {
            char *h = malloc((len[i] + 5) * ein);
            memcpy(h, src[i], 5 * ein);
            memcpy(h + 5 * ein, src[i], len[i] * ein);
            parent[i] = tbuffer(g->in, len[i] + 5, h);
            ck_ok(ocx_buffer_view(parent[i], 5, len[i], views[i]));
            free(h);
        }
    } else {
        A = tbuffer(g->in, na, ha);
        B = tbuffer(g->in, nb, hb);
    }
    if (g->kernel_env)
        setenv("OCX_GEMM_PARAMS", g->kernel_env, 1);
    else
        unsetenv("OCX_GEMM_PARAMS");
    ocx_event ev = NULL;
    ocx_status st;
    if (g->mode == MODE_SINGLE && g->compute)
        st = ocx_gemm_ex(tctx, NULL, g->layout, g->opa, g->opb, g->m, g->n, g->k, g->alpha, A, g->offa, lda, 0, B,
                         g->offb, ldb, 0, g->beta, C, g->offc, ldc, 0, 1, g->compute, 0, NULL, &ev);
    else if (g->mode == MODE_SINGLE)
        st = ocx_gemm(tctx, NULL, g->layout, g->opa, g->opb, g->m, g->n, g->k, g->alpha, A, g->offa, lda, B, g->offb,
                      ldb, g->beta, C, g->offc, ldc, 0, NULL, &ev);
    else if (g->mode == MODE_STRIDED && g->compute)
        st = ocx_gemm_ex(tctx, NULL, g->layout, g->opa, g->opb, g->m, g->n, g->k, g->alpha, A, g->offa, lda, stra, B,
                         g->offb, ldb, strb, g->beta, C, g->offc, ldc, strc, batch, g->compute, 0, NULL, &ev);
    else if (g->mode == MODE_STRIDED)
        st = ocx_gemm_strided_batched(tctx, NULL, g->layout, g->opa, g->opb, g->m, g->n, g->k, g->alpha, A, g->offa,
                                      lda, stra, B, g->offb, ldb, strb, g->beta, C, g->offc, ldc, strc, batch, 0,
                                      NULL, &ev);
    else
        st = ocx_gemm_batched(tctx, NULL, g->layout, g->opa, g->opb, g->m, g->n, g->k, g->alpha, A, offa, lda, B,
                              offb, ldb, g->beta, C, offc, ldc, batch, 0, NULL, &ev);
    unsetenv("OCX_GEMM_PARAMS");
    int bad = 0;
    if (st != OCX_OK) {
        snprintf(why, cap, "status %s: %s", ocx_status_name(st), ocx_last_error());
        bad = 1;
    } else {
        ck_ok(ocx_event_wait(1, &ev));
        ocx_event_release(ev);
        void *got = tread(C);
        /* What each element of C must be: the reference inside the C matrices, the old value elsewhere. */
        char *inside = calloc(nc, 1);
        double u_acc = g->in == OCX_F64 ? tulp(OCX_F64) : tulp(OCX_F32);
        double u_out = tulp(g->out), tiny = g->out == OCX_F16 ? ldexp(1, -25) : 0;
        /* OCX_COMPUTE_TF32X3: each product's own error, below 2^-20 + 2^-21 < 2^-19 of |a*b| (the
         * dropped tail product, the tails' rounding; ocx.h), and three accumulations a product. */
        double u_prod = g->compute == OCX_COMPUTE_TF32X3 ? ldexp(1, -19) : 0;
        size_t adds = g->compute == OCX_COMPUTE_TF32X3 ? 3 * g->k : g->k;
        for (size_t e = 0; e < batch && !bad; e++)
            for (size_t i = 0; i < g->m && !bad; i++)
                for (size_t j = 0; j < g->n && !bad; j++) {
                    double sum = 0, mag = 0;
                    if (g->alpha != 0)
                        for (size_t l = 0; l < g->k; l++) {
                            double x = ra[offa[e] + (g->opa == OCX_OP_N ? at(g->layout, lda, i, l) : at(g->layout, lda, l, i))];
                            double y = rb[offb[e] + (g->opb == OCX_OP_N ? at(g->layout, ldb, l, j) : at(g->layout, ldb, j, l))];
                            sum += x * y;
                            mag += fabs(x * y);
                        }
                    size_t ci = offc[e] + at(g->layout, ldc, i, j);
                    inside[ci] = 1;
                    double cold = rc[ci];
                    double ref = g->alpha * sum + (g->beta != 0 ? g->beta * cold : 0);
                    double scaled = fabs(g->alpha) * mag + fabs(g->beta * (g->beta != 0 ? cold : 0));
                    double bound = g->exact ? 0
                                            : 2.0 * (double)(adds + 2) * u_acc * scaled + u_prod * fabs(g->alpha) * mag +
                                                  u_out * fabs(ref) + tiny;
                    double v = tvalue(g->out, got, ci);
                    if (!(fabs(v - ref) <= bound)) {
                        snprintf(why, cap, "entry %zu C(%zu,%zu) = %.9g, expected %.9g (bound %.3g)", e, i, j, v, ref,
                                 bound);
                        bad = 1;
                    }
                }
        for (size_t i = 0; i < nc && !bad; i++) {
            if (inside[i]) continue;
            double v = tvalue(g->out, got, i);
            if (!(v == rc[i] || (isnan(v) && isnan(rc[i])))) {
                snprintf(why, cap, "element %zu outside every C matrix changed: %.9g (was %.9g)", i, v, rc[i]);
                bad = 1;
            }
        }
        /* A and B as they were: a copy or a kernel that wrote over an operand had passed wherever C
         * came out right */
        for (int i = 0; i < 2 && !bad; i++) {
            const size_t len = i ? nb : na;
            if (!len) continue;
            void *now = tread(i ? B : A);
            if (memcmp(now, i ? hb : ha, len * ein) != 0) {
                snprintf(why, cap, "operand %c changed", i ? 'B' : 'A');
                bad = 1;
            }
            free(now);
        }
        free(inside);
        free(got);
    }
    ocx_buffer_destroy(A);
    ocx_buffer_destroy(B);
    ocx_buffer_destroy(C);
    for (int i = 0; i < 2; i++) {
        if (parent[i]) ocx_buffer_destroy(parent[i]);
        free(host[i]);
    }
    free(ha), free(hb), free(hc), free(ra), free(rb), free(rc);
    free(offa), free(offb), free(offc);
    return bad;
}

static void check_case(const gcase *g, uint64_t seed, uint64_t *rng)
{
    char why[512] = "", desc[512];
    if (run_case(g, rng, why, sizeof why)) {
        describe(g, desc, sizeof desc);
        ck_abort_msg("seed %llu: %s: %s", (unsigned long long)seed, desc, why);
    }
}

/* The dtype pairs: f32, f16 → f16, f16 → f32, f64 (where the device has it). */
static void pick_dtypes(uint64_t *rng, ocx_dtype *in, ocx_dtype *out)
{
    for (;;) {
        switch (trand_next(rng) % 4) {
        case 0: *in = OCX_F32, *out = OCX_F32; break;
        case 1: *in = OCX_F16, *out = OCX_F16; break;
        case 2: *in = OCX_F16, *out = OCX_F32; break;
        default: *in = OCX_F64, *out = OCX_F64; break;
        }
        if (tdtype_ok(*in)) return;
    }
}

/* A random case over the issue's size list; `combo` chooses how the kernel is forced. */
static gcase random_case(uint64_t *rng, int combo)
{
    gcase g;
    memset(&g, 0, sizeof g);
    pick_dtypes(rng, &g.in, &g.out);
    g.layout = trand_next(rng) % 2 ? OCX_COL_MAJOR : OCX_ROW_MAJOR;
    g.opa = trand_next(rng) % 2 ? OCX_OP_T : OCX_OP_N;
    g.opb = trand_next(rng) % 2 ? OCX_OP_T : OCX_OP_N;
    g.m = sizes[trand_next(rng) % NSIZES];
    g.n = sizes[trand_next(rng) % NSIZES];
    g.k = sizes[trand_next(rng) % NSIZES];
    /* Keep the host reference cheap: at most one dimension of 257. */
    if (g.m == 257 && g.n == 257) g.n = 129;
    g.lda_extra = trand_next(rng) % 3 == 0 ? trand_next(rng) % 5 : 0;
    g.ldb_extra = trand_next(rng) % 3 == 0 ? trand_next(rng) % 5 : 0;
    g.ldc_extra = trand_next(rng) % 3 == 0 ? trand_next(rng) % 5 : 0;
    g.offa = trand_next(rng) % 4 == 0 ? trand_next(rng) % 7 : 0;
    g.offb = trand_next(rng) % 4 == 0 ? trand_next(rng) % 7 : 0;
    g.offc = trand_next(rng) % 4 == 0 ? trand_next(rng) % 7 : 0;
    /* alpha != 0: alpha = 0 reads neither A nor B and runs the direct kernel (or none) whatever a
     * test forces, so a draw of it had emptied the cases of tests that each check one kernel
     * (test_random_combos adds such products of its own) */
    g.alpha = scalars[1 + trand_next(rng) % 3];
    g.beta = scalars[trand_next(rng) % 4];
    g.nan_c = g.beta == 0 && trand_next(rng) % 2;
    g.mode = MODE_SINGLE;
    g.batch = 1;
    /* Alternate: the library's choice (matrix-vector products included), the direct kernel forced,
     * the tiled kernel forced. */
    static const char *envs[] = {NULL, "DIRECT=4096,DOTN=0", "DIRECT=1,DOTN=0"};
    g.kernel_env = envs[combo % 3];
    return g;
}

/* random_case's draw with the layout and both transposes from c's three low bits: every
 * combination over eight consecutive c. */
static gcase layout_case(uint64_t *rng, int c)
{
    gcase g = random_case(rng, 0);
    g.layout = c & 1 ? OCX_COL_MAJOR : OCX_ROW_MAJOR;
    g.opa = c & 2 ? OCX_OP_T : OCX_OP_N;
    g.opb = c & 4 ? OCX_OP_T : OCX_OP_N;
    return g;
}

START_TEST(test_random_combos)
{
    uint64_t seed = test_seed() + (uint64_t)_i * 7919u, rng = seed;
    for (int combo = 0; combo < 70; combo++) {
        gcase g = random_case(&rng, combo);
        if (combo % 10 == 9) g.alpha = 0; /* C = beta C, A and B unread */
        check_case(&g, seed, &rng);
    }
}
END_TEST

/* Every layout x transpose x dtype pair, on a shape with ragged edges in every dimension, through
 * both kernels. */
START_TEST(test_all_layouts)
{
    uint64_t seed = test_seed(), rng = seed;
    ocx_dtype pairs[4][2] = {{OCX_F32, OCX_F32}, {OCX_F16, OCX_F16}, {OCX_F16, OCX_F32}, {OCX_F64, OCX_F64}};
    for (int p = 0; p < 4; p++) {
        if (!tdtype_ok(pairs[p][0])) continue;
        for (int l = 0; l < 2; l++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++)
                    for (int kern = 0; kern < 2; kern++) {
                        gcase g = {pairs[p][0], pairs[p][1], l ? OCX_COL_MAJOR : OCX_ROW_MAJOR, ta ? OCX_OP_T : OCX_OP_N,
                                   tb ? OCX_OP_T : OCX_OP_N, 67, 45, 37, 1, 2, 3, 5, 2, 1, 0.5, -1, MODE_SINGLE, 1, 0, 0,
                                   kern ? "DIRECT=1,DOTN=0" : "DIRECT=4096,DOTN=0"};
                        check_case(&g, seed, &rng);
                    }
    }
}
END_TEST

START_TEST(test_batched)
{
    uint64_t seed = test_seed(), rng = seed;
    for (int c = 0; c < 16; c++) {
        gcase g = random_case(&rng, c);
        g.mode = c % 2 ? MODE_ARRAYS : MODE_STRIDED;
        g.batch = 1 + trand_next(&rng) % 4;
        g.stride0_a = g.mode == MODE_STRIDED && c % 4 == 0;
        if (g.m > 65) g.m = 65;
        check_case(&g, seed, &rng);
    }
    /* Interleaved C matrices (side by side within ldc, one element apart; BLAS allows them, and
     * the span rule had refused them): every kernel the sizes reach writes its own columns
     * (row-major; rows column-major) alone, and the gaps stay as they were. */
    for (int c = 0; c < 12; c++) {
        gcase g = random_case(&rng, c);
        g.mode = MODE_STRIDED;
        g.interleave_c = 1;
        g.batch = 2 + trand_next(&rng) % 3;
        if (g.m > 65) g.m = 65;
        check_case(&g, seed, &rng);
    }
    /* More entries than a CUDA grid takes in its second and third dimensions (65535; GEMM launches
     * put the batch in one of them): the library's choice, the direct kernel and the tiled one, by
     * stride and by offset arrays, each into a NaN C. The H200 ran batches of 70000 and 100000 so. */
    for (int c = 0; c < 3; c++) {
        gcase g = random_case(&rng, c);
        g.mode = c == 2 ? MODE_ARRAYS : MODE_STRIDED;
        g.batch = 65536 + 7 + (size_t)c;
        g.m = 3, g.n = 2, g.k = 5;
        g.beta = 0, g.nan_c = 1;
        check_case(&g, seed, &rng);
    }
    /* Thousands of 1x1x1 entries, C's in reverse order within one buffer and A's and B's interleaved
     * in another (disjoint, not in order): accepted and computed; then two C entries made to
     * coincide, and an A entry moved onto a C entry: rejected. */
    enum { NB = 3001 };
    size_t *oab = malloc(NB * sizeof *oab), *ob = malloc(NB * sizeof *ob), *oc = malloc(NB * sizeof *oc);
    float *hab = malloc(2 * NB * sizeof *hab), *hc = malloc(3 * NB * sizeof *hc);
    ck_assert(oab && ob && oc && hab && hc);
    for (size_t i = 0; i < NB; i++) {
        oab[i] = 2 * i, ob[i] = 2 * i + 1, oc[i] = NB - 1 - i;
        hab[2 * i] = (float)(i % 17) - 8, hab[2 * i + 1] = (float)(i % 5) + 0.5f;
    }
    for (size_t i = 0; i < 3 * NB; i++) hc[i] = NAN;
    ocx_buffer *AB = tbuffer(OCX_F32, 2 * NB, hab), *C = tbuffer(OCX_F32, 3 * NB, hc);
    ck_ok(ocx_gemm_batched(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 1, 1, 1, 1.0, AB, oab, 1, AB, ob, 1, 0.0, C, oc,
                           1, NB, 0, NULL, NULL));
    float *got = tread(C);
    for (size_t i = 0; i < NB; i++)
        ck_assert_msg(got[oc[i]] == hab[2 * i] * hab[2 * i + 1], "batch entry %zu: %g, expected %g", i, got[oc[i]],
                      hab[2 * i] * hab[2 * i + 1]);
    free(got);
    oc[1234] = oc[77];
    ck_status(ocx_gemm_batched(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 1, 1, 1, 1.0, AB, oab, 1, AB, ob, 1, 0.0, C,
                               oc, 1, NB, 0, NULL, NULL),
              OCX_ERR_INVALID_ARGUMENT);
    oc[1234] = NB - 1 - 1234;
    size_t *oa_c = malloc(NB * sizeof *oa_c);
    ck_assert(oa_c);
    for (size_t i = 0; i < NB; i++) oa_c[i] = NB + i; /* A in C's buffer, past the C entries */
    ck_ok(ocx_gemm_batched(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 1, 1, 1, 1.0, C, oa_c, 1, AB, ob, 1, 0.0, C, oc,
                           1, NB, 0, NULL, NULL));
    oa_c[2999] = oc[5];
    ck_status(ocx_gemm_batched(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 1, 1, 1, 1.0, C, oa_c, 1, AB, ob, 1, 0.0, C,
                               oc, 1, NB, 0, NULL, NULL),
              OCX_ERR_INVALID_ARGUMENT);
    /* A and C interleaved in one buffer (C entries at even offsets, A's at odd ones, in reverse):
     * the ranges meet, the entries do not: accepted, and computed. */
    for (size_t i = 0; i < 2 * NB; i++) hc[i] = (float)(i % 7) - 2.75f;
    ocx_buffer *CA = tbuffer(OCX_F32, 2 * NB, hc);
    for (size_t i = 0; i < NB; i++) oc[i] = 2 * i, oa_c[i] = 2 * (NB - 1 - i) + 1;
    ck_ok(ocx_gemm_batched(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 1, 1, 1, 1.0, CA, oa_c, 1, AB, ob, 1, 0.0, CA,
                           oc, 1, NB, 0, NULL, NULL));
    got = tread(CA);
    for (size_t i = 0; i < NB; i++)
        ck_assert_msg(got[oc[i]] == hc[oa_c[i]] * hab[ob[i]] && got[oa_c[i]] == hc[oa_c[i]],
                      "interleaved batch entry %zu: %g, expected %g", i, got[oc[i]], hc[oa_c[i]] * hab[ob[i]]);
    free(got);
    ocx_buffer_destroy(CA);
    ocx_buffer_destroy(AB), ocx_buffer_destroy(C);
    free(oab), free(ob), free(oc), free(oa_c), free(hab), free(hc);
}
END_TEST

/* BLAS degenerate cases. */
START_TEST(test_degenerate)
{
    uint64_t seed = test_seed(), rng = seed;
    for (int kern = 0; kern < 2; kern++) {
        const char *env = kern ? "DIRECT=1,DOTN=0" : "DIRECT=4096,DOTN=0";
        /* beta = 0: NaN in C must not leak. */
        gcase g = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 33, 65, 17, 0, 0, 0, 0, 0, 0, 1, 0, MODE_SINGLE, 1,
                   0, 1, env};
        check_case(&g, seed, &rng);
        /* K = 0: C = beta*C. */
        g.k = 0, g.nan_c = 0, g.beta = 0.5;
        check_case(&g, seed, &rng);
        /* alpha = 0 with beta = 0 and NaN in C: zeros. */
        g.k = 17, g.alpha = 0, g.beta = 0, g.nan_c = 1;
        check_case(&g, seed, &rng);
        /* M or N = 0: nothing changes (checked by the untouched-elements pass). */
        g.alpha = 1, g.beta = 0.5, g.nan_c = 0, g.m = 0;
        check_case(&g, seed, &rng);
        g.m = 33, g.n = 0;
        check_case(&g, seed, &rng);
    }
    /* alpha = 0: A and B are not read, so NaN in A does not reach C. */
    float a[4] = {NAN, NAN, NAN, NAN}, b[4] = {1, 2, 3, 4}, c[4] = {1, 2, 3, 4};
    ocx_buffer *A = tbuffer(OCX_F32, 4, a), *B = tbuffer(OCX_F32, 4, b), *C = tbuffer(OCX_F32, 4, c);
    ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 2, 0.0, A, 0, 2, B, 0, 2, 2.0, C, 0, 2, 0, NULL,
                   NULL));
    float *got = tread(C);
    for (int i = 0; i < 4; i++) ck_assert_msg(got[i] == 2 * c[i], "alpha = 0: C[%d] = %g, expected %g", i, got[i], 2 * c[i]);
    free(got);
    /* An alpha that is 0 in f32 (1e-50) counts as 0 too: C = 2*(2*c) now. */
    ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 2, 1e-50, A, 0, 2, B, 0, 2, 2.0, C, 0, 2, 0, NULL,
                   NULL));
    got = tread(C);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(got[i] == 4 * c[i], "alpha = 1e-50: C[%d] = %g, expected %g", i, got[i], 4 * c[i]);
    free(got);
    /* K = 0 with an alpha that is no number in the arithmetic (infinite, NaN, or 1e300, infinite in
     * f32): C = beta*C, as in BLAS, not alpha*0 = NaN. */
    const double odd_alpha[] = {INFINITY, -INFINITY, NAN, 1e300};
    for (int i = 0; i < 4; i++) {
        ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 0, odd_alpha[i], A, 0, 2, B, 0, 2, 0.5, C, 0,
                       2, 0, NULL, NULL));
        got = tread(C);
        for (int j = 0; j < 4; j++)
            ck_assert_msg(got[j] == 2 * c[j], "K = 0, alpha = %g: C[%d] = %g, expected %g", odd_alpha[i], j, got[j],
                          2 * c[j]);
        free(got);
        ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 0, odd_alpha[i], A, 0, 2, B, 0, 2, 2.0, C, 0,
                       2, 0, NULL, NULL)); /* back to 4*c */
    }
    /* Native f16 arithmetic: a beta that is 0 in half (1e-8) does not read C either, so NaN in C
     * does not leak (devices with cl_khr_fp16; elsewhere the call is refused, test_bad_arguments). */
    if (tinfo.has_fp16) {
        uint16_t ha[4], hb[4], hc[4];
        for (int i = 0; i < 4; i++) {
            ha[i] = ocx_half_from_float(b[i]);
            hb[i] = ocx_half_from_float(1.0f);
            hc[i] = 0x7e00; /* NaN */
        }
        ocx_buffer *HA = tbuffer(OCX_F16, 4, ha), *HB = tbuffer(OCX_F16, 4, hb), *HC = tbuffer(OCX_F16, 4, hc);
        ck_ok(ocx_gemm_ex(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 2, 1.0, HA, 0, 2, 0, HB, 0, 2, 0, 1e-8,
                          HC, 0, 2, 0, 1, OCX_COMPUTE_F16, 0, NULL, NULL));
        ck_ok(ocx_buffer_read(tctx, NULL, HC, 0, 4, hc, 0, NULL, NULL));
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                const float want = b[2 * i] + b[2 * i + 1], v = ocx_half_to_float(hc[2 * i + j]);
                ck_assert_msg(v == want, "native f16, beta = 1e-8: C[%d][%d] = %g, expected %g", i, j, v, want);
            }
        ocx_buffer_destroy(HA);
        ocx_buffer_destroy(HB);
        ocx_buffer_destroy(HC);
    }
    /* batch = 0 and M = 0 still return an event that completes. */
    ocx_event ev = NULL;
    ck_ok(ocx_gemm_strided_batched(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 2, 1.0, A, 0, 2, 0, B, 0, 2, 0,
                                   0.0, C, 0, 2, 4, 0, 0, NULL, &ev));
    ck_assert_ptr_nonnull(ev);
    ck_ok(ocx_event_wait(1, &ev));
    ocx_event_release(ev);
    ocx_buffer_destroy(A);
    ocx_buffer_destroy(B);
    ocx_buffer_destroy(C);
}
END_TEST

/* The tiled kernel in the shapes PoCL's defaults (STAGE=1, 8x32 or 6x16 register tiles in 16-wide
 * vectors) leave out: local-memory staging (STAGE=2) with the GPU's default set (its rows named: a
 * CPU's default 6-row tiles are for STAGE=1 alone) and with 16-wide vectors, STAGE=1 with several work-items per group and narrower vectors, and the GPUs' register
 * tile loops unrolled whole (UNROLL_TILE=1, in small tiles: PoCL takes minutes over large ones);
 * work-group orders by bands of 1, 3 and 5 tile-rows (a partial last band wherever the tile-rows are
 * no multiple), and 3 in a local-memory kernel reading both operands MN-fast (TN, else the host takes
 * 1), over 8 tile-rows. Separate builds of the tiled kernel, so only f32. */
START_TEST(test_stages)
{
    /* Every set names what it depends on: the defaults differ between GPUs and CPUs. */
    static const char *envs[] = {
        "DIRECT=1,DOTN=0,STAGE=2,MWG=128,NWG=128,KWG=32,MDIMC=8,NDIMC=16,VWM=4,VWN=4,UNROLL_TILE=0",
        "DIRECT=1,DOTN=0,STAGE=2,KWG=8,MWG=64,MDIMC=8",
        "DIRECT=1,DOTN=0,STAGE=1,MWG=16,NWG=64,MDIMC=2,NDIMC=4,VWN=4,PACK=0,GM=1",
        "DIRECT=1,DOTN=0,STAGE=1,MWG=4,NWG=8,MDIMC=1,NDIMC=4,VWM=1,VWN=2,PACK=1,GM=3",
        "DIRECT=1,DOTN=0,STAGE=4,MWG=16,NWG=32,KWG=8,MDIMC=4,NDIMC=4,VWM=2,VWN=4,UNROLL_TILE=1,GM=5",
        "DIRECT=1,DOTN=0,STAGE=2,MWG=32,NWG=16,KWG=8,MDIMC=8,NDIMC=2,VWM=2,VWN=2,UNROLL_TILE=1"};
    uint64_t seed = test_seed(), rng = seed;
    for (int c = 0; c < 18; c++) {
        gcase g = random_case(&rng, c);
        g.in = g.out = OCX_F32;
        g.kernel_env = envs[c % 6];
        check_case(&g, seed, &rng);
    }
    gcase bands = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, OCX_OP_T, OCX_OP_N, 117, 70, 33, 2, 1, 3, 1, 2, 3, -0.5, 0.5,
                   MODE_STRIDED, 2, 0, 0,
                   "DIRECT=1,DOTN=0,PACK=0,GM=3,STAGE=4,MWG=16,NWG=32,KWG=8,MDIMC=4,NDIMC=4,VWM=2,VWN=4"};
    check_case(&bands, seed, &rng);
}
END_TEST

/* The tiled kernel under parameter sets drawn from the family's own table (each searched
 * parameter a rung of its ladder, checked as a profile's would be), each on random cases: the
 * space ocx-tune searches holds far more sets than the hand-picked ones above, and a kernel that
 * goes wrong under one of them only at sizes the tuner does not time would reach a profile. Half
 * the sets take STAGE=1 (what CPUs search), every other draw with panels on any product (PANEL=1);
 * the local-memory stages keep to tiles of 64 or less
 * and register tiles of 32 elements or less, whose builds take PoCL seconds, not minutes (with
 * register tiles up to 256, some seeds took the suite from 30 s to 150 s). */
START_TEST(test_random_params)
{
    static const char *const drawn[] = {"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "VWM", "VWN", "STAGE", "KUNR", "GM", "PACK",
                                        NULL};
    uint64_t seed = test_seed(), rng = seed;
    int sets = 0;
    for (int tries = 0; sets < 6 && tries < 20000; tries++) {
        char env[1024];
        ocx_dtype in, out;
        pick_dtypes(&rng, &in, &out);
        /* every other draw with panels on any product (PANEL=1; the STAGE=1 sets alone use it) */
        if (!trandom_params("gemm", in, drawn, tries % 2 ? "DIRECT=1,DOTN=0,PANEL=1" : "DIRECT=1,DOTN=0", &rng, env,
                            sizeof env))
            continue;
        const int stage = tparam(env, "STAGE"), mwg = tparam(env, "MWG"), nwg = tparam(env, "NWG");
        if ((stage == 1) != (sets % 2 == 0)) continue;
        if (stage != 1 && (mwg > 64 || nwg > 64 || mwg / tparam(env, "MDIMC") * (nwg / tparam(env, "NDIMC")) > 32))
            continue;
        for (int c = 0; c < 3; c++) {
            gcase g = random_case(&rng, 0);
            g.in = in, g.out = out; /* the dtypes the set was checked for */
            g.kernel_env = env;
            check_case(&g, seed, &rng);
        }
        sets++;
    }
    ck_assert_msg(sets == 6, "seed %llu: %d parameter sets drawn", (unsigned long long)seed, sets);
}
END_TEST

/* The end of a case run under OCX_GEMM_PARAMS on three buffers: the default stream finished, the
 * variable unset, the buffers released. */
static void end_params_case(ocx_buffer *x, ocx_buffer *y, ocx_buffer *z)
{
    ck_ok(ocx_stream_finish(tctx, NULL));
    unsetenv("OCX_GEMM_PARAMS");
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);
    ocx_buffer_destroy(z);
}

/* A set the random draws found: STAGE=3 in groups of two work-items, GM > 1. PoCL 3.1's compiler
 * aborted the process on some of its builds (ParallelRegion.cc, "exit != NULL"; not on every
 * layout and transpose); it is now refused in each, as a profile's or the variable's parameters
 * are, with a message, and the same tiles build in groups of four. */
START_TEST(test_stage3_small_groups_refused)
{
    ocx_buffer *x, *y, *z;
    ck_ok(ocx_buffer_create(tctx, OCX_F32, 45 * 45, &x));
    ck_ok(ocx_buffer_create(tctx, OCX_F32, 45 * 45, &y));
    ck_ok(ocx_buffer_create(tctx, OCX_F32, 45 * 45, &z));
    setenv("OCX_GEMM_PARAMS", "DIRECT=1,DOTN=0,STAGE=3,GM=2,MWG=16,NWG=16,KWG=8,MDIMC=1,NDIMC=2,VWM=1,VWN=1,KUNR=8", 1);
    for (int t = 0; t < 8; t++) { /* 37 x 29 x 45 (lda = ldb = ldc = 45: room in every layout) */
        ck_status(ocx_gemm(tctx, NULL, t & 4 ? OCX_COL_MAJOR : OCX_ROW_MAJOR, t & 1 ? OCX_OP_T : OCX_OP_N,
                           t & 2 ? OCX_OP_T : OCX_OP_N, 37, 29, 45, 1.0, x, 0, 45, y, 0, 45, 0.0, z, 0, 45, 0, NULL, NULL),
                  OCX_ERR_INVALID_ARGUMENT);
        ck_assert_msg(strstr(ocx_last_error(), "4 or more work-items"), "%s", ocx_last_error());
    }
    end_params_case(x, y, z);
    gcase g = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, 37, 29, 45, 0, 0, 0, 0, 0, 0, 1.0, 0.0, MODE_SINGLE, 1,
               0, 0, "DIRECT=1,DOTN=0,STAGE=3,GM=2,MWG=16,NWG=16,KWG=8,MDIMC=2,NDIMC=2,VWM=1,VWN=1,KUNR=8"};
    uint64_t seed = test_seed(), rng = seed;
    check_case(&g, seed, &rng);
}
END_TEST

/* Copies of strided operands (PACK, lib/gemm.c: pack_plan_make), with both settings in every layout x
 * transpose, in strided batches with offsets; with PACK=1 the cases whose kernel-side B is K-fast
 * copy it, one of them (c = 11) shared by every entry (copied once); the odd ones read A and B
 * through buffer views, and those with PACK=1 (9, 11, 13, 15) take a local-memory kernel
 * (PACK_STAGED: the GPUs' copies, transposed through local memory). Then the copies that only
 * large operands get: an N-fast B whose 4 KiB row pitch is copied when K >= 1024 (f32 ldb = 1024,
 * f64 ldb = 512), a transposed A of 4 MiB (f32 1024 x 1024) alone and in a batch that shares it
 * (PACKN=1: those products are 3 wide, where the CPUs' PACKN leaves the operands in place);
 * and PACK_STAGED's (PACKN=40): a K-fast A copied M-fast (alone and shared), a K-fast B copied
 * N-fast, and both at once. */
#define PACK_STAGED "DIRECT=1,PACK=1,PACKN=40,STAGE=4,MWG=16,NWG=32,KWG=8,MDIMC=4,NDIMC=4,VWM=2,VWN=4,DOTN=0"
START_TEST(test_packed)
{
    uint64_t seed = test_seed(), rng = seed;
    for (int c = 0; c < 16; c++) {
        gcase g = layout_case(&rng, c);
        g.m = 37, g.n = 45, g.k = 67;
        g.offa = c % 3, g.offb = c % 5;
        g.mode = MODE_STRIDED, g.batch = 3, g.stride0_a = (c & 3) == 3;
        g.view = c & 1;
        g.kernel_env = !(c & 8) ? "DIRECT=1,PACK=0" : c & 1 ? PACK_STAGED : "DIRECT=1,PACK=1";
        check_case(&g, seed, &rng);
    }
    const ocx_dtype wide[2] = {OCX_F32, OCX_F64};
    for (int d = 0; d < 2; d++) {
        if (!tdtype_ok(wide[d])) continue;
        gcase g = {wide[d], wide[d], OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 3, d ? 512 : 1024, 1024, 0, 0, 0, 1, 2, 0,
                   1, 0.5, MODE_STRIDED, 2, 0, 0, "DIRECT=1,PACK=1,PACKN=1"};
        check_case(&g, seed, &rng);
    }
    for (int shared = 0; shared < 2; shared++) {
        gcase g = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, OCX_OP_T, OCX_OP_N, 1024, 3, 1024, 0, 1, 0, 3, 0, 0,
                   -1, 1, MODE_STRIDED, 1 + shared, shared, 0, "DIRECT=1,PACK=1,PACKN=1"};
        check_case(&g, seed, &rng);
        /* The local-memory kernels' copies (PACKN=40 here): a K-fast A where N >= PACKN and K > 256. */
        gcase s = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 37, 45, 301, 1, 0, 2, 3, 1, 0,
                   0.5, -1, MODE_STRIDED, 1 + shared, shared, 0, PACK_STAGED};
        check_case(&s, seed, &rng);
    }
    /* A K-fast B where M >= PACKN: with A's (B's copy after it in the scratch buffer), alone, and
     * under a lower M (no copy). */
    gcase both = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, 41, 43, 258, 0, 1, 0, 1, 2, 0,
                  1, 0, MODE_SINGLE, 1, 0, 1, PACK_STAGED};
    check_case(&both, seed, &rng);
    gcase b_only = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, 40, 5, 67, 0, 0, 0, 0, 1, 0,
                    -1, 0.5, MODE_STRIDED, 2, 0, 0, PACK_STAGED};
    check_case(&b_only, seed, &rng);
    b_only.m = 39;
    check_case(&b_only, seed, &rng);
    /* A local-memory kernel that reads a K-fast operand (NN's A, no copy here) takes the tiles row
     * after row whatever GM says, and ocx_last_params() reports that; TN keeps GM's bands. */
    setenv("OCX_GEMM_PARAMS", "DIRECT=1,PACK=0,GM=5,STAGE=4,MWG=16,NWG=32,KWG=8,MDIMC=4,NDIMC=4,VWM=2,VWN=4", 1);
    ocx_buffer *x = tpoisoned(OCX_F32, 40 * 40), *y = tpoisoned(OCX_F32, 40 * 40), *z = tpoisoned(OCX_F32, 40 * 40);
    for (int t = 0; t < 2; t++) {
        ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, t ? OCX_OP_T : OCX_OP_N, OCX_OP_N, 40, 40, 40, 1, x, 0, 40, y, 0, 40,
                       0, z, 0, 40, 0, NULL, NULL));
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        ck_assert_msg(strstr(info.params, t ? "GM=5 " : "GM=1 "), "%s: %s", t ? "TN" : "NN", info.params);
    }
    end_params_case(x, y, z);
}
END_TEST

/* The CPU kernel (STAGE=1, the CPUs' default tiles named: AVX-512's 8x32 register tiles on 8
 * work-items along M, and AVX2's 6x16, here on 4 along M) fitted to thin products (gemm_core): N
 * below NWG narrows the column vectors (VWN <= N) and the tile, M below MWG shrinks the tile to at
 * most M rows (fewer work-items along M, else a lower register tile); every layout and transpose
 * with M or N in {1, 2, 3, 5, 16, 17} and, on the 6-row tiles, M in {5, 7, 13, 49, 70, 99}: in a
 * last tile-row that M leaves part empty the work-items compute rows moved back by whole steps and
 * store only their own, and some own none (49). Then the values reported by ocx_last_params(). */
#define CPU_TILES "DIRECT=1,STAGE=1,MWG=64,NWG=32,MDIMC=8,NDIMC=1,VWN=16,PACK=1,DOTN=0"
#define CPU_TILES_6 "DIRECT=1,STAGE=1,MWG=24,NWG=16,MDIMC=4,NDIMC=1,VWN=16,PACK=1,DOTN=0"
START_TEST(test_thin)
{
    uint64_t seed = test_seed(), rng = seed;
    const size_t thin[] = {1, 2, 3, 5, 16, 17}, rows6[] = {5, 7, 13, 49, 70, 99};
    for (int c = 0; c < 12; c++) {
        gcase g = layout_case(&rng, c);
        g.m = rows6[c % 6];
        g.n = 20 + (size_t)c;
        g.k = 33 + (size_t)c;
        g.kernel_env = CPU_TILES_6;
        check_case(&g, seed, &rng);
    }
    for (int c = 0; c < 24; c++) {
        gcase g = layout_case(&rng, c);
        g.m = c & 8 ? thin[c % 6] : 70 + (size_t)c;
        g.n = c & 8 ? 61 + (size_t)c : thin[c % 6];
        g.k = 33 + (size_t)c;
        g.kernel_env = CPU_TILES;
        check_case(&g, seed, &rng);
    }
    ocx_buffer *x = tpoisoned(OCX_F32, 100 * 50), *y = tpoisoned(OCX_F32, 100 * 50), *z = tpoisoned(OCX_F32, 100 * 50);
    const struct {
        const char *env;
        size_t m, n;
        const char *want[4];
    } fits[] = {{CPU_TILES, 3, 40, {"MWG=3", "MDIMC=1", "NWG=32", "VWN=16"}},
                {CPU_TILES, 100, 5, {"MWG=64", "MDIMC=8", "NWG=8", "VWN=4"}},
                {CPU_TILES, 17, 1, {"MWG=16", "MDIMC=2", "NWG=1", "VWN=1"}},
                {CPU_TILES_6, 5, 40, {"MWG=4", "MDIMC=1", "NWG=16", "VWN=16"}},
                {CPU_TILES_6, 13, 40, {"MWG=12", "MDIMC=2", "NWG=16", "VWN=16"}}};
    for (size_t f = 0; f < sizeof fits / sizeof *fits; f++) {
        setenv("OCX_GEMM_PARAMS", fits[f].env, 1);
        ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, fits[f].m, fits[f].n, 50, 1, x, 0, 50, y, 0,
                       fits[f].n, 0, z, 0, fits[f].n, 0, NULL, NULL));
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        char all[600];
        snprintf(all, sizeof all, " %s ", info.params); /* every NAME=value between spaces */
        for (int i = 0; i < 4; i++) {
            char want[40];
            snprintf(want, sizeof want, " %s ", fits[f].want[i]);
            ck_assert_msg(strstr(all, want), "%zu x %zu: %s not in %s", fits[f].m, fits[f].n, fits[f].want[i],
                          info.params);
        }
    }
    end_params_case(x, y, z);
}
END_TEST

/* Split K (KSPLIT; the local-memory kernels, here KSPLIT=8 and 16 x 32 tiles, so that a product of
 * at most 16 x 16 is one tile, fewer than the compute units): every layout x transpose with the
 * dtypes random_case draws, K from four chunks to many (a prime among them); then with copies in
 * the scratch buffer before the partials, through views; then that the partial products went
 * through the stream's scratch buffer (ocx_stream_trim reports its size), and do not with
 * KSPLIT=0. */
#define SPLIT_STAGED "DIRECT=1,PACK=1,PACKN=40,KSPLIT=8,STAGE=4,MWG=16,NWG=32,KWG=8,MDIMC=4,NDIMC=4,VWM=2,VWN=4,DOTN=0"
START_TEST(test_split_k)
{
    uint64_t seed = test_seed(), rng = seed;
    const size_t ks[4] = {32, 67, 301, 1031};
    for (int c = 0; c < 16; c++) {
        gcase g = layout_case(&rng, c);
        g.m = 1 + (size_t)c % 13, g.n = 2 + (size_t)(c * 5) % 15, g.k = ks[c % 4];
        g.mode = MODE_SINGLE, g.batch = 1;
        g.kernel_env = SPLIT_STAGED;
        check_case(&g, seed, &rng);
    }
    /* With the copies (PACKN=1: a K-fast A or B is copied) before the partial products in the
     * scratch buffer, through buffer views. */
    for (int c = 0; c < 4; c++) {
        gcase g = random_case(&rng, 0);
        g.layout = c & 1 ? OCX_COL_MAJOR : OCX_ROW_MAJOR;
        g.opa = OCX_OP_N;
        g.opb = c & 2 ? OCX_OP_T : OCX_OP_N;
        g.m = 9, g.n = 13, g.k = 301;
        g.mode = MODE_SINGLE, g.batch = 1, g.view = 1;
        g.kernel_env = SPLIT_STAGED ",PACKN=1";
        check_case(&g, seed, &rng);
    }
    /* "the result is deterministic" (ocx.h): the same split product twice, bit for bit */
    {
        enum { M = 9, N = 13, K = 1031 };
        float *h = malloc((M * K + K * N) * sizeof *h), got[2][M * N];
        ck_assert_ptr_nonnull(h);
        trand_fill(&rng, OCX_F32, h, NULL, M * K + K * N, -1, 1);
        ocx_buffer *A = tbuffer(OCX_F32, M * K, h), *B = tbuffer(OCX_F32, K * N, h + M * K);
        for (int r = 0; r < 2; r++) {
            ocx_buffer *C = tpoisoned(OCX_F32, M * N);
            setenv("OCX_GEMM_PARAMS", SPLIT_STAGED, 1);
            const ocx_status st = ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, M, N, K, 1, A, 0, K, B, 0, N,
                                           0, C, 0, N, 0, NULL, NULL);
            unsetenv("OCX_GEMM_PARAMS");
            ck_ok(st);
            ck_ok(ocx_buffer_read(tctx, NULL, C, 0, M * N, got[r], 0, NULL, NULL));
            ocx_buffer_destroy(C);
        }
        ck_assert_msg(memcmp(got[0], got[1], sizeof got[0]) == 0, "a split product differed from itself");
        ocx_buffer_destroy(A);
        ocx_buffer_destroy(B);
        free(h);
    }
    ocx_device_info dev;
    ck_ok(ocx_context_device_info(tctx, &dev));
    if (dev.compute_units < 2) { /* one tile is not fewer than the compute units */
        fprintf(stderr, "test_split_k: one compute unit; the split of a one-tile product not checked\n");
        return;
    }
    ocx_stream *s = NULL;
    ck_ok(ocx_stream_create(tctx, &s));
    ocx_buffer *x = tpoisoned(OCX_F32, 5 * 301), *y = tpoisoned(OCX_F32, 301 * 7), *z = tpoisoned(OCX_F32, 5 * 7);
    for (int split = 1; split >= 0; split--) {
        setenv("OCX_GEMM_PARAMS", split ? SPLIT_STAGED : SPLIT_STAGED ",KSPLIT=0", 1);
        ck_ok(ocx_gemm(tctx, s, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 5, 7, 301, 1, x, 0, 301, y, 0, 7, 0, z, 0, 7, 0, NULL,
                       NULL));
        /* K blocks are STAGE=1's: none here, split or not (the split path once left the class's
         * KBLK, 512 on CPUs, in the record) */
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        ck_assert_msg(tparam(info.params, "KBLK") == 0, "split %d reported %s", split, info.params);
        size_t released = 0;
        ck_ok(ocx_stream_trim(tctx, s, &released));
        if (split)
            ck_assert_uint_ge(released, 2 * 5 * 7 * sizeof(float));
        else
            ck_assert_uint_eq(released, 0);
    }
    unsetenv("OCX_GEMM_PARAMS");
    ocx_stream_destroy(s);
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);
    ocx_buffer_destroy(z);
}
END_TEST

/* K in blocks (KBLK) on the CPU kernel (STAGE=1): every layout x transpose, K from just over two
 * blocks to a prime of a thousand (a shorter last block), beta of every kind (NaN in C under beta =
 * 0: the first block must not read it, the later ones must read the first's), thin products (the
 * C^T path), single products and strided batches (one A shared or not); offset-array batches and
 * f16 outputs, which keep one pass, alongside. One work-item a tile, and 2 x 2 of them. */
START_TEST(test_k_blocks)
{
    uint64_t seed = test_seed(), rng = seed;
    static const char *envs[] = {"DIRECT=1,DOTN=0,STAGE=1,MWG=6,MDIMC=1,NDIMC=1,NWG=16,VWN=4,KBLK=16",
                                 "DIRECT=1,DOTN=0,STAGE=1,MWG=8,MDIMC=2,NDIMC=2,NWG=16,VWN=4,KBLK=24"};
    const size_t ms[5] = {1, 5, 7, 13, 33}, ns[3] = {2, 17, 31}, ks[4] = {49, 67, 301, 1031};
    int checked = 0;
    for (int c = 0; c < 32; c++) {
        gcase g = layout_case(&rng, c);
        g.m = ms[c % 5], g.n = ns[c % 3], g.k = ks[(c / 2) % 4];
        g.mode = c % 8 < 5 ? MODE_SINGLE : c % 8 < 7 ? MODE_STRIDED : MODE_ARRAYS;
        g.batch = g.mode == MODE_SINGLE ? 1 : 3;
        g.stride0_a = g.mode == MODE_STRIDED && c % 3 == 0;
        if (c % 4 == 0) g.beta = 0, g.nan_c = 1;
        g.kernel_env = envs[c % 2];
        check_case(&g, seed, &rng);
        /* ocx_last_params() reports the blocks' length (16; 24 rounded up to 32), 0 for one pass */
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        if (!strcmp(info.family, "gemm_mma")) continue; /* the tensor cores (NVIDIA, f16 in): no blocks */
        checked++;
        const int blocked = g.mode != MODE_ARRAYS && g.out != OCX_F16 && g.k > (c % 2 ? 48u : 32u);
        const char *want = !blocked ? "KBLK=0" : c % 2 ? "KBLK=32" : "KBLK=16";
        ck_assert_msg(strstr(info.params, want), "case %d (k=%zu, mode %d): '%s' lacks %s", c, g.k, (int)g.mode,
                      info.params, want);
    }
    ck_assert_int_ge(checked, 1); /* all 32 on CPUs; about half on NVIDIA's tensor cores */
}
END_TEST

/* Panels (PANEL, the CPU kernel; PANEL=1 takes them on any product of two rows and two columns or
 * more, and on one of a single column where its quarter applies): both operands copied into panels
 * of MWI rows and NWI columns. Every layout x transpose, M and N off every panel width (2 and 3
 * among them: the thin fits and the C^T path; N = 1, not asserted), K
 * in one pass and in blocks (KBLK=16), single products and strided batches (one A shared or not),
 * the dtypes random_case draws (f16 widened from 2^20 on, copied as f16 below), AVX-512's 12-row
 * tiles on 2 work-items and the 8-row ones on 8; ocx_last_params() reports PANEL=1 for each, and
 * PANEL=0 for a batch of offset arrays (nothing copied), for a scratch buffer too small for the
 * copies (the operands read in place) and, under the CPUs' threshold (384), for a product below it;
 * the quarter threshold where op(A) is M-fast or N >= M (256x512x1024: PANEL=384 reported for
 * every op; 512x256x1024 NN and NT: 0; column-major NN, taken as C^T, the other way round); and K
 * in blocks from panels, four times KBLK long in f32, KBLK itself in f64. */
#define CPU_PANELS "DIRECT=1,STAGE=1,MWG=64,NWG=32,MDIMC=8,NDIMC=1,VWN=16,PACK=1,DOTN=0,COLS=0,PANEL=1"
#define CPU_PANELS_12 "DIRECT=1,STAGE=1,MWG=24,NWG=32,MDIMC=2,NDIMC=1,VWN=16,PACK=1,DOTN=0,COLS=0,PANEL=1,KBLK=16"
START_TEST(test_panels)
{
    uint64_t seed = test_seed(), rng = seed;
    const size_t ms[4] = {2, 37, 101, 131}, ns[4] = {45, 3, 103, 1}, ks[4] = {67, 105, 40, 257};
    int checked = 0;
    for (int c = 0; c < 26; c++) {
        gcase g = layout_case(&rng, c);
        g.m = ms[c % 4], g.n = ns[(c / 2) % 4], g.k = ks[(c / 3) % 4];
        g.mode = c >= 24 ? MODE_ARRAYS : c % 3 == 0 ? MODE_STRIDED : MODE_SINGLE;
        g.batch = g.mode == MODE_SINGLE ? 1 : 2;
        g.stride0_a = g.mode == MODE_STRIDED && c % 2 == 0;
        g.kernel_env = c % 2 ? CPU_PANELS_12 : CPU_PANELS;
        const int limited = c == 20 || c == 21;
        if (limited) setenv("OCX_LIMIT_SCRATCH", "1", 1);
        check_case(&g, seed, &rng);
        unsetenv("OCX_LIMIT_SCRATCH");
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        if (strcmp(info.kernel, "gemm_tiled") != 0) continue; /* NVIDIA's tensor cores took an f16 product */
        /* PANEL=1: M*N/(M + N) >= 1, which a product of one row or column never reaches. It meets a
         * quarter of it, which applies or not by its layout (the kernel takes a product of one
         * column as C^T): the quarter is asserted below, on 256x512x1024 and 512x256x1024. */
        if (!limited && g.mode != MODE_ARRAYS && (g.m == 1 || g.n == 1)) continue;
        checked++;
        const char *want = !limited && g.mode != MODE_ARRAYS ? " PANEL=1" : " PANEL=0";
        ck_assert_msg(strstr(info.params, want), "case %d (%zu x %zu x %zu, mode %d): '%s' lacks%s", c, g.m, g.n, g.k,
                      (int)g.mode, info.params, want);
    }
    /* 20 of the 26 on CPUs (6, 7, 14, 15, 22 and 23 are of one column); fewer where NVIDIA's tensor
     * cores take f16 products */
    if (tinfo.type == OCX_DEVICE_CPU) ck_assert_int_eq(checked, 20);
    ck_assert_int_ge(checked, 1);
    setenv("OCX_GEMM_PARAMS", "DIRECT=1,STAGE=1,MWG=64,NWG=32,MDIMC=8,NDIMC=1,VWN=16,PACK=1,PANEL=384", 1);
    ocx_buffer *x = tpoisoned(OCX_F32, 100 * 100), *y = tpoisoned(OCX_F32, 100 * 100), *z = tpoisoned(OCX_F32, 100 * 100);
    ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 100, 100, 100, 1, x, 0, 100, y, 0, 100, 0, z, 0, 100,
                   0, NULL, NULL));
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    ck_assert_msg(strstr(info.params, " PANEL=0"), "100^3 under PANEL=384: %s", info.params);
    end_params_case(x, y, z);
    /* 256x512x1024 (M*N/(M + N) = 170): over a quarter of 384, which applies where op(A) is M-fast
     * or N >= M, so panels there for every op; none for 512x256x1024 NN nor NT (A read in place).
     * Column-major, taken as C^T: 256x512x1024 NN reads as the row-major 512x256 (none), 512x256x1024
     * as 256x512 (panels). */
    setenv("OCX_GEMM_PARAMS", "DIRECT=1,STAGE=1,MWG=64,NWG=32,MDIMC=8,NDIMC=1,VWN=16,PACK=1,DOTN=0,COLS=0,PANEL=384", 1);
    x = tpoisoned(OCX_F32, 512 * 1024), y = tpoisoned(OCX_F32, 512 * 1024), z = tpoisoned(OCX_F32, 256 * 512);
    static const struct { ocx_layout layout; ocx_op opa, opb; size_t m; int panels; } quarter[] = {
        {OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 256, 1}, {OCX_ROW_MAJOR, OCX_OP_T, OCX_OP_N, 256, 1},
        {OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, 256, 1}, {OCX_ROW_MAJOR, OCX_OP_T, OCX_OP_T, 256, 1},
        {OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 512, 0}, {OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, 512, 0},
        {OCX_COL_MAJOR, OCX_OP_N, OCX_OP_N, 256, 0}, {OCX_COL_MAJOR, OCX_OP_N, OCX_OP_N, 512, 1},
    };
    for (size_t t = 0; t < sizeof quarter / sizeof *quarter; t++) {
        const ocx_op ta = quarter[t].opa, tb = quarter[t].opb;
        const size_t m = quarter[t].m, n = 256 * 512 / m, k = 1024;
        const int row = quarter[t].layout == OCX_ROW_MAJOR; /* leading dimensions: the stored rows' length */
        const size_t lda = (ta == OCX_OP_N) == row ? k : m, ldb = (tb == OCX_OP_N) == row ? n : k;
        ck_ok(ocx_gemm(tctx, NULL, quarter[t].layout, ta, tb, m, n, k, 1, x, 0, lda, y, 0, ldb, 0, z, 0, row ? n : m, 0,
                       NULL, NULL));
        ck_ok(ocx_last_params(&info));
        ck_assert_msg(strstr(info.params, quarter[t].panels ? " PANEL=384" : " PANEL=0"), "%s %zux%zux1024 op %d%d: %s",
                      row ? "row-major" : "column-major", m, n, ta == OCX_OP_T, tb == OCX_OP_T, info.params);
    }
    end_params_case(x, y, z);
    /* f64 with A read K-fast: panels from 1.5 x PANEL (48 under PANEL=32), without the quarter,
     * unless B's rows lie a multiple of 1 KiB apart (128 doubles); A M-fast and f32 keep the rule. */
    static const struct { ocx_dtype dt; ocx_op opa; size_t m, n; int panels; } pitch[] = {
        {OCX_F64, OCX_OP_N, 64, 100, 0},  /* M*N/(M + N) = 39, rows 800 bytes apart */
        {OCX_F64, OCX_OP_N, 100, 64, 0},  /* tall: 39, over PANEL but under 1.5 x PANEL */
        {OCX_F64, OCX_OP_N, 64, 128, 1},  /* rows 1 KiB apart: the quarter, 8 */
        {OCX_F64, OCX_OP_N, 100, 100, 1}, /* 50 */
        {OCX_F64, OCX_OP_T, 64, 100, 1},  /* A M-fast: the quarter */
        {OCX_F32, OCX_OP_N, 64, 100, 1},  /* f32: the quarter */
    };
    for (size_t t = 0; t < sizeof pitch / sizeof *pitch; t++) {
        if (!tdtype_ok(pitch[t].dt)) continue;
        const size_t m = pitch[t].m, n = pitch[t].n, k = 100;
        setenv("OCX_GEMM_PARAMS", "DIRECT=1,STAGE=1,MWG=64,NWG=32,MDIMC=8,NDIMC=1,VWN=16,PACK=1,DOTN=0,COLS=0,PANEL=32", 1);
        x = tpoisoned(pitch[t].dt, m * k), y = tpoisoned(pitch[t].dt, k * n), z = tpoisoned(pitch[t].dt, m * n);
        ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, pitch[t].opa, OCX_OP_N, m, n, k, 1, x, 0,
                       pitch[t].opa == OCX_OP_N ? k : m, y, 0, n, 0, z, 0, n, 0, NULL, NULL));
        ck_ok(ocx_last_params(&info));
        ck_assert_msg(strstr(info.params, pitch[t].panels ? " PANEL=32" : " PANEL=0"), "%s %zux%zux100 op %c: %s",
                      ocx_dtype_name(pitch[t].dt), m, n, pitch[t].opa == OCX_OP_T ? 'T' : 'N', info.params);
        end_params_case(x, y, z);
    }
    /* K in blocks from panels under KBLK=16: f32 in blocks of 64, f64 of 16 (K = 200) */
    for (int f64 = 0; f64 < 2; f64++) {
        const ocx_dtype dt = f64 ? OCX_F64 : OCX_F32;
        if (!tdtype_ok(dt)) continue;
        gcase g = {dt, dt, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 40, 48, 200, 0, 0, 0, 0, 0, 0, 0.75, -0.5, MODE_SINGLE, 1,
                   0, 0, CPU_PANELS_12};
        check_case(&g, seed, &rng);
        ck_ok(ocx_last_params(&info));
        const char *want = f64 ? " KBLK=16 PANEL=1 " : " KBLK=64 PANEL=1 ";
        ck_assert_msg(strstr(info.params, want), "40x48x200 %s: '%s' lacks%s", ocx_dtype_name(dt), info.params, want);
    }
}
END_TEST

/* Copies of large operands: 64x2048x2048 with B transposed (NT, TT; 64 rows, so no C^T), both
 * into panels, and 2048x16x2048 TN, A transposed into a dense copy (gemm_pack_t). PoCL had run the
 * copies in work-groups of its own choosing, up to 4096 work-items, each item's private block held
 * for the whole group on its worker thread's stack: B's panels of 2048 x 2048 overflowed 8 MiB and
 * crashed the process (2048^3 NT did so under the CPUs' default parameters). */
START_TEST(test_large_copies)
{
    uint64_t seed = test_seed(), rng = seed;
    static const struct { ocx_op opa, opb; size_t m, n; const char *env; } cases[] = {
        {OCX_OP_N, OCX_OP_T, 64, 2048, CPU_PANELS}, {OCX_OP_T, OCX_OP_T, 64, 2048, CPU_PANELS_12},
        {OCX_OP_T, OCX_OP_N, 2048, 16, "DIRECT=1,STAGE=1,MWG=64,NWG=32,MDIMC=8,NDIMC=1,VWN=16,PACK=1,PACKN=1,DOTN=0,COLS=0"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        gcase g = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, cases[c].opa, cases[c].opb, cases[c].m, cases[c].n, 2048, 0, 0, 0,
                   0, 0, 0, 0.75, -0.5, MODE_SINGLE, 1, 0, 0, cases[c].env};
        check_case(&g, seed, &rng);
    }
}
END_TEST

/* Prefetches of B's rows (PFD, lib/gemm.c): the CPU kernel reading B in place, N-fast, takes them
 * where B's rows lie 4 KiB or more apart (here 1100 f32, 520 f64), with K past the prefetch
 * distance and under it, single and in strided batches with offsets; ocx_last_params() reports
 * PFD=0 where rows are closer, where B is K-fast, where panels are read and on other devices than
 * CPUs (NVIDIA's compiler failed to build the prefetches). Every product is
 * checked against the reference, as everywhere (a prefetch past the end of B changes nothing). */
#define CPU_PFD "DIRECT=1,STAGE=1,MWG=16,NWG=32,MDIMC=2,NDIMC=1,VWN=16,PACK=0,DOTN=0,COLS=0,PANEL=0,PFD=32"
#define CPU_PFD_PANELS "DIRECT=1,STAGE=1,MWG=16,NWG=32,MDIMC=2,NDIMC=1,VWN=16,PACK=1,DOTN=0,COLS=0,PANEL=1,PFD=32"
START_TEST(test_prefetch)
{
    uint64_t seed = test_seed(), rng = seed;
    static const struct {
        ocx_dtype dt;
        ocx_op opb;
        size_t m, k, ldb, batch, offb;
        const char *env;
        int taken;
    } cases[] = {
        {OCX_F32, OCX_OP_N, 19, 67, 1100, 1, 0, CPU_PFD, 1},  {OCX_F32, OCX_OP_N, 19, 20, 1100, 1, 0, CPU_PFD, 1},
        {OCX_F32, OCX_OP_N, 37, 67, 1100, 2, 3, CPU_PFD, 1},  {OCX_F64, OCX_OP_N, 19, 67, 520, 1, 1, CPU_PFD, 1},
        {OCX_F32, OCX_OP_N, 19, 67, 1000, 1, 0, CPU_PFD, 0},  {OCX_F32, OCX_OP_T, 70, 67, 1100, 1, 0, CPU_PFD, 0},
        {OCX_F32, OCX_OP_N, 37, 67, 1100, 1, 0, CPU_PFD_PANELS, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        if (!tdtype_ok(cases[c].dt)) continue;
        const size_t n = 45; /* B N-fast: ld = N + extra; K-fast (op T): ld = K + extra */
        gcase g = {cases[c].dt, cases[c].dt, OCX_ROW_MAJOR, OCX_OP_N, cases[c].opb, cases[c].m, n, cases[c].k, 0,
                   cases[c].ldb - (cases[c].opb == OCX_OP_N ? n : cases[c].k), 0, 0, cases[c].offb, 0, -0.75, 0.5,
                   cases[c].batch > 1 ? MODE_STRIDED : MODE_SINGLE, cases[c].batch, 0, 0, cases[c].env};
        check_case(&g, seed, &rng);
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        const char *want = cases[c].taken && tinfo.type == OCX_DEVICE_CPU ? " PFD=32" : " PFD=0"; /* CPUs only */
        ck_assert_msg(strstr(info.params, want), "case %zu: '%s' lacks%s", c, info.params, want);
    }
}
END_TEST

/* Pads every leading dimension to a multiple of `to` elements (e.g. 8: the tensor-core kernel's 16-byte
 * copies). */
static void pad_ld(gcase *g, size_t to)
{
    size_t ar = g->opa == OCX_OP_N ? g->m : g->k, ac = g->opa == OCX_OP_N ? g->k : g->m;
    size_t br = g->opb == OCX_OP_N ? g->k : g->n, bc = g->opb == OCX_OP_N ? g->n : g->k;
    size_t la = g->layout == OCX_ROW_MAJOR ? ac : ar, lb = g->layout == OCX_ROW_MAJOR ? bc : br;
    size_t lc = g->layout == OCX_ROW_MAJOR ? g->n : g->m;
    g->lda_extra = (to - la % to) % to;
    g->ldb_extra = (to - lb % to) % to;
    g->ldc_extra = (to - lc % to) % to;
}

/* Matrix-vector products (DOTN, K >= 64): every layout x transpose, thin M and thin N (1 to DOTN: 4,
 * 8, 16), in every kernel shape below, K from 64 to a prime of thousands (some under a whole vector, some
 * not), the dtypes random_case draws, single, strided and offset-array batches, and leading
 * dimensions padded to 16 (the aligned loads) or through views (not). gemm_dot takes those whose
 * op(A) is K-fast, or op(B) K-fast (C written transposed); with COLS=1 (the GPUs' default)
 * gemm_cols takes those whose op(B) is N-fast, or op(A) M-fast (4 at most); the rest the tiled kernel. Shapes:
 * the device's defaults (on CPUs one work-item streaming 16-wide vectors, COLS=0), the GPUs'
 * (work-items splitting k and summed in local memory), 1-wide and 8-wide vectors, and K split into
 * chunks (KSPLIT=8: gemm_cols's partial products and gemm_sum, transposing where C is). */
START_TEST(test_dot)
{
    static const char *envs[] = {NULL, "COLS=1,DDOT=8,DVW=4,CVW=4,DROWS=2",
                                 "DOTN=16,COLS=1,DDOT=4,DVW=1,CVW=1,DROWS=1,KSPLIT=8",
                                 "DOTN=8,COLS=1,DDOT=2,DVW=8,CVW=2,DROWS=16,KSPLIT=8"};
    const size_t ks[5] = {64, 67, 263, 1031, 4099};
    uint64_t seed = test_seed(), rng = seed;
    for (int c = 0; c < 64; c++) {
        const int t = c % 8, side = (c / 8) % 2, e = c / 16;
        gcase g = random_case(&rng, 0);
        g.layout = t & 1 ? OCX_COL_MAJOR : OCX_ROW_MAJOR;
        g.opa = t & 2 ? OCX_OP_T : OCX_OP_N;
        g.opb = t & 4 ? OCX_OP_T : OCX_OP_N;
        const size_t dotn = e == 2 ? 16 : e == 3 ? 8 : 4; /* the env's DOTN */
        const size_t thin = 1 + (size_t)(t + e + c / 8) % dotn, wide = 17 + trand_next(&rng) % 90;
        g.m = side ? thin : wide;
        g.n = side ? wide : thin;
        g.k = ks[(t + side + e) % 5];
        g.mode = c % 3 == 0 ? MODE_SINGLE : c % 3 == 1 ? MODE_STRIDED : MODE_ARRAYS;
        g.batch = g.mode == MODE_SINGLE ? 1 : 2 + (size_t)c % 2;
        if ((t + e) % 2) {
            g.offa = g.offb = g.offc = 0;
            pad_ld(&g, 16);
        } else {
            g.view = g.mode != MODE_ARRAYS;
        }
        g.kernel_env = envs[e];
        check_case(&g, seed, &rng);
    }
}
END_TEST

/* Grids of more than 65535 work-groups in dimensions 1 and 2 (CUDA's limit for grid y and z, which
 * an OpenCL driver on it may keep): a strided batch of 70000 products (the batch in dimension 2) and
 * C = 2C of 600000 x 1 with K = 0 (rows in dimension 1). Every entry of C is checked: groups that
 * were dropped leave their entries as they were. */
START_TEST(test_grid_beyond_65535_groups)
{
    const size_t batch = 70000, m = 600000;
    const float one = 1, zero = 0;
    ocx_buffer *a = tbuffer(OCX_F32, 4, NULL), *c = NULL;
    ck_ok(ocx_buffer_fill(tctx, NULL, a, 0, 4, &one, 0, NULL, NULL));
    ck_ok(ocx_buffer_create(tctx, OCX_F32, 4 * batch, &c));
    ck_ok(ocx_buffer_fill(tctx, NULL, c, 0, 4 * batch, &zero, 0, NULL, NULL));
    ck_ok(ocx_gemm_strided_batched(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 2, 1.0, a, 0, 2, 0, a, 0, 2, 0,
                                   0.0, c, 0, 2, 4, batch, 0, NULL, NULL));
    float *h = malloc(m * sizeof *h);
    ck_assert_ptr_nonnull(h);
    ck_ok(ocx_buffer_read(tctx, NULL, c, 0, 4 * batch, h, 0, NULL, NULL));
    for (size_t i = 0; i < 4 * batch; i++) ck_assert_msg(h[i] == 2, "batch entry %zu: C = %g, want 2", i / 4, h[i]);
    ocx_buffer_destroy(c);
    ck_ok(ocx_buffer_create(tctx, OCX_F32, m, &c));
    ck_ok(ocx_buffer_fill(tctx, NULL, c, 0, m, &one, 0, NULL, NULL));
    ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, m, 1, 0, 1.0, a, 0, 1, a, 0, 1, 2.0, c, 0, 1, 0, NULL,
                   NULL));
    ck_ok(ocx_buffer_read(tctx, NULL, c, 0, m, h, 0, NULL, NULL));
    for (size_t i = 0; i < m; i++) ck_assert_msg(h[i] == 2, "row %zu: C = %g, want 2", i, h[i]);
    free(h);
    ocx_buffer_destroy(c);
    ocx_buffer_destroy(a);
}
END_TEST

/* Operands in cl_mems over the caller's memory, 8 bytes (f16: 2) past a 64-byte boundary
 * (CL_MEM_USE_HOST_PTR), with offsets and leading dimensions that the host finds aligned for vector
 * loads: each kernel with vector loads (tiled, pipelined, local-memory, the CPUs', gemm_dot,
 * gemm_cols), every layout x transpose, f32, f64 and f16 storage. (PoCL faulted in the tiled kernels' aligned loads there before the
 * kernels checked the buffers' own addresses.) */
START_TEST(test_host_memory)
{
    static const char *envs[] = {"DIRECT=1,DOTN=0,STAGE=4,MWG=32,NWG=32,KWG=16,MDIMC=8,NDIMC=8,VWM=4,VWN=4",
                                 "DIRECT=1,DOTN=0,STAGE=2,MWG=32,NWG=32,KWG=16,MDIMC=8,NDIMC=8,VWM=4,VWN=4",
                                 "DIRECT=1,DOTN=0", "DOTN=4,DDOT=4,DVW=4", "DOTN=4,COLS=1,DDOT=8,CVW=4"};
    uint64_t seed = test_seed(), rng = seed;
    for (int c = 0; c < 45; c++) {
        gcase g = random_case(&rng, 0);
        const int e = c % 5, t = c / 5;
        g.in = g.out = c % 3 == 1 && tdtype_ok(OCX_F64) ? OCX_F64 : OCX_F32;
        if (c % 3 == 2) g.in = OCX_F16;
        g.compute = OCX_COMPUTE_DEFAULT;
        g.layout = t & 2 ? OCX_COL_MAJOR : OCX_ROW_MAJOR;
        g.opa = t & 1 ? OCX_OP_T : OCX_OP_N;
        g.opb = t & 4 ? OCX_OP_T : OCX_OP_N;
        g.m = e == 4 ? 3 : 64, g.n = e == 3 ? 2 : 96, g.k = 128;
        g.mode = MODE_SINGLE, g.batch = 1;
        g.offa = g.offb = g.offc = 0, g.view = 0;
        pad_ld(&g, 16);
        g.host_mem = g.in == OCX_F16 ? 2 : 8;
        g.kernel_env = envs[e];
        check_case(&g, seed, &rng);
    }
}
END_TEST

/* ocx_last_params() names the kernel that ran: each GEMM kernel on a shape that goes to it, a vector
 * operation's and a reduction's; ocx_context_params() names none. */
START_TEST(test_kernel_named)
{
    static const struct {
        ocx_op opa, opb;
        size_t m, n, k;
        const char *env, *want;
    } cases[] = {
        {OCX_OP_N, OCX_OP_N, 300, 1, 256, "DOTN=4", "gemm_dot"},         /* y = A x */
        {OCX_OP_N, OCX_OP_T, 3, 300, 256, "DOTN=4", "gemm_dot"},         /* x W^T */
        {OCX_OP_N, OCX_OP_N, 3, 300, 256, "DOTN=4,COLS=1", "gemm_cols"}, /* x W */
        {OCX_OP_N, OCX_OP_T, 12, 300, 256, "DOTN=16", "gemm_dot"},      /* a batch of 12 x W^T */
        {OCX_OP_N, OCX_OP_N, 8, 300, 256, "DOTN=16,COLS=1,DIRECT=16", "gemm_tiled"}, /* gemm_cols: 4 rows at most */
        {OCX_OP_N, OCX_OP_N, 3, 300, 256, "DOTN=0,DIRECT=16", "gemm_tiled"},
        {OCX_OP_N, OCX_OP_N, 300, 1, 256, "DOTN=0,DIRECT=16", "gemm_tiled"},
        {OCX_OP_T, OCX_OP_N, 9, 7, 5, "DIRECT=16", "gemm_direct"},
        {OCX_OP_N, OCX_OP_T, 200, 150, 100, "DIRECT=16", "gemm_tiled"},
    };
    ocx_buffer *x = tpoisoned(OCX_F32, 300 * 300), *y = tpoisoned(OCX_F32, 300 * 300);
    ocx_buffer *z = tpoisoned(OCX_F32, 300 * 300);
    ocx_params_info info;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        setenv("OCX_GEMM_PARAMS", cases[i].env, 1);
        const size_t m = cases[i].m, n = cases[i].n, k = cases[i].k;
        ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, cases[i].opa, cases[i].opb, m, n, k, 1, x, 0,
                       cases[i].opa == OCX_OP_N ? k : m, y, 0, cases[i].opb == OCX_OP_N ? n : k, 0, z, 0, n, 0, NULL,
                       NULL));
        ck_ok(ocx_last_params(&info));
        ck_assert_msg(strcmp(info.kernel, cases[i].want) == 0, "%zux%zux%zu (%s) ran '%s', expected %s", m, n, k,
                      cases[i].env, info.kernel, cases[i].want);
        ck_assert_str_eq(info.family, "gemm");
        /* panels, prefetches and K blocks are the tiled kernel's alone (the others' calls had
         * reported the class's values) */
        if (strcmp(info.kernel, "gemm_tiled") != 0)
            ck_assert_msg(tparam(info.params, "PANEL") == 0 && tparam(info.params, "PFD") == 0 &&
                              tparam(info.params, "KBLK") == 0,
                          "%s reported %s", info.kernel, info.params);
    }
    unsetenv("OCX_GEMM_PARAMS");
    ck_ok(ocx_add(tctx, NULL, 1000, x, y, z, 0, NULL, NULL));
    ck_ok(ocx_last_params(&info));
    ck_assert_str_eq(info.kernel, "vadd");
    ck_assert_str_eq(info.family, "vector");
    double v = 0;
    ck_ok(ocx_reduce_host(tctx, NULL, OCX_REDUCE_SUM, 1000, x, 1, NULL, 1, &v, NULL, 0, NULL));
    ck_ok(ocx_last_params(&info));
    ck_assert_str_eq(info.kernel, "part_sum");
    /* Calls that run no kernel look nothing up: the record stays, and a bad override fails only the
     * calls that run one (an add of 0 elements had recorded "vadd" and failed under it). */
    setenv("OCX_VECTOR_PARAMS", "WG=3", 1);
    setenv("OCX_GEMM_PARAMS", "MWG=5", 1);
    ck_ok(ocx_add(tctx, NULL, 0, x, y, z, 0, NULL, NULL));
    ck_ok(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 0, 4, 4, 1, x, 0, 4, y, 0, 4, 0, z, 0, 4, 0, NULL,
                   NULL));
    ck_ok(ocx_last_params(&info));
    ck_assert_str_eq(info.kernel, "part_sum");
    ck_assert_int_eq(ocx_add(tctx, NULL, 5, x, y, z, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 4, 4, 4, 1, x, 0, 4, y, 0, 4, 0, z, 0, 4,
                              0, NULL, NULL),
                     OCX_ERR_INVALID_ARGUMENT);
    unsetenv("OCX_VECTOR_PARAMS");
    unsetenv("OCX_GEMM_PARAMS");
    ck_ok(ocx_context_params(tctx, "gemm", OCX_F32, NULL, &info));
    ck_assert_str_eq(info.kernel, "");
    ck_ok(ocx_last_params(&info)); /* ocx_context_params leaves the last call's record alone */
    ck_assert_str_eq(info.kernel, "part_sum");
    /* and so does the tensor cores' probe (forced: it runs on any device) */
    setenv("OCX_VENDOR_PATHS", "force", 1);
    unsigned paths = 0;
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    unsetenv("OCX_VENDOR_PATHS");
    ck_ok(ocx_last_params(&info));
    ck_assert_str_eq(info.kernel, "part_sum");
    ck_assert_str_eq(info.family, "reduce");
    end_params_case(x, y, z);
}
END_TEST

/* Without room for the scratch buffer (OCX_LIMIT_SCRATCH=1: every request fails as out of memory),
 * the products that would copy operands or split K there (the tiled kernels' copies and split K,
 * gemm_cols's split K) read the operands in place and take K in one pass: every layout x transpose,
 * right results, and nothing left in the stream's scratch buffer. */
START_TEST(test_scratch_fallback)
{
    static const char *envs[] = {SPLIT_STAGED ",PACKN=1", PACK_STAGED, "COLS=1,DDOT=4,CVW=1,KSPLIT=8"};
    uint64_t seed = test_seed(), rng = seed;
    ocx_stream *s = NULL;
    ck_ok(ocx_stream_create(tctx, &s));
    setenv("OCX_LIMIT_SCRATCH", "1", 1);
    for (int c = 0; c < 24; c++) {
        gcase g = layout_case(&rng, c);
        const int e = c / 8;
        /* e = 0: one tile (split K, copies with PACKN=1); 1: both dimensions past PACKN (copies);
         * 2: a few rows (gemm_cols, split K) */
        g.m = e == 2 ? 1 + (size_t)c % 4 : e == 1 ? 41 + (size_t)c : 9 + (size_t)c;
        g.n = e == 2 ? 20 + (size_t)c : e == 1 ? 43 + (size_t)c % 5 : 13 + (size_t)c % 5;
        g.k = 301;
        g.mode = MODE_SINGLE, g.batch = 1;
        g.kernel_env = envs[e];
        check_case(&g, seed, &rng);
    }
    /* The same on a stream of its own: its scratch buffer stays empty. */
    setenv("OCX_GEMM_PARAMS", SPLIT_STAGED ",PACKN=1", 1);
    ocx_buffer *x = tpoisoned(OCX_F32, 5 * 301), *y = tpoisoned(OCX_F32, 301 * 7), *z = tpoisoned(OCX_F32, 5 * 7);
    /* The copies' failures are none of the call's: the thread's last error stays as it was, whole
     * (it had been cut to 1023 characters). */
    static char spec[3001], before[8192];
    memset(spec, 'q', sizeof spec - 1);
    size_t index;
    ck_assert_int_ne(ocx_device_select(spec, &index), OCX_OK);
    snprintf(before, sizeof before, "%s", ocx_last_error());
    ck_assert_uint_gt(strlen(before), 3000);
    ck_ok(ocx_gemm(tctx, s, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, 5, 7, 301, 1, x, 0, 301, y, 0, 301, 0, z, 0, 7, 0, NULL,
                   NULL));
    ck_assert_msg(strcmp(ocx_last_error(), before) == 0, "the last error changed: %zu characters of %zu",
                  strlen(ocx_last_error()), strlen(before));
    size_t released = 1;
    ck_ok(ocx_stream_trim(tctx, s, &released));
    ck_assert_uint_eq(released, 0);
    unsetenv("OCX_LIMIT_SCRATCH");
    end_params_case(x, y, z);
    ocx_stream_destroy(s);
}
END_TEST

/* f16 operands of the CPU kernel (STAGE=1) in f32 arithmetic, from 2^20 multiply-adds on: both
 * copied as f32 into the default stream's scratch buffer (gemm.c: widen), so that its size proves
 * the copies where NN would make none: every layout x transpose, f16 C (stored a vector at a time
 * where a row's vector lies within N, gemm.cl) and f32 C, beta 0 and not, offsets and padded
 * leading dimensions, tiles cut at every edge (M, N, K prime), single and strided (A shared); then
 * without room for the copies (OCX_LIMIT_SCRATCH), and below 2^20 (no copies): right results. (On
 * NVIDIA GPUs the tensor cores take such products: the results are checked, the copies not.) */
START_TEST(test_f16_widened)
{
    uint64_t seed = test_seed(), rng = seed;
    for (int c = 0; c < 16; c++) {
        const int limited = c == 12 || c == 13, small = c >= 14;
        gcase g = {OCX_F16, c % 2 ? OCX_F16 : OCX_F32, c & 2 ? OCX_COL_MAJOR : OCX_ROW_MAJOR,
                   c & 4 ? OCX_OP_T : OCX_OP_N, c & 8 ? OCX_OP_T : OCX_OP_N, 131, 67, 257, (size_t)c % 3, 1, 2,
                   (size_t)c % 5, 3, 1, c % 3 ? 1.0 : -0.5, c % 4 < 2 ? 0.25 : 0.0, c % 3 == 2 ? MODE_STRIDED : MODE_SINGLE,
                   2, c % 2, c % 4 >= 2, CPU_TILES};
        if (small) /* below 2^20, NN: nothing to copy */
            g.m = 31, g.n = 29, g.k = 61, g.layout = OCX_ROW_MAJOR, g.opa = g.opb = OCX_OP_N;
        if (limited) setenv("OCX_LIMIT_SCRATCH", "1", 1);
        ck_ok(ocx_stream_trim(tctx, NULL, NULL));
        check_case(&g, seed, &rng);
        size_t released = 0;
        ck_ok(ocx_stream_trim(tctx, NULL, &released));
        unsetenv("OCX_LIMIT_SCRATCH");
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        if (!strcmp(info.kernel, "gemm_mma")) continue; /* NVIDIA's tensor cores took it (and copied nothing) */
        ck_assert_msg(!strcmp(info.kernel, "gemm_tiled"), "case %d ran %s", c, info.kernel);
        const size_t entries = g.mode == MODE_SINGLE ? 1 : g.batch;
        const size_t want = (g.m * g.k * (g.stride0_a ? 1 : entries) + g.k * g.n * entries) * sizeof(float);
        if (limited || small)
            ck_assert_msg(released == 0, "case %d: %zu bytes of scratch", c, released);
        else
            ck_assert_msg(released >= want, "case %d: %zu bytes of scratch, the widened copies need %zu", c, released,
                          want);
    }
    unsetenv("OCX_GEMM_PARAMS");
}
END_TEST

/* Two host threads multiplying on the same (default) stream with copies (PACK=1, STAGE=1: NT's B is
 * copied; the CPUs' defaults, named here), queueing without waiting: each product is its own.
 * (Without the stream's lock from the copies to the GEMM's launch, one thread's copy lands in the
 * scratch buffer between the other's copy and its kernel.) Small integers: the products are exact. */
#define GT_RUNS 40
enum { GT_M = 24, GT_N = 40, GT_K = 56 };
typedef struct gemm_job {
    ocx_buffer *a, *b, *c[GT_RUNS];
    float want[GT_M * GT_N];
    int bad;
} gemm_job;

static void *gemm_worker(void *arg)
{
    gemm_job *j = arg;
    for (int i = 0; i < GT_RUNS; i++)
        if (ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, GT_M, GT_N, GT_K, 1, j->a, 0, GT_K, j->b, 0, GT_K,
                     0, j->c[i], 0, GT_N, 0, NULL, NULL) != OCX_OK)
            j->bad++;
    return NULL;
}

START_TEST(test_shared_stream_threads)
{
    setenv("OCX_GEMM_PARAMS", "DIRECT=1,STAGE=1,MWG=8,NWG=16,MDIMC=1,NDIMC=2,VWN=4,PACK=1", 1);
    static gemm_job j[2];
    for (int t = 0; t < 2; t++) {
        float ha[GT_M * GT_K], hb[GT_N * GT_K]; /* B stored N x K (op T) */
        for (int i = 0; i < GT_M * GT_K; i++) ha[i] = (float)((i * 7 + t) % 5 - 2);
        for (int i = 0; i < GT_N * GT_K; i++) hb[i] = (float)((i * 3 + 2 * t) % 7 - 3);
        for (int m = 0; m < GT_M; m++)
            for (int n = 0; n < GT_N; n++) {
                float s = 0;
                for (int k = 0; k < GT_K; k++) s += ha[m * GT_K + k] * hb[n * GT_K + k];
                j[t].want[m * GT_N + n] = s;
            }
        j[t].a = tbuffer(OCX_F32, GT_M * GT_K, ha);
        j[t].b = tbuffer(OCX_F32, GT_N * GT_K, hb);
        for (int i = 0; i < GT_RUNS; i++) j[t].c[i] = tpoisoned(OCX_F32, GT_M * GT_N);
    }
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, gemm_worker, &j[1]), 0);
    gemm_worker(&j[0]);
    pthread_join(th, NULL);
    ck_ok(ocx_stream_finish(tctx, NULL));
    static float out[GT_M * GT_N];
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < GT_RUNS; i++) {
            ck_ok(ocx_buffer_read(tctx, NULL, j[t].c[i], 0, GT_M * GT_N, out, 0, NULL, NULL));
            j[t].bad += memcmp(out, j[t].want, sizeof out) != 0;
            ocx_buffer_destroy(j[t].c[i]);
        }
        ocx_buffer_destroy(j[t].a);
        ocx_buffer_destroy(j[t].b);
    }
    unsetenv("OCX_GEMM_PARAMS");
    ck_assert_msg(j[0].bad == 0 && j[1].bad == 0, "wrong or failed products: %d and %d of %d", j[0].bad, j[1].bad,
                  GT_RUNS);
}
END_TEST

/* Pipelined kernels (STAGE=3: register prefetch, one local buffer; STAGE=4: two local buffers), with
 * small and uneven tiles too (partial loads per work-item, transposed copies, K-fast operands), and
 * the GPU's tiles of multiples of 32 with slices of 16 and 32 k (double-buffered f64 slices within
 * 48 KiB of local memory, the H200's). Two sets unroll the slice's k loop whole (KUNR), as the GPUs'
 * defaults do: their fragments are double-buffered (PIPE_FRAGS in cl/gemm.cl). */
START_TEST(test_pipelined)
{
    static const char *envs[] = {"DIRECT=1,DOTN=0,STAGE=3,MWG=64,MDIMC=8", "DIRECT=1,DOTN=0,STAGE=4,KWG=8,MWG=64,MDIMC=8",
                                 "DIRECT=1,DOTN=0,STAGE=4,MWG=32,NWG=16,KWG=8,MDIMC=4,NDIMC=8,VWM=2,VWN=1,KUNR=8",
                                 "DIRECT=1,DOTN=0,STAGE=3,MWG=16,NWG=64,KWG=4,MDIMC=8,NDIMC=4,VWM=1,VWN=4,KUNR=4",
                                 "DIRECT=1,DOTN=0,STAGE=4,MWG=64,NWG=32,KWG=16,MDIMC=8,NDIMC=4,VWM=4,VWN=4",
                                 "DIRECT=1,DOTN=0,STAGE=4,MWG=32,NWG=32,KWG=32,MDIMC=4,NDIMC=8,VWM=4,VWN=2"};
    uint64_t seed = test_seed(), rng = seed;
    for (int c = 0; c < 18; c++) {
        gcase g = random_case(&rng, c);
        if (g.in == OCX_F16 && g.out == OCX_F16) g.out = OCX_F32; /* fewer builds */
        g.kernel_env = envs[c % 6];
        check_case(&g, seed, &rng);
    }
    /* Every operand layout through the last two sets, with whole interior tiles (aligned vector loads). */
    for (int c = 0; c < 8; c++) {
        gcase g = random_case(&rng, 0);
        g.in = g.out = OCX_F32;
        g.layout = OCX_ROW_MAJOR;
        g.opa = c & 1 ? OCX_OP_T : OCX_OP_N;
        g.opb = c & 2 ? OCX_OP_T : OCX_OP_N;
        g.m = 133, g.n = 131, g.k = 80;
        g.lda_extra = g.ldb_extra = g.ldc_extra = 0;
        g.offa = g.offb = g.offc = 0;
        g.kernel_env = envs[4 + c / 4];
        check_case(&g, seed, &rng);
    }
}
END_TEST

/* ---- the tensor-core path (NVIDIA, cl/gemm_nv_mma.cl) and its fallbacks ------------------------ */

static int tensor_cores(void)
{
    unsigned paths = 0;
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    return (paths & OCX_PATH_NV_TENSOR_CORES) != 0;
}


/* Runs a case and checks which kernel family took it: the tensor-core one exactly when `tc`. */
static void check_case_family(const gcase *g, uint64_t seed, uint64_t *rng, int tc)
{
    check_case(g, seed, rng);
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    const char *want = tc ? "gemm_mma" : "gemm";
    ck_assert_msg(strcmp(info.family, want) == 0, "%s %zux%zux%zu ran family %s, expected %s", ocx_dtype_name(g->in),
                  g->m, g->n, g->k, info.family, want);
    ck_assert_msg(tc == (strcmp(info.kernel, "gemm_mma") == 0), "%s %zux%zux%zu ran kernel %s",
                  ocx_dtype_name(g->in), g->m, g->n, g->k, info.kernel);
}

/* wgmma should run here: compute capability 9.0, its sm_90a build not refused (OCX_TEST_NO_SM90A). */
static int sm90a_expected(void)
{
    return tinfo.nv_compute_capability[0] == 9 && tinfo.nv_compute_capability[1] == 0 && !getenv("OCX_TEST_NO_SM90A") &&
           !(getenv("OCX_VENDOR_PATHS") && !strcmp(getenv("OCX_VENDOR_PATHS"), "mma.sync"));
}

/* f16 products above the direct kernel's size over odd shapes (ragged tiles in every dimension, K
 * not a multiple of any slice), every layout, aligned and unaligned leading dimensions and offsets
 * (16-byte copies vs checked scalar loads), f16 and f32 C, batches, and several tile shapes; each
 * checked against the reference and for the family that ran (the tensor-core one exactly when `tc`). */
static void tensor_core_cases(int tc)
{
    static const size_t shapes[][3] = {{300, 257, 300}, {250, 260, 270}, {5, 4000, 1000}, {4000, 3, 1500},
                                       {33, 1100, 700}, {256, 256, 512}, {129, 65, 1031}, {1, 1, 4099}};
    static const char *tiles[] = {NULL, "BM=64,BN=64,BK=32,WM=32,WN=32,STAGES=2,WGMMA=0",
                                  "BM=128,BN=256,BK=32,WM=64,WN=64,STAGES=2,WGMMA=0",
                                  "BM=64,BN=128,BK=32,WM=32,WN=64,STAGES=4,GM=3,WGMMA=0",
                                  "BM=256,BN=128,BK=32,WM=64,WN=64,STAGES=2,GM=1,WGMMA=0",
                                  "BM=128,BN=128,BK=64,WM=64,WN=128,STAGES=3,WGMMA=1",
                                  /* the products here are "medium": also the "all" class's tiles, wgmma's and
                                   * mma.sync's, and the "short_k" class's */
                                  "BM=128,BN=256,BK=64,WM=64,WN=256,STAGES=4,WGMMA=1",
                                  "BM=128,BN=256,BK=64,WM=64,WN=64,STAGES=3,WGMMA=0",
                                  "BM=64,BN=64,BK=64,WM=64,WN=64,STAGES=3,WGMMA=1",
                                  "BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=2,WGMMA=0"};
    const size_t nshapes = sizeof shapes / sizeof *shapes;
    uint64_t seed = test_seed(), rng = seed;
    for (size_t c = 0; c < 2 * nshapes; c++) {
        const size_t *sh = shapes[c % nshapes];
        int unaligned = (int)(c / nshapes);
        gcase g = {OCX_F16, c % 2 ? OCX_F16 : OCX_F32, c % 3 ? OCX_ROW_MAJOR : OCX_COL_MAJOR,
                   (c / 2) % 2 ? OCX_OP_T : OCX_OP_N, (c / 3) % 2 ? OCX_OP_T : OCX_OP_N, sh[0], sh[1], sh[2],
                   unaligned ? 3 : 0, unaligned ? 1 : 8, unaligned ? 5 : 0, unaligned ? 1 : 8, unaligned ? 7 : 0,
                   unaligned ? 3 : 0, c % 4 ? 1.0 : 0.5, c % 3 ? 0.0 : -1.0, MODE_SINGLE, 1, 0, c % 3 != 0,
                   "DIRECT=1,DOTN=0"};
        if (!unaligned) pad_ld(&g, 8);
        const char *t = tiles[c % (sizeof tiles / sizeof *tiles)];
        if (t && strstr(t, "WGMMA=1") && !sm90a_expected())
            t = NULL; /* wgmma: compute capability 9.0 only, and not where its build is refused */
        if (t) setenv("OCX_GEMM_MMA_PARAMS", t, 1);
        check_case_family(&g, seed, &rng, tc);
        unsetenv("OCX_GEMM_MMA_PARAMS");
        if (!t && tc && sm90a_expected()) { /* the defaults there are wgmma's: no silent fallback */
            ocx_params_info info;
            ck_ok(ocx_last_params(&info));
            ck_assert_msg(strstr(info.params, "WGMMA=1"), "compute capability 9.0 ran %s", info.params);
        }
    }
    /* A short-K product (K <= 256 from 2^31 multiply-adds on: the "short_k" class and its own tiles),
     * on the tensor cores only: on PoCL the portable kernel would take seconds over it. */
    if (tc) {
        gcase g = {OCX_F16, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, 4100, 2050, 256, 0, 0, 0, 0, 0, 0, 1.0, 0.0,
                   MODE_SINGLE, 1, 0, 1, "DIRECT=1,DOTN=0"};
        pad_ld(&g, 8);
        check_case_family(&g, seed, &rng, tc);
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        ck_assert_msg(!strcmp(info.size_class, "short_k"), "4100x2050x256 took class %s", info.size_class);
    }
    for (int mode = 0; mode < 2; mode++) {
        gcase g = {OCX_F16, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 130, 200, 96, 0, 0, 0, 8, 16, 0, 1.0, 0.5,
                   mode ? MODE_ARRAYS : MODE_STRIDED, 3, 0, 0, "DIRECT=1,DOTN=0"};
        check_case_family(&g, seed, &rng, tc);
    }
    /* TMA=1 (bulk copies on compute capability 9.0): whole tiles beside edge tiles, a partial last
     * slice (K = 1000), every layout, two tile shapes. */
    static const char *tma_tiles[] = {"BM=128,BN=256,BK=64,WM=64,WN=64,STAGES=3,TMA=1,WGMMA=0",
                                      "BM=64,BN=128,BK=32,WM=32,WN=64,STAGES=3,TMA=1,WGMMA=0"};
    for (int c = 0; c < 8; c++) {
        gcase g = {OCX_F16, c % 2 ? OCX_F16 : OCX_F32, OCX_ROW_MAJOR, c & 1 ? OCX_OP_T : OCX_OP_N,
                   c & 2 ? OCX_OP_T : OCX_OP_N, c & 4 ? 300 : 256, c & 4 ? 520 : 512, 1000, 0, 0, 0, 8, 16, 0, 1.0,
                   c % 3 ? 0.0 : 0.5, MODE_SINGLE, 1, 0, 0, "DIRECT=1,DOTN=0"};
        pad_ld(&g, 8);
        setenv("OCX_GEMM_MMA_PARAMS", tma_tiles[c / 4], 1);
        check_case_family(&g, seed, &rng, tc);
        unsetenv("OCX_GEMM_MMA_PARAMS");
    }
}

/* The emulated kernel compiles slowly on PoCL (seconds a variant): a few cases over the four operand
 * layouts (row-major NN, TN, NT, TT: A and B each K-fast or not) and several tile shapes, both C
 * types, aligned (with interior tiles: the copies' fast path, 32- and 64-deep slices, narrow and
 * wide swizzled rows) and unaligned, and the padded layout of TMA=1 (its bulk copies need an NVIDIA
 * GPU: tools/device-check.sh). */
typedef struct emu_case {
    ocx_op opa, opb;
    size_t m, n, k;
    ocx_dtype out;
    int unaligned;
    const char *tiles;
} emu_case;

static const emu_case mma_sync_cases[] = {
    {OCX_OP_N, OCX_OP_N, 300, 257, 300, OCX_F32, 0, "BM=128,BN=256,BK=64,WM=64,WN=64,STAGES=3,WGMMA=0"},
    {OCX_OP_T, OCX_OP_N, 129, 65, 1031, OCX_F16, 1, "BM=64,BN=64,BK=32,WM=32,WN=32,STAGES=2,WGMMA=0"},
    {OCX_OP_N, OCX_OP_T, 250, 260, 270, OCX_F32, 0, "BM=64,BN=128,BK=32,WM=32,WN=64,STAGES=4,GM=3,TMA=1,WGMMA=0"},
    {OCX_OP_T, OCX_OP_T, 33, 300, 200, OCX_F16, 1, "BM=128,BN=256,BK=32,WM=64,WN=64,STAGES=2,WGMMA=0"},
    {OCX_OP_T, OCX_OP_N, 130, 140, 100, OCX_F32, 0, "BM=64,BN=64,BK=32,WM=32,WN=32,STAGES=3,TMA=1,WGMMA=0"},
    {OCX_OP_N, OCX_OP_T, 200, 136, 160, OCX_F16, 0, "BM=64,BN=64,BK=32,WM=32,WN=32,STAGES=3,WGMMA=0"},
    {OCX_OP_T, OCX_OP_N, 136, 200, 96, OCX_F32, 0, "BM=64,BN=128,BK=64,WM=32,WN=64,STAGES=2,WGMMA=0"},
};

/* wgmma's layouts (each operand either way round), one or two warpgroups, 3-5 stages, interior and
 * edge tiles, aligned (cp.async) and unaligned (checked stores) copies. */
static const emu_case wgmma_cases[] = {
    {OCX_OP_N, OCX_OP_N, 200, 136, 300, OCX_F32, 0, "BM=64,BN=64,BK=64,WM=64,WN=64,STAGES=3,WGMMA=1"},
    {OCX_OP_T, OCX_OP_N, 130, 140, 200, OCX_F16, 0, "BM=128,BN=128,BK=64,WM=64,WN=128,STAGES=4,WGMMA=1"},
    {OCX_OP_N, OCX_OP_T, 70, 260, 129, OCX_F32, 1, "BM=64,BN=256,BK=64,WM=64,WN=256,STAGES=3,WGMMA=1"},
    {OCX_OP_T, OCX_OP_T, 150, 70, 160, OCX_F16, 0, "BM=128,BN=64,BK=64,WM=64,WN=64,STAGES=5,WGMMA=1"},
};

static void emulated_cases(const emu_case *cases, size_t count)
{
    uint64_t seed = test_seed(), rng = seed;
    for (size_t c = 0; c < count; c++) {
        int u = cases[c].unaligned;
        gcase g = {OCX_F16, cases[c].out, OCX_ROW_MAJOR, cases[c].opa, cases[c].opb, cases[c].m, cases[c].n, cases[c].k,
                   u ? 3 : 0, u ? 1 : 0, u ? 5 : 0, u ? 1 : 8, u ? 7 : 0, u ? 3 : 0, 0.5, c % 2 ? 0.0 : -1.0,
                   MODE_SINGLE, 1, 0, c % 2, "DIRECT=1,DOTN=0"};
        if (!u) pad_ld(&g, 8);
        setenv("OCX_GEMM_MMA_PARAMS", cases[c].tiles, 1);
        check_case_family(&g, seed, &rng, 1);
        if (c == 0) { /* interleaved C matrices: each entry writes its own columns alone */
            gcase side = g;
            side.mode = MODE_STRIDED, side.batch = 3, side.interleave_c = 1, side.ldc_extra = 0;
            check_case_family(&side, seed, &rng, 1);
        }
        unsetenv("OCX_GEMM_MMA_PARAMS");
    }
}

/* On this device: OCX_EXPECT_TENSOR_CORES=1 (set by tools/device-check.sh on NVIDIA) makes the
 * path's absence a failure; a device that is not NVIDIA never takes it. */
START_TEST(test_tensor_core_path)
{
    int tc = tensor_cores();
    const char *expect = getenv("OCX_EXPECT_TENSOR_CORES");
    if (expect) ck_assert_msg(tc == atoi(expect), "tensor cores %s, OCX_EXPECT_TENSOR_CORES=%s", tc ? "on" : "off", expect);
    if (!strcasestr(tinfo.vendor, "nvidia")) ck_assert_msg(!tc, "tensor-core path on a device that is not NVIDIA");
    tensor_core_cases(tc);
}
END_TEST

/* The tensor-core kernel with its warp instructions emulated (OCX_VENDOR_PATHS=emulate), on any
 * device: its probe must pass and its results match the reference, so CI checks the kernel's
 * indexing without an NVIDIA GPU. */
START_TEST(test_tensor_core_emulated)
{
    setenv("OCX_VENDOR_PATHS", "emulate", 1);
    /* The first f16 product that asks for the path runs the probe; in the tuner that product is
     * only compiled (build-only launches), which must not make the probe fail. */
    unsigned paths = 0;
    ocx__launch_build_only(1);
    ocx_status st = ocx_context_vendor_paths(tctx, &paths);
    ocx__launch_build_only(0); /* before any assertion: this suite may run without forking */
    ck_ok(st);
    ck_assert_msg(paths & OCX_PATH_NV_TENSOR_CORES, "the emulated tensor-core kernel failed its probe: %s",
                  ocx_last_error());
    emulated_cases(mma_sync_cases, sizeof mma_sync_cases / sizeof *mma_sync_cases);
    gcase g = {OCX_F16, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 130, 200, 96, 0, 0, 0, 8, 16, 0, 1.0, 0.5,
               MODE_ARRAYS, 3, 0, 0, "DIRECT=1,DOTN=0"};
    uint64_t seed = test_seed(), rng = seed;
    check_case_family(&g, seed, &rng, 1);
    /* An f16 product that the tensor cores would take goes to gemm_dot up to 16 rows, up to 12 where
     * its large operand holds 2^23 elements or more and up to 8 from 2^26 (DOTN's cap for f16,
     * gemm_core); more rows go to the tensor cores (the large ones only built, not run: the emulation
     * would take minutes). Case 5's tiles, so the kernel built above serves. */
    setenv("OCX_GEMM_MMA_PARAMS", mma_sync_cases[5].tiles, 1);
    setenv("OCX_GEMM_PARAMS", "DIRECT=1,DOTN=16", 1);
    const size_t wide = (size_t)1 << 20; /* K of the products whose B holds 2^26 elements */
    ocx_buffer *x = tpoisoned(OCX_F16, 16 * 160), *y = tpoisoned(OCX_F16, 136 * 160), *z = tpoisoned(OCX_F16, 16 * 136);
    ocx_buffer *xw = tbuffer(OCX_F16, 16 * wide, NULL), *yw = tbuffer(OCX_F16, 64 * wide, NULL);
    static const struct {
        size_t rows, n, k;
        const char *want;
    } routes[] = {{12, 136, 160, "gemm_dot"},   {16, 136, 160, "gemm_dot"},   {12, 64, wide / 8, "gemm_dot"},
                  {13, 64, wide / 8, "gemm_mma"}, {16, 64, wide / 8, "gemm_mma"}, {8, 64, wide, "gemm_dot"},
                  {9, 64, wide, "gemm_mma"}};
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        const size_t m = routes[i].rows, n = routes[i].n, k = routes[i].k;
        const int big = k >= wide / 8;
        ocx__launch_build_only(big);
        ocx_status st = ocx_gemm(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, m, n, k, 1, big ? xw : x, 0, k,
                                 big ? yw : y, 0, k, 0, z, 0, n, 0, NULL, NULL);
        ocx__launch_build_only(0);
        ck_ok(st);
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        ck_assert_msg(strcmp(info.kernel, routes[i].want) == 0, "f16 %zux%zux%zu NT ran '%s', expected %s", m, n, k,
                      info.kernel, routes[i].want);
    }
    ocx_buffer_destroy(xw);
    ocx_buffer_destroy(yw);
    unsetenv("OCX_GEMM_MMA_PARAMS");
    end_params_case(x, y, z);
    unsetenv("OCX_VENDOR_PATHS");
}
END_TEST

/* The same for the wgmma variant (WGMMA=1): its layouts and K loop checked on any device. */
START_TEST(test_wgmma_emulated)
{
    setenv("OCX_VENDOR_PATHS", "EMULATE", 1); /* any case (upper case had been read as plain "on") */
    emulated_cases(wgmma_cases, sizeof wgmma_cases / sizeof *wgmma_cases);
    unsetenv("OCX_VENDOR_PATHS");
}
END_TEST

/* The "sim" case: the kernels on products a simulator runs in seconds. tests/oclgrind.sh runs it
 * under Oclgrind, whose device is a GPU of OpenCL 1.2 (the GPU defaults run: the pipelined tiled
 * kernel, the column and dot-product kernels) and which reports data races, accesses out of bounds
 * and barriers that not every work-item reaches. Each parameter set below takes another path: the
 * direct kernel (the defaults' small products), the tiled kernel in each of its stagings (DIRECT=1
 * sends every product to it), K split (test_split_k's set: one tile, fewer than the compute
 * units), copied operands, and the CPU kernel (STAGE=1) with panels, blocks of K and prefetches;
 * then two random sets; then the tensor-core kernel with its warp instructions emulated, as in
 * test_tensor_core_emulated (an edge in every copy, unaligned operands; mma.sync's and wgmma's
 * layouts). 97 x 133 spans two of the default tiles each way; 67 x 45 x 33, several of the smaller
 * ones, is no multiple of any tile. */
static void sim_set(const char *params, size_t m, size_t n, size_t k, uint64_t seed, uint64_t *rng, int f32_only)
{
    static const struct { ocx_dtype in, out; int ops, col; } kinds[] = {
        {OCX_F32, OCX_F32, 0, 0}, {OCX_F32, OCX_F32, 1, 0}, {OCX_F32, OCX_F32, 2, 1}, {OCX_F32, OCX_F32, 3, 0},
        {OCX_F64, OCX_F64, 0, 1}, {OCX_F16, OCX_F16, 1, 0}, {OCX_F16, OCX_F32, 2, 0}};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        if (!tdtype_ok(kinds[i].in) || (f32_only && kinds[i].in != OCX_F32)) continue;
        gcase g = {kinds[i].in, kinds[i].out, kinds[i].col ? OCX_COL_MAJOR : OCX_ROW_MAJOR,
                   kinds[i].ops & 1 ? OCX_OP_T : OCX_OP_N, kinds[i].ops & 2 ? OCX_OP_T : OCX_OP_N, m, n, k, 3, 1, 2,
                   i, 2, 1, 0.75, i % 2 ? 0.0 : 0.5, MODE_SINGLE, 1, 0, i % 2, params};
        check_case(&g, seed, rng);
    }
    gcase b = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, m, n, k, 0, 0, 0, 0, 0, 0, 1.0, 1.0, MODE_STRIDED, 2,
               0, 0, params};
    check_case(&b, seed, rng);
}
START_TEST(test_sim)
{
    static const struct { const char *params; size_t m, n, k; } sets[] = {
        {"DIRECT=1", 97, 133, 37},
        {"DIRECT=1,STAGE=2", 97, 133, 37},
        {"DIRECT=1,STAGE=3,GM=2", 97, 133, 37},
        {SPLIT_STAGED, 9, 13, 301},
        {"DIRECT=1,PACKN=1", 67, 45, 33},
        {"DIRECT=1,MWG=16,NWG=16,KWG=8,MDIMC=4,NDIMC=4,VWM=2,VWN=2,KUNR=4,GM=1", 67, 45, 33},
        {"DIRECT=1,STAGE=1,MWG=16,NWG=16,MDIMC=4,NDIMC=4,VWN=4,PANEL=1,KBLK=16,PFD=8", 67, 45, 33}};
    uint64_t seed = 77, rng = seed;
    sim_set(NULL, 7, 5, 3, seed, &rng, 0);     /* the direct kernel */
    sim_set(NULL, 1, 129, 200, seed, &rng, 0); /* one row: the column kernel (GPUs) or a dot product */
    sim_set(NULL, 129, 1, 200, seed, &rng, 0); /* one column: dot products */
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        sim_set(sets[i].params, sets[i].m, sets[i].n, sets[i].k, seed + i, &rng, 0);
    static const char *const drawn[] = {"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "VWM", "VWN", "STAGE", "KUNR", "GM", NULL};
    seed = test_seed(), rng = seed;
    for (int sets_drawn = 0, tries = 0; sets_drawn < 2 && tries < 20000; tries++) {
        char env[1024];
        if (!trandom_params("gemm", OCX_F32, drawn, "DIRECT=1,DOTN=0", &rng, env, sizeof env)) continue;
        if (tparam(env, "MWG") * tparam(env, "NWG") > 64 * 64) continue; /* a simulator's time */
        fprintf(stderr, "random parameters: seed %llu: OCX_GEMM_PARAMS=%s\n", (unsigned long long)seed, env);
        sim_set(env, 67, 45, 33, seed, &rng, 1); /* drawn for f32: f64's slices may not fit */
        sets_drawn++;
    }
    static const emu_case emulated[] = {
        {OCX_OP_T, OCX_OP_N, 129, 65, 103, OCX_F16, 1, "BM=64,BN=64,BK=32,WM=32,WN=32,STAGES=2,WGMMA=0"},
        {OCX_OP_N, OCX_OP_T, 130, 70, 100, OCX_F32, 0, "BM=64,BN=64,BK=64,WM=64,WN=64,STAGES=3,WGMMA=1"}};
    setenv("OCX_VENDOR_PATHS", "emulate", 1);
    emulated_cases(emulated, sizeof emulated / sizeof *emulated);
    unsetenv("OCX_VENDOR_PATHS");
}
END_TEST

/* An f16 product of 40^3 (f32 C) on stream s: what the tensor-core path takes (the first such call
 * runs the probe). DIRECT=1: no device's direct kernel takes it (on GPUs products up to 128^3 went
 * there, and the probe never ran). */
static ocx_status f16_product_in(ocx_context *ctx, ocx_stream *s)
{
    enum { N = 40 };
    uint16_t h[N * N];
    for (int i = 0; i < N * N; i++) h[i] = ocx_half_from_float((float)(i % 7 - 3));
    ocx_buffer *a = NULL, *c = NULL;
    ck_ok(ocx_buffer_create(ctx, OCX_F16, N * N, &a));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N * N, &c));
    ocx_status st = ocx_buffer_write(ctx, s, a, 0, N * N, h, 0, NULL, NULL); /* on s: the default may be gated */
    setenv("OCX_GEMM_PARAMS", "DIRECT=1", 1);
    if (st == OCX_OK)
        st = ocx_gemm(ctx, s, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, N, N, N, 1.0, a, 0, N, a, 0, N, 0.0, c, 0, N, 0, NULL,
                      NULL);
    unsetenv("OCX_GEMM_PARAMS");
    if (st == OCX_OK) st = ocx_stream_finish(ctx, s);
    ocx_buffer_destroy(a);
    ocx_buffer_destroy(c);
    return st;
}

static ocx_status f16_product(ocx_stream *s) { return f16_product_in(tctx, s); }

/* The tensor-core probe (OCX_VENDOR_PATHS=emulate stands in for an NVIDIA GPU) runs on a stream of
 * its own: with the default stream holding the caller's work gated on an event the caller sets
 * after the call, the first f16 GEMM, on another stream, had waited for ever (the probe used the
 * default stream; the case's timeout then fails it). */
START_TEST(test_probe_off_the_default_stream)
{
    setenv("OCX_VENDOR_PATHS", "emulate", 1);
    cl_event gate = tuser_event();
    ocx_buffer *f = NULL;
    ck_ok(ocx_buffer_create(tctx, OCX_F32, 16, &f));
    const float zero = 0;
    ck_ok(ocx_buffer_fill(tctx, NULL, f, 0, 16, &zero, 1, &gate, NULL));
    ocx_stream *s = NULL;
    ck_ok(ocx_stream_create(tctx, &s));
    ck_ok(f16_product(s));
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    ck_assert_str_eq(info.kernel, "gemm_mma");
    clSetUserEventStatus(gate, CL_COMPLETE);
    ck_ok(ocx_stream_finish(tctx, NULL));
    ocx_stream_destroy(s);
    ocx_buffer_destroy(f);
    clReleaseEvent(gate);
    unsetenv("OCX_VENDOR_PATHS");
}
END_TEST

/* A bad OCX_GEMM_MMA_PARAMS at the first f16 GEMM fails that call, naming the variable, and leaves
 * the hardware's verdict to the built-in parameters: it had failed the probe, the call had run the
 * portable kernel with a warning, and the tensor cores stayed off for the rest of the process. */
START_TEST(test_probe_not_judged_by_a_setting)
{
    setenv("OCX_VENDOR_PATHS", "emulate", 1);
    setenv("OCX_GEMM_MMA_PARAMS", "BM=7", 1);
    ck_status(f16_product(NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ocx_last_error(), "OCX_GEMM_MMA_PARAMS"), "%s", ocx_last_error());
    unsetenv("OCX_GEMM_MMA_PARAMS");
    ck_ok(f16_product(NULL));
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    ck_assert_str_eq(info.kernel, "gemm_mma");
    unsigned paths = 0;
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    ck_assert(paths & OCX_PATH_NV_TENSOR_CORES);
    unsetenv("OCX_VENDOR_PATHS");
}
END_TEST

/* The probe's verdict belongs to the device as a context sees it: a context under smaller simulated
 * limits (work-groups of 16, below a warp) had taken another context's verdict on the same device,
 * then failed its f16 GEMMs in the lookup, where on its own it takes the portable kernel. */
START_TEST(test_probe_verdict_per_limits)
{
    setenv("OCX_VENDOR_PATHS", "emulate", 1);
    unsigned paths = 0;
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    ck_assert(paths & OCX_PATH_NV_TENSOR_CORES);
    char quiet[64] = "";
    if (getenv("OCX_QUIET")) snprintf(quiet, sizeof quiet, "%s", getenv("OCX_QUIET"));
    setenv("OCX_QUIET", "1", 1); /* its probe fails, with a warning */
    setenv("OCX_LIMIT_WG", "16", 1);
    ocx_context *small = NULL;
    ocx_status st = ocx_context_create(NULL, &small);
    unsetenv("OCX_LIMIT_WG");
    ck_ok(st);
    st = ocx_context_vendor_paths(small, &paths);
    ocx_status gemm = f16_product_in(small, NULL);
    ocx_params_info info;
    ocx_status last = ocx_last_params(&info);
    ocx_context_destroy(small);
    if (quiet[0]) setenv("OCX_QUIET", quiet, 1);
    else unsetenv("OCX_QUIET");
    unsetenv("OCX_VENDOR_PATHS");
    ck_ok(st);
    ck_assert_msg(!(paths & OCX_PATH_NV_TENSOR_CORES), "work-groups of 16 and the tensor cores reported on");
    ck_ok(gemm);
    ck_ok(last);
    ck_assert_str_eq(info.kernel, "gemm_tiled");
}
END_TEST

/* Every warning, one a line: the call may warn about more than the variable (the probe that taking
 * the path as on runs: with OCX_TEST_NO_SM90A, wgmma failing it). */
static void keep_warning(const char *message, void *user)
{
    size_t used = strlen(user);
    snprintf((char *)user + used, 1024 - used, "%s\n", message);
}

/* A value of OCX_VENDOR_PATHS that is none of its words: one warning that names them all (it had
 * named only the on/off words), and the path taken as on. */
START_TEST(test_vendor_paths_unknown_word)
{
    char warned[1024] = "";
    char quiet[64] = "";
    if (getenv("OCX_QUIET")) snprintf(quiet, sizeof quiet, "%s", getenv("OCX_QUIET"));
    unsetenv("OCX_QUIET");
    setenv("OCX_VENDOR_PATHS", "mma_sync", 1);
    ocx_set_warning_handler(keep_warning, warned);
    unsigned paths = 0;
    const ocx_status st = ocx_context_vendor_paths(tctx, &paths);
    ocx_set_warning_handler(NULL, NULL);
    unsetenv("OCX_VENDOR_PATHS");
    if (quiet[0]) setenv("OCX_QUIET", quiet, 1);
    ck_ok(st);
    ck_assert_msg(strstr(warned, "OCX_VENDOR_PATHS=mma_sync") && strstr(warned, "mma.sync, force, emulate"),
                  "the warnings: '%s'", warned);
}
END_TEST

/* f32 products under OCX_COMPUTE_TF32X3 on the tensor-core kernel (X3: three TF32 products): each
 * operand K-fast (ldmatrix) and K-slow (16-byte loads of permuted runs, with their swizzle, and C's
 * rows or columns permuted back), both layouts, aligned and unaligned, interior and edge tiles, two
 * tile shapes, a strided batch; checked against the reference within the bound run_case derives for
 * the mode. Four builds (the emulated kernel compiles for tens of seconds on PoCL): the default
 * tiles' NN (A K-fast, B K-slow; named, so that a profile's entry does not replace them: the probe's
 * build, also the column-major case's, the batch's and x3_nonfinite's), NT (both K-fast) with 64x128
 * tiles of 8 warps in 2 stages, TT (A K-slow, B K-fast; also x3_nonfinite's), and NN in the "large"
 * class's 128x128 tiles of 16 warps in 4 stages. `tc`: the path must have run (else the f32
 * kernels). */
static void x3_cases(int tc)
{
    static const struct {
        ocx_layout layout;
        ocx_op opa, opb;
        size_t m, n, k;
        int unaligned;
        const char *tiles;
    } cases[] = {
        {OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 150, 130, 70, 0, "BM=64,BN=64,BK=32,WM=32,WN=32,STAGES=3,GM=4"},
        {OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_T, 140, 200, 103, 0, "BM=64,BN=128,BK=32,WM=32,WN=32,STAGES=2,GM=3"},
        {OCX_ROW_MAJOR, OCX_OP_T, OCX_OP_T, 33, 100, 72, 1, NULL},
        {OCX_COL_MAJOR, OCX_OP_N, OCX_OP_N, 130, 70, 50, 1, NULL},
        {OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 300, 260, 70, 0, "BM=128,BN=128,BK=32,WM=32,WN=32,STAGES=4,GM=8"},
    };
    uint64_t seed = test_seed(), rng = seed;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int u = cases[c].unaligned;
        gcase g = {OCX_F32, OCX_F32, cases[c].layout, cases[c].opa, cases[c].opb, cases[c].m, cases[c].n, cases[c].k,
                   u ? 3 : 0, u ? 1 : 0, u ? 5 : 0, u ? 1 : 8, u ? 7 : 0, u ? 3 : 0, 0.5, c % 2 ? 0.0 : -1.0,
                   MODE_SINGLE, 1, 0, c % 2, "DIRECT=1,DOTN=0", OCX_COMPUTE_TF32X3};
        if (!u) pad_ld(&g, 8);
        if (cases[c].tiles) setenv("OCX_GEMM_MMA_PARAMS", cases[c].tiles, 1);
        check_case_family(&g, seed, &rng, tc);
        unsetenv("OCX_GEMM_MMA_PARAMS");
    }
    gcase g = {OCX_F32, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 70, 72, 40, 0, 0, 0, 8, 16, 0, 1.0, 0.5,
               MODE_STRIDED, 3, 0, 0, "DIRECT=1,DOTN=0", OCX_COMPUTE_TF32X3};
    check_case_family(&g, seed, &rng, tc);
}

/* Σ a[l*inca]·b[l*incb] over l < k in double, and into *mag the sum of the products' magnitudes
 * (what an element's error bound scales with). */
static double dot_ref(const float *a, size_t inca, const float *b, size_t incb, size_t k, double *mag)
{
    double s = 0;
    *mag = 0;
    for (size_t l = 0; l < k; l++) {
        s += (double)a[l * inca] * b[l * incb];
        *mag += fabs((double)a[l * inca] * b[l * incb]);
    }
    return s;
}

/* Under OCX_COMPUTE_TF32X3 a "short_k" product (K <= 256 from 2^31 multiply-adds) takes the f32
 * kernel, whatever the device: sampled elements against the reference. */
static void x3_short_k(void)
{
    uint64_t rng = test_seed();
    enum { SM = 4096, SN = 4096, SK = 128 };
    float *ha = malloc(SM * SK * sizeof *ha), *hb = malloc(SK * SN * sizeof *hb);
    ck_assert(ha && hb);
    trand_fill(&rng, OCX_F32, ha, NULL, SM * SK, -1, 1);
    trand_fill(&rng, OCX_F32, hb, NULL, SK * SN, -1, 1);
    ocx_buffer *A = tbuffer(OCX_F32, SM * SK, ha), *B = tbuffer(OCX_F32, SK * SN, hb);
    ocx_buffer *C = tbuffer(OCX_F32, SM * SN, NULL);
    ck_ok(ocx_gemm_ex(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, SM, SN, SK, 1.0, A, 0, SK, 0, B, 0, SN, 0, 0.0, C,
                      0, SN, 0, 1, OCX_COMPUTE_TF32X3, 0, NULL, NULL));
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    ck_assert_msg(!strcmp(info.family, "gemm") && !strcmp(info.size_class, "short_k"), "4096x4096x128 ran %s/%s",
                  info.family, info.size_class);
    float *got = tread(C);
    for (int s = 0; s < 200; s++) {
        size_t i = trand_next(&rng) % SM, j = trand_next(&rng) % SN;
        double mag, ref = dot_ref(ha + i * SK, 1, hb + j, SN, SK, &mag);
        ck_assert_msg(fabs(got[i * SN + j] - ref) <= 2.0 * (SK + 2) * ldexp(1, -24) * mag,
                      "C(%zu,%zu) = %.9g, expected %.9g", i, j, got[i * SN + j], ref);
    }
    free(got), free(ha), free(hb);
    ocx_buffer_destroy(A), ocx_buffer_destroy(B), ocx_buffer_destroy(C);
}

/* Infinities and NaNs in A and B under OCX_COMPUTE_TF32X3 (row-major NN and TT: K-slow and K-fast
 * operands): C(i, j) is what IEEE arithmetic gives (double, on the host): +-inf where a row of A or
 * a column of B meets an infinity, NaN where one meets a NaN or an infinity meets a zero or the other
 * sign; the other elements keep f32's accuracy (the warps that saw a non-finite word take the
 * careful path). */
static void x3_nonfinite(int tc)
{
    enum { M = 70, N = 72, K = 40 };
    for (int t = 0; t < 2; t++) {
        float ha[M * K], hb[K * N], hc[M * N];
        uint64_t rng = 0x7f3;
        trand_fill(&rng, OCX_F32, ha, NULL, M * K, -1, 1);
        trand_fill(&rng, OCX_F32, hb, NULL, K * N, -1, 1);
        /* A(i, l) at i*K + l (t = 0) or l*M + i (t = 1, A stored K x M); B(l, j) at l*N + j or j*K + l. */
#define AT_A(i, l) (t ? (size_t)(l)*M + (i) : (size_t)(i)*K + (l))
#define AT_B(l, j) (t ? (size_t)(j)*K + (l) : (size_t)(l)*N + (j))
        ha[AT_A(3, 5)] = INFINITY;
        ha[AT_A(10, 7)] = -INFINITY;
        ha[AT_A(20, 9)] = NAN;
        ha[AT_A(33, 11)] = INFINITY;
        hb[AT_B(11, 40)] = 0.0f; /* inf * 0 in C(33, 40) */
        hb[AT_B(5, 30)] = INFINITY;  /* C(3, 30): inf * inf, the rest finite */
        hb[AT_B(7, 31)] = INFINITY;  /* C(10, 31): -inf * inf */
        hb[AT_B(14, 50)] = -INFINITY;
        for (int i = 0; i < M * N; i++) hc[i] = NAN;
        ocx_buffer *A = tbuffer(OCX_F32, M * K, ha), *B = tbuffer(OCX_F32, K * N, hb), *C = tbuffer(OCX_F32, M * N, hc);
        setenv("OCX_GEMM_PARAMS", "DIRECT=1,DOTN=0", 1);
        ck_ok(ocx_gemm_ex(tctx, NULL, OCX_ROW_MAJOR, t ? OCX_OP_T : OCX_OP_N, t ? OCX_OP_T : OCX_OP_N, M, N, K, 1.0, A,
                          0, t ? M : K, 0, B, 0, t ? K : N, 0, 0.0, C, 0, N, 0, 1, OCX_COMPUTE_TF32X3, 0, NULL, NULL));
        unsetenv("OCX_GEMM_PARAMS");
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        ck_assert_msg(!strcmp(info.family, tc ? "gemm_mma" : "gemm"), "ran family %s", info.family);
        float *got = tread(C);
        int nonfinite = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double mag, s = dot_ref(ha + AT_A(i, 0), t ? M : 1, hb + AT_B(0, j), t ? 1 : N, K, &mag);
                double v = got[i * N + j];
                if (isnan(s) || isinf(s)) {
                    nonfinite++;
                    ck_assert_msg(isnan(s) ? isnan(v) : v == s, "t=%d C(%d,%d) = %g, IEEE gives %g", t, i, j, v, s);
                } else {
                    ck_assert_msg(fabs(v - s) <= (2.0 * (3 * K + 2) * ldexp(1, -24) + ldexp(1, -19)) * mag,
                                  "t=%d C(%d,%d) = %.9g, expected %.9g", t, i, j, v, s);
                }
            }
#undef AT_A
#undef AT_B
        ck_assert_int_ge(nonfinite, M + N);
        free(got);
        ocx_buffer_destroy(A), ocx_buffer_destroy(B), ocx_buffer_destroy(C);
    }
}

/* OCX_COMPUTE_TF32X3 with the tensor-core kernel emulated (any device): its probe passes, and its
 * products and infinities match the reference. */
START_TEST(test_tf32x3_emulated)
{
    setenv("OCX_VENDOR_PATHS", "emulate", 1);
    unsigned paths = 0;
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    ck_assert_msg(paths & OCX_PATH_NV_TF32X3, "the emulated TF32X3 kernel failed its probe: %s", ocx_last_error());
    x3_cases(1);
    x3_nonfinite(1);
    unsetenv("OCX_VENDOR_PATHS");
}
END_TEST

/* On this device as it is: the path exactly where the probe passed (OCX_EXPECT_TENSOR_CORES on
 * NVIDIA, tools/device-check.sh), else the f32 kernels; only f32 takes the mode. */
START_TEST(test_tf32x3_path)
{
    unsigned paths = 0;
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    int x3 = (paths & OCX_PATH_NV_TF32X3) != 0;
    const char *expect = getenv("OCX_EXPECT_TENSOR_CORES");
    if (expect)
        ck_assert_msg(x3 == atoi(expect), "TF32X3 path %s, OCX_EXPECT_TENSOR_CORES=%s", x3 ? "on" : "off", expect);
    if (!strcasestr(tinfo.vendor, "nvidia")) ck_assert_msg(!x3, "TF32X3 path on a device that is not NVIDIA");
    x3_cases(x3);
    x3_nonfinite(x3);
    x3_short_k();
    float h[16] = {0};
    ocx_buffer *X = tbuffer(OCX_F16, 16, NULL), *Y = tbuffer(OCX_F32, 16, h);
    ck_status(ocx_gemm_ex(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 4, 4, 4, 1.0, X, 0, 4, 0, X, 0, 4, 0, 0.0, Y,
                          0, 4, 0, 1, OCX_COMPUTE_TF32X3, 0, NULL, NULL),
              OCX_ERR_DTYPE);
    ocx_buffer_destroy(X), ocx_buffer_destroy(Y);
}
END_TEST

/* The tensor-core defaults fitted to a GPU's local memory: 128x256 tiles 64 deep in 3 stages where
 * 144 KiB fit (the H200's 226 KiB, compute capability 8.0's 162), 32 deep where a work-group has
 * 98 KiB (8.6, 8.9, 12.x), narrower tiles only after that. A copy of this context's description stands for
 * those GPUs (the defaults read nothing else of it). */
START_TEST(test_tensor_core_defaults_fit)
{
    ocx_context gpu = *tctx;
    gpu.info.type = OCX_DEVICE_GPU;
    gpu.info.max_work_group_size = gpu.info.max_work_item_sizes[0] = 1024;
    static const struct {
        unsigned cc;
        size_t kib;
        int bm, bn, bk, stages, wn, wgmma;
    } cases[] = {{80, 226, 128, 256, 64, 3, 64, 0}, {80, 162, 128, 256, 64, 3, 64, 0}, {86, 98, 128, 256, 32, 3, 64, 0},
                 {80, 40, 128, 128, 32, 2, 64, 0}, {90, 226, 128, 256, 64, 4, 256, 1}, {100, 226, 128, 256, 64, 3, 64, 0},
                 /* 9.0 under a simulated limit: wgmma's 192 KiB do not fit, mma.sync's fitted defaults */
                 {90, 98, 128, 256, 32, 3, 64, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        gpu.info.local_mem_max_bytes = cases[c].kib * 1024;
        gpu.info.nv_compute_capability[0] = cases[c].cc / 10, gpu.info.nv_compute_capability[1] = cases[c].cc % 10;
        snprintf(gpu.info.fingerprint, sizeof gpu.info.fingerprint, "defaults-fit-%zu", c); /* no probe's verdict */
        ocx__params p;
        ck_ok(ocx__params_default(&gpu, &ocx__family_gemm_mma, OCX_F16, &p));
        const int v[7] = {ocx__param(&p, "BM"), ocx__param(&p, "BN"), ocx__param(&p, "BK"), ocx__param(&p, "STAGES"),
                          ocx__param(&p, "WM"), ocx__param(&p, "WN"), ocx__param(&p, "WGMMA")};
        ck_assert_msg(v[0] == cases[c].bm && v[1] == cases[c].bn && v[2] == cases[c].bk && v[3] == cases[c].stages &&
                          v[4] == 64 && v[5] == cases[c].wn && v[6] == cases[c].wgmma,
                      "cc %u, %zu KiB: BM=%d BN=%d BK=%d STAGES=%d WM=%d WN=%d WGMMA=%d", cases[c].cc, cases[c].kib, v[0],
                      v[1], v[2], v[3], v[4], v[5], v[6]);
    }
    /* The "short_k" class: 64x64 wgmma tiles in 3 stages on 9.0, 128x128 mma.sync tiles in 2 stages
     * of 32 on 8.0. */
    for (int c = 0; c < 2; c++) {
        gpu.info.local_mem_max_bytes = 226 * 1024;
        gpu.info.nv_compute_capability[0] = c ? 8 : 9, gpu.info.nv_compute_capability[1] = 0;
        snprintf(gpu.info.fingerprint, sizeof gpu.info.fingerprint, "fit-short-k-%d", c);
        ocx__params p;
        ck_ok(ocx__params_class_default(&gpu, &ocx__family_gemm_mma, OCX_F16, "short_k", &p));
        const int bm = ocx__param(&p, "BM"), bn = ocx__param(&p, "BN"), bk = ocx__param(&p, "BK");
        const int st = ocx__param(&p, "STAGES"), wgmma = ocx__param(&p, "WGMMA");
        ck_assert_msg(c ? bm == 128 && bn == 128 && bk == 32 && st == 2 && !wgmma
                        : bm == 64 && bn == 64 && bk == 64 && st == 3 && wgmma,
                      "short_k on cc %d.0: BM=%d BN=%d BK=%d STAGES=%d WGMMA=%d", c ? 8 : 9, bm, bn, bk, st, wgmma);
    }
    /* f32 (TF32X3, 32x32 warp tiles only): 64x64 in 3 stages (48 KiB, GM=4) where they fit; fewer
     * stages, then smaller tiles (not narrower warps) under the limits mode's 64 work-items and 16
     * KiB. "large" products: 128x128 tiles of 16 warps in 4 stages (GM=8), 3 stages in 99 KiB; where
     * a work-group has 256 work-items, the general fitting halves its 512 (64x128). "medium" has no
     * tiles of its own. */
    static const struct {
        const char *cls;
        size_t wg, kib;
        int bm, bn, stages;
    } f32[] = {{"all", 1024, 226, 64, 64, 3},     {"all", 1024, 48, 64, 64, 3},     {"all", 1024, 40, 64, 64, 2},
               {"all", 64, 16, 32, 32, 2},        {"large", 1024, 226, 128, 128, 4}, {"medium", 1024, 226, 64, 64, 3},
               {"large", 1024, 99, 128, 128, 3}, {"large", 256, 226, 64, 128, 4}};
    for (size_t c = 0; c < sizeof f32 / sizeof *f32; c++) {
        ocx_context dev = gpu;
        dev.info.max_work_group_size = dev.info.max_work_item_sizes[0] = f32[c].wg;
        dev.info.local_mem_max_bytes = dev.info.local_mem_bytes = f32[c].kib * 1024;
        dev.info.nv_compute_capability[0] = 9, dev.info.nv_compute_capability[1] = 0;
        snprintf(dev.info.fingerprint, sizeof dev.info.fingerprint, "fit-f32-%zu", c);
        ocx__params p;
        ck_ok(ocx__params_class_default(&dev, &ocx__family_gemm_mma, OCX_F32, f32[c].cls, &p));
        const int bm = ocx__param(&p, "BM"), bn = ocx__param(&p, "BN"), st = ocx__param(&p, "STAGES");
        const int gm = ocx__param(&p, "GM");
        ck_assert_msg(bm == f32[c].bm && bn == f32[c].bn && st == f32[c].stages && ocx__param(&p, "WM") == 32 &&
                          ocx__param(&p, "WN") == 32 && ocx__param(&p, "BK") == 32 && !ocx__param(&p, "WGMMA") &&
                          gm == (bm * bn > 64 * 64 ? 8 : 4),
                      "f32 %s, %zu work-items, %zu KiB: BM=%d BN=%d STAGES=%d GM=%d", f32[c].cls, f32[c].wg,
                      f32[c].kib, bm, bn, st, gm);
    }
}
END_TEST

/* A context keeps its parameter lookups (profile.c: memo), the tensor-core family's under its
 * state(): on a copy of this context's description standing for a compute capability 9.0 GPU,
 * the f16 defaults' WGMMA follows OCX_VENDOR_PATHS (mma.sync: off) from call to call, each mode
 * looked up twice so that the second answer is a kept one. */
START_TEST(test_tensor_core_lookups_follow_state)
{
    ocx__params first;
    ck_ok(ocx__params_lookup(tctx, &ocx__family_gemm, OCX_F32, "all", &first)); /* loads tctx's profiles, */
    ocx_context gpu = *tctx;                                                    /* which the copy shares */
    gpu.info.type = OCX_DEVICE_GPU;
    gpu.info.max_work_group_size = gpu.info.max_work_item_sizes[0] = 1024;
    gpu.info.local_mem_max_bytes = 226 * 1024;
    gpu.info.nv_compute_capability[0] = 9, gpu.info.nv_compute_capability[1] = 0;
    snprintf(gpu.info.fingerprint, sizeof gpu.info.fingerprint, "follow-state"); /* no probe's verdict */
    char saved[64] = "";
    const int had = getenv("OCX_VENDOR_PATHS") != NULL;
    if (had) snprintf(saved, sizeof saved, "%s", getenv("OCX_VENDOR_PATHS"));
    static const char *const modes[] = {NULL, "mma.sync", NULL, "mma.sync", NULL};
    int got[5][2];
    for (int m = 0; m < 5; m++) {
        if (modes[m]) setenv("OCX_VENDOR_PATHS", modes[m], 1);
        else unsetenv("OCX_VENDOR_PATHS");
        for (int r = 0; r < 2; r++) {
            ocx__params p;
            got[m][r] = ocx__params_lookup(&gpu, &ocx__family_gemm_mma, OCX_F16, "all", &p) == OCX_OK
                            ? ocx__param(&p, "WGMMA")
                            : -1;
        }
    }
    if (had) setenv("OCX_VENDOR_PATHS", saved, 1);
    else unsetenv("OCX_VENDOR_PATHS");
    for (int m = 0; m < 5; m++)
        for (int r = 0; r < 2; r++)
            ck_assert_msg(got[m][r] == !modes[m], "OCX_VENDOR_PATHS=%s, lookup %d: WGMMA=%d", modes[m] ? modes[m] : "(unset)",
                          r + 1, got[m][r]);
}
END_TEST

/* OCX_VENDOR_PATHS=0 turns the path off; =force probes even on a device that is not NVIDIA, where
 * the kernel is built without its PTX, computes zeros, fails the probe, and the portable kernel
 * answers (the probe-failure path, on every CI run). */
START_TEST(test_vendor_path_switch)
{
    unsetenv("OCX_VENDOR_PATHS"); /* the device's own answer, whatever the suite runs under */
    int tc = tensor_cores();
    uint64_t seed = test_seed(), rng = seed;
    gcase g = {OCX_F16, OCX_F32, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 129, 131, 137, 0, 0, 0, 0, 0, 0, 1.0, 0.0,
               MODE_SINGLE, 1, 0, 1, "DIRECT=1,DOTN=0"};
    setenv("OCX_VENDOR_PATHS", "0", 1);
    ck_assert_msg(!tensor_cores(), "OCX_VENDOR_PATHS=0 left the tensor-core path on");
    check_case_family(&g, seed, &rng, 0);
    setenv("OCX_VENDOR_PATHS", "force", 1);
    ocx_context_stats before, after;
    ck_ok(ocx_context_get_stats(tctx, &before));
    int forced = tensor_cores();
    ck_ok(ocx_context_get_stats(tctx, &after));
    /* The forced probe really ran: it fetched the tensor-core program (built, from disk or memory). */
    ck_assert_uint_gt(after.programs_compiled + after.programs_from_disk + after.programs_from_memory,
                      before.programs_compiled + before.programs_from_disk + before.programs_from_memory);
    ck_assert_msg(forced == tc, "OCX_VENDOR_PATHS=force gave %d, the device check %d", forced, tc);
    check_case_family(&g, seed, &rng, forced);
    /* mma.sync: the tensor cores where the device has them, without wgmma */
    setenv("OCX_VENDOR_PATHS", "mma.sync", 1);
    ck_assert_msg(tensor_cores() == tc, "OCX_VENDOR_PATHS=mma.sync changed whether the tensor cores run");
    check_case_family(&g, seed, &rng, tc);
    if (tc) {
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        ck_assert_msg(strstr(info.params, "WGMMA=0"), "OCX_VENDOR_PATHS=mma.sync ran %s", info.params);
    }
    unsetenv("OCX_VENDOR_PATHS");
    unsigned paths;
    ck_status(ocx_context_vendor_paths(tctx, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_vendor_paths(NULL, &paths), OCX_ERR_INVALID_ARGUMENT);
}
END_TEST

/* Native f16 arithmetic (OCX_COMPUTE_F16) over every layout and transpose, ragged shapes, padded
 * leading dimensions, offsets, a strided batch, beta = 0 over NaN in C: on small integers, whose
 * products and sums stay exact in half (|sums| <= 4 * 257 < 2048), so every element must match
 * exactly (random data would leave a bound of K units of half's roundoff, too loose to show an
 * element misplaced). Devices without cl_khr_fp16 (PoCL) must refuse the call instead. */
START_TEST(test_compute_f16_exact)
{
    static const size_t shapes[][3] = {{67, 45, 37}, {1, 130, 257}, {129, 1, 64}, {33, 65, 255}, {16, 16, 16}};
    static const double alphas[] = {1, -1, 0.5}, betas[] = {0, 0.5};
    uint64_t rng = 4242;
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++)
        for (int v = 0; v < 8; v++) {
            gcase g = {OCX_F16, OCX_F16, v & 1 ? OCX_COL_MAJOR : OCX_ROW_MAJOR, v & 2 ? OCX_OP_T : OCX_OP_N,
                       v & 4 ? OCX_OP_T : OCX_OP_N, shapes[sh][0], shapes[sh][1], shapes[sh][2], 3, 1, 2, 2, 1, 3,
                       alphas[(sh + (size_t)v) % 3], betas[(size_t)v % 2], sh == 4 ? MODE_STRIDED : MODE_SINGLE,
                       sh == 4 ? 3 : 1};
            g.nan_c = g.beta == 0;
            g.compute = OCX_COMPUTE_F16;
            g.exact = 1;
            char why[512] = "", desc[512];
            const int bad = run_case(&g, &rng, why, sizeof why);
            describe(&g, desc, sizeof desc);
            if (tinfo.has_fp16)
                ck_assert_msg(!bad, "%s: %s", desc, why);
            else
                ck_assert_msg(bad && strstr(why, "status unsupported"), "%s: not refused (%s)", desc, why);
        }
}
END_TEST

/* The event a product hands back is its last launch's: a command on another stream that waits for
 * it alone reads C complete. Products of several launches: K in blocks (CPUs: 25 blocks of 16), K
 * split into partial products and their sum (GPUs), operands copied first, the same from panels;
 * each gated until every command is queued, then C copied on a second stream behind the event
 * alone, and compared exactly (integer data). Had it been an earlier launch's, the copy would run
 * while the later ones were still to come. */
START_TEST(test_event_is_the_last_launch)
{
    static const char *const sets[] = {"DIRECT=1,DOTN=0,COLS=0,STAGE=1,KBLK=16,PACK=0",
                                       "DIRECT=1,DOTN=0,COLS=0,KSPLIT=64", "DIRECT=1,DOTN=0,COLS=0,PACK=1,PACKN=1",
                                       CPU_PANELS_12, NULL};
    enum { M = 24, N = 40, K = 400 };
    float ha[M * K], hb[K * N], want[M * N], got[M * N];
    uint64_t rng = 77;
    trand_ints(&rng, OCX_F32, ha, NULL, M * K, 2);
    trand_ints(&rng, OCX_F32, hb, NULL, K * N, 2);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int l = 0; l < K; l++) acc += (double)ha[i * K + l] * hb[l * N + j];
            want[i * N + j] = (float)acc;
        }
    ocx_buffer *A = tbuffer(OCX_F32, M * K, ha), *B = tbuffer(OCX_F32, K * N, hb);
    ocx_stream *s1 = NULL, *s2 = NULL;
    ck_ok(ocx_stream_create(tctx, &s1));
    ck_ok(ocx_stream_create(tctx, &s2));
    for (int set = 0; sets[set]; set++)
        for (int round = 0; round < 4; round++) {
            ocx_buffer *C = tpoisoned(OCX_F32, M * N), *D = tpoisoned(OCX_F32, M * N);
            cl_event gate = tuser_event();
            ocx_event ev = NULL, copied = NULL;
            setenv("OCX_GEMM_PARAMS", sets[set], 1);
            ocx_status st = ocx_gemm(tctx, s1, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, M, N, K, 1.0, A, 0, K, B, 0, N, 0.0,
                                     C, 0, N, 1, &gate, &ev);
            unsetenv("OCX_GEMM_PARAMS");
            if (st == OCX_OK) st = ocx_copy(tctx, s2, M * N, C, 1, D, 1, 1, &ev, &copied);
            clSetUserEventStatus(gate, CL_COMPLETE);
            ck_ok(st);
            ck_ok(ocx_event_wait(1, &copied));
            ck_ok(ocx_buffer_read(tctx, s2, D, 0, M * N, got, 0, NULL, NULL));
            for (int i = 0; i < M * N; i++)
                ck_assert_msg(got[i] == want[i], "%s, round %d: C[%d] read behind the event = %g, want %g", sets[set],
                              round, i, got[i], want[i]);
            ck_ok(ocx_stream_finish(tctx, s1));
            ocx_event_release(ev);
            ocx_event_release(copied);
            clReleaseEvent(gate);
            ocx_buffer_destroy(C);
            ocx_buffer_destroy(D);
        }
    ocx_stream_destroy(s1);
    ocx_stream_destroy(s2);
    ocx_buffer_destroy(A);
    ocx_buffer_destroy(B);
}
END_TEST

START_TEST(test_bad_arguments)
{
    ocx_buffer *A = tbuffer(OCX_F32, 64, NULL), *B = tbuffer(OCX_F32, 64, NULL), *C = tbuffer(OCX_F32, 64, NULL);
    ocx_buffer *H = tbuffer(OCX_F16, 64, NULL), *I = tbuffer(OCX_I32, 64, NULL);
    const ocx_layout R = OCX_ROW_MAJOR;
    const ocx_op N = OCX_OP_N, T = OCX_OP_T;
    ocx_event ev = (ocx_event)(uintptr_t)1;
#define G(ctx, lay, oa, ob, m, n, k, a, offa, lda, b, offb, ldb, c, offc, ldc)                     \
    ocx_gemm(ctx, NULL, lay, oa, ob, m, n, k, 1.0, a, offa, lda, b, offb, ldb, 0.0, c, offc, ldc, 0, NULL, &ev)
    ck_status(G(NULL, R, N, N, 4, 4, 4, A, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(ev);
    ck_status(G(tctx, R, N, N, 4, 4, 4, NULL, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, 0, 4, NULL, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, 0, 4, B, 0, 4, NULL, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, (ocx_layout)7, N, N, 4, 4, 4, A, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, R, (ocx_op)5, N, 4, 4, 4, A, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, R, N, (ocx_op)5, 4, 4, 4, A, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    /* Leading dimensions below the minimum, row- and column-major, with and without transposes. */
    ck_status(G(tctx, R, N, N, 4, 4, 5, A, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, R, N, N, 4, 5, 4, A, 0, 4, B, 0, 4, C, 0, 5), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, R, N, N, 4, 5, 4, A, 0, 4, B, 0, 5, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, R, T, N, 5, 4, 4, A, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, OCX_COL_MAJOR, N, N, 5, 4, 4, A, 0, 4, B, 0, 4, C, 0, 5), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, OCX_COL_MAJOR, N, T, 4, 5, 4, A, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, R, N, N, 0, 4, 4, A, 0, 0, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    /* Buffers too short, directly or through offsets. */
    ck_status(G(tctx, R, N, N, 8, 8, 9, A, 0, 9, B, 0, 8, C, 0, 8), OCX_ERR_OUT_OF_RANGE);
    ck_status(G(tctx, R, N, N, 8, 8, 8, A, 1, 8, B, 0, 8, C, 0, 8), OCX_ERR_OUT_OF_RANGE);
    ck_status(G(tctx, R, N, N, 8, 8, 8, A, 0, 8, B, 1, 8, C, 0, 8), OCX_ERR_OUT_OF_RANGE);
    ck_status(G(tctx, R, N, N, 8, 8, 8, A, 0, 8, B, 0, 8, C, 1, 8), OCX_ERR_OUT_OF_RANGE);
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, (size_t)-2, 4, B, 0, 4, C, 0, 4), OCX_ERR_OUT_OF_RANGE);
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, 0, (size_t)1 << 62, B, 0, 4, C, 0, 4), OCX_ERR_OUT_OF_RANGE);
    ck_status(G(tctx, R, N, N, 0, 0, 0, A, 65, 4, B, 0, 4, C, 0, 4), OCX_ERR_OUT_OF_RANGE);
    /* dtypes. */
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, 0, 4, H, 0, 4, C, 0, 4), OCX_ERR_DTYPE);
    ck_status(G(tctx, R, N, N, 4, 4, 4, H, 0, 4, H, 0, 4, I, 0, 4), OCX_ERR_DTYPE);
    ck_status(G(tctx, R, N, N, 4, 4, 4, I, 0, 4, I, 0, 4, I, 0, 4), OCX_ERR_DTYPE);
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, 0, 4, B, 0, 4, H, 0, 4), OCX_ERR_DTYPE);
    /* C overlapping A or B. */
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, 0, 4, B, 0, 4, A, 8, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, 0, 4, B, 0, 4, B, 15, 4), OCX_ERR_INVALID_ARGUMENT);
    /* Wait list. */
    ck_status(ocx_gemm(tctx, NULL, R, N, N, 4, 4, 4, 1.0, A, 0, 4, B, 0, 4, 0.0, C, 0, 4, 1, NULL, &ev),
              OCX_ERR_INVALID_ARGUMENT);
    /* Native f16 arithmetic: f16 only, and only with cl_khr_fp16. */
    ck_status(ocx_gemm_ex(tctx, NULL, R, N, N, 4, 4, 4, 1.0, A, 0, 4, 0, B, 0, 4, 0, 0.0, C, 0, 4, 0, 1, OCX_COMPUTE_F16,
                          0, NULL, &ev),
              OCX_ERR_DTYPE);
    ocx_buffer *H2 = tbuffer(OCX_F16, 64, NULL), *H3 = tbuffer(OCX_F16, 64, NULL);
    ocx_status st = ocx_gemm_ex(tctx, NULL, R, N, N, 4, 4, 4, 1.0, H, 0, 4, 0, H2, 0, 4, 0, 0.0, H3, 0, 4, 0, 1,
                                OCX_COMPUTE_F16, 0, NULL, &ev);
    ck_assert_msg(tinfo.has_fp16 ? st == OCX_OK : st == OCX_ERR_UNSUPPORTED, "native f16 on a device %s fp16: %s",
                  tinfo.has_fp16 ? "with" : "without", ocx_status_name(st));
    if (st == OCX_OK) {
        ck_ok(ocx_event_wait(1, &ev));
        ocx_event_release(ev);
    }
    ck_status(ocx_gemm_ex(tctx, NULL, R, N, N, 4, 4, 4, 1.0, H, 0, 4, 0, H2, 0, 4, 0, 0.0, H3, 0, 4, 0, 1,
                          (ocx_gemm_compute)9, 0, NULL, &ev),
              OCX_ERR_INVALID_ARGUMENT);
    /* Batches: C entries overlapping each other, strides running past the buffer, NULL arrays. */
    ck_status(ocx_gemm_strided_batched(tctx, NULL, R, N, N, 2, 2, 2, 1.0, A, 0, 2, 4, B, 0, 2, 4, 0.0, C, 0, 2, 3, 2, 0,
                                       NULL, &ev),
              OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_gemm_strided_batched(tctx, NULL, R, N, N, 2, 2, 2, 1.0, A, 0, 2, 4, B, 0, 2, 4, 0.0, C, 0, 2, 4, 17,
                                       0, NULL, &ev),
              OCX_ERR_OUT_OF_RANGE);
    /* Side by side within ldc: two 2x2 C's in rows of 4 share nothing (accepted); in rows of 3
     * the second's first row meets the first's second (refused, naming both entries). */
    ck_ok(ocx_gemm_strided_batched(tctx, NULL, R, N, N, 2, 2, 2, 1.0, A, 0, 2, 4, B, 0, 2, 4, 0.0, C, 0, 4, 2, 2, 0,
                                   NULL, NULL));
    ck_status(ocx_gemm_strided_batched(tctx, NULL, R, N, N, 2, 2, 2, 1.0, A, 0, 2, 4, B, 0, 2, 4, 0.0, C, 0, 3, 2, 2, 0,
                                       NULL, &ev),
              OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "batch entries 0 and 1) overlap"));
    ck_status(ocx_gemm_strided_batched(tctx, NULL, R, N, N, 2, 2, 2, 1.0, A, 0, 2, (size_t)1 << 62, B, 0, 2, 4, 0.0, C,
                                       0, 2, 4, 8, 0, NULL, &ev),
              OCX_ERR_OUT_OF_RANGE);
    size_t oa[2] = {0, 4}, ob[2] = {0, 4}, oc_overlap[2] = {0, 2}, oc_far[2] = {0, 62};
    ck_status(ocx_gemm_batched(tctx, NULL, R, N, N, 2, 2, 2, 1.0, A, oa, 2, B, ob, 2, 0.0, C, NULL, 2, 2, 0, NULL, &ev),
              OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_gemm_batched(tctx, NULL, R, N, N, 2, 2, 2, 1.0, A, oa, 2, B, ob, 2, 0.0, C, oc_overlap, 2, 2, 0, NULL,
                               &ev),
              OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_gemm_batched(tctx, NULL, R, N, N, 2, 2, 2, 1.0, A, oa, 2, B, ob, 2, 0.0, C, oc_far, 2, 2, 0, NULL, &ev),
              OCX_ERR_OUT_OF_RANGE);
    /* A C entry overlapping another entry's A, in one shared buffer. */
    size_t sa[2] = {0, 8}, sb[2] = {0, 4}, sc[2] = {16, 2};
    ck_status(ocx_gemm_batched(tctx, NULL, R, N, N, 2, 2, 2, 1.0, A, sa, 2, B, sb, 2, 0.0, A, sc, 2, 2, 0, NULL, &ev),
              OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(ev);
    /* A developer's override that is not read whole is refused, not cut (a cut "DIRECT=16" read as
     * DIRECT=1); a bad one names the variable. */
    char longer[1100] = "";
    for (int i = 0; i < 203; i++) strcat(longer, "GM=1,");
    strcat(longer, "DIRECT=16"); /* 1024 characters: the first 1023 (those read) end in DIRECT=1 */
    ck_assert_uint_eq(strlen(longer), 1024);
    setenv("OCX_GEMM_PARAMS", longer, 1);
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "OCX_GEMM_PARAMS"));
    setenv("OCX_GEMM_PARAMS", "NOPE=1", 1);
    ck_status(G(tctx, R, N, N, 4, 4, 4, A, 0, 4, B, 0, 4, C, 0, 4), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "OCX_GEMM_PARAMS"));
    unsetenv("OCX_GEMM_PARAMS");
#undef G
    ocx_buffer_destroy(A), ocx_buffer_destroy(B), ocx_buffer_destroy(C), ocx_buffer_destroy(H), ocx_buffer_destroy(I);
    ocx_buffer_destroy(H2), ocx_buffer_destroy(H3);
}
END_TEST

START_TEST(test_limits)
{
    ck_assert_uint_le(tinfo.max_work_group_size, 64);
    ck_assert_uint_le(tinfo.local_mem_bytes, 16384);
    uint64_t seed = test_seed(), rng = seed;
    for (int c = 0; c < 30; c++) {
        gcase g = random_case(&rng, c);
        if (g.in == OCX_F16 && g.out == OCX_F16) g.out = OCX_F32; /* fewer builds: two dtype pairs */
        check_case(&g, seed, &rng);
    }
    /* f64 and native f16 are refused with a clear status. */
    ocx_buffer *H = tbuffer(OCX_F16, 16, NULL), *H2 = tbuffer(OCX_F16, 16, NULL), *H3 = tbuffer(OCX_F16, 16, NULL);
    ck_status(ocx_gemm_ex(tctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 2, 1.0, H, 0, 2, 0, H2, 0, 2, 0, 0.0, H3,
                          0, 2, 0, 1, OCX_COMPUTE_F16, 0, NULL, NULL),
              OCX_ERR_UNSUPPORTED);
    ocx_buffer *D = NULL;
    ocx_status st = ocx_buffer_create(tctx, OCX_F64, 16, &D);
    ck_assert_msg(st == OCX_ERR_UNSUPPORTED, "f64 buffer under OCX_DISABLE_FP64: %s", ocx_status_name(st));
    ocx_buffer_destroy(H), ocx_buffer_destroy(H2), ocx_buffer_destroy(H3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gemm");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, tctx_setup, tctx_teardown);
    /* A cold program cache builds dozens of variants (dtypes x layouts x kernels): on NVIDIA's compiler
     * that takes longer than check's default 4 s per test (H200: 19 s cold, 4 s warm for the suite);
     * on PoCL the emulated tensor-core kernel alone compiles for 30-40 s cold on a loaded 2-core machine. */
    tcase_set_timeout(core, 180);
    tcase_add_loop_test(core, test_random_combos, 0, 3); /* 3 x 70 = 210 random combos */
    tcase_add_test(core, test_all_layouts);
    tcase_add_test(core, test_batched);
    tcase_add_test(core, test_degenerate);
    tcase_add_test(core, test_stages);
    tcase_add_test(core, test_random_params);
    tcase_add_test(core, test_stage3_small_groups_refused);
    tcase_add_test(core, test_pipelined);
    tcase_add_test(core, test_packed);
    tcase_add_test(core, test_thin);
    tcase_add_test(core, test_split_k);
    tcase_add_test(core, test_k_blocks);
    tcase_add_test(core, test_panels);
    tcase_add_test(core, test_prefetch);
    tcase_add_test(core, test_large_copies);
    tcase_add_test(core, test_dot);
    tcase_add_test(core, test_kernel_named);
    tcase_add_test(core, test_host_memory);
    tcase_add_test(core, test_scratch_fallback);
    tcase_add_test(core, test_f16_widened);
    tcase_add_test(core, test_shared_stream_threads);
    tcase_add_test(core, test_compute_f16_exact);
    tcase_add_test(core, test_event_is_the_last_launch);
    tcase_add_test(core, test_bad_arguments);
    tcase_add_test(core, test_tensor_core_path);
    tcase_add_test(core, test_tensor_core_emulated);
    tcase_add_test(core, test_wgmma_emulated);
    tcase_add_test(core, test_probe_off_the_default_stream);
    tcase_add_test(core, test_probe_not_judged_by_a_setting);
    tcase_add_test(core, test_probe_verdict_per_limits);
    tcase_add_test(core, test_vendor_paths_unknown_word);
    tcase_add_test(core, test_tf32x3_emulated);
    tcase_add_test(core, test_tf32x3_path);
    tcase_add_test(core, test_tensor_core_defaults_fit);
    tcase_add_test(core, test_tensor_core_lookups_follow_state);
    tcase_add_test(core, test_vendor_path_switch);
    tcase_add_test(core, test_grid_beyond_65535_groups);
    suite_add_tcase(s, core);
    tadd_sim_case(s, test_sim);
    TCase *limits = tcase_create("limits");
    tcase_add_checked_fixture(limits, tlimits_setup, tlimits_teardown);
    tcase_add_test(limits, test_limits);
    suite_add_tcase(s, limits);
    return trun(s);
}
