/* gemm.c — matrix multiply (host side) and the "gemm" kernel family (cl/gemm.cl, cl/gemm_direct.cl).
 *
 * Every call goes: check the arguments → map the layout and transposes onto element strides (a
 * column-major product is computed as its row-major transpose, so C's rows are always contiguous
 * for the kernel) → pick the direct or the tiled kernel by size (or gemm_dot or gemm_cols by shape:
 * a matrix times a few vectors) → parameters → one launch with the batch in the third dimension of
 * the NDRange (split K: the chunks, then gemm_sum). */
#include "config.h"
#include "ocx_internal.h"

#include <stdlib.h>
#include <string.h>

/* Parameters of the GEMM kernels; see the headers of cl/gemm.cl and cl/gemm_direct.cl.
 * GPU defaults in the table (H200, 8192^3 and 4096^3 f32): 64x128 work-group tiles, 128 work-items
 * (8 x 16) with 8x8 register tiles, 4-wide vectors, k-major slices of 16 double-buffered with a
 * register prefetch (STAGE=4), the slice's k loop unrolled whole (KUNR): 47.9 and 44.1 TFLOP/s with
 * no profile at all before NVIDIA's f32 class defaults (1.02x and 1.03x tuned CLBlast in the same
 * run). 128x128 tiles ran 46.4 and 45.1 (the tuner keeps them for "all", measured at 4096^3, where
 * they win by 2%); the same tiles ran 42.3 and 41.4 with the compiler's choice of unrolling (it
 * kept the loop rolled), and the former defaults (STAGE=2, KWG=32) 38.3 and 37.7. On NVIDIA, f32
 * products of the "all" class take 128x128 tiles with 2-wide N vectors, what a 555-s search found at
 * 4096^3, and the "large" class 128x256 tiles on 16x16 work-items (gemm_class_defaults).
 * CPU defaults (PoCL on the 2-core AVX-512 machine): STAGE=1 (no local memory, no barriers), each
 * work-item computing an 8x32 tile as two 16-wide vectors per row (16 zmm accumulators). At 1024^3
 * one such work-item a group ran 80-117 GFLOP/s on the AVX2 EPYC where the former STAGE=2 set (64x64
 * tiles, 8x8 work-items) ran 12-16. Groups of 8 work-items along M (64x32 tiles) share B's columns
 * in the cache: on the AVX-512 EPYC, the two alternating call by call in one process (median of 40
 * rounds, GFLOP/s, one item a group against eight), 256^3-768^3 ran level (202-321 both), 1024^3
 * 224 against 240-244 and 2048^3 101-109 against 181; the first call with empty caches (PoCL's too)
 * took 1.45-1.52 s against 1.40-1.44. ocx-tune finds such groups through its paired steps. CPUs
 * with 8-wide vectors (AVX2) take 6x16 register tiles instead (gemm_device_defaults).
 * Tried on the H200 and not kept: a ring of 3 or 4 local slices filled by cp.async (PTX, compute
 * capability 8.0+) in place of STAGE=4's register prefetch. In STAGE 2's layout it ran 8192^3 at
 * 44.6 TFLOP/s against 48.0 in the same call. k-major (16-byte copies of K-slow operands, 4-byte
 * transposed ones of K-fast operands; 95 registers against 161) it ran 8192^3 NN / TN / NT at 42.8
 * / 41.6 / 32.5 against 47.5 / 43.8 / 44.9 (4096^3 TN, 16-byte copies only: 45.0 against 46.6):
 * the copies cost more than the registers and occupancy they save. Nor stream-K (the last tiles'
 * slices shared out evenly between as many work-groups as run at once, cut tiles summed by a second
 * kernel): the loop over a group's pieces cost the 128x128 tiles' kernel registers it did not have,
 * and 8192^3 NN ran 45.2-45.7 TFLOP/s against 48.9, where the part-empty last wave it wins back
 * costs about 1.1% (doc/performance.md: "Where the rest of the 8192³ gap goes"). */
enum { P_MWG, P_NWG, P_KWG, P_MDIMC, P_NDIMC, P_VWM, P_VWN, P_STAGE, P_KUNR, P_UNROLL_TILE, P_DWGN, P_DWGM, P_DKU, P_DIRECT,
       P_PACK, P_GM, P_PACKN, P_KSPLIT, P_DOTN, P_DDOT, P_DVW, P_DROWS, P_COLS,
       P_CVW, P_KBLK, P_PANEL, P_PFD, P_COUNT };
static const ocx__param_def gemm_params[P_COUNT] = {
    /* name      gpu   cpu   min  max  ladder host */
    {"MWG", 64, 64, 1, 256, OCX__LADDER_POW2_3, 0}, /* 3x: AVX2 CPUs (gemm_device_defaults) */
    {"NWG", 128, 32, 1, 256, 1, 0},
    {"KWG", 16, 32, 1, 64, 1, 0},  /* unused by STAGE=1 */
    {"MDIMC", 8, 8, 1, 64, 1, 0},
    {"NDIMC", 16, 1, 1, 64, 1, 0},
    {"VWM", 4, 1, 1, 8, 1, 0},     /* unused by STAGE=1 */
    {"VWN", 4, 16, 1, 16, 1, 0},
    {"STAGE", 4, 1, 1, 4, 0, 0},   /* 2: local-memory staging; 1: no local memory (CPUs); 3, 4: pipelined (gemm.cl) */
    {"KUNR", 16, 1, 1, 32, 1, 0},  /* iterations of a slice's k loop unrolled (1: none); unused by STAGE=1 */
    /* 1: the loops over the register tile unrolled whole (gemm.cl: TILE_UNROLL); unused by STAGE=1.
     * Not searched by ocx-tune: on PoCL the unrolled stores of large tiles took minutes to compile. */
    {"UNROLL_TILE", 1, 0, 0, 1, 0, 0, 1},
    {"DWGN", 16, 16, 1, 256, 1, 0},
    {"DWGM", 8, 4, 1, 256, 1, 0},
    /* The direct kernel's k steps whose loads go out together. H200, kernel time of 64^3 / 128^3
     * f32: 10.0 / 14.6 us with the former 4 steps of 64-bit indices, 8.6 / 12.3 with 8 (and
     * 32-bit indices), 8.1 / 12.9 with 16, 7.1 / 12.4 with 32. (The tiled kernel forced onto
     * 64^3 / 128^3 in 32x32 tiles of one 32-deep slice, one global round trip: 6.9-7.8 / 8.6-9.8
     * us; the "small" class retuned with DKU=32: 7.3-8.7 / 9.3-10.2. A class that let the tuner
     * pick between the two at 128^3 was withdrawn: one size cannot place the threshold.) */
    /* CPUs: 4 (PoCL, 2-core AVX-512 EPYC, tools/profile-ab --gemm 8,12,16 --gemm-batch B, 11 rounds
     * each order, against 8): strided batches of 64 and 1024 products of 8^3-16^3 ran 1.2-2.0x,
     * winning 29 of 33 rounds in every case; one 16^3 product 1.2x (10 of 11 rounds), 8^3 and 12^3
     * 0.96-1.17x. ocx-tune --classes small had found 4 steps in 4x4 groups (1.22x, 15 of 15 rounds);
     * the steps were the gain, not the shape: beside 4x4 groups with 4 steps, 16x4 (the table's) and
     * 8x8 with 4 ran 1.00-1.23x and 1.05-1.11x, 4x4 with 8 steps 0.66-0.80x. Smaller groups would also
     * reach C = beta*C calls, which take this shape: 4x4 ran one of 2048^2 at 0.5-0.8x. */
    {"DKU", 16, 4, 1, 32, 1, 0, 1},
    /* Direct kernel when M*N*K <= DIRECT^3 (host-only; in practice the "medium" class's value, as
     * the others start at 2^31). On a CPU only the tiniest products: the
     * direct kernel's one element per work-item with run-time strides does not vectorise there
     * (PoCL, AVX2: 64^3 f32 took 100-160 us in it, 22 us in the STAGE=1 tiled kernel, and the
     * call's wall time went from 0.5-0.9x CLBlast to 1.2-2.4x in all four transposes). */
    {"DIRECT", 128, 16, 1, 4096, 0, 1},
    /* 1: the tiled kernel reads copies of the operands its loads would stride through (pack_plan_make);
     * host-only. */
    {"PACK", 1, 1, 0, 1, 0, 1, 1},
    /* Work-group order (cl/gemm.cl): the tiled kernel's groups take the tiles GM tile-rows at a
     * time, column after column within each band (1: row after row). Not searched by ocx-tune: the
     * sizes it measures do not show it. PoCL (2-core AVX-512 EPYC, f32 NN, GM=1 / 8 alternating call
     * by call in one process, median GFLOP/s of 5-9 rounds): 128^3, 256^3, 768^3, 1024^3 level (58 /
     * 59, 152 / 152, 379 / 379, 342 / 336), 2048^3 293 / 354, 3072^3 268 / 350; 2048^3 NT 255 / 318,
     * TN 254 / 291, TT 240 / 303 (the tiles that share a band of A rows and a run of B columns stay in
     * the cache).
     * H200 (f32, two alternating rounds, TFLOP/s, GM=1 / 8 / 16): 8192^3 TN 49.3 / 49.5 / 49.6-49.7
     * but NN 48.0-48.1 / 44.8-44.9 / 45.1 (4096^3 NN 46.5-46.7 / 43.6 / 43.4-43.9): the kernels that
     * stage tiles in local memory take 1 wherever an operand is K-fast (ocx_gemm_ex). With the
     * copies (PACK) all four layouts read both operands MN-fast at 4096^3 and 8192^3, and GM=16 ran
     * them 0.3-2% faster than 1 (4096^3 NN / NT / TN / TT 47.4-47.5 / 46.6 / 48.1 / 47.3 against
     * 47.1-47.3 / 45.6-45.8 / 47.2-47.8 / 46.4-46.6; 8192^3 49.2-49.3 / 48.7-48.8 / 49.6-49.7 /
     * 49.1-49.2 against 48.9-49.1 / 48.4 / 49.4 / 48.7). */
    {"GM", 16, 8, 1, 64, 0, 0, 1},
    /* A copy of one operand pays only where the other operand's dimension is at least PACKN: the
     * copy's cost grows with K times the operand's own dimension, what it saves with the product
     * (host-only). The local-memory kernels (STAGE >= 2) copy a K-fast A where N >= PACKN (and K
     * is above the "short_k" class's 256), a K-fast B where M >= PACKN. STAGE=1 copies a transposed
     * A (of 4 MiB or more) where N >= PACKN and a 4-KiB-pitched B where M >= PACKN, but a K-fast B
     * always: gathered in place it ran 4x2048x2048 NT at 1.6 GFLOP/s against 5.9 with the copy
     * (pack_plan_make's comment). PoCL (2-core AVX-512 EPYC, f32, M = K = 2048, median GFLOP/s of
     * 3 rounds, PACK=1 / 0): TN with N = 16, 32, 64, 128, 256 ran 31 / 63, 61 / 108, 101 / 114,
     * 129 / 126, 186 / 125; NN (ldb = 2048) with M = 16, 64, 128, 256 33 / 39, 129 / 124,
     * 170 / 163, 231 / 196. */
    {"PACKN", 4096, 128, 1, 1048576, 0, 1, 1},
    /* Split K (host-only; 0: never): a product whose tiles number fewer than the compute units
     * and whose K is at least four times KSPLIT runs as up to 64 partial products over K chunks of
     * KSPLIT or more (the tiled kernel's batch, about four work-groups a compute unit in all),
     * summed in order by gemm_sum into C. GPUs only: one work-group walks all of K, slice after
     * slice, so such a product's time was K's latency. H200, f32 NN, median GFLOP/s of 5 rounds
     * alternating call by call (wall time), with four work-groups a compute unit / two / KSPLIT=0:
     * 1x4096x4096 323 / 278 / 165, 8x4096x4096 2504 / 2151 / 1299, 4096x8x4096 2372 / 2069 /
     * 1269, 64x4096x4096 22795 / 19872 / 11618, 512x512x8192 29669 / 25318 / 2998, 128x128x8192
     * 7281 / 6105 / 872, 256x256x4096 11788 / 10687 / 3290, 1024x1024x2048 22472 / 23420 / 10812;
     * 2048x2048x8192 (256 tiles) is not split (44121 / 44121 / 44140). Earlier rounds: KSPLIT 128
     * and 512 ran level with 256 (the chunk count is set by the compute units); 8 and 16
     * work-groups a compute unit level with 4; 512^3 (128 tiles on 132 compute units, K in two
     * chunks) ran 6510 split against 7789, hence K of four chunks or more. */
    {"KSPLIT", 256, 0, 0, 65536, 0, 1, 1},
    /* gemm_dot (cl/gemm_direct.cl) takes products of at most DOTN columns whose op(A) is K-fast,
     * and of at most DOTN rows whose op(B) is (as C^T = op(B)^T op(A)^T): matrix-vector products,
     * which the tiled kernels ran far from the memory's rate (0: never). Its work-groups: DDOT
     * work-items splitting k (one on CPUs, which stream each row), DVW elements a load, DROWS rows a
     * group. These and gemm_cols's are host parameters: the host passes them as -D defines to the
     * programs of those two kernels alone, DDOT lowered to fit the device's work-groups (so an
     * older profile's entry, without them, stays valid everywhere). Not searched by ocx-tune (the
     * sizes it measures are square).
     * GPUs take up to 16 (f64: 8, keeping the accumulators within f32's at 16; f16 bound for the
     * tensor cores: 8 or 12 on large operands, gemm_core): on the H200 (f32,
     * median GFLOP/s of 5 rounds alternating DOTN=4 / 16 call by call, wall time) NT, where the few
     * rows go to gemm_dot as C^T, ran 5x4096x4096 at 1485 / 4035, 8x4096x4096 2229 / 4814, 12x4096x4096
     * 3592 / 5521, 16x4096x4096 4717 / 5295, 4096x8x4096 2306 / 5286, 4096x16x4096 4314 / 5074,
     * 8x8192x8192 3305 / 8239, 16x1024x1024 690 / 1188 (the tiled kernel with split K before).
     * gemm_cols stays at 4 (COLS_MAX). CPUs keep 4 (PoCL: 2048x16x2048 NT 283 / 167). */
    {"DOTN", 16, 4, 0, 16, 0, 1, 1},
    {"DDOT", 128, 1, 1, 1024, 1, 1, 1},
    {"DVW", 4, 16, 1, 16, 1, 1, 1},
    {"DROWS", 2, 4, 1, 16, 1, 1, 1},
    /* 1: gemm_cols (cl/gemm_direct.cl) takes products of at most DOTN rows whose op(B) is N-fast,
     * and of at most DOTN columns whose op(A) is M-fast (as C^T), which gemm_dot's rows do not fit;
     * its work-items own CVW columns each, DDOT a group, K split in chunks of KSPLIT/4 or more over
     * about sixteen work-groups a compute unit (gemm_core).
     * GPUs only: on CPUs the tiled kernel streams such products along N already (PoCL, 2-core
     * AVX-512 EPYC: 1x2048x2048 NN at 0.9-2.3x OpenBLAS in four runs). */
    {"COLS", 1, 0, 0, 1, 0, 1, 1},
    /* gemm_cols's work-items' columns (a vector each). H200, f32, median GFLOP/s of 5 alternating
     * rounds, 4 / 1: 1x4096x4096 NN 398 / 640, 4x4096x4096 NN 1437 / 1739, 1x8192x8192 NN 869 /
     * 1140 (and 336, 1317, 467 with COLS=0). */
    {"CVW", 1, 4, 1, 16, 1, 1, 1},
    /* K in blocks (host-only; 0: one pass): the CPU kernel (STAGE=1), whose work-items each walk
     * all of K for their tile, runs a K above 2*KBLK as launches over blocks of KBLK (rounded up to
     * a multiple of 16), in turn into C, beta = 1 after the first, so that the block of B that
     * the tiles of a band share stays in the cache (gemm_core). Not searched by ocx-tune: its
     * sizes stay within the caches. PoCL (2-core AVX2 EPYC, median GFLOP/s of 3 calls, one pass /
     * blocks of 256 / 512, two rounds): f32 2048^3 NN 49-51 / 103-110 / 84-104, NT 53 / 76 / 106,
     * TN 49 / 105 / 125, TT 59 / 109 / 85; 1536^3 66-67 / 98-99 / 89-98; f64 2048^3 25-27 / 64-70 /
     * 47-66; 3072^3 54 / - / 149. 1024^3 in blocks of 256 ran 71-77 against 44-117 in one pass (not
     * blocked at 512). */
    {"KBLK", 0, 512, 0, 65536, 0, 1, 1},
    /* Panels (host-only; 0: never): the CPU kernel (STAGE=1) reads both operands from panel copies
     * (gemm_core) where M*N/(M + N) is PANEL or more (a quarter of it where A is M-fast or N >= M)
     * and M*N*K at least 2*PANEL^3; ocx_last_params() reports 0 where a call took none. Unused by
     * the other stages. */
    {"PANEL", 0, 384, 0, 65536, 0, 1, 1},
    /* The CPU kernel (STAGE=1) reading B in place, N-fast, with rows PFD_PITCH bytes or more apart:
     * B's row PFD k ahead prefetched at each k (0: none; cl/gemm.cl: PREFETCH_B). Each work-item
     * walks its columns down B's rows, so where those lie a page apart every row was a miss that no
     * hardware prefetcher foresaw: skinny products, whose B is too thin to take panels, ran 13-17%
     * of the FMA peak. PoCL, 2-core AVX-512 Xeon, PFD=0 against 32, median wall time of 11 rounds
     * alternating call by call in one process: f32 16x4096x4096 NN 1.85-2.28x as fast (11 of 11
     * rounds), TN 2.00-2.03x, 4096x16x4096 TN (B the large A, as C^T) 1.89-1.93x, 32x8192x1024
     * 1.51x, 64x2048x2048 1.25-1.27x, 128x1024x4096 1.11x; f64 (9 rounds) 16x4096x4096 1.58x,
     * 64x2048x2048 1.37x, 512^3 1.07x (9 of 9). On rows closer together they cost: 256^3, 512^3 and
     * 640^3 f32 ran 0.84-0.94x, hence PFD_PITCH, under which they run level (0.99-1.00x), as do
     * 300x4096x300 and 700x1500x700. Distances of 16 and 64 ran 0.85-1.36x the time of 32, mixed. */
    {"PFD", 0, 32, 0, 256, 0, 0, 1},
};
enum { PFD_PITCH = 4096 }; /* bytes between B's rows from which PFD takes effect */

/* Bytes of the arithmetic type (the local-memory staging holds it). Native f16 would need less;
 * the family is checked with the larger f32 size so one parameter set serves both. */
static size_t arith_bytes(ocx_dtype dtype) { return dtype == OCX_F64 ? 8 : 4; }

static const char *gemm_invalid(const int *v, const ocx_device_info *dev, ocx_dtype dtype)
{
    size_t wg = (size_t)v[P_MDIMC] * (size_t)v[P_NDIMC];
    if (v[P_MWG] % (v[P_MDIMC] * (v[P_STAGE] == 1 ? 1 : v[P_VWM]))) /* STAGE=1 reads no vectors along M */
        return v[P_STAGE] == 1 ? "MWG must be a multiple of MDIMC" : "MWG must be a multiple of MDIMC*VWM";
    /* Three times a power of two (gemm_device_defaults' 6-row tiles) was measured on STAGE=1 alone;
     * PoCL 3.1's compiler aborts the process on some local-memory kernels of such tiles (STAGE=3, f16
     * inputs, both operands transposed, MWG=6: an assertion in its ParallelRegion.cc). */
    if (v[P_STAGE] >= 2 && !ocx__on_ladder(OCX__LADDER_POW2, v[P_MWG]))
        return "MWG of three times a power of two needs STAGE=1";
    if (v[P_NWG] % (v[P_NDIMC] * v[P_VWN])) return "NWG must be a multiple of NDIMC*VWN";
    if (wg > dev->max_work_group_size || wg > dev->max_work_item_sizes[0])
        return "MDIMC*NDIMC exceeds the device's work-group size";
    /* STAGE=1: up to 384 (AVX-512: a 12x32 tile is 24 of its 32 vector registers) */
    if ((v[P_MWG] / v[P_MDIMC]) * (v[P_NWG] / v[P_NDIMC]) > (v[P_STAGE] == 1 ? 384 : 256))
        return v[P_STAGE] == 1 ? "register tile above 384 elements" : "register tile above 256 elements";
    /* Pipelining slices of fewer than 4 k gains nothing, and PoCL 3-5 crashes on STAGE=4 KWG=1. */
    if (v[P_STAGE] >= 3 && v[P_KWG] < 4) return "pipelined stages (3, 4) need KWG >= 4";
    /* PoCL 3.1's compiler aborts the process (the same assertion) on STAGE=3 groups of one or two
     * work-items that take the tiles GM tile-rows at a time (GM > 1): every such set tried, f32,
     * tiles of 4x4 to 16x16 (found by tests/check_gemm.c's test_random_params); groups of 4 or more,
     * GM=1, and STAGE=2 and 4 built. Groups that small gain nothing from slices staged in local
     * memory on any device. */
    if (v[P_STAGE] == 3 && wg <= 2 && v[P_GM] > 1) return "STAGE=3 with GM > 1 needs 4 or more work-items a group";
    /* The local-memory kernels read whole vectors of their slices (gemm.cl's LLD), whose arrays are
     * 64-byte aligned: f64 vectors of 16 (128 bytes) would be read misaligned (undefined). */
    if (v[P_STAGE] >= 2 && arith_bytes(dtype) * (size_t)(v[P_VWM] > v[P_VWN] ? v[P_VWM] : v[P_VWN]) > 64)
        return "local-memory vectors above 64 bytes (f64 with VWM or VWN of 16) need STAGE=1";
    if (v[P_STAGE] >= 2) {
        /* One slice of each operand in local memory, in either layout, rows padded by up to
         * max(4, VW) elements (gemm.cl: LFA, LFB). */
        size_t pa = v[P_VWM] > 4 ? (size_t)v[P_VWM] : 4, pb = v[P_VWN] > 4 ? (size_t)v[P_VWN] : 4;
        size_t mwg = (size_t)v[P_MWG], nwg = (size_t)v[P_NWG], kwg = (size_t)v[P_KWG];
        size_t a1 = mwg * (kwg + pa), a2 = kwg * (mwg + pa), b1 = nwg * (kwg + pb), b2 = kwg * (nwg + pb);
        size_t bytes = ((a1 > a2 ? a1 : a2) + (b1 > b2 ? b1 : b2)) * arith_bytes(dtype);
        if (v[P_STAGE] == 4) bytes *= 2; /* double-buffered */
        if (bytes > dev->local_mem_max_bytes) return "the A and B slices exceed the device's local memory";
    }
    size_t dwg = (size_t)v[P_DWGN] * (size_t)v[P_DWGM];
    if (dwg > dev->max_work_group_size || (size_t)v[P_DWGN] > dev->max_work_item_sizes[0] ||
        (size_t)v[P_DWGM] > dev->max_work_item_sizes[1])
        return "DWGN*DWGM exceeds the device's work-group size";
    return NULL;
}

/* STAGE=1 uses neither local slices (KWG), their vector reads (VWM), their k loop (KUNR) nor the
 * other stages' register tile loops (UNROLL_TILE), and the other stages no prefetches (PFD). KUNR
 * beyond KWG unrolls no more than KWG does. */
static void gemm_canonical(int *v)
{
    if (v[P_STAGE] == 1) v[P_KWG] = gemm_params[P_KWG].def_cpu, v[P_VWM] = 1, v[P_KUNR] = 1, v[P_UNROLL_TILE] = 0;
    else v[P_PFD] = 0;
    if (v[P_KUNR] > v[P_KWG]) v[P_KUNR] = v[P_KWG];
}

const char *ocx__gemm_class(double volume, size_t k)
{
    if (volume < OCX__GEMM_MEDIUM) return "medium";
    if (k <= OCX__GEMM_SHORT_K) return "short_k";
    return volume >= OCX__GEMM_LARGE ? "large" : "all";
}

/* GPUs, "medium" products (M*N*K below 2^31, gemm_core): 64x64 tiles, twice as many work-groups as
 * the table's 64x128. On the H200 (wall time, CLBlast in the same run) 256^3, 512^3 and 1024^3 ran at
 * 0.77x, 0.45x and 0.80x CLBlast in 128x128 tiles; 256^3 and 512^3 at 1.13x and 1.26x in 64x64, and
 * all three at 1.2-1.7x in the 32x64 tiles the tuner found at 512^3. CPUs keep their defaults (64x32
 * tiles on 8 work-items), which ran level with one work-item a group up to 768^3.
 * NVIDIA GPUs, f32 "all" (M*N*K >= 2^31, e.g. 4096^3; "large" below): 128x128 tiles, 8x16
 * work-items with 16x8 register tiles, 2-wide vectors along N; the other parameters the table's. A
 * 555-s search on the H200 (ocx-tune --kernels gemm --dtypes f32 --classes all,large, 162
 * candidates) found them at 4096^3: 46.6-46.9 TFLOP/s in ocx-bench where the table's 64x128 ran
 * 43.6-44.4, and a 60-s run, which compiles two or three GEMM candidates there (NVIDIA: 4-13 s
 * each), had kept the 64x128 it started from; a 580-s search from them kept them (167 candidates).
 * At 8192^3 they ran 47.9-48.0 where 64x128 ran 46.9-47.8 (four alternating rounds).
 * NVIDIA f32 "large" (M*N*K >= 2^38): 128x256 tiles on 16x16 work-items, each an 8x16 register tile,
 * 4-wide vectors both ways: one work-group a multiprocessor (255 registers a work-item), as many
 * warps as two of the 128x128 groups, a quarter fewer loads from global memory a multiply-add (the same local reads). On the
 * H200 (median of 3 rounds alternating process by process, TFLOP/s, 8192^3 NN / TN): 50.6 / 51.0
 * against 48.9 / 49.2, the clock at 1980 MHz either way (627 W); 16384x8192x8192 NN 50.9 against
 * 49.2. Around them: 256x128 on 32x8 work-items level (50.6 / 50.9), 2-wide N vectors 47.5 / 47.8,
 * KWG=32 45.0 / 45.7, 64x256 tiles on 8x16 work-items 45.9 / 46.2, 8x8 register tiles on 16x16
 * work-items (128x128) 40.1 / 40.6. They stay out of "all": 2048^3 (128 tiles for 132
 * multiprocessors) ran 38.8-39.7 against 40.6-43.4, though 4096^3 ran 48.5-49.7 against
 * 47.2-48.7. The tuner's local search, started from the 128x128 tiles, had not reached them: every
 * single step towards them (VWN=4, 16x16 work-items, NWG=256) alone is slower; its climb from the
 * best's mirror image (gemm_mirror) now does, in 300 s. Other vendors' GPUs,
 * and f64 and f16 storage (not measured so), keep the table. */
/* CPUs: "small" (the direct kernel's work-group shape and k steps, DWGN/DWGM/DKU) has defaults of its
 * own, the table's, so that a profile's "all" entry, whose copies of them the tuner never searches
 * there, does not stand in for them. */
static int gemm_class_defaults(const ocx_device_info *dev, ocx_dtype dtype, const char *size_class, int *v)
{
    if (dev->type == OCX_DEVICE_CPU) return strcmp(size_class, "small") == 0;
    if (strcmp(size_class, "all") == 0 || strcmp(size_class, "large") == 0) {
        if (dtype != OCX_F32 || !ocx__contains_nocase(dev->vendor, "nvidia")) return 0;
        if (strcmp(size_class, "large") == 0)
            v[P_MWG] = 128, v[P_NWG] = 256, v[P_MDIMC] = v[P_NDIMC] = 16, v[P_VWM] = v[P_VWN] = 4;
        else
            v[P_MWG] = v[P_NWG] = 128, v[P_MDIMC] = 8, v[P_NDIMC] = 16, v[P_VWN] = 2;
        return 1;
    }
    if (strcmp(size_class, "medium") == 0) {
        v[P_MWG] = v[P_NWG] = 64;
        return 1;
    }
    /* "short_k": the GPU table's 64x128 tiles with 8x8 a work-item (gemm_core's measurements), not a
     * profile's "all" tiles. */
    if (strcmp(size_class, "short_k") == 0) {
        v[P_MWG] = 64, v[P_NWG] = 128, v[P_MDIMC] = 8, v[P_NDIMC] = 16;
        return 1;
    }
    return 0;
}

/* CPUs with 8-wide float vectors (AVX2, whose 16 vector registers hold twelve accumulators, the two
 * vectors of B and a broadcast of A): 6x16 register tiles, two 8-wide vectors a row, one work-item
 * a group. The table's 8x32 tiles, sized for AVX-512's 32 registers, spilled accumulators to the
 * stack there. PoCL on the 2-core AVX2 EPYC (1024^3, median GFLOP/s of 5 alternating rounds, one
 * process a run): f32 55 for the table's tiles, 103 for 12x16 tiles on 2x8 work-items (the shipped
 * profile's 8x16 with 6 rows), 119-140 for these; f64 31 against 56.
 * f64 on every CPU: half as many columns a work-item (NWG, VWN), so that a row of the register tile
 * takes the registers an f32 row does. With f32's columns, AVX-512's 8x32 tile of doubles needs all
 * 32 of its registers for the accumulators alone. PoCL on the 2-core AVX-512 EPYC (tools/profile-ab
 * --f64, 11 rounds each order): 128^3-2048^3 ran 1.18-1.47x f32's columns, winning 11 of 11 rounds
 * at every size (64^3 1.11-1.20x), and ahead of the best an 86-s ocx-tune search found (24x32 tiles
 * on 4x4 work-items, 1.29-1.34x the former defaults; doc/performance.md). */
static void gemm_device_defaults(const ocx_device_info *dev, ocx_dtype dtype, int *v)
{
    if (dev->type != OCX_DEVICE_CPU) return;
    if (dev->preferred_vector_width_float == 8) v[P_MWG] = 6, v[P_MDIMC] = 1, v[P_NDIMC] = 1, v[P_NWG] = v[P_VWN] = 16;
    if (dtype == OCX_F64) v[P_NWG] /= 2, v[P_VWN] /= 2;
}

/* A work-group tile and its work-items along the same dimension: twice the tile on twice the
 * work-items keeps each one's register tile. On PoCL (2-core AVX-512 EPYC, 1024^3 f32) the former
 * CPU defaults' 8x32 tile on one work-item ran 183-187 GFLOP/s, 32x32 on 4 work-items 257-314 (the
 * group's items share B's columns in the cache); single steps from 8x32 reached it only through
 * 4x32 register tiles (16x32 on one work-item breaks the register tile's limit). */
static const char *const gemm_step_together[] = {"MWG", "MDIMC", "NWG", "NDIMC", NULL};
/* The tiling with M and N exchanged (tune.c: climb_mirror). */
static const char *const gemm_mirror[] = {"MWG", "NWG", "MDIMC", "NDIMC", "VWM", "VWN", NULL};
const ocx__family ocx__family_gemm = {.name = "gemm",
                                      .source = "gemm",
                                      .nparams = P_COUNT,
                                      .params = gemm_params,
                                      .invalid = gemm_invalid,
                                      .canonical = gemm_canonical,
                                      .class_defaults = gemm_class_defaults,
                                      .device_defaults = gemm_device_defaults,
                                      .step_together = gemm_step_together,
                                      .mirror = gemm_mirror,
                                      .dtypes = OCX__DT_ALL};

/* One stored matrix: rows x cols in `layout` with leading dimension ld. Its span (elements from the
 * first to one past the last touched, relative to the offset) and its strides. */
typedef struct mat {
    const char *name;
    const ocx_buffer *buf;
    size_t rows, cols, ld;
    size_t span;
} mat;

static ocx_status mat_check_shape(mat *x, ocx_layout layout)
{
    size_t need = layout == OCX_ROW_MAJOR ? x->cols : x->rows;
    if (need < 1) need = 1;
    OCX__FAIL_IF(x->ld < need, OCX_ERR_INVALID_ARGUMENT, "ocx_gemm: ld%s = %zu is below the minimum %zu (%s, %zu x %zu)",
                 x->name, x->ld, need, layout == OCX_ROW_MAJOR ? "row-major" : "column-major", x->rows, x->cols);
    size_t outer = layout == OCX_ROW_MAJOR ? x->rows : x->cols, inner = layout == OCX_ROW_MAJOR ? x->cols : x->rows;
    x->span = 0;
    if (outer && inner) {
        OCX__FAIL_IF(outer - 1 > (SIZE_MAX - inner) / x->ld, OCX_ERR_OUT_OF_RANGE, "ocx_gemm: %s overflows size_t",
                     x->name);
        x->span = (outer - 1) * x->ld + inner;
    }
    return OCX_OK;
}

/* Whether x and a matrix of its shape and leading dimension d elements further on share an element:
 * d = t*ld + u for some |t| < outer (rows of a row-major matrix) and |u| < inner. BLAS's
 * interleaved batches (stridec = N, ldc = N*batch: each C a band of columns) share none. */
static int shifted_overlap(const mat *x, ocx_layout layout, size_t d)
{
    const size_t outer = layout == OCX_ROW_MAJOR ? x->rows : x->cols, inner = layout == OCX_ROW_MAJOR ? x->cols : x->rows;
    const size_t t = d / x->ld, u = d % x->ld;
    return (t < outer && u < inner) || (t + 1 < outer && x->ld - u < inner);
}

/* Checks that the matrix at element offset `off` lies inside its buffer. */
static ocx_status mat_check_at(const ocx_context *ctx, const mat *x, size_t off, size_t entry)
{
    OCX__FORWARD(ocx__check_range(ctx, x->buf, x->name, off, 0, 1)); /* NULL, another context's, offset */
    if (x->span == 0) return OCX_OK;
    OCX__FAIL_IF(off > SIZE_MAX - x->span || off + x->span > x->buf->length, OCX_ERR_OUT_OF_RANGE,
                 "ocx_gemm: %s (batch entry %zu) needs elements [%zu, %zu) but the buffer has %zu", x->name, entry,
                 off, off + x->span, x->buf->length);
    return OCX_OK;
}

/* The batch: either arrays of offsets or base + i*stride. */
typedef struct batch_offs {
    const size_t *arr;
    size_t base, stride;
} batch_offs;
static size_t entry_off(const batch_offs *o, size_t i) { return o->arr ? o->arr[i] : o->base + i * o->stride; }

/* Element range [lo, hi) covered by all batch entries of a matrix. */
static void batch_range(const batch_offs *o, const mat *x, size_t batch, size_t *lo, size_t *hi)
{
    *lo = SIZE_MAX;
    *hi = 0;
    for (size_t i = 0; i < batch; i++) {
        size_t off = entry_off(o, i);
        if (off < *lo) *lo = off;
        if (off + x->span > *hi) *hi = off + x->span;
        if (!o->arr && batch > 1) { /* linear: the first and the last entries bound the rest */
            size_t last = entry_off(o, batch - 1);
            if (last < *lo) *lo = last;
            if (last + x->span > *hi) *hi = last + x->span;
            break;
        }
    }
}

/* A batch entry's first byte in its cl_mem, and its index. */
typedef struct entry_start {
    size_t byte, index;
} entry_start;

static int cmp_entry_start(const void *a, const void *b)
{
    const entry_start *x = a, *y = b;
    return (x->byte > y->byte) - (x->byte < y->byte);
}

/* Every entry's start, sorted (strided entries come in order already); NULL when out of memory. */
static entry_start *sorted_starts(const mat *x, const batch_offs *o, size_t batch)
{
    entry_start *s = malloc(batch * sizeof *s);
    if (!s) return NULL;
    for (size_t i = 0; i < batch; i++) s[i] = (entry_start){ocx__root_byte(x->buf, entry_off(o, i)), i};
    if (o->arr) qsort(s, batch, sizeof *s, cmp_entry_start);
    return s;
}

/* C must not share memory with A or B, nor one C entry with another. The whole ranges are compared
 * first; when they meet, each entry's range against the others', sorted by start (any batch size:
 * comparing pairs had limited batches to 2048 entries). `same`: C's entries among themselves. */
static ocx_status check_aliasing(const mat *c, const batch_offs *oc, const mat *x, const batch_offs *ox, size_t batch,
                                 int same)
{
    if (c->span == 0 || x->span == 0 || c->buf->root != x->buf->root) return OCX_OK;
    if (!same) {
        size_t clo, chi, xlo, xhi;
        batch_range(oc, c, batch, &clo, &chi);
        batch_range(ox, x, batch, &xlo, &xhi);
        if (!ocx__overlap(c->buf, clo, chi - clo, x->buf, xlo, xhi - xlo)) return OCX_OK;
    }
    const size_t clen = c->span * ocx_dtype_size(c->buf->dtype), xlen = x->span * ocx_dtype_size(x->buf->dtype);
    entry_start *cs = sorted_starts(c, oc, batch), *xs = same ? cs : sorted_starts(x, ox, batch);
    ocx_status st = cs && xs ? OCX_OK : ocx__error(OCX_ERR_OUT_OF_MEMORY, "ocx_gemm: out of host memory");
    for (size_t i = 0, j = 0; st == OCX_OK && i < batch; i++) {
        if (same) { /* equal lengths: only neighbours in start order can overlap */
            if (i > 0 && cs[i].byte - cs[i - 1].byte < clen)
                st = ocx__error(OCX_ERR_INVALID_ARGUMENT, "ocx_gemm: c (batch entry %zu) overlaps c (batch entry %zu)",
                                cs[i - 1].index, cs[i].index);
            continue;
        }
        /* The first x entry (in start order) that ends after this c entry starts; the c entries come in
         * start order, so it never moves back. It overlaps exactly when it starts before c ends. */
        while (j < batch && xs[j].byte + xlen <= cs[i].byte) j++;
        if (j < batch && xs[j].byte < cs[i].byte + clen)
            st = ocx__error(OCX_ERR_INVALID_ARGUMENT, "ocx_gemm: c (batch entry %zu) overlaps %s (batch entry %zu)",
                            cs[i].index, x->name, xs[j].index);
    }
    free(cs);
    if (!same) free(xs);
    return st;
}

/* Strides of op(X)(r, c) for a matrix stored in `layout` with leading dimension ld. */
static void op_strides(ocx_layout layout, ocx_op op, size_t ld, size_t *sr, size_t *sc)
{
    int rowwise = (layout == OCX_ROW_MAJOR) == (op == OCX_OP_N);
    *sr = rowwise ? ld : 1;
    *sc = rowwise ? 1 : ld;
}

static int dtype_code(ocx_dtype d) { return d == OCX_F16 ? 1 : d == OCX_F64 ? 2 : 0; }

/* The scalar as the kernels take it: double for f64, float otherwise. */
static ocx__arg scalar_arg(ocx_dtype dtype, const double *value, float *f32)
{
    *f32 = (float)*value;
    if (dtype == OCX_F64) return (ocx__arg){OCX__ARG_VALUE, sizeof(cl_double), value};
    return (ocx__arg){OCX__ARG_VALUE, sizeof(cl_float), f32};
}

/* The arguments of gemm_tiled, gemm_direct and gemm_dot (cl/gemm.cl, gemm_direct.cl), their values held here
 * (gemm_args_set fills them; the struct must stay in place while args is in use). */
typedef struct gemm_args {
    cl_ulong u[14]; /* M, N, K, then per operand its offset, strides and batch stride */
    double alpha, beta;
    float alpha32, beta32;
    cl_int flags;
    ocx__arg args[21];
} gemm_args;

/* A product of M x N x K: op(A)(m, k) at a's offa + m*sam + k*sak, op(B)(k, n) at offb + k*sbk +
 * n*sbn, C(m, n) at offc + m*ldc + n; batch entries strideA, strideB, strideC apart (offsets from
 * offs where that is not NULL). */
static void gemm_args_set(gemm_args *g, ocx_dtype dtype, size_t m, size_t n, size_t k, double alpha, double beta,
                          const ocx_buffer *a, size_t offa, size_t sam, size_t sak, size_t stride_a,
                          const ocx_buffer *b, size_t offb, size_t sbk, size_t sbn, size_t stride_b,
                          const ocx_buffer *c, size_t offc, size_t ldc, size_t stride_c, const cl_mem *offs, int flags)
{
    const cl_ulong u[14] = {m, n, k, offa, sam, sak, stride_a, offb, sbk, sbn, stride_b, offc, ldc, stride_c};
    memcpy(g->u, u, sizeof u);
    g->alpha = alpha, g->beta = beta, g->flags = flags;
    /* M, N, K, alpha, beta, then A (buffer, offset, 2 strides, batch stride), B alike, C (buffer,
     * offset, ldc, batch stride), offs, flags */
    static const signed char at[21] = {0, 1, 2, -1, -1, -1, 3, 4, 5, 6, -1, 7, 8, 9, 10, -1, 11, 12, 13, -1, -1};
    for (int i = 0; i < 21; i++)
        if (at[i] >= 0) g->args[i] = (ocx__arg){OCX__ARG_VALUE, sizeof(cl_ulong), &g->u[at[i]]};
    g->args[3] = scalar_arg(dtype, &g->alpha, &g->alpha32);
    g->args[4] = scalar_arg(dtype, &g->beta, &g->beta32);
    g->args[5] = OCX__ARG_MEM(a);
    g->args[10] = OCX__ARG_MEM(b);
    g->args[15] = OCX__ARG_MEM(c);
    g->args[19] = (ocx__arg){OCX__ARG_VALUE, sizeof(cl_mem), offs};
    g->args[20] = (ocx__arg){OCX__ARG_VALUE, sizeof(cl_int), &g->flags};
}

/* Widest vector (4, 2 or 1 elements) for tile loads along an operand's fast dimension: one that
 * divides the tile's fast extent (a define: it does not depend on the call). */
static int load_width(int fast_extent) { return fast_extent % 4 == 0 ? 4 : fast_extent % 2 == 0 ? 2 : 1; }

/* Whether vector loads of width v are aligned for this call: the slow stride and every batch entry's
 * base offset are multiples of v (a kernel argument bit, so unaligned calls reuse the same program). */
static int aligned_for(const ocx_buffer *x, const batch_offs *o, size_t batch, size_t slow, int v)
{
    size_t w = (size_t)v;
    if (slow % w || x->offset % w) return 0;
    if (o->arr) {
        for (size_t i = 0; i < batch; i++)
            if (o->arr[i] % w) return 0;
        return 1;
    }
    return o->base % w == 0 && (batch < 2 || o->stride % w == 0);
}

/* PACK=1: the tiled kernel reads a dense copy of an operand whose loads would stride (the copy's
 * kernel, cl/gemm_pack.cl, comes first on the stream, into the stream's scratch buffer, which is
 * kept between calls: a buffer created and released per call cost the H200 0.24 ms at 4096^3 and
 * 0.75 ms at 8192^3, more than the copies). Measured on PoCL (2-core AVX-512
 * EPYC, f32, the STAGE=1 defaults), PACK=0 and 1 alternating call by call in one process (median of
 * 9 rounds, GFLOP/s, wall time of the call):
 * - A transposed B (K-fast) is gathered column by column; it is copied N-fast. NT ran 256^3 at 188
 *   against 50, 512^3 266 against 40, 1024^3 319 against 24, 2048^3 266 against 22; TT 1024^3 274
 *   against 31.
 * - A transposed A (M-fast) spreads each k's MWI loads over a row; it is copied K-fast once it holds
 *   4 MiB or more and N >= PACKN (PACKN's comment has the thin products). TN ran 1024^3 at 285
 *   against 174 and 2048^3 260 against 128, but with the copy 256^3 ran 119 against 179 and 512^3
 *   193 against 247 (the copy's launch; A still fits in the cache).
 * - An N-fast B whose row pitch is a multiple of 4 KiB maps its rows onto few cache sets, so the
 *   K x NWG panel a work-group streams does not stay in the cache; it is copied when K >= 1024
 *   and M >= PACKN. NN ran 1024^3 at 340 against 281 and 2048^3 285 against 195; 3072^3 277
 *   against 193. With a pitch of 2 KiB times an odd number the copy did not pay (1536^3 343
 *   against 361, 2560^3 286 against 276), nor below K = 1024 (512^3, 768^3 level with a padded
 *   ldb); A's pitch did not matter.
 * The copy's pitch is an odd multiple of 64 bytes.
 * The kernels that stage tiles in local memory (STAGE >= 2, GPUs) keep both slices k-major, and read
 * an M-fast A and an N-fast B fastest: a K-fast operand's slice rows are KWG elements (64 bytes)
 * apart in global memory. They copy a K-fast A M-fast where N >= PACKN and K is above the short_k
 * class's 256 (16384x16384x64 NN lost 4% with it), a K-fast B N-fast where M >= PACKN, transposed
 * through local memory (gemm_pack_tl). On the H200 (f32, two alternating rounds, TFLOP/s, with the
 * bands of GM=16 against the former PACK=0, GM=1) 8192^3 NN / NT / TT ran 49.3 / 48.8 / 49.2
 * against 48.0-48.2 / 47.0-47.1 / 47.4, 4096^3 47.5-47.7 / 46.6-46.8 / 47.2-47.4 against
 * 46.6-46.7 / 45.4-45.5 / 45.6-46.0, 512x8192x8192 NN 46.0-46.2 against 43.8-43.9 and
 * 4096x4096x256 NT 37.7 against 32.9-33.0 (doc/performance.md, "K-fast operands on GPUs"). Batches
 * given as offset arrays are not copied, nor copies larger than the device's largest allocation (the
 * kernel then reads the operand). */
typedef struct operand {
    const ocx_buffer *buf;
    batch_offs o;
    size_t rows, cols, sr, sc; /* op(X): rows x cols, element (r, c) at r*sr + c*sc */
} operand;

/* Entries a copy of x holds: an operand that every batch entry shares (stride 0) is copied once. */
static size_t copied_entries(const operand *x, size_t batch) { return x->o.stride == 0 ? 1 : batch; }

/* Where a copy of operand x would go: its row pitch (an odd multiple of 64 bytes), or with panels
 * of w rows (w > 0) w itself, and its elements (0: larger than the device's largest allocation; the
 * kernel then reads x in place). */
static size_t pack_size(const ocx_context *ctx, const operand *x, size_t es, size_t batch, size_t w, size_t *pitch)
{
    batch = copied_entries(x, batch);
    size_t rows = x->rows, p; /* rows (panels) of p elements */
    if (w) {
        if (x->cols > SIZE_MAX / w) return 0;
        rows = ocx__div_up(x->rows, w), p = w * x->cols, *pitch = w;
    } else {
        const size_t align = 64 / es;
        p = ocx__round_up(x->cols, align);
        if ((p * es) % 128 == 0) p += align;
        *pitch = p;
    }
    if (rows > SIZE_MAX / p || rows * p > SIZE_MAX / es / batch || rows * p * batch * es > ctx->info.max_alloc_bytes)
        return 0;
    return rows * p * batch;
}

/* A copy of an operand, planned (and its kernel built) before the stream is locked, so that a first
 * call's compilation holds up no other thread feeding the stream; launched once the stream's scratch
 * buffer is held. The launch's arguments point into the plan, which must stay where it is. */
typedef struct pack_plan {
    operand orig;    /* the operand as given: read in place where the copy is left out */
    ocx_buffer copy; /* the copy; its mem is the scratch buffer, set once the stream is held */
    cl_ulong u[8];   /* the copy kernel's integer arguments */
    ocx__arg args[10];
    char options[48];
    ocx__launch_desc d; /* the copy's launch, its kernel built */
} pack_plan;

/* Plans a copy of operand x to element `at` of the scratch buffer with row pitch `pitch` (panel:
 * in panels of `pitch` rows, gemm_pack_panel), builds its kernel, and points x at the copy. local_t:
 * a transpose goes through local memory (gemm_pack_tl); widen: x is f16, the copy f32. */
static ocx_status pack_plan_make(ocx_context *ctx, operand *x, size_t batch, int local_t, int widen, size_t at,
                                 size_t pitch, int panel, pack_plan *pl)
{
    const size_t es = ocx_dtype_size(x->buf->dtype);
    batch = copied_entries(x, batch);
    const size_t per_entry = panel ? ocx__div_up(x->rows, pitch) * pitch * x->cols : x->rows * pitch;
    const int t = !panel && x->sc != 1; /* a transpose (sc != 1, so sr == 1) */
    local_t = t && local_t && ctx->info.max_work_group_size >= 256 && ctx->info.max_work_item_sizes[0] >= 32 &&
              ctx->info.max_work_item_sizes[1] >= 8;
    /* one kernel a program (cl/gemm_pack.cl says why): 0 gemm_pack, 1 gemm_pack_t, 2 gemm_pack_tl,
     * 3 gemm_pack_panel */
    snprintf(pl->options, sizeof pl->options, "-DESIZE=%zu -DPACK_KIND=%d%s", es, panel ? 3 : local_t ? 2 : t,
             widen ? " -DWIDEN=1" : "");
    if (panel) ocx__append_define(pl->options, sizeof pl->options, " -D", "PW", (int)pitch);
    pl->orig = *x;
    pl->copy = (ocx_buffer){ctx->context, NULL, widen ? OCX_F32 : x->buf->dtype, at, per_entry * batch, NULL, 0};
    const cl_ulong u[8] = {x->buf->offset + x->o.base, x->sr, x->sc, x->o.stride, at, x->rows, x->cols, pitch};
    memcpy(pl->u, u, sizeof u);
    /* gemm_pack(src, its offset, sr, sc, entry stride, dst, at, rows, cols, pitch) */
    for (int i = 0; i < 8; i++)
        pl->args[i < 4 ? i + 1 : i + 2] = (ocx__arg){OCX__ARG_VALUE, sizeof(cl_ulong), &pl->u[i]};
    pl->args[0] = OCX__ARG_MEM(pl->orig.buf);
    pl->args[5] = OCX__ARG_MEM(&pl->copy);
    size_t wg = 64; /* gemm_pack's work-groups: up to 64 work-items along its rows */
    if (wg > ctx->info.max_work_group_size) wg = ctx->info.max_work_group_size;
    if (wg > ctx->info.max_work_item_sizes[0]) wg = ctx->info.max_work_item_sizes[0];
    const unsigned nargs = sizeof pl->args / sizeof *pl->args;
    /* gemm_pack_t and gemm_pack_panel hold a block in private memory (16x16 elements; PW x 16),
     * which PoCL keeps for every work-item of a group at once on its worker thread's stack: in
     * groups of its own choosing (up to 4096 work-items) 2048^3 NT f32 overflowed an 8-MiB stack
     * and crashed the process. Their groups are pack_wg work-items along dimension 0 (the kernels
     * skip those past the end). */
    const size_t pack_wg = wg < 16 ? wg : 16;
    if (panel) { /* dimension 0 over the panels where each column is a run (sr == 1), else the columns */
        const size_t blocks = ocx__div_up(x->cols, 16), panels = ocx__div_up(x->rows, pitch);
        pl->d = (ocx__launch_desc){"gemm_pack", pl->options, "gemm_pack_panel", 3,
                                   {ocx__round_up(x->sr == 1 ? panels : blocks, pack_wg), x->sr == 1 ? blocks : panels,
                                    batch},
                                   {pack_wg, 1, 1}, nargs, pl->args, NULL};
    } else if (local_t)
        pl->d = (ocx__launch_desc){"gemm_pack", pl->options, "gemm_pack_tl", 3,
                                   {ocx__round_up(x->rows, 32), ocx__div_up(x->cols, 32) * 8, batch}, {32, 8, 1},
                                   nargs, pl->args, NULL};
    else if (t)
        pl->d = (ocx__launch_desc){"gemm_pack", pl->options, "gemm_pack_t", 3,
                                   {ocx__round_up(ocx__div_up(x->cols, 16), pack_wg), ocx__div_up(x->rows, 16), batch},
                                   {pack_wg, 1, 1}, nargs, pl->args, NULL};
    else
        pl->d = (ocx__launch_desc){"gemm_pack", pl->options, "gemm_pack", 3,
                                   {ocx__round_up(x->cols, wg), x->rows, batch}, {wg, 1, 1}, nargs, pl->args, NULL};
    OCX__FORWARD(ocx__kernel_get(ctx, pl->d.source, pl->d.options, pl->d.kernel, &pl->d.prebuilt));
    x->buf = &pl->copy;
    x->o = (batch_offs){NULL, 0, batch > 1 ? per_entry : 0};
    x->sr = panel ? pitch * x->cols : pitch; /* panel: the panels' distance; element (r, c) of panel */
    x->sc = panel ? pitch : 1;               /* r/pitch at c*pitch + r%pitch in it */
    return OCX_OK;
}

/* The kernel that takes a product (gemm_core). */
typedef enum gemm_kernel { K_DIRECT, K_TILED, K_DOT, K_COLS } gemm_kernel;

/* The launch of kernel `kind` (built: `kernel`) over an M x N product, `entries` batch entries (or
 * split K's chunks) deep: gemm_tiled's groups over the tiles, gemm_dot's over DROWS rows each,
 * gemm_cols's work-items over CVW columns each, gemm_direct's over the elements.
 * Dimensions 1 and 2 carry row tiles and batch entries without a cap of their own: CUDA grids stop
 * at 65535 blocks in y and z, but NVIDIA's OpenCL driver (580, H100) ran strided batches of 70000
 * and 140000 products (the direct kernel, batch in dimension 2) and a product of 12 million rows
 * (the tiled kernel: 93750 row tiles or more in dimension 1), each checked against a host
 * reference, and the tensor-core kernel a batch of 70000 f16 products of 200x256x64 (batch in
 * dimension 1; a probe of the fifty-fourth session). */
static ocx__launch_desc product_launch(gemm_kernel kind, const ocx__params *p, const char *options, cl_kernel kernel,
                                       gemm_args *g, size_t m, size_t n, size_t entries)
{
    const unsigned nargs = sizeof g->args / sizeof *g->args;
    const size_t dwg = (size_t)p->v[P_DDOT];
    if (kind == K_TILED) {
        const size_t wg = (size_t)p->v[P_MDIMC] * (size_t)p->v[P_NDIMC];
        return (ocx__launch_desc){"gemm", options, "gemm_tiled", 3,
                                  {ocx__div_up(n, (size_t)p->v[P_NWG]) * wg, ocx__div_up(m, (size_t)p->v[P_MWG]),
                                   entries},
                                  {wg, 1, 1}, nargs, g->args, kernel};
    }
    if (kind == K_DOT)
        return (ocx__launch_desc){"gemm_direct", options, "gemm_dot", 3,
                                  {ocx__div_up(m, (size_t)p->v[P_DROWS]) * dwg, 1, entries}, {dwg, 1, 1}, nargs,
                                  g->args, kernel};
    if (kind == K_COLS)
        return (ocx__launch_desc){"gemm_direct", options, "gemm_cols", 3,
                                  {ocx__round_up(ocx__div_up(n, (size_t)p->v[P_CVW]), dwg), 1, entries}, {dwg, 1, 1},
                                  nargs, g->args, kernel};
    const size_t gn = (size_t)p->v[P_DWGN], gm = (size_t)p->v[P_DWGM];
    return (ocx__launch_desc){"gemm_direct", options, "gemm_direct", 3,
                              {ocx__round_up(n, gn), ocx__round_up(m, gm), entries}, {gn, gm, 1}, nargs, g->args,
                              kernel};
}

/* The -D defines of a GEMM program: dtypes, every kernel parameter, and the call's layout. */
static void gemm_defines(ocx_context *ctx, const ocx__params *p, ocx_dtype dtype, int ctype, int native_f16, int akf,
                         int bkf, int av, int bv, int idx32, int ct, int panel, char *options, size_t cap)
{
    ocx__dtype_defines(ctx, dtype, options, cap);
    ocx__append_define(options, cap, " -D", "CTYPE", ctype);
    ocx__append_define(options, cap, " -D", "NATIVE_F16", native_f16);
    /* Every kernel parameter becomes a -D define (host-only ones such as DIRECT must not force a
     * rebuild). */
    ocx__params_defines(p, options, cap);
    const char *const names[] = {"AKF", "BKF", "AV", "BV", "IDX32", "CT", "PANEL"};
    const int values[] = {akf, bkf, av, bv, idx32, ct, panel};
    for (int i = 0; i < 7; i++) ocx__append_define(options, cap, " -D", names[i], values[i]);
}

/* The problem C = op(A) op(B) as C^T = op(B)^T op(A)^T: the operands trade places (with their batch
 * offsets), M and N too, and each one's strides turn round. */
static void transpose_problem(const ocx_buffer **ka, const ocx_buffer **kb, batch_offs *koa, batch_offs *kob,
                              size_t *km, size_t *kn, size_t *sam, size_t *sak, size_t *sbk, size_t *sbn)
{
    const ocx_buffer *b = *ka;
    *ka = *kb, *kb = b;
    batch_offs o = *koa;
    *koa = *kob, *kob = o;
    size_t t = *km;
    *km = *kn, *kn = t;
    const size_t am = *sam, ak = *sak;
    *sam = *sbn, *sak = *sbk, *sbk = ak, *sbn = am;
}

/* A scalar as the kernels compute with it: double for f64; else float, and then half for native f16. */
static double arith_value(ocx_dtype dtype, ocx_gemm_compute compute, double v)
{
    if (dtype == OCX_F64) return v;
    if (compute == OCX_COMPUTE_F16) return (double)ocx_half_to_float(ocx_half_from_float((float)v));
    return (double)(float)v;
}

static ocx_status gemm_core(ocx_context *ctx, ocx_stream *stream, ocx_layout layout, ocx_op opa, ocx_op opb, size_t m,
                            size_t n, size_t k, double alpha, const ocx_buffer *a, batch_offs oa, size_t lda,
                            const ocx_buffer *b, batch_offs ob, size_t ldb, double beta, ocx_buffer *c,
                            batch_offs oc, size_t ldc, size_t batch, ocx_gemm_compute compute, size_t num_wait,
                            const ocx_event *wait, ocx_event *event)
{
    ocx__event_clear(event, num_wait, wait);
    cl_command_queue queue;
    OCX__FORWARD(ocx__stream_resolve(ctx, stream, &queue)); /* checks ctx and the stream's context */
    /* the wait list: checked by ocx__launch, which every path of the call reaches before enqueueing */
    OCX__FAIL_IF(layout != OCX_ROW_MAJOR && layout != OCX_COL_MAJOR, OCX_ERR_INVALID_ARGUMENT,
                 "ocx_gemm: layout %d is neither OCX_ROW_MAJOR nor OCX_COL_MAJOR", (int)layout);
    OCX__FAIL_IF(opa != OCX_OP_N && opa != OCX_OP_T, OCX_ERR_INVALID_ARGUMENT, "ocx_gemm: opa %d is not N or T", (int)opa);
    OCX__FAIL_IF(opb != OCX_OP_N && opb != OCX_OP_T, OCX_ERR_INVALID_ARGUMENT, "ocx_gemm: opb %d is not N or T", (int)opb);
    OCX__FAIL_IF(compute != OCX_COMPUTE_DEFAULT && compute != OCX_COMPUTE_F16 && compute != OCX_COMPUTE_TF32X3,
                 OCX_ERR_INVALID_ARGUMENT, "ocx_gemm: unknown compute mode %d", (int)compute);
    OCX__FORWARD(ocx__check_float(ctx, a, "a"));
    OCX__FORWARD(ocx__check_dtype(b, "b", a->dtype));
    OCX__FAIL_IF(!c, OCX_ERR_INVALID_ARGUMENT, "c: buffer is NULL");
    if (a->dtype == OCX_F16) {
        OCX__FAIL_IF(c->dtype != OCX_F16 && c->dtype != OCX_F32, OCX_ERR_DTYPE,
                     "c: buffer is %s; f16 inputs give an f16 or f32 result", ocx_dtype_name(c->dtype));
    } else {
        OCX__FORWARD(ocx__check_dtype(c, "c", a->dtype));
    }
    if (compute == OCX_COMPUTE_F16) {
        OCX__FAIL_IF(a->dtype != OCX_F16 || c->dtype != OCX_F16, OCX_ERR_DTYPE,
                     "ocx_gemm_ex: OCX_COMPUTE_F16 takes f16 A, B and C (got %s and %s)", ocx_dtype_name(a->dtype),
                     ocx_dtype_name(c->dtype));
        OCX__FAIL_IF(!ctx->info.has_fp16, OCX_ERR_UNSUPPORTED,
                     "ocx_gemm_ex: native f16 arithmetic needs cl_khr_fp16, which device '%s' does not have%s",
                     ctx->info.name, ocx__env_flag("OCX_DISABLE_FP16") ? " (or OCX_DISABLE_FP16 is set)" : "");
    }
    OCX__FAIL_IF(compute == OCX_COMPUTE_TF32X3 && a->dtype != OCX_F32, OCX_ERR_DTYPE,
                 "ocx_gemm_ex: OCX_COMPUTE_TF32X3 takes f32 A, B and C (got %s)", ocx_dtype_name(a->dtype));

    mat ma = {"a", a, opa == OCX_OP_N ? m : k, opa == OCX_OP_N ? k : m, lda, 0};
    mat mb = {"b", b, opb == OCX_OP_N ? k : n, opb == OCX_OP_N ? n : k, ldb, 0};
    mat mc = {"c", c, m, n, ldc, 0};
    OCX__FORWARD(mat_check_shape(&ma, layout));
    OCX__FORWARD(mat_check_shape(&mb, layout));
    OCX__FORWARD(mat_check_shape(&mc, layout));
    if (batch > 0 && !oa.arr) {
        /* Strided: the first and the last entries bound the others. */
        size_t last = batch - 1;
        const batch_offs *os[3] = {&oa, &ob, &oc};
        const mat *ms[3] = {&ma, &mb, &mc};
        for (int i = 0; i < 3; i++) {
            OCX__FAIL_IF(last && os[i]->stride > (SIZE_MAX - os[i]->base) / last, OCX_ERR_OUT_OF_RANGE,
                         "ocx_gemm: %s: %zu entries of stride %zu overflow size_t", ms[i]->name, batch, os[i]->stride);
            OCX__FORWARD(mat_check_at(ctx, ms[i], os[i]->base, 0));
            OCX__FORWARD(mat_check_at(ctx, ms[i], os[i]->base + last * os[i]->stride, last));
        }
        /* Entries j apart lie j*stridec elements apart; from the span of one C on, none can meet. */
        for (size_t j = 1; j < batch && mc.span > 0 && j * oc.stride < mc.span; j++)
            OCX__FAIL_IF(shifted_overlap(&mc, layout, j * oc.stride), OCX_ERR_INVALID_ARGUMENT,
                         "ocx_gemm: c (batch entries 0 and %zu) overlap: stridec = %zu, ldc = %zu, C %zu x %zu; the C "
                         "matrices must lie apart (stridec >= %zu) or side by side within ldc",
                         j, oc.stride, mc.ld, mc.rows, mc.cols, mc.span);
    } else if (batch > 0) {
        OCX__FAIL_IF(!oa.arr || !ob.arr || !oc.arr, OCX_ERR_INVALID_ARGUMENT, "ocx_gemm_batched: an offset array is NULL");
        for (size_t i = 0; i < batch; i++) {
            OCX__FORWARD(mat_check_at(ctx, &ma, oa.arr[i], i));
            OCX__FORWARD(mat_check_at(ctx, &mb, ob.arr[i], i));
            OCX__FORWARD(mat_check_at(ctx, &mc, oc.arr[i], i));
        }
    } else {
        OCX__FORWARD(ocx__check_range(ctx, a, "a", 0, 0, 1));
        OCX__FORWARD(ocx__check_range(ctx, b, "b", 0, 0, 1));
        OCX__FORWARD(ocx__check_range(ctx, c, "c", 0, 0, 1));
    }
    if (batch > 0) {
        OCX__FORWARD(check_aliasing(&mc, &oc, &ma, &oa, batch, 0));
        OCX__FORWARD(check_aliasing(&mc, &oc, &mb, &ob, batch, 0));
        if (oc.arr) OCX__FORWARD(check_aliasing(&mc, &oc, &mc, &oc, batch, 1));
    }

    /* Nothing to compute: an empty launch is a marker after the wait list. alpha and beta count as 0
     * when they are 0 in the arithmetic type the kernels use them in (double for f64; else float, and
     * then half for native f16, as the kernel converts them): alpha = 1e-50 must not read A and B,
     * nor beta = 1e-8 with native f16 read C, or a NaN there would reach C as 0*NaN. */
    const double alpha_arith = arith_value(a->dtype, compute, alpha);
    if (arith_value(a->dtype, compute, beta) == 0.0) beta = 0.0;
    int no_product = k == 0 || alpha_arith == 0.0;
    ocx__launch_desc empty = {"gemm_direct", "", "gemm_direct", 1, {0}, {0}, 0, NULL};
    if (m == 0 || n == 0 || batch == 0 || (no_product && beta == 1.0))
        return ocx__launch(ctx, stream, &empty, num_wait, wait, event);
    if (no_product) { /* C = beta*C: A and B are not read, and alpha (an infinity, say) not used */
        k = 0;
        alpha = 0.0;
    }

    /* Row-major view of the problem: op(A)(i, l) at sam*i + sak*l, op(B)(l, j) at sbk*l + sbn*j. A
     * column-major C is the row-major C^T = op(B)^T op(A)^T: swap the operands and M with N. */
    size_t sam, sak, sbk, sbn;
    op_strides(layout, opa, lda, &sam, &sak);
    op_strides(layout, opb, ldb, &sbk, &sbn);
    const ocx_buffer *ka = a, *kb = b;
    batch_offs koa = oa, kob = ob;
    size_t km = m, kn = n;
    if (layout == OCX_COL_MAJOR) transpose_problem(&ka, &kb, &koa, &kob, &km, &kn, &sam, &sak, &sbk, &sbn);

    /* Size classes (ocx_internal.h): "medium", "all", "large" by M*N*K, or "short_k", each with every parameter.
     * Products up to DIRECT^3 take the direct kernel, those up to 160^3 in the work-group shape of
     * the "small" class (DWGN/DWGM/DKU, tuned at 128^3 on GPUs and 16^3 on CPUs; on the H200 that shape
     * ran 256^3 at 0.58x CLBlast where the defaults ran it at 0.82x). "large" (M*N*K >= 2^38,
     * 8192^3 is 2^39): on the H200 64x128 tiles ran 8192^3 at 48.4 TFLOP/s and 4096^3 at 43.7, where
     * 128x128 ran 46.4 and 44.6; in later alternating rounds 64x128 ran 8192^3 at 46.9-47.8 and
     * 128x128 with 2-wide N vectors (NVIDIA's f32 defaults, gemm_class_defaults) at 47.9-48.0.
     * "short_k": on the H200 64x128 tiles (8x8 a work-item) ran 16384x16384x64, 4096x4096x256,
     * 8192x8192x128 and 8192x8192x256 at 38.3, 38.7, 40.6 and 44.4 TFLOP/s where the "all" entry's
     * 128x128 (8x16) ran 35.4, 38.3, 38.1 and 42.8. Profiles are read source by source: the first
     * with an entry for the class, or with an "all" entry for a class without built-in defaults of
     * its own ("medium" and "short_k" on GPUs, f32 "large" on NVIDIA's have them), gives the parameters; else the built-in
     * defaults (profile.c, gemm_class_defaults). */
    double volume = (double)km * (double)kn * (double)k;
    const char *cls = ocx__gemm_class(volume, k);
    ocx__params p;
    OCX__FORWARD(ocx__params_lookup(ctx, &ocx__family_gemm, a->dtype, cls, &p));
    double direct = (double)p.v[P_DIRECT];
    int use_direct = k == 0 || volume <= direct * direct * direct;
    const char *small_origin = NULL; /* set where the "small" class's work-group shape is taken */
    if (use_direct && volume <= 160.0 * 160.0 * 160.0) {
        ocx__params small;
        ocx__params_rec rec; /* the product's class's record, which the "small" lookup replaces */
        ocx__params_saved(&rec);
        OCX__FORWARD(ocx__params_lookup(ctx, &ocx__family_gemm, a->dtype, "small", &small));
        ocx__params_restore(&rec);
        p.v[P_DWGN] = small.v[P_DWGN];
        p.v[P_DWGM] = small.v[P_DWGM];
        p.v[P_DKU] = small.v[P_DKU];
        small_origin = small.origin;
    }
    /* f16 products (and f32 ones under OCX_COMPUTE_TF32X3) that would take the tiled kernel run on
     * NVIDIA's tensor cores where the probe passed (gemm_nv.c). TF32X3 leaves "short_k" products to
     * the f32 kernel: on the H200, 4096x4096x256 ran 24.8 TFLOP/s there against 36-38 for the f32
     * kernel, and 16384x16384x64 13.0 against 37 (not measured apart: probably its C stores, which a
     * K-slow B's permuted columns scatter); 8192^3 ran 54.6-54.9 against 48.0, 8192x512x8192
     * 53.3-53.4 against 44.3-45.2 (doc/performance.md). */
    /* Matrix-vector products (DOTN): gemm_dot reads the large operand once, at the memory's rate,
     * where the tiled kernels fill a tile with one useful column, and the direct kernel's work-items
     * read rows far apart. It takes op(A) K-fast, so a product of a few rows whose op(B) is K-fast
     * (x * W^T) goes as its transpose, C written transposed (CT). Not native f16 (its arithmetic
     * type), and before the tensor cores (which a thin product wastes; f16 products of 9 to 16 rows
     * on large operands excepted, below), so also for TF32X3. */
    int ct = 0;
    /* f64 takes up to 8 (DOTN's comment). An f16 product that the tensor cores would take
     * otherwise goes to gemm_dot up to 12 rows where its large operand holds 2^23 elements or more,
     * up to 8 from 2^26: the tensor cores' rate grows with the rows and with the operand, gemm_dot's
     * far less. H200 (f16 in and out, NT, median GFLOP/s of 5 rounds alternating call by call,
     * tensor cores / gemm_dot): 16x512x1024 472 / 731, 13x1024x1024 735 / 984, 16x1024x1024
     * 946 / 1162, 13x2048x2048 2108 / 2918, 16x2048x2048 2599 / 2833, 16x4096x2048 5493 / 3451;
     * 9x4096x4096 3677 / 5318, 12x4096x4096 4947 / 5392, 14x4096x4096 5450 / 4860, 16x4096x4096
     * 6503 / 4951, 4096x12x4096 4921 / 5446; 8x4096x4096 3133 / 4634, 12x8192x8192 11743 / 7745.
     * Asked only of such a product, so that thinner ones never run the tensor cores' probe. */
    size_t dotn = (size_t)p.v[P_DOTN];
    const size_t thin = km < kn ? km : kn;
    const double large = (double)(km + kn - thin) * (double)k; /* the large operand's elements */
    const size_t f16_dotn = large >= 67108864.0 ? 8 : large >= 8388608.0 ? 12 : 16;
    if (a->dtype == OCX_F64 && dotn > 8)
        dotn = 8;
    else if (a->dtype == OCX_F16 && compute == OCX_COMPUTE_DEFAULT && dotn > f16_dotn && thin > f16_dotn &&
             thin <= dotn && !use_direct && ocx__gemm_nv_ready(ctx, a->dtype))
        dotn = f16_dotn;
    enum { DOT_K = 64 }; /* shorter K: the other kernels (PoCL: 65536x4x8 NT ran 1.9-2.5x slower in gemm_dot) */
    /* B's columns gathered element by element (N-fast): one column only. On PoCL (2-core AVX-512
     * EPYC, f32, two rounds of ocx-bench) 2048x4x2048 NN ran 48-62 GFLOP/s so, 70-77 tiled. */
    const int dot_n = kn <= dotn && sak == 1 && (sbk == 1 || kn == 1);
    const int dot_m = km <= dotn && sbk == 1 && (sak == 1 || km == 1); /* the same for C^T */
    /* gemm_cols (COLS): a few rows whose op(B) is N-fast, or a few columns whose op(A) is M-fast (as
     * C^T); on GPUs the tiled kernel split K over tiles 128 wide for them (1x4096x4096 NN: 100 us).
     * At most COLS_MAX (and DOTN) of them: on the H200 (f32, as in DOTN's comment, DOTN=4 / 16)
     * gemm_cols ran 5x4096x4096 NN at 1913 against 1621 tiled, but 8x4096x4096 NN 2262 against
     * 2450, 8x8192x8192 NN 3079 against 3721, 16x4096x4096 NN 2719 against 5309. */
    enum { COLS_MAX = 4 };
    const size_t colsn = dotn < COLS_MAX ? dotn : COLS_MAX;
    const int cols_m = km <= colsn && sbn == 1, cols_n = kn <= colsn && sam == 1;
    int dot = 0, cols = 0;
    if (k >= DOT_K && compute != OCX_COMPUTE_F16) {
        dot = dot_n || dot_m;
        cols = !dot && p.v[P_COLS] && (cols_m || cols_n);
        if ((dot && !dot_n) || (cols && !cols_m)) { /* the orientation each kernel takes is C^T's */
            transpose_problem(&ka, &kb, &koa, &kob, &km, &kn, &sam, &sak, &sbk, &sbn);
            ct = 1;
        }
        if (dot || cols) use_direct = 0;
    }
    const int x3 = compute == OCX_COMPUTE_TF32X3 && strcmp(cls, "short_k") != 0; /* f32: checked above */
    const int nv = !use_direct && !dot && !cols && (x3 || (a->dtype == OCX_F16 && compute == OCX_COMPUTE_DEFAULT)) &&
                   ocx__gemm_nv_ready(ctx, a->dtype);
    const int tiled = !use_direct && !nv && !dot && !cols; /* gemm_tiled (cl/gemm.cl) takes the product */
    const gemm_kernel kind = tiled ? K_TILED : dot ? K_DOT : cols ? K_COLS : K_DIRECT; /* unless nv */
    if (!tiled && !nv && (p.v[P_PANEL] || p.v[P_PFD] || p.v[P_KBLK])) {
        /* ocx_last_params(): panels, prefetches and K blocks are the tiled kernel's (packing needs
         * it), none of the direct, dot-product and column kernels' (they had been reported) */
        p.v[P_PANEL] = p.v[P_PFD] = p.v[P_KBLK] = 0;
        ocx__params_record(&p, a->dtype, cls);
    }
    if (small_origin && use_direct) {
        /* ocx_last_params(): the values the direct kernel uses, under the class whose shape it took
         * and that entry's source (its DIRECT had no say: the product's class decided) */
        ocx__params rec = p;
        rec.origin = small_origin;
        ocx__params_record(&rec, a->dtype, "small");
    }
    /* DDOT within the device's work-groups, and gemm_dot's sums (compiled into gemm_cols's program
     * too, there with DROWS=1) within its local memory */
    const int drows = dot ? p.v[P_DROWS] : 1;
    if (dot || cols) {
        int ddot = p.v[P_DDOT];
        while (ddot > 1 && ((size_t)ddot > ctx->info.max_work_group_size ||
                            (size_t)ddot > ctx->info.max_work_item_sizes[0] ||
                            (size_t)drows * (dot ? kn : km) * (size_t)ddot * arith_bytes(a->dtype) >
                                ctx->info.local_mem_max_bytes))
            ddot /= 2;
        if (ddot != p.v[P_DDOT]) {
            p.v[P_DDOT] = ddot;
            ocx__params_record(&p, a->dtype, cls);
        }
    }

    /* A thin product on the CPU kernel (STAGE=1), which vectorises along the kernel's N and streams
     * A K-fast and B N-fast: where the large operand would come the other way (N thin and A M-fast,
     * or M thin and B K-fast), the kernel computes C^T = op(B)^T op(A)^T and writes C transposed
     * (CT), so that the large operand takes the role it streams in. PoCL (2-core AVX-512 EPYC, f32,
     * ocx-bench gemm --reps 5, GFLOP/s, with the fits below, without / with): 1x2048x2048 NT / TT
     * 1.7 / 1.9 against 3.1 / 6.5; 4x2048x2048 NT / TT 6.3 / 7.2 against 45 / 17; 16x2048x2048
     * 26 / 29 against 167 / 211; 2048x1x2048 TN / TT 3.2 / 3.0 against 16 / 20; 2048x4x2048 16 / 7
     * against 96 / 84; 2048x16x2048 65 / 32 against 130 / 133. "Thin" is below the tile those
     * defaults had (64 rows, 32 columns), whatever the tile in force: below AVX2's 6 rows, products
     * of 6-63 rows with B K-fast had kept it K-fast (8x2048x2048 NT on the 2-core AVX2 EPYC: 8-9
     * GFLOP/s against 38-56). */
    enum { CT_ROWS = 64, CT_COLS = 32 };
    if (tiled && p.v[P_STAGE] == 1 &&
        ((kn < CT_COLS && kn < km && sam == 1 && sak != 1) || (km < CT_ROWS && km < kn && sbk == 1 && sbn != 1))) {
        transpose_problem(&ka, &kb, &koa, &kob, &km, &kn, &sam, &sak, &sbk, &sbn);
        ct = 1;
    }

    /* The CPU kernel (STAGE=1) on products narrower than its tile: column vectors no wider than N
     * (N below VWN took the kernel's dot-product path) and a tile no wider than N needs, so that
     * work-items do not compute clamped copies of the last column. PoCL (2-core AVX-512 EPYC, f32,
     * median GFLOP/s of 3 rounds): 2048x4x2048 NN / NT ran 49 / 59 with VWN = NWG = 4 against 3.5
     * with the defaults' VWN = 16, NWG = 32; 2048x16x2048 NN / NT 150 / 264 with NWG = 16 against
     * 112 / 194. ocx_last_params() reports the values used. */
    if (tiled && p.v[P_STAGE] == 1 && (kn < (size_t)p.v[P_NWG] || km < (size_t)p.v[P_MWG])) {
        int vwn = p.v[P_VWN], nwg = p.v[P_NWG], mwg = p.v[P_MWG], mdimc = p.v[P_MDIMC];
        if (kn < (size_t)nwg) {
            while (vwn > 1 && (size_t)vwn > kn) vwn /= 2;
            for (nwg = p.v[P_NDIMC] * vwn; (size_t)nwg < kn && nwg < p.v[P_NWG];) nwg *= 2;
        }
        if (km < (size_t)mwg) { /* MWG <= M, which the kernel's row placement needs (gemm.cl) */
            const int mwi = mwg / mdimc;
            if (km < (size_t)mwi) { /* a lower register tile on one work-item */
                mdimc = 1;
                mwg = ocx__ladder_below(OCX__LADDER_POW2_3, (int)km + 1);
            } else { /* fewer work-items along M */
                while ((size_t)(mdimc * mwi) > km) mdimc /= 2;
                mwg = mdimc * mwi;
            }
        }
        if (vwn != p.v[P_VWN] || nwg != p.v[P_NWG] || mwg != p.v[P_MWG] || mdimc != p.v[P_MDIMC]) {
            p.v[P_VWN] = vwn, p.v[P_NWG] = nwg, p.v[P_MWG] = mwg, p.v[P_MDIMC] = mdimc;
            ocx__params_record(&p, a->dtype, cls);
        }
    }

    /* Split K (KSPLIT): parts partial products over chunks of kc (the last one shorter), each in
     * the accumulator's type, in the stream's scratch buffer after the copies. (gemm_cols's chunks
     * are whole runs of 16 k; its loads' alignment holds for any chunk, aligned_for checking sbk.) */
    size_t parts = 1, kc = k;
    const ocx_dtype acc = a->dtype == OCX_F64 ? OCX_F64 : OCX_F32;
    if (((tiled && p.v[P_STAGE] >= 2) || cols) && p.v[P_KSPLIT] > 0 && batch == 1 && !koa.arr &&
        compute != OCX_COMPUTE_F16) {
        const size_t groups =
            cols ? ocx__div_up(kn, (size_t)p.v[P_CVW] * (size_t)p.v[P_DDOT])
                 : ocx__div_up(km, (size_t)p.v[P_MWG]) * ocx__div_up(kn, (size_t)p.v[P_NWG]);
        /* About four work-groups a compute unit; gemm_cols's, light (a vector a work-item), sixteen,
         * over chunks from KSPLIT/4 on. */
        const size_t cu = ctx->info.compute_units ? ctx->info.compute_units : 1, per_cu = cols ? 16 : 4;
        const size_t kmin = cols ? ((size_t)p.v[P_KSPLIT] + 3) / 4 : (size_t)p.v[P_KSPLIT];
        if (4 * groups < per_cu * cu && k >= 4 * kmin) {
            parts = ocx__div_up(per_cu * cu, groups);
            if (parts > k / kmin) parts = k / kmin;
            if (parts > 64) parts = 64;
            kc = ocx__round_up(ocx__div_up(k, parts), cols ? 16 : (size_t)p.v[P_KWG]);
            parts = ocx__div_up(k, kc);
            if ((double)parts * (double)km * (double)kn * (double)ocx_dtype_size(acc) >
                (double)ctx->info.max_alloc_bytes / 2)
                parts = 1, kc = k;
        }
    }

    /* Copies the tiled kernel reads in place of strided operands (PACK, pack_plan), in the stream's
     * scratch buffer (A's copy first, B's after it). Every kernel is built first; the stream is then
     * locked (held) from taking the buffer until the GEMM is enqueued, so no other call's scratch
     * use comes in between. */
    pack_plan plans[2];
    int planned[2] = {0, 0};
    const int packing = tiled && p.v[P_PACK] && !koa.arr;
    /* STAGE=1 reads A K-fast; the local-memory kernels store both slices k-major, so they read A
     * M-fast (xa then describes op(A)^T: rows along k). */
    const int cpu_k = p.v[P_STAGE] == 1;
    /* PANEL: the CPU kernel reads both operands from panel copies, A's rows MWI to a panel and B's
     * columns NWI, each panel k after k (gemm_pack_panel), so that a work-item walks two runs of
     * memory where it walked MWI rows of A and rows of B a pitch apart (a new page every k at 1024
     * columns). PoCL (2-core AVX-512 Xeon, f32, kernel time) ran 1024^3 at 55-57% of the FMA peak
     * in the strided kernel; a kernel reading panels copied beforehand ran it at 72-77%. The copies
     * cost (M + N)*K element moves and two launches against the M*N*K multiply-adds they speed up,
     * so panels are taken where M*N/(M + N) is PANEL or more (CPUs 384: 768^2 and up, square) and
     * M*N*K at least 2*PANEL^3: calls alternating with and without them in one process
     * (tools/profile-ab, 11 rounds, wall time) ran 768^3 at 1.05x (7 of 11 rounds), 1024^3 1.15x
     * (10), 1536^3 1.32x and 2048^3 1.40x (11 each), 640^3 0.98x, 512^3 1.00x, 384^3 0.86x and
     * 256^3 0.74x (doc/performance.md, "Panels"). Panels from a quarter of PANEL where the kernel
     * would read A M-fast (copying it, or walking it across), or where N >= M (short-wide and
     * square products read their large B in place, rows a pitch apart): alternating calls, f32
     * 512^3 NT, TN and TT ran 1.09x, 1.34x and 1.28x, NN 1.03-1.40x at 256x2048x2048, 600^3 and
     * 100x10000x1000, 128x4096x256 1.52-2.01x; f64 512^3 TN and TT 3.14x and 2.63x, NN 1.22-1.37x
     * at 128x4096x4096 and 512^3, but square NT 0.92-0.96x and NN 600^3 0.87-0.89x, the price of
     * one rule (f64 NN and NT at 600^3 now run without: below). Tall products with A read in place
     * (K-fast) keep PANEL itself: under a quarter, 4096x128x4096 NN and NT ran 0.82-0.92x and
     * 0.77x. Short-wide NN products under a quarter stay without: under PANEL=48, 64x4096x4096 NN
     * ran 0.91x. Every figure is in doc/performance.md,
     * "Panels for thin products with a transposed operand" and "Panels from a quarter of `PANEL`
     * wherever N >= M". xb is then op(B)^T (rows along n).
     * f64 with A read K-fast (in place, its rows' runs serve as they are) takes panels from 1.5x
     * PANEL (square: 1152^3), without the quarter for N >= M, unless the rows or columns of B lie
     * a multiple of 1 KiB apart (where, read in place, they fall into the same sets of the cache).
     * Where they do not, the strided kernel ran about as fast as from panels, which then lost
     * their copies' time. With panels, calls alternating with none (cold; hot where given): f64
     * 1000^3 NN 0.82-1.02x (hot 0.85x), NT 0.91-0.94x (hot 0.85x), 1024x1000x1000 0.82-0.91x,
     * short-wide 300x3000x3000, 500x2000x1000 0.91-0.92x, 256x2000x2000 0.94x (hot 1.01x),
     * 128x4000x4000 0.70x (hot 0.75x), all without panels now; 1200^3 0.97-0.99x, 1300^3-2000^3
     * 0.95-1.09x, mostly ahead, with them. Pitches a multiple of 1 KiB keep the former rule (with
     * panels 1000x1024x1000 ran 1.68-1.76x, 1024^3 1.18x), as does A read M-fast (600^3 TN and TT
     * 1.58x and 2.16x). The one product found ahead with panels that now runs without:
     * 200x3000x1000 (1.13x, hot 1.17x). doc/performance.md, "f64 panels and the pitch". */
    const size_t bpitch = (sbn == 1 ? sbk : sbn) * ocx_dtype_size(kb->dtype);
    const int f64_kfast = ka->dtype == OCX_F64 && sak == 1 && bpitch % 1024 != 0;
    const double pmin = f64_kfast ? 1.5 * p.v[P_PANEL] : (double)p.v[P_PANEL] / (sak != 1 || kn >= km ? 4 : 1);
    const double pvol = (double)p.v[P_PANEL];
    const int panel = packing && cpu_k && pmin > 0 && (double)km * (double)kn >= pmin * (double)(km + kn) &&
                      volume >= 2 * pvol * pvol * pvol;
    operand xa = cpu_k ? (operand){ka, koa, km, k, sam, sak} : (operand){ka, koa, k, km, sak, sam};
    operand xb = panel ? (operand){kb, kob, kn, k, sbn, sbk} : (operand){kb, kob, k, kn, sbk, sbn};
    size_t copy_bytes = 0;
    /* f16 operands of the CPU kernel (STAGE=1) in f32 arithmetic are both copied, widened to f32 as
     * they go (gemm_pack.cl: WIDEN), and the kernel runs on f32: each element is converted once, not
     * at every load of it (its tile's columns or rows load it again and again). PoCL (2-core
     * AVX-512 Xeon, ocx-bench gemm, f16 in and f32 out, device time in GFLOP/s): converting in the
     * kernel, 1024^3 ran at 67-71 whatever the tiles, against 234-242 for f32 and 239-245 so
     * widened; 256^3 66 against 172, 512^3 72 against 226. Only both or neither: the kernel reads
     * one type. Not below WIDEN_MIN (M*N*K), where the copies' two launches cost more wall time
     * than the conversions they save (wall time of the same, in us, converting in the kernel /
     * widened, two runs: 64^3 26-30 / 32-65, 96^3 71 / 42-91, 128^3 124-127 / 59-94, 160^3 270-272
     * / 108). */
    enum { WIDEN_MIN = 1 << 20 };
    int widen = packing && cpu_k && a->dtype == OCX_F16 && compute != OCX_COMPUTE_F16 && volume >= WIDEN_MIN;
    while (packing) {
        const size_t es = widen ? ocx_dtype_size(OCX_F32) : ocx_dtype_size(a->dtype); /* of a copy */
        const size_t packn = (size_t)p.v[P_PACKN];
        const int want_a = panel || widen || (xa.sc != 1 && kn >= packn &&
                                     (cpu_k ? (double)km * (double)k * (double)es >= 4194304.0
                                            : k > OCX__GEMM_SHORT_K));
        const int want_b = panel || widen ||
                           (sbn != 1 ? cpu_k || km >= packn : cpu_k && km >= packn && k >= 1024 && sbk * es % 4096 == 0);
        /* panels: A's rows MWI to a panel, B's columns NWI (0: rows with a pitch) */
        const size_t wa = panel ? (size_t)(p.v[P_MWG] / p.v[P_MDIMC]) : 0;
        const size_t wb = panel ? (size_t)(p.v[P_NWG] / p.v[P_NDIMC]) : 0;
        size_t pa = 0, pb = 0;
        size_t na = want_a ? pack_size(ctx, &xa, es, batch, wa, &pa) : 0;
        size_t nb = want_b ? pack_size(ctx, &xb, es, batch, wb, &pb) : 0;
        const size_t at_b = ocx__round_up(na, 64 / es); /* B's copy starts 64-byte aligned */
        if (na && nb && (at_b + nb) * es > ctx->info.max_alloc_bytes) nb = 0; /* A's copy alone */
        if ((widen || panel) && !(na && nb)) { /* panels, and widening, take both copies or neither */
            if (!widen) break;
            widen = 0; /* the copies as f16 operands have them, if any */
            continue;
        }
        copy_bytes = (nb ? (na ? at_b : 0) + nb : na) * es;
        if (na) OCX__FORWARD(pack_plan_make(ctx, &xa, batch, !cpu_k, widen, 0, pa, panel, &plans[0]));
        if (nb) OCX__FORWARD(pack_plan_make(ctx, &xb, batch, !cpu_k, widen, na ? at_b : 0, pb, panel, &plans[1]));
        planned[0] = na != 0, planned[1] = nb != 0;
        break;
    }

    /* The GEMM's kernels for the operands as they will be read; then, where copies or split K are
     * planned, the stream is held and the copies and the first partial products launched. Whatever
     * is left out for want of memory sends the loop round again for the kernel that does without
     * it (an operand read in place, K in one pass). */
    char options[512], sum_options[512];
    int flags = 0;
    cl_kernel kernel = NULL, sum = NULL;
    ocx_stream *held = NULL;
    ocx_buffer part; /* the partial products (split K): a view of the scratch buffer once it is held */
    cl_mem mem = NULL; /* the scratch buffer, once held */
    gemm_args g;
    const cl_mem no_offs = NULL;
    const size_t last = parts - 1; /* split K's last chunk */
    int panels_in = 0; /* the kernel reads panels (PANEL) */
    /* stage 0: nothing launched; 1: the copies launched (the buffer held); 2: split K's first
     * partial products launched too */
    for (int stage = 0;;) {
        const size_t part_at = ocx__round_up(copy_bytes, 64);
        part = (ocx_buffer){ctx->context, mem, acc, part_at / ocx_dtype_size(acc), parts * km * kn, mem, 0};
        if (packing) {
            ka = xa.buf, koa = xa.o;
            sam = cpu_k ? xa.sr : xa.sc, sak = cpu_k ? xa.sc : xa.sr;
            kb = xb.buf, kob = xb.o;
            sbk = panel ? xb.sc : xb.sr, sbn = panel ? xb.sr : xb.sc;
        }
        panels_in = panel && planned[0] && planned[1];
        if (tiled && p.v[P_PANEL] && !panels_in) { /* ocx_last_params(): 0 where none were taken */
            p.v[P_PANEL] = 0;
            ocx__params_record(&p, a->dtype, cls);
        }
        /* Bands of tile-rows (GM) only where a local-memory kernel reads both operands MN-fast: on
         * the H200 a K-fast operand under bands ran up to 7% slower (GM in the table above). */
        const int akf = sak == 1, bkf = sbn != 1;
        if (tiled && p.v[P_STAGE] >= 2 && (akf || bkf) && p.v[P_GM] != 1) {
            p.v[P_GM] = 1;
            ocx__params_record(&p, a->dtype, cls);
        }
        /* Prefetches (PFD) only where the CPU kernel reads B in place, N-fast, with its rows a page
         * or more apart (PFD in the table above), and only on CPUs: NVIDIA's compiler (H100, driver
         * 580) says it has __builtin_prefetch and then fails to build the kernel. ocx_last_params()
         * reports 0 elsewhere. */
        const ocx_dtype kdt = widen ? OCX_F32 : a->dtype; /* what the kernel reads */
        if (tiled && p.v[P_PFD] &&
            (ctx->info.type != OCX_DEVICE_CPU || p.v[P_STAGE] != 1 || panels_in || bkf ||
             sbk * ocx_dtype_size(kdt) < PFD_PITCH)) {
            p.v[P_PFD] = 0;
            ocx__params_record(&p, a->dtype, cls);
        }
        /* Layout and alignment of the call: each operand's fast dimension (one of its strides is 1),
         * the widest global vector its tile loads may use, and whether 32-bit element indices
         * suffice (split K: the chunks start kc apart along k, a multiple of KWG, so the
         * alignment holds for every one). */
        int av = load_width(akf ? p.v[P_KWG] : p.v[P_MWG]), bv = load_width(bkf ? p.v[P_KWG] : p.v[P_NWG]);
        if (dot) /* gemm_dot's loads: DVW elements along A's rows and (where sbk = 1) B's columns */
            flags = (aligned_for(ka, &koa, batch, sam, p.v[P_DVW]) ? 2 : 0) |
                    (sbk == 1 && aligned_for(kb, &kob, batch, kn > 1 ? sbn : 0, p.v[P_DVW]) ? 4 : 0);
        else if (cols) /* gemm_cols's loads: CVW elements along B's rows */
            flags = aligned_for(kb, &kob, batch, sbk, p.v[P_CVW]) ? 4 : 0;
        else
            flags = (aligned_for(ka, &koa, batch, akf ? sam : sak, av) ? 2 : 0) |
                    (aligned_for(kb, &kob, batch, bkf ? sbn : sbk, bv) ? 4 : 0);
        const ocx_buffer *bufs[3] = {ka, kb, parts > 1 ? &part : c};
        int idx32 = 1;
        for (int i = 0; i < 3; i++)
            if (bufs[i]->offset + bufs[i]->length > 0xFFFFFFFFu) idx32 = 0;
        const int native = compute == OCX_COMPUTE_F16;
        /* split K: the chunks' partial products are written as they are, gemm_sum transposes (CT) */
        gemm_defines(ctx, &p, kdt, parts > 1 ? dtype_code(acc) : dtype_code(c->dtype), native,
                     akf, bkf, av, bv, idx32, parts > 1 ? 0 : ct, panels_in, options, sizeof options);
        if (dot || cols) {
            const size_t ol = strlen(options);
            snprintf(options + ol, sizeof options - ol, " -DNB=%zu -DBK1=%d -DDDOT=%d -DDVW=%d -DDROWS=%d",
                     dot ? kn : km, sbk == 1, p.v[P_DDOT], p.v[dot ? P_DVW : P_CVW], drows);
        }
        static const char *const names[] = {"gemm_direct", "gemm_tiled", "gemm_dot", "gemm_cols"};
        ocx_status st =
            nv ? OCX_OK : ocx__kernel_get(ctx, tiled ? "gemm" : "gemm_direct", options, names[kind], &kernel);
        if (st == OCX_OK && !nv) ocx__params_kernel(names[kind]);
        if (st == OCX_OK && parts > 1) { /* gemm_sum (a small program of its own), built for the caller's C */
            gemm_defines(ctx, &p, a->dtype, dtype_code(c->dtype), native, akf, bkf, av, bv, idx32, ct, 0, sum_options,
                         sizeof sum_options);
            st = ocx__kernel_get(ctx, "gemm_direct", sum_options, "gemm_sum", &sum);
        }
        if (st != OCX_OK) {
            if (held) pthread_mutex_unlock(&held->lock);
            return st;
        }
        if (!(planned[0] || planned[1] || parts > 1) || ocx__launch_is_build_only() || stage == 2) break;
        /* a copy left out is no failure of the call: its message is put back */
        char *saved = ocx__error_save();
        int left_out = 0; /* 1: A's copy (and B's after it); 2: B's copy alone; 3: everything */
        if (stage == 0) {
            stage = 1;
            const size_t scratch_bytes = parts > 1 ? (part.offset + part.length) * ocx_dtype_size(acc) : copy_bytes;
            if (ocx__stream_scratch(ctx, stream, scratch_bytes, &held, &mem) != OCX_OK) {
                held = NULL, mem = NULL; /* no room: the kernel reads the operands in place, K in one piece */
                left_out = 3;
            }
            part.mem = part.root = mem;
            for (int i = 0; i < 2 && !left_out; i++) {
                if (!planned[i]) continue;
                plans[i].copy.mem = plans[i].copy.root = mem;
                st = ocx__launch(ctx, stream, &plans[i].d, num_wait, wait, NULL);
                if (st == OCX_OK) {
                    num_wait = 0; /* the stream's queue is in order: later commands follow the copy */
                    wait = NULL;
                } else if (st == OCX_ERR_OUT_OF_MEMORY) {
                    /* A driver that allocates at first use reports a scratch buffer too large for the
                     * device at the first launch into it: that copy is left out (and, where it is A's
                     * or B's alone, the buffer dropped), and so is B's after A's. */
                    left_out = i + 1;
                } else {
                    if (held) pthread_mutex_unlock(&held->lock);
                    free(saved);
                    return st;
                }
            }
        }
        if (!left_out && parts > 1) {
            /* Split K: parts - 1 chunks of kc as one batch (the batch strides step along k), each into
             * its M x N slot of the partial products; the last, shorter, chunk and gemm_sum follow
             * the loop. Where the driver reports no memory at this first launch into the partials'
             * part of the buffer and no copy is in it, K is not split. */
            stage = 2;
            gemm_args_set(&g, a->dtype, km, kn, kc, 1, 0, ka, ka->offset + koa.base, sam, sak, kc * sak, kb,
                          kb->offset + kob.base, sbk, sbn, kc * sbk, &part, part.offset, kn, km * kn, &no_offs,
                          flags);
            ocx__launch_desc pd = product_launch(kind, &p, options, kernel, &g, km, kn, last);
            st = ocx__launch(ctx, stream, &pd, num_wait, wait, NULL);
            if (st == OCX_OK) {
                num_wait = 0, wait = NULL;
            } else if (st == OCX_ERR_OUT_OF_MEMORY && !planned[0] && !planned[1]) {
                left_out = 3;
            } else {
                pthread_mutex_unlock(&held->lock);
                free(saved);
                return st;
            }
        }
        if (!left_out) {
            free(saved);
            break;
        }
        if (left_out == 2 && planned[0] && !widen && !panel) { /* B's alone: A's copy stays in the buffer */
            xb = plans[1].orig;
            planned[1] = 0;
        } else {
            if (held) {
                ocx__stream_scratch_drop(held);
                pthread_mutex_unlock(&held->lock);
                held = NULL;
            }
            if (planned[0]) xa = plans[0].orig;
            if (planned[1]) xb = plans[1].orig;
            planned[0] = planned[1] = widen = 0; /* widened or neither: the f16 operands read in place */
            parts = 1, kc = k;
            copy_bytes = 0, mem = NULL;
        }
        ocx__error_restore(saved);
    }

    const int akf = sak == 1, bkf = sbn != 1;

    /* Offsets per batch entry, when given as arrays, go to the device in a small read-only buffer
     * (copied at creation; OpenCL keeps it alive until the kernel is done with it). */
    cl_mem offs = NULL;
    if (koa.arr) {
        cl_ulong *host = malloc(3 * batch * sizeof *host);
        OCX__FAIL_IF(!host, OCX_ERR_OUT_OF_MEMORY, "ocx_gemm_batched: %zu offsets", 3 * batch);
        for (size_t i = 0; i < batch; i++) {
            host[3 * i] = ka->offset + koa.arr[i];
            host[3 * i + 1] = kb->offset + kob.arr[i];
            host[3 * i + 2] = c->offset + oc.arr[i];
        }
        cl_int err;
        offs = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 3 * batch * sizeof *host, host, &err);
        free(host);
        if (err != CL_SUCCESS) return ocx__cl_error(err, "ocx_gemm_batched: offset buffer");
    }

    gemm_args_set(&g, a->dtype, km, kn, k, alpha, beta, ka, ka->offset + (koa.arr ? 0 : koa.base), sam, sak,
                  koa.arr ? 0 : koa.stride, kb, kb->offset + (kob.arr ? 0 : kob.base), sbk, sbn,
                  kob.arr ? 0 : kob.stride, c, c->offset + (oc.arr ? 0 : oc.base), ldc, oc.arr ? 0 : oc.stride, &offs,
                  (offs != NULL) | flags);
    const unsigned nargs = sizeof g.args / sizeof *g.args;
    /* The tensor-core kernel's 16-byte copies need 16-byte alignment (8 f16 or 4 f32 elements):
     * these flags give the offsets' and strides', the kernel also checks A's and B's addresses
     * (a cl_mem over host memory). No device here reaches that second check: on the H200 a
     * check_gemm built without it passed with operands 8 bytes past a 64-byte boundary, NVIDIA
     * copying such buffers into aligned memory of its own, and PoCL runs the kernel only emulated.
     * Tried and not kept there: copying a K-slow operand K-fast first (a tiled transpose into a
     * temporary buffer), so that the kernel loads both through ldmatrix. In two alternating rounds
     * (TFLOP/s) it ran 8192^3 TN at 52.0-54.1 against 49.4-50.0, but NN at 53.4-54.5 against
     * 54.2-55.0, 4096^3 at 48.1-55.4 against 51.7-56.3, and 1024^3 at 6.6-15.4 against 23.7-26.2
     * (the buffer and the extra launch). */
    if (nv) {
        const int ew = 16 / (int)ocx_dtype_size(a->dtype); /* elements in 16 bytes */
        g.flags = (offs != NULL) | (aligned_for(ka, &koa, batch, akf ? sam : sak, ew) ? 2 : 0) |
                  (aligned_for(kb, &kob, batch, bkf ? sbn : sbk, ew) ? 4 : 0);
        ocx_status st = ocx__gemm_nv_launch(ctx, stream, cls, km, kn, batch, akf, bkf, a->dtype, c->dtype,
                                            nargs, g.args, num_wait, wait, event);
        if (offs) clReleaseMemObject(offs);
        return st;
    }
    /* K in blocks (KBLK): one launch a block, in turn into C (beta = 1 after the first), each block
     * a multiple of 16 along k, so the loads' alignment holds for every one. Not for batches given
     * by offset arrays, nor an f16 C (rounding between blocks). From panels, whose runs the
     * work-items stream whatever K, blocks four times as long: PoCL (2-core AVX-512 Xeon, f32 NN,
     * tools/profile-ab, 11 rounds) ran 1536^3-4096^3 at 1.07-1.11x blocks of 512 (10 or 11 rounds
     * of 11), where one pass over K ran 768x768x16384 at 0.65x; without panels blocks of 2048 ran
     * 256x256x8192, 512x512x8192 and 640x640x4096 at 0.45-0.7x those of 512. f64 panels keep
     * blocks of KBLK, which calls alternating with blocks of 2048 in one process (7 rounds; wall
     * time; doc/performance.md, "Panels") ran 2048^3 NN and NT at 1.29x and 1.34x as fast, 1536^3,
     * 512x512x4096, 768x768x8192 and 128x4096x4096 NN at 1.08-1.10x (6-7 rounds won), 1024^3 at
     * 1.02x; blocks of 1024 ran 0.87-0.97x those of 512, of 256 0.97-1.04x. */
    size_t kblk = k;
    const size_t block = (size_t)p.v[P_KBLK] * (panels_in && a->dtype != OCX_F64 ? 4 : 1);
    if (parts == 1 && tiled && p.v[P_STAGE] == 1 && block > 0 && !koa.arr && c->dtype != OCX_F16 && k > 2 * block)
        kblk = ocx__round_up(block, 16);
    /* ocx_last_params() reports the tiled kernel's blocks' length, 0 for one pass (split K's too) */
    const int kblk_used = kblk < k ? (int)kblk : 0;
    if (tiled && p.v[P_KBLK] != kblk_used) {
        p.v[P_KBLK] = kblk_used;
        ocx__params_record(&p, a->dtype, cls);
    }
    ocx_status st;
    if (parts > 1) {
        /* Split K (the first chunks were launched in the loop): the last, shorter, chunk into its
         * slot, then gemm_sum adds the partial products up, in order, into C. */
        gemm_args_set(&g, a->dtype, km, kn, k - last * kc, 1, 0, ka, ka->offset + koa.base + last * kc * sak, sam, sak,
                      0, kb, kb->offset + kob.base + last * kc * sbk, sbk, sbn, 0, &part, part.offset + last * km * kn,
                      kn, 0, &no_offs, flags);
        ocx__launch_desc pd = product_launch(kind, &p, options, kernel, &g, km, kn, 1);
        st = ocx__launch(ctx, stream, &pd, num_wait, wait, NULL);
        if (st == OCX_OK) {
            float a32, b32;
            ocx__arg sargs[] = {OCX__ARG_U64(km),
                                OCX__ARG_U64(kn),
                                scalar_arg(a->dtype, &alpha, &a32),
                                scalar_arg(a->dtype, &beta, &b32),
                                OCX__ARG_MEM(&part),
                                OCX__ARG_U64(part.offset),
                                OCX__ARG_U64(parts),
                                OCX__ARG_MEM(c),
                                OCX__ARG_U64(c->offset + oc.base),
                                OCX__ARG_U64(ldc)};
            ocx__launch_desc sd = {"gemm_direct", sum_options, "gemm_sum", 2, {kn, km}, {0},
                                   sizeof sargs / sizeof *sargs, sargs, sum};
            st = ocx__launch(ctx, stream, &sd, 0, NULL, event);
        }
        if (held) pthread_mutex_unlock(&held->lock);
        return st;
    }
    for (size_t k0 = 0;; k0 += kblk) {
        const size_t kk = k - k0 < kblk ? k - k0 : kblk;
        const int last_block = k0 + kk >= k;
        if (kblk < k) /* the block's arguments (no offset arrays here) */
            gemm_args_set(&g, a->dtype, km, kn, kk, alpha, k0 ? 1 : beta, ka, ka->offset + koa.base + k0 * sak, sam,
                          sak, koa.stride, kb, kb->offset + kob.base + k0 * sbk, sbk, sbn, kob.stride, c,
                          c->offset + oc.base, ldc, oc.stride, &offs, flags);
        ocx__launch_desc d = product_launch(kind, &p, options, kernel, &g, km, kn, batch);
        st = ocx__launch(ctx, stream, &d, k0 ? 0 : num_wait, k0 ? NULL : wait, last_block ? event : NULL);
        if (st != OCX_OK || last_block) break;
    }
    if (held) pthread_mutex_unlock(&held->lock);
    if (offs) clReleaseMemObject(offs);
    return st;
}

ocx_status ocx_gemm_ex(ocx_context *ctx, ocx_stream *stream, ocx_layout layout, ocx_op opa, ocx_op opb, size_t m,
                       size_t n, size_t k, double alpha, const ocx_buffer *a, size_t offa, size_t lda, size_t stridea,
                       const ocx_buffer *b, size_t offb, size_t ldb, size_t strideb, double beta, ocx_buffer *c,
                       size_t offc, size_t ldc, size_t stridec, size_t batch, ocx_gemm_compute compute,
                       size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return gemm_core(ctx, stream, layout, opa, opb, m, n, k, alpha, a, (batch_offs){NULL, offa, stridea}, lda, b,
                     (batch_offs){NULL, offb, strideb}, ldb, beta, c, (batch_offs){NULL, offc, stridec}, ldc, batch,
                     compute, num_wait, wait, event);
}

ocx_status ocx_gemm_strided_batched(ocx_context *ctx, ocx_stream *stream, ocx_layout layout, ocx_op opa, ocx_op opb,
                                    size_t m, size_t n, size_t k, double alpha, const ocx_buffer *a, size_t offa,
                                    size_t lda, size_t stridea, const ocx_buffer *b, size_t offb, size_t ldb,
                                    size_t strideb, double beta, ocx_buffer *c, size_t offc, size_t ldc,
                                    size_t stridec, size_t batch, size_t num_wait, const ocx_event *wait,
                                    ocx_event *event)
{
    return ocx_gemm_ex(ctx, stream, layout, opa, opb, m, n, k, alpha, a, offa, lda, stridea, b, offb, ldb, strideb,
                       beta, c, offc, ldc, stridec, batch, OCX_COMPUTE_DEFAULT, num_wait, wait, event);
}

ocx_status ocx_gemm(ocx_context *ctx, ocx_stream *stream, ocx_layout layout, ocx_op opa, ocx_op opb, size_t m,
                    size_t n, size_t k, double alpha, const ocx_buffer *a, size_t offa, size_t lda,
                    const ocx_buffer *b, size_t offb, size_t ldb, double beta, ocx_buffer *c, size_t offc,
                    size_t ldc, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return ocx_gemm_ex(ctx, stream, layout, opa, opb, m, n, k, alpha, a, offa, lda, 0, b, offb, ldb, 0, beta, c,
                       offc, ldc, 0, 1, OCX_COMPUTE_DEFAULT, num_wait, wait, event);
}

ocx_status ocx_gemm_batched(ocx_context *ctx, ocx_stream *stream, ocx_layout layout, ocx_op opa, ocx_op opb,
                            size_t m, size_t n, size_t k, double alpha, const ocx_buffer *a, const size_t *offa,
                            size_t lda, const ocx_buffer *b, const size_t *offb, size_t ldb, double beta,
                            ocx_buffer *c, const size_t *offc, size_t ldc, size_t batch, size_t num_wait,
                            const ocx_event *wait, ocx_event *event)
{
    ocx__event_clear(event, num_wait, wait);
    OCX__FAIL_IF(batch > 0 && (!offa || !offb || !offc), OCX_ERR_INVALID_ARGUMENT,
                 "ocx_gemm_batched: an offset array is NULL");
    /* batch = 0: the arrays are not read; the strided path handles the rest. */
    if (batch == 0)
        return ocx_gemm_ex(ctx, stream, layout, opa, opb, m, n, k, alpha, a, 0, lda, 0, b, 0, ldb, 0, beta, c, 0,
                           ldc, 0, 0, OCX_COMPUTE_DEFAULT, num_wait, wait, event);
    return gemm_core(ctx, stream, layout, opa, opb, m, n, k, alpha, a, (batch_offs){offa, 0, 0}, lda, b,
                     (batch_offs){offb, 0, 0}, ldb, beta, c, (batch_offs){offc, 0, 0}, ldc, batch,
                     OCX_COMPUTE_DEFAULT, num_wait, wait, event);
}
