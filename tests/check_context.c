/* check_context — create/destroy, interop with the caller's OpenCL objects (retained, released once),
 * wrapped cl_mem, bad arguments. */
#include <pthread.h>
#include <unistd.h>

#include "testutil.h"

static cl_uint refcount_context(cl_context c)
{
    cl_uint n = 0;
    ck_assert_int_eq(clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}
static cl_uint refcount_queue(cl_command_queue q)
{
    cl_uint n = 0;
    ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}
/* PoCL drops the references its finished commands hold on the queue asynchronously: wait (bounded)
 * for the count to settle at `want`. A count that stays above it means ocx kept a reference. */
static cl_uint settled_refcount_queue(cl_command_queue q, cl_uint want)
{
    cl_uint n = refcount_queue(q);
    for (int i = 0; i < 200 && n > want; i++) {
        clFinish(q);
        usleep(10000);
        n = refcount_queue(q);
    }
    return n;
}

static cl_uint refcount_mem(cl_mem m)
{
    cl_uint n = 0;
    ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

/* The caller's own OpenCL objects, made with plain OpenCL calls. */
static cl_context own_ctx;
static cl_device_id own_dev;
static cl_command_queue own_queue;

static void own_setup(void)
{
    ocx_context *probe = NULL;
    ck_ok(ocx_context_create(NULL, &probe));
    cl_context c;
    ck_ok(ocx_context_cl(probe, &c, &own_dev));
    ocx_context_destroy(probe);
    cl_int err;
    own_ctx = clCreateContext(NULL, 1, &own_dev, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    own_queue = clCreateCommandQueue(own_ctx, own_dev, 0, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
}

static void own_teardown(void)
{
    clReleaseCommandQueue(own_queue);
    clReleaseContext(own_ctx);
}

START_TEST(test_create_destroy)
{
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ck_assert_ptr_nonnull(ctx);
    ck_assert_ptr_nonnull(ocx_context_stream(ctx));
    ocx_device_info info;
    ck_ok(ocx_context_device_info(ctx, &info));
    ck_assert_uint_gt(strlen(info.name), 0);
    ocx_context_stats stats;
    ck_ok(ocx_context_get_stats(ctx, &stats));
    ck_assert_uint_eq(stats.programs_compiled + stats.programs_from_disk + stats.programs_from_memory, 0);
    ocx_context_destroy(ctx);
    ocx_context_destroy(NULL);
    ck_status(ocx_context_create(NULL, NULL), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_device_info(NULL, &info), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_get_stats(NULL, &stats), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(ocx_context_stream(NULL));
}
END_TEST

START_TEST(test_interop_retains_and_releases_once)
{
    cl_uint rc_ctx = refcount_context(own_ctx), rc_q = refcount_queue(own_queue);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create_from_cl(own_ctx, own_dev, own_queue, &ctx));
    ck_assert_uint_gt(refcount_context(own_ctx), rc_ctx);
    ck_assert_uint_gt(refcount_queue(own_queue), rc_q);
    cl_context c;
    cl_device_id d;
    ck_ok(ocx_context_cl(ctx, &c, &d));
    ck_assert_ptr_eq(c, own_ctx);
    ck_assert_ptr_eq(d, own_dev);
    ck_assert_ptr_eq(ocx_stream_cl_queue(ocx_context_stream(ctx)), own_queue);

    /* Work through the wrapped objects, on the caller's queue, and on the caller's own buffer. */
    enum { N = 1000 };
    float x[N], y[N], z[N];
    uint64_t seed = 11;
    trand_fill(&seed, OCX_F32, x, NULL, N, -1, 1);
    trand_fill(&seed, OCX_F32, y, NULL, N, -1, 1);
    cl_int err;
    cl_mem mem = clCreateBuffer(own_ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_uint rc_mem = refcount_mem(mem);
    ocx_buffer *bx = NULL, *by = NULL, *bz = NULL;
    ck_ok(ocx_buffer_wrap(ctx, mem, OCX_F32, N, &bx));
    ck_assert_uint_eq(refcount_mem(mem), rc_mem + 1);
    ck_assert_ptr_eq(ocx_buffer_cl_mem(bx), mem);
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &by));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &bz));
    ck_assert_int_eq(clEnqueueWriteBuffer(own_queue, mem, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL), CL_SUCCESS);
    ck_ok(ocx_buffer_write(ctx, NULL, by, 0, N, y, 0, NULL, NULL));
    ocx_event ev = NULL;
    ck_ok(ocx_add(ctx, NULL, N, bx, by, bz, 0, NULL, &ev));
    ck_assert_ptr_nonnull(ev);
    ck_ok(ocx_buffer_read(ctx, NULL, bz, 0, N, z, 1, &ev, NULL));
    /* The caller's queue has no profiling: where the driver says so (PoCL, NVIDIA; Oclgrind times
     * every command anyway), a clear status, not the driver's code. */
    uint64_t ns = 0;
    cl_ulong start;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ==
        CL_PROFILING_INFO_NOT_AVAILABLE) {
        ck_status(ocx_event_elapsed_ns(ev, &ns), OCX_ERR_UNSUPPORTED);
        ck_assert_ptr_nonnull(strstr(ocx_last_error(), "no profiling"));
    } else {
        ck_ok(ocx_event_elapsed_ns(ev, &ns));
    }
    ocx_event_release(ev);
    for (int i = 0; i < N; i++) ck_assert_float_eq(z[i], x[i] + y[i]);
    ocx_buffer_destroy(bx);
    ck_assert_uint_eq(refcount_mem(mem), rc_mem);
    ocx_buffer_destroy(by);
    ocx_buffer_destroy(bz);
    clReleaseMemObject(mem);

    ocx_context_destroy(ctx);
    /* Released exactly once: the caller's references are intact. */
    ck_assert_uint_eq(settled_refcount_queue(own_queue, rc_q), rc_q);
    ck_assert_uint_eq(refcount_context(own_ctx), rc_ctx);
}
END_TEST

/* A sub-device's references count (a root device's do not): the context takes one and gives it
 * back. Devices that cannot be partitioned (GPUs, as a rule) have none to check. */
START_TEST(test_interop_retains_sub_device)
{
    cl_uint units = 0;
    ck_assert_int_eq(clGetDeviceInfo(own_dev, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof units, &units, NULL),
                     CL_SUCCESS);
    const cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_uint nsub = 0;
    if (units < 2 || clCreateSubDevices(own_dev, props, 0, NULL, &nsub) != CL_SUCCESS || nsub < 1) {
        fprintf(stderr, "test_interop_retains_sub_device: the device cannot be partitioned; nothing checked\n");
        return;
    }
    cl_device_id *subs = calloc(nsub, sizeof *subs);
    ck_assert_ptr_nonnull(subs);
    ck_assert_int_eq(clCreateSubDevices(own_dev, props, nsub, subs, NULL), CL_SUCCESS);
    for (cl_uint i = 1; i < nsub; i++) clReleaseDevice(subs[i]);
    cl_device_id sub = subs[0];
    free(subs);
    cl_int err;
    cl_context cc = clCreateContext(NULL, 1, &sub, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_uint rc0 = 0, rc = 0;
    ck_assert_int_eq(clGetDeviceInfo(sub, CL_DEVICE_REFERENCE_COUNT, sizeof rc0, &rc0, NULL), CL_SUCCESS);
    ocx_context *ctx = NULL;
    ck_ok(ocx_context_create_from_cl(cc, sub, NULL, &ctx));
    ck_assert_int_eq(clGetDeviceInfo(sub, CL_DEVICE_REFERENCE_COUNT, sizeof rc, &rc, NULL), CL_SUCCESS);
    ck_assert_uint_eq(rc, rc0 + 1);
    ocx_device_info info;
    ck_ok(ocx_context_device_info(ctx, &info));
    ck_assert_uint_eq(info.index, SIZE_MAX); /* not in the loader's list */
    /* and it computes: the sum of 1001 random values */
    enum { N = 1001 };
    float h[N];
    double want = 0, got = 0;
    uint64_t seed = 5;
    trand_fill(&seed, OCX_F32, h, NULL, N, -1, 1);
    for (int i = 0; i < N; i++) want += h[i];
    ocx_buffer *x = NULL;
    ck_ok(ocx_buffer_create(ctx, OCX_F32, N, &x));
    ck_ok(ocx_buffer_write(ctx, NULL, x, 0, N, h, 0, NULL, NULL));
    ck_ok(ocx_reduce_host(ctx, NULL, OCX_REDUCE_SUM, N, x, 1, NULL, 1, &got, NULL, 0, NULL));
    ck_assert_msg(fabs(got - want) <= 1e-5 * N, "sum on a sub-device: %.9g, expected %.9g", got, want);
    ocx_buffer_destroy(x);
    ocx_context_destroy(ctx);
    ck_assert_int_eq(clGetDeviceInfo(sub, CL_DEVICE_REFERENCE_COUNT, sizeof rc, &rc, NULL), CL_SUCCESS);
    ck_assert_uint_eq(rc, rc0);
    clReleaseContext(cc);
    clReleaseDevice(sub);
}
END_TEST

START_TEST(test_interop_own_queue_and_bad_arguments)
{
    ocx_context *ctx = (ocx_context *)1;
    ck_ok(ocx_context_create_from_cl(own_ctx, own_dev, NULL, &ctx)); /* ocx makes its own queue */
    ck_assert_ptr_nonnull(ocx_stream_cl_queue(ocx_context_stream(ctx)));
    ck_assert_ptr_ne(ocx_stream_cl_queue(ocx_context_stream(ctx)), own_queue);
    ocx_context_destroy(ctx);

    ck_status(ocx_context_create_from_cl(NULL, own_dev, NULL, &ctx), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(ctx);
    ck_status(ocx_context_create_from_cl(own_ctx, NULL, NULL, &ctx), OCX_ERR_INVALID_ARGUMENT);
    ck_status(ocx_context_create_from_cl(own_ctx, own_dev, NULL, NULL), OCX_ERR_INVALID_ARGUMENT);

    /* A queue of another context is refused. */
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &own_dev, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_command_queue other_q = clCreateCommandQueue(other, own_dev, 0, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    cl_uint rc = refcount_context(own_ctx);
    ck_status(ocx_context_create_from_cl(own_ctx, own_dev, other_q, &ctx), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_uint_eq(refcount_context(own_ctx), rc); /* nothing leaked on the error path */

    /* An out-of-order queue is refused (where the driver can make one). */
    cl_command_queue ooo = clCreateCommandQueue(own_ctx, own_dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    if (err == CL_SUCCESS) {
        ck_status(ocx_context_create_from_cl(own_ctx, own_dev, ooo, &ctx), OCX_ERR_INVALID_ARGUMENT);
        clReleaseCommandQueue(ooo);
    }

    /* Buffers and streams of one context are refused by another. */
    ocx_context *a = NULL, *b = NULL;
    ck_ok(ocx_context_create_from_cl(own_ctx, own_dev, NULL, &a));
    ck_ok(ocx_context_create_from_cl(other, own_dev, other_q, &b));
    ocx_buffer *ba = NULL;
    ck_ok(ocx_buffer_create(a, OCX_F32, 4, &ba));
    float v[4] = {1, 2, 3, 4};
    ck_status(ocx_buffer_write(b, NULL, ba, 0, 4, v, 0, NULL, NULL), OCX_ERR_CONTEXT_MISMATCH);
    ck_status(ocx_stream_finish(b, ocx_context_stream(a)), OCX_ERR_CONTEXT_MISMATCH);
    ck_status(ocx_stream_trim(b, ocx_context_stream(a), NULL), OCX_ERR_CONTEXT_MISMATCH);
    /* GEMM checks A, B and C, in every form (it ran a product into another context's C before) */
    ck_ok(ocx_buffer_write(a, NULL, ba, 0, 4, v, 0, NULL, NULL));
    ocx_buffer *b1 = NULL, *b2 = NULL, *b3 = NULL;
    ck_ok(ocx_buffer_create(b, OCX_F32, 4, &b1));
    ck_ok(ocx_buffer_create(b, OCX_F32, 4, &b2));
    ck_ok(ocx_buffer_create(b, OCX_F32, 4, &b3));
    const ocx_buffer *abc[3][3] = {{ba, b2, b3}, {b1, ba, b3}, {b1, b2, ba}};
    const size_t offs[2] = {0, 1};
    for (int i = 0; i < 3; i++) {
        ocx_buffer *c = (ocx_buffer *)abc[i][2];
        ck_status(ocx_gemm(b, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 1, 1, abc[i][0], 0, 1, abc[i][1], 0, 2, 0,
                           c, 0, 2, 0, NULL, NULL),
                  OCX_ERR_CONTEXT_MISMATCH);
        ck_status(ocx_gemm_strided_batched(b, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 1, 1, 1, 1, abc[i][0], 0, 1, 1,
                                           abc[i][1], 0, 1, 1, 0, c, 0, 1, 1, 2, 0, NULL, NULL),
                  OCX_ERR_CONTEXT_MISMATCH);
        ck_status(ocx_gemm_batched(b, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 1, 1, 1, 1, abc[i][0], offs, 1,
                                   abc[i][1], offs, 1, 0, c, offs, 1, 2, 0, NULL, NULL),
                  OCX_ERR_CONTEXT_MISMATCH);
    }
    /* an event of another context in a wait list: one answer everywhere (PoCL ran the kernels) */
    ocx_event ea = NULL, eb = (ocx_event)&ea;
    ck_ok(ocx_stream_marker(a, NULL, 0, NULL, &ea));
    ck_status(ocx_add(b, NULL, 4, b1, b2, b3, 1, &ea, &eb), OCX_ERR_CONTEXT_MISMATCH);
    ck_assert_ptr_null(eb);
    ck_status(ocx_add(b, NULL, 0, b1, b2, b3, 1, &ea, NULL), OCX_ERR_CONTEXT_MISMATCH);
    ck_status(ocx_stream_marker(b, NULL, 1, &ea, &eb), OCX_ERR_CONTEXT_MISMATCH);
    ck_status(ocx_buffer_write(b, NULL, b1, 0, 4, v, 1, &ea, NULL), OCX_ERR_CONTEXT_MISMATCH);
    ck_status(ocx_gemm(b, NULL, OCX_ROW_MAJOR, OCX_OP_N, OCX_OP_N, 2, 2, 1, 1, b1, 0, 1, b2, 0, 2, 0, b3, 0, 2, 1, &ea,
                       NULL),
              OCX_ERR_CONTEXT_MISMATCH);
    double sum = 0;
    ck_status(ocx_reduce_host(b, NULL, OCX_REDUCE_SUM, 4, b1, 1, NULL, 1, &sum, NULL, 1, &ea),
              OCX_ERR_CONTEXT_MISMATCH);
    ck_ok(ocx_event_wait(1, &ea));
    ocx_event_release(ea);
    float got[4];
    ck_ok(ocx_buffer_read(a, NULL, ba, 0, 4, got, 0, NULL, NULL));
    for (int i = 0; i < 4; i++) ck_assert_float_eq(got[i], v[i]); /* never written */
    ocx_buffer_destroy(b1);
    ocx_buffer_destroy(b2);
    ocx_buffer_destroy(b3);
    cl_mem m = clCreateBuffer(own_ctx, CL_MEM_READ_WRITE, 16, NULL, &err);
    ocx_buffer *w = NULL;
    ck_status(ocx_buffer_wrap(b, m, OCX_F32, 4, &w), OCX_ERR_CONTEXT_MISMATCH);
    ck_status(ocx_buffer_wrap(a, m, OCX_F32, 5, &w), OCX_ERR_OUT_OF_RANGE); /* 20 bytes > 16 */
    /* a length whose bytes overflow size_t: the message gives the sizes, not a wrapped product */
    ck_status(ocx_buffer_wrap(a, m, OCX_F32, SIZE_MAX / 4 + 1, &w), OCX_ERR_OUT_OF_RANGE);
    ck_assert_msg(strstr(ocx_last_error(), "(4 bytes each) do not fit in the cl_mem's 16 bytes"), "%s",
                  ocx_last_error());
    ck_status(ocx_buffer_wrap(a, NULL, OCX_F32, 1, &w), OCX_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(w);
    clReleaseMemObject(m);
    ocx_buffer_destroy(ba);
    ocx_context_destroy(a);
    ocx_context_destroy(b);
    clReleaseCommandQueue(other_q);
    clReleaseContext(other);
}
END_TEST

START_TEST(test_buffer_outlives_context)
{
    /* A buffer keeps its memory past its context, and destroying it then only releases that: its
     * cl_mem is whole until then, and the buffer's one reference goes (ours, taken here, is left). */
    ocx_context *ctx = NULL;
    ocx_buffer *b = NULL;
    ck_ok(ocx_context_create(NULL, &ctx));
    ck_ok(ocx_buffer_create(ctx, OCX_F32, 64, &b));
    ocx_context_destroy(ctx);
    cl_mem m = ocx_buffer_cl_mem(b);
    ck_assert_ptr_nonnull(m);
    size_t size = 0;
    ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
    ck_assert_uint_eq(size, 64 * sizeof(float));
    ck_assert_uint_eq(ocx_buffer_length(b), 64);
    ck_assert_int_eq(clRetainMemObject(m), CL_SUCCESS);
    ocx_buffer_destroy(b);
    cl_uint refs = 0;
    ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
    ck_assert_uint_eq(refs, 1);
    clReleaseMemObject(m);
}
END_TEST

/* Threads creating their first contexts at once, as the process's first OpenCL calls (a test of
 * its own, without a fixture, so that in Check's forked child nothing has enumerated the devices
 * yet): PoCL 3.1 sets its devices up unsafely on the first enumeration, and one thread got "no
 * OpenCL device found" or crashed in every run until ocx enumerated one thread at a time. */
enum { FIRST_THREADS = 4 };
static pthread_barrier_t first_gate;
typedef struct first_try {
    ocx_context *ctx;
    ocx_status st;
    char why[256];
} first_try;
static void *first_create(void *arg)
{
    first_try *t = arg;
    pthread_barrier_wait(&first_gate);
    t->st = ocx_context_create(NULL, &t->ctx);
    snprintf(t->why, sizeof t->why, "%s", t->st == OCX_OK ? "" : ocx_last_error());
    return NULL;
}

START_TEST(test_first_contexts_at_once)
{
    pthread_t th[FIRST_THREADS];
    first_try t[FIRST_THREADS] = {{0}};
    ck_assert_int_eq(pthread_barrier_init(&first_gate, NULL, FIRST_THREADS), 0);
    for (int i = 0; i < FIRST_THREADS; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, first_create, &t[i]), 0);
    for (int i = 0; i < FIRST_THREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < FIRST_THREADS; i++) {
        ck_assert_msg(t[i].st == OCX_OK, "thread %d: %s: %s", i, ocx_status_name(t[i].st), t[i].why);
        ck_assert_ptr_nonnull(t[i].ctx);
        ocx_context_destroy(t[i].ctx);
    }
    pthread_barrier_destroy(&first_gate);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("context");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, own_setup, own_teardown);
    tcase_add_test(core, test_create_destroy);
    tcase_add_test(core, test_interop_retains_and_releases_once);
    tcase_add_test(core, test_interop_retains_sub_device);
    tcase_add_test(core, test_interop_own_queue_and_bad_arguments);
    tcase_add_test(core, test_buffer_outlives_context);
    suite_add_tcase(s, core);
    TCase *first = tcase_create("first");
    tcase_add_test(first, test_first_contexts_at_once);
    suite_add_tcase(s, first);
    return trun(s);
}
