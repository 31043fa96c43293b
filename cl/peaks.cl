/* peaks.cl — micro-kernels that measure a device's ceilings (lib/peaks.c): global memory bandwidth,
 * FMA throughput, launch latency. Valid OpenCL C 1.2 on its own; parameters arrive as -D defines:
 *   DTYPE   0 float (default), 1 half (needs cl_khr_fp16), 2 double (needs cl_khr_fp64)
 *   VW      vector width 1, 2, 4, 8 or 16 (default 4)
 *   FETCH   vectors each work-item reads in the bw_read kernels (default 16)
 * fma_peak's loop count (32 mads per trip) is an argument, so one build serves every duration.
 */
#ifndef DTYPE
#define DTYPE 0
#endif
#ifndef VW
#define VW 4
#endif
#ifndef FETCH
#define FETCH 16
#endif

#if DTYPE == 1
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define REAL half
#elif DTYPE == 2
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define REAL double
#else
#define REAL float
#endif

#define PK_CAT2(a, b) a##b
#define PK_CAT(a, b) PK_CAT2(a, b)
#if VW == 1
#define REALV REAL
#else
#define REALV PK_CAT(REAL, VW)
#endif

/* The sum of a vector's lanes, as one REAL. */
#if VW == 1
#define PK_LANES(v) (v)
#elif VW == 2
#define PK_LANES(v) ((v).s0 + (v).s1)
#elif VW == 4
#define PK_LANES(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#elif VW == 8
#define PK_LANES(v) ((((v).s0 + (v).s1) + ((v).s2 + (v).s3)) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7)))
#else
#define PK_LANES(v)                                                                                              \
    (((((v).s0 + (v).s1) + ((v).s2 + (v).s3)) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7))) +                    \
     ((((v).s8 + (v).s9) + ((v).sa + (v).sb)) + (((v).sc + (v).sd) + ((v).se + (v).sf))))
#endif

/* The read-bandwidth kernels: the access patterns of clpeak's global_bandwidth_v<VW>_local_offset and
 * _global_offset. Each work-item sums FETCH vectors of `a` and writes the sum of their lanes as one
 * REAL to b[global id], so the reads cannot be dropped and the writes are 1/(FETCH × VW) of the
 * traffic (the host counts only the bytes read). Global size × FETCH vectors must fit in `a`, and in
 * 32-bit indices.
 * bw_read_group: each work-group reads its own block of FETCH × local-size vectors; consecutive
 * work-items read consecutive vectors, stepping by the local size. */
__kernel void bw_read_group(__global const REALV *a, __global REAL *b)
{
    uint lsz = (uint)get_local_size(0);
    uint id = (uint)get_group_id(0) * lsz * FETCH + (uint)get_local_id(0);
    REALV s = (REALV)(0);
    for (int i = 0; i < FETCH; i++) {
        s += a[id];
        id += lsz;
    }
    b[get_global_id(0)] = PK_LANES(s);
}

/* bw_read_grid: the whole grid reads one contiguous slab per step, stepping by the global size. */
__kernel void bw_read_grid(__global const REALV *a, __global REAL *b)
{
    uint gsz = (uint)get_global_size(0);
    uint id = (uint)get_global_id(0);
    REALV s = (REALV)(0);
    for (int i = 0; i < FETCH; i++) {
        s += a[id];
        id += gsz;
    }
    b[get_global_id(0)] = PK_LANES(s);
}

/* One vector copied per work-item. */
__kernel void bw_copy(__global const REALV *a, __global REALV *b)
{
    size_t i = get_global_id(0);
    b[i] = a[i];
}

/* Eight independent chains of dependent mads, 32 mads per loop trip: enough independent work per
 * work-item to cover the FMA latency of CPU cores (clpeak's single chain measures that latency on a
 * CPU rather than the throughput); GPUs hide it across work-items either way. The multiplier comes
 * from an argument and the addend from the work-item's id, and the sum is always stored, so the
 * compiler can neither fold nor drop the chains (no fast-math: a chain of roundings cannot be
 * reassociated). 2 × VW flops per mad. FMAOP=1 (-D) uses fma() instead: PoCL 3.1 compiles mad() to
 * a multiply and an add (a 6-cycle pair on Zen 3, which 8 chains cannot keep 2 pipes busy with),
 * and fma() to the FMA instruction where the CPU has one (on the 2-core EPYC: 190 GFLOP/s against
 * 116); where it has none fma() is a slow call, so the host keeps the better of the two. */
#ifndef FMAOP
#define FMAOP 0
#endif
#if FMAOP
#define mad fma
#endif
#define PK_MAD8 \
    x0 = mad(x0, m, c); x1 = mad(x1, m, c); x2 = mad(x2, m, c); x3 = mad(x3, m, c); \
    x4 = mad(x4, m, c); x5 = mad(x5, m, c); x6 = mad(x6, m, c); x7 = mad(x7, m, c);
__kernel void fma_peak(__global REAL *out, REAL a, int iters)
{
    REALV m = (REALV)(a);
    REALV c = (REALV)((REAL)get_local_id(0)) * (REALV)((REAL)0.0009765625f);
    REALV x0 = c, x1 = c + (REALV)((REAL)1), x2 = c + (REALV)((REAL)2), x3 = c + (REALV)((REAL)3);
    REALV x4 = c + (REALV)((REAL)4), x5 = c + (REALV)((REAL)5), x6 = c + (REALV)((REAL)6), x7 = c + (REALV)((REAL)7);
    for (int i = 0; i < iters; i++) {
        PK_MAD8 PK_MAD8 PK_MAD8 PK_MAD8
    }
    REALV r = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
#if VW == 1
    out[get_global_id(0)] = r;
#elif VW == 2
    out[get_global_id(0)] = r.s0 + r.s1;
#elif VW == 4
    out[get_global_id(0)] = (r.s0 + r.s1) + (r.s2 + r.s3);
#elif VW == 8
    out[get_global_id(0)] = (r.s0 + r.s1) + (r.s2 + r.s3) + (r.s4 + r.s5) + (r.s6 + r.s7);
#else
    out[get_global_id(0)] = (r.s0 + r.s1) + (r.s2 + r.s3) + (r.s4 + r.s5) + (r.s6 + r.s7) + (r.s8 + r.s9) +
                            (r.sa + r.sb) + (r.sc + r.sd) + (r.se + r.sf);
#endif
}
