/* peaks_internal.h — test hooks of lib/peaks.c. */
#ifndef OCX_PEAKS_INTERNAL_H
#define OCX_PEAKS_INTERNAL_H

/* How many times this process measured peaks (a cache hit does not count). */
unsigned long ocx__peaks_measurements(void);

#endif
