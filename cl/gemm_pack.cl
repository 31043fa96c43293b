/* gemm_pack.cl — copies one GEMM operand into a dense row-major buffer (lib/gemm.c: PACK).
 *
 * Element (r, c) of batch entry b, read from src[off + b*stride + r*sr + c*sc], goes to
 * dst[(b*rows + r)*pitch + c]: a transposed operand comes out with its other dimension fast, and
 * rows come out `pitch` elements apart (gemm.c picks a pitch that spreads them over the cache sets).
 * Elements are copied bit for bit, so one program per element size serves every dtype. Columns from
 * `cols` to `pitch` are left as they were: the GEMM kernels never read them.
 *
 * Parameters (-D): ESIZE  bytes of an element (2, 4 or 8).
 * Work-item (c, r, b); dimension 0 may run past cols (rounded up to the work-group size).
 */
#ifndef ESIZE
#define ESIZE 4
#endif
#if ESIZE == 2
#define T ushort
#elif ESIZE == 8
#define T ulong
#else
#define T uint
#endif

kernel void gemm_pack(const global T *restrict src, const ulong off, const ulong sr, const ulong sc,
                      const ulong stride, global T *restrict dst, const ulong rows, const ulong cols,
                      const ulong pitch)
{
    const ulong c = get_global_id(0), r = get_global_id(1), b = get_global_id(2);
    if (c >= cols) return;
    dst[(b * rows + r) * pitch + c] = src[off + b * stride + r * sr + c * sc];
}
