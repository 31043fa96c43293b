/* bench_streams.c — a pipeline of copies and kernels on streams: each of N chunks goes host → device,
 * through a kernel, and back (device → host), the stages linked by events; chunk c runs on stream
 * c mod S, for S = 1, 2, 3. Host memory is pinned (a mapped CL_MEM_ALLOC_HOST_PTR buffer), so the
 * copies can overlap the kernels of other chunks. Reported: wall time per S, the overlap speed-up
 * over one stream, and Amdahl's bound 1 / (s + (1 − s)/S) from the serial fraction s measured on
 * the one-stream run:
 *   s = max(H, K, D) / T1
 * where H, K, D are the device times summed per stage and T1 the wall time. The longest stage keeps
 * its one engine busy however the chunks interleave: that share of T1 stays serial. The other stages
 * and the gaps between commands (launch latency, which dominates small chunks) are what further
 * streams can hide. The bound is a model: stage times measured in the one-stream run may differ
 * from those under overlap (caches, a CPU device sharing its cores), so a run may beat it.
 * Every output chunk is checked against the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#define MAX_STREAMS 3
#define KERNEL_REPS 4 /* scalings per chunk: x ← 2x, exact in f32 */

typedef struct pipe {
    size_t chunk, nchunks;
    float *in, *out; /* pinned, mapped */
    ocx_stream *s[MAX_STREAMS];
    ocx_buffer *x[MAX_STREAMS];
    double stage_ns[3]; /* h2d, kernel, d2h summed over chunks (last run) */
} pipe;

static double ev_ns(ocx_event ev)
{
    uint64_t ns = 0;
    return ev && ocx_event_elapsed_ns(ev, &ns) == OCX_OK ? (double)ns : 0;
}

/* One pass over every chunk on `ns` streams; the wall time in ns, < 0 on failure. */
static double run_pipeline(bench *b, pipe *p, int ns)
{
    size_t n = p->chunk * p->nchunks;
    ocx_event *ev = calloc(p->nchunks * (KERNEL_REPS + 2), sizeof *ev);
    if (!ev) return -1;
    memset(p->out, 0, n * sizeof *p->out);
    double t0 = bench_now_ns();
    ocx_status st = OCX_OK;
    for (size_t c = 0; st == OCX_OK && c < p->nchunks; c++) {
        int s = (int)(c % (size_t)ns);
        ocx_event *e = ev + c * (KERNEL_REPS + 2);
        /* The previous chunk of this stream read x back before we overwrite it: in-order streams
         * keep that order; the events make every stage's dependency explicit all the same. */
        st = ocx_buffer_write_async(b->ctx, p->s[s], p->x[s], 0, p->chunk, p->in + c * p->chunk, 0, NULL, &e[0]);
        for (int k = 0; st == OCX_OK && k < KERNEL_REPS; k++)
            st = ocx_scale(b->ctx, p->s[s], p->chunk, 2.0, p->x[s], 1, 1, &e[k], &e[k + 1]);
        if (st == OCX_OK)
            st = ocx_buffer_read_async(b->ctx, p->s[s], p->x[s], 0, p->chunk, p->out + c * p->chunk, 1,
                                       &e[KERNEL_REPS], &e[KERNEL_REPS + 1]);
        if (st == OCX_OK) st = ocx_stream_flush(b->ctx, p->s[s]);
    }
    for (int s = 0; s < ns; s++)
        if (ocx_stream_finish(b->ctx, p->s[s]) != OCX_OK && st == OCX_OK) st = OCX_ERR_OPENCL;
    double t = bench_now_ns() - t0;
    if (st != OCX_OK) fprintf(stderr, "ocx-bench streams: %s\n", ocx_last_error());
    p->stage_ns[0] = p->stage_ns[1] = p->stage_ns[2] = 0;
    for (size_t c = 0; c < p->nchunks; c++) {
        ocx_event *e = ev + c * (KERNEL_REPS + 2);
        if (st == OCX_OK) {
            p->stage_ns[0] += ev_ns(e[0]);
            for (int k = 1; k <= KERNEL_REPS; k++) p->stage_ns[1] += ev_ns(e[k]);
            p->stage_ns[2] += ev_ns(e[KERNEL_REPS + 1]);
        }
        for (int k = 0; k < KERNEL_REPS + 2; k++) ocx_event_release(e[k]);
    }
    free(ev);
    if (st != OCX_OK) return -1;
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        if (p->out[i] != p->in[i] * (float)(1 << KERNEL_REPS)) wrong++;
    if (wrong) {
        bench_note(b, "streams: %zu of %zu results wrong on %d stream(s) — FAILED", wrong, n, ns);
        b->failures++;
    }
    return t;
}

int bench_streams(bench *b)
{
    pipe p = {0};
    p.nchunks = b->quick ? 6 : 24;
    p.chunk = b->quick ? (size_t)1 << 16 : (size_t)1 << 20;
    size_t n = p.chunk * p.nchunks, bytes = n * sizeof(float);
    cl_int err = CL_SUCCESS;
    cl_mem pin[2] = {NULL, NULL};
    void *ptr[2] = {NULL, NULL};
    int rc = 1, made = 0;
    for (int i = 0; i < 2 && err == CL_SUCCESS; i++) {
        pin[i] = clCreateBuffer(b->clctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
        if (err == CL_SUCCESS)
            ptr[i] = clEnqueueMapBuffer(b->queue, pin[i], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL,
                                        NULL, &err);
    }
    if (err != CL_SUCCESS) {
        bench_note(b, "streams: pinned host memory of %zu bytes failed (OpenCL error %d)", bytes, err);
        goto out;
    }
    p.in = ptr[0];
    p.out = ptr[1];
    bench_random(p.in, n, -1, 1, 11);
    for (made = 0; made < MAX_STREAMS; made++)
        if (ocx_stream_create(b->ctx, &p.s[made]) != OCX_OK ||
            ocx_buffer_create(b->ctx, OCX_F32, p.chunk, &p.x[made]) != OCX_OK) {
            bench_note(b, "streams: %s", ocx_last_error());
            goto out;
        }
    bench_header(b, "streams: h2d → 4 x scale → d2h over chunks of pinned memory (wall time; peer = 1 stream)");
    if (run_pipeline(b, &p, 1) < 0) goto out; /* warm-up: builds the kernel, touches the memory */
    double t[MAX_STREAMS + 1] = {0};
    int reps = b->quick ? 3 : 7;
    double stage[3] = {0};
    for (int ns = 1; ns <= MAX_STREAMS; ns++) {
        double best = -1;
        for (int r = 0; r < reps; r++) { /* best of reps: the pipeline's capability, not the noise */
            double x = run_pipeline(b, &p, ns);
            if (x < 0) goto out;
            if (best < 0 || x < best) {
                best = x;
                if (ns == 1) memcpy(stage, p.stage_ns, sizeof stage);
            }
        }
        t[ns] = best;
    }
    double longest = fmax(stage[0], fmax(stage[1], stage[2]));
    double s = longest / t[1];
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    json_t *runs = json_array();
    char size[48];
    snprintf(size, sizeof size, "%zux%zu", p.nchunks, p.chunk);
    for (int ns = 1; ns <= MAX_STREAMS; ns++) {
        char op[16];
        snprintf(op, sizeof op, "pipe-%ds", ns);
        double amdahl = 1.0 / (s + (1 - s) / ns);
        bench_row(b, "streams", op, "f32", size, t[ns], 2.0 * bytes, (double)KERNEL_REPS * n, ns > 1 ? "1-stream" : NULL,
                  ns > 1 ? t[1] : 0);
        json_array_append_new(runs, json_pack("{s:i, s:f, s:f, s:f}", "streams", ns, "time_us", t[ns] / 1e3, "speedup",
                                              t[1] / t[ns], "amdahl_bound", amdahl));
        bench_note(b, "streams: %d stream(s): %.2f ms, overlap speed-up %.2fx (Amdahl bound %.2fx)", ns, t[ns] / 1e6,
                   t[1] / t[ns], amdahl);
    }
    bench_note(b, "streams: one stream: h2d %.2f ms, kernels %.2f ms, d2h %.2f ms of device time in %.2f ms wall; "
                  "serial fraction s = %.2f",
               stage[0] / 1e6, stage[1] / 1e6, stage[2] / 1e6, t[1] / 1e6, s);
    json_object_set_new(b->extra, "streams",
                        json_pack("{s:i, s:i, s:I, s:f, s:f, s:f, s:f, s:o}", "chunks", (int)p.nchunks, "kernel_reps",
                                  KERNEL_REPS, "bytes", (json_int_t)bytes, "h2d_us", stage[0] / 1e3, "kernel_us",
                                  stage[1] / 1e3, "d2h_us", stage[2] / 1e3, "serial_fraction", s, "runs", runs));
    rc = 0;
out:
    for (int i = 0; i < MAX_STREAMS; i++) {
        ocx_buffer_destroy(p.x[i]);
        ocx_stream_destroy(p.s[i]);
    }
    for (int i = 0; i < 2; i++) {
        if (ptr[i]) clEnqueueUnmapMemObject(b->queue, pin[i], ptr[i], 0, NULL, NULL);
        if (pin[i]) {
            clFinish(b->queue);
            clReleaseMemObject(pin[i]);
        }
    }
    (void)made;
    return rc;
}
