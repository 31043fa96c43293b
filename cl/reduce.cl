/* reduce.cl — work in progress. */
kernel void reduce_placeholder(global float *x) { x[0] = 0.0f; }
