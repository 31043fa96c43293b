/* bench.h — what the parts of ocx-bench share: timing by OpenCL profiling events, the result table
 * (plain or JSON), random data. ocx-bench sees only the public API (ocx.h). */
#ifndef OCX_BENCH_H
#define OCX_BENCH_H

#include <jansson.h>
#include <stddef.h>

#include "ocx.h"

typedef struct bench {
    ocx_context *ctx;
    ocx_device_info info;
    int json;          /* --json: results go to `rows`, printed at the end */
    int quick;         /* --quick: small sizes, few repetitions */
    int reps;          /* timed repetitions (median reported) */
    json_t *rows;
    double copy_gbps;  /* measured device copy bandwidth (read + write), the roof of streaming ops */
    cl_command_queue queue; /* the default stream's queue, for peers such as CLBlast */
    cl_context clctx;
    int failures;      /* results that failed their check */
} bench;

/* Enqueues one run of the measured operation and returns its (last) event; 0 on success. */
typedef int (*bench_run_fn)(bench *b, void *arg, cl_event *event);

/* Median device time in ns over b->reps runs after a warm-up run, from profiling events; < 0 when
 * the run failed (the reason is printed). */
double bench_time_ns(bench *b, bench_run_fn fn, void *arg);

/* One result row. bytes/flops may be 0 (not applicable); peer_ns ≤ 0 means no peer measured. */
void bench_row(bench *b, const char *group, const char *op, const char *dtype, const char *size, double ns,
               double bytes, double flops, const char *peer, double peer_ns);
void bench_note(bench *b, const char *fmt, ...);
void bench_header(bench *b, const char *title);

/* Uniform random floats in [lo, hi), never exactly zero. */
void bench_random(float *x, size_t n, float lo, float hi, unsigned seed);

/* The parts. */
int bench_demo(bench *b);
int bench_vector(bench *b);
int bench_gemm(bench *b);
int bench_transfer(bench *b);

#endif
