/* check_profile — profile files: round trip through a real tuning run, the lookup order across the
 * four sources, every kind of malformed input (one test each, each falling back to the next source),
 * and tuning under simulated limits. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ocx_internal.h" /* ocx__params_lookup on a simulated GPU */
#include "testutil.h"

static char root[900], dir_env[1024], dir_user[1024], dir_sys[1024];
static ocx_device_info dev;

/* Fresh directories for the three file sources; XDG_DATA_HOME points at the user one's parent. */
static void setup(void)
{
    const char *base = getenv("OCX_CACHE_DIR");
    const int rn = snprintf(root, sizeof root, "%s/profiles.%d", base ? base : "/tmp", (int)getpid());
    ck_assert_msg(rn > 0 && (size_t)rn < sizeof root, "OCX_CACHE_DIR is too long for the profile tests"); /* rm -rf */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/env' '%s/xdg/ocx/profiles' '%s/sys'", root, root, root, root);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(dir_env, sizeof dir_env, "%s/env", root);
    snprintf(dir_user, sizeof dir_user, "%s/xdg/ocx/profiles", root);
    snprintf(dir_sys, sizeof dir_sys, "%s/sys", root);
    char xdg[1200];
    snprintf(xdg, sizeof xdg, "%s/xdg", root);
    setenv("OCX_PROFILE_DIR", dir_env, 1);
    setenv("XDG_DATA_HOME", xdg, 1);
    setenv("OCX_PROFILE_SYSTEM_DIR", dir_sys, 1);
    setenv("OCX_QUIET", "1", 1);
    size_t idx;
    ck_ok(ocx_device_select(NULL, &idx));
    ck_ok(ocx_device_get_info(idx, &dev));
}

static void teardown(void)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
}

static void path_in(const char *dir, char *out, size_t cap) { snprintf(out, cap, "%s/%s.json", dir, dev.normalized_name); }

/* The built-in parameters of a family on this device as a JSON object ("WG=256 VW=4 …" parsed), so
 * that the tests follow the family's table as it changes. */
static json_t *builtin_params(const char *family)
{
    char saved[1200];
    snprintf(saved, sizeof saved, "%s", getenv("OCX_PROFILE_DIR"));
    setenv("OCX_PROFILE_DIR", "/nonexistent-ocx-profiles", 1);
    ocx_context *ctx = NULL;
    ocx_params_info info;
    ck_ok(ocx_context_create(NULL, &ctx));
    ck_ok(ocx_context_params(ctx, family, OCX_F32, NULL, &info));
    ocx_context_destroy(ctx);
    setenv("OCX_PROFILE_DIR", saved, 1);
    json_t *params = json_object();
    char *save = NULL;
    for (char *tok = strtok_r(info.params, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        json_object_set_new(params, tok, json_integer(atoi(eq + 1)));
    }
    ck_assert_uint_gt(json_object_size(params), 0);
    return params;
}

/* A valid profile for this device whose vector f32 entry has WG=wg (and f16 too when both). */
static json_t *profile_with(int wg, int with_f32, int with_f16)
{
    json_t *entries = json_array();
    const char *dts[] = {"f32", "f16"};
    int want[] = {with_f32, with_f16};
    for (int i = 0; i < 2; i++)
        if (want[i]) {
            json_t *params = builtin_params("vector");
            json_object_set_new(params, "WG", json_integer(wg));
            json_array_append_new(entries, json_pack("{s:s, s:s, s:s, s:o, s:f, s:s}", "family", "vector", "dtype",
                                                     dts[i], "size_class", "all", "params", params, "rate", 1.0,
                                                     "unit", "GB/s"));
        }
    return json_pack("{s:i, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:i}, s:o}", "schema", 1, "ocx_version", OCX_VERSION_STRING,
                     "date", "2026-01-01T00:00:00Z", "device", "vendor", dev.vendor, "name", dev.name, "normalized_name",
                     dev.normalized_name, "driver_version", dev.driver_version, "compute_units", (int)dev.compute_units,
                     "entries", entries);
}

static void write_json(const char *dir, json_t *j)
{
    char path[1400];
    path_in(dir, path, sizeof path);
    ck_assert_int_eq(json_dump_file(j, path, JSON_INDENT(1)), 0);
    json_decref(j);
}

static void write_text(const char *dir, const char *text)
{
    char path[1400];
    path_in(dir, path, sizeof path);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* What a fresh context would use for vector/f32: the source and the WG value. */
static void lookup(ocx_params_info *info)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ck_ok(ocx_context_params(ctx, "vector", OCX_F32, NULL, info));
    ocx_context_destroy(ctx);
}

static void expect_source(const char *dir, int wg)
{
    ocx_params_info info;
    lookup(&info);
    if (dir) {
        char path[1400];
        path_in(dir, path, sizeof path);
        ck_assert_str_eq(info.source, path);
        char want[32];
        snprintf(want, sizeof want, "WG=%d", wg);
        ck_assert_msg(strncmp(info.params, want, strlen(want)) == 0 && (info.params[strlen(want)] == ' ' ||
                                                                         info.params[strlen(want)] == '\0'),
                      "params '%s', want %s", info.params, want);
    } else {
        ck_assert_str_eq(info.source, "built-in");
    }
}

START_TEST(test_lookup_order)
{
    write_json(dir_env, profile_with(16, 1, 1));
    write_json(dir_user, profile_with(32, 1, 1));
    write_json(dir_sys, profile_with(64, 1, 1));
    expect_source(dir_env, 16);
    char path[1400];
    path_in(dir_env, path, sizeof path);
    unlink(path);
    expect_source(dir_user, 32);
    path_in(dir_user, path, sizeof path);
    unlink(path);
    expect_source(dir_sys, 64);
    path_in(dir_sys, path, sizeof path);
    unlink(path);
    expect_source(NULL, 0);
    /* Per entry: a source without the wanted entry passes to the next one. */
    write_json(dir_env, profile_with(16, 0, 1));
    write_json(dir_user, profile_with(32, 1, 1));
    expect_source(dir_user, 32);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_params_info info;
    ck_ok(ocx_context_params(ctx, "vector", OCX_F16, NULL, &info));
    ck_assert_ptr_nonnull(strstr(info.source, "/env/"));
    ocx_profile_info pinfo;
    ck_ok(ocx_context_profile(ctx, 0, &pinfo));
    ck_assert_ptr_nonnull(strstr(pinfo.path, "/env/"));
    ck_assert_int_eq(pinfo.stale, 0);
    ck_assert_uint_eq(pinfo.compute_units, dev.compute_units);
    ck_ok(ocx_context_profile(ctx, 1, &pinfo));
    ck_assert_ptr_nonnull(strstr(pinfo.path, "/xdg/"));
    ck_status(ocx_context_profile(ctx, 2, &pinfo), OCX_ERR_IO);
    ck_status(ocx_context_params(ctx, "no-family", OCX_F32, NULL, &info), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_params(ctx, "vector", (ocx_dtype)42, NULL, &info), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_params(ctx, "vector", OCX_I32, NULL, &info), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_params(ctx, "gemm", OCX_F32, "bogus", &info), OCX_ERR_INVALID_ARGUMENT);
    ck_ok(ocx_context_params(ctx, "gemm", OCX_F32, "short_k", &info));
    ck_assert_str_eq(info.size_class, "short_k");
    /* Classes and dtypes a family never looks up: refused, not answered with its "all" entry. */
    ck_status(ocx_context_params(ctx, "vector", OCX_F32, "short_k", &info), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_params(ctx, "reduce", OCX_F64, "short_k", &info), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_params(ctx, "gemm_mma", OCX_F64, NULL, &info), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_params(ctx, "gemm_mma", OCX_F16, "small", &info), OCX_ERR_INVALID_ARGUMENT);
    ck_ok(ocx_context_params(ctx, "gemm_mma", OCX_F16, "medium", &info));
    ck_ok(ocx_context_params(ctx, "gemm_mma", OCX_F16, "short_k", &info));
    ck_status(ocx_context_params(ctx, "gemm_mma", OCX_F32, "short_k", &info), OCX_ERR_INVALID_ARGUMENT); /* TF32X3 */
    ck_ok(ocx_context_params(ctx, "gemm_mma", OCX_F32, "large", &info));
    ck_ok(ocx_context_params(ctx, "reduce", OCX_F64, "medium", &info));
    ocx_context_destroy(ctx);
}
END_TEST

START_TEST(test_used_by_operations_and_stale_marked)
{
    json_t *j = profile_with(8, 1, 1);
    json_object_set_new(json_object_get(j, "device"), "driver_version", json_string("0.0-older-driver"));
    /* measured on a CPU of the same name with another core count: still used, and it says so */
    json_object_set_new(json_object_get(j, "device"), "compute_units", json_integer(977));
    write_json(dir_env, j);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_profile_info pinfo;
    ck_ok(ocx_context_profile(ctx, 0, &pinfo));
    ck_assert_int_eq(pinfo.stale, 1); /* still used */
    ck_assert_str_eq(pinfo.driver_version, "0.0-older-driver");
    ck_assert_uint_eq(pinfo.compute_units, 977);
    enum { N = 1001 };
    float x[N], z[N];
    for (int i = 0; i < N; i++) x[i] = 0.25f * (float)i + 1;
    ocx_buffer *bx = NULL, *bz = NULL;
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &bx));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &bz));
    ck_ok(ocx_buffer_write(ctx, NULL, bx, 0, N, x, 0, NULL, NULL));
    ck_ok(ocx_add(ctx, NULL, N, bx, bx, bz, 0, NULL, NULL));
    ocx_params_info used;
    ck_ok(ocx_last_params(&used));
    ck_assert_str_eq(used.family, "vector");
    ck_assert_str_eq(used.source, pinfo.path);
    ck_assert_msg(strncmp(used.params, "WG=8 ", 5) == 0, "params %s", used.params);
    ck_ok(ocx_buffer_read(ctx, NULL, bz, 0, N, z, 0, NULL, NULL));
    for (int i = 0; i < N; i++) ck_assert_float_eq(z[i], 2 * x[i]);
    ocx_buffer_destroy(bx);
    ocx_buffer_destroy(bz);
    ocx_context_destroy(ctx);
}
END_TEST

/* Size classes: a reduction of 2^26 elements or more (on CPUs 2^23) looks up "large", a shorter one
 * "medium", and each class without an entry of its own takes the source's "all" entry. */
START_TEST(test_size_classes)
{
    json_t *j = profile_with(16, 0, 0);
    const char *classes[] = {"all", "large"};
    const int wgs[] = {8, 4};
    for (int i = 0; i < 2; i++) {
        json_t *params = builtin_params("reduce");
        json_object_set_new(params, "WG", json_integer(wgs[i]));
        json_array_append_new(json_object_get(j, "entries"),
                              json_pack("{s:s, s:s, s:s, s:o, s:f, s:s}", "family", "reduce", "dtype", "f32",
                                        "size_class", classes[i], "params", params, "rate", 1.0, "unit", "GB/s"));
    }
    write_json(dir_env, j);
    char path[1400];
    path_in(dir_env, path, sizeof path);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_params_info info;
    const char *asked[] = {"large", "medium", "small", "all"};
    for (int i = 0; i < 4; i++) {
        ck_ok(ocx_context_params(ctx, "reduce", OCX_F32, asked[i], &info));
        ck_assert_str_eq(info.size_class, asked[i]);
        ck_assert_str_eq(info.source, path);
        ck_assert_msg(strncmp(info.params, i ? "WG=8 " : "WG=4 ", 5) == 0, "%s: params %s", asked[i], info.params);
    }
    /* The real thing, at the boundary. The data repeat 1, 1, -2, so every partial sum is exact in
     * f32 (a constant's sum of 2^26 - 1 elements is not) and a run of 2^j elements lost or counted
     * twice changes the result. */
    const size_t n = (size_t)1 << (dev.type == OCX_DEVICE_CPU ? 23 : 26);
    float *h = malloc(n * sizeof *h);
    ck_assert_ptr_nonnull(h);
    for (size_t i = 0; i < n; i++) h[i] = i % 3 == 2 ? -2.0f : 1.0f;
    ocx_buffer *x = NULL;
    ck_ok(ocx_buffer_create(ctx, OCX_F32, n, &x));
    ck_ok(ocx_buffer_write(ctx, NULL, x, 0, n, h, 0, NULL, NULL));
    free(h);
    for (size_t m = n; m >= n - 1; m--) {
        double got = 0;
        ck_ok(ocx_reduce_host(ctx, NULL, OCX_REDUCE_SUM, m, x, 1, NULL, 1, &got, NULL, 0, NULL));
        ck_assert_msg(got == (double)(m % 3), "sum of %zu elements: %.17g, exactly %zu", m, got, m % 3);
        ck_ok(ocx_last_params(&info));
        ck_assert_str_eq(info.family, "reduce");
        ck_assert_str_eq(info.size_class, m == n ? "large" : "medium");
        ck_assert_str_eq(info.source, path);
        ck_assert_msg(strncmp(info.params, m == n ? "WG=4 " : "WG=8 ", 5) == 0, "n=%zu: params %s", m, info.params);
    }
    ocx_buffer_destroy(x);
    ocx_context_destroy(ctx);
}
END_TEST

/* GEMM's classes go by M*N*K: below 2^31 "medium", from there "all" (and "large" from 2^38, too big
 * for a test on a CPU), or "short_k" where K is at most 256; products up to DIRECT^3 take the direct
 * kernel in the "small" class's work-group shape. Each entry differs in one parameter, and the
 * product (C poisoned before) is checked on its first, middle and last rows, to the bound of a sum
 * of K products in f32 (the data, multiples of 1/8, keep the sums exact in practice). */
static void gemm_class_case(ocx_context *ctx, size_t m, size_t n, size_t k, const char *cls, const char *param)
{
    float *ha = malloc(m * k * sizeof *ha), *hb = malloc(k * n * sizeof *hb), *hc = malloc(m * n * sizeof *hc);
    ck_assert(ha && hb && hc);
    for (size_t i = 0; i < m * k; i++) ha[i] = (float)((i * 7 + 3) % 13) / 8.0f - 0.75f;
    for (size_t i = 0; i < k * n; i++) hb[i] = (float)((i * 5 + 1) % 11) / 8.0f - 0.625f;
    ocx_buffer *a = NULL, *b = NULL, *c = NULL;
    ck_ok(ocx_buffer_create(ctx, OCX_F32, m * k, &a));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, k * n, &b));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, m * n, &c));
    ck_ok(ocx_buffer_write(ctx, NULL, a, 0, m * k, ha, 0, NULL, NULL));
    ck_ok(ocx_buffer_write(ctx, NULL, b, 0, k * n, hb, 0, NULL, NULL));
    const float nan = NAN;
    ck_ok(ocx_buffer_fill(ctx, NULL, c, 0, m * n, &nan, 0, NULL, NULL));
    ck_ok(ocx_gemm(ctx, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, m, n, k, 1.0, a, 0, k, b, 0, n, 0.0, c, 0, n, 0, NULL,
                   NULL));
    ocx_params_info info;
    ck_ok(ocx_last_params(&info));
    ck_assert_str_eq(info.family, "gemm");
    ck_assert_msg(strcmp(info.size_class, cls) == 0 && strstr(info.params, param),
                  "%zux%zux%zu: class %s, params %s; expected %s with %s", m, n, k, info.size_class, info.params, cls,
                  param);
    ck_ok(ocx_buffer_read(ctx, NULL, c, 0, m * n, hc, 0, NULL, NULL));
    const size_t rows[] = {0, 1, m / 2, m - 2, m - 1};
    for (int r = 0; r < 5; r++) {
        const size_t row = rows[r] < m ? rows[r] : 0;
        for (size_t j = 0; j < n; j++) {
            double ref = 0, mag = 0;
            for (size_t l = 0; l < k; l++) {
                ref += (double)ha[row * k + l] * hb[l * n + j];
                mag += fabs((double)ha[row * k + l] * hb[l * n + j]);
            }
            ck_assert_msg(fabs(hc[row * n + j] - ref) <= (double)k * 0x1p-24 * mag + 1e-30,
                          "%zux%zux%zu: C(%zu, %zu) = %.9g, expected %.9g", m, n, k, row, j, hc[row * n + j], ref);
        }
    }
    ocx_buffer_destroy(a);
    ocx_buffer_destroy(b);
    ocx_buffer_destroy(c);
    free(ha);
    free(hb);
    free(hc);
}

START_TEST(test_gemm_size_classes)
{
    json_t *j = profile_with(16, 0, 0);
    const char *classes[] = {"all", "medium", "small", "short_k"};
    for (int i = 0; i < 4; i++) {
        json_t *params = builtin_params("gemm");
        json_object_set_new(params, "DIRECT", json_integer(i == 2 ? 2 : 16)); /* "small": not its to decide */
        json_object_set_new(params, "DWGN", json_integer(i == 2 ? 8 : 16));
        json_object_set_new(params, "DWGM", json_integer(4));
        json_object_set_new(params, "KUNR", json_integer(i == 1 ? 2 : i == 3 ? 4 : 1));
        json_array_append_new(json_object_get(j, "entries"),
                              json_pack("{s:s, s:s, s:s, s:o, s:f, s:s}", "family", "gemm", "dtype", "f32",
                                        "size_class", classes[i], "params", params, "rate", 1.0, "unit", "GFLOP/s"));
    }
    write_json(dir_env, j);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    gemm_class_case(ctx, 2048, 2048, 512, "all", "KUNR=1");    /* 2^31 */
    gemm_class_case(ctx, 2048, 2048, 511, "medium", "KUNR=2"); /* just below */
    gemm_class_case(ctx, 17, 15, 16, "small", "DWGN=8");        /* 4080 <= 16^3: direct */
    gemm_class_case(ctx, 17, 15, 16, "small", "DIRECT=16 ");    /* reported as used (medium's) */
    gemm_class_case(ctx, 4096, 2048, 256, "short_k", "KUNR=4"); /* 2^31 with K = 256 */
    gemm_class_case(ctx, 4096, 2048, 257, "all", "KUNR=1");      /* K above 256 */
    gemm_class_case(ctx, 2048, 2048, 255, "medium", "KUNR=2");   /* below 2^31 whatever K */
    ocx_context_destroy(ctx);
}
END_TEST

/* The pairs the tuner's hill-climb steps together name parameters of their family (a misspelt one
 * would make it skip the pair without a word), and GEMM's pair does what it is there for: from the
 * CPU defaults of AVX-512 (8x32 register tiles), twice the work-group tile alone breaks the
 * 256-element register tile, and with twice the work-items it is legal. */
START_TEST(test_step_together_pairs)
{
    for (const ocx__family *const *f = ocx__families; *f; f++) {
        const char *const *s = (*f)->step_together;
        size_t n = 0;
        for (; s && s[n]; n++)
            ck_assert_msg(ocx__param_index(*f, s[n]) < (*f)->nparams, "%s: no parameter %s", (*f)->name, s[n]);
        ck_assert_msg(n % 2 == 0, "%s: %zu names, not pairs", (*f)->name, n);
    }
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_context cpu = *ctx;
    cpu.info.type = OCX_DEVICE_CPU;
    cpu.info.preferred_vector_width_float = 16;
    ocx__params p;
    ck_ok(ocx__params_default(&cpu, &ocx__family_gemm, OCX_F32, &p));
    const unsigned mwg = ocx__param_index(&ocx__family_gemm, "MWG"), mdimc = ocx__param_index(&ocx__family_gemm, "MDIMC");
    ck_assert_ptr_null(ocx__params_check(&ocx__family_gemm, p.v, &cpu.info, OCX_F32));
    p.v[mwg] *= 2;
    ck_assert_ptr_nonnull(ocx__params_check(&ocx__family_gemm, p.v, &cpu.info, OCX_F32));
    p.v[mdimc] *= 2;
    const char *why = ocx__params_check(&ocx__family_gemm, p.v, &cpu.info, OCX_F32);
    ck_assert_msg(why == NULL, "MWG=%d MDIMC=%d: %s", p.v[mwg], p.v[mdimc], why);
    ocx_context_destroy(ctx);
}
END_TEST

/* GEMM's CPU defaults give f64 half of f32's columns a work-item (NWG, VWN: a row of doubles in the
 * registers an f32 row takes), on AVX2 (8-wide floats) and AVX-512 (16-wide) alike, and legal there;
 * the rest of the tile is f32's. A GPU's f64 defaults are its f32 ones. The devices are the test
 * device with its type and vector width changed: looked up, never run (check_gemm runs f64 on the
 * test device itself). */
START_TEST(test_gemm_cpu_f64_columns)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    const unsigned nwg = ocx__param_index(&ocx__family_gemm, "NWG"), vwn = ocx__param_index(&ocx__family_gemm, "VWN");
    static const struct { ocx_device_type type; unsigned width; } devs[] = {
        {OCX_DEVICE_CPU, 8}, {OCX_DEVICE_CPU, 16}, {OCX_DEVICE_GPU, 1}};
    for (size_t d = 0; d < sizeof devs / sizeof *devs; d++) {
        ocx_context dev = *ctx;
        dev.info.type = devs[d].type;
        dev.info.preferred_vector_width_float = devs[d].width;
        ocx__params f32, f64;
        ck_ok(ocx__params_default(&dev, &ocx__family_gemm, OCX_F32, &f32));
        ck_ok(ocx__params_default(&dev, &ocx__family_gemm, OCX_F64, &f64));
        const int half = devs[d].type == OCX_DEVICE_CPU ? 2 : 1;
        for (unsigned i = 0; i < ocx__family_gemm.nparams; i++) {
            const int want = i == nwg || i == vwn ? f32.v[i] / half : f32.v[i];
            ck_assert_msg(f64.v[i] == want, "device %zu: %s=%d for f64, f32 has %d", d, ocx__family_gemm.params[i].name,
                          f64.v[i], f32.v[i]);
        }
        const char *why = ocx__params_check(&ocx__family_gemm, f64.v, &dev.info, OCX_F64);
        ck_assert_msg(why == NULL, "device %zu: f64 defaults: %s", d, why);
    }
    ocx_context_destroy(ctx);
}
END_TEST

/* The options of a program are built in 512-byte buffers (vector.c, reduce.c, gemm.c, gemm_nv.c),
 * and a -D define that would not fit is left out (ocx__append_define): every family's parameters,
 * each at the longest value its range allows, must leave room for the defines the callers add
 * around them (at most ~110 bytes: GEMM's dtypes, CTYPE, NATIVE_F16 and six layout defines). */
START_TEST(test_defines_fit_options_buffers)
{
    for (const ocx__family *const *f = ocx__families; *f; f++) {
        int v[OCX__MAX_PARAMS];
        for (unsigned i = 0; i < (*f)->nparams; i++) {
            const ocx__param_def *d = &(*f)->params[i];
            char a[16], b[16];
            v[i] = snprintf(a, sizeof a, "%d", d->min) > snprintf(b, sizeof b, "%d", d->max) ? d->min : d->max;
        }
        char buf[4096] = "";
        ocx__params_append(*f, v, " -D", " -D", 1, buf, sizeof buf);
        ck_assert_msg(strlen(buf) <= 512 - 160, "%s: %zu bytes of -D defines: %s", (*f)->name, strlen(buf), buf);
    }
}
END_TEST

/* A class with built-in defaults of its own on the device (GEMM's "medium" and "short_k" on GPUs,
 * f32 "large" on NVIDIA's) takes them before a profile's "all" entry; "large" on another vendor's
 * GPU, which has none, takes the "all" entry, and so does every class on a CPU but "small". The CPU and the GPUs are the
 * test device with its type and vendor changed: their parameters are only looked up, never run. */
START_TEST(test_class_defaults_before_all)
{
    json_t *j = profile_with(16, 0, 0);
    json_t *params = builtin_params("gemm");
    json_object_set_new(params, "KUNR", json_integer(2));
    json_array_append_new(json_object_get(j, "entries"),
                          json_pack("{s:s, s:s, s:s, s:o, s:f, s:s}", "family", "gemm", "dtype", "f32", "size_class",
                                    "all", "params", params, "rate", 1.0, "unit", "GFLOP/s"));
    json_t *mma = builtin_params("gemm_mma"); /* the f32 (TF32X3) tiles */
    json_object_set_new(mma, "GM", json_integer(2));
    json_array_append_new(json_object_get(j, "entries"),
                          json_pack("{s:s, s:s, s:s, s:o, s:f, s:s}", "family", "gemm_mma", "dtype", "f32",
                                    "size_class", "all", "params", mma, "rate", 1.0, "unit", "GFLOP/s"));
    write_json(dir_env, j);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx__params p;
    ck_ok(ocx__params_lookup(ctx, &ocx__family_gemm, OCX_F32, "all", &p)); /* loads ctx's profiles */
    ocx_context cpu = *ctx; /* shares them; a CPU on whatever device the suite runs */
    cpu.info.type = OCX_DEVICE_CPU;
    const char *classes[] = {"short_k", "medium", "large"};
    for (int c = 0; c < 3; c++) {
        ck_ok(ocx__params_lookup(&cpu, &ocx__family_gemm, OCX_F32, classes[c], &p));
        ck_assert_msg(ocx__param(&p, "KUNR") == 2, "CPU, %s: KUNR=%d from %s", classes[c], ocx__param(&p, "KUNR"),
                      p.origin);
    }
    ocx_context gpu = *ctx;
    gpu.info.type = OCX_DEVICE_GPU;
    gpu.info.local_mem_max_bytes = gpu.info.local_mem_bytes = 65536; /* room for NVIDIA's "large" tiles */
    /* Another vendor's GPU, and NVIDIA's, whose f32 "large" has tiles of its own
     * (test_vendor_class_defaults). */
    const char *vendors[] = {"Some GPU vendor", "NVIDIA Corporation"};
    for (int w = 0; w < 2; w++) {
        snprintf(gpu.info.vendor, sizeof gpu.info.vendor, "%s", vendors[w]);
        for (int c = 0; c < 3; c++) {
            ck_ok(ocx__params_lookup(&gpu, &ocx__family_gemm, OCX_F32, classes[c], &p));
            const int from_all = c == 2 && w == 0;
            ck_assert_msg((ocx__param(&p, "KUNR") == 2) == from_all && (strcmp(p.origin, "built-in") != 0) == from_all,
                          "GPU (%s), %s: KUNR=%d from %s", vendors[w], classes[c], ocx__param(&p, "KUNR"), p.origin);
        }
    }
    /* "small" (the direct kernel's shape and k steps): its own built-in values on a CPU (4 k steps),
     * the profile's "all" entry on a GPU. */
    const struct { ocx_context *dev; int from_all; } small[] = {{&cpu, 0}, {&gpu, 1}};
    for (int d = 0; d < 2; d++) {
        ck_ok(ocx__params_lookup(small[d].dev, &ocx__family_gemm, OCX_F32, "small", &p));
        ck_assert_msg((ocx__param(&p, "KUNR") == 2) == small[d].from_all &&
                          (strcmp(p.origin, "built-in") != 0) == small[d].from_all &&
                          (small[d].from_all || ocx__param(&p, "DKU") == 4),
                      "%s, small: KUNR=%d DKU=%d from %s", d ? "GPU" : "CPU", ocx__param(&p, "KUNR"),
                      ocx__param(&p, "DKU"), p.origin);
    }
    ck_ok(ocx__params_lookup(&gpu, &ocx__family_gemm, OCX_F32, "short_k", &p));
    ck_assert_msg(ocx__param(&p, "MWG") == 64 && ocx__param(&p, "NWG") == 128, "GPU short_k: %dx%d", ocx__param(&p, "MWG"),
                  ocx__param(&p, "NWG"));
    /* The TF32X3 tiles: a GPU's "large" keeps its built-in 128x128 (GM=8) before the profile's "all"
     * (GM=2), which "medium" takes; on a CPU (no class defaults) "large" takes it too. */
    const struct { ocx_context *dev; const char *cls; int gm; } x3[] = {
        {&gpu, "large", 8}, {&gpu, "medium", 2}, {&cpu, "large", 2}};
    for (int c = 0; c < 3; c++) {
        ck_ok(ocx__params_lookup(x3[c].dev, &ocx__family_gemm_mma, OCX_F32, x3[c].cls, &p));
        ck_assert_msg(ocx__param(&p, "GM") == x3[c].gm, "TF32X3 %s on a %s: GM=%d from %s", x3[c].cls,
                      x3[c].dev == &gpu ? "GPU" : "CPU", ocx__param(&p, "GM"), p.origin);
    }
    ocx_context_destroy(ctx);
}
END_TEST

/* The vector family's one class of its own: on CPUs "large" (arrays beyond the caches, from 2^23
 * elements) takes two vectors a work-item (WPT=2) before a profile's "all" entry; the other classes
 * take that entry (here groups of 64, one vector a work-item), and so does "large" on a GPU. Then
 * the real thing at the boundary, where the suite runs on a CPU. */
START_TEST(test_vector_large_cpu)
{
    json_t *j = profile_with(64, 1, 0);
    write_json(dir_env, j);
    char path[1400];
    path_in(dir_env, path, sizeof path);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx__params p;
    ck_ok(ocx__params_lookup(ctx, &ocx__family_vector, OCX_F32, "all", &p)); /* loads ctx's profiles */
    ocx_context cpu = *ctx, gpu = *ctx;
    cpu.info.type = OCX_DEVICE_CPU;
    gpu.info.type = OCX_DEVICE_GPU;
    const char *classes[] = {"all", "small", "medium", "large"};
    for (int d = 0; d < 2; d++) {
        for (int c = 0; c < 4; c++) {
            ck_ok(ocx__params_lookup(d ? &gpu : &cpu, &ocx__family_vector, OCX_F32, classes[c], &p));
            const int own = d == 0 && c == 3;
            ck_assert_msg(ocx__param(&p, "WPT") == (own ? 2 : 1) && (ocx__param(&p, "WG") == 64) == !own &&
                              strcmp(p.origin, own ? "built-in" : path) == 0,
                          "%s, %s: WPT=%d WG=%d from %s", d ? "GPU" : "CPU", classes[c], ocx__param(&p, "WPT"),
                          ocx__param(&p, "WG"), p.origin);
        }
    }
    if (ctx->info.type == OCX_DEVICE_CPU) {
        const size_t n = (size_t)1 << 23;
        ocx_buffer *x = NULL, *y = NULL;
        ck_ok(ocx_buffer_create(ctx, OCX_F32, n, &x));
        ck_ok(ocx_buffer_create(ctx, OCX_F32, n, &y));
        ck_ok(ocx_fill(ctx, NULL, n, 0.5, x, 1, 0, NULL, NULL));
        ck_ok(ocx_fill(ctx, NULL, n, 0.25, y, 1, 0, NULL, NULL));
        ocx_params_info info;
        for (size_t m = n; m >= n - 1; m--) { /* y = 2x + y over the first m: 1.25, then 2.25 */
            ck_ok(ocx_axpy(ctx, NULL, m, 2.0, x, 1, y, 1, 0, NULL, NULL));
            ck_ok(ocx_last_params(&info));
            ck_assert_str_eq(info.size_class, m == n ? "large" : "medium");
            ck_assert_msg(strstr(info.params, m == n ? "WPT=2" : "WPT=1") != NULL, "n=%zu: params %s", m, info.params);
            ck_assert_str_eq(info.source, m == n ? "built-in" : path);
        }
        float got[3];
        ck_ok(ocx_buffer_read(ctx, NULL, y, n - 3, 3, got, 0, NULL, NULL));
        ck_assert_msg(got[0] == 2.25f && got[1] == 2.25f && got[2] == 1.25f, "y's last three: %g %g %g", got[0], got[1],
                      got[2]);
        ocx_buffer_destroy(x);
        ocx_buffer_destroy(y);
    }
    ocx_context_destroy(ctx);
}
END_TEST

/* A context keeps each lookup's outcome (profile.c: memo), which must answer as a fresh lookup
 * would: the same entry call after call, an OCX_<FAMILY>_PARAMS override on the call it is set for
 * and not after, and for a copy of the context with other limits (which shares the profiles) what
 * that device takes: here the entry's groups of 512 break a 256-item limit, so the built-in values
 * (fitted to it) with one warning. */
START_TEST(test_lookups_kept)
{
    write_json(dir_env, profile_with(512, 1, 0));
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    if (ctx->info.max_work_group_size < 512 || ctx->info.max_work_item_sizes[0] < 512) { /* refuses the entry */
        ocx_context_destroy(ctx);
        return;
    }
    ocx__params p;
    for (int round = 0; round < 3; round++) {
        if (round == 1) setenv("OCX_VECTOR_PARAMS", "WG=8", 1);
        const ocx_status st = ocx__params_lookup(ctx, &ocx__family_vector, OCX_F32, "medium", &p);
        unsetenv("OCX_VECTOR_PARAMS");
        ck_ok(st);
        const int want = round == 1 ? 8 : 512;
        ck_assert_msg(ocx__param(&p, "WG") == want && (round == 1 ? strstr(p.origin, "environment") != NULL
                                                                  : strstr(p.origin, dir_env) == p.origin),
                      "round %d: WG=%d from %s", round, ocx__param(&p, "WG"), p.origin);
    }
    ocx_context small = *ctx; /* shares the profiles and what they answered */
    small.info.max_work_group_size = small.info.max_work_item_sizes[0] = 256;
    ck_ok(ocx__params_lookup(&small, &ocx__family_vector, OCX_F32, "medium", &p));
    ck_assert_msg(ocx__param(&p, "WG") <= 256 && strcmp(p.origin, "built-in") == 0, "a 256-item device: WG=%d from %s",
                  ocx__param(&p, "WG"), p.origin);
    ck_ok(ocx__params_lookup(ctx, &ocx__family_vector, OCX_F32, "medium", &p));
    ck_assert_msg(ocx__param(&p, "WG") == 512, "the context again: WG=%d from %s", ocx__param(&p, "WG"), p.origin);
    ocx_context_destroy(ctx);
}
END_TEST

/* NVIDIA GPUs' f32 "all" and "large" classes have built-in defaults ("all": 128x128 tiles, 2-wide N
 * vectors, what long searches found on the H200; "large": 128x256 on 16x16 work-items, or "all"'s
 * where the 60 KiB of local memory they count is not there); other dtypes and "short_k" keep the table's
 * 64x128, and so does another vendor's GPU. No profile here; the GPUs are the test device with its
 * type and vendor changed, looked up only. */
START_TEST(test_vendor_class_defaults)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx__params p;
    ck_ok(ocx__params_lookup(ctx, &ocx__family_gemm, OCX_F32, "all", &p)); /* loads ctx's (no) profiles */
    ocx_context gpu = *ctx;                                                 /* shares them */
    gpu.info.type = OCX_DEVICE_GPU;
    const struct {
        const char *vendor;
        ocx_dtype dtype;
        const char *cls;
        int mwg, nwg, mdimc, ndimc, vwn;
        size_t lmem; /* 0: 64 KiB */
    } cases[] = {
        {"NVIDIA Corporation", OCX_F32, "all", 128, 128, 8, 16, 2},
        {"NVIDIA Corporation", OCX_F32, "large", 128, 256, 16, 16, 4},
        {"NVIDIA Corporation", OCX_F32, "large", 128, 128, 8, 16, 2, 49152},
        {"NVIDIA Corporation", OCX_F32, "short_k", 64, 128, 8, 16, 4},
        {"NVIDIA Corporation", OCX_F64, "all", 64, 128, 8, 16, 4},
        {"NVIDIA Corporation", OCX_F16, "all", 64, 128, 8, 16, 4},
        {"Advanced Micro Devices, Inc.", OCX_F32, "all", 64, 128, 8, 16, 4},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        snprintf(gpu.info.vendor, sizeof gpu.info.vendor, "%s", cases[c].vendor);
        gpu.info.local_mem_max_bytes = gpu.info.local_mem_bytes = cases[c].lmem ? cases[c].lmem : 65536;
        ck_ok(ocx__params_lookup(&gpu, &ocx__family_gemm, cases[c].dtype, cases[c].cls, &p));
        const int v[5] = {ocx__param(&p, "MWG"), ocx__param(&p, "NWG"), ocx__param(&p, "MDIMC"),
                          ocx__param(&p, "NDIMC"), ocx__param(&p, "VWN")};
        ck_assert_msg(v[0] == cases[c].mwg && v[1] == cases[c].nwg && v[2] == cases[c].mdimc &&
                          v[3] == cases[c].ndimc && v[4] == cases[c].vwn && strcmp(p.origin, "built-in") == 0,
                      "%s %s %s: %dx%d, %dx%d items, VWN=%d from %s", cases[c].vendor, ocx_dtype_name(cases[c].dtype),
                      cases[c].cls, v[0], v[1], v[2], v[3], v[4], p.origin);
    }
    ocx_context_destroy(ctx);
}
END_TEST

/* Each malformed input in the first source must fall back to the valid second one. */
static void expect_fallback(void)
{
    write_json(dir_user, profile_with(32, 1, 1));
    expect_source(dir_user, 32);
}

START_TEST(test_not_json)
{
    write_text(dir_env, "{ \"schema\": 1, \"entries\": [ ");
    expect_fallback();
}
END_TEST

START_TEST(test_empty_file)
{
    write_text(dir_env, "");
    expect_fallback();
}
END_TEST

/* A FIFO where a profile would be: never opened to wait for a writer (fopen had waited forever). */
START_TEST(test_not_a_regular_file)
{
    char path[1400];
    path_in(dir_env, path, sizeof path);
    ck_assert_int_eq(mkfifo(path, 0644), 0);
    alarm(120); /* a hang fails here, not at the suite's timeout */
    expect_fallback();
    alarm(0);
}
END_TEST

START_TEST(test_other_schema)
{
    json_t *j = profile_with(16, 1, 1);
    json_object_set_new(j, "schema", json_integer(2));
    write_json(dir_env, j);
    expect_fallback();
}
END_TEST

START_TEST(test_unknown_top_level_key)
{
    json_t *j = profile_with(16, 1, 1);
    json_object_set_new(j, "surprise", json_true());
    write_json(dir_env, j);
    expect_fallback();
}
END_TEST

START_TEST(test_other_device)
{
    json_t *j = profile_with(16, 1, 1);
    json_object_set_new(json_object_get(j, "device"), "vendor", json_string("Another Vendor Inc."));
    write_json(dir_env, j);
    expect_fallback();
}
END_TEST

static json_t *first_params(json_t *j) { return json_object_get(json_array_get(json_object_get(j, "entries"), 0), "params"); }

START_TEST(test_unknown_entry_key)
{
    json_t *j = profile_with(16, 1, 0);
    json_object_set_new(json_array_get(json_object_get(j, "entries"), 0), "colour", json_string("blue"));
    write_json(dir_env, j);
    expect_fallback();
}
END_TEST

START_TEST(test_unknown_parameter)
{
    json_t *j = profile_with(16, 1, 0);
    json_object_del(first_params(j), "VW");
    json_object_set_new(first_params(j), "VWX", json_integer(2));
    write_json(dir_env, j);
    expect_fallback();
}
END_TEST

START_TEST(test_missing_parameter)
{
    json_t *j = profile_with(16, 1, 0);
    json_object_del(first_params(j), "VW");
    write_json(dir_env, j);
    expect_fallback();
}
END_TEST

/* A parameter added after profiles were written (vector's NT) may be absent: the entry stays in
 * use and that parameter takes its built-in value. */
START_TEST(test_added_parameter_absent)
{
    json_t *j = profile_with(16, 1, 0);
    json_t *builtin = builtin_params("vector");
    json_int_t nt = json_integer_value(json_object_get(builtin, "NT"));
    json_decref(builtin);
    json_object_del(first_params(j), "NT");
    write_json(dir_env, j);
    expect_source(dir_env, 16);
    ocx_context *ctx = NULL;
    ocx_params_info info;
    ck_ok(ocx_context_create(NULL, &ctx));
    ck_ok(ocx_context_params(ctx, "vector", OCX_F32, NULL, &info));
    char want[16];
    snprintf(want, sizeof want, "NT=%d", (int)nt);
    ck_assert_msg(strstr(info.params, want), "params %s, expected %s", info.params, want);
    ocx_context_destroy(ctx);
}
END_TEST

START_TEST(test_wrong_type)
{
    json_t *j = profile_with(16, 1, 0);
    json_object_set_new(first_params(j), "WG", json_string("16"));
    write_json(dir_env, j);
    expect_fallback();
}
END_TEST

START_TEST(test_out_of_range)
{
    json_t *j = profile_with(16, 1, 0);
    json_object_set_new(first_params(j), "WG", json_integer(1 << 20));
    write_json(dir_env, j);
    expect_fallback();
}
END_TEST

START_TEST(test_not_power_of_two)
{
    json_t *j = profile_with(16, 1, 0);
    json_object_set_new(first_params(j), "WG", json_integer(48));
    write_json(dir_env, j);
    expect_fallback();
}
END_TEST

/* GEMM's MWG takes three times a power of two too (AVX2's 6-row register tiles), on STAGE=1 alone;
 * the ladders' values and steps down, which fitting parameters to a device takes. */
START_TEST(test_three_times_power_of_two)
{
    static const int pow2_3[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256};
    size_t next = 0;
    for (int v = 1; v <= 256; v++) {
        const int on = next < sizeof pow2_3 / sizeof *pow2_3 && pow2_3[next] == v;
        ck_assert_int_eq(ocx__on_ladder(OCX__LADDER_POW2_3, v), on);
        ck_assert_int_eq(ocx__on_ladder(OCX__LADDER_POW2, v), (v & (v - 1)) == 0);
        ck_assert_int_eq(ocx__on_ladder(OCX__LADDER_ALL, v), 1);
        if (v > 1 && on) ck_assert_int_eq(ocx__ladder_below(OCX__LADDER_POW2_3, v), pow2_3[next - 1]);
        next += on;
    }
    ck_assert_int_eq(ocx__ladder_below(OCX__LADDER_POW2, 64), 32);
    ck_assert_int_eq(ocx__ladder_below(OCX__LADDER_ALL, 7), 6);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx__params p;
    ck_ok(ocx__params_default(ctx, &ocx__family_gemm, OCX_F32, &p));
    const unsigned mwg = ocx__param_index(&ocx__family_gemm, "MWG"), mdimc = ocx__param_index(&ocx__family_gemm, "MDIMC"),
                   stage = ocx__param_index(&ocx__family_gemm, "STAGE"), vwm = ocx__param_index(&ocx__family_gemm, "VWM");
    p.v[stage] = 1, p.v[mwg] = 24, p.v[mdimc] = 4, p.v[vwm] = 1;
    const char *why = ocx__params_check(&ocx__family_gemm, p.v, &ctx->info, OCX_F32);
    ck_assert_msg(why == NULL, "MWG=24 MDIMC=4 STAGE=1: %s", why);
    p.v[mwg] = 20;
    ck_assert_str_eq(ocx__params_check(&ocx__family_gemm, p.v, &ctx->info, OCX_F32),
                     "MWG=20: a value must be a power of two or three times one");
    p.v[mwg] = 24, p.v[stage] = 2;
    ck_assert_str_eq(ocx__params_check(&ocx__family_gemm, p.v, &ctx->info, OCX_F32),
                     "MWG of three times a power of two needs STAGE=1");
    /* f64 vectors of 16 (128 bytes) in the 64-byte-aligned local slices: refused; f32's are 64 bytes */
    const unsigned vwn = ocx__param_index(&ocx__family_gemm, "VWN"), nwg = ocx__param_index(&ocx__family_gemm, "NWG"),
                   ndimc = ocx__param_index(&ocx__family_gemm, "NDIMC"), kwg = ocx__param_index(&ocx__family_gemm, "KWG");
    p.v[mwg] = 16, p.v[mdimc] = 4, p.v[vwm] = 1, p.v[nwg] = 64, p.v[ndimc] = 4, p.v[vwn] = 16, p.v[kwg] = 8;
    why = ocx__params_check(&ocx__family_gemm, p.v, &ctx->info, OCX_F32);
    ck_assert_msg(why == NULL, "f32, VWN=16, STAGE=2: %s", why);
    ck_assert_str_eq(ocx__params_check(&ocx__family_gemm, p.v, &ctx->info, OCX_F64),
                     "local-memory vectors above 64 bytes (f64 with VWM or VWN of 16) need STAGE=1");
    p.v[stage] = 1;
    why = ocx__params_check(&ocx__family_gemm, p.v, &ctx->info, OCX_F64);
    ck_assert_msg(why == NULL, "f64, VWN=16, STAGE=1: %s", why);
    /* Off the ladder, fitting steps to the next value below (the host's MWG <= M takes M + 1's). */
    ck_assert_int_eq(ocx__ladder_below(OCX__LADDER_POW2_3, 5), 4);
    ck_assert_int_eq(ocx__ladder_below(OCX__LADDER_POW2_3, 7), 6);
    ck_assert_int_eq(ocx__ladder_below(OCX__LADDER_POW2_3, 47), 32);
    ck_assert_int_eq(ocx__ladder_below(OCX__LADDER_POW2, 5), 4);
    /* A GPU's defaults fitted to a small local memory halve the tiles, as before the three-times
     * rungs: they had stepped MWG from 64 to 48 (illegal for local-memory stages) and then drained
     * every parameter to 1. f32 in 16 KiB, f64 in 32 KiB (a device of another vendor: the table's
     * defaults). */
    ocx_context gpu = *ctx;
    gpu.info.type = OCX_DEVICE_GPU;
    snprintf(gpu.info.vendor, sizeof gpu.info.vendor, "Some Vendor");
    gpu.info.max_work_group_size = gpu.info.max_work_item_sizes[0] = gpu.info.max_work_item_sizes[1] = 1024;
    for (int f64 = 0; f64 <= 1; f64++) {
        gpu.info.local_mem_bytes = gpu.info.local_mem_max_bytes = f64 ? 32768 : 16384;
        ck_ok(ocx__params_default(&gpu, &ocx__family_gemm, f64 ? OCX_F64 : OCX_F32, &p));
        ck_assert_msg(p.v[mwg] == 32 && p.v[nwg] == 64 && p.v[stage] == 4, "%s: MWG=%d NWG=%d STAGE=%d",
                      f64 ? "f64" : "f32", p.v[mwg], p.v[nwg], p.v[stage]);
    }
    ocx_context_destroy(ctx);
}
END_TEST

/* The entries ocx-tune --resume would keep of dir_env's profile for ctx's device. */
static size_t resumed_entries(ocx_context *ctx)
{
    char path[1400];
    path_in(dir_env, path, sizeof path);
    json_t *resumed = NULL;
    ck_ok(ocx__profile_resumable(ctx, path, &resumed));
    const size_t n = json_array_size(json_object_get(resumed, "entries"));
    json_decref(resumed);
    return n;
}

/* On a device without f64 (here simulated) an f64 entry is none that lookups can use: ocx-info's
 * count leaves it out (it had counted it), a query for f64 parameters is refused as every f64
 * operation is (it had answered with the entry's), and --resume keeps the entry in the file. */
START_TEST(test_f64_entries_without_fp64)
{
    json_t *j = profile_with(16, 1, 1);
    json_t *entries = json_object_get(j, "entries");
    json_t *f64 = json_deep_copy(json_array_get(entries, 0));
    json_object_set_new(f64, "dtype", json_string("f64"));
    json_array_append_new(entries, f64);
    write_json(dir_env, j);
    setenv("OCX_DISABLE_FP64", "1", 1);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_profile_info pinfo;
    ck_ok(ocx_context_profile(ctx, 0, &pinfo));
    ck_assert_uint_eq(pinfo.entries, 2);
    ocx_params_info info;
    ck_status(ocx_context_params(ctx, "vector", OCX_F64, NULL, &info), OCX_ERR_UNSUPPORTED);
    ck_ok(ocx_context_params(ctx, "vector", OCX_F16, NULL, &info));
    ck_assert_uint_eq(resumed_entries(ctx), 3);
    ocx_context_destroy(ctx);
    unsetenv("OCX_DISABLE_FP64");
}
END_TEST

START_TEST(test_breaks_device_limits)
{
    /* WG=256 is in range but above the (simulated) device's limit of 64. */
    setenv("OCX_LIMIT_WG", "64", 1);
    write_json(dir_env, profile_with(256, 1, 0));
    expect_fallback();
    unsetenv("OCX_LIMIT_WG");
}
END_TEST

/* From here on the test's stderr goes to a file (log, cap bytes: its path), whose warnings
 * lines_with counts. */
static void capture_stderr(char *log, size_t cap)
{
    unsetenv("OCX_QUIET");
    snprintf(log, cap, "%s/stderr.txt", root);
    ck_assert_ptr_nonnull(freopen(log, "w", stderr));
}

/* Lines of the captured stderr that contain needle. */
static int lines_with(const char *log, const char *needle)
{
    fflush(stderr);
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

START_TEST(test_warns_once)
{
    write_text(dir_env, "[1, 2");
    char log[1400];
    capture_stderr(log, sizeof log);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_params_info info;
    for (int i = 0; i < 3; i++) ck_ok(ocx_context_params(ctx, "vector", OCX_F32, NULL, &info));
    ck_ok(ocx_context_params(ctx, "reduce", OCX_F32, NULL, &info));
    ocx_context_destroy(ctx);
    ck_assert_int_eq(lines_with(log, "ocx: warning: profile"), 1);
}
END_TEST

/* A warning handler gets the warnings instead of stderr (the same one, once, without the prefix),
 * OCX_QUIET silences it too, and NULL puts stderr back. */
typedef struct warnings_seen {
    int count;
    char first[512];
} warnings_seen;

static void collect_warning(const char *message, void *user)
{
    warnings_seen *w = user;
    if (!w->count++) snprintf(w->first, sizeof w->first, "%s", message);
}

static void warn_from_profile(void)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_params_info info;
    ck_ok(ocx_context_params(ctx, "vector", OCX_F32, NULL, &info));
    ocx_context_destroy(ctx);
}

START_TEST(test_warning_handler)
{
    write_text(dir_env, "[1, 2");
    char log[1400];
    capture_stderr(log, sizeof log);
    warnings_seen w = {0, ""};
    ocx_set_warning_handler(collect_warning, &w);
    warn_from_profile();
    ck_assert_int_eq(w.count, 1);
    ck_assert_msg(strncmp(w.first, "profile ", 8) == 0 && !strchr(w.first, '\n'), "handler got '%s'", w.first);
    setenv("OCX_QUIET", "1", 1);
    warn_from_profile();
    ck_assert_int_eq(w.count, 1);
    unsetenv("OCX_QUIET");
    ocx_set_warning_handler(NULL, NULL);
    warn_from_profile();
    ck_assert_int_eq(w.count, 1);
    /* only the last context's, after the handler was removed */
    ck_assert_int_eq(lines_with(log, "ocx: warning: profile"), 1);
}
END_TEST

/* OCX_PROFILE_DIR naming the profile file instead of its directory: a warning that says where
 * profiles are read from, and the next source (it had been passed over without a word). */
START_TEST(test_profile_dir_is_a_file)
{
    write_json(dir_env, profile_with(16, 1, 1));
    write_json(dir_user, profile_with(32, 1, 1));
    char file[1400];
    path_in(dir_env, file, sizeof file);
    setenv("OCX_PROFILE_DIR", file, 1);
    warnings_seen w = {0, ""};
    unsetenv("OCX_QUIET");
    ocx_set_warning_handler(collect_warning, &w);
    expect_source(dir_user, 32);
    ocx_set_warning_handler(NULL, NULL);
    setenv("OCX_QUIET", "1", 1);
    setenv("OCX_PROFILE_DIR", dir_env, 1);
    ck_assert_int_eq(w.count, 1);
    ck_assert_msg(strstr(w.first, "OCX_PROFILE_DIR names a file, not a directory") &&
                      strstr(w.first, "profiles are read from"),
                  "warned '%s'", w.first);
}
END_TEST

/* One warning per problem, however many problems: past 64 in a context, each further one had been
 * warned about again at every lookup (two profiles from a newer ocx, each entry with a parameter this
 * version lacks, made 92 warnings, then 28 more at each ocx_context_profile()). */
START_TEST(test_many_problems_warned_once)
{
    static const char *const fams[] = {"vector", "reduce", "gemm"};
    static const char *const dts[] = {"f32", "f16", "f64"};
    static const char *const classes[] = {"all", "small", "medium", "large", "short_k"};
    const char *dirs[] = {dir_env, dir_user};
    for (int d = 0; d < 2; d++) {
        json_t *j = profile_with(16, 0, 0);
        for (int f = 0; f < 3; f++)
            for (int t = 0; t < 3; t++)
                for (int c = 0; c < 5; c++) {
                    json_t *params = builtin_params(fams[f]);
                    json_object_set_new(params, "BOGUS", json_integer(1));
                    json_array_append_new(json_object_get(j, "entries"),
                                          json_pack("{s:s, s:s, s:s, s:o, s:f, s:s}", "family", fams[f], "dtype",
                                                    dts[t], "size_class", classes[c], "params", params, "rate", 1.0,
                                                    "unit", "GB/s"));
                }
        write_json(dirs[d], j);
    }
    warnings_seen w = {0, ""};
    unsetenv("OCX_QUIET"); /* the fixture's */
    ocx_set_warning_handler(collect_warning, &w);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    int counts[3];
    for (int round = 0; round < 3; round++) {
        const int before = w.count;
        ocx_profile_info info;
        for (size_t i = 0; ocx_context_profile(ctx, i, &info) == OCX_OK; i++) continue;
        ocx_params_info pinfo;
        ck_ok(ocx_context_params(ctx, "reduce", OCX_F32, "medium", &pinfo));
        counts[round] = w.count - before;
    }
    ocx_context_destroy(ctx);
    ocx_set_warning_handler(NULL, NULL);
    setenv("OCX_QUIET", "1", 1);
    ck_assert_msg(counts[0] > 64, "the first round warned %d times (the test needs more than 64 problems)", counts[0]);
    ck_assert_msg(counts[1] == 0 && counts[2] == 0, "warned again: %d, then %d times", counts[1], counts[2]);
}
END_TEST

/* A malformed entry's warning names what is wrong with it: the unknown key or parameter, the
 * missing one, the value out of its range (with the range) or off its ladder. */
static void expect_warning(json_t *j, const char *expect)
{
    write_json(dir_env, j);
    warnings_seen w = {0, ""};
    unsetenv("OCX_QUIET"); /* the fixture's */
    ocx_set_warning_handler(collect_warning, &w);
    warn_from_profile();
    ocx_set_warning_handler(NULL, NULL);
    setenv("OCX_QUIET", "1", 1);
    ck_assert_msg(w.count == 1 && strstr(w.first, expect), "expected '%s' in the warning: %s", expect, w.first);
}

/* A refused class entry counts as absent: "medium", without defaults of its own for the vector
 * family, then takes the same file's "all" entry, and the warning says so (it had said "using the
 * next source"). */
/* Where ocx-tune writes by default: under $XDG_DATA_HOME, else under $HOME/.local/share; neither
 * set is an I/O error, and a path that does not fit, an invalid argument. */
START_TEST(test_user_path)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    char saved_xdg[1200] = "", saved_home[1200] = "", path[1400], want[1400];
    if (getenv("XDG_DATA_HOME")) snprintf(saved_xdg, sizeof saved_xdg, "%s", getenv("XDG_DATA_HOME"));
    if (getenv("HOME")) snprintf(saved_home, sizeof saved_home, "%s", getenv("HOME"));
    setenv("XDG_DATA_HOME", "/data/x", 1);
    setenv("HOME", "/home/y", 1);
    ck_ok(ocx_profile_user_path(ctx, path, sizeof path));
    snprintf(want, sizeof want, "/data/x/ocx/profiles/%s.json", dev.normalized_name);
    ck_assert_str_eq(path, want);
    snprintf(path, sizeof path, "untouched");
    ck_status(ocx_profile_user_path(ctx, path, strlen(want)), OCX_ERR_INVALID_ARGUMENT); /* no room for the NUL */
    ck_assert_str_eq(path, "untouched"); /* written only on success (a cut path had been left there) */
    ck_status(ocx_profile_user_path(ctx, NULL, sizeof path), OCX_ERR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "/home/y/.local/share/ocx/profiles/%s.json", dev.normalized_name);
    for (int rel = 0; rel < 2; rel++) { /* empty, or relative: ignored, as the XDG specification says */
        setenv("XDG_DATA_HOME", rel ? "data/x" : "", 1);
        ck_ok(ocx_profile_user_path(ctx, path, sizeof path));
        ck_assert_str_eq(path, want);
    }
    unsetenv("XDG_DATA_HOME");
    /* "~" as a shell has it: the password database's home directory (it had failed), also for a
     * relative HOME (which had given a path relative to the working directory) */
    const struct passwd *pw = getpwuid(getuid());
    for (int rel = 0; rel < 2; rel++) {
        if (rel) setenv("HOME", "relative/home", 1);
        else unsetenv("HOME");
        if (pw && pw->pw_dir && pw->pw_dir[0]) {
            ck_ok(ocx_profile_user_path(ctx, path, sizeof path));
            snprintf(want, sizeof want, "%s/.local/share/ocx/profiles/%s.json", pw->pw_dir, dev.normalized_name);
            ck_assert_str_eq(path, want);
        } else {
            ck_status(ocx_profile_user_path(ctx, path, sizeof path), OCX_ERR_IO);
        }
    }
    unsetenv("HOME");
    if (saved_xdg[0]) setenv("XDG_DATA_HOME", saved_xdg, 1);
    if (saved_home[0]) setenv("HOME", saved_home, 1);
    ocx_context_destroy(ctx);
}
END_TEST

START_TEST(test_bad_class_entry_as_absent)
{
    json_t *j = profile_with(16, 1, 0);
    json_t *params = json_deep_copy(first_params(j));
    json_object_set_new(params, "WG", json_integer(3)); /* off the powers of two */
    json_array_append_new(json_object_get(j, "entries"),
                          json_pack("{s:s, s:s, s:s, s:o, s:f, s:s}", "family", "vector", "dtype", "f32", "size_class",
                                    "medium", "params", params, "rate", 1.0, "unit", "GB/s"));
    write_json(dir_env, j);
    char path[1400];
    path_in(dir_env, path, sizeof path);
    warnings_seen w = {0, ""};
    unsetenv("OCX_QUIET");
    ocx_set_warning_handler(collect_warning, &w);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_params_info info;
    ck_ok(ocx_context_params(ctx, "vector", OCX_F32, "medium", &info));
    ocx_context_destroy(ctx);
    ocx_set_warning_handler(NULL, NULL);
    setenv("OCX_QUIET", "1", 1);
    ck_assert_msg(strstr(info.params, "WG=16") && !strcmp(info.source, path), "medium: %s from %s", info.params,
                  info.source);
    ck_assert_msg(w.count == 1 && strstr(w.first, "entry vector/f32/medium") && strstr(w.first, "ignoring it") &&
                      !strstr(w.first, "using the next source"),
                  "%d warnings, the first: %s", w.count, w.first);
}
END_TEST

START_TEST(test_warning_names_the_parameter)
{
    static const struct { const char *del, *set; int value; const char *expect; } cases[] = {
        {NULL, "VWX", 2, "vector has no parameter 'VWX'"},
        {"VW", NULL, 0, "parameter VW is missing"},
        {NULL, "WG", 0, "WG=0 is out of its range 1.."},
        {NULL, "WG", 3, "WG=3: a value must be a power of two"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        json_t *j = profile_with(16, 1, 0);
        if (cases[c].del) json_object_del(first_params(j), cases[c].del);
        if (cases[c].set) json_object_set_new(first_params(j), cases[c].set, json_integer(cases[c].value));
        expect_warning(j, cases[c].expect);
    }
    json_t *j = profile_with(16, 1, 0);
    json_object_set_new(json_array_get(json_object_get(j, "entries"), 0), "colour", json_string("blue"));
    expect_warning(j, "unknown key 'colour'");
}
END_TEST

/* Replacing the handler waits for the calls of the old one in flight (their `user` may then be
 * freed: it had been read, and the old handler called, after the replacing call returned), and a
 * message longer than the former 2048-byte buffer arrives whole. */
static atomic_int slow_in_call;
static size_t slow_got;
static void slow_handler(const char *message, void *user)
{
    (void)user;
    atomic_store(&slow_in_call, 1);
    usleep(300000);
    slow_got = strlen(message);
    atomic_store(&slow_in_call, 0);
}
static void *warn_long(void *arg)
{
    ocx__warn("%s", (const char *)arg);
    return NULL;
}

START_TEST(test_warning_handler_replaced)
{
    static char text[5000];
    memset(text, 'w', sizeof text - 1);
    unsetenv("OCX_QUIET"); /* the fixture's */
    ocx_set_warning_handler(slow_handler, NULL);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, warn_long, text), 0);
    for (int i = 0; i < 5000 && !atomic_load(&slow_in_call); i++) usleep(1000);
    ck_assert_msg(atomic_load(&slow_in_call), "the handler was not called");
    ocx_set_warning_handler(NULL, NULL);
    ck_assert_msg(!atomic_load(&slow_in_call), "the old handler still ran after it was replaced");
    pthread_join(t, NULL);
    ck_assert_uint_eq(slow_got, sizeof text - 1);
}
END_TEST

/* Entries no lookup reads (a size class this version lacks; a repeat of an earlier entry, of which
 * lookups read the first) are warned about once each, not skipped in silence; the first of the
 * repeated ones is used, and ocx_context_profile() counts only it. */
START_TEST(test_unread_entries_warned)
{
    json_t *j = profile_with(16, 1, 0);
    json_t *entries = json_object_get(j, "entries");
    json_t *bogus = json_deep_copy(json_array_get(entries, 0)), *again = json_deep_copy(json_array_get(entries, 0));
    json_t *never = json_deep_copy(json_array_get(entries, 0)); /* a class its family never looks up */
    json_object_set_new(bogus, "size_class", json_string("enormous"));
    json_object_set_new(never, "size_class", json_string("short_k"));
    json_array_append_new(entries, never);
    json_object_set_new(json_object_get(again, "params"), "WG", json_integer(64));
    json_array_append_new(entries, bogus);
    json_array_append_new(entries, again);
    json_array_append_new(entries, json_integer(5));
    write_json(dir_env, j);
    char log[1400];
    capture_stderr(log, sizeof log);
    expect_source(dir_env, 16);
    expect_source(dir_env, 16); /* a second context warns again: once per context */
    /* once a context, for both such entries; each ends in what happens to that entry alone (they
     * had ended "using the next source", while the rest of the file was used) */
    ck_assert_int_eq(lines_with(log, "this version does not have, or one its family never looks up; ignoring it"), 2);
    ck_assert_int_eq(lines_with(log, "repeats an earlier one's family, dtype and size class; the first is read"), 2);
    ck_assert_int_eq(lines_with(log, "lacks family/dtype/size_class strings; ignoring it"), 2);
    ck_assert_int_eq(lines_with(log, "using the next source"), 0);
    ocx_context *ctx = NULL; /* ocx-info's count: the entries lookups can use, 1 of the 5 */
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_profile_info pinfo;
    ck_ok(ocx_context_profile(ctx, 0, &pinfo));
    ck_assert_uint_eq(pinfo.entries, 1);
    /* Read for ocx-tune --resume: the file is resumed without them, and the warnings say so (they
     * had said "not resumed") */
    ck_assert_uint_eq(resumed_entries(ctx), 1);
    ck_assert_int_eq(lines_with(log, "never looks up; dropped from the resumed file"), 1);
    ck_assert_int_eq(lines_with(log, "the first is kept, the repeat dropped from the resumed file"), 1);
    ck_assert_int_eq(lines_with(log, "lacks family/dtype/size_class strings; dropped from the resumed file"), 1);
    ck_assert_int_eq(lines_with(log, "not resumed"), 0);
    ocx_context_destroy(ctx);
}
END_TEST

/* The whole of a small text file (tool logs). */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char text[1 << 16];
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    return text;
}

static volatile int stop_at_first;
static int lock_was_held = -1; /* stop_on_candidate: whether the run's lock file was locked then */
static void stop_on_candidate(void *user, const ocx_tune_progress *p)
{
    const char *lock = user; /* the lock file the run should hold, or NULL */
    if (lock && lock_was_held < 0) {
        const int fd = open(lock, O_RDONLY | O_NOFOLLOW);
        lock_was_held = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        if (fd >= 0) close(fd);
    }
    if (!p->message || !strcmp(p->message, "candidate measured")) stop_at_first = 1;
}

/* What a tuning run's progress said of its candidates: how many were measured, how many of those
 * came with their parameters and a rate, and every candidate's parameters (each after a newline). */
typedef struct candidates_seen {
    int measured, described, failed;
    unsigned tried; /* the entries' counts when done, summed */
    char all[1 << 16];
} candidates_seen;
static void note_candidates(void *user, const ocx_tune_progress *p)
{
    candidates_seen *s = user;
    if (p->message && (!strcmp(p->message, "preparing") || !strcmp(p->message, "done"))) {
        ck_assert_msg(p->candidate == NULL, "'%s' came with a candidate", p->message);
        if (!strcmp(p->message, "done")) s->tried += p->tried;
        return;
    }
    if (p->message) { /* a candidate failed (its message names it), a confirmation, the seeds */
        s->failed += !strncmp(p->message, "candidate ", 10);
        return;
    }
    s->measured++;
    if (p->candidate && p->rate > 0 && !strncmp(p->candidate, "WG=", 3)) {
        s->described++;
        size_t o = strlen(s->all);
        snprintf(s->all + o, sizeof s->all - o, "\n%s", p->candidate);
    }
}

/* What ocx_tune refuses before it tunes, and what it leaves alone (an adversarial tester's finds):
 * a queue without profiling (every candidate had failed for the whole budget), resume under
 * simulated limits (the device's own entries dropped or replaced), a file in the lock's place (the
 * unlock deleted it), a run stopped before it began (a resumed file was rewritten), and an entry
 * whose every candidate ran out of memory (reported as unsupported). */
START_TEST(test_tuning_refusals)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    char path[1400], lock[1500], *text = NULL;
    path_in(dir_env, path, sizeof path);
    snprintf(lock, sizeof lock, "%s/.%s.json.lock", dir_env, dev.normalized_name);
    ocx_tune_options opt = {.families = "vector", .dtypes = "f32", .classes = "small", .budget_s = 4, .quick = 1,
                            .out_path = path};
    ck_status(ocx_tune(ctx, &(ocx_tune_options){.out_path = ""}), OCX_ERR_INVALID_ARGUMENT);

    cl_context c;
    cl_device_id d;
    ck_ok(ocx_context_cl(ctx, &c, &d));
    cl_int err;
    cl_command_queue plain = clCreateCommandQueue(c, d, 0, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ocx_context *interop = NULL;
    ck_ok(ocx_context_create_from_cl(c, d, plain, &interop));
    const double t0 = ocx__now_s();
    ck_status(ocx_tune(interop, &opt), OCX_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(ocx_last_error(), "no profiling") && ocx__now_s() - t0 < 1, "%s", ocx_last_error());
    ocx_context_destroy(interop);
    clReleaseCommandQueue(plain);
    ck_assert_int_ne(access(path, F_OK), 0);

    write_json(dir_env, profile_with(32, 1, 1)); /* a file to resume */
    text = strdup(read_text(path));
    setenv("OCX_LIMIT_WG", "64", 1);
    ocx_context *limited = NULL;
    ck_ok(ocx_context_create(NULL, &limited));
    opt.resume = 1;
    ck_status(ocx_tune(limited, &opt), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ocx_last_error(), "simulated limits"), "%s", ocx_last_error());
    ocx_context_destroy(limited);
    unsetenv("OCX_LIMIT_WG");
    ck_assert_str_eq(read_text(path), text);

    volatile int stop = 1; /* stopped before it began: the resumed file as it was */
    opt.stop = &stop;
    ck_ok(ocx_tune(ctx, &opt));
    ck_assert_str_eq(read_text(path), text);
    opt.stop = NULL;

    FILE *f = fopen(lock, "w"); /* someone's file where the lock goes */
    ck_assert_ptr_nonnull(f);
    fputs("keep me\n", f);
    fclose(f);
    ck_status(ocx_tune(ctx, &opt), OCX_ERR_IO);
    ck_assert_msg(strstr(ocx_last_error(), "not an empty lock file"), "%s", ocx_last_error());
    ck_assert_str_eq(read_text(lock), "keep me\n");
    ck_assert_int_eq(unlink(lock), 0);
    free(text);

    opt.resume = 0; /* every candidate out of memory: said so */
    opt.families = "reduce";
    setenv("OCX_LIMIT_SCRATCH", "1", 1);
    ck_status(ocx_tune(ctx, &opt), OCX_ERR_OUT_OF_MEMORY);
    ck_assert_msg(strstr(ocx_last_error(), "ran out of memory"), "%s", ocx_last_error());
    unsetenv("OCX_LIMIT_SCRATCH");
    ocx_context_destroy(ctx);
}
END_TEST

START_TEST(test_tuning_round_trip)
{
    /* A tiny tuning run (5 s) writes a valid profile; a new context then uses its parameters. */
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    char path[1400];
    path_in(dir_env, path, sizeof path);
    static candidates_seen seen;
    ocx_tune_options opt = {.families = "vector", .dtypes = "f32", .budget_s = 5, .quick = 1, .out_path = path,
                            .progress = note_candidates, .user = &seen};
    char log[1400];
    capture_stderr(log, sizeof log);
    ck_ok(ocx_tune(ctx, &opt));
    /* Each measured candidate came with its searched parameters (WG first) and its rate, and the
     * entries counted each candidate once: not the confirmation's measurements again. */
    ck_assert_int_gt(seen.measured, 0);
    ck_assert_int_eq(seen.described, seen.measured);
    ck_assert_uint_eq(seen.tried, (unsigned)(seen.measured + seen.failed));
    /* The candidates' binaries stay out of the disk cache. */
    ocx_context_stats stats;
    ck_ok(ocx_context_get_stats(ctx, &stats));
    ck_assert_uint_gt(stats.programs_compiled, 1);
    ck_assert_uint_eq(stats.disk_cache_writes, 0);
    /* The vector family's NT (non-temporal stores) is not searched, the measurement's sequence
     * of operations being unable to judge it (tune.c, vector_search): no candidate varied it, and
     * the entries keep the defaults' (below). */
    ocx__params defaults;
    ck_ok(ocx__params_default(ctx, &ocx__family_vector, OCX_F32, &defaults));
    const int nt_default = defaults.v[ocx__param_index(&ocx__family_vector, "NT")];
    ocx_context_destroy(ctx);
    ck_assert_msg(!strstr(seen.all, " NT="), "NT was varied:%s", seen.all);
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    ck_assert_msg(j != NULL, "tuned profile does not parse: %s", jerr.text);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "schema")), 1);
    json_t *e = json_array_get(json_object_get(j, "entries"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(e, "family")), "vector");
    ck_assert_str_eq(json_string_value(json_object_get(e, "size_class")), "all");
    ck_assert(json_real_value(json_object_get(e, "rate")) > 0);
    /* --quick: "all"; on CPUs also "large" (beyond the caches) for the 1-D families, unless "all"
     * left it less than its least cost of the 5 s, or its set-up outlasted what was left (each
     * once under make check's load), which the run then says. */
    const size_t nentries = json_array_size(json_object_get(j, "entries"));
    const int left_out = lines_with(log, "vector/f32/large: the budget is spent; entry left out") +
                             lines_with(log, "vector/f32/large: out of budget before the first candidate; entry left out") ==
                         1;
    ck_assert_msg(nentries == (dev.type == OCX_DEVICE_CPU && !left_out ? 2u : 1u), "%zu entries; left out: %d",
                  nentries, left_out);
    if (nentries == 2) {
        json_t *l = json_array_get(json_object_get(j, "entries"), 1);
        ck_assert_str_eq(json_string_value(json_object_get(l, "size_class")), "large");
        ck_assert(json_real_value(json_object_get(l, "rate")) > 0);
    }
    for (size_t i = 0; i < nentries; i++) {
        json_t *pi = json_object_get(json_array_get(json_object_get(j, "entries"), i), "params");
        ck_assert_int_eq(json_integer_value(json_object_get(pi, "NT")), nt_default);
    }
    int wg = (int)json_integer_value(json_object_get(json_object_get(e, "params"), "WG"));
    json_decref(j);
    /* The entry's work-group size is one a measured candidate had. */
    char wg_line[32];
    snprintf(wg_line, sizeof wg_line, "\nWG=%d ", wg);
    ck_assert_msg(strstr(seen.all, wg_line) != NULL,
                  "WG=%d was not among the candidates:\n%s", wg, seen.all);
    expect_source(dir_env, wg);
    /* --resume keeps the finished entry and does not redo it. */
    ck_ok(ocx_context_create(NULL, &ctx));
    opt.resume = 1;
    opt.budget_s = 1;
    ck_ok(ocx_tune(ctx, &opt));
    ocx_context_destroy(ctx);
    expect_source(dir_env, wg);
    /* Stopped (*stop set, as by Ctrl-C) once the first candidate is measured: that entry is not
     * written, whatever its best so far (unconfirmed, the defaults measured once), and no other
     * starts. */
    char stopped[1400], lock[1400];
    snprintf(stopped, sizeof stopped, "%s/stopped.json", root);
    snprintf(lock, sizeof lock, "%s/.stopped.json.lock", root);
    stop_at_first = 0;
    ocx_tune_options cut = {.families = "vector,reduce", .dtypes = "f32", .budget_s = 5, .quick = 1,
                            .out_path = stopped, .stop = &stop_at_first, .progress = stop_on_candidate,
                            .user = lock};
    ck_ok(ocx_context_create(NULL, &ctx));
    ck_ok(ocx_tune(ctx, &cut));
    ck_assert_msg(access(stopped, F_OK) != 0, "a stopped run wrote %s", stopped);
    /* One run at a time per file, for library callers too (it had been ocx-tune's alone): the run
     * held its lock while it ran and removed it at the end; another run of this process holding it
     * now, a second is refused before any tuning. */
    ck_assert_int_eq(lock_was_held, 1);
    ck_assert_int_ne(access(lock, F_OK), 0);
    const int held = open(lock, O_RDONLY | O_CREAT, 0644);
    ck_assert_int_ge(held, 0);
    ck_assert_int_eq(flock(held, LOCK_EX), 0);
    stop_at_first = 0;
    lock_was_held = -1;
    ck_status(ocx_tune(ctx, &cut), OCX_ERR_IO);
    ck_assert_msg(strstr(ocx_last_error(), "another tuning run is writing"), "%s", ocx_last_error());
    ck_assert_int_eq(lock_was_held, -1); /* nothing was tuned */
    close(held);
    unlink(lock);
    ocx_context_destroy(ctx);
    /* --resume over a file that is not a profile (a typo in it, say) fails and leaves it: starting
     * afresh replaced it, and the entries this run does not cover were lost. */
    FILE *typo = fopen(stopped, "w");
    ck_assert_ptr_nonnull(typo);
    fputs("{\"schema\": 1, \"entries\": [,]}", typo);
    fclose(typo);
    ocx_tune_options over = {.families = "vector", .dtypes = "f32", .budget_s = 5, .quick = 1, .resume = 1,
                             .out_path = stopped};
    ck_ok(ocx_context_create(NULL, &ctx));
    ck_status(ocx_tune(ctx, &over), OCX_ERR_IO);
    ocx_context_destroy(ctx);
    ck_assert_str_eq(read_text(stopped), "{\"schema\": 1, \"entries\": [,]}");
    /* Bad options. */
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_tune_options bad = {.families = "vectr", .out_path = path};
    ck_status(ocx_tune(ctx, &bad), OCX_ERR_INVALID_ARGUMENT);
    bad.families = ",";
    ck_status(ocx_tune(ctx, &bad), OCX_ERR_INVALID_ARGUMENT);
    bad.families = "vector";
    bad.classes = "huge";
    ck_status(ocx_tune(ctx, &bad), OCX_ERR_INVALID_ARGUMENT);
    bad.classes = NULL;
    bad.families = "vector";
    bad.dtypes = "i32";
    ck_status(ocx_tune(ctx, &bad), OCX_ERR_INVALID_ARGUMENT);
    bad.dtypes = ","; /* names none: it had tuned nothing and said "not tunable" */
    ck_status(ocx_tune(ctx, &bad), OCX_ERR_INVALID_ARGUMENT);
    /* an empty name or one named twice: refused as ocx-bench refuses its lists' (both had run) */
    static const char *const odd_lists[][3] = {{"vector,,reduce", NULL, NULL}, {"vector,", NULL, NULL},
                                               {"vector", "f32,f32", NULL}, {"vector", NULL, "all,small,all"},
                                               {",vector", NULL, NULL}};
    for (size_t i = 0; i < sizeof odd_lists / sizeof *odd_lists; i++) {
        ocx_tune_options odd = {.families = odd_lists[i][0], .dtypes = odd_lists[i][1], .classes = odd_lists[i][2],
                                .out_path = path};
        ck_status(ocx_tune(ctx, &odd), OCX_ERR_INVALID_ARGUMENT);
        const char *list = odd_lists[i][2] ? odd_lists[i][2] : odd_lists[i][1] ? odd_lists[i][1] : odd_lists[i][0];
        ck_assert_msg(strstr(ocx_last_error(), list) != NULL, "%s: %s", list, ocx_last_error());
    }
    bad.dtypes = "f32";
    bad.budget_s = NAN; /* not finite: refused (NaN had run the 60-s default) */
    ck_status(ocx_tune(ctx, &bad), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "budget_s"));
    ck_status(ocx_tune(ctx, NULL), OCX_ERR_INVALID_ARGUMENT);
    ocx_context_destroy(ctx);
}
END_TEST

/* The profile of another device, `name`, of `type` ("": none recorded, as in files written before
 * the key), with one f32 "all" entry of `family` whose parameters are this device's built-in ones
 * with WG=wg (and `extra`=1 where extra is a name); written to dir/<file>.json. */
static void write_other(const char *dir, const char *file, const char *name, const char *type, const char *vendor,
                        int cu, const char *family, int wg, const char *extra)
{
    json_t *params = builtin_params(family);
    json_object_set_new(params, "WG", json_integer(wg));
    if (extra) json_object_set_new(params, extra, json_integer(1));
    json_t *j = json_pack("{s:i, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:i}, s:[{s:s, s:s, s:s, s:o, s:f, s:s}]}",
                          "schema", 1, "ocx_version", OCX_VERSION_STRING, "date", "2026-01-01T00:00:00Z", "device",
                          "vendor", vendor, "name", name, "normalized_name", name, "type", type, "driver_version", "1",
                          "compute_units", cu, "entries", "family", family, "dtype", "f32", "size_class", "all",
                          "params", params, "rate", 1.0, "unit", "GB/s");
    ck_assert_ptr_nonnull(j);
    if (!*type) json_object_del(json_object_get(j, "device"), "type");
    char path[1400];
    snprintf(path, sizeof path, "%s/%s.json", dir, file);
    ck_assert_int_eq(json_dump_file(j, path, JSON_INDENT(1)), 0);
    json_decref(j);
}

/* ocx-tune's seeds: the entries of other devices of this one's type, from all three directories,
 * ranked (the same vendor's first, then the nearest count of compute units, then by name), none
 * twice (of two alike the higher ranked, wherever it was read), a device's entry in an earlier
 * directory hiding its copy in a later one, as in lookups; not this device's own, nor another
 * type's, nor a file that records no type, nor parameters this device refuses (and those without a
 * warning: they are another device's). The best are read last, so that they must displace. */
START_TEST(test_seeds)
{
    const char *mine = ocx_device_type_name(dev.type), *other = dev.type == OCX_DEVICE_CPU ? "gpu" : "cpu";
    const int cu = (int)dev.compute_units;
    write_other(dir_env, "b", "far-b", mine, dev.vendor, cu + 8, "reduce", 2, NULL);
    write_other(dir_env, "c", "vendor-c", mine, "Another Vendor", cu, "reduce", 4, NULL);
    write_other(dir_user, "d", "twin-d", mine, "Another Vendor", cu, "reduce", 8, NULL); /* a's, ranked below */
    write_other(dir_sys, "a", "near-a", mine, dev.vendor, cu, "reduce", 8, NULL);
    write_other(dir_sys, "b-again", "far-b", mine, dev.vendor, cu + 8, "reduce", 16, NULL); /* hidden by b */
    write_other(dir_env, "e", "type-e", other, dev.vendor, cu, "reduce", 32, NULL);
    write_other(dir_env, "f", "untyped-f", "", dev.vendor, cu, "reduce", 32, NULL);
    write_other(dir_user, "g", "bad-g", mine, dev.vendor, cu, "reduce", 32, "NO_SUCH_PARAMETER");
    write_other(dir_user, "h", "huge-h", mine, dev.vendor, cu, "reduce", 1 << 20, NULL);
    write_other(dir_env, "i", "vector-i", mine, dev.vendor, cu, "vector", 32, NULL); /* another family */
    write_other(dir_env, dev.normalized_name, dev.normalized_name, mine, dev.vendor, cu, "reduce", 32, NULL);
    char fifo[1400];
    snprintf(fifo, sizeof fifo, "%s/fifo.json", dir_sys); /* opened, it would wait for a writer */
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    warnings_seen w = {0, ""};
    unsetenv("OCX_QUIET");
    ocx_set_warning_handler(collect_warning, &w);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx__seed seeds[4], two[2];
    const int n = ocx__profile_seeds(ctx, &ocx__family_reduce, OCX_F32, "all", seeds, 4);
    const int n2 = ocx__profile_seeds(ctx, &ocx__family_reduce, OCX_F32, "all", two, 2);
    ocx_context_destroy(ctx);
    ocx_set_warning_handler(NULL, NULL);
    ck_assert_msg(w.count == 0, "warned: %s", w.first);
    const char *want[] = {"near-a", "far-b", "vendor-c"};
    const int want_wg[] = {8, 2, 4};
    const unsigned wg = ocx__param_index(&ocx__family_reduce, "WG");
    ck_assert_int_eq(n, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(seeds[i].from, want[i]);
        ck_assert_int_eq(seeds[i].v[wg], want_wg[i]);
        for (unsigned p = ocx__family_reduce.nparams; p < OCX__MAX_PARAMS; p++) ck_assert_int_eq(seeds[i].v[p], 0);
    }
    ck_assert_int_eq(n2, 2); /* cap 2: the two highest ranked */
    ck_assert_str_eq(two[0].from, "near-a");
    ck_assert_str_eq(two[1].from, "far-b");
}
END_TEST

/* A tuning run tries the seeds after the defaults and says whose they are (stopped once the
 * seed is measured: the budget is only a bound). */
typedef struct seeds_seen {
    char said[256];
    candidates_seen seen;
    volatile int stop;
} seeds_seen;
static void note_seeds(void *user, const ocx_tune_progress *p)
{
    seeds_seen *s = user;
    if (p->message && !strncmp(p->message, "seeds from", 10)) snprintf(s->said, sizeof s->said, "%s", p->message);
    note_candidates(&s->seen, p);
    if (!p->message && p->candidate && !strncmp(p->candidate, "WG=8 ", 5)) s->stop = 1;
}

START_TEST(test_tuning_tries_seeds)
{
    write_other(dir_sys, "a", "near-a", ocx_device_type_name(dev.type), dev.vendor, (int)dev.compute_units, "vector",
                8, NULL);
    static seeds_seen log;
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    char out[1400];
    snprintf(out, sizeof out, "%s/tuned.json", root);
    ocx_tune_options opt = {.families = "vector", .dtypes = "f32", .classes = "all", .budget_s = 60, .quick = 1,
                            .out_path = out, .progress = note_seeds, .user = &log, .stop = &log.stop};
    ck_ok(ocx_tune(ctx, &opt));
    ocx_context_destroy(ctx);
    ck_assert_str_eq(log.said, "seeds from the profiles of near-a");
    /* the second candidate measured, after the defaults */
    const char *second = strchr(log.seen.all + 1, '\n');
    ck_assert_msg(second && !strncmp(second, "\nWG=8 ", 6), "candidates:%s", log.seen.all);
}
END_TEST

/* --classes picks the size classes (and overrides --quick's choice); GEMM's large class is tuned
 * on GPUs only, so a CPU asked for nothing else tunes nothing. */
START_TEST(test_tuning_classes)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_device_info info;
    ck_ok(ocx_context_device_info(ctx, &info));
    char path[1400];
    path_in(dir_env, path, sizeof path);
    ocx_tune_options opt = {
        .families = "reduce", .dtypes = "f32", .classes = "small", .budget_s = 3, .quick = 1, .out_path = path};
    ck_ok(ocx_tune(ctx, &opt));
    json_t *j = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "entries")), 1);
    json_t *e = json_array_get(json_object_get(j, "entries"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(e, "family")), "reduce");
    ck_assert_str_eq(json_string_value(json_object_get(e, "size_class")), "small");
    json_decref(j);
    if (info.type == OCX_DEVICE_CPU) {
        unlink(path);
        opt.families = "gemm";
        opt.classes = "large";
        ck_status(ocx_tune(ctx, &opt), OCX_ERR_UNSUPPORTED);
        ck_assert_int_ne(access(path, F_OK), 0);
    }
    ocx_context_destroy(ctx);
}
END_TEST

/* Every candidate of the reduce entries (sum, dot, max and argmax, each timed on its own; on CPUs
 * "large" reads copies of its inputs in turn), of the GEMM entry (on CPUs with two smaller products
 * besides) and of the vector entry (axpy, add and scale, each checked) runs and verifies: a failed
 * candidate would mean the measurement itself is wrong, the defaults' first. */
typedef struct entries_seen {
    int measured[4], failed[4];
} entries_seen;

static void note_entries(void *user, const ocx_tune_progress *p)
{
    entries_seen *s = user;
    const int e = !strcmp(p->family, "gemm") ? 2 : !strcmp(p->family, "vector") ? 3 : !strcmp(p->size_class, "large");
    if (!p->message)
        s->measured[e]++;
    else if (strstr(p->message, "failed"))
        s->failed[e]++;
}

START_TEST(test_tuning_measurements_verify)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    char path[1400];
    path_in(dir_env, path, sizeof path);
    entries_seen seen = {{0}, {0}};
    const int cpu = dev.type == OCX_DEVICE_CPU; /* (GPUs: "all" only; their large sizes take too long here) */
    /* One run an entry, each with a budget of its own: in one 12-s run of all three, the sanitizer
     * build (CI) had spent the budget before the last entry started. */
    static const struct { const char *families, *classes; double budget_s; } runs[] = {
        {"reduce", "all", 5}, {"gemm", "all", 8}, {"vector", "all", 5}, {"reduce", "large", 10}};
    for (int r = 0; r < (cpu ? 4 : 3); r++) {
        ocx_tune_options opt = {.families = runs[r].families, .dtypes = "f32", .classes = runs[r].classes,
                                .budget_s = runs[r].budget_s, .quick = 1, .out_path = path,
                                .progress = note_entries, .user = &seen};
        ck_ok(ocx_tune(ctx, &opt));
    }
    for (int e = 0; e < 4; e++) {
        if (e == 1 && !cpu) continue;
        ck_assert_msg(seen.measured[e] > 0 && seen.failed[e] == 0, "entry %d: %d measured, %d failed", e,
                      seen.measured[e], seen.failed[e]);
    }
    ocx_context_destroy(ctx);
}
END_TEST

/* The confirmation's sign test against exact binomial tails: a candidate no better than the
 * defaults wins each round with probability 1/2, and with c candidates confirmed together each may
 * reach the rounds required at most one time in 32c (so the defaults give way to one no better at
 * most one time in 32), while one fewer win would let it through more often; where even every
 * round is not that rare, no count is (rounds + 1). */
START_TEST(test_confirm_wins)
{
    for (int c = 1; c <= 3; c++)
        for (int n = 1; n <= 20; n++) {
            unsigned long long choose[21] = {1}, total = 1ull << n;
            for (int j = 1; j <= n; j++)
                choose[j] = choose[j - 1] * (unsigned long long)(n - j + 1) / (unsigned long long)j;
            const int w = ocx__tune_confirm_wins(n, c);
            ck_assert_msg(w >= 1 && w <= n + 1, "%d rounds, %d candidates: %d wins", n, c, w);
            if (w == n + 1) { /* not even all of them */
                ck_assert_msg(32ull * c * choose[n] > total, "%d rounds, %d candidates: all would do", n, c);
                continue;
            }
            unsigned long long tail = 0, wider = 0; /* rounds won >= w, and >= w - 1 */
            for (int j = w; j <= n; j++) tail += choose[j];
            wider = tail + choose[w - 1];
            ck_assert_msg(32ull * c * tail <= total, "%d rounds, %d candidates, %d wins: %llu of %llu", n, c, w, tail,
                          total);
            ck_assert_msg(32ull * c * wider > total, "%d rounds, %d candidates: %d wins would do", n, c, w - 1);
        }
    ck_assert_int_eq(ocx__tune_confirm_wins(4, 1), 5);
    ck_assert_int_eq(ocx__tune_confirm_wins(5, 1), 5);
    ck_assert_int_eq(ocx__tune_confirm_wins(9, 1), 8);
    ck_assert_int_eq(ocx__tune_confirm_wins(15, 1), 12);
    ck_assert_int_eq(ocx__tune_confirm_wins(6, 3), 7);
    ck_assert_int_eq(ocx__tune_confirm_wins(7, 3), 7);
    ck_assert_int_eq(ocx__tune_confirm_wins(11, 3), 10);
    ck_assert_int_eq(ocx__tune_confirm_wins(15, 3), 13);
}
END_TEST

/* ocx-tune outlives a crash of its tuning process (a driver's compiler that aborts, as PoCL 3.1's
 * did): the run continues from the entries already written, and the profile ends complete. The
 * tool's test hook OCX_TUNE_ABORT_AT=0 aborts the first attempt right after its first entry. */
START_TEST(test_tool_outlives_a_crash)
{
    char path[1400], err[1400];
    path_in(dir_env, path, sizeof path);
    snprintf(err, sizeof err, "%s/tune.err", root);
    setenv("OCX_TUNE_ABORT_AT", "0", 1);
    const char *args[] = {"--quick", "--kernels", "vector,reduce", "--classes", "all", "--dtypes", "f32",
                          "--budget", "30", "--verbose", "--out", path, NULL};
    int rc = trun_tool("ocx-tune", "/dev/null", err, args);
    unsetenv("OCX_TUNE_ABORT_AT");
    char *text = tslurp(err, NULL); /* all of it: --verbose writes a line per candidate */
    ck_assert_msg(rc == 0, "ocx-tune exited %d:\n%s", rc, text);
    /* The second attempt continued the file (it did not start afresh and tune the vector entry again). */
    const char *retry = strstr(text, "continuing from the entries written so far");
    ck_assert_msg(strstr(text, "died of signal") && retry && strstr(retry, ", continuing "),
                  "no crash and resumption in the tool's log:\n%s", text);
    /* --verbose: a line as each entry starts and as each candidate is measured. */
    const char *first = strstr(text, "vector/f32/all: preparing");
    ck_assert_msg(first && !strstr(first + 1, "vector/f32/all: preparing"),
                  "the vector entry was not tuned exactly once:\n%s", text);
    const char *cand = strstr(text, "s vector/f32/all: candidate WG=");
    ck_assert_msg(cand && strstr(cand, " measured ") && strstr(cand, ", 1 tried (0 failed), best "),
                  "no line for the vector entry's first candidate:\n%s", text);
    ck_assert_msg(!strstr(text, "does not read it under this name"), "the device's own name was questioned:\n%s", text);
    free(text);
    json_t *j = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(j);
    json_t *entries = json_object_get(j, "entries");
    ck_assert_uint_eq(json_array_size(entries), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(entries, 0), "family")), "vector");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(entries, 1), "family")), "reduce");
    json_decref(j);
}
END_TEST


/* ocx-tune's output path and --resume: a bad number or path is refused before any tuning; a
 * symbolic link is written through (it replaced the link, and would have replaced /dev/null); an
 * entry the library would refuse is tuned again on --resume, not kept. */
START_TEST(test_tool_paths_and_resume)
{
    char err[1400], link[1400], target[1400];
    snprintf(err, sizeof err, "%s/tune.err", root);
    const char *bad_budget[] = {"--budget", "abc", NULL};
    ck_assert_int_eq(trun_tool("ocx-tune", "/dev/null", err, bad_budget), 2);
    /* a budget spent before the tuning starts: nothing tuned (it had become the default 60 s) */
    char tiny[1400];
    snprintf(tiny, sizeof tiny, "%s/tiny.json", root);
    const char *tiny_budget[] = {"--kernels", "vector", "--budget", "1e-9", "--out", tiny, NULL};
    ck_assert_int_eq(trun_tool("ocx-tune", "/dev/null", err, tiny_budget), 1);
    ck_assert_msg(strstr(read_text(err), "no entry was finished") && access(tiny, F_OK) != 0, "%s", read_text(err));
    /* another run writing the same file (its lock held here): refused before any tuning (two
     * --resume runs had each written their own copy, the last without the other's entries) */
    char held[1400];
    snprintf(held, sizeof held, "%s/.tiny.json.lock", root);
    const int hfd = open(held, O_RDWR | O_CREAT, 0644);
    ck_assert_int_ge(hfd, 0);
    ck_assert_int_eq(flock(hfd, LOCK_EX), 0);
    const char *beside[] = {"--kernels", "vector", "--budget", "8", "--resume", "--out", tiny, NULL};
    ck_assert_int_eq(trun_tool("ocx-tune", "/dev/null", err, beside), 1);
    ck_assert_msg(strstr(read_text(err), "another tuning run is writing") &&
                      !strstr(read_text(err), "vector/f32/all:") && access(tiny, F_OK) != 0,
                  "%s", read_text(err));
    /* the same through a link to it, made before the file is (the lock had been named after the
     * link until its target existed: two runs then wrote at once, the last dropping the other's
     * entries) */
    char dangling[1400];
    snprintf(dangling, sizeof dangling, "%s/to-tiny.json", root);
    ck_assert_int_eq(symlink("tiny.json", dangling), 0);
    const char *through[] = {"--kernels", "vector", "--budget", "8", "--out", dangling, NULL};
    ck_assert_int_eq(trun_tool("ocx-tune", "/dev/null", err, through), 1);
    close(hfd);
    ck_assert_msg(strstr(read_text(err), "another tuning run is writing") &&
                      !strstr(read_text(err), "vector/f32/all:") && access(tiny, F_OK) != 0,
                  "%s", read_text(err));
    unlink(dangling);
    /* "--out --resume": --out has no value (it wrote a profile to a file named --resume) */
    const char *out_option[] = {"--kernels", "vector", "--budget", "3", "--out", "--resume", NULL};
    ck_assert_int_eq(trun_tool("ocx-tune", "/dev/null", err, out_option), 2);
    ck_assert_msg(strstr(read_text(err), "--out: needs a value"), "%s", read_text(err));
    /* Under simulated limits only to a file named: the default is the profile every later run on
     * the device reads (it had been written there, WG=4 and all, without a word). */
    const char *limited[] = {"--quick", "--kernels", "vector", "--budget", "8", NULL};
    setenv("OCX_LIMIT_WG", "4", 1);
    ck_assert_int_eq(trun_tool("ocx-tune", "/dev/null", err, limited), 2);
    unsetenv("OCX_LIMIT_WG");
    ck_assert_msg(strstr(read_text(err), "simulated limits") && !strstr(read_text(err), "vector/f32/all:"),
                  "a run under limits without --out was not refused before tuning:\n%s", read_text(err));
    const char *to_dir[] = {"--quick", "--kernels", "vector", "--budget", "30", "--out", root, NULL};
    ck_assert_int_eq(trun_tool("ocx-tune", "/dev/null", err, to_dir), 1);
    ck_assert_msg(strstr(read_text(err), "is not a regular file") && !strstr(read_text(err), "vector/f32/all:"),
                  "a directory as --out was not refused before tuning:\n%s", read_text(err));
    /* a directory that access() calls writable for root, but where no file can be made */
    struct stat proc;
    if (stat("/proc/self", &proc) == 0) {
        const char *to_proc[] = {"--quick", "--kernels", "vector", "--budget", "30", "--out", "/proc/ocx-tune.json", NULL};
        ck_assert_int_eq(trun_tool("ocx-tune", "/dev/null", err, to_proc), 1);
        ck_assert_msg(strstr(read_text(err), "cannot write /proc/ocx-tune.json") && !strstr(read_text(err), "vector/f32/all:"),
                      "an --out in /proc was not refused before tuning:\n%s", read_text(err));
    }
    snprintf(link, sizeof link, "%s/link.json", root);
    snprintf(target, sizeof target, "%s/target.json", root);
    ck_assert_int_eq(symlink("target.json", link), 0);
    const char *via_link[] = {"--quick", "--kernels", "vector", "--classes", "all", "--dtypes", "f32", "--budget", "8",
                              "--out", link, NULL};
    ck_assert_msg(trun_tool("ocx-tune", "/dev/null", err, via_link) == 0, "%s", read_text(err));
    /* link.json is no device's profile name: the tool says under which name the library reads it */
    char named[600];
    snprintf(named, sizeof named, "reads this device's profile as %s.json", dev.normalized_name);
    ck_assert_msg(strstr(read_text(err), named), "no word of the profile's name:\n%s", read_text(err));
    struct stat sb;
    ck_assert_int_eq(lstat(link, &sb), 0);
    ck_assert_msg(S_ISLNK(sb.st_mode), "the link was replaced");
    json_t *j = json_load_file(target, 0, NULL);
    ck_assert_ptr_nonnull(j);
    json_t *e = json_array_get(json_object_get(j, "entries"), 0), *params = json_object_get(e, "params");
    ck_assert_str_eq(json_string_value(json_object_get(e, "family")), "vector");
    json_object_set_new(params, "WG", json_integer(3)); /* not a power of two: refused by the library */
    /* a header from another ocx version and a driver version edited by hand: the resumed file is
     * written with this run's (they had stayed, and ocx-info called the file stale) */
    json_object_set_new(j, "ocx_version", json_string("9.9.9"));
    json_object_set_new(json_object_get(j, "device"), "driver_version", json_string("9.9"));
    ck_assert_int_eq(json_dump_file(j, target, 0), 0);
    json_decref(j);
    const char *resume[] = {"--quick", "--kernels", "vector", "--classes", "all", "--dtypes", "f32", "--budget", "8",
                            "--resume", "--out", link, NULL};
    unsetenv("OCX_QUIET"); /* the warning is the tool's to show */
    const int rc = trun_tool("ocx-tune", "/dev/null", err, resume);
    setenv("OCX_QUIET", "1", 1);
    ck_assert_msg(rc == 0, "%s", read_text(err));
    ck_assert_msg(strstr(read_text(err), "dropped from the resumed file") && strstr(read_text(err), "vector/f32/all:"),
                  "the refused entry was not tuned again:\n%s", read_text(err));
    j = json_load_file(target, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "entries")), 1);
    e = json_array_get(json_object_get(j, "entries"), 0);
    ck_assert_int_ne(json_integer_value(json_object_get(json_object_get(e, "params"), "WG")), 3);
    ck_assert_str_eq(json_string_value(json_object_get(j, "ocx_version")), OCX_VERSION_STRING);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "device"), "driver_version")),
                     dev.driver_version);
    json_decref(j);
    /* resumed again, with nothing left to tune: the file as it was, and said so (not "wrote") */
    char *was = strdup(read_text(target));
    ck_assert_int_eq(trun_tool("ocx-tune", "/dev/null", err, resume), 0);
    ck_assert_msg(strstr(read_text(err), "has every entry asked for; left as it was"), "%s", read_text(err));
    ck_assert_str_eq(read_text(target), was);
    free(was);
}
END_TEST

START_TEST(test_tuning_under_limits)
{
    setenv("OCX_LIMIT_WG", "64", 1);
    setenv("OCX_LIMIT_LOCAL_MEM", "16384", 1);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    char path[1400];
    path_in(dir_env, path, sizeof path);
    ocx_tune_options opt = {.families = "vector,reduce", .dtypes = "f32", .budget_s = 8, .quick = 1, .out_path = path};
    ck_ok(ocx_tune(ctx, &opt));
    ocx_context_destroy(ctx);
    json_t *j = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(j);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(j, "entries"), i, e) {
        int wg = (int)json_integer_value(json_object_get(json_object_get(e, "params"), "WG"));
        ck_assert_int_le(wg, 64);
    }
    ck_assert_uint_ge(json_array_size(json_object_get(j, "entries")), 1);
    json_decref(j);
    unsetenv("OCX_LIMIT_WG");
    unsetenv("OCX_LIMIT_LOCAL_MEM");
}
END_TEST

/* The profiles shipped in profiles/ (installed by make install; each is read only on its own device,
 * so no other test reads them): every entry names a family, dtype and parameters of this version,
 * each value an integer in its range and on its ladder (powers of two, …), none missing that is not
 * marked as added later; the file's device name matches its file name. */
START_TEST(test_shipped_profiles)
{
    const char *src = getenv("OCX_TEST_SRCDIR");
    if (!src) src = "..";
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/profiles", src);
    DIR *d = opendir(dir);
    ck_assert_msg(d, "no %s (OCX_TEST_SRCDIR)", dir);
    int files = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json")) continue;
        char path[1500];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        json_error_t err;
        json_t *j = json_load_file(path, 0, &err);
        ck_assert_msg(j, "%s: %s", path, err.text);
        ck_assert_int_eq(json_integer_value(json_object_get(j, "schema")), 1);
        const char *name = json_string_value(json_object_get(json_object_get(j, "device"), "normalized_name"));
        ck_assert_msg(name && strlen(name) == len - 5 && !strncmp(name, de->d_name, len - 5), "%s: device %s", path,
                      name ? name : "(none)");
        const char *type = json_string_value(json_object_get(json_object_get(j, "device"), "type"));
        ck_assert_msg(type && (!strcmp(type, "cpu") || !strcmp(type, "gpu") || !strcmp(type, "accelerator")),
                      "%s: device type %s (seeds for other devices' tuning are taken by type)", path,
                      type ? type : "(none)");
        json_t *entries = json_object_get(j, "entries"), *e;
        ck_assert_msg(json_array_size(entries) > 0, "%s: no entries", path);
        size_t i;
        json_array_foreach(entries, i, e) {
            const char *fam_name = json_string_value(json_object_get(e, "family"));
            const char *dtype = json_string_value(json_object_get(e, "dtype"));
            const ocx__family *fam = NULL;
            for (const ocx__family *const *f = ocx__families; *f; f++)
                if (fam_name && !strcmp((*f)->name, fam_name)) fam = *f;
            ck_assert_msg(fam, "%s entry %zu: family %s", path, i, fam_name ? fam_name : "(none)");
            ck_assert_msg(dtype && (!strcmp(dtype, "f32") || !strcmp(dtype, "f16") || !strcmp(dtype, "f64")),
                          "%s entry %zu: dtype", path, i);
            ck_assert_msg(json_is_string(json_object_get(e, "size_class")), "%s entry %zu: size_class", path, i);
            json_t *params = json_object_get(e, "params");
            ck_assert_msg(json_is_object(params), "%s entry %zu: params", path, i);
            size_t known = 0;
            for (unsigned p = 0; p < fam->nparams; p++) {
                const ocx__param_def *def = &fam->params[p];
                json_t *v = json_object_get(params, def->name);
                if (!v) {
                    ck_assert_msg(def->added, "%s entry %zu (%s): %s missing", path, i, fam_name, def->name);
                    continue;
                }
                known++;
                ck_assert_msg(json_is_integer(v), "%s entry %zu: %s not an integer", path, i, def->name);
                json_int_t x = json_integer_value(v);
                const int pow2 = (x & (x - 1)) == 0, pow2_3 = pow2 || (x % 3 == 0 && ((x / 3) & (x / 3 - 1)) == 0);
                ck_assert_msg(x >= def->min && x <= def->max &&
                                  (def->ladder == OCX__LADDER_ALL || (def->ladder == OCX__LADDER_POW2 ? pow2 : pow2_3)),
                              "%s entry %zu (%s): %s=%lld", path, i, fam_name, def->name, (long long)x);
            }
            ck_assert_msg(known == json_object_size(params), "%s entry %zu (%s): an unknown parameter", path, i,
                          fam_name);
        }
        json_decref(j);
        files++;
    }
    closedir(d);
    ck_assert_int_ge(files, 3);
}
END_TEST

/* Profiles and the peaks cache are written through a temporary file and a rename. Threads of one
 * process writing one path at once (two ocx_measure_peaks calls) had shared the temporary's name
 * (the process id alone): a rename then failed with ENOENT, or a mix of both landed. Each call
 * now has a name of its own: every write succeeds, the file is one of them whole, no temporary stays. */
enum { DUMP_THREADS = 6, DUMPS = 40 };
static char dump_path[1300];
static void *dump_many(void *arg)
{
    const int who = (int)(intptr_t)arg;
    intptr_t failed = 0;
    for (int i = 0; i < DUMPS; i++) {
        json_t *root = json_pack("{s:i, s:i, s:s}", "who", who, "i", i, "pad", "0123456789abcdef0123456789abcdef");
        failed += ocx__json_dump_atomic(root, dump_path, JSON_INDENT(2)) != 0;
        json_decref(root);
    }
    return (void *)failed;
}

START_TEST(test_json_written_whole_from_threads)
{
    snprintf(dump_path, sizeof dump_path, "%s/dump.json", dir_env);
    pthread_t th[DUMP_THREADS];
    for (int t = 0; t < DUMP_THREADS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, dump_many, (void *)(intptr_t)t), 0);
    intptr_t failed = 0;
    for (int t = 0; t < DUMP_THREADS; t++) {
        void *f = NULL;
        pthread_join(th[t], &f);
        failed += (intptr_t)f;
    }
    ck_assert_int_eq(failed, 0);
    json_error_t err;
    json_t *got = json_load_file(dump_path, 0, &err);
    ck_assert_msg(got != NULL, "%s: %s", dump_path, err.text);
    ck_assert_int_eq(json_integer_value(json_object_get(got, "i")), DUMPS - 1);
    json_decref(got);
    DIR *d = opendir(dir_env);
    ck_assert_ptr_nonnull(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) files += e->d_name[0] != '.';
    closedir(d);
    ck_assert_int_eq(files, 1); /* no temporary left beside it */
    /* a file replaced keeps its permissions (0640 had become the temporary's 0644) */
    ck_assert_int_eq(chmod(dump_path, 0640), 0);
    json_t *again = json_pack("{s:i}", "i", 0);
    ck_assert_int_eq(ocx__json_dump_atomic(again, dump_path, 0), 0);
    json_decref(again);
    struct stat sb;
    ck_assert_int_eq(stat(dump_path, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 07777, 0640);
}
END_TEST

/* A write whose process died before its rename leaves its temporary behind (a peaks file, a
 * profile); a later write of the same file removes those over ten minutes old. It leaves a fresh
 * one (a write under way), names of another pattern or of another file (one whose name starts
 * with this one's too), and links. */
START_TEST(test_json_stale_temps_removed)
{
    char path[1300], names[6][1400];
    snprintf(path, sizeof path, "%s/out.json", dir_env);
    snprintf(names[0], sizeof names[0], "%s.tmp-4242-7", path); /* stale: removed */
    snprintf(names[1], sizeof names[1], "%s.tmp-4243-0", path); /* fresh */
    snprintf(names[2], sizeof names[2], "%s.tmp-x", path);      /* not the pattern */
    snprintf(names[3], sizeof names[3], "%s/other.json.tmp-1-1", dir_env);
    snprintf(names[4], sizeof names[4], "%s/out.jsonx.tmp-1-1", dir_env);
    snprintf(names[5], sizeof names[5], "%s.tmp-4244-1", path); /* a link */
    const struct timespec hour_ago[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    for (int k = 0; k < 6; k++) {
        if (k == 5) {
            ck_assert_int_eq(symlink(names[2], names[k]), 0);
        } else {
            FILE *f = fopen(names[k], "w");
            ck_assert_ptr_nonnull(f);
            fputs("{\"partial", f);
            fclose(f);
        }
        if (k != 1) ck_assert_int_eq(utimensat(AT_FDCWD, names[k], hour_ago, AT_SYMLINK_NOFOLLOW), 0);
    }
    json_t *root = json_pack("{s:i}", "a", 1);
    ck_assert_int_eq(ocx__json_dump_atomic(root, path, 0), 0);
    json_decref(root);
    struct stat st;
    ck_assert_msg(stat(names[0], &st) != 0, "a stale temporary stayed");
    for (int k = 1; k < 6; k++) ck_assert_msg(lstat(names[k], &st) == 0, "%s was removed", names[k]);
}
END_TEST

/* The temporary file is created with O_EXCL: links planted at its names (in a shared directory)
 * are skipped, never followed, so the file they point at keeps its content; json_dump_file had
 * opened the name with fopen(..., "w"), which writes through a link. */
START_TEST(test_json_temp_never_follows_links)
{
    char victim[1300], path[1300], link[1400];
    snprintf(victim, sizeof victim, "%s/victim", dir_env);
    snprintf(path, sizeof path, "%s/out.json", dir_env);
    FILE *v = fopen(victim, "w");
    ck_assert_ptr_nonnull(v);
    fputs("precious", v);
    fclose(v);
    for (int k = 0; k < 8; k++) {
        snprintf(link, sizeof link, "%s.tmp-%ld-%d", path, (long)getpid(), k);
        ck_assert_int_eq(symlink(victim, link), 0);
    }
    json_t *root = json_pack("{s:i}", "a", 1);
    ck_assert_int_eq(ocx__json_dump_atomic(root, path, 0), 0);
    json_decref(root);
    FILE *f = fopen(victim, "r");
    char got[64] = "";
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(got, sizeof got, f));
    fclose(f);
    ck_assert_str_eq(got, "precious");
    json_error_t err;
    json_t *back = json_load_file(path, 0, &err);
    ck_assert_ptr_nonnull(back);
    ck_assert_int_eq(json_integer_value(json_object_get(back, "a")), 1);
    json_decref(back);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("profile");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_lookup_order);
    tcase_add_test(core, test_used_by_operations_and_stale_marked);
    tcase_add_test(core, test_warns_once);
    tcase_add_test(core, test_warning_handler);
    tcase_add_test(core, test_bad_class_entry_as_absent);
    tcase_add_test(core, test_user_path);
    tcase_add_test(core, test_warning_names_the_parameter);
    tcase_add_test(core, test_warning_handler_replaced);
    tcase_add_test(core, test_tuning_refusals);
    tcase_add_test(core, test_tuning_round_trip);
    tcase_add_test(core, test_seeds);
    tcase_add_test(core, test_tuning_tries_seeds);
    tcase_add_test(core, test_size_classes);
    tcase_add_test(core, test_gemm_size_classes);
    tcase_add_test(core, test_step_together_pairs);
    tcase_add_test(core, test_gemm_cpu_f64_columns);
    tcase_add_test(core, test_defines_fit_options_buffers);
    tcase_add_test(core, test_class_defaults_before_all);
    tcase_add_test(core, test_vector_large_cpu);
    tcase_add_test(core, test_vendor_class_defaults);
    tcase_add_test(core, test_lookups_kept);
    tcase_add_test(core, test_tuning_classes);
    tcase_add_test(core, test_tuning_measurements_verify);
    tcase_add_test(core, test_confirm_wins);
    tcase_add_test(core, test_tool_outlives_a_crash);
    tcase_add_test(core, test_tool_paths_and_resume);
    tcase_add_test(core, test_json_written_whole_from_threads);
    tcase_add_test(core, test_json_temp_never_follows_links);
    tcase_add_test(core, test_json_stale_temps_removed);
    suite_add_tcase(s, core);
    TCase *bad = tcase_create("malformed");
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, test_not_json);
    tcase_add_test(bad, test_empty_file);
    tcase_add_test(bad, test_not_a_regular_file);
    tcase_add_test(bad, test_profile_dir_is_a_file);
    tcase_add_test(bad, test_other_schema);
    tcase_add_test(bad, test_unknown_top_level_key);
    tcase_add_test(bad, test_other_device);
    tcase_add_test(bad, test_unknown_entry_key);
    tcase_add_test(bad, test_unknown_parameter);
    tcase_add_test(bad, test_missing_parameter);
    tcase_add_test(bad, test_added_parameter_absent);
    tcase_add_test(bad, test_wrong_type);
    tcase_add_test(bad, test_out_of_range);
    tcase_add_test(bad, test_not_power_of_two);
    tcase_add_test(bad, test_three_times_power_of_two);
    tcase_add_test(bad, test_breaks_device_limits);
    tcase_add_test(bad, test_f64_entries_without_fp64);
    tcase_add_test(bad, test_many_problems_warned_once);
    tcase_add_test(bad, test_unread_entries_warned);
    tcase_add_test(bad, test_shipped_profiles);
    suite_add_tcase(s, bad);
    TCase *limits = tcase_create("limits");
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_add_test(limits, test_tuning_under_limits);
    suite_add_tcase(s, limits);
    return trun(s);
}
