/* ocx-bench — measures ocx's operations on a device, beside a peer library where one is present.
 *   ocx-bench [demo|vector|transfer|gemm|all] [--quick] [--json] [--reps N] [--device SPEC]
 * "demo" (the default with --quick from quickstart.sh) runs one kernel through the library and checks
 * its result against the host. Times come from OpenCL profiling events: the median of the repetitions
 * after one warm-up run. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_time_ns(bench *b, bench_run_fn fn, void *arg)
{
    double *t = calloc((size_t)b->reps, sizeof *t);
    cl_event ev = NULL;
    if (!t) return -1;
    for (int r = -1; r < b->reps; r++) {
        if (fn(b, arg, &ev) != 0 || !ev) {
            fprintf(stderr, "ocx-bench: run failed: %s\n", ocx_last_error());
            free(t);
            return -1;
        }
        uint64_t ns = 0;
        if (ocx_event_elapsed_ns(ev, &ns) != OCX_OK) {
            fprintf(stderr, "ocx-bench: timing failed: %s\n", ocx_last_error());
            clReleaseEvent(ev);
            free(t);
            return -1;
        }
        clReleaseEvent(ev);
        if (r >= 0) t[r] = (double)ns;
    }
    qsort(t, (size_t)b->reps, sizeof *t, cmp_double);
    double med = b->reps % 2 ? t[b->reps / 2] : 0.5 * (t[b->reps / 2 - 1] + t[b->reps / 2]);
    free(t);
    return med;
}

void bench_header(bench *b, const char *title)
{
    if (b->json) return;
    printf("\n%s\n", title);
    printf("%-8s %-10s %-5s %12s %11s %10s %10s %9s %-10s %11s %7s\n", "group", "op", "dtype", "size", "time[us]",
           "GB/s", "GFLOP/s", "%roof", "peer", "peer[us]", "ours/x");
}

void bench_row(bench *b, const char *group, const char *op, const char *dtype, const char *size, double ns,
               double bytes, double flops, const char *peer, double peer_ns)
{
    double gbps = bytes > 0 && ns > 0 ? bytes / ns : 0;
    double gflops = flops > 0 && ns > 0 ? flops / ns : 0;
    double roof = bytes > 0 && b->copy_gbps > 0 ? 100.0 * gbps / b->copy_gbps : 0;
    double ratio = peer_ns > 0 && ns > 0 ? peer_ns / ns : 0;
    if (b->json) {
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f}", "group", group, "op", op, "dtype", dtype,
                              "size", size, "time_us", ns / 1e3, "gb_per_s", gbps, "gflop_per_s", gflops);
        if (roof > 0) json_object_set_new(o, "percent_of_copy_bandwidth", json_real(roof));
        if (peer && peer_ns > 0) {
            json_object_set_new(o, "peer", json_string(peer));
            json_object_set_new(o, "peer_time_us", json_real(peer_ns / 1e3));
            json_object_set_new(o, "speedup_vs_peer", json_real(ratio));
        }
        json_array_append_new(b->rows, o);
        return;
    }
    char g[16] = "-", f[16] = "-", r[16] = "-", pt[16] = "-", ra[16] = "-";
    if (gbps > 0) snprintf(g, sizeof g, "%.1f", gbps);
    if (gflops > 0) snprintf(f, sizeof f, "%.1f", gflops);
    if (roof > 0) snprintf(r, sizeof r, "%.0f%%", roof);
    if (peer_ns > 0) snprintf(pt, sizeof pt, "%.1f", peer_ns / 1e3);
    if (ratio > 0) snprintf(ra, sizeof ra, "%.2f", ratio);
    printf("%-8s %-10s %-5s %12s %11.1f %10s %10s %9s %-10s %11s %7s\n", group, op, dtype, size, ns / 1e3, g, f, r,
           peer && peer_ns > 0 ? peer : "-", pt, ra);
}

void bench_note(bench *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    FILE *out = b->json ? stderr : stdout;
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
}

void bench_random(float *x, size_t n, float lo, float hi, unsigned seed)
{
    uint64_t s = 0x9e3779b97f4a7c15ull ^ seed;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        float u = (float)((s >> 11) * (1.0 / 9007199254740992.0));
        float v = lo + (hi - lo) * u;
        x[i] = v == 0.0f ? 0.5f * (hi - lo) / 1024 + lo : v;
    }
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
    ocx_event ev = NULL;
    double t0 = now_s();
    if (ocx_buffer_create(b->ctx, OCX_F32, n, &bx) || ocx_buffer_create(b->ctx, OCX_F32, n, &by) ||
        ocx_buffer_create(b->ctx, OCX_F32, n, &bz) || ocx_buffer_write(b->ctx, NULL, bx, 0, n, x, 0, NULL, NULL) ||
        ocx_buffer_write(b->ctx, NULL, by, 0, n, y, 0, NULL, NULL) ||
        ocx_add(b->ctx, NULL, n, bx, by, bz, 0, NULL, &ev) ||
        ocx_buffer_read(b->ctx, NULL, bz, 0, n, z, 1, &ev, NULL)) {
        fprintf(stderr, "ocx-bench demo: %s\n", ocx_last_error());
        ocx_event_release(ev);
        goto out;
    }
    double first = now_s() - t0;
    uint64_t ns = 0;
    ocx_event_elapsed_ns(ev, &ns);
    ocx_event_release(ev);
    ocx_context_stats st;
    ocx_context_get_stats(b->ctx, &st);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        if (z[i] != x[i] + y[i]) wrong++;
    bad = wrong != 0;
    bench_note(b, "demo: ocx_add of %zu f32 elements on '%s': %zu wrong, kernel %.1f us (%.1f GB/s) — %s", n,
               b->info.name, wrong, ns / 1e3, ns ? 12.0 * n / ns : 0.0, bad ? "FAILED" : "OK");
    bench_note(b, "demo: first result after %.1f ms (uploads, program %s, kernel, read back)", first * 1e3,
               st.programs_from_disk ? "loaded from the binary cache" : st.programs_compiled ? "compiled" : "reused");
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
            "usage: ocx-bench [demo|vector|transfer|gemm|all] [--quick] [--json] [--reps N] [--device SPEC]\n");
    return rc;
}

int main(int argc, char **argv)
{
    bench b = {0};
    const char *what = "all", *spec = NULL;
    b.reps = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            b.json = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            b.quick = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            b.reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
            spec = argv[++i];
        else if (strcmp(argv[i], "--help") == 0)
            return usage(0);
        else if (argv[i][0] != '-')
            what = argv[i];
        else
            return usage(2);
    }
    if (b.reps <= 0) b.reps = b.quick ? 5 : 21;
    if (ocx_context_create(spec, &b.ctx) != OCX_OK) {
        fprintf(stderr, "ocx-bench: %s\n", ocx_last_error());
        return 1;
    }
    ocx_context_device_info(b.ctx, &b.info);
    ocx_context_cl(b.ctx, &b.clctx, NULL);
    b.queue = ocx_stream_cl_queue(ocx_context_stream(b.ctx));
    b.rows = json_array();
    bench_note(&b, "ocx-bench %s on '%s' (%s, %u compute units)", ocx_version_string(), b.info.name,
               b.info.platform_name, b.info.compute_units);

    int rc = 0, all = strcmp(what, "all") == 0;
    if (all || strcmp(what, "demo") == 0) rc |= bench_demo(&b);
    if (all || strcmp(what, "vector") == 0) rc |= bench_vector(&b);
    if (all || strcmp(what, "transfer") == 0) rc |= bench_transfer(&b);
    if (all || strcmp(what, "gemm") == 0) rc |= bench_gemm(&b);
    if (!all && strcmp(what, "demo") != 0 && strcmp(what, "vector") != 0 && strcmp(what, "gemm") != 0 &&
        strcmp(what, "transfer") != 0) {
        fprintf(stderr, "ocx-bench: unknown part '%s'\n", what);
        rc = 2;
    }
    if (b.json) {
        json_t *root = json_pack("{s:s, s:s, s:s, s:f, s:o}", "ocx_version", ocx_version_string(), "device",
                                 b.info.name, "fingerprint", b.info.fingerprint, "copy_gb_per_s", b.copy_gbps,
                                 "results", b.rows);
        json_dumpf(root, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(root);
    } else {
        json_decref(b.rows);
    }
    ocx_context_destroy(b.ctx);
    return rc || b.failures ? 1 : 0;
}
