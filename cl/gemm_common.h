/* gemm_common.h — what the GEMM kernels share, inlined into each by tools/cl2c (#include "…"). Needs
 * DTYPE, CTYPE and NATIVE_F16 defined first (see the kernels' headers). */

#if DTYPE == 2 || CTYPE == 2
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if NATIVE_F16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

/* R: the arithmetic type; SA: storage of A and B; SC: storage of C; LD/ST convert. */
#if DTYPE == 2
#define R double
#define SA double
#define LDA_(p, i) ((p)[i])
#elif DTYPE == 1
#if NATIVE_F16
#define R half
#define LDA_(p, i) ((p)[i])
#else
#define R float
#define LDA_(p, i) vload_half((i), (p))
#endif
#define SA half
#else
#define R float
#define SA float
#define LDA_(p, i) ((p)[i])
#endif

#if CTYPE == 2
#define SC double
#define LDC_(p, i) ((R)(p)[i])
#define STC_(p, i, v) ((p)[i] = (double)(v))
#elif CTYPE == 1
#define SC half
#if NATIVE_F16
#define LDC_(p, i) ((p)[i])
#define STC_(p, i, v) ((p)[i] = (v))
#else
#define LDC_(p, i) vload_half((i), (p))
#define STC_(p, i, v) vstore_half_rte((v), (i), (p))
#endif
#else
#define SC float
#define LDC_(p, i) ((R)(p)[i])
#define STC_(p, i, v) ((p)[i] = (float)(v))
#endif

/* alpha and beta arrive as the host's double (f64) or float (everything else). */
#if DTYPE == 2
#define SCALAR double
#else
#define SCALAR float
#endif

/* The batch entry bat's base offsets oa, ob, oc, of type T: from the offset array when flags bit 0
 * says there is one, else by strides (the kernels' offA/strideA… arguments). */
#define BATCH_OFFSETS(T, bat)                                                                      \
    T oa, ob, oc;                                                                                  \
    if (flags & 1) {                                                                               \
        oa = (T)offs[3 * (bat)];                                                                   \
        ob = (T)offs[3 * (bat) + 1];                                                               \
        oc = (T)offs[3 * (bat) + 2];                                                               \
    } else {                                                                                       \
        oa = (T)offA + (bat) * (T)strideA;                                                         \
        ob = (T)offB + (bat) * (T)strideB;                                                         \
        oc = (T)offC + (bat) * (T)strideC;                                                         \
    }
