/* context.c — a context on one device with its default stream; interop with the caller's objects. */
#include "config.h"
#include "ocx_internal.h"

#include <stdlib.h>
#include <string.h>

static ocx_status context_finish_setup(ocx_context *ctx, cl_command_queue queue)
{
    cl_int err;
    OCX__FORWARD(ocx__device_query(ctx->platform, ctx->device, &ctx->info));
    ctx->hold_events = ocx__is_pocl(&ctx->info);
    if (queue) {
        cl_command_queue_properties props = 0;
        err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
        if (err != CL_SUCCESS) return ocx__cl_error(err, "clGetCommandQueueInfo(queue)");
        OCX__FAIL_IF(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, OCX_ERR_INVALID_ARGUMENT,
                     "ocx_context_create_from_cl: queue is out-of-order; ocx streams need in-order queues");
        ctx->stream.profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
        cl_context qctx = NULL;
        cl_device_id qdev = NULL;
        err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
        if (err == CL_SUCCESS) err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL);
        if (err != CL_SUCCESS) return ocx__cl_error(err, "clGetCommandQueueInfo(queue)");
        OCX__FAIL_IF(qctx != ctx->context || qdev != ctx->device, OCX_ERR_INVALID_ARGUMENT,
                     "ocx_context_create_from_cl: queue belongs to another context or device");
        err = clRetainCommandQueue(queue);
        if (err != CL_SUCCESS) return ocx__cl_error(err, "clRetainCommandQueue");
        ctx->stream.queue = queue;
    } else {
        ctx->stream.queue = clCreateCommandQueue(ctx->context, ctx->device, CL_QUEUE_PROFILING_ENABLE, &err);
        if (err != CL_SUCCESS) return ocx__cl_error(err, "clCreateCommandQueue");
        ctx->stream.profiling = 1;
    }
    ctx->stream.ctx = ctx;
    ctx->stream.is_default = 1;
    OCX__FORWARD(ocx__queue_live(ctx->stream.queue)); /* ocx_context_destroy's release_held ends it */

    char text[2048];
    snprintf(text, sizeof text, "platform=%s %s\ndevice=%s\nvendor=%s\ndriver=%s\nocx=%s\n",
             ctx->info.platform_name, ctx->info.platform_version, ctx->info.name, ctx->info.vendor,
             ctx->info.driver_version, OCX_VERSION_STRING);
    ctx->device_key = strdup(text);
    OCX__FAIL_IF(!ctx->device_key, OCX_ERR_OUT_OF_MEMORY, "context: out of host memory");
    return OCX_OK;
}

static ocx_context *context_alloc(void)
{
    ocx_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        free(ctx);
        return NULL;
    }
    if (pthread_mutex_init(&ctx->staging_lock, NULL) != 0) {
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return NULL;
    }
    if (ocx__stream_init(&ctx->stream) != 0) {
        pthread_mutex_destroy(&ctx->staging_lock);
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return NULL;
    }
    return ctx;
}

ocx_status ocx_context_create(const char *spec, ocx_context **out)
{
    OCX__FAIL_IF(!out, OCX_ERR_INVALID_ARGUMENT, "ocx_context_create: ctx is NULL");
    *out = NULL;
    size_t index;
    OCX__FORWARD(ocx_device_select(spec, &index));
    ocx__device_ref ref;
    OCX__FORWARD(ocx__device_ref_get(index, &ref));

    ocx_context *ctx = context_alloc();
    OCX__FAIL_IF(!ctx, OCX_ERR_OUT_OF_MEMORY, "ocx_context_create: out of host memory");
    ctx->platform = ref.platform;
    ctx->device = ref.device;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ref.platform, 0};
    cl_int err;
    ocx_status st;
    ctx->context = clCreateContext(props, 1, &ref.device, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        st = ocx__cl_error(err, "clCreateContext");
        goto error;
    }
    st = context_finish_setup(ctx, NULL);
    if (st != OCX_OK) goto error;
    ctx->info.index = index;
    ctx->info.platform_index = ref.platform_index;
    ctx->info.device_index = ref.device_index;
    *out = ctx;
    return OCX_OK;
error:
    ocx_context_destroy(ctx);
    return st;
}

ocx_status ocx_context_create_from_cl(cl_context context, cl_device_id device, cl_command_queue queue,
                                      ocx_context **out)
{
    OCX__FAIL_IF(!out, OCX_ERR_INVALID_ARGUMENT, "ocx_context_create_from_cl: ctx is NULL");
    *out = NULL;
    OCX__FAIL_IF(!context || !device, OCX_ERR_INVALID_ARGUMENT,
                 "ocx_context_create_from_cl: context and device must not be NULL");
    cl_platform_id platform = NULL;
    cl_int err = clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    if (err != CL_SUCCESS) return ocx__cl_error(err, "ocx_context_create_from_cl: device");
    /* The device must be one of the context's. */
    cl_uint ndev = 0;
    err = clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof ndev, &ndev, NULL);
    if (err != CL_SUCCESS) return ocx__cl_error(err, "ocx_context_create_from_cl: context");
    cl_device_id *devs = calloc(ndev ? ndev : 1, sizeof *devs);
    OCX__FAIL_IF(!devs, OCX_ERR_OUT_OF_MEMORY, "out of host memory");
    err = clGetContextInfo(context, CL_CONTEXT_DEVICES, ndev * sizeof *devs, devs, NULL);
    if (err != CL_SUCCESS) {
        free(devs);
        return ocx__cl_error(err, "ocx_context_create_from_cl: context");
    }
    /* PoCL 3.1 lists a context made on a sub-device by the root device: a device whose parent (or
     * an ancestor of it) is listed counts as the context's too. */
    int found = 0;
    cl_device_id dv = device;
    for (int depth = 0; dv && !found && depth < 8; depth++) {
        for (cl_uint i = 0; i < ndev; i++) found |= devs[i] == dv;
        cl_device_id parent = NULL;
        if (clGetDeviceInfo(dv, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL) != CL_SUCCESS) break;
        dv = parent;
    }
    free(devs);
    OCX__FAIL_IF(!found, OCX_ERR_INVALID_ARGUMENT, "ocx_context_create_from_cl: device is not in context");

    ocx_context *ctx = context_alloc();
    OCX__FAIL_IF(!ctx, OCX_ERR_OUT_OF_MEMORY, "ocx_context_create_from_cl: out of host memory");
    ctx->platform = platform;
    ctx->device = device;
    err = clRetainDevice(device);
    if (err != CL_SUCCESS) {
        ocx_context_destroy(ctx);
        return ocx__cl_error(err, "clRetainDevice");
    }
    ctx->device_retained = 1;
    err = clRetainContext(context);
    if (err != CL_SUCCESS) {
        ocx_context_destroy(ctx);
        return ocx__cl_error(err, "clRetainContext");
    }
    ctx->context = context;
    ocx_status st = context_finish_setup(ctx, queue);
    if (st != OCX_OK) {
        ocx_context_destroy(ctx);
        return st;
    }
    /* Find the flat index, when the device is one the loader lists. */
    size_t count = 0;
    ocx_device_count(&count);
    ctx->info.index = (size_t)-1;
    for (size_t i = 0; i < count; i++) {
        ocx__device_ref ref;
        if (ocx__device_ref_get(i, &ref) == OCX_OK && ref.device == device) {
            ctx->info.index = i;
            ctx->info.platform_index = ref.platform_index;
            ctx->info.device_index = ref.device_index;
        }
    }
    *out = ctx;
    return OCX_OK;
}

void ocx_context_destroy(ocx_context *ctx)
{
    if (!ctx) return;
    if (ctx->stream.queue) {
        clFinish(ctx->stream.queue);
    }
    ocx__programs_release(ctx);
    ocx__profiles_release(ctx);
    if (ctx->staging) {
        if (ctx->staging_ptr && ctx->stream.queue) {
            clEnqueueUnmapMemObject(ctx->stream.queue, ctx->staging, ctx->staging_ptr, 0, NULL, NULL);
            clFinish(ctx->stream.queue);
        }
        clReleaseMemObject(ctx->staging);
    }
    ocx__events_release_held(ctx, ctx->stream.queue); /* events retain their context: any order works */
    ocx__stream_fini(&ctx->stream);
    if (ctx->context) clReleaseContext(ctx->context);
    if (ctx->device_retained) clReleaseDevice(ctx->device);
    free(ctx->device_key);
    pthread_mutex_destroy(&ctx->staging_lock);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

ocx_status ocx__check_context(const ocx_context *ctx)
{
    OCX__FAIL_IF(!ctx, OCX_ERR_INVALID_ARGUMENT, "context is NULL");
    return OCX_OK;
}

ocx_status ocx_context_device_info(const ocx_context *ctx, ocx_device_info *info)
{
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF(!info, OCX_ERR_INVALID_ARGUMENT, "ocx_context_device_info: info is NULL");
    *info = ctx->info;
    return OCX_OK;
}

ocx_status ocx_context_cl(const ocx_context *ctx, cl_context *context, cl_device_id *device)
{
    OCX__FORWARD(ocx__check_context(ctx));
    if (context) *context = ctx->context;
    if (device) *device = ctx->device;
    return OCX_OK;
}

ocx_status ocx_context_get_stats(const ocx_context *ctx, ocx_context_stats *stats)
{
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF(!stats, OCX_ERR_INVALID_ARGUMENT, "ocx_context_get_stats: stats is NULL");
    pthread_mutex_lock((pthread_mutex_t *)&ctx->lock);
    *stats = ctx->stats;
    pthread_mutex_unlock((pthread_mutex_t *)&ctx->lock);
    return OCX_OK;
}

ocx_stream *ocx_context_stream(ocx_context *ctx) { return ctx ? &ctx->stream : NULL; }
