/* gemm_nv_mma.cl — f16 GEMM with f32 accumulation on NVIDIA tensor cores, through inline PTX; with
 * X3=1, f32 GEMM as three TF32 products (OCX_COMPUTE_TF32X3: see X3 below, mma.sync only).
 *
 * Built only for NVIDIA devices of compute capability 8.0 or more, after a probe (lib/gemm_nv.c).
 * Same problem and argument list as gemm_tiled in gemm.cl: for each batch entry,
 * C = alpha * op(A) * op(B) + beta * C on a row-major view of C; op(A)(m, k) at A[offA + m*sam + k*sak],
 * op(B)(k, n) at B[offB + k*sbk + n*sbn], C(m, n) at C[offC + m*ldc + n]; one of each operand's two
 * strides is 1. A and B are f16 (read as raw 16-bit words; X3: f32, as raw 32-bit words), C is f16 or
 * f32. Any M, N, K, strides and offsets: chunks outside the matrices are zero-filled, stores outside
 * C are skipped.
 *
 * Shape (mma.sync; WGMMA=1 below): a work-group of NT = 32*(BM/WM)*(BN/WN) work-items (warps of 32)
 * computes a BM x BN tile of C; each warp a WM x WN sub-tile as (WM/16) x (WN/8) tiles of
 * mma.sync.m16n8k16 (row.col, f16 in, f32 accumulators in registers; X3: m16n8k8 with TF32
 * operands). The K loop walks BK-deep slices through a STAGES-deep ring of local memory: the slice
 * STAGES-1 ahead is copied with cp.async (16 bytes, bypassing L1) while the current one is
 * multiplied, so global latency hides behind the tensor cores. Fragments go from local memory to
 * registers with ldmatrix (.trans for an operand stored the other way round), so every layout and
 * transpose runs at the same speed (X3's K-slow operands take 16-byte loads instead, LOAD_A; on the
 * H200 X3's layouts differ by up to 20%, both operands K-fast being the fastest).
 *
 * Local layout: each operand's slice keeps its global layout, rows along its fast dimension (A K-fast:
 * [BM][BK]; M-fast: [BK][BM]; B K-fast: [BN][BK]; N-fast: [BK][BN]). Rows are split into 16-byte chunks
 * and chunk c of row r is stored at c ^ f(r) (an XOR swizzle, no padding; TMA=1 pads rows by 16
 * bytes instead): the 8 row addresses of every ldmatrix phase and the cp.async writes then hit 8
 * different 16-byte bank groups. The STAGES
 * slices may exceed the 48 KiB NVIDIA's driver reports: it builds and runs kernels that declare
 * more (gemm_nv.c: the defaults take 144 KiB, 192 KiB with WGMMA).
 *
 * WGMMA=1 (compute capability 9.0 only): Hopper's warpgroup instructions in place of mma.sync. Each
 * warpgroup (4 warps) computes a WM x WN tile (WM = 64) with wgmma.mma_async.m64nWNk16, which reads
 * both operands straight from local memory through descriptors (no ldmatrix, no fragments in
 * registers), so a work-group has NT = 128*(BM/WM)*(BN/WN) work-items. Slices are 64 deep and stored
 * in wgmma's 128-byte-swizzled layouts: a K-fast operand as rows of 64 k (128 bytes) as before, a
 * K-slow one as blocks of 64 m (n) per k row, block after block (byte ((c/8)*BK + r)*128 of chunk c
 * of row r; the XOR on the chunk's low 3 bits is the same). The K loop keeps STAGES-2 slices in flight
 * and one warpgroup-MMA group pending. OpenCL's compiler targets sm_90, whose assembler rejects
 * wgmma: the kernel writes each such instruction as a PTX comment marked "// OCX90A " (the front end
 * binds its operands and passes it through) and is built with -DOCX_SM90A=1, which makes the host
 * (lib/program.c) unmask the marked lines in the driver's PTX and build that again for sm_90a.
 *
 * Work-group order: group_id(0) is mapped onto tiles GM tile-rows at a time (neighbouring work-groups
 * share A rows and B columns in L2). The batch entry is group_id(1).
 *
 * Parameters (-D): BM BN BK WM WN STAGES GM TMA WGMMA (gemm_nv.c checks them against the device first);
 * AKF BKF (1: the operand is K-fast); CTYPE (1: C is f16, 0: f32); PTX (1: the tensor-core
 * instructions, NVIDIA only; 2: the same instructions emulated through local memory, for tests on
 * any device; 0: they are left out and the kernel computes zeros, for the probe-failure test).
 * flags (argument): bit 0: base offsets from offs; bit 1 (A), bit 2 (B): the operand's slow stride and
 * every base offset are multiples of 16 bytes (8 f16 or 4 f32 elements), so 16-byte cp.async copies
 * are aligned (else that operand is copied with checked scalar loads).
 */
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 64
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
/* X3=1: A and B are f32 (raw 32-bit words), each product taken as three TF32 products (see X3 below);
 * 0: f16. ET is the element's storage word, EPC the elements of a 16-byte chunk. */
#ifndef X3
#define X3 0
#endif
/* X3_ROUND (developers, through OCX_BUILD_OPTIONS): 1 (the default) rounds each tail to TF32 here
 * (to nearest, ties away); 0 leaves its low 13 bits for the tensor cores to drop, as they do a
 * head's. On the H200 truncating ran no faster (8192^3 54.3 / 54.7 TFLOP/s against 54.6 / 55.0
 * rounded, alternating; 4096^3 52.2 / 52.3 against 52.8 / 52.5), for a product error of up to
 * 2^-20 + 2^-20 where rounding gives 2^-20 + 2^-21. */
#ifndef X3_ROUND
#define X3_ROUND 1
#endif
#if X3
#define ESZ 4
#define ET uint
#else
#define ESZ 2
#define ET ushort
#endif
#define EPC (16 / ESZ)
#if X3 && (WGMMA || TMA || WM != 32 || WN != 32)
#error "X3 needs WGMMA = TMA = 0 and warp tiles of 32x32"
#endif
/* TMA=1: slices whose rows lie inside the matrices and are 16-byte aligned go to local memory as
 * bulk copies (cp.async.bulk, one per row, by the copy engine: no work-item moves their bytes),
 * completing on one mbarrier per stage; the others take the 16-byte copies as before. Rows are then
 * stored padded by 16 bytes instead of swizzled (a bulk copy writes a row as it is). Bulk copies
 * need compute capability 9.0 (SM90=1); elsewhere, and in the emulation, TMA=1 is the padded
 * layout alone. On the H200 they ran at half the speed of the 16-byte copies (lib/gemm_nv.c). */
#ifndef TMA
#define TMA 0
#endif
#ifndef SM90
#define SM90 0
#endif
#ifndef WGMMA
#define WGMMA 0
#endif
#if WGMMA && (WM != 64 || BK != 64 || STAGES < 3 || TMA)
#error "WGMMA needs WM = 64, BK = 64, STAGES >= 3 and TMA = 0"
#endif
#if WGMMA && PTX == 1 && !SM90
#error "WGMMA needs compute capability 9.0"
#endif
#define BULK_COPIES (TMA && PTX == 1 && SM90)
/* Developers (through OCX_BUILD_OPTIONS; results are then wrong): DIAG=1 leaves the main loop's
 * global copies out, 2 also its ldmatrix loads, 3 also its barriers; 4 copies the first slice over
 * and over (all from L2), 5 copies A's slices only (half the traffic), 6 is 4 through L1 (the
 * .ca form: the slice stays in L1), 7 copies every slice through L1: where the time goes (DIAG
 * needs OCX_VENDOR_PATHS=unchecked, as the probe rejects its results). L2PF=1 adds the .L2::128B
 * prefetch hint to the copies; FASTCP=0 sends whole chunks through the zero-filling form too. */
#ifndef DIAG
#define DIAG 0
#endif
#define NO_COPY (DIAG >= 1 && DIAG <= 3)
#define NO_LDSM (DIAG == 2 || DIAG == 3)
#define NO_BAR (DIAG == 3)
#ifndef L2PF
#define L2PF 0
#endif
#ifndef FASTCP
#define FASTCP 1
#endif
/* FASTPATH=0 sends interior tiles through the general, bounds-checked copies too. */
#ifndef FASTPATH
#define FASTPATH 1
#endif

/* Copy groups still allowed in flight when a slice is needed (the next STAGES-2 stay in flight). */
#if STAGES < 2 || STAGES > 5
#error "STAGES must be 2 to 5"
#endif
#if STAGES == 2
#define WAIT_NUM 0
#elif STAGES == 3
#define WAIT_NUM 1
#elif STAGES == 4
#define WAIT_NUM 2
#else
#define WAIT_NUM 3
#endif

/* WGMMA: copy groups still allowed in flight when a slice is needed (STAGES-3, see the K loop). */
#if STAGES <= 3
#define WG_WAIT_NUM 0
#elif STAGES == 4
#define WG_WAIT_NUM 1
#else
#define WG_WAIT_NUM 2
#endif
#if WGMMA /* a warpgroup a WM x WN tile: each warp 16 rows of it, in the m16n8 accumulator layout */
#define NWARP (4 * (BM / WM) * (BN / WN))
#define MT 1
#else
#define NWARP ((BM / WM) * (BN / WN))
#define MT (WM / 16) /* m16 tiles per warp */
#endif
#define NT (32 * NWARP)
#define NT8 (WN / 8) /* n8 tiles per warp */

/* Local slices, in elements: A then B for each stage. Row widths (elements) of the stored layouts. */
#define A_W (AKF ? BK : BM)
#define B_W (BKF ? BK : BN)
#define A_ROWS (AKF ? BM : BK)
#define B_ROWS (BKF ? BN : BK)
#define A_SLICE (BM * BK)
#define B_SLICE (BN * BK)

/* Byte offset of chunk c of row r of a W-element-wide slice stored at chunk c ^ x of its row. */
#define SOFF_X(W, r, c, x) (((r) * (W) + (((c) ^ (x)) * EPC)) * ESZ)
/* The swizzle: 16-byte chunk c of row r of a W-element-wide slice is stored at chunk c ^ SWZ(W, r).
 * Rows per 128 bytes: 8/(W/8) when W < 64; the XOR spans min(W/8, 8) chunks. */
#define CPR(W) ((W) / EPC)
#define SWZ(W, r) (CPR(W) >= 8 ? ((r) & 7) : (((r) / (8 / CPR(W))) & (CPR(W) - 1)))
#if TMA /* padded rows: the 8 rows of an ldmatrix phase land 16 bytes apart modulo 128 */
#define ROWB(W) ((W)*ESZ + 16)
#define SOFF(W, r, c) ((r)*ROWB(W) + (c)*16)
#elif WGMMA /* wgmma's 128-byte swizzle: rows of 128 bytes, a K-slow slice in blocks of 64 columns */
#define ROWB(W) 128
#define SOFF(W, r, c) (((((c) >> 3) * BK + (r)) << 7) + ((((c)&7) ^ ((r)&7)) << 4))
#else
#define ROWB(W) ((W)*ESZ)
#define SOFF(W, r, c) SOFF_X(W, r, c, SWZ(W, (r))) /* byte offset */
#endif
/* X3 reads a K-slow operand with 16-byte local loads (LOAD_A / LOAD_B below): in each k8 step, lane
 * 4g+t reads chunk g (of the warp's 32 columns) of rows t and t+4. Chunk c of row r is then stored
 * at c ^ SWZ3(r), which moves r's two low bits over the chunk bits above g's low bit, so the 8
 * lanes of each quarter-warp load meet 8 different 16-byte bank groups. */
#define SWZ3(r) (((r)&3) << 1)
#define SOFF3(W, r, c) SOFF_X(W, r, c, SWZ3(r))
#if X3 && !AKF
#define SOFF_A(r, c) SOFF3(A_W, r, c)
#else
#define SOFF_A(r, c) SOFF(A_W, r, c)
#endif
#if X3 && !BKF
#define SOFF_B(r, c) SOFF3(B_W, r, c)
#else
#define SOFF_B(r, c) SOFF(B_W, r, c)
#endif
#if WGMMA
#define A_BYTES (A_SLICE * 2)
#define B_BYTES (B_SLICE * 2)
#else
#define A_BYTES (A_ROWS * ROWB(A_W))
#define B_BYTES (B_ROWS * ROWB(B_W))
#endif
#define STAGE_BYTES (A_BYTES + B_BYTES)

/* wgmma's matrix descriptor of local byte address addr: start address, leading byte offset lbo and
 * stride byte offset 1024 (8 rows of 128 bytes), all >> 4, and the 128-byte swizzle. The stride
 * byte offset is 1024 in every layout here; the leading one is the step between blocks of 64
 * columns of a K-slow operand (unused when K-fast). WG_DESC_A / WG_DESC_B: a warpgroup's operand
 * at row (column) m0 (n0) of the slices at local byte address base (A's, then B's A_BYTES on), k16
 * step 0; WG_STEP_A / _B: a k16 step, in descriptor units (a K-fast operand's 32 bytes into its
 * rows, a K-slow one's 16 rows). The start address is linear in the descriptor's low bits (local
 * addresses are below 256 KiB), so stages and steps add to it. */
#define WG_DESC(addr, lbo) ((ulong)(((addr)&0x3FFFF) >> 4) | ((ulong)((lbo) >> 4) << 16) | (64ul << 32) | (1ul << 62))
#define WG_DESC_A(base, m0) (AKF ? WG_DESC((base) + (m0)*128, 16) : WG_DESC((base) + ((m0) / 64) * BK * 128, BK * 128))
#define WG_DESC_B(base, n0) (BKF ? WG_DESC((base) + A_BYTES + (n0)*128, 16) \
                             : WG_DESC((base) + A_BYTES + ((n0) / 64) * BK * 128, BK * 128))
#define WG_STEP_A (AKF ? 2 : 128)
#define WG_STEP_B (BKF ? 2 : 128)
/* One BK-deep slice at byte offset st of the stages (descriptors da, db at offset 0): its KK k16
 * steps as one MMA group, then a wait until at most the group before this one is pending. */
#define WG_SLICE(da, db, st)                                                                       \
    do {                                                                                           \
        WG_FENCE();                                                                                \
        UNROLL for (int kk_ = 0; kk_ < KK; kk_++)                                                  \
            WG_MMA((da) + ((st) >> 4) + kk_ * WG_STEP_A, (db) + ((st) >> 4) + kk_ * WG_STEP_B, st, kk_); \
        WG_COMMIT();                                                                               \
        WG_WAIT(1);                                                                                \
    } while (0)

#if PTX == 1
#define EMU_DECL
/* Whole chunks take the plain 16-byte form; only partial ones (edges) the zero-filling form. */
#if DIAG == 6 || DIAG == 7
#define CP_ASYNC16(dst, src) asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src))
#else
#define CP_ASYNC16(dst, src) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src))
#endif
#if L2PF
#define CP_ASYNC(dst, src, bytes)                                                                  \
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes))
#else
#define CP_ASYNC(dst, src, bytes)                                                                  \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes))
#endif
#define CP_COMMIT() asm volatile("cp.async.commit_group;\n" ::: "memory")
#define CP_WAIT_N_(n) asm volatile("cp.async.wait_group " #n ";\n" ::: "memory")
#define CP_WAIT_N(n) CP_WAIT_N_(n)
#define CP_WAIT() CP_WAIT_N(WAIT_NUM)
#define CP_WAIT_ALL() asm volatile("cp.async.wait_all;\n" ::: "memory")
/* Bulk copies (TMA): `bytes` (a multiple of 16) from global src to local dst, counted on the
 * mbarrier at local address bar; the barrier's phase completes when the expected bytes arrived. */
#define BULK(dst, src, bytes, bar)                                                                 \
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" \
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory")
#define MBAR_INIT(bar) asm volatile("mbarrier.init.shared.b64 [%0], 1;\n" ::"r"(bar) : "memory")
#define MBAR_FENCE_INIT() asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory")
#define MBAR_EXPECT(bar, bytes)                                                                    \
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory")
#define MBAR_WAIT(bar, parity)                                                                     \
    do {                                                                                           \
        uint done_ = 0;                                                                            \
        while (!done_)                                                                             \
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }\n" \
                         : "=r"(done_) : "r"(bar), "r"(parity) : "memory");                        \
    } while (0)
#define LDSM_X4(r, addr)                                                                           \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"                \
                 : "=r"((r)[0]), "=r"((r)[1]), "=r"((r)[2]), "=r"((r)[3])                          \
                 : "r"(addr))
#define LDSM_X4_T(r, addr)                                                                         \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"          \
                 : "=r"((r)[0]), "=r"((r)[1]), "=r"((r)[2]), "=r"((r)[3])                          \
                 : "r"(addr))
#if X3
#define MMA_INSN "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
#else
#define MMA_INSN "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#endif
#define MMA(d, a, b0, b1)                                                                          \
    asm volatile(MMA_INSN " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                \
                 : "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3])                          \
                 : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"(b0), "r"(b1))
/* Whether p holds in any lane of the warp (X3: a warp's MMAs must all take one branch). */
inline int warp_any(int p)
{
    uint r;
    asm volatile("{ .reg .pred q; setp.ne.s32 q, %1, 0; vote.sync.any.pred q, q, 0xffffffff; selp.u32 %0, 1, 0, q; }"
                 : "=r"(r) : "r"(p));
    return (int)r;
}
#define ANY(p) warp_any(p)
/* wgmma (WGMMA=1), written as marked comments that lib/program.c unmasks for sm_90a (see the top).
 * WG_MMA: acc += A x B for one k16 step, operands by descriptor (WG_DESC); scale-d 1 (accumulate),
 * A and B scaled by 1, transposed when the operand is K-slow. */
#define SM90A(insn) "// OCX90A " insn
#define WG_STR2(x) #x
#define WG_STR(x) WG_STR2(x)
#define WG_FENCE() asm volatile(SM90A("wgmma.fence.sync.aligned;") ::: "memory")
#define WG_COMMIT() asm volatile(SM90A("wgmma.commit_group.sync.aligned;") ::: "memory")
#define WG_WAIT_(n) asm volatile(SM90A("wgmma.wait_group.sync.aligned " #n ";") ::: "memory")
#define WG_WAIT(n) WG_WAIT_(n)
/* local-memory writes (cp.async, stores) become visible to wgmma, which reads through the async proxy */
#define PROXY_FENCE() asm volatile("fence.proxy.async.shared::cta;" ::: "memory")
#define WG_D8(b) "+f"(ACC(b)), "+f"(ACC(b + 1)), "+f"(ACC(b + 2)), "+f"(ACC(b + 3)), "+f"(ACC(b + 4)), \
    "+f"(ACC(b + 5)), "+f"(ACC(b + 6)), "+f"(ACC(b + 7))
#define WG_D32(b) WG_D8(b), WG_D8(b + 8), WG_D8(b + 16), WG_D8(b + 24)
#define WG_D64(b) WG_D32(b), WG_D32(b + 32)
#if WN == 256
#define WG_REGS "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}"
#define WG_DESCS " %128, %129"
#define WG_D WG_D64(0), WG_D64(64)
#elif WN == 128
#define WG_REGS "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#define WG_DESCS " %64, %65"
#define WG_D WG_D64(0)
#elif WN == 64
#define WG_REGS "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}"
#define WG_DESCS " %32, %33"
#define WG_D WG_D32(0)
#elif WGMMA
#error "WGMMA needs WN = 64, 128 or 256"
#endif
#if AKF /* a K-slow operand is transposed */
#define WG_TA "0"
#else
#define WG_TA "1"
#endif
#if BKF
#define WG_TB "0"
#else
#define WG_TB "1"
#endif
#define WG_MMA(da, db, st, kk)                                                                     \
    asm volatile(SM90A("wgmma.mma_async.sync.aligned.m64n" WG_STR(WN) "k16.f32.f16.f16 " WG_REGS "," WG_DESCS \
                       ", 1, 1, 1, " WG_TA ", " WG_TB ";")                                        \
                 : WG_D                                                                            \
                 : "l"(da), "l"(db)                                                                \
                 : "memory")
#elif PTX == 2
/* Emulation (OCX_VENDOR_PATHS=emulate, tests on any device): the warp-wide instructions computed
 * through local memory, with the operand layouts the PTX manual gives for ldmatrix and
 * mma.m16n8k16 (m16n8k8 in X3), so that the kernel's indexing (swizzle, fragments, pipeline, edges)
 * is checked on every CI run. Slow; uniform control flow makes the work-group barriers legal. */
#define EMU_W (MT * 4 + NT8 * 2) /* words a lane's fragments of one step take (emu_mma_all) */
#if WGMMA /* emu_wgmma reads local memory directly */
#define EMU_DECL
#else
#define EMU_DECL                                                                                   \
    local uint emu_scr[NWARP][32 * EMU_W];                                                         \
    local int emu_flag;
#endif
#define CP_COMMIT()
#define CP_WAIT()
#define CP_WAIT_ALL()
#define LDSM_X4(r, addr) emu_ldsm((r), (addr), 0, emu_scr[warp], lane, smem, sbase)
#define LDSM_X4_T(r, addr) emu_ldsm((r), (addr), 1, emu_scr[warp], lane, smem, sbase)
#define MMA_ALL(xa, xb) emu_mma_all(&acc[0][0][0], &(xa)[0][0], &(xb)[0][0], emu_scr[warp], lane)
#define ANY(p) emu_any((p), &emu_flag) /* over the work-group: also uniform for its barriers */
#define WG_MMA(da, db, st, kk) emu_wgmma(&acc[0][0][0], smem + (st), (kk), wm0, wn0, lane)
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
inline int emu_any(int p, local int *flag)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) *flag = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (p) *flag = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    return *flag;
}
/* A warp's MMAs of one step (MMA_ALL: acc[i][j] += A fragment i x B fragment pair j/2, half j%2)
 * at once: every lane writes its fragments (EMU_W words) to scr, then computes its accumulators
 * from the lanes the PTX manual names, so two barriers serve the whole step. mma.m16n8k16 (f16):
 * A(r, k) is half k%2 of register (r/8) + 2(k/8) of lane 4(r%8) + (k%8)/2; B(k, n) half k%2 of
 * register k/8 of lane 4n + (k%8)/2. mma.m16n8k8 (X3, tf32): A(r, k) is register (r/8) + 2(k/4) of
 * lane 4(r%8) + k%4, B(k, n) register k/4 of lane 4n + k%4, and the low 13 bits of each operand are
 * not read. Both: D register e of lane t is row t/4 + 8(e/2), column 2(t%4) + e%2. */
inline void emu_mma_all(float *acc, const uint *xa, const uint *xb, local uint *scr, int lane)
{
    for (int r = 0; r < MT * 4; r++) scr[lane * EMU_W + r] = xa[r];
    for (int r = 0; r < NT8 * 2; r++) scr[lane * EMU_W + MT * 4 + r] = xb[r];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < MT; i++)
        for (int j = 0; j < NT8; j++) {
            const int ab = i * 4, bb = MT * 4 + (j / 2) * 4 + (j & 1) * 2; /* the fragments' words */
            for (int e = 0; e < 4; e++) {
                const int row = lane / 4 + (e >> 1) * 8, col = 2 * (lane % 4) + (e & 1);
                float sum = acc[(i * NT8 + j) * 4 + e];
#if X3
                for (int k = 0; k < 8; k++) {
                    const uint x = scr[((row % 8) * 4 + k % 4) * EMU_W + ab + row / 8 + (k / 4) * 2];
                    const uint y = scr[(col * 4 + k % 4) * EMU_W + bb + k / 4];
                    sum = fma(as_float(x & 0xffffe000u), as_float(y & 0xffffe000u), sum);
                }
#else
                const local half *h = (const local half *)scr;
                for (int k = 0; k < 16; k++) {
                    const int aw = ((row % 8) * 4 + (k % 8) / 2) * EMU_W + ab + row / 8 + (k / 8) * 2;
                    const int bw = (col * 4 + (k % 8) / 2) * EMU_W + bb + k / 8;
                    sum = fma(vload_half(2 * aw + (k & 1), h), vload_half(2 * bw + (k & 1), h), sum);
                }
#endif
                acc[(i * NT8 + j) * 4 + e] = sum;
            }
        }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#if WGMMA
/* wgmma.m64nWNk16, k16 step kk of the stage at st: this work-item's accumulators (warp rows wm0..+15
 * of the warpgroup's tile, columns wn0..), each summed over k from the operands' local layouts. */
inline float emu_at(const local uchar *p, int kfast, int mn, int k)
{
    return vload_half(0, (const local half *)(p + (kfast ? SOFF(64, mn, k >> 3) + (k & 7) * 2
                                                         : SOFF(0, k, mn >> 3) + (mn & 7) * 2)));
}
inline void emu_wgmma(float *d, const local uchar *st, int kk, int wm0, int wn0, int lane)
{
    for (int j = 0; j < NT8; j++)
        for (int e = 0; e < 4; e++) {
            const int row = wm0 + lane / 4 + (e >> 1) * 8, col = wn0 + j * 8 + (lane & 3) * 2 + (e & 1);
            float sum = d[j * 4 + e];
            for (int k = kk * 16; k < kk * 16 + 16; k++)
                sum = fma(emu_at(st, AKF, row, k), emu_at(st + A_BYTES, BKF, col, k), sum);
            d[j * 4 + e] = sum;
        }
}
#endif
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
#define ANY(p) (p)
#define WG_MMA(da, db, st, kk) ((void)(da), (void)(db))
#endif
#if PTX != 1 /* no asynchronous copies or MMAs to wait for */
#define CP_WAIT_N(n)
#define WG_FENCE()
#define WG_COMMIT()
#define WG_WAIT(n)
#define PROXY_FENCE()
#endif

/* Loops over fragments are unrolled (the accumulators must stay in registers), except in the
 * emulation, whose barriers would multiply. */
#if PTX == 2
#define UNROLL _Pragma("unroll 1")
#else
#define UNROLL _Pragma("unroll")
#endif

/* A and B are f16 storage computed in f32 (DTYPE 1), C f16 or f32 (CTYPE): gemm_common.h's types. */
#define DTYPE 1
#define NATIVE_F16 0
#include "gemm_common.h"

/* Slice copies: 16-byte chunks, NT work-items over a ROWS x W slice (CPR chunks a row). As NT is a
 * multiple of CPR, all chunks of a work-item share one chunk column c = tid % CPR and take rows
 * tid / CPR + i*RS, RS = NT / CPR. */
#define A_CHUNKS (A_SLICE / EPC / NT)
#define B_CHUNKS (B_SLICE / EPC / NT)
#define A_RS (NT / CPR(A_W))
#define B_RS (NT / CPR(B_W))
/* MMA steps a slice, each 32 bytes of a row deep (k16 in f16, k8 in X3); even (BK is 32 or 64), for the
 * fragment double buffer */
#define KK (BK / (2 * EPC))

/* A whole 16-byte chunk from global p to local byte address dst (the interior fast path). */
#if PTX == 1 && FASTCP && !L2PF
#define COPY16(dst, p) CP_ASYNC16(dst, p)
#elif PTX == 1
#define COPY16(dst, p) CP_ASYNC(dst, p, 16u)
#else
#define COPY16(dst, p) copy_chunk(dst, p, EPC, 0, smem)
#endif

/* Copies a chunk of EPC elements (`n` of them valid, the rest zero) from global p into local byte
 * address dst. */
inline void copy_chunk(const uint dst, const global ET *p, const int n, const int aligned, local uchar *base)
{
#if PTX == 1
    if (aligned) {
#if FASTCP && !L2PF /* in the preprocessor: NVIDIA's compiler warned of the constant in an if */
        if (n == EPC)
            CP_ASYNC16(dst, p);
        else
#endif
            CP_ASYNC(dst, p, (uint)(n * ESZ));
    } else
#endif
    {
        ET v[EPC];
        for (int e = 0; e < EPC; e++) v[e] = e < n ? p[e] : (ET)0;
        local uint4 *d = (local uint4 *)(base + (dst - (uint)(ulong)base));
#if X3
        *d = (uint4)(v[0], v[1], v[2], v[3]);
#else
        *d = (uint4)(v[0] | ((uint)v[1] << 16), v[2] | ((uint)v[3] << 16), v[4] | ((uint)v[5] << 16),
                     v[6] | ((uint)v[7] << 16));
#endif
    }
}

__attribute__((reqd_work_group_size(NT, 1, 1))) kernel void
gemm_mma(const ulong M_, const ulong N_, const ulong K_, const float alpha, const float beta,
         const global ET *restrict A, const ulong offA, const ulong sam, const ulong sak, const ulong strideA,
         const global ET *restrict B, const ulong offB, const ulong sbk, const ulong sbn, const ulong strideB,
         global SC *restrict C, const ulong offC, const ulong ldc, const ulong strideC,
         const global ulong *restrict offs, const int flags)
{
    /* wgmma's swizzle works on address bits 4-9: stages start at multiples of 1024 bytes */
    local uint4 smem_[STAGES * STAGE_BYTES / 16] __attribute__((aligned(WGMMA ? 1024 : 16)));
    EMU_DECL
    local uchar *smem = (local uchar *)smem_;
    const uint sbase = (uint)(ulong)smem;

    const long M = (long)M_, N = (long)N_, K = (long)K_;
    const int tid = (int)get_local_id(0), lane = tid & 31, warp = tid >> 5;
#if WGMMA /* warpgroup g = warp / 4 has the tile at (wgm0, wn0); its warps 16 rows each */
    const int wgm0 = ((warp >> 2) / (BN / WN)) * WM, wn0 = ((warp >> 2) % (BN / WN)) * WN;
    const int wm0 = wgm0 + (warp & 3) * 16;
#else
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;
#endif

    /* Tile of this work-group, GM tile-rows at a time. */
    const long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const long pid = (long)get_group_id(0), per_group = GM * tiles_n;
    const long first_m = (pid / per_group) * GM;
    const long gsize = min((long)GM, tiles_m - first_m);
    const long m0 = (first_m + (pid % per_group) % gsize) * BM;
    const long n0 = ((pid % per_group) / gsize) * BN;

    const ulong bat = get_group_id(1);
    BATCH_OFFSETS(ulong, bat)
    /* (the buffers' own addresses too: a cl_mem over a caller's memory may be less aligned) */
    const int a_al = (flags >> 1) & 1 && (ulong)A % 16 == 0, b_al = (flags >> 2) & 1 && (ulong)B % 16 == 0;

    /* This work-item's chunks of each operand: first row r0, column c, global pointer ga/gb of
     * chunk 0 at the current slice, pointer step between its chunks (row) and between slices (k).
     * A K-fast operand's chunks are valid by row (bit i of amask/bmask: the chunk's row is inside
     * the matrix) and, in a partial last slice, along K; a K-slow one's by column (a_cn/b_cn valid
     * elements, fixed) and, in a partial last slice, by row. Pointers of invalid rows are never
     * read (the copy gets 0 bytes and the base pointer). */
    const int a_r0 = tid / CPR(A_W), a_c = tid % CPR(A_W);
    const int b_r0 = tid / CPR(B_W), b_c = tid % CPR(B_W);
#if AKF /* rows m, chunks along k */
    const global ET *ga = A + oa + (m0 + a_r0) * (long)sam + a_c * EPC;
    const long a_row = A_RS * (long)sam, a_k = BK;
    int amask = 0;
    UNROLL for (int i = 0; i < A_CHUNKS; i++) amask |= (m0 + a_r0 + i * A_RS < M) << i;
#define A_FULL(i) (((amask >> (i)) & 1) * EPC)
#define A_PART(i, k0) (((amask >> (i)) & 1) ? (int)clamp(K - (k0)-a_c * EPC, 0L, (long)EPC) : 0)
#else /* rows k, chunks along m */
    const global ET *ga = A + oa + a_r0 * (long)sak + m0 + a_c * EPC;
    const long a_row = A_RS * (long)sak, a_k = BK * (long)sak;
    const int a_cn = (int)clamp(M - m0 - a_c * EPC, 0L, (long)EPC);
#define A_FULL(i) a_cn
#define A_PART(i, k0) ((k0) + a_r0 + (i)*A_RS < K ? a_cn : 0)
#endif
#if BKF /* rows n, chunks along k */
    const global ET *gb = B + ob + (n0 + b_r0) * (long)sbn + b_c * EPC;
    const long b_row = B_RS * (long)sbn, b_k = BK;
    int bmask = 0;
    UNROLL for (int i = 0; i < B_CHUNKS; i++) bmask |= (n0 + b_r0 + i * B_RS < N) << i;
#define B_FULL(i) (((bmask >> (i)) & 1) * EPC)
#define B_PART(i, k0) (((bmask >> (i)) & 1) ? (int)clamp(K - (k0)-b_c * EPC, 0L, (long)EPC) : 0)
#else /* rows k, chunks along n */
    const global ET *gb = B + ob + b_r0 * (long)sbk + n0 + b_c * EPC;
    const long b_row = B_RS * (long)sbk, b_k = BK * (long)sbk;
    const int b_cn = (int)clamp(N - n0 - b_c * EPC, 0L, (long)EPC);
#define B_FULL(i) b_cn
#define B_PART(i, k0) ((k0) + b_r0 + (i)*B_RS < K ? b_cn : 0)
#endif

    /* Issues chunk q (A's first, then B's) of the slice at k0 into the stage at byte address st;
     * full: the slice lies inside K. */
#define COPY_CHUNK(q, st, k0, full)                                                                \
    do {                                                                                           \
        if ((q) < A_CHUNKS) {                                                                      \
            const int i_ = (q), v_ = (full) ? A_FULL(i_) : A_PART(i_, k0);                         \
            copy_chunk((st) + SOFF_A(a_r0 + i_ * A_RS, a_c), v_ > 0 ? ga + i_ * a_row : A, v_, a_al, smem); \
        } else {                                                                                   \
            const int i_ = (q)-A_CHUNKS, v_ = (full) ? B_FULL(i_) : B_PART(i_, k0);                \
            copy_chunk((st) + A_BYTES + SOFF_B(b_r0 + i_ * B_RS, b_c), v_ > 0 ? gb + i_ * b_row : B, v_, \
                       b_al, smem);                                                                \
        }                                                                                          \
    } while (0)
#define NCH (A_CHUNKS + B_CHUNKS)

#if !WGMMA
    /* ldmatrix row addresses of this lane inside a stage. A K-fast slice's address moves by a
     * constant per 16-row tile t (the swizzle repeats every 8 rows), a K-slow slice's by a constant
     * per k16 step; the other index needs its own register. */
/* X3's K-slow loads: 16 bytes at byte offset off (row t's) of row 8kk + 4q + t of the W-wide slice
 * at local address st. */
#define LDS16(st, off, kk, q, W)                                                                   \
    (*(const local uint4 *)(smem + ((st)-sbase) + (off) + ((kk)*8 + (q)*4) * ROWB(W)))
#if AKF /* [m][k]: lanes 0-15 rows at k, 16-31 the same rows at k+8 */
    uint a_ld[KK];
    UNROLL for (int kk = 0; kk < KK; kk++) a_ld[kk] = SOFF_A(wm0 + (lane & 15), kk * 2 + (lane >> 4));
#define A_LD(kk, t) (a_ld[kk] + (uint)((t)*16 * ROWB(A_W)))
#elif X3 /* [k][m], 32-bit words (ldmatrix cannot transpose them): lane 4g+t reads rows m wm0 + 4g
          * to + 3 (chunk g of the warp's 32) at rows k = t and t+4 of each k8 step, 16 bytes each.
          * Word 2i+h of a chunk is row g + 8h of the warp's m16 tile i (a permutation of its 32 rows,
          * undone when C is stored, C_ROW), so the chunks fill registers h and 2+h of fragment i. */
    const uint a_ks = SOFF_A(lane & 3, wm0 / 4 + (lane >> 2));
#define LOAD_A(f, st, kk)                                                                          \
    UNROLL for (int q = 0; q < 2; q++) {                                                           \
        const uint4 x_ = LDS16(st, a_ks, kk, q, A_W);                                              \
        af[f][0][2 * q] = x_.s0, af[f][0][2 * q + 1] = x_.s1;                                      \
        af[f][1][2 * q] = x_.s2, af[f][1][2 * q + 1] = x_.s3;                                      \
    }
#else /* [k][m], transposed load: matrix j = lane/8 holds k + (j/2)*8, m + (j%2)*8 */
    uint a_ld[MT];
    UNROLL for (int t = 0; t < MT; t++) a_ld[t] =
        SOFF_A((lane & 7) + ((lane >> 3) >> 1) * 8, (wm0 + t * 16) / 8 + ((lane >> 3) & 1));
#define A_LD(kk, t) (a_ld[t] + (uint)((kk)*16 * ROWB(A_W)))
#endif
#if BKF /* [n][k]: matrices (n, k), (n, k+8), (n+8, k), (n+8, k+8) */
    uint b_ld[KK];
    UNROLL for (int kk = 0; kk < KK; kk++) b_ld[kk] =
        A_BYTES + SOFF_B(wn0 + (lane & 7) + ((lane >> 3) >> 1) * 8, kk * 2 + ((lane >> 3) & 1));
#define B_LD(kk, t) (b_ld[kk] + (uint)((t)*16 * ROWB(B_W)))
#elif X3 /* [k][n], as A's: lane 4g+t reads columns n wn0 + 4g to + 3; word j is column g of the
          * warp's n8 tile j (C_COL), register b0 from row t, b1 from row t+4. */
    const uint b_ks = A_BYTES + SOFF_B(lane & 3, wn0 / 4 + (lane >> 2));
#define LOAD_B(f, st, kk)                                                                          \
    UNROLL for (int q = 0; q < 2; q++) {                                                           \
        const uint4 x_ = LDS16(st, b_ks, kk, q, B_W);                                              \
        bf[f][0][q] = x_.s0, bf[f][0][2 + q] = x_.s1;                                              \
        bf[f][1][q] = x_.s2, bf[f][1][2 + q] = x_.s3;                                              \
    }
#else /* [k][n], transposed: (k, n), (k+8, n), (k, n+8), (k+8, n+8) */
    uint b_ld[NT8 / 2];
    UNROLL for (int t = 0; t < NT8 / 2; t++) b_ld[t] =
        A_BYTES + SOFF_B((lane & 7) + ((lane >> 3) & 1) * 8, (wn0 + t * 16) / 8 + ((lane >> 3) >> 1));
#define B_LD(kk, t) (b_ld[t] + (uint)((kk)*16 * ROWB(B_W)))
#endif
#if AKF
#define LDSM_A LDSM_X4
#else
#define LDSM_A LDSM_X4_T
#endif
#if BKF
#define LDSM_B LDSM_X4
#else
#define LDSM_B LDSM_X4_T
#endif
#if !(X3 && !AKF)
#define LOAD_A(f, st, kk) UNROLL for (int t = 0; t < MT; t++) LDSM_A(af[f][t], (st) + A_LD(kk, t))
#endif
#if !(X3 && !BKF)
#define LOAD_B(f, st, kk) UNROLL for (int t = 0; t < NT8 / 2; t++) LDSM_B(bf[f][t], (st) + B_LD(kk, t))
#endif
    /* Fragments of MMA step kk of the stage at byte address st into buffer f. */
#define LOAD_FRAGS(f, st, kk)                                                                      \
    do {                                                                                           \
        LOAD_A(f, st, kk);                                                                         \
        LOAD_B(f, st, kk);                                                                         \
    } while (0)

    uint af[2][MT][4], bf[2][NT8 / 2][4];
    /* The MMAs of every (m16, n8) tile of the warp with operands xa (m16 fragments) and xb (pairs of
     * n8 fragments). */
#ifndef MMA_ALL /* (the emulation's, PTX == 2, above) */
#define MMA_ALL(xa, xb)                                                                            \
    UNROLL for (int i = 0; i < MT; i++) UNROLL for (int j = 0; j < NT8; j++)                       \
        MMA(acc[i][j], xa[i], xb[j / 2][(j & 1) * 2], xb[j / 2][(j & 1) * 2 + 1])
#endif
#if X3
    /* Each f32 word u of a fragment splits into a head (its top 19 bits: sign, exponent, 10 bits of
     * mantissa, as TF32 keeps them) and a tail, u minus its head (exact) rounded to TF32 (X3_ROUND);
     * then a*b = ah*bh + ah*bt + at*bh to below 2^-19 |a*b| (at*bt, dropped, is below 2^-20 |a*b|,
     * each tail's rounding below 2^-22 |a| or |b|). chk sums the exact tails: NaN exactly when some
     * word is infinite or NaN. */
#define X3_SPLIT(u, h, t, chk)                                                                     \
    do {                                                                                           \
        h = (u)&0xffffe000u;                                                                       \
        const float r_ = as_float(u) - as_float(h);                                                \
        chk += r_;                                                                                 \
        t = X3_ROUND ? (as_uint(r_) + 0x1000u) & 0xffffe000u : as_uint(r_);                        \
    } while (0)
    /* Where a warp's fragments hold an infinity or a NaN, its heads' products keep them, but a tail
     * (NaN) and the other operand's infinite head must not meet zeros in the cross terms: those take
     * the finite words only. */
#define X3_FINITE(h, t) (isfinite(as_float(h)) ? 0u : ((h) = 0u, (t) = 0u))
#define MMA_STEP(f)                                                                                \
    do {                                                                                           \
        uint ah_[MT][4], at_[MT][4], bh_[NT8 / 2][4], bt_[NT8 / 2][4];                             \
        float chk_ = 0.0f;                                                                         \
        UNROLL for (int i = 0; i < MT; i++) UNROLL for (int e = 0; e < 4; e++)                     \
            X3_SPLIT(af[f][i][e], ah_[i][e], at_[i][e], chk_);                                     \
        UNROLL for (int j = 0; j < NT8 / 2; j++) UNROLL for (int e = 0; e < 4; e++)                \
            X3_SPLIT(bf[f][j][e], bh_[j][e], bt_[j][e], chk_);                                     \
        if (ANY(isnan(chk_))) {                                                                    \
            MMA_ALL(ah_, bh_);                                                                     \
            UNROLL for (int i = 0; i < MT; i++) UNROLL for (int e = 0; e < 4; e++)                 \
                X3_FINITE(ah_[i][e], at_[i][e]);                                                   \
            UNROLL for (int j = 0; j < NT8 / 2; j++) UNROLL for (int e = 0; e < 4; e++)            \
                X3_FINITE(bh_[j][e], bt_[j][e]);                                                   \
            MMA_ALL(ah_, bt_);                                                                     \
            MMA_ALL(at_, bh_);                                                                     \
        } else {                                                                                   \
            MMA_ALL(ah_, bt_);                                                                     \
            MMA_ALL(at_, bh_);                                                                     \
            MMA_ALL(ah_, bh_);                                                                     \
        }                                                                                          \
    } while (0)
#else
#define MMA_STEP(f) MMA_ALL(af[f], bf[f])
#endif
#endif
    float acc[MT][NT8][4];
#define ACC(i) acc[0][(i) >> 2][(i)&3] /* wgmma's i-th accumulator */
    UNROLL for (int i = 0; i < MT; i++) UNROLL for (int j = 0; j < NT8; j++) acc[i][j][0] = acc[i][j][1] =
        acc[i][j][2] = acc[i][j][3] = 0.0f;

    /* Issues the copies of the slice at k0 into stage s; advances ga/gb (and the bulk copies' row
     * pointers pa/pb) by one slice. */
#if BULK_COPIES
    /* Bulk copies for every whole slice of a work-group whose tile lies inside M and N, with both
     * operands 16-byte aligned (then all its slices but a partial last one take them, so the
     * barrier of stage s completes its phases in order: slice kt waits for parity (kt/STAGES)&1). */
    local ulong mbar_[STAGES];
    const uint mbase = (uint)(ulong)mbar_;
    const int bulk_tile = a_al && b_al && m0 + BM <= M && n0 + BN <= N;
#define BULK_SLICE(k0) (DIAG == 0 && bulk_tile && (k0) + BK <= K) /* the diagnostics copy their own way */
    const global ET *pa = AKF ? A + oa + m0 * (long)sam : A + oa + m0;
    const global ET *pb = BKF ? B + ob + n0 * (long)sbn : B + ob + n0;
    const long a_rs = AKF ? (long)sam : (long)sak, b_rs = BKF ? (long)sbn : (long)sbk;
    if (tid == 0) {
        for (int s = 0; s < STAGES; s++) MBAR_INIT(mbase + 8 * s);
        MBAR_FENCE_INIT();
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#define BULK_ISSUE(s)                                                                              \
    do {                                                                                           \
        const uint st_ = sbase + (uint)((s)*STAGE_BYTES), bar_ = mbase + 8 * (uint)(s);           \
        if (tid == 0) MBAR_EXPECT(bar_, (uint)((A_ROWS * A_W + B_ROWS * B_W) * ESZ));              \
        for (int r_ = tid; r_ < A_ROWS + B_ROWS; r_ += NT) {                                       \
            if (r_ < A_ROWS)                                                                       \
                BULK(st_ + (uint)(r_ * ROWB(A_W)), pa + r_ * a_rs, (uint)(A_W * ESZ), bar_);       \
            else                                                                                   \
                BULK(st_ + (uint)(A_BYTES + (r_ - A_ROWS) * ROWB(B_W)), pb + (r_ - A_ROWS) * b_rs, \
                     (uint)(B_W * ESZ), bar_);                                                     \
        }                                                                                          \
    } while (0)
#define BULK_WAIT(s, kt) MBAR_WAIT(mbase + 8 * (uint)(s), (uint)(((kt) / STAGES) & 1))
#define BULK_ADVANCE() (pa += a_k, pb += b_k)
#else
#define BULK_SLICE(k0) 0
#define BULK_ISSUE(s)
#define BULK_WAIT(s, kt)
#define BULK_ADVANCE() ((void)0)
#endif
    /* Interior fast path: in a work-group whose tile lies inside M and N, with both operands
     * aligned, every chunk of a whole slice is a plain 16-byte copy whose local address is fixed
     * per chunk (a work-item's rows step by A_RS / B_RS, multiples of the swizzle's 8-row period),
     * so a slice costs one copy instruction a chunk and no per-chunk bounds arithmetic. */
#if FASTPATH && (TMA || (A_RS % 8 == 0 && B_RS % 8 == 0))
    const int fast_tile = a_al && b_al && m0 + BM <= M && n0 + BN <= N;
#else
    const int fast_tile = 0;
#endif
    const uint a_dst = SOFF_A(a_r0, a_c), b_dst = A_BYTES + SOFF_B(b_r0, b_c);
#define COPY_SLICE(s, k0)                                                                          \
    do {                                                                                           \
        const uint st_ = sbase + (uint)((s)*STAGE_BYTES);                                          \
        const int full_ = (k0) + BK <= K;                                                          \
        if (BULK_SLICE(k0)) {                                                                      \
            BULK_ISSUE(s);                                                                         \
        } else if (fast_tile && full_) {                                                           \
            UNROLL for (int i = 0; i < A_CHUNKS; i++)                                              \
                COPY16(st_ + a_dst + (uint)(i * A_RS * ROWB(A_W)), ga + i * a_row);                \
            UNROLL for (int i = 0; i < (DIAG == 5 ? 0 : B_CHUNKS); i++)                            \
                COPY16(st_ + b_dst + (uint)(i * B_RS * ROWB(B_W)), gb + i * b_row);                \
        } else {                                                                                   \
            UNROLL for (int q = 0; q < (DIAG == 5 ? A_CHUNKS : NCH); q++) COPY_CHUNK(q, st_, k0, full_); \
        }                                                                                          \
        ga += DIAG == 4 || DIAG == 6 ? 0 : a_k;                                                    \
        gb += DIAG == 4 || DIAG == 6 ? 0 : b_k;                                                    \
        BULK_ADVANCE();                                                                            \
    } while (0)

    const long nk = (K + BK - 1) / BK;
#if WGMMA
    /* Descriptors of this warpgroup's operands in stage 0 at k16 step 0 (WG_DESC). */
    const ulong da = WG_DESC_A(sbase, wgm0), db = WG_DESC_B(sbase, wn0);
    (void)da, (void)db;

    /* Slice kt is waited for and made visible to the async proxy; after the barrier every
     * warpgroup has finished slice kt-2 (it waited for all but its last MMA group), whose stage
     * then takes slice kt+STAGES-2 while the tensor cores work on slice kt. */
    UNROLL for (int s = 0; s < STAGES - 2; s++) {
        if (s < nk) COPY_SLICE(s, (long)s * BK);
        CP_COMMIT();
    }
    int ws = STAGES - 2, rs = 0;
    for (long kt = 0; kt < nk; kt++) {
        CP_WAIT_N(WG_WAIT_NUM);
        PROXY_FENCE();
        barrier(CLK_LOCAL_MEM_FENCE);
        if (kt + STAGES - 2 < nk) COPY_SLICE(ws, (kt + STAGES - 2) * BK);
        CP_COMMIT();
        ws = ws + 1 == STAGES ? 0 : ws + 1;
        WG_SLICE(da, db, (uint)(rs * STAGE_BYTES));
        rs = rs + 1 == STAGES ? 0 : rs + 1;
    }
    WG_WAIT(0);
#else
    /* Prologue: the first STAGES-1 slices in flight; wait for the first; its first fragments. */
    UNROLL for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk) COPY_SLICE(s, (long)s * BK);
        CP_COMMIT();
    }
    CP_WAIT();
    if (BULK_SLICE(0)) BULK_WAIT(0, 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint st = sbase;
    LOAD_FRAGS(0, st, 0);
    if (NO_LDSM) LOAD_FRAGS(1, st, 1);

    /* Main loop, per slice kt: at its first k16 step, the copy of slice kt+STAGES-1 goes out (into
     * the stage slice kt-1 used: every warp passed the barrier after its last fragments were
     * read); each step loads the next step's fragments before its own multiplies (double-buffered
     * registers); the last step waits for slice kt+1, passes the barrier and loads that slice's first
     * fragments, so the tensor cores never wait on a barrier with empty hands. (Measured on an H200:
     * spreading the copies between the multiplies, or 16-deep slices with more stages, ran slower.) */
    int ws = STAGES - 1, rs = 0;
    for (long kt = 0; kt < nk; kt++) {
UNROLL
        for (int kk = 0; kk < KK; kk++) {
            if (kk == 0) {
                const long kn = kt + STAGES - 1;
#if !NO_COPY
                if (kn < nk) COPY_SLICE(ws, kn * BK);
#endif
                CP_COMMIT();
                ws = ws + 1 == STAGES ? 0 : ws + 1;
            }
            if (kk == KK - 1) {
                rs = rs + 1 == STAGES ? 0 : rs + 1;
                if (!NO_BAR) {
                    CP_WAIT();
                    if (kt + 1 < nk && BULK_SLICE((kt + 1) * BK)) BULK_WAIT(rs, kt + 1);
                    barrier(CLK_LOCAL_MEM_FENCE);
                }
                st = sbase + (uint)(rs * STAGE_BYTES);
#if !NO_LDSM
                if (kt + 1 < nk) LOAD_FRAGS((kk + 1) & 1, st, 0);
#endif
            } else if (!NO_LDSM) {
                LOAD_FRAGS((kk + 1) & 1, st, kk + 1);
            }
            MMA_STEP(kk & 1);
        }
    }
#endif
    CP_WAIT_ALL();

    /* C = alpha*acc + beta*C (beta == 0: C is not read). Accumulator (i, j) holds rows lane/4 and
     * lane/4 + 8, columns 2*(lane%4) and +1, of its 16 x 8 tile: C_ROW(i, h) / C_COL(j, e) in the
     * work-group's tile (X3 with a K-slow operand: the rows or columns its runs permuted). */
#if X3 && !AKF
#define C_ROW(i, h) (wm0 + (lane >> 2) * 4 + 2 * (i) + (h))
#else
#define C_ROW(i, h) (wm0 + (i)*16 + (lane >> 2) + (h)*8)
#endif
#if X3 && !BKF
#define C_COL(j, e) (wn0 + ((lane & 3) * 2 + (e)) * 4 + (j))
#else
#define C_COL(j, e) (wn0 + (j)*8 + (lane & 3) * 2 + (e))
#endif
UNROLL
    for (int i = 0; i < MT; i++) {
UNROLL
        for (int h = 0; h < 2; h++) {
            const long m = m0 + C_ROW(i, h);
            if (m >= M) continue;
            global SC *crow = C + oc + m * (long)ldc;
UNROLL
            for (int j = 0; j < NT8; j++) {
UNROLL
                for (int e = 0; e < 2; e++) {
                    const long n = n0 + C_COL(j, e);
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

/* The tensor cores' ceiling (ocx_measure_peaks): each warp runs `iters` rounds of 8 independent
 * mma.sync m16n8k16 on register operands (f16 ones and zeros, exact in f32), 8 x 4096 flops a round,
 * and writes its sums so that nothing is optimised away. Built where PTX == 1 only; elsewhere it
 * writes zeros (never timed). */
kernel void mma_peak(global float *out, const int iters)
{
    float s = 0.0f;
#if PTX == 1
    const int lane = (int)get_local_id(0) & 31;
    const uint one = 0x3c00u, h = (lane & 1) ? one | (one << 16) : one;
    uint a[4] = {h, one, h, one};
    const uint b0 = h, b1 = one << 16;
    float d[8][4];
UNROLL
    for (int j = 0; j < 8; j++) d[j][0] = d[j][1] = d[j][2] = d[j][3] = 0.0f;
    for (int it = 0; it < iters; it++) {
UNROLL
        for (int j = 0; j < 8; j++) MMA(d[j], a, b0, b1);
    }
UNROLL
    for (int j = 0; j < 8; j++) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
#endif
    out[get_global_id(0)] = s;
}

/* wgmma's ceiling (WGMMA builds, ocx_measure_peaks on compute capability 9.0): each warpgroup runs
 * `iters` rounds of a 64-deep slice (4 wgmma.m64nWNk16, 64 x WN x 64 x 2 flops a round) on one
 * stage of f16 ones and zeros (the first WM x BK of A, WN x BK of B), in the GEMM's layouts, as in its
 * K loop (WG_SLICE), and writes its sums. Elsewhere it writes zeros (never timed). */
kernel void wgmma_peak(global float *out, const int iters)
{
    float s = 0.0f;
#if WGMMA && PTX == 1
    local uint4 sl[STAGE_BYTES / 16] __attribute__((aligned(1024)));
    const int tid = (int)get_local_id(0);
    for (int i = tid; i < STAGE_BYTES / 16; i += (int)get_local_size(0))
        sl[i] = (uint4)(i & 1 ? 0x3c003c00u : 0x3c00u, 0u, 0x3c00u, 0x3c000000u);
    PROXY_FENCE();
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint base = (uint)(ulong)sl;
    const ulong da = WG_DESC_A(base, 0), db = WG_DESC_B(base, 0);
    float acc[1][NT8][4];
    UNROLL for (int j = 0; j < NT8; j++) acc[0][j][0] = acc[0][j][1] = acc[0][j][2] = acc[0][j][3] = 0.0f;
    for (int it = 0; it < iters; it++) WG_SLICE(da, db, 0u);
    WG_WAIT(0);
    UNROLL for (int j = 0; j < NT8; j++) s += acc[0][j][0] + acc[0][j][1] + acc[0][j][2] + acc[0][j][3];
#endif
    out[get_global_id(0)] = s;
}
