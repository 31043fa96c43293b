/* testutil.h — what the Check suites share: a context fixture, random data, host references. */
#ifndef OCX_TESTUTIL_H
#define OCX_TESTUTIL_H

#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ocx.h"

/* The context every suite's core fixture creates (on $OCX_DEVICE or the default device). A missing
 * device is a failure, never a skip: CI must prove the kernels run. */
extern ocx_context *tctx;
extern ocx_device_info tinfo;
void tctx_setup(void);
void tctx_teardown(void);
/* The same on the simulated small device of the issues' "limits" mode: OCX_LIMIT_WG=64,
 * OCX_LIMIT_LOCAL_MEM=16384, OCX_DISABLE_FP16=1, OCX_DISABLE_FP64=1 (unset again on teardown). */
void tlimits_setup(void);
void tlimits_teardown(void);

/* No profile file for what follows: contexts created (and processes started) afterwards use the
 * built-in parameters, for tests whose expectations assume them wherever the suites run. */
void tno_profiles(void);

/* ck_assert with ocx's last error in the message. */
#define ck_ok(expr)                                                                                \
    do {                                                                                           \
        ocx_status st_ = (expr);                                                                   \
        ck_assert_msg(st_ == OCX_OK, "%s -> %s: %s", #expr, ocx_status_name(st_), ocx_last_error()); \
    } while (0)
#define ck_status(expr, want)                                                                      \
    do {                                                                                           \
        ocx_status st_ = (expr);                                                                   \
        ck_assert_msg(st_ == (want), "%s -> %s (wanted %s): %s", #expr, ocx_status_name(st_),        \
                      ocx_status_name(want), ocx_last_error());                                    \
    } while (0)

/* Deterministic xorshift random numbers; the seed is printed by failing tests. */
uint64_t trand_next(uint64_t *state);
/* A seed for tests that draw new cases in each run: $OCX_TEST_SEED, else one from the clock (the
 * tests print it where they fail, so that OCX_TEST_SEED=it runs the same cases again). */
uint64_t test_seed(void);
/* A parameter set of `family` ("gemm", "vector", "reduce") drawn at random, for tests that run the
 * kernels beyond the hand-picked sets: each parameter named in `drawn` (NULL-terminated) a random
 * rung of its ladder, the others tctx's defaults for dtype, then `fixed` ("NAME=V,…" or NULL) over
 * them. Writes it to env in OCX_<FAMILY>_PARAMS's form and returns 1 where the library takes it
 * (its checks of a profile's parameters pass on this device), else 0: draw again. */
int trandom_params(const char *family, ocx_dtype dtype, const char *const *drawn, const char *fixed, uint64_t *rng,
                   char *env, size_t cap);
/* The value of parameter `name` in a "NAME=V,…" list, or -1 where it has none. */
int tparam(const char *list, const char *name);
/* Runs body(seed, user) under `sets` f32 parameter sets of family drawn by trandom_params (seed:
 * test_seed()), each set in OCX_<FAMILY>_PARAMS, with the seed and the set on stderr before it. */
void trandom_param_runs(const char *family, const char *const *drawn, int sets, void (*body)(uint64_t seed, void *user),
                        void *user);
/* Uniform in [lo, hi), never exactly 0. */
double trand_uniform(uint64_t *state, double lo, double hi);
/* Fills host data of `dtype` (f32, f16 bits, f64) with random non-zero values; also returns the
 * exact values as doubles in `ref` (may be NULL). */
void trand_fill(uint64_t *state, ocx_dtype dtype, void *host, double *ref, size_t n, double lo, double hi);
/* Non-zero integers in [-k, k] (ref: their values too, or NULL): data whose sums and products stay
 * exact, so that results can be compared exactly. */
void trand_ints(uint64_t *state, ocx_dtype dtype, void *host, double *ref, size_t n, int k);
/* The value of element i of host data of dtype, as double. */
double tvalue(ocx_dtype dtype, const void *host, size_t i);
/* Sets element i of host data to v (rounded to the dtype). */
void tset(ocx_dtype dtype, void *host, size_t i, double v);
/* Unit roundoff of a dtype (2^-24 for f32, 2^-11 for f16, 2^-53 for f64). */
double tulp(ocx_dtype dtype);
/* A buffer of dtype filled from host data; fails the test on error. */
ocx_buffer *tbuffer(ocx_dtype dtype, size_t n, const void *host);
/* A buffer whose every element holds the poison value (NaN for floats, 0xdeadbeef for ints). */
ocx_buffer *tpoisoned(ocx_dtype dtype, size_t n);
/* A user event of the fixture's context, not yet fired (the caller releases it). */
cl_event tuser_event(void);
/* A fresh context (its own, not the fixture's) runs z = x + y on 4099 random f32 elements and checks
 * it; returns that context's counters (programs compiled, loaded from disk, cache writes…). */
ocx_context_stats tadd_in_new_context(void);
/* Reads a whole buffer to newly allocated host memory. */
void *tread(const ocx_buffer *buf);
/* 1 when the device can run this dtype (f64 needs fp64). */
int tdtype_ok(ocx_dtype dtype);

/* The whole file at path, NUL-terminated (malloc'd; the caller frees it), its length in *size
 * unless size is NULL; a file that cannot be read fails the test. */
char *tslurp(const char *path, size_t *size);

/* Runs $OCX_TEST_TOOLS/`tool` with the NULL-terminated args, its stdout into the file `out` and its
 * stderr into `err` (NULL: this process's); returns its exit status, or -1 if a signal ended it. */
int trun_tool(const char *tool, const char *out, const char *err, const char *const *args);

/* Adds the test case "sim" of `test` (the kernels at sizes a simulator runs in seconds, on
 * parameter sets that take each of their paths; tests/oclgrind.sh runs it under Oclgrind) to s,
 * only where CK_RUN_CASE=sim asks for it: on a device the core cases check all that and more. */
void tadd_sim_case(Suite *s, const TTest *test);

/* Sets tc's timeout to `seconds` and makes it hold where Check does not apply it: in a suite run
 * without fork (CK_FORK=no: check_vector and check_reduce, whose test cases share one context),
 * Check times nothing, and a kernel that never finished held `make check` until something outside
 * killed it. There each test of tc runs under an alarm of `seconds` (times CK_TIMEOUT_MULTIPLIER,
 * as Check's timeouts are); past it the suite says so on stderr and exits with failure. One value
 * a suite (the alarm's fixture takes no argument). */
void twatchdog(TCase *tc, unsigned seconds);

/* Runs the suite with CK_NORMAL output; returns the process exit status. */
int trun(Suite *s);

#endif
