/* gemm.cl — work in progress. */
kernel void gemm_placeholder(global float *x) { x[0] = 0.0f; }
