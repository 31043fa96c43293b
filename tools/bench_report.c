/* bench_report.c — the result rows of ocx-bench, each placed on the device's roofline, and their
 * outputs: a table as the run goes, or one JSON document / CSV table at the end.
 *
 * JSON document (--json), every key always present:
 *   ocx_version, device, fingerprint   strings
 *   copy_gb_per_s                      number (the `clcopy` row: clEnqueueCopyBuffer at the largest
 *                                      f32 size of `vector`; 0 where that did not run)
 *   vector_clock                       string: how the element-wise `vector` rows were timed,
 *                                      "device" (profiling events) or "host" (--host-clock)
 *   peaks     object: global_gbps, copy_gbps, f32_gflops, f16_gflops, f64_gflops, tc_f16_gflops,
 *             h2d_pageable_gbps, d2h_pageable_gbps, h2d_pinned_gbps, d2h_pinned_gbps,
 *             launch_latency_us, launch_wall_us (numbers), quick, from_cache (booleans); null when
 *             the peaks could not be measured
 *   results   array of rows: group, op, dtype, size (strings); time_us, gb_per_s, gflop_per_s,
 *             bytes, flops (numbers); intensity, bound_gflop_per_s, bound_gb_per_s,
 *             efficiency_percent (number or null: null when the row has no roof); bound ("memory",
 *             "compute" or null); peer (string or null), peer_time_us, ratio_vs_peer (number or null;
 *             ratio = peer time / our time, > 1: ocx is faster)
 *   streams   object or null (the `streams` part: chunks, bytes, serial_fraction, runs[] of
 *             {streams, time_us, speedup, amdahl_bound})
 *   demo      object or null (the `demo` part: elements, wrong (integers; over both runs, of 2 x
 *             elements), ok (boolean), kernel_us (the first add), kernel_again_us (the same add
 *             again, which gb_per_s counts), gb_per_s, first_result_ms (numbers), program
 *             ("compiled", "loaded from the binary cache" or "reused"))
 *   (streams and demo: null also where the part was asked for but could not run; its message is
 *   on stderr, and ocx-bench exits 1)
 * CSV (--csv): one header line, then the rows with the same keys in the same order (empty: null).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const char *csv_keys[] = {"group", "op", "dtype", "size", "time_us", "gb_per_s", "gflop_per_s", "bytes",
                                 "flops", "intensity", "bound_gflop_per_s", "bound_gb_per_s",
                                 "efficiency_percent", "bound", "peer", "peer_time_us", "ratio_vs_peer"};
#define NKEYS (sizeof csv_keys / sizeof *csv_keys)

static ocx_dtype dtype_of(const char *s)
{
    if (strcmp(s, "f16") == 0) return OCX_F16;
    if (strcmp(s, "f64") == 0) return OCX_F64;
    return OCX_F32;
}

/* The bandwidth roof of a row: host transfers are bound by the link (pinned: what staging uses); the
 * streams pipeline moves data both ways, at best at once (duplex copy engines). */
static double row_bandwidth(const bench *b, const char *group, const char *op)
{
    if (strcmp(group, "streams") == 0) return b->peaks.h2d_pinned_gbps + b->peaks.d2h_pinned_gbps;
    if (strcmp(group, "transfer") == 0) {
        if (strncmp(op, "h2d", 3) == 0) return b->peaks.h2d_pinned_gbps;
        if (strncmp(op, "d2h", 3) == 0) return b->peaks.d2h_pinned_gbps;
    }
    return 0; /* the device's global memory bandwidth */
}

static json_t *num_or_null(int have, double v) { return have && isfinite(v) ? json_real(v) : json_null(); }

void bench_header(bench *b, const char *title)
{
    if (b->json || b->csv) return;
    printf("\n%s\n", title);
    printf("%-8s %-10s %-5s %10s %10s %9s %9s %7s %9s %6s %-8s %10s %6s\n", "group", "op", "dtype", "size",
           "time[us]", "GB/s", "GFLOP/s", "AI", "bound", "%bound", "peer", "peer[us]", "ours/x");
}

int bench_roofline(const bench *b, const char *op, const char *dtype, double flops, double bytes, double ns, double bw,
                   ocx_roofline *r)
{
    /* Ops that ran on the tensor cores ("…-tc") take the tensor cores' roof. */
    ocx_peaks pk = b->peaks;
    size_t ol = strlen(op);
    int tc = ol > 3 && strcmp(op + ol - 3, "-tc") == 0;
    if (tc) pk.f16_gflops = pk.tc_f16_gflops;
    return b->have_peaks && ns > 0 && (!tc || pk.tc_f16_gflops > 0) &&
           ocx_roofline_eval(&pk, tc ? OCX_F16 : dtype_of(dtype), flops, bytes, ns, bw, r) == OCX_OK;
}

void bench_row(bench *b, const char *group, const char *op, const char *dtype, const char *size, double ns,
               double bytes, double flops, const char *peer, double peer_ns)
{
    double gbps = bytes > 0 && ns > 0 ? bytes / ns : 0;
    double gflops = flops > 0 && ns > 0 ? flops / ns : 0;
    double ratio = peer_ns > 0 && ns > 0 ? peer_ns / ns : 0;
    ocx_roofline r;
    int roof = bench_roofline(b, op, dtype, flops, bytes, ns, row_bandwidth(b, group, op), &r);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f}", "group", group, "op", op, "dtype", dtype,
                          "size", size, "time_us", ns / 1e3, "gb_per_s", gbps, "gflop_per_s", gflops, "bytes", bytes,
                          "flops", flops);
    json_object_set_new(o, "intensity", num_or_null(roof && r.intensity > 0, r.intensity));
    json_object_set_new(o, "bound_gflop_per_s", num_or_null(roof && r.bound_gflops > 0, r.bound_gflops));
    json_object_set_new(o, "bound_gb_per_s", num_or_null(roof && r.bound_gbps > 0, r.bound_gbps));
    json_object_set_new(o, "efficiency_percent", num_or_null(roof, 100.0 * r.efficiency));
    json_object_set_new(o, "bound", roof ? json_string(r.memory_bound ? "memory" : "compute") : json_null());
    int has_peer = peer && peer_ns > 0;
    json_object_set_new(o, "peer", has_peer ? json_string(peer) : json_null());
    json_object_set_new(o, "peer_time_us", num_or_null(has_peer, peer_ns / 1e3));
    json_object_set_new(o, "ratio_vs_peer", num_or_null(has_peer && ratio > 0, ratio));
    json_array_append_new(b->rows, o);
    if (b->json || b->csv) return;

    char g[16] = "-", f[16] = "-", ai[16] = "-", bd[24] = "-", e[16] = "-", pt[16] = "-", ra[16] = "-";
    if (gbps > 0) snprintf(g, sizeof g, "%.1f", gbps);
    if (gflops > 0) snprintf(f, sizeof f, "%.1f", gflops);
    if (roof) {
        if (r.intensity > 0) snprintf(ai, sizeof ai, "%.3g", r.intensity);
        if (r.bound_gflops > 0)
            snprintf(bd, sizeof bd, "%.4gGF", r.bound_gflops);
        else
            snprintf(bd, sizeof bd, "%.4gGB", r.bound_gbps);
        snprintf(e, sizeof e, "%.0f%%", 100.0 * r.efficiency);
    }
    if (has_peer) snprintf(pt, sizeof pt, "%.1f", peer_ns / 1e3);
    if (ratio > 0) snprintf(ra, sizeof ra, "%.2f", ratio);
    printf("%-8s %-10s %-5s %10s %10.1f %9s %9s %7s %9s %6s %-8s %10s %6s\n", group, op, dtype, size, ns / 1e3, g, f,
           ai, bd, e, has_peer ? peer : "-", pt, ra);
}

int bench_runs_dtype(bench *b, const char *part, ocx_dtype dt)
{
    if (dt != OCX_F64 || b->info.has_fp64) return 1;
    static char noted[256]; /* the parts noted, " part" each */
    char key[64];
    snprintf(key, sizeof key, " %s ", part);
    if (!strstr(noted, key) && strlen(noted) + strlen(key) < sizeof noted) {
        strcat(noted, key);
        bench_note(b, "%s: f64 left out: the device has no cl_khr_fp64", part);
    }
    return 0;
}

void bench_note(bench *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    FILE *out = b->json || b->csv ? stderr : stdout;
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
}

json_t *bench_report_json(bench *b)
{
    json_t *peaks = json_null();
    if (b->have_peaks) {
        const ocx_peaks *p = &b->peaks;
        peaks = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:b}", "global_gbps",
                          p->global_gbps, "copy_gbps", p->copy_gbps, "f32_gflops", p->f32_gflops, "f16_gflops",
                          p->f16_gflops, "f64_gflops", p->f64_gflops, "h2d_pageable_gbps", p->h2d_pageable_gbps,
                          "d2h_pageable_gbps", p->d2h_pageable_gbps, "h2d_pinned_gbps", p->h2d_pinned_gbps,
                          "d2h_pinned_gbps", p->d2h_pinned_gbps, "launch_latency_us", p->launch_latency_us,
                          "launch_wall_us", p->launch_wall_us, "tc_f16_gflops", p->tc_f16_gflops, "quick", p->quick,
                          "from_cache", p->from_cache);
    }
    json_t *streams = json_object_get(b->extra, "streams"), *demo = json_object_get(b->extra, "demo");
    return json_pack("{s:s, s:s, s:s, s:f, s:s, s:o, s:O, s:O, s:O}", "ocx_version", ocx_version_string(), "device",
                     b->info.name, "fingerprint", b->info.fingerprint, "copy_gb_per_s", b->copy_gbps, "vector_clock",
                     b->host_clock ? "host" : "device", "peaks", peaks, "results", b->rows, "streams",
                     streams ? streams : json_null(), "demo", demo ? demo : json_null());
}

static void csv_field(FILE *out, json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (strpbrk(s, ",\"\n")) {
            fputc('"', out);
            for (; *s; s++) {
                if (*s == '"') fputc('"', out);
                fputc(*s, out);
            }
            fputc('"', out);
        } else {
            fputs(s, out);
        }
    } else if (json_is_number(v)) {
        /* whole numbers (bytes, flops, sizes) exactly; rates and times to six digits */
        const double x = json_number_value(v);
        fprintf(out, x == floor(x) && fabs(x) < 0x1p53 ? "%.0f" : "%.6g", x);
    }
}

void bench_report_csv(bench *b, FILE *out)
{
    for (size_t k = 0; k < NKEYS; k++) fprintf(out, "%s%s", k ? "," : "", csv_keys[k]);
    fputc('\n', out);
    size_t i;
    json_t *row;
    json_array_foreach(b->rows, i, row) {
        for (size_t k = 0; k < NKEYS; k++) {
            if (k) fputc(',', out);
            csv_field(out, json_object_get(row, csv_keys[k]));
        }
        fputc('\n', out);
    }
}
