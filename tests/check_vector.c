/* check_vector.c — element-wise operations against double-precision host references: every
 * operation × dtype on random non-zero data, lengths that nothing divides (and one over 2^24),
 * views and strides, NaN/inf, f16 rounding through ocx_copy, aliasing rules, bad arguments, and
 * the simulated-limit mode. Outputs start poisoned (NaN), so an element never written shows. */
#include "testutil.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ocx_dtype dtypes[3] = {OCX_F32, OCX_F16, OCX_F64};
enum { ADD, SUB, MUL, DIV, AXPY, AXPBY, AXPBY0, SCALE, FILL, COPY, NOPS };
static const char *const names[NOPS] = {"add", "sub", "mul", "div", "axpy", "axpby", "axpby(b=0)", "scale", "fill", "copy"};
/* Scalars no binary fraction holds: an f64 call handed them as floats (1e-8 off) fails. */
static const double ALPHA = -1.3, BETA = 0.7;

/* What element i of the output should be (x, y: inputs; out0: the output's value before). */
static double expect(int op, double x, double y, double out0)
{
    switch (op) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case DIV: return x / y;
    case AXPY: return ALPHA * x + out0;
    case AXPBY: return ALPHA * x + BETA * out0;
    case AXPBY0: return ALPHA * x;
    case SCALE: return ALPHA * out0;
    case FILL: return ALPHA;
    default: return x;
    }
}

/* Allowed error: none for add, sub, mul, fill and copy, whose one rounding to the dtype (to nearest
 * even) the reference takes too (from double, which holds their exact results, then f32 before f16:
 * both innocuous); else one rounding to the dtype plus the arithmetic's own (f32 division may be 2.5
 * ulp in OpenCL; a*x+y may or may not be fused; f32 and f16 take the scalars as floats). */
static double tol(int op, ocx_dtype dt, double x, double y, double out0, double want)
{
    if (op == ADD || op == SUB || op == MUL || op == FILL || op == COPY) return 0;
    double u = tulp(dt), us = dt == OCX_F64 ? tulp(OCX_F64) : tulp(OCX_F32);
    double m = fabs(want);
    if (op == DIV && dt != OCX_F64) m += 3 * us * fabs(want) / u;
    if (op == AXPY || op == AXPBY) m = fabs(ALPHA * x) + fabs((op == AXPY ? 1 : BETA) * out0) + fabs(want);
    (void)y;
    return 2 * u * m + (dt == OCX_F16 ? 0x1p-24 : dt == OCX_F32 ? 0x1p-149 : 0);
}

/* Random non-zero data; long arrays repeat a block of 2^20 + 7 random values (starting where the seed
 * says), so that the host side of the 2^24 tests stays cheap. */
static void fill_random(uint64_t *seed, ocx_dtype dt, void *host, size_t n)
{
    const size_t block = ((size_t)1 << 20) + 7, es = ocx_dtype_size(dt);
    if (n <= 2 * block) {
        trand_fill(seed, dt, host, NULL, n, -4, 4);
        return;
    }
    static void *pool[3];
    if (!pool[dt]) {
        uint64_t s = 0x5eed + dt;
        pool[dt] = malloc(2 * block * es);
        ck_assert_ptr_nonnull(pool[dt]);
        trand_fill(&s, dt, pool[dt], NULL, 2 * block, -4, 4);
    }
    size_t start = trand_next(seed) % block;
    for (size_t i = 0; i < n; i += block) {
        size_t k = n - i < block ? n - i : block;
        memcpy((char *)host + i * es, (char *)pool[dt] + start * es, k * es);
    }
}

static int binary(int op) { return op <= DIV; }

/* Runs op on n elements of views (x at offset ox, y at offset oy, the output at oz: a binary op's z,
 * the others' y, where oz must be oy; strides incx/incy where the op takes them) and checks every
 * element of the parent buffers: written ones against the reference, the others unchanged. */
static void check_op_at3(int op, ocx_dtype dt, size_t n, size_t incx, size_t incy, uint64_t seed, size_t ox, size_t oy,
                         size_t oz)
{
    if (binary(op) || op == COPY) incx = op == COPY ? incx : 1;
    if (binary(op)) incy = 1;
    ck_assert(binary(op) || oz == oy);
    size_t es = ocx_dtype_size(dt), nx = n ? (n - 1) * incx + 1 : 0, ny = n ? (n - 1) * incy + 1 : 0;
    size_t px = nx + ox + 2, py = ny + (oy > oz ? oy : oz) + 2;
    void *hx = malloc(px * es + 1), *hy = malloc(py * es + 1), *ho = malloc(py * es + 1);
    ck_assert(hx && hy && ho);
    fill_random(&seed, dt, hx, px);
    fill_random(&seed, dt, hy, py);
    fill_random(&seed, dt, ho, py);
    ocx_buffer *bx = tbuffer(dt, px, hx), *by = tbuffer(dt, py, hy), *x = NULL, *y = NULL, *o = NULL, *bo;
    /* binary ops write a poisoned z; the others update y (or x) in place */
    bo = binary(op) ? tpoisoned(dt, py) : tbuffer(dt, py, ho);
    if (op == AXPBY0) { /* beta = 0: NaN in y must not leak */
        for (size_t i = 0; i < py; i++) tset(dt, ho, i, NAN);
        ck_ok(ocx_buffer_write(tctx, NULL, bo, 0, py, ho, 0, NULL, NULL));
    }
    ck_ok(ocx_buffer_view(bx, ox, nx, &x));
    ck_ok(ocx_buffer_view(by, oy, ny, &y));
    ck_ok(ocx_buffer_view(bo, oz, ny, &o));
    ocx_event ev = NULL;
    ocx_status st = OCX_ERR_INTERNAL;
    switch (op) {
    case ADD: st = ocx_add(tctx, NULL, n, x, y, o, 0, NULL, &ev); break;
    case SUB: st = ocx_sub(tctx, NULL, n, x, y, o, 0, NULL, &ev); break;
    case MUL: st = ocx_mul(tctx, NULL, n, x, y, o, 0, NULL, &ev); break;
    case DIV: st = ocx_div(tctx, NULL, n, x, y, o, 0, NULL, &ev); break;
    case AXPY: st = ocx_axpy(tctx, NULL, n, ALPHA, x, incx, o, incy, 0, NULL, &ev); break;
    case AXPBY: st = ocx_axpby(tctx, NULL, n, ALPHA, x, incx, BETA, o, incy, 0, NULL, &ev); break;
    case AXPBY0: st = ocx_axpby(tctx, NULL, n, ALPHA, x, incx, 0.0, o, incy, 0, NULL, &ev); break;
    case SCALE: st = ocx_scale(tctx, NULL, n, ALPHA, o, incy, 0, NULL, &ev); break;
    case FILL: st = ocx_fill(tctx, NULL, n, ALPHA, o, incy, 0, NULL, &ev); break;
    case COPY: st = ocx_copy(tctx, NULL, n, x, incx, o, incy, 0, NULL, &ev); break;
    }
    ck_assert_msg(st == OCX_OK, "%s %s n=%zu: %s", names[op], ocx_dtype_name(dt), n, ocx_last_error());
    ck_assert_ptr_nonnull(ev); /* also for n = 0 */
    ck_ok(ocx_event_wait(1, &ev));
    ocx_event_release(ev);
    void *got = tread(bo);
    size_t bad = 0, first = 0;
    for (size_t j = 0; j < py; j++) {
        double g = tvalue(dt, got, j), before = binary(op) ? NAN : tvalue(dt, ho, j);
        int written = j >= oz && j < oz + ny && (j - oz) % incy == 0;
        int ok;
        if (!written) {
            ok = (isnan(g) && isnan(before)) || g == before;
        } else {
            size_t i = (j - oz) / incy;
            double xv = tvalue(dt, hx, ox + i * incx), yv = binary(op) ? tvalue(dt, hy, oy + i) : 0;
            double want = expect(op, xv, yv, before);
            double w = dt == OCX_F32 ? (double)(float)want : dt == OCX_F16 ? (double)ocx_half_to_float(ocx_half_from_float((float)want)) : want;
            ok = fabs(g - w) <= tol(op, dt, xv, yv, before, want) || g == w;
        }
        if (!ok && bad++ == 0) first = j;
    }
    if (bad) {
        size_t j = first;
        ck_abort_msg("%s %s n=%zu incx=%zu incy=%zu offsets %zu, %zu, %zu: %zu wrong; first at %zu: %.10g", names[op],
                     ocx_dtype_name(dt), n, incx, incy, ox, oy, oz, bad, j, tvalue(dt, got, j));
    }
    free(got);
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);
    ocx_buffer_destroy(o);
    ocx_buffer_destroy(bx);
    ocx_buffer_destroy(by);
    ocx_buffer_destroy(bo);
    free(hx);
    free(hy);
    free(ho);
}

static void check_op_at(int op, ocx_dtype dt, size_t n, size_t incx, size_t incy, uint64_t seed, size_t ox, size_t oy)
{
    check_op_at3(op, dt, n, incx, incy, seed, ox, oy, oy);
}

/* Misaligned views: x at element 3, y and the output at element 2. */
static void check_op(int op, ocx_dtype dt, size_t n, size_t incx, size_t incy, uint64_t seed)
{
    check_op_at(op, dt, n, incx, incy, seed, 3, 2);
}

static const size_t lengths[] = {0, 1, 2, 3, 31, 1000003};

START_TEST(test_lengths)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++)
        for (int op = 0; op < NOPS; op++) check_op(op, dt, lengths[li], 1, 1, 100 * li + op);
}
END_TEST

START_TEST(test_over_2_24)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    for (int op = 0; op < NOPS; op++) check_op(op, dt, ((size_t)1 << 24) + 3, 1, 1, 7 + op);
}
END_TEST

/* The kernels take whole-vector loads where every pointer is a multiple of the vector size, and
 * vloadN otherwise: offsets 0 and 32 elements (aligned for any vector width) and mixes of aligned
 * and misaligned operands (8 elements: aligned for narrow vectors only), at lengths with tails. */
START_TEST(test_alignment)
{
    static const size_t offs[][2] = {{0, 0}, {32, 32}, {0, 32}, {0, 1}, {1, 0}, {8, 0}, {0, 8}, {8, 8}, {16, 4}};
    static const size_t ns[] = {1, 17, 100003};
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    for (size_t k = 0; k < sizeof offs / sizeof *offs; k++)
        for (size_t li = 0; li < sizeof ns / sizeof *ns; li++)
            for (int op = 0; op < NOPS; op++) check_op_at(op, dt, ns[li], 1, 1, 31 * k + 7 * li + op, offs[k][0], offs[k][1]);
    /* a binary op's y and z apart in alignment, each alone misaligned (x, y and z had always
     * shared y's offset with z: a kernel that tested only x and y's alignment passed) */
    static const size_t offs3[][3] = {{0, 0, 1}, {0, 1, 0}, {32, 0, 8}, {0, 8, 32}};
    for (size_t k = 0; k < sizeof offs3 / sizeof *offs3; k++)
        for (size_t li = 0; li < sizeof ns / sizeof *ns; li++)
            for (int op = 0; op <= DIV; op++)
                check_op_at3(op, dt, ns[li], 1, 1, 900 + 31 * k + 7 * li + op, offs3[k][0], offs3[k][1], offs3[k][2]);
}
END_TEST

START_TEST(test_strides)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    for (int op = AXPY; op < NOPS; op++) {
        check_op(op, dt, 31, 3, 2, 3 + op);
        check_op(op, dt, 10007, 2, 5, 4 + op);
        check_op(op, dt, 1001, 1, 3, 5 + op);
        check_op(op, dt, 1001, 4, 1, 6 + op);
    }
}
END_TEST

/* Launch shapes other than the device's defaults (OCX_VECTOR_PARAMS): several vectors per
 * work-item a global size apart (WPT), narrow vectors, the grid-stride loop; lengths with tails,
 * aligned and misaligned views, strides. Under WPT=8,VW=4,WG=64 the aligned views of 204800
 * elements fill every group (100 of 64 items, 8 vectors each), so all of them take the kernels'
 * loop without bounds checks; 204796 leaves the last group one vector short, so it must take the
 * checked loop (the guard elements past the end are checked). */
START_TEST(test_launch_shapes)
{
    static const char *shapes[] = {"WPT=4", "WPT=8,VW=4,WG=64", "WPT=1,VW=16", "GRID=2,GROUPS_PER_CU=1,WG=32",
                                   "GRID=2,VW=8,GROUPS_PER_CU=1,WG=32"};
    static const size_t ns[] = {1, 31, 1003, 100003, 204796, 204800};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        setenv("OCX_VECTOR_PARAMS", shapes[s], 1);
        for (size_t li = 0; li < sizeof ns / sizeof *ns; li++)
            for (int op = 0; op < NOPS; op++) {
                check_op_at(op, OCX_F32, ns[li], 1, 1, 300 + 17 * s + 5 * li + op, 0, 0);
                check_op(op, OCX_F32, ns[li], 1, 1, 400 + 17 * s + 5 * li + op);
            }
        for (int op = AXPY; op < NOPS; op++) check_op(op, OCX_F32, 1001, 3, 2, 500 + 17 * s + op);
        check_op(ADD, OCX_F16, 100003, 1, 1, 600 + s);
        /* f16 at element offsets that leave the vectors unaligned: fill crashed in PoCL with GRID=2
         * and VW >= 8 (cl/vector.cl) */
        if (strncmp(shapes[s], "GRID=2", 6) == 0)
            for (int op = 0; op < NOPS; op++) check_op_at(op, OCX_F16, 1003, 1, 1, 700 + 17 * s + op, 1, 3);
    }
    unsetenv("OCX_VECTOR_PARAMS");
}
END_TEST

/* Whether the last call took non-temporal stores, as ocx_last_params() reports it. */
static int took_nt(const char *what)
{
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    ck_assert_msg(!strcmp(info.family, "vector"), "%s: the last call was %s's", what, info.family);
    return strstr(info.params, "NT=1") != NULL;
}

/* Non-temporal stores (NT=1, set here on any device) are taken by add, sub, mul, div, fill and
 * copy of one dtype, contiguous, into memory apart from their inputs, for a result of half the
 * device's global memory cache or 64 MiB, whichever is less, or more; never for f16, nor where no
 * cache is reported. ocx_last_params() says NT=0 where none were taken. At the threshold and one
 * element below it the add is checked element by element, the fill and copy on their ends. */
START_TEST(test_nt_threshold)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    const uint64_t cache = tinfo.global_mem_cache_bytes, cap = (uint64_t)64 << 20;
    const uint64_t bytes = cache / 2 < cap ? cache / 2 : cap;
    const size_t es = ocx_dtype_size(dt), from = bytes ? (size_t)((bytes + es - 1) / es) : 4096;
    const int takes = dt != OCX_F16 && cache != 0;
    setenv("OCX_VECTOR_PARAMS", "NT=1", 1);
    check_op_at(ADD, dt, from, 1, 1, 90, 0, 0);
    const int add_at = took_nt("add");
    if (dt == OCX_F16) {
        unsetenv("OCX_VECTOR_PARAMS"); /* before the assertions: the suite does not fork */
        ck_assert_msg(!add_at, "f16 add of %zu took NT", from);
        return;
    }
    check_op_at(ADD, dt, from - 1, 1, 1, 91, 0, 0);
    const int add_below = took_nt("add below");
    ocx_buffer *x = tpoisoned(dt, from), *y = tpoisoned(dt, from), *w = tpoisoned(dt, 2 * from - 1);
    const ocx_dtype other = dt == OCX_F32 ? OCX_F16 : OCX_F32; /* a conversion reads as it writes */
    ocx_buffer *v = tpoisoned(other, from);
    int took[6];
    ck_ok(ocx_fill(tctx, NULL, from, 1.5, x, 1, 0, NULL, NULL));
    took[0] = took_nt("fill");
    ck_ok(ocx_copy(tctx, NULL, from, x, 1, y, 1, 0, NULL, NULL));
    took[1] = took_nt("copy");
    ck_ok(ocx_copy(tctx, NULL, from, x, 1, v, 1, 0, NULL, NULL));
    took[2] = took_nt("converting copy");
    ck_ok(ocx_add(tctx, NULL, from, x, y, y, 0, NULL, NULL)); /* in place: y = 3 */
    took[3] = took_nt("in-place add");
    ck_ok(ocx_axpy(tctx, NULL, from, 2.0, x, 1, y, 1, 0, NULL, NULL)); /* reads y: y = 6 */
    took[4] = took_nt("axpy");
    ck_ok(ocx_fill(tctx, NULL, from, 2.5, w, 2, 0, NULL, NULL)); /* strided */
    took[5] = took_nt("strided fill");
    unsetenv("OCX_VECTOR_PARAMS");
    ck_assert_msg(add_at == takes, "add of %zu %s (cache %llu bytes): NT=%d", from, ocx_dtype_name(dt),
                  (unsigned long long)cache, add_at);
    ck_assert_msg(!add_below, "add of %zu %s took NT", from - 1, ocx_dtype_name(dt));
    ck_assert_msg(took[0] == takes && took[1] == takes, "fill, copy of %zu: NT=%d, %d", from, took[0], took[1]);
    ck_assert_msg(!took[2] && !took[3] && !took[4] && !took[5],
                  "converting copy, in-place add, axpy, strided fill: NT=%d %d %d %d", took[2], took[3], took[4],
                  took[5]);
    ocx_buffer *bufs[] = {y, v, w};
    const size_t last[] = {from - 1, from - 1, 2 * from - 2};
    const double want[] = {6, 1.5, 2.5};
    for (int b = 0; b < 3; b++) {
        void *h = tread(bufs[b]);
        const ocx_dtype bt = b == 1 ? other : dt;
        const double first = tvalue(bt, h, 0), end = tvalue(bt, h, last[b]), gap = b == 2 ? tvalue(bt, h, 1) : NAN;
        free(h);
        ck_assert_msg(first == want[b] && end == want[b], "result %d: %g ... %g, want %g", b, first, end, want[b]);
        ck_assert_msg(b != 2 || isnan(gap), "the strided fill wrote element 1: %g", gap);
    }
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);
    ocx_buffer_destroy(v);
    ocx_buffer_destroy(w);
}
END_TEST

/* The WG the last call ran, as ocx_last_params() reports it. */
static int last_wg(void)
{
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    const char *w = strstr(info.params, "WG=");
    ck_assert_msg(w != NULL && !strcmp(info.family, "vector"), "last params: %s %s", info.family, info.params);
    return atoi(w + 3);
}

/* The group SPREAD=1 makes of 512 items for `per` work-items on `units` compute units (0: off). */
static size_t spread_wg(int on, size_t per, size_t units)
{
    size_t wg = 512;
    while (on && wg / 2 >= 32 && (per + wg - 1) / wg < units) wg /= 2;
    return wg;
}

/* SPREAD=1 (set here on any device): a call that would leave a compute unit without a group of WG
 * items runs in groups halved until each unit has one, down to 32 items; ocx_last_params() reports
 * the WG it ran. SPREAD=0 keeps WG. Each call is checked element by element (check_op_at), at
 * lengths around the points where the group size changes. */
START_TEST(test_spread)
{
    const size_t units = tinfo.compute_units;
    static const char *const sets[] = {"SPREAD=1,WG=512,VW=16,WPT=1", "SPREAD=1,WG=512,VW=16,WPT=2",
                                       "SPREAD=0,WG=512,VW=16"};
    for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
        setenv("OCX_VECTOR_PARAMS", sets[s], 1);
        const size_t wpt = strstr(sets[s], "WPT=2") ? 2 : 1;
        /* lengths (f32, 16 to a vector; the tail's elements on the first items) whose work is
         * units x 32, x 64, x 512 vectors and one more */
        const size_t ns[] = {1, 1000, 16 * 32 * wpt * units, 16 * 32 * wpt * units + 1, 16 * 64 * wpt * units + 16,
                             16 * 512 * wpt * units, 16 * 512 * wpt * units + 1};
        for (size_t li = 0; li < sizeof ns / sizeof *ns; li++) {
            const size_t n = ns[li], vectors = n / 16 > n % 16 ? n / 16 : n % 16;
            const size_t want = spread_wg(s < 2, (vectors + wpt - 1) / wpt, units);
            const size_t want_strided = spread_wg(s < 2, (n + wpt - 1) / wpt, units); /* an item an element */
            check_op_at(AXPY, OCX_F32, n, 1, 1, 1200 + 11 * s + li, 0, 0);
            const int axpy_wg = last_wg();
            check_op_at(COPY, OCX_F32, n, 1, 1, 1300 + 11 * s + li, 0, 0);
            const int copy_wg = last_wg();
            check_op_at(AXPY, OCX_F32, n, 3, 2, 1400 + 11 * s + li, 0, 0);
            const int strided_wg = last_wg();
            if ((size_t)axpy_wg != want || (size_t)copy_wg != want || (size_t)strided_wg != want_strided) {
                unsetenv("OCX_VECTOR_PARAMS"); /* before the assertion: the suite does not fork */
                ck_abort_msg("%s, n = %zu, %zu units: WG %d, %d, strided %d; want %zu, %zu", sets[s], n, units, axpy_wg,
                             copy_wg, strided_wg, want, want_strided);
            }
        }
    }
    unsetenv("OCX_VECTOR_PARAMS");
}
END_TEST

/* Launch shapes drawn from the family's own table (trandom_params: the space ocx-tune searches),
 * beyond test_launch_shapes' hand-picked ones: every operation over lengths with tails at
 * misaligned views, and the strided ones. A failure's seed and set are on stderr before it. */
static void random_params_body(uint64_t seed, void *user)
{
    static const size_t ns[] = {1, 31, 1003, 100003};
    for (size_t li = 0; li < sizeof ns / sizeof *ns; li++)
        for (int op = 0; op < NOPS; op++) check_op(op, OCX_F32, ns[li], 1, 1, seed + 31 * li + (uint64_t)op);
    for (int op = AXPY; op < NOPS; op++) check_op(op, OCX_F32, 1001, 3, 2, seed + 7 * (uint64_t)op);
}
START_TEST(test_random_params)
{
    static const char *const drawn[] = {"WG", "VW", "GROUPS_PER_CU", "GRID", "NT", "WPT", "SPREAD", NULL};
    trandom_param_runs("vector", drawn, 4, random_params_body, NULL);
}
END_TEST

/* The "sim" case: the kernels at lengths a simulator runs in seconds. tests/oclgrind.sh runs it
 * under Oclgrind, whose device is a GPU of OpenCL 1.2 (so the GPU defaults run) and which reports
 * data races, accesses out of bounds and barriers that not every work-item reaches. Every
 * operation and dtype at lengths with tails, aligned, misaligned and strided, on the defaults and
 * on launch shapes that take the kernels' other paths (several vectors a work-item, the
 * grid-stride loop, scalar lanes), then on random ones. */
static void sim_body(uint64_t seed, void *user)
{
    static const size_t ns[] = {0, 1, 3, 31, 1000, 4099};
    const int ndt = user ? *(const int *)user : 3; /* 1: f32 alone (dtypes[0]) */
    for (int d = 0; d < ndt; d++) {
        const ocx_dtype dt = dtypes[d];
        if (!tdtype_ok(dt)) continue;
        for (size_t li = 0; li < sizeof ns / sizeof *ns; li++)
            for (int op = 0; op < NOPS; op++) {
                check_op(op, dt, ns[li], 1, 1, seed + 31 * li + (uint64_t)op);
                if (ns[li] > 3) check_op_at(op, dt, ns[li], 1, 1, seed + 7 * li + (uint64_t)op, 8, 8);
            }
        for (int op = AXPY; op < NOPS; op++) check_op(op, dt, 301, 3, 2, seed + 5 * (uint64_t)op);
    }
}
START_TEST(test_sim)
{
    static const char *const shapes[] = {"WPT=4,VW=8,WG=32", "GRID=2,VW=16,GROUPS_PER_CU=1,WG=16", "VW=1,WG=64"};
    sim_body(11, NULL);
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        setenv("OCX_VECTOR_PARAMS", shapes[s], 1);
        sim_body(50 + s, NULL);
    }
    unsetenv("OCX_VECTOR_PARAMS");
    static const char *const drawn[] = {"WG", "VW", "GROUPS_PER_CU", "GRID", "WPT", "SPREAD", NULL};
    static const int f32_only = 1;
    trandom_param_runs("vector", drawn, 2, sim_body, (void *)&f32_only);
}
END_TEST

/* Conversions through ocx_copy: each pair of dtypes, random data, against the host's conversion. */
START_TEST(test_copy_convert)
{
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            ocx_dtype da = dtypes[a], db = dtypes[b];
            if (!tdtype_ok(da) || !tdtype_ok(db)) continue;
            const size_t n = 100003;
            uint64_t seed = 17 + a * 3 + b;
            void *hx = malloc(n * ocx_dtype_size(da));
            trand_fill(&seed, da, hx, NULL, n, -70000, 70000);
            for (size_t i = 0; i < n; i += 7) tset(da, hx, i, tvalue(da, hx, i) * 1e-9); /* small ones too */
            ocx_buffer *x = tbuffer(da, n, hx), *y = tpoisoned(db, n);
            ck_ok(ocx_copy(tctx, NULL, n, x, 1, y, 1, 0, NULL, NULL));
            void *hy = tread(y);
            for (size_t i = 0; i < n; i++) {
                double v = tvalue(da, hx, i), g = tvalue(db, hy, i), w;
                if (db == OCX_F16 && da == OCX_F64) w = NAN; /* checked in test_f16_edges */
                else if (db == OCX_F16) w = ocx_half_to_float(ocx_half_from_float((float)v));
                else if (db == OCX_F32) w = (float)v;
                else w = v;
                if (isnan(w)) continue;
                ck_assert_msg(g == w, "copy %s->%s [%zu]: %.17g -> %.17g, want %.17g", ocx_dtype_name(da),
                              ocx_dtype_name(db), i, v, g, w);
            }
            free(hx);
            free(hy);
            ocx_buffer_destroy(x);
            ocx_buffer_destroy(y);
        }
}
END_TEST

/* f16 rounding: ties to even at halfway points, overflow to inf, subnormals, inf/NaN, from f32 and
 * from f64 (one rounding: no double rounding through f32). */
START_TEST(test_f16_edges)
{
    static const struct { double v; uint16_t h; } cases[] = {
        {1.0, 0x3c00},           {1.0 + 0x1p-11, 0x3c00},   {1.0 + 3 * 0x1p-11, 0x3c02},
        {-(1.0 + 0x1p-11), 0xbc00}, {65504.0, 0x7bff},      {65519.0, 0x7bff},
        {65520.0, 0x7c00},       {1e6, 0x7c00},             {-1e6, 0xfc00},
        {0x1p-24, 0x0001},       {0x1p-25, 0x0000},         {0x1.8p-25, 0x0001},
        {3 * 0x1p-25, 0x0002},   {0x1p-14, 0x0400},         {0x1p-14 - 0x1p-24, 0x03ff},
        {-0.0, 0x8000},          {INFINITY, 0x7c00},        {-INFINITY, 0xfc00},
        {0x1p-26, 0x0000},       {-0x1.8p-25, 0x8001},
    };
    const size_t n = sizeof cases / sizeof *cases;
    for (int from = 0; from < 3; from += 2) { /* f32, f64 */
        ocx_dtype dt = dtypes[from];
        if (!tdtype_ok(dt)) continue;
        void *hx = malloc((n + 2) * 8);
        for (size_t i = 0; i < n; i++) tset(dt, hx, i, cases[i].v);
        tset(dt, hx, n, NAN);
        /* only f64 can hold 1 + 2^-11 + 2^-40: just above halfway, it must round up (through f32 it
         * would first become the halfway value and then round to even, down) */
        tset(dt, hx, n + 1, dt == OCX_F64 ? 1.0 + 0x1p-11 + 0x1p-40 : 1.0 + 0x1p-10);
        ocx_buffer *x = tbuffer(dt, n + 2, hx), *y = tpoisoned(OCX_F16, 2 * (n + 2));
        ck_ok(ocx_copy(tctx, NULL, n + 2, x, 1, y, 2, 0, NULL, NULL)); /* strided output */
        uint16_t *h = tread(y);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(h[2 * i] == cases[i].h, "%s %.17g -> f16 0x%04x, want 0x%04x", ocx_dtype_name(dt),
                          cases[i].v, h[2 * i], cases[i].h);
        ck_assert((h[2 * n] & 0x7c00) == 0x7c00 && (h[2 * n] & 0x3ff)); /* NaN stays NaN */
        ck_assert_uint_eq(h[2 * n + 2], 0x3c01);
        for (size_t i = 0; i < n + 2; i++) ck_assert_uint_eq(h[2 * i + 1], 0x7e00); /* gaps keep the poison */
        free(h);
        free(hx);
        ocx_buffer_destroy(x);
        ocx_buffer_destroy(y);
    }
    /* ocx_fill rounds its (double) value once to f16 too */
    ocx_buffer *f = tpoisoned(OCX_F16, 3);
    for (size_t i = 0; i <= n; i++) {
        const double v = i < n ? cases[i].v : 1.0 + 0x1p-11 + 0x1p-40;
        const uint16_t want = i < n ? cases[i].h : 0x3c01;
        ck_ok(ocx_fill(tctx, NULL, 3, v, f, 1, 0, NULL, NULL));
        uint16_t *h = tread(f);
        for (int j = 0; j < 3; j++)
            ck_assert_msg(h[j] == want, "fill f16 with %.17g: 0x%04x, want 0x%04x", v, h[j], want);
        free(h);
    }
    ocx_buffer_destroy(f);
    /* f16 arithmetic overflows to inf once, when stored; subnormal inputs are exact in f32 */
    uint16_t a[4] = {0x7bff, 0x0001, 0xfbff, 0x3c00}, b[4] = {0x7bff, 0x0001, 0xfbff, 0x7c00};
    ocx_buffer *x = tbuffer(OCX_F16, 4, a), *y = tbuffer(OCX_F16, 4, b), *z = tpoisoned(OCX_F16, 4);
    ck_ok(ocx_add(tctx, NULL, 4, x, y, z, 0, NULL, NULL));
    uint16_t *h = tread(z);
    ck_assert_uint_eq(h[0], 0x7c00);
    ck_assert_uint_eq(h[1], 0x0002);
    ck_assert_uint_eq(h[2], 0xfc00);
    ck_assert_uint_eq(h[3], 0x7c00);
    free(h);
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);
    ocx_buffer_destroy(z);
}
END_TEST

START_TEST(test_nan_inf)
{
    ocx_dtype dt = dtypes[_i];
    if (!tdtype_ok(dt)) return;
    double xs[6] = {INFINITY, -INFINITY, NAN, 1.0, INFINITY, 0.0};
    double ys[6] = {-INFINITY, -INFINITY, 2.0, NAN, 2.0, 0.0};
    unsigned char hx[48], hy[48];
    for (int i = 0; i < 6; i++) {
        tset(dt, hx, i, xs[i]);
        tset(dt, hy, i, ys[i]);
    }
    /* z holds 7s before each call: NaN, the usual poison, is an expected result here (an element
     * left unwritten had passed, as had the division's, whose z held the add's results) */
    ocx_buffer *x = tbuffer(dt, 6, hx), *y = tbuffer(dt, 6, hy), *z = tbuffer(dt, 6, NULL);
    ck_ok(ocx_fill(tctx, NULL, 6, 7.0, z, 1, 0, NULL, NULL));
    ck_ok(ocx_add(tctx, NULL, 6, x, y, z, 0, NULL, NULL));
    void *h = tread(z);
    ck_assert(isnan(tvalue(dt, h, 0)) && tvalue(dt, h, 1) == -INFINITY && isnan(tvalue(dt, h, 2)) &&
              isnan(tvalue(dt, h, 3)) && tvalue(dt, h, 4) == INFINITY && tvalue(dt, h, 5) == 0.0);
    free(h);
    ck_ok(ocx_fill(tctx, NULL, 6, 7.0, z, 1, 0, NULL, NULL));
    ck_ok(ocx_div(tctx, NULL, 6, x, y, z, 0, NULL, NULL));
    h = tread(z);
    /* inf/-inf, -inf/-inf, NaN/2, 1/NaN and 0/0 are NaN; inf/2 is inf */
    for (int i = 0; i < 6; i++)
        ck_assert_msg(i == 4 ? tvalue(dt, h, i) == INFINITY : isnan(tvalue(dt, h, i)), "%s div, element %d: %g",
                      ocx_dtype_name(dt), i, tvalue(dt, h, i));
    free(h);
    /* A beta that is 0 in the arithmetic's type (1e-50 in f32, which f16 storage computes in) does
     * not read y, contiguous or strided alike: NaN in y stays out; f64 keeps it, and 1e-50 * NaN. */
    double ws[6] = {1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 6; i++) tset(dt, hx, i, ws[i]);
    ocx_buffer *w = tbuffer(dt, 6, hx);
    for (size_t inc = 1; inc <= 2; inc++) {
        ocx_buffer *yn = tpoisoned(dt, 6);
        ck_ok(ocx_axpby(tctx, NULL, 6 / inc, 2.0, w, inc, 1e-50, yn, inc, 0, NULL, NULL));
        h = tread(yn);
        for (size_t i = 0; i < 6; i += inc)
            ck_assert_msg(dt == OCX_F64 ? isnan(tvalue(dt, h, i)) : tvalue(dt, h, i) == 2 * ws[i],
                          "%s inc %zu: y[%zu] = %g", ocx_dtype_name(dt), inc, i, tvalue(dt, h, i));
        free(h);
        ocx_buffer_destroy(yn);
    }
    ocx_buffer_destroy(w);
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);
    ocx_buffer_destroy(z);
}
END_TEST

/* f16 to f16 copies move the words themselves: all 65536 patterns, NaN payloads and signalling
 * NaNs included, contiguous (aligned and not) and strided (through float they were changed). */
START_TEST(test_f16_copy_bits)
{
    const size_t n = 65536;
    uint16_t *h = malloc(n * sizeof *h), *g = malloc(2 * n * sizeof *g);
    for (size_t i = 0; i < n; i++) h[i] = (uint16_t)i;
    ocx_buffer *x = tbuffer(OCX_F16, n, h), *y = tpoisoned(OCX_F16, 2 * n + 1), *yv = NULL;
    const size_t offs[] = {0, 1};
    for (int o = 0; o < 2; o++) {
        ck_ok(ocx_buffer_view(y, offs[o], n, &yv));
        ck_ok(ocx_copy(tctx, NULL, n, x, 1, yv, 1, 0, NULL, NULL));
        ck_ok(ocx_buffer_read(tctx, NULL, yv, 0, n, g, 0, NULL, NULL));
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(g[i] == h[i], "f16 copy (offset %zu): %04zx -> %04x", offs[o], i, g[i]);
        ocx_buffer_destroy(yv);
    }
    ck_ok(ocx_copy(tctx, NULL, n, x, 1, y, 2, 0, NULL, NULL));
    ck_ok(ocx_buffer_read(tctx, NULL, y, 0, 2 * n, g, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++) ck_assert_msg(g[2 * i] == h[i], "f16 strided copy: %04zx -> %04x", i, g[2 * i]);
    free(h);
    free(g);
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);
}
END_TEST

START_TEST(test_aliasing)
{
    const size_t n = 1003;
    float hx[1003], hy[1003];
    uint64_t seed = 5;
    trand_fill(&seed, OCX_F32, hx, NULL, n, -1, 1);
    trand_fill(&seed, OCX_F32, hy, NULL, n, -1, 1);
    ocx_buffer *x = tbuffer(OCX_F32, n, hx), *y = tbuffer(OCX_F32, n, hy), *v1 = NULL, *v0 = NULL;
    /* allowed: the output is exactly an input */
    ck_ok(ocx_add(tctx, NULL, n, x, y, x, 0, NULL, NULL));   /* x = x + y */
    ck_ok(ocx_axpy(tctx, NULL, n, 2.0, y, 1, y, 1, 0, NULL, NULL)); /* y = 3y */
    float *gx = tread(x), *gy = tread(y);
    for (size_t i = 0; i < n; i++) {
        ck_assert(gx[i] == hx[i] + hy[i]);
        ck_assert(fabsf(gy[i] - 3 * hy[i]) <= 4 * FLT_EPSILON * fabsf(hy[i]));
    }
    free(gx);
    free(gy);
    /* one element is the very same element whatever the strides: y[0] = 2*y[0] + y[0] */
    float y0;
    ck_ok(ocx_buffer_read(tctx, NULL, y, 0, 1, &y0, 0, NULL, NULL));
    ck_ok(ocx_axpby(tctx, NULL, 1, 2.0, y, 1, 1.0, y, 2, 0, NULL, NULL));
    float y1;
    ck_ok(ocx_buffer_read(tctx, NULL, y, 0, 1, &y1, 0, NULL, NULL));
    ck_assert_float_eq(y1, 3 * y0);
    /* rejected: partial overlap (a view shifted by one element; another stride) */
    ck_ok(ocx_buffer_view(x, 1, n - 1, &v1));
    ck_ok(ocx_buffer_view(x, 0, n - 1, &v0));
    ck_status(ocx_add(tctx, NULL, n - 1, v0, y, v1, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_assert(strstr(ocx_last_error(), "overlap"));
    ck_status(ocx_axpy(tctx, NULL, n - 1, 1.0, v0, 1, v1, 1, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_axpy(tctx, NULL, 400, 1.0, x, 2, x, 1, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_copy(tctx, NULL, n - 1, v0, 1, v1, 1, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_copy(tctx, NULL, n, x, 1, x, 1, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ocx_buffer_destroy(v0);
    ocx_buffer_destroy(v1);
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);

    /* Wrapped sub-buffers of one cl_mem share its storage: two that overlap are rejected like views,
     * two apart are not. Origins at the device's base-address alignment (a sub-buffer's rule). */
    cl_context cl;
    cl_device_id dev;
    ck_ok(ocx_context_cl(tctx, &cl, &dev));
    cl_uint align_bits = 0;
    ck_assert_int_eq(clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL), CL_SUCCESS);
    const size_t step = align_bits / 8, m = 4 * step / sizeof(float); /* m floats: 4 alignment steps */
    cl_int err;
    cl_mem parent = clCreateBuffer(cl, CL_MEM_READ_WRITE, 3 * m * sizeof(float), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    const size_t bytes = m * sizeof(float);
    cl_buffer_region r0 = {0, bytes}, r1 = {step, bytes}, r2 = {2 * bytes, bytes};
    cl_mem s0 = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r0, &err);
    cl_mem s1 = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r1, &err);
    cl_mem s2 = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r2, &err);
    ck_assert(s0 && s1 && s2);
    ocx_buffer *w0 = NULL, *w1 = NULL, *w2 = NULL, *wp = NULL;
    ck_ok(ocx_buffer_wrap(tctx, s0, OCX_F32, m, &w0));
    ck_ok(ocx_buffer_wrap(tctx, s1, OCX_F32, m, &w1));
    ck_ok(ocx_buffer_wrap(tctx, s2, OCX_F32, m, &w2));
    ck_ok(ocx_buffer_wrap(tctx, parent, OCX_F32, 3 * m, &wp));
    ck_ok(ocx_fill(tctx, NULL, m, 1.0, w0, 1, 0, NULL, NULL));
    ck_status(ocx_add(tctx, NULL, m, w0, w0, w1, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_copy(tctx, NULL, m, w0, 1, w1, 1, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_add(tctx, NULL, m, wp, wp, w1, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT); /* parent and sub */
    ck_ok(ocx_add(tctx, NULL, m, w0, w0, w2, 0, NULL, NULL));
    /* the same elements, but through a sub-buffer and its parent: OpenCL leaves that undefined */
    ck_status(ocx_add(tctx, NULL, m, wp, w2, w0, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    float *g2 = tread(w2);
    for (size_t i = 0; i < m; i++) ck_assert(g2[i] == 2.0f);
    free(g2);
    ocx_buffer_destroy(w0), ocx_buffer_destroy(w1), ocx_buffer_destroy(w2), ocx_buffer_destroy(wp);
    clReleaseMemObject(s0), clReleaseMemObject(s1), clReleaseMemObject(s2), clReleaseMemObject(parent);
}
END_TEST

START_TEST(test_bad_arguments)
{
    ocx_buffer *x = tpoisoned(OCX_F32, 10), *h = tbuffer(OCX_F16, 10, NULL), *u = tbuffer(OCX_U32, 10, NULL);
    ocx_buffer *z = tpoisoned(OCX_F32, 10);
    ocx_event ev = (ocx_event)(uintptr_t)1;
    ck_status(ocx_add(NULL, NULL, 10, x, x, z, 0, NULL, &ev), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(ev);
    ck_status(ocx_add(tctx, NULL, 10, NULL, x, z, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_add(tctx, NULL, 10, x, NULL, z, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_add(tctx, NULL, 10, x, x, NULL, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_add(tctx, NULL, 10, x, h, z, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_add(tctx, NULL, 10, u, u, u, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_add(tctx, NULL, 11, x, x, z, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_axpy(tctx, NULL, 4, 1.0, x, 4, z, 1, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_axpy(tctx, NULL, 4, 1.0, x, 0, z, 1, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_axpy(tctx, NULL, 4, 1.0, x, 1, h, 1, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_scale(tctx, NULL, 4, 1.0, z, 0, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_fill(tctx, NULL, 11, 1.0, z, 1, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_copy(tctx, NULL, 10, x, 1, u, 1, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_copy(tctx, NULL, 6, x, 2, h, 1, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_add(tctx, NULL, 10, x, x, z, 1, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    /* A developer's override that names no parameter fails every call that runs a kernel, naming
     * the variable; one of 0 elements runs none and looks nothing up. */
    setenv("OCX_VECTOR_PARAMS", "NOPE=1", 1);
    const ocx_status some = ocx_add(tctx, NULL, 10, x, x, z, 0, NULL, NULL);
    const int named = strstr(ocx_last_error(), "OCX_VECTOR_PARAMS") != NULL;
    const ocx_status none = ocx_add(tctx, NULL, 0, x, x, z, 0, NULL, NULL);
    unsetenv("OCX_VECTOR_PARAMS"); /* before the assertions: the suite does not fork */
    ck_assert_int_eq(some, OCX_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(none, OCX_OK);
    ck_assert(named);
    float *g = tread(z);
    for (int i = 0; i < 10; i++) ck_assert(isnan(g[i])); /* nothing was written */
    free(g);
    /* separators alone: the same (the built-in values had run, reported as the environment's) */
    setenv("OCX_VECTOR_PARAMS", ", ,", 1);
    const ocx_status empty = ocx_add(tctx, NULL, 10, x, x, z, 0, NULL, NULL);
    const int named_empty = strstr(ocx_last_error(), "OCX_VECTOR_PARAMS") != NULL;
    unsetenv("OCX_VECTOR_PARAMS");
    ck_assert_int_eq(empty, OCX_ERR_INVALID_ARGUMENT);
    ck_assert(named_empty);
    /* a name given again overrides it (documented) */
    setenv("OCX_VECTOR_PARAMS", "WG=16,WG=32", 1);
    const ocx_status twice = ocx_add(tctx, NULL, 10, x, x, z, 0, NULL, NULL);
    ocx_params_info last;
    const int took_last = ocx_last_params(&last) == OCX_OK && strstr(last.params, "WG=32") != NULL;
    unsetenv("OCX_VECTOR_PARAMS");
    ck_assert_int_eq(twice, OCX_OK);
    ck_assert(took_last);
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(h);
    ocx_buffer_destroy(u);
    ocx_buffer_destroy(z);
}
END_TEST

START_TEST(test_limits)
{
    ck_assert(tinfo.max_work_group_size <= 64 && !tinfo.has_fp16 && !tinfo.has_fp64);
    for (int op = 0; op < NOPS; op++) {
        check_op(op, OCX_F32, 1000003, 1, 1, 50 + op);
        check_op(op, OCX_F16, 100003, 1, 1, 60 + op); /* f16 storage needs no cl_khr_fp16 */
        check_op(op, OCX_F32, 1001, 3, 2, 70 + op);
    }
    ocx_buffer *x = NULL;
    ck_status(ocx_buffer_create(tctx, OCX_F64, 10, &x), OCX_ERR_UNSUPPORTED);
}
END_TEST

int main(void)
{
    /* One context per test case (program builds are the slow part on PoCL): no fork per test. */
    setenv("CK_FORK", "no", 0);
    Suite *s = suite_create("vector");
    TCase *tc = tcase_create("core");
    twatchdog(tc, 600);
    tcase_add_unchecked_fixture(tc, tctx_setup, tctx_teardown);
    tcase_add_loop_test(tc, test_lengths, 0, 3);
    tcase_add_loop_test(tc, test_over_2_24, 0, 3);
    tcase_add_loop_test(tc, test_strides, 0, 3);
    tcase_add_loop_test(tc, test_alignment, 0, 3);
    tcase_add_loop_test(tc, test_nan_inf, 0, 3);
    tcase_add_test(tc, test_launch_shapes);
    tcase_add_test(tc, test_random_params);
    tcase_add_loop_test(tc, test_nt_threshold, 0, 3);
    tcase_add_test(tc, test_spread);
    tcase_add_test(tc, test_copy_convert);
    tcase_add_test(tc, test_f16_edges);
    tcase_add_test(tc, test_f16_copy_bits);
    tcase_add_test(tc, test_aliasing);
    tcase_add_test(tc, test_bad_arguments);
    suite_add_tcase(s, tc);
    tadd_sim_case(s, test_sim);
    TCase *tl = tcase_create("limits");
    twatchdog(tl, 600);
    tcase_add_unchecked_fixture(tl, tlimits_setup, tlimits_teardown);
    tcase_add_test(tl, test_limits);
    suite_add_tcase(s, tl);
    return trun(s);
}
