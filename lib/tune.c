/* tune.c — the tuning engine behind ocx-tune: per (kernel family, dtype, size class) it searches
 * the family's declared parameter space on this device and writes the best set into a profile file
 * (profile.c's format), which the library then reads at run time.
 *
 * Strategy (all under one wall-clock budget, shared out evenly over the entries still to do):
 *   1. Start from the built-in defaults (and the parameters currently in force, if a profile
 *      already supplies different ones): a candidate that does no better is never chosen. Then
 *      measure up to three seeds (GPUs: one): the parameters other devices of this type were
 *      tuned to, from their profiles in the directories lookups read (seeds()).
 *   2. Sample: draw random candidates from the space (each parameter from its ladder of legal
 *      values; on CPUs within NEAR steps of the start), discard those the family's constraints
 *      reject without building them, and evaluate them in batches, for about 40% of the entry's
 *      budget. Each draw is followed by one that moves only host-side parameters (no build).
 *      GPUs sample only where the entry's budget buys SAMPLE_MIN candidates (search()).
 *   3. Refine: hill-climb from the best so far, trying every single-parameter step up or down its
 *      ladder and the family's pairs (a tile and its work-items) stepped together, none twice; move
 *      to the best neighbour while it improves by more than 1%. Then climb the same way from the
 *      best's mirror image (GEMM: M and N exchanged) if it runs nearly as fast. While the entry's
 *      budget lasts, sample again for half of what is left and climb from the best again.
 *   4. Confirm: measure up to three of the fastest candidates (none slower in the search than the
 *      defaults) and the defaults again, in rounds (up to 15 on CPUs, whose timings are noisy);
 *      keep one only if it beat the defaults in as many rounds as a candidate no better would one
 *      time in 32, divided among the candidates confirmed (three: every round, at least 7; GPUs
 *      need every one of 3), and by more than 5% in the median of the rounds' ratios (GPUs 2%).
 * Problem sizes are those of real work: beyond the caches on CPUs, at the bandwidth roof on GPUs.
 * Each batch is compiled ahead of timing, on several threads (ocx__launch's build-only mode), so
 * that compilation, the dominant cost on PoCL, neither serialises with nor disturbs the timed runs.
 * The host's own work (random inputs, references, checks) runs on up to 16 threads (parallel()).
 * Every candidate's output is checked against a host reference (on poisoned outputs) before it is
 * timed (reductions also exactly, on inputs of 0s and 1s: reduce_check; GEMM also whole on a
 * product of odd sides: gemm_check); a candidate that fails to build, to launch or to verify is
 * dropped and counted. Timing
 * brackets the operation with profiling markers (so multi-kernel operations count whole), after a
 * warm-up, and takes the median of several runs on non-zero inputs.
 */
#include "config.h"
#include "ocx_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LADDER 32
#define MAX_VISITED 1024
#define BATCH 6
#define CONFIRM_TOP 3 /* candidates measured again against the defaults (confirm) */
/* Rounds of confirm(): the search leaves time for CONFIRM_ROUNDS, and confirm() runs up to
 * CONFIRM_MAX while the entry's share holds them. CPUs take more, their measurements moving more.
 * With 3 on the 2-core Xeon, 3 of 4 --quick runs kept a reduce "large" entry 3-5% ahead in the
 * tuner that ran level or behind the defaults in tools/profile-ab (max at 2^24: 0.81-0.95x): a
 * candidate no better than the defaults beats them in each of 3 rounds one time in 8, in each of 5
 * one time in 32 (ocx__tune_confirm_wins). With 5 (and the search then running to the end of its
 * share) the GEMM "all" entry confirmed in 2-4 rounds, its candidates 1-3% apart, the pick the
 * luck of those rounds. */
#define CONFIRM_ROUNDS(gpu) ((gpu) ? 3 : 9)
#define CONFIRM_MAX(gpu) ((gpu) ? 3 : 15)
#define CONFIRM_MIN_GPU 3 /* rounds below which a GPU confirms nothing (confirm(); CPUs: confirm_wins) */
/* How far the median ratio of confirm()'s rounds must put a candidate ahead of the defaults. On CPUs
 * the confirmations of 2-5% did not hold at the sizes of the class that were not measured: a GEMM
 * "all" entry confirmed at 1.024x (12 of 14 rounds; measured at 128^3, 384^3 and 1024^3) ran 512^3
 * at 0.97-0.98x the defaults (1-3 rounds of 21, each order, tools/profile-ab, the 2-core Xeon), a
 * "medium" one at 1.031x ran 256^3 and 1024^3 at 0.95-0.97x (the 2-core EPYC), GEMM tiles at
 * 1.026-1.034x ran 512^3 at 0.91-1.02x, a vector "all" entry at 1.045x ran 2^16-2^18 at 0.78-0.92x;
 * the gains that held were 1.09x and more (reductions 1.14-1.49x, f64 tiles 1.29x, GEMM's direct
 * kernel 1.22-1.37x). GPUs, whose timings move by a few percent, keep 2%. */
#define CONFIRM_MARGIN(gpu) ((gpu) ? 1.02 : 1.05)
#define MAX_COPIES 7
/* The reductions the reduce entries time, each a segment of its own (argmax last, into zi). */
#define NRED 4
static const ocx_reduce_op red_ops[NRED] = {OCX_REDUCE_SUM, OCX_REDUCE_DOT, OCX_REDUCE_MAX, OCX_REDUCE_ARGMAX};
/* The vector operations timed (vector_run): axpy, add, scale, and the arrays each moves. */
#define NVEC 3
static const double vec_arrays[NVEC] = {3, 3, 2};
/* The sizes a CPU's "all" entry is also measured at (setup_sizes), and the 1-D families' ones,
 * with the runs of each operation a measurement makes. 2^22 once had one run: after the 2^16 ones,
 * that run of each operation went 1.15x faster with 8 vectors a work-item in groups of 512 than
 * with the defaults (median of 10 paired measurements, 9 ahead), where tools/profile-ab's
 * back-to-back calls of 2^22 ran them level; with 2^16 at 0.80x and 2^20 level, a --quick run
 * confirmed that entry (11 of 12 rounds, 1.045x), which ran axpy, add and copy of 2^16-2^18 at
 * 0.78-0.92x the defaults. With four runs the segment measured 0.99x (10 paired measurements). */
#define NVSUB 2
static const size_t sub_n[NVSUB] = {(size_t)1 << 16, (size_t)1 << 22}, sub_reps[NVSUB] = {64, 4};
/* Segments a measurement is timed in, at most (the reduce "all" entry on CPUs: its sizes besides
 * the main one, and the main one's operations). */
#define MAX_SEGS (NVSUB + NRED)

/* ---- the representative operation of each family ------------------------------------------------ */

typedef struct ocx__tune_case {
    ocx_dtype dtype;
    size_t n, m, k;          /* vector/reduce: n; gemm: m x n x k */
    ocx_buffer *x, *y, *z;   /* inputs and output */
    ocx_buffer *zv[NRED - 1]; /* reduce: views of z's elements, one per value (red_ops but argmax) */
    ocx_buffer *zi;          /* reduce: argmax's index (u32), checked against ref_index */
    size_t ref_index;
    /* reduce: inputs of 0s and 1s, on which each reduction is exact in any order (reduce_check):
     * the sum of xe, the dot product with ye (counts below 2^24), and xe's first 1 */
    ocx_buffer *xe, *ye;
    double exact_sum, exact_dot;
    size_t exact_index;
    /* Segments a measurement is timed in (0: one): the run leaves a marker at the end of each but
     * the last, and segment s moves seg_work[s] of the work (time_run). */
    int nmarks;
    ocx_event marks[MAX_SEGS - 1];
    double seg_work[MAX_SEGS];
    /* CPUs' "all" entries (GEMM's "medium" too): the other sizes, run (and checked) before this one */
    struct ocx__tune_case *sub[NVSUB];
    int nsub;
    struct ocx__tune_case *odd; /* gemm: a product of odd shape, checked before timing, never timed (gemm_check) */
    ocx_buffer *xs[MAX_COPIES], *ys[MAX_COPIES]; /* vector/reduce: copies of x and y the runs cycle through */
    int ncopies;
    unsigned next;
    double *ref;             /* host reference of the output */
    size_t nref;
    double tol;              /* relative tolerance per element (scaled by refscale) */
    double *refscale;
    ocx_dtype out_dtype;
    ocx_gemm_compute compute; /* gemm: the arithmetic (OCX_COMPUTE_TF32X3: the tensor-core f32 entries) */
    size_t reps;             /* vector/reduce: runs of the operation one measurement makes */
} ocx__tune_case;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* ---- the host's share of the work, on several threads ------------------------------------------- */

/* Up to how many threads a parallel loop runs on, and the elements a chunk of one covers. */
#define MAX_THREADS 16
#define CHUNK ((size_t)1 << 18)

static size_t nchunks(size_t n) { return ocx__div_up(n, CHUNK); }
static size_t chunk_end(size_t c, size_t n) { return (c + 1) * CHUNK < n ? (c + 1) * CHUNK : n; }

typedef struct par_job {
    void (*fn)(void *, size_t);
    void *arg;
    size_t n;
    atomic_size_t next;
} par_job;

static void *par_worker(void *p)
{
    par_job *j = p;
    for (size_t c; (c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed)) < j->n;) j->fn(j->arg, c);
    return NULL;
}

/* Calls fn(arg, c) for every c in [0, n) on up to max_threads threads (this one among them), each
 * taking the next c not yet taken. What fn computes for a c must not depend on the thread running
 * it, so that results are the same on every machine. On the H200's host the set-up of the 2^26 f16
 * vector entry (inputs, reference) took 4 s on one thread, the most of any entry of a 60-s run. */
static void parallel(size_t n, int max_threads, void (*fn)(void *, size_t), void *arg)
{
    /* Asked once: glibc reads /sys for it, and every candidate's check comes here. */
    static atomic_long online;
    long cores = atomic_load_explicit(&online, memory_order_relaxed);
    if (cores == 0) atomic_store_explicit(&online, cores = sysconf(_SC_NPROCESSORS_ONLN), memory_order_relaxed);
    size_t threads = (size_t)(max_threads < MAX_THREADS ? max_threads : MAX_THREADS);
    if (cores > 0 && threads > (size_t)cores) threads = (size_t)cores;
    if (threads > n) threads = n;
    par_job j = {fn, arg, n};
    atomic_init(&j.next, 0);
    pthread_t tid[MAX_THREADS];
    size_t started = 0;
    while (started + 1 < threads && pthread_create(&tid[started], NULL, par_worker, &j) == 0) started++;
    par_worker(&j);
    for (size_t i = 0; i < started; i++) pthread_join(tid[i], NULL);
}

/* A generator's seed for chunk c of the data seeded by `seed` (splitmix64: chunks draw unrelated
 * sequences even from neighbouring seeds); never 0, where xorshift would stay. */
static uint64_t chunk_seed(uint64_t seed, size_t c)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (c + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) | 1;
}

typedef struct fill_job {
    ocx_dtype dt;
    void *h;
    size_t n;
    double lo, hi;
    uint64_t seed;
    double p_one; /* > 0: 1 with this probability, else 0 (random_bits), not [lo, hi) */
} fill_job;

static void fill_chunk(void *arg, size_t c)
{
    const fill_job *j = arg;
    uint64_t s = chunk_seed(j->seed, c);
    for (size_t i = c * CHUNK, end = chunk_end(c, j->n); i < end; i++) {
        const double u = (rng_next(&s) >> 11) * (1.0 / 9007199254740992.0);
        double v = j->p_one > 0 ? (u < j->p_one ? 1.0 : 0.0) : j->lo + (j->hi - j->lo) * u;
        if (v == 0 && j->p_one <= 0) v = 0.5;
        if (j->dt == OCX_F16)
            ((uint16_t *)j->h)[i] = ocx_half_from_float((float)v);
        else if (j->dt == OCX_F64)
            ((double *)j->h)[i] = v;
        else
            ((float *)j->h)[i] = (float)v;
    }
}

/* Host data of dtype as fill_chunk writes it for job j (its h and n set here); NULL without memory. */
static void *host_data(fill_job j)
{
    j.h = malloc(j.n * ocx_dtype_size(j.dt) + 1);
    if (j.h) parallel(nchunks(j.n), MAX_THREADS, fill_chunk, &j);
    return j.h;
}

/* Host data of dtype with values in [lo, hi), never zero (host_value reads them back exactly). */
static void *random_host(ocx_dtype dt, size_t n, double lo, double hi, uint64_t seed)
{
    return host_data((fill_job){dt, NULL, n, lo, hi, seed, 0});
}

/* Host data of dtype of 0s and 1s, each 1 with probability p (> 0). */
static void *random_bits(ocx_dtype dt, size_t n, double p, uint64_t seed)
{
    return host_data((fill_job){dt, NULL, n, 0, 0, seed, p});
}

/* Element i of host data of dtype (as random_host writes it), exactly. */
static inline double host_value(ocx_dtype dt, const void *h, size_t i)
{
    return dt == OCX_F64 ? ((const double *)h)[i]
           : dt == OCX_F16 ? (double)ocx_half_to_float(((const uint16_t *)h)[i])
                           : (double)((const float *)h)[i];
}

static ocx_status upload(ocx_context *ctx, ocx_dtype dt, size_t n, const void *host, ocx_buffer **b)
{
    OCX__FORWARD(ocx_buffer_create(ctx, dt, n, b));
    return host ? ocx_buffer_write(ctx, NULL, *b, 0, n, host, 0, NULL, NULL) : OCX_OK;
}

static void case_free(ocx__tune_case *tc)
{
    if (!tc) return;
    ocx_buffer_destroy(tc->x);
    ocx_buffer_destroy(tc->y);
    for (int i = 0; i < tc->ncopies; i++) ocx_buffer_destroy(tc->xs[i]), ocx_buffer_destroy(tc->ys[i]);
    for (int i = 0; i < NRED - 1; i++) ocx_buffer_destroy(tc->zv[i]);
    ocx_buffer_destroy(tc->zi);
    ocx_buffer_destroy(tc->xe);
    ocx_buffer_destroy(tc->ye);
    for (int i = 0; i < MAX_SEGS - 1; i++) ocx_event_release(tc->marks[i]);
    for (int i = 0; i < tc->nsub; i++) case_free(tc->sub[i]);
    if (tc->odd) case_free(tc->odd);
    ocx_buffer_destroy(tc->z);
    free(tc->ref);
    free(tc->refscale);
    free(tc);
}

static int is_gpu(const ocx_context *ctx) { return ctx->info.type != OCX_DEVICE_CPU; }

/* Problem sizes, each inside the class of ocx__size_class_1d it stands for (a class without an
 * entry of its own takes "all"'s).
 * - "small": 2^14 elements, launch-bound.
 * - "all" on GPUs (the medium sizes): 2^24 elements (--quick 2^23), where launch costs no longer
 *   dominate and the budget still buys many candidates.
 * - "all" on CPUs (the medium sizes, below OCX__1D_LARGE_CPU: in the caches): 2^20 elements (4 MiB
 *   of f32 an array), run 8 times a measurement, as a user's in-cache calls run back to back.
 * - "large" on GPUs: OCX__1D_LARGE (2^26), at a GPU's steady-state bandwidth (H200, f32 sum of
 *   2^28: the 2^24 winner, 16 groups per CU, 4.12 TB/s; the defaults, 32, 4.16-4.17). 2^27 had
 *   cost the 60-s H200 run 3-8 s of set-up per entry (inputs, host reference, read-back), which
 *   left entries out.
 * - "large" on CPUs: 2^24 elements (64 MiB of f32 an array), beyond the caches.
 * Until both CPU classes had entries of their own, "all" measured 2^23 elements with in-cache runs
 * of 2^20 besides. On the 2-core AVX-512 Xeon its --quick runs then either kept the defaults or
 * chose one stream a work-item in 16 groups (reduce), which ran 2^20 at 1.2x and 2^25 at 0.80-0.85x
 * (max, argmax). On the 2-core AVX-512 EPYC, timed at 2^23 alone, a --quick run had chosen 4-wide
 * vectors and one stream a work-item for the vector family, which ran axpy and scale of 2^20 f32 at
 * 0.40-0.63x and 0.35-0.50x CLBlast. */
static size_t n_1d(const ocx_context *ctx, const char *cls, int quick)
{
    if (!strcmp(cls, "small")) return OCX__1D_MEDIUM / 4;
    if (!strcmp(cls, "large")) return ocx__1d_large(ctx) * (is_gpu(ctx) ? 1 : 2);
    return (size_t)1 << (!is_gpu(ctx) ? 20 : quick ? 23 : 24);
}
static size_t reps_1d(const ocx_context *ctx, const char *cls) { return !is_gpu(ctx) && !strcmp(cls, "all") ? 8 : 1; }
/* Elements a measurement moves through each array. */
static double elements_1d(const ocx__tune_case *tc) { return (double)tc->n * (double)tc->reps; }

/* On CPUs a "large" entry's runs cycle through copies of x and y that, with them, exceed the
 * device's global memory cache, so that each run reads its arrays from memory, as an array beyond
 * the caches is read. The 2-core Xeon reports 480 MiB of cache: its 2^24 f32 elements, read run
 * after run, stayed in it, and --quick runs chose one stream a work-item, which then ran 2^24-2^25
 * at 0.81-0.97x the defaults in tools/profile-ab (whose sizes take turns). */
static int copies_wanted(const ocx_context *ctx, const ocx__tune_case *tc, const char *cls)
{
    if (is_gpu(ctx) || strcmp(cls, "large") != 0) return 0;
    const double bytes = 2.0 * (double)tc->n * (double)ocx_dtype_size(tc->dtype);
    const double want = ceil((double)ctx->info.global_mem_cache_bytes / bytes);
    return want < MAX_COPIES ? (int)want : MAX_COPIES;
}

/* The timed arrays of a 1-D case (case_inputs fills them): x, y, the vector family's z (with_z)
 * and the copies of x and y (copies_wanted), n elements each. On CPUs they lie at the same offset within a 4-KiB page, as a
 * fresh process's separate arrays of one size do (glibc maps each such allocation, PoCL's buffers
 * included, pages of its own), as views of one buffer a page apart beyond each one's end, so that
 * every run has that layout. The tuner's own had varied: z, created without data,
 * got its memory at its first launch, after host arrays of its size had been freed, from glibc's
 * heap at another offset in its page than x and y. There a candidate whose stores and loads meet
 * at the same low 12 address bits (4K aliasing) ran as fast as the defaults, and no user's program
 * of separately allocated arrays would see that: groups of 64 items with 8 vectors each a global
 * size apart (WPT=8) measured 0.96x the defaults in a 15-s run and were confirmed at 1.04x in a
 * --quick run on the 2-core AVX2 EPYC (PoCL 3.1), then ran add, axpy and copy of 2^16 and 2^20 f32
 * at 0.22-0.43x the defaults in tools/profile-ab; laid out so, the tuner measures them at
 * 0.52-0.55x (doc/performance.md, "Where the tuner's arrays lie"). GPUs keep a buffer an array, as
 * does a CPU whose largest buffer cannot hold them all (or that fails to create it). */
static ocx_status case_arrays(ocx_context *ctx, ocx__tune_case *tc, const char *cls, int with_z)
{
    const int copies = copies_wanted(ctx, tc, cls);
    ocx_buffer **arr[3 + 2 * MAX_COPIES];
    size_t count = 0;
    arr[count++] = &tc->x;
    arr[count++] = &tc->y;
    if (with_z) arr[count++] = &tc->z;
    for (int i = 0; i < copies; i++) arr[count++] = &tc->xs[i], arr[count++] = &tc->ys[i];
    tc->ncopies = copies; /* case_free destroys whatever of them exists */
    const size_t esz = ocx_dtype_size(tc->dtype), page = 4096;
    const size_t stride = (ocx__div_up(tc->n * esz, page) + 1) * page / esz; /* elements */
    ocx_buffer *arena = NULL; /* where the device refuses it, a buffer an array after all */
    if (!is_gpu(ctx) && (uint64_t)count * stride * esz <= ctx->info.max_alloc_bytes &&
        ocx_buffer_create(ctx, tc->dtype, count * stride, &arena) != OCX_OK)
        arena = NULL;
    ocx_status st = OCX_OK;
    for (size_t i = 0; i < count && st == OCX_OK; i++)
        st = arena ? ocx_buffer_view(arena, i * stride, tc->n, arr[i]) : ocx_buffer_create(ctx, tc->dtype, tc->n, arr[i]);
    ocx_buffer_destroy(arena); /* its views hold it */
    return st;
}

/* The inputs of a 1-D run: x and y, or the next of their copies. */
static void inputs(ocx__tune_case *tc, ocx_buffer **x, ocx_buffer **y)
{
    /* (not while builds run on several threads) */
    const unsigned k = tc->ncopies && !ocx__launch_is_build_only() ? tc->next++ % (unsigned)(tc->ncopies + 1) : 0;
    *x = k ? tc->xs[k - 1] : tc->x;
    *y = k ? tc->ys[k - 1] : tc->y;
}

/* n random values in [lo, hi) into buf; *host keeps them in the storage type (caller frees;
 * host_value reads them exactly). No array of doubles beside it: at 2^26 elements those were half a
 * gigabyte an input, and seconds of a 60-s run's set-up. */
static ocx_status fill_input(ocx_context *ctx, ocx_dtype dt, size_t n, double lo, double hi, uint64_t seed,
                             ocx_buffer *buf, void **host)
{
    *host = random_host(dt, n, lo, hi, seed);
    return *host ? ocx_buffer_write(ctx, NULL, buf, 0, n, *host, 0, NULL, NULL)
                 : ocx__error(OCX_ERR_OUT_OF_MEMORY, "tune: out of host memory");
}

/* A 1-D case's timed arrays (case_arrays), x and y of random values in [lo, hi) (seeds seed and
 * seed + 1; *xv, *yv keep them, as fill_input), and their copies. */
static ocx_status case_inputs(ocx_context *ctx, ocx__tune_case *tc, const char *cls, int with_z, double lo, double hi,
                              uint64_t seed, void **xv, void **yv)
{
    OCX__FORWARD(case_arrays(ctx, tc, cls, with_z));
    OCX__FORWARD(fill_input(ctx, tc->dtype, tc->n, lo, hi, seed, tc->x, xv));
    OCX__FORWARD(fill_input(ctx, tc->dtype, tc->n, lo, hi, seed + 1, tc->y, yv));
    if (!tc->ncopies) return OCX_OK;
    for (int i = 0; i < tc->ncopies; i++) {
        OCX__FORWARD(ocx_buffer_copy(ctx, NULL, tc->x, 0, tc->xs[i], 0, tc->n, 0, NULL, NULL));
        OCX__FORWARD(ocx_buffer_copy(ctx, NULL, tc->y, 0, tc->ys[i], 0, tc->n, 0, NULL, NULL));
    }
    return ocx_stream_finish(ctx, NULL);
}

/* A case with an output z of `nout` elements of out_dtype (0: none yet; the vector family's is one
 * of its case_arrays) and room for `nref` reference values. */
static ocx_status case_new(ocx_context *ctx, ocx_dtype dt, ocx_dtype out_dtype, size_t nout, size_t nref, int scaled,
                           ocx__tune_case **out)
{
    ocx__tune_case *tc = calloc(1, sizeof *tc);
    OCX__FAIL_IF(!tc, OCX_ERR_OUT_OF_MEMORY, "tune: out of host memory");
    tc->dtype = dt;
    tc->out_dtype = out_dtype;
    tc->nref = nref;
    tc->ref = calloc(nref, sizeof *tc->ref);
    tc->refscale = scaled ? calloc(nref, sizeof *tc->refscale) : NULL;
    ocx_status st = OCX_OK;
    if (!tc->ref || (scaled && !tc->refscale))
        st = ocx__error(OCX_ERR_OUT_OF_MEMORY, "tune: out of host memory");
    else if (nout)
        st = upload(ctx, out_dtype, nout, NULL, &tc->z);
    if (st != OCX_OK) case_free(tc), tc = NULL;
    *out = tc;
    return st;
}

/* Chunk c of a reference (host data x, y of n elements): x + y element by element into out
 * (add_chunk), or the sum of x's chunk, that of x*y's, the largest x and its first index into
 * out[4c] ... out[4c+3] (reduce_chunk). */
typedef struct ref_job {
    ocx_dtype dt;
    const void *x, *y;
    size_t n;
    double *out;
} ref_job;

static void add_chunk(void *arg, size_t c)
{
    const ref_job *j = arg;
    for (size_t i = c * CHUNK, end = chunk_end(c, j->n); i < end; i++)
        j->out[i] = host_value(j->dt, j->x, i) + host_value(j->dt, j->y, i);
}

static void reduce_chunk(void *arg, size_t c)
{
    const ref_job *j = arg;
    size_t end = chunk_end(c, j->n);
    double sum = 0, dot = 0, max = -INFINITY;
    size_t at = 0;
    for (size_t i = c * CHUNK; i < end; i++) {
        double x = host_value(j->dt, j->x, i);
        sum += x;
        dot += x * host_value(j->dt, j->y, i);
        if (x > max) max = x, at = i;
    }
    j->out[4 * c] = sum;
    j->out[4 * c + 1] = dot;
    j->out[4 * c + 2] = max;
    j->out[4 * c + 3] = (double)at;
}

/* Ends segment i of a measurement (time_run) with a marker. Not while builds run on several
 * threads (tc is shared there, and nothing is timed). */
static ocx_status end_segment(ocx_context *ctx, ocx__tune_case *tc, int i)
{
    if (ocx__launch_is_build_only()) return OCX_OK;
    ocx_event_release(tc->marks[i]);
    tc->marks[i] = NULL;
    return ocx_stream_marker(ctx, NULL, 0, NULL, &tc->marks[i]);
}

/* vector: axpy into z, z = x + y, y scaled by 1 (vector_run), n elements `reps` times each */
static ocx_status vector_case(ocx_context *ctx, ocx_dtype dt, size_t n, size_t reps, const char *cls,
                              ocx__tune_case **out)
{
    ocx__tune_case *tc;
    OCX__FORWARD(case_new(ctx, dt, dt, 0, n, 0, &tc));
    tc->n = n;
    tc->reps = reps;
    void *xv = NULL, *yv = NULL;
    ocx_status st = case_inputs(ctx, tc, cls, 1, -1, 1, 11, &xv, &yv);
    if (st == OCX_OK) {
        ref_job j = {dt, xv, yv, n, tc->ref};
        parallel(nchunks(n), MAX_THREADS, add_chunk, &j);
    }
    tc->tol = dt == OCX_F16 ? ldexp(1, -10) : dt == OCX_F64 ? ldexp(1, -52) : ldexp(1, -23);
    tc->nmarks = NVEC - 1; /* each operation timed on its own (vector_run) */
    for (int i = 0; i < NVEC; i++) tc->seg_work[i] = vec_arrays[i] * elements_1d(tc) * ocx_dtype_size(dt);
    free(xv);
    free(yv);
    if (st != OCX_OK) case_free(tc), tc = NULL;
    *out = tc;
    return st;
}
/* A case of size n (elements; GEMM: s x s x s), run reps times a measurement, timed in its
 * operations' segments (case_fn: each family's). */
typedef ocx_status (*case_fn)(ocx_context *, ocx_dtype, size_t n, size_t reps, const char *cls, ocx__tune_case **);
/* On CPUs an "all" entry, which stands for every size without an entry of its own, is also
 * measured at two other sizes (sizes[], run sreps[] times; NULL: none; GEMM's "medium" too), each
 * a segment of its own (its operations together) weighing as much as each of the main size's nops
 * operations; they run (and are checked) first. The 1-D families' at 2^16 (64 runs) and 2^22 (four
 * runs): timed at 2^20 alone, a --quick run on the 2-core Xeon chose for the vector family a
 * grid-stride loop in groups of 128, 32 a core (+4% there), which ran axpy and scale of 2^16 f32 at
 * 0.79-0.88x the defaults and every operation of 2^22 at 0.71-0.95x (tools/profile-ab); and for the
 * reductions one stream a work-item in groups of 2, which ran nrm2 of 2^16-2^18 at 0.89-0.95x.
 * GEMM's: gemm_setup. */
static ocx_status setup_sizes(ocx_context *ctx, ocx_dtype dt, const char *cls, size_t n, size_t reps, int nops,
                              case_fn make, const size_t sizes[NVSUB], const size_t sreps[NVSUB],
                              ocx__tune_case **out)
{
    OCX__FORWARD(make(ctx, dt, n, reps, cls, out));
    ocx__tune_case *tc = *out;
    ocx_status st = OCX_OK;
    for (int i = 0; i < NVSUB && st == OCX_OK && sizes && !is_gpu(ctx); i++) {
        st = make(ctx, dt, sizes[i], sreps[i], cls, &tc->sub[tc->nsub]);
        if (st != OCX_OK) break;
        tc->sub[tc->nsub]->nmarks = 0; /* its operations one segment of tc's */
        tc->nsub++;
    }
    /* segments: the other sizes' (their operations together), then this size's operations */
    for (int s = nops - 1; s >= 0; s--) tc->seg_work[tc->nsub + s] = tc->seg_work[s];
    for (int i = 0; i < tc->nsub; i++) {
        tc->seg_work[i] = 0;
        for (int s = 0; s < nops; s++) tc->seg_work[i] += tc->sub[i]->seg_work[s];
    }
    tc->nmarks = tc->nsub + nops - 1;
    if (st != OCX_OK) case_free(tc), *out = NULL;
    return st;
}
static ocx_status vector_setup(ocx_context *ctx, ocx_dtype dt, const char *cls, int quick, ocx__tune_case **out)
{
    const int all = !strcmp(cls, "all");
    return setup_sizes(ctx, dt, cls, n_1d(ctx, cls, quick), reps_1d(ctx, cls), NVEC, vector_case, all ? sub_n : NULL,
                       sub_reps, out);
}
/* The family's kinds of kernel, each timed on its own (segments, as reduce's; the rate is their
 * geometric mean): axpy into z (two arrays read, one written in place: the operation CLBlast's
 * Xaxpy is compared on), add (a result only written; also mul, copy, fill: non-temporal stores on
 * CPUs; it overwrites z after axpy, and the check covers its outputs) and scale of y by 1 (one
 * array read and written in place, which leaves y's values, and so add's reference, as they were).
 * Tuned on add alone, a PoCL --quick run (2-core EPYC, 2^23 f32) chose groups of 256 with one
 * stream a work-item (+8% on add), which then ran axpy and scale at 0.94-1.00x and 0.89-0.98x
 * CLBlast where the defaults ran 1.03-1.07x and 0.99-1.08x (3 rounds each, alternating). Tuned on
 * add and scale, timed as one, a run on the 2-core Xeon chose for "large" groups of 128 with one
 * vector a work-item, which ran axpy of 2^24 f32 at 0.97-0.98x CLBlast where the defaults ran
 * 1.02-1.03x. */
static ocx_status vector_op(ocx_context *ctx, ocx__tune_case *tc, int i, ocx_buffer *x, ocx_buffer *y, ocx_event *e)
{
    return i == 0   ? ocx_axpy(ctx, NULL, tc->n, 1.0, x, 1, tc->z, 1, 0, NULL, e)
           : i == 1 ? ocx_add(ctx, NULL, tc->n, x, y, tc->z, 0, NULL, e)
                    : ocx_scale(ctx, NULL, tc->n, 1.0, y, 1, 0, NULL, e);
}
/* Operation i of a measurement over x and y (tc's or their copies); e: its event, or NULL. */
typedef ocx_status (*one_op)(ocx_context *, ocx__tune_case *, int, ocx_buffer *, ocx_buffer *, ocx_event *);
/* A measurement: tc's other sizes first, each a segment, then each of tc's nops operations, a
 * segment each; every operation tc->reps (a size's reps) times in a row. ev: the last one's. */
static ocx_status run_segments(ocx_context *ctx, ocx__tune_case *tc, ocx_event *ev, int nops, one_op op)
{
    ocx_status st = OCX_OK;
    for (int s = 0; s <= tc->nsub && st == OCX_OK; s++) {
        ocx__tune_case *c = s < tc->nsub ? tc->sub[s] : tc;
        for (int i = 0; i < nops && st == OCX_OK; i++) {
            for (size_t r = 0; r < c->reps && st == OCX_OK; r++) {
                ocx_buffer *x, *y;
                inputs(c, &x, &y);
                st = op(ctx, c, i, x, y, c == tc && i + 1 == nops && r + 1 == c->reps ? ev : NULL);
            }
            if (st == OCX_OK && s < tc->nsub && i + 1 == nops) st = end_segment(ctx, tc, s);
            if (st == OCX_OK && s == tc->nsub && i + 1 < nops) st = end_segment(ctx, tc, s + i);
        }
    }
    return st;
}
static ocx_status vector_run(ocx_context *ctx, ocx__tune_case *tc, ocx_event *ev)
{
    return run_segments(ctx, tc, ev, NVEC, vector_op);
}
/* The work of a measurement (the sum of its segments'). */
static double segments_work(const ocx__tune_case *tc)
{
    double w = 0;
    for (int s = 0; s <= tc->nmarks; s++) w += tc->seg_work[s];
    return w;
}

/* reduce: the sum of x, the dot product of x and y and the largest x into a three-element result,
 * and the largest x's index into zi. One array read and two, adds, comparisons and the index scan
 * (argmin and argmax scan blocks on CPUs: reduce.cl): on PoCL (2-core EPYC, 2^24 f32) four streams a
 * work-item ran sum at 1.3x one stream and dot level, eight streams sum at 1.2x and dot at 0.8x; on
 * the H200 a 60-s re-tune on sum + dot chose 4 accumulators in groups of 64 for 2^26 and more,
 * which ran sum and dot level and min, max and argmin at 0.86x the shipped entries (2^28 f32); tuned
 * on all three, every reduction ran at 0.96-1.01x them (f32 and f16, 2^26 and 2^28). Tuned without
 * argmax, a --quick run on the 2-core Xeon chose eight streams in 16 groups a core, which ran the
 * other reductions of 2^20-2^22 f32 at 1.03-1.19x the defaults and argmax at 0.52-0.77x. */
/* The 0-and-1 inputs of reduce_check: a random set of ones (half of them, fewer past 2^24 elements,
 * so that the counts, and every partial sum of them, stay below 2^24, exact in f32), counted on the
 * host. With inputs in [0.5, 1.5) the relative tolerance of 1e-5 lets a sum of 2^24 elements miss
 * about 168 of them (a grid that leaves out an element a group, say), which this catches. */
typedef struct count_job {
    ocx_dtype dt;
    const void *x, *y;
    size_t n;
    size_t *ones, *both, *first; /* per chunk: x's ones, the places both are 1, x's first 1 (else n) */
} count_job;

static void count_chunk(void *arg, size_t c)
{
    const count_job *j = arg;
    size_t ones = 0, both = 0, first = j->n;
    for (size_t i = c * CHUNK, end = chunk_end(c, j->n); i < end; i++) {
        const int x = host_value(j->dt, j->x, i) == 1, y = host_value(j->dt, j->y, i) == 1;
        ones += (size_t)x;
        both += (size_t)(x && y);
        if (x && first == j->n) first = i;
    }
    j->ones[c] = ones, j->both[c] = both, j->first[c] = first;
}

static ocx_status exact_inputs(ocx_context *ctx, ocx__tune_case *tc)
{
    const double p = tc->n <= ((size_t)1 << 24) ? 0.5 : (double)((size_t)1 << 23) / (double)tc->n;
    const size_t nc = nchunks(tc->n);
    void *xe = random_bits(tc->dtype, tc->n, p, 23), *ye = random_bits(tc->dtype, tc->n, p, 24);
    size_t *counts = malloc(3 * (nc + 1) * sizeof *counts);
    ocx_status st = xe && ye && counts ? OCX_OK : ocx__error(OCX_ERR_OUT_OF_MEMORY, "tune: out of host memory");
    if (st == OCX_OK) st = upload(ctx, tc->dtype, tc->n, xe, &tc->xe);
    if (st == OCX_OK) st = upload(ctx, tc->dtype, tc->n, ye, &tc->ye);
    if (st == OCX_OK) { /* counted on the host's threads, as the references are (a GPU's 2^26 elements) */
        count_job j = {tc->dtype, xe, ye, tc->n, counts, counts + nc + 1, counts + 2 * (nc + 1)};
        parallel(nc, MAX_THREADS, count_chunk, &j);
        tc->exact_index = SIZE_MAX;
        for (size_t c = 0; c < nc; c++) {
            tc->exact_sum += (double)j.ones[c];
            tc->exact_dot += (double)j.both[c];
            if (j.first[c] < tc->n && tc->exact_index == SIZE_MAX) tc->exact_index = j.first[c];
        }
    }
    free(counts);
    free(xe);
    free(ye);
    return st;
}

static ocx_status reduce_case(ocx_context *ctx, ocx_dtype dt, size_t n, size_t reps, const char *cls,
                              ocx__tune_case **out)
{
    ocx__tune_case *tc;
    OCX__FORWARD(case_new(ctx, dt, dt == OCX_F64 ? OCX_F64 : OCX_F32, NRED - 1, NRED - 1, 0, &tc));
    tc->n = n;
    tc->reps = reps;
    void *xv = NULL, *yv = NULL;
    ocx_status st = case_inputs(ctx, tc, cls, 0, 0.5, 1.5, 21, &xv, &yv);
    double *part = st == OCX_OK ? calloc(4 * nchunks(tc->n), sizeof *part) : NULL;
    if (st == OCX_OK && !part) st = ocx__error(OCX_ERR_OUT_OF_MEMORY, "tune: out of host memory");
    if (st == OCX_OK) { /* sums per chunk, then the chunks' in order: the same sums on every machine */
        ref_job j = {dt, xv, yv, tc->n, part};
        parallel(nchunks(tc->n), MAX_THREADS, reduce_chunk, &j);
        tc->ref[2] = -INFINITY;
        for (size_t c = 0; c < nchunks(tc->n); c++) {
            tc->ref[0] += part[4 * c];
            tc->ref[1] += part[4 * c + 1];
            if (part[4 * c + 2] > tc->ref[2]) tc->ref[2] = part[4 * c + 2], tc->ref_index = (size_t)part[4 * c + 3];
        }
    }
    free(part);
    for (int i = 0; i < NRED - 1 && st == OCX_OK; i++) st = ocx_buffer_view(tc->z, (size_t)i, 1, &tc->zv[i]);
    if (st == OCX_OK) st = upload(ctx, OCX_U32, 1, NULL, &tc->zi);
    if (st == OCX_OK) st = exact_inputs(ctx, tc);
    tc->nmarks = NRED - 1; /* each operation timed on its own */
    for (int i = 0; i < NRED; i++)
        tc->seg_work[i] = (red_ops[i] == OCX_REDUCE_DOT ? 2.0 : 1.0) * (double)n * (double)tc->reps * ocx_dtype_size(dt);
    tc->tol = tc->out_dtype == OCX_F64 ? 1e-12 : 1e-5; /* tree sums of positive values */
    free(xv);
    free(yv);
    if (st != OCX_OK) case_free(tc), tc = NULL;
    *out = tc;
    return st;
}
static ocx_status reduce_setup(ocx_context *ctx, ocx_dtype dt, const char *cls, int quick, ocx__tune_case **out)
{
    const int all = !strcmp(cls, "all");
    return setup_sizes(ctx, dt, cls, n_1d(ctx, cls, quick), reps_1d(ctx, cls), NRED, reduce_case, all ? sub_n : NULL,
                       sub_reps, out);
}
static ocx_status reduce_op(ocx_context *ctx, ocx__tune_case *tc, int i, ocx_buffer *x, ocx_buffer *y, ocx_event *e)
{
    return ocx_reduce(ctx, NULL, red_ops[i], tc->n, x, 1, y, 1, i + 1 == NRED ? tc->zi : tc->zv[i], 0, NULL, e);
}
static ocx_status reduce_run(ocx_context *ctx, ocx__tune_case *tc, ocx_event *ev)
{
    return run_segments(ctx, tc, ev, NRED, reduce_op);
}

/* gemm: C (f32 for f16 inputs) = A * B, row-major: m x n x k */

/* The row of C that reference row r of `rows` stands for: one in each band of s/rows rows, at an
 * offset in the band that varies from band to band. */
static size_t ref_row(size_t r, size_t rows, size_t s) { return r * (s / rows) + (r * 7919) % (s / rows); }

/* Columns [c*GEMM_COLS, ...) of the GEMM reference's rows (A m x k, B k x n, row-major). */
#define GEMM_COLS 256
typedef struct gemm_ref_job {
    ocx_dtype dt;
    const void *a, *b;
    size_t m, n, k, rows;
    double *ref, *scale;
} gemm_ref_job;

static void gemm_ref_cols(void *arg, size_t c)
{
    const gemm_ref_job *j = arg;
    size_t n = j->n, j0 = c * GEMM_COLS, w = n - j0 < GEMM_COLS ? n - j0 : GEMM_COLS;
    double brow[GEMM_COLS];
    for (size_t p = 0; p < j->k; p++) {
        for (size_t q = 0; q < w; q++) brow[q] = host_value(j->dt, j->b, p * n + j0 + q);
        for (size_t r = 0; r < j->rows; r++) {
            const double a = host_value(j->dt, j->a, ref_row(r, j->rows, j->m) * j->k + p);
            double *ref = j->ref + r * n + j0, *scale = j->scale + r * n + j0;
            for (size_t q = 0; q < w; q++) {
                const double t = a * brow[q];
                ref[q] += t;
                scale[q] += fabs(t);
            }
        }
    }
}

/* One product, m x n x k, run reps times a measurement, with its inputs and the reference of `rows`
 * of its rows (all of them where rows = m). */
static ocx_status gemm_product(ocx_context *ctx, ocx_dtype dt, size_t m, size_t n, size_t k, size_t rows, size_t reps,
                               ocx__tune_case **out)
{
    ocx__tune_case *tc;
    OCX__FORWARD(case_new(ctx, dt, dt == OCX_F64 ? OCX_F64 : OCX_F32, m * n, rows * n, 1, &tc));
    tc->m = m;
    tc->n = n;
    tc->k = k;
    tc->reps = reps;
    tc->seg_work[0] = 2.0 * (double)m * (double)n * (double)k * (double)reps; /* one segment */
    /* Host copies in the storage type only (no m*n doubles beside them: at 8192² that was a gigabyte
     * and seconds of set-up). Each block of GEMM_COLS columns of the reference walks B's rows once,
     * widening its part of each into a row of doubles, and adds its contribution to every reference
     * row: every element sums over k in order, whichever thread computes its block. */
    void *ha = random_host(dt, m * k, -1, 1, 31), *hb = random_host(dt, k * n, -1, 1, 32);
    ocx_status st = ha && hb ? OCX_OK : ocx__error(OCX_ERR_OUT_OF_MEMORY, "tune: out of host memory");
    if (st == OCX_OK) st = upload(ctx, dt, m * k, ha, &tc->x);
    if (st == OCX_OK) st = upload(ctx, dt, k * n, hb, &tc->y);
    if (st == OCX_OK) {
        gemm_ref_job j = {dt, ha, hb, m, n, k, rows, tc->ref, tc->refscale};
        parallel(ocx__div_up(n, GEMM_COLS), MAX_THREADS, gemm_ref_cols, &j);
    }
    tc->tol = 2.0 * (double)(k + 2) * (tc->out_dtype == OCX_F64 ? ldexp(1, -53) : ldexp(1, -24));
    free(ha);
    free(hb);
    if (st != OCX_OK) case_free(tc), tc = NULL;
    *out = tc;
    return st;
}

/* One product, s x s x s (short_k: s x s x 128) run reps times a measurement. Checking every
 * element of a 4096² product on the host is too slow: 16 rows spread over it, one in each band of
 * s/16 rows at scattered offsets (so at different rows of the tiles and register tiles), every
 * column of each; the host needs a quarter of the time 64 rows took. */
static ocx_status gemm_case(ocx_context *ctx, ocx_dtype dt, size_t s, size_t reps, const char *cls,
                            ocx__tune_case **out)
{
    return gemm_product(ctx, dt, s, s, !strcmp(cls, "short_k") ? 128 : s, s < 16 ? s : 16, reps, out);
}

/* "small" takes the direct kernel (M*N*K below the DIRECT threshold of the defaults: 128^3 on GPUs,
 * 16^3 on CPUs); "medium" is below OCX__GEMM_MEDIUM, "large" at or above OCX__GEMM_LARGE; "short_k"
 * (GPUs only) is s x s x 128, K within OCX__GEMM_SHORT_K. CPUs take 1024^3 in --quick runs too
 * (formerly 768^3): at 768^3 on the 2-core EPYC the former defaults' 8x32 tiles on one work-item ran
 * level with 32x32 on four, which ran 1024^3 and 2048^3 at 1.1-1.6x their rate. On CPUs, where the
 * "all" entry stands for every size without its own (a --quick run tunes no other GEMM class), it
 * is measured at 128^3 and 384^3 (a partial tile at most sizes) as well, each product timed on its
 * own and weighing the same (time_run): timed at 1024^3 alone, a --quick run on the 2-core Xeon
 * chose 256x128 tiles on 128 work-items, which ran 1024^3-2048^3 at up to 1.3x the defaults and
 * 128^3-512^3 at 0.66-0.97x. A CPU's "medium" entry (256^3 to 1290^3) is measured at 256^3 and
 * 1024^3 as well as 512^3: timed at 512^3 alone, the 16-core Xeon's confirmed 96x16 tiles, which ran
 * 256^3 at 0.88x the defaults (and 512^3 level), and the 2-core EPYC's 128x256 tiles, which ran
 * 256^3 and 1024^3 at 0.95-0.97x. */
static ocx_status gemm_setup(ocx_context *ctx, ocx_dtype dt, const char *cls, int quick, ocx__tune_case **out)
{
    size_t s = !strcmp(cls, "small")    ? (is_gpu(ctx) ? 128 : 16)
               : !strcmp(cls, "medium") ? 512
               : !strcmp(cls, "large") || !strcmp(cls, "short_k") ? 8192 /* GPUs only: 2^39 >= OCX__GEMM_LARGE */
               : is_gpu(ctx)           ? (quick ? 2048 : 4096)
                                       : 1024;
    /* each smaller product run as often as takes a millisecond or more (at 100 GFLOP/s), back to
     * back as a user's calls would: timed once, a 128^3 product's segment (40 us) moved 22-120
     * GFLOP/s from run to run with the launch around it */
    static const size_t subs[NVSUB] = {128, 384}, subs_reps[NVSUB] = {32, 4};
    static const size_t med_subs[NVSUB] = {256, 1024}, med_reps[NVSUB] = {4, 1};
    const int all = !strcmp(cls, "all"), medium = !strcmp(cls, "medium");
    OCX__FORWARD(setup_sizes(ctx, dt, cls, s, 1, 1, gemm_case, all ? subs : medium ? med_subs : NULL,
                             all ? subs_reps : med_reps, out));
    /* The sizes timed are multiples of every tile on GPUs (on CPUs 384^3 is not of most), and a
     * candidate's partial tiles, odd leading dimensions and odd K would go unchecked where users
     * meet them: every candidate is also checked, whole, on a product of odd sides (gemm_check).
     * "small" is the direct kernel's, whose products are within s^3 (its DIRECT); the others'
     * (211x197x131, primes) is above the direct threshold of every class's defaults (on GPUs
     * 128^3), and leaves every tile partial in M and N. */
    const int small = !strcmp(cls, "small");
    const size_t om = small ? s - 3 : 211, on = small ? s - 5 : 197, ok = small ? s / 2 + 1 : 131;
    ocx_status st = gemm_product(ctx, dt, om, on, ok, om, 1, &(*out)->odd);
    if (st != OCX_OK) case_free(*out), *out = NULL;
    return st;
}
/* The tensor-core entries: f16 products as gemm_setup's, and f32 ones under OCX_COMPUTE_TF32X3, each
 * of whose products may be off by 2^-19 of |a·b| (ocx.h) on top of f32's summation. */
static ocx_status mma_setup(ocx_context *ctx, ocx_dtype dt, const char *cls, int quick, ocx__tune_case **out)
{
    OCX__FORWARD(gemm_setup(ctx, dt, cls, quick, out));
    for (ocx__tune_case *c = dt == OCX_F32 ? *out : NULL; c; c = c->odd) { /* the case and its odd product */
        c->compute = OCX_COMPUTE_TF32X3;
        c->tol += ldexp(1, -18); /* twice the 2^-19: the margin gemm_setup's bound has */
    }
    return OCX_OK;
}
static ocx_status gemm_op(ocx_context *ctx, ocx__tune_case *tc, int i, ocx_buffer *x, ocx_buffer *y, ocx_event *e)
{
    (void)i; /* one operation */
    return ocx_gemm_ex(ctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, tc->m, tc->n, tc->k, 1.0, x, 0, tc->k, 0, y, 0,
                       tc->n, 0, 0.0, tc->z, 0, tc->n, 0, 1, tc->compute, 0, NULL, e);
}
static ocx_status gemm_run(ocx_context *ctx, ocx__tune_case *tc, ocx_event *ev)
{
    OCX__FORWARD(run_segments(ctx, tc, ev, 1, gemm_op));
    /* TF32X3 is a permission: a product it does not take runs on the f32 kernels, which must not be
     * timed as this entry's. */
    ocx_params_info info;
    OCX__FAIL_IF(tc->compute == OCX_COMPUTE_TF32X3 && (ocx_last_params(&info) != OCX_OK ||
                                                       strcmp(info.kernel, "gemm_mma") != 0),
                 OCX_ERR_INTERNAL, "tune: the TF32X3 product did not run on the tensor cores");
    return OCX_OK;
}

/* bad[c]: the first element of chunk c of the output that misses its reference (times mul), else nref. */
typedef struct check_job {
    const ocx__tune_case *tc;
    const void *host;
    size_t *bad;
    double mul;
} check_job;

static void check_chunk(void *arg, size_t c)
{
    const check_job *j = arg;
    const ocx__tune_case *tc = j->tc;
    j->bad[c] = tc->nref;
    for (size_t i = c * CHUNK, end = chunk_end(c, tc->nref); i < end; i++) {
        double got = host_value(tc->out_dtype, j->host, i), want = j->mul * tc->ref[i],
               scale = j->mul * (tc->refscale ? tc->refscale[i] : fabs(tc->ref[i]));
        if (!(fabs(got - want) <= tc->tol * scale + 1e-30)) {
            j->bad[c] = i;
            return;
        }
    }
}

/* Reads tc's output (the reference's rows) and compares it with mul times the reference. */
static ocx_status verify_output(ocx_context *ctx, ocx__tune_case *tc, double mul)
{
    size_t es = ocx_dtype_size(tc->out_dtype);
    unsigned char *host = malloc(tc->nref * es);
    OCX__FAIL_IF(!host, OCX_ERR_OUT_OF_MEMORY, "tune: out of host memory");
    ocx_status st = OCX_OK;
    if (tc->m) { /* gemm: rows spread over the matrix */
        size_t rows = tc->nref / tc->n;
        for (size_t r = 0; r < rows && st == OCX_OK; r++)
            st = ocx_buffer_read(ctx, NULL, tc->z, ref_row(r, rows, tc->m) * tc->n, tc->n, host + r * tc->n * es, 0, NULL,
                                 NULL);
    } else {
        st = ocx_buffer_read(ctx, NULL, tc->z, 0, tc->nref, host, 0, NULL, NULL);
    }
    size_t nc = nchunks(tc->nref), *bad = st == OCX_OK ? malloc(nc * sizeof *bad) : NULL;
    if (st == OCX_OK && !bad) st = ocx__error(OCX_ERR_OUT_OF_MEMORY, "tune: out of host memory");
    if (st == OCX_OK) {
        check_job j = {tc, host, bad, mul};
        parallel(nc, MAX_THREADS, check_chunk, &j);
        for (size_t c = 0; c < nc && st == OCX_OK; c++) {
            const size_t i = bad[c];
            if (i < tc->nref && tc->m)
                st = ocx__error(OCX_ERR_INTERNAL, "tune: %zux%zux%zu product: wrong C[%zu][%zu]: %g, expected %g",
                                tc->m, tc->n, tc->k, ref_row(i / tc->n, tc->nref / tc->n, tc->m), i % tc->n,
                                host_value(tc->out_dtype, host, i), mul * tc->ref[i]);
            else if (i < tc->nref)
                st = ocx__error(OCX_ERR_INTERNAL, "tune: wrong result at %zu: %g, expected %g", i,
                                host_value(tc->out_dtype, host, i), mul * tc->ref[i]);
        }
    }
    free(bad);
    free(host);
    return st;
}

/* Reads the output (the reference's rows) and compares; the output was poisoned before the run. */
static ocx_status verify(ocx_context *ctx, ocx__tune_case *tc)
{
    ocx_status st = verify_output(ctx, tc, 1.0);
    for (int i = 0; i < tc->nsub && st == OCX_OK; i++) st = verify(ctx, tc->sub[i]);
    if (st == OCX_OK && tc->zi) {
        uint32_t got = UINT32_MAX;
        st = ocx_buffer_read(ctx, NULL, tc->zi, 0, 1, &got, 0, NULL, NULL);
        if (st == OCX_OK && got != tc->ref_index)
            st = ocx__error(OCX_ERR_INTERNAL, "tune: wrong argmax %u, expected %zu", got, tc->ref_index);
    }
    return st;
}

/* The run's check sees add's output alone (it overwrites axpy's in z, and scale by 1 leaves y as it
 * was), so each size's other kernels are checked here, before timing: y copied into z and x added by
 * axpy (alpha 1: x + y, add's reference exactly), then z scaled by 2 (exactly twice it). */
static ocx_status vector_check(ocx_context *ctx, ocx__tune_case *tc)
{
    ocx_status st = OCX_OK;
    for (int s = 0; s <= tc->nsub && st == OCX_OK; s++) {
        ocx__tune_case *c = s < tc->nsub ? tc->sub[s] : tc;
        st = ocx_copy(ctx, NULL, c->n, c->y, 1, c->z, 1, 0, NULL, NULL);
        if (st == OCX_OK) st = ocx_axpy(ctx, NULL, c->n, 1.0, c->x, 1, c->z, 1, 0, NULL, NULL);
        if (st == OCX_OK) st = verify_output(ctx, c, 1.0);
        if (st == OCX_OK) st = ocx_scale(ctx, NULL, c->n, 2.0, c->z, 1, 0, NULL, NULL);
        if (st == OCX_OK) st = verify_output(ctx, c, 2.0);
    }
    return st;
}

/* Fills c's output with NaN of its dtype (and argmax's index with UINT32_MAX), so that a kernel
 * that leaves any of it unwritten fails the check. */
static ocx_status poison_outputs(ocx_context *ctx, ocx__tune_case *c)
{
    unsigned char poison[8];
    if (c->out_dtype == OCX_F16) {
        uint16_t h = 0x7e00;
        memcpy(poison, &h, 2);
    } else if (c->out_dtype == OCX_F64) {
        double nan = NAN;
        memcpy(poison, &nan, 8);
    } else {
        float f = NAN;
        memcpy(poison, &f, 4);
    }
    const uint32_t no_index = UINT32_MAX;
    ocx_status st = ocx_buffer_fill(ctx, NULL, c->z, 0, ocx_buffer_length(c->z), poison, 0, NULL, NULL);
    if (st == OCX_OK && c->zi) st = ocx_buffer_fill(ctx, NULL, c->zi, 0, 1, &no_index, 0, NULL, NULL);
    return st;
}

/* The odd-shaped product (gemm_setup), run once after the entry's own (whose kernel it must run
 * too, or it would check another) and compared whole with its reference. */
static ocx_status gemm_check(ocx_context *ctx, ocx__tune_case *tc)
{
    ocx__tune_case *c = tc->odd;
    ocx_params_info timed, odd;
    OCX__FORWARD(ocx_last_params(&timed));
    OCX__FORWARD(poison_outputs(ctx, c));
    OCX__FORWARD(gemm_op(ctx, c, 0, c->x, c->y, NULL));
    OCX__FORWARD(ocx_last_params(&odd));
    OCX__FAIL_IF(strcmp(timed.kernel, odd.kernel) != 0, OCX_ERR_INTERNAL,
                 "tune: the %zux%zux%zu check ran %s where the entry runs %s", c->m, c->n, c->k, odd.kernel,
                 timed.kernel);
    OCX__FORWARD(ocx_stream_finish(ctx, NULL));
    return verify_output(ctx, c, 1.0);
}

/* Each size's reductions again on the 0-and-1 inputs (exact_inputs), compared exactly: the sum, the
 * dot product, the largest (1) and the index of the first 1 (ties go to the lowest index). */
static ocx_status reduce_check(ocx_context *ctx, ocx__tune_case *tc)
{
    ocx_status st = OCX_OK;
    for (int s = 0; s <= tc->nsub && st == OCX_OK; s++) {
        ocx__tune_case *c = s < tc->nsub ? tc->sub[s] : tc;
        st = poison_outputs(ctx, c);
        for (int i = 0; i < NRED && st == OCX_OK; i++)
            st = ocx_reduce(ctx, NULL, red_ops[i], c->n, c->xe, 1, c->ye, 1, i + 1 == NRED ? c->zi : c->zv[i], 0,
                            NULL, NULL);
        unsigned char got[3 * sizeof(double)];
        uint32_t index = UINT32_MAX;
        if (st == OCX_OK) st = ocx_buffer_read(ctx, NULL, c->z, 0, 3, got, 0, NULL, NULL);
        if (st == OCX_OK) st = ocx_buffer_read(ctx, NULL, c->zi, 0, 1, &index, 0, NULL, NULL);
        const double want[3] = {c->exact_sum, c->exact_dot, 1};
        static const char *const what[3] = {"sum", "dot product", "largest"};
        for (int i = 0; i < 3 && st == OCX_OK; i++)
            if (host_value(c->out_dtype, got, (size_t)i) != want[i])
                st = ocx__error(OCX_ERR_INTERNAL, "tune: wrong %s of %zu zeros and ones: %.17g, expected %.17g",
                                what[i], c->n, host_value(c->out_dtype, got, (size_t)i), want[i]);
        if (st == OCX_OK && index != c->exact_index)
            st = ocx__error(OCX_ERR_INTERNAL, "tune: wrong argmax of %zu zeros and ones: %u, expected %zu", c->n,
                            index, c->exact_index);
    }
    return st;
}

typedef struct tuning_def {
    const char *family;
    const char *size_class;
    const ocx__family *fam;
    const char *const *search; /* parameters searched (NULL: every kernel parameter) */
    ocx_status (*setup)(ocx_context *, ocx_dtype, const char *, int, ocx__tune_case **);
    ocx_status (*run)(ocx_context *, ocx__tune_case *, ocx_event *);
    const char *unit;
    int gpu_only; /* not tuned on CPUs */
    /* NULL, or whether the entry applies to this device and dtype (a vendor path). */
    int (*applies)(ocx_context *, ocx_dtype);
    int asked_only; /* tuned only when --classes names its class (outside a 60-s run's budget) */
    const char *const *cpu_search; /* NULL, or the parameters searched on CPUs in place of search */
    /* NULL, or a check of the kernels whose outputs the run's own check (verify) does not see */
    ocx_status (*check)(ocx_context *, ocx__tune_case *);
} tuning_def;

/* The tensor-core GEMM: f16, and f32 under OCX_COMPUTE_TF32X3 (tuned only when asked for, below),
 * where its probe for the dtype passed. */
static int mma_applies(ocx_context *ctx, ocx_dtype dt)
{
    return (dt == OCX_F16 || dt == OCX_F32) && ocx__gemm_nv_ready(ctx, dt);
}
/* The portable tiled GEMM, for what it runs: not f16 products where the tensor cores take them (the
 * library runs those on the portable kernel only under OCX_VENDOR_PATHS=0, which tunes it too). f32
 * products run on it unless a caller asks for TF32X3. */
static int tiled_applies(ocx_context *ctx, ocx_dtype dt)
{
    return !(dt == OCX_F16 && ocx__gemm_nv_ready(ctx, OCX_F16));
}

/* What is tuned: each family's "all" entry (which also stands in for the classes without their
 * own), the launch-bound small sizes (GEMM's: the direct kernel), and the large sizes (GEMM's on
 * GPUs only). */
/* SOLO (a threshold for one-group reductions) is not searched: the "small" entry's one size
 * cannot place it. On CPUs that entry's one group of n = 2^14 elements (under SOLO) leaves
 * GROUPS_PER_CU nothing to do. */
/* NT (non-temporal stores) is not searched either: it pays where a result is not read again soon,
 * which the measurement's sequence cannot stand for (its axpy reads the z that add stored a moment
 * before). On the 2-core Xeon, where NT is taken from 2^24 f32 elements (64 MiB), --quick runs
 * measuring "large" at 2^24 put NT=0 ahead by 10-12% (one confirmed it, 10 of 11 rounds), which ran
 * add and copy of 2^24 at 0.72x and 0.79x the defaults (0-1 rounds of 11, tools/profile-ab
 * --kernel-time); axpy and scale level. */
static const char *const vector_search[] = {"WG", "VW", "GROUPS_PER_CU", "GRID", "WPT", NULL};
static const char *const reduce_search[] = {"WG", "VW", "GROUPS_PER_CU", "LAYOUT", "ACC", NULL};
/* On CPUs not LAYOUT: every reduce candidate with interleaved work-items (LAYOUT=1) drawn in three
 * --quick runs on the 2-core EPYC ran at 6.7-20 GB/s, against 30-38 for the defaults' chunks. */
static const char *const reduce_cpu_search[] = {"WG", "VW", "GROUPS_PER_CU", "ACC", NULL};
static const char *const reduce_cpu_small_search[] = {"WG", "VW", "ACC", NULL};
static const char *const gemm_search[] = {"MWG", "NWG", "KWG", "MDIMC", "NDIMC", "VWM", "VWN", "STAGE", "KUNR", NULL};
/* On CPUs the tiles and work-groups of the start's STAGE (1 unless a profile in force says
 * otherwise; STAGE=1 uses neither KWG, VWM nor KUNR). The local-memory stages run far slower on
 * PoCL and cost the budget in compiling: on the 2-core AVX2 EPYC at 1024^3 f32, STAGE=2 in 64x64
 * tiles ran 16 GFLOP/s and STAGE=4 8 (after a 92-s compile), against 50-56 for the STAGE=1
 * defaults; a --quick run that sampled them spent 27 s of its 52 on one such build and left the
 * 4x16 tiles with 8-wide vectors (63-67) unfound. */
static const char *const gemm_cpu_search[] = {"MWG", "NWG", "MDIMC", "NDIMC", "VWN", NULL};
static const char *const gemm_small_search[] = {"DWGN", "DWGM", "DKU", NULL};
/* The tensor-core tiles; not TMA, whose bulk copies ran at half the speed on the H200 (gemm_nv.c),
 * nor WGMMA: the instructions stay the start's (wgmma where the device has it, else mma.sync) and
 * the search moves the tiles within their constraints. */
static const char *const mma_search[] = {"BM", "BN", "BK", "WM", "WN", "STAGES", "GM", NULL};
/* In order of what a short budget should cover first: the "all" entries (every size without an
 * entry of its own uses them), the cheap small ones, then the large ones (seconds of set-up each),
 * GEMM's first: its first candidate is the "all" entry's (built already), and at 8192^3 it is the
 * size users measure us by (in two of five 60-s H200 runs it came last and was left out). */
static const tuning_def tunings[] = {
    {"vector", "all", &ocx__family_vector, vector_search, vector_setup, vector_run, "GB/s", .check = vector_check},
    {"reduce", "all", &ocx__family_reduce, reduce_search, reduce_setup, reduce_run, "GB/s", 0, NULL, 0,
     reduce_cpu_search, reduce_check},
    {"gemm", "all", &ocx__family_gemm, gemm_search, gemm_setup, gemm_run, "GFLOP/s", 0, tiled_applies, 0,
     gemm_cpu_search, .check = gemm_check},
    {"gemm_mma", "all", &ocx__family_gemm_mma, mma_search, mma_setup, gemm_run, "GFLOP/s", 1, mma_applies,
     .check = gemm_check},
    {"vector", "small", &ocx__family_vector, vector_search, vector_setup, vector_run, "GB/s", .check = vector_check},
    {"reduce", "small", &ocx__family_reduce, reduce_search, reduce_setup, reduce_run, "GB/s", 0, NULL, 0,
     reduce_cpu_small_search, reduce_check},
    {"gemm", "small", &ocx__family_gemm, gemm_small_search, gemm_setup, gemm_run, "GFLOP/s", .check = gemm_check},
    {"gemm", "medium", &ocx__family_gemm, gemm_search, gemm_setup, gemm_run, "GFLOP/s", 0, tiled_applies, 0,
     gemm_cpu_search, .check = gemm_check},
    {"gemm_mma", "medium", &ocx__family_gemm_mma, mma_search, mma_setup, gemm_run, "GFLOP/s", 1, mma_applies,
     .check = gemm_check},
    {"gemm", "large", &ocx__family_gemm, gemm_search, gemm_setup, gemm_run, "GFLOP/s", 1, tiled_applies,
     .check = gemm_check},
    {"vector", "large", &ocx__family_vector, vector_search, vector_setup, vector_run, "GB/s", .check = vector_check},
    {"reduce", "large", &ocx__family_reduce, reduce_search, reduce_setup, reduce_run, "GB/s", 0, NULL, 0,
     reduce_cpu_search, reduce_check},
    /* Asked for by name only: a 60-s H200 run already ends a second or two before its budget. */
    {"gemm", "short_k", &ocx__family_gemm, gemm_search, gemm_setup, gemm_run, "GFLOP/s", 1, tiled_applies, 1,
     .check = gemm_check},
    {"gemm_mma", "short_k", &ocx__family_gemm_mma, mma_search, mma_setup, gemm_run, "GFLOP/s", 1, mma_applies,
     1, .check = gemm_check},
};
#define NTUNINGS (sizeof tunings / sizeof *tunings)

/* ---- the search ---------------------------------------------------------------------------------- */

typedef struct space {
    const ocx__family *fam;
    int searched[OCX__MAX_PARAMS];
    int ladder[OCX__MAX_PARAMS][MAX_LADDER];
    int nladder[OCX__MAX_PARAMS];
} space;

static void space_init(space *sp, const tuning_def *def, int gpu)
{
    const char *const *search = !gpu && def->cpu_search ? def->cpu_search : def->search;
    memset(sp, 0, sizeof *sp);
    sp->fam = def->fam;
    for (unsigned i = 0; i < def->fam->nparams; i++) {
        const ocx__param_def *p = &def->fam->params[i];
        int searched = !p->host;
        if (search) {
            searched = 0;
            for (const char *const *s = search; *s; s++) searched |= strcmp(*s, p->name) == 0;
        }
        sp->searched[i] = searched;
        int n = 0;
        /* MWG's three-times rungs (1, 2, 3, 4, 6, 8, 12, ...: 6-row register tiles fit AVX2's 16
         * registers, gemm.c) on CPUs only: the GPU searches keep the powers of two they were
         * measured with (a 60-s H200 run builds a few GEMM candidates, 4-13 s each). */
        const int kind = p->ladder == OCX__LADDER_POW2_3 && gpu ? OCX__LADDER_POW2 : p->ladder;
        if (kind == OCX__LADDER_POW2 || (kind == OCX__LADDER_ALL && p->max - p->min > MAX_LADDER - 1))
            for (long v = p->min; v <= p->max && n < MAX_LADDER; v *= 2) sp->ladder[i][n++] = (int)v;
        else
            for (int v = p->min; v <= p->max && n < MAX_LADDER; v++)
                if (ocx__on_ladder(kind, v)) sp->ladder[i][n++] = v;
        sp->nladder[i] = n;
    }
}

static int ladder_pos(const space *sp, unsigned i, int v)
{
    for (int j = 0; j < sp->nladder[i]; j++)
        if (sp->ladder[i][j] == v) return j;
    return -1;
}

/* The position on parameter i's ladder of one step (d = 1 up, -1 down) from v: the next rung, or
 * (doubling) v times or over 2, as a tile and its work-items step together; -1 where there is none. */
static int ladder_step(const space *sp, unsigned i, int v, int d, int doubling)
{
    int pos = ladder_pos(sp, i, v);
    if (pos < 0) return -1;
    if (doubling) return d > 0 ? ladder_pos(sp, i, 2 * v) : v % 2 ? -1 : ladder_pos(sp, i, v / 2);
    return pos + d >= 0 && pos + d < sp->nladder[i] ? pos + d : -1;
}

/* On CPUs random draws stay within NEAR steps of the start on each ladder. A CPU's budget buys few
 * candidates (PoCL builds a program in about a second a core), and most of each ladder is far
 * from what runs well there: on the 2-core EPYC, reduce candidates drawn from whole ladders (work-
 * groups of up to 1024 items, up to 1024 groups a core) ran mostly at 3-17 GB/s against the
 * defaults' 30-38, and two --quick runs in eight found a better entry (one by 4%). The best seen
 * (groups of 1-2 items, 16-32 groups a core, one stream each: 53-57 GB/s) lies 2-4 steps from the
 * defaults. */
#define NEAR 3

/* A random value from parameter i's ladder: anywhere on it, or (near > 0) within near steps of
 * `from` where it is on the ladder. */
static int draw(const space *sp, unsigned i, int from, int near, uint64_t *rng)
{
    int lo = 0, hi = sp->nladder[i] - 1, pos = near > 0 ? ladder_pos(sp, i, from) : -1;
    if (pos >= 0) {
        lo = pos - near > lo ? pos - near : lo;
        hi = pos + near < hi ? pos + near : hi;
    }
    return sp->ladder[i][lo + (int)(rng_next(rng) % (uint64_t)(hi - lo + 1))];
}

typedef struct cand {
    int v[OCX__MAX_PARAMS];
    double rate; /* what run_batch measured, else -1 */
    int built_ok;
    ocx_status build_status;
    char why[200]; /* the builder thread's error, when build_status is not OCX_OK */
} cand;

typedef struct tuner {
    ocx_context *ctx;
    const ocx_tune_options *opt;
    const tuning_def *def;
    ocx__tune_case *tc;
    ocx_dtype dtype;
    const char *size_class;
    int visited[MAX_VISITED][OCX__MAX_PARAMS];
    int nvisited;
    int best[OCX__MAX_PARAMS];
    int searched[OCX__MAX_PARAMS]; /* the entry's searched parameters (space_init), for report() */
    unsigned out_of_memory;        /* candidates whose run failed for want of memory (evaluate) */
    char memory_why[256];          /* the last such failure's message */
    double best_rate, default_rate;
    int top[CONFIRM_TOP][OCX__MAX_PARAMS]; /* the fastest candidates measured, fastest first */
    double top_rate[CONFIRM_TOP];
    int ntop;
    unsigned tried, failed;
    double t0, deadline;
    double end; /* the whole run's: the entry's first candidate may run until then (run_batch) */
    /* Seconds so far in this entry: per candidate built (a batch's wall time / the candidates it
     * compiled, counted in programs) and per candidate evaluated; a batch holds only as many
     * candidates as these say fit before the deadline. */
    double build_s, eval_s;
    double build_max; /* the highest per-candidate cost of any batch so far in this entry */
    double start_s;   /* seconds the start's measurement took: what confirm() prices a measurement at */
    unsigned programs; /* programs a candidate builds: as many as the entry's first compiled one */
    int out_of_time; /* not even one more candidate fits */
    int compiled;    /* this entry has compiled a program of its own (its build cost is measured; on a
                      * GPU, a candidate beyond the start batch) */
    int in_start;    /* the start batch (the defaults, the parameters in force) is being run */
    ocx_tune_progress progress;
} tuner;

static int seen(tuner *t, const int *v)
{
    for (int i = 0; i < t->nvisited; i++)
        if (memcmp(t->visited[i], v, sizeof(int) * OCX__MAX_PARAMS) == 0) return 1;
    return 0;
}

static void mark(tuner *t, const int *v)
{
    if (t->nvisited < MAX_VISITED) memcpy(t->visited[t->nvisited++], v, sizeof(int) * OCX__MAX_PARAMS);
}

static int interrupted(const tuner *t) { return t->opt->stop && *t->opt->stop; }
static int stopped(const tuner *t) { return interrupted(t) || t->out_of_time; }

/* What confirm() prices one of its measurements at: the start's (the candidates it measures run
 * about as fast), else the running mean of the search's, which slow candidates inflate (GEMM on
 * the 2-core Xeon: their 1024^3 runs at 20-40 GFLOP/s, where the start's take 8 ms). */
static double confirm_each(const tuner *t) { return t->start_s > 0 ? t->start_s : t->eval_s > 0 ? t->eval_s : 1; }

/* A running mean of seconds per candidate that follows recent batches. */
static void note_cost(double *mean, double seconds) { *mean = *mean > 0 ? 0.5 * (*mean + seconds) : seconds; }

/* v's searched parameters ("MWG=64 NWG=32 …") into buf: the rest are the start's. */
static void searched_params(const tuner *t, const int *v, char *buf, size_t cap)
{
    *buf = 0;
    for (unsigned i = 0; i < t->def->fam->nparams; i++)
        if (t->searched[i]) ocx__append_define(buf, cap, *buf ? " " : "", t->def->fam->params[i].name, v[i]);
}

/* Reports the run's state; v: the candidate just measured (at rate), else NULL. */
static void report(tuner *t, const char *message, const int *v, double rate)
{
    if (!t->opt->progress) return;
    char params[400] = "";
    if (v) searched_params(t, v, params, sizeof params);
    t->progress.candidate = v ? params : NULL;
    t->progress.rate = v ? rate : 0;
    t->progress.tried = t->tried;
    t->progress.failed = t->failed;
    t->progress.best_rate = t->best_rate;
    t->progress.default_rate = t->default_rate;
    t->progress.elapsed_s = ocx__now_s() - t->t0;
    t->progress.message = message;
    t->opt->progress(t->opt->user, &t->progress);
}

typedef struct build_job {
    tuner *t;
    cand *c;
    int which[BATCH]; /* the candidates to build */
} build_job;

static void build_one(void *arg, size_t i)
{
    build_job *j = arg;
    cand *c = &j->c[j->which[i]];
    /* As ocx_tune set it for the entry on its own thread (per thread, as the two below). */
    ocx__gemm_nv_suspend(j->t->def->fam == &ocx__family_gemm);
    ocx__launch_build_only(1);
    /* (the calling thread runs build_one too: its setting, ocx_tune's, is put back) */
    const int no_store = ocx__program_no_store(1);
    ocx__params_force(j->t->def->fam, c->v);
    ocx_event ev = NULL;
    c->build_status = j->t->def->run(j->t->ctx, j->t->tc, &ev);
    if (c->build_status != OCX_OK) snprintf(c->why, sizeof c->why, "%s", ocx_last_error());
    ocx_event_release(ev);
    ocx__params_force(NULL, NULL);
    ocx__program_no_store(no_store);
    ocx__launch_build_only(0);
}

/* "candidate NAME=V,… failed to …: error" into buf. */
static void describe_failure(const tuner *t, const int *v, const char *what, const char *error, char *buf, size_t cap)
{
    snprintf(buf, cap, "candidate");
    ocx__params_append(t->def->fam, v, " ", ",", 0, buf, cap);
    size_t o = strlen(buf);
    snprintf(buf + o, cap - o, " %s: %s", what, error);
}

/* Whether two parameter sets build the same programs (host-only parameters aside). */
static int same_build(const ocx__family *fam, const int *a, const int *b)
{
    for (unsigned i = 0; i < fam->nparams; i++)
        if (!fam->params[i].host && a[i] != b[i]) return 0;
    return 1;
}

/* Compiles a batch (at most BATCH) on a few threads before any of it is timed, each kernel once: a
 * candidate that differs from an earlier one of the batch in host-only parameters (the sampler's
 * siblings) shares its build. On two threads at once both would compile it: the program cache does
 * not wait for a build in flight. */
static void build_batch(tuner *t, cand *c, int n)
{
    build_job j = {t, c, {0}};
    int first[BATCH], nb = 0;
    for (int i = 0; i < n; i++) {
        first[i] = i;
        for (int k = 0; k < i && first[i] == i; k++) /* the first match is a kernel's first candidate */
            if (same_build(t->def->fam, c[k].v, c[i].v)) first[i] = k;
        if (first[i] == i) j.which[nb++] = i;
    }
    parallel((size_t)nb, 4, build_one, &j);
    for (int i = 0; i < n; i++)
        if (first[i] != i) {
            c[i].build_status = c[first[i]].build_status;
            memcpy(c[i].why, c[first[i]].why, sizeof c[i].why);
        }
}

/* A marker's end on the device clock (0: not known). */
static cl_ulong marker_end(ocx_event e)
{
    cl_ulong t = 0;
    return e && clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL) == CL_SUCCESS ? t : 0;
}

/* A run's time from b to a on the device clock; timed in segments (tc->nmarks), the time its work
 * takes at the segments' geometric mean rate (time_run), where each segment's end is known. */
static double segmented_ns(const ocx__tune_case *tc, cl_ulong b, cl_ulong a)
{
    double logs = 0, work = 0;
    cl_ulong from = b;
    for (int s = 0; tc->nmarks && s <= tc->nmarks; s++) {
        const cl_ulong to = s < tc->nmarks ? marker_end(tc->marks[s]) : a;
        if (to <= from) return (double)(a - b);
        logs += log(tc->seg_work[s] / (double)(to - from));
        work += tc->seg_work[s];
        from = to;
    }
    return work > 0 ? work / exp(logs / (tc->nmarks + 1)) : (double)(a - b);
}

/* Device time of one run, bracketed by markers; falls back to the run's own event. A run timed in
 * segments (tc->nmarks) counts as the time its whole work takes at the geometric mean of the
 * segments' rates, so that each operation weighs the same whatever its speed: timed as one, a
 * --quick run on the 2-core Xeon chose what ran argmax (the slowest reduction there) 1.2-2.8x
 * faster and the others at 0.70-0.97x at 2^18-2^20 f32.
 * Markers on CPUs too, not the host's clock with the stream finished at each segment's end: on the
 * 2-core Xeon PoCL's markers agree with the host's clock read in their completion callbacks to
 * 0.01 us a call, a finish costing 30-90 us besides; timed so, a --quick run on the H200 machine's
 * 16-core Xeon (PoCL 5.0) measured the defaults of its vector and reduce "all" entries at 24 and
 * 6.6 GB/s and of GEMM at 95 GFLOP/s, where runs timed by markers measure 76, 30 and 330 (the
 * synchronisations, it seems, costing more than the short segments' work). */
static double time_run(tuner *t)
{
    ocx_event before = NULL, after = NULL, ev = NULL;
    double ns = -1;
    if (ocx_stream_marker(t->ctx, NULL, 0, NULL, &before) != OCX_OK) return -1;
    if (t->def->run(t->ctx, t->tc, &ev) == OCX_OK && ocx_stream_marker(t->ctx, NULL, 0, NULL, &after) == OCX_OK &&
        ocx_event_wait(1, &after) == OCX_OK) {
        const cl_ulong b = marker_end(before), a = marker_end(after);
        if (b && a > b)
            ns = segmented_ns(t->tc, b, a);
        else {
            uint64_t e = 0;
            if (ev && ocx_event_elapsed_ns(ev, &e) == OCX_OK && e > 0) ns = (double)e;
        }
    }
    ocx_event_release(before);
    ocx_event_release(after);
    ocx_event_release(ev);
    return ns;
}

/* Verifies, then times one candidate; its rate, or -1 when it failed. */
static double evaluate(tuner *t, const int *v)
{
    ocx__params_force(t->def->fam, v);
    double rate = -1;
    /* Poison the output, run once (warm-up), check every checked element was written correctly. */
    ocx_event ev = NULL;
    ocx_status st = OCX_OK;
    for (int i = 0; i <= t->tc->nsub && st == OCX_OK; i++) /* the case and its other sizes */
        st = poison_outputs(t->ctx, i < t->tc->nsub ? t->tc->sub[i] : t->tc);
    if (st == OCX_OK) st = t->def->run(t->ctx, t->tc, &ev);
    ocx_event_release(ev);
    if (st == OCX_OK) st = ocx_stream_finish(t->ctx, NULL);
    if (st == OCX_OK) st = verify(t->ctx, t->tc);
    if (st == OCX_OK && t->def->check) st = t->def->check(t->ctx, t->tc);
    if (st == OCX_ERR_OUT_OF_MEMORY) {
        t->out_of_memory++;
        snprintf(t->memory_why, sizeof t->memory_why, "%s", ocx_last_error());
    }
    if (st == OCX_OK) {
        int reps = t->opt->quick ? 3 : 5;
        double ns[9];
        int got = 0;
        for (int r = 0; r < reps; r++) {
            double x = time_run(t);
            if (x > 0) ns[got++] = x;
        }
        if (got > 0) rate = segments_work(t->tc) / ocx__median(ns, got); /* bytes/ns = GB/s, flop/ns = GFLOP/s */
    }
    ocx__params_force(NULL, NULL);
    return rate;
}

/* Keeps v among the CONFIRM_TOP fastest candidates of the entry. */
static void note_top(tuner *t, const int *v, double rate)
{
    if (rate <= 0) return;
    int at = t->ntop;
    while (at > 0 && t->top_rate[at - 1] < rate) at--;
    if (at == CONFIRM_TOP) return;
    int last = t->ntop < CONFIRM_TOP ? t->ntop++ : CONFIRM_TOP - 1;
    memmove(t->top[at + 1], t->top[at], (size_t)(last - at) * sizeof t->top[0]);
    memmove(&t->top_rate[at + 1], &t->top_rate[at], (size_t)(last - at) * sizeof t->top_rate[0]);
    memcpy(t->top[at], v, sizeof t->top[0]);
    t->top_rate[at] = rate;
}

/* Builds then evaluates a batch, cut to what the costs seen so far let finish by the deadline (on
 * the H200 one GEMM candidate takes seconds to compile, and a batch of 6 had run 20 s past its
 * entry's share); updates the best. */
static void run_batch(tuner *t, cand *c, int n)
{
    for (int i = 0; i < n; i++) c[i].rate = -1;
    if (n == 0 || stopped(t)) return;
    /* Nothing measured yet and the run has no time left (its set-up, or a first build, ran past the
     * end): nothing more is built either. */
    if (t->tried == 0 && ocx__now_s() >= t->end) {
        t->out_of_time = 1;
        return;
    }
    /* The first batch (the defaults) is what the entry's least cost was set aside for. */
    if (t->tried > 0 && t->build_s + t->eval_s > 0) {
        double fit = (t->deadline - ocx__now_s()) / (t->build_s + t->eval_s);
        if (fit < 1) { /* a candidate that cannot finish would take time from the entries after */
            t->out_of_time = 1;
            return;
        }
        if (fit < n) n = (int)fit;
    }
    /* Until the entry has compiled something itself, one candidate at a time: the family's mean can
     * be far below what its kernels at this size cost (the H200's large GEMM entry built 5 at once
     * and ran 7 s past its share). */
    if (!t->compiled && n > 1) {
        run_batch(t, c, 1);
        run_batch(t, c + 1, n - 1);
        return;
    }
    double b0 = ocx__now_s();
    ocx_context_stats s0 = {0}, s1 = {0};
    ocx_context_get_stats(t->ctx, &s0);
    build_batch(t, c, n);
    ocx_context_get_stats(t->ctx, &s1);
    /* Per candidate compiled: programs found in a cache say nothing of what the next build costs (on
     * the H200 the large GEMM entry's defaults came from the cache, its next candidate then took
     * seconds to compile and ran its entry 8 s past the budget). A candidate builds as many programs
     * as the entry's first compiled one did (a reduction: one per operation timed); priced per
     * program, a PoCL reduce entry had built a batch of six (10 s) past its deadline. */
    if (s1.programs_compiled > s0.programs_compiled) {
        unsigned built = s1.programs_compiled - s0.programs_compiled;
        /* one candidate (above); those of its programs that the disk cache held count too */
        if (!t->compiled) t->programs = built + (unsigned)(s1.programs_from_disk - s0.programs_from_disk);
        double per = (ocx__now_s() - b0) * t->programs / built;
        if (per > t->build_max) t->build_max = per;
        if (t->compiled)
            note_cost(&t->build_s, per);
        else if (t->in_start && is_gpu(t->ctx))
            /* The start's build may raise the price but not lower it: NVIDIA's driver keeps its own
             * cache of what it compiled, so the start (ocx's defaults) may build in 0.1 s where a
             * candidate it has not seen takes 2-14 s. Priced at its start's 0.1 s (2.3 s when cold),
             * the H200's f32 "all" GEMM entry of a 60-s run began a sample that then took 8 s
             * (14 s) to build, past its share, and it was never measured; with two such overruns
             * the "large" entry was left out. So with the parameters in force, which a profile
             * gives and the driver most likely holds. (CPUs: PoCL's builds price the rest as
             * before, and the next batch builds on all threads at once.) */
            t->build_s = fmax(t->build_s, per);
        else
            t->build_s = per, t->compiled = 1; /* the entry's own first measure replaces the family's */
    }
    /* The entry's first candidate (the defaults) runs even when its set-up outlasted the entry's
     * share, as long as the run has time: on the H200 the 2^26 f16 vector set-up took the whole of
     * a 60-s run's share for it, and the entry was left out for want of a 0.3-s measurement. */
    for (int i = 0; i < n && !stopped(t) && ocx__now_s() < (t->tried == 0 ? t->end : t->deadline); i++) {
        /* A failed candidate is reported with its parameters and the error (--verbose prints it). */
        char why[400];
        if (c[i].build_status != OCX_OK) {
            t->tried++;
            t->failed++;
            describe_failure(t, c[i].v, "failed to build", c[i].why, why, sizeof why);
            report(t, why, c[i].v, -1);
            continue;
        }
        double e0 = ocx__now_s();
        double r = c[i].rate = evaluate(t, c[i].v);
        /* candidates, each once: confirm()'s measurements again of a few are not counted */
        t->tried++;
        t->failed += r < 0;
        const double took = ocx__now_s() - e0;
        note_cost(&t->eval_s, took);
        if (t->in_start && i == 0) t->start_s = took;
        if (r > t->best_rate) {
            t->best_rate = r;
            memcpy(t->best, c[i].v, sizeof t->best);
        }
        note_top(t, c[i].v, r);
        if (r < 0) describe_failure(t, c[i].v, "failed to run or verify", ocx_last_error(), why, sizeof why);
        report(t, r < 0 ? why : NULL, c[i].v, r);
    }
}

static int legal(const tuner *t, const int *v)
{
    return ocx__params_check(t->def->fam, v, &t->ctx->info, t->dtype) == NULL;
}

/* 2. Random samples until `until` (or 2000 draws that were known or illegal). Where the family
 * searches host-only parameters (GROUPS_PER_CU), each draw is followed by one of the same kernel
 * with those drawn again: it builds nothing, where a PoCL reduce candidate builds three programs of
 * 1-1.6 s each (2-core EPYC). */
static void sample(tuner *t, const space *sp, const int *start, double until, uint64_t *rng, int *misses)
{
    const ocx__family *fam = t->def->fam;
    int host_searched = 0, near = !is_gpu(t->ctx) ? NEAR : 0;
    for (unsigned i = 0; i < fam->nparams; i++) host_searched |= sp->searched[i] && fam->params[i].host;
    cand c[BATCH];
    while (!stopped(t) && ocx__now_s() < until && *misses < 2000) {
        int n = 0;
        int sibling = 0; /* this draw keeps the previous one's kernel */
        while (n < BATCH && *misses < 2000) {
            int v[OCX__MAX_PARAMS];
            memcpy(v, sibling ? c[n - 1].v : start, sizeof v);
            for (unsigned i = 0; i < fam->nparams; i++)
                if (sp->searched[i] && sp->nladder[i] > 0 && (!sibling || fam->params[i].host))
                    v[i] = draw(sp, i, start[i], near, rng);
            if (fam->canonical) fam->canonical(v);
            const int was_sibling = sibling;
            sibling = 0;
            if (seen(t, v) || !legal(t, v)) {
                *misses += !was_sibling; /* a kernel whose host settings fold away (vector, GRID=1) */
                continue;
            }
            mark(t, v);
            memcpy(c[n++].v, v, sizeof v);
            sibling = !was_sibling && host_searched;
        }
        run_batch(t, c, n);
    }
}

/* 3. Hill-climbing from `from` (measured at from_rate): single steps of each parameter, then the
 * family's pairs stepped together, to the best neighbour while it improves by more than 1%. */
static void climb(tuner *t, const space *sp, const int *from, double from_rate)
{
    const ocx__family *fam = t->def->fam;
    /* The family's pairs whose parameters are both searched, as indices. */
    unsigned pair[OCX__MAX_PARAMS][2], pairs = 0;
    for (const char *const *p = fam->step_together; p && p[0] && p[1] && pairs < OCX__MAX_PARAMS; p += 2) {
        unsigned a = ocx__param_index(fam, p[0]), b = ocx__param_index(fam, p[1]);
        if (a < fam->nparams && b < fam->nparams && sp->searched[a] && sp->searched[b])
            pair[pairs][0] = a, pair[pairs++][1] = b;
    }
    int cur[OCX__MAX_PARAMS];
    memcpy(cur, from, sizeof cur);
    double cur_rate = from_rate;
    int improved = 1;
    while (improved && !stopped(t) && ocx__now_s() < t->deadline) {
        improved = 0;
        cand nb[4 * OCX__MAX_PARAMS];
        int m = 0;
        for (unsigned s = 0; s < fam->nparams + pairs; s++) {
            /* j: the pair's second, nparams for a single step */
            unsigned i = s < fam->nparams ? s : pair[s - fam->nparams][0];
            unsigned j = s < fam->nparams ? fam->nparams : pair[s - fam->nparams][1];
            if (!sp->searched[i]) continue;
            const int pair_step = j < fam->nparams;
            for (int d = -1; d <= 1; d += 2) {
                int pos = ladder_step(sp, i, cur[i], d, pair_step);
                int pos_j = pair_step ? ladder_step(sp, j, cur[j], d, 1) : 0;
                if (pos < 0 || pos_j < 0) continue;
                int v[OCX__MAX_PARAMS];
                memcpy(v, cur, sizeof v);
                v[i] = sp->ladder[i][pos];
                if (pair_step) v[j] = sp->ladder[j][pos_j];
                if (fam->canonical) fam->canonical(v);
                if (m == (int)(sizeof nb / sizeof *nb) || seen(t, v) || !legal(t, v)) continue;
                mark(t, v);
                memcpy(nb[m++].v, v, sizeof v);
            }
        }
        for (int i = 0; i < m; i += BATCH) run_batch(t, nb + i, m - i < BATCH ? m - i : BATCH);
        int to = -1;
        for (int i = 0; i < m; i++)
            if (nb[i].rate > 0 && nb[i].rate > cur_rate * 1.01 && (to < 0 || nb[i].rate > nb[to].rate)) to = i;
        if (to >= 0) {
            memcpy(cur, nb[to].v, sizeof cur);
            cur_rate = nb[to].rate;
            improved = 1;
        }
    }
}

/* The mirror image of the best (the family's `mirror` pairs swapped: for GEMM the same tiling with
 * M and N exchanged; none where a pair is searched on one side only), climbed from in turn when it runs within
 * MIRROR_NEAR of the best: the climb from the best cannot reach a mirror's neighbourhood through
 * single steps, each slower on its own. On the H200 (f32, 8192^3) the 128x128 tiles on 8x16
 * work-items (16x8 register tiles, 2-wide vectors along N) ran 48.9 TFLOP/s, and every step
 * towards 128x256 tiles on 16x16 work-items (50.6) alone ran slower: 555-s and 580-s searches
 * ended where they started. From them a 300-s search with this climb reached 256x128 tiles on
 * 16x16 work-items (49.4, under the 1% a step must gain); their mirror (128x256, VWM=2 VWN=4) ran
 * 47.0, and the climb from it stepped VWM to 4: the 128x256 tiles, 50.7. */
#define MIRROR_NEAR 0.9
static void climb_mirror(tuner *t, const space *sp)
{
    const ocx__family *fam = t->def->fam;
    if (!fam->mirror || t->best_rate <= 0 || stopped(t) || ocx__now_s() >= t->deadline) return;
    cand c;
    memcpy(c.v, t->best, sizeof c.v);
    int swapped = 0;
    for (const char *const *p = fam->mirror; p[0] && p[1]; p += 2) {
        unsigned a = ocx__param_index(fam, p[0]), b = ocx__param_index(fam, p[1]);
        if (a >= fam->nparams || b >= fam->nparams) continue;
        /* A pair searched on one side only (CPUs: VWN, not VWM) leaves no mirror image; one
         * searched on neither (GEMM "small": the tiled kernel's pairs, which its direct kernel
         * does not read) stays as it is: swapped, the same kernel ran again under another name. */
        if (sp->searched[a] != sp->searched[b]) return;
        if (!sp->searched[a] || c.v[a] == c.v[b]) continue;
        int x = c.v[a];
        c.v[a] = c.v[b], c.v[b] = x;
        swapped = 1;
    }
    if (!swapped) return;
    if (fam->canonical) fam->canonical(c.v);
    if (seen(t, c.v) || !legal(t, c.v)) return;
    mark(t, c.v);
    const double best = t->best_rate;
    run_batch(t, &c, 1);
    if (c.rate >= MIRROR_NEAR * best) climb(t, sp, c.v, c.rate);
}

/* 1b. Seeds: what other devices of this type were tuned to (their profiles in the directories
 * lookups read: an installed ocx's shipped ones, say), the same vendor's first, up to SEEDS (GPUs:
 * one, their builds taking seconds each); a parameter this device's search leaves alone keeps the
 * start's value, and a seed that is then the start, or another seed, is passed over for the next.
 * A cold --quick run on PoCL compiles each reduce candidate for about a second, so its reduce
 * entry measured 10 candidates (2-core AVX-512 EPYC), none better than the defaults, where a
 * longer search found one 1.4-1.5x faster, of the kind the AVX-512 Xeon's profile holds. The
 * defaults' rate stays what confirm() compares with. */
#define SEEDS(gpu) ((gpu) ? 1 : 3)
#define SEEDS_READ 8 /* ranked seeds read, of which the first SEEDS that are new are measured */
static void seeds(tuner *t, const space *sp, const ocx__params *start)
{
    const ocx__family *fam = t->def->fam;
    ocx__seed s[SEEDS_READ];
    const int n = ocx__profile_seeds(t->ctx, fam, t->dtype, t->size_class, s, SEEDS_READ);
    cand c[SEEDS(0)];
    int m = 0;
    char names[SEEDS(0) * (sizeof s[0].from + 2)] = "";
    for (int i = 0; i < n && m < SEEDS(is_gpu(t->ctx)); i++) {
        int v[OCX__MAX_PARAMS];
        memcpy(v, start->v, sizeof v);
        for (unsigned p = 0; p < fam->nparams; p++)
            if (sp->searched[p]) v[p] = s[i].v[p];
        if (fam->canonical) fam->canonical(v);
        if (seen(t, v) || !legal(t, v)) continue;
        mark(t, v);
        memcpy(c[m++].v, v, sizeof v);
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", s[i].from);
    }
    if (m == 0) return;
    char line[sizeof names + 64];
    snprintf(line, sizeof line, "seeds from the profiles of %s", names);
    report(t, line, NULL, 0);
    run_batch(t, c, m);
}

#define SAMPLE_MIN 8
static void search(tuner *t, const ocx__params *start, const ocx__params *current, uint64_t *rng)
{
    space sp;
    space_init(&sp, t->def, is_gpu(t->ctx));
    /* The vector family's NT, which is not searched (vector_search), stays as the start has it in
     * the parameters in force (a profile's) too: on the 2-core Xeon a --quick run measuring "large"
     * at 2^24 (where NT then had no effect) set NT=0, which ran add and copy of 2^26 at 0.70x and
     * 0.59x the defaults (0 of 21 rounds won, tools/profile-ab). */
    ocx__params cur = *current;
    if (t->def->fam == &ocx__family_vector) {
        const unsigned nt = ocx__param_index(t->def->fam, "NT");
        cur.v[nt] = start->v[nt];
    }
    memcpy(t->searched, sp.searched, sizeof t->searched);
    double budget = t->deadline - ocx__now_s();
    /* 1. the defaults (and the parameters in force) */
    cand c[2];
    int n = 0;
    memcpy(c[n++].v, start->v, sizeof c[0].v);
    mark(t, start->v);
    if (memcmp(cur.v, start->v, sizeof start->v) != 0 && legal(t, cur.v)) {
        memcpy(c[n++].v, cur.v, sizeof c[0].v);
        mark(t, cur.v);
    }
    memcpy(t->best, start->v, sizeof t->best);
    t->in_start = 1;
    run_batch(t, c, n);
    t->in_start = 0;
    t->default_rate = t->best_rate;
    seeds(t, &sp, start);

    /* 2 and 3, then again while the entry has time: a climb that converged early (on CPUs, where
     * candidates are cheap) samples half of what is left and climbs from the best again. In --quick
     * runs on the 2-core EPYC the GEMM entry's climb had ended 25 s before its share did. */
    int misses = 0;
    double until = ocx__now_s() + 0.4 * budget, share_end = t->deadline;
    /* GPUs draw random samples only where the entry's share buys SAMPLE_MIN candidates at their
     * price; else the climb alone (from the start, once). Draws from whole ladders are rarely fast
     * and their builds vary the most: on the H200 (f32 GEMM at 8192^3, from the former 128x128
     * tiles at 48.9 TFLOP/s) 37 draws in 200 s ran at most 39.4, and NVIDIA took 41 s to build
     * one (a 64x4 register tile unrolled 32 deep), where the climb's neighbours of the start took
     * 1.3-4.9 s each. In 60-s runs an entry sampling with a share of a few candidates began such
     * builds, ran past its share and left a later entry out (or, once, the run past 100 s). */
    const double price = t->build_s + t->eval_s;
    const int sampling = !is_gpu(t->ctx) || t->deadline - ocx__now_s() >= SAMPLE_MIN * price;
    /* On CPUs every round leaves confirm() time for its rounds (the GEMM "all" entry's first climb
     * on the 2-core Xeon had run to the end of its share, leaving time for 2-4 rounds); on GPUs the
     * later rounds (a 60-s H200 run's entries end their shares in the first climb). */
    const double reserve = fmin(CONFIRM_ROUNDS(is_gpu(t->ctx)) * (CONFIRM_TOP + 1) * confirm_each(t),
                                (share_end - ocx__now_s()) / 3);
    if (!is_gpu(t->ctx)) t->deadline = share_end - reserve;
    while (!stopped(t) && misses < 2000) {
        if (sampling) sample(t, &sp, start->v, until, rng, &misses);
        climb(t, &sp, t->best, t->best_rate);
        climb_mirror(t, &sp);
        if (!sampling) break;
        t->deadline = share_end - reserve;
        double left = t->deadline - ocx__now_s();
        if (left <= 0) break;
        until = ocx__now_s() + 0.5 * left;
    }
    t->deadline = share_end;
    t->out_of_time = 0; /* for the later rounds' deadline; confirm() sizes itself */
}

/* The rounds of `rounds` that each of `candidates` confirmed together must win: as many as a
 * candidate no better than the defaults wins at most one time in 32 * candidates (a sign test;
 * Bonferroni's bound, so that the defaults give way to one no better at most one time in 32 however
 * many are tried: one candidate needs all of up to 8 rounds, then 8 of 9, 10 of 12, 12 of 15; three
 * need all of 7 to 10, then 10 of 11, 13 of 15); rounds + 1 where no count is that rare. Against one
 * time in 32 for each, the 16-core Xeon's GEMM "medium" entry had confirmed 96x16 tiles in 6 of 6
 * rounds at 1.088x the defaults, which tools/profile-ab then ran at 0.997x at 512^3, the size
 * measured (3 of 7 rounds), and 0.880x at 256^3 (0 of 7). */
int ocx__tune_confirm_wins(int rounds, int candidates)
{
    const double alpha = 1.0 / (32.0 * (candidates > 1 ? candidates : 1));
    for (int w = 1; w <= rounds; w++) {
        double tail = 0, c = 1; /* c: rounds choose j */
        for (int j = 0; j <= rounds; j++) {
            if (j >= w) tail += c;
            c = c * (rounds - j) / (j + 1);
        }
        if (ldexp(tail, -rounds) <= alpha) return w;
    }
    return rounds + 1;
}

/* 4. Confirmation: one noisy median can crown a candidate that is no better (the fastest of many
 * noisy measurements is the luckiest as often as the best). Up to CONFIRM_TOP of the fastest
 * candidates, those that measured at least default_rate in the search (the better of the defaults
 * and the parameters in force, which may so be confirmed themselves), are measured again with the
 * defaults, in rounds, the defaults first in every other one; of those that beat the defaults in
 * enough rounds (ocx__tune_confirm_wins), the one with the highest median ratio to the defaults of
 * the same round is kept if that ratio is above CONFIRM_MARGIN (timings on CPUs are noisy; a round
 * measures both within a moment of each other). On the 2-core EPYC, checking the winner alone,
 * GEMM --quick runs whose climbs had found groups of work-items 1.3x faster kept the defaults. */
static void confirm(tuner *t, const ocx__params *start)
{
    if (t->best_rate <= 0 || memcmp(t->best, start->v, sizeof t->best) == 0 || interrupted(t)) return;
    const int gpu = is_gpu(t->ctx);
    int (*cand)[OCX__MAX_PARAMS] = t->top, n = 0, order[CONFIRM_TOP];
    for (int i = 0; i < t->ntop; i++)
        if (memcmp(cand[i], start->v, sizeof cand[i]) != 0 && t->top_rate[i] >= t->default_rate) order[n++] = i;
    if (n == 0) return;
    /* Up to CONFIRM_MAX rounds, as many as the entry's share still holds (at least 1); where
     * one round of them all does not fit, fewer candidates (at least the fastest: a 60-s H200 run
     * ends its entries' shares in the climb). */
    double each = confirm_each(t), left = t->deadline - ocx__now_s();
    if (left < (n + 1) * each) n = left / each - 1 > 1 ? (int)(left / each) - 1 : 1;
    /* Rounds while the next, priced at the mean of those run, still fits. */
    double got[CONFIRM_TOP][CONFIRM_MAX(0)], base[CONFIRM_MAX(0)]; /* CPUs' rounds: the most */
    const double t0 = ocx__now_s();
    int rounds = 0;
    do {
        const int r = rounds++;
        if (r % 2) base[r] = evaluate(t, start->v);
        for (int i = 0; i < n; i++) got[i][r] = evaluate(t, cand[order[i]]);
        if (r % 2 == 0) base[r] = evaluate(t, start->v);
        if (interrupted(t)) return; /* the entry is left out (ocx_tune) */
    } while (rounds < CONFIRM_MAX(gpu) && ocx__now_s() + (ocx__now_s() - t0) / rounds <= t->deadline);
    /* A candidate counts only if it ran in every round and beat the defaults in enough of them; of
     * those, the highest median ratio. (ocx__median sorts in place: the ratios are a copy.) */
    /* Rounds too few for any count of wins to be rare enough keep the defaults (on CPUs 5 for one
     * candidate, 7 for three: every one of 4 happens one time in 16 by chance; a --budget 25 run
     * kept a "large" reduce entry after 1 round). GPUs, whose timings move by a few percent, take
     * every one of CONFIRM_MIN_GPU (one time in 8 for a candidate no better, which must then also
     * lead by 2% on the median): in a 60-s H100 run, entries confirmed in 1 round included vector
     * "small" at 1.05x, which then ran 0.93-0.95x the defaults (tools/profile-ab, 9-11 of 11 rounds
     * to the defaults). */
    const int need = gpu ? (rounds > CONFIRM_MIN_GPU ? rounds : CONFIRM_MIN_GPU) : ocx__tune_confirm_wins(rounds, n);
    const int too_few = gpu ? rounds < CONFIRM_MIN_GPU : need > rounds;
    double won = -1, won_rate = -1;
    int pick = -1;
    for (int i = 0; i < n; i++) {
        double ratio[CONFIRM_MAX(0)], rate[CONFIRM_MAX(0)];
        int wins = 0, ran = 1;
        for (int r = 0; r < rounds; r++) {
            ran &= got[i][r] > 0 && base[r] > 0;
            wins += got[i][r] > base[r];
            ratio[r] = base[r] > 0 ? got[i][r] / base[r] : 0;
            rate[r] = got[i][r];
        }
        const double m = ocx__median(ratio, rounds), med_rate = ocx__median(rate, rounds);
        char params[400], line[512];
        searched_params(t, cand[order[i]], params, sizeof params);
        snprintf(line, sizeof line, "confirming %s: won %d of %d rounds (%d needed%s), median %.3fx the defaults",
                 params, wins, rounds, need, too_few ? ": the share held too few" : "", m);
        report(t, line, cand[order[i]], med_rate);
        if (ran && !too_few && wins >= need && m > won) won = m, won_rate = med_rate, pick = order[i];
    }
    double was = ocx__median(base, rounds);
    /* nothing confirmed: the defaults, never the search's unconfirmed best */
    if (pick < 0 || won <= CONFIRM_MARGIN(gpu)) {
        memcpy(t->best, start->v, sizeof t->best);
        t->best_rate = was > 0 ? was : t->default_rate; /* <= 0: the entry is left out */
    } else if (won_rate > 0) {
        memcpy(t->best, cand[pick], sizeof t->best);
        t->best_rate = won_rate;
    }
    if (was > 0) t->default_rate = was;
}

/* ---- the profile file ------------------------------------------------------------------------ */

static void date_now(char *date, size_t cap)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *profile_new(const ocx_context *ctx)
{
    char date[64];
    date_now(date, sizeof date);
    const ocx_device_info *d = &ctx->info;
    return json_pack("{s:i, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s}, s:[]}", "schema", 1,
                     "ocx_version", OCX_VERSION_STRING, "date", date, "tool", "ocx-tune " OCX_VERSION_STRING,
                     "device", "vendor", d->vendor, "name", d->name, "normalized_name", d->normalized_name,
                     "type", ocx_device_type_name(d->type), "driver_version", d->driver_version, "compute_units",
                     (int)d->compute_units, "clock_mhz", (int)d->clock_mhz, "fingerprint", d->fingerprint, "entries");
}

static int has_entry(json_t *root, const char *family, const char *dtype, const char *cls)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(root, "entries"), i, e) {
        json_t *f = json_object_get(e, "family"), *d = json_object_get(e, "dtype"), *c = json_object_get(e, "size_class");
        if (json_is_string(f) && json_is_string(d) && json_is_string(c) && !strcmp(json_string_value(f), family) &&
            !strcmp(json_string_value(d), dtype) && !strcmp(json_string_value(c), cls))
            return 1;
    }
    return 0;
}

static void add_entry(json_t *root, const tuner *t)
{
    json_t *params = json_object();
    for (unsigned i = 0; i < t->def->fam->nparams; i++)
        json_object_set_new(params, t->def->fam->params[i].name, json_integer(t->best[i]));
    json_array_append_new(json_object_get(root, "entries"),
                          json_pack("{s:s, s:s, s:s, s:o, s:f, s:s}", "family", t->def->family, "dtype",
                                    ocx_dtype_name(t->dtype), "size_class", t->size_class, "params", params, "rate",
                                    t->best_rate > 0 ? t->best_rate : 0.0, "unit", t->def->unit));
}

/* The file a profile written to `path` replaces: a symbolic link's target (the link stays), which,
 * like path itself, must be a regular file or absent, in a directory we may write. Checked before
 * tuning too, so that a bad path costs no tuning (and nothing but a regular file is replaced: a
 * link or /dev/null was renamed over). */
static ocx_status out_target(const char *path, char *to, size_t cap)
{
    struct stat sb;
    OCX__FAIL_IF(!*path, OCX_ERR_IO, "ocx_tune: the output path is empty");
    snprintf(to, cap, "%s", path);
    /* A chain of links, the last perhaps to a file not made yet: each target taken from its own
     * link's directory where relative. */
    for (int hops = 0; lstat(to, &sb) == 0 && S_ISLNK(sb.st_mode); hops++) {
        char real[PATH_MAX], link[PATH_MAX], from[PATH_MAX], ldir[PATH_MAX];
        OCX__FAIL_IF(hops == 40, OCX_ERR_IO, "ocx_tune: %s: too many links", path);
        /* the kernel's protected_symlinks rule: not another user's link in a sticky, world-writable
         * directory (one in /tmp could point the profile at any file we may write) */
        struct stat ld;
        ocx__parent_dir(to, ldir, sizeof ldir);
        OCX__FAIL_IF(stat(ldir, &ld) == 0 && (ld.st_mode & S_ISVTX) && (ld.st_mode & S_IWOTH) &&
                         sb.st_uid != geteuid() && sb.st_uid != ld.st_uid,
                     OCX_ERR_IO, "ocx_tune: %s: will not follow another user's link in a sticky directory", path);
        if (realpath(to, real)) {
            snprintf(to, cap, "%s", real);
            break;
        }
        const ssize_t n = readlink(to, link, sizeof link - 1);
        OCX__FAIL_IF(n <= 0, OCX_ERR_IO, "ocx_tune: %s: %s", path, strerror(errno));
        link[n] = '\0';
        snprintf(from, sizeof from, "%s", to);
        const char *slash = strrchr(from, '/');
        const int len = link[0] == '/' || !slash ? snprintf(to, cap, "%s", link)
                                                 : snprintf(to, cap, "%.*s/%s", (int)(slash - from), from, link);
        OCX__FAIL_IF(len < 0 || (size_t)len >= cap, OCX_ERR_IO, "ocx_tune: %s: its target's path is too long", path);
    }
    struct stat fb;
    const int exists = stat(to, &fb) == 0;
    if (exists) {
        OCX__FAIL_IF(!S_ISREG(fb.st_mode), OCX_ERR_IO, "ocx_tune: %s is not a regular file", path);
        OCX__FAIL_IF(access(to, W_OK) != 0, OCX_ERR_IO, "ocx_tune: %s is not writable: %s", path, strerror(errno));
    } else {
        OCX__FAIL_IF(errno != ENOENT, OCX_ERR_IO, "ocx_tune: %s: %s", path, strerror(errno));
    }
    char dir[PATH_MAX];
    ocx__parent_dir(to, dir, sizeof dir);
    OCX__FAIL_IF(access(dir, W_OK | X_OK) != 0, OCX_ERR_IO, "ocx_tune: cannot write %s: its directory %s: %s", path,
                 dir, strerror(errno));
    /* access() answers yes to root for any directory (/proc, a read-only or root-squashed mount), so
     * a file is made where profile_write makes its temporary one, and removed; a name already there
     * (planted in a shared directory) is left alone, as the write itself would leave it. */
    char probe[PATH_MAX + 32];
    const int pn = snprintf(probe, sizeof probe, "%s.probe-%ld", to, (long)getpid());
    OCX__FAIL_IF(pn < 0 || (size_t)pn >= sizeof probe, OCX_ERR_IO, "ocx_tune: %s: the path is too long", path);
    const int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    OCX__FAIL_IF(fd < 0 && errno != EEXIST, OCX_ERR_IO, "ocx_tune: cannot write %s: %s", path, strerror(errno));
    if (fd >= 0) {
        close(fd);
        unlink(probe);
    }
    /* a sticky directory (/tmp) lets only the file's or the directory's owner replace the file */
    struct stat db;
    OCX__FAIL_IF(exists && stat(dir, &db) == 0 && (db.st_mode & S_ISVTX) && fb.st_uid != geteuid() &&
                     db.st_uid != geteuid(),
                 OCX_ERR_IO, "ocx_tune: cannot replace %s: another user's file in a sticky directory", path);
    return OCX_OK;
}

/* Writes the profile, dated now (a resumed file too), atomically (temporary file + rename). */
static ocx_status profile_write(json_t *root, const char *path)
{
    char to[PATH_MAX], date[64];
    OCX__FORWARD(out_target(path, to, sizeof to));
    date_now(date, sizeof date);
    json_object_set_new(root, "date", json_string(date));
    const int err = ocx__json_dump_atomic(root, to, JSON_INDENT(2) | JSON_SORT_KEYS);
    OCX__FAIL_IF(err, OCX_ERR_IO, "ocx_tune: cannot write the profile %s: %s", path, strerror(err));
    return OCX_OK;
}

ocx_status ocx_profile_user_path(const ocx_context *ctx, char *path, size_t cap)
{
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF(!path || cap == 0, OCX_ERR_INVALID_ARGUMENT, "ocx_profile_user_path: no room for the path");
    char dir[4096];
    if (!ocx__xdg_dir("XDG_DATA_HOME", ".local/share", "ocx/profiles", dir, sizeof dir))
        return ocx__error(OCX_ERR_IO, "ocx_profile_user_path: neither an absolute XDG_DATA_HOME nor a home directory "
                                      "(or a path too long)");
    return ocx__path_out(path, cap, "ocx_profile_user_path", "%s/%s.json", dir, ctx->info.normalized_name);
}

/* GEMM candidates at the large sizes cost the most to build and run: twice the share of time. */
static int weight_of(const tuning_def *def)
{
    return !strcmp(def->unit, "GFLOP/s") && strcmp(def->size_class, "small") != 0 ? 2 : 1;
}
/* An entry's weight in sharing out the budget. On CPUs every entry weighed the same while a --quick
 * run tuned three: there a GEMM candidate costs the least (2-core EPYC, PoCL: a 768^3 candidate
 * built and ran in under 0.5 s, a reduction's three programs took 1-1.6 s each to build), and the
 * double share had left the reduce entry 2 candidates in 20 s while GEMM's converged with 23 s
 * unused. With the 1-D families' "large" entries (five in a --quick run), an even share left GEMM
 * 17 s, in which four runs on the 2-core Xeon kept the defaults (one with 28 s had found tiles that
 * ran 1.00-1.08x them); the 1-D entries' 14 s still buys the reduce entries 100-140 candidates. */
static int share_weight(const tuning_def *def, int gpu)
{
    return gpu || !strcmp(def->size_class, "all") ? weight_of(def) : 1;
}

/* Seconds an entry takes before its first candidate has a rate (inputs, host reference, first build
 * and run), as seen on the H200: a second for the 1-D families, 1.5 at their large size (2^26
 * elements: 0.25-0.6 s in two 60-s runs since the host's share runs on several threads; it had been
 * 4 s, f16 inputs on one thread, and the 4 s set aside for each of the four left the last one out
 * of a 60-s run in which GEMM's "large" had to build its own start), 6 for a GEMM at 4096^3 and at
 * 512^3 ("medium": its fully unrolled kernels take seconds to compile; 12 s went by before a
 * second candidate had a rate in a 60-s run that had set 3 aside), 12 at 8192^3. An entry whose
 * first candidate an earlier entry has built (prebuilt: "large" starts from the parameters "all"
 * started from, but for NVIDIA's f32, whose "large" tiles are its own) needs no compiler: 3 s for the GEMM set-up at 8192^3 (a 60-s run with 8.7 s left
 * had set 12 aside and left that entry out; four later runs took 1-3 s, and one that had set 4
 * aside left it out with 3.2 s left). On a GPU the "medium" GEMM's first candidate (64x64
 * tiles, no earlier entry builds them) took 10-11 s to compile on a freshly started H200, where
 * the driver's own cache was empty: with 6 set aside, its overrun left "large" out of a 60-s run. */
static double least_cost(const tuning_def *def, int prebuilt, int gpu)
{
    int gemm = weight_of(def) > 1;
    if (!strcmp(def->size_class, "large")) return gemm ? (prebuilt ? 3.0 : 12.0) : 1.5;
    /* the tiled kernel's cold compile on NVIDIA; the tensor-core kernel built in 1-2 s on the H200 */
    if (gemm && gpu && !prebuilt && !strcmp(def->size_class, "medium")) return strcmp(def->family, "gemm") ? 3.0 : 11.0;
    return gemm ? (prebuilt ? 2.0 : 6.0) : 1.0;
}

/* The least a GPU's GEMM build is priced at until the entry has compiled a program itself: the
 * earlier entries' builds can say little of the next kernel's (on the H200 "all" and "medium"
 * built 31 candidates in 17 s; then "large", whose first candidate "all" had built, spent 17 s on
 * three candidates where 7 were left, and a 60-s run took 71; priced at 10 s, a tiled candidate
 * at 8192^3 took about 13 and left the run's last entry out; the tensor-core kernels build in 1-2 s). */
static double cold_build(const tuning_def *def, int gpu)
{
    return !gpu || weight_of(def) == 1 ? 0.0 : def->fam == &ocx__family_gemm ? 14.0 : 10.0;
}

/* --quick tunes the "all" entries; on CPUs also the "large" ones (vector and reduce: GEMM's are
 * tuned on GPUs only), for arrays beyond the caches, whose best parameters differ from the in-cache
 * sizes' (ocx_internal.h). */
static int in_quick(const ocx_context *ctx, const tuning_def *def)
{
    return !strcmp(def->size_class, "all") || (!is_gpu(ctx) && !strcmp(def->size_class, "large"));
}

static int listed(const char *list, const char *word)
{
    if (!list || !*list) return -1; /* no list: everything */
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

/* Each name of a comma-separated list must be one of known[] (NULL-terminated), once; an empty
 * name ("f32,,f16", a trailing comma) is refused too, as ocx-bench refuses its lists' (a list
 * given but naming none, ",", would tune nothing). */
static ocx_status check_list(const char *list, const char *what, const char *const *known)
{
    if (!list || !*list) return OCX_OK;
    unsigned long long seen = 0; /* by index in known (fewer than 64) */
    for (const char *w = list;;) {
        const size_t len = strcspn(w, ",");
        size_t k = 0;
        while (known[k] && (strlen(known[k]) != len || strncmp(known[k], w, len) != 0)) k++;
        if (!known[k]) {
            char all[256] = ""; /* the names it takes, for the message */
            for (const char *const *n = known; *n; n++) {
                const size_t l = strlen(all);
                snprintf(all + l, sizeof all - l, "%s%s", l ? ", " : "", *n);
            }
            if (!len)
                return ocx__error(OCX_ERR_INVALID_ARGUMENT, "ocx_tune: the %s list '%s' has an empty name (%s)", what,
                                  list, all);
            return ocx__error(OCX_ERR_INVALID_ARGUMENT, "ocx_tune: no %s '%.*s' (%s)", what, (int)len, w, all);
        }
        OCX__FAIL_IF(seen & 1ull << k, OCX_ERR_INVALID_ARGUMENT, "ocx_tune: the %s list '%s' names '%s' twice", what,
                     list, known[k]);
        seen |= 1ull << k;
        if (!w[len]) return OCX_OK;
        w += len + 1;
    }
}

/* One entry to tune: a family's tuning (class and search) in one dtype. */
typedef struct todo_entry {
    const tuning_def *def;
    ocx_dtype dt;
} todo_entry;

/* One run at a time per profile file: two runs with --resume on one file had each written the whole
 * file from their own copy, the last without the other's entries (and each had timed its kernels
 * beside the other's). The lock is flock() on ".NAME.lock" beside the file written (`target`, from
 * out_target: a link's target, also where that is not made yet, as a link's own name had given a run
 * that started before the target existed another lock than the runs after it); the file itself is
 * replaced by a rename at every write. unlock_target() removes it; a dead run's lock the kernel
 * releases, and the file stays for the next run. *fd: -1 where the file system takes no locks, or
 * the lock file is another user's that we may not open (a warning: the run goes on unlocked). */
static ocx_status lock_target(const char *path, const char *target, char *lock, size_t cap, int *fd)
{
    *fd = -1;
    const char *slash = strrchr(target, '/');
    const int dirlen = slash ? (int)(slash - target) + 1 : 0;
    const int n = snprintf(lock, cap, "%.*s.%s.lock", dirlen, target, target + dirlen);
    OCX__FAIL_IF(n < 0 || (size_t)n >= cap, OCX_ERR_IO, "ocx_tune: %s: the path is too long", path);
    for (int tries = 0; tries < 8; tries++) {
        /* no link followed (one planted in a shared directory); read-only, enough for flock */
        const int f = open(lock, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
        if (f < 0 && (errno == EACCES || errno == EPERM)) { /* another user's, left by a killed run */
            ocx__warn("ocx_tune: cannot open the lock %s (%s); tuning without the lock", lock, strerror(errno));
            return OCX_OK;
        }
        OCX__FAIL_IF(f < 0, OCX_ERR_IO, "ocx_tune: cannot make the lock %s: %s", lock, strerror(errno));
        /* Ours are empty regular files: anything else there is someone's, which the unlock at the
         * end would have deleted (a user's file, a profile written to that name). */
        struct stat own;
        if (fstat(f, &own) != 0 || !S_ISREG(own.st_mode) || own.st_size != 0) {
            close(f);
            return ocx__error(OCX_ERR_IO, "ocx_tune: %s is there and is not an empty lock file (the lock of %s); "
                              "move it away", lock, path);
        }
        if (flock(f, LOCK_EX | LOCK_NB) != 0) {
            const int e = errno;
            close(f);
            OCX__FAIL_IF(e == EWOULDBLOCK, OCX_ERR_IO,
                         "ocx_tune: another tuning run is writing %s; wait for it to end (two runs at once would "
                         "time their kernels beside each other's, and the last to write drop the other's entries)",
                         path);
            ocx__warn("ocx_tune: cannot lock %s (%s); tuning without the lock", lock, strerror(e));
            return OCX_OK;
        }
        /* still the file at that path: not one that its holder removed after this open */
        struct stat held, sb;
        if (fstat(f, &held) == 0 && stat(lock, &sb) == 0 && held.st_dev == sb.st_dev && held.st_ino == sb.st_ino) {
            *fd = f;
            return OCX_OK;
        }
        close(f);
    }
    return ocx__error(OCX_ERR_IO, "ocx_tune: cannot lock %s: it was replaced eight times", lock);
}

static void unlock_target(int fd, const char *lock)
{
    if (fd < 0) return;
    unlink(lock); /* before the lock goes: a run that opened it since finds it gone (above) */
    close(fd);
}

static ocx_status tune_entries(ocx_context *ctx, const ocx_tune_options *opt, const todo_entry *todo, int ntodo,
                               double t0);

ocx_status ocx_tune(ocx_context *ctx, const ocx_tune_options *opt)
{
    /* The budget runs from here: choosing the entries probes the tensor-core path (mma_applies),
     * which compiled and ran its probe kernel for 3 s on the H200 with the driver's cache off, and a
     * clock started after it had run 60-s runs to 61 s. */
    const double t0 = ocx__now_s();
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF(!opt || !opt->out_path || !*opt->out_path, OCX_ERR_INVALID_ARGUMENT,
                 "ocx_tune: options and out_path are required");
    /* Candidates are timed by profiling events on the default stream: an interop context's queue
     * without profiling had failed every candidate ("has no profiling") for the whole budget. */
    OCX__FAIL_IF(!ctx->stream.profiling, OCX_ERR_UNSUPPORTED,
                 "ocx_tune: the context's queue has no profiling (CL_QUEUE_PROFILING_ENABLE), which tuning times "
                 "candidates by; tune on a context ocx made (ocx_context_create)");
    /* Under simulated limits the entries of the file, measured on the whole device, would be
     * dropped (those the limits refuse) or replaced by the limited device's, in a file every later
     * context of the device reads as its own. */
    OCX__FAIL_IF(opt->resume && ctx->info.limited, OCX_ERR_INVALID_ARGUMENT,
                 "ocx_tune: resume under simulated limits (OCX_LIMIT_WG, OCX_LIMIT_LOCAL_MEM, OCX_DISABLE_FP16/FP64) "
                 "would drop or replace the device's own entries in %s; write another file", opt->out_path);
    OCX__FAIL_IF(!isfinite(opt->budget_s), OCX_ERR_INVALID_ARGUMENT,
                 "ocx_tune: budget_s %g is not a finite number of seconds", opt->budget_s);
    /* Names in the lists that match nothing are a mistake worth reporting. */
    const char *families[8] = {NULL}; /* the library's families (ocx__families), by name */
    for (size_t f = 0; ocx__families[f] && f + 1 < sizeof families / sizeof *families; f++)
        families[f] = ocx__families[f]->name;
    static const char *const tunable[] = {"f32", "f16", "f64", NULL};
    OCX__FORWARD(check_list(opt->families, "kernel family", families));
    OCX__FORWARD(check_list(opt->classes, "size class", ocx__size_classes));
    OCX__FORWARD(check_list(opt->dtypes, "tunable dtype", tunable));
    /* Which entries: families × dtypes (f32 and f16 unless told) × size classes (every class unless
     * told; --quick: in_quick's). */
    static const ocx_dtype dtypes[] = {OCX_F32, OCX_F16, OCX_F64};
    todo_entry todo[3 * NTUNINGS];
    int ntodo = 0;
    for (size_t f = 0; f < NTUNINGS; f++) {
        const char *cls = tunings[f].size_class;
        int lf = listed(opt->families, tunings[f].family), lc = listed(opt->classes, cls);
        if (lf == 0 || lc == 0 || (lc < 0 && (tunings[f].asked_only || (opt->quick && !in_quick(ctx, &tunings[f])))))
            continue;
        if (tunings[f].gpu_only && !is_gpu(ctx)) {
            if (lc > 0)
                ocx__warn("ocx_tune: %s/%s is tuned on GPUs only; on a CPU the \"all\" entry stands for it",
                          tunings[f].family, cls);
            continue;
        }
        for (size_t d = 0; d < 3; d++) {
            int ld = listed(opt->dtypes, ocx_dtype_name(dtypes[d]));
            if (ld == 0 || (ld < 0 && (dtypes[d] == OCX_F64 || (opt->quick && dtypes[d] == OCX_F16)))) continue;
            if (dtypes[d] == OCX_F64 && !ctx->info.has_fp64) continue;
            /* The TF32X3 tiles (tensor-core f32) serve opt-in products: tuned only when --kernels and
             * --dtypes name them (a 60-s run has no time for them, nor for their probe), and not
             * for short_k, which those products leave to the f32 kernels (gemm.c). */
            if (tunings[f].fam == &ocx__family_gemm_mma && dtypes[d] == OCX_F32 &&
                (lf < 0 || ld < 0 || !strcmp(cls, "short_k")))
                continue;
            if (tunings[f].applies && !tunings[f].applies(ctx, dtypes[d])) continue;
            todo[ntodo].def = &tunings[f];
            todo[ntodo++].dt = dtypes[d];
        }
    }
    OCX__FAIL_IF(!ntodo, OCX_ERR_UNSUPPORTED, "ocx_tune: no entry of the families, dtypes and classes asked for "
                 "is tunable on this device (f64 needs cl_khr_fp64, GEMM's large and short_k classes a GPU; medium is "
                 "GEMM's alone, vector and reduce taking their all entry there; gemm_mma "
                 "an NVIDIA GPU whose probe passed, its f32 entries --kernels and --dtypes naming them and a class "
                 "other than short_k)");
    char target[PATH_MAX], lock[PATH_MAX + 8];
    OCX__FORWARD(out_target(opt->out_path, target, sizeof target)); /* before any tuning */
    int fd;
    OCX__FORWARD(lock_target(opt->out_path, target, lock, sizeof lock, &fd));
    const ocx_status st = tune_entries(ctx, opt, todo, ntodo, t0);
    unlock_target(fd, lock);
    return st;
}

/* ocx_tune's entries, in order, under its lock on the output file. */
static ocx_status tune_entries(ocx_context *ctx, const ocx_tune_options *opt, const todo_entry *todo, int ntodo,
                               double t0)
{
    json_t *root = NULL;
    if (opt->resume) {
        /* What contexts would read of the file (warned about otherwise, and those entries tuned
         * again), and only if it was measured on this device with this driver. */
        OCX__FORWARD(ocx__profile_resumable(ctx, opt->out_path, &root));
        json_t *dev = root ? json_object_get(root, "device") : NULL;
        json_t *fp = dev ? json_object_get(dev, "fingerprint") : NULL;
        if (root && (!json_is_string(fp) || strcmp(json_string_value(fp), ctx->info.fingerprint) != 0)) {
            ocx__warn("ocx_tune: %s was measured with another driver (or another such device); starting afresh",
                      opt->out_path);
            json_decref(root);
            root = NULL;
        }
    }
    json_t *fresh = profile_new(ctx);
    OCX__FAIL_IF(!fresh, OCX_ERR_OUT_OF_MEMORY, "ocx_tune: out of host memory");
    if (!root) {
        root = fresh;
    } else { /* the file's header as this run would write it: a resumed file had kept another ocx
                version's name, and device fields edited by hand (ocx-info then called the file stale) */
        static const char *const header[] = {"ocx_version", "tool", "device"};
        for (size_t h = 0; h < sizeof header / sizeof *header; h++)
            json_object_set(root, header[h], json_object_get(fresh, header[h]));
        json_decref(fresh);
    }

    double budget = opt->budget_s > 0 ? opt->budget_s : 60.0;
    /* A margin for the candidate in flight at the deadline and the final write, so that the whole
     * run (setup included) stays inside the budget. */
    const double end = t0 + budget - (budget * 0.05 < 2.0 ? budget * 0.05 : 2.0);
    const uint64_t seed = opt->seed ? (uint64_t)opt->seed : 0x2545f4914f6cdd1dull ^ (uint64_t)(t0 * 1e6);
    ocx_status st = OCX_OK;
    ocx_status skip_st = OCX_OK; /* the last entry skipped (unsupported, out of memory) and why */
    char skip_msg[1024] = "";
    /* Each entry's share: its least cost, plus the time beyond the least costs of every entry still
     * to do shared out by weight, so that the early, cheap entries cannot spend the time a late,
     * costly one needs to start. */
    int remaining = 0, built_by[3 * NTUNINGS], ran[3 * NTUNINGS] = {0}, gpu = is_gpu(ctx);
    /* Per tuning of the same family and search list (GEMM "small" builds the direct kernel,
     * the other GEMM entries the tiled one): the highest per-candidate build cost seen so far. */
    double remaining_least = 0, fam_build[NTUNINGS] = {0};
    ocx__params starts[3 * NTUNINGS];
    for (int i = 0; i < ntodo; i++) {
        built_by[i] = -1;
        starts[i].family = NULL;
        if (has_entry(root, todo[i].def->family, ocx_dtype_name(todo[i].dt), todo[i].def->size_class)) continue;
        /* The earlier entry still to do that starts from the same kernel, if any (before any
         * profile, "large" and "all" both start from the same built-in defaults, but for NVIDIA's f32
         * ones; "small", searching other parameters, runs another kernel). */
        const ocx__family *fam = todo[i].def->fam;
        if (ocx__params_class_default(ctx, fam, todo[i].dt, todo[i].def->size_class, &starts[i]) != OCX_OK)
            starts[i].family = NULL;
        for (int j = 0; j < i && built_by[i] < 0 && starts[i].family; j++)
            if (todo[j].def->fam == fam && todo[j].def->search == todo[i].def->search && todo[j].dt == todo[i].dt &&
                starts[j].family == fam && same_build(fam, starts[i].v, starts[j].v))
                built_by[i] = j;
        remaining += share_weight(todo[i].def, gpu);
        remaining_least += least_cost(todo[i].def, built_by[i] >= 0, gpu);
    }
    for (int i = 0; i < ntodo && st == OCX_OK && !(opt->stop && *opt->stop); i++) {
        const char *dname = ocx_dtype_name(todo[i].dt);
        const char *cls = todo[i].def->size_class;
        if (has_entry(root, todo[i].def->family, dname, cls)) continue; /* resumed */
        int weight = share_weight(todo[i].def, gpu);
        /* An entry starts only when its least cost still fits (so the run ends inside the budget,
         * not after it). */
        remaining_least -= least_cost(todo[i].def, built_by[i] >= 0, gpu);
        double least = least_cost(todo[i].def, built_by[i] >= 0 && ran[built_by[i]], gpu);
        if (ocx__now_s() + least >= end) {
            ocx__warn("ocx_tune: %s/%s/%s: the budget is spent; entry left out (--resume continues)",
                      todo[i].def->family, dname, cls);
            remaining -= weight;
            continue;
        }
        tuner *t = calloc(1, sizeof *t);
        if (!t) {
            st = ocx__error(OCX_ERR_OUT_OF_MEMORY, "ocx_tune: out of host memory");
            break;
        }
        t->ctx = ctx;
        t->opt = opt;
        t->def = todo[i].def;
        t->dtype = todo[i].dt;
        t->size_class = cls;
        t->best_rate = -1;
        t->t0 = t0;
        /* Until this entry has compiled something of its own, its builds cost what the slowest of
         * the earlier entries that search the same kernel did (fam_build), and a GPU's GEMM builds
         * at least cold_build(): kernels differ (NVIDIA compiled the H200's "medium" GEMM kernels in
         * a few seconds and its 64x128 ones in 6-13; NVIDIA's OpenCL compiles one program at a time
         * even from several threads), and "large", priced at medium's mean, started a 10-s build
         * with 6 s left and ran a 60-s run to 67 s. */
        size_t fi = 0;
        while (tunings[fi].fam != t->def->fam || tunings[fi].search != t->def->search) fi++;
        t->build_max = fam_build[fi];
        t->build_s = fmax(fam_build[fi], cold_build(t->def, gpu));
        double spare = end - ocx__now_s() - least - remaining_least;
        double share = least + (spare > 0 ? spare * weight / (remaining > 0 ? remaining : 1) : 0);
        t->deadline = ocx__now_s() + share;
        t->end = end;
        t->progress = (ocx_tune_progress){t->def->family, dname, cls, (size_t)i, (size_t)ntodo, 0, 0, 0, 0,
                                          t->def->unit, 0, budget, NULL};
        report(t, "preparing", NULL, 0);
        /* The portable GEMM family is measured on the portable kernel even where f16 products
         * would take the tensor cores. */
        ocx__gemm_nv_suspend(t->def->fam == &ocx__family_gemm);
        ocx__program_no_store(1); /* candidates stay out of the disk cache */
        ocx__params start, current;
        st = ocx__params_class_default(ctx, t->def->fam, t->dtype, cls, &start);
        if (st == OCX_OK) st = ocx__params_lookup(ctx, t->def->fam, t->dtype, cls, &current);
        if (st == OCX_OK) st = t->def->setup(ctx, t->dtype, cls, opt->quick, &t->tc);
        if (st == OCX_OK) {
            uint64_t rng = seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1)); /* the entry's own */
            if (rng == 0) rng = 1; /* (xorshift stays at 0) */
            search(t, &start, &current, &rng);
            ran[i] = t->tried > 0;
            confirm(t, &start);
            /* An entry that a stop (Ctrl-C) cut short is left for --resume: its best was not
             * confirmed against the defaults, nor were they measured as long as they would be. */
            const int cut = interrupted(t);
            if (cut) {
                ocx__warn("ocx_tune: %s/%s/%s: stopped before it was finished; entry left out (--resume tunes it)",
                          t->def->family, dname, cls);
            } else if (t->best_rate > 0) {
                add_entry(root, t);
                st = profile_write(root, opt->out_path); /* after every entry: Ctrl-C and --resume */
            } else if (t->tried > 0 && t->out_of_memory == t->tried) {
                /* skipped for want of memory, as a set-up that runs out is: the status says so */
                ocx__warn("ocx_tune: %s/%s/%s: every candidate ran out of memory (%s); entry left out",
                          t->def->family, dname, cls, t->memory_why);
                skip_st = OCX_ERR_OUT_OF_MEMORY;
                snprintf(skip_msg, sizeof skip_msg, "%s/%s/%s: every candidate ran out of memory: %s",
                         t->def->family, dname, cls, t->memory_why);
            } else if (t->tried > 0) {
                ocx__warn("ocx_tune: %s/%s/%s: no candidate ran correctly; entry left out", t->def->family, dname,
                          cls);
            } else {
                ocx__warn("ocx_tune: %s/%s/%s: out of budget before the first candidate; entry left out",
                          t->def->family, dname, cls);
            }
            report(t, cut ? "stopped" : "done", NULL, 0);
        } else if (st == OCX_ERR_UNSUPPORTED || st == OCX_ERR_OUT_OF_MEMORY) {
            ocx__warn("ocx_tune: %s/%s/%s skipped: %s", t->def->family, dname, cls, ocx_last_error());
            skip_st = st;
            snprintf(skip_msg, sizeof skip_msg, "%s/%s/%s: %s", t->def->family, dname, cls, ocx_last_error());
            st = OCX_OK;
        }
        ocx__gemm_nv_suspend(0);
        ocx__program_no_store(0);
        if (t->build_max > fam_build[fi]) fam_build[fi] = t->build_max;
        case_free(t->tc);
        free(t);
        remaining -= weight;
    }
    if (st == OCX_OK && json_array_size(json_object_get(root, "entries")) == 0) {
        /* Stopped before any entry was done: nothing to write. An entry skipped for want of memory
         * (say) tells why where nothing was finished, not only in a warning (OCX_QUIET hides). */
        const int stopped = opt->stop && *opt->stop;
        if (!stopped && skip_st != OCX_OK)
            st = ocx__error(skip_st, "ocx_tune: no entry was finished; the last skipped was %s", skip_msg);
        else if (!stopped)
            st = ocx__error(OCX_ERR_UNSUPPORTED, "ocx_tune: no entry was finished in the budget of %.1f s (too short, "
                            "or every candidate failed: see the warnings)", budget);
    }
    /* Each finished entry was written as it finished; a run that finished none leaves the file as
     * it was (a resumed one, stopped before it began, had been rewritten, its date and the entries
     * the library refuses changed). */
    json_decref(root);
    return st;
}
