/* bench.h — what the parts of ocx-bench share: timing by OpenCL profiling events, the result table
 * (plain text, JSON or CSV, each row placed on the device's roofline), random data. ocx-bench sees
 * only the public API (ocx.h). */
#ifndef OCX_BENCH_H
#define OCX_BENCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ocx.h"

typedef struct bench {
    ocx_context *ctx;
    ocx_device_info info;
    int json;          /* --json: results go to `rows`, printed at the end */
    int csv;           /* --csv: the rows as CSV at the end */
    int quick;         /* --quick: small sizes, few repetitions (and quick peaks) */
    int reps;          /* timed repetitions (median reported) */
    json_t *rows;      /* every row, whatever the output mode (the plot and CSV read them) */
    json_t *extra;     /* further JSON sections by part ("streams"), merged into the document */
    double copy_gbps;  /* measured device copy bandwidth (read + write), reported beside the rows
                          (their roof is the peaks' global bandwidth, lib/peaks.c) */
    cl_command_queue queue; /* the default stream's queue, for peers such as CLBlast */
    cl_context clctx;
    int failures;      /* results that failed their check */
    ocx_peaks peaks;   /* the device's measured ceilings (ocx_measure_peaks) */
    int have_peaks;    /* 0: peaks unavailable, rows carry no roofline columns */
    int host_clock;    /* --host-clock: element-wise operations timed as reductions are
                          (bench_batch_pair_ns), not by their kernels' profiling events */
} bench;

/* Enqueues one run of the measured operation and returns its (last) event; 0 on success. */
typedef int (*bench_run_fn)(bench *b, void *arg, cl_event *event);

/* Median device time in ns over b->reps runs after a warm-up run, from profiling events; < 0 when
 * the run failed (the reason is printed). */
double bench_time_ns(bench *b, bench_run_fn fn, void *arg);

/* The OCX_BENCH_* lists, each comma-separated. bench_env_sizes: whole numbers above 0 ("N"), with
 * dims 3 also "MxNxK" (N alone: N x N x N), at most cap of them, into list (*n = 0 when var is
 * unset or empty). bench_env_names: every name one of known (NULL-terminated), none twice. Both return 0, or 1
 * after a message naming the variable and the item. bench_vector_env and bench_gemm_env check
 * their part's variables so (main, before anything is measured). */
int bench_env_sizes(const char *var, int dims, size_t (*list)[3], size_t cap, size_t *n);
int bench_env_names(const char *var, const char *const *known);
int bench_vector_env(void);
int bench_gemm_env(void);

/* Sets environment variable `name` to `value` for a measurement and returns the caller's value (a
 * copy; NULL: unset), which bench_env_restore() puts back and frees. */
char *bench_env_set(const char *name, const char *value);
void bench_env_restore(const char *name, char *saved);

/* The same for fn and a peer's run of the same operation, run alternately (fn, peer, fn, …) so that
 * a machine whose speed drifts during the measurement (other tenants, clocks, a shared CPU running
 * PoCL) slows both alike: their ratio then holds from run to run where two blocks of repetitions
 * measured one after the other did not. *peer_ns: the peer's median, or 0 when peer is NULL or
 * failed. */
double bench_time_pair_ns(bench *b, bench_run_fn fn, void *arg, bench_run_fn peer, void *peer_arg, double *peer_ns);

/* The same on the host's clock, for what a program calling an operation time after time sees (each
 * call's enqueue as well as its kernels; an operation of several kernels whole): ns a call, the
 * median over batches (7; --quick 3) of 10 calls back to back to the default stream's finish, after
 * a warm-up call; a peer's batches alternate with fn's. The fns are called with a NULL event. */
double bench_batch_pair_ns(bench *b, bench_run_fn fn, void *arg, bench_run_fn peer, void *peer_arg,
                           double *peer_ns);

/* One result row. bytes/flops may be 0 (not applicable); peer_ns ≤ 0 means no peer measured. The
 * row is placed on the roofline of b->peaks: arithmetic intensity flops/bytes, the bound
 * min(peak FLOP/s, bandwidth × AI) for its dtype, the efficiency against that bound. */
void bench_row(bench *b, const char *group, const char *op, const char *dtype, const char *size, double ns,
               double bytes, double flops, const char *peer, double peer_ns);
/* The roofline place of an op's result, as bench_row takes it: dtype as rows name it ("f16f32" computes
 * in f32), ops that ran on the tensor cores ("…-tc") on their roof, bw > 0 in place of the measured
 * bandwidth. 0 when there is no roof (peaks not measured, or none for that arithmetic). */
int bench_roofline(const bench *b, const char *op, const char *dtype, double flops, double bytes, double ns, double bw,
                   ocx_roofline *r);
void bench_note(bench *b, const char *fmt, ...);
void bench_header(bench *b, const char *title);
/* 1 when the device runs dtype dt; else 0, after a note (once a part) that `part`'s rows of it are
 * left out (f64 without cl_khr_fp64: they had gone missing without a word). */
int bench_runs_dtype(bench *b, const char *part, ocx_dtype dt);

/* Monotonic wall clock in ns; the median of n values (sorts them). */
double bench_now_ns(void);
double bench_median(double *v, int n);

/* The next state of a xorshift generator (also its value); *s must not be 0. */
uint64_t bench_rng(uint64_t *s);
/* Uniform random floats in [lo, hi), never exactly zero. */
void bench_random(float *x, size_t n, float lo, float hi, unsigned seed);
/* Fills buffer x (f32, f16 or f64) with n random values in [-1, 1) from seed (through an f32
 * staging buffer and ocx_copy); *host (when host is not NULL) gets them as the buffer holds them
 * (f16: rounded), for the caller to free. 0 on success. */
int bench_fill(bench *b, ocx_buffer *x, size_t n, unsigned seed, float **host);
/* Element i of x as a double (NaN when the read fails). */
double bench_read_at(bench *b, const ocx_buffer *x, size_t i);
/* A result's check before its time is reported: 0 when |got - want| <= tol; else 1, a message on
 * stderr and b->failures counted (ocx-bench then exits 1). */
int bench_check(bench *b, const char *what, double got, double want, double tol);

/* The report (bench_report.c): the document for --json, the rows for --csv. */
json_t *bench_report_json(bench *b);
void bench_report_csv(bench *b, FILE *out);
/* The roofline picture (bench_plot.c): the device's roofs and every row with flops as a point, as
 * SVG through cairo. 0 on success. */
int bench_plot_svg(bench *b, const char *path);
int bench_plot_check(const char *path); /* 0: --plot can be drawn into path */

/* The parts. */
int bench_demo(bench *b);
int bench_vector(bench *b);
int bench_gemm(bench *b);
int bench_transfer(bench *b);
int bench_streams(bench *b);

#endif
