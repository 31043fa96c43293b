/* args.c — the one argument checker every operation uses. */
#include "config.h"
#include "ocx_internal.h"

ocx_status ocx__check_wait(const ocx_context *ctx, cl_command_queue q, size_t num_wait, const ocx_event *wait)
{
    OCX__FAIL_IF(num_wait > 0 && !wait, OCX_ERR_INVALID_ARGUMENT, "wait list: num_wait is %zu but wait is NULL",
                 num_wait);
    OCX__FAIL_IF(num_wait > UINT32_MAX, OCX_ERR_INVALID_ARGUMENT, "wait list: %zu events is too many", num_wait);
    for (size_t i = 0; i < num_wait; i++) {
        OCX__FAIL_IF(!wait[i], OCX_ERR_INVALID_ARGUMENT, "wait list: event %zu is NULL", i);
        if (!ctx) continue;
        /* Drivers differ (PoCL ran kernels after another context's event, and failed markers and
         * transfers with CL_INVALID_CONTEXT): one answer for all. */
        cl_context owner = NULL;
        OCX__CL_FORWARD(clGetEventInfo(wait[i], CL_EVENT_CONTEXT, sizeof owner, &owner, NULL),
                        "wait list: clGetEventInfo");
        OCX__FAIL_IF(owner != ctx->context, OCX_ERR_CONTEXT_MISMATCH, "wait list: event %zu belongs to another context",
                     i);
        /* A command after a failed event never runs, and PoCL's blocking calls then waited forever
         * (a blocking read or ocx_reduce_host after a user event set to -5): refused here instead. An
         * event that fails after the call is enqueued fails the command, which ocx_event_wait reports. */
        cl_int state = CL_COMPLETE;
        OCX__CL_FORWARD(clGetEventInfo(wait[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL),
                        "wait list: clGetEventInfo");
        OCX__FAIL_IF(state < 0, OCX_ERR_OPENCL, "wait list: event %zu has failed (%s): what waits for it would never run",
                     i, ocx__cl_error_name(state));
        /* OpenCL 1.2 (clFlush): a command of another queue that a wait list names must have been
         * flushed, or a driver that holds commands until a flush may never start it, and what
         * waits for it never runs. ocx flushes nothing after an enqueue; PoCL submits at once. A
         * host wait (q NULL) needs none: clWaitForEvents flushes. */
        if (!q || state != CL_QUEUED) continue;
        cl_command_queue eq = NULL;
        OCX__CL_FORWARD(clGetEventInfo(wait[i], CL_EVENT_COMMAND_QUEUE, sizeof eq, &eq, NULL),
                        "wait list: clGetEventInfo");
        if (eq && eq != q) OCX__CL_FORWARD(clFlush(eq), "wait list: clFlush of the queue of an event");
    }
    return OCX_OK;
}

cl_int ocx__wait_events(cl_uint num, const cl_event *events)
{
    const cl_int err = clWaitForEvents(num, events);
    if (err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) return err;
    /* The spec's answer for a failed event is CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, PoCL's
     * too; NVIDIA's driver (580, H200) returns CL_SUCCESS for a user event set to -5, before the
     * wait or during it (check_stream's test_failed_wait_event), and a driver may answer with
     * another error: the events' own status tells, whatever the answer. */
    for (cl_uint i = 0; i < num; i++) {
        cl_int st = CL_COMPLETE;
        if (clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) == CL_SUCCESS && st < 0)
            return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    return err;
}

ocx_status ocx__wait_first(const ocx_context *ctx, size_t num_wait, const ocx_event *wait, const char *what)
{
    OCX__FORWARD(ocx__check_wait(ctx, NULL, num_wait, wait));
    if (num_wait == 0) return OCX_OK;
    const cl_int err = ocx__wait_events((cl_uint)num_wait, wait);
    OCX__FAIL_IF(err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, OCX_ERR_OPENCL,
                 "%s: an event of the wait list failed while the call waited for it (%s); nothing was done", what,
                 ocx__cl_error_name(err));
    OCX__CL_FORWARD(err, "wait list: clWaitForEvents");
    return OCX_OK;
}

void ocx__event_clear(ocx_event *event, size_t num_wait, const ocx_event *wait)
{
    if (!event) return;
    for (size_t i = 0; wait && i < num_wait; i++)
        if (&wait[i] == event) return;
    *event = NULL;
}

ocx_status ocx__check_range(const ocx_context *ctx, const ocx_buffer *buf, const char *name, size_t offset,
                            size_t n, size_t inc)
{
    OCX__FAIL_IF(!buf, OCX_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", name);
    OCX__FAIL_IF(ctx && buf->context != ctx->context, OCX_ERR_CONTEXT_MISMATCH,
                 "%s: buffer belongs to another context", name);
    OCX__FAIL_IF(inc == 0, OCX_ERR_INVALID_ARGUMENT, "%s: stride (inc) must be at least 1", name);
    if (n == 0) {
        OCX__FAIL_IF(offset > buf->length, OCX_ERR_OUT_OF_RANGE, "%s: offset %zu is past the buffer's %zu elements",
                     name, offset, buf->length);
        return OCX_OK;
    }
    /* Last element touched: offset + (n-1)*inc, computed without overflow. */
    size_t steps = n - 1;
    OCX__FAIL_IF(steps > 0 && inc > (SIZE_MAX - offset) / steps, OCX_ERR_OUT_OF_RANGE,
                 "%s: %zu elements with stride %zu from offset %zu overflow size_t", name, n, inc, offset);
    size_t last = offset + steps * inc;
    OCX__FAIL_IF(last >= buf->length, OCX_ERR_OUT_OF_RANGE,
                 "%s: needs element %zu (%zu elements, stride %zu, offset %zu) but the buffer has %zu", name,
                 last, n, inc, offset, buf->length);
    return OCX_OK;
}

ocx_status ocx__check_dtype_supported(const ocx_context *ctx, ocx_dtype dtype, const char *name)
{
    OCX__FAIL_IF((unsigned)dtype >= OCX_DTYPE_COUNT, OCX_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", name,
                 (int)dtype);
    OCX__FAIL_IF(dtype == OCX_F64 && !ctx->info.has_fp64, OCX_ERR_UNSUPPORTED,
                 "%s: f64 needs cl_khr_fp64, which device '%s' does not have%s", name, ctx->info.name,
                 ocx__env_flag("OCX_DISABLE_FP64") ? " (or OCX_DISABLE_FP64 is set)" : "");
    return OCX_OK;
}

ocx_status ocx__check_dtype(const ocx_buffer *buf, const char *name, ocx_dtype expected)
{
    OCX__FAIL_IF(!buf, OCX_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", name);
    OCX__FAIL_IF(buf->dtype != expected, OCX_ERR_DTYPE, "%s: buffer is %s, expected %s", name,
                 ocx_dtype_name(buf->dtype), ocx_dtype_name(expected));
    return OCX_OK;
}

int ocx__overlap(const ocx_buffer *a, size_t a_off, size_t a_len, const ocx_buffer *b, size_t b_off, size_t b_len)
{
    if (!a || !b || a->root != b->root || a_len == 0 || b_len == 0) return 0;
    size_t a0 = ocx__root_byte(a, a_off), a1 = a0 + a_len * ocx_dtype_size(a->dtype);
    size_t b0 = ocx__root_byte(b, b_off), b1 = b0 + b_len * ocx_dtype_size(b->dtype);
    return a0 < b1 && b0 < a1;
}

ocx_status ocx__check_alias(const ocx_buffer *out, size_t out_inc, const ocx_buffer *in, size_t in_inc, size_t n,
                            const char *out_name, const char *in_name)
{
    if (!out || !in || n == 0 || out->root != in->root) return OCX_OK;
    /* The very same elements (same start, stride and element size) through the same cl_mem: allowed,
     * element i only reads and writes element i. Through a buffer and its sub-buffer, or two
     * sub-buffers, OpenCL leaves a kernel that writes one and reads the other undefined. One
     * element has no stride to compare. */
    if (out->mem == in->mem && ocx__root_byte(out, 0) == ocx__root_byte(in, 0) && (out_inc == in_inc || n == 1) &&
        out->dtype == in->dtype)
        return OCX_OK;
    size_t out_span = (n - 1) * out_inc + 1, in_span = (n - 1) * in_inc + 1;
    OCX__FAIL_IF(ocx__overlap(out, 0, out_span, in, 0, in_span), OCX_ERR_INVALID_ARGUMENT,
                 "%s overlaps %s without being the very same elements", out_name, in_name);
    return OCX_OK;
}

ocx_status ocx__check_float(const ocx_context *ctx, const ocx_buffer *buf, const char *name)
{
    OCX__FAIL_IF(!buf, OCX_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", name);
    OCX__FAIL_IF(buf->dtype != OCX_F32 && buf->dtype != OCX_F16 && buf->dtype != OCX_F64, OCX_ERR_DTYPE,
                 "%s: buffer is %s; this operation takes f32, f16 or f64", name, ocx_dtype_name(buf->dtype));
    return ocx__check_dtype_supported(ctx, buf->dtype, name);
}
