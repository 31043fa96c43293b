/* reduce.cl — reductions: sum, asum, dot, nrm2, min, max, argmin, argmax.
 *
 * Two passes, never a long serial sum:
 *   part_<op>   G work-groups of WG items. Each work-item folds its share of x into ACC vector
 *               accumulators of VW lanes, then those into one value, then the work-group combines its
 *               items in a tree in local memory and writes one partial (pv[g], pw[g]).
 *   final_<op>  one work-group of WG items combines the G partials the same way and writes the result.
 * Where one work-group takes all of x (G = 1: n up to the host's SOLO elements, or too short for
 * two groups), part_<op> writes the result itself and final_<op> is not launched (PART_OUT).
 * With FUSE, the last work-group of part_<op> to finish combines the G partials as final_<op> would,
 * in the same launch (FUSED_FINAL), where the host asks for it (MODE_COUNTED); a FUSE program runs
 * the host's other two modes as well, as one without it would.
 * Partials are (value, second) pairs: nrm2 keeps (scale, sum of squares / scale²), argmin/argmax keep
 * (value, index), the others use only the value.
 *
 * Parameters (-D, with defaults so that the file builds on its own):
 *   DTYPE    storage type of x and y: 0 f32, 1 f16 (storage only: accumulates in f32), 2 f64
 *   WG       work-group size of both passes (a power of two)
 *   VW       vector width of the lanes on the contiguous path (1, 2, 4, 8, 16)
 *   LAYOUT   1: work-items interleave vector by vector (coalesced: GPUs); 2: each work-item takes one
 *            contiguous chunk (caches and prefetchers: CPUs)
 *   ACC      vector accumulators per work-item on the contiguous path (1, 2, 4, 8). LAYOUT 1:
 *            accumulator u takes the work-item's vectors u, u + ACC, … (ACC chains of dependent
 *            operations in flight); LAYOUT 2: the share is split into ACC consecutive runs read in
 *            step, one accumulator each (ACC streams a core, where one left bandwidth unused)
 *   OP       the one operation to compile (ocx_reduce_op: 0 sum … 7 argmax); -1, the default, all of
 *            them. A program of one operation compiles in an eighth of the time (PoCL: seconds).
 *   ARGBLOCKS 1: argmin/argmax with LAYOUT 2 scan blocks of extremes, then rescan one (ARG_SHARE;
 *            the CPUs' default); 0: they scan (value, index) pairs (the GPUs')
 *   MINMAX_APART 1: min/max keep NaN apart from the running extreme in their vector scan (the
 *            host sets it on CPUs with ACC 1); 0: one update that tests for NaN
 *   FUSE     1: part_<op> can take MODE_COUNTED, one launch: each work-group counts itself done on
 *            a counter (cnt, zero before the launch and again after it), and the last one combines
 *            the partials; the host's other modes run as without it. 0: final_<op> combines them
 *            in a second launch
 *   FUSE_SERIAL 1: the last group's item 0 combines the partials alone, in order (CPUs); 0: the
 *            group combines them in a tree (GPUs)
 *   FENCE    how FUSE's count orders the groups' partials (the host's): on NVIDIA, PTX: 1 membar.gl
 *            around it, 2 one acquire-release atomic at device scope (compute capability 7.0 on);
 *            3 OpenCL C's acquire-release atomic at device scope (built as OpenCL C 2.0 or 3.0)
 * Semantics: NaN propagates through min/max/argmin/argmax (argmin/argmax give the first NaN); ties
 * resolve to the lowest index; nrm2 scales so that neither huge nor tiny values over/underflow.
 */
#ifndef DTYPE
#define DTYPE 0
#endif
#ifndef WG
#define WG 256
#endif
#ifndef VW
#define VW 4
#endif
#ifndef LAYOUT
#define LAYOUT 1
#endif
#ifndef ACC
#define ACC 1
#endif
#ifndef OP
#define OP -1
#endif
#ifndef MINMAX_APART
#define MINMAX_APART 0
#endif
#ifndef ARGBLOCKS
#define ARGBLOCKS 0
#endif
#ifndef FUSE
#define FUSE 0
#endif
#ifndef FENCE
#define FENCE 0
#endif
#ifndef FUSE_SERIAL
#define FUSE_SERIAL 0
#endif
#if FUSE && (FENCE < 1 || FENCE > 3)
#error "FUSE needs FENCE 1, 2 or 3"
#endif
#define WANT(op) (OP < 0 || OP == (op))

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if DTYPE == 0
#define S float
#define A float
#define IDX uint
#define LD(p, i) ((p)[i])
#define LDV(p, i) CAT(vload, VW)((i), (p))
/* nrm2: below TINY a scale's reciprocal could overflow, so such scales are pre-multiplied by BIG.
 * Blue's thresholds and scales: squares of |a| in [TSML, TBIG] neither underflow nor (summed over
 * 2^32 elements) overflow; the scaled squares of the others neither. */
#define TINY 0x1p-64f
#define BIG 0x1p64f
#define TSML 0x1p-63f
#define TBIG 0x1p44f
#define SSML 0x1p100f
#define SBIG 0x1p-90f
#define QMIN 0x1p-102f /* TSML² · 2^24 */
#define QMAX 0x1p88f   /* TBIG² */
#define MSML 0x1p-73f  /* below it a middle sum times SSML² stays finite (BLUE_TO_PAIR) */
#elif DTYPE == 1
#define S half
#define A float
#define IDX uint
#define LD(p, i) vload_half((i), (p))
#define LDV(p, i) CAT(vload_half, VW)((i), (p))
#define TINY 0x1p-64f
#define BIG 0x1p64f
#define TSML 0x1p-63f
#define TBIG 0x1p44f
#define SSML 0x1p100f
#define SBIG 0x1p-90f
#define QMIN 0x1p-102f
#define QMAX 0x1p88f
#define MSML 0x1p-73f
#elif DTYPE == 2
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define S double
#define A double
#define IDX ulong /* as wide as a double comparison's mask, so that lanes select with ?: */
#define LD(p, i) ((p)[i])
#define LDV(p, i) CAT(vload, VW)((i), (p))
#define TINY 0x1p-512
#define BIG 0x1p512
#define TSML 0x1p-511
#define TBIG 0x1p486
#define SSML 0x1p537
#define SBIG 0x1p-538
#define QMIN 0x1p-969 /* TSML² · 2^53 */
#define QMAX 0x1p972  /* TBIG² */
#define MSML 0x1p-52
#else
#error "DTYPE must be 0 (f32), 1 (f16) or 2 (f64)"
#endif

#if DTYPE == 2
#define MASK long
#else
#define MASK int
#endif
#if VW == 1
#define MV int
#define AV A
#define IV IDX
#define LANES ((IDX)0)
#undef LDV
#define LDV(p, i) LD(p, i)
#elif VW == 2
#define MV CAT(MASK, 2)
#define AV CAT(A, 2)
#define IV CAT(IDX, 2)
#define LANES ((IV)(0, 1))
#elif VW == 4
#define MV CAT(MASK, 4)
#define AV CAT(A, 4)
#define IV CAT(IDX, 4)
#define LANES ((IV)(0, 1, 2, 3))
#elif VW == 8
#define MV CAT(MASK, 8)
#define AV CAT(A, 8)
#define IV CAT(IDX, 8)
#define LANES ((IV)(0, 1, 2, 3, 4, 5, 6, 7))
#elif VW == 16
#define MV CAT(MASK, 16)
#define AV CAT(A, 16)
#define IV CAT(IDX, 16)
#define LANES ((IV)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#else
#error "VW must be 1, 2, 4, 8 or 16"
#endif

/* f16 lanes from an array whose address is a multiple of the vector's size move as raw 16-bit words
 * (ushortN), converted in registers through vload_halfN on a private copy: NVIDIA's vload_halfN
 * from global memory issues one 2-byte load per element (as in vector.cl). Each kernel sets raw_
 * once (RAW_INIT): the branch in LDV is the same for every work-item and every iteration. (OpenCL
 * C has no variadic macros, which would let the loops be expanded once for each case.) */
#if DTYPE == 1 && VW > 1
#define SV CAT(ushort, VW)
static inline AV f16_from_bits(const SV b)
{
    const SV t = b;
    return CAT(vload_half, VW)(0, (const private half *)&t);
}
#undef LDV
#define LDV(p, k) (raw_ ? f16_from_bits(((const global SV *)(p))[k]) : CAT(vload_half, VW)((k), (p)))
/* One vector from any address, for the rescan of argmin/argmax: LDV there, in an early-exit loop,
 * came out of PoCL 3.1 as an aligned load whatever raw_ said, and faulted on a view at an odd
 * offset (check_reduce, f16 argmin of 31 elements). vloadN needs only the elements' alignment. */
#define LDV_ANY(p, k) f16_from_bits(CAT(vload, VW)((k), (const global ushort *)(p)))
#define RAW_INIT(aligned) const int raw_ = (aligned)
#define ALIGNED(p) ((size_t)(p) % sizeof(SV) == 0)
#else
#define RAW_INIT(aligned)
#define LDV_ANY(p, k) LDV(p, k)
#endif

#define NONE ((IDX)0xffffffffu) /* "no index yet": above every index, so that real ones win ties */

/* ---- element updates, written once for scalars and lane vectors (T: the value type) ------------ */
#define UPD_SUM(T, v, w, a) ((v) += (a))
/* NaN wins; else the smaller (larger) value. */
#define UPD_MIN(T, v, w, a) ((v) = (isnan(a) || (a) < (v)) ? (a) : (v))
#define UPD_MAX(T, v, w, a) ((v) = (isnan(a) || (a) > (v)) ? (a) : (v))
/* (a, i) replaces (v, w) when it comes first in the order: NaN first, then smaller (larger) value,
 * then lower index. Written as a total order, so that lanes and partials combine in any order. */
#define TAKE_ARG(CMP, v, w, a, i)                                                                  \
    (isnan(v) ? (isnan(a) && (i) < (w)) : (isnan(a) || (a)CMP(v) || ((a) == (v) && (i) < (w))))
#define UPD_ARG(T, M, CMP, v, w, a, i)                                                             \
    do {                                                                                           \
        const T a_ = (a);                                                                          \
        const M take_ = TAKE_ARG(CMP, v, w, a_, i);                                                \
        (w) = take_ ? (i) : (w);                                                                   \
        (v) = take_ ? a_ : (v);                                                                    \
    } while (0)

/* The scan of one lane or work-item, indices increasing: strictly better, or the first NaN, or the
 * first element at all (w still NONE). Cheaper than TAKE_ARG, and equal to it in that order.
 * "Strictly better or a NaN, unless v is NaN already" is one unordered compare and one ordered
 * one: !(v CMP= a) is true where a CMP v or either is NaN (argmax: v >= a fails). */
#define SCAN_ARG(T, M, CMP, v, w, a, i) SCAN_ARG_WHERE(T, M, CMP, v, w, a, i, | ((w) == NONE))
/* The same without the first-element test, for lanes that start at (INIT, vector 0) instead of
 * (INIT, NONE), so that lane q claims element q: a lane that takes nothing has seen only elements
 * equal to INIT (every other value, NaN included, is strictly better than INIT), and its claim
 * loses to any other value; where it wins, every element is INIT, and the first index, 0, which
 * lane 0 claims, is the answer. */
#define SCAN_ARG_NOFIRST(T, M, CMP, v, w, a, i) SCAN_ARG_WHERE(T, M, CMP, v, w, a, i, )
#define SCAN_ARG_WHERE(T, M, CMP, v, w, a, i, FIRST)                                               \
    do {                                                                                           \
        const T a_ = (a);                                                                          \
        const M take_ = (!((v)CMP##=(a_)) & !isnan(v)) FIRST;                                      \
        (w) = take_ ? (i) : (w);                                                                   \
        (v) = take_ ? a_ : (v);                                                                    \
    } while (0)

/* nrm2 within a work-item: Blue's three accumulators (as LAPACK 3.10's dnrm2): squares of |a| > TBIG
 * scaled by SBIG², of |a| < TSML scaled by SSML², the others unscaled. Exact power-of-two scales, no
 * division and no branch, so it vectorises; NaN lands in the middle sum, inf in the big one. */
#define UPD_NRM2(T, big, med, sml, a_in)                                                           \
    do {                                                                                           \
        const T a_ = fabs(a_in);                                                                   \
        const T z_ = (T)0;                                                                         \
        const T tb_ = a_ * (T)SBIG, ts_ = a_ * (T)SSML;                                            \
        (big) += a_ > (T)TBIG ? tb_ * tb_ : z_;                                                    \
        (sml) += a_ < (T)TSML ? ts_ * ts_ : z_;                                                    \
        (med) += (a_ > (T)TBIG || a_ < (T)TSML) ? z_ : a_ * a_;                                    \
    } while (0)
/* The three sums as one (scale s, q) pair with the norm s*sqrt(q); a part too small to matter
 * beside a larger one underflows harmlessly. A middle sum below MSML (one square near TSML²) takes
 * the small sums' scale: unscaled, the small sum brought down to it could fall below the smallest
 * normal number, which devices that flush subnormals to zero drop (-cl-denorms-are-zero on PoCL:
 * nrm2 of 2^-63 and four times 1e-20 came out 1.7% short). Above MSML the small sum is below
 * count·2^-53 of the middle one (f64: count·2^-970), under its rounding. */
#define BLUE_TO_PAIR(s, q, big, med, sml)                                                          \
    do {                                                                                           \
        if ((big) != (A)0) {                                                                       \
            (s) = (A)1 / (A)SBIG;                                                                  \
            (q) = (big) + ((med) * (A)SBIG) * (A)SBIG;                                             \
        } else if ((med) != (A)0 && (med) < (A)MSML) {                                             \
            (s) = (A)1 / (A)SSML;                                                                  \
            (q) = ((med) * (A)SSML) * (A)SSML + (sml);                                             \
        } else if ((med) != (A)0) {                                                                \
            (s) = (A)1;                                                                            \
            (q) = (med) + ((sml) / (A)SSML) / (A)SSML;                                             \
        } else {                                                                                   \
            (s) = (A)1 / (A)SSML;                                                                  \
            (q) = (sml);                                                                           \
        }                                                                                          \
    } while (0)

/* Kernel names are spelt out in full: some compilers define builtins such as dot or min as macros. */

/* Combines two scalar nrm2 partials (s1, q1) ← (s2, q2). Equal scales (the common case: every
 * partial unscaled) just add, without the division. */
#define COMB_NRM2(s1, q1, s2, q2)                                                                  \
    do {                                                                                           \
        const A sum_ = (s1) + (s2);                                                                \
        const A ns_ = isnan(sum_) ? sum_ : fmax((s1), (s2));                                       \
        if ((s1) == (s2)) {                                                                        \
            (q1) += (q2);                                                                          \
        } else if (!(ns_ < (A)INFINITY)) {                                                         \
            (q1) = (A)1;                                                                           \
        } else if (ns_ > (A)0) {                                                                   \
            const A nb_ = ns_ < (A)TINY ? (A)BIG : (A)1;                                           \
            const A nr_ = (A)1 / (ns_ * nb_);                                                      \
            const A f1_ = ((s1) * nb_) * nr_, f2_ = ((s2) * nb_) * nr_;                            \
            (q1) = (q1) * f1_ * f1_ + (q2) * f2_ * f2_;                                            \
        }                                                                                          \
        (s1) = ns_;                                                                                \
    } while (0)

/* ---- the loops over a work-item's share --------------------------------------------------------- */
#if LAYOUT == 2
#define FOR_SHARE(i, count)                                                                        \
    for (size_t per_ = ((count) + get_global_size(0) - 1) / get_global_size(0),                    \
                i = get_global_id(0) * per_,                                                       \
                end_ = min((size_t)(count), i + per_);                                             \
         i < end_; i++)
#else
#define FOR_SHARE(i, count) for (size_t i = get_global_id(0); i < (count); i += get_global_size(0))
#endif
/* The vectors of a work-item's share (as FOR_SHARE) in the ACC accumulators acc_[] (and accw_[]):
 * UPD(ARG, u, k) folds vector k into accumulator u. Each accumulator sees its vectors in increasing
 * order (argmin/argmax scan them so). */
#if LAYOUT == 2
/* A work-item's share of count vectors, [k0_, end_), as ACC consecutive runs (streams) of sub_
 * vectors, the last one shortest; stream u's own span is [s_, e_). */
#define SHARE_SPAN(count)                                                                          \
    const size_t per_ = ((count) + get_global_size(0) - 1) / get_global_size(0),                   \
                 sub_ = (per_ + ACC - 1) / ACC, k0_ = get_global_id(0) * per_,                     \
                 end_ = min((size_t)(count), k0_ + per_)
#define STREAM_SPAN(u) const size_t s_ = k0_ + (size_t)(u) * sub_, e_ = min(end_, s_ + sub_)
/* The streams read in step while the last (shortest) lasts; then what is left of the others,
 * bounds-checked. */
#define SHARE_LOOP(count, UPD, ARG)                                                                \
    do {                                                                                           \
        SHARE_SPAN(count);                                                                         \
        size_t j_ = 0;                                                                             \
        for (; k0_ + (ACC - 1) * sub_ + j_ < end_; j_++)                                           \
            for (int u_ = 0; u_ < ACC; u_++) UPD(ARG, u_, k0_ + (size_t)u_ * sub_ + j_);           \
        for (; j_ < sub_; j_++)                                                                    \
            for (int u_ = 0; u_ < ACC - 1; u_++)                                                   \
                if (k0_ + (size_t)u_ * sub_ + j_ < end_) UPD(ARG, u_, k0_ + (size_t)u_ * sub_ + j_); \
    } while (0)
#else
/* Whole rounds of ACC vectors a global size apart, then the last few into accumulator 0. */
#define SHARE_LOOP(count, UPD, ARG)                                                                \
    do {                                                                                           \
        const size_t step_ = get_global_size(0), end_ = (count);                                   \
        size_t k_ = get_global_id(0);                                                              \
        for (; k_ + (ACC - 1) * step_ < end_; k_ += ACC * step_)                                   \
            for (int u_ = 0; u_ < ACC; u_++) UPD(ARG, u_, k_ + (size_t)u_ * step_);                \
        for (; k_ < end_; k_ += step_) UPD(ARG, 0, k_);                                            \
    } while (0)
#endif
/* LOOP(a, b, c), for f16 as one loop for raw words and one for vload_halfN, each with its load
 * alone. With the branch inside one loop, PoCL (3.1, AVX2) issued the aligned 16-byte load of the
 * raw path on an unaligned view as well (argmin, two accumulators) and crashed. */
#if DTYPE == 1 && VW > 1
#define RAW_LOOPS(LOOP, a, b, c)                                                                   \
    do {                                                                                           \
        if (raw_) {                                                                                \
            const int raw_ = 1;                                                                    \
            LOOP(a, b, c);                                                                         \
        } else {                                                                                   \
            const int raw_ = 0;                                                                    \
            LOOP(a, b, c);                                                                         \
        }                                                                                          \
    } while (0)
#else
#define RAW_LOOPS(LOOP, a, b, c) LOOP(a, b, c)
#endif
#define FOR_SHARE_ACC(count, UPD, ARG) RAW_LOOPS(SHARE_LOOP, count, UPD, ARG)
/* Accumulators 1 … ACC-1 folded into accumulator 0 by COMB(v, w, v2, w2) on whole vectors. */
#define ACC_FOLD(COMB)                                                                             \
    do {                                                                                           \
        for (int u_ = 1; u_ < ACC; u_++) COMB(acc_[0], accw_[0], acc_[u_], accw_[u_]);             \
    } while (0)
#define ACC_INIT(v0, w0)                                                                           \
    do {                                                                                           \
        for (int u_ = 0; u_ < ACC; u_++) acc_[u_] = (v0), accw_[u_] = (w0);                        \
    } while (0)

/* The tail after the last whole vector: few elements, interleaved. */
#define FOR_TAIL(i, from, count) for (size_t i = (from) + get_global_id(0); i < (count); i += get_global_size(0))

/* Tree over the work-group in local memory; COMB(v, w, v2, w2) folds the second pair into the first.
 * Afterwards item 0 holds the group's result in (v, w). */
#define GROUP_LOCALS(W)                                                                            \
    local A lv_[WG];                                                                               \
    local W lw_[WG];                                                                               \
    local uint last_ /* FUSED_FINAL's tree: this work-group finished last */
#define GROUP_TREE(W, v, w, COMB)                                                                  \
    do {                                                                                           \
        const size_t l_ = get_local_id(0);                                                         \
        lv_[l_] = (v);                                                                             \
        lw_[l_] = (w);                                                                             \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        for (size_t h_ = WG / 2; h_ > 0; h_ /= 2) {                                                \
            if (l_ < h_) {                                                                         \
                A v2_ = lv_[l_ + h_];                                                              \
                W w2_ = lw_[l_ + h_];                                                              \
                COMB(v, w, v2_, w2_);                                                              \
                lv_[l_] = (v);                                                                     \
                lw_[l_] = (w);                                                                     \
            }                                                                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                                          \
        }                                                                                          \
    } while (0)

/* Lanes of a vector state, stored to private arrays and folded one by one into a scalar state. */
#if VW == 1
#define FOLD_LANES(W, v, w, vv, vw, COMB) COMB(v, w, vv, vw)
#else
#define FOLD_LANES(W, v, w, vv, vw, COMB)                                                          \
    do {                                                                                           \
        A lv_[VW];                                                                                 \
        W lw_[VW];                                                                                 \
        CAT(vstore, VW)(vv, 0, lv_);                                                               \
        CAT(vstore, VW)(vw, 0, lw_);                                                               \
        for (int k_ = 0; k_ < VW; k_++) COMB(v, w, lv_[k_], lw_[k_]);                              \
    } while (0)
#endif

/* The outputs of part_<op>: item 0 writes its work-group's (v, w) as partial get_group_id(0) of
 * pv (from pvo) and pw (from pwo). The host's mode says what follows:
 * - MODE_PARTIALS: final_<op> combines the partials in a second launch;
 * - MODE_RESULT, the host's one-launch path of one work-group (it takes all of x): that partial is
 *   already the result, and the host points pv and pw at where final_<op> would write it
 *   (argmin/argmax: the value at pv[pvo], the index at pw[pwo]); nrm2, whose result is not its
 *   partial, writes s·sqrt(q) to pv[pvo];
 * - MODE_COUNTED (FUSE programs only): the last group to count itself done combines the partials
 *   (FUSED_FINAL).
 * W: pw's type. The rest are final_<op>'s outputs and FUSED_FINAL's counter (MODE_COUNTED's). */
#define MODE_PARTIALS 0
#define MODE_RESULT 1
#define MODE_COUNTED 2
#define PART_OUT(W)                                                                                \
    global A *pv, const ulong pvo, W *pw, const ulong pwo, const uint mode, W *out, const ulong oo, \
        global A *outv, const ulong ovo, volatile global uint *cnt

/* The second pass: one work-group combines the g partials (values P[i], seconds Q[i], read only
 * where SECOND) from (v0, w0) by COMB, in a tree over the group, and item 0 writes the result by
 * WRITE(v, w) to final_<op>'s outputs (out[oo]; argmin/argmax also outv[ovo]). W: the seconds'
 * type in the tree (FUSED_FINAL's PW: as pw stores them). */
/* Declares (v_, w_) = (v0, w0) and folds into it, by COMB, the partials first, first + step, …
 * below g (one work-item's share of COMBINE_PARTIALS; FUSE_SERIAL's item 0 takes them all). */
#define FOLD_PARTIALS(first, step, g, P, Q, W, v0, w0, COMB, SECOND)                               \
    A v_ = (v0);                                                                                   \
    W w_ = (w0);                                                                                   \
    for (size_t i_ = (first); i_ < (g); i_ += (step)) {                                            \
        const A p_ = (P)[i_];                                                                      \
        const W q_ = (SECOND) ? (W)(Q)[i_] : (W)0;                                                 \
        COMB(v_, w_, p_, q_);                                                                      \
    }
#define COMBINE_PARTIALS(g, P, Q, W, v0, w0, COMB, SECOND, WRITE)                                  \
    do {                                                                                           \
        FOLD_PARTIALS(get_local_id(0), WG, g, P, Q, W, v0, w0, COMB, SECOND);                      \
        GROUP_TREE(W, v_, w_, COMB);                                                               \
        if (get_local_id(0) == 0) WRITE(v_, w_);                                                   \
    } while (0)
#define WRITE_VALUE(v, w) (out[oo] = (v))
#define WRITE_NRM2(v, w) (out[oo] = (v) * sqrt(w))
#define WRITE_ARG(v, w) (out[oo] = (uint)(w), outv[ovo] = (v))
/* FUSE, at the end of part_<op>, after item 0 wrote the group's partial: item 0 counts the group
 * done, the partial ordered before the count (count_done); the group that counts last reads
 * every partial (volatile: from the device's shared cache, not a core's own) and combines them
 * (FUSE_SERIAL: its item 0 alone; else the group's tree, COMBINE_PARTIALS), then sets the counter
 * back to zero for the stream's next launch. No group waits for another, so the grid may run in
 * any order. OpenCL 1.2 leaves the visibility of one group's writes to another within a launch to
 * the device: the host asks for FUSE only where the count can order them (lib/reduce.c), and says
 * how in FENCE. */
#if FUSE
/* The counter's value before this group's count, the group's partial (written by this work-item)
 * released before it and the others' acquired after it. NVIDIA compiles OpenCL C 1.2's
 * mem_fence(CLK_GLOBAL_MEM_FENCE) to membar.cta, a fence for the work-group alone (H200, driver
 * 580), and does not list OpenCL C 3.0's device-scope atomics, so there the host sets FENCE 1 or 2
 * for PTX's device-wide orderings. */
#if FENCE == 2
static inline uint count_done(volatile global uint *c)
{
    uint old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(c) : "memory");
    return old;
}
#elif FENCE == 1
static inline uint count_done(volatile global uint *c)
{
    asm volatile("membar.gl;" ::: "memory");
    const uint old = atomic_inc(c);
    asm volatile("membar.gl;" ::: "memory");
    return old;
}
#else
/* OpenCL C 2.0's memory model: each group's count releases its partial, and the last group's
 * count acquires them all (an acquire-release read-modify-write at device scope). */
static inline uint count_done(volatile global uint *c)
{
    return atomic_fetch_add_explicit((volatile global atomic_uint *)c, 1u, memory_order_acq_rel, memory_scope_device);
}
#endif
/* The tree's barrier (FUSE_SERIAL 0), that tells the last group's work-items so. In OpenCL C
 * 2.0's model it must fence global memory too, so that what item 0 acquired happens before their
 * reads of the partials; PTX's bar.sync orders all of the work-group's memory accesses (FENCE 1,
 * 2: as measured). */
#if FENCE == 3
#define FUSE_BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#else
#define FUSE_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#endif
/* The counter back to zero, by the same family of atomics that counts on it (the launch's end
 * orders it before the stream's next launch). */
#if FENCE == 3
#define RESET_COUNT(c) atomic_store_explicit((volatile global atomic_uint *)(c), 0u, memory_order_relaxed, memory_scope_device)
#else
#define RESET_COUNT(c) atomic_xchg(c, 0u)
#endif
#if FUSE_SERIAL
/* The last group's item 0 combines the partials alone, in order, its own count acquiring them: no
 * barrier, where the tree's costs PoCL's compiler half as much again (reduce.c's FUSE_SERIAL), and a
 * CPU runs a work-group on one thread anyway. A launch of another mode takes one test more than
 * without FUSE, so one such program serves every length. */
#define FUSED_FINAL(W, PW, v0, w0, COMB, SECOND, WRITE)                                            \
    do {                                                                                           \
        if (mode == MODE_COUNTED && get_local_id(0) == 0 && count_done(cnt) == get_num_groups(0) - 1) { \
            const volatile global A *fp_ = pv + pvo;                                               \
            const volatile global PW *fq_ = pw + pwo;                                              \
            FOLD_PARTIALS(0, 1, get_num_groups(0), fp_, fq_, W, v0, w0, COMB, SECOND);             \
            WRITE(v_, w_);                                                                         \
            RESET_COUNT(cnt);                                                                      \
        }                                                                                          \
    } while (0)
#else
/* The group's tree: its barrier is taken in every mode, so the host builds such a program only for
 * the lengths it runs in one launch (lib/reduce.c). */
#define FUSED_FINAL(W, PW, v0, w0, COMB, SECOND, WRITE)                                            \
    do {                                                                                           \
        if (get_local_id(0) == 0) {                                                                \
            last_ = mode == MODE_COUNTED && count_done(cnt) == get_num_groups(0) - 1;              \
        }                                                                                          \
        FUSE_BARRIER();                                                                            \
        if (last_) {                                                                               \
            const volatile global A *fp_ = pv + pvo;                                               \
            const volatile global PW *fq_ = pw + pwo;                                              \
            COMBINE_PARTIALS(get_num_groups(0), fp_, fq_, W, v0, w0, COMB, SECOND, WRITE);         \
            if (get_local_id(0) == 0) RESET_COUNT(cnt);                                            \
        }                                                                                          \
    } while (0)
#endif
#else
#define FUSED_FINAL(W, PW, v0, w0, COMB, SECOND, WRITE)
#endif

/* ---- sum, asum, dot: the value only (w unused) ----------------------------------------------- */
#define COMB_ADD(v, w, v2, w2) ((v) += (v2))
#define ACC_ADD(VEC, u, k) (acc_[u] += VEC(x, y, k))
#define ELEM_X(x, y, i) LD(x, i)
#define ELEM_ABS(x, y, i) fabs(LD(x, i))
#define VEC_X(x, y, k) LDV(x, k)
#define VEC_ABS(x, y, k) fabs(LDV(x, k))

#define ADDITIVE(part_name, final_name, ELEM, VEC, ELEM_S)                                                          \
    __attribute__((reqd_work_group_size(WG, 1, 1))) kernel void part_name(                  \
        const ulong n, const global S *x, const ulong xo, const ulong incx, const global S *y,    \
        const ulong yo, const ulong incy, PART_OUT(global A))                                      \
    {                                                                                              \
        GROUP_LOCALS(A); \
        x += xo;                                                                                   \
        y += yo;                                                                                   \
        A v = (A)0, w = (A)0;                                                                      \
        if (incx == 1 && incy == 1) {                                                              \
            AV acc_[ACC], accw_[ACC];                                                              \
            ACC_INIT((AV)0, (AV)0);                                                                \
            const size_t nv = n / VW;                                                              \
            RAW_INIT(ALIGNED(x) && ALIGNED(y));                                                    \
            FOR_SHARE_ACC(nv, ACC_ADD, VEC);                                                       \
            ACC_FOLD(COMB_ADD);                                                                    \
            FOLD_LANES(A, v, w, acc_[0], acc_[0], COMB_ADD);                                       \
            FOR_TAIL(i, nv * VW, n) { v += ELEM(x, y, i); }                                        \
        } else {                                                                                   \
            FOR_SHARE(i, n) { v += ELEM_S(x, y, i); }                                              \
        }                                                                                          \
        GROUP_TREE(A, v, w, COMB_ADD);                                                             \
        if (get_local_id(0) == 0) pv[pvo + get_group_id(0)] = v;                                   \
        FUSED_FINAL(A, A, (A)0, (A)0, COMB_ADD, 0, WRITE_VALUE);                                   \
    }                                                                                              \
    __attribute__((reqd_work_group_size(WG, 1, 1))) kernel void final_name(                 \
        const uint g, const global A *pv, const global A *pw, const ulong pwo, global A *out, const ulong oo,       \
        global A *outv, const ulong ovo)                                                           \
    {                                                                                              \
        GROUP_LOCALS(A); \
        COMBINE_PARTIALS(g, pv, pw + pwo, A, (A)0, (A)0, COMB_ADD, 0, WRITE_VALUE);                \
    }

#define ELEM_DOT(x, y, i) (LD(x, i) * LD(y, i))
#define VEC_DOT(x, y, k) (LDV(x, k) * LDV(y, k))
#define ELEM_X_S(x, y, i) LD(x, i * incx)
#define ELEM_ABS_S(x, y, i) fabs(LD(x, i * incx))
#define ELEM_DOT_S(x, y, i) (LD(x, i * incx) * LD(y, i * incy))
#if WANT(0)
ADDITIVE(part_sum, final_sum, ELEM_X, VEC_X, ELEM_X_S)
#endif
#if WANT(1)
ADDITIVE(part_asum, final_asum, ELEM_ABS, VEC_ABS, ELEM_ABS_S)
#endif
#if WANT(2)
ADDITIVE(part_dot, final_dot, ELEM_DOT, VEC_DOT, ELEM_DOT_S)
#endif

/* ---- nrm2: (scale, q) ------------------------------------------------------------------------- */
/* A work-item first sums its share's squares unscaled, as dot(x, x) does: one multiply-add per
 * element. That sum q is Blue's result to within its own rounding whenever QMIN·count ≤ q ≤ QMAX:
 * no square overflowed, the squares of |a| < TSML (which may underflow, or flush to zero) add less
 * than one part in 2^mantissa, and partials that small or smaller combine without overflow over
 * 2^32 elements, as Blue's middle sum does. Otherwise (huge, infinite or tiny values, or a share
 * of zeros) the work-item reads its share again with Blue's three accumulators. So ordinary data
 * cost one multiply-add per element, not Blue's ten operations, and only unusual shares a second
 * read. A NaN makes q NaN, the result either way. */
#define SQ_ADD(q, a)                                                                               \
    do {                                                                                           \
        const A a_ = (a);                                                                          \
        (q) += a_ * a_;                                                                            \
    } while (0)
#define SQ_ADDV(q, a)                                                                              \
    do {                                                                                           \
        const AV a_ = (a);                                                                         \
        (q) += a_ * a_;                                                                            \
    } while (0)
#define ACC_SQ(X, u, k) SQ_ADDV(acc_[u], LDV(X, k))
/* The rare second pass over the share: ADD(q, a) for each scalar, ADDV(q, k) for vector k, whose
 * lanes it reads one by one into scalar accumulators (three vector accumulators would take
 * registers, and so occupancy, from the common first pass). The accumulators take blocks of
 * BLUE_BLOCK elements (bb_, bm_, bs_), each then added to the share's sums (big, med, sml): one
 * long serial sum lost two digits (f32, 2^20 equal values of 1e-25: 6.7e-5 relative error where the
 * first pass's lanes kept 7e-7). */
#define BLUE_BLOCK 64
#define BLUE_ADD(q, a)                                                                             \
    do {                                                                                           \
        UPD_NRM2(A, bb_, bm_, bs_, a);                                                             \
        if (++blk_ == BLUE_BLOCK) BLUE_FLUSH();                                                    \
    } while (0)
#define BLUE_FLUSH()                                                                               \
    do {                                                                                           \
        big += bb_, med += bm_, sml += bs_;                                                        \
        bb_ = bm_ = bs_ = (A)0;                                                                    \
        blk_ = 0;                                                                                  \
    } while (0)
#define NRM2_SHARE(ADD, ADDV)                                                                      \
    do {                                                                                           \
        if (incx == 1) {                                                                           \
            FOR_SHARE(k, nv) { ADDV(q, k); }                                                       \
            FOR_TAIL(i, nv * VW, n) { ADD(q, LD(x, i)); }                                          \
        } else {                                                                                   \
            FOR_SHARE(i, n) { ADD(q, LD(x, i * incx)); }                                           \
        }                                                                                          \
    } while (0)
#define BLUE_LANES(q, kv)                                                                          \
    do {                                                                                           \
        const size_t k_ = (kv);                                                                    \
        for (int l_ = 0; l_ < VW; l_++) BLUE_ADD(q, LD(x, k_ * VW + l_));                          \
    } while (0)
#if WANT(3)
__attribute__((reqd_work_group_size(WG, 1, 1))) kernel void part_nrm2(const ulong n, const global S *x,
                                                                       const ulong xo, const ulong incx,
                                                                       const global S *y, const ulong yo,
                                                                       const ulong incy, PART_OUT(global A))
{
    GROUP_LOCALS(A);
    x += xo;
    RAW_INIT(ALIGNED(x));
    const size_t nv = n / VW, gs = get_global_size(0);
    /* elements in this work-item's share, at most: whole vectors, and the tail's n - nv·VW (fewer
     * than VW) dealt one at a time across the grid (FOR_TAIL), more than one an item only where the
     * grid has fewer items than the tail has elements */
    const size_t count = incx == 1 ? (nv + gs - 1) / gs * VW + (n - nv * VW + gs - 1) / gs : (n + gs - 1) / gs;
    A s = (A)1, q = (A)0;
    /* Declared and folded outside the branch: folded inside it, next to the tail loop, PoCL 3.1
     * (16 items, 16-wide lanes, one accumulator) gave some work-items of the group that ran the
     * tail garbage sums. */
    AV acc_[ACC], accw_[ACC];
    ACC_INIT((AV)0, (AV)0);
    if (incx == 1) {
        FOR_SHARE_ACC(nv, ACC_SQ, x);
        FOR_TAIL(i, nv * VW, n) { SQ_ADD(q, LD(x, i)); }
    } else {
        FOR_SHARE(i, n) { SQ_ADD(q, LD(x, i * incx)); }
    }
    ACC_FOLD(COMB_ADD);
    FOLD_LANES(A, q, q, acc_[0], acc_[0], COMB_ADD);
    if (q > (A)QMAX || q < (A)count * (A)QMIN) {
        A big = (A)0, med = (A)0, sml = (A)0, bb_ = (A)0, bm_ = (A)0, bs_ = (A)0;
        int blk_ = 0;
        NRM2_SHARE(BLUE_ADD, BLUE_LANES);
        BLUE_FLUSH();
        BLUE_TO_PAIR(s, q, big, med, sml);
    }
    GROUP_TREE(A, s, q, COMB_NRM2);
    if (get_local_id(0) == 0 && mode == MODE_RESULT) {
        pv[pvo] = s * sqrt(q); /* as final_nrm2 */
    } else if (get_local_id(0) == 0) {
        pv[pvo + get_group_id(0)] = s;
        pw[pwo + get_group_id(0)] = q;
    }
    FUSED_FINAL(A, A, (A)0, (A)0, COMB_NRM2, 1, WRITE_NRM2);
}
__attribute__((reqd_work_group_size(WG, 1, 1))) kernel void final_nrm2(const uint g, const global A *pv,
                                                                        const global A *pw, const ulong pwo,
                                                                        global A *out,
                                                                        const ulong oo, global A *outv,
                                                                        const ulong ovo)
{
    GROUP_LOCALS(A);
    COMBINE_PARTIALS(g, pv, pw + pwo, A, (A)0, (A)0, COMB_NRM2, 1, WRITE_NRM2);
}
#endif

/* ---- min, max: the value only ------------------------------------------------------------------ */
#define COMB_MIN(v, w, v2, w2) UPD_MIN(A, v, w, v2)
#define COMB_MAX(v, w, v2, w2) UPD_MAX(A, v, w, v2)
#define COMB_VUPD_MIN(v, w, v2, w2) UPD_MIN(AV, v, w, v2)
#define COMB_VUPD_MAX(v, w, v2, w2) UPD_MAX(AV, v, w, v2)
#define ACC_EXT(UPD, u, k)                                                                         \
    do {                                                                                           \
        const AV e_ = LDV(x, k);                                                                   \
        UPD(AV, acc_[u], acc_[u], e_);                                                             \
    } while (0)
/* MINMAX_APART 1 (the host's choice: CPUs, one stream a work-item): the vector scan keeps NaN
 * apart. acc_[u] takes the smaller (larger) lane by one compare and select, which NaN never wins,
 * accw_[u] a NaN of the lane if one came; both fold after the scan, so NaN still wins. With
 * UPD_MIN's NaN test on the accumulator's chain, one stream a work-item ran in-cache (2^20 f32)
 * min and max at 21-37 GB/s, kept apart 40-72 (PoCL, 2-core AVX-512 EPYC, six alternating rounds
 * of ocx-bench); with four streams, and on the H200 (f16 at 2^28: 0.88x), the extra select cost
 * more than the chain saved. */
#if MINMAX_APART
#define ACC_EXT_APART(CMP, u, k)                                                                   \
    do {                                                                                           \
        const AV e_ = LDV(x, k);                                                                   \
        acc_[u] = (e_ CMP acc_[u]) ? e_ : acc_[u];                                                 \
        accw_[u] = isnan(e_) ? e_ : accw_[u];                                                      \
    } while (0)
#define EXT_SCAN(nv, UPD, CMP)                                                                     \
    do {                                                                                           \
        FOR_SHARE_ACC(nv, ACC_EXT_APART, CMP);                                                     \
        for (int u_ = 0; u_ < ACC; u_++) acc_[u_] = isnan(accw_[u_]) ? accw_[u_] : acc_[u_];       \
    } while (0)
#else
#define EXT_SCAN(nv, UPD, CMP) FOR_SHARE_ACC(nv, ACC_EXT, UPD)
#endif
#define EXTREMUM(part_name, final_name, UPD, COMB, INIT, CMP)                                                       \
    __attribute__((reqd_work_group_size(WG, 1, 1))) kernel void part_name(                  \
        const ulong n, const global S *x, const ulong xo, const ulong incx, const global S *y,    \
        const ulong yo, const ulong incy, PART_OUT(global A))                                      \
    {                                                                                              \
        GROUP_LOCALS(A); \
        x += xo;                                                                                   \
        A v = (A)(INIT), w = (A)0;                                                                 \
        if (incx == 1) {                                                                           \
            AV acc_[ACC], accw_[ACC];                                                              \
            ACC_INIT((AV)(INIT), (AV)0);                                                           \
            const size_t nv = n / VW;                                                              \
            RAW_INIT(ALIGNED(x));                                                                  \
            EXT_SCAN(nv, UPD, CMP);                                                                \
            ACC_FOLD(COMB_V##UPD);                                                                 \
            FOLD_LANES(A, v, w, acc_[0], acc_[0], COMB);                                           \
            FOR_TAIL(i, nv * VW, n) { const A e_ = LD(x, i); UPD(A, v, w, e_); }                                    \
        } else {                                                                                   \
            FOR_SHARE(i, n) { const A e_ = LD(x, i * incx); UPD(A, v, w, e_); }                                     \
        }                                                                                          \
        GROUP_TREE(A, v, w, COMB);                                                                 \
        if (get_local_id(0) == 0) pv[pvo + get_group_id(0)] = v;                                   \
        FUSED_FINAL(A, A, (A)(INIT), (A)0, COMB, 0, WRITE_VALUE);                                  \
    }                                                                                              \
    __attribute__((reqd_work_group_size(WG, 1, 1))) kernel void final_name(                 \
        const uint g, const global A *pv, const global A *pw, const ulong pwo, global A *out, const ulong oo,       \
        global A *outv, const ulong ovo)                                                           \
    {                                                                                              \
        GROUP_LOCALS(A); \
        COMBINE_PARTIALS(g, pv, pw + pwo, A, (A)(INIT), (A)0, COMB, 0, WRITE_VALUE);               \
    }
#if WANT(4)
EXTREMUM(part_min, final_min, UPD_MIN, COMB_MIN, INFINITY, <)
#endif
#if WANT(5)
EXTREMUM(part_max, final_max, UPD_MAX, COMB_MAX, -INFINITY, >)
#endif

/* ---- argmin, argmax: (value, index); partial indices are uint (n < 2^32) ---------------------- */
#define COMB_ARGMIN(v, w, v2, w2) UPD_ARG(A, int, <, v, w, v2, (w2))
#define COMB_ARGMAX(v, w, v2, w2) UPD_ARG(A, int, >, v, w, v2, (w2))
/* Accumulators hold interleaved indices: combined in the total order (UPD_ARG), not as a scan. */
#define COMB_VCOMB_ARGMIN(v, w, v2, w2) UPD_ARG(AV, MV, <, v, w, v2, (w2))
#define COMB_VCOMB_ARGMAX(v, w, v2, w2) UPD_ARG(AV, MV, >, v, w, v2, (w2))
/* The lanes' scan keeps the number k of the vector (one value for every lane, so no index
 * arithmetic a vector); ARG_SHARE turns it into element indices k*VW + lane once, after the scan.
 * The lanes start at vector 0 (SCAN_ARG_NOFIRST): lane q's claim (INIT, q) ties with lane 0's
 * (INIT, 0) and loses. */
#define ACC_ARG(CMP, u, k) SCAN_ARG_NOFIRST(AV, MV, CMP, acc_[u], accw_[u], LDV(x, k), (IV)((IDX)(k)))
/* The vectors of a work-item's share (nv of them) into its scalar state (v, w). */
#if LAYOUT == 2 && ARGBLOCKS
/* On CPUs the scan of (value, index) pairs ran at 2.3x the time of max alone (PoCL 3.1, AVX2, 2^24
 * f32: 14 against 33 GB/s). Each stream (as SHARE_LOOP's) is read in blocks of ARGB vectors that
 * keep only their lanes' extremes and whether a NaN passed (a select and an OR a vector); at each
 * block's end a lane whose block comes first in the order (NaN, then CMP, then the earlier block)
 * remembers it; at the end one block of the work-group is scanned again for the first index
 * (ARG_SHARE, ARG_FIRST). */
#define ARGB 16
#define ARG_TAKE_VEC(CMP, u, k)                                                                    \
    do {                                                                                           \
        const AV a_ = LDV(x, k);                                                                   \
        mb_[u] = a_ CMP mb_[u] ? a_ : mb_[u];                                                      \
        nb_[u] |= isnan(a_);                                                                       \
    } while (0)
/* k: the block's first vector; a lane that takes the block keeps the element index where it starts
 * (bb_; NONE: no block yet), which orders blocks as their elements (ARG_SHARE). */
#define ARG_BLOCK_END(CMP, INIT, u, k)                                                             \
    do {                                                                                           \
        const MV take_ = (!isnan(bv_[u])) & (nb_[u] | (mb_[u] CMP bv_[u]) | (bb_[u] == (IV)NONE)); \
        bv_[u] = take_ ? (nb_[u] ? (AV)NAN : mb_[u]) : bv_[u];                                     \
        bb_[u] = take_ ? (IV)((IDX)((k)*VW)) : bb_[u];                                             \
        mb_[u] = (AV)(INIT);                                                                       \
        nb_[u] = (MV)0;                                                                            \
    } while (0)
/* Whole blocks of B vectors of every stream in step while the last (shortest) stream has them;
 * then the rest of each stream, its last block short. */
#define ARG_BLOCKS(CMP, INIT, B)                                                                   \
    do {                                                                                           \
        const size_t last_ = k0_ + (ACC - 1) * sub_;                                               \
        const size_t fb_ = last_ < end_ ? (end_ - last_) / (B) : 0;                                \
        for (size_t b_ = 0; b_ < fb_; b_++) {                                                      \
            for (int j_ = 0; j_ < (B); j_++)                                                       \
                for (int u_ = 0; u_ < ACC; u_++) ARG_TAKE_VEC(CMP, u_, k0_ + (size_t)u_ * sub_ + b_ * (B) + j_); \
            for (int u_ = 0; u_ < ACC; u_++) ARG_BLOCK_END(CMP, INIT, u_, k0_ + (size_t)u_ * sub_ + b_ * (B)); \
        }                                                                                          \
        for (int u_ = 0; u_ < ACC; u_++) {                                                         \
            STREAM_SPAN(u_);                                                                       \
            for (size_t k_ = s_ + fb_ * (B); k_ < e_; k_ += (B)) {                                 \
                for (size_t j_ = k_; j_ < min(e_, k_ + (B)); j_++) ARG_TAKE_VEC(CMP, u_, j_);      \
                ARG_BLOCK_END(CMP, INIT, u_, k_);                                                  \
            }                                                                                      \
        }                                                                                          \
    } while (0)
#if VW == 1
#define STORE_LANES(vec, arr) ((arr)[0] = (vec))
#else
#define STORE_LANES(vec, arr) CAT(vstore, VW)((vec), 0, (arr))
#endif
#if VW == 1
#define ANY_LANE(m) (m)
#else
#define ANY_LANE(m) any(m)
#endif
/* A work-item's lanes as (value, key) pairs, in TAKE_ARG's order (NaN first, then CMP, then the
 * lower key): a lane's key is the element index where its block starts (bb_; NONE: no block).
 * Its streams fold into the first lane by lane, its lanes into (v, w); the tail's elements
 * (their own indices, above every block's) and the work-group's tree combine as any (value, index)
 * pairs. Then work-item 0 alone, where the winner is a block, scans that block again in vectors
 * for the first element equal to the extreme (a tie at ±0, or a NaN where the extreme is NaN;
 * ARG_FIRST). That is the first index: blocks are disjoint runs, ordered as their keys, and each
 * lane's block is the first that holds its extreme, so the earliest block holding the extreme in
 * any lane holds its first occurrence. Each work-item had scanned a block of its own again: half
 * of what every item of a group added to argmax and not to max (2-core AVX-512 Xeon, 2^16 f32 in
 * one group of 64 items: 5.6 of 10.7 us; ocx-bench under the CPU defaults, groups of 16, then ran
 * argmax 1.04-1.19x as fast, argmin level within the VM's noise). */
#define ARG_SHARE(nv, CMP, COMB, INIT, v, w) /* (COMB: LAYOUT 1's) */                            \
    do {                                                                                           \
        SHARE_SPAN(nv);                                                                            \
        AV mb_[ACC], bv_[ACC];                                                                     \
        MV nb_[ACC];                                                                               \
        IV bb_[ACC];                                                                               \
        for (int u_ = 0; u_ < ACC; u_++)                                                           \
            mb_[u_] = bv_[u_] = (AV)(INIT), nb_[u_] = (MV)0, bb_[u_] = (IV)NONE;                   \
        RAW_LOOPS(ARG_BLOCKS, CMP, INIT, ARGB);                                                    \
        for (int u_ = 1; u_ < ACC; u_++) UPD_ARG(AV, MV, CMP, bv_[0], bb_[0], bv_[u_], bb_[u_]);   \
        FOLD_LANES(IDX, v, w, bv_[0], bb_[0], COMB);                                               \
    } while (0)
/* In work-item 0, after the work-group's tree: a winning block's key becomes its first element
 * equal to the extreme v (above). */
#define ARG_FIRST(v, w)                                                                            \
    do {                                                                                           \
        const size_t nv_ = n / VW;                                                                 \
        if (incx == 1 && (w) < nv_ * VW) {                                                         \
            const A m_ = (v);                                                                      \
            const size_t j0_ = (w) / VW, j1_ = min(nv_, j0_ + ARGB);                               \
            (w) = NONE;                                                                            \
            for (size_t j_ = j0_; j_ < j1_ && (w) == NONE; j_++) {                                 \
                const AV xv_ = LDV_ANY(x, j_);                                                     \
                const MV at_ = isnan(m_) ? isnan(xv_) : xv_ == (AV)m_;                             \
                if (!ANY_LANE(at_)) continue;                                                      \
                MASK al_[VW];                                                                      \
                STORE_LANES(at_, al_);                                                             \
                for (int q_ = VW - 1; q_ >= 0; q_--)                                               \
                    if (al_[q_]) (v) = LD(x, j_ * VW + q_), (w) = (IDX)(j_ * VW + q_);             \
            }                                                                                      \
        }                                                                                          \
    } while (0)
#else
#define ARG_SHARE(nv, CMP, COMB, INIT, v, w)                                                       \
    do {                                                                                           \
        AV acc_[ACC];                                                                              \
        IV accw_[ACC];                                                                             \
        ACC_INIT((AV)(INIT), (IV)0);                                                               \
        FOR_SHARE_ACC(nv, ACC_ARG, CMP);                                                           \
        for (int u_ = 0; u_ < ACC; u_++) accw_[u_] = accw_[u_] * (IDX)VW + LANES;                  \
        ACC_FOLD(COMB_V##COMB);                                                                    \
        FOLD_LANES(IDX, v, w, acc_[0], accw_[0], COMB);                                            \
    } while (0)
#define ARG_FIRST(v, w)
#endif
#define ARGEXT(part_name, final_name, CMP, COMB, INIT)                                                              \
    __attribute__((reqd_work_group_size(WG, 1, 1))) kernel void part_name(                  \
        const ulong n, const global S *x, const ulong xo, const ulong incx, const global S *y,    \
        const ulong yo, const ulong incy, PART_OUT(global uint))                                   \
    {                                                                                              \
        GROUP_LOCALS(IDX); \
        x += xo;                                                                                   \
        A v = (A)(INIT);                                                                           \
        IDX w = NONE;                                                                              \
        if (incx == 1) {                                                                           \
            const size_t nv = n / VW;                                                              \
            RAW_INIT(ALIGNED(x));                                                                  \
            ARG_SHARE(nv, CMP, COMB, INIT, v, w);                                                  \
            FOR_TAIL(i, nv * VW, n) { SCAN_ARG(A, int, CMP, v, w, LD(x, i), (IDX)i); }                   \
        } else {                                                                                   \
            FOR_SHARE(i, n) { SCAN_ARG(A, int, CMP, v, w, LD(x, i * incx), (IDX)i); }                    \
        }                                                                                          \
        GROUP_TREE(IDX, v, w, COMB);                                                               \
        if (get_local_id(0) == 0) {                                                                \
            ARG_FIRST(v, w);                                                                       \
            pv[pvo + get_group_id(0)] = v;                                                         \
            pw[pwo + get_group_id(0)] = (uint)w;                                                         \
        }                                                                                          \
        FUSED_FINAL(IDX, uint, (A)(INIT), NONE, COMB, 1, WRITE_ARG);                               \
    }                                                                                              \
    __attribute__((reqd_work_group_size(WG, 1, 1))) kernel void final_name(                 \
        const uint g, const global A *pv, const global uint *pw, const ulong pwo, global uint *out, const ulong oo, \
        global A *outv, const ulong ovo)                                                           \
    {                                                                                              \
        GROUP_LOCALS(IDX); \
        COMBINE_PARTIALS(g, pv, pw + pwo, IDX, (A)(INIT), NONE, COMB, 1, WRITE_ARG);               \
    }
#if WANT(6)
ARGEXT(part_argmin, final_argmin, <, COMB_ARGMIN, INFINITY)
#endif
#if WANT(7)
ARGEXT(part_argmax, final_argmax, >, COMB_ARGMAX, -INFINITY)
#endif
