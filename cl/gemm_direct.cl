/* gemm_direct.cl — work in progress. */
kernel void gemm_direct_placeholder(global float *x) { x[0] = 0.0f; }
