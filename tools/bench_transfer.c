/* bench_transfer.c — host↔device transfers through ocx_buffer_write/read: direct from pageable
 * memory (OCX_STAGING=0) against ocx's pinned staging path (OCX_STAGING=2), wall time of the
 * blocking call. This is the measurement behind the library's default (OCX_STAGING=1: staged for
 * large transfers to devices with their own memory). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

/* Median wall time in ns of one blocking transfer of n floats; < 0 on failure. */
static double time_transfer(bench *b, ocx_buffer *buf, float *host, size_t n, int write)
{
    double t[64];
    int reps = b->reps < 64 ? b->reps : 64;
    for (int r = -1; r < reps; r++) {
        double t0 = bench_now_ns();
        ocx_status st = write ? ocx_buffer_write(b->ctx, NULL, buf, 0, n, host, 0, NULL, NULL)
                              : ocx_buffer_read(b->ctx, NULL, buf, 0, n, host, 0, NULL, NULL);
        if (st != OCX_OK) {
            fprintf(stderr, "ocx-bench transfer: %s\n", ocx_last_error());
            return -1;
        }
        if (r >= 0) t[r] = bench_now_ns() - t0;
    }
    return bench_median(t, reps);
}

/* Before a timed transfer, its destination poisoned (the device's buffer with NaN for a write, the
 * host's array with 0xff bytes for a read), so that one that moves nothing cannot pass arrived(). */
static int poison(bench *b, ocx_buffer *buf, float *host, size_t n, int write)
{
    if (!write) {
        memset(host, 0xff, n * sizeof *host);
        return 0;
    }
    return ocx_fill(b->ctx, NULL, n, NAN, buf, 1, 0, NULL, NULL) != OCX_OK || ocx_stream_finish(b->ctx, NULL) != OCX_OK;
}

/* After a timed transfer: the data arrived whole (a write: read back into tmp; a read: host itself),
 * as orig holds it. 0 when so; else a message and b->failures counted. */
static int arrived(bench *b, ocx_buffer *buf, const float *host, float *tmp, const float *orig, size_t n, int write,
                   const char *how)
{
    if (write && ocx_buffer_read(b->ctx, NULL, buf, 0, n, tmp, 0, NULL, NULL) != OCX_OK) {
        fprintf(stderr, "ocx-bench: transfer: reading back a %s write: %s\n", how, ocx_last_error());
        b->failures++;
        return 1;
    }
    if (memcmp(write ? tmp : host, orig, n * sizeof *orig) == 0) return 0;
    fprintf(stderr, "ocx-bench: transfer: a %s %s of %zu floats moved wrong data; not reported\n", how,
            write ? "write" : "read", n);
    b->failures++;
    return 1;
}

int bench_transfer(bench *b)
{
    size_t sizes[] = {(size_t)1 << 20, (size_t)1 << 24, (size_t)1 << 26};
    size_t nsizes = b->quick ? 1 : 3;
    int rc = 0;
    bench_header(b, "host<->device transfers (blocking calls, wall time; GB/s of bytes moved; data checked)");
    for (size_t si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        float *host = malloc(n * sizeof *host), *orig = malloc(n * sizeof *orig), *tmp = malloc(n * sizeof *tmp);
        ocx_buffer *buf = NULL;
        if (!host || !orig || !tmp || ocx_buffer_create(b->ctx, OCX_F32, n, &buf) != OCX_OK) {
            bench_note(b, "transfer: %zu floats do not fit", n);
            free(host), free(orig), free(tmp);
            continue;
        }
        bench_random(host, n, -1, 1, 5);
        memcpy(orig, host, n * sizeof *orig);
        char size[32];
        snprintf(size, sizeof size, "%zuMiB", n * sizeof(float) >> 20);
        for (int write = 1; write >= 0; write--) {
            static const char *const staging[2] = {"0", "2"}, *const how[2] = {"direct", "staged"};
            char *saved = bench_env_set("OCX_STAGING", staging[0]); /* the user's, back for the parts after */
            double t[2];
            int wrong = 0;
            for (int m = 0; m < 2; m++) {
                setenv("OCX_STAGING", staging[m], 1);
                /* a write sends orig (host is a copy until the read pass), a read brings it back */
                if (write) memcpy(host, orig, n * sizeof *host);
                t[m] = poison(b, buf, host, n, write) ? -1 : time_transfer(b, buf, host, n, write);
                wrong |= t[m] >= 0 && arrived(b, buf, host, tmp, orig, n, write, how[m]);
            }
            bench_env_restore("OCX_STAGING", saved);
            const double direct = t[0], staged = t[1];
            if (direct < 0 || staged < 0 || wrong) {
                rc = 1;
                continue;
            }
            /* The "peer" column holds the direct (pageable) transfer: ours/x > 1 means staging wins. */
            bench_row(b, "transfer", write ? "h2d-staged" : "d2h-staged", "f32", size, staged,
                      (double)n * sizeof(float), 0, "pageable", direct);
        }
        ocx_buffer_destroy(buf);
        free(host), free(orig), free(tmp);
    }
    return rc;
}
