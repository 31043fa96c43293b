#include "testutil.h"
#include "ocx_internal.h" /* trandom_params: the families' parameter tables */

#include <sys/wait.h>
#include <unistd.h>

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

ocx_context *tctx;
ocx_device_info tinfo;

void tctx_setup(void)
{
    ocx_status st = ocx_context_create(NULL, &tctx);
    ck_assert_msg(st == OCX_OK, "no usable OpenCL device (a failure, not a skip): %s", ocx_last_error());
    ck_ok(ocx_context_device_info(tctx, &tinfo));
}

void tno_profiles(void)
{
    unsetenv("OCX_PROFILE_DIR");
    setenv("XDG_DATA_HOME", "/nonexistent-ocx-test", 1);
    setenv("OCX_PROFILE_SYSTEM_DIR", "/nonexistent-ocx-test", 1);
}

void tctx_teardown(void)
{
    ocx_context_destroy(tctx);
    tctx = NULL;
}

static const char *const limit_vars[][2] = {
    {"OCX_LIMIT_WG", "64"}, {"OCX_LIMIT_LOCAL_MEM", "16384"}, {"OCX_DISABLE_FP16", "1"}, {"OCX_DISABLE_FP64", "1"}};

void tlimits_setup(void)
{
    for (size_t i = 0; i < sizeof limit_vars / sizeof *limit_vars; i++) setenv(limit_vars[i][0], limit_vars[i][1], 1);
    tctx_setup();
}

void tlimits_teardown(void)
{
    tctx_teardown();
    for (size_t i = 0; i < sizeof limit_vars / sizeof *limit_vars; i++) unsetenv(limit_vars[i][0]);
}

uint64_t trand_next(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

uint64_t test_seed(void)
{
    const char *s = getenv("OCX_TEST_SEED");
    return s ? strtoull(s, NULL, 0) : 0x5eed0000ull + (uint64_t)time(NULL);
}

int trandom_params(const char *family, ocx_dtype dtype, const char *const *drawn, const char *fixed, uint64_t *rng,
                   char *env, size_t cap)
{
    const ocx__family *fam = NULL;
    for (const ocx__family *const *f = ocx__families; *f && !fam; f++)
        if (!strcmp((*f)->name, family)) fam = *f;
    ck_assert_msg(fam, "no parameter family %s", family);
    ocx__params p;
    ck_ok(ocx__params_default(tctx, fam, dtype, &p));
    for (const char *const *d = drawn; *d; d++) {
        const unsigned i = ocx__param_index(fam, *d);
        ck_assert_msg(i < fam->nparams, "%s has no parameter %s", family, *d);
        const ocx__param_def *def = &fam->params[i];
        int rungs[64], n = 0;
        /* as ocx-tune's ladders (tune.c: space_init): a long one of every value goes by doublings */
        if (def->ladder == OCX__LADDER_POW2 || (def->ladder == OCX__LADDER_ALL && def->max - def->min > 63))
            for (long v = def->min; v <= def->max && n < 64; v = v ? 2 * v : 1) rungs[n++] = (int)v; /* min may be 0 */
        else
            for (int v = def->min; v <= def->max && n < 64; v++)
                if (ocx__on_ladder(def->ladder, v)) rungs[n++] = v;
        /* the high bits: with the low ones, all four vector sets of one seed drew WPT=2 */
        p.v[i] = rungs[(trand_next(rng) >> 32) % (uint64_t)n];
    }
    for (const ocx__param_def *def = fam->params; fixed && def < fam->params + fam->nparams; def++)
        if (tparam(fixed, def->name) >= 0) p.v[def - fam->params] = tparam(fixed, def->name);
    if (ocx__params_check(fam, p.v, &tinfo, dtype)) return 0;
    env[0] = '\0';
    ocx__params_append(fam, p.v, "", ",", 0, env, cap);
    return 1;
}

void trandom_param_runs(const char *family, const char *const *drawn, int sets, void (*body)(uint64_t seed, void *user),
                        void *user)
{
    char var[64] = "OCX_";
    for (size_t i = 0; family[i] && i < 40; i++) var[4 + i] = (char)toupper((unsigned char)family[i]);
    strcat(var, "_PARAMS");
    uint64_t seed = test_seed(), rng = seed;
    int done = 0;
    for (int tries = 0; done < sets && tries < 1000; tries++) {
        char env[512];
        if (!trandom_params(family, OCX_F32, drawn, NULL, &rng, env, sizeof env)) continue;
        fprintf(stderr, "random parameters: seed %llu: %s=%s\n", (unsigned long long)seed, var, env);
        setenv(var, env, 1);
        body(seed + (uint64_t)done, user);
        unsetenv(var);
        done++;
    }
    ck_assert_msg(done == sets, "seed %llu: %d of %d %s parameter sets drawn", (unsigned long long)seed, done, sets, family);
}

int tparam(const char *list, const char *name)
{
    const size_t len = strlen(name);
    for (const char *at = list; (at = strstr(at, name)) != NULL; at += len)
        if ((at == list || at[-1] == ',' || at[-1] == ' ') && at[len] == '=') return atoi(at + len + 1);
    return -1;
}

double trand_uniform(uint64_t *s, double lo, double hi)
{
    for (;;) {
        double u = (double)(trand_next(s) >> 11) * (1.0 / 9007199254740992.0);
        double v = lo + (hi - lo) * u;
        if (v != 0.0) return v;
    }
}

double tvalue(ocx_dtype dtype, const void *host, size_t i)
{
    switch (dtype) {
    case OCX_F32: return ((const float *)host)[i];
    case OCX_F16: return ocx_half_to_float(((const uint16_t *)host)[i]);
    case OCX_F64: return ((const double *)host)[i];
    case OCX_I32: return ((const int32_t *)host)[i];
    case OCX_U32: return ((const uint32_t *)host)[i];
    }
    return NAN;
}

void tset(ocx_dtype dtype, void *host, size_t i, double v)
{
    switch (dtype) {
    case OCX_F32: ((float *)host)[i] = (float)v; break;
    case OCX_F16: ((uint16_t *)host)[i] = ocx_half_from_float((float)v); break;
    case OCX_F64: ((double *)host)[i] = v; break;
    case OCX_I32: ((int32_t *)host)[i] = (int32_t)v; break;
    case OCX_U32: ((uint32_t *)host)[i] = (uint32_t)(int64_t)v; break; /* negative: modulo 2^32, defined */
    }
}

void trand_fill(uint64_t *s, ocx_dtype dtype, void *host, double *ref, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) {
        double v = trand_uniform(s, lo, hi);
        if (dtype == OCX_I32 || dtype == OCX_U32) v = floor(v);
        tset(dtype, host, i, v);
        if (tvalue(dtype, host, i) == 0.0) tset(dtype, host, i, hi > 1 ? 1.0 : 0.5 * hi);
        if (ref) ref[i] = tvalue(dtype, host, i);
    }
}

void trand_ints(uint64_t *s, ocx_dtype dtype, void *host, double *ref, size_t n, int k)
{
    for (size_t i = 0; i < n; i++) {
        const int v = (int)(trand_next(s) % (uint64_t)(2 * k + 1)) - k;
        tset(dtype, host, i, v ? v : k);
        if (ref) ref[i] = v ? v : k;
    }
}

double tulp(ocx_dtype dtype)
{
    return dtype == OCX_F16 ? ldexp(1, -11) : dtype == OCX_F64 ? ldexp(1, -53) : ldexp(1, -24);
}

ocx_buffer *tbuffer(ocx_dtype dtype, size_t n, const void *host)
{
    ocx_buffer *b = NULL;
    ck_ok(ocx_buffer_create(tctx, dtype, n, &b));
    if (host && n) ck_ok(ocx_buffer_write(tctx, NULL, b, 0, n, host, 0, NULL, NULL));
    return b;
}

cl_event tuser_event(void)
{
    cl_context c;
    ck_ok(ocx_context_cl(tctx, &c, NULL));
    cl_int err;
    cl_event ev = clCreateUserEvent(c, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    return ev;
}

ocx_buffer *tpoisoned(ocx_dtype dtype, size_t n)
{
    ocx_buffer *b = tbuffer(dtype, n, NULL);
    unsigned char v[8];
    switch (dtype) {
    case OCX_F32: { float f = NAN; memcpy(v, &f, 4); break; }
    case OCX_F16: { uint16_t h = 0x7e00; memcpy(v, &h, 2); break; }
    case OCX_F64: { double d = NAN; memcpy(v, &d, 8); break; }
    default: { uint32_t u = 0xdeadbeefu; memcpy(v, &u, 4); break; }
    }
    if (n) ck_ok(ocx_buffer_fill(tctx, NULL, b, 0, n, v, 0, NULL, NULL));
    ck_ok(ocx_stream_finish(tctx, NULL));
    return b;
}

void *tread(const ocx_buffer *buf)
{
    size_t n = ocx_buffer_length(buf);
    void *host = malloc(n * ocx_dtype_size(ocx_buffer_dtype(buf)) + 1);
    ck_assert_ptr_nonnull(host);
    if (n) ck_ok(ocx_buffer_read(tctx, NULL, buf, 0, n, host, 0, NULL, NULL));
    return host;
}

int tdtype_ok(ocx_dtype dtype) { return dtype != OCX_F64 || tinfo.has_fp64; }

void tadd_sim_case(Suite *s, const TTest *test)
{
    const char *asked = getenv("CK_RUN_CASE");
    if (!asked || strcmp(asked, "sim") != 0) return;
    TCase *tc = tcase_create("sim");
    tcase_set_timeout(tc, 1800);
    /* checked: in the test's own process where the suite forks (a context does not survive a fork
     * on NVIDIA's driver) */
    tcase_add_checked_fixture(tc, tctx_setup, tctx_teardown);
    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
}

static unsigned watchdog_s;
static void watchdog_fired(int sig)
{
    static const char msg[] = "\ntestutil: a test ran past its timeout without fork (hung?): the last "
                              "parameter set or seed printed above is the suspect\n";
    (void)sig;
    const ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1); /* async-signal-safe, as _exit is */
    (void)w;
    _exit(EXIT_FAILURE);
}
static void watchdog_arm(void)
{
    const char *mode = getenv("CK_FORK");
    if (!mode || strcmp(mode, "no") != 0) return; /* forked tests: Check times them itself */
    const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
    const double mult = m ? strtod(m, NULL) : 1.0;
    const double s = watchdog_s * (mult > 0 ? mult : 1.0);
    signal(SIGALRM, watchdog_fired);
    alarm(s < 1 ? 1 : s > 1e9 ? 1000000000u : (unsigned)s);
}
static void watchdog_disarm(void)
{
    alarm(0);
}
void twatchdog(TCase *tc, unsigned seconds)
{
    watchdog_s = seconds;
    tcase_set_timeout(tc, seconds);
    tcase_add_checked_fixture(tc, watchdog_arm, watchdog_disarm);
}

int trun(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

char *tslurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    const long n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    if (size) *size = (size_t)n;
    return s;
}

int trun_tool(const char *tool, const char *out, const char *err, const char *const *args)
{
    const char *tools = getenv("OCX_TEST_TOOLS");
    ck_assert_msg(tools != NULL, "the test environment sets OCX_TEST_TOOLS");
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", tools, tool);
    char *argv[32];
    int n = 0;
    argv[n++] = path;
    for (; args[n - 1] && n < 31; n++) argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen(out, "w", stdout)) _exit(126);
        if (err && !freopen(err, "w", stderr)) _exit(126);
        execv(path, argv);
        _exit(127);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

ocx_context_stats tadd_in_new_context(void)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    enum { N = 4099 };
    float x[N], y[N], z[N];
    uint64_t seed = 21;
    trand_fill(&seed, OCX_F32, x, NULL, N, -1, 1);
    trand_fill(&seed, OCX_F32, y, NULL, N, -1, 1);
    ocx_buffer *bx = NULL, *by = NULL, *bz = NULL;
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &bx));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &by));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &bz));
    ck_ok(ocx_buffer_write(ctx, NULL, bx, 0, N, x, 0, NULL, NULL));
    ck_ok(ocx_buffer_write(ctx, NULL, by, 0, N, y, 0, NULL, NULL));
    ck_ok(ocx_add(ctx, NULL, N, bx, by, bz, 0, NULL, NULL));
    ck_ok(ocx_buffer_read(ctx, NULL, bz, 0, N, z, 0, NULL, NULL));
    for (int i = 0; i < N; i++) ck_assert_float_eq(z[i], x[i] + y[i]);
    ocx_context_stats st;
    ck_ok(ocx_context_get_stats(ctx, &st));
    ocx_buffer_destroy(bx);
    ocx_buffer_destroy(by);
    ocx_buffer_destroy(bz);
    ocx_context_destroy(ctx);
    return st;
}
