/* gemm.cl — the tiled GEMM kernel (seed document §3.2, grown up).
 *
 * Computes, for each batch entry, C = alpha * op(A) * op(B) + beta * C on a row-major view of C:
 * element (m, n) of C lives at C[offC + m*ldc + n]; element (m, k) of op(A) at A[offA + m*sam + k*sak];
 * element (k, n) of op(B) at B[offB + k*sbk + n*sbn]. The host maps every layout and transpose onto
 * these strides (column-major problems are computed as their transpose), so one program serves all
 * of them. Any M, N, K, strides and offsets are legal: tile loads outside the matrices read zeros and
 * stores outside C are skipped.
 *
 * A work-group of MDIMC*NDIMC work-items computes an MWG x NWG tile of C; work-item (tm, tn) holds an
 * MWI x NWI register tile (MWI = MWG/MDIMC, NWI = NWG/NDIMC), whose rows are tm*VWM + i*MDIMC*VWM + v and
 * whose columns tn*VWN + j*NDIMC*VWN + w, so neighbouring work-items read neighbouring local-memory
 * vectors. The K loop walks KWG-deep slices: A and B slices are staged in local memory in two buffers;
 * while the work-group multiplies the slices of one buffer, the next slices are already loaded from
 * global memory into registers (double-buffered K loop, one barrier per slice; STAGE=2). Else the
 * local memory is bypassed: every work-item reads its fragments straight from global memory (STAGE=1).
 *
 * Parameters (-D, with defaults so that the file builds on its own):
 *   DTYPE   storage of A and B: 0 f32, 1 f16, 2 f64          CTYPE storage of C (default DTYPE)
 *   NATIVE_F16  1: f16 arithmetic (needs cl_khr_fp16), else f16 inputs are computed in f32
 *   MWG NWG KWG  work-group tile;  MDIMC NDIMC  work-group shape;  VWM VWN  vector widths (1, 2, 4, 8)
 *   STAGE   2: local-memory staging with double buffering, 1: no local memory (fragments from global)
 * Constraints (checked by gemm.c before building): MWG % (MDIMC*VWM) == 0, NWG % (NDIMC*VWN) == 0,
 * (MWG*KWG) % (MDIMC*NDIMC) == 0, (KWG*NWG) % (MDIMC*NDIMC) == 0, local memory and work-group limits.
 */
#ifndef DTYPE
#define DTYPE 0
#endif
#ifndef CTYPE
#define CTYPE DTYPE
#endif
#ifndef NATIVE_F16
#define NATIVE_F16 0
#endif
#ifndef MWG
#define MWG 64
#endif
#ifndef NWG
#define NWG 64
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 8
#endif
#ifndef NDIMC
#define NDIMC 8
#endif
#ifndef VWM
#define VWM 4
#endif
#ifndef VWN
#define VWN 4
#endif
#ifndef STAGE
#define STAGE 2
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

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

#define WG (MDIMC * NDIMC)
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define MVI (MWI / VWM) /* vectors of VWM rows per work-item */
#define NVI (NWI / VWN) /* vectors of VWN columns per work-item */
#define LPTA ((MWG * KWG) / WG) /* A elements each work-item loads per slice */
#define LPTB ((KWG * NWG) / WG)
/* Local-memory rows are padded by one vector: transposing stores then spread over the banks while
 * vector reads stay aligned. */
#define LSA (MWG + VWM)
#define LSB (NWG + VWN)

#if VWN == 1
#define RVN R
#define LDVN(p) (*(p))
#define STVN(v, p) (*(p) = (v))
#else
#define RVN CAT(R, VWN)
#define LDVN(p) CAT(vload, VWN)(0, (p))
#define STVN(v, p) CAT(vstore, VWN)((v), 0, (p))
#endif
/* VWM consecutive rows of an A slice, from local memory into private a[]. */
#if VWM == 1
#define LDVM(src, dst) ((dst)[0] = *(src))
#else
#define LDVM(src, dst) CAT(vstore, VWM)(CAT(vload, VWM)(0, (src)), 0, (dst))
#endif

/* The batch entry's base offsets: from the offset array when there is one, else by strides. */
#define BATCH_BASES()                                                                              \
    const ulong bat = get_group_id(2);                                                             \
    ulong oa, ob, oc;                                                                              \
    if (use_offs) {                                                                                \
        oa = offs[3 * bat];                                                                        \
        ob = offs[3 * bat + 1];                                                                    \
        oc = offs[3 * bat + 2];                                                                    \
    } else {                                                                                       \
        oa = offA + bat * strideA;                                                                 \
        ob = offB + bat * strideB;                                                                 \
        oc = offC + bat * strideC;                                                                 \
    }

/* Writes the register tile: C = alpha*acc + beta*C (beta == 0: C is not read). */
#define STORE_TILE()                                                                               \
    for (int i = 0; i < MVI; i++)                                                                  \
        for (int v = 0; v < VWM; v++) {                                                            \
            const ulong m = m0 + (ulong)((i * MDIMC + tm) * VWM + v);                              \
            if (m >= M) continue;                                                                  \
            global SC *crow = C + oc + m * ldc;                                                    \
            for (int j = 0; j < NVI; j++) {                                                        \
                R tmp[VWN];                                                                        \
                STVN(acc[i * VWM + v][j], tmp);                                   \
                for (int w = 0; w < VWN; w++) {                                                    \
                    const ulong n = n0 + (ulong)((j * NDIMC + tn) * VWN + w);                      \
                    if (n >= N) continue;                                                          \
                    const R r = (R)alpha * tmp[w];                                                 \
                    if (beta == (SCALAR)0)                                                         \
                        STC_(crow, n, r);                                                          \
                    else                                                                           \
                        STC_(crow, n, r + (R)beta * LDC_(crow, n));                                \
                }                                                                                  \
            }                                                                                      \
        }

__attribute__((reqd_work_group_size(WG, 1, 1))) kernel void
gemm_tiled(const ulong M, const ulong N, const ulong K, const SCALAR alpha, const SCALAR beta,
           const global SA *restrict A, const ulong offA, const ulong sam, const ulong sak, const ulong strideA,
           const global SA *restrict B, const ulong offB, const ulong sbk, const ulong sbn, const ulong strideB,
           global SC *restrict C, const ulong offC, const ulong ldc, const ulong strideC,
           const global ulong *restrict offs, const int use_offs)
{
    const int tid = (int)get_local_id(0);
    const int tn = tid % NDIMC, tm = tid / NDIMC;
    const ulong n0 = (ulong)get_group_id(0) * NWG, m0 = (ulong)get_group_id(1) * MWG;
    BATCH_BASES();

    RVN acc[MWI][NVI];
    for (int i = 0; i < MWI; i++)
        for (int j = 0; j < NVI; j++) acc[i][j] = (RVN)(0);

#if STAGE == 2
    local R As[2][KWG * LSA];
    local R Bs[2][KWG * LSB];

    /* Each work-item loads LPTA elements of every A slice and LPTB of every B slice. Consecutive
     * work-items walk the dimension that is contiguous in memory (coalesced loads); the element
     * positions inside a slice are the same for every slice, so their offsets are computed once. */
    const int a_kfast = sak == 1, b_nfast = sbn == 1;
    int a_mm[LPTA], a_kk[LPTA], b_kk[LPTB], b_nn[LPTB];
    ulong a_off[LPTA], b_off[LPTB];
    for (int l = 0; l < LPTA; l++) {
        const int e = l * WG + tid;
        a_mm[l] = a_kfast ? e / KWG : e % MWG;
        a_kk[l] = a_kfast ? e % KWG : e / MWG;
        a_off[l] = oa + (m0 + (ulong)a_mm[l]) * sam + (ulong)a_kk[l] * sak;
    }
    for (int l = 0; l < LPTB; l++) {
        const int e = l * WG + tid;
        b_nn[l] = b_nfast ? e % NWG : e / KWG;
        b_kk[l] = b_nfast ? e / NWG : e % KWG;
        b_off[l] = ob + (ulong)b_kk[l] * sbk + (n0 + (ulong)b_nn[l]) * sbn;
    }
    const ulong a_step = (ulong)KWG * sak, b_step = (ulong)KWG * sbk;

    R ra[LPTA], rb[LPTB];
#define FETCH(k0)                                                                                  \
    do {                                                                                           \
        for (int l = 0; l < LPTA; l++)                                                             \
            ra[l] = (m0 + (ulong)a_mm[l] < M && (k0) + (ulong)a_kk[l] < K) ? (R)LDA_(A, a_off[l]) : (R)0; \
        for (int l = 0; l < LPTB; l++)                                                             \
            rb[l] = (n0 + (ulong)b_nn[l] < N && (k0) + (ulong)b_kk[l] < K) ? (R)LDA_(B, b_off[l]) : (R)0; \
        for (int l = 0; l < LPTA; l++) a_off[l] += a_step;                                         \
        for (int l = 0; l < LPTB; l++) b_off[l] += b_step;                                         \
    } while (0)
#define PUT(buf)                                                                                   \
    do {                                                                                           \
        for (int l = 0; l < LPTA; l++) As[buf][a_kk[l] * LSA + a_mm[l]] = ra[l];                    \
        for (int l = 0; l < LPTB; l++) Bs[buf][b_kk[l] * LSB + b_nn[l]] = rb[l];                    \
    } while (0)

    const ulong slices = (K + KWG - 1) / KWG;
    if (slices > 0) {
        FETCH((ulong)0);
        PUT(0);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (ulong s = 0; s < slices; s++) {
        const int cur = (int)(s & 1);
        if (s + 1 < slices) FETCH((s + 1) * KWG);
        const local R *as = As[cur] + tm * VWM;
        const local R *bs = Bs[cur] + tn * VWN;

        for (int k = 0; k < KWG; k++) {
            R a[MWI];
            RVN b[NVI];
            for (int i = 0; i < MVI; i++) LDVM(as + k * LSA + i * MDIMC * VWM, a + i * VWM);
            for (int j = 0; j < NVI; j++) b[j] = LDVN(bs + k * LSB + j * NDIMC * VWN);
            for (int i = 0; i < MWI; i++)
                for (int j = 0; j < NVI; j++) acc[i][j] = mad((RVN)(a[i]), b[j], acc[i][j]);
        }
        if (s + 1 < slices) PUT(cur ^ 1);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#else
    /* No local memory: the fragments come straight from global memory (caches do the sharing). */
    for (ulong k = 0; k < K; k++) {
        R a[MWI];
        RVN b[NVI];
        for (int i = 0; i < MVI; i++)
            for (int v = 0; v < VWM; v++) {
                const ulong m = m0 + (ulong)((i * MDIMC + tm) * VWM + v);
                a[i * VWM + v] = m < M ? (R)LDA_(A, oa + m * sam + k * sak) : (R)0;
            }
        for (int j = 0; j < NVI; j++) {
            R t[VWN];
            for (int w = 0; w < VWN; w++) {
                const ulong n = n0 + (ulong)((j * NDIMC + tn) * VWN + w);
                t[w] = n < N ? (R)LDA_(B, ob + k * sbk + n * sbn) : (R)0;
            }
            b[j] = LDVN(t);
        }
        for (int i = 0; i < MWI; i++)
            for (int j = 0; j < NVI; j++) acc[i][j] = mad((RVN)(a[i]), b[j], acc[i][j]);
    }
#endif
    STORE_TILE();
}
