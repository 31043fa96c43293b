/* gemm_nv.c — GEMM on NVIDIA tensor cores (cl/gemm_nv_mma.cl) and the probes that guard it.
 *
 * gemm.c maps every call onto its row-major view and asks ocx__gemm_nv_ready() before an f16 product
 * (or an f32 one under OCX_COMPUTE_TF32X3) that would take the tiled kernel; when it says yes,
 * ocx__gemm_nv_launch() runs the same arguments through the tensor-core kernel (f32: X3=1, each
 * product as three TF32 products). The caller of ocx_gemm does not change a line.
 *
 * Ready means: OCX_VENDOR_PATHS is not off, the device is NVIDIA with compute capability ≥ 8.0
 * (cl_nv_device_attribute_query: mma.sync m16n8k16, ldmatrix and cp.async exist there), and a probe
 * in this process built the kernel with this context's parameters and computed a known product
 * exactly. The verdict is kept per device fingerprint and dtype for the life of the process, so
 * later contexts on the same device do not probe again (a probe that ran out of memory gives none:
 * PROBE_TRIES, below). OCX_VENDOR_PATHS=force skips the device check (for tests): on a device that
 * is not NVIDIA the kernel is then built without its PTX (it computes zeros), the probe fails, and
 * the portable kernel is used (for TF32X3, the f32 kernels) — the failure path that CI exercises on
 * PoCL. The PTX source is never compiled for a device that is not NVIDIA. */
#include "config.h"
#include "ocx_internal.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>


/* OCX_VENDOR_PATHS: unset or true: auto (device check, then probe); "0", "off", …: off; "mma.sync":
 * auto without wgmma; "force": no device check; "emulate": no device check, and the kernel's warp
 * instructions are emulated; "unchecked" (developers timing diagnostic builds, see DIAG in the
 * kernel): device check, no probe. */
enum { MODE_OFF, MODE_AUTO, MODE_MMA_SYNC, MODE_FORCE, MODE_EMULATE, MODE_UNCHECKED };
static int vendor_mode(void)
{
    static const struct { const char *word; int mode; } words[] = {
        {"mma.sync", MODE_MMA_SYNC}, {"force", MODE_FORCE}, {"emulate", MODE_EMULATE}, {"unchecked", MODE_UNCHECKED}};
    static atomic_int warned;
    const char *env = getenv("OCX_VENDOR_PATHS");
    if (!env || !*env) return MODE_AUTO;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcasecmp(env, words[i].word) == 0) return words[i].mode;
    const int on = ocx__switch_word(env);
    if (on >= 0) return on ? MODE_AUTO : MODE_OFF;
    if (atomic_exchange(&warned, 1) == 0) /* the generic switch's warning had named only the on/off words */
        ocx__warn("OCX_VENDOR_PATHS=%s is none of 0, no, off, false (off), 1, yes, on, true (on), mma.sync, force, "
                  "emulate, unchecked; taken as on", env);
    return MODE_AUTO;
}

int ocx__vendor_paths_on(void) { return vendor_mode() != MODE_OFF; }

/* Parameters of cl/gemm_nv_mma.cl (see its header). Defaults with mma.sync: 128x256 work-group tiles,
 * 64-deep slices, 8 warps of 64x64, 3 stages (144 KiB of local memory: beyond the 48 KiB NVIDIA's
 * driver reports, within what it builds and runs on compute capability 8.0, 8.7, 9.x and 10.x, see
 * ocx_device_info.local_mem_max_bytes; elsewhere mma_shrink_first), 8 tile-rows per group. On 9.0
 * wgmma's (mma_device_defaults): a warpgroup per 64x256, 4 stages (192 KiB). "medium" products take
 * 64x128 tiles (mma_class_defaults). f32 (TF32X3) has defaults of its own: 64x64 tiles
 * (mma_device_defaults), 128x128 for "large" products (mma_class_defaults).
 * Measured with mma.sync on the H200 (ocx-bench, TFLOP/s at 8192^3 NN / NT, then 4096^3 NN / NT):
 * - Interior tiles copy whole slices without per-chunk bounds arithmetic (FASTPATH, the kernel's
 *   COPY_SLICE): 128x256, 32 deep, 4 stages went from 317-321 / 303 and 277 / 259-265 to
 *   360-366 / 322-324 and 303-313 / 284-288. The copies' instructions, not their bytes, had cost
 *   the most: before, copying every slice from L1 instead of L2 had gained little.
 * - With it, 64-deep slices: 3 stages 351-354 / 351-355 and 300-307 / 296-304; 4 stages (192 KiB)
 *   359 / 358 and 305 / 298: a little slower NN, 10% faster NT (both operands K-fast, whose
 *   64-byte rows had filled half of each 128-byte line a copy touched). 256x128x64 in 3 stages
 *   352 / 356 and 288 / 302; 128x128 tiles (4 warps) 289 / 271-290 and 237-256; GM=16 the same as 8.
 * - Before the fast path: 128x128 in 3 stages (the most 48 KiB holds) 278 and 251 (NN); larger
 *   tiles do not fit, 64x64 warp tiles already taking 226 registers. Copies through registers in
 *   place of cp.async (250 registers, no spills) ran the same as cp.async. */
enum { P_BM, P_BN, P_BK, P_WM, P_WN, P_STAGES, P_GM, P_TMA, P_WGMMA, P_COUNT };
static const ocx__param_def mma_params[P_COUNT] = {
    /* name       gpu  cpu  min  max ladder host */
    {"BM", 128, 128, 16, 256, 1, 0},
    {"BN", 256, 128, 16, 256, 1, 0},
    {"BK", 64, 32, 32, 64, 1, 0}, /* an even number of k16 steps (the fragment double buffer) */
    {"WM", 64, 64, 16, 128, 1, 0},
    {"WN", 64, 64, 16, 256, 1, 0},
    {"STAGES", 3, 3, 2, 5, 0, 0},
    {"GM", 8, 8, 1, 64, 0, 0},
    /* 1: whole in-bounds slices as bulk copies (cp.async.bulk + mbarrier, compute capability 9.0;
     * below it only the padded layout they need). Correct on the H200 (check_gemm), but half as
     * fast: 8192^3 NN 161 TFLOP/s against 311, NT/TT 103 against 304. Bulk copies of the N-fast B
     * alone (32 rows of 512 bytes a slice, A's 64-byte rows kept on cp.async) ran no better: NN
     * 166 against 322 in the same run, so it is the bulk copies, not their number, that cost. */
    {"TMA", 0, 0, 0, 1, 0, 0, 1},
    /* 1: wgmma (compute capability 9.0, the default there: mma_device_defaults), a warpgroup per
     * WM x WN tile. */
    {"WGMMA", 0, 0, 0, 1, 0, 0, 1},
};

/* Work-items of a work-group: a warp per WM x WN tile, or a warpgroup with WGMMA. */
static size_t mma_threads(const int *v)
{
    return (v[P_WGMMA] ? 128u : 32u) * (size_t)(v[P_BM] / v[P_WM]) * (size_t)(v[P_BN] / v[P_WN]);
}

/* Devices (fingerprints) whose wgmma kernel failed its probe in this process (a driver that does not
 * take sm_90a PTX, say): their parameters keep to mma.sync from then on. As many as the probe's
 * verdicts (below). */
static pthread_mutex_t wgmma_lock = PTHREAD_MUTEX_INITIALIZER;
static char wgmma_failed[32][17];
static atomic_int nwgmma_failed; /* read without the lock while 0: every f16 GEMM's lookup asks */

/* wgmma and sm_90a exist on compute capability 9.0 alone (not 10.x); OCX_VENDOR_PATHS=mma.sync turns
 * them off. */
static int sm90a(const ocx_device_info *dev)
{
    if (dev->nv_compute_capability[0] != 9 || dev->nv_compute_capability[1] != 0 || vendor_mode() == MODE_MMA_SYNC)
        return 0;
    if (atomic_load_explicit(&nwgmma_failed, memory_order_acquire) == 0) return 1;
    int failed = 0;
    pthread_mutex_lock(&wgmma_lock);
    for (int i = 0; i < atomic_load_explicit(&nwgmma_failed, memory_order_relaxed); i++)
        failed |= strcmp(wgmma_failed[i], dev->fingerprint) == 0;
    pthread_mutex_unlock(&wgmma_lock);
    return !failed;
}

/* What the family's limits and defaults depend on besides the device (ocx__family.state): the
 * wgmma probe's verdicts (only ever added) and OCX_VENDOR_PATHS. */
static unsigned mma_state(void)
{
    return (unsigned)atomic_load_explicit(&nwgmma_failed, memory_order_acquire) * 8u + (unsigned)vendor_mode();
}

/* Whether the work-items (a warp per WM x WN tile, a warpgroup with WGMMA) fit a work-group. */
static int mma_wg_fits(const int *v, const ocx_device_info *dev)
{
    const size_t nt = mma_threads(v);
    return nt <= dev->max_work_group_size && nt <= dev->max_work_item_sizes[0];
}

/* The family is looked up for f16 and for f32 (OCX_COMPUTE_TF32X3: the kernel's X3, f32 words in
 * local memory, mma.sync only); f64 entries (profile validation, the fuzzer) follow f16's rules. */
static const char *mma_invalid(const int *v, const ocx_device_info *dev, ocx_dtype dtype)
{
    const int x3 = dtype == OCX_F32;
    const size_t esz = x3 ? 4 : 2;
    if (v[P_BM] % v[P_WM] || v[P_BN] % v[P_WN]) return "BM and BN must be multiples of WM and WN";
    if (x3 && (v[P_WGMMA] || v[P_TMA])) return "f32 (three TF32 products) takes mma.sync and cp.async: WGMMA = TMA = 0";
    if (x3 && (v[P_WM] != 32 || v[P_WN] != 32))
        return "f32 (three TF32 products) takes warp tiles of 32x32 (WM = WN = 32)";
    if (v[P_WGMMA]) {
        if (!sm90a(dev) && vendor_mode() != MODE_EMULATE)
            return "WGMMA needs compute capability 9.0 and a driver that takes sm_90a (its probe passed, "
                   "OCX_VENDOR_PATHS is not mma.sync)";
        if (v[P_WM] != 64 || v[P_BK] != 64 || v[P_STAGES] < 3 || v[P_TMA])
            return "WGMMA needs WM = 64, BK = 64, STAGES >= 3 and TMA = 0";
        if (v[P_WN] < 64) return "WGMMA needs WN of 64 or more";
    }
    if (!mma_wg_fits(v, dev))
        return "the work-items (a warp per WM x WN tile, a warpgroup with WGMMA) exceed the device's work-group size";
    size_t nt = mma_threads(v);
    size_t achunks = (size_t)v[P_BM] * (size_t)v[P_BK] * esz / 16;
    size_t bchunks = (size_t)v[P_BN] * (size_t)v[P_BK] * esz / 16;
    if (achunks % nt || bchunks % nt) return "each work-item must copy whole 16-byte chunks of both slices";
    if ((size_t)v[P_WM] * (size_t)v[P_WN] / (v[P_WGMMA] ? 128 : 32) > 128) return "more than 128 accumulators a work-item";
    size_t bytes = (size_t)v[P_STAGES] * (size_t)(v[P_BM] + v[P_BN]) * (size_t)v[P_BK] * esz;
    /* TMA's rows are padded by 16 bytes, as many rows as the longer of each operand's two layouts */
    if (v[P_TMA]) {
        size_t rows_a = (size_t)(v[P_BM] > v[P_BK] ? v[P_BM] : v[P_BK]);
        size_t rows_b = (size_t)(v[P_BN] > v[P_BK] ? v[P_BN] : v[P_BK]);
        bytes += (size_t)v[P_STAGES] * (rows_a + rows_b) * 16 + 8 * (size_t)v[P_STAGES];
    }
    if (bytes > dev->local_mem_max_bytes) return "STAGES slices of A and B exceed the device's local memory";
    return NULL;
}

/* Where the defaults' 144 KiB do not fit (compute capability 8.6, 8.9, 12.x: 99 KiB a work-group),
 * 32-deep slices (72 KiB) before narrower tiles: 128x128 ran 289 TFLOP/s on the H200 where
 * 128x256 ran 350. */
static const char *const mma_shrink_first[] = {"BK", "STAGES", NULL};

/* Compute capability 9.0: wgmma on 128x256 tiles, a warpgroup per 64x256 (128 accumulators a
 * work-item, as the mma.sync defaults), 4 stages of 64-deep slices (192 KiB), two of them in flight.
 * f32 (three TF32 products, mma.sync on every device), every size class but "large": 64x64 tiles 32
 * deep, 4 warps of 32x32, 3 stages (48 KiB, four work-groups a multiprocessor), grouped by 4 (GM),
 * which ocx-tune found at 4096^3 (gemm_mma f32 "all", 64 candidates). On the H200 (TFLOP/s, four runs
 * each at 1024^3 / 2048^3 / 4096x4096x1024 / 4096^3 / 6144^3 / 8192^3 / 8192x512x8192):
 * 23.5-26.1 / 46.9-47.9 / 50.8-51.4 / 54.8-56.0 / 57.5-58.8 / 52.7-58.8 (three later rounds at
 * 8192^3: 52.8-54.0, hence "large" below) / 53.2-53.7, where the
 * former 128x128 in 4 stages of 16 warps ran 15.7-17.9 / 42.8-44.7 / 42.2-43.0 / 51.1-51.9 /
 * 53.1-53.7 / 54.3-54.6 / 51.2-52.7, 128x64 in 3 stages 21.7-24.2 / 43.6-46.1 / 46.6-47.7 /
 * 52.6-54.4 / 56.7-57.2 / 55.1-56.0 / 52.4-52.9, and the former "medium" 64x128 in 4 stages
 * 21.0-23.3 at 1024^3. Earlier (8192^3 / 4096^3): 32x64 warps 53.8 / 51.6, 64x64 warps 52.0 /
 * 48.9, 64-deep slices in 2 stages 35.8. The kernel takes 32x32 warp tiles only: wider ones ran
 * no faster and their emulation (CI's check) took minutes to compile on PoCL. */
static void mma_device_defaults(const ocx_device_info *dev, ocx_dtype dtype, int *v)
{
    if (dtype == OCX_F32) {
        /* Fitted here (the general fitting would narrow the warp tiles, which f32 does not take):
         * smaller tiles while the work-items exceed the device's, else fewer stages first, down to
         * 32x32 in 2 stages of 32 (16 KiB, one warp). */
        v[P_BM] = 64, v[P_BN] = 64, v[P_BK] = 32, v[P_WM] = 32, v[P_WN] = 32, v[P_STAGES] = 3, v[P_GM] = 4;
        while (mma_invalid(v, dev, dtype) && (v[P_STAGES] > 2 || v[P_BM] > 32 || v[P_BN] > 32)) {
            if (v[P_STAGES] > 2 && mma_wg_fits(v, dev))
                v[P_STAGES]--;
            else if (v[P_BM] > v[P_BN])
                v[P_BM] /= 2;
            else
                v[P_BN] /= 2;
        }
        return;
    }
    int w[P_COUNT];
    memcpy(w, v, sizeof w);
    w[P_WGMMA] = 1;
    w[P_BM] = 128, w[P_BN] = 256, w[P_BK] = 64, w[P_WM] = 64, w[P_WN] = 256, w[P_STAGES] = 4;
    if (sm90a(dev) && !mma_invalid(w, dev, OCX_F16)) memcpy(v, w, sizeof w); /* else mma.sync's (simulated limits) */
}
/* GPUs, "medium" products (M*N*K below 2^31): 64x128 tiles (one warpgroup of 64x128 with wgmma,
 * else 4 warps of 32x64), a quarter of 128x256's area, so that 1024^3 makes 128 work-groups where
 * it made 32 (the H200 has 132 multiprocessors). f32 (TF32X3): "large" products (from 2^38) take
 * 128x128 tiles of 16 warps in 4 stages (GM=8), a little faster there than the 64x64 tiles of its
 * other classes (mma_device_defaults): on the H200, six timings each at 8192^3 / 16384x8192x8192 /
 * 16384x16384x4096, 54.6-55.0 / 55.7-55.9 / 55.0-55.2 TFLOP/s against 52.8-54.0 / 53.5-54.0 /
 * 53.2-53.9 (128x64 in 3 stages 54.4-55.7 / 54.7-55.4 / 54.7-54.9).
 * "short_k" (K <= 256): a tile takes one to four 64-deep slices, so the 128x256 tiles' 192 KiB of
 * local memory (one work-group a multiprocessor) leave its copies, its MMAs and its epilogue in
 * turn. On the H200 (f16 in, f32 C, TFLOP/s at 16384x16384x64 / 4096x4096x256 / 8192x8192x128 /
 * 8192x8192x256): 128x256 in 4 stages 32.9 / 85.3 / 61.6 / 117; with wgmma in 3 stages 128x256 33.2
 * / 77.9 / 57.4 / 108, 128x128 40.4 / 87.6 / 68.9 / 132, 64x128 43.3 / 90.5 / 73.8 / 132, 64x64
 * (48 KiB, four work-groups a multiprocessor) 50.4 / 88.8 / 78.3 / 133; mma.sync 128x128 in 2 stages
 * of 32 46.8 / 83.7 / 77.1 / 123, 64x128 48.9 / 77.6 / 72.5 / 114. */
static int mma_class_defaults(const ocx_device_info *dev, ocx_dtype dtype, const char *size_class, int *v)
{
    if (dev->type == OCX_DEVICE_CPU) return 0;
    if (dtype == OCX_F32) { /* TF32X3 ("short_k" takes the f32 kernels, gemm.c) */
        if (strcmp(size_class, "large") != 0) return 0;
        v[P_BM] = v[P_BN] = 128, v[P_STAGES] = 4, v[P_GM] = 8;
        return 1;
    }
    if (strcmp(size_class, "medium") == 0) {
        v[P_BM] = 64, v[P_BN] = 128;
        if (v[P_WGMMA])
            v[P_WM] = 64, v[P_WN] = 128;
        else
            v[P_WM] = 32, v[P_WN] = 64;
        return 1;
    }
    if (strcmp(size_class, "short_k") == 0) {
        if (v[P_WGMMA])
            v[P_BM] = v[P_BN] = v[P_WM] = v[P_WN] = 64, v[P_BK] = 64, v[P_STAGES] = 3;
        else
            v[P_BM] = v[P_BN] = 128, v[P_BK] = 32, v[P_WM] = v[P_WN] = 64, v[P_STAGES] = 2;
        return 1;
    }
    return 0;
}
/* Its products are those of the tiled kernel's classes ("small" ones take the direct kernel), f16
 * and f32 (OCX_COMPUTE_TF32X3, which leaves short K to the f32 kernels: gemm.c). */
static const char *const mma_classes[] = {"all", "medium", "large", "short_k", NULL};
static const char *const mma_f32_classes[] = {"all", "medium", "large", NULL};
const ocx__family ocx__family_gemm_mma = {.name = "gemm_mma",
                                          .source = "gemm_nv_mma",
                                          .nparams = P_COUNT,
                                          .params = mma_params,
                                          .invalid = mma_invalid,
                                          .class_defaults = mma_class_defaults,
                                          .shrink_first = mma_shrink_first,
                                          .device_defaults = mma_device_defaults,
                                          .classes = mma_classes,
                                          .f32_classes = mma_f32_classes,
                                          .dtypes = OCX__DT_F32 | OCX__DT_F16,
                                          .state = mma_state};

/* ---- launch ------------------------------------------------------------------------------------- */

/* PTX: 1 on NVIDIA devices only (the instructions are never handed to another compiler). */
static int is_nvidia(const ocx_context *ctx) { return ocx__contains_nocase(ctx->info.vendor, "nvidia"); }

/* The kernel's build options for this context's parameters of a size class (*p) and a call's layout,
 * for inputs of `dtype` (f16, or f32 as three TF32 products). */
static ocx_status mma_options(ocx_context *ctx, const char *size_class, ocx_dtype dtype, int akf, int bkf,
                              ocx_dtype cdtype, ocx__params *p, char *options, size_t cap)
{
    OCX__FORWARD(ocx__params_lookup(ctx, &ocx__family_gemm_mma, dtype, size_class, p));
    options[0] = '\0';
    ocx__params_defines(p, options, cap);
    size_t ol = strlen(options);
    const int ptx = vendor_mode() == MODE_EMULATE ? 2 : is_nvidia(ctx);
    /* OCX_SM90A: lib/program.c builds the driver's PTX again for sm_90a (wgmma) */
    snprintf(options + ol, cap - ol, " -DX3=%d -DAKF=%d -DBKF=%d -DCTYPE=%d -DPTX=%d -DSM90=%d%s", dtype == OCX_F32,
             akf, bkf, cdtype == OCX_F16 ? 1 : 0, ptx, ctx->info.nv_compute_capability[0] >= 9,
             ptx == 1 && p->v[P_WGMMA] ? " -DOCX_SM90A=1" : "");
    return OCX_OK;
}

ocx_status ocx__gemm_nv_peak_options(ocx_context *ctx, char *options, size_t cap, int *wgmma_n)
{
    ocx__params p;
    OCX__FORWARD(mma_options(ctx, "all", OCX_F16, 1, 0, OCX_F32, &p, options, cap));
    *wgmma_n = p.v[P_WGMMA] ? p.v[P_WN] : 0;
    return OCX_OK;
}

ocx_status ocx__gemm_nv_launch(ocx_context *ctx, ocx_stream *stream, const char *size_class, size_t m, size_t n,
                               size_t batch, int akf, int bkf, ocx_dtype dtype, ocx_dtype cdtype, unsigned nargs,
                               const ocx__arg *args, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    ocx__params p;
    char options[512];
    OCX__FORWARD(mma_options(ctx, size_class, dtype, akf, bkf, cdtype, &p, options, sizeof options));
    size_t nt = mma_threads(p.v);
    size_t tiles = ocx__div_up(m, (size_t)p.v[P_BM]) * ocx__div_up(n, (size_t)p.v[P_BN]);
    ocx__launch_desc d = {"gemm_nv_mma", options, "gemm_mma", 2, {tiles * nt, batch, 1}, {nt, 1, 1}, nargs, args};
    ocx__params_kernel("gemm_mma");
    return ocx__launch(ctx, stream, &d, num_wait, wait, event);
}

/* ---- the probe ---------------------------------------------------------------------------------- */

typedef struct verdict {
    char key[48]; /* the device's description (simulated limits too: a context under smaller ones had
                     taken another's verdict, then failed its lookups) + mode + dtype */
    int ready;    /* -1: no verdict yet, only probes that ran out of memory (tries of them) */
    int tries;
} verdict;
/* A probe that runs out of memory (the application holding the GPU's memory at the time, say) says
 * nothing of the hardware: that call takes the portable kernel, and a later call probes again, up to
 * PROBE_TRIES probes in all, the last one's verdict then final. Bounded, because NVIDIA's driver also
 * reports some kernel faults as CL_OUT_OF_RESOURCES. A probe that fails otherwise is final at once. */
enum { PROBE_TRIES = 3 };
static pthread_mutex_t verdicts_lock = PTHREAD_MUTEX_INITIALIZER;
static verdict verdicts[32];
static int nverdicts;

static int capable(const ocx_context *ctx)
{
    return ctx->info.nv_compute_capability[0] >= 8;
}

/* Runs the kernel on a small product of integers (exact in f16 and f32) with ragged edges in every
 * dimension and a K that is not a multiple of any slice depth; OCX_OK only when every element is
 * exact. f32 (three TF32 products): A's elements in the first half of K and B's in the second carry
 * a tail below TF32's precision (a multiple of 2^-12), so the product is exact only where both
 * cross terms are taken; the tails never meet, so the term left out is zero. */
static ocx_status probe(ocx_context *ctx, ocx_dtype dtype)
{
    enum { M = 40, N = 48, K = 72 };
    float fa[M * K], fb[K * N];
    uint16_t ha[M * K], hb[K * N];
    float hc[M * N];
    double ref[M * N];
    const int x3 = dtype == OCX_F32;
    for (int i = 0; i < M * K; i++) {
        fa[i] = (float)((i * 37 + 11) % 7 - 3);
        if (x3 && i % K < K / 2) fa[i] += (float)((i * 13 + 1) % 7 - 3) / 4096.0f;
        if (!x3) ha[i] = ocx_half_from_float(fa[i]);
    }
    for (int i = 0; i < K * N; i++) {
        fb[i] = (float)((i * 23 + 5) % 5 - 2);
        if (x3 && i / N >= K / 2) fb[i] += (float)((i * 11 + 3) % 5 - 2) / 4096.0f;
        if (!x3) hb[i] = ocx_half_from_float(fb[i]);
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int l = 0; l < K; l++) s += (double)fa[i * K + l] * fb[l * N + j];
            ref[i * N + j] = 2.0 * s;
            hc[i * N + j] = NAN;
        }
    /* On a stream of its own: the default stream may hold the caller's work gated on an event the
     * caller sets only after this call returns (the probe waited for it, for ever). */
    ocx_buffer *a = NULL, *b = NULL, *c = NULL;
    ocx_stream *s = NULL;
    ocx_status st = ocx_stream_create(ctx, &s);
    if (st == OCX_OK) st = ocx_buffer_create(ctx, dtype, M * K, &a);
    if (st == OCX_OK) st = ocx_buffer_create(ctx, dtype, K * N, &b);
    if (st == OCX_OK) st = ocx_buffer_create(ctx, OCX_F32, M * N, &c);
    if (st == OCX_OK) st = ocx_buffer_write(ctx, s, a, 0, M * K, x3 ? (const void *)fa : ha, 0, NULL, NULL);
    if (st == OCX_OK) st = ocx_buffer_write(ctx, s, b, 0, K * N, x3 ? (const void *)fb : hb, 0, NULL, NULL);
    if (st == OCX_OK) st = ocx_buffer_write(ctx, s, c, 0, M * N, hc, 0, NULL, NULL);
    if (st == OCX_OK) {
        cl_mem none = NULL;
        ocx__arg args[] = {OCX__ARG_U64(M), OCX__ARG_U64(N), OCX__ARG_U64(K), OCX__ARG_F32(2.0f), OCX__ARG_F32(0.0f),
                           OCX__ARG_MEM(a), OCX__ARG_U64(a->offset), OCX__ARG_U64(K), OCX__ARG_U64(1), OCX__ARG_U64(0),
                           OCX__ARG_MEM(b), OCX__ARG_U64(b->offset), OCX__ARG_U64(N), OCX__ARG_U64(1), OCX__ARG_U64(0),
                           OCX__ARG_MEM(c), OCX__ARG_U64(c->offset), OCX__ARG_U64(N), OCX__ARG_U64(0),
                           {OCX__ARG_VALUE, sizeof(cl_mem), &none}, OCX__ARG_I32(2 | 4)};
        ocx_event ev = NULL;
        st = ocx__gemm_nv_launch(ctx, s, "all", M, N, 1, 1, 0, dtype, OCX_F32, sizeof args / sizeof *args, args, 0,
                                 NULL, &ev);
        if (st == OCX_OK) st = ocx_event_wait(1, &ev);
        ocx_event_release(ev);
    }
    if (st == OCX_OK) st = ocx_buffer_read(ctx, s, c, 0, M * N, hc, 0, NULL, NULL);
    for (int i = 0; st == OCX_OK && i < M * N; i++)
        if ((double)hc[i] != ref[i])
            st = ocx__error(OCX_ERR_INTERNAL, "C(%d,%d) = %g where %g is exact", i / N, i % N, (double)hc[i], ref[i]);
    ocx_buffer_destroy(a);
    ocx_buffer_destroy(b);
    ocx_buffer_destroy(c);
    ocx_stream_destroy(s);
    return st;
}

/* The verdict on the hardware: the probe with the parameters a call would take (a profile's,
 * OCX_GEMM_MMA_PARAMS, the tuner's candidate: the build the calls then share), and where those fail
 * or cannot be had and are not the built-in ones, again with the built-in ones. A bad
 * OCX_GEMM_MMA_PARAMS had failed the probe and turned the tensor cores off for the rest of the
 * process, where the call itself should fail, naming the variable. *wgmma: whether the last
 * parameters tried take wgmma. */
static ocx_status probe_hardware(ocx_context *ctx, ocx_dtype dtype, int *wgmma)
{
    ocx__params used, builtin;
    const int looked_up = ocx__params_lookup(ctx, &ocx__family_gemm_mma, dtype, "all", &used) == OCX_OK;
    const ocx_status bst = ocx__params_class_default(ctx, &ocx__family_gemm_mma, dtype, "all", &builtin);
    *wgmma = looked_up && used.v[P_WGMMA];
    ocx_status st = looked_up ? probe(ctx, dtype) : OCX_ERR_INVALID_ARGUMENT;
    if (st != OCX_OK && (bst != OCX_OK || !looked_up || memcmp(used.v, builtin.v, sizeof used.v) != 0)) {
        /* again with the family's built-in parameters for this device, forced for the probe's launch */
        *wgmma = bst == OCX_OK && builtin.v[P_WGMMA];
        if (bst != OCX_OK) return bst;
        ocx__params_force(&ocx__family_gemm_mma, builtin.v);
        st = probe(ctx, dtype);
    }
    return st;
}

/* wgmma failed its probe on ctx's device: mma.sync for the rest of the process (sm90a). */
static void wgmma_off(const ocx_context *ctx)
{
    ocx__warn("the tensor-core GEMM's wgmma kernel failed its probe on '%s' (%s); trying mma.sync", ctx->info.name,
              ocx_last_error());
    pthread_mutex_lock(&wgmma_lock);
    int n = atomic_load_explicit(&nwgmma_failed, memory_order_relaxed);
    if (n < (int)(sizeof wgmma_failed / sizeof *wgmma_failed)) {
        snprintf(wgmma_failed[n], sizeof wgmma_failed[0], "%s", ctx->info.fingerprint);
        atomic_store_explicit(&nwgmma_failed, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&wgmma_lock);
}

static _Thread_local int portable_only;
void ocx__gemm_nv_suspend(int on) { portable_only = on; }

int ocx__gemm_nv_ready(ocx_context *ctx, ocx_dtype dtype)
{
    if (portable_only) return 0;
    int mode = vendor_mode();
    if (mode == MODE_OFF || ((mode == MODE_AUTO || mode == MODE_MMA_SYNC || mode == MODE_UNCHECKED) && !capable(ctx)))
        return 0;
    if (mode == MODE_UNCHECKED) return 1;
    char key[sizeof verdicts[0].key];
    snprintf(key, sizeof key, "%s%016llx%d%s", ctx->info.fingerprint,
             (unsigned long long)XXH3_64bits(&ctx->info, sizeof ctx->info), mode, ocx_dtype_name(dtype));
    pthread_mutex_lock(&verdicts_lock);
    verdict *v = NULL;
    for (int i = 0; i < nverdicts && !v; i++)
        if (strcmp(verdicts[i].key, key) == 0) v = &verdicts[i];
    int ready = v ? v->ready : -1;
    if (ready < 0) {
        /* The probe's own errors must not become the caller's last error, nor its parameters and
         * kernel what ocx_last_params() reports for the caller's call. */
        char *saved = ocx__error_save();
        ocx__params_rec saved_params;
        ocx__params_saved(&saved_params);
        /* The probe must run even when the call that asks only compiles: the tuner builds its
         * candidates ahead of timing in build-only mode, and a probe whose launch was skipped
         * failed there and turned the tensor cores off for the rest of the process. */
        int build_only = ocx__launch_is_build_only();
        ocx__launch_build_only(0);
        const ocx__family *forced;
        int forced_v[OCX__MAX_PARAMS], wgmma;
        ocx__params_forced(&forced, forced_v); /* the caller's (the tuner's candidate), put back below */
        if (!v && nverdicts < (int)(sizeof verdicts / sizeof *verdicts)) {
            v = &verdicts[nverdicts++];
            snprintf(v->key, sizeof v->key, "%s", key);
            v->tries = 0;
            v->ready = -1;
        }
        /* Out of memory is no verdict, but for the last probe (and where the table is full), which
         * takes it as any failure: wgmma's gives way to mma.sync's probe, as it always had. */
        const int tries = v ? ++v->tries : PROBE_TRIES, last = tries >= PROBE_TRIES;
        ocx_status st = probe_hardware(ctx, dtype, &wgmma);
        if (st != OCX_OK && (st != OCX_ERR_OUT_OF_MEMORY || last) && mode != MODE_EMULATE && wgmma) {
            /* wgmma failed: mma.sync, whose parameters then come from profiles or defaults without it */
            wgmma_off(ctx);
            ocx__params_force(forced, forced ? forced_v : NULL);
            st = probe_hardware(ctx, dtype, &wgmma);
        }
        ocx__params builtin;
        if (st == OCX_OK && !wgmma && dtype == OCX_F16 && mode != MODE_EMULATE && sm90a(&ctx->info) &&
            ocx__params_class_default(ctx, &ocx__family_gemm_mma, dtype, "all", &builtin) == OCX_OK &&
            builtin.v[P_WGMMA]) {
            /* The tiles probed took mma.sync (a profile's "all" entry, say), but the classes with
             * built-in tiles of their own ("medium", "short_k") take wgmma's: a driver that refuses
             * sm_90a had failed those calls' builds, with no fallback. Their kernel is probed too. */
            ocx__params_force(&ocx__family_gemm_mma, builtin.v);
            const ocx_status wst = probe(ctx, dtype);
            if (wst == OCX_ERR_OUT_OF_MEMORY && !last) st = wst; /* no verdict on wgmma yet: none at all */
            else if (wst != OCX_OK) wgmma_off(ctx);
        }
        ocx__params_force(forced, forced ? forced_v : NULL);
        ocx__launch_build_only(build_only);
        const int again = st == OCX_ERR_OUT_OF_MEMORY && !last;
        ready = st == OCX_OK;
        if (!ready)
            ocx__warn("the tensor-core GEMM probe (%s) %s on '%s' (%s); %s%s",
                      dtype == OCX_F32 ? "f32 as three TF32 products" : "f16", again ? "could not run" : "failed",
                      ctx->info.name, ocx_last_error(),
                      dtype == OCX_F32 ? "OCX_COMPUTE_TF32X3 GEMMs use the f32 kernels"
                                       : "f16 GEMMs use the portable kernel",
                      again ? " until a later call's probe passes" : "");
        ocx__error_restore(saved);
        ocx__params_restore(&saved_params);
        if (v) v->ready = again ? -1 : ready;
    }
    pthread_mutex_unlock(&verdicts_lock);
    return ready;
}

int ocx__gemm_nv_hardware(ocx_context *ctx)
{
    return vendor_mode() != MODE_EMULATE && ocx__gemm_nv_ready(ctx, OCX_F16);
}

ocx_status ocx_context_vendor_paths(ocx_context *ctx, unsigned *paths)
{
    OCX__FAIL_IF(!paths, OCX_ERR_INVALID_ARGUMENT, "ocx_context_vendor_paths: paths is NULL");
    *paths = 0;
    OCX__FORWARD(ocx__check_context(ctx));
    if (ocx__gemm_nv_ready(ctx, OCX_F16)) *paths |= OCX_PATH_NV_TENSOR_CORES;
    if (ocx__gemm_nv_ready(ctx, OCX_F32)) *paths |= OCX_PATH_NV_TF32X3;
    return OCX_OK;
}
