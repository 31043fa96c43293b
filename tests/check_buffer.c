/* check_buffer — round trips of every dtype, offsets and views, async transfers with events, pinned
 * staging, fill and copy, and every bad-argument path (never touching memory). */
#include <pthread.h>
#include <unistd.h>

#include "testutil.h"

static const ocx_dtype all_dtypes[] = {OCX_F32, OCX_F16, OCX_F64, OCX_I32, OCX_U32};

START_TEST(test_round_trip_every_dtype)
{
    const size_t sizes[] = {1, 2, 3, 31, 1000003};
    for (size_t di = 0; di < 5; di++) {
        ocx_dtype dt = all_dtypes[di];
        if (!tdtype_ok(dt)) continue;
        size_t es = ocx_dtype_size(dt);
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t n = sizes[si];
            uint64_t seed = 1000 + n + di;
            unsigned char *src = malloc(n * es), *dst = malloc(n * es);
            trand_fill(&seed, dt, src, NULL, n, -1000, 1000);
            memset(dst, 0xa5, n * es);
            ocx_buffer *b = tpoisoned(dt, n);
            ck_assert_uint_eq(ocx_buffer_length(b), n);
            ck_assert_int_eq(ocx_buffer_dtype(b), dt);
            ck_ok(ocx_buffer_write(tctx, NULL, b, 0, n, src, 0, NULL, NULL));
            ck_ok(ocx_buffer_read(tctx, NULL, b, 0, n, dst, 0, NULL, NULL));
            ck_assert_msg(memcmp(src, dst, n * es) == 0, "%s round trip of %zu differs", ocx_dtype_name(dt), n);
            ocx_buffer_destroy(b);
            free(src);
            free(dst);
        }
    }
}
END_TEST

START_TEST(test_offsets_and_views)
{
    enum { N = 1000 };
    float host[N], part[100], back[N];
    uint64_t seed = 7;
    trand_fill(&seed, OCX_F32, host, NULL, N, -1, 1);
    trand_fill(&seed, OCX_F32, part, NULL, 100, 5, 6);
    ocx_buffer *b = tbuffer(OCX_F32, N, host);
    /* A partial write at an offset touches exactly that range. */
    ck_ok(ocx_buffer_write(tctx, NULL, b, 450, 100, part, 0, NULL, NULL));
    ck_ok(ocx_buffer_read(tctx, NULL, b, 0, N, back, 0, NULL, NULL));
    for (int i = 0; i < N; i++) ck_assert_float_eq(back[i], (i >= 450 && i < 550) ? part[i - 450] : host[i]);
    /* Views, and views of views, address the parent's memory with added offsets. */
    ocx_buffer *v = NULL, *vv = NULL;
    ck_ok(ocx_buffer_view(b, 400, 300, &v));
    ck_assert_uint_eq(ocx_buffer_offset(v), 400);
    ck_ok(ocx_buffer_view(v, 50, 100, &vv));
    ck_assert_uint_eq(ocx_buffer_offset(vv), 450);
    ck_assert_uint_eq(ocx_buffer_length(vv), 100);
    float got[100];
    ck_ok(ocx_buffer_read(tctx, NULL, vv, 0, 100, got, 0, NULL, NULL));
    for (int i = 0; i < 100; i++) ck_assert_float_eq(got[i], part[i]);
    ck_status(ocx_buffer_read(tctx, NULL, vv, 1, 100, got, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ocx_buffer *bad = (ocx_buffer *)1;
    ck_status(ocx_buffer_view(v, 250, 51, &bad), OCX_ERR_OUT_OF_RANGE);
    ck_assert_ptr_null(bad);
    ck_status(ocx_buffer_view(v, 301, 0, &bad), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_buffer_view(NULL, 0, 0, &bad), OCX_ERR_INVALID_ARGUMENT);
    /* A view keeps the memory alive after its parent is gone. */
    ocx_buffer_destroy(b);
    ocx_buffer_destroy(v);
    ck_ok(ocx_buffer_read(tctx, NULL, vv, 0, 100, got, 0, NULL, NULL));
    ck_assert_float_eq(got[99], part[99]);
    ocx_buffer_destroy(vv);
}
END_TEST

START_TEST(test_async_with_events)
{
    enum { N = 100000 };
    float *src = malloc(N * sizeof *src), *dst = malloc(N * sizeof *dst);
    uint64_t seed = 3;
    trand_fill(&seed, OCX_F32, src, NULL, N, -1, 1);
    ocx_buffer *b = tpoisoned(OCX_F32, N);
    ocx_stream *s2 = NULL;
    ck_ok(ocx_stream_create(tctx, &s2));
    ocx_event w = NULL, r = NULL;
    ck_ok(ocx_buffer_write_async(tctx, NULL, b, 0, N, src, 0, NULL, &w));
    ck_assert_ptr_nonnull(w);
    /* The read runs on another stream, ordered only by the event. */
    ck_ok(ocx_buffer_read_async(tctx, s2, b, 0, N, dst, 1, &w, &r));
    ck_assert_ptr_nonnull(r);
    ck_ok(ocx_event_wait(1, &r));
    ck_assert_int_eq(memcmp(src, dst, N * sizeof *src), 0);
    ocx_event_release(w);
    ocx_event_release(r);
    /* Zero-sized transfers still give an event that orders after the wait list. */
    ocx_event e0 = NULL;
    ck_ok(ocx_buffer_write_async(tctx, NULL, b, N, 0, NULL, 0, NULL, &e0));
    ck_assert_ptr_nonnull(e0);
    ck_ok(ocx_event_wait(1, &e0));
    /* ... and with a wait list but no event wanted, none (they had stored one through NULL). */
    float one = 1;
    ck_ok(ocx_buffer_write(tctx, NULL, b, 0, 0, &one, 1, &e0, NULL));
    ck_ok(ocx_buffer_write_async(tctx, NULL, b, 0, 0, &one, 1, &e0, NULL));
    ck_ok(ocx_buffer_read(tctx, NULL, b, 0, 0, &one, 1, &e0, NULL));
    ck_ok(ocx_buffer_read_async(tctx, s2, b, 0, 0, &one, 1, &e0, NULL));
    ck_ok(ocx_buffer_fill(tctx, NULL, b, 0, 0, &one, 1, &e0, NULL));
    ck_ok(ocx_buffer_copy(tctx, s2, b, 0, b, 0, 0, 1, &e0, NULL));
    ck_ok(ocx_stream_finish(tctx, s2));
    ocx_event_release(e0);
    ocx_stream_destroy(s2);
    ocx_buffer_destroy(b);
    free(src);
    free(dst);
}
END_TEST

/* Appends each warning to the buffer (1024 bytes) passed as user. */
static void append_warning(const char *message, void *user)
{
    size_t o = strlen(user);
    snprintf((char *)user + o, 1024 - o, "%s\n", message);
}

START_TEST(test_pinned_staging)
{
    /* Forced staging on PoCL (which shares host memory, so would skip it): several chunks through
     * both halves, and a size that is no multiple of the chunk. */
    setenv("OCX_STAGING", "2", 1);
    const size_t n = (9u << 20) / 4 + 12345;
    float *src = malloc(n * sizeof *src), *dst = malloc(n * sizeof *dst);
    uint64_t seed = 99;
    trand_fill(&seed, OCX_F32, src, NULL, n, -1, 1);
    ocx_buffer *b = tpoisoned(OCX_F32, n + 8);
    ocx_event ev = NULL;
    ck_ok(ocx_buffer_write(tctx, NULL, b, 8, n, src, 0, NULL, &ev));
    ck_assert_ptr_nonnull(ev);
    /* a blocking call's event is complete when it returns, staged or not (it was a marker still
     * queued: CL_SUBMITTED) */
    cl_int state = -1;
    ck_assert_int_eq(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL), CL_SUCCESS);
    ck_assert_int_eq(state, CL_COMPLETE);
    /* staged indeed: the event is the marker after the chunks, not a direct transfer's (a staging
     * buffer that could not be had falls back to one, and the data alone had not told) */
    cl_command_type type = 0;
    ck_assert_int_eq(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL), CL_SUCCESS);
    ck_assert_msg(type == CL_COMMAND_MARKER, "the staged write's event is of command type 0x%x", (unsigned)type);
    ocx_event_release(ev);
    ck_ok(ocx_buffer_read(tctx, NULL, b, 8, n, dst, 0, NULL, &ev));
    ck_assert_int_eq(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL), CL_SUCCESS);
    ck_assert_int_eq(state, CL_COMPLETE);
    ck_assert_int_eq(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL), CL_SUCCESS);
    ck_assert_msg(type == CL_COMMAND_MARKER, "the staged read's event is of command type 0x%x", (unsigned)type);
    ocx_event_release(ev);
    ck_assert_int_eq(memcmp(src, dst, n * sizeof *src), 0);
    float head[8];
    ck_ok(ocx_buffer_read(tctx, NULL, b, 0, 8, head, 0, NULL, NULL));
    for (int i = 0; i < 8; i++) ck_assert(isnan(head[i])); /* untouched */
    /* a mode above 2 is ignored (direct transfers) with one warning; it had been taken silently */
    static char warned[1024];
    warned[0] = '\0';
    char *quiet = getenv("OCX_QUIET") ? strdup(getenv("OCX_QUIET")) : NULL;
    unsetenv("OCX_QUIET");
    ocx_set_warning_handler(append_warning, warned);
    setenv("OCX_STAGING", "3", 1);
    memset(dst, 0, n * sizeof *dst);
    ck_ok(ocx_buffer_read(tctx, NULL, b, 8, n, dst, 0, NULL, NULL));
    ocx_set_warning_handler(NULL, NULL);
    if (quiet) setenv("OCX_QUIET", quiet, 1);
    free(quiet);
    ck_assert_int_eq(memcmp(src, dst, n * sizeof *src), 0);
    ck_assert_msg(strstr(warned, "OCX_STAGING=3 is above 2; ignored"), "warnings: %s", warned);
    unsetenv("OCX_STAGING");
    ocx_buffer_destroy(b);
    free(src);
    free(dst);
}
END_TEST

/* A staged blocking write waiting on an event that another thread's kernel launch precedes: the
 * write held the context's lock through its waits, which the launch needed (a deadlock). */
static ocx_stream *other_stream;
static ocx_buffer *launch_x;
static cl_event user_event;

static void *launch_then_complete(void *arg)
{
    (void)arg;
    usleep(100000); /* let the write start waiting */
    ocx_status st = ocx_add(tctx, other_stream, 16, launch_x, launch_x, launch_x, 0, NULL, NULL);
    clSetUserEventStatus(user_event, CL_COMPLETE);
    return (void *)(intptr_t)st;
}

START_TEST(test_staged_write_lets_launches_through)
{
    setenv("OCX_STAGING", "2", 1);
    const size_t n = (4u << 20) / 4;
    float *src = malloc(n * sizeof *src), *back = malloc(n * sizeof *back);
    uint64_t seed = 17;
    trand_fill(&seed, OCX_F32, src, NULL, n, -1, 1);
    ocx_buffer *b = tpoisoned(OCX_F32, n);
    launch_x = tpoisoned(OCX_F32, 16);
    ck_ok(ocx_stream_create(tctx, &other_stream));
    ck_ok(ocx_add(tctx, other_stream, 16, launch_x, launch_x, launch_x, 0, NULL, NULL)); /* built */
    ck_ok(ocx_stream_finish(tctx, other_stream));
    user_event = tuser_event();
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, launch_then_complete, NULL), 0);
    ck_ok(ocx_buffer_write(tctx, NULL, b, 0, n, src, 1, &user_event, NULL));
    void *st = NULL;
    pthread_join(t, &st);
    ck_assert_int_eq((int)(intptr_t)st, OCX_OK);
    ck_ok(ocx_buffer_read(tctx, NULL, b, 0, n, back, 0, NULL, NULL));
    ck_assert_int_eq(memcmp(src, back, n * sizeof *src), 0); /* every chunk, in its place */
    free(back);
    unsetenv("OCX_STAGING");
    clReleaseEvent(user_event);
    ocx_stream_destroy(other_stream);
    ocx_buffer_destroy(launch_x);
    ocx_buffer_destroy(b);
    free(src);
}
END_TEST

/* A staged blocking transfer waits for its own stream alone. The first of a context had mapped the
 * staging buffer on the default stream, so it waited for a gated command there (for ever where the
 * gate opens after the transfer); and a transfer held the staging buffer through its waits, so one on
 * an idle stream waited for another stream's gate. */
static ocx_buffer *gated_b;
static const float *gated_src;

static void *write_behind_gate(void *stream)
{
    return (void *)(intptr_t)ocx_buffer_write(tctx, stream, gated_b, 0, (1u << 20) / 4, gated_src, 0, NULL, NULL);
}

START_TEST(test_staged_transfers_keep_to_their_streams)
{
    alarm(120); /* a transfer stuck behind another stream's gate fails the test here */
    setenv("OCX_STAGING", "2", 1);
    const size_t n = (1u << 20) / 4; /* STAGING_MIN_BYTES */
    float *src = malloc(n * sizeof *src), *src2 = malloc(n * sizeof *src2), *back = malloc(n * sizeof *back);
    uint64_t seed = 23;
    trand_fill(&seed, OCX_F32, src, NULL, n, -1, 1);
    trand_fill(&seed, OCX_F32, src2, NULL, n, -1, 1);
    ocx_buffer *b1 = tpoisoned(OCX_F32, n), *b2 = tpoisoned(OCX_F32, n), *x = tpoisoned(OCX_F32, 16);
    ocx_stream *s1 = NULL, *s2 = NULL;
    ck_ok(ocx_stream_create(tctx, &s1));
    ck_ok(ocx_stream_create(tctx, &s2));
    cl_event gate = tuser_event();
    ck_ok(ocx_fill(tctx, NULL, 16, 1.0, x, 1, 1, &gate, NULL)); /* the default stream stuck */
    ck_ok(ocx_buffer_write(tctx, s1, b1, 0, n, src, 0, NULL, NULL)); /* the context's first staged one */
    ck_ok(ocx_fill(tctx, s1, 16, 1.0, x, 1, 1, &gate, NULL)); /* now s1 stuck, and a write waiting there */
    gated_b = b1;
    gated_src = src2;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, write_behind_gate, s1), 0);
    usleep(200000); /* let it take the staging buffer */
    ck_ok(ocx_buffer_write(tctx, s2, b2, 0, n, src, 0, NULL, NULL));
    ck_ok(ocx_buffer_read(tctx, s2, b2, 0, n, back, 0, NULL, NULL));
    ck_assert_int_eq(memcmp(src, back, n * sizeof *src), 0);
    ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
    void *st = NULL;
    pthread_join(t, &st);
    ck_assert_int_eq((int)(intptr_t)st, OCX_OK);
    ck_ok(ocx_buffer_read(tctx, s1, b1, 0, n, back, 0, NULL, NULL));
    ck_assert_int_eq(memcmp(src2, back, n * sizeof *src2), 0);
    alarm(0);
    unsetenv("OCX_STAGING");
    clReleaseEvent(gate);
    ocx_stream_destroy(s1);
    ocx_stream_destroy(s2);
    ocx_buffer_destroy(b1);
    ocx_buffer_destroy(b2);
    ocx_buffer_destroy(x);
    free(src);
    free(src2);
    free(back);
}
END_TEST

START_TEST(test_fill_and_copy)
{
    enum { N = 1001 };
    for (size_t di = 0; di < 5; di++) {
        ocx_dtype dt = all_dtypes[di];
        if (!tdtype_ok(dt)) continue;
        size_t es = ocx_dtype_size(dt);
        unsigned char value[8], *host = malloc(N * es), *back = malloc(N * es);
        uint64_t seed = 5 + di;
        trand_fill(&seed, dt, value, NULL, 1, 1, 100);
        trand_fill(&seed, dt, host, NULL, N, -5, 5);
        ocx_buffer *a = tbuffer(dt, N, host), *c = tpoisoned(dt, N);
        ck_ok(ocx_buffer_fill(tctx, NULL, a, 100, 200, value, 0, NULL, NULL));
        ck_ok(ocx_buffer_copy(tctx, NULL, a, 50, c, 60, 400, 0, NULL, NULL));
        ck_ok(ocx_buffer_read(tctx, NULL, c, 0, N, back, 0, NULL, NULL));
        for (size_t i = 60; i < 460; i++) {
            size_t j = i - 60 + 50; /* element of a */
            const unsigned char *want = (j >= 100 && j < 300) ? value : host + j * es;
            ck_assert_msg(memcmp(back + i * es, want, es) == 0, "%s element %zu", ocx_dtype_name(dt), i);
        }
        for (size_t i = 0; i < N; i++) { /* the rest still holds tpoisoned's values: nothing written past */
            uint32_t u = 0;
            if (dt == OCX_I32 || dt == OCX_U32) memcpy(&u, back + i * es, 4);
            ck_assert_msg((i >= 60 && i < 460) || (dt == OCX_I32 || dt == OCX_U32 ? u == 0xdeadbeefu : isnan(tvalue(dt, back, i))),
                          "%s element %zu written", ocx_dtype_name(dt), i);
        }
        ocx_buffer_destroy(a);
        ocx_buffer_destroy(c);
        free(host);
        free(back);
    }
}
END_TEST

START_TEST(test_bad_arguments_touch_nothing)
{
    enum { N = 64 };
    float host[N + 10], other[N + 10], back[N];
    for (int i = 0; i < N + 10; i++) host[i] = (float)i + 1, other[i] = -(float)i - 100;
    ocx_buffer *b = tbuffer(OCX_F32, N, host), *h = tbuffer(OCX_F16, N, NULL), *out = NULL;
    ocx_event ev = (ocx_event)1;
    /* the refused writes come from `other`, which differs from b's data everywhere (from `host`,
     * b's own data, a write that went through anyway had not shown) */
    ck_status(ocx_buffer_write(tctx, NULL, b, 0, N + 1, other, 0, NULL, &ev), OCX_ERR_OUT_OF_RANGE);
    ck_assert_ptr_null(ev);
    ck_status(ocx_buffer_write(tctx, NULL, b, N, 1, other, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_buffer_write(tctx, NULL, b, SIZE_MAX, 2, other, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    for (int i = 0; i < N; i++) back[i] = 7;
    ck_status(ocx_buffer_read(tctx, NULL, b, 1, N, back, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    for (int i = 0; i < N; i++) ck_assert_float_eq(back[i], 7); /* nothing read either */
    ck_status(ocx_buffer_read(tctx, NULL, b, 0, 1, NULL, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_buffer_write(tctx, NULL, NULL, 0, 1, other, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_buffer_write(NULL, NULL, b, 0, 1, other, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_buffer_write(tctx, NULL, b, 0, 1, other, 1, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ocx_event nullev = NULL;
    ck_status(ocx_buffer_write(tctx, NULL, b, 0, 1, other, 1, &nullev, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_buffer_fill(tctx, NULL, b, 0, 1, NULL, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    /* nothing to set or move: NULL host pointers are accepted alike */
    ck_ok(ocx_buffer_fill(tctx, NULL, b, 0, 0, NULL, 0, NULL, NULL));
    ck_ok(ocx_buffer_write(tctx, NULL, b, N, 0, NULL, 0, NULL, NULL));
    ck_ok(ocx_buffer_read(tctx, NULL, b, N, 0, NULL, 0, NULL, NULL));
    ck_status(ocx_buffer_fill(tctx, NULL, b, 60, 5, host, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_buffer_copy(tctx, NULL, b, 0, h, 0, 4, 0, NULL, NULL), OCX_ERR_DTYPE);
    ck_status(ocx_buffer_copy(tctx, NULL, b, 0, b, 2, 4, 0, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_buffer_copy(tctx, NULL, b, 0, b, 60, 5, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_buffer_create(tctx, (ocx_dtype)42, 4, &out), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(out);
    ck_status(ocx_buffer_create(tctx, OCX_F32, SIZE_MAX / 2, &out), OCX_ERR_OUT_OF_RANGE);
    ck_status(ocx_buffer_create(tctx, OCX_F32, (size_t)1 << 60, &out), OCX_ERR_OUT_OF_MEMORY);
    ck_status(ocx_buffer_create(NULL, OCX_F32, 4, &out), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_buffer_create(tctx, OCX_F32, 4, NULL), OCX_ERR_INVALID_ARGUMENT);
    /* None of the failed calls touched the data. */
    ck_ok(ocx_buffer_read(tctx, NULL, b, 0, N, back, 0, NULL, NULL));
    for (int i = 0; i < N; i++) ck_assert_float_eq(back[i], host[i]);
    /* An empty buffer is legal, and so are empty transfers at its end. */
    ck_ok(ocx_buffer_create(tctx, OCX_F32, 0, &out));
    ck_ok(ocx_buffer_write(tctx, NULL, out, 0, 0, host, 0, NULL, NULL));
    ck_status(ocx_buffer_write(tctx, NULL, out, 0, 1, host, 0, NULL, NULL), OCX_ERR_OUT_OF_RANGE);
    ocx_buffer_destroy(out);
    ocx_buffer_destroy(b);
    ocx_buffer_destroy(h);
    ocx_buffer_destroy(NULL);
    ck_assert_uint_eq(ocx_buffer_length(NULL), 0);
    ck_assert_ptr_null(ocx_buffer_cl_mem(NULL));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("buffer");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, tctx_setup, tctx_teardown);
    tcase_add_test(core, test_round_trip_every_dtype);
    tcase_add_test(core, test_offsets_and_views);
    tcase_add_test(core, test_async_with_events);
    tcase_add_test(core, test_pinned_staging);
    tcase_add_test(core, test_staged_write_lets_launches_through);
    tcase_add_test(core, test_staged_transfers_keep_to_their_streams);
    tcase_add_test(core, test_fill_and_copy);
    tcase_add_test(core, test_bad_arguments_touch_nothing);
    suite_add_tcase(s, core);
    return trun(s);
}
