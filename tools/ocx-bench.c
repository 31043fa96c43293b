/* ocx-bench — measures ocx's operations on a device, beside a peer library where one is present, and
 * places every result on the device's roofline (measured peaks: ocx_measure_peaks, cached).
 *   ocx-bench [PART[,PART…]] [--quick] [--json | --csv] [--plot FILE.svg]
 *             [--refresh-peaks] [--reps N] [--host-clock] [--device SPEC]
 * PART: demo, vector, transfer, gemm, streams, peaks (only the peaks line), all (the default, also
 * with --quick, which quickstart.sh runs). "demo" runs one kernel through the library and checks
 * its result against the host; every other part checks a run of each ocx operation (sampled
 * elements, or the whole reduction, against the host in double) before it times it, and reports no
 * rate for one that is wrong (exit 1). Times: the median of the repetitions after one warm-up run,
 * from OpenCL profiling events for the vector operations (--host-clock: the host's clock over
 * batches of calls, as the reductions), the host's clock for the rest (each part's header says
 * which). --json and --csv print the report at the end (schema: bench_report.c);
 * --plot draws the roofline with every operation that has flops. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "tool.h"

double bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0) return -1;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Device time in ns of one run of fn, from its event; < 0 when it failed (the reason is printed). */
static double time_run(bench *b, bench_run_fn fn, void *arg)
{
    cl_event ev = NULL;
    if (fn(b, arg, &ev) != 0 || !ev) {
        fprintf(stderr, "ocx-bench: run failed: %s\n", ocx_last_error());
        return -1;
    }
    uint64_t ns = 0;
    ocx_status st = ocx_event_elapsed_ns(ev, &ns);
    if (st != OCX_OK) fprintf(stderr, "ocx-bench: timing failed: %s\n", ocx_last_error());
    clReleaseEvent(ev);
    return st == OCX_OK ? (double)ns : -1;
}

double bench_time_ns(bench *b, bench_run_fn fn, void *arg)
{
    double none;
    return bench_time_pair_ns(b, fn, arg, NULL, NULL, &none);
}

double bench_time_pair_ns(bench *b, bench_run_fn fn, void *arg, bench_run_fn peer, void *peer_arg, double *peer_ns)
{
    double *t = calloc(2 * (size_t)b->reps, sizeof *t), med = -1;
    int ok = t != NULL, peer_ok = peer != NULL;
    if (!t) fprintf(stderr, "ocx-bench: out of host memory for %d timings\n", b->reps);
    *peer_ns = 0;
    for (int r = -1; ok && r < b->reps; r++) { /* r = -1: the warm-up runs */
        double x = time_run(b, fn, arg);
        ok = x >= 0;
        if (ok && peer_ok) {
            double y = time_run(b, peer, peer_arg);
            peer_ok = y >= 0;
            if (r >= 0) t[b->reps + r] = y;
        }
        if (r >= 0) t[r] = x;
    }
    if (ok) med = bench_median(t, b->reps);
    if (ok && peer_ok) *peer_ns = bench_median(t + b->reps, b->reps);
    free(t);
    return med;
}

/* ns a call of one batch of `per` calls of fn; < 0 when a call failed (said on stderr). */
static double batch_ns(bench *b, bench_run_fn fn, void *arg, int per)
{
    const double t0 = bench_now_ns();
    for (int i = 0; i < per; i++)
        if (fn(b, arg, NULL)) {
            fprintf(stderr, "ocx-bench: run failed: %s\n", ocx_last_error()); /* as time_run says it */
            return -1;
        }
    if (ocx_stream_finish(b->ctx, NULL) != OCX_OK) {
        fprintf(stderr, "ocx-bench: %s\n", ocx_last_error());
        return -1;
    }
    return (bench_now_ns() - t0) / per;
}

double bench_batch_pair_ns(bench *b, bench_run_fn fn, void *arg, bench_run_fn peer, void *peer_arg, double *peer_ns)
{
    enum { PER = 10, MAX_BATCHES = 7 };
    const int batches = b->quick ? 3 : MAX_BATCHES;
    double t[MAX_BATCHES], tp[MAX_BATCHES];
    int peer_ok = peer != NULL;
    *peer_ns = 0;
    /* warm-up (and program builds) */
    if (batch_ns(b, fn, arg, 1) < 0) return -1;
    if (peer_ok) peer_ok = batch_ns(b, peer, peer_arg, 1) >= 0;
    for (int k = 0; k < batches; k++) {
        if ((t[k] = batch_ns(b, fn, arg, PER)) < 0) return -1;
        if (peer_ok) peer_ok = (tp[k] = batch_ns(b, peer, peer_arg, PER)) >= 0;
    }
    if (peer_ok) *peer_ns = bench_median(tp, batches);
    return bench_median(t, batches);
}

char *bench_env_set(const char *name, const char *value)
{
    const char *was = getenv(name);
    char *saved = was ? strdup(was) : NULL;
    setenv(name, value, 1);
    return saved;
}

void bench_env_restore(const char *name, char *saved)
{
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
    free(saved);
}

int bench_env_sizes(const char *var, int dims, size_t (*list)[3], size_t cap, size_t *n)
{
    *n = 0;
    const char *s = getenv(var);
    if (!s || !*s) return 0;
    for (;;) {
        const char *item = s;
        size_t d[3] = {0, 0, 0};
        int k = 0, ok = 1;
        do { /* each field digits (no sign, no space), above 0, not past size_t */
            if (k) s++;
            char *end = NULL;
            errno = 0;
            unsigned long long v = *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
            ok = v > 0 && errno != ERANGE && v <= SIZE_MAX;
            d[k++] = (size_t)v;
            if (ok) s = end;
        } while (ok && k < dims && *s == 'x');
        if (!ok || (k != 1 && k != 3) || (*s && *s != ',')) {
            fprintf(stderr, "ocx-bench: %s: '%.*s' is not %s\n", var, (int)strcspn(item, ","), item,
                    dims == 3 ? "MxNxK or N (whole numbers above 0)" : "a whole number above 0");
            return 1;
        }
        if (*n == cap) {
            fprintf(stderr, "ocx-bench: %s: more than %zu sizes\n", var, cap);
            return 1;
        }
        list[*n][0] = d[0], list[*n][1] = k == 3 ? d[1] : d[0], list[*n][2] = k == 3 ? d[2] : d[0];
        ++*n;
        if (!*s) return 0;
        s++; /* past the comma: an item must follow */
    }
}

/* Each name known, and listed once: the parts' copies of a list are sized for the known names once
 * each (a list of 13 "f32" had been cut inside its last name, and ran "f16f" as f16). */
int bench_env_names(const char *var, const char *const *known)
{
    const char *s = getenv(var);
    if (!s || !*s) return 0;
    unsigned long long seen = 0; /* by index in known (fewer than 64) */
    for (;;) {
        size_t len = strcspn(s, ","), k = 0;
        while (known[k] && (strlen(known[k]) != len || strncmp(known[k], s, len) != 0)) k++;
        if (!known[k]) {
            fprintf(stderr, "ocx-bench: %s: '%.*s' is none of", var, (int)len, s);
            for (k = 0; known[k]; k++) fprintf(stderr, "%s %s", k ? "," : "", known[k]);
            fputc('\n', stderr);
            return 1;
        }
        if (seen & 1ull << k) {
            fprintf(stderr, "ocx-bench: %s: '%s' is listed twice\n", var, known[k]);
            return 1;
        }
        seen |= 1ull << k;
        if (!s[len]) return 0;
        s += len + 1;
    }
}

int bench_fill(bench *b, ocx_buffer *x, size_t n, unsigned seed, float **host)
{
    float *h = malloc(n * sizeof *h);
    ocx_buffer *s = NULL;
    int rc = -1;
    if (host) *host = NULL;
    if (!h) return -1;
    bench_random(h, n, -1, 1, seed);
    const ocx_dtype dt = ocx_buffer_dtype(x);
    if (dt == OCX_F32) {
        rc = ocx_buffer_write(b->ctx, NULL, x, 0, n, h, 0, NULL, NULL) ? -1 : 0;
    } else if (ocx_buffer_create(b->ctx, OCX_F32, n, &s) == OCX_OK) {
        rc = ocx_buffer_write(b->ctx, NULL, s, 0, n, h, 0, NULL, NULL) || ocx_copy(b->ctx, NULL, n, s, 1, x, 1, 0, NULL, NULL) ||
                     ocx_stream_finish(b->ctx, NULL)
                 ? -1
                 : 0;
    }
    ocx_buffer_destroy(s);
    if (rc == 0 && host) {
        if (dt == OCX_F16) /* the values the device holds */
            for (size_t i = 0; i < n; i++) h[i] = ocx_half_to_float(ocx_half_from_float(h[i]));
        *host = h;
    } else {
        free(h);
    }
    return rc;
}

double bench_read_at(bench *b, const ocx_buffer *x, size_t i)
{
    union {
        float f;
        double d;
        uint16_t h;
        uint32_t u;
    } v;
    if (ocx_buffer_read(b->ctx, NULL, x, i, 1, &v, 0, NULL, NULL) != OCX_OK) return NAN;
    switch (ocx_buffer_dtype(x)) {
    case OCX_F32: return v.f;
    case OCX_F64: return v.d;
    case OCX_F16: return ocx_half_to_float(v.h);
    default: return v.u;
    }
}

int bench_check(bench *b, const char *what, double got, double want, double tol)
{
    if (fabs(got - want) <= tol) return 0; /* (a NaN fails) */
    fprintf(stderr, "ocx-bench: %s: wrong result %.9g, expected %.9g (tolerance %.3g); not timed\n", what, got, want,
            tol);
    b->failures++;
    return 1;
}

uint64_t bench_rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

void bench_random(float *x, size_t n, float lo, float hi, unsigned seed)
{
    uint64_t s = 0x9e3779b97f4a7c15ull ^ seed;
    for (size_t i = 0; i < n; i++) {
        bench_rng(&s);
        float u = (float)((s >> 11) * (1.0 / 9007199254740992.0));
        float v = lo + (hi - lo) * u;
        x[i] = v == 0.0f ? 0.5f * (hi - lo) / 1024 + lo : v;
    }
}

/* One z = x + y on the device, read back into z: *ns the kernel's time. 0, or 1 with the library's
 * message. */
static int demo_add(bench *b, size_t n, ocx_buffer *bx, ocx_buffer *by, ocx_buffer *bz, float *z, uint64_t *ns)
{
    ocx_event ev = NULL;
    int rc = ocx_add(b->ctx, NULL, n, bx, by, bz, 0, NULL, &ev) || ocx_buffer_read(b->ctx, NULL, bz, 0, n, z, 1, &ev, NULL);
    if (rc) fprintf(stderr, "ocx-bench demo: %s\n", ocx_last_error());
    else ocx_event_elapsed_ns(ev, ns);
    ocx_event_release(ev);
    return rc;
}

/* The elements of z that differ from the host's x + y. */
static size_t demo_wrong(size_t n, const float *x, const float *y, const float *z)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        if (z[i] != x[i] + y[i]) wrong++;
    return wrong;
}

/* The demonstration: z = x + y through the library, checked element by element on the host. */
int bench_demo(bench *b)
{
    const size_t n = 1000003; /* prime: no tile or vector width divides it */
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
    ocx_buffer *bx = NULL, *by = NULL, *bz = NULL;
    int bad = 1;
    if (!x || !y || !z) goto out;
    bench_random(x, n, -1, 1, 1);
    bench_random(y, n, -1, 1, 2);
    ocx_context_stats s0;
    ocx_context_get_stats(b->ctx, &s0); /* the demo's own programs: "all" builds the peaks' first */
    double t0 = bench_now_ns() * 1e-9;
    uint64_t ns = 0, again = 0;
    size_t wrong = 0;
    if (ocx_buffer_create(b->ctx, OCX_F32, n, &bx) || ocx_buffer_create(b->ctx, OCX_F32, n, &by) ||
        ocx_buffer_create(b->ctx, OCX_F32, n, &bz) || ocx_buffer_write(b->ctx, NULL, bx, 0, n, x, 0, NULL, NULL) ||
        ocx_buffer_write(b->ctx, NULL, by, 0, n, y, 0, NULL, NULL)) {
        fprintf(stderr, "ocx-bench demo: %s\n", ocx_last_error());
        goto out;
    }
    if (demo_add(b, n, bx, by, bz, z, &ns)) goto out;
    double first = bench_now_ns() * 1e-9 - t0;
    ocx_context_stats st;
    ocx_context_get_stats(b->ctx, &st);
    wrong += demo_wrong(n, x, y, z);
    /* Once more, into a z poisoned with NaN (from the host: the demo builds one program): the first
     * kernel also paid for z's first touch and, on PoCL, a compile for its work-group size. */
    for (size_t i = 0; i < n; i++) z[i] = NAN;
    if (ocx_buffer_write(b->ctx, NULL, bz, 0, n, z, 0, NULL, NULL)) {
        fprintf(stderr, "ocx-bench demo: %s\n", ocx_last_error());
        goto out;
    }
    if (demo_add(b, n, bx, by, bz, z, &again)) goto out;
    wrong += demo_wrong(n, x, y, z);
    bad = wrong != 0;
    const double gbps = again ? 12.0 * n / again : 0.0; /* x and y read, z written */
    bench_note(b, "demo: ocx_add of %zu f32 elements on '%s', twice: %zu of 2 x %zu wrong, kernel %.1f us, then %.1f (%.1f GB/s) — %s",
               n, b->info.name, wrong, n, ns / 1e3, again / 1e3, gbps, bad ? "FAILED" : "OK");
    const char *program = st.programs_from_disk > s0.programs_from_disk   ? "loaded from the binary cache"
                          : st.programs_compiled > s0.programs_compiled ? "compiled"
                                                                         : "reused";
    bench_note(b, "demo: first result after %.1f ms (uploads, program %s, kernel, read back)", first * 1e3, program);
    /* --json: the same as a section of its own (the demo adds no rows of results) */
    json_object_set_new(b->extra, "demo",
                        json_pack("{s:I, s:I, s:b, s:f, s:f, s:f, s:f, s:s}", "elements", (json_int_t)n, "wrong",
                                  (json_int_t)wrong, "ok", !bad, "kernel_us", ns / 1e3, "kernel_again_us", again / 1e3,
                                  "gb_per_s", gbps, "first_result_ms", first * 1e3, "program", program));
out:
    ocx_buffer_destroy(bx);
    ocx_buffer_destroy(by);
    ocx_buffer_destroy(bz);
    free(x);
    free(y);
    free(z);
    return bad;
}

static int usage(int rc)
{
    fprintf(rc ? stderr : stdout,
            "usage: ocx-bench [demo|vector|transfer|gemm|streams|peaks|all] [--quick] [--json | --csv]\n"
            "                 [--plot FILE.svg] [--refresh-peaks] [--reps N] [--host-clock] [--device SPEC]\n"
            "Parts may be joined by commas (vector,gemm). --reps: timed runs a measurement (default 21,\n"
            "--quick 5; wall-clock GEMM timings and transfers take 64 at most; reductions time batches of\n"
            "10 calls, 7 of them, 3 with --quick; streams takes the best of 7 runs, 3 with --quick).\n"
            "--host-clock: the element-wise vector operations timed as the reductions are, each call's\n"
            "enqueue included, not by their kernels' profiling events.\n");
    return rc ? rc : tool_flushed("ocx-bench", "the usage", 0);
}

/* Runs a part of result rows; one that measured nothing (every size too large for the device, the
 * only dtype asked for one it lacks: each said in a note) fails the run, which had exited 0 with no
 * row. */
static int bench_measured(bench *b, const char *part, int (*fn)(bench *))
{
    const size_t before = json_array_size(b->rows);
    int rc = fn(b);
    if (json_array_size(b->rows) == before) {
        fprintf(stderr, "ocx-bench %s: nothing was measured (the notes above say why)\n", part);
        rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    bench b = {0};
    const char *what = "all", *spec = NULL, *plot = NULL;
    int refresh = 0, what_given = 0;
    b.reps = 0;
    for (int i = 1; i < argc; i++) {
        /* an option's value: the next argument, unless it is empty or an option itself ("--plot
         * --json" must not draw into a file named --json) */
        const int has_value = i + 1 < argc && argv[i + 1][0] && strncmp(argv[i + 1], "--", 2) != 0;
        if (strcmp(argv[i], "--json") == 0)
            b.json = 1;
        else if (strcmp(argv[i], "--csv") == 0)
            b.csv = 1;
        else if (strcmp(argv[i], "--plot") == 0 && has_value)
            plot = argv[++i];
        else if (strcmp(argv[i], "--refresh-peaks") == 0)
            refresh = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            b.quick = 1;
        else if (strcmp(argv[i], "--host-clock") == 0)
            b.host_clock = 1;
        else if (strcmp(argv[i], "--reps") == 0 && has_value) {
            char *end = NULL;
            long v = strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end || v < 1 || v > 100000) {
                fprintf(stderr, "ocx-bench: --reps %s: a whole number from 1 to 100000, please\n", argv[i]);
                return 2;
            }
            b.reps = (int)v;
        }
        else if (strcmp(argv[i], "--device") == 0 && has_value)
            spec = argv[++i];
        else if (strcmp(argv[i], "--help") == 0)
            return usage(0);
        else if (argv[i][0] != '-' && what_given) {
            fprintf(stderr, "ocx-bench: '%s' after '%s': name several parts with commas (%s,%s)\n", argv[i], what,
                    what, argv[i]);
            return 2;
        } else if (argv[i][0] != '-' && argv[i][0]) {
            what = argv[i];
            what_given = 1;
        } else {
            fprintf(stderr, "ocx-bench: %s: %s\n", argv[i][0] ? argv[i] : "''",
                    !strcmp(argv[i], "--reps") || !strcmp(argv[i], "--plot") || !strcmp(argv[i], "--device")
                        ? "needs a value"
                        : "unknown option");
            return usage(2);
        }
    }
    if (b.reps <= 0) b.reps = b.quick ? 5 : 21;
    if (b.json && b.csv) {
        fprintf(stderr, "ocx-bench: --json and --csv exclude each other\n");
        return 2;
    }
    /* `what` is one part or several, comma-separated ("vector,streams"). */
    static const char *parts[] = {"all", "demo", "vector", "transfer", "gemm", "streams", "peaks"};
    int want[sizeof parts / sizeof *parts] = {0};
    char list[256];
    const size_t len = strlen(what);
    if (len >= sizeof list || what[0] == ',' || (len && what[len - 1] == ',') || strstr(what, ",,")) {
        fprintf(stderr, "ocx-bench: '%.60s%s' names an empty part or is too long\n", what, len > 60 ? "…" : "");
        return usage(2);
    }
    snprintf(list, sizeof list, "%s", what);
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < sizeof parts / sizeof *parts && strcmp(t, parts[i]) != 0) i++;
        if (i == sizeof parts / sizeof *parts) {
            fprintf(stderr, "ocx-bench: unknown part '%s'\n", t);
            return usage(2);
        }
        want[i] = 1;
    }
    int wanted = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) wanted |= want[i];
    if (!wanted) {
        fprintf(stderr, "ocx-bench: '%s' names no part\n", what);
        return usage(2);
    }
    /* The OCX_BENCH_* lists of the parts to run, before anything is measured. */
    if (((want[0] || want[2]) && bench_vector_env() != 0) || ((want[0] || want[4]) && bench_gemm_env() != 0))
        return 2;
    if (plot && bench_plot_check(plot) != 0) return 1;
    if (ocx_context_create(spec, &b.ctx) != OCX_OK) {
        fprintf(stderr, "ocx-bench: %s\n", ocx_last_error());
        return 1;
    }
    ocx_context_device_info(b.ctx, &b.info);
    ocx_context_cl(b.ctx, &b.clctx, NULL);
    b.queue = ocx_stream_cl_queue(ocx_context_stream(b.ctx));
    b.rows = json_array();
    b.extra = json_object();
    bench_note(&b, "ocx-bench %s on '%s' (%s, %u compute units)", ocx_version_string(), b.info.name,
               b.info.platform_name, b.info.compute_units);
    /* The demo alone reports no rows: it neither needs the peaks nor should it pay for them (or
     * leave their programs and file in the cache). */
    int need_peaks = want[0] || want[2] || want[3] || want[4] || want[5] || want[6] || plot;
    unsigned pflags = (b.quick ? OCX_PEAKS_QUICK : 0) | (refresh ? OCX_PEAKS_REFRESH : 0);
    if (!need_peaks) {
        /* nothing */
    } else if (ocx_measure_peaks(b.ctx, pflags, &b.peaks) == OCX_OK) {
        const ocx_peaks *p = &b.peaks;
        b.have_peaks = 1;
        bench_note(&b, "peaks%s%s: memory %.1f GB/s (copy %.1f), FMA f32 %.1f GFLOP/s%s, host link pinned %.1f/%.1f "
                       "GB/s (h2d/d2h), launch %.1f us",
                   p->quick ? " (quick)" : "", p->from_cache ? " (cached; --refresh-peaks measures again)" : "",
                   p->global_gbps, p->copy_gbps, p->f32_gflops, p->f64_gflops > 0 ? "" : ", no f64", p->h2d_pinned_gbps,
                   p->d2h_pinned_gbps, p->launch_latency_us);
        if (p->f16_gflops > 0 || p->f64_gflops > 0 || p->tc_f16_gflops > 0)
            bench_note(&b, "peaks: FMA f16 %.1f GFLOP/s, f64 %.1f GFLOP/s, tensor cores f16 %.1f GFLOP/s (0: not "
                           "supported)",
                       p->f16_gflops, p->f64_gflops, p->tc_f16_gflops);
    } else {
        bench_note(&b, "ocx-bench: peaks unavailable (%s): no roofline columns", ocx_last_error());
    }

    int rc = 0, all = want[0];
    if (all || want[1]) rc |= bench_demo(&b);
    if (all || want[2]) rc |= bench_measured(&b, "vector", bench_vector);
    if (all || want[3]) rc |= bench_transfer(&b);
    if (all || want[4]) rc |= bench_measured(&b, "gemm", bench_gemm);
    if (all || want[5]) rc |= bench_streams(&b);
    if (want[6] && !b.have_peaks) rc = 1;
    if (b.json) {
        json_t *root = bench_report_json(&b);
        json_dumpf(root, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(root);
    } else if (b.csv) {
        bench_report_csv(&b, stdout);
    }
    if (plot && bench_plot_svg(&b, plot) != 0) rc = 1;
    rc = tool_flushed("ocx-bench", "the report", rc); /* a report that did not reach its file fails */
    json_decref(b.rows);
    json_decref(b.extra);
    ocx_context_destroy(b.ctx);
    return rc || b.failures ? 1 : 0;
}
