/* bench_gemm.c — GEMM benchmark (work in progress, issue #4). */
#include "bench.h"
int bench_gemm(bench *b)
{
    bench_note(b, "gemm: not implemented yet");
    return 0;
}
