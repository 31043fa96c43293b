/* gemm_pack.cl — copies one GEMM operand into a dense row-major buffer (lib/gemm.c: PACK), or into
 * panels of rows (gemm_pack_panel, below).
 *
 * Element (r, c) of batch entry b, read from src[off + b*stride + r*sr + c*sc], goes to
 * dst[at + (b*rows + r)*pitch + c] (dst: the stream's scratch buffer, which may hold two copies):
 * a transposed operand comes out with its other dimension fast, and
 * rows come out `pitch` elements apart (gemm.c picks a pitch that spreads them over the cache sets).
 * Elements are copied bit for bit (but under WIDEN), so one program per element size serves every
 * dtype. Columns from `cols` to `pitch` are left as they were: the GEMM kernels never read them.
 *
 * gemm_pack: rows stay rows (sc == 1); work-item (c, r, b), dimension 0 rounded up past cols.
 * gemm_pack_t: a transpose (sr == 1, not read; sc the source's row pitch); work-item (c/TB, r/TB, b)
 * copies a TB x TB block, reading TB runs along the source's rows and writing TB runs along the
 * copy's. One element a work-item (the source read TB runs apart at every step) took PoCL longer
 * than the GEMM that followed: 1024^3 TN ran 137 GFLOP/s in all where NN ran 308. Its loops are
 * left to the compiler: unrolled whole, they added 0.4 s to PoCL's first build of this file (the
 * first GEMM of a process with empty caches, 1024^3 NN: 1.9-2.0 s against 1.5-1.6).
 *
 * WIDEN=1 (ESIZE 2): the copy holds f32, each f16 element widened (exactly) as it is copied, for
 * the CPU kernel, which then runs on f32 operands (lib/gemm.c: widen).
 *
 * Parameters (-D): ESIZE  bytes of an element (2, 4 or 8); PACK_KIND  the one kernel built: 0
 * gemm_pack, 1 gemm_pack_t, 2 gemm_pack_tl, 3 gemm_pack_panel (PW: its panels' rows); WIDEN  1:
 * f16 in, f32 out. One kernel a program, because fetching a program's binary for the disk cache
 * makes PoCL compile every kernel in it: the unused gemm_pack_t cost 0.2 s of the first 1024^3 NN
 * GEMM with empty caches (1.66-1.96 s against 1.83-2.25).
 */
#ifndef ESIZE
#define ESIZE 4
#endif
#ifndef PACK_KIND
#define PACK_KIND 0
#endif
#ifndef WIDEN
#define WIDEN 0
#endif
/* TS: a source element; T: a copied one; LD: source element i as a T */
#if WIDEN
#define TS half
#define T float
#define LD(p, i) vload_half((i), (p))
#else
#if ESIZE == 2
#define T ushort
#elif ESIZE == 8
#define T ulong
#else
#define T uint
#endif
#define TS T
#define LD(p, i) ((p)[i])
#endif

#if PACK_KIND == 0
kernel void gemm_pack(const global TS *restrict src, const ulong off, const ulong sr, const ulong sc,
                      const ulong stride, global T *restrict dst, const ulong at, const ulong rows,
                      const ulong cols, const ulong pitch)
{
    const ulong c = get_global_id(0), r = get_global_id(1), b = get_global_id(2);
    if (c >= cols) return;
    dst[at + (b * rows + r) * pitch + c] = LD(src, off + b * stride + r * sr + c * sc);
}

#elif PACK_KIND == 1
#define TB 16
kernel void gemm_pack_t(const global TS *restrict src, const ulong off, const ulong sr, const ulong sc,
                        const ulong stride, global T *restrict dst, const ulong at, const ulong rows,
                        const ulong cols, const ulong pitch)
{
    const ulong c0 = get_global_id(0) * TB, r0 = get_global_id(1) * TB, b = get_global_id(2);
    const global TS *s = src + off + b * stride;
    global T *d = dst + at + b * rows * pitch;
    if (c0 + TB <= cols && r0 + TB <= rows) {
        T t[TB][TB];
        for (int j = 0; j < TB; j++)
            for (int i = 0; i < TB; i++) t[j][i] = LD(s, (c0 + j) * sc + r0 + i);
        for (int i = 0; i < TB; i++)
            for (int j = 0; j < TB; j++) d[(r0 + i) * pitch + c0 + j] = t[j][i];
    } else {
        for (ulong i = r0; i < rows && i < r0 + TB; i++)
            for (ulong j = c0; j < cols && j < c0 + TB; j++) d[i * pitch + j] = LD(s, j * sc + i);
    }
}

#elif PACK_KIND == 3
/* gemm_pack_panel (lib/gemm.c: PANEL, for the CPU kernel): the rows in panels of PW, each panel
 * column after column with its PW values side by side: element (r, c) goes to
 * dst[at + (b*panels + r/PW)*PW*cols + c*PW + r%PW]; rows from `rows` to the last panel's end are
 * written as zeros (`pitch` is PW). A work-item writes PB columns of one panel, one run of PB*PW
 * elements; a whole block reads PB runs of PW elements as vectors (sr == 1) or PW runs of PB,
 * transposed in registers (sc == 1). Where sr == 1 dimension 0 of the launch walks the panels, so
 * that neighbouring work-items read neighbouring runs of the same PB columns (work-item (panel,
 * c/PB, b)); else it walks the columns (work-item (c/PB, panel, b)). PoCL (2-core AVX-512 Xeon,
 * 1024 x 1024 f32, kernel time) took 3 ms an operand with PW an argument and every element
 * checked, half the product's time; 619 us (a K-fast A, sc == 1) and 445 us (an N-fast B, sr == 1)
 * with PW a define, element by element, the launch walking the columns; 550 and 362 us so. With
 * every loop unrolled (388 and 345 us) PoCL took 3.1 s to build and run a process's first 1024^3
 * GEMM from empty caches, against 1.14 s without panels and 1.40 s with only the transposition's
 * inner loop unrolled, as here. */
#ifndef PW
#define PW 8
#endif
#define PB 16
/* RV: the widest vector (up to 16 elements) that divides PW; LDV, STV: n elements as one vector. */
#if PW % 16 == 0
#define RV 16
#elif PW % 8 == 0
#define RV 8
#elif PW % 4 == 0
#define RV 4
#elif PW % 2 == 0
#define RV 2
#else
#define RV 1
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if WIDEN
#define LDV_1(p) vload_half(0, (p))
#define LDV_2(p) vload_half2(0, (p))
#define LDV_4(p) vload_half4(0, (p))
#define LDV_8(p) vload_half8(0, (p))
#define LDV_16(p) vload_half16(0, (p))
#else
#define LDV_1(p) (*(p))
#define LDV_2(p) vload2(0, (p))
#define LDV_4(p) vload4(0, (p))
#define LDV_8(p) vload8(0, (p))
#define LDV_16(p) vload16(0, (p))
#endif
#define STV_1(p, v) (*(p) = (v))
#define STV_2(p, v) vstore2((v), 0, (p))
#define STV_4(p, v) vstore4((v), 0, (p))
#define STV_8(p, v) vstore8((v), 0, (p))
#define STV_16(p, v) vstore16((v), 0, (p))
#define LDV(n, p) CAT(LDV_, n)(p)
#define STV(n, p, v) CAT(STV_, n)(p, v)
kernel void gemm_pack_panel(const global TS *restrict src, const ulong off, const ulong sr, const ulong sc,
                            const ulong stride, global T *restrict dst, const ulong at, const ulong rows,
                            const ulong cols, const ulong pitch)
{
    /* dimension 0: the panels where sr == 1, else the columns (both ids read: PoCL 3.1 failed to
     * link a kernel calling get_global_id with a dimension known only at run time) */
    const int by_panel = sr == 1;
    const ulong g0 = get_global_id(0), g1 = get_global_id(1), b = get_global_id(2);
    const ulong c0 = (by_panel ? g1 : g0) * PB, p = by_panel ? g0 : g1, r0 = p * PW;
    const ulong panels = (rows + PW - 1) / PW;
    if (c0 >= cols || p >= panels) return; /* past the end: the host rounds dimension 0 up */
    const global TS *s = src + off + b * stride + r0 * sr + c0 * sc;
    global T *d = dst + at + ((b * panels + p) * cols + c0) * PW;
    if (r0 + PW <= rows && c0 + PB <= cols && (sr == 1 || sc == 1)) {
        if (sr == 1) { /* PB runs of PW, copied as vectors */
            for (int j = 0; j < PB; j++)
                for (int i = 0; i < PW; i += RV) STV(RV, d + j * PW + i, LDV(RV, s + j * sc + i));
        } else { /* PW runs of PB, transposed in registers */
            T t[PW][PB];
            for (int i = 0; i < PW; i++) STV(PB, t[i], LDV(PB, s + i * sr));
            for (int j = 0; j < PB; j++)
#pragma unroll
                for (int i = 0; i < PW; i++) d[j * PW + i] = t[i][j];
        }
        return;
    }
    for (ulong j = 0; j < PB && c0 + j < cols; j++)
        for (int i = 0; i < PW; i++) d[j * PW + i] = r0 + i < rows ? LD(s, i * sr + j * sc) : (T)0;
}

#else
/* gemm_pack_tl: the same transpose through local memory, for GPUs (the kernels that stage tiles
 * in local memory, STAGE >= 2, take it): a work-group of 32 x 8 work-items moves a 32 x 32 block,
 * reading 32-element runs along the source's rows (dimension 0 walks the copy's rows r) and writing
 * 32-element runs along the copy's (the block's columns c); rows padded by one element against bank
 * conflicts. Work-item (r, c/4, b). Built only on devices whose work-groups take 256 items, so that
 * its required work-group size reaches no other compiler. */
#define TL 32
__attribute__((reqd_work_group_size(TL, 8, 1))) kernel void
gemm_pack_tl(const global TS *restrict src, const ulong off, const ulong sr, const ulong sc, const ulong stride,
             global T *restrict dst, const ulong at, const ulong rows, const ulong cols, const ulong pitch)
{
    local T t[TL][TL + 1];
    const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
    const ulong r0 = get_group_id(0) * TL, c0 = get_group_id(1) * TL, b = get_global_id(2);
    const global TS *s = src + off + b * stride;
    global T *d = dst + at + b * rows * pitch;
    for (int j = ly; j < TL; j += 8)
        if (r0 + lx < rows && c0 + j < cols) t[j][lx] = LD(s, (c0 + j) * sc + r0 + lx);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = ly; j < TL; j += 8)
        if (r0 + j < rows && c0 + lx < cols) d[(r0 + j) * pitch + c0 + lx] = t[lx][j];
}
#endif
