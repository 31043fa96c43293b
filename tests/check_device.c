/* check_device — enumeration, every OCX_DEVICE form, bad specs, simulated limits, fingerprints. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static size_t count;
static ocx_device_info first;

static void setup(void)
{
    unsetenv("OCX_DEVICE");
    ck_ok(ocx_device_count(&count));
    ck_assert_msg(count > 0, "no OpenCL device: CI must have one (PoCL)");
    ck_ok(ocx_device_get_info(0, &first));
}

START_TEST(test_enumerate)
{
    for (size_t i = 0; i < count; i++) {
        ocx_device_info d;
        ck_ok(ocx_device_get_info(i, &d));
        ck_assert_uint_eq(d.index, i);
        ck_assert_uint_gt(strlen(d.name), 0);
        ck_assert_uint_gt(d.compute_units, 0);
        ck_assert_uint_gt(d.max_work_group_size, 0);
        ck_assert_uint_gt(d.global_mem_bytes, 0);
        ck_assert_uint_gt(d.local_mem_bytes, 0);
        ck_assert_uint_ge(d.local_mem_max_bytes, d.local_mem_bytes);
        ck_assert_uint_eq(strlen(d.fingerprint), 16);
        for (const char *p = d.normalized_name; *p; p++)
            ck_assert_msg(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-',
                          "normalized name '%s' has '%c'", d.normalized_name, *p);
        ck_assert_msg(strncmp(d.normalized_name, "pthread-", 8) != 0, "PoCL prefix kept: %s", d.normalized_name);
    }
    /* The names profiles record a device's type by (their seeds for other devices' tuning). */
    ck_assert_str_eq(ocx_device_type_name(OCX_DEVICE_GPU), "gpu");
    ck_assert_str_eq(ocx_device_type_name(OCX_DEVICE_CPU), "cpu");
    ck_assert_str_eq(ocx_device_type_name(OCX_DEVICE_ACCELERATOR), "accelerator");
    ck_assert_str_eq(ocx_device_type_name(OCX_DEVICE_OTHER), "other");
    ck_assert_str_eq(ocx_device_type_name((ocx_device_type)99), "other");
    ocx_device_info d;
    ck_status(ocx_device_get_info(count, &d), OCX_ERR_NO_DEVICE);
    ck_status(ocx_device_get_info(0, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_device_count(NULL), OCX_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_fingerprint_stable)
{
    ocx_device_info again;
    ck_ok(ocx_device_get_info(0, &again));
    ck_assert_str_eq(first.fingerprint, again.fingerprint);
    setenv("OCX_LIMIT_WG", "64", 1); /* limits change capabilities, not the device's identity */
    ck_ok(ocx_device_get_info(0, &again));
    unsetenv("OCX_LIMIT_WG");
    ck_assert_str_eq(first.fingerprint, again.fingerprint);
}
END_TEST

START_TEST(test_select_forms)
{
    size_t idx = 99;
    ck_ok(ocx_device_select("0", &idx));
    ck_assert_uint_eq(idx, 0);
    char pd[32];
    snprintf(pd, sizeof pd, "%u:%u", first.platform_index, first.device_index);
    ck_ok(ocx_device_select(pd, &idx));
    ck_assert_uint_eq(idx, 0);
    const char *type = first.type == OCX_DEVICE_GPU ? "gpu" : first.type == OCX_DEVICE_CPU ? "CPU" : NULL;
    if (type) {
        ck_ok(ocx_device_select(type, &idx));
        ocx_device_info d;
        ck_ok(ocx_device_get_info(idx, &d));
        ck_assert_int_eq(d.type, first.type);
    }
    /* Case-insensitive substrings of the name, the vendor and the platform name. */
    char part[8];
    snprintf(part, sizeof part, "%.5s", first.platform_name);
    for (char *p = part; *p; p++) *p = (char)toupper((unsigned char)*p);
    ck_ok(ocx_device_select(part, &idx));
    ocx_device_info d;
    ck_ok(ocx_device_get_info(idx, &d));
    ck_assert_msg(strncasecmp(d.platform_name, part, strlen(part)) == 0, "'%s' chose %s", part, d.platform_name);
    ck_ok(ocx_device_select(first.vendor, &idx));
    /* and of the platform's version: "pocl", as README and ocx.h show, finds PoCL (whose platform
     * name is "Portable Computing Language"; it had matched nothing) */
    for (size_t i = 0; i < count; i++) {
        ocx_device_info di;
        ck_ok(ocx_device_get_info(i, &di));
        if (!strstr(di.platform_version, "PoCL")) continue;
        ck_ok(ocx_device_select("pocl", &idx));
        ck_ok(ocx_device_get_info(idx, &d));
        ck_assert_msg(strstr(d.platform_version, "PoCL"), "'pocl' chose %s (%s)", d.name, d.platform_version);
        break;
    }
    /* A spec with a colon that is not "P:D" is part of a name too (here with nothing to match). */
    ck_status(ocx_device_select("no such device:x", &idx), OCX_ERR_NO_DEVICE);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "part of a name"));
    /* A context's device info carries the device's numbers, as ocx_device_get_info's do, for every
     * device (they had been 0:0 whatever was chosen). */
    size_t held = 0; /* devices that held a context: at least one, the suites' own */
    for (size_t i = 0; i < count; i++) {
        ocx_device_info want, got;
        ck_ok(ocx_device_get_info(i, &want));
        char spec[32];
        snprintf(spec, sizeof spec, "%u:%u", want.platform_index, want.device_index);
        ocx_context *ctx = NULL;
        if (ocx_context_create(spec, &ctx) != OCX_OK) continue; /* a device that cannot hold a context */
        held++;
        ck_ok(ocx_context_device_info(ctx, &got));
        ck_assert_msg(got.index == i && got.platform_index == want.platform_index &&
                          got.device_index == want.device_index,
                      "context on %s: index %zu, %u:%u", spec, got.index, got.platform_index, got.device_index);
        ocx_context_destroy(ctx);
    }
    ck_assert_uint_ge(held, 1);
    /* The default is the first GPU, else the first device. */
    ck_ok(ocx_device_select(NULL, &idx));
    ck_ok(ocx_device_get_info(idx, &d));
    for (size_t i = 0; i < (d.type == OCX_DEVICE_GPU ? idx : count); i++) {
        ocx_device_info e;
        ck_ok(ocx_device_get_info(i, &e));
        ck_assert_int_ne(e.type, OCX_DEVICE_GPU);
    }
    if (d.type != OCX_DEVICE_GPU) ck_assert_uint_eq(idx, 0);
}
END_TEST

START_TEST(test_select_env_and_bad_specs)
{
    size_t idx = 0;
    char num[16];
    snprintf(num, sizeof num, "%zu", count - 1);
    setenv("OCX_DEVICE", num, 1);
    ck_ok(ocx_device_select(NULL, &idx));
    ck_assert_uint_eq(idx, count - 1);
    ck_ok(ocx_device_select("", &idx)); /* "" means: the environment */
    ck_assert_uint_eq(idx, count - 1);
    /* spaces around a spec do not count (from a script, "1 " had been part of a name, which
     * PoCL's platform version "OpenCL 3.0 PoCL" has for "0 "); only spaces are "" */
    ck_ok(ocx_device_select(" \t", &idx));
    ck_assert_uint_eq(idx, count - 1);
    char padded[32];
    snprintf(padded, sizeof padded, " %zu\n", count - 1);
    setenv("OCX_DEVICE", padded, 1);
    idx = 99;
    ck_ok(ocx_device_select(NULL, &idx));
    ck_assert_uint_eq(idx, count - 1);
    snprintf(padded, sizeof padded, "  %u:%u ", first.platform_index, first.device_index);
    ck_ok(ocx_device_select(padded, &idx));
    ck_assert_uint_eq(idx, 0);
    /* the variable is read: one past the last device (padded too) is none (with one device, its
     * number had also been the default's) */
    char past[16];
    snprintf(past, sizeof past, "%zu", count);
    snprintf(padded, sizeof padded, " %zu ", count);
    for (int pad = 0; pad < 2; pad++) {
        setenv("OCX_DEVICE", pad ? padded : past, 1);
        ck_status(ocx_device_select(NULL, &idx), OCX_ERR_NO_DEVICE);
        ck_assert_ptr_nonnull(strstr(ocx_last_error(), "OCX_DEVICE"));
    }
    setenv("OCX_DEVICE", num, 1);

    /* punctuation alone names nothing ("," had chosen PoCL: its platform version has a comma) */
    const char *bad[] = {"no-such-device-xyz", "999", "7:7", "1x:2", "accelerator-not", ",", "-", "(."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_status(ocx_device_select(bad[i], &idx), OCX_ERR_NO_DEVICE);
        ck_assert_msg(strstr(ocx_last_error(), bad[i]) != NULL, "message does not name '%s': %s", bad[i],
                      ocx_last_error());
        ck_assert_msg(strstr(ocx_last_error(), first.name) != NULL, "message does not list devices: %s",
                      ocx_last_error());
    }
    setenv("OCX_DEVICE", "no-such-device-xyz", 1);
    ocx_context *ctx = (ocx_context *)1;
    ck_status(ocx_context_create(NULL, &ctx), OCX_ERR_NO_DEVICE);
    ck_assert_ptr_null(ctx);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "OCX_DEVICE"));
    /* An explicit spec wins over the environment. */
    ck_ok(ocx_context_create("0", &ctx));
    ocx_context_destroy(ctx);
    unsetenv("OCX_DEVICE");
    ck_status(ocx_device_select("x", NULL), OCX_ERR_INVALID_ARGUMENT);
}
END_TEST

/* Appends each warning to the buffer (4096 bytes) passed as user. */
static void append_warning(const char *message, void *user)
{
    size_t o = strlen(user);
    snprintf((char *)user + o, 4096 - o, "%s\n", message);
}

/* Sets name to value (NULL: unsets it), keeping what it was in was[cap] (*set: whether it was set). */
static void swap_env(const char *name, const char *value, char *was, size_t cap, int *set)
{
    const char *old = getenv(name);
    *set = old != NULL;
    snprintf(was, cap, "%s", old ? old : "");
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}
static void restore_env(const char *name, const char *was, int set)
{
    if (set)
        setenv(name, was, 1);
    else
        unsetenv(name);
}

/* With no device the message says why, in a fresh process (ocx-info: a process reads its platforms'
 * devices once). No platform at all: OCL_ICD_VENDORS naming a directory without a .icd file. PoCL
 * with HOME a regular file (and no POCL_CACHE_DIR or XDG_CACHE_HOME) cannot create its kernel cache
 * and lists no device, while clinfo still shows its platform: the message had asked only whether
 * an ICD was installed; it now names HOME. (A driver that lists its devices whatever HOME is makes
 * that run succeed.) */
START_TEST(test_no_device_says_why)
{
    char dir[] = "/tmp/ocx-nodev.XXXXXX", home[64], err[64], was[3][4096];
    int set[3];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(home, sizeof home, "%s/home", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    FILE *f = fopen(home, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    const char *none[] = {NULL};

    swap_env("OCL_ICD_VENDORS", dir, was[0], sizeof was[0], &set[0]);
    const int rc_none = trun_tool("ocx-info", "/dev/null", err, none);
    restore_env("OCL_ICD_VENDORS", was[0], set[0]);
    char *said = tslurp(err, NULL);
    ck_assert_msg(rc_none == 1 && said && strstr(said, "no platform; is an ICD installed"), "exit %d: %s", rc_none,
                  said ? said : "");
    free(said);

    swap_env("HOME", home, was[0], sizeof was[0], &set[0]);
    swap_env("POCL_CACHE_DIR", NULL, was[1], sizeof was[1], &set[1]);
    swap_env("XDG_CACHE_HOME", NULL, was[2], sizeof was[2], &set[2]);
    const int rc_home = trun_tool("ocx-info", "/dev/null", err, none);
    restore_env("HOME", was[0], set[0]);
    restore_env("POCL_CACHE_DIR", was[1], set[1]);
    restore_env("XDG_CACHE_HOME", was[2], set[2]);
    said = tslurp(err, NULL);
    ck_assert_msg(rc_home == 0 || (rc_home == 1 && said && strstr(said, "none listing a device") &&
                                   strstr(said, "HOME (") && strstr(said, ") is not a directory")),
                  "exit %d: %s", rc_home, said ? said : "");
    free(said);
    unlink(err);
    unlink(home);
    rmdir(dir);
}
END_TEST

/* Values the variables cannot take are ignored (numbers) or taken as on (flags), each with one
 * warning that names the variable and the value; they had been taken silently ("-1" as the
 * largest number). */
START_TEST(test_bad_environment_values)
{
    static char warned[4096];
    warned[0] = '\0';
    unsetenv("OCX_QUIET");
    ocx_set_warning_handler(append_warning, warned);
    const char *bad[] = {"abc", "-1", "64x", "", "99999999999999999999999"};
    for (int i = 0; i < 5; i++) {
        if (!*bad[i]) continue; /* (empty: unset, no warning) */
        setenv("OCX_LIMIT_WG", bad[i], 1);
        ocx_device_info d;
        ck_ok(ocx_device_get_info(0, &d));
        ck_assert_uint_eq(d.max_work_group_size, first.max_work_group_size);
        ck_assert_int_eq(d.limited, first.limited);
        char expect[128];
        snprintf(expect, sizeof expect, "OCX_LIMIT_WG=%s %s; ignored\n", bad[i],
                 i == 4 ? "is out of range" : "is not a whole number (0 or more)");
        ck_assert_msg(strstr(warned, expect), "no '%s' among the warnings:\n%s", expect, warned);
    }
    /* once per variable and value, though read at every use */
    setenv("OCX_LIMIT_WG", "abc", 1);
    size_t before = strlen(warned);
    ocx_device_info d;
    ck_ok(ocx_device_get_info(0, &d));
    ck_assert_uint_eq(strlen(warned), before);
    /* good values still take effect, without a warning: hexadecimal after 0x, else decimal
     * ("010" is ten, not octal eight) */
    setenv("OCX_LIMIT_WG", "0x40", 1);
    ck_ok(ocx_device_get_info(0, &d));
    ck_assert_uint_le(d.max_work_group_size, 64);
    if (first.max_work_group_size > 10) {
        setenv("OCX_LIMIT_WG", "010", 1);
        ck_ok(ocx_device_get_info(0, &d));
        ck_assert_uint_eq(d.max_work_group_size, 10);
    }
    ck_assert_uint_eq(strlen(warned), before);
    /* a bad OCX_QUIET is taken as on: quiet, but for one warning about itself (silent, a mistyped
     * OCX_QUIET=nope had hidden every warning without a word) */
    setenv("OCX_QUIET", "loud", 1);
    setenv("OCX_LIMIT_WG", "zz", 1);
    ck_ok(ocx_device_get_info(0, &d));
    setenv("OCX_LIMIT_WG", "yy", 1);
    ck_ok(ocx_device_get_info(0, &d));
    unsetenv("OCX_QUIET");
    ck_assert_msg(!strstr(warned, "OCX_LIMIT_WG=zz") && !strstr(warned, "OCX_LIMIT_WG=yy"),
                  "a warning under OCX_QUIET=loud:\n%s", warned);
    const char *quiet_word = strstr(warned, "OCX_QUIET=loud is none of 1, yes, on, true, 0, no, off, false; taken as on\n");
    ck_assert_msg(quiet_word && !strstr(quiet_word + 1, "OCX_QUIET"), "OCX_QUIET=loud not said once:\n%s", warned);
    /* a flag: anything but the documented words is taken as on, and said so */
    setenv("OCX_DISABLE_FP64", "maybe", 1);
    ck_ok(ocx_device_get_info(0, &d));
    ck_assert_int_eq(d.has_fp64, 0);
    ck_assert_msg(strstr(warned, "OCX_DISABLE_FP64=maybe is none of 1, yes, on, true, 0, no, off, false; taken as on"),
                  "the warnings:\n%s", warned);
    setenv("OCX_DISABLE_FP64", "Off", 1);
    ck_ok(ocx_device_get_info(0, &d));
    ck_assert_int_eq(d.has_fp64, first.has_fp64);
    /* spaces around a word or a number do not count ("0 " had been taken as on, "64 " ignored) */
    size_t quiet_len = strlen(warned);
    setenv("OCX_DISABLE_FP64", " 0\t", 1);
    ck_ok(ocx_device_get_info(0, &d));
    ck_assert_int_eq(d.has_fp64, first.has_fp64);
    setenv("OCX_LIMIT_WG", " 64 ", 1);
    ck_ok(ocx_device_get_info(0, &d));
    ck_assert_uint_le(d.max_work_group_size, 64);
    ck_assert_msg(strlen(warned) == quiet_len, "warned of spaces:\n%s", warned + quiet_len);
    setenv("OCX_LIMIT_WG", "  ", 1); /* spaces alone: no number */
    ck_ok(ocx_device_get_info(0, &d));
    ck_assert_uint_eq(d.max_work_group_size, first.max_work_group_size);
    ck_assert_msg(strstr(warned + quiet_len, "OCX_LIMIT_WG=   is not a whole number"), "%s", warned + quiet_len);
    unsetenv("OCX_LIMIT_WG");
    unsetenv("OCX_DISABLE_FP64");
    /* Past the first 16 pairs, silence: neither a warning at every read nor, with a bad
     * OCX_QUIET then, a warning about it that warns again without end (a stack overflow). */
    for (int i = 0; i < 20; i++) {
        char v[16];
        snprintf(v, sizeof v, "bad%d", i);
        setenv("OCX_LIMIT_WG", v, 1);
        ck_ok(ocx_device_get_info(0, &d));
        ck_ok(ocx_device_get_info(0, &d));
    }
    const char *w19 = strstr(warned, "OCX_LIMIT_WG=bad19");
    ck_assert_msg(w19 == NULL, "warned past the first 16 pairs:\n%s", warned);
    setenv("OCX_QUIET", "maybe", 1);
    setenv("OCX_LIMIT_WG", "bad99", 1);
    ck_ok(ocx_device_get_info(0, &d));
    unsetenv("OCX_QUIET");
    unsetenv("OCX_LIMIT_WG");
    ocx_set_warning_handler(NULL, NULL);
}
END_TEST

START_TEST(test_simulated_limits)
{
    setenv("OCX_LIMIT_WG", "64", 1);
    setenv("OCX_LIMIT_LOCAL_MEM", "16384", 1);
    setenv("OCX_DISABLE_FP16", "1", 1);
    setenv("OCX_DISABLE_FP64", "1", 1);
    ocx_device_info d;
    ck_ok(ocx_device_get_info(0, &d));
    ck_assert_uint_le(d.max_work_group_size, 64);
    for (int i = 0; i < 3; i++) ck_assert_uint_le(d.max_work_item_sizes[i], 64);
    ck_assert_uint_le(d.local_mem_bytes, 16384);
    ck_assert_uint_le(d.local_mem_max_bytes, 16384);
    ck_assert_int_eq(d.has_fp16, 0);
    ck_assert_int_eq(d.has_fp64, 0);
    if (first.max_work_group_size > 64 || first.has_fp64 || first.local_mem_bytes > 16384) ck_assert_int_eq(d.limited, 1);

    /* The context sees the same limits, and f64 becomes a clear "unsupported". */
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_device_info c;
    ck_ok(ocx_context_device_info(ctx, &c));
    ck_assert_uint_le(c.max_work_group_size, 64);
    ocx_buffer *b = NULL;
    ck_status(ocx_buffer_create(ctx, OCX_F64, 16, &b), OCX_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "f64"));
    ck_ok(ocx_buffer_create(ctx, OCX_F16, 16, &b)); /* f16 storage stays available */
    ocx_buffer_destroy(b);
    ocx_context_destroy(ctx);
    /* local memory too small for any reduction: unsupported on this device, not an internal error */
    setenv("OCX_LIMIT_LOCAL_MEM", "8", 1);
    ck_ok(ocx_context_create(NULL, &ctx));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, 16, &b));
    ck_ok(ocx_fill(ctx, NULL, 16, 1.0, b, 1, 0, NULL, NULL));
    double sum = 0;
    ck_status(ocx_reduce_host(ctx, NULL, OCX_REDUCE_SUM, 16, b, 1, NULL, 1, &sum, NULL, 0, NULL), OCX_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "too small"));
    ocx_buffer_destroy(b);
    ocx_context_destroy(ctx);
    unsetenv("OCX_LIMIT_WG");
    unsetenv("OCX_LIMIT_LOCAL_MEM");
    unsetenv("OCX_DISABLE_FP16");
    unsetenv("OCX_DISABLE_FP64");
    ck_ok(ocx_device_get_info(0, &d));
    ck_assert_uint_eq(d.max_work_group_size, first.max_work_group_size);
    ck_assert_int_eq(d.limited, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("device");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, NULL);
    tcase_add_test(core, test_enumerate);
    tcase_add_test(core, test_fingerprint_stable);
    tcase_add_test(core, test_select_forms);
    tcase_add_test(core, test_select_env_and_bad_specs);
    tcase_add_test(core, test_no_device_says_why);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_add_checked_fixture(limits, setup, NULL);
    tcase_add_test(limits, test_simulated_limits);
    tcase_add_test(limits, test_bad_environment_values);
    suite_add_tcase(s, limits);
    return trun(s);
}
