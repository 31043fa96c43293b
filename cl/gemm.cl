/* gemm.cl — the tiled GEMM kernel (seed document §3.2, grown up).
 *
 * Computes, for each batch entry, C = alpha * op(A) * op(B) + beta * C on a row-major view of C:
 * element (m, n) of C lives at C[offC + m*ldc + n]; element (m, k) of op(A) at A[offA + m*sam + k*sak];
 * element (k, n) of op(B) at B[offB + k*sbk + n*sbn]. The host maps every layout and transpose onto
 * these strides (column-major problems are computed as their transpose), so one program serves all
 * of them; one of each operand's two strides is always 1 (its "fast" dimension). Any M, N, K, strides
 * and offsets are legal: tile loads outside the matrices read zeros and stores outside C are skipped.
 *
 * A work-group of MDIMC*NDIMC work-items computes an MWG x NWG tile of C; work-item (tm, tn) holds an
 * MWI x NWI register tile (MWI = MWG/MDIMC, NWI = NWG/NDIMC). The K loop walks KWG-deep slices (STAGE=2):
 * the work-group copies the A and B slices into local memory, keeping each operand's global layout
 * (rows along its fast dimension, padded so vector accesses stay aligned and spread over the banks),
 * with loads of AV / BV elements at once along the fast dimension; then every work-item multiplies
 * its fragments, KU values of k at a time. Work-groups whose tile lies inside the matrices, and every
 * K slice but a partial last one, load without bounds checks (the test is uniform per work-group).
 * STAGE=1 (for CPUs) bypasses local memory and barriers: see the comment above NVW.
 * STAGE=3 and 4 are pipelined (see the comment above FETCH_SLICE): k-major local slices, the next
 * slice prefetched into registers during the multiply; 4 double-buffers local memory (1 barrier a slice).
 *
 * Register tile placement: rows tm + i*MDIMC when A is K-fast (conflict-free local reads of k-vectors),
 * else VWM-wide groups (i/VWM*MDIMC + tm)*VWM + i%VWM (vector reads along m); columns likewise with
 * NDIMC, VWN and B's layout.
 *
 * Parameters (-D, with defaults so that the file builds on its own):
 *   DTYPE   storage of A and B: 0 f32, 1 f16, 2 f64          CTYPE storage of C (default DTYPE)
 *   NATIVE_F16  1: f16 arithmetic (needs cl_khr_fp16), else f16 inputs are computed in f32
 *   MWG NWG KWG  work-group tile;  MDIMC NDIMC  work-group shape;  VWM VWN  vector widths (1, 2, 4, 8;
 *           VWN also 16)
 *   STAGE   2: local-memory staging, 1: no local memory (for CPUs; KWG, VWM, KUNR and UNROLL_TILE
 *           unused), 3, 4: pipelined
 *   KUNR    iterations of the loop over a slice's k unrolled (1: none; the trip count or more: all of
 *           them). NVIDIA's compiler keeps it rolled unless told: on an H200 STAGE=4 with KWG=16 ran
 *           42 TFLOP/s rolled, 46 unrolled whole; STAGE=2 gained from 2 and lost from 8.
 *   UNROLL_TILE  1: the loops over the register tile unrolled whole (see TILE_UNROLL)
 *   GM      work-group order: the grid's groups, in launch order, take the tiles GM tile-rows at a
 *           time (1: row after row; lib/gemm.c has the measurements)
 *   PFD     STAGE=1: B's rows prefetched PFD k ahead (0: none; see PREFETCH_B)
 *   Chosen by gemm.c from the call: AKF (1: sak == 1, A is K-fast; 0: sam == 1), BKF (1: sbk == 1,
 *   B is K-fast; 0: sbn == 1), AV BV (global vector widths: up to 4, dividing the tile's fast extent),
 *   IDX32 (1: every element index fits 32 bits), CT (STAGE=1 only; 1: the kernel's C is the transpose
 *   of the caller's, element (m, n) stored at C[offC + n*ldc + m]: gemm.c gives a thin product's
 *   large operand the role that the kernel streams best), PANEL (STAGE=1 only; 1: both operands come
 *   as panel copies, gemm_pack.cl's gemm_pack_panel: see the STAGE=1 code).
 * flags (argument): bit 0: the base offsets come from offs; bit 1 (A), bit 2 (B): the slow stride and
 * every base offset are multiples of AV / BV, so vector loads are aligned if the buffer is (checked
 * here: ADDR_FLAGS); else every load of that operand takes the checked scalar path. Kept out of the
 * defines: fewer programs to build.
 * Constraints (checked by gemm.c before building): MWG % (MDIMC*VWM) == 0 (STAGE=1: MWG % MDIMC),
 * NWG % (NDIMC*VWN) == 0, local memory and work-group limits.
 */
#ifndef DTYPE
#define DTYPE 0
#endif
#ifndef CTYPE
#define CTYPE DTYPE
#endif
#ifndef NATIVE_F16
#define NATIVE_F16 0
#endif
#ifndef MWG
#define MWG 64
#endif
#ifndef NWG
#define NWG 64
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 8
#endif
#ifndef NDIMC
#define NDIMC 8
#endif
#ifndef VWM
#define VWM 4
#endif
#ifndef VWN
#define VWN 4
#endif
#ifndef STAGE
#define STAGE 2
#endif
#ifndef KUNR
#define KUNR 1
#endif
#ifndef AKF
#define AKF 1
#endif
#ifndef BKF
#define BKF 0
#endif
#ifndef AV
#define AV 1
#endif
#ifndef BV
#define BV 1
#endif
#ifndef IDX32
#define IDX32 0
#endif
#ifndef UNROLL_TILE
#define UNROLL_TILE 0
#endif
#ifndef GM
#define GM 1
#endif
#ifndef CT
#define CT 0
#endif
#ifndef PANEL
#define PANEL 0
#endif
#ifndef PFD
#define PFD 0
#endif
/* PFD (the STAGE=1 kernel reading its operands in place, B N-fast: the only code that has the
 * prefetch): each k prefetches B's row PFD k ahead, where the compiler has __builtin_prefetch
 * (clang: PoCL; the host passes PFD=0 to other devices than CPUs); elsewhere nothing. A work-item
 * walks its columns of B down the rows, one row a page apart once B is 1024 floats wide: the
 * hardware's prefetchers, which follow runs within a page, then leave each row a miss (lib/gemm.c
 * has the measurements). */
#define PREFETCH_B 0
#if PFD && !BKF && defined(__has_builtin)
#if __has_builtin(__builtin_prefetch)
#undef PREFETCH_B
#define PREFETCH_B 1
#endif
#endif

/* The loop over a local slice's k: KUNR iterations unrolled (1: none; at least the trip count: all). */
#define PRAGMA_(x) _Pragma(#x)
#define PRAGMA(x) PRAGMA_(x)
#define KLOOP_UNROLL PRAGMA(unroll KUNR)
/* Loops over the register tile (its zeroing, the stores): UNROLL_TILE=1 (the GPUs' default) unrolls
 * them whole, so that every index into acc is a constant. NVIDIA's compiler otherwise kept a
 * copy of 128-element (8x16, 16x8) tiles on the stack: on the H200 the portable f16 GEMM at 8192^3
 * ran 39.1 TFLOP/s unrolled against 36.8, and f32 4096^3 on 128x128 tiles 46.2 against 44.8 (in the
 * call of the 46.2, 128x256 tiles ran 44.2 unrolled and 45.6 rolled). On CPUs the unrolled stores
 * only cost compile time. */
#if UNROLL_TILE
#define TILE_UNROLL PRAGMA(unroll)
#else
#define TILE_UNROLL
#endif

#include "gemm_common.h"


#define WG (MDIMC * NDIMC)
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)

#if IDX32
#define IDX uint
#else
#define IDX ulong
#endif

/* k values per step of the inner loop (and the width of local reads along k). */
#if KWG % 4 == 0
#define KU 4
#elif KWG % 2 == 0
#define KU 2
#else
#define KU 1
#endif

/* PUTn unpacks a vector (gemm_common.h's VT) into a private array. */
#define PUT1(v, t) ((t)[0] = (v))
#define PUT2(v, t) vstore2((v), 0, (t))
#define PUT4(v, t) vstore4((v), 0, (t))
#define PUT8(v, t) vstore8((v), 0, (t))
#define PUT16(v, t) vstore16((v), 0, (t))
#define UNPACK(n, v, t) CAT(PUT, n)(v, t)
#define LLD(n, p) (*(const local VT(n) *)(p))
#define LST(n, p, v) (*(local VT(n) *)(p) = (v))

/* Operand geometry. A: fast extent FA (along k if AKF, else m), slow extent SA_ (the other). */
#if AKF
#define FA KWG
#define SA_ MWG
#define ARD_W KU
#else
#define FA MWG
#define SA_ KWG
#define ARD_W VWM
#endif
#if BKF
#define FB KWG
#define SB_ NWG
#define BRD_W KU
#else
#define FB NWG
#define SB_ KWG
#define BRD_W VWN
#endif
/* Local rows are padded by the widest vector used on them (alignment kept, banks spread). */
#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define LFA (FA + MAX2(ARD_W, AV))
#define LFB (FB + MAX2(BRD_W, BV))
#define NVA ((MWG * KWG) / AV) /* vectors of an A slice */
#define NVB ((KWG * NWG) / BV)
#define LPTA ((NVA + WG - 1) / WG)
#define LPTB ((NVB + WG - 1) / WG)

/* Row of C (in the tile) of register row i, column of register column j. */
#if AKF && STAGE < 3
#define ROW(i) (tm + (i) * MDIMC)
#else
#define ROW(i) ((((i) / VWM) * MDIMC + tm) * VWM + (i) % VWM)
#endif
#if BKF && STAGE < 3
#define COL(j) (tn + (j) * NDIMC)
#else
#define COL(j) ((((j) / VWN) * NDIMC + tn) * VWN + (j) % VWN)
#endif

/* The batch entry's base offsets. */
#define BATCH_BASES()                                                                              \
    const IDX bat = (IDX)get_group_id(2);                                                          \
    BATCH_OFFSETS(IDX, bat)

/* Copies one operand's slice into local memory. X: A or B; base: global index of the slice's
 * first element; sld: the slow stride; slim, flim: in-range extents (slow, fast) from the slice start;
 * checked: bounds tests (else the whole slice lies inside the matrix). */
#define COPY_SLICE(Xs, X, XV, FX, LFX, NVX, LPTX, base, sld, slim, flim, checked)                 \
    for (int l = 0; l < LPTX; l++) {                                                               \
        const int e = l * WG + tid;                                                                \
        if (NVX % WG != 0 && e >= NVX) break;                                                      \
        const int f = (e % (FX / XV)) * XV, s = e / (FX / XV);                                     \
        local R *dst = Xs + s * LFX + f;                                                           \
        const global SA *src = X + (base) + (IDX)s * (sld) + (IDX)f;                                \
        if (!(checked)) {                                                                          \
            LST(XV, dst, GLD(XV, src));                                                            \
        } else {                                                                                   \
            for (int c = 0; c < XV; c++)                                                           \
                dst[c] = ((IDX)s < (slim) && (IDX)(f + c) < (flim)) ? (R)LDA_(src, c) : (R)0;      \
        }                                                                                          \
    }

/* STAGE 3 and 4 (pipelined): both slices are kept k-major in local memory (K-fast operands are
 * transposed on the copy), so the inner loop reads one k at a time: MWI + NWI fragment registers
 * instead of KU*(MWI + NWI). The next slice is loaded from global memory into registers (PA, PB)
 * while the current one is multiplied. STAGE 3: one local buffer (store, barrier, compute, barrier);
 * STAGE 4: two local buffers, one barrier per slice. LMA, LMB: padded k-row lengths. */
#define LMA (MWG + MAX2(VWM, AV))
#define LMB (NWG + MAX2(VWN, BV))
#define PK1(t) ((t)[0])
#define PK2(t) vload2(0, (t))
#define PK4(t) vload4(0, (t))
#define PK8(t) vload8(0, (t))
#define PK16(t) vload16(0, (t))
#define PACK(n, t) CAT(PK, n)(t)
/* KFV (default 1): a K-fast operand's slice is fetched in blocks of LPTX consecutive slow rows a
 * work-item (its l-th vector from row s0 + l; the work-items along the fast dimension still take
 * consecutive vectors of a row), so that STORE_SLICE transposes in registers and writes 4-wide
 * vectors along the slow dimension: one local store where there were 4. On the H200 (f32, the
 * 128x128 tiles, two alternating rounds, TFLOP/s) NT ran 8192^3 at 46.9-47.0 against 46.0-46.2 and
 * 4096^3 at 44.8-45.5 against 44.4-44.9, TT 47.3-47.4 against 46.8-47.0 and 45.6-46.0 against
 * 45.0-45.7; NN level (48.0-48.1 against 48.0-48.2; TN, M-fast A, is not concerned and runs 49.2).
 * Blocks spread along the slow dimension across a warp instead (conflict-free stores, but each load
 * instruction reading 16 bytes of 32 rows) ran NN 8192^3 at 43.3 against 48.0. Where the slice does
 * not divide so (KFB_A, KFB_B false), vector e of the slice goes to work-item e % WG. */
#ifndef KFV
#define KFV 1
#endif
#define KFV_ON(KF, FX, XV, NVX, LPTX, LMX)                                                         \
    (KFV && (KF) && (LPTX) % 4 == 0 && (NVX) % WG == 0 && WG % ((FX) / (XV)) == 0 && (LMX) % 4 == 0)
#define KFB_A KFV_ON(AKF, FA, AV, NVA, LPTA, LMA)
#define KFB_B KFV_ON(BKF, FB, BV, NVB, LPTB, LMB)
/* Fast (f) and slow (s) position of a work-item's l-th vector of a slice. */
#define SLICE_POS(KFB, FX, XV, LPTX, l, f, s)                                                      \
    if (KFB) {                                                                                     \
        f = (tid % ((FX) / (XV))) * (XV);                                                          \
        s = (tid / ((FX) / (XV))) * (LPTX) + (l);                                                  \
    } else {                                                                                       \
        f = (((l) * WG + tid) % ((FX) / (XV))) * (XV);                                             \
        s = ((l) * WG + tid) / ((FX) / (XV));                                                      \
    }
/* Registers P[LPTX][XV] <- slice of X; slow/fast as in COPY_SLICE. */
#define FETCH_SLICE(P, X, XV, FX, NVX, LPTX, KFB, base, sld, slim, flim, checked)                 \
    for (int l = 0; l < LPTX; l++) {                                                               \
        if (NVX % WG != 0 && l * WG + tid >= NVX) break;                                           \
        int f, s;                                                                                  \
        SLICE_POS(KFB, FX, XV, LPTX, l, f, s)                                                      \
        const global SA *src = X + (base) + (IDX)s * (sld) + (IDX)f;                                \
        if (!(checked)) {                                                                          \
            UNPACK(XV, GLD(XV, src), P[l]);                                                        \
        } else {                                                                                   \
            for (int c = 0; c < XV; c++)                                                           \
                P[l][c] = ((IDX)s < (slim) && (IDX)(f + c) < (flim)) ? (R)LDA_(src, c) : (R)0;     \
        }                                                                                          \
    }
/* Registers -> k-major local rows of length LMX. KF: the operand is K-fast (transpose). */
#define STORE_SLICE(Xs, P, XV, FX, NVX, LPTX, LMX, KF, KFB)                                        \
    if (KFB) {                                                                                     \
        int f, s;                                                                                  \
        SLICE_POS(1, FX, XV, LPTX, 0, f, s)                                                        \
        for (int l = 0; l < LPTX; l += 4)                                                          \
            for (int c = 0; c < XV; c++)                                                           \
                LST(4, (Xs) + (f + c) * (LMX) + s + l, (VT(4))(P[l][c], P[l + 1][c], P[l + 2][c], P[l + 3][c])); \
    } else                                                                                         \
    for (int l = 0; l < LPTX; l++) {                                                               \
        const int e = l * WG + tid;                                                                \
        if (NVX % WG != 0 && e >= NVX) break;                                                      \
        const int f = (e % (FX / XV)) * XV, s = e / (FX / XV);                                     \
        if (KF) {                                                                                  \
            for (int c = 0; c < XV; c++) (Xs)[(f + c) * (LMX) + s] = P[l][c];                      \
        } else {                                                                                   \
            LST(XV, (Xs) + s * (LMX) + f, PACK(XV, P[l]));                                         \
        }                                                                                          \
    }
#if AKF
#define FETCH_A(k0, chk) FETCH_SLICE(pa, A, AV, FA, NVA, LPTA, KFB_A, oa + m0 * sam + (k0), sam, M - m0, K - (k0), chk)
#else
#define FETCH_A(k0, chk) FETCH_SLICE(pa, A, AV, FA, NVA, LPTA, 0, oa + (k0) * sak + m0, sak, K - (k0), M - m0, chk)
#endif
#if BKF
#define FETCH_B(k0, chk) FETCH_SLICE(pb, B, BV, FB, NVB, LPTB, KFB_B, ob + n0 * sbn + (k0), sbn, N - n0, K - (k0), chk)
#else
#define FETCH_B(k0, chk) FETCH_SLICE(pb, B, BV, FB, NVB, LPTB, 0, ob + (k0) * sbk + n0, sbk, K - (k0), N - n0, chk)
#endif
#define FETCH(k0)                                                                                  \
    do {                                                                                           \
        const int chk_ = !full_mn || K - (k0) < (IDX)KWG;                                          \
        FETCH_A(k0, chk_ || !(flags & 2));                                                         \
        FETCH_B(k0, chk_ || !(flags & 4));                                                         \
    } while (0)
/* Register fragments of row k of the local slices La, Lb (MWI values of A, NWI of B). */
#define LOAD_FRAG(La, Lb, k, a, b)                                                                 \
    for (int i = 0; i < MWI; i += VWM) UNPACK(VWM, LLD(VWM, (La) + (k) * LMA + ROW(i)), (a) + i);  \
    for (int j = 0; j < NWI; j += VWN) UNPACK(VWN, LLD(VWN, (Lb) + (k) * LMB + COL(j)), (b) + j);
#define OUTER(a, b)                                                                                \
    for (int i = 0; i < MWI; i++)                                                                  \
        for (int j = 0; j < NWI; j++) acc[i][j] = mad((a)[i], (b)[j], acc[i][j]);
/* PIPE_FRAGS (the slice's k loop unrolled whole, as on GPUs): two sets of fragments, row k+1's
 * read from local memory while row k's are multiplied, so the reads' latency hides behind the
 * FMAs. NVIDIA's compiler did not schedule the unrolled loop that way by itself: on the H200, f32
 * 4096^3 on 128x128 tiles with 8x16 register tiles ran 46.8-47.4 TFLOP/s against 45.6-46.3 (wall
 * time; two calls, two rounds each), in 255 registers without spills; 8192^3 (64x128, 8x8) 47.8-48.3
 * against 47.6-47.8. Carrying the pipeline across slices too (the next slice stored, the barrier
 * passed and its first row requested before the last row's FMAs) ran 4096^3 at 41.7-42.5: the
 * loop's last step then held the stores, the barrier and the next fetch in one unrolled block
 * (more instructions, 40 loads more). A loop left rolled keeps one set (its index would vary).
 * Tried on the H200 since, and not kept (f32, the 128x128 tiles of 16x8, median TFLOP/s of 5 rounds
 * alternating call by call in one process, 8192^3 NN / NT / TN, the kernel as it is first):
 * - slices copied global -> local by cp.async (inline PTX; no registers hold the next slice), two
 *   or three in flight: 48.96 / 48.45 / 49.29 against 47.47 / 46.92 / 48.06 and 47.93 / 47.36 / 48.54
 *   (4096^3: 1.2% slower to 0.4% faster; KWG=32 on cp.async 47.55 NN);
 * - KWG=32 unrolled whole (67 KiB of local memory): 48.59 / 48.15 / 49.00;
 * - the fragments pipelined in a loop over pairs of k left rolled (1, 2 or 4 pairs an iteration:
 *   a shorter loop body): 44.1 against 49.3 NN, 43.5 against 48.8 NT;
 * - the next slice fetched through pointers stepped a slice at a time (not the indices recomputed
 *   under register pressure): 49.34 against 49.34; VWN=4 46.97; KWG=8 45.61.
 * - the FMAs of OUTER in other orders, for fewer register-bank conflicts in ptxas's allocation (the
 *   SASS, from the driver's PTX through ptxas 13.0, has 2400 instructions a slice, 2048 of them
 *   FFMA and 128 LDS; 361 FFMAs read two uncached sources of one bank, if banks are register
 *   numbers mod 2): rows in a serpentine (253 such FFMAs, 233 registers), columns outer (340) or
 *   columns outer in a serpentine (378). Two rounds each, 8192^3 NN / 4096^3 NN, as a share of
 *   the order kept: 0.98 / 0.98, 0.98 / 0.96, 1.00 / 0.97: that count is not what holds the
 *   kernel back. */
#define PIPE_FRAGS (KUNR >= KWG)
#if PIPE_FRAGS
#define MULTIPLY(La, Lb)                                                                           \
    {                                                                                              \
        R fa[2][MWI], fb[2][NWI];                                                                  \
        LOAD_FRAG(La, Lb, 0, fa[0], fb[0])                                                         \
        KLOOP_UNROLL                                                                               \
        for (int k = 0; k < KWG; k++) {                                                            \
            if (k + 1 < KWG) { LOAD_FRAG(La, Lb, k + 1, fa[(k + 1) & 1], fb[(k + 1) & 1]) }         \
            OUTER(fa[k & 1], fb[k & 1])                                                            \
        }                                                                                          \
    }
#else
#define MULTIPLY(La, Lb)                                                                           \
    KLOOP_UNROLL                                                                                   \
    for (int k = 0; k < KWG; k++) {                                                                \
        R a[MWI], b[NWI];                                                                          \
        LOAD_FRAG(La, Lb, k, a, b)                                                                 \
        OUTER(a, b)                                                                                \
    }
#endif


/* STAGE 1, for CPUs (PoCL): no local memory and no barrier, so the compiler keeps the kernel one
 * region and the caches share the operands between work-items. Each work-item streams MWI rows of
 * A and NVW column vectors of B (VWN wide) straight from global memory into MWI x NVW vector
 * accumulators: per k, NVW vector loads of B, MWI scalar loads of A and MWI*NVW FMAs, the register
 * tile fully unrolled (an OpenBLAS-style micro-kernel). The work-item owns rows r0 + i*MDIMC (r0 =
 * m0 + tm) below M; vector g covers columns n0 + (g*NDIMC + tn)*VWN onwards. In the last tile-row
 * the rows computed, first + i*MDIMC, are the owned ones moved back by whole steps of MDIMC until
 * the last is inside A (the host keeps MWG <= M, so first >= 0); likewise a vector of B that would
 * cross N is loaded shifted back to end at N; the stores keep only the rows and columns the
 * work-item owns. The rows' offsets stay affine in i, so that the compiler needs one pointer and
 * one stride for all of them: clamped offsets held in an array cost the 6x16 register tiles of
 * AVX2 three stack loads a k step on PoCL, and 8-10% (2-core AVX2 EPYC, 1020x1024x1024 f32,
 * median GFLOP/s of 5 alternating rounds: 142-145 against 158-160). A K-fast B (BKF) is gathered
 * column by column, clamped at N. */
#define NVW (NWI / VWN)
/* Where row m of the kernel's C starts, and column n's element in it (CT: C transposed). */
#if CT
#define CROW(m) (C + oc + (m))
#define CCOL(n) ((n) * ldc)
#else
#define CROW(m) (C + oc + (m) * ldc)
#define CCOL(n) (n)
#endif

__attribute__((reqd_work_group_size(WG, 1, 1))) kernel void
gemm_tiled(const ulong M_, const ulong N_, const ulong K_, const SCALAR alpha, const SCALAR beta,
           const global SA *restrict A, const ulong offA, const ulong sam_, const ulong sak_, const ulong strideA,
           const global SA *restrict B, const ulong offB, const ulong sbk_, const ulong sbn_, const ulong strideB,
           global SC *restrict C, const ulong offC, const ulong ldc_, const ulong strideC,
           const global ulong *restrict offs, const int flags_)
{
    const int flags = ADDR_FLAGS(flags_, AV, BV);
    const IDX M = (IDX)M_, N = (IDX)N_, K = (IDX)K_, ldc = (IDX)ldc_;
    const IDX sam = (IDX)sam_, sak = (IDX)sak_, sbk = (IDX)sbk_, sbn = (IDX)sbn_;
    const int tid = (int)get_local_id(0);
    const int tn = tid % NDIMC, tm = tid / NDIMC;
#if GM > 1
    /* The grid's groups in launch order, GM tile-rows at a time (column after column of GM tiles),
     * so that the groups running together share rows of A and columns of B in the caches. */
    const IDX tiles_n = (IDX)get_num_groups(0), tiles_m = (IDX)get_num_groups(1);
    const IDX pid = (IDX)get_group_id(1) * tiles_n + (IDX)get_group_id(0), band = (IDX)GM * tiles_n;
    const IDX first_m = pid / band * (IDX)GM, rows = min((IDX)GM, tiles_m - first_m);
    const IDX n0 = (pid % band) / rows * NWG, m0 = (first_m + (pid % band) % rows) * MWG;
#else
    const IDX n0 = (IDX)get_group_id(0) * NWG, m0 = (IDX)get_group_id(1) * MWG;
#endif
    BATCH_BASES();

#if STAGE == 1
    VT(VWN) acc[MWI][NVW];
#pragma unroll
    for (int i = 0; i < MWI; i++)
#pragma unroll
        for (int g = 0; g < NVW; g++) acc[i][g] = (VT(VWN))0;
    IDX own[NVW], at[NVW]; /* first column each vector owns, and where it is loaded from */
#if PANEL
    /* Both operands copied into panels (the host's PANEL): the work-item's rows r0 .. r0+MWI-1 are
     * panel r0/MWI of A, each k's MWI values side by side (sak = MWI, sam the panels' distance), and
     * its columns c0 .. c0+NWI-1 panel c0/NWI of B (sbk = NWI, sbn likewise), so that each walks two
     * runs of memory, k after k; rows and columns past M and N are zeros in the copies. */
#define RSTEP 1
    const IDX r0 = m0 + (IDX)(tm * MWI), first = r0, c0 = n0 + (IDX)(tn * NWI);
    if (r0 >= M || c0 >= N) return; /* owns nothing; its panels may not exist */
#pragma unroll
    for (int g = 0; g < NVW; g++) own[g] = at[g] = c0 + (IDX)(g * VWN);
    const global SA *ak = A + oa + r0 / (IDX)MWI * sam, *bk = B + ob + c0 / (IDX)NWI * sbn;
    for (IDX k = 0; k < K; k++, ak += sak, bk += sbk) {
        VT(VWN) b[NVW];
#pragma unroll
        for (int g = 0; g < NVW; g++) b[g] = GLDU(VWN, bk + g * VWN);
#pragma unroll
        for (int i = 0; i < MWI; i++) {
            const R a = (R)LDA_(ak, i);
#pragma unroll
            for (int g = 0; g < NVW; g++) acc[i][g] = a * b[g] + acc[i][g];
        }
    }
#else
#define RSTEP MDIMC
    const IDX r0 = m0 + (IDX)tm, last = r0 + (IDX)((MWI - 1) * MDIMC);
    const IDX first = last < M ? r0 : r0 - (last - M + (IDX)MDIMC) / (IDX)MDIMC * (IDX)MDIMC;
    const size_t arow = (size_t)(oa + first * sam), astep = (size_t)MDIMC * (size_t)sam;
#pragma unroll
    for (int g = 0; g < NVW; g++) {
        own[g] = n0 + (IDX)((g * NDIMC + tn) * VWN);
        at[g] = !BKF && own[g] > N - (IDX)VWN ? N - (IDX)VWN : own[g];
    }
#if !BKF
    if (N < (IDX)VWN) {
        /* Narrower than one vector (rare: the direct kernel takes most such calls): dot products. */
        for (int i = 0; i < MWI; i++) {
            const IDX m = first + (IDX)(i * MDIMC);
            if (m < r0 || m >= M) continue;
            for (int j = 0; j < NWI; j++) {
                const IDX n = own[0] + (IDX)((j / VWN) * NDIMC * VWN + j % VWN);
                if (n >= N) continue;
                R s = (R)0;
                for (IDX k = 0; k < K; k++) s += (R)LDA_(A, arow + i * astep + k * sak) * (R)LDA_(B, ob + k * sbk + n);
                UPDATE_C(CROW(m), CCOL(n), (R)alpha * s);
            }
        }
        return;
    }
#endif
    const global SA *ak = A, *bk = B + ob;
    for (IDX k = 0; k < K; k++, ak += sak, bk += sbk) {
        VT(VWN) b[NVW];
#if PREFETCH_B
        /* B's row PFD k ahead (the host's PFD): see PFD above */
#pragma unroll
        for (int g = 0; g < NVW; g++) __builtin_prefetch(bk + (size_t)PFD * sbk + at[g]);
#endif
#pragma unroll
        for (int g = 0; g < NVW; g++) {
#if BKF
            R t[VWN];
#pragma unroll
            for (int c = 0; c < VWN; c++) {
                const IDX n = own[g] + (IDX)c;
                t[c] = (R)LDA_(bk, (size_t)((n < N ? n : N - 1) * sbn));
            }
            b[g] = PACK(VWN, t);
#else
            b[g] = GLDU(VWN, bk + at[g]);
#endif
        }
#pragma unroll
        for (int i = 0; i < MWI; i++) {
            const R a = (R)LDA_(ak, arow + i * astep);
#pragma unroll
            for (int g = 0; g < NVW; g++) acc[i][g] = a * b[g] + acc[i][g];
        }
    }
#endif /* PANEL */
    /* The stores run as plain loops over a private copy: unrolling them only costs compile time. */
    VT(VWN) out[MWI][NVW];
#pragma unroll
    for (int i = 0; i < MWI; i++)
#pragma unroll
        for (int g = 0; g < NVW; g++) out[i][g] = acc[i][g];
    for (int i = 0; i < MWI; i++) {
        const IDX m = first + (IDX)(i * RSTEP);
        if (m < r0 || m >= M) continue;
        global SC *crow = CROW(m);
        for (int g = 0; g < NVW; g++) {
#if CTYPE == 1 && !NATIVE_F16 && !CT && VWN > 1
            /* An f16 row's whole vector at a time. PoCL (f16 in and out, A and B widened, GFLOP/s
             * of three alternating runs): 1024x1024x256 157-166 against 127-132 element by element,
             * 1024^3 147-158 against 138-154. (An f32 C ran 250: wherever the kernel stored f16, even
             * converting in integer arithmetic of its own, its k loop, which converts nothing, ran
             * slower; with stores of wrong bits, a plain shift, 224.) */
            if (at[g] == own[g] && own[g] + (IDX)VWN <= N) {
                VT(VWN) r = (R)alpha * out[i][g];
                if (beta != (SCALAR)0) r += (R)beta * CAT(vload_half, VWN)(0, crow + own[g]);
                CAT(CAT(vstore_half, VWN), _rte)(r, 0, crow + own[g]);
                continue;
            }
#endif
            for (int c = 0; c < VWN; c++) {
                const IDX n = at[g] + (IDX)c;
                if (n < own[g] || n >= N) continue;
                UPDATE_C(crow, CCOL(n), (R)alpha * ((const R *)&out[i][g])[c]);
            }
        }
    }
#else
    const int full_mn = M - m0 >= (IDX)MWG && N - n0 >= (IDX)NWG;

    R acc[MWI][NWI];
    TILE_UNROLL
    for (int i = 0; i < MWI; i++)
        TILE_UNROLL
        for (int j = 0; j < NWI; j++) acc[i][j] = (R)0;

#if STAGE >= 3
#if STAGE == 4
#define NBUF 2
#else
#define NBUF 1
#endif
    local R As[NBUF][KWG * LMA] __attribute__((aligned(64)));
    local R Bs[NBUF][KWG * LMB] __attribute__((aligned(64)));
    R pa[LPTA][AV], pb[LPTB][BV];
    FETCH((IDX)0);
    int buf = 0;
    for (IDX k0 = 0; k0 < K; k0 += KWG) {
        STORE_SLICE(As[buf], pa, AV, FA, NVA, LPTA, LMA, AKF, KFB_A);
        STORE_SLICE(Bs[buf], pb, BV, FB, NVB, LPTB, LMB, BKF, KFB_B);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k0 + KWG < K) FETCH(k0 + KWG);
        MULTIPLY(As[buf], Bs[buf]);
#if STAGE == 4
        buf ^= 1;
#else
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
#else /* STAGE 2 */
    local R As[SA_ * LFA] __attribute__((aligned(64)));
    local R Bs[SB_ * LFB] __attribute__((aligned(64)));

    for (IDX k0 = 0; k0 < K; k0 += KWG) {
        const int checked = !full_mn || K - k0 < (IDX)KWG;
        const int checked_a = checked || !(flags & 2), checked_b = checked || !(flags & 4);
#if AKF
        COPY_SLICE(As, A, AV, FA, LFA, NVA, LPTA, oa + m0 * sam + k0, sam, M - m0, K - k0, checked_a);
#else
        COPY_SLICE(As, A, AV, FA, LFA, NVA, LPTA, oa + k0 * sak + m0, sak, K - k0, M - m0, checked_a);
#endif
#if BKF
        COPY_SLICE(Bs, B, BV, FB, LFB, NVB, LPTB, ob + n0 * sbn + k0, sbn, N - n0, K - k0, checked_b);
#else
        COPY_SLICE(Bs, B, BV, FB, LFB, NVB, LPTB, ob + k0 * sbk + n0, sbk, K - k0, N - n0, checked_b);
#endif
        barrier(CLK_LOCAL_MEM_FENCE);

        KLOOP_UNROLL
        for (int kk = 0; kk < KWG; kk += KU) {
            R a[KU][MWI], b[KU][NWI];
#if AKF
            for (int i = 0; i < MWI; i++) {
                R t[KU];
                UNPACK(KU, LLD(KU, As + ROW(i) * LFA + kk), t);
                for (int u = 0; u < KU; u++) a[u][i] = t[u];
            }
#else
            for (int u = 0; u < KU; u++)
                for (int i = 0; i < MWI; i += VWM) UNPACK(VWM, LLD(VWM, As + (kk + u) * LFA + ROW(i)), a[u] + i);
#endif
#if BKF
            for (int j = 0; j < NWI; j++) {
                R t[KU];
                UNPACK(KU, LLD(KU, Bs + COL(j) * LFB + kk), t);
                for (int u = 0; u < KU; u++) b[u][j] = t[u];
            }
#else
            for (int u = 0; u < KU; u++)
                for (int j = 0; j < NWI; j += VWN) UNPACK(VWN, LLD(VWN, Bs + (kk + u) * LFB + COL(j)), b[u] + j);
#endif
            for (int u = 0; u < KU; u++)
                for (int i = 0; i < MWI; i++)
                    for (int j = 0; j < NWI; j++) acc[i][j] = mad(a[u][i], b[u][j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif

    /* C = alpha*acc + beta*C (beta == 0: C is not read). */
    TILE_UNROLL
    for (int i = 0; i < MWI; i++) {
        const IDX m = m0 + (IDX)ROW(i);
        if (!full_mn && m >= M) continue;
        global SC *crow = C + oc + m * ldc;
        TILE_UNROLL
        for (int j = 0; j < NWI; j++) {
            const IDX n = n0 + (IDX)COL(j);
            if (!full_mn && n >= N) continue;
            const R r = (R)alpha * acc[i][j];
            if (beta == (SCALAR)0)
                STC_(crow, n, r);
            else
                STC_(crow, n, r + (R)beta * LDC_(crow, n));
        }
    }
#endif /* STAGE */
}
