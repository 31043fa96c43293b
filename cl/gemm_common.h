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

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
/* Vectors of the arithmetic type. */
#define GLUE_(a, b) a##b /* a second concatenation macro: used inside CAT's expansions */
#define GLUE(a, b) GLUE_(a, b)
#define VT_1 R
#define VT_2 GLUE(R, 2)
#define VT_4 GLUE(R, 4)
#define VT_8 GLUE(R, 8)
#define VT_16 GLUE(R, 16)
#define VT(n) CAT(VT_, n)

/* n elements of A or B from global memory (aligned to n elements), converted to VT(n). */
#if DTYPE == 1 && !NATIVE_F16
#define GLD_1(p) vload_half(0, (p))
#define GLD_2(p) vloada_half2(0, (p))
#define GLD_4(p) vloada_half4(0, (p))
#define GLD_8(p) vloada_half8(0, (p))
#define GLD_16(p) vloada_half16(0, (p))
#else
#define GLD_1(p) (*(p))
#define GLD_2(p) (*(const global GLUE(SA, 2) *)(p))
#define GLD_4(p) (*(const global GLUE(SA, 4) *)(p))
#define GLD_8(p) (*(const global GLUE(SA, 8) *)(p))
#define GLD_16(p) (*(const global GLUE(SA, 16) *)(p))
#endif
#define GLD(n, p) CAT(GLD_, n)(p)
/* The same at any element alignment. */
#if DTYPE == 1 && !NATIVE_F16
#define GLDU_1(p) vload_half(0, (p))
#define GLDU_2(p) vload_half2(0, (p))
#define GLDU_4(p) vload_half4(0, (p))
#define GLDU_8(p) vload_half8(0, (p))
#define GLDU_16(p) vload_half16(0, (p))
#else
#define GLDU_1(p) (*(p))
#define GLDU_2(p) vload2(0, (p))
#define GLDU_4(p) vload4(0, (p))
#define GLDU_8(p) vload8(0, (p))
#define GLDU_16(p) vload16(0, (p))
#endif
#define GLDU(n, p) CAT(GLDU_, n)(p)

/* The flags argument f with its alignment bits (2: A, 4: B; the host sets them from the offsets and
 * strides within the buffers) cleared where the buffer's own address is not a multiple of the
 * vector loads' bytes (va, vb elements): a cl_mem over a caller's memory may be less aligned than a
 * vector, and PoCL faulted on aligned loads from host memory at 8 bytes past a page. */
#define ADDR_FLAGS(f, va, vb)                                                                      \
    ((f) & ~((ulong)A % ((va) * sizeof(SA)) ? 2 : 0) & ~((ulong)B % ((vb) * sizeof(SA)) ? 4 : 0))

/* C[n] of row crow = r + beta*C[n] (beta == 0: C is not read). */
#define UPDATE_C(crow, n, r)                                                                       \
    do {                                                                                           \
        if (beta == (SCALAR)0)                                                                     \
            STC_(crow, n, r);                                                                      \
        else                                                                                       \
            STC_(crow, n, (r) + (R)beta * LDC_(crow, n));                                          \
    } while (0)

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
