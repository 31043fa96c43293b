/* profile-ab.c — does a profile beat another (or the built-in defaults) on this device? Runs GEMMs,
 * reductions and element-wise operations (f32 unless --f64 or --f16) in two contexts of one
 * process, one under each profile, call batch by call batch
 * in alternating order, and prints for each operation and size the median rates, their ratio and
 * how many rounds each side won.
 *
 * Why not two ocx-bench runs: on a shared 2-core CPU the speed of one configuration moves by up to
 * 2x between processes (doc/performance.md), more than the differences a tuner finds. Within one
 * process, alternating round by round, a slow spell hits both sides; the rounds won then say more
 * than the medians ("defaults defaults" on the 2-core Xeon: 17-29 wins of 41, medians 0.97-1.08x;
 * run that first to see what a machine's noise allows).
 *
 * usage: profile-ab A B [--rounds N] [--gemm N,N,...|none] [--gemm-batch B] [--reduce N,N,...|none]
 *                  [--vector N,N,...|none] [--kernel-time] [--f64|--f16] [--device SPEC]
 *   (--gemm-batch: each GEMM a strided batch of B products, one launch; 1 unless given.
 *   --vector: axpy, add, scale and copy; none unless given. --kernel-time: the element-wise
 *   operations timed as ocx-bench times them, by the device's profiling time of each kernel (a
 *   batch's median call), not by the host's clock over the batch, which on PoCL also counts each
 *   call's enqueue (14-40 us) where that is longer than the kernel. --f64: every operation in f64,
 *   which needs cl_khr_fp64; --f16: every operation on f16 storage (f32 arithmetic, the reductions'
 *   results in f32), which every device runs; f32 unless given.)
 *   (--rounds: odd, 21 unless given; an even N runs N + 1. OCX_<FAMILY>_PARAMS, which would
 *   override both sides alike, is refused.)
 *   A, B: a profile file (any name: it is linked into a directory of its own under the name the
 *   library looks for) or "defaults". Each side sees only its own file: the user and installed
 *   profile directories are replaced by empty ones, so entries the file lacks come from the
 *   built-in defaults. Built by make, not installed.
 */
#include <ocx.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define MAX_SIZES 16

typedef struct side {
    const char *name; /* the argument */
    ocx_context *ctx;
    ocx_buffer *a, *b, *c, *res, *idx;
    unsigned long calls; /* axpy's and scale's calls so far: their factors alternate across batches */
} side;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The median of v[0..n) (the upper of the middle two where n is even); sorts v. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static int fail(const char *what)
{
    fprintf(stderr, "profile-ab: %s: %s\n", what, ocx_last_error());
    return 1;
}

/* The environment under which s->ctx reads its profiles: OCX_PROFILE_DIR holds the file alone (or
 * nothing, for "defaults"), and the user and installed directories are empty. `dir` is a fresh
 * temporary directory; `key` the device's normalised name. */
static int point_at(const side *s, const char *dir, const char *key, char path[PATH_MAX + 64])
{
    char target[PATH_MAX];
    if (strcmp(s->name, "defaults") != 0) {
        if (!realpath(s->name, target)) {
            fprintf(stderr, "profile-ab: %s: %s\n", s->name, strerror(errno));
            return 1;
        }
        snprintf(path, PATH_MAX + 64, "%s/%s.json", dir, key);
        if (symlink(target, path) != 0) {
            fprintf(stderr, "profile-ab: %s: %s\n", path, strerror(errno));
            return 1;
        }
    }
    setenv("OCX_PROFILE_DIR", dir, 1);
    setenv("XDG_DATA_HOME", dir, 1);          /* <dir>/ocx/profiles: absent */
    char none[PATH_MAX];
    snprintf(none, sizeof none, "%s/none", dir);
    setenv("OCX_PROFILE_SYSTEM_DIR", none, 1); /* absent */
    return 0;
}

/* "N,N,…": at most MAX_SIZES numbers from 1 to `most`; 1 (and a message) for anything else. */
static int parse_sizes(const char *opt, const char *arg, size_t most, size_t *out, int *count)
{
    char *end = NULL;
    *count = 0;
    for (const char *p = arg; *p; p = *end ? end + 1 : end) {
        unsigned long long v = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : 0;
        if (v == 0 || v > most || (*end && *end != ',') || *count == MAX_SIZES) {
            fprintf(stderr, "profile-ab: %s '%s': at most %d sizes from 1 to %zu, commas between\n", opt, arg,
                    MAX_SIZES, most);
            return 1;
        }
        out[(*count)++] = (size_t)v;
    }
    return 0;
}

/* The element-wise operations (--vector), after the reductions' codes; and the arrays each moves
 * (bytes: times dt's element size). */
enum { V_AXPY = 100, V_ADD, V_SCALE, V_COPY };
static const char *const vnames[] = {"axpy", "add", "scale", "copy"};
static const double vbytes[] = {3, 3, 2, 2}; /* arrays each moves */
static ocx_dtype dt = OCX_F32; /* every operation's (--f64, --f16) */
static int kernel_time; /* --kernel-time */
static size_t gemm_batch = 1; /* --gemm-batch */
#define MAX_EVENTS 4096

/* One timed batch of `reps` calls of operation `op` (-1: GEMM n^3; V_*: an element-wise operation
 * over n elements; else an ocx_reduce_op over n elements) on side s, to the end of the work. */
static int batch(side *s, int op, size_t n, int reps, double *seconds)
{
    static ocx_event ev[MAX_EVENTS];
    static double ns[MAX_EVENTS];
    const int timed = kernel_time && op >= V_AXPY; /* events of single kernels only */
    if (timed && reps > MAX_EVENTS) reps = MAX_EVENTS;
    double t0 = now_s();
    for (int q = 0; q < reps; q++) {
        ocx_status st;
        ocx_event *e = timed ? &ev[q] : NULL;
        if (op < 0)
            st = ocx_gemm_strided_batched(s->ctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, n, n, n, 1.0, s->a, 0, n,
                                          n * n, s->b, 0, n, n * n, 0.0, s->c, 0, n, n * n, gemm_batch, 0, NULL, NULL);
        /* axpy's alpha and scale's factor alternate call by call, batches included (a batch may
         * be one call), so that c keeps within f16's range and away from its subnormals */
        else if (op == V_AXPY)
            st = ocx_axpy(s->ctx, NULL, n, s->calls++ % 2 ? 0.5 : -0.5, s->a, 1, s->c, 1, 0, NULL, e);
        else if (op == V_ADD)
            st = ocx_add(s->ctx, NULL, n, s->a, s->b, s->c, 0, NULL, e);
        else if (op == V_SCALE)
            st = ocx_scale(s->ctx, NULL, n, s->calls++ % 2 ? 2.0 : 0.5, s->c, 1, 0, NULL, e);
        else if (op == V_COPY)
            st = ocx_copy(s->ctx, NULL, n, s->a, 1, s->c, 1, 0, NULL, e);
        else
            st = ocx_reduce(s->ctx, NULL, (ocx_reduce_op)op, n, s->a, 1, s->b, 1,
                            op >= OCX_REDUCE_ARGMIN ? s->idx : s->res, 0, NULL, NULL);
        if (st != OCX_OK) {
            for (int k = 0; k < q && timed; k++) ocx_event_release(ev[k]);
            return fail(s->name);
        }
    }
    int rc = ocx_stream_finish(s->ctx, NULL) != OCX_OK;
    *seconds = (now_s() - t0) / reps;
    for (int q = 0; q < reps && timed; q++) {
        uint64_t t = 0;
        rc = rc || ocx_event_elapsed_ns(ev[q], &t) != OCX_OK;
        ns[q] = (double)t * 1e-9;
        ocx_event_release(ev[q]);
    }
    if (rc) return fail(s->name);
    if (timed) *seconds = median(ns, reps);
    return 0;
}

/* Rounds of one batch a side, the order alternating; prints the line of this operation and size. */
static int compare(side *sd, int op, size_t n, int rounds)
{
    static const char *const names[] = {"sum", "asum", "dot", "nrm2", "min", "max", "argmin", "argmax"};
    double probe = 0, *t[2] = {calloc((size_t)rounds, sizeof(double)), calloc((size_t)rounds, sizeof(double))};
    int wins = 0, rc = !t[0] || !t[1];
    /* Warm-up (builds, first touches) on both sides, then as many calls a batch as fill ~5 ms. */
    for (int k = 0; !rc && k < 2; k++) rc = batch(&sd[k], op, n, 1, &probe) || batch(&sd[k], op, n, 1, &probe);
    int reps = probe > 0 && probe < 5e-3 ? (int)(5e-3 / probe) + 1 : 1;
    for (int r = 0; !rc && r < rounds; r++) {
        for (int k = 0; !rc && k < 2; k++) {
            int i = (r + k) % 2;
            rc = batch(&sd[i], op, n, reps, &t[i][r]);
        }
        wins += !rc && t[1][r] < t[0][r];
    }
    if (!rc) {
        double rate[2];
        for (int i = 0; i < 2; i++) {
            const double med = median(t[i], rounds), esize = (double)ocx_dtype_size(dt);
            /* GFLOP/s for GEMM; GB/s read for reductions (dot reads two vectors), read and written
             * for the element-wise operations */
            rate[i] = op < 0         ? 2.0 * (double)(n * n * n * gemm_batch) / med * 1e-9
                      : op >= V_AXPY ? vbytes[op - V_AXPY] * esize * (double)n / med * 1e-9
                                     : (op == OCX_REDUCE_DOT ? 2.0 : 1.0) * esize * (double)n / med * 1e-9;
        }
        char what[32];
        if (op < 0 && gemm_batch > 1) snprintf(what, sizeof what, "gemm %zu^3 x%zu", n, gemm_batch);
        else if (op < 0) snprintf(what, sizeof what, "gemm %zu^3", n);
        else if (op >= V_AXPY) snprintf(what, sizeof what, "%s %zu", vnames[op - V_AXPY], n);
        else snprintf(what, sizeof what, "%s %zu", names[op], n);
        printf("%-18s %9.1f %9.1f %-7s %6.3f   %3d of %d\n", what, rate[0], rate[1], op < 0 ? "GFLOP/s" : "GB/s",
               rate[1] / rate[0], wins, rounds);
        fflush(stdout);
    }
    free(t[0]);
    free(t[1]);
    return rc;
}

/* The sides' directories and links, removed on the way out, a signal's too (unlink and rmdir are
 * async-signal-safe): a Ctrl-C had left them behind. */
static char dirs[2][PATH_MAX], links[2][PATH_MAX + 64];
static void remove_sides(void)
{
    for (int k = 0; k < 2; k++) {
        if (links[k][0]) unlink(links[k]);
        if (dirs[k][0]) rmdir(dirs[k]);
    }
}
static void on_signal(int sig)
{
    remove_sides();
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    size_t gemm[MAX_SIZES] = {64, 128, 256, 512, 1024, 2048}, red[MAX_SIZES] = {65536, 1048576, 16777216},
           vec[MAX_SIZES];
    int ngemm = 6, nred = 3, nvec = 0, rounds = 21;
    const char *device = NULL;
    side sd[2] = {{0}};
    int nsides = 0, help = 0;
    const char *bad = NULL; /* the first argument refused, for the message */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--rounds") && v) {
            char *end = NULL;
            long r = strtol(argv[++i], &end, 10);
            rounds = *end || end == v || r < 1 || r > 10001 ? 0 : (int)r | 1; /* odd: one median */
            if (!rounds && !bad) bad = "--rounds takes a whole number from 1 to 10001";
        } else if (!strcmp(a, "--gemm") && v) {
            if (!strcmp(v, "none")) ngemm = 0;
            else if (parse_sizes(a, v, 8192, gemm, &ngemm)) return 2;
            i++;
        } else if (!strcmp(a, "--gemm-batch") && v) {
            char *end = NULL;
            unsigned long long b = strtoull(argv[++i], &end, 10);
            gemm_batch = *end || end == v || b < 1 || b > 65536 ? 0 : (size_t)b;
            if (!gemm_batch && !bad) bad = "--gemm-batch takes a whole number from 1 to 65536";
        } else if (!strcmp(a, "--reduce") && v) {
            if (!strcmp(v, "none")) nred = 0;
            else if (parse_sizes(a, v, (size_t)1 << 28, red, &nred)) return 2;
            i++;
        } else if (!strcmp(a, "--vector") && v) {
            if (!strcmp(v, "none")) nvec = 0;
            else if (parse_sizes(a, v, (size_t)1 << 28, vec, &nvec)) return 2;
            i++;
        } else if (!strcmp(a, "--f64") || !strcmp(a, "--f16")) {
            const ocx_dtype want = !strcmp(a, "--f64") ? OCX_F64 : OCX_F16;
            if (dt != OCX_F32 && dt != want) {
                nsides = 3; /* refused, as an unknown argument is */
                if (!bad) bad = "--f64 and --f16: one dtype at a time";
            }
            dt = want;
        }
        else if (!strcmp(a, "--kernel-time")) kernel_time = 1;
        else if (!strcmp(a, "--device") && v) device = argv[++i];
        else if (!strcmp(a, "--help")) help = 1;
        else if (a[0] != '-' && nsides < 2) sd[nsides++].name = a;
        else {
            nsides = 3;
            if (!bad) bad = a;
        }
    }
    static const char *const overrides[] = {"OCX_GEMM_PARAMS", "OCX_GEMM_MMA_PARAMS", "OCX_REDUCE_PARAMS",
                                            "OCX_VECTOR_PARAMS"};
    for (size_t o = 0; o < sizeof overrides / sizeof *overrides && !help; o++)
        if (getenv(overrides[o]) && *getenv(overrides[o])) {
            fprintf(stderr, "profile-ab: %s is set: it would override both sides alike\n", overrides[o]);
            return 2;
        }
    if (help || nsides != 2 || rounds < 1 || gemm_batch < 1) {
        if (!help && bad) /* say what was refused, as the other tools do */
            fprintf(stderr, "profile-ab: %s%s\n", bad,
                    bad[0] == '-' && bad[1] == '-' && !strchr(bad, ' ') ? ": unknown option, or its value is missing" : "");
        else if (!help)
            fprintf(stderr, "profile-ab: two sides, A and B, are needed\n");
        fprintf(help ? stdout : stderr, "usage: profile-ab A B [--rounds N (odd)] [--gemm N,N,...|none] [--gemm-batch B (1-65536)] "
                        "[--reduce N,N,...|none] "
                        "[--vector N,N,...|none] [--kernel-time] [--f64|--f16] [--device SPEC]\n  A, B: a profile file, or 'defaults'\n");
        return help ? tool_flushed("profile-ab", "the usage", 0) : 2;
    }
    size_t most = 1;
    for (int i = 0; i < ngemm; i++) most = gemm[i] * gemm[i] * gemm_batch > most ? gemm[i] * gemm[i] * gemm_batch : most;
    for (int i = 0; i < nred; i++) most = red[i] > most ? red[i] : most;
    for (int i = 0; i < nvec; i++) most = vec[i] > most ? vec[i] : most;
    double *h = malloc(most * sizeof *h); /* the values in the buffers' dtype (f32, f16: its start) */
    if (!h) return fprintf(stderr, "profile-ab: out of memory\n"), 1;
    float *hf = (float *)h;
    uint16_t *hh = (uint16_t *)h;
    for (size_t i = 0; i < most; i++) { /* non-zero */
        const double v = (double)((i * 2654435761u) % 1000) / 1000.0 - 0.4;
        if (dt == OCX_F64) h[i] = v;
        else if (dt == OCX_F16) hh[i] = ocx_half_from_float((float)v);
        else hf[i] = (float)v;
    }

    const char *tmp = getenv("TMPDIR");
    for (int k = 0; k < 2; k++) {
        snprintf(dirs[k], sizeof dirs[k], "%s/profile-ab.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
        if (!mkdtemp(dirs[k])) {
            fprintf(stderr, "profile-ab: mkdtemp %s: %s\n", dirs[k], strerror(errno));
            dirs[k][0] = '\0';
            remove_sides();
            return 1;
        }
    }
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], on_signal);
    int rc = 0;
    for (int k = 0; !rc && k < 2; k++) {
        side *s = &sd[k];
        ocx_device_info info;
        /* The device's key from a context that has looked nothing up yet; then this side's
         * environment, which its first lookup (the 256^3 GEMM below) reads. */
        rc = ocx_context_create(device, &s->ctx) != OCX_OK || ocx_context_device_info(s->ctx, &info) != OCX_OK
                 ? fail("context")
                 : point_at(s, dirs[k], info.normalized_name, links[k]);
        rc = rc || ((ocx_buffer_create(s->ctx, dt, most, &s->a) || ocx_buffer_create(s->ctx, dt, most, &s->b) ||
                     ocx_buffer_create(s->ctx, dt, most, &s->c) || ocx_buffer_create(s->ctx, dt == OCX_F64 ? OCX_F64 : OCX_F32, 1, &s->res) ||
                     ocx_buffer_create(s->ctx, OCX_U32, 1, &s->idx) ||
                     ocx_buffer_write(s->ctx, NULL, s->a, 0, most, h, 0, NULL, NULL) ||
                     ocx_buffer_write(s->ctx, NULL, s->b, 0, most, h, 0, NULL, NULL)) &&
                    fail("buffers"));
        double t;
        ocx_params_info used;
        const size_t first = most >= 256 * 256 * gemm_batch ? 256 : 1; /* the first lookup reads the profiles */
        rc = rc || batch(s, -1, first, 1, &t) || (ocx_last_params(&used) != OCX_OK && fail("params"));
        ocx_profile_info pi;
        if (!rc && strcmp(s->name, "defaults") != 0 && ocx_context_profile(s->ctx, 0, &pi) != OCX_OK) {
            /* a file the library refused (warned about) had been compared as if it were read */
            fprintf(stderr, "profile-ab: %s: %s is not a profile this version reads for this device (see the "
                            "warning)\n", k ? "B" : "A", s->name);
            rc = 1;
        }
        if (!rc && k == 0) printf("profile-ab on '%s', %s, %d rounds\n", info.name, ocx_dtype_name(dt), rounds);
        if (!rc) printf("%s: %s (a %zu^3 GEMM's parameters: %s)\n", k ? "B" : "A", s->name, first, used.source);
    }
    if (!rc) printf("%-18s %9s %9s %-7s %6s   %s\n", "operation", "A", "B", "unit", "B/A", "rounds B won");
    for (int i = 0; !rc && i < ngemm; i++) rc = compare(sd, -1, gemm[i], rounds);
    static const int ops[] = {OCX_REDUCE_SUM, OCX_REDUCE_ASUM, OCX_REDUCE_DOT, OCX_REDUCE_NRM2, OCX_REDUCE_MAX, OCX_REDUCE_ARGMAX};
    for (int i = 0; !rc && i < nred; i++)
        for (size_t o = 0; !rc && o < sizeof ops / sizeof *ops; o++) rc = compare(sd, ops[o], red[i], rounds);
    for (int i = 0; !rc && i < nvec; i++)
        for (int o = V_AXPY; !rc && o <= V_COPY; o++) rc = compare(sd, o, vec[i], rounds);
    for (int k = 0; k < 2; k++) {
        ocx_buffer_destroy(sd[k].a), ocx_buffer_destroy(sd[k].b), ocx_buffer_destroy(sd[k].c);
        ocx_buffer_destroy(sd[k].res), ocx_buffer_destroy(sd[k].idx);
        if (sd[k].ctx) ocx_context_destroy(sd[k].ctx);
    }
    remove_sides();
    free(h);
    return tool_flushed("profile-ab", "the report", rc); /* a report that did not reach its file fails */
}
