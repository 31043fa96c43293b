/* check_program — program build from the embedded sources, the in-memory program cache, a broken
 * kernel's build log in the error, unknown sources, and the parameter table under limits. */
#include "ocx_internal.h"
#include "testutil.h"

static ocx_status kernel(ocx_context *ctx, const char *source, const char *options, const char *name, cl_kernel *k)
{
    return ocx__kernel_get(ctx, source, options, name, k); /* takes the context's lock itself */
}

START_TEST(test_embedded_sources)
{
    ck_assert_uint_ge(ocx__source_count, 1);
    const ocx__source *v = ocx__source_find("vector");
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(strlen(v->hash), 16);
    ck_assert_ptr_nonnull(strstr(v->text, "kernel void"));
    ck_assert_ptr_null(ocx__source_find("no-such-file"));
}
END_TEST

START_TEST(test_build_and_memory_cache)
{
    setenv("OCX_CACHE", "0", 1); /* this test is about the in-memory cache only */
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    cl_kernel k1 = NULL, k2 = NULL, k3 = NULL;
    ck_ok(kernel(ctx, "vector", "-DDTYPE=0 -DVW=1 -DWG=8", "vadd", &k1));
    ck_ok(kernel(ctx, "vector", "-DDTYPE=0 -DVW=1 -DWG=8", "vadd", &k2));
    ck_assert_ptr_eq(k1, k2); /* same program, same kernel object */
    ck_ok(kernel(ctx, "vector", "-DDTYPE=0 -DVW=1 -DWG=8", "vmul", &k3));
    ck_assert_ptr_ne(k1, k3);
    ocx_context_stats st;
    ck_ok(ocx_context_get_stats(ctx, &st));
    ck_assert_uint_eq(st.programs_compiled, 1);
    ck_assert_uint_eq(st.programs_from_memory, 2);
    ck_assert_uint_eq(st.disk_cache_writes, 0);
    /* Other defines are another program. */
    ck_ok(kernel(ctx, "vector", "-DDTYPE=0 -DVW=2 -DWG=8", "vadd", &k3));
    ck_assert_ptr_ne(k1, k3);
    ck_ok(ocx_context_get_stats(ctx, &st));
    ck_assert_uint_eq(st.programs_compiled, 2);
    ocx_context_destroy(ctx);
    unsetenv("OCX_CACHE");
}
END_TEST

START_TEST(test_broken_kernel_reports_log)
{
    cl_program prog = (cl_program)1;
    const char *broken = "kernel void broken(global float *x) { x[0] = undefined_identifier_ocx + 1; }\n";
    ck_status(ocx__program_build_text(tctx, broken, "", &prog), OCX_ERR_BUILD);
    ck_assert_ptr_null(prog);
    const char *msg = ocx_last_error();
    ck_assert_msg(strstr(msg, "build log") && strstr(msg, "undefined_identifier_ocx"),
                  "the error does not carry the build log: %s", msg);
    /* A kernel name the program lacks, and a source ocx does not have. */
    cl_kernel k = NULL;
    ck_status(kernel(tctx, "vector", "-DDTYPE=0", "no_such_kernel", &k), OCX_ERR_OPENCL);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "no_such_kernel"));
    ck_status(kernel(tctx, "no-such-source", "", "k", &k), OCX_ERR_INTERNAL);
    /* Bad -D values surface as a build failure with the log, not a crash. */
    ck_status(kernel(tctx, "vector", "-DDTYPE=7", "vadd", &k), OCX_ERR_BUILD);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "DTYPE must be"));
    /* A good probe builds. */
    ck_ok(ocx__program_build_text(tctx, "kernel void ok(global float *x) { x[0] = 1.0f; }", "", &prog));
    clReleaseProgram(prog);
}
END_TEST

/* OCX_BUILD_OPTIONS: an option without its argument (PoCL 3.1 crashed on a trailing -D) or one
 * that changes a macro ocx defines (-DVW=1 had given wrong results, silently) fails the call,
 * naming the variable; other options build. OCX_BUILD_LOG builds from source, where a cached
 * program had had no log to print. */
START_TEST(test_build_options_checked)
{
    static const char *const refused[][2] = {
        {"-D", "-D without its argument"},       {"-DOCX_T=1 -I", "-I without its argument"},
        {"-DVW=1", "changes VW, which ocx defines"}, {"-D  WG=4", "changes WG, which ocx defines"},
        {"-UDTYPE", "changes DTYPE, which ocx defines"}};
    cl_kernel k = NULL;
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        setenv("OCX_BUILD_OPTIONS", refused[i][0], 1);
        ck_status(kernel(tctx, "vector", "-DDTYPE=0 -DVW=1 -DWG=8", "vadd", &k), OCX_ERR_INVALID_ARGUMENT);
        ck_assert_msg(strstr(ocx_last_error(), "OCX_BUILD_OPTIONS") && strstr(ocx_last_error(), refused[i][1]),
                      "'%s': %s", refused[i][0], ocx_last_error());
    }
    setenv("OCX_BUILD_OPTIONS", "-DVWX=3 -D OCX_T -I /tmp -cl-mad-enable", 1); /* names ocx does not define */
    ck_ok(kernel(tctx, "vector", "-DDTYPE=0 -DVW=1 -DWG=8", "vadd", &k));
    /* The variable is read at every use: a program the context built before it was set (or with
     * another value) is not taken for one built with it. Once, a program in memory was, so that a
     * refused option passed and an accepted one was not applied. */
    ocx_context_stats before, after;
    unsetenv("OCX_BUILD_OPTIONS");
    ck_ok(kernel(tctx, "vector", "-DDTYPE=0 -DVW=1 -DWG=8", "vadd", &k));
    setenv("OCX_BUILD_OPTIONS", "-DVW=1", 1);
    ck_status(kernel(tctx, "vector", "-DDTYPE=0 -DVW=1 -DWG=8", "vadd", &k), OCX_ERR_INVALID_ARGUMENT);
    setenv("OCX_BUILD_OPTIONS", "-DVWX=4", 1);
    ck_ok(ocx_context_get_stats(tctx, &before));
    ck_ok(kernel(tctx, "vector", "-DDTYPE=0 -DVW=1 -DWG=8", "vadd", &k));
    ck_ok(ocx_context_get_stats(tctx, &after));
    ck_assert_uint_eq(after.programs_from_memory, before.programs_from_memory);
    unsetenv("OCX_BUILD_OPTIONS");

    char dir[] = "/tmp/ocx-buildlog-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *was = getenv("OCX_CACHE_DIR") ? strdup(getenv("OCX_CACHE_DIR")) : NULL;
    setenv("OCX_CACHE_DIR", dir, 1);
    ck_assert_uint_ge(tadd_in_new_context().disk_cache_writes, 1);
    ck_assert_uint_ge(tadd_in_new_context().programs_from_disk, 1);
    setenv("OCX_BUILD_LOG", "1", 1);
    ocx_context_stats st = tadd_in_new_context();
    unsetenv("OCX_BUILD_LOG");
    ck_assert_uint_eq(st.programs_from_disk, 0);
    ck_assert_uint_ge(st.programs_compiled, 1);
    if (was) setenv("OCX_CACHE_DIR", was, 1);
    else unsetenv("OCX_CACHE_DIR");
    free(was);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_params_fit_limits)
{
    tno_profiles(); /* tctx reads profiles at its first lookup, below */
    ocx__params p;
    ck_ok(ocx__params_get(tctx, &ocx__family_vector, OCX_F32, &p));
    ck_assert_str_eq(p.origin, "built-in");
    ck_assert_int_le(ocx__param(&p, "WG"), (int)tinfo.max_work_group_size);
    char defs[256] = "";
    ocx__params_defines(&p, defs, sizeof defs);
    ck_assert_ptr_nonnull(strstr(defs, "-DWG="));
    ck_assert_ptr_nonnull(strstr(defs, "-DVW="));
}
END_TEST

START_TEST(test_params_under_simulated_limits)
{
    setenv("OCX_LIMIT_WG", "16", 1);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx__params p;
    ck_ok(ocx__params_get(ctx, &ocx__family_vector, OCX_F32, &p));
    ck_assert_int_le(ocx__param(&p, "WG"), 16);
    /* …and the operation runs with them. */
    enum { N = 333 };
    float x[N], z[N];
    for (int i = 0; i < N; i++) x[i] = (float)i * 0.5f + 1;
    ocx_buffer *bx = NULL, *bz = NULL;
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &bx));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &bz));
    ck_ok(ocx_buffer_write(ctx, NULL, bx, 0, N, x, 0, NULL, NULL));
    ck_ok(ocx_add(ctx, NULL, N, bx, bx, bz, 0, NULL, NULL));
    ocx_params_info ran;
    ck_ok(ocx_last_params(&ran)); /* the launch's work-groups too, not only the lookup's */
    ck_assert_int_le(tparam(ran.params, "WG"), 16);
    ck_assert_int_ge(tparam(ran.params, "WG"), 1);
    ck_ok(ocx_buffer_read(ctx, NULL, bz, 0, N, z, 0, NULL, NULL));
    for (int i = 0; i < N; i++) ck_assert_float_eq(z[i], 2 * x[i]);
    ocx_buffer_destroy(bx);
    ocx_buffer_destroy(bz);
    ocx_context_destroy(ctx);
    unsetenv("OCX_LIMIT_WG");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("program");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, tctx_setup, tctx_teardown);
    tcase_add_test(core, test_embedded_sources);
    tcase_add_test(core, test_build_and_memory_cache);
    tcase_add_test(core, test_broken_kernel_reports_log);
    tcase_add_test(core, test_build_options_checked);
    tcase_add_test(core, test_params_fit_limits);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_params_under_simulated_limits);
    suite_add_tcase(s, limits);
    return trun(s);
}
