/* ocx-info — the OpenCL platforms and devices ocx sees, and their capabilities.
 *   ocx-info [--json] [--device SPEC] [--peaks [--refresh] [--quick]]
 * --peaks measures the chosen device's ceilings (ocx_measure_peaks: memory bandwidth, FMA throughput,
 * host link, launch latency), or reads them from the cache of an earlier run. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ocx.h"
#include "tool.h"

static json_t *device_json(const ocx_device_info *d, int is_default)
{
    char pd[32];
    snprintf(pd, sizeof pd, "%u:%u", d->platform_index, d->device_index);
    return json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, "
                     "s:[I,I,I], s:I, s:b, s:b, s:b, s:b, s:b, s:I, s:[I,I], s:I}",
                     "index", (json_int_t)d->index, "platform_device",
                     pd, "type", ocx_device_type_name(d->type), "name", d->name,
                     "normalized_name", d->normalized_name, "vendor", d->vendor, "driver_version",
                     d->driver_version, "device_version", d->device_version, "platform", d->platform_name,
                     "fingerprint", d->fingerprint, "compute_units", (json_int_t)d->compute_units, "clock_mhz",
                     (json_int_t)d->clock_mhz, "global_mem_bytes", (json_int_t)d->global_mem_bytes,
                     "max_alloc_bytes", (json_int_t)d->max_alloc_bytes, "local_mem_bytes",
                     (json_int_t)d->local_mem_bytes, "max_work_group_size", (json_int_t)d->max_work_group_size,
                     "max_work_item_sizes", (json_int_t)d->max_work_item_sizes[0],
                     (json_int_t)d->max_work_item_sizes[1], (json_int_t)d->max_work_item_sizes[2],
                     "preferred_vector_width_float", (json_int_t)d->preferred_vector_width_float, "fp16",
                     d->has_fp16, "fp64", d->has_fp64, "host_unified_memory", d->host_unified_memory, "limited",
                     d->limited, "default", is_default, "local_mem_max_bytes", (json_int_t)d->local_mem_max_bytes,
                     "nv_compute_capability", (json_int_t)d->nv_compute_capability[0],
                     (json_int_t)d->nv_compute_capability[1], "device_atomics", (json_int_t)d->device_atomics);
}

/* The profiles the library would read for device i, in search order; a stale one (measured with
 * another driver) is still used, and marked. */
static void print_profiles(size_t i)
{
    char spec[32];
    snprintf(spec, sizeof spec, "%zu", i);
    ocx_context *ctx = NULL;
    if (ocx_context_create(spec, &ctx) != OCX_OK) return;
    ocx_device_info d = {0}; /* left zeroed (no comparison) if the query fails */
    ocx_context_device_info(ctx, &d);
    ocx_profile_info p;
    size_t n = 0;
    for (; ocx_context_profile(ctx, n, &p) == OCX_OK; n++) {
        char cu[96] = "";
        if (p.compute_units && d.compute_units && p.compute_units != d.compute_units)
            snprintf(cu, sizeof cu, " (measured on %u compute units; this device has %u)", p.compute_units,
                     d.compute_units);
        printf("      profile       %s (%zu entries, %s)%s%s%s\n", p.path, p.entries, p.date,
               p.stale ? " STALE: measured with driver " : "",
               !p.stale ? "" : p.driver_version[0] ? p.driver_version : "(none recorded)", cu);
    }
    if (n == 0) printf("      profile       none: built-in defaults (run ocx-tune)\n");
    ocx_context_destroy(ctx);
}

/* The measured ceilings of device `spec` (the chosen one): printed, or added to `root` as "peaks". */
static int print_peaks(const char *spec, unsigned flags, json_t *root)
{
    ocx_context *ctx = NULL;
    ocx_peaks p;
    const time_t started = time(NULL);
    if (ocx_context_create(spec, &ctx) != OCX_OK || ocx_measure_peaks(ctx, flags, &p) != OCX_OK) {
        fprintf(stderr, "ocx-info: peaks: %s\n", ocx_last_error());
        ocx_context_destroy(ctx);
        return 1;
    }
    ocx_device_info d = {0};
    ocx_context_device_info(ctx, &d);
    char path[4200] = "";
    ocx_peaks_cache_path(ctx, flags, path, sizeof path);
    ocx_context_destroy(ctx);
    if (root) {
        json_t *o =
            json_pack("{s:s, s:s, s:b, s:b, s:s, s:f, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                      "device", d.name, "fingerprint", p.fingerprint, "quick", p.quick, "from_cache", p.from_cache,
                      "cache_file", path, "global_gbps", p.global_gbps, "global_width", (int)p.global_width,
                      "copy_gbps", p.copy_gbps, "f32_gflops", p.f32_gflops, "f16_gflops", p.f16_gflops, "f64_gflops",
                      p.f64_gflops, "h2d_pageable_gbps", p.h2d_pageable_gbps, "d2h_pageable_gbps",
                      p.d2h_pageable_gbps, "h2d_pinned_gbps", p.h2d_pinned_gbps, "d2h_pinned_gbps",
                      p.d2h_pinned_gbps, "launch_latency_us", p.launch_latency_us, "launch_wall_us",
                      p.launch_wall_us, "tc_f16_gflops", p.tc_f16_gflops);
        if (!o || json_object_set_new(root, "peaks", o) != 0) {
            fprintf(stderr, "ocx-info: peaks: could not build the JSON object\n");
            return 1;
        }
        return 0;
    }
    printf("peaks of %s%s\n", d.name, p.quick ? " (quick mode: rough figures)" : "");
    printf("  global memory     %10.2f GB/s  (read kernel, float%u; bytes read, as clpeak counts them)\n",
           p.global_gbps, p.global_width);
    printf("  copy kernel       %10.2f GB/s  (bytes read + written)\n", p.copy_gbps);
    printf("  FMA f32           %10.2f GFLOP/s\n", p.f32_gflops);
    if (p.f16_gflops > 0)
        printf("  FMA f16           %10.2f GFLOP/s\n", p.f16_gflops);
    else
        printf("  FMA f16           %10s          (no cl_khr_fp16)\n", "-");
    if (p.f64_gflops > 0)
        printf("  FMA f64           %10.2f GFLOP/s\n", p.f64_gflops);
    else
        printf("  FMA f64           %10s          (no cl_khr_fp64)\n", "-");
    if (p.tc_f16_gflops > 0)
        printf("  tensor cores      %10.2f GFLOP/s (f16 -> f32 by the GEMM's instructions, %s: the roof of f16 GEMMs)\n",
               p.tc_f16_gflops, d.nv_compute_capability[0] == 9 ? "wgmma where its probe passed" : "mma.sync");
    printf("  host->device      %10.2f GB/s pageable, %.2f GB/s pinned\n", p.h2d_pageable_gbps, p.h2d_pinned_gbps);
    printf("  device->host      %10.2f GB/s pageable, %.2f GB/s pinned\n", p.d2h_pageable_gbps, p.d2h_pinned_gbps);
    printf("  launch latency    %10.2f us    (queued -> start, as clpeak; %.2f us enqueue to finish on the host)\n",
           p.launch_latency_us, p.launch_wall_us);
    if (p.from_cache)
        printf("  (from %s, measured in %.1f s; --refresh measures again)\n", path, p.measure_s);
    else {
        /* stored only if a file is there and written since the start (a failed write warned) */
        struct stat sb;
        const int stored = path[0] && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_mtime >= started;
        printf("  (measured in %.1f s%s%s)\n", p.measure_s,
               stored ? "; cached in " : path[0] ? "; not cached: could not write " : "; cache off", path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int json = 0, peaks = 0;
    unsigned pflags = 0;
    const char *spec = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc && argv[i + 1][0] && strncmp(argv[i + 1], "--", 2))
            spec = argv[++i];
        else if (strcmp(argv[i], "--peaks") == 0)
            peaks = 1;
        else if (strcmp(argv[i], "--refresh") == 0)
            pflags |= OCX_PEAKS_REFRESH;
        else if (strcmp(argv[i], "--quick") == 0)
            pflags |= OCX_PEAKS_QUICK;
        else {
            const int help = strcmp(argv[i], "--help") == 0;
            if (!help)
                fprintf(stderr, "ocx-info: %s: %s\n", argv[i],
                        strcmp(argv[i], "--device") == 0 ? "needs a value" : "unknown option");
            fprintf(help ? stdout : stderr,
                    "usage: ocx-info [--json] [--device SPEC] [--peaks [--refresh] [--quick]]\n"
                    "  SPEC: index, platform:device, gpu, cpu, accelerator, or part of a device, vendor or\n"
                    "        platform name or of the platform's version (pocl), in any case\n"
                    "  --peaks: the chosen device's measured ceilings (cached per device)\n");
            return help ? tool_flushed("ocx-info", "the usage", 0) : 2;
        }
    }
    if (pflags && !peaks) {
        fprintf(stderr, "ocx-info: --refresh and --quick go with --peaks\n");
        return 2;
    }
    size_t count = 0, chosen = 0;
    ocx_device_count(&count);
    ocx_status st = ocx_device_select(spec, &chosen); /* with no device, the library's message says why */
    if (st != OCX_OK) {
        fprintf(stderr, "ocx-info: %s\n", ocx_last_error());
        return 1;
    }
    if (peaks && !json) return tool_flushed("ocx-info", "the report", print_peaks(spec, pflags, NULL));
    json_t *arr = json ? json_array() : NULL;
    if (!json) printf("ocx %s: %zu OpenCL device(s); * marks the one ocx uses by default (OCX_DEVICE, --device)\n\n",
                      ocx_version_string(), count);
    for (size_t i = 0; i < count; i++) {
        ocx_device_info d;
        if (ocx_device_get_info(i, &d) != OCX_OK) {
            fprintf(stderr, "ocx-info: device %zu: %s\n", i, ocx_last_error());
            continue;
        }
        if (json) {
            json_array_append_new(arr, device_json(&d, i == chosen));
            continue;
        }
        printf("%c [%zu] %u:%u  %s  (%s)\n", i == chosen ? '*' : ' ', i, d.platform_index, d.device_index, d.name,
               ocx_device_type_name(d.type));
        printf("      vendor        %s\n", d.vendor);
        printf("      platform      %s — %s\n", d.platform_name, d.platform_version);
        printf("      driver        %s (%s)\n", d.driver_version, d.device_version);
        printf("      key           %s  fingerprint %s\n", d.normalized_name, d.fingerprint);
        char cc[48] = "";
        if (d.nv_compute_capability[0])
            snprintf(cc, sizeof cc, ", compute capability %u.%u", d.nv_compute_capability[0], d.nv_compute_capability[1]);
        printf("      compute       %u units @ %u MHz, float vector width %u%s\n", d.compute_units, d.clock_mhz,
               d.preferred_vector_width_float, cc);
        char more[64] = "";
        if (d.local_mem_max_bytes > d.local_mem_bytes)
            snprintf(more, sizeof more, " (%llu KiB declared in a kernel)",
                     (unsigned long long)(d.local_mem_max_bytes / 1024));
        char local[48]; /* bytes where a simulated limit (OCX_LIMIT_LOCAL_MEM=200) is no whole KiB */
        if (d.local_mem_bytes % 1024)
            snprintf(local, sizeof local, "%llu bytes", (unsigned long long)d.local_mem_bytes);
        else
            snprintf(local, sizeof local, "%llu KiB", (unsigned long long)(d.local_mem_bytes / 1024));
        printf("      memory        global %.2f GiB (largest allocation %.2f GiB), local %s%s%s\n",
               d.global_mem_bytes / 1073741824.0, d.max_alloc_bytes / 1073741824.0, local, more,
               d.host_unified_memory ? ", shared with host" : "");
        printf("      work-groups   up to %zu items (%zu x %zu x %zu)\n", d.max_work_group_size,
               d.max_work_item_sizes[0], d.max_work_item_sizes[1], d.max_work_item_sizes[2]);
        printf("      precisions    f32, f16 storage%s%s\n", d.has_fp16 ? ", f16 arithmetic" : "",
               d.has_fp64 ? ", f64" : "");
        if (d.device_atomics)
            printf("      atomics       acquire-release at device scope (OpenCL C %d.0)\n", d.device_atomics / 10);
        if (d.limited) printf("      (simulated limits in effect: OCX_LIMIT_* / OCX_DISABLE_*)\n");
        print_profiles(i);
        printf("\n");
    }
    if (json) {
        json_t *root = json_pack("{s:s, s:o}", "ocx_version", ocx_version_string(), "devices", arr);
        if (peaks && print_peaks(spec, pflags, root) != 0) {
            json_decref(root);
            return 1;
        }
        json_dumpf(root, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(root);
    }
    return tool_flushed("ocx-info", "the report", 0);
}
