/* gemm_direct.cl — the direct GEMM kernel for small or awkward shapes: no local memory, no padding
 * copies, any M, N, K, strides and offsets. Work-item (n, m) of batch entry b computes C(m, n).
 *
 * Same conventions as gemm.cl: element (m, n) of C at C[oc + m*ldc + n], op(A)(m, k) at
 * A[oa + m*sam + k*sak], op(B)(k, n) at B[ob + k*sbk + n*sbn]; batch entry b takes its base offsets
 * from `offs` (3 per entry) when bit 0 of flags is set, else offX + b*strideX (other bits: gemm.cl's).
 *
 * Parameters (-D, with defaults so that the file builds on its own):
 *   DTYPE, CTYPE, NATIVE_F16   as in gemm.cl
 *   DWGN, DWGM                 work-group shape (dimension 0 walks n, dimension 1 walks m)
 *   IDX32                      1: every element index fits 32 bits (cheaper index arithmetic)
 *   DKU                        k steps whose loads are issued together before their multiply-adds
 * Small products are latency-bound: a work-item's k loop is a chain of global loads, so DKU steps'
 * loads go out at once (lib/gemm.c has the H200's figures).
 *
 * gemm_dot: products of at most four columns (matrix times vector, and times a few vectors) whose
 * op(A) is K-fast (sak = 1), read at the memory's rate. Work-group g of batch entry b takes rows
 * g*DROWS ... g*DROWS + DROWS - 1 of C; its DDOT work-items split k, each reading DVW consecutive
 * elements of each of those rows at a time (on GPUs the work-items' reads of a row coalesce; on
 * CPUs one work-item streams whole rows in wide vectors and multiplies each load of B's columns by
 * DROWS rows), then the partial sums meet in local memory, in a fixed order. Its defines:
 *   DDOT, DVW, DROWS           work-items a work-group (a power of two), the vector width along k,
 *                              rows a work-group
 *   NB                         the columns (N, 1 to DOTN: 16 at most)
 *   BK1                        1: B's columns are contiguous (sbk = 1)
 *   CT                         1: C's element (m, j) lies at C[oc + j*ldc + m] (the host took the
 *                              product as its transpose); else at C[oc + m*ldc + j]
 * flags bit 1: A's rows (base offsets and sam) are aligned to DVW elements; bit 2: B's columns
 * (sbk = 1) are.
 *
 * gemm_cols (below) takes the thin products whose large operand is N-fast, with work-items owning
 * columns; its DVW is the host's CVW, NB the rows (M), flags bit 2: B's rows aligned to DVW. And
 * gemm_sum adds up split K's partial products (gemm_cols's and gemm_tiled's).
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
#ifndef DWGN
#define DWGN 16
#endif
#ifndef DWGM
#define DWGM 8
#endif
#ifndef IDX32
#define IDX32 0
#endif
#ifndef DKU
#define DKU 8
#endif
#ifndef DDOT
#define DDOT 1
#endif
#ifndef DVW
#define DVW 16
#endif
#ifndef DROWS
#define DROWS 8
#endif
#ifndef NB
#define NB 1
#endif
#ifndef BK1
#define BK1 1
#endif
#ifndef CT
#define CT 0
#endif
#if IDX32
#define IDX uint
#else
#define IDX ulong
#endif

#include "gemm_common.h"

/* The arguments of every kernel here but gemm_sum (gemm.c: gemm_args_set), in gemm_tiled's order. */
#define GEMM_ARGS                                                                                  \
    const ulong M, const ulong N, const ulong K, const SCALAR alpha, const SCALAR beta,            \
        const global SA *restrict A, const ulong offA, const ulong sam, const ulong sak,           \
        const ulong strideA, const global SA *restrict B, const ulong offB, const ulong sbk,       \
        const ulong sbn, const ulong strideB, global SC *restrict C, const ulong offC,             \
        const ulong ldc, const ulong strideC, const global ulong *restrict offs, const int flags_

__attribute__((reqd_work_group_size(DWGN, DWGM, 1))) kernel void
gemm_direct(GEMM_ARGS)
{
    const int flags = flags_; /* no vector loads */
    const IDX n = (IDX)get_global_id(0), m = (IDX)get_global_id(1), bat = (IDX)get_group_id(2);
    if (m >= M || n >= N) return;
    BATCH_OFFSETS(IDX, bat)
    const IDX ak = (IDX)sak, bk = (IDX)sbk, kk = (IDX)K;
    const global SA *a = A + oa + m * (IDX)sam;
    const global SA *b = B + ob + n * (IDX)sbn;
    R acc[4] = {0, 0, 0, 0};
    IDX k = 0;
    for (; kk - k >= DKU; k += DKU) { /* not k + DKU <= kk: that wraps for K near 2^32 */
        R av[DKU], bv[DKU];
#pragma unroll
        for (int u = 0; u < DKU; u++) {
            av[u] = (R)LDA_(a, (k + u) * ak);
            bv[u] = (R)LDA_(b, (k + u) * bk);
        }
#pragma unroll
        for (int u = 0; u < DKU; u++) acc[u % 4] = mad(av[u], bv[u], acc[u % 4]);
    }
    for (; k < kk; k++) acc[0] = mad((R)LDA_(a, k * ak), (R)LDA_(b, k * bk), acc[0]);
    const R r = (R)alpha * ((acc[0] + acc[1]) + (acc[2] + acc[3]));
    global SC *c = C + oc + m * (IDX)ldc;
    if (beta == (SCALAR)0)
        STC_(c, n, r);
    else
        STC_(c, n, r + (R)beta * LDC_(c, n));
}

/* The sum of a vector's lanes, halves first (the same order on every device). */
#define HSUM_1(v) (v)
#define HSUM_2(v) ((v).s0 + (v).s1)
#define HSUM_4(v) HSUM_2((v).lo + (v).hi)
#define HSUM_8(v) HSUM_4((v).lo + (v).hi)
#define HSUM_16(v) HSUM_8((v).lo + (v).hi)
#define HSUM(n, v) CAT(HSUM_, n)(v)
/* A private array of DVW elements as a vector, and back. */
#if DVW == 1
#define VFROM(t) ((t)[0])
#define VTO(v, t) ((t)[0] = (v))
#else
#define VFROM(t) CAT(vload, DVW)(0, (t))
#define VTO(v, t) CAT(vstore, DVW)((v), 0, (t))
#endif
/* DVW elements of A's row (from p), of a B column (from element k of q: contiguous where BK1, else
 * gathered bk apart). Aligned vector loads (flags, ADDR_FLAGS) of 16 bytes at most, as the tiled
 * kernels'. */
#if DVW * (DTYPE == 2 ? 8 : DTYPE == 1 ? 2 : 4) <= 16
#define ALIGNED(f) (flags & (f))
#else
#define ALIGNED(f) 0
#endif
#define LOAD_A(p) (ALIGNED(2) ? GLD(DVW, p) : GLDU(DVW, p))
#if BK1
#define LOAD_B(q, k) (ALIGNED(4) ? GLD(DVW, (q) + (k)) : GLDU(DVW, (q) + (k)))
#elif DVW == 1
#define LOAD_B(q, k) ((R)LDA_(q, (k) * bk))
#else
#define LOAD_B(q, k) gather_b((q), (k), bk)
static inline VT(DVW) gather_b(const global SA *q, IDX k, IDX bk)
{
    R t[DVW];
#pragma unroll
    for (int u = 0; u < DVW; u++) t[u] = (R)LDA_(q, (k + (IDX)u) * bk);
    return VFROM(t);
}
#endif
/* C(m0 + i, j) = alpha*sum + beta*C (beta = 0: C is not read), rows past M left alone. */
#define STORE_C(i, j, sum)                                                                          \
    do {                                                                                           \
        const IDX m_ = m0 + (IDX)(i);                                                              \
        if (m_ < mm) UPDATE_C(C, CT ? oc + (IDX)(j) * (IDX)ldc + m_ : oc + m_ * (IDX)ldc + (IDX)(j),  \
                              (R)alpha * (sum));                                                   \
    } while (0)

__attribute__((reqd_work_group_size(DDOT, 1, 1))) kernel void
gemm_dot(GEMM_ARGS)
{
    const int flags = ADDR_FLAGS(flags_, DVW, DVW);
    const IDX tid = (IDX)get_local_id(0), m0 = (IDX)get_group_id(0) * DROWS, bat = (IDX)get_group_id(2);
    const IDX mm = (IDX)M, kk = (IDX)K, bk = (IDX)sbk;
    BATCH_OFFSETS(IDX, bat)
    const global SA *arow[DROWS]; /* rows past M read the last one (their sums are not stored) */
    const global SA *bcol[NB];
    VT(DVW) acc[DROWS][NB];
#pragma unroll
    for (int i = 0; i < DROWS; i++) {
        arow[i] = A + oa + (m0 + (IDX)i < mm ? m0 + (IDX)i : mm - 1) * (IDX)sam;
#pragma unroll
        for (int j = 0; j < NB; j++) acc[i][j] = (VT(DVW))0;
    }
#pragma unroll
    for (int j = 0; j < NB; j++) bcol[j] = B + ob + (IDX)j * (IDX)sbn;
    /* Whole vectors: the work-items take them in turn (kv of them); then the k left over, one each. */
    const IDX kv = kk / DVW, rem = kk - kv * DVW;
    for (IDX v = tid; v < kv; v = kv - v > DDOT ? v + DDOT : kv) { /* v + DDOT may pass 2^32 */
        const IDX k = v * DVW;
        VT(DVW) b[NB];
#pragma unroll
        for (int j = 0; j < NB; j++) b[j] = LOAD_B(bcol[j], k);
#pragma unroll
        for (int i = 0; i < DROWS; i++) {
            const VT(DVW) a = LOAD_A(arow[i] + k);
#pragma unroll
            for (int j = 0; j < NB; j++) acc[i][j] = mad(a, b[j], acc[i][j]);
        }
    }
    R s[DROWS][NB];
#pragma unroll
    for (int i = 0; i < DROWS; i++)
#pragma unroll
        for (int j = 0; j < NB; j++) s[i][j] = HSUM(DVW, acc[i][j]);
    for (IDX r = tid; r < rem; r += DDOT) {
        const IDX k = kv * DVW + r;
#pragma unroll
        for (int i = 0; i < DROWS; i++)
#pragma unroll
            for (int j = 0; j < NB; j++) s[i][j] = mad((R)LDA_(arow[i], k), (R)LDA_(bcol[j], k * bk), s[i][j]);
    }
#if DDOT > 1
    /* The work-items' sums, added pairwise in a tree (work-item t and t + h, h halving); the first
     * DROWS*NB work-items store one element each. */
    local R part[DROWS * NB][DDOT];
#pragma unroll
    for (int i = 0; i < DROWS; i++)
#pragma unroll
        for (int j = 0; j < NB; j++) part[i * NB + j][tid] = s[i][j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (IDX h = DDOT / 2; h > 0; h /= 2) {
        if (tid < h)
            for (int r = 0; r < DROWS * NB; r++) part[r][tid] += part[r][tid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (IDX r = tid; r < DROWS * NB; r += DDOT) STORE_C(r / NB, r % NB, part[r][0]);
#else
    for (int i = 0; i < DROWS; i++)
        for (int j = 0; j < NB; j++) STORE_C(i, j, s[i][j]);
#endif
}

/* gemm_cols: products of at most four rows (NB) whose op(B) is N-fast (sbn = 1): a few vectors times
 * a matrix (x * W with W stored K x N, and as C^T = op(B)^T op(A)^T, A^T x), which gemm_dot's rows
 * do not fit. Work-item t takes DVW consecutive columns of C, n0 = t*DVW, and walks k, multiplying
 * the row of B there (loads coalescing across work-items) by each row's element of A (the same for
 * all: a broadcast). Split K (gemm.c) runs the chunks as the batch, into partial products that
 * gemm_sum adds up. */
__attribute__((reqd_work_group_size(DDOT, 1, 1))) kernel void
gemm_cols(GEMM_ARGS)
{
    const int flags = ADDR_FLAGS(flags_, DVW, DVW);
    const IDX n0 = (IDX)get_global_id(0) * DVW, nn = (IDX)N, kk = (IDX)K, bat = (IDX)get_group_id(2);
    if (n0 >= nn) return;
    BATCH_OFFSETS(IDX, bat)
    const int whole = nn - n0 >= (IDX)DVW; /* all DVW columns inside C (else loads are clamped) */
    const global SA *b = B + ob + n0;
    const global SA *a = A + oa;
    VT(DVW) acc[NB];
#pragma unroll
    for (int i = 0; i < NB; i++) acc[i] = (VT(DVW))0;
#pragma unroll 4
    for (IDX k = 0; k < kk; k++, b += (IDX)sbk) {
        VT(DVW) bv;
        if (whole && ALIGNED(4)) {
            bv = GLD(DVW, b);
        } else if (whole) {
            bv = GLDU(DVW, b);
        } else {
            R t[DVW];
#pragma unroll
            for (int c = 0; c < DVW; c++) t[c] = (R)LDA_(b, n0 + (IDX)c < nn ? c : 0);
            bv = VFROM(t);
        }
#pragma unroll
        for (int i = 0; i < NB; i++) acc[i] = mad((VT(DVW))(R)LDA_(a, (IDX)i * (IDX)sam + k * (IDX)sak), bv, acc[i]);
    }
#pragma unroll
    for (int i = 0; i < NB; i++) {
        R t[DVW];
        VTO(acc[i], t);
#pragma unroll
        for (int c = 0; c < DVW; c++) {
            const IDX n = n0 + (IDX)c;
            if (n < nn) UPDATE_C(C, CT ? oc + n * (IDX)ldc + (IDX)i : oc + (IDX)i * (IDX)ldc + n, (R)alpha * t[c]);
        }
    }
}

/* Split K (gemm.c: KSPLIT): C = alpha * (the sum, in order, of `parts` partial products, each M x N
 * and row-major, M*N elements apart from offP on) + beta * C; CT: C's element (m, n) at
 * C[offC + n*ldc + m]. Work-item (n, m). */
kernel void gemm_sum(const ulong M, const ulong N, const SCALAR alpha, const SCALAR beta, const global R *restrict P,
                     const ulong offP, const ulong parts, global SC *restrict C, const ulong offC, const ulong ldc)
{
    const ulong n = get_global_id(0), m = get_global_id(1);
    if (n >= N || m >= M) return;
    const global R *p = P + offP + m * N + n;
    R s = (R)0;
    for (ulong i = 0; i < parts; i++) s += p[i * M * N];
    UPDATE_C(C, CT ? offC + n * ldc + m : offC + m * ldc + n, (R)alpha * s);
}
