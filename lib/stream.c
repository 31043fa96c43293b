/* stream.c — streams (in-order queues with profiling) and events. */
#include "config.h"
#include "ocx_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

ocx_status ocx__stream_resolve(ocx_context *ctx, ocx_stream *stream, cl_command_queue *queue)
{
    OCX__FORWARD(ocx__check_context(ctx));
    if (!stream) stream = &ctx->stream;
    OCX__FAIL_IF(stream->ctx != ctx, OCX_ERR_CONTEXT_MISMATCH, "stream belongs to another context");
    *queue = stream->queue;
    return OCX_OK;
}

int ocx__stream_init(ocx_stream *s) { return pthread_mutex_init(&s->lock, NULL); }

void ocx__stream_fini(ocx_stream *s)
{
    if (s->scratch) clReleaseMemObject(s->scratch);
    if (s->tally) clReleaseMemObject(s->tally);
    if (s->queue) clReleaseCommandQueue(s->queue);
    s->scratch = NULL;
    s->tally = NULL;
    s->queue = NULL;
    pthread_mutex_destroy(&s->lock);
}

/* One buffer per stream, kept between calls: allocating and releasing one per reduction cost the
 * H200 microseconds a call, and made each wait for the last. */
ocx_status ocx__stream_scratch(ocx_context *ctx, ocx_stream *stream, size_t bytes, ocx_stream **out_stream,
                               cl_mem *scratch)
{
    cl_command_queue q;
    OCX__FORWARD(ocx__stream_resolve(ctx, stream, &q));
    ocx_stream *s = stream ? stream : &ctx->stream;
    /* OCX_LIMIT_SCRATCH=N (a simulated limit, for tests): a request above N bytes fails as a full
     * device's would, so that the callers' fallbacks run (GEMM: operands read in place, K in one
     * pass), even where the stream holds a larger buffer from before the limit was set. */
    const unsigned long limit = ocx__env_ulong("OCX_LIMIT_SCRATCH", 0);
    OCX__FAIL_IF(limit && bytes > limit, OCX_ERR_OUT_OF_MEMORY,
                 "stream scratch: %zu bytes, above OCX_LIMIT_SCRATCH=%lu", bytes, limit);
    pthread_mutex_lock(&s->lock);
    if (s->scratch_bytes < bytes) {
        /* A released buffer lives on until the commands already enqueued with it are done. */
        if (s->scratch) clReleaseMemObject(s->scratch);
        /* Doubling while small (the reductions' partials); a GEMM's copies get what they ask for. */
        size_t grow = 2 * s->scratch_bytes > bytes && bytes < (1u << 20) ? 2 * s->scratch_bytes : bytes;
        cl_int err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        s->scratch = NULL;
        /* The doubled size first, then (that failing, or above the limit) what the call asked for:
         * a request within the limit had failed after smaller ones, by the doubling alone. */
        for (int i = 0; i < (grow > bytes ? 2 : 1) && !s->scratch; i++) {
            const size_t want = i ? bytes : grow;
            if (limit && want > limit) continue;
            s->scratch = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, want, NULL, &err);
            if (err != CL_SUCCESS) s->scratch = NULL;
            else s->scratch_bytes = want;
        }
        if (!s->scratch) {
            s->scratch_bytes = 0;
            pthread_mutex_unlock(&s->lock);
            return ocx__cl_error(err, "clCreateBuffer (stream scratch)");
        }
    }
    *out_stream = s;
    *scratch = s->scratch;
    return OCX_OK;
}

ocx_status ocx__stream_tally(ocx_context *ctx, ocx_stream *s, cl_mem *tally)
{
    if (!s->tally) {
        cl_uint zero = 0;
        cl_int err;
        s->tally = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero, &err);
        if (err != CL_SUCCESS) {
            s->tally = NULL;
            return ocx__cl_error(err, "clCreateBuffer (stream counter)");
        }
    }
    *tally = s->tally;
    return OCX_OK;
}

void ocx__stream_scratch_drop(ocx_stream *s)
{
    if (s->scratch) clReleaseMemObject(s->scratch);
    s->scratch = NULL;
    s->scratch_bytes = 0;
}

ocx_status ocx_stream_create(ocx_context *ctx, ocx_stream **out)
{
    OCX__FAIL_IF(!out, OCX_ERR_INVALID_ARGUMENT, "ocx_stream_create: stream is NULL");
    *out = NULL;
    OCX__FORWARD(ocx__check_context(ctx));
    ocx_stream *s = calloc(1, sizeof *s);
    OCX__FAIL_IF(!s, OCX_ERR_OUT_OF_MEMORY, "ocx_stream_create: out of host memory");
    if (ocx__stream_init(s) != 0) {
        free(s);
        return ocx__error(OCX_ERR_OUT_OF_MEMORY, "ocx_stream_create: pthread_mutex_init failed");
    }
    cl_int err;
    s->queue = clCreateCommandQueue(ctx->context, ctx->device, CL_QUEUE_PROFILING_ENABLE, &err);
    s->profiling = 1;
    ocx_status st = err != CL_SUCCESS ? ocx__cl_error(err, "clCreateCommandQueue") : ocx__queue_live(s->queue);
    if (st != OCX_OK) {
        ocx__stream_fini(s);
        free(s);
        return st;
    }
    s->ctx = ctx;
    *out = s;
    return OCX_OK;
}

void ocx_stream_destroy(ocx_stream *s)
{
    if (!s || s->is_default) return;
    clFinish(s->queue);
    ocx__events_release_held(NULL, s->queue);
    ocx__stream_fini(s);
    free(s);
}

ocx_status ocx_stream_trim(ocx_context *ctx, ocx_stream *stream, size_t *released)
{
    if (released) *released = 0;
    cl_command_queue q = NULL;
    OCX__FORWARD(ocx__stream_resolve(ctx, stream, &q));
    ocx_stream *s = stream ? stream : &ctx->stream;
    pthread_mutex_lock(&s->lock);
    if (released) *released = s->scratch_bytes;
    ocx__stream_scratch_drop(s);
    pthread_mutex_unlock(&s->lock);
    return OCX_OK;
}

ocx_status ocx_stream_flush(ocx_context *ctx, ocx_stream *stream)
{
    cl_command_queue q = NULL;
    OCX__FORWARD(ocx__stream_resolve(ctx, stream, &q));
    OCX__CL_FORWARD(clFlush(q), "clFlush");
    return OCX_OK;
}

static void events_sweep_after_finish(void);

ocx_status ocx_stream_finish(ocx_context *ctx, ocx_stream *stream)
{
    cl_command_queue q = NULL;
    OCX__FORWARD(ocx__stream_resolve(ctx, stream, &q));
    OCX__CL_FORWARD(clFinish(q), "clFinish");
    events_sweep_after_finish();
    return OCX_OK;
}

ocx_status ocx_stream_marker(ocx_context *ctx, ocx_stream *stream, size_t num_wait, const ocx_event *wait,
                             ocx_event *event)
{
    cl_command_queue q = NULL;
    ocx__event_clear(event, num_wait, wait);
    OCX__FORWARD(ocx__stream_resolve(ctx, stream, &q));
    OCX__FORWARD(ocx__check_wait(ctx, q, num_wait, wait));
    OCX__FAIL_IF(!event, OCX_ERR_INVALID_ARGUMENT, "ocx_stream_marker: event is NULL");
    cl_event e = NULL; /* stored once enqueued: *event may be an entry of the wait list */
    OCX__CL_FORWARD(clEnqueueMarkerWithWaitList(q, (cl_uint)num_wait, num_wait ? wait : NULL, &e),
                    "clEnqueueMarkerWithWaitList");
    *event = e;
    return OCX_OK;
}

cl_command_queue ocx_stream_cl_queue(const ocx_stream *stream) { return stream ? stream->queue : NULL; }

ocx_status ocx_event_wait(size_t num, const ocx_event *events)
{
    if (num == 0) return OCX_OK;
    OCX__FORWARD(ocx__check_wait(NULL, NULL, num, events));
    /* clWaitForEvents takes the events of one context (else CL_INVALID_CONTEXT at once, nothing
     * waited for): a list that spans contexts is waited for one event at a time, all of them. */
    cl_context first = NULL, other = NULL;
    int mixed = 0;
    for (size_t i = 0; i < num && !mixed; i++) {
        OCX__CL_FORWARD(clGetEventInfo(events[i], CL_EVENT_CONTEXT, sizeof other, &other, NULL),
                        "ocx_event_wait: clGetEventInfo");
        if (i == 0) first = other;
        mixed = other != first;
    }
    /* Where one failed, clWaitForEvents may return before the others are done (OpenCL 1.2 says
     * only that it reports the failure; PoCL waits for them all, others need not): then each is
     * waited for on its own, as a list that spans contexts is, so that none is left running. */
    cl_int err = mixed ? CL_SUCCESS : ocx__wait_events((cl_uint)num, events);
    for (size_t i = 0; (mixed || err != CL_SUCCESS) && i < num; i++) {
        const cl_int e = ocx__wait_events(1, events + i);
        if (err == CL_SUCCESS) err = e;
    }
    OCX__CL_FORWARD(err, "clWaitForEvents");
    return OCX_OK;
}

void ocx_event_release(ocx_event event)
{
    if (event) ocx__event_drop(NULL, event);
}

/* Events held until their commands are done (ocx__event_drop). A list for the whole process,
 * not one per stream: ocx_event_release does not know the event's context. Swept when it has
 * doubled since the last sweep, so that each event costs O(1) status queries over its life. A
 * failed event stays until its owner, the ocx context that enqueued it, is destroyed, its queue
 * finished: PoCL marks a command failed before its own thread is done with it (and fails the
 * commands behind it after), so no status says when a release is safe. An owner of NULL (a
 * caller's event, from ocx_event_release) keeps a failed event until its queue is finished by the
 * destroy of its stream or (the default stream) of its context; one released after that destroy
 * goes at once (`live`, below). */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
#define FAILED_GRACE_MS 200 /* ocx__events_release_held */
static struct held_event {
    cl_event ev;
    const ocx_context *owner;
} *held;
static size_t nheld, held_cap, sweep_at = 32, finishes_since_sweep;
/* The queues of the live streams (a context's default stream too, a caller's queue while its ocx
 * context lives). A failed event that a caller releases once its queue is gone (its stream or
 * context destroyed, the queue finished first) is done with: released at once. It had been held
 * for the process's life, and with it its queue and context, since no later destroy named its
 * queue. Under held_lock. */
static cl_command_queue *live;
static size_t nlive, live_cap;

ocx_status ocx__queue_live(cl_command_queue q)
{
    pthread_mutex_lock(&held_lock);
    if (nlive == live_cap) {
        const size_t cap = live_cap ? 2 * live_cap : 16;
        cl_command_queue *grown = realloc(live, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&held_lock);
            return ocx__error(OCX_ERR_OUT_OF_MEMORY, "stream: out of host memory");
        }
        live = grown;
        live_cap = cap;
    }
    live[nlive++] = q;
    pthread_mutex_unlock(&held_lock);
    return OCX_OK;
}

/* Whether q is a live stream's queue; with `drop`, it no longer is (one entry). */
static int queue_live(cl_command_queue q, int drop)
{
    for (size_t i = 0; i < nlive; i++)
        if (live[i] == q) {
            if (drop) live[i] = live[--nlive];
            return 1;
        }
    return 0;
}

/* Releases the held events that completed, every one of `owner`'s (non-NULL: destroyed, its
 * queue finished; not by cl_context, which two ocx contexts may share) and every one of queue
 * `finished` (non-NULL: a stream destroyed, or a context's default stream, after clFinish), whoever
 * released it: a caller's event that failed had otherwise been held, with its context, for the
 * process's life. Called with held_lock taken. */
/* Whether held event h goes with `owner` or queue `finished` (held_sweep), whatever its state. */
static int goes_with(const struct held_event *h, const ocx_context *owner, cl_command_queue finished)
{
    cl_command_queue q = NULL;
    return (owner && h->owner == owner) ||
           (finished && clGetEventInfo(h->ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS &&
            q == finished);
}

static void held_sweep(const ocx_context *owner, cl_command_queue finished)
{
    size_t kept = 0;
    for (size_t i = 0; i < nheld; i++) {
        cl_int st = CL_COMPLETE;
        int done = goes_with(&held[i], owner, finished) ||
                   clGetEventInfo(held[i].ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS ||
                   st == CL_COMPLETE;
        if (done)
            clReleaseEvent(held[i].ev);
        else
            held[kept++] = held[i];
    }
    nheld = kept;
    sweep_at = 2 * nheld > 32 ? 2 * nheld : 32;
    finishes_since_sweep = 0;
}

/* A finish sweeps too: events released while pending in a burst (100000 calls enqueued behind a
 * gate, say) had stayed held, with their memory and their queue's, until the list doubled again,
 * which calls that complete before their release never bring about (an adversarial tester's run:
 * 99 MB until the stream's destroy). At most 256 status queries a finish, amortised: with n held,
 * every n/256-th finish sweeps. */
static void events_sweep_after_finish(void)
{
    pthread_mutex_lock(&held_lock);
    if (nheld && ++finishes_since_sweep >= nheld / 256) held_sweep(NULL, NULL);
    pthread_mutex_unlock(&held_lock);
}

void ocx__event_drop(const ocx_context *ctx, cl_event ev)
{
    if (!ev) return;
    cl_int st = CL_COMPLETE;
    if ((ctx && !ctx->hold_events) ||
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) != CL_SUCCESS ||
        st == CL_COMPLETE) {
        clReleaseEvent(ev);
        return;
    }
    cl_command_queue q = NULL;
    if (!ctx && st < 0 && clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) != CL_SUCCESS) q = NULL;
    pthread_mutex_lock(&held_lock);
    if (q && !queue_live(q, 0)) { /* failed, its queue finished and gone (above) */
        pthread_mutex_unlock(&held_lock);
        clReleaseEvent(ev);
        return;
    }
    if (nheld >= sweep_at) held_sweep(NULL, NULL);
    if (nheld == held_cap) {
        size_t cap = held_cap ? 2 * held_cap : 64;
        struct held_event *grown = realloc(held, cap * sizeof *grown);
        if (!grown) { /* out of host memory: wait for it rather than lose it or crash later */
            pthread_mutex_unlock(&held_lock);
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
            return;
        }
        held = grown;
        held_cap = cap;
    }
    held[nheld++] = (struct held_event){ev, ctx};
    pthread_mutex_unlock(&held_lock);
}

/* Whether held_sweep(owner, finished) would release an event whose command failed. */
static int sweep_releases_failed(const ocx_context *owner, cl_command_queue finished)
{
    for (size_t i = 0; i < nheld; i++) {
        cl_int st = CL_COMPLETE;
        if (goes_with(&held[i], owner, finished) &&
            clGetEventInfo(held[i].ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) == CL_SUCCESS && st < 0)
            return 1;
    }
    return 0;
}

void ocx__events_release_held(const ocx_context *ctx, cl_command_queue finished)
{
    pthread_mutex_lock(&held_lock);
    /* A failure another thread sets (a caller's user event failed while its stream or context is
     * destroyed) reaches our commands in that thread: PoCL marks them failed, and lets clFinish
     * return, before that thread is done with their events, so a release now could be the last
     * while it still uses one (PoCL 3.1 aborted: "PTHREAD ERROR in pocl_update_event_failed", in 3
     * of 6 runs of 100 destroys on the loaded 2-core Xeon). No status says when it is done: where
     * an event to release failed, that thread is given FAILED_GRACE_MS first. Failures are rare and
     * a destroy waits for its work anyway. The window is the moment between PoCL's marking an event
     * failed and its last use of it, so only a thread preempted there is caught; 50 ms still lost
     * one CI run (the sanitizer build, a thread spinning beside make check's others on 2 cores). */
    if (sweep_releases_failed(ctx, finished)) {
        pthread_mutex_unlock(&held_lock);
        struct timespec grace = {0, FAILED_GRACE_MS * 1000000L};
        while (nanosleep(&grace, &grace) != 0 && errno == EINTR) continue; /* a signal does not cut it */
        pthread_mutex_lock(&held_lock);
    }
    /* the queue gone from the live ones only now: ocx_event_release of a failed event of it during
     * the grace is held, not released at once (ocx__event_drop) */
    if (finished) queue_live(finished, 1);
    held_sweep(ctx, finished);
    if (nheld == 0) {
        free(held);
        held = NULL;
        held_cap = 0;
    }
    if (nlive == 0) {
        free(live);
        live = NULL;
        live_cap = 0;
    }
    pthread_mutex_unlock(&held_lock);
}

void ocx__event_give(const ocx_context *ctx, ocx_event *event, cl_event ev)
{
    if (event)
        *event = ev;
    else
        ocx__event_drop(ctx, ev);
}

ocx_status ocx_event_elapsed_ns(ocx_event event, uint64_t *ns)
{
    OCX__FAIL_IF(!event || !ns, OCX_ERR_INVALID_ARGUMENT, "ocx_event_elapsed_ns: event and ns must not be NULL");
    OCX__CL_FORWARD(ocx__wait_events(1, &event), "clWaitForEvents");
    cl_ulong start = 0, end = 0;
    cl_int err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    OCX__FAIL_IF(err == CL_PROFILING_INFO_NOT_AVAILABLE, OCX_ERR_UNSUPPORTED,
                 "ocx_event_elapsed_ns: the event's queue has no profiling (a queue given to "
                 "ocx_context_create_from_cl without CL_QUEUE_PROFILING_ENABLE, or not an ocx stream's event)");
    OCX__CL_FORWARD(err, "clGetEventProfilingInfo(START)");
    OCX__CL_FORWARD(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL),
                    "clGetEventProfilingInfo(END)");
    *ns = end > start ? (uint64_t)(end - start) : 0;
    return OCX_OK;
}
