/* check_peaks — measured ceilings and the roofline: the roofline arithmetic against hand-computed
 * cases and every bad input; quick-mode peaks that are positive and plausible, served from the cache
 * file on the second call (counted by the library, not guessed from timing), measured again on
 * refresh and after every kind of bad cache file (one of an older format among them), never cached
 * under OCX_CACHE=0; and a tiny ocx-bench run whose --json report matches its documented schema,
 * whose --csv has the documented columns and whose --plot SVG is well-formed XML with an <svg> root. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ocx_internal.h" /* ocx__gemm_nv_hardware */
#include "peaks_internal.h"
#include "testutil.h"

/* ---- the roofline arithmetic ------------------------------------------------------------------- */

static ocx_peaks hand_peaks(void)
{
    ocx_peaks p;
    memset(&p, 0, sizeof p);
    p.global_gbps = 100;  /* GB/s = bytes per ns */
    p.f32_gflops = 1000;  /* ridge at AI 10 */
    p.f16_gflops = 4000;
    p.f64_gflops = 0;     /* no fp64 */
    return p;
}

#define EQ(a, b) ck_assert_msg(fabs((double)(a) - (double)(b)) <= 1e-12 * fmax(1, fabs((double)(b))), "%s = %.17g, want %.17g", #a, (double)(a), (double)(b))

START_TEST(roofline_memory_bound)
{
    ocx_peaks p = hand_peaks();
    ocx_roofline r;
    /* 2e6 flops over 8e6 bytes (AI 0.25) in 100 us: 20 GFLOP/s, 80 GB/s; roof min(1000, 100*0.25) = 25. */
    ck_ok(ocx_roofline_eval(&p, OCX_F32, 2e6, 8e6, 1e5, 0, &r));
    EQ(r.intensity, 0.25);
    EQ(r.achieved_gflops, 20);
    EQ(r.achieved_gbps, 80);
    EQ(r.peak_gflops, 1000);
    EQ(r.bound_gflops, 25);
    EQ(r.bound_gbps, 100);
    EQ(r.efficiency, 0.8);
    ck_assert_int_eq(r.memory_bound, 1);
}
END_TEST

START_TEST(roofline_compute_bound)
{
    ocx_peaks p = hand_peaks();
    ocx_roofline r;
    /* AI 100 (1e9 flops, 1e7 bytes) in 2 ms: 500 GFLOP/s under min(1000, 10000) = 1000: 50%. */
    ck_ok(ocx_roofline_eval(&p, OCX_F32, 1e9, 1e7, 2e6, 0, &r));
    EQ(r.intensity, 100);
    EQ(r.bound_gflops, 1000);
    EQ(r.bound_gbps, 10);
    EQ(r.efficiency, 0.5);
    ck_assert_int_eq(r.memory_bound, 0);
    /* On the ridge (AI 10) both roofs meet: compute is the bound (not below the slope). */
    ck_ok(ocx_roofline_eval(&p, OCX_F32, 1e7, 1e6, 1e5, 0, &r));
    EQ(r.bound_gflops, 1000);
    ck_assert_int_eq(r.memory_bound, 0);
    /* f16: the larger of the f16 and f32 roofs; AI 100 → min(4000, 10000) = 4000. */
    ck_ok(ocx_roofline_eval(&p, OCX_F16, 1e9, 1e7, 1e6, 0, &r));
    EQ(r.peak_gflops, 4000);
    EQ(r.bound_gflops, 4000);
    EQ(r.efficiency, 0.25);
    /* integers use the f32 roof */
    ck_ok(ocx_roofline_eval(&p, OCX_I32, 1e9, 1e7, 1e6, 0, &r));
    EQ(r.peak_gflops, 1000);
}
END_TEST

START_TEST(roofline_one_roof)
{
    ocx_peaks p = hand_peaks();
    ocx_roofline r;
    /* pure traffic: 4e6 bytes in 50 us = 80 GB/s of 100 */
    ck_ok(ocx_roofline_eval(&p, OCX_F32, 0, 4e6, 5e4, 0, &r));
    EQ(r.intensity, 0);
    EQ(r.bound_gflops, 0);
    EQ(r.bound_gbps, 100);
    EQ(r.efficiency, 0.8);
    ck_assert_int_eq(r.memory_bound, 1);
    /* a link roof given explicitly (host transfer at 12.5 GB/s of 25) */
    ck_ok(ocx_roofline_eval(&p, OCX_F32, 0, 1e6, 8e4, 25, &r));
    EQ(r.bound_gbps, 25);
    EQ(r.efficiency, 0.5);
    /* the explicit roof also moves the slope: AI 1 at 25 GB/s → 25 GFLOP/s */
    ck_ok(ocx_roofline_eval(&p, OCX_F32, 1e6, 1e6, 1e5, 25, &r));
    EQ(r.bound_gflops, 25);
    EQ(r.efficiency, 0.4);
    /* traffic not reported: the compute roof alone */
    ck_ok(ocx_roofline_eval(&p, OCX_F32, 3e8, 0, 1e6, 0, &r));
    EQ(r.intensity, 0);
    EQ(r.bound_gflops, 1000);
    EQ(r.efficiency, 0.3);
    ck_assert_int_eq(r.memory_bound, 0);
}
END_TEST

START_TEST(roofline_bad_input)
{
    ocx_peaks p = hand_peaks(), none;
    memset(&none, 0, sizeof none);
    ocx_roofline r;
    ck_status(ocx_roofline_eval(NULL, OCX_F32, 1, 1, 1, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, OCX_F32, 1, 1, 1, 0, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, OCX_F32, 1, 1, 0, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "time"));
    ck_status(ocx_roofline_eval(&p, OCX_F32, 1, 1, 1, INFINITY, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, OCX_F32, 1, 1, 1, NAN, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "bandwidth"));
    ck_status(ocx_roofline_eval(&p, OCX_F32, 1, 1, -5, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, OCX_F32, -1, 1, 1, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, OCX_F32, 1, NAN, 1, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, OCX_F32, INFINITY, 1, 1, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, OCX_F32, 0, 0, 1, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, (ocx_dtype)99, 1, 1, 1, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    /* f64 on a device without fp64, and peaks never measured: no roof, said so */
    ck_status(ocx_roofline_eval(&p, OCX_F64, 1, 1, 1, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "f64"));
    ck_assert(r.achieved_gflops == 0 && r.achieved_gbps == 0); /* it had kept the achieved rates */
    ck_status(ocx_roofline_eval(&none, OCX_F32, 1, 1, 1, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "bandwidth"));
    /* finite inputs whose rates overflow a double: refused, not an infinite efficiency */
    ck_status(ocx_roofline_eval(&p, OCX_F32, 1e308, 1e6, 1e-3, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "beyond a double's range"));
    ck_assert(r.efficiency == 0);
    ck_status(ocx_roofline_eval(&p, OCX_F32, 0, 1e308, 1e-3, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, OCX_F32, 1e308, 0, 1e-3, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&p, OCX_F32, 1e300, 4.9e-324, 1, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    /* infinite roofs: refused alike, and said so (an infinite compute roof had passed, an infinite
     * bandwidth been blamed on the inputs' range) */
    ocx_peaks inf = p;
    inf.f32_gflops = INFINITY;
    ck_status(ocx_roofline_eval(&inf, OCX_F32, 1e6, 1e6, 1e3, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "infinite"));
    ck_assert(r.achieved_gflops == 0 && r.achieved_gbps == 0); /* zeroed, as every failure leaves it */
    ck_status(ocx_roofline_eval(&inf, OCX_F32, 1e6, 0, 1e3, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    inf = p;
    inf.global_gbps = INFINITY;
    ck_status(ocx_roofline_eval(&inf, OCX_F32, 1e6, 1e6, 1e3, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_roofline_eval(&inf, OCX_F32, 0, 1e6, 1e3, 0, &r), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "infinite"));
    ck_ok(ocx_roofline_eval(&inf, OCX_F32, 1e6, 1e6, 1e3, 50, &r)); /* a finite roof given instead */
}
END_TEST

/* ---- measuring and caching --------------------------------------------------------------------- */

static char dir[4096];

/* A fresh cache directory per test under the suite's private one. */
static void fresh_dir(const char *name)
{
    static char root[2048];
    if (!root[0]) {
        const char *base = getenv("OCX_CACHE_DIR");
        ck_assert_msg(base != NULL, "the test environment sets OCX_CACHE_DIR");
        snprintf(root, sizeof root, "%s", base);
    }
    mkdir(root, 0755);
    snprintf(dir, sizeof dir, "%s/peaks-%s.%d", root, name, (int)getpid());
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    setenv("OCX_CACHE_DIR", dir, 1);
    unsetenv("OCX_CACHE");
}

/* Positive figures in plausible ranges for any device (a CPU through a 10 TB/s GPU), zero exactly
 * where the precision is missing. */
static void check_sane(const ocx_peaks *p)
{
    ck_assert_str_eq(p->fingerprint, tinfo.fingerprint);
    ck_assert_msg(p->global_gbps > 0.1 && p->global_gbps < 1e5, "global %g GB/s", p->global_gbps);
    ck_assert_msg(p->copy_gbps > 0.1 && p->copy_gbps < 1e5, "copy %g GB/s", p->copy_gbps);
    ck_assert_uint_ge(p->global_width, 1);
    ck_assert_uint_le(p->global_width, 16);
    ck_assert_msg(p->f32_gflops > 0.1 && p->f32_gflops < 1e6, "f32 %g GFLOP/s", p->f32_gflops);
    ck_assert_msg(tinfo.has_fp64 ? p->f64_gflops > 0.01 && p->f64_gflops < 1e6 : p->f64_gflops == 0, "f64 %g",
                  p->f64_gflops);
    ck_assert_msg(tinfo.has_fp16 ? p->f16_gflops > 0.01 && p->f16_gflops < 1e7 : p->f16_gflops == 0, "f16 %g",
                  p->f16_gflops);
    unsigned paths = 0;
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    ck_assert_msg((paths & OCX_PATH_NV_TENSOR_CORES) ? p->tc_f16_gflops > 1e3 && p->tc_f16_gflops < 1e7
                                                      : p->tc_f16_gflops == 0,
                  "tensor cores %g GFLOP/s", p->tc_f16_gflops);
    double link[] = {p->h2d_pageable_gbps, p->d2h_pageable_gbps, p->h2d_pinned_gbps, p->d2h_pinned_gbps};
    for (int i = 0; i < 4; i++) ck_assert_msg(link[i] > 0.01 && link[i] < 1e5, "transfer %d: %g GB/s", i, link[i]);
    ck_assert_msg(p->launch_latency_us >= 0 && p->launch_latency_us < 1e5, "latency %g us", p->launch_latency_us);
    ck_assert_msg(p->launch_wall_us > 0 && p->launch_wall_us < 1e6, "wall %g us", p->launch_wall_us);
    ck_assert_msg(p->measure_s > 0, "measure_s %g", p->measure_s);
}

static int same_figures(const ocx_peaks *a, const ocx_peaks *b)
{
    /* the JSON file keeps doubles to 17 digits: equal to a relative 1e-15 */
    double x[] = {a->global_gbps, a->copy_gbps, a->f32_gflops, a->f64_gflops, a->h2d_pinned_gbps, a->launch_latency_us};
    double y[] = {b->global_gbps, b->copy_gbps, b->f32_gflops, b->f64_gflops, b->h2d_pinned_gbps, b->launch_latency_us};
    for (int i = 0; i < 6; i++)
        if (fabs(x[i] - y[i]) > 1e-12 * fabs(y[i])) return 0;
    return a->global_width == b->global_width;
}

static ocx_peaks first; /* the first quick measurement, reused as a reference */

START_TEST(measure_then_cached_then_refresh)
{
    fresh_dir("cached");
    char path[4300];
    ck_ok(ocx_peaks_cache_path(tctx, OCX_PEAKS_QUICK, path, sizeof path));
    ck_assert_ptr_nonnull(strstr(path, dir));
    ck_assert_ptr_nonnull(strstr(path, tinfo.fingerprint));
    ck_assert_int_ne(access(path, F_OK), 0);

    unsigned long n0 = ocx__peaks_measurements();
    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &first));
    ck_assert_uint_eq(ocx__peaks_measurements(), n0 + 1);
    ck_assert_int_eq(first.from_cache, 0);
    ck_assert_int_eq(first.quick, 1);
    check_sane(&first);
    ck_assert_int_eq(access(path, R_OK), 0);

    ocx_peaks again;
    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &again));
    ck_assert_uint_eq(ocx__peaks_measurements(), n0 + 1); /* served from the file */
    ck_assert_int_eq(again.from_cache, 1);
    ck_assert_msg(same_figures(&again, &first), "the cached figures differ from the measured ones");

    /* a full-mode request is not served by the quick file */
    char full[4300];
    ck_ok(ocx_peaks_cache_path(tctx, 0, full, sizeof full));
    ck_assert_str_ne(full, path);

    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK | OCX_PEAKS_REFRESH, &again));
    ck_assert_uint_eq(ocx__peaks_measurements(), n0 + 2);
    ck_assert_int_eq(again.from_cache, 0);
    check_sane(&again);
    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &again)); /* the refreshed result was stored */
    ck_assert_uint_eq(ocx__peaks_measurements(), n0 + 2);
    ck_assert_int_eq(again.from_cache, 1);
}
END_TEST

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* A valid cache file for this device with one change applied (key set to a JSON value). */
static void write_variant(const char *path, const char *key, json_t *value)
{
    json_t *root = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(root);
    if (value)
        json_object_set_new(root, key, value);
    else
        json_object_del(root, key);
    ck_assert_int_eq(json_dump_file(root, path, 0), 0);
    json_decref(root);
}

START_TEST(bad_cache_file_measured_again)
{
    fresh_dir("corrupt");
    char path[4300];
    ck_ok(ocx_peaks_cache_path(tctx, OCX_PEAKS_QUICK, path, sizeof path));
    ocx_peaks p;
    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &p));
    /* each bad file: re-measured (counter), rewritten (the next call is a hit) */
    alarm(300); /* the FIFO (case 8) had made the load wait forever for a writer: fail here instead */
    for (int k = 0; k < 13; k++) {
        switch (k) {
        case 0: write_file(path, "{\"format\": 1, \"fingerprint\": "); break; /* truncated */
        case 1: write_file(path, "\x7f" "ELF garbage\n"); break;
        case 2: write_variant(path, "fingerprint", json_string("0123456789abcdef")); break;
        case 3: write_variant(path, "global_gbps", json_real(-3)); break;
        case 4: write_variant(path, "f32_gflops", NULL); break;
        case 5: write_variant(path, "format", json_integer(1)); break; /* figures of the old definitions */
        /* another tensor-core instruction than OCX_VENDOR_PATHS leaves this device (none here, or
         * wgmma on an H200), and the former format without the key */
        case 6: write_variant(path, "tensor_cores", json_string(ocx__gemm_nv_hardware(tctx) ? "none" : "wgmma")); break;
        case 7: write_variant(path, "tensor_cores", NULL); break;
        case 8: ck_assert_int_eq(unlink(path), 0); ck_assert_int_eq(mkfifo(path, 0644), 0); break;
        /* measured in the other mode, or with capabilities this device (as seen now) lacks or has */
        case 9: write_variant(path, "quick", json_false()); break;
        case 10: write_variant(path, "fp16", json_boolean(!tinfo.has_fp16)); break;
        case 11: write_variant(path, "fp64", json_boolean(!tinfo.has_fp64)); break;
        case 12: write_variant(path, "copy_gbps", json_real(1e30)); break; /* no device's: not a measurement */
        }
        unsigned long n0 = ocx__peaks_measurements();
        ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &p));
        ck_assert_msg(ocx__peaks_measurements() == n0 + 1, "bad file %d was not measured again", k);
        ck_assert_int_eq(p.from_cache, 0);
        check_sane(&p);
        ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &p));
        ck_assert_msg(p.from_cache == 1 && ocx__peaks_measurements() == n0 + 1, "bad file %d was not replaced", k);
    }
    alarm(0);
}
END_TEST

START_TEST(cache_off)
{
    fresh_dir("off");
    setenv("OCX_CACHE", "0", 1);
    char path[4300] = "x";
    ck_ok(ocx_peaks_cache_path(tctx, OCX_PEAKS_QUICK, path, sizeof path));
    ck_assert_str_eq(path, "");
    unsigned long n0 = ocx__peaks_measurements();
    ocx_peaks p;
    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &p));
    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &p));
    ck_assert_uint_eq(ocx__peaks_measurements(), n0 + 2);
    ck_assert_int_eq(p.from_cache, 0);
    unsetenv("OCX_CACHE");
    DIR *d = opendir(dir); /* and nothing was written to the (empty) cache directory */
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        ck_assert_msg(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."), "%s written with the cache off", e->d_name);
    closedir(d);
}
END_TEST

/* An OCX_CACHE_DIR whose parent is missing (a typo) is not created, as the binary cache does not
 * create it: the peaks' file had made the whole path, and the binary cache then wrote there. */
START_TEST(cache_dir_typo_not_made)
{
    fresh_dir("typo");
    char typo[8400];
    snprintf(typo, sizeof typo, "%s/missing/cache", dir);
    setenv("OCX_CACHE_DIR", typo, 1);
    ocx_peaks p;
    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &p)); /* measured; not kept */
    char missing[8400];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    struct stat sb;
    ck_assert_msg(stat(missing, &sb) != 0, "%s was created", missing);
}
END_TEST

/* Under simulated limits the figures are not the device's: none read from its file (a limited run's
 * had been cached as the device's, a 12x slower copy roof for every later run), none written. */
START_TEST(limited_not_cached)
{
    fresh_dir("limited");
    ocx_peaks p;
    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &p)); /* the device's own, cached */
    setenv("OCX_LIMIT_WG", "8", 1);
    ocx_context *lim = NULL;
    ck_ok(ocx_context_create(NULL, &lim));
    unsetenv("OCX_LIMIT_WG");
    char path[4300] = "x";
    ck_ok(ocx_peaks_cache_path(lim, OCX_PEAKS_QUICK, path, sizeof path));
    ck_assert_str_eq(path, "");
    unsigned long n0 = ocx__peaks_measurements();
    ck_ok(ocx_measure_peaks(lim, OCX_PEAKS_QUICK, &p));
    ck_assert_int_eq(p.from_cache, 0);
    ck_ok(ocx_measure_peaks(lim, OCX_PEAKS_QUICK, &p));
    ck_assert_uint_eq(ocx__peaks_measurements(), n0 + 2);
    ocx_context_destroy(lim);
    ck_ok(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, &p)); /* the device's file, as it was */
    ck_assert_int_eq(p.from_cache, 1);
    ck_assert_uint_eq(ocx__peaks_measurements(), n0 + 2);
}
END_TEST

START_TEST(measure_bad_args)
{
    ocx_peaks p;
    ck_status(ocx_measure_peaks(tctx, OCX_PEAKS_QUICK, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_measure_peaks(NULL, OCX_PEAKS_QUICK, &p), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_measure_peaks(tctx, 0x80, &p), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "flags"));
    char small[8] = "keep";
    fresh_dir("args");
    /* written only on success: "" would read as "no caching" (a failure had left one) */
    ck_status(ocx_peaks_cache_path(tctx, 0, small, sizeof small), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_str_eq(small, "keep");
    ck_status(ocx_peaks_cache_path(tctx, 0, NULL, 10), OCX_ERR_INVALID_ARGUMENT);
    char path[4400] = "keep";
    ck_status(ocx_peaks_cache_path(tctx, 0x80, path, sizeof path), OCX_ERR_INVALID_ARGUMENT); /* had been taken */
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "flag"));
    ck_assert_str_eq(path, "keep");
}
END_TEST

/* ---- the ocx-bench report ---------------------------------------------------------------------- */

static int run_bench(const char *out, const char *const *args) { return trun_tool("ocx-bench", out, NULL, args); }

static void expect_type(json_t *o, const char *key, const char *types, const char *where)
{
    json_t *v = json_object_get(o, key);
    ck_assert_msg(v != NULL, "%s: key '%s' is missing", where, key);
    int ok = (strchr(types, 's') && json_is_string(v)) || (strchr(types, 'n') && json_is_number(v)) ||
             (strchr(types, 'b') && json_is_boolean(v)) || (strchr(types, 'z') && json_is_null(v)) ||
             (strchr(types, 'o') && json_is_object(v)) || (strchr(types, 'a') && json_is_array(v));
    ck_assert_msg(ok, "%s: key '%s' has the wrong type (want one of '%s')", where, key, types);
}

/* A small structural XML check: one root element <svg …>, every tag closed in order, quotes
 * balanced in tags, comments/declarations/CDATA skipped. Returns the number of elements, or -1. */
static long xml_elements(const char *s, char *why, size_t cap)
{
    char stack[64][64];
    int depth = 0, roots = 0;
    long count = 0;
    const char *p = s;
    while ((p = strchr(p, '<')) != NULL) {
        if (strncmp(p, "<?", 2) == 0 || strncmp(p, "<!--", 4) == 0 || strncmp(p, "<![CDATA[", 9) == 0 ||
            strncmp(p, "<!", 2) == 0) {
            const char *end = strncmp(p, "<?", 2) == 0      ? strstr(p, "?>")
                              : strncmp(p, "<!--", 4) == 0  ? strstr(p, "-->")
                              : strncmp(p, "<![CDATA[", 9) == 0 ? strstr(p, "]]>")
                                                            : strchr(p, '>');
            if (!end) return snprintf(why, cap, "unterminated declaration"), -1;
            p = end + 1;
            continue;
        }
        int closing = p[1] == '/';
        const char *name = p + 1 + closing;
        size_t len = strcspn(name, " \t\r\n/>");
        if (len == 0 || len >= 64) return snprintf(why, cap, "bad tag name at offset %ld", (long)(p - s)), -1;
        const char *q = name + len;
        char quote = 0;
        for (; *q && (quote || *q != '>'); q++)
            if (*q == '"' || *q == '\'') quote = quote == *q ? 0 : quote ? quote : *q;
        if (!*q) return snprintf(why, cap, "unterminated tag <%.*s", (int)len, name), -1;
        int selfclose = q[-1] == '/';
        if (closing) {
            if (depth == 0 || strncmp(stack[depth - 1], name, len) || stack[depth - 1][len])
                return snprintf(why, cap, "</%.*s> closes nothing open", (int)len, name), -1;
            depth--;
        } else {
            if (depth == 0) {
                if (roots++ || strncmp(name, "svg", len) || len != 3)
                    return snprintf(why, cap, "the root is <%.*s>, not one <svg>", (int)len, name), -1;
            }
            count++;
            if (!selfclose) {
                if (depth == 64) return snprintf(why, cap, "nested too deep"), -1;
                memcpy(stack[depth], name, len);
                stack[depth++][len] = 0;
            }
        }
        p = q + 1;
    }
    if (depth != 0) return snprintf(why, cap, "<%s> is never closed", stack[depth - 1]), -1;
    if (roots != 1) return snprintf(why, cap, "no root element"), -1;
    return count;
}

START_TEST(xml_checker_rejects)
{
    char why[256];
    ck_assert_int_eq(xml_elements("<?xml version=\"1.0\"?><svg a=\"1>2\"><g><path/></g></svg>", why, sizeof why), 3);
    ck_assert_int_eq(xml_elements("<svg><g></svg>", why, sizeof why), -1);
    ck_assert_int_eq(xml_elements("<html></html>", why, sizeof why), -1);
    ck_assert_int_eq(xml_elements("<svg></svg><svg></svg>", why, sizeof why), -1);
    ck_assert_int_eq(xml_elements("<svg><g a=\"x></g></svg>", why, sizeof why), -1);
}
END_TEST

START_TEST(bench_json_and_plot)
{
    const char *base = getenv("OCX_CACHE_DIR");
    char json_path[4400], svg_path[4400], csv_path[4400];
    snprintf(json_path, sizeof json_path, "%s/bench-%d.json", dir[0] ? dir : base, (int)getpid());
    snprintf(svg_path, sizeof svg_path, "%s/roofline-%d.svg", dir[0] ? dir : base, (int)getpid());
    snprintf(csv_path, sizeof csv_path, "%s/bench-%d.csv", dir[0] ? dir : base, (int)getpid());
    /* A --plot that cannot be drawn (no such directory; configured --without-cairo: any) is refused
     * before anything is measured, not after the whole run. */
    char bad_svg[4500];
    snprintf(bad_svg, sizeof bad_svg, "%s/no-such-dir/roofline.svg", dir[0] ? dir : base);
#ifdef HAVE_CAIRO
    const char *noplot[] = {"vector", "--quick", "--reps", "1", "--plot", bad_svg, NULL};
    const char *args[] = {"vector,streams", "--quick", "--reps", "1", "--json", "--plot", svg_path, NULL};
#else
    const char *noplot[] = {"vector", "--quick", "--reps", "1", "--plot", svg_path, NULL};
    const char *args[] = {"vector,streams", "--quick", "--reps", "1", "--json", NULL};
#endif
    ck_assert_int_eq(run_bench(csv_path, noplot), 1);
    char *measured = tslurp(csv_path, NULL);
    ck_assert_msg(measured && !strstr(measured, "vector "), "ocx-bench measured before refusing --plot:\n%s",
                  measured ? measured : "(no output)");
    free(measured);
    int rc = run_bench(json_path, args);
    ck_assert_msg(rc == 0, "ocx-bench --json --plot exited with %d", rc);

    /* the JSON report and its documented schema */
    json_error_t jerr;
    json_t *root = json_load_file(json_path, 0, &jerr);
    ck_assert_msg(root != NULL, "the report does not parse: %s (line %d)", jerr.text, jerr.line);
    expect_type(root, "ocx_version", "s", "root");
    expect_type(root, "device", "s", "root");
    expect_type(root, "fingerprint", "s", "root");
    expect_type(root, "copy_gb_per_s", "n", "root");
    expect_type(root, "vector_clock", "s", "root");
    ck_assert_str_eq(json_string_value(json_object_get(root, "vector_clock")), "device");
    expect_type(root, "peaks", "o", "root");
    expect_type(root, "results", "a", "root");
    expect_type(root, "streams", "o", "root");
    json_t *peaks = json_object_get(root, "peaks");
    static const char *pk[] = {"global_gbps", "copy_gbps", "f32_gflops", "f16_gflops", "f64_gflops",
                               "h2d_pageable_gbps", "d2h_pageable_gbps", "h2d_pinned_gbps", "d2h_pinned_gbps",
                               "launch_latency_us", "launch_wall_us", "tc_f16_gflops"};
    for (size_t i = 0; i < sizeof pk / sizeof *pk; i++) expect_type(peaks, pk[i], "n", "peaks");
    expect_type(peaks, "quick", "b", "peaks");
    expect_type(peaks, "from_cache", "b", "peaks");
    ck_assert(json_is_true(json_object_get(peaks, "quick")));
    json_t *rows = json_object_get(root, "results");
    ck_assert_uint_ge(json_array_size(rows), 4);
    size_t i, with_roof = 0, points = 0;
    json_t *row;
    json_array_foreach(rows, i, row) {
        char where[64];
        snprintf(where, sizeof where, "results[%zu]", i);
        static const char *str[] = {"group", "op", "dtype", "size"};
        static const char *num[] = {"time_us", "gb_per_s", "gflop_per_s", "bytes", "flops"};
        static const char *opt[] = {"intensity", "bound_gflop_per_s", "bound_gb_per_s", "efficiency_percent",
                                    "peer_time_us", "ratio_vs_peer"};
        for (int k = 0; k < 4; k++) expect_type(row, str[k], "s", where);
        for (int k = 0; k < 5; k++) expect_type(row, num[k], "n", where);
        for (int k = 0; k < 6; k++) expect_type(row, opt[k], "nz", where);
        expect_type(row, "bound", "sz", where);
        expect_type(row, "peer", "sz", where);
        ck_assert_msg(json_number_value(json_object_get(row, "time_us")) > 0, "%s: time not positive", where);
        json_t *eff = json_object_get(row, "efficiency_percent");
        if (json_is_number(eff)) {
            with_roof++;
            double e = json_number_value(eff);
            ck_assert_msg(e > 0 && e < 1e4, "%s: efficiency %g%%", where, e);
            const char *bound = json_string_value(json_object_get(row, "bound"));
            ck_assert_msg(bound && (!strcmp(bound, "memory") || !strcmp(bound, "compute")), "%s: bound", where);
            /* the efficiency is the achieved rate over the stated bound */
            double f = json_number_value(json_object_get(row, "gflop_per_s"));
            json_t *bf = json_object_get(row, "bound_gflop_per_s");
            if (f > 0 && json_is_number(bf))
                ck_assert_msg(fabs(100 * f / json_number_value(bf) - e) <= 1e-6 * e, "%s: efficiency disagrees", where);
        }
        if (json_number_value(json_object_get(row, "gflop_per_s")) > 0) points++;
    }
    ck_assert_msg(with_roof >= 3, "only %zu rows carry a roofline bound", with_roof);
    json_t *streams = json_object_get(root, "streams");
    expect_type(streams, "serial_fraction", "n", "streams");
    expect_type(streams, "runs", "a", "streams");
    ck_assert_uint_eq(json_array_size(json_object_get(streams, "runs")), 3);
    ck_assert(json_is_null(json_object_get(root, "demo"))); /* not asked for */
    json_decref(root);

    /* --host-clock: the element-wise operations timed on the host's clock, as the reductions are,
     * beside the peer where there is one; the report says so. */
    setenv("OCX_BENCH_VECTOR_SIZES", "4099", 1);
    setenv("OCX_BENCH_VECTOR_OPS", "axpy,sum", 1);
    const char *hargs[] = {"vector", "--quick", "--host-clock", "--json", NULL};
    ck_assert_int_eq(run_bench(json_path, hargs), 0);
    unsetenv("OCX_BENCH_VECTOR_SIZES");
    unsetenv("OCX_BENCH_VECTOR_OPS");
    root = json_load_file(json_path, 0, &jerr);
    ck_assert_msg(root != NULL, "ocx-bench --host-clock --json does not parse: %s", jerr.text);
    ck_assert_str_eq(json_string_value(json_object_get(root, "vector_clock")), "host");
    int axpy_rows = 0;
    json_array_foreach(json_object_get(root, "results"), i, row) {
        if (strcmp(json_string_value(json_object_get(row, "op")), "axpy") != 0) continue;
        axpy_rows++;
        ck_assert_msg(json_number_value(json_object_get(row, "time_us")) > 0, "axpy: time not positive");
#ifdef HAVE_CLBLAST
        if (!strcmp(json_string_value(json_object_get(row, "dtype")), "f32"))
            ck_assert_msg(json_number_value(json_object_get(row, "peer_time_us")) > 0, "axpy f32: no peer time");
#endif
    }
    ck_assert_int_ge(axpy_rows, 2); /* f32 and f16, f64 where the device has it */
    json_decref(root);

    /* A device without f64: its rows are left out with a note, the others run (the reductions' peer
     * result buffer, f64, had failed every reduction row there). */
    setenv("OCX_DISABLE_FP64", "1", 1);
    setenv("OCX_BENCH_VECTOR_SIZES", "1000", 1);
    setenv("OCX_BENCH_VECTOR_OPS", "axpy,sum", 1);
    setenv("OCX_BENCH_VECTOR_DTYPES", "f32,f64", 1);
    char err_path[4420];
    snprintf(err_path, sizeof err_path, "%s.err", json_path);
    const char *nargs[] = {"vector", "--quick", "--json", NULL};
    ck_assert_int_eq(trun_tool("ocx-bench", json_path, err_path, nargs), 0);
    unsetenv("OCX_DISABLE_FP64");
    unsetenv("OCX_BENCH_VECTOR_SIZES");
    unsetenv("OCX_BENCH_VECTOR_OPS");
    unsetenv("OCX_BENCH_VECTOR_DTYPES");
    root = json_load_file(json_path, 0, &jerr);
    ck_assert_msg(root != NULL, "ocx-bench --json (no f64) does not parse: %s", jerr.text);
    int f32_rows = 0;
    json_array_foreach(json_object_get(root, "results"), i, row) {
        const char *op = json_string_value(json_object_get(row, "op")), *dt = json_string_value(json_object_get(row, "dtype"));
        ck_assert_msg(strcmp(dt, "f64") != 0, "an f64 row (%s) without f64", op);
        f32_rows += !strcmp(dt, "f32") && (!strcmp(op, "axpy") || !strcmp(op, "sum"));
    }
    ck_assert_int_eq(f32_rows, 2);
    json_decref(root);
    char *notes = tslurp(err_path, NULL);
    ck_assert_msg(strstr(notes, "vector: f64 left out") && strstr(notes, "reduce: f64 left out"), "notes:\n%s", notes);
    free(notes);
    /* f64 alone there: nothing measured, which fails the run (it had exited 0 with no row) */
    setenv("OCX_DISABLE_FP64", "1", 1);
    setenv("OCX_BENCH_VECTOR_SIZES", "1000", 1);
    setenv("OCX_BENCH_VECTOR_DTYPES", "f64", 1);
    ck_assert_int_eq(trun_tool("ocx-bench", json_path, err_path, nargs), 1);
    unsetenv("OCX_DISABLE_FP64");
    unsetenv("OCX_BENCH_VECTOR_SIZES");
    unsetenv("OCX_BENCH_VECTOR_DTYPES");
    notes = tslurp(err_path, NULL);
    ck_assert_msg(strstr(notes, "ocx-bench vector: nothing was measured"), "notes:\n%s", notes);
    free(notes);
    unlink(err_path);

    /* The demo alone: no rows and no peaks (it does not measure them), and its result as a section
     * of its own (it had written only the empty results and peaks). */
    const char *dargs[] = {"demo", "--json", NULL};
    ck_assert_int_eq(run_bench(json_path, dargs), 0);
    root = json_load_file(json_path, 0, &jerr);
    ck_assert_msg(root != NULL, "ocx-bench demo --json does not parse: %s", jerr.text);
    ck_assert_uint_eq(json_array_size(json_object_get(root, "results")), 0);
    ck_assert(json_is_null(json_object_get(root, "peaks")));
    expect_type(root, "demo", "o", "root");
    json_t *demo = json_object_get(root, "demo");
    ck_assert_int_eq(json_integer_value(json_object_get(demo, "elements")), 1000003);
    ck_assert_int_eq(json_integer_value(json_object_get(demo, "wrong")), 0);
    ck_assert(json_is_true(json_object_get(demo, "ok")));
    expect_type(demo, "kernel_us", "n", "demo");
    expect_type(demo, "kernel_again_us", "n", "demo"); /* the same add, warm, into a poisoned z */
    ck_assert_msg(json_number_value(json_object_get(demo, "kernel_again_us")) > 0, "demo: no second kernel time");
    expect_type(demo, "first_result_ms", "n", "demo");
    expect_type(demo, "program", "s", "demo");
    ck_assert_msg(json_number_value(json_object_get(demo, "first_result_ms")) > 0, "demo: no first-result time");
    json_decref(root);

#ifdef HAVE_CAIRO
    /* the SVG: well-formed, one <svg> root, at least one drawn element per point */
    char *svg = tslurp(svg_path, NULL), why[256] = "";
    long elements = xml_elements(svg, why, sizeof why);
    ck_assert_msg(elements > 0, "the SVG is not well-formed: %s", why);
    ck_assert_msg(elements >= (long)points, "%ld elements for %zu points", elements, points);
    free(svg);
    if (system("command -v xmllint >/dev/null 2>&1") == 0) {
        char cmd[8600];
        snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", svg_path);
        ck_assert_msg(system(cmd) == 0, "xmllint rejects %s", svg_path);
    }
#else
    (void)points;
#endif

    /* --csv: the documented header, and as many fields in every line */
    const char *cargs[] = {"streams", "--quick", "--reps", "1", "--csv", NULL};
    rc = run_bench(csv_path, cargs);
    ck_assert_msg(rc == 0, "ocx-bench --csv exited with %d", rc);
    char *csv = tslurp(csv_path, NULL);
    const char *header = "group,op,dtype,size,time_us,gb_per_s,gflop_per_s,bytes,flops,intensity,bound_gflop_per_s,"
                         "bound_gb_per_s,efficiency_percent,bound,peer,peer_time_us,ratio_vs_peer\n";
    ck_assert_msg(strncmp(csv, header, strlen(header)) == 0, "CSV header: %.200s", csv);
    int lines = 0;
    for (char *save = NULL, *l = strtok_r(csv, "\n", &save); l; l = strtok_r(NULL, "\n", &save), lines++) {
        int commas = 0;
        for (char *c = l; *c; c++) commas += *c == ',';
        ck_assert_msg(commas == 16, "CSV line %d has %d fields: %s", lines, commas + 1, l);
        if (lines == 0) continue;
        /* bytes (the 8th field), a whole number, exactly: six digits had printed 4194304 as 4.1943e+06 */
        const char *f = l;
        for (int k = 0; k < 7; k++) f = strchr(f, ',') + 1;
        const size_t len = strcspn(f, ","), digits = strspn(f, "0123456789");
        ck_assert_msg(len > 6 && digits == len, "CSV line %d: bytes not a whole number: %s", lines, l);
    }
    ck_assert_int_eq(lines, 4); /* header + 1, 2, 3 streams */
    free(csv);

    /* bad input: an unknown part and conflicting outputs fail with a status */
    const char *bad1[] = {"nonsense", "--quick", NULL};
    ck_assert_int_eq(run_bench("/dev/null", bad1), 2);
    const char *bad_parts[] = {"demo,,peaks", "--quick", NULL}; /* an empty part had been skipped */
    ck_assert_int_eq(run_bench("/dev/null", bad_parts), 2);
    bad_parts[0] = "demo,";
    ck_assert_int_eq(run_bench("/dev/null", bad_parts), 2);
    const char *bad2[] = {"demo", "--json", "--csv", NULL};
    ck_assert_int_eq(run_bench("/dev/null", bad2), 2);
    /* an option's value that is an option, or empty: not taken (no file named --json) */
    const char *bad3[] = {"demo", "--plot", "--json", NULL}, *bad4[] = {"demo", "--device", "", NULL};
    ck_assert_int_eq(run_bench("/dev/null", bad3), 2);
    ck_assert_int_eq(run_bench("/dev/null", bad4), 2);
    /* OCX_BENCH_* lists with an unknown name, a bad or overflowing size, a trailing comma, a name
     * twice: refused before anything is measured (an unknown GEMM dtype had run f32 under the name
     * given; 13 f32s and an f16f32 had run "f16f", cut short, as f16) */
    static const char *const bad_env[][2] = {{"OCX_BENCH_GEMM_DTYPES", "f32,fp64"},
                                             {"OCX_BENCH_GEMM_DTYPES", "f32,f32,f32,f32,f32,f32,f32,f32,f32,f32,f32,"
                                                                       "f32,f32,f16f32"},
                                             {"OCX_BENCH_GEMM_OPS", "NN,NT,NN"},
                                             {"OCX_BENCH_GEMM_SIZES", "16,abc"},
                                             {"OCX_BENCH_GEMM_SIZES", "16,"},
                                             {"OCX_BENCH_GEMM_OPS", "XY"},
                                             {"OCX_BENCH_VECTOR_SIZES", "99999999999999999999"},
                                             {"OCX_BENCH_VECTOR_SIZES", " -5"},
                                             {"OCX_BENCH_VECTOR_DTYPES", "bf16"},
                                             {"OCX_BENCH_VECTOR_OPS", "addd"}};
    const char *env_args[] = {"vector,gemm", "--quick", "--reps", "1", NULL};
    for (size_t k = 0; k < sizeof bad_env / sizeof *bad_env; k++) {
        setenv(bad_env[k][0], bad_env[k][1], 1);
        const int erc = run_bench(csv_path, env_args);
        unsetenv(bad_env[k][0]);
        ck_assert_msg(erc == 2, "%s=%s: exit %d", bad_env[k][0], bad_env[k][1], erc);
        char *said = tslurp(csv_path, NULL);
        ck_assert_msg(said && !strstr(said, "vector "), "%s=%s: measured before refusing", bad_env[k][0],
                      bad_env[k][1]);
        free(said);
    }
    /* a report that cannot be written is a failure, not a silent loss */
    if (access("/dev/full", W_OK) == 0) {
        const char *demo_json[] = {"demo", "--json", NULL}, *info_plain[] = {NULL};
        ck_assert_int_eq(run_bench("/dev/full", demo_json), 1);
        ck_assert_int_eq(trun_tool("ocx-info", "/dev/full", NULL, info_plain), 1);
        /* nor is a usage asked for (--help exited 0 with its text lost) */
        const char *help[] = {"--help", NULL}, *tools[] = {"ocx-info", "ocx-bench", "ocx-tune", "profile-ab"};
        for (size_t k = 0; k < sizeof tools / sizeof *tools; k++)
            ck_assert_msg(trun_tool(tools[k], "/dev/full", "/dev/null", help) == 1, "%s --help > /dev/full", tools[k]);
    }
    const char *info_bad[] = {"--refresh", NULL};
    ck_assert_int_eq(trun_tool("ocx-info", "/dev/null", NULL, info_bad), 2);
    /* profile-ab (built, not installed): --help is usage on stdout and success, as for the other
     * tools (it had exited 2); no profiles named is an error */
    const char *ab_help[] = {"--help", NULL}, *ab_none[] = {NULL};
    ck_assert_int_eq(trun_tool("profile-ab", csv_path, "/dev/null", ab_help), 0);
    char *usage = tslurp(csv_path, NULL);
    ck_assert_msg(usage && strstr(usage, "usage: profile-ab"), "profile-ab --help printed: %s", usage ? usage : "");
    free(usage);
    ck_assert_int_eq(trun_tool("profile-ab", "/dev/null", "/dev/null", ab_none), 2);
    /* a bad argument is named; a file the library does not read as a profile is an error, not a
     * comparison of the defaults with themselves; a report that cannot be written fails the run */
    char ab_err[4420], garbage[4420];
    snprintf(ab_err, sizeof ab_err, "%s.ab", json_path);
    snprintf(garbage, sizeof garbage, "%s.garbage.json", json_path);
    const char *ab_bad[] = {"defaults", "defaults", "--rounds", "abc", NULL};
    ck_assert_int_eq(trun_tool("profile-ab", "/dev/null", ab_err, ab_bad), 2);
    char *said = tslurp(ab_err, NULL);
    ck_assert_msg(strstr(said, "--rounds takes a whole number"), "profile-ab said: %s", said);
    free(said);
    FILE *g = fopen(garbage, "w");
    ck_assert_ptr_nonnull(g);
    fputs("garbage", g);
    fclose(g);
    const char *ab_garbage[] = {garbage, "defaults", "--gemm", "16", "--reduce", "none", "--rounds", "1", NULL};
    ck_assert_int_eq(trun_tool("profile-ab", "/dev/null", ab_err, ab_garbage), 1);
    said = tslurp(ab_err, NULL);
    ck_assert_msg(strstr(said, "is not a profile this version reads"), "profile-ab said: %s", said);
    free(said);
    const char *ab_full[] = {"defaults", "defaults", "--gemm", "16", "--reduce", "none", "--rounds", "1", NULL};
    ck_assert_int_eq(trun_tool("profile-ab", "/dev/full", "/dev/null", ab_full), 1);
    /* --f16: every kind of operation on f16 buffers (the reductions' results in f32), each reported,
     * the dtype named in the header; with --f64 as well it is refused */
    const char *ab_f16[] = {"defaults", "defaults", "--f16", "--gemm", "16", "--reduce", "1000", "--vector", "100",
                            "--rounds", "1", NULL};
    char ab_out[4420];
    snprintf(ab_out, sizeof ab_out, "%s.ab16", json_path);
    const int ab_rc = trun_tool("profile-ab", ab_out, ab_err, ab_f16);
    said = tslurp(ab_out, NULL);
    char *said_err = tslurp(ab_err, NULL);
    ck_assert_msg(ab_rc == 0 && said && strstr(said, ", f16, 1 rounds") && strstr(said, "gemm 16^3") &&
                      strstr(said, "nrm2 1000") && strstr(said, "argmax 1000") && strstr(said, "copy 100"),
                  "profile-ab --f16 (exit %d) printed: %s; on stderr: %s", ab_rc, said ? said : "",
                  said_err ? said_err : "");
    free(said);
    free(said_err);
    const char *ab_both[] = {"defaults", "defaults", "--f64", "--f16", NULL};
    ck_assert_int_eq(trun_tool("profile-ab", "/dev/null", ab_err, ab_both), 2);
    said = tslurp(ab_err, NULL);
    ck_assert_msg(said && strstr(said, "one dtype at a time"), "profile-ab --f64 --f16 said: %s", said ? said : "");
    free(said);
    unlink(ab_out);
    unlink(garbage);
    unlink(ab_err);

    /* ocx-info --json --peaks: the device list with the peaks object (quick: from the cache the
     * bench run above filled) */
    const char *iargs[] = {"--json", "--peaks", "--quick", NULL};
    ck_assert_int_eq(trun_tool("ocx-info", json_path, NULL, iargs), 0);
    root = json_load_file(json_path, 0, &jerr);
    ck_assert_msg(root != NULL, "ocx-info --json does not parse: %s", jerr.text);
    expect_type(root, "devices", "a", "ocx-info");
    expect_type(root, "peaks", "o", "ocx-info");
    peaks = json_object_get(root, "peaks");
    for (size_t k = 0; k < sizeof pk / sizeof *pk; k++) expect_type(peaks, pk[k], "n", "ocx-info peaks");
    ck_assert(json_is_true(json_object_get(peaks, "from_cache")));
    ck_assert_msg(json_number_value(json_object_get(peaks, "f32_gflops")) > 0, "ocx-info: f32 peak not positive");
    json_decref(root);
}
END_TEST

int main(void)
{
    setenv("OCX_QUIET", "1", 1); /* the bad cache files warn by design */
    Suite *s = suite_create("peaks");
    TCase *roof = tcase_create("roofline");
    tcase_add_test(roof, roofline_memory_bound);
    tcase_add_test(roof, roofline_compute_bound);
    tcase_add_test(roof, roofline_one_roof);
    tcase_add_test(roof, roofline_bad_input);
    tcase_add_test(roof, xml_checker_rejects);
    suite_add_tcase(s, roof);
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, tctx_setup, tctx_teardown);
    /* Measuring compiles the peak kernels on a cold cache (seconds on PoCL): beyond Check's 4 s
     * default when the suite runs outside make check (which sets CK_DEFAULT_TIMEOUT). */
    tcase_set_timeout(core, 600);
    tcase_add_test(core, measure_then_cached_then_refresh);
    tcase_add_test(core, bad_cache_file_measured_again);
    tcase_add_test(core, cache_off);
    tcase_add_test(core, cache_dir_typo_not_made);
    tcase_add_test(core, limited_not_cached);
    tcase_add_test(core, measure_bad_args);
    suite_add_tcase(s, core);
    TCase *report = tcase_create("report");
    tcase_set_timeout(report, 600);
    tcase_add_test(report, bench_json_and_plot);
    suite_add_tcase(s, report);
    return trun(s);
}
