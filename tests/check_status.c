/* check_status — status names and messages, the per-thread error text, versions, dtypes. */
#include <pthread.h>
#include <string.h>

#include "testutil.h"

START_TEST(test_names_and_messages)
{
    static const ocx_status all[] = {OCX_OK, OCX_ERR_INVALID_ARGUMENT, OCX_ERR_NO_DEVICE, OCX_ERR_OUT_OF_MEMORY,
                                     OCX_ERR_BUILD, OCX_ERR_UNSUPPORTED, OCX_ERR_OPENCL, OCX_ERR_IO,
                                     OCX_ERR_OUT_OF_RANGE, OCX_ERR_DTYPE, OCX_ERR_CONTEXT_MISMATCH,
                                     OCX_ERR_INTERNAL};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        ck_assert_str_ne(ocx_status_name(all[i]), "unknown-status");
        ck_assert_uint_gt(strlen(ocx_status_message(all[i])), 5);
        for (size_t j = 0; j < i; j++) ck_assert_str_ne(ocx_status_name(all[i]), ocx_status_name(all[j]));
    }
    ck_assert_str_eq(ocx_status_name((ocx_status)-999), "unknown-status");
    ck_assert_str_eq(ocx_status_name(OCX_ERR_OUT_OF_RANGE), "out-of-range");
}
END_TEST

START_TEST(test_pinned_values)
{
    ck_assert_int_eq(OCX_OK, 0);
    ck_assert_int_eq(OCX_ERR_INVALID_ARGUMENT, -1);
    ck_assert_int_eq(OCX_ERR_NO_DEVICE, -2);
    ck_assert_int_eq(OCX_ERR_OUT_OF_MEMORY, -3);
    ck_assert_int_eq(OCX_ERR_BUILD, -4);
    ck_assert_int_eq(OCX_ERR_UNSUPPORTED, -5);
    ck_assert_int_eq(OCX_ERR_OPENCL, -6);
    ck_assert_int_eq(OCX_ERR_IO, -7);
    ck_assert_int_eq(OCX_ERR_OUT_OF_RANGE, -8);
    ck_assert_int_eq(OCX_ERR_DTYPE, -9);
    ck_assert_int_eq(OCX_ERR_CONTEXT_MISMATCH, -10);
    ck_assert_int_eq(OCX_ERR_INTERNAL, -11);
}
END_TEST

static void *other_thread(void *arg)
{
    (void)arg;
    /* A failure in this thread must not show in the main thread's last error. */
    ck_assert_int_eq(ocx_device_count(NULL), OCX_ERR_INVALID_ARGUMENT);
    return strstr(ocx_last_error(), "ocx_device_count") ? (void *)1 : NULL;
}

START_TEST(test_last_error_is_per_thread)
{
    ck_assert_int_eq(ocx_context_create(NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "ocx_context_create"));
    pthread_t t;
    void *seen = NULL;
    ck_assert_int_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
    pthread_join(t, &seen);
    ck_assert_ptr_nonnull(seen);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "ocx_context_create"));
}
END_TEST

START_TEST(test_version_and_dtypes)
{
    ck_assert_uint_eq(ocx_version_number(), OCX_VERSION_NUMBER);
    ck_assert_str_eq(ocx_version_string(), OCX_VERSION_STRING);
    ck_assert_uint_eq(ocx_dtype_size(OCX_F32), 4);
    ck_assert_uint_eq(ocx_dtype_size(OCX_F16), 2);
    ck_assert_uint_eq(ocx_dtype_size(OCX_F64), 8);
    ck_assert_uint_eq(ocx_dtype_size(OCX_I32), 4);
    ck_assert_uint_eq(ocx_dtype_size(OCX_U32), 4);
    ck_assert_uint_eq(ocx_dtype_size((ocx_dtype)77), 0);
    ck_assert_str_eq(ocx_dtype_name(OCX_F16), "f16");
    ck_assert_str_eq(ocx_dtype_name((ocx_dtype)77), "unknown");
}
END_TEST

START_TEST(test_half_conversion)
{
    /* Exact values, rounding to nearest even at the halfway points, overflow, subnormals, NaN. */
    ck_assert_uint_eq(ocx_half_from_float(1.0f), 0x3c00);
    ck_assert_uint_eq(ocx_half_from_float(-2.0f), 0xc000);
    ck_assert_uint_eq(ocx_half_from_float(65504.0f), 0x7bff);
    ck_assert_uint_eq(ocx_half_from_float(65520.0f), 0x7c00);          /* halfway to 2^16: even → inf */
    ck_assert_uint_eq(ocx_half_from_float(1.0f + 0x1p-11f), 0x3c00);   /* halfway, ties to even (down) */
    ck_assert_uint_eq(ocx_half_from_float(1.0f + 3 * 0x1p-11f), 0x3c02); /* halfway, ties to even (up) */
    ck_assert_uint_eq(ocx_half_from_float(0x1p-24f), 0x0001);          /* smallest subnormal */
    ck_assert_uint_eq(ocx_half_from_float(0x1p-25f), 0x0000);          /* halfway to it: even → 0 */
    ck_assert_uint_eq(ocx_half_from_float(0x1.8p-25f), 0x0001);
    ck_assert_uint_eq(ocx_half_from_float(INFINITY), 0x7c00);
    ck_assert((ocx_half_from_float(NAN) & 0x7c00) == 0x7c00 && (ocx_half_from_float(NAN) & 0x3ff));
    for (uint32_t h = 0; h < 0x10000; h++) { /* every finite half survives the round trip */
        if ((h & 0x7c00) == 0x7c00) continue;
        ck_assert_uint_eq(ocx_half_from_float(ocx_half_to_float((uint16_t)h)), h);
    }
    ck_assert(isnan(ocx_half_to_float(0x7e00)));
    ck_assert_float_eq(ocx_half_to_float(0x0001), 0x1p-24f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("status");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_names_and_messages);
    tcase_add_test(tc, test_pinned_values);
    tcase_add_test(tc, test_last_error_is_per_thread);
    tcase_add_test(tc, test_version_and_dtypes);
    tcase_add_test(tc, test_half_conversion);
    suite_add_tcase(s, tc);
    return trun(s);
}
