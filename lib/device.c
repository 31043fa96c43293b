/* device.c — platform/device discovery, selection (OCX_DEVICE), capabilities, fingerprint. */
#include "config.h"
#include "ocx_internal.h"

#include <CL/cl_ext.h>
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <xxhash.h>

#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#endif
#ifndef CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#endif
/* OpenCL 3.0's query, asked through the 1.2 API (a driver before 3.0 answers CL_INVALID_VALUE) */
#define OCX__DEVICE_OPENCL_C_FEATURES 0x106F
typedef struct {
    cl_uint version;
    char name[64]; /* CL_NAME_VERSION_MAX_NAME_SIZE */
} ocx__name_version;

/* 1 when the space-separated list `exts` names `ext` (a whole word). */
static int ext_listed(const char *exts, const char *ext)
{
    size_t n = strlen(ext);
    for (const char *p = exts; (p = strstr(p, ext)) != NULL; p += n)
        if ((p == exts || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

/* Whether the device's OpenCL C 3.0 lists both features of acquire-release atomics at device scope
 * (__opencl_c_atomic_order_acq_rel, __opencl_c_atomic_scope_device), in *listed. Only a device of
 * OpenCL 3.0 or later is asked (`version`: CL_DEVICE_VERSION, "OpenCL 3.0 ..."); one that still does
 * not know the query (CL_INVALID_VALUE) lists none. Any other failure is returned. */
static cl_int c_atomic_features(cl_device_id dev, const char *version, int *listed)
{
    *listed = 0;
    if (strncmp(version, "OpenCL ", 7) != 0 || atoi(version + 7) < 3) return CL_SUCCESS;
    size_t size = 0;
    cl_int err = clGetDeviceInfo(dev, OCX__DEVICE_OPENCL_C_FEATURES, 0, NULL, &size);
    if (err == CL_INVALID_VALUE || (err == CL_SUCCESS && size < sizeof(ocx__name_version))) return CL_SUCCESS;
    if (err != CL_SUCCESS) return err;
    ocx__name_version *nv = malloc(size);
    if (!nv) return CL_OUT_OF_HOST_MEMORY;
    err = clGetDeviceInfo(dev, OCX__DEVICE_OPENCL_C_FEATURES, size, nv, NULL);
    int acq_rel = 0, scope = 0;
    for (size_t i = 0; err == CL_SUCCESS && i < size / sizeof *nv; i++) {
        nv[i].name[sizeof nv[i].name - 1] = '\0';
        acq_rel |= strcmp(nv[i].name, "__opencl_c_atomic_order_acq_rel") == 0;
        scope |= strcmp(nv[i].name, "__opencl_c_atomic_scope_device") == 0;
    }
    free(nv);
    *listed = acq_rel && scope;
    return err;
}

#define OCX__MAX_PLATFORMS 32
#define OCX__MAX_DEVICES 64

/* The flat device list: platforms in driver order, each platform's devices in its order. */
typedef struct device_list {
    size_t count;
    cl_uint platforms; /* platforms found, with or without devices */
    ocx__device_ref ref[OCX__MAX_DEVICES];
} device_list;

/* One enumeration at a time: a driver may set its devices up on the first call, and PoCL 3.1's
 * set-up is not thread-safe (two threads creating their first contexts at once: one got "no OpenCL
 * device found" or crashed in clGetDeviceInfo, 20 runs of 20). Once one enumeration has finished,
 * the devices are set up and the others only read them. */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;

static void list_devices_locked(device_list *list)
{
    cl_platform_id platforms[OCX__MAX_PLATFORMS];
    cl_uint np = 0;
    list->count = 0;
    list->platforms = 0;
    if (clGetPlatformIDs(OCX__MAX_PLATFORMS, platforms, &np) != CL_SUCCESS) return;
    if (np > OCX__MAX_PLATFORMS) np = OCX__MAX_PLATFORMS;
    list->platforms = np;
    for (cl_uint p = 0; p < np; p++) {
        cl_device_id devs[OCX__MAX_DEVICES];
        cl_uint nd = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, OCX__MAX_DEVICES, devs, &nd) != CL_SUCCESS) continue;
        if (nd > OCX__MAX_DEVICES) nd = OCX__MAX_DEVICES;
        for (cl_uint d = 0; d < nd && list->count < OCX__MAX_DEVICES; d++) {
            list->ref[list->count++] = (ocx__device_ref){platforms[p], devs[d], p, d};
        }
    }
}

static void list_devices(device_list *list)
{
    pthread_mutex_lock(&list_lock);
    list_devices_locked(list);
    pthread_mutex_unlock(&list_lock);
}

ocx_status ocx_device_count(size_t *count)
{
    OCX__FAIL_IF(!count, OCX_ERR_INVALID_ARGUMENT, "ocx_device_count: count is NULL");
    device_list list;
    list_devices(&list);
    *count = list.count;
    return OCX_OK;
}

ocx_status ocx__device_ref_get(size_t index, ocx__device_ref *ref)
{
    device_list list;
    list_devices(&list);
    OCX__FAIL_IF(index >= list.count, OCX_ERR_NO_DEVICE, "device index %zu out of range: %zu device(s) present",
                 index, list.count);
    *ref = list.ref[index];
    return OCX_OK;
}

/* A string query of a device (platform NULL) or of a platform (size, then fill), NUL-terminated,
 * truncated to cap; out is "" where it fails. */
static cl_int info_string(cl_device_id dev, cl_platform_id platform, cl_uint what, char *out, size_t cap)
{
    size_t size = 0;
    out[0] = '\0';
    cl_int err =
        platform ? clGetPlatformInfo(platform, what, 0, NULL, &size) : clGetDeviceInfo(dev, what, 0, NULL, &size);
    if (err != CL_SUCCESS || size == 0) return err;
    char *tmp = malloc(size + 1);
    if (!tmp) return CL_OUT_OF_HOST_MEMORY;
    err = platform ? clGetPlatformInfo(platform, what, size, tmp, NULL) : clGetDeviceInfo(dev, what, size, tmp, NULL);
    if (err == CL_SUCCESS) {
        tmp[size] = '\0';
        snprintf(out, cap, "%s", tmp);
    }
    free(tmp);
    return err;
}

void ocx__normalize_name(const char *name, char *out, size_t cap)
{
    /* PoCL prefixes CPU names with its driver ("pthread-", "cpu-"): drop it so that a key stays
     * the same across PoCL drivers and versions. */
    static const char *prefixes[] = {"pthread-", "cpu-", "basic-"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncasecmp(name, prefixes[i], n) == 0) {
            name += n;
            break;
        }
    }
    size_t o = 0;
    int dash = 1; /* suppress leading dashes */
    for (const char *s = name; *s && o + 1 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c)) {
            out[o++] = (char)tolower(c);
            dash = 0;
        } else if (!dash) {
            out[o++] = '-';
            dash = 1;
        }
    }
    while (o > 0 && out[o - 1] == '-') o--;
    out[o] = '\0';
}

/* One fixed-size clGetDeviceInfo; after the first failure the others are skipped, and *failed names
 * the query that failed. */
static void query(cl_device_id dev, cl_device_info what, const char *name, void *value, size_t size, int optional,
                  cl_int *err, const char **failed)
{
    if (*err != CL_SUCCESS) return;
    *err = clGetDeviceInfo(dev, what, size, value, NULL);
    if (optional && *err == CL_INVALID_VALUE) *err = CL_SUCCESS; /* a driver without it: the default */
    if (*err != CL_SUCCESS) *failed = name;
}
#define QUERY(what, var) query(dev, what, "clGetDeviceInfo(" #what ")", &(var), sizeof(var), 0, &err, &failed)
/* A query that only tunes behaviour (a driver that does not know it keeps the value's default) */
#define QUERY_OPTIONAL(what, var) query(dev, what, "clGetDeviceInfo(" #what ")", &(var), sizeof(var), 1, &err, &failed)
/* A string of the device (p NULL) or of the platform p. */
#define QUERY_STRING(p, what, out)                                                                  \
    do {                                                                                           \
        if (err == CL_SUCCESS && (err = info_string(dev, p, what, out, sizeof out)) != CL_SUCCESS) \
            failed = "clGet*Info(" #what ")";                                                      \
    } while (0)

ocx_status ocx__device_query(cl_platform_id platform, cl_device_id dev, ocx_device_info *info)
{
    memset(info, 0, sizeof *info);
    cl_device_type type = 0;
    cl_uint units = 0, clock = 0, vecf = 0;
    cl_ulong gmem = 0, lmem = 0, maxalloc = 0;
    size_t wg = 0, items[3] = {0, 0, 0};
    cl_bool unified = CL_FALSE;
    cl_ulong gcache = 0;
    char exts[8192];
    /* Every query is checked: a context on a device whose limits read as 0 (a transient failure)
     * would refuse every buffer and kernel later with misleading messages, and a name or version
     * read as "" would change the device's fingerprint, cache key and profile. The optional ones
     * (CL_DEVICE_HOST_UNIFIED_MEMORY is deprecated from OpenCL 2.0 on) may be unknown to a driver
     * (CL_INVALID_VALUE): their defaults (0, CL_FALSE) then stand; any other failure fails. */
    cl_int err = CL_SUCCESS;
    const char *failed = NULL;
    QUERY(CL_DEVICE_TYPE, type);
    QUERY(CL_DEVICE_MAX_COMPUTE_UNITS, units);
    QUERY_OPTIONAL(CL_DEVICE_MAX_CLOCK_FREQUENCY, clock);
    QUERY(CL_DEVICE_GLOBAL_MEM_SIZE, gmem);
    QUERY(CL_DEVICE_LOCAL_MEM_SIZE, lmem);
    QUERY_OPTIONAL(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, gcache);
    QUERY(CL_DEVICE_MAX_MEM_ALLOC_SIZE, maxalloc);
    QUERY(CL_DEVICE_MAX_WORK_GROUP_SIZE, wg);
    QUERY(CL_DEVICE_MAX_WORK_ITEM_SIZES, items);
    QUERY_OPTIONAL(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, vecf);
    QUERY_OPTIONAL(CL_DEVICE_HOST_UNIFIED_MEMORY, unified);
    QUERY_STRING(NULL, CL_DEVICE_NAME, info->name);
    QUERY_STRING(NULL, CL_DEVICE_VENDOR, info->vendor);
    QUERY_STRING(NULL, CL_DRIVER_VERSION, info->driver_version);
    QUERY_STRING(NULL, CL_DEVICE_VERSION, info->device_version);
    QUERY_STRING(NULL, CL_DEVICE_EXTENSIONS, exts);
    QUERY_STRING(platform, CL_PLATFORM_NAME, info->platform_name);
    QUERY_STRING(platform, CL_PLATFORM_VERSION, info->platform_version);
    /* device_atomics: OpenCL C 3.0 with both features, else 2.x, whose core has them */
    char c_version[128];
    int c_features = 0;
    QUERY_STRING(NULL, CL_DEVICE_OPENCL_C_VERSION, c_version);
    if (err == CL_SUCCESS && (err = c_atomic_features(dev, info->device_version, &c_features)) != CL_SUCCESS)
        failed = "clGetDeviceInfo(CL_DEVICE_OPENCL_C_FEATURES)";
    /* NVIDIA's compute capability (cl_nv_device_attribute_query): the tensor-core paths and the
     * larger shared memory per block depend on it. A failure of these had read as "none". */
    cl_uint cc_major = 0, cc_minor = 0;
    if (err == CL_SUCCESS && ocx__contains_nocase(info->vendor, "nvidia") &&
        ext_listed(exts, "cl_nv_device_attribute_query")) {
        QUERY_OPTIONAL(CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, cc_major);
        QUERY_OPTIONAL(CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, cc_minor);
    }
    if (err != CL_SUCCESS) return ocx__cl_error(err, failed);

    info->type = (type & CL_DEVICE_TYPE_GPU)           ? OCX_DEVICE_GPU
                 : (type & CL_DEVICE_TYPE_CPU)         ? OCX_DEVICE_CPU
                 : (type & CL_DEVICE_TYPE_ACCELERATOR) ? OCX_DEVICE_ACCELERATOR
                                                       : OCX_DEVICE_OTHER;
    ocx__normalize_name(info->name, info->normalized_name, sizeof info->normalized_name);
    info->compute_units = units;
    info->clock_mhz = clock;
    info->global_mem_bytes = gmem;
    info->global_mem_cache_bytes = gcache;
    info->local_mem_bytes = lmem;
    info->local_mem_max_bytes = lmem;
    unsigned *cc = info->nv_compute_capability;
    cc[0] = cc_major, cc[1] = cc_minor;
    if (cc[0] >= 8) {
        /* Shared memory per thread block by compute capability (CUDA programming guide), less 1 KiB. */
        uint64_t kib = cc[0] == 9 || cc[0] == 10 ? 226 : cc[0] == 8 && (cc[1] == 0 || cc[1] == 7) ? 162 : 98;
        if (kib * 1024 > lmem) info->local_mem_max_bytes = kib * 1024;
    }
    info->max_alloc_bytes = maxalloc;
    info->max_work_group_size = wg;
    memcpy(info->max_work_item_sizes, items, sizeof items);
    info->preferred_vector_width_float = vecf;
    info->has_fp16 = ext_listed(exts, "cl_khr_fp16");
    info->has_fp64 = ext_listed(exts, "cl_khr_fp64");
    info->host_unified_memory = unified == CL_TRUE;
    info->device_atomics = c_features ? 30 : strncmp(c_version, "OpenCL C 2.", 11) == 0 ? 20 : 0;

    /* The fingerprint names the device and driver, not the simulated limits. */
    char fp[1024];
    int n = snprintf(fp, sizeof fp, "%s|%s|%s|%s|%s|%u", info->vendor, info->normalized_name,
                     info->driver_version, info->platform_name, info->platform_version, units);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof fp) n = (int)sizeof fp - 1; /* what was written, not what would have been */
    snprintf(info->fingerprint, sizeof info->fingerprint, "%016llx",
             (unsigned long long)XXH64(fp, (size_t)n, 0));

    /* Simulated limits: treat the device as smaller than it is. */
    unsigned long lim_wg = ocx__env_ulong("OCX_LIMIT_WG", 0);
    if (lim_wg > 0 && lim_wg < info->max_work_group_size) {
        info->max_work_group_size = lim_wg;
        info->limited = 1;
    }
    for (int i = 0; i < 3; i++)
        if (info->max_work_item_sizes[i] > info->max_work_group_size) {
            info->max_work_item_sizes[i] = info->max_work_group_size;
        }
    unsigned long lim_lm = ocx__env_ulong("OCX_LIMIT_LOCAL_MEM", 0);
    if (lim_lm > 0 && lim_lm < info->local_mem_max_bytes) {
        if (lim_lm < info->local_mem_bytes) info->local_mem_bytes = lim_lm;
        info->local_mem_max_bytes = lim_lm;
        info->limited = 1;
    }
    if (ocx__env_flag("OCX_DISABLE_FP16") && info->has_fp16) {
        info->has_fp16 = 0;
        info->limited = 1;
    }
    if (ocx__env_flag("OCX_DISABLE_FP64") && info->has_fp64) {
        info->has_fp64 = 0;
        info->limited = 1;
    }
    return OCX_OK;
}

ocx_status ocx_device_get_info(size_t index, ocx_device_info *info)
{
    OCX__FAIL_IF(!info, OCX_ERR_INVALID_ARGUMENT, "ocx_device_get_info: info is NULL");
    device_list list;
    list_devices(&list);
    OCX__FAIL_IF(index >= list.count, OCX_ERR_NO_DEVICE, "device index %zu out of range: %zu device(s) present",
                 index, list.count);
    OCX__FORWARD(ocx__device_query(list.ref[index].platform, list.ref[index].device, info));
    info->index = index;
    info->platform_index = list.ref[index].platform_index;
    info->device_index = list.ref[index].device_index;
    return OCX_OK;
}

static int parse_index(const char *s, size_t *out)
{
    if (!*s) return 0;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    *out = strtoul(s, NULL, 10);
    return 1;
}

int ocx__contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return 1;
    return 0;
}

int ocx__is_pocl(const ocx_device_info *info) { return strstr(info->platform_name, "Portable Computing Language") != NULL; }

/* "P:D", two numbers: the platform's and the device's within it. */
static int parse_pd(const char *spec, size_t *pidx, size_t *didx)
{
    const char *colon = strchr(spec, ':');
    char plat[32];
    const size_t plen = colon ? (size_t)(colon - spec) : sizeof plat;
    if (plen >= sizeof plat) return 0;
    memcpy(plat, spec, plen);
    plat[plen] = '\0';
    return parse_index(plat, pidx) && parse_index(colon + 1, didx);
}

/* Device i's type. A failed query fails the selection: it had been read as a device of no type,
 * and a spec of "gpu" answered "matches no device". */
static ocx_status device_type(const device_list *list, size_t i, cl_device_type *t)
{
    *t = 0;
    cl_int err = clGetDeviceInfo(list->ref[i].device, CL_DEVICE_TYPE, sizeof *t, t, NULL);
    return err == CL_SUCCESS ? OCX_OK : ocx__cl_error(err, "clGetDeviceInfo(CL_DEVICE_TYPE) while choosing the device");
}

/* spec without the spaces around it ("" for NULL), in buf where it had any: from a script, "1 " had
 * matched PoCL's platform version ("OpenCL 3.0 PoCL") as a name's part where it meant device 1. */
static const char *trim_spec(const char *spec, char *buf, size_t cap)
{
    if (!spec) return "";
    while (isspace((unsigned char)*spec)) spec++;
    size_t len = strlen(spec);
    while (len && isspace((unsigned char)spec[len - 1])) len--;
    if (!spec[len] || len >= cap) return spec;
    memcpy(buf, spec, len);
    buf[len] = '\0';
    return buf;
}

/* Why the list is empty, for the message: no platform (no ICD registered), or platforms that list
 * no device. PoCL lists none where it cannot create its kernel cache ($POCL_CACHE_DIR, else
 * $XDG_CACHE_HOME/pocl or $HOME/.cache/pocl): with HOME a regular file, clinfo still showed its
 * platform, and ocx had said only "is an ICD installed?". */
static ocx_status no_device(const device_list *list)
{
    OCX__FAIL_IF(list->platforms == 0, OCX_ERR_NO_DEVICE,
                 "no OpenCL device found: no platform; is an ICD installed (e.g. pocl-opencl-icd) and registered "
                 "in /etc/OpenCL/vendors or $OCL_ICD_VENDORS?");
    const char *home = getenv("HOME");
    struct stat st;
    const int home_file = home && *home && stat(home, &st) == 0 && !S_ISDIR(st.st_mode);
    return ocx__error(OCX_ERR_NO_DEVICE,
                      "no OpenCL device found: %u platform(s), none listing a device; PoCL lists none where it "
                      "cannot create its kernel cache ($POCL_CACHE_DIR, else $XDG_CACHE_HOME/pocl or "
                      "$HOME/.cache/pocl)%s%s%s",
                      (unsigned)list->platforms, home_file ? "; HOME (" : "", home_file ? home : "",
                      home_file ? ") is not a directory" : "");
}

ocx_status ocx_device_select(const char *spec, size_t *index)
{
    OCX__FAIL_IF(!index, OCX_ERR_INVALID_ARGUMENT, "ocx_device_select: index is NULL");
    const char *origin = "argument";
    char trimmed[512];
    spec = trim_spec(spec, trimmed, sizeof trimmed);
    if (!*spec) {
        spec = trim_spec(getenv("OCX_DEVICE"), trimmed, sizeof trimmed);
        origin = "OCX_DEVICE";
    }
    device_list list;
    list_devices(&list);
    if (list.count == 0) return no_device(&list);

    ocx_device_info info;
    if (!*spec) { /* default: the first GPU, else the first device */
        for (size_t i = 0; i < list.count; i++) {
            cl_device_type t;
            OCX__FORWARD(device_type(&list, i, &t));
            if (t & CL_DEVICE_TYPE_GPU) {
                *index = i;
                return OCX_OK;
            }
        }
        *index = 0;
        return OCX_OK;
    }

    size_t idx, pidx, didx;
    if (parse_index(spec, &idx)) {
        if (idx < list.count) {
            *index = idx;
            return OCX_OK;
        }
    } else if (parse_pd(spec, &pidx, &didx)) {
        for (size_t i = 0; i < list.count; i++)
            if (list.ref[i].platform_index == pidx && list.ref[i].device_index == didx) {
                *index = i;
                return OCX_OK;
            }
    } else { /* a name may hold a colon too (AMD's "gfx90a:sramecc+:xnack-") */
        static const struct { const char *word; cl_device_type type; } types[] = {
            {"gpu", CL_DEVICE_TYPE_GPU}, {"cpu", CL_DEVICE_TYPE_CPU},
            {"accelerator", CL_DEVICE_TYPE_ACCELERATOR}};
        for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
            if (strcasecmp(spec, types[t].word) != 0) continue;
            for (size_t i = 0; i < list.count; i++) {
                cl_device_type dt;
                OCX__FORWARD(device_type(&list, i, &dt));
                if (dt & types[t].type) {
                    *index = i;
                    return OCX_OK;
                }
            }
            goto none;
        }
        /* Punctuation alone is no part of a name: "," had chosen PoCL, whose platform version
         * holds one ("Linux, None+Asserts"). */
        int alnum = 0;
        for (const char *c = spec; *c && !alnum; c++) alnum = isalnum((unsigned char)*c);
        for (size_t i = 0; i < list.count && alnum; i++) {
            if (ocx__device_query(list.ref[i].platform, list.ref[i].device, &info) != OCX_OK) continue; /* as below */
            /* the platform's version too: PoCL's name is "Portable Computing Language", its
             * version "OpenCL 3.0 PoCL 3.1+debian ..." */
            if (ocx__contains_nocase(info.name, spec) || ocx__contains_nocase(info.vendor, spec) ||
                ocx__contains_nocase(info.platform_name, spec) || ocx__contains_nocase(info.platform_version, spec)) {
                *index = i;
                return OCX_OK;
            }
        }
    }
none:;
    /* No match: name the spec and list what there is. */
    char avail[4096];
    size_t o = 0;
    avail[0] = '\0';
    for (size_t i = 0; i < list.count && o < sizeof avail; i++) {
        if (ocx__device_query(list.ref[i].platform, list.ref[i].device, &info) != OCX_OK) continue;
        o += (size_t)snprintf(avail + o, sizeof avail - o, "%s[%zu] %u:%u %s (%s)", i ? "; " : "", i,
                              list.ref[i].platform_index, list.ref[i].device_index, info.name, info.platform_name);
    }
    return ocx__error(OCX_ERR_NO_DEVICE,
                      "%s '%s' matches no device (forms: N, P:D, gpu, cpu, accelerator, or part of a "
                      "name, vendor or platform); devices: %s",
                      origin, spec, avail);
}
