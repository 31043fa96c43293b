/* gemm_nv_mma.cl — f16 GEMM with f32 accumulation on NVIDIA tensor cores, through inline PTX.
 *
 * Built only for NVIDIA devices of compute capability 8.0 or more, after a probe (lib/gemm_nv.c).
 * Same problem and argument list as gemm_tiled in gemm.cl: for each batch entry,
 * C = alpha * op(A) * op(B) + beta * C on a row-major view of C; op(A)(m, k) at A[offA + m*sam + k*sak],
 * op(B)(k, n) at B[offB + k*sbk + n*sbn], C(m, n) at C[offC + m*ldc + n]; one of each operand's two
 * strides is 1. A and B are f16 (read as raw 16-bit words), C is f16 or f32. Any M, N, K, strides and
 * offsets: chunks outside the matrices are zero-filled, stores outside C are skipped.
 *
 * Shape: a work-group of NT = 32*(BM/WM)*(BN/WN) work-items (warps of 32) computes a BM x BN tile of C;
 * each warp a WM x WN sub-tile as (WM/16) x (WN/8) tiles of mma.sync.m16n8k16 (row.col, f16 in, f32
 * accumulators in registers). The K loop walks BK-deep slices through a STAGES-deep ring of local
 * memory: the slice STAGES-1 ahead is copied with cp.async (16 bytes, bypassing L1) while the current
 * one is multiplied, so global latency hides behind the tensor cores. Fragments go from local memory to
 * registers with ldmatrix (.trans for an operand stored the other way round), so every layout and
 * transpose runs at the same speed.
 *
 * Local layout: each operand's slice keeps its global layout, rows along its fast dimension (A K-fast:
 * [BM][BK]; M-fast: [BK][BM]; B K-fast: [BN][BK]; N-fast: [BK][BN]). Rows are split into 16-byte chunks
 * and chunk c of row r is stored at c ^ f(r) (an XOR swizzle, no padding): the 8 row addresses of
 * every ldmatrix phase and the cp.async writes then hit 8 different 16-byte bank groups, and the
 * STAGES slices still fit the 48 KiB NVIDIA's OpenCL allows a work-group.
 *
 * Work-group order: group_id(0) is mapped onto tiles GM tile-rows at a time (neighbouring work-groups
 * share A rows and B columns in L2). The batch entry is group_id(1).
 *
 * Parameters (-D): BM BN BK WM WN STAGES GM (gemm_nv.c checks them against the device first);
 * AKF BKF (1: the operand is K-fast); CTYPE (1: C is f16, 0: f32); PTX (1: the tensor-core
 * instructions, NVIDIA only; 2: the same instructions emulated through local memory, for tests on
 * any device; 0: they are left out and the kernel computes zeros, for the probe-failure test).
 * flags (argument): bit 0: base offsets from offs; bit 1 (A), bit 2 (B): the operand's slow stride and
 * every base offset are multiples of 8 elements, so 16-byte cp.async copies are aligned (else that
 * operand is copied with checked scalar loads).
 */
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef GM
#define GM 8
#endif
#ifndef AKF
#define AKF 1
#endif
#ifndef BKF
#define BKF 0
#endif
#ifndef CTYPE
#define CTYPE 0
#endif
#ifndef PTX
#define PTX 1
#endif

#define NWARP ((BM / WM) * (BN / WN))
#define NT (32 * NWARP)
#define MT (WM / 16) /* m16 tiles per warp */
#define NT8 (WN / 8) /* n8 tiles per warp */

/* Local slices, in halfs: A then B for each stage. Row widths (halfs) of the stored layouts. */
#define A_W (AKF ? BK : BM)
#define B_W (BKF ? BK : BN)
#define A_ROWS (AKF ? BM : BK)
#define B_ROWS (BKF ? BN : BK)
#define A_SLICE (BM * BK)
#define B_SLICE (BN * BK)
#define STAGE_HALFS (A_SLICE + B_SLICE)

/* The swizzle: 16-byte chunk c of row r of a W-half-wide slice is stored at chunk c ^ SWZ(W, r).
 * Rows per 128 bytes: 8/(W/8) when W < 64; the XOR spans min(W/8, 8) chunks. */
#define CPR(W) ((W) / 8)
#define SWZ(W, r) (CPR(W) >= 8 ? ((r) & 7) : (((r) / (8 / CPR(W))) & (CPR(W) - 1)))
#define SOFF(W, r, c) (((r) * (W) + (((c) ^ SWZ(W, (r))) * 8)) * 2) /* byte offset */

#if PTX == 1
#define EMU_DECL
#define CP_ASYNC(dst, src, bytes)                                                                  \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes))
#define CP_COMMIT() asm volatile("cp.async.commit_group;\n" ::: "memory")
#if STAGES == 2
#define CP_WAIT() asm volatile("cp.async.wait_group 0;\n" ::: "memory")
#elif STAGES == 3
#define CP_WAIT() asm volatile("cp.async.wait_group 1;\n" ::: "memory")
#elif STAGES == 4
#define CP_WAIT() asm volatile("cp.async.wait_group 2;\n" ::: "memory")
#else
#define CP_WAIT() asm volatile("cp.async.wait_group 3;\n" ::: "memory")
#endif
#define CP_WAIT_ALL() asm volatile("cp.async.wait_all;\n" ::: "memory")
#define LDSM_X4(r, addr)                                                                           \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"                \
                 : "=r"((r)[0]), "=r"((r)[1]), "=r"((r)[2]), "=r"((r)[3])                          \
                 : "r"(addr))
#define LDSM_X4_T(r, addr)                                                                         \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"          \
                 : "=r"((r)[0]), "=r"((r)[1]), "=r"((r)[2]), "=r"((r)[3])                          \
                 : "r"(addr))
#define MMA(d, a, b0, b1)                                                                          \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, " \
                 "{%8,%9}, {%0,%1,%2,%3};\n"                                                       \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3])                          \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"(b0), "r"(b1))
#elif PTX == 2
/* Emulation (OCX_VENDOR_PATHS=emulate, tests on any device): the warp-wide instructions computed
 * through local memory, with the operand layouts the PTX manual gives for ldmatrix and
 * mma.m16n8k16, so that the kernel's indexing (swizzle, fragments, pipeline, edges) is checked on
 * every CI run. Slow; uniform control flow makes the work-group barriers legal. */
#define EMU_DECL local uint emu_scr[NWARP][32 * 6];
#define CP_COMMIT()
#define CP_WAIT()
#define CP_WAIT_ALL()
#define LDSM_X4(r, addr) emu_ldsm((r), (addr), 0, emu_scr[warp], lane, smem, sbase)
#define LDSM_X4_T(r, addr) emu_ldsm((r), (addr), 1, emu_scr[warp], lane, smem, sbase)
#define MMA(d, a, b0, b1) emu_mma((d), (a), (b0), (b1), emu_scr[warp], lane)
/* ldmatrix.x4: lanes 8i..8i+7 give the row addresses of matrix i; lane t gets, of each matrix, row
 * t/4 columns 2(t%4), +1 (.trans: rows 2(t%4), +1 of column t/4), low half first. */
inline void emu_ldsm(uint *r, uint addr, int trans, local uint *scr, int lane, local uchar *smem, uint sbase)
{
    scr[lane] = addr;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 4; i++) {
        if (!trans) {
            r[i] = *(local uint *)(smem + (scr[8 * i + lane / 4] - sbase) + (lane % 4) * 4);
        } else {
            uint lo = *(local ushort *)(smem + (scr[8 * i + 2 * (lane % 4)] - sbase) + (lane / 4) * 2);
            uint hi = *(local ushort *)(smem + (scr[8 * i + 2 * (lane % 4) + 1] - sbase) + (lane / 4) * 2);
            r[i] = lo | (hi << 16);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
/* mma.m16n8k16.row.col: A(r, k) is half k%2 of register (r/8) + 2(k/8) of lane 4(r%8) + (k%8)/2;
 * B(k, n) half k%2 of register k/8 of lane 4n + (k%8)/2; D register e of lane t is row t/4 + 8(e/2),
 * column 2(t%4) + e%2. */
inline void emu_mma(float *d, const uint *a, uint b0, uint b1, local uint *scr, int lane)
{
    for (int i = 0; i < 4; i++) scr[lane * 6 + i] = a[i];
    scr[lane * 6 + 4] = b0;
    scr[lane * 6 + 5] = b1;
    barrier(CLK_LOCAL_MEM_FENCE);
    const local half *h = (const local half *)scr;
    for (int e = 0; e < 4; e++) {
        const int row = lane / 4 + (e >> 1) * 8, col = 2 * (lane % 4) + (e & 1);
        float sum = d[e];
        for (int k = 0; k < 16; k++) {
            const int al = (row % 8) * 4 + (k % 8) / 2, ar = row / 8 + (k / 8) * 2;
            const int bl = col * 4 + (k % 8) / 2, br = 4 + k / 8;
            sum = fma(vload_half(2 * (al * 6 + ar) + (k & 1), h), vload_half(2 * (bl * 6 + br) + (k & 1), h), sum);
        }
        d[e] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#else
/* PTX=0 (OCX_VENDOR_PATHS=force on a device that is not NVIDIA): the kernel still builds but
 * computes nothing, which the probe detects: the probe-failure path, tested on every CI run. */
#define EMU_DECL
#define CP_COMMIT()
#define CP_WAIT()
#define CP_WAIT_ALL()
#define LDSM_X4(r, addr) ((r)[0] = (r)[1] = (r)[2] = (r)[3] = (addr) & 0u)
#define LDSM_X4_T(r, addr) LDSM_X4(r, addr)
#define MMA(d, a, b0, b1) ((void)(a), (void)(b0), (void)(b1))
#endif

/* Loops over fragments are unrolled (the accumulators must stay in registers), except in the
 * emulation, whose barriers would multiply. */
#if PTX == 2
#define UNROLL _Pragma("unroll 1")
#else
#define UNROLL _Pragma("unroll")
#endif

#if CTYPE == 1
#define SC half
#define LDC_(p, i) vload_half((i), (p))
#define STC_(p, i, v) vstore_half_rte((v), (i), (p))
#else
#define SC float
#define LDC_(p, i) ((p)[i])
#define STC_(p, i, v) ((p)[i] = (v))
#endif

/* One operand's share of a slice copy: chunk q = tid + i*NT of a ROWS x W slice (W/8 chunks a row).
 * Precomputed per chunk: its address at k = 0, the index along K that it starts at (row or column),
 * and its fixed extent along the other dimension. */
#define A_CHUNKS (A_SLICE / 8 / NT)
#define B_CHUNKS (B_SLICE / 8 / NT)

/* Copies 8 halfs (`n` of them valid, the rest zero) from global p into local byte address dst. */
inline void copy_chunk(const uint dst, const global ushort *p, const int n, const int aligned, local uchar *base)
{
#if PTX == 1
    if (aligned) {
        CP_ASYNC(dst, p, n > 0 ? (uint)(n * 2) : 0u);
    } else
#endif
    {
        ushort v[8];
        for (int e = 0; e < 8; e++) v[e] = e < n ? p[e] : (ushort)0;
        local uint4 *d = (local uint4 *)(base + (dst - (uint)(ulong)base));
        *d = (uint4)(v[0] | ((uint)v[1] << 16), v[2] | ((uint)v[3] << 16), v[4] | ((uint)v[5] << 16),
                     v[6] | ((uint)v[7] << 16));
    }
}

__attribute__((reqd_work_group_size(NT, 1, 1))) kernel void
gemm_mma(const ulong M_, const ulong N_, const ulong K_, const float alpha, const float beta,
         const global ushort *restrict A, const ulong offA, const ulong sam, const ulong sak, const ulong strideA,
         const global ushort *restrict B, const ulong offB, const ulong sbk, const ulong sbn, const ulong strideB,
         global SC *restrict C, const ulong offC, const ulong ldc, const ulong strideC,
         const global ulong *restrict offs, const int flags)
{
    local uint4 smem_[STAGES * STAGE_HALFS / 8];
    EMU_DECL
    local uchar *smem = (local uchar *)smem_;
    const uint sbase = (uint)(ulong)smem;

    const long M = (long)M_, N = (long)N_, K = (long)K_;
    const int tid = (int)get_local_id(0), lane = tid & 31, warp = tid >> 5;
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;

    /* Tile of this work-group, GM tile-rows at a time. */
    const long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const long pid = (long)get_group_id(0), per_group = GM * tiles_n;
    const long first_m = (pid / per_group) * GM;
    const long gsize = min((long)GM, tiles_m - first_m);
    const long m0 = (first_m + (pid % per_group) % gsize) * BM;
    const long n0 = ((pid % per_group) / gsize) * BN;

    const ulong bat = get_group_id(1);
    ulong oa, ob, oc;
    if (flags & 1) {
        oa = offs[3 * bat];
        ob = offs[3 * bat + 1];
        oc = offs[3 * bat + 2];
    } else {
        oa = offA + bat * strideA;
        ob = offB + bat * strideB;
        oc = offC + bat * strideC;
    }
    const int a_al = (flags >> 1) & 1, b_al = (flags >> 2) & 1;

    /* Per chunk: global pointer at k = 0, start along K (kpos), valid extent across K (fix: rows
     * 0/1 for a K-fast operand, elements 0..8 for a K-slow one). */
    const global ushort *ap[A_CHUNKS];
    int akpos[A_CHUNKS], afix[A_CHUNKS];
    uint aoff[A_CHUNKS];
UNROLL
    for (int i = 0; i < A_CHUNKS; i++) {
        const int q = tid + i * NT, r = q / CPR(A_W), c = q % CPR(A_W);
        aoff[i] = SOFF(A_W, r, c);
#if AKF /* row r = m, chunk c along k */
        const long m = m0 + r;
        ap[i] = A + oa + (m < M ? m : 0) * sam + (long)c * 8;
        akpos[i] = c * 8;
        afix[i] = m < M;
#else /* row r = k, chunk c along m */
        const long m = m0 + (long)c * 8;
        ap[i] = A + oa + (long)r * sak + (m < M ? m : 0);
        akpos[i] = r;
        afix[i] = (int)clamp(M - m, 0L, 8L);
#endif
    }
    const global ushort *bp[B_CHUNKS];
    int bkpos[B_CHUNKS], bfix[B_CHUNKS];
    uint boff[B_CHUNKS];
UNROLL
    for (int i = 0; i < B_CHUNKS; i++) {
        const int q = tid + i * NT, r = q / CPR(B_W), c = q % CPR(B_W);
        boff[i] = SOFF(B_W, r, c);
#if BKF /* row r = n, chunk c along k */
        const long n = n0 + r;
        bp[i] = B + ob + (n < N ? n : 0) * sbn + (long)c * 8;
        bkpos[i] = c * 8;
        bfix[i] = n < N;
#else /* row r = k, chunk c along n */
        const long n = n0 + (long)c * 8;
        bp[i] = B + ob + (long)r * sbk + (n < N ? n : 0);
        bkpos[i] = r;
        bfix[i] = (int)clamp(N - n, 0L, 8L);
#endif
    }

    /* Issues the copies of the slice starting at k0 into stage s (valid elements per chunk: along K
     * for a K-fast operand, across K for a K-slow one; K-fast chunks past the end read nothing). */
#if AKF
#define A_STEP 1
#define A_VALID(i, k0) (afix[i] ? (int)clamp(K - (k0)-akpos[i], 0L, 8L) : 0)
#else
#define A_STEP sak
#define A_VALID(i, k0) ((k0) + akpos[i] < K ? afix[i] : 0)
#endif
#if BKF
#define B_STEP 1
#define B_VALID(i, k0) (bfix[i] ? (int)clamp(K - (k0)-bkpos[i], 0L, 8L) : 0)
#else
#define B_STEP sbk
#define B_VALID(i, k0) ((k0) + bkpos[i] < K ? bfix[i] : 0)
#endif
#define LOAD_SLICE(s, k0)                                                                          \
    do {                                                                                           \
        const uint st_ = sbase + (uint)((s) * STAGE_HALFS * 2);                                    \
        UNROLL for (int i = 0; i < A_CHUNKS; i++) {                                     \
            const int v_ = A_VALID(i, k0);                                                         \
            copy_chunk(st_ + aoff[i], v_ > 0 ? ap[i] + (k0)*A_STEP : A, v_, a_al, smem);           \
        }                                                                                          \
        UNROLL for (int i = 0; i < B_CHUNKS; i++) {                                     \
            const int v_ = B_VALID(i, k0);                                                         \
            copy_chunk(st_ + A_SLICE * 2 + boff[i], v_ > 0 ? bp[i] + (k0)*B_STEP : B, v_, b_al, smem); \
        }                                                                                          \
    } while (0)

    /* ldmatrix row addresses of this lane, relative to a stage, for each k16 step and tile. */
    uint a_ld[BK / 16][MT], b_ld[BK / 16][NT8 / 2];
UNROLL
    for (int kk = 0; kk < BK / 16; kk++) {
UNROLL
        for (int t = 0; t < MT; t++) {
#if AKF /* [m][k]: lanes 0-15 rows at k, 16-31 the same rows at k+8 */
            const int r = wm0 + t * 16 + (lane & 15), c = kk * 2 + (lane >> 4);
#else /* [k][m], transposed load: matrix j = lane/8 holds k + (j/2)*8, m + (j%2)*8 */
            const int j = lane >> 3, r = kk * 16 + (lane & 7) + (j >> 1) * 8, c = (wm0 + t * 16) / 8 + (j & 1);
#endif
            a_ld[kk][t] = SOFF(A_W, r, c);
        }
UNROLL
        for (int t = 0; t < NT8 / 2; t++) {
            const int j = lane >> 3;
#if BKF /* [n][k]: matrices (n, k), (n, k+8), (n+8, k), (n+8, k+8) */
            const int r = wn0 + t * 16 + (lane & 7) + (j >> 1) * 8, c = kk * 2 + (j & 1);
#else /* [k][n], transposed: (k, n), (k+8, n), (k, n+8), (k+8, n+8) */
            const int r = kk * 16 + (lane & 7) + (j & 1) * 8, c = (wn0 + t * 16) / 8 + (j >> 1);
#endif
            b_ld[kk][t] = A_SLICE * 2 + SOFF(B_W, r, c);
        }
    }

    float acc[MT][NT8][4];
UNROLL
    for (int i = 0; i < MT; i++)
UNROLL
        for (int j = 0; j < NT8; j++) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;

    /* Prologue: the first STAGES-1 slices in flight. */
    const long nk = (K + BK - 1) / BK;
UNROLL
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk) LOAD_SLICE(s, (long)s * BK);
        CP_COMMIT();
    }

    int rs = 0, ws = STAGES - 1; /* stage read now, stage written next */
    for (long kt = 0; kt < nk; kt++) {
        CP_WAIT(); /* this work-item's copies of slice kt have landed ... */
        barrier(CLK_LOCAL_MEM_FENCE); /* ... everyone's too, and slice kt-1 is no longer read */
        const long kn = kt + STAGES - 1;
        if (kn < nk) LOAD_SLICE(ws, kn * BK);
        CP_COMMIT();

        const uint st = sbase + (uint)(rs * STAGE_HALFS * 2);
UNROLL
        for (int kk = 0; kk < BK / 16; kk++) {
            uint af[MT][4], bf[NT8 / 2][4];
UNROLL
            for (int t = 0; t < MT; t++) {
#if AKF
                LDSM_X4(af[t], st + a_ld[kk][t]);
#else
                LDSM_X4_T(af[t], st + a_ld[kk][t]);
#endif
            }
UNROLL
            for (int t = 0; t < NT8 / 2; t++) {
#if BKF
                LDSM_X4(bf[t], st + b_ld[kk][t]);
#else
                LDSM_X4_T(bf[t], st + b_ld[kk][t]);
#endif
            }
UNROLL
            for (int i = 0; i < MT; i++)
UNROLL
                for (int j = 0; j < NT8; j++) MMA(acc[i][j], af[i], bf[j / 2][(j & 1) * 2], bf[j / 2][(j & 1) * 2 + 1]);
        }
        rs = rs + 1 == STAGES ? 0 : rs + 1;
        ws = ws + 1 == STAGES ? 0 : ws + 1;
    }
    CP_WAIT_ALL();

    /* C = alpha*acc + beta*C (beta == 0: C is not read). Accumulator (i, j) holds rows lane/4 and
     * lane/4 + 8, columns 2*(lane%4) and +1, of its 16 x 8 tile. */
UNROLL
    for (int i = 0; i < MT; i++) {
UNROLL
        for (int h = 0; h < 2; h++) {
            const long m = m0 + wm0 + i * 16 + (lane >> 2) + h * 8;
            if (m >= M) continue;
            global SC *crow = C + oc + m * (long)ldc;
UNROLL
            for (int j = 0; j < NT8; j++) {
UNROLL
                for (int e = 0; e < 2; e++) {
                    const long n = n0 + wn0 + j * 8 + (lane & 3) * 2 + e;
                    if (n >= N) continue;
                    const float r = alpha * acc[i][j][h * 2 + e];
                    if (beta == 0.0f)
                        STC_(crow, n, r);
                    else
                        STC_(crow, n, r + beta * LDC_(crow, n));
                }
            }
        }
    }
}
