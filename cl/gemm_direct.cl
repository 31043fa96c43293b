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
#if IDX32
#define IDX uint
#else
#define IDX ulong
#endif

#include "gemm_common.h"

__attribute__((reqd_work_group_size(DWGN, DWGM, 1))) kernel void
gemm_direct(const ulong M, const ulong N, const ulong K, const SCALAR alpha, const SCALAR beta,
            const global SA *restrict A, const ulong offA, const ulong sam, const ulong sak, const ulong strideA,
            const global SA *restrict B, const ulong offB, const ulong sbk, const ulong sbn, const ulong strideB,
            global SC *restrict C, const ulong offC, const ulong ldc, const ulong strideC,
            const global ulong *restrict offs, const int flags)
{
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
