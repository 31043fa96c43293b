/* check_reduce.c — reductions against double-precision host references: every operation × dtype,
 * lengths that no vector width or work-group divides, strides and views, NaN/inf, ties, nrm2 near
 * the overflow and underflow thresholds, empty inputs, bad arguments, and the simulated-limit mode. */
#include "testutil.h"

#include <float.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NOPS 8
static const char *const names[NOPS] = {"sum", "asum", "dot", "nrm2", "min", "max", "argmin", "argmax"};
static const ocx_dtype dtypes[3] = {OCX_F32, OCX_F16, OCX_F64};

/* The reference of op over x[i*incx] (and y) in double (long double for the sums). For argmin and
 * argmax, *index gets the first index of the extreme (or of the first NaN). */
static double reference(int op, ocx_dtype dt, size_t n, const void *x, size_t incx, const void *y, size_t incy,
                        size_t *index, double *abs_sum)
{
    long double s = 0, a = 0;
    double best = NAN;
    size_t bi = 0;
    for (size_t i = 0; i < n; i++) {
        double v = tvalue(dt, x, i * incx);
        long double t = v; /* long double: squares of f64 subnormals do not vanish */
        if (op == 1) t = fabs(v);
        if (op == 2) t = (long double)v * tvalue(dt, y, i * incy);
        if (op == 3) t = (long double)v * v;
        s += t;
        a += fabsl(t);
        if (op >= 4) {
            int take;
            if (i == 0) take = 1;
            else if (isnan(best)) take = 0;
            else if (isnan(v)) take = 1;
            else take = (op == 4 || op == 6) ? v < best : v > best;
            if (take) {
                best = v;
                bi = i;
            }
        }
    }
    if (index) *index = bi;
    if (abs_sum) *abs_sum = (double)a;
    if (op == 3) return (double)sqrtl(s);
    return op >= 4 ? best : (double)s;
}

/* Accumulation error allowed: a few units of the accumulator's roundoff per level of a deep tree,
 * relative to Σ|terms| (that bound is what a tree sum guarantees; a wrong element breaks it). */
static double tolerance(int op, ocx_dtype dt, size_t n, double abs_sum)
{
    double u = dt == OCX_F64 ? 0x1p-53 : 0x1p-24;
    double depth = 64 + 2 * sqrt((double)n); /* lanes are folded serially over ~sqrt(n)-long shares */
    if (op == 3) return 4 * depth * u * sqrt(abs_sum); /* relative to nrm2 itself */
    return depth * u * abs_sum + DBL_MIN;
}

/* Runs op both ways (device result buffer, host scalar) and checks them against the reference.
 * `exact`: the data are small integers whose sums are exact in the accumulator, so sum, asum and dot
 * must match exactly and nrm2 up to its square root's rounding (its squares are summed unscaled
 * there, cl/reduce.cl): an element dropped or counted twice shows, as it does not within the
 * tolerance random data need (over 10^6 elements, thousands of them). */
static void check_op(int op, ocx_dtype dt, size_t n, ocx_buffer *x, const void *hx, size_t incx, ocx_buffer *y,
                     const void *hy, size_t incy, int exact)
{
    size_t want_i = 0;
    double abs_sum = 0, want = reference(op, dt, n, hx, incx, hy, incy, &want_i, &abs_sum);
    int is_arg = op >= 6;
    ocx_dtype rdt = is_arg ? OCX_U32 : dt == OCX_F64 ? OCX_F64 : OCX_F32;
    double tol = op >= 4    ? 0
                 : !exact   ? tolerance(op, dt, n, abs_sum)
                 : op == 3  ? want * (dt == OCX_F64 ? 0x1p-50 : 0x1p-22)
                            : 0;

    /* host scalar */
    double got = -12345;
    size_t got_i = 999999999;
    ck_ok(ocx_reduce_host(tctx, NULL, (ocx_reduce_op)op, n, x, incx, y, incy, &got, &got_i, 0, NULL));
    if (is_arg) {
        ck_assert_msg(got_i == want_i, "%s %s n=%zu incx=%zu: index %zu, want %zu", names[op], ocx_dtype_name(dt), n,
                      incx, got_i, want_i);
        ck_assert_msg(got == want || (isnan(got) && isnan(want)), "%s %s n=%zu: value %g, want %g", names[op],
                      ocx_dtype_name(dt), n, got, want);
    } else {
        ck_assert_msg(fabs(got - want) <= tol || (isnan(got) && isnan(want)) || got == want,
                      "%s %s n=%zu incx=%zu: %.17g, want %.17g (tol %g)", names[op], ocx_dtype_name(dt), n, incx,
                      got, want, tol);
    }

    /* device buffer: a 3-element buffer of a finite sentinel (NaN, the usual poison, is a result
     * here: an unwritten one had passed), the result lands in element 1 of a view */
    ocx_buffer *r = tpoisoned(rdt, 3), *rv = NULL;
    const float sentinel32 = -12345.0f;
    const double sentinel64 = -12345.0;
    if (!is_arg)
        ck_ok(ocx_buffer_fill(tctx, NULL, r, 0, 3, rdt == OCX_F64 ? (const void *)&sentinel64 : &sentinel32, 0, NULL,
                              NULL));
    ck_ok(ocx_buffer_view(r, 1, 1, &rv));
    ocx_event ev = NULL;
    ck_ok(ocx_reduce(tctx, NULL, (ocx_reduce_op)op, n, x, incx, y, incy, rv, 0, NULL, &ev));
    ck_assert_ptr_nonnull(ev);
    ck_ok(ocx_event_wait(1, &ev));
    ocx_event_release(ev);
    void *h = tread(r);
    double dev = tvalue(rdt, h, 1);
    if (is_arg)
        ck_assert_msg((size_t)dev == want_i, "%s (device) %s n=%zu: index %g, want %zu", names[op], ocx_dtype_name(dt),
                      n, dev, want_i);
    else
        ck_assert_msg(fabs(dev - want) <= tol || (isnan(dev) && isnan(want)) || dev == want,
                      "%s (device) %s n=%zu: %.17g, want %.17g", names[op], ocx_dtype_name(dt), n, dev, want);
    /* the neighbours keep their poison */
    if (is_arg) {
        ck_assert_uint_eq(((uint32_t *)h)[0], 0xdeadbeefu);
        ck_assert_uint_eq(((uint32_t *)h)[2], 0xdeadbeefu);
    } else {
        ck_assert(tvalue(rdt, h, 0) == -12345.0 && tvalue(rdt, h, 2) == -12345.0);
    }
    free(h);
    ocx_buffer_destroy(rv);
    ocx_buffer_destroy(r);
}

/* Every op over x and y of random data in [lo, hi), or (`exact`) of integers in [-3, 3] and [-2, 2]
 * (not 0), whose sums, absolute sums, dot products and sums of squares stay exact below 2^24 for
 * up to 1.8 million elements. */
static void check_all(ocx_dtype dt, size_t n, size_t incx, size_t incy, uint64_t seed, double lo, double hi, int exact)
{
    size_t es = ocx_dtype_size(dt), nx = n ? (n - 1) * incx + 1 : 0, ny = n ? (n - 1) * incy + 1 : 0;
    ck_assert(!exact || n < 1800000);
    /* views at odd offsets inside larger buffers */
    void *hx = malloc((nx + 5) * es + 1), *hy = malloc((ny + 3) * es + 1);
    ck_assert(hx && hy);
    if (exact) {
        trand_ints(&seed, dt, hx, NULL, nx + 5, 3);
        trand_ints(&seed, dt, hy, NULL, ny + 3, 2);
    } else {
        trand_fill(&seed, dt, hx, NULL, nx + 5, lo, hi);
        trand_fill(&seed, dt, hy, NULL, ny + 3, lo, hi);
    }
    ocx_buffer *bx = tbuffer(dt, nx + 5, hx), *by = tbuffer(dt, ny + 3, hy), *x = NULL, *y = NULL;
    ck_ok(ocx_buffer_view(bx, 5, nx, &x));
    ck_ok(ocx_buffer_view(by, 3, ny, &y));
    for (int op = 0; op < NOPS; op++) {
        if (n == 0 && op >= 4) continue;
        check_op(op, dt, n, x, (char *)hx + 5 * es, incx, y, (char *)hy + 3 * es, incy, exact);
    }
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);
    ocx_buffer_destroy(bx);
    ocx_buffer_destroy(by);
    free(hx);
    free(hy);
}

static void check_all_ops(ocx_dtype dt, size_t n, size_t incx, size_t incy, uint64_t seed, double lo, double hi)
{
    check_all(dt, n, incx, incy, seed, lo, hi, 0);
}
static void check_all_exact(ocx_dtype dt, size_t n, size_t incx, size_t incy, uint64_t seed)
{
    check_all(dt, n, incx, incy, seed, 0, 0, 1);
}

/* The size class the calling thread's last reduction took its parameters from (ocx.h: small below
 * 2^16 elements, medium below 2^26 (on CPUs 2^23), large from there). */
static void expect_class(const char *want)
{
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    ck_assert_str_eq(info.family, "reduce");
    ck_assert_str_eq(info.size_class, want);
}

static const size_t lengths[] = {0, 1, 2, 3, 31, 1000003};

START_TEST(test_lengths)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        check_all_ops(dt, lengths[li], 1, 1, 1000 + li, -1, 1);
        expect_class(lengths[li] < 65536 ? "small" : "medium");
    }
}
END_TEST

START_TEST(test_over_2_24)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    check_all_ops(dt, ((size_t)1 << 24) + 7, 1, 1, 77, -2, 2);
    expect_class(tinfo.type == OCX_DEVICE_CPU ? "large" : "medium");
}
END_TEST

START_TEST(test_strides)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    check_all_ops(dt, 31, 3, 2, 5, -1, 1);
    check_all_ops(dt, 100003, 2, 5, 6, -1, 1);
    check_all_ops(dt, 4097, 1, 7, 7, -1, 1); /* dot with only y strided */
}
END_TEST

/* Small integers: every partial sum is exact, so sum, asum and dot must equal the reference exactly
 * and a single element dropped or counted twice shows (the random-data tests need a tolerance, which
 * over 2^24 elements is as large as the sum itself). The last size, 2^23 + 7 (the "large" class on
 * CPUs), takes ±1 so that asum's and dot's partial sums stay below 2^24 as well, and nrm2 (sqrt(n),
 * one rounding) is checked to half a unit of f32. */
START_TEST(test_exact_integers)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    const size_t sizes[] = {1000003, 77, ((size_t)1 << 24) + 7, ((size_t)1 << 23) + 7}, incs[] = {1, 3, 1, 1};
    for (int k = 0; k < 4; k++) {
        size_t n = sizes[k], inc = incs[k], len = (n - 1) * inc + 1, es = ocx_dtype_size(dt);
        void *hx = malloc(len * es), *hy = malloc(len * es);
        uint64_t seed = 31 + k;
        for (size_t i = 0; i < len; i++) {
            int a = (int)(trand_next(&seed) % 7) - 3, b = (int)(trand_next(&seed) % 5) - 2;
            if (k == 3) a = a > 0 ? 1 : -1, b = b > 0 ? 1 : -1;
            tset(dt, hx, i, a ? a : 1);
            tset(dt, hy, i, b ? b : -1);
        }
        ocx_buffer *x = tbuffer(dt, len, hx), *y = tbuffer(dt, len, hy);
        for (int op = 0; op < (k == 3 ? 4 : 3); op++) {
            if (k == 2 && op > 0) continue; /* |partial sums| of asum/dot would pass 2^24 there */
            double want = reference(op, dt, n, hx, inc, hy, inc, NULL, NULL), got = 0.5;
            ck_ok(ocx_reduce_host(tctx, NULL, (ocx_reduce_op)op, n, x, inc, y, inc, &got, NULL, 0, NULL));
            const double tol = op == 3 ? want * (dt == OCX_F64 ? 0x1p-50 : 0x1p-24) : 0;
            ck_assert_msg(fabs(got - want) <= tol, "%s %s n=%zu inc=%zu: %.17g, want %.17g (to %g)", names[op],
                          ocx_dtype_name(dt), n, inc, got, want, tol);
        }
        ocx_buffer_destroy(x);
        ocx_buffer_destroy(y);
        free(hx);
        free(hy);
    }
}
END_TEST

/* One value at a time placed into a data set: NaN, inf, ties. */
static void run_special(ocx_dtype dt, size_t n, const double *vals, const size_t *pos, size_t k, double fill)
{
    size_t es = ocx_dtype_size(dt);
    void *hx = malloc(n * es + 1);
    uint64_t seed = 99;
    trand_fill(&seed, dt, hx, NULL, n, 1, 2);
    if (!isnan(fill))
        for (size_t i = 0; i < n; i++) tset(dt, hx, i, fill);
    for (size_t j = 0; j < k; j++) tset(dt, hx, pos[j], vals[j]);
    ocx_buffer *x = tbuffer(dt, n, hx);
    for (int op = 0; op < NOPS; op++)
        if (op != 2) check_op(op, dt, n, x, hx, 1, NULL, NULL, 1, 0);
    check_op(2, dt, n, x, hx, 1, x, hx, 1, 0); /* dot(x, x): the same buffer twice is fine */
    ocx_buffer_destroy(x);
    free(hx);
}

static void specials(ocx_dtype dt)
{
    const size_t n = 100003;
    /* two NaNs: min/max give NaN, argmin/argmax the first one; sums give NaN */
    run_special(dt, n, (double[]){NAN, NAN, -5}, (size_t[]){70001, 90000, 3}, 3, NAN);
    run_special(dt, n, (double[]){NAN}, (size_t[]){n - 1}, 1, NAN); /* in the tail */
    run_special(dt, n, (double[]){NAN}, (size_t[]){0}, 1, NAN);
    /* inf and -inf: sums inf or NaN, nrm2 inf, extremes at the infinities */
    run_special(dt, n, (double[]){INFINITY, -INFINITY}, (size_t[]){500, 99999}, 2, NAN);
    run_special(dt, n, (double[]){INFINITY}, (size_t[]){12345}, 1, NAN);
    /* ties: the lowest index wins, across lanes, work-items and groups */
    run_special(dt, n, (double[]){-7, -7, 9, 9}, (size_t[]){88888, 4444, 99990, 17}, 4, NAN);
    run_special(dt, n, NULL, NULL, 0, 0.5); /* all equal */
    run_special(dt, n, (double[]){-INFINITY}, (size_t[]){3}, 1, -INFINITY); /* all -inf */
    run_special(dt, n, (double[]){INFINITY}, (size_t[]){3}, 1, INFINITY); /* all +inf (argmin's start) */
    /* one other value among the infinities the extremes start from: last, in a lane of its own, NaN */
    run_special(dt, n, (double[]){5}, (size_t[]){n - 1}, 1, -INFINITY);
    run_special(dt, n, (double[]){-5}, (size_t[]){17}, 1, INFINITY);
    run_special(dt, n, (double[]){NAN}, (size_t[]){n - 2}, 1, INFINITY);
    /* signed zeros compare equal: the first of either sign wins (with the CPU defaults, 40 and 296
     * are one lane of one stream, a block of 16 vectors apart) */
    run_special(dt, n, (double[]){0.0, -0.0}, (size_t[]){40, 296}, 2, 0.5);
    run_special(dt, n, (double[]){-0.0, 0.0}, (size_t[]){40, 296}, 2, 0.5);
}

START_TEST(test_nan_inf_ties)
{
    ocx_dtype dt = dtypes[_i];
    if (tdtype_ok(dt)) specials(dt);
}
END_TEST

/* Every operation over the lengths, a strided y and the special values with the parameters
 * `params` forced; the last run (a contiguous dot) must have taken `expect`. */
static void forced_params(ocx_dtype dt, const char *params, const char *expect, uint64_t seed)
{
    setenv("OCX_REDUCE_PARAMS", params, 1);
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) check_all_exact(dt, lengths[li], 1, 1, seed + li);
    check_all_exact(dt, 4097, 1, 7, seed + 99); /* strided y: the scalar path */
    check_all_exact(dt, 20011, 3, 1, seed + 98); /* strided x */
    specials(dt);
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    unsetenv("OCX_REDUCE_PARAMS"); /* before the assertion: the suite does not fork */
    char ran[sizeof info.params + 1]; /* "A=1 B=2 … ": expect ends in a space (SOLO=1 is not SOLO=1048576) */
    snprintf(ran, sizeof ran, "%s ", info.params);
    ck_assert_msg(strstr(ran, expect), "%s ran %s", params, info.params);
}

/* The reduce parameters the random runs draw (all of the family's). */
static const char *const drawn_params[] = {"WG",        "VW",   "GROUPS_PER_CU", "LAYOUT", "ACC", "SOLO",
                                           "ARGBLOCKS", "FUSE", "FUSE_SERIAL",   NULL};

/* Parameter sets drawn from the family's own table (trandom_params: the space ocx-tune searches),
 * beyond the hand-picked ones here: every operation over lengths on both sides of the one-group
 * threshold (SOLO, drawn too) and a strided y. A failure's seed and set are on stderr before it. */
static void random_params_body(uint64_t seed, void *user)
{
    static const size_t ns[] = {1, 2, 31, 4097, 100003};
    for (size_t li = 0; li < sizeof ns / sizeof *ns; li++) check_all_exact(OCX_F32, ns[li], 1, 1, seed + li);
    check_all_exact(OCX_F32, 4097, 1, 7, seed + 99);
}
START_TEST(test_random_params)
{
    trandom_param_runs("reduce", drawn_params, 4, random_params_body, NULL);
}
END_TEST

/* The kernels' accumulators (ACC) in both layouts, beyond what the device's defaults run: several
 * interleaved accumulators (LAYOUT 1, as GPUs would), many streams a work-item over short shares,
 * some streams shorter or empty (LAYOUT 2), scalar lanes (VW=1; f64 halves VW=2 to 1 too), and
 * one stream a work-item (on CPUs min and max then keep NaN apart: MINMAX_APART). Ties and NaN
 * must still resolve to the first index across accumulators. The last set has argmin and argmax
 * scan (value, index) pairs in LAYOUT 2 (ARGBLOCKS=0), as GPUs do where a profile sets LAYOUT 2
 * (the H100's f16 "small" entry): on CPUs the default scans blocks there instead. */
static const char *const acc_params[] = {"LAYOUT=1,ACC=2", "LAYOUT=2,ACC=8,VW=2,WG=4", "LAYOUT=2,ACC=2,VW=1,WG=2",
                                         "LAYOUT=2,ACC=1,WG=32", "LAYOUT=2,ARGBLOCKS=0,ACC=4,VW=4,WG=8"};
static const char *const acc_expect[] = {"ACC=2 ", "ACC=8 ", "ACC=2 ", "ACC=1 ", "ARGBLOCKS=0"};
#define NACC (int)(sizeof acc_params / sizeof *acc_params)

START_TEST(test_accumulators)
{
    ocx_dtype dt = dtypes[_i % 3];
    if (tdtype_ok(dt)) forced_params(dt, acc_params[_i / 3], acc_expect[_i / 3], 300);
}
END_TEST

/* The "sim" case: the kernels at lengths a simulator runs in seconds (tests/oclgrind.sh runs it
 * under Oclgrind, which reports data races, accesses out of bounds and barriers that not every
 * work-item reaches; its device is a GPU, so the GPU defaults run). Every operation and dtype on
 * both sides of the one-group threshold, strided, with NaN and ties across work-groups, on the
 * defaults, on the accumulator layouts below and on random parameter sets. */
static void sim_body(uint64_t seed, void *user)
{
    static const size_t ns[] = {0, 1, 3, 31, 1000, 4099, 20011};
    const int ndt = user ? *(const int *)user : 3; /* 1: f32 alone (dtypes[0]) */
    for (int d = 0; d < ndt; d++) {
        const ocx_dtype dt = dtypes[d];
        if (!tdtype_ok(dt)) continue;
        for (size_t li = 0; li < sizeof ns / sizeof *ns; li++) check_all_exact(dt, ns[li], 1, 1, seed + li);
        check_all_exact(dt, 4097, 1, 7, seed + 99);
        check_all_exact(dt, 2011, 3, 1, seed + 98);
        run_special(dt, 20011, (double[]){-7, -7, NAN, NAN}, (size_t[]){15001, 17, 12001, 20009}, 4, NAN);
        run_special(dt, 20011, (double[]){9, 9}, (size_t[]){20008, 3333}, 2, NAN);
    }
}
START_TEST(test_sim)
{
    static const int f32_only = 1;
    sim_body(21, NULL);
    for (int i = 0; i < NACC; i++) {
        setenv("OCX_REDUCE_PARAMS", acc_params[i], 1);
        sim_body(40 + (uint64_t)i, (void *)&f32_only);
    }
    unsetenv("OCX_REDUCE_PARAMS");
    trandom_param_runs("reduce", drawn_params, 2, sim_body, (void *)&f32_only);
}
END_TEST

/* One work-group, one launch (SOLO, in elements): part_<op> writes the result where final_<op>
 * would, for every length, stride and special value here (NaN, ties and infinities in long shares
 * of one group), in both layouts; and SOLO=1, where only inputs that one group's items cover at a
 * vector each (or, strided, an element each) take one launch. */
static const char *const solo_params[] = {"SOLO=1048576,WG=16,VW=16,LAYOUT=2",
                                          "SOLO=1048576,WG=64,VW=4,LAYOUT=1,ACC=2", "SOLO=1"};
static const char *const solo_expect[] = {"SOLO=1048576 ", "SOLO=1048576 ", "SOLO=1 "};

START_TEST(test_one_launch)
{
    ocx_dtype dt = dtypes[_i % 3];
    if (tdtype_ok(dt)) forced_params(dt, solo_params[_i / 3], solo_expect[_i / 3], 400);
}
END_TEST

/* Many work-groups, one launch (n up to FUSE elements): the last group to finish combines the
 * partials, through a counter each launch sets back to zero (every call here runs on the default
 * stream after the last, into a poisoned result). Many groups of few items, groups of one item,
 * and the device's defaults, at every length, with the last group combining the partials in its tree
 * (FUSE_SERIAL=0, GPUs' default) and by its item 0 alone (1, CPUs'); where the library does not know
 * the device's memory model for it, the calls take two launches and say so (FUSE=0). */
static const char *const fuse_params[] = {"FUSE=1073741824",
                                          "FUSE=1073741824,LAYOUT=1,WG=32,VW=1,GROUPS_PER_CU=256,SOLO=1,FUSE_SERIAL=0",
                                          "FUSE=1073741824,LAYOUT=2,WG=1,ACC=2,GROUPS_PER_CU=64,SOLO=1,FUSE_SERIAL=1"};
#define NFUSE (int)(sizeof fuse_params / sizeof *fuse_params)

/* OpenCL C's acquire-release atomics at device scope, asked of OpenCL here: 30 where OpenCL C 3.0
 * lists both features, 20 where the device's OpenCL C is 2.x, else 0 (ocx_device_info.device_atomics). */
static int c_atomics_asked(void)
{
    cl_context c;
    cl_device_id d;
    ck_ok(ocx_context_cl(tctx, &c, &d));
    struct {
        cl_uint version;
        char name[64];
    } features[256];
    size_t size = 0;
    int found = 0;
    if (clGetDeviceInfo(d, 0x106F /* CL_DEVICE_OPENCL_C_FEATURES */, sizeof features, features, &size) == CL_SUCCESS)
        for (size_t i = 0; i < size / sizeof *features; i++) {
            features[i].name[sizeof features[i].name - 1] = '\0';
            if (!strcmp(features[i].name, "__opencl_c_atomic_order_acq_rel")) found |= 1;
            if (!strcmp(features[i].name, "__opencl_c_atomic_scope_device")) found |= 2;
        }
    if (found == 3) return 30;
    char version[128] = "";
    ck_assert_int_eq(clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_VERSION, sizeof version, version, NULL), CL_SUCCESS);
    return strncmp(version, "OpenCL C 2.", 11) ? 0 : 20;
}

/* Whether the library knows how to order the groups' partials in one launch (lib/reduce.c's
 * fuse_fence): GPUs of NVIDIA's driver unless OCX_VENDOR_PATHS turns its paths off, and devices
 * whose OpenCL C has device-scope acquire-release atomics. */
static int fuse_known(void)
{
    const char *vp = getenv("OCX_VENDOR_PATHS");
    const int off = vp && (!strcmp(vp, "0") || !strcasecmp(vp, "off") || !strcasecmp(vp, "no") || !strcasecmp(vp, "false"));
    ck_assert_int_eq(tinfo.device_atomics, c_atomics_asked());
    return (tinfo.type == OCX_DEVICE_GPU && (strstr(tinfo.vendor, "NVIDIA") || strstr(tinfo.vendor, "nvidia")) &&
            tinfo.nv_compute_capability[0] > 0 && !off) ||
           tinfo.device_atomics != 0;
}

/* The kernel that wrote a sum of n ones of dtype dt (f32 or f64) under `params` (ocx_last_params):
 * part_sum for one launch. */
static void expect_writer(ocx_dtype dt, const char *params, size_t n, const char *kernel)
{
    ocx_buffer *x = NULL;
    ck_ok(ocx_buffer_create(tctx, dt, n, &x));
    const float one = 1;
    const double one64 = 1;
    ck_ok(ocx_buffer_fill(tctx, NULL, x, 0, n, dt == OCX_F64 ? (const void *)&one64 : (const void *)&one, 0, NULL,
                          NULL));
    setenv("OCX_REDUCE_PARAMS", params, 1);
    double v = -1;
    const ocx_status st = ocx_reduce_host(tctx, NULL, OCX_REDUCE_SUM, n, x, 1, NULL, 1, &v, NULL, 0, NULL);
    unsetenv("OCX_REDUCE_PARAMS");
    ocx_buffer_destroy(x);
    ck_ok(st);
    ck_assert_double_eq(v, (double)n);
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    ck_assert_msg(!strcmp(info.kernel, kernel), "%s, %zu elements: %s wrote the sum, not %s", params, n, info.kernel,
                  kernel);
}

START_TEST(test_fused)
{
    ocx_dtype dt = dtypes[_i % 3];
    const int known = fuse_known();
    if (tdtype_ok(dt)) forced_params(dt, fuse_params[_i / 3], known ? "FUSE=1073741824 " : "FUSE=0 ", 500);
    if (_i != 0) return;
    /* which launch wrote the result: many groups in one launch, or a second launch */
    expect_writer(OCX_F32, fuse_params[1], 100003, known ? "part_sum" : "final_sum");
    expect_writer(OCX_F32, "FUSE=100003,SOLO=1", 100003, known ? "part_sum" : "final_sum");
    expect_writer(OCX_F32, "FUSE=100002,SOLO=1", 100003, "final_sum");
    expect_writer(OCX_F32, "FUSE=0,SOLO=1", 100003, "final_sum");
    expect_writer(OCX_F32, "FUSE=1073741824,SOLO=262144", 100003, "part_sum"); /* one group */
    /* The serial combine takes at most 4096 groups: in lanes of one element, 4096 x 4096 elements
     * are 4096 groups (4096 elements a lane at most), one element more 4097 */
    if (known && tdtype_ok(OCX_F64)) {
        static const char serial[] = "FUSE=1073741824,SOLO=1,FUSE_SERIAL=1,WG=1,VW=1,ACC=1,GROUPS_PER_CU=1";
        expect_writer(OCX_F64, serial, 4096 * 4096, "part_sum");
        expect_writer(OCX_F64, serial, 4096 * 4096 + 1, "final_sum"); /* sums of ones exact in f64 */
    }
}
END_TEST

/* A new context on the default device, and *x there: n f32 ones. */
static ocx_context *ones_in_new_context(size_t n, ocx_buffer **x)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    const float one = 1;
    ck_ok(ocx_buffer_create(ctx, OCX_F32, n, x));
    ck_ok(ocx_buffer_fill(ctx, NULL, *x, 0, n, &one, 0, NULL, NULL));
    return ctx;
}

/* One program takes a length on either side of FUSE where the last group's item 0 combines the
 * partials (FUSE_SERIAL=1, the CPUs' default): the lengths one launch takes and those that need a
 * second one share it (part_<op>'s mode), so a context builds it once. */
START_TEST(test_fused_one_program)
{
    if (!fuse_known()) return; /* two launches at every length: test_fused says so */
    ocx_buffer *x = NULL;
    ocx_context *ctx = ones_in_new_context(100003, &x);
    ocx_context_stats before, after;
    ck_ok(ocx_context_get_stats(ctx, &before));
    setenv("OCX_REDUCE_PARAMS", "FUSE=65537,SOLO=1,FUSE_SERIAL=1", 1);
    static const size_t ns[] = {65537, 100003, 65536, 65538};
    static const char *const writers[] = {"part_sum", "final_sum", "part_sum", "final_sum"};
    char why[256] = "";
    for (int i = 0; i < 4 && !why[0]; i++) {
        double v = -1;
        ocx_params_info info;
        if (ocx_reduce_host(ctx, NULL, OCX_REDUCE_SUM, ns[i], x, 1, NULL, 1, &v, NULL, 0, NULL) != OCX_OK ||
            ocx_last_params(&info) != OCX_OK)
            snprintf(why, sizeof why, "%zu elements: %s", ns[i], ocx_last_error());
        else if (v != (double)ns[i] || strcmp(info.kernel, writers[i]))
            snprintf(why, sizeof why, "%zu elements: %g from %s", ns[i], v, info.kernel);
    }
    unsetenv("OCX_REDUCE_PARAMS"); /* before the assertions: the suite does not fork */
    ck_ok(ocx_context_get_stats(ctx, &after));
    ocx_buffer_destroy(x);
    ocx_context_destroy(ctx);
    ck_assert_msg(!why[0], "%s", why);
    ck_assert_uint_eq(after.programs_compiled + after.programs_from_disk - before.programs_compiled -
                          before.programs_from_disk, 1);
}
END_TEST

static void count_refusals(const char *msg, void *user)
{
    if (strstr(msg, "one-launch reduction")) ++*(int *)user;
}

/* A context in which a refusal can be simulated (devices whose one launch is OpenCL C 2.0 or 3.0's,
 * not NVIDIA's PTX; 0 elsewhere, the test having nothing to check), with n f32 ones in x, whose
 * sums OCX_REDUCE_PARAMS asks to take one launch, the refusal warnings counted (OCX_QUIET unset
 * meanwhile) and OCX_BUILD_OPTIONS set to build_options. */
typedef struct refusal_watch {
    int refusals;
    char *was_quiet;
    size_t n;
    ocx_buffer *x;
    ocx_context *ctx;
} refusal_watch;

static int watch_refusals(refusal_watch *w, const char *build_options)
{
    if (!tinfo.device_atomics || !fuse_known() || tinfo.nv_compute_capability[0] > 0) return 0;
    const char *quiet = getenv("OCX_QUIET");
    *w = (refusal_watch){0, quiet ? strdup(quiet) : NULL, 100003, NULL, NULL};
    unsetenv("OCX_QUIET"); /* the warning is counted */
    ocx_set_warning_handler(count_refusals, &w->refusals);
    setenv("OCX_REDUCE_PARAMS", "FUSE=1073741824,SOLO=1", 1);
    w->ctx = ones_in_new_context(w->n, &w->x);
    setenv("OCX_BUILD_OPTIONS", build_options, 1);
    return 1;
}

static void unwatch_refusals(refusal_watch *w)
{
    ocx_set_warning_handler(NULL, NULL);
    if (w->was_quiet) setenv("OCX_QUIET", w->was_quiet, 1);
    free(w->was_quiet);
    ocx_buffer_destroy(w->x);
    ocx_context_destroy(w->ctx);
    unsetenv("OCX_BUILD_OPTIONS");
    unsetenv("OCX_REDUCE_PARAMS");
}

/* A device whose compiler refuses the one-launch kernels as OpenCL C 2.0 or 3.0 (simulated:
 * OCX_BUILD_OPTIONS defines atomic_uint away, a type only those builds declare and use): the call
 * still succeeds, in two launches, and so do the context's later ones, without another try. */
START_TEST(test_fused_refused)
{
    refusal_watch w;
    if (!watch_refusals(&w, "-Datomic_uint=ocx_test_refused")) return;
    for (int call = 0; call < 2; call++) {
        double v = -1;
        ck_ok(ocx_reduce_host(w.ctx, NULL, OCX_REDUCE_SUM, w.n, w.x, 1, NULL, 1, &v, NULL, 0, NULL));
        ck_assert_double_eq(v, (double)w.n);
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        ck_assert_str_eq(info.kernel, "final_sum");
        ck_assert_msg(strstr(info.params, "FUSE=0") != NULL, "%s", info.params);
        ck_assert_int_eq(w.refusals, 1); /* the second call tried no such build again */
        ck_assert_msg(!strstr(ocx_last_error(), "cl/reduce.cl"), "a call that succeeded left its build failure: %s",
                      ocx_last_error());
    }
    unwatch_refusals(&w);
    /* without the refusal, the same call takes one launch */
    expect_writer(OCX_F32, "FUSE=1073741824,SOLO=1", 100003, "part_sum");
}
END_TEST

/* A build that fails whatever the standard (OCX_BUILD_OPTIONS here breaks every build of
 * reduce.cl) is no refusal of one launch: the call fails with the build's error, no warning says
 * the device refused, and once the options are mended the same context takes one launch. (It had
 * warned of a refusal and taken two launches for the rest of the context.) */
START_TEST(test_fused_not_refused)
{
    refusal_watch w;
    if (!watch_refusals(&w, "-Dkernel=ocx_test_broken")) return;
    double v = -1;
    ck_status(ocx_reduce_host(w.ctx, NULL, OCX_REDUCE_SUM, w.n, w.x, 1, NULL, 1, &v, NULL, 0, NULL), OCX_ERR_BUILD);
    ck_assert_msg(strstr(ocx_last_error(), "ocx_test_broken") != NULL, "%s", ocx_last_error());
    ck_assert_int_eq(w.refusals, 0);
    unsetenv("OCX_BUILD_OPTIONS");
    ck_ok(ocx_reduce_host(w.ctx, NULL, OCX_REDUCE_SUM, w.n, w.x, 1, NULL, 1, &v, NULL, 0, NULL));
    ck_assert_double_eq(v, (double)w.n);
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    ck_assert_str_eq(info.kernel, "part_sum");
    ck_assert_int_eq(w.refusals, 0);
    unwatch_refusals(&w);
}
END_TEST

/* argmin/argmax's first index within one work-item. On CPUs (reduce.cl's blocked scan) a lane
 * keeps the first block of 16 vectors that holds its extreme, and one block is scanned again: the
 * earliest such block in the first stream that holds the extreme. One work-item of 4 streams:
 * the extreme in stream 0 at vector 7 of block 5 (lane VW-1), later in that block at lane 0, in
 * block 9 and in stream 1's block 0, where the first must win; then also at vector 7's lane 0,
 * which must win in its turn. As 9, -9 and NaN, for every operation. */
START_TEST(test_arg_first_index)
{
    const ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    setenv("OCX_REDUCE_PARAMS", "SOLO=1048576,WG=1,VW=4,LAYOUT=2,ACC=4", 1);
    const size_t n = 4096, vw = dt == OCX_F64 ? 2 : 4, per = n / vw / 4; /* vectors a stream */
#define AT(stream, block, j, lane) ((((stream) * per) + (block) * 16 + (j)) * vw + (lane))
    const size_t pos[] = {AT(1, 0, 2, 1), AT(0, 9, 0, 1), AT(0, 5, 10, 0), AT(0, 5, 7, vw - 1), AT(0, 5, 7, 0)};
#undef AT
    const double vals[] = {9, -9, NAN};
    for (int v = 0; v < 3; v++) {
        const double same[5] = {vals[v], vals[v], vals[v], vals[v], vals[v]};
        run_special(dt, n, same, pos, 4, NAN); /* the first: pos[3] */
        run_special(dt, n, same, pos, 5, NAN); /* the first: pos[4] */
    }
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    unsetenv("OCX_REDUCE_PARAMS");
    ck_assert_msg(strstr(info.params, "WG=1 ") && strstr(info.params, "ACC=4 "), "ran %s", info.params);
}
END_TEST

/* GROUPS_PER_CU shapes the host's grid only: another value builds no program (the tuner draws it
 * without building anything), and every operation stays right with one group a compute unit and
 * with 1024. Each value is checked to have been the one the last run took. */
START_TEST(test_groups_per_cu)
{
    static const char *const gpc[] = {"GROUPS_PER_CU=1", "GROUPS_PER_CU=1024", "GROUPS_PER_CU=8"};
    ocx_context_stats s0, s1;
    for (int k = 0; k < 3; k++) {
        setenv("OCX_REDUCE_PARAMS", gpc[k], 1);
        ck_ok(ocx_context_get_stats(tctx, &s0));
        check_all_exact(OCX_F32, 1000003, 1, 1, 500 + k);
        ck_ok(ocx_context_get_stats(tctx, &s1));
        ocx_params_info info;
        ck_ok(ocx_last_params(&info));
        unsetenv("OCX_REDUCE_PARAMS");
        char ran[sizeof info.params + 2];
        snprintf(ran, sizeof ran, " %s ", info.params);
        char want[40];
        snprintf(want, sizeof want, " %s ", gpc[k]);
        ck_assert_msg(strstr(ran, want), "%s: ran %s", gpc[k], info.params);
        if (k > 0)
            ck_assert_msg(s1.programs_compiled == s0.programs_compiled && s1.programs_from_disk == s0.programs_from_disk,
                          "%s built %llu programs", gpc[k],
                          (unsigned long long)(s1.programs_compiled + s1.programs_from_disk - s0.programs_compiled -
                                               s0.programs_from_disk));
    }
    /* ocx_last_params()'s list ("A=1 B=2 …", spaces and all) fed back through the variable runs the
     * same parameters, taken from there (ocx.h: "so they can be fed back"). */
    ocx_params_info info, again;
    ck_ok(ocx_last_params(&info));
    setenv("OCX_REDUCE_PARAMS", info.params, 1);
    check_all_exact(OCX_F32, 1000, 1, 1, 510);
    const ocx_status st = ocx_last_params(&again);
    unsetenv("OCX_REDUCE_PARAMS");
    ck_ok(st);
    ck_assert_str_eq(again.params, info.params);
    ck_assert_msg(strstr(again.source, "environment"), "fed back, taken from %s", again.source);
}
END_TEST

/* nrm2 where squaring would overflow or underflow the accumulator. */
/* Where subnormals flush to zero (-cl-denorms-are-zero, which PoCL honours), a square just at Blue's
 * small threshold with smaller values beside it: one work-item's middle sum of 2^-63's square and
 * the others' small sums must combine at the small scale, where nothing is subnormal (brought down to
 * the middle sum's, they were: 1.7% short). Also right without the option. f16 computes in f32. */
START_TEST(test_nrm2_flush_to_zero)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt) || dt == OCX_F16) return;
    const double edge = dt == OCX_F64 ? 0x1p-511 : 0x1p-63, small = dt == OCX_F64 ? 1e-155 : 1e-20;
    const size_t lens[] = {5, 100003};
    for (int ftz = 0; ftz < 2; ftz++) {
        /* a context of its own: a context keeps its programs by their options without this one */
        if (ftz) setenv("OCX_BUILD_OPTIONS", "-cl-denorms-are-zero", 1);
        ocx_context *ctx = NULL;
        ck_ok(ocx_context_create(NULL, &ctx));
        for (int l = 0; l < 2; l++) {
            const size_t n = lens[l];
            void *hx = malloc(n * ocx_dtype_size(dt));
            for (size_t i = 0; i < n; i++) tset(dt, hx, i, i == n / 2 ? edge : (i % 2 ? small : -small));
            const double ref = reference(3, dt, n, hx, 1, NULL, 1, NULL, NULL);
            ocx_buffer *x = NULL;
            ck_ok(ocx_buffer_create(ctx, dt, n, &x));
            ck_ok(ocx_buffer_write(ctx, NULL, x, 0, n, hx, 0, NULL, NULL));
            double got = 0;
            ck_ok(ocx_reduce_host(ctx, NULL, OCX_REDUCE_NRM2, n, x, 1, NULL, 1, &got, NULL, 0, NULL));
            ck_assert_msg(fabs(got - ref) <= (dt == OCX_F64 ? 1e-12 : 1e-5) * ref, "nrm2 %s n=%zu%s: %.9g, want %.9g",
                          ocx_dtype_name(dt), n, ftz ? " (denormals flushed)" : "", got, ref);
            ocx_buffer_destroy(x);
            free(hx);
        }
        ocx_context_destroy(ctx);
    }
    unsetenv("OCX_BUILD_OPTIONS");
}
END_TEST

START_TEST(test_nrm2_scaling)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    double scales[] = {dt == OCX_F64 ? 1e300 : dt == OCX_F32 ? 1e36 : 6e4,
                       dt == OCX_F64 ? 1e-300 : dt == OCX_F32 ? 1e-30 : 1e-5,
                       dt == OCX_F64 ? 1e-310 : dt == OCX_F32 ? 1e-40 : 1e-7 /* subnormals */,
                       /* just under Blue's big threshold: squares that fit, sums that may not */
                       dt == OCX_F64 ? 2e146 : dt == OCX_F32 ? 1.5e13 : 3e4,
                       /* just above the small one (squares normal, but the sum below QMIN) */
                       dt == OCX_F64 ? 1e-153 : dt == OCX_F32 ? 1.2e-19 : 1e-4};
    const size_t n = 10007;
    size_t es = ocx_dtype_size(dt);
    for (int si = 0; si < 5; si++) {
        void *hx = malloc(n * es);
        uint64_t seed = 3 + si;
        for (size_t i = 0; i < n; i++) tset(dt, hx, i, scales[si] * trand_uniform(&seed, -1, 1));
        double ref = reference(3, dt, n, hx, 1, NULL, 1, NULL, NULL);
        ck_assert(ref > 0 && isfinite(ref));
        ocx_buffer *x = tbuffer(dt, n, hx);
        double got = 0;
        ck_ok(ocx_reduce_host(tctx, NULL, OCX_REDUCE_NRM2, n, x, 1, NULL, 1, &got, NULL, 0, NULL));
        double rel = dt == OCX_F64 ? 1e-12 : 1e-5;
        /* f32 subnormals carry few digits; the result still must not be 0 or inf */
        ck_assert_msg(fabs(got - ref) <= rel * ref, "nrm2 %s scale %g: %.9g, want %.9g", ocx_dtype_name(dt),
                      scales[si], got, ref);
        ck_ok(ocx_reduce_host(tctx, NULL, OCX_REDUCE_NRM2, n / 3, x, 3, NULL, 1, &got, NULL, 0, NULL));
        ref = reference(3, dt, n / 3, hx, 3, NULL, 1, NULL, NULL);
        ck_assert_msg(fabs(got - ref) <= rel * ref, "nrm2 %s strided scale %g: %.9g, want %.9g",
                      ocx_dtype_name(dt), scales[si], got, ref);
        ocx_buffer_destroy(x);
        free(hx);
    }
    /* long shares through the scaled pass (equal values: a serial sum's error grows with the share,
     * 6.7e-5 for f32 at 1e-25 before its accumulators took blocks); f16 never needs that pass */
    if (dt == OCX_F16) return;
    const size_t m = (size_t)1 << 20;
    const double cs[] = {dt == OCX_F64 ? 1e-300 : 1e-25, dt == OCX_F64 ? 1e300 : 1e25};
    for (int ci = 0; ci < 2; ci++) {
        ocx_buffer *x = tbuffer(dt, m, NULL);
        ck_ok(ocx_fill(tctx, NULL, m, cs[ci], x, 1, 0, NULL, NULL));
        const double c = dt == OCX_F64 ? cs[ci] : (double)(float)cs[ci], ref = c * 1024;
        double got = 0;
        ck_ok(ocx_reduce_host(tctx, NULL, OCX_REDUCE_NRM2, m, x, 1, NULL, 1, &got, NULL, 0, NULL));
        ck_assert_msg(fabs(got - ref) <= (dt == OCX_F64 ? 1e-12 : 1e-5) * ref, "nrm2 %s of 2^20 x %g: %.9g, want %.9g",
                      ocx_dtype_name(dt), c, got, ref);
        ocx_buffer_destroy(x);
    }
}
END_TEST

/* nrm2 where work-items' shares differ: ordinary values with a few huge ones of comparable total
 * (the shares holding one scale them, Blue's way, the others sum their squares unscaled, and both
 * kinds of partial combine), tiny values and zeros among ordinary ones, a half of zeros, all zeros. */
START_TEST(test_nrm2_mixed)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt) || dt == OCX_F16) return; /* f16 holds nothing beyond the unscaled range */
    const size_t n = 1000003;
    size_t es = ocx_dtype_size(dt);
    int f64 = dt == OCX_F64;
    double c = f64 ? 5e143 : 5e10, huge = f64 ? 3e146 : 3e13, tiny = f64 ? 1e-300 : 1e-30;
    void *hx = malloc(n * es);
    uint64_t seed = 8;
    for (int k = 0; k < 4; k++) {
        trand_fill(&seed, dt, hx, NULL, n, k == 0 ? -c : -1, k == 0 ? c : 1);
        if (k == 0) {
            tset(dt, hx, 17, huge);
            tset(dt, hx, 500001, -huge);
            tset(dt, hx, n - 1, 0.9 * huge);
        } else if (k == 1) {
            for (size_t i = 3; i < n; i += 4099) tset(dt, hx, i, i % 2 ? tiny : 0);
        } else {
            for (size_t i = 0; i < (k == 2 ? n / 2 : n); i++) tset(dt, hx, i, 0);
        }
        ocx_buffer *x = tbuffer(dt, n, hx);
        for (size_t inc = 1; inc <= 2; inc++) {
            double ref = reference(3, dt, n / inc, hx, inc, NULL, 1, NULL, NULL), got = -1;
            ck_ok(ocx_reduce_host(tctx, NULL, OCX_REDUCE_NRM2, n / inc, x, inc, NULL, 1, &got, NULL, 0, NULL));
            ck_assert_msg(fabs(got - ref) <= (f64 ? 1e-12 : 1e-5) * ref, "nrm2 %s case %d incx %zu: %.17g, want %.17g",
                          ocx_dtype_name(dt), k, inc, got, ref);
        }
        ocx_buffer_destroy(x);
    }
    free(hx);
}
END_TEST

/* f32 sum of 10^8 random values: <= 1e-5 relative to a double reference; also under the fewest
 * accumulators parameters allow (one a work-item, groups of one, one group a compute unit, and one
 * group up to 2^24 elements), where the library bounds each accumulator's run (reduce.c: MAX_RUN),
 * and on the strided path (every second element), whose work-items add up an element at a time. */
START_TEST(test_sum_1e8)
{
    const size_t n = 100000000;
    float *hx = malloc(n * sizeof *hx);
    ck_assert_ptr_nonnull(hx);
    uint64_t seed = 4242;
    long double ref = 0, ref_even = 0;
    for (size_t i = 0; i < n; i++) {
        hx[i] = (float)trand_uniform(&seed, 0, 1);
        ref += hx[i];
        if (i % 2 == 0) ref_even += hx[i];
    }
    ocx_buffer *x = tbuffer(OCX_F32, n, hx);
    free(hx);
    static const char *const params[] = {NULL, "WG=1,VW=1,ACC=1,GROUPS_PER_CU=1,SOLO=16777216"};
    for (int k = 0; k < 2; k++) {
        if (params[k]) setenv("OCX_REDUCE_PARAMS", params[k], 1);
        double got = 0, got_even = 0;
        const ocx_status st_even =
            ocx_reduce_host(tctx, NULL, OCX_REDUCE_SUM, n / 2, x, 2, NULL, 1, &got_even, NULL, 0, NULL);
        const ocx_status st = ocx_reduce_host(tctx, NULL, OCX_REDUCE_SUM, n, x, 1, NULL, 1, &got, NULL, 0, NULL);
        unsetenv("OCX_REDUCE_PARAMS"); /* before the assertions: the suite does not fork */
        ck_ok(st_even);
        ck_ok(st);
        expect_class("large"); /* 10^8 >= 2^26 */
        ck_assert_msg(fabs(got - (double)ref) <= 1e-5 * (double)ref, "%s: sum of 1e8: %.10g, want %.10Lg (rel %.3g)",
                      params[k] ? params[k] : "defaults", got, ref, fabs(got - (double)ref) / (double)ref);
        ck_assert_msg(fabs(got_even - (double)ref_even) <= 1e-5 * (double)ref_even,
                      "%s: strided sum of 5e7: %.10g, want %.10Lg (rel %.3g)", params[k] ? params[k] : "defaults",
                      got_even, ref_even, fabs(got_even - (double)ref_even) / (double)ref_even);
    }
    ocx_buffer_destroy(x);
}
END_TEST

/* Sums of squares of f16 data, whose squares have few significant bits: the roundings of one
 * accumulator's run of additions lean one way, so a run's error grows with its length (reduce.c:
 * MAX_RUN). Within 1e-5 under the defaults on the strided path (one lane a work-item), 5.8 million
 * values near 2^-16 (3.1e-5 away with runs of 2^15), and under the fewest lanes on the contiguous
 * path, 2^20 values in [0.5, 1.5) (1.4e-5 away). */
START_TEST(test_f16_squares)
{
    static const struct { size_t n, inc; double scale; const char *params; } cases[] = {
        {5842629, 2, 0x1p-16, NULL},
        {(size_t)1 << 20, 1, 1, "WG=2,VW=2,ACC=1,GROUPS_PER_CU=1"},
    };
    uint64_t seed = 2026;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const size_t n = cases[c].n, inc = cases[c].inc, len = (n - 1) * inc + 1;
        uint16_t *hx = malloc(len * sizeof *hx);
        ck_assert_ptr_nonnull(hx);
        trand_fill(&seed, OCX_F16, hx, NULL, len, 0.5 * cases[c].scale, 1.5 * cases[c].scale);
        long double ref = 0;
        for (size_t i = 0; i < n; i++) {
            const long double v = tvalue(OCX_F16, hx, i * inc);
            ref += v * v;
        }
        ocx_buffer *x = tbuffer(OCX_F16, len, hx);
        free(hx);
        const char *params = cases[c].params ? cases[c].params : "defaults";
        if (cases[c].params) setenv("OCX_REDUCE_PARAMS", cases[c].params, 1);
        double dot = 0, nrm2 = 0;
        const ocx_status st_dot = ocx_reduce_host(tctx, NULL, OCX_REDUCE_DOT, n, x, inc, x, inc, &dot, NULL, 0, NULL);
        const ocx_status st_nrm2 = ocx_reduce_host(tctx, NULL, OCX_REDUCE_NRM2, n, x, inc, NULL, 1, &nrm2, NULL, 0, NULL);
        unsetenv("OCX_REDUCE_PARAMS"); /* before the assertions: the suite does not fork */
        ck_ok(st_dot);
        ck_ok(st_nrm2);
        const double want = (double)ref, want_nrm2 = sqrt(want);
        ck_assert_msg(fabs(dot - want) <= 1e-5 * want, "f16 dot(x, x), n=%zu incx=%zu, %s: %.9g, want %.9g (rel %.3g)",
                      n, inc, params, dot, want, fabs(dot - want) / want);
        ck_assert_msg(fabs(nrm2 - want_nrm2) <= 1e-5 * want_nrm2,
                      "f16 nrm2, n=%zu incx=%zu, %s: %.9g, want %.9g (rel %.3g)", n, inc, params, nrm2, want_nrm2,
                      fabs(nrm2 - want_nrm2) / want_nrm2);
        ocx_buffer_destroy(x);
    }
}
END_TEST

START_TEST(test_empty)
{
    ocx_buffer *x = tbuffer(OCX_F32, 4, (float[]){1, 2, 3, 4});
    for (int op = 0; op < NOPS; op++) {
        double v = -1;
        size_t i = 77;
        if (op < 4) {
            ck_ok(ocx_reduce_host(tctx, NULL, (ocx_reduce_op)op, 0, x, 1, x, 1, &v, NULL, 0, NULL));
            ck_assert(v == 0.0);
        } else {
            ck_status(ocx_reduce_host(tctx, NULL, (ocx_reduce_op)op, 0, x, 1, NULL, 1, &v, &i, 0, NULL),
                      OCX_ERR_INVALID_ARGUMENT);
            ck_assert(strstr(ocx_last_error(), "0 elements"));
        }
    }
    /* an empty sum to a device buffer overwrites the poison with 0 */
    ocx_buffer *r = tpoisoned(OCX_F32, 1);
    ck_ok(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 0, x, 1, NULL, 1, r, 0, NULL, NULL));
    float *h = tread(r);
    ck_assert(h[0] == 0.0f);
    free(h);
    ocx_buffer_destroy(r);
    ocx_buffer_destroy(x);
}
END_TEST

START_TEST(test_bad_arguments)
{
    ocx_buffer *x = tbuffer(OCX_F32, 10, NULL), *u = tbuffer(OCX_U32, 10, NULL), *r = tpoisoned(OCX_F32, 1);
    ocx_buffer *ri = tpoisoned(OCX_U32, 1), *r0 = tbuffer(OCX_F32, 0, NULL), *h = tbuffer(OCX_F16, 10, NULL);
    ck_ok(ocx_fill(tctx, NULL, 10, 1.0, x, 1, 0, NULL, NULL));
    double v;
    size_t i;
    ocx_event ev = (ocx_event)(uintptr_t)1;
    ck_status(ocx_reduce(NULL, NULL, OCX_REDUCE_SUM, 10, x, 1, NULL, 1, r, 0, NULL, &ev), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(ev);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 10, NULL, 1, NULL, 1, r, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 10, x, 1, NULL, 1, NULL, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_reduce(tctx, NULL, (ocx_reduce_op)8, 10, x, 1, NULL, 1, r, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_reduce(tctx, NULL, (ocx_reduce_op)-1, 10, x, 1, NULL, 1, r, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 10, u, 1, NULL, 1, r, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_DOT, 10, x, 1, NULL, 1, r, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_DOT, 10, x, 1, h, 1, r, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 11, x, 1, NULL, 1, r, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 4, x, 4, NULL, 1, r, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 4, x, 0, NULL, 1, r, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_DOT, 6, x, 1, x, 2, r, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 10, x, 1, NULL, 1, ri, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_ARGMAX, 10, x, 1, NULL, 1, r, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 10, h, 1, NULL, 1, ri, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 10, x, 1, NULL, 1, r0, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 10, x, 1, NULL, 1, x, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 10, x, 1, NULL, 1, r, 1, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_reduce_host(tctx, NULL, OCX_REDUCE_SUM, 10, x, 1, NULL, 1, NULL, &i, 0, NULL),
              OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_reduce_host(tctx, NULL, OCX_REDUCE_MAX, 11, x, 1, NULL, 1, &v, NULL, 0, NULL), OCX_ERR_OUT_OF_RANGE);
    /* A developer's override that names no parameter fails every call that runs a kernel, naming
     * the variable; a sum of 0 elements runs one too (it writes its 0). */
    setenv("OCX_REDUCE_PARAMS", "NOPE=1", 1);
    const ocx_status some = ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 10, x, 1, NULL, 1, r, 0, NULL, NULL);
    const int named = strstr(ocx_last_error(), "OCX_REDUCE_PARAMS") != NULL;
    const ocx_status none = ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, 0, x, 1, NULL, 1, r, 0, NULL, NULL);
    unsetenv("OCX_REDUCE_PARAMS"); /* before the assertions: the suite does not fork */
    ck_assert_int_eq(some, OCX_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(none, OCX_ERR_INVALID_ARGUMENT);
    ck_assert(named);
    /* the result buffer was never touched */
    float *hr = tread(r);
    uint32_t *hri = tread(ri);
    ck_assert(isnan(hr[0]) && hri[0] == 0xdeadbeefu);
    free(hr);
    free(hri);
    /* argmin with only the index wanted */
    i = 99;
    ck_ok(ocx_reduce_host(tctx, NULL, OCX_REDUCE_ARGMIN, 10, x, 1, NULL, 1, NULL, &i, 0, NULL));
    ck_assert_uint_eq(i, 0);
    ocx_buffer *bufs[] = {x, u, r, ri, r0, h};
    for (size_t k = 0; k < 6; k++) ocx_buffer_destroy(bufs[k]);
}
END_TEST

/* Device results chain across streams through events without blocking the host: a reduction on s
 * (held by a gate until everything is queued), a second on the default stream behind the first's
 * event, and on a third stream a copy of each result behind that reduction's event alone. Over 10^6
 * elements each takes two launches, and its event must be the second's: behind the first's, the
 * copy ran before the result was written (8 rounds in 8, where a host-side wait had hidden it).
 * Exact integer data, several rounds. */
START_TEST(test_async_chain)
{
    const size_t n = 1000003;
    float *hx = malloc(n * sizeof *hx);
    ck_assert_ptr_nonnull(hx);
    uint64_t seed = 11;
    trand_ints(&seed, OCX_F32, hx, NULL, n, 3);
    const double want_asum = reference(1, OCX_F32, n, hx, 1, NULL, 1, NULL, NULL);
    const double want_max = reference(5, OCX_F32, n, hx, 1, NULL, 1, NULL, NULL);
    ocx_buffer *x = tbuffer(OCX_F32, n, hx);
    ocx_stream *s = NULL, *s2 = NULL;
    ck_ok(ocx_stream_create(tctx, &s));
    ck_ok(ocx_stream_create(tctx, &s2));
    for (int round = 0; round < 4; round++) {
        ocx_buffer *r = tpoisoned(OCX_F32, 2), *d = tpoisoned(OCX_F32, 2), *r0 = NULL, *r1 = NULL, *d0 = NULL,
                   *d1 = NULL;
        ck_ok(ocx_buffer_view(r, 0, 1, &r0));
        ck_ok(ocx_buffer_view(r, 1, 1, &r1));
        ck_ok(ocx_buffer_view(d, 0, 1, &d0));
        ck_ok(ocx_buffer_view(d, 1, 1, &d1));
        cl_event gate = tuser_event();
        ocx_event e1 = NULL, e2 = NULL, c1 = NULL, c2 = NULL;
        ocx_status st = ocx_reduce(tctx, s, OCX_REDUCE_ASUM, n, x, 1, NULL, 1, r0, 1, &gate, &e1);
        if (st == OCX_OK) st = ocx_reduce(tctx, NULL, OCX_REDUCE_MAX, n, x, 1, NULL, 1, r1, 1, &e1, &e2);
        if (st == OCX_OK) st = ocx_copy(tctx, s2, 1, r0, 1, d0, 1, 1, &e1, &c1);
        if (st == OCX_OK) st = ocx_copy(tctx, s2, 1, r1, 1, d1, 1, 1, &e2, &c2);
        clSetUserEventStatus(gate, CL_COMPLETE);
        ck_ok(st);
        float out[2];
        ck_ok(ocx_buffer_read(tctx, s2, d, 0, 2, out, 1, &c2, NULL));
        ck_assert_msg(out[0] == want_asum && out[1] == want_max, "round %d: asum %g (want %g), max %g (want %g)",
                      round, out[0], want_asum, out[1], want_max);
        ck_ok(ocx_stream_finish(tctx, s));
        ck_ok(ocx_stream_finish(tctx, NULL));
        ocx_event e[] = {e1, e2, c1, c2};
        for (int i = 0; i < 4; i++) ocx_event_release(e[i]);
        clReleaseEvent(gate);
        ocx_buffer *bufs[] = {r0, r1, d0, d1, r, d};
        for (int i = 0; i < 6; i++) ocx_buffer_destroy(bufs[i]);
    }
    ocx_stream_destroy(s);
    ocx_stream_destroy(s2);
    ocx_buffer_destroy(x);
    free(hx);
}
END_TEST

/* A stream keeps one scratch buffer for the partials: reductions queued back to back, the second
 * large enough to make it grow while the first is still pending, each find their own partials. */
START_TEST(test_scratch_reuse)
{
    const size_t ns[] = {37, 3000017, 1001, 2000003};
    float *hx = malloc(3000017 * sizeof *hx);
    ck_assert_ptr_nonnull(hx);
    uint64_t seed = 12;
    trand_ints(&seed, OCX_F32, hx, NULL, 3000017, 3); /* exact sums: a result from other partials shows */
    ocx_buffer *x = tbuffer(OCX_F32, 3000017, hx), *r = tpoisoned(OCX_F32, 4);
    ocx_stream *s = NULL;
    ck_ok(ocx_stream_create(tctx, &s));
    ocx_buffer *views[4];
    for (int i = 0; i < 4; i++) {
        ck_ok(ocx_buffer_view(r, (size_t)i, 1, &views[i]));
        ck_ok(ocx_reduce(tctx, s, i % 2 ? OCX_REDUCE_SUM : OCX_REDUCE_ASUM, ns[i], x, 1, NULL, 1, views[i], 0, NULL,
                         NULL));
    }
    float out[4];
    ck_ok(ocx_stream_finish(tctx, s));
    ck_ok(ocx_buffer_read(tctx, NULL, r, 0, 4, out, 0, NULL, NULL));
    for (int i = 0; i < 4; i++) {
        const double want = reference(i % 2 ? 0 : 1, OCX_F32, ns[i], hx, 1, NULL, 1, NULL, NULL);
        ck_assert_msg(out[i] == want, "reduction %d: %.9g, want %.9g", i, out[i], want);
        ocx_buffer_destroy(views[i]);
    }
    ocx_stream_destroy(s);
    ocx_buffer_destroy(r);
    ocx_buffer_destroy(x);
    free(hx);
}
END_TEST

/* OCX_LIMIT_SCRATCH=N fails a scratch buffer above N bytes, and only such a one: a reduction whose
 * need is within N ran out of memory after a smaller one on the stream, whose buffer the next
 * request doubled past N. The needs come from ocx_stream_trim, which says what each reduction's
 * stream held; the case arises where a small sum's need doubled exceeds a large one's (a device of
 * few compute units: one group each, here). */
START_TEST(test_scratch_limit_counts_the_request)
{
    setenv("OCX_REDUCE_PARAMS", "GROUPS_PER_CU=1", 1);
    const size_t big = 200003;
    float *hx = malloc(big * sizeof *hx);
    ck_assert_ptr_nonnull(hx);
    for (size_t i = 0; i < big; i++) hx[i] = (float)(i % 7) - 3.0f;
    ocx_buffer *x = tbuffer(OCX_F32, big, hx);
    ocx_stream *s = NULL;
    ck_ok(ocx_stream_create(tctx, &s));
    double v = 0, want_big = 0;
    for (size_t i = 0; i < big; i++) want_big += hx[i];
    size_t need[2];
    const size_t n[2] = {10, big};
    for (int i = 0; i < 2; i++) {
        ck_ok(ocx_reduce_host(tctx, s, OCX_REDUCE_SUM, n[i], x, 1, NULL, 1, &v, NULL, 0, NULL));
        ck_ok(ocx_stream_trim(tctx, s, &need[i]));
    }
    if (need[0] < need[1] && 2 * need[0] > need[1]) {
        char limit[32];
        snprintf(limit, sizeof limit, "%zu", need[1]);
        setenv("OCX_LIMIT_SCRATCH", limit, 1);
        ck_ok(ocx_reduce_host(tctx, s, OCX_REDUCE_SUM, n[0], x, 1, NULL, 1, &v, NULL, 0, NULL));
        ck_ok(ocx_reduce_host(tctx, s, OCX_REDUCE_SUM, n[1], x, 1, NULL, 1, &v, NULL, 0, NULL));
        ck_assert_double_eq(v, want_big);
        unsetenv("OCX_LIMIT_SCRATCH");
    } else {
        fprintf(stderr, "test_scratch_limit_counts_the_request: needs %zu and %zu bytes here, not the case it "
                        "checks; nothing checked\n", need[0], need[1]);
    }
    unsetenv("OCX_REDUCE_PARAMS");
    ocx_stream_destroy(s);
    ocx_buffer_destroy(x);
    free(hx);
}
END_TEST

/* Two host threads reducing on the same (default) stream, queueing without waiting so that their
 * launches interleave: each result is its own. (Without the stream's lock around a reduction's
 * launches, one thread's partials overwrite the other's between its two passes.) */
#define SHARED_RUNS 150
typedef struct shared_job {
    ocx_buffer *x, *r, *views[SHARED_RUNS];
    size_t n;
    float want;
    int bad;
} shared_job;

static void *shared_worker(void *arg)
{
    shared_job *j = arg;
    for (int i = 0; i < SHARED_RUNS; i++)
        if (ocx_reduce(tctx, NULL, OCX_REDUCE_SUM, j->n, j->x, 1, NULL, 1, j->views[i], 0, NULL, NULL) != OCX_OK) j->bad++;
    double v = 0;
    if (ocx_reduce_host(tctx, NULL, OCX_REDUCE_SUM, j->n, j->x, 1, NULL, 1, &v, NULL, 0, NULL) != OCX_OK ||
        v != j->want)
        j->bad++;
    return NULL;
}

START_TEST(test_shared_stream_threads)
{
    /* Small integers: every order of summation gives the exact result. */
    static float h1[5003], h2[70001], out[SHARED_RUNS];
    for (size_t i = 0; i < 5003; i++) h1[i] = (float)(i % 7 + 1);
    for (size_t i = 0; i < 70001; i++) h2[i] = -(float)(i % 5 + 1);
    shared_job j[2] = {{tbuffer(OCX_F32, 5003, h1), tpoisoned(OCX_F32, SHARED_RUNS), {NULL}, 5003, 0, 0},
                       {tbuffer(OCX_F32, 70001, h2), tpoisoned(OCX_F32, SHARED_RUNS), {NULL}, 70001, 0, 0}};
    for (size_t i = 0; i < 5003; i++) j[0].want += h1[i];
    for (size_t i = 0; i < 70001; i++) j[1].want += h2[i];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < SHARED_RUNS; i++) ck_ok(ocx_buffer_view(j[k].r, (size_t)i, 1, &j[k].views[i]));
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, shared_worker, &j[1]), 0);
    shared_worker(&j[0]);
    pthread_join(t, NULL);
    ck_ok(ocx_stream_finish(tctx, NULL));
    for (int k = 0; k < 2; k++) {
        ck_ok(ocx_buffer_read(tctx, NULL, j[k].r, 0, SHARED_RUNS, out, 0, NULL, NULL));
        for (int i = 0; i < SHARED_RUNS; i++) j[k].bad += out[i] != j[k].want;
        for (int i = 0; i < SHARED_RUNS; i++) ocx_buffer_destroy(j[k].views[i]);
        ocx_buffer_destroy(j[k].r);
        ocx_buffer_destroy(j[k].x);
    }
    ck_assert_msg(j[0].bad == 0 && j[1].bad == 0, "wrong or failed results: %d and %d of %d", j[0].bad, j[1].bad,
                  SHARED_RUNS + 1);
}
END_TEST

START_TEST(test_limits)
{
    ck_assert(tinfo.max_work_group_size <= 64 && !tinfo.has_fp16 && !tinfo.has_fp64);
    check_all_exact(OCX_F32, 1000003, 1, 1, 21);
    check_all_exact(OCX_F16, 100003, 1, 1, 22); /* f16 storage needs no cl_khr_fp16 */
    check_all_exact(OCX_F32, 1001, 3, 2, 23);
    ocx_buffer *x = NULL;
    ck_status(ocx_buffer_create(tctx, OCX_F64, 10, &x), OCX_ERR_UNSUPPORTED);
}
END_TEST

int main(void)
{
    /* One context per test case (program builds are the slow part on PoCL): no fork per test. */
    setenv("CK_FORK", "no", 0);
    Suite *s = suite_create("reduce");
    TCase *tc = tcase_create("core");
    twatchdog(tc, 600);
    tcase_add_unchecked_fixture(tc, tctx_setup, tctx_teardown);
    tcase_add_loop_test(tc, test_lengths, 0, 3);
    tcase_add_loop_test(tc, test_over_2_24, 0, 3);
    tcase_add_loop_test(tc, test_strides, 0, 3);
    tcase_add_loop_test(tc, test_exact_integers, 0, 3);
    tcase_add_loop_test(tc, test_nan_inf_ties, 0, 3);
    tcase_add_loop_test(tc, test_accumulators, 0, 3 * NACC);
    tcase_add_test(tc, test_random_params);
    tcase_add_loop_test(tc, test_one_launch, 0, 9);
    tcase_add_loop_test(tc, test_fused, 0, 3 * NFUSE);
    tcase_add_test(tc, test_fused_refused);
    tcase_add_test(tc, test_fused_not_refused);
    tcase_add_test(tc, test_fused_one_program);
    tcase_add_loop_test(tc, test_arg_first_index, 0, 3);
    tcase_add_test(tc, test_groups_per_cu);
    tcase_add_loop_test(tc, test_nrm2_scaling, 0, 3);
    tcase_add_loop_test(tc, test_nrm2_flush_to_zero, 0, 3);
    tcase_add_loop_test(tc, test_nrm2_mixed, 0, 3);
    tcase_add_test(tc, test_sum_1e8);
    tcase_add_test(tc, test_f16_squares);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_async_chain);
    tcase_add_test(tc, test_scratch_reuse);
    tcase_add_test(tc, test_scratch_limit_counts_the_request);
    tcase_add_test(tc, test_shared_stream_threads);
    suite_add_tcase(s, tc);
    tadd_sim_case(s, test_sim);
    TCase *tl = tcase_create("limits");
    twatchdog(tl, 600);
    tcase_add_unchecked_fixture(tl, tlimits_setup, tlimits_teardown);
    tcase_add_test(tl, test_limits);
    suite_add_tcase(s, tl);
    return trun(s);
}
