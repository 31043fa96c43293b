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

#include "gemm_common.h"

__attribute__((reqd_work_group_size(DWGN, DWGM, 1))) kernel void
gemm_direct(const ulong M, const ulong N, const ulong K, const SCALAR alpha, const SCALAR beta,
            const global SA *restrict A, const ulong offA, const ulong sam, const ulong sak, const ulong strideA,
            const global SA *restrict B, const ulong offB, const ulong sbk, const ulong sbn, const ulong strideB,
            global SC *restrict C, const ulong offC, const ulong ldc, const ulong strideC,
            const global ulong *restrict offs, const int flags)
{
    const ulong n = get_global_id(0), m = get_global_id(1), bat = get_group_id(2);
    if (m >= M || n >= N) return;
    BATCH_OFFSETS(ulong, bat)
    const global SA *a = A + oa + m * sam;
    const global SA *b = B + ob + n * sbn;
    R acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
    ulong k = 0;
    for (; k + 4 <= K; k += 4) {
        acc0 = mad((R)LDA_(a, k * sak), (R)LDA_(b, k * sbk), acc0);
        acc1 = mad((R)LDA_(a, (k + 1) * sak), (R)LDA_(b, (k + 1) * sbk), acc1);
        acc2 = mad((R)LDA_(a, (k + 2) * sak), (R)LDA_(b, (k + 2) * sbk), acc2);
        acc3 = mad((R)LDA_(a, (k + 3) * sak), (R)LDA_(b, (k + 3) * sbk), acc3);
    }
    for (; k < K; k++) acc0 = mad((R)LDA_(a, k * sak), (R)LDA_(b, k * sbk), acc0);
    const R r = (R)alpha * ((acc0 + acc1) + (acc2 + acc3));
    global SC *c = C + oc + m * ldc;
    if (beta == (SCALAR)0)
        STC_(c, n, r);
    else
        STC_(c, n, r + (R)beta * LDC_(c, n));
}
