/* bench_vector.c — streaming operations: rates against the device's measured copy bandwidth, and
 * CLBlast's matching routine in the same process where it is present. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#ifdef HAVE_CLBLAST
#include <clblast_c.h>
#endif

typedef struct vec_case {
    const char *op;
    ocx_buffer *x, *y, *z;
    size_t n;
} vec_case;

static int run_copy_raw(bench *b, void *arg, cl_event *ev)
{
    vec_case *c = arg;
    return ocx_buffer_copy(b->ctx, NULL, c->x, 0, c->z, 0, c->n, 0, NULL, ev);
}

static int run_ocx(bench *b, void *arg, cl_event *ev)
{
    vec_case *c = arg;
    if (!strcmp(c->op, "add")) return ocx_add(b->ctx, NULL, c->n, c->x, c->y, c->z, 0, NULL, ev);
    if (!strcmp(c->op, "mul")) return ocx_mul(b->ctx, NULL, c->n, c->x, c->y, c->z, 0, NULL, ev);
    if (!strcmp(c->op, "axpy")) return ocx_axpy(b->ctx, NULL, c->n, 0.5, c->x, 1, c->y, 1, 0, NULL, ev);
    if (!strcmp(c->op, "scale")) return ocx_scale(b->ctx, NULL, c->n, 1.0, c->y, 1, 0, NULL, ev);
    if (!strcmp(c->op, "copy")) return ocx_copy(b->ctx, NULL, c->n, c->x, 1, c->z, 1, 0, NULL, ev);
    if (!strcmp(c->op, "fill")) return ocx_fill(b->ctx, NULL, c->n, 1.0, c->z, 1, 0, NULL, ev);
    return -1;
}

#ifdef HAVE_CLBLAST
static int run_clblast(bench *b, void *arg, cl_event *ev)
{
    vec_case *c = arg;
    cl_mem x = ocx_buffer_cl_mem(c->x), y = ocx_buffer_cl_mem(c->y), z = ocx_buffer_cl_mem(c->z);
    CLBlastStatusCode s = CLBlastNotImplemented;
    ocx_dtype dt = ocx_buffer_dtype(c->x);
    if (dt == OCX_F32) {
        if (!strcmp(c->op, "axpy")) s = CLBlastSaxpy(c->n, 0.5f, x, 0, 1, y, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "scale")) s = CLBlastSscal(c->n, 1.0f, y, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "copy")) s = CLBlastScopy(c->n, x, 0, 1, z, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "mul")) s = CLBlastShad(c->n, 1.0f, x, 0, 1, y, 0, 1, 0.0f, z, 0, 1, &b->queue, ev);
    } else if (dt == OCX_F64) {
        if (!strcmp(c->op, "axpy")) s = CLBlastDaxpy(c->n, 0.5, x, 0, 1, y, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "scale")) s = CLBlastDscal(c->n, 1.0, y, 0, 1, &b->queue, ev);
        if (!strcmp(c->op, "copy")) s = CLBlastDcopy(c->n, x, 0, 1, z, 0, 1, &b->queue, ev);
    }
    return s == CLBlastSuccess ? 0 : -1;
}
#endif

/* Bytes each op moves per element (reads + writes), in units of the element size. */
static double traffic(const char *op)
{
    if (!strcmp(op, "add") || !strcmp(op, "mul") || !strcmp(op, "axpy")) return 3;
    if (!strcmp(op, "fill")) return 1;
    return 2;
}

static int has_peer(const char *op, ocx_dtype dt)
{
#ifdef HAVE_CLBLAST
    if (dt == OCX_F32) return strcmp(op, "add") && strcmp(op, "fill");
    if (dt == OCX_F64) return !strcmp(op, "axpy") || !strcmp(op, "scale") || !strcmp(op, "copy");
#endif
    return 0;
}

int bench_vector(bench *b)
{
    size_t sizes_gpu[] = {(size_t)1 << 20, (size_t)1 << 24, (size_t)1 << 28};
    size_t sizes_cpu[] = {(size_t)1 << 20, (size_t)1 << 24};
    size_t sizes_quick[] = {(size_t)1 << 22};
    size_t *sizes = b->quick ? sizes_quick : b->info.type == OCX_DEVICE_GPU ? sizes_gpu : sizes_cpu;
    size_t nsizes = b->quick ? 1 : b->info.type == OCX_DEVICE_GPU ? 3 : 2;
    ocx_dtype dtypes[] = {OCX_F32, OCX_F16, OCX_F64};
    const char *ops[] = {"add", "mul", "axpy", "scale", "copy", "fill"};
    int rc = 0;
    bench_header(b, "vector operations (bytes = reads + writes; %roof = share of the measured copy bandwidth)");
    for (size_t si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        for (size_t di = 0; di < 3; di++) {
            ocx_dtype dt = dtypes[di];
            if (dt == OCX_F64 && !b->info.has_fp64) continue;
            vec_case c = {NULL, NULL, NULL, NULL, n};
            if (ocx_buffer_create(b->ctx, dt, n, &c.x) || ocx_buffer_create(b->ctx, dt, n, &c.y) ||
                ocx_buffer_create(b->ctx, dt, n, &c.z)) {
                bench_note(b, "vector: %zu %s elements do not fit: %s", n, ocx_dtype_name(dt), ocx_last_error());
                ocx_buffer_destroy(c.x);
                ocx_buffer_destroy(c.y);
                ocx_buffer_destroy(c.z);
                continue;
            }
            /* Non-zero inputs (the ops are timed on real data, not on zeros). */
            ocx_fill(b->ctx, NULL, n, 1.25, c.x, 1, 0, NULL, NULL);
            ocx_fill(b->ctx, NULL, n, -0.75, c.y, 1, 0, NULL, NULL);
            ocx_stream_finish(b->ctx, NULL);
            double es = (double)ocx_dtype_size(dt);
            char size[32];
            snprintf(size, sizeof size, "%zu", n);
            c.op = "raw-copy";
            double copy_ns = bench_time_ns(b, run_copy_raw, &c);
            if (copy_ns > 0 && dt == OCX_F32 && n == sizes[nsizes - 1]) b->copy_gbps = 2 * es * n / copy_ns;
            bench_row(b, "vector", "clcopy", ocx_dtype_name(dt), size, copy_ns, 2 * es * n, 0, NULL, 0);
            for (size_t oi = 0; oi < sizeof ops / sizeof *ops; oi++) {
                c.op = ops[oi];
                double ns = bench_time_ns(b, run_ocx, &c);
                if (ns < 0) {
                    rc = 1;
                    continue;
                }
                double peer_ns = 0;
#ifdef HAVE_CLBLAST
                if (has_peer(c.op, dt)) peer_ns = bench_time_ns(b, run_clblast, &c);
#endif
                bench_row(b, "vector", c.op, ocx_dtype_name(dt), size, ns, traffic(c.op) * es * n, n, "clblast",
                          peer_ns);
            }
            ocx_buffer_destroy(c.x);
            ocx_buffer_destroy(c.y);
            ocx_buffer_destroy(c.z);
        }
    }
    (void)has_peer;
    return rc;
}
