/* launch.c — the one path every operation takes: program → kernel → arguments → enqueue → status. */
#include "config.h"
#include "ocx_internal.h"

static _Thread_local int build_only;

void ocx__launch_build_only(int on) { build_only = on; }

int ocx__launch_is_build_only(void) { return build_only; }

ocx_status ocx__launch(ocx_context *ctx, ocx_stream *stream, const ocx__launch_desc *d, size_t num_wait,
                       const ocx_event *wait, ocx_event *event)
{
    /* *event is not cleared here: the operation's entry point did (ocx__event_clear), and an
     * operation's later launch must leave a caller's event that is also its wait list's entry (1,
     * &ev, &ev) as it was if it fails. */
    cl_command_queue q = NULL;
    OCX__FORWARD(ocx__stream_resolve(ctx, stream, &q));
    OCX__FORWARD(ocx__check_wait(ctx, q, num_wait, wait));
    OCX__FAIL_IF(d->dims < 1 || d->dims > 3, OCX_ERR_INTERNAL, "launch %s: %u dimensions", d->kernel, d->dims);
    int empty = 0, have_local = d->local[0] != 0;
    for (unsigned i = 0; i < d->dims; i++) {
        empty |= d->global[i] == 0;
        OCX__FAIL_IF(have_local && (d->local[i] == 0 || d->global[i] % d->local[i] != 0), OCX_ERR_INTERNAL,
                     "launch %s: global size %zu is not a multiple of local size %zu in dimension %u", d->kernel,
                     d->global[i], d->local[i], i);
    }
    if (empty) { /* nothing to run: the event still orders after the wait list (build-only: nothing) */
        if (build_only || (!event && num_wait == 0)) return OCX_OK;
        cl_event ev;
        OCX__CL_FORWARD(clEnqueueMarkerWithWaitList(q, (cl_uint)num_wait, num_wait ? wait : NULL, &ev),
                        "clEnqueueMarkerWithWaitList");
        ocx__event_give(ctx, event, ev);
        return OCX_OK;
    }

    /* The program is built (or found) without holding the context's lock; kernels are shared per
     * context, so argument setting and enqueue happen under it. In build-only mode (the tuner
     * compiling candidates ahead of timing) nothing is enqueued. */
    cl_kernel k = d->prebuilt;
    if (!k) OCX__FORWARD(ocx__kernel_get(ctx, d->source, d->options, d->kernel, &k));
    if (build_only) return OCX_OK;
    pthread_mutex_lock(&ctx->lock);
    ocx_status st = OCX_OK;
    for (unsigned i = 0; st == OCX_OK && i < d->nargs; i++) {
        const ocx__arg *a = &d->args[i];
        cl_int err = clSetKernelArg(k, i, a->size, a->kind == OCX__ARG_LOCAL ? NULL : a->value);
        if (err != CL_SUCCESS) {
            char what[160];
            snprintf(what, sizeof what, "%s: argument %u", d->kernel, i);
            st = ocx__cl_error(err, what);
        }
    }
    if (st == OCX_OK) {
        cl_event e = NULL; /* stored once enqueued: *event may be an entry of the wait list */
        cl_int err = clEnqueueNDRangeKernel(q, k, d->dims, NULL, d->global, have_local ? d->local : NULL,
                                            (cl_uint)num_wait, num_wait ? wait : NULL,
                                            ocx__event_want(ctx, event) ? &e : NULL);
        if (err != CL_SUCCESS)
            st = ocx__cl_error(err, d->kernel);
        else
            ocx__event_give(ctx, event, e);
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

void ocx__dtype_defines(const ocx_context *ctx, ocx_dtype dtype, char *buf, size_t cap)
{
    buf[0] = '\0';
    ocx__append_define(buf, cap, "-D", "DTYPE", dtype == OCX_F16 ? 1 : dtype == OCX_F64 ? 2 : 0);
    if (ctx->info.has_fp64) ocx__append_define(buf, cap, " -D", "HAS_FP64", 1);
}

size_t ocx__vector_items(size_t n, size_t vw) { return n / vw > n % vw ? n / vw : n % vw; }

size_t ocx__vector_width(ocx_dtype dtype, int vw) { return dtype == OCX_F64 && vw > 1 ? (size_t)vw / 2 : (size_t)vw; }

size_t ocx__grid_groups(const ocx_context *ctx, size_t items, size_t wg, size_t per_cu)
{
    size_t groups = ocx__div_up(items ? items : 1, wg);
    size_t cap = (size_t)(ctx->info.compute_units ? ctx->info.compute_units : 1) * per_cu;
    return groups < cap ? groups : cap;
}
