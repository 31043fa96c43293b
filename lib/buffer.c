/* buffer.c — typed device buffers, views, transfers (with pinned staging), fill and copy. */
#include "config.h"
#include "ocx_internal.h"

#include <stdlib.h>
#include <string.h>

/* Pinned staging: two halves, so that copying one chunk on the host overlaps the DMA of the other. */
#define STAGING_HALF ((size_t)4 << 20)
#define STAGING_MIN_BYTES ((size_t)1 << 20)

static ocx_status buffer_new(ocx_context *ctx, cl_mem mem, ocx_dtype dtype, size_t offset, size_t length,
                             ocx_buffer **out)
{
    ocx_buffer *b = calloc(1, sizeof *b);
    OCX__FAIL_IF(!b, OCX_ERR_OUT_OF_MEMORY, "buffer: out of host memory");
    b->context = ctx ? ctx->context : NULL;
    b->mem = mem;
    b->dtype = dtype;
    b->offset = offset;
    b->length = length;
    b->root = mem;
    *out = b;
    return OCX_OK;
}

size_t ocx__root_byte(const ocx_buffer *buf, size_t elem)
{
    return buf->root_byte + (buf->offset + elem) * ocx_dtype_size(buf->dtype);
}

ocx_status ocx_buffer_create(ocx_context *ctx, ocx_dtype dtype, size_t length, ocx_buffer **out)
{
    OCX__FAIL_IF(!out, OCX_ERR_INVALID_ARGUMENT, "ocx_buffer_create: buf is NULL");
    *out = NULL;
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FORWARD(ocx__check_dtype_supported(ctx, dtype, "ocx_buffer_create"));
    size_t esize = ocx_dtype_size(dtype);
    OCX__FAIL_IF(length > SIZE_MAX / esize, OCX_ERR_OUT_OF_RANGE, "ocx_buffer_create: %zu elements of %zu bytes each: "
                 "their size in bytes overflows size_t", length, esize);
    size_t bytes = length * esize;
    OCX__FAIL_IF(bytes > ctx->info.max_alloc_bytes, OCX_ERR_OUT_OF_MEMORY,
                 "ocx_buffer_create: %zu bytes exceed the device's largest allocation (%llu bytes)", bytes,
                 (unsigned long long)ctx->info.max_alloc_bytes);
    cl_int err;
    /* OpenCL forbids empty buffers: an empty ocx buffer still owns a minimal allocation. */
    cl_mem mem = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes ? bytes : esize, NULL, &err);
    if (err != CL_SUCCESS) return ocx__cl_error(err, "clCreateBuffer");
    ocx_status st = buffer_new(ctx, mem, dtype, 0, length, out);
    if (st != OCX_OK) clReleaseMemObject(mem);
    return st;
}

ocx_status ocx_buffer_wrap(ocx_context *ctx, cl_mem mem, ocx_dtype dtype, size_t length, ocx_buffer **out)
{
    OCX__FAIL_IF(!out, OCX_ERR_INVALID_ARGUMENT, "ocx_buffer_wrap: buf is NULL");
    *out = NULL;
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF(!mem, OCX_ERR_INVALID_ARGUMENT, "ocx_buffer_wrap: mem is NULL");
    OCX__FORWARD(ocx__check_dtype_supported(ctx, dtype, "ocx_buffer_wrap"));
    size_t size = 0;
    cl_context mctx = NULL;
    OCX__CL_FORWARD(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL), "clGetMemObjectInfo(mem)");
    OCX__CL_FORWARD(clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof mctx, &mctx, NULL), "clGetMemObjectInfo(mem)");
    OCX__FAIL_IF(mctx != ctx->context, OCX_ERR_CONTEXT_MISMATCH, "ocx_buffer_wrap: mem belongs to another cl_context");
    size_t esize = ocx_dtype_size(dtype);
    OCX__FAIL_IF(length > size / esize, OCX_ERR_OUT_OF_RANGE,
                 "ocx_buffer_wrap: %zu %s elements (%zu bytes each) do not fit in the cl_mem's %zu bytes", length,
                 ocx_dtype_name(dtype), esize, size); /* length * esize may overflow */
    /* A sub-buffer shares its parent's storage: remember where, so that two sub-buffers of one
     * parent (or one and the parent) that overlap are seen to (ocx__overlap). */
    cl_mem parent = NULL;
    size_t origin = 0;
    OCX__CL_FORWARD(clGetMemObjectInfo(mem, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL),
                    "clGetMemObjectInfo(mem)");
    if (parent)
        OCX__CL_FORWARD(clGetMemObjectInfo(mem, CL_MEM_OFFSET, sizeof origin, &origin, NULL), "clGetMemObjectInfo(mem)");
    OCX__CL_FORWARD(clRetainMemObject(mem), "clRetainMemObject");
    ocx_status st = buffer_new(ctx, mem, dtype, 0, length, out);
    if (st != OCX_OK) {
        clReleaseMemObject(mem);
        return st;
    }
    if (parent) (*out)->root = parent, (*out)->root_byte = origin;
    return OCX_OK;
}

ocx_status ocx_buffer_view(const ocx_buffer *parent, size_t offset, size_t length, ocx_buffer **out)
{
    OCX__FAIL_IF(!out, OCX_ERR_INVALID_ARGUMENT, "ocx_buffer_view: view is NULL");
    *out = NULL;
    OCX__FAIL_IF(!parent, OCX_ERR_INVALID_ARGUMENT, "ocx_buffer_view: parent is NULL");
    OCX__FAIL_IF(offset > parent->length || length > parent->length - offset, OCX_ERR_OUT_OF_RANGE,
                 "ocx_buffer_view: [%zu, %zu+%zu) is outside the parent's %zu elements", offset, offset, length,
                 parent->length);
    OCX__CL_FORWARD(clRetainMemObject(parent->mem), "clRetainMemObject");
    ocx_status st = buffer_new(NULL, parent->mem, parent->dtype, parent->offset + offset, length, out);
    if (st != OCX_OK) {
        clReleaseMemObject(parent->mem);
        return st;
    }
    (*out)->context = parent->context;
    (*out)->root = parent->root;
    (*out)->root_byte = parent->root_byte;
    return OCX_OK;
}

void ocx_buffer_destroy(ocx_buffer *buf)
{
    if (!buf) return;
    clReleaseMemObject(buf->mem);
    free(buf);
}

size_t ocx_buffer_length(const ocx_buffer *buf) { return buf ? buf->length : 0; }
ocx_dtype ocx_buffer_dtype(const ocx_buffer *buf) { return buf ? buf->dtype : OCX_F32; }
size_t ocx_buffer_offset(const ocx_buffer *buf) { return buf ? buf->offset : 0; }
cl_mem ocx_buffer_cl_mem(const ocx_buffer *buf) { return buf ? buf->mem : NULL; }

/* Common checks of a transfer; on success *q is the queue, *byte_off and *bytes the device range. */
static ocx_status transfer_check(ocx_context *ctx, ocx_stream *stream, const ocx_buffer *buf, size_t offset,
                                 size_t count, const void *host, const char *what, size_t num_wait,
                                 const ocx_event *wait, cl_command_queue *q, size_t *byte_off, size_t *bytes)
{
    OCX__FORWARD(ocx__stream_resolve(ctx, stream, q));
    OCX__FORWARD(ocx__check_wait(ctx, *q, num_wait, wait));
    OCX__FORWARD(ocx__check_range(ctx, buf, what, offset, count, 1));
    OCX__FAIL_IF(count > 0 && !host, OCX_ERR_INVALID_ARGUMENT, "%s: host pointer is NULL", what);
    size_t es = ocx_dtype_size(buf->dtype);
    *byte_off = (buf->offset + offset) * es;
    *bytes = count * es;
    return OCX_OK;
}

/* A marker event for zero-sized transfers, so that a caller's event is always a real event. */
/* A marker after the wait list, for a transfer with nothing to move (and after a staged one);
 * blocking: waited for. *event is written only on success (it may be an entry of the wait list,
 * which a failed call leaves as it was). */
static ocx_status empty_transfer(const ocx_context *ctx, cl_command_queue q, size_t num_wait, const ocx_event *wait,
                                 ocx_event *event, int blocking)
{
    if (!event && num_wait == 0) return OCX_OK;
    cl_event ev = NULL;
    OCX__CL_FORWARD(clEnqueueMarkerWithWaitList(q, (cl_uint)num_wait, num_wait ? wait : NULL, &ev),
                    "clEnqueueMarkerWithWaitList");
    const cl_int err = blocking ? ocx__wait_events(1, &ev) : CL_SUCCESS;
    ocx__event_give(ctx, err == CL_SUCCESS ? event : NULL, ev);
    OCX__CL_FORWARD(err, "clWaitForEvents");
    return OCX_OK;
}

/* OCX_STAGING: 0 (default) direct; 1 pinned staging for large transfers to devices with their own
 * memory; 2 staging for every large transfer (lets the tests exercise it on PoCL). Staging is off by
 * default because it was not faster where it was meant to help: on an H200 (driver 580) the staged
 * blocking transfers ran 0.75-1.08x the direct ones host-to-device and 0.57-0.75x device-to-host
 * (ocx-bench transfer), the host-side copy into the pinned buffer (~10 GB/s) being the limit, while
 * the pinned buffer itself moves 55 GB/s. */
static int use_staging(const ocx_context *ctx, size_t bytes)
{
    unsigned long mode = ocx__env_ulong_upto("OCX_STAGING", 0, 2);
    return bytes >= STAGING_MIN_BYTES && (mode == 2 || (mode == 1 && !ctx->info.host_unified_memory));
}

/* Makes the pinned staging buffer (ctx->staging_lock held), mapped on `q`, the stream of the transfer
 * that needs it first: a blocking map on the default stream had waited for that stream's work too,
 * forever where that work waited for an event the caller would set after the transfer. Failure just
 * means transferring directly. */
static int staging_ready(ocx_context *ctx, cl_command_queue q)
{
    if (ctx->staging_ptr) return 1;
    cl_int err;
    size_t bytes = 2 * STAGING_HALF;
    ctx->staging = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        ctx->staging = NULL;
        return 0;
    }
    cl_event ev = NULL; /* held on PoCL: the map may fail behind a failed command (ocx__event_drop) */
    ctx->staging_ptr = clEnqueueMapBuffer(q, ctx->staging, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                          0, bytes, 0, NULL, ocx__event_want(ctx, NULL) ? &ev : NULL, &err);
    ocx__event_drop(ctx, ev);
    if (err != CL_SUCCESS) {
        clReleaseMemObject(ctx->staging);
        ctx->staging = NULL;
        ctx->staging_ptr = NULL;
        return 0;
    }
    ctx->staging_bytes = bytes;
    return 1;
}

/* Blocking transfer through the two pinned halves: while the device moves one half, the host fills
 * (or drains) the other. */
static ocx_status staged_transfer(ocx_context *ctx, cl_command_queue q, cl_mem mem, size_t byte_off, size_t bytes,
                                  const void *src, void *dst, size_t num_wait, const ocx_event *wait,
                                  ocx_event *event)
{
    unsigned char *half[2] = {ctx->staging_ptr, (unsigned char *)ctx->staging_ptr + STAGING_HALF};
    cl_event ev[2] = {NULL, NULL};
    size_t len[2] = {0, 0}, pos[2] = {0, 0};
    ocx_status st = OCX_OK;
    cl_int err = CL_SUCCESS;
    size_t nchunks = ocx__div_up(bytes, STAGING_HALF);
    for (size_t i = 0; i <= nchunks && err == CL_SUCCESS; i++) {
        int h = (int)(i & 1);
        if (i < nchunks) {
            if (ev[h]) { /* the half is free once its previous transfer is done */
                err = ocx__wait_events(1, &ev[h]);
                if (err == CL_SUCCESS && dst) memcpy((unsigned char *)dst + pos[h], half[h], len[h]);
                ocx__event_drop(ctx, ev[h]);
                ev[h] = NULL;
                if (err != CL_SUCCESS) break;
            }
            pos[h] = i * STAGING_HALF;
            len[h] = bytes - pos[h] < STAGING_HALF ? bytes - pos[h] : STAGING_HALF;
            cl_uint nw = i == 0 ? (cl_uint)num_wait : 0;
            const cl_event *w = (i == 0 && num_wait) ? wait : NULL;
            if (src) {
                memcpy(half[h], (const unsigned char *)src + pos[h], len[h]);
                err = clEnqueueWriteBuffer(q, mem, CL_FALSE, byte_off + pos[h], len[h], half[h], nw, w, &ev[h]);
            } else {
                err = clEnqueueReadBuffer(q, mem, CL_FALSE, byte_off + pos[h], len[h], half[h], nw, w, &ev[h]);
            }
            if (err == CL_SUCCESS) clFlush(q);
        } else { /* drain: half h holds the older chunk, the other half the last one */
            for (int k = 0; k < 2 && err == CL_SUCCESS; k++) {
                int o = k == 0 ? h : !h;
                if (!ev[o]) continue;
                err = ocx__wait_events(1, &ev[o]);
                if (err == CL_SUCCESS && dst) memcpy((unsigned char *)dst + pos[o], half[o], len[o]);
                ocx__event_drop(ctx, ev[o]);
                ev[o] = NULL;
            }
        }
    }
    /* Whichever half's event is still held finished before we return (in-order queue), after a
     * failure too: chunks still queued read or write the staging halves, which the next staged
     * transfer reuses once the caller releases staging_lock (a failed read's chunk had then
     * landed in the next write's data, reported OK). */
    const cl_int fin = clFinish(q);
    if (err == CL_SUCCESS) err = fin;
    if (err != CL_SUCCESS) st = ocx__cl_error(err, src ? "staged write" : "staged read");
    for (int h = 0; h < 2; h++)
        if (ev[h]) ocx__event_drop(ctx, ev[h]);
    /* The caller's event: a marker after the last chunk, complete before this blocking call returns
     * (as the direct path's is); its profiling span is the marker's, not the transfer's (ocx.h). */
    if (st == OCX_OK && event) st = empty_transfer(ctx, q, 0, NULL, event, 1);
    return st;
}

static ocx_status transfer(ocx_context *ctx, ocx_stream *stream, const ocx_buffer *buf, size_t offset,
                           size_t count, int write, const void *src, void *dst, int blocking, size_t num_wait,
                           const ocx_event *wait, ocx_event *event)
{
    const char *what = write ? (blocking ? "ocx_buffer_write" : "ocx_buffer_write_async")
                             : (blocking ? "ocx_buffer_read" : "ocx_buffer_read_async");
    ocx__event_clear(event, num_wait, wait);
    cl_command_queue q = NULL;
    size_t off, bytes;
    OCX__FORWARD(transfer_check(ctx, stream, buf, offset, count, write ? src : dst, what, num_wait, wait, &q, &off,
                                &bytes));
    if (blocking) OCX__FORWARD(ocx__wait_first(ctx, num_wait, wait, what));
    if (bytes == 0) return empty_transfer(ctx, q, num_wait, wait, event, blocking);
    /* One staging buffer a context: a transfer that finds it in use by another stream's goes
     * directly rather than wait for that stream's work (waiting had serialised unrelated streams). */
    if (blocking && use_staging(ctx, bytes) && pthread_mutex_trylock(&ctx->staging_lock) == 0) {
        ocx_status st = OCX_ERR_INTERNAL;
        int staged = staging_ready(ctx, q);
        if (staged) st = staged_transfer(ctx, q, buf->mem, off, bytes, write ? src : NULL, write ? NULL : dst,
                                         num_wait, wait, event);
        pthread_mutex_unlock(&ctx->staging_lock);
        if (staged) return st;
    }
    cl_bool b = blocking ? CL_TRUE : CL_FALSE;
    cl_uint nw = (cl_uint)num_wait;
    const cl_event *w = num_wait ? wait : NULL;
    cl_event e = NULL; /* stored once enqueued: *event may be an entry of the wait list */
    /* Blocking: its event too, which says whether the transfer ran. Behind a command on the stream
     * that failed while it waited, PoCL's blocking read and write returned CL_SUCCESS with nothing
     * moved (the wait list is waited for before, ocx__wait_first; the queue's earlier commands are
     * not). A failed event is held (ocx__event_drop), not released as the wait returns. */
    cl_event *out = blocking || ocx__event_want(ctx, event) ? &e : NULL;
    cl_int err = write ? clEnqueueWriteBuffer(q, buf->mem, b, off, bytes, src, nw, w, out)
                       : clEnqueueReadBuffer(q, buf->mem, b, off, bytes, dst, nw, w, out);
    if (err != CL_SUCCESS) return ocx__cl_error(err, what);
    if (blocking && (err = ocx__wait_events(1, &e)) != CL_SUCCESS) {
        ocx__event_drop(ctx, e);
        return ocx__error(OCX_ERR_OPENCL, "%s: the transfer did not run (%s, %d): a command ahead of it on the stream "
                          "failed", what, ocx__cl_error_name(err), (int)err);
    }
    ocx__event_give(ctx, event, e);
    return OCX_OK;
}

ocx_status ocx_buffer_write(ocx_context *ctx, ocx_stream *stream, ocx_buffer *buf, size_t offset, size_t count,
                            const void *src, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return transfer(ctx, stream, buf, offset, count, 1, src, NULL, 1, num_wait, wait, event);
}

ocx_status ocx_buffer_write_async(ocx_context *ctx, ocx_stream *stream, ocx_buffer *buf, size_t offset,
                                  size_t count, const void *src, size_t num_wait, const ocx_event *wait,
                                  ocx_event *event)
{
    return transfer(ctx, stream, buf, offset, count, 1, src, NULL, 0, num_wait, wait, event);
}

ocx_status ocx_buffer_read(ocx_context *ctx, ocx_stream *stream, const ocx_buffer *buf, size_t offset, size_t count,
                           void *dst, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return transfer(ctx, stream, buf, offset, count, 0, NULL, dst, 1, num_wait, wait, event);
}

ocx_status ocx_buffer_read_async(ocx_context *ctx, ocx_stream *stream, const ocx_buffer *buf, size_t offset,
                                 size_t count, void *dst, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    return transfer(ctx, stream, buf, offset, count, 0, NULL, dst, 0, num_wait, wait, event);
}

ocx_status ocx_buffer_fill(ocx_context *ctx, ocx_stream *stream, ocx_buffer *buf, size_t offset, size_t count,
                           const void *value, size_t num_wait, const ocx_event *wait, ocx_event *event)
{
    ocx__event_clear(event, num_wait, wait);
    cl_command_queue q = NULL;
    size_t off, bytes;
    OCX__FAIL_IF(count > 0 && !value, OCX_ERR_INVALID_ARGUMENT, "ocx_buffer_fill: value is NULL");
    OCX__FORWARD(transfer_check(ctx, stream, buf, offset, count, value, "ocx_buffer_fill", num_wait, wait, &q, &off,
                                &bytes));
    if (bytes == 0) return empty_transfer(ctx, q, num_wait, wait, event, 0);
    size_t es = ocx_dtype_size(buf->dtype);
    cl_event e = NULL;
    OCX__CL_FORWARD(clEnqueueFillBuffer(q, buf->mem, value, es, off, bytes, (cl_uint)num_wait,
                                        num_wait ? wait : NULL, ocx__event_want(ctx, event) ? &e : NULL),
                    "clEnqueueFillBuffer");
    ocx__event_give(ctx, event, e);
    return OCX_OK;
}

ocx_status ocx_buffer_copy(ocx_context *ctx, ocx_stream *stream, const ocx_buffer *src, size_t src_offset,
                           ocx_buffer *dst, size_t dst_offset, size_t count, size_t num_wait, const ocx_event *wait,
                           ocx_event *event)
{
    ocx__event_clear(event, num_wait, wait);
    cl_command_queue q = NULL;
    size_t soff, doff, bytes;
    OCX__FORWARD(transfer_check(ctx, stream, src, src_offset, count, "", "ocx_buffer_copy: src", num_wait, wait, &q,
                                &soff, &bytes));
    OCX__FORWARD(transfer_check(ctx, stream, dst, dst_offset, count, "", "ocx_buffer_copy: dst", 0, NULL, &q, &doff,
                                &bytes));
    OCX__FAIL_IF(src->dtype != dst->dtype, OCX_ERR_DTYPE, "ocx_buffer_copy: src is %s but dst is %s",
                 ocx_dtype_name(src->dtype), ocx_dtype_name(dst->dtype));
    OCX__FAIL_IF(ocx__overlap(src, src_offset, count, dst, dst_offset, count), OCX_ERR_INVALID_ARGUMENT,
                 "ocx_buffer_copy: source and destination ranges overlap");
    if (bytes == 0) return empty_transfer(ctx, q, num_wait, wait, event, 0);
    cl_event e = NULL;
    OCX__CL_FORWARD(clEnqueueCopyBuffer(q, src->mem, dst->mem, soff, doff, bytes, (cl_uint)num_wait,
                                        num_wait ? wait : NULL, ocx__event_want(ctx, event) ? &e : NULL),
                    "clEnqueueCopyBuffer");
    ocx__event_give(ctx, event, e);
    return OCX_OK;
}
