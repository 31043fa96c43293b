/* reduce.c — reductions (work in progress, issue #3). */
#include "config.h"
#include "ocx_internal.h"
