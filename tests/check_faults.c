/* check_faults — OpenCL calls made to fail on purpose: the library's error paths. This program
 * defines clCreateBuffer, clEnqueueReadBuffer, clGetDeviceInfo, clBuildProgram, clWaitForEvents and
 * clFlush itself, so the library linked into it calls these, which forward to the real ones (dlsym
 * RTLD_NEXT) except the one call that a test arms to fail (armed at 0, a function's calls are only
 * counted). Each test checks that the failure is reported, nothing is left corrupt, and
 * the next call works. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "testutil.h"

/* The armed failure: call number `fail_at` (from 1) of the function named `fail_fn` returns
 * `fail_err` (with `fail_on`, every call from it on); 0 counts calls without failing any. */
static const char *fail_fn;
static int fail_at, calls, fail_on;
static cl_int fail_err;

/* One call fails; arm(NULL, 0, 0) disarms (arm_on's too). */
static void arm(const char *fn, int at, cl_int err)
{
    fail_fn = fn;
    fail_at = at;
    fail_err = err;
    fail_on = 0;
    calls = 0;
}

/* Every call from call `at` on fails. */
static void arm_on(const char *fn, int at, cl_int err)
{
    arm(fn, at, err);
    fail_on = 1;
}

static int should_fail(const char *fn)
{
    if (!fail_fn || strcmp(fn, fail_fn) != 0) return 0;
    ++calls;
    return fail_at > 0 && (calls == fail_at || (fail_on && calls > fail_at));
}

#define REAL(fn) ((__typeof__(&fn))dlsym(RTLD_NEXT, #fn))

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem mem, cl_bool blocking, size_t off,
                                                     size_t size, void *ptr, cl_uint nw, const cl_event *w,
                                                     cl_event *ev)
{
    if (should_fail("clEnqueueReadBuffer")) return fail_err;
    return REAL(clEnqueueReadBuffer)(q, mem, blocking, off, size, ptr, nw, w, ev);
}

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context c, cl_mem_flags flags, size_t size, void *host, cl_int *err)
{
    if (should_fail("clCreateBuffer")) {
        if (err) *err = fail_err;
        return NULL;
    }
    return REAL(clCreateBuffer)(c, flags, size, host, err);
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id dev, cl_device_info what, size_t size, void *value,
                                                 size_t *size_ret)
{
    if (should_fail("clGetDeviceInfo")) return fail_err;
    return REAL(clGetDeviceInfo)(dev, what, size, value, size_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(cl_program prog, cl_uint ndev, const cl_device_id *devs,
                                                const char *options, void(CL_CALLBACK *notify)(cl_program, void *),
                                                void *data)
{
    if (should_fail("clBuildProgram")) return fail_err;
    return REAL(clBuildProgram)(prog, ndev, devs, options, notify, data);
}

/* An event that the armed clWaitForEvents fails before it returns (NULL: none). */
static cl_event fail_while_waiting;

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event *list)
{
    if (should_fail("clWaitForEvents")) {
        if (fail_while_waiting) clSetUserEventStatus(fail_while_waiting, -5);
        return fail_err;
    }
    return REAL(clWaitForEvents)(n, list);
}

CL_API_ENTRY cl_int CL_API_CALL clFlush(cl_command_queue q)
{
    if (should_fail("clFlush")) return fail_err;
    return REAL(clFlush)(q);
}

static cl_event gate;
static void *open_gate_later(void *arg)
{
    (void)arg;
    usleep(300000);
    clSetUserEventStatus(gate, CL_COMPLETE);
    return NULL;
}

/* A blocking call's wait-list event that fails while the call waits: NVIDIA's driver (580, H200)
 * answers clWaitForEvents with CL_SUCCESS, not the specification's
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, so the call must tell from the events' status; a
 * wait that fails while its events are fine stays the failure it is. Nothing is read either way. */
START_TEST(test_wait_failure_named_from_events)
{
    float v[4] = {1, 2, 3, 4}, back[4] = {7, 7, 7, 7};
    ocx_buffer *b = tbuffer(OCX_F32, 4, v);
    /* 2: failed, answered CL_SUCCESS (NVIDIA); 1: failed, answered with another error; 0: a wait
     * that fails while its event is fine */
    for (int failing = 2; failing >= 0; failing--) {
        cl_event ev = tuser_event();
        fail_while_waiting = failing ? ev : NULL;
        arm("clWaitForEvents", 1, failing == 2 ? CL_SUCCESS : CL_OUT_OF_RESOURCES);
        ocx_status st = ocx_buffer_read(tctx, NULL, b, 0, 4, back, 1, &ev, NULL);
        arm(NULL, 0, 0);
        fail_while_waiting = NULL;
        if (failing) {
            ck_assert_int_eq(st, OCX_ERR_OPENCL);
            ck_assert_msg(strstr(ocx_last_error(), "failed while the call waited"), "%s", ocx_last_error());
        } else {
            ck_assert_int_eq(st, OCX_ERR_OUT_OF_MEMORY);
            ck_assert_msg(strstr(ocx_last_error(), "CL_OUT_OF_RESOURCES") &&
                              !strstr(ocx_last_error(), "failed while the call waited"),
                          "%s", ocx_last_error());
            clSetUserEventStatus(ev, CL_COMPLETE);
        }
        for (int i = 0; i < 4; i++) ck_assert_float_eq(back[i], 7);
        clReleaseEvent(ev);
    }
    /* ocx_event_wait on an event that fails meanwhile, answered CL_SUCCESS (NVIDIA) */
    cl_event ev = tuser_event();
    fail_while_waiting = ev;
    arm("clWaitForEvents", 1, CL_SUCCESS);
    ck_assert_int_eq(ocx_event_wait(1, &ev), OCX_ERR_OPENCL);
    arm(NULL, 0, 0);
    fail_while_waiting = NULL;
    ck_assert_msg(strstr(ocx_last_error(), "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"), "%s", ocx_last_error());
    clReleaseEvent(ev);
    ck_ok(ocx_buffer_read(tctx, NULL, b, 0, 4, back, 0, NULL, NULL));
    for (int i = 0; i < 4; i++) ck_assert_float_eq(back[i], v[i]);
    ocx_buffer_destroy(b);
}
END_TEST

/* ocx_event_wait on a failed event and a pending one, where the driver's clWaitForEvents returns at
 * the failure without waiting for the rest (OpenCL 1.2 allows it; PoCL waits): ocx.h promises the
 * failure after the others are done, so the pending one must be complete when it returns. It had
 * returned at once, the other still running. */
START_TEST(test_wait_outlasts_an_early_failure)
{
    cl_event ev[2] = {tuser_event(), tuser_event()};
    gate = ev[1];
    pthread_t opener;
    ck_assert_int_eq(pthread_create(&opener, NULL, open_gate_later, NULL), 0);
    fail_while_waiting = ev[0];
    arm("clWaitForEvents", 1, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    ck_assert_int_eq(ocx_event_wait(2, ev), OCX_ERR_OPENCL);
    arm(NULL, 0, 0);
    fail_while_waiting = NULL;
    cl_int status = CL_QUEUED;
    ck_assert_int_eq(clGetEventInfo(ev[1], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL), CL_SUCCESS);
    ck_assert_msg(status == CL_COMPLETE, "returned while the second event was pending (status %d)", (int)status);
    pthread_join(opener, NULL);
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
}
END_TEST

/* A wait list that names a command of another stream still held unsubmitted (queued behind a user
 * event) flushes that stream, as OpenCL requires of a wait across queues (a driver that submits only
 * on a flush would otherwise never run it, nor what waits for it); one of the same stream, or a
 * wait on the host, needs no flush. PoCL submits at once, so only the count of flushes shows it. */
START_TEST(test_wait_across_streams_flushes)
{
    const size_t n = 1000;
    ocx_stream *a = NULL, *b = NULL;
    ck_ok(ocx_stream_create(tctx, &a));
    ck_ok(ocx_stream_create(tctx, &b));
    ocx_buffer *x = tpoisoned(OCX_F32, n), *y = tpoisoned(OCX_F32, n), *w = tpoisoned(OCX_F32, n);
    cl_event g = tuser_event();
    ocx_event ea = NULL, eb = NULL, ec = NULL;
    ck_ok(ocx_fill(tctx, a, n, 3.0, x, 1, 1, &g, &ea)); /* held on stream a until g completes */
    arm("clFlush", 0, 0);
    ocx_status across = ocx_copy(tctx, b, n, x, 1, y, 1, 1, &ea, &eb);
    const int flushed_across = calls;
    /* still queued after the call: it was when the call looked (a status only moves on), so the call
     * had to flush (PoCL holds it so until g completes; a driver may have submitted it by itself) */
    cl_int status = CL_COMPLETE;
    ck_assert_int_eq(clGetEventInfo(ea, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL), CL_SUCCESS);
    arm("clFlush", 0, 0);
    ocx_status same = ocx_fill(tctx, a, n, 5.0, w, 1, 1, &ea, &ec);
    const int flushed_same = calls;
    arm(NULL, 0, 0);
    clSetUserEventStatus(g, CL_COMPLETE);
    ck_ok(across);
    ck_ok(same);
    ck_ok(ocx_event_wait(1, &eb));
    ck_ok(ocx_event_wait(1, &ec));
    ck_assert_msg(flushed_across == 1 || (flushed_across == 0 && status != CL_QUEUED),
                  "a wait on another stream's command (status %d after) flushed %d times", (int)status, flushed_across);
    ck_assert_msg(flushed_same == 0, "a wait on the same stream flushed %d times", flushed_same);
    float *hy = tread(y), *hw = tread(w);
    for (size_t i = 0; i < n; i++) {
        ck_assert_float_eq(hy[i], 3.0f);
        ck_assert_float_eq(hw[i], 5.0f);
    }
    free(hy);
    free(hw);
    ocx_event_release(ea);
    ocx_event_release(eb);
    ocx_event_release(ec);
    clReleaseEvent(g);
    ocx_buffer_destroy(x);
    ocx_buffer_destroy(y);
    ocx_buffer_destroy(w);
    ocx_stream_destroy(a);
    ocx_stream_destroy(b);
}
END_TEST

/* A staged read that fails at its second chunk while the first is still queued (behind a marker
 * that waits for a gate) must not return before that chunk is done: the next staged transfer
 * reuses the staging memory. It had returned at once, and the next staged write, reported OK,
 * then carried the failed read's first chunk into B (1 of its 4 Mi elements in 4 wrong). */
START_TEST(test_staged_read_fails_midway)
{
    setenv("OCX_STAGING", "2", 1);
    const size_t n = 4u << 20; /* 16 MiB of f32: four staged chunks */
    float *h = malloc(n * sizeof *h), *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++) h[i] = -1.0f;
    ocx_stream *s = NULL;
    ck_ok(ocx_stream_create(tctx, &s));
    ocx_buffer *a = tbuffer(OCX_F32, n, NULL), *b = tbuffer(OCX_F32, n, NULL);
    ck_ok(ocx_buffer_write(tctx, s, a, 0, n, h, 0, NULL, NULL)); /* A = -1 */
    gate = tuser_event();
    ocx_event m = NULL;
    ck_ok(ocx_stream_marker(tctx, s, 1, &gate, &m)); /* the stream waits for the gate */
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, open_gate_later, NULL), 0);
    arm("clEnqueueReadBuffer", 2, CL_OUT_OF_RESOURCES);
    ocx_status st = ocx_buffer_read(tctx, s, a, 0, n, r, 0, NULL, NULL);
    arm(NULL, 0, 0);
    ck_assert_msg(st != OCX_OK, "a staged read whose second chunk failed returned OK");
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "staged read"));
    for (size_t i = 0; i < n; i++) h[i] = (float)(i % 1000003);
    ck_ok(ocx_buffer_write(tctx, s, b, 0, n, h, 0, NULL, NULL)); /* B = i mod p, staged */
    pthread_join(t, NULL);
    unsetenv("OCX_STAGING");
    ck_ok(ocx_buffer_read(tctx, s, b, 0, n, r, 0, NULL, NULL)); /* read back directly */
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (r[i] != h[i] && bad++ == 0) first = i;
    ck_assert_msg(bad == 0, "B: %zu of %zu elements wrong, the first at %zu (%g)", bad, n, first,
                  first < n ? r[first] : 0.0);
    ocx_event_release(m);
    clReleaseEvent(gate);
    ocx_buffer_destroy(a);
    ocx_buffer_destroy(b);
    ocx_stream_destroy(s);
    free(h);
    free(r);
}
END_TEST

static int same_device(const ocx_device_info *a, const ocx_device_info *b)
{
    return a->type == b->type && !strcmp(a->name, b->name) && !strcmp(a->vendor, b->vendor) &&
           !strcmp(a->driver_version, b->driver_version) && !strcmp(a->device_version, b->device_version) &&
           !strcmp(a->platform_name, b->platform_name) && !strcmp(a->platform_version, b->platform_version) &&
           !strcmp(a->fingerprint, b->fingerprint) && a->compute_units == b->compute_units &&
           a->clock_mhz == b->clock_mhz && a->global_mem_bytes == b->global_mem_bytes &&
           a->global_mem_cache_bytes == b->global_mem_cache_bytes && a->max_alloc_bytes == b->max_alloc_bytes &&
           a->local_mem_bytes == b->local_mem_bytes && a->local_mem_max_bytes == b->local_mem_max_bytes &&
           a->max_work_group_size == b->max_work_group_size &&
           !memcmp(a->max_work_item_sizes, b->max_work_item_sizes, sizeof a->max_work_item_sizes) &&
           a->preferred_vector_width_float == b->preferred_vector_width_float && a->has_fp16 == b->has_fp16 &&
           a->has_fp64 == b->has_fp64 && a->host_unified_memory == b->host_unified_memory &&
           !memcmp(a->nv_compute_capability, b->nv_compute_capability, sizeof a->nv_compute_capability) &&
           a->device_atomics == b->device_atomics;
}

/* A device query that fails while a context is created fails the creation (or, where the query
 * was one ocx can do without, leaves the device's description exactly as it is): a context had
 * been created "OK" with 0 for whichever limit failed (every buffer then refused as larger than
 * the largest allocation, every kernel as too large for the device) or "" for its name. */
START_TEST(test_device_query_fails)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx)); /* the reference, and any first-use set-up */
    ocx_device_info want;
    ck_ok(ocx_context_device_info(ctx, &want));
    ocx_context_destroy(ctx);
    arm("clGetDeviceInfo", 0, 0);
    ck_ok(ocx_context_create(NULL, &ctx));
    const int queries = calls;
    ocx_context_destroy(ctx);
    ck_assert_int_gt(queries, 10);
    int failed = 0;
    for (int at = 1; at <= queries; at++) {
        arm("clGetDeviceInfo", at, CL_OUT_OF_HOST_MEMORY);
        ctx = (ocx_context *)1;
        ocx_status st = ocx_context_create(NULL, &ctx);
        arm(NULL, 0, 0);
        if (st != OCX_OK) {
            ck_assert_ptr_null(ctx);
            ck_assert_msg(strstr(ocx_last_error(), "CL_OUT_OF_HOST_MEMORY") != NULL, "query %d: %s", at,
                          ocx_last_error());
            failed++;
            continue;
        }
        ocx_device_info got;
        ck_ok(ocx_context_device_info(ctx, &got));
        ck_assert_msg(same_device(&got, &want), "query %d failed, and the context reads the device as \"%s\", "
                      "%zu-byte allocations, work-groups of %zu", at, got.name, (size_t)got.max_alloc_bytes,
                      got.max_work_group_size);
        ocx_context_destroy(ctx);
    }
    ck_assert_int_gt(failed, 10);
    /* and the next one works */
    ck_ok(ocx_context_create(NULL, &ctx));
    ocx_context_destroy(ctx);
}
END_TEST

/* A cached binary that could not be loaded for want of memory is built from source and kept (it
 * had been deleted as bad); one the driver refuses is deleted (check_cache covers the kinds). */
START_TEST(test_cached_binary_kept_when_out_of_memory)
{
    char dir[] = "/tmp/ocx-faults.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    setenv("OCX_CACHE_DIR", dir, 1);
    setenv("OCX_QUIET", "1", 1);
    ocx_context_stats s = tadd_in_new_context();
    ck_assert_uint_eq(s.disk_cache_writes, 1);
    arm("clBuildProgram", 1, CL_OUT_OF_HOST_MEMORY); /* the cached binary's build */
    s = tadd_in_new_context();
    arm(NULL, 0, 0);
    ck_assert_uint_eq(s.programs_compiled, 1);
    ck_assert_uint_eq(s.disk_cache_rejected, 0);
    s = tadd_in_new_context();
    ck_assert_uint_eq(s.programs_from_disk, 1);
    ck_assert_uint_eq(s.programs_compiled, 0);
    arm("clBuildProgram", 1, CL_INVALID_BINARY); /* refused: deleted, rebuilt and stored again */
    s = tadd_in_new_context();
    arm(NULL, 0, 0);
    ck_assert_uint_eq(s.disk_cache_rejected, 1);
    ck_assert_uint_eq(s.programs_compiled, 1);
    ck_assert_uint_eq(s.disk_cache_writes, 1);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A tuning run whose every entry is skipped (here: no buffer can be made) says why in its status
 * and message, not only in a warning that OCX_QUIET hides (it had said "no entry was finished in
 * the budget ... too short, or every candidate failed", as OCX_ERR_UNSUPPORTED). */
START_TEST(test_tune_says_why_nothing_was_tuned)
{
    setenv("OCX_QUIET", "1", 1);
    char path[] = "/tmp/ocx-faults-profile.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    ocx_tune_options opt = {.families = "vector", .dtypes = "f32", .budget_s = 5, .quick = 1, .out_path = path};
    arm_on("clCreateBuffer", 1, CL_MEM_OBJECT_ALLOCATION_FAILURE);
    ocx_status st = ocx_tune(tctx, &opt);
    arm(NULL, 0, 0);
    ck_assert_msg(st == OCX_ERR_OUT_OF_MEMORY, "%s: %s", ocx_status_name(st), ocx_last_error());
    ck_assert_ptr_nonnull(strstr(ocx_last_error(), "the last skipped was vector/f32"));
    ck_assert_int_ne(access(path, F_OK), 0); /* nothing written */
}
END_TEST

/* A tensor-core probe that runs out of memory (the application holding the GPU's memory, say) says
 * nothing of the hardware: the call takes the portable path, and a later one probes again. Such a
 * failure had been the verdict for the rest of the process. OCX_VENDOR_PATHS=emulate stands in for
 * an NVIDIA GPU; the probe's first buffer is the first clCreateBuffer of the f16 probe. */
START_TEST(test_probe_out_of_memory_probes_again)
{
    setenv("OCX_VENDOR_PATHS", "emulate", 1);
    setenv("OCX_QUIET", "1", 1);
    unsigned paths = 0;
    arm("clCreateBuffer", 1, CL_MEM_OBJECT_ALLOCATION_FAILURE);
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    ck_assert_int_gt(calls, 1); /* the f16 probe's buffer failed, the f32 probe's were made */
    arm(NULL, 0, 0);
    ck_assert_uint_eq(paths, OCX_PATH_NV_TF32X3);
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    ck_assert_uint_eq(paths, OCX_PATH_NV_TENSOR_CORES | OCX_PATH_NV_TF32X3);
    unsetenv("OCX_VENDOR_PATHS");
}
END_TEST

/* ... but not for ever: NVIDIA's driver reports some kernel faults as CL_OUT_OF_RESOURCES, so the
 * third probe that runs out of memory is the verdict. */
START_TEST(test_probe_out_of_memory_tries_bounded)
{
    setenv("OCX_VENDOR_PATHS", "emulate", 1);
    setenv("OCX_QUIET", "1", 1);
    unsigned paths = 1;
    arm_on("clCreateBuffer", 1, CL_MEM_OBJECT_ALLOCATION_FAILURE);
    for (int i = 0; i < 3; i++) {
        int before = calls;
        ck_ok(ocx_context_vendor_paths(tctx, &paths));
        ck_assert_uint_eq(paths, 0);
        ck_assert_int_gt(calls, before); /* it probed */
    }
    int before = calls;
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    ck_assert_int_eq(calls, before); /* the third was the verdict: no fourth probe */
    arm(NULL, 0, 0);
    ck_ok(ocx_context_vendor_paths(tctx, &paths));
    ck_assert_uint_eq(paths, 0);
    unsetenv("OCX_VENDOR_PATHS");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("faults");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, tctx_setup, tctx_teardown);
    tcase_add_test(tc, test_wait_failure_named_from_events);
    tcase_add_test(tc, test_wait_outlasts_an_early_failure);
    tcase_add_test(tc, test_wait_across_streams_flushes);
    tcase_add_test(tc, test_staged_read_fails_midway);
    tcase_add_test(tc, test_device_query_fails);
    tcase_add_test(tc, test_cached_binary_kept_when_out_of_memory);
    tcase_add_test(tc, test_tune_says_why_nothing_was_tuned);
    tcase_add_test(tc, test_probe_out_of_memory_probes_again);
    tcase_add_test(tc, test_probe_out_of_memory_tries_bounded);
    suite_add_tcase(s, tc);
    return trun(s);
}
