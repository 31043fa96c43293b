/* vector.cl — element-wise operations (seed document §3.1, the vector add, grown up).
 *
 * Parameters (-D, with defaults so that the file builds on its own):
 *   DTYPE  storage type of the destination: 0 f32, 1 f16 (storage only: arithmetic in f32), 2 f64
 *   VW     vector width of loads/stores on the contiguous path (1, 2, 4, 8, 16)
 *   WG     work-group size the host launches with (a hint for the compiler)
 *   GRID   2: work-items stride over the range by the global size (grid-stride loop), so the host
 *          may launch fewer items than vectors (GPUs: a bounded number of resident groups);
 *          1: WPT vectors (or elements) per work-item, a global size apart (WPT = 1: no loop;
 *          PoCL: its work-item loops then vectorise across work-items, and a loop inside would
 *          block that; WPT = 2, CPU arrays beyond the caches: each thread walks two streams of
 *          memory)
 *   KERNEL the one kernel to compile (numbered below: 1 vadd … 11 copy_same); 0, the default, all
 *          of them. PoCL compiles every kernel of a program at build time, so one kernel per
 *          program makes an operation's cold start several times shorter.
 *   FORM   axpby alone: 0, 1 or 2 builds that form of a contiguous call (at axpby); -1, the
 *          default, the strided path (any incx, incy; beta chosen at run time).
 * Every kernel takes element offsets and strides (inc ≥ 1); when all strides are 1 it takes the
 * vectorised path, with a scalar tail, so no length has to divide anything.
 */
#ifndef DTYPE
#define DTYPE 0
#endif
#ifndef VW
#define VW 4
#endif
#ifndef WG
#define WG 256
#endif
#ifndef GRID
#define GRID 1
#endif
#ifndef WPT
#define WPT 1
#endif
#ifndef KERNEL
#define KERNEL 0
#endif
#ifndef NT
#define NT 0
#endif
#ifndef FORM
#define FORM -1 /* axpby: the form built alone, or the strided path (below) */
#endif
/* NT=1: kernels whose destination is only written (add, sub, mul, div, fill, copy) store it on the
 * aligned vector path with __builtin_nontemporal_store where the compiler has it (clang: PoCL),
 * which on a CPU skips reading each destination line before it is overwritten. On the 2-core EPYC
 * (PoCL, 2^24 f32, the two alternating in one process): add 24 -> 31-34 GB/s, copy 30 -> 42; axpy,
 * which reads its destination, lost 10% with them, so its kernels never take them. */
#define NT_STORES 0
#if NT && defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#undef NT_STORES
#define NT_STORES 1
#endif
#endif
#define WANT(k) (KERNEL == 0 || KERNEL == (k))

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if DTYPE == 2 || defined(HAS_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* Scalar load/store of each storage type, converting to/from the compute type C. */
#define LD_F32(p, i) ((C)(p)[i])
#define ST_F32(p, i, v) ((p)[i] = (float)(v))
#define LD_F16(p, i) ((C)vload_half((i), (p)))
#define ST_F16(p, i, v) vstore_half_rte((v), (i), (p))
#define LD_F64(p, i) ((C)(p)[i])
#define ST_F64(p, i, v) ((p)[i] = (double)(v))

#if DTYPE == 0
#define S float
#define C float
#define LD LD_F32
#define ST ST_F32
#elif DTYPE == 1
#define S half
#define C float
#define LD LD_F16
#define ST ST_F16
#elif DTYPE == 2
#define S double
#define C double
#define LD LD_F64
#define ST ST_F64
#else
#error "DTYPE must be 0 (f32), 1 (f16) or 2 (f64)"
#endif

/* Vector loads/stores of VW elements at vector index i. */
#if VW == 1
#define CV C
#define LDV(p, i) LD(p, i)
#define STV(p, i, v) ST(p, i, v)
#else
#define CV CAT(C, VW)
#if DTYPE == 1
#define LDV(p, i) CAT(vload_half, VW)((i), (p))
#define STV(p, i, v) CAT(CAT(vstore_half, VW), _rte)((v), (i), (p))
#else
#define LDV(p, i) CAT(vload, VW)((i), (p))
#define STV(p, i, v) CAT(vstore, VW)((v), (i), (p))
#endif
#endif

/* The same through a pointer to the vector type, for arrays whose address is a multiple of the
 * vector's size (every buffer at offset 0, views at offsets that keep it). On PoCL, vloadN from a
 * pointer to scalars compiles to 8-byte pieces and shuffles (vload8 f32 add: 4 movsd, 4 two-wide
 * adds and 3 shuffles per vector); a vector pointer gives whole-register loads (one vmovaps, one
 * vaddps), and 2^16 f32 add ran in 18 us instead of 29 us. f16 storage moves as raw 16-bit words
 * (ushortN) converted in registers through vload_half/vstore_half on a private copy: NVIDIA's
 * vload_halfN from global memory issues one 2-byte load per element. VPATH(aligned, BODY, arg)
 * expands BODY(load, store, arg, loop) with the typed access where the pointers allow it, else with
 * vloadN/vstoreN: a branch that is the same for every work-item. On the typed path a work-group
 * whose items all have their vectors in range (GROUP_FULL, below) runs the body's loop without the
 * bounds check (FULL_LOOP), a branch the same for the whole group. */
#if VW > 1 && DTYPE != 1
#define SV CV
#define LDA(p, i) (((const global CV *)(p))[i])
#define STA(p, i, v) (((global CV *)(p))[i] = (v))
#if NT_STORES
#define STW(p, i, v) __builtin_nontemporal_store((v), &((global CV *)(p))[i])
#else
#define STW STA
#endif
#elif VW > 1
#define SV CAT(ushort, VW)
inline CV f16_from_bits(const SV b)
{
    const SV t = b;
    return CAT(vload_half, VW)(0, (const private half *)&t);
}
inline SV f16_to_bits(const CV v)
{
    SV t;
    CAT(CAT(vstore_half, VW), _rte)(v, 0, (private half *)&t);
    return t;
}
#define LDA(p, i) f16_from_bits(((const global SV *)(p))[i])
#define STA(p, i, v) (((global SV *)(p))[i] = f16_to_bits(v))
#define STW STA
#endif
#if VW > 1
#define ALIGNED(p) (((size_t)(p)) % sizeof(SV) == 0)
#define VPATH_(aligned, BODY, arg, STORE)                                                             \
    if ((aligned) && GROUP_FULL(nv)) {                                                                \
        BODY(LDA, STORE, arg, FULL_LOOP)                                                              \
    } else if (aligned) {                                                                             \
        BODY(LDA, STORE, arg, GRID_LOOP)                                                              \
    } else {                                                                                          \
        BODY(LDV, STV, arg, GRID_LOOP)                                                                \
    }
#define VPATH(aligned, BODY, arg) VPATH_(aligned, BODY, arg, STA)
#define VPATH_W(aligned, BODY, arg) VPATH_(aligned, BODY, arg, STW)
#else
#define ALIGNED(p) 0
#define VPATH(aligned, BODY, arg) BODY(LDV, STV, arg, GRID_LOOP)
#define VPATH_W(aligned, BODY, arg) BODY(LDV, STV, arg, GRID_LOOP)
#endif

/* GRID_LOOP(i, count): the indices i < count of this work-item. FULL_LOOP(i, count): the same
 * without the check (GRID=1), where GROUP_FULL(count) holds: every index of every item of the group
 * is in range. That is all groups but the last few (with WPT > 1, those whose last vector would
 * reach past the end); VPATH tests it on the vectors' count, nv. The grid-stride loop (GRID=2) and
 * the paths that take no VPATH (VW=1, strides, f16 fill and copy) keep the check. PoCL runs a
 * group's items in a loop, and a check written as `full || i < count` stayed inside that loop
 * (`full` was not hoisted out of it): hence two loops. Measured in doc/performance.md, "The bounds
 * checks, a third time". */
#if GRID == 2
#define GRID_LOOP(i, count) for (size_t i = get_global_id(0); i < (count); i += get_global_size(0))
#define GROUP_FULL(count) 0
#define FULL_LOOP GRID_LOOP
#else
#define FULL_LOOP(i, count)                                                                           \
    _Pragma("unroll") for (size_t i##_w = 0, i = get_global_id(0); i##_w < WPT;                       \
                           i##_w++, i += get_global_size(0))
#define GRID_LOOP(i, count) FULL_LOOP(i, count) if (i < (count))
#define GROUP_FULL(count) ((get_group_id(0) + 1) * WG + (WPT - 1) * get_global_size(0) <= (count))
#endif
/* The scalar tail (count < VW) behind a condition the same for the whole group: whether its first
 * index is below count (a group whose first index is not has none below it, in any of its WPT
 * passes: they start a global size, which is beyond the group, further on). Without it every item
 * of every group checked its tail indices. */
#define TAIL_LOOP(i, count) if (get_group_id(0) * WG < (count)) GRID_LOOP(i, count)

/* z = x OP y, all contiguous. */
#define BINARY_BODY(L, S, OP, LOOP) LOOP(v, nv) { S(z, v, L(x, v) OP L(y, v)); }
#define BINARY(name, OP)                                                                              \
    __attribute__((reqd_work_group_size(WG, 1, 1))) kernel void name(                                 \
        const ulong n, const global S *x, const ulong xo, const global S *y, const ulong yo,          \
        global S *z, const ulong zo)                                                                  \
    {                                                                                                 \
        x += xo;                                                                                      \
        y += yo;                                                                                      \
        z += zo;                                                                                      \
        const size_t nv = n / VW;                                                                     \
        VPATH_W(ALIGNED(x) && ALIGNED(y) && ALIGNED(z), BINARY_BODY, OP)                                \
        TAIL_LOOP(t, n - nv * VW) { const size_t i = nv * VW + t; ST(z, i, LD(x, i) OP LD(y, i)); }  \
    }
#if WANT(1)
BINARY(vadd, +)
#endif
#if WANT(2)
BINARY(vsub, -)
#endif
#if WANT(3)
BINARY(vmul, *)
#endif
#if WANT(4)
BINARY(vdiv, /)
#endif

/* y = a*x + b*y; b == 0 writes y without reading it (a NaN already in y does not leak). Form 0:
 * b == 0, 1: b == 1, 2: any b (a constant in each expansion, so the compiler keeps only one).
 * FORM (0, 1, 2): the host builds a contiguous call (incx = incy = 1) with its one form alone;
 * FORM = -1 (the default) is the strided path, which strided calls build. The former kernel, with
 * every form and the strided path chosen at run time, was slower: on PoCL (the 2-core AVX2 EPYC, 8
 * alternating rounds, median ratio to CLBlast's Xaxpy) axpy ran 2^24 f64 at 1.005x against 0.99x
 * for the kernel with every branch, 2^24 f32 1.08x against 1.02x, 2^20 f64 and f32 1.005x and
 * 1.01x against 0.995x and 1.00x. */
/* One expression, so that a*x + y may contract to an FMA (OpenCL's FP_CONTRACT): where a*x was a
 * variable of its own PoCL kept a multiply and an add, and on the 2-core AVX-512 Xeon the kernel
 * alone ran 2^24 axpy 1-3% slower (20 alternating rounds: f64 1.01-1.03x the time, f32 1.02x;
 * 2^16 and 2^20 level). On the H100 2^28 axpy runs at the memory's pace either way (1.00x CLBlast). */
#define AXPBY_OF(form, xv, yv) ((form) == 0 ? a * (xv) : (form) == 1 ? a * (xv) + (yv) : a * (xv) + b * (yv))
#define AXPBY_BODY(L, S, form, LOOP) LOOP(v, nv) { S(y, v, AXPBY_OF(form, L(x, v), L(y, v))); }
/* One form of a contiguous call: the vectors, then the scalar tail. */
#define AXPBY_CONTIG(form)                                                                            \
    {                                                                                                 \
        const size_t nv = n / VW;                                                                     \
        VPATH(ALIGNED(x) && ALIGNED(y), AXPBY_BODY, form)                                             \
        TAIL_LOOP(t, n - nv * VW)                                                                     \
        {                                                                                             \
            const size_t i = nv * VW + t;                                                             \
            ST(y, i, AXPBY_OF(form, LD(x, i), LD(y, i)));                                             \
        }                                                                                             \
    }
#if WANT(5)
__attribute__((reqd_work_group_size(WG, 1, 1))) kernel void axpby(const ulong n, const C a, const global S *x,
                                                                  const ulong xo, const ulong incx, const C b,
                                                                  global S *y, const ulong yo, const ulong incy)
{
    x += xo;
    y += yo;
#if FORM >= 0
    AXPBY_CONTIG(FORM)
#else
    GRID_LOOP(i, n)
    {
        const C xv = LD(x, i * incx);
        ST(y, i * incy, b == (C)0 ? a * xv : a * xv + b * LD(y, i * incy));
    }
#endif
}
#endif

/* x = a*x */
#define SCAL_BODY(L, S, unused, LOOP) LOOP(v, nv) { S(x, v, a * L(x, v)); }
#if WANT(6)
__attribute__((reqd_work_group_size(WG, 1, 1))) kernel void scal(const ulong n, const C a, global S *x,
                                                                 const ulong xo, const ulong incx)
{
    x += xo;
    if (incx == 1) {
        const size_t nv = n / VW;
        VPATH(ALIGNED(x), SCAL_BODY, 0)
        TAIL_LOOP(t, n - nv * VW) { const size_t i = nv * VW + t; ST(x, i, a * LD(x, i)); }
    } else {
        GRID_LOOP(i, n) { ST(x, i * incx, a * LD(x, i * incx)); }
    }
}
#endif

/* x = value */
#define FILL_BODY(L, S, vv, LOOP) LOOP(v, nv) { S(x, v, vv); }
#if WANT(7)
__attribute__((reqd_work_group_size(WG, 1, 1))) kernel void fill(const ulong n, const C value, global S *x,
                                                                 const ulong xo, const ulong incx)
{
    x += xo;
#if DTYPE == 1
    /* f16: the value rounded once, stored as its 16-bit pattern. PoCL 3.1 crashed (SIGSEGV) on
     * vstore_halfN_rte of the loop-invariant value to an address that is not the vector's in the
     * grid-stride loop (GRID=2 with VW >= 8, e.g. a view at an odd element). */
    ushort bits;
    vstore_half_rte(value, 0, (private half *)&bits);
    global ushort *w = (global ushort *)x;
    if (incx == 1) {
        const size_t nv = n / VW;
#if VW > 1
        const SV vb = (SV)(bits);
        if (ALIGNED(w)) {
            GRID_LOOP(v, nv) { ((global SV *)w)[v] = vb; }
        } else {
            GRID_LOOP(v, nv) { CAT(vstore, VW)(vb, v, w); }
        }
#else
        GRID_LOOP(v, nv) { w[v] = bits; }
#endif
        TAIL_LOOP(t, n - nv * VW) { w[nv * VW + t] = bits; }
    } else {
        GRID_LOOP(i, n) { w[i * incx] = bits; }
    }
#else
    if (incx == 1) {
        const size_t nv = n / VW;
        const CV vv = (CV)(value);
        VPATH_W(ALIGNED(x), FILL_BODY, vv)
        TAIL_LOOP(t, n - nv * VW) { ST(x, nv * VW + t, value); }
    } else {
        GRID_LOOP(i, n) { ST(x, i * incx, value); }
    }
#endif
}
#endif

/* y (of DTYPE) = x (of the type in the kernel's name), converting with round-to-nearest-even. */
#define COPY_FROM(name, XS, XLD, YST)                                                                 \
    __attribute__((reqd_work_group_size(WG, 1, 1))) kernel void name(                                 \
        const ulong n, const global XS *x, const ulong xo, const ulong incx, global S *y,             \
        const ulong yo, const ulong incy)                                                             \
    {                                                                                                 \
        x += xo;                                                                                      \
        y += yo;                                                                                      \
        GRID_LOOP(i, n) { YST(y, i * incy, XLD(x, i * incx)); }                                       \
    }
#define LD_RAW(p, i) ((p)[i]) /* f64 stays f64 until the one rounding of the store */
/* f16 to f16 (strided): the 16-bit words themselves; through float, NaNs' payloads changed and
 * signalling NaNs were quieted. */
#define LD_BITS(p, i) (((const global ushort *)(p))[i])
#define ST_BITS(p, i, v) (((global ushort *)(p))[i] = (v))
#if WANT(8)
COPY_FROM(copy_from_f32, float, LD_F32, ST)
#endif
#if WANT(9) && DTYPE == 1
COPY_FROM(copy_from_f16, half, LD_BITS, ST_BITS)
#elif WANT(9)
COPY_FROM(copy_from_f16, half, LD_F16, ST)
#endif
#if (DTYPE == 2 || defined(HAS_FP64)) && WANT(10)
COPY_FROM(copy_from_f64, double, LD_RAW, ST)
#endif

/* Same-type contiguous copy, vectorised. */
#define COPY_BODY(L, S, unused, LOOP) LOOP(v, nv) { S(y, v, L(x, v)); }
#if WANT(11)
__attribute__((reqd_work_group_size(WG, 1, 1))) kernel void copy_same(const ulong n, const global S *x,
                                                                      const ulong xo, global S *y, const ulong yo)
{
    x += xo;
    y += yo;
    const size_t nv = n / VW;
#if DTYPE == 1 /* f16: the words themselves (as copy_from_f16) */
    const global ushort *xs = (const global ushort *)x;
    global ushort *ys = (global ushort *)y;
#if VW > 1
    if (ALIGNED(xs) && ALIGNED(ys)) {
        GRID_LOOP(v, nv) { ((global SV *)ys)[v] = ((const global SV *)xs)[v]; }
    } else {
        GRID_LOOP(v, nv) { CAT(vstore, VW)(CAT(vload, VW)(v, xs), v, ys); }
    }
#else
    GRID_LOOP(v, nv) { ys[v] = xs[v]; }
#endif
    TAIL_LOOP(t, n - nv * VW) { ys[nv * VW + t] = xs[nv * VW + t]; }
#else
    VPATH_W(ALIGNED(x) && ALIGNED(y), COPY_BODY, 0)
    TAIL_LOOP(t, n - nv * VW) { const size_t i = nv * VW + t; ST(y, i, LD(x, i)); }
#endif
}
#endif
