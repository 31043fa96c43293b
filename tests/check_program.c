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
    tcase_add_test(core, test_params_fit_limits);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_params_under_simulated_limits);
    suite_add_tcase(s, limits);
    return trun(s);
}
