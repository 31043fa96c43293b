/* gemm.c — GEMM (work in progress, issue #4). */
#include "config.h"
#include "ocx_internal.h"
