/* profile.c — kernel parameters: per-device profile files written by ocx-tune, the families'
 * built-in defaults fitted to the device's limits, and the record of what each operation used.
 *
 * A profile is one JSON file per device, named <normalized device name>.json:
 *   { "schema": 1, "ocx_version": "…", "date": "…", "tool": "ocx-tune …",
 *     "device": { "vendor", "name", "normalized_name", "type", "driver_version", "compute_units",
 *                 "clock_mhz", "fingerprint" },
 *     "entries": [ { "family": "gemm", "dtype": "f32", "size_class": "large",
 *                    "params": { "MWG": 64, … }, "rate": 1234.5, "unit": "GFLOP/s" }, … ] }
 * OCX_<FAMILY>_PARAMS="NAME=V,…" in the environment overrides all of them (experiments).
 * Sources, first match wins per (family, dtype, size class; a source's "all" entry stands in for a
 * class it lacks, unless the class has built-in defaults of its own): $OCX_PROFILE_DIR, $XDG_DATA_HOME/ocx/
 * profiles (else ~/.local/share/ocx/profiles), the installed $(datadir)/ocx/profiles, built-in
 * defaults. A file that is malformed, of another schema or another device is skipped whole; an entry
 * with unknown keys, wrong types, values out of range or parameters this device cannot run counts as
 * absent: an "all" entry falls back to the next source, a class's to what the class takes without
 * one (a parameter marked `added` may be absent and keeps its built-in value). Each
 * problem is warned about once per context. Nothing read from a file
 * reaches a kernel without passing ocx__params_check(), so no profile can make a build or launch fail.
 */
#include "config.h"
#include "ocx_internal.h"

#include <errno.h>
#include <limits.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <xxhash.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocx_paths.h" /* OCX_DATADIR: $(datadir)/ocx, made by make (Makefile.am) */
#define PROFILE_SCHEMA 1
#define MAX_SOURCES 3

typedef struct profile_src {
    char *path;
    json_t *entries; /* borrowed from root */
    json_t *root;
    int stale;       /* the device's driver differs from the profile's */
} profile_src;

/* A lookup's outcome (built-in defaults of the class, then the sources' entries), kept for the
 * context's life: the sources are read once, the device's limits are fixed at its creation, and a
 * family whose limits can change says when (ocx__family.state). Validating an entry again on each
 * call (its keys, each parameter's name and range, the family's limits) cost PoCL 0.6 us a
 * reduction and 1.9 us a GEMM over the built-in path, 6-10% of a 64^3 GEMM or a reduction of 2^16
 * elements, and the H200 4-7 us a reduction. Past MAX_MEMO outcomes, lookups are made afresh.
 * class: one of ocx__size_classes (compared by address). */
#define MAX_MEMO 64
typedef struct memo {
    uint64_t device; /* hash of the device info looked up for: a copy of a context with other
                      * capabilities (the tests' simulated GPUs) shares the sources, not the outcomes */
    unsigned state; /* the family's state() (0 where it has none) */
    const ocx__family *fam;
    ocx_dtype dtype;
    const char *size_class;
    ocx__params params;
} memo;

struct ocx__profiles {
    profile_src src[MAX_SOURCES];
    int count;
    char **warned; /* "path|what" already warned about (as many as there are: past a fixed 64,
                      each further problem had been warned about at every lookup) */
    int nwarned, capwarned;
    int resuming; /* read for ocx-tune --resume: refusals end in what that run does instead */
    int quiet;    /* no warnings (other devices' files, read for ocx-tune's seeds) */
    memo memo[MAX_MEMO];
    int nmemo;
};

const ocx__family *const ocx__families[] = {&ocx__family_vector, &ocx__family_reduce, &ocx__family_gemm, &ocx__family_gemm_mma, NULL};

static _Thread_local const ocx__family *forced_family;
static _Thread_local int forced_values[OCX__MAX_PARAMS];
static _Thread_local ocx__params_rec last_params;

static int is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

int ocx__on_ladder(int kind, int v)
{
    if (kind == OCX__LADDER_POW2) return is_pow2(v);
    if (kind == OCX__LADDER_POW2_3) return is_pow2(v) || (v % 3 == 0 && is_pow2(v / 3));
    return 1;
}

int ocx__ladder_below(int kind, int v)
{
    do v--;
    while (v > 1 && !ocx__on_ladder(kind, v));
    return v;
}

size_t ocx__1d_large(const ocx_context *ctx)
{
    return ctx->info.type == OCX_DEVICE_CPU ? OCX__1D_LARGE_CPU : OCX__1D_LARGE;
}

const char *ocx__size_class_1d(const ocx_context *ctx, size_t n)
{
    return n < OCX__1D_MEDIUM ? "small" : n < ocx__1d_large(ctx) ? "medium" : "large";
}

/* The reason names the parameter and its range (the text lives in a per-thread buffer until the
 * thread's next check). */
const char *ocx__params_check(const ocx__family *fam, const int *v, const ocx_device_info *dev, ocx_dtype dtype)
{
    static _Thread_local char why[160];
    for (unsigned i = 0; i < fam->nparams; i++) {
        const ocx__param_def *p = &fam->params[i];
        if (v[i] < p->min || v[i] > p->max) {
            snprintf(why, sizeof why, "%s=%d is out of its range %d..%d", p->name, v[i], p->min, p->max);
            return why;
        }
        if (!ocx__on_ladder(p->ladder, v[i])) {
            snprintf(why, sizeof why, "%s=%d: %s", p->name, v[i],
                     p->ladder == OCX__LADDER_POW2 ? "a value must be a power of two"
                                                   : "a value must be a power of two or three times one");
            return why;
        }
    }
    return fam->invalid ? fam->invalid(v, dev, dtype) : NULL;
}

/* Shrinks parameters until the family accepts them on this device: where local memory alone is
 * exceeded, first those the family names (fam->shrink_first, each down to its minimum if need be);
 * then the one furthest above its minimum.
 * Every family's minimum values are legal on any device (work-groups of 1, a few bytes of local
 * memory), so this always ends with legal values; gemm_mma's f32 entries, whose warp tiles stay 32x32
 * (mma_device_defaults), are the exception: below 32 work-items or 16 KiB they have none, the lookup
 * fails, and OCX_COMPUTE_TF32X3 products take the f32 kernels. */
static int above_min(const ocx__param_def *p, int v) { return v / (p->min > 0 ? p->min : 1); } /* NT's min is 0 */

static void lower(int *v, const ocx__param_def *p)
{
    /* One rung down, but a power of two on a three-times ladder by half: those rungs are for STAGE=1
     * alone (GEMM tiles fitted to a GPU's local memory had stepped from MWG=64 to 48, illegal there,
     * and every parameter then drained to 1). */
    *v = p->ladder == OCX__LADDER_POW2_3 && is_pow2(*v) ? *v / 2 : ocx__ladder_below(p->ladder, *v);
    if (*v < p->min) *v = p->min;
}

unsigned ocx__param_index(const ocx__family *fam, const char *name)
{
    unsigned i = 0;
    while (i < fam->nparams && strcmp(fam->params[i].name, name) != 0) i++;
    return i;
}

static void fit(int *v, const ocx__family *fam, const ocx_device_info *dev, ocx_dtype dtype)
{
    if (fam->shrink_first && ocx__params_check(fam, v, dev, dtype)) {
        /* The family's own order applies when local memory is all the parameters exceed. */
        ocx_device_info roomy = *dev;
        roomy.local_mem_bytes = roomy.local_mem_max_bytes = (uint64_t)1 << 40;
        if (!ocx__params_check(fam, v, &roomy, dtype))
            for (const char *const *name = fam->shrink_first; *name; name++) {
                const unsigned i = ocx__param_index(fam, *name);
                while (i < fam->nparams && v[i] > fam->params[i].min && ocx__params_check(fam, v, dev, dtype))
                    lower(&v[i], &fam->params[i]);
            }
    }
    for (int guard = 0; guard < 256 && ocx__params_check(fam, v, dev, dtype); guard++) {
        int best = -1;
        for (unsigned i = 0; i < fam->nparams; i++)
            if (!fam->params[i].host && v[i] > fam->params[i].min &&
                (best < 0 || above_min(&fam->params[i], v[i]) > above_min(&fam->params[best], v[best])))
                best = (int)i;
        if (best < 0) break;
        lower(&v[best], &fam->params[best]);
    }
}

ocx_status ocx__params_default(const ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, ocx__params *out)
{
    OCX__FAIL_IF(fam->nparams > OCX__MAX_PARAMS, OCX_ERR_INTERNAL, "family %s: too many parameters", fam->name);
    memset(out, 0, sizeof *out);
    out->family = fam;
    out->origin = "built-in";
    int cpu = ctx->info.type == OCX_DEVICE_CPU;
    for (unsigned i = 0; i < fam->nparams; i++) {
        const ocx__param_def *p = &fam->params[i];
        int v = cpu ? p->def_cpu : p->def_gpu;
        if (v < p->min) v = p->min;
        if (v > p->max) v = p->max;
        if (!ocx__on_ladder(p->ladder, v)) v = p->min;
        out->v[i] = v;
    }
    if (fam->device_defaults) fam->device_defaults(&ctx->info, dtype, out->v);
    fit(out->v, fam, &ctx->info, dtype);
    const char *why = ocx__params_check(fam, out->v, &ctx->info, dtype);
    /* fit() shrinks the defaults to any real device's limits; what is left is a device (or a
     * simulated limit, OCX_LIMIT_LOCAL_MEM=8) too small for the family's kernels */
    OCX__FAIL_IF(why, OCX_ERR_UNSUPPORTED, "family %s: device '%s' is too small for its kernels: %s", fam->name,
                 ctx->info.name, why);
    return OCX_OK;
}

void ocx__parent_dir(const char *path, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, cap, ".");
}

int ocx__json_dump_atomic(json_t *root, const char *path, size_t flags)
{
    if (!root) return ENOMEM;
    char tmp[4400];
    const int fd = ocx__open_temp(path, tmp, sizeof tmp);
    if (fd < 0) return errno;
    /* a file replaced keeps its permissions (a profile of 0640 had become 0644, the temporary's,
     * less the umask); a hard link to it is broken, as by any replace-by-rename */
    struct stat was;
    if (stat(path, &was) == 0 && S_ISREG(was.st_mode)) fchmod(fd, was.st_mode & 07777);
    errno = 0;
    const int dumped = json_dumpfd(root, fd, flags) == 0;
    int err = dumped ? 0 : errno ? errno : EIO;
    /* on disk before the rename: after a crash of the system the name then holds the old file or
     * the new one, never an empty one (the tuner's --resume would refuse that, losing its entries) */
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) unlink(tmp);
    if (!err) { /* those of writes whose process died before its rename (a peaks file, a profile) */
        char dir[4400];
        ocx__parent_dir(path, dir, sizeof dir);
        ocx__sweep_stale_temps(dir, ocx__is_temp, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    }
    return err;
}

const char *const ocx__size_classes[] = {"all", "small", "medium", "large", "short_k", NULL};
const char *const ocx__classes_1d[] = {"all", "small", "medium", "large", NULL};

int ocx__family_uses(const ocx__family *fam, ocx_dtype dtype, const char *size_class)
{
    if ((unsigned)dtype > OCX_F64 || !(fam->dtypes & OCX__DT(dtype))) return 0;
    const char *const *list = dtype == OCX_F32 && fam->f32_classes ? fam->f32_classes : fam->classes;
    for (const char *const *c = list ? list : ocx__size_classes; *c; c++)
        if (!strcmp(*c, size_class)) return 1;
    return 0;
}

/* *own: 1 when the family has built-in defaults of its own for the class on this device, other than
 * those of its "all" class. */
static ocx_status class_default(const ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, const char *size_class,
                                ocx__params *out, int *own)
{
    *own = 0;
    OCX__FORWARD(ocx__params_default(ctx, fam, dtype, out));
    if (!fam->class_defaults || !size_class) return OCX_OK;
    /* The class's own built-in defaults, where the family has some that are legal here. */
    int v[OCX__MAX_PARAMS], all[OCX__MAX_PARAMS];
    memcpy(v, out->v, sizeof v);
    memcpy(all, out->v, sizeof all);
    int has = fam->class_defaults(&ctx->info, dtype, size_class, v);
    int all_has = strcmp(size_class, "all") != 0 && fam->class_defaults(&ctx->info, dtype, "all", all);
    /* Own defaults too large here as they stand (NVIDIA's f32 "large" tiles count 60 KiB of local
     * memory): the "all" class's, where those fit unchanged, rather than the class's shrunk. */
    if (has && all_has && ocx__params_check(fam, v, &ctx->info, dtype) && !ocx__params_check(fam, all, &ctx->info, dtype))
        memcpy(v, all, sizeof v);
    fit(v, fam, &ctx->info, dtype);
    if (!has || ocx__params_check(fam, v, &ctx->info, dtype)) return OCX_OK;
    memcpy(out->v, v, sizeof v);
    /* A class whose defaults are those "all" has of its own shares them rather than owning them: a
     * profile's "all" entry still comes before them. */
    if (all_has) fit(all, fam, &ctx->info, dtype);
    *own = !all_has || memcmp(all, v, sizeof v) != 0;
    return OCX_OK;
}

ocx_status ocx__params_class_default(const ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype,
                                     const char *size_class, ocx__params *out)
{
    int own;
    return class_default(ctx, fam, dtype, size_class, out, &own);
}

/* ---- profile files ---------------------------------------------------------------------------- */

/* One warning per path and `what`, ending with what happens next: `then`, else "using the next
 * source" (the whole file refused, or an "all" entry; resuming: "not resumed", only the whole file
 * passing NULL there). */
static void warn_once(struct ocx__profiles *pr, const char *path, const char *what, const char *detail,
                      const char *then)
{
    if (pr->quiet) return;
    char key[2048];
    snprintf(key, sizeof key, "%s|%s", path, what);
    for (int i = 0; i < pr->nwarned; i++)
        if (strcmp(pr->warned[i], key) == 0) return;
    if (pr->nwarned == pr->capwarned) {
        const int cap = pr->capwarned ? 2 * pr->capwarned : 16;
        char **grown = realloc(pr->warned, (size_t)cap * sizeof *grown);
        if (grown) pr->warned = grown, pr->capwarned = cap;
    }
    char *copy = pr->nwarned < pr->capwarned ? strdup(key) : NULL;
    if (copy) pr->warned[pr->nwarned++] = copy; /* out of memory: warned again later, no worse */
    ocx__warn("profile %s: %s%s%s; %s", path, what, detail ? ": " : "", detail ? detail : "",
              then ? then : pr->resuming ? "not resumed" : "using the next source");
}

static int dir_for(int which, char *out, size_t cap)
{
    const char *env;
    switch (which) {
    case 0:
        env = getenv("OCX_PROFILE_DIR");
        if (env && *env) return snprintf(out, cap, "%s", env), 1;
        return 0;
    case 1:
        return ocx__xdg_dir("XDG_DATA_HOME", ".local/share", "ocx/profiles", out, cap);
    default:
        /* OCX_PROFILE_SYSTEM_DIR stands in for the installed directory (tests). */
        env = getenv("OCX_PROFILE_SYSTEM_DIR");
        snprintf(out, cap, "%s", env && *env ? env : OCX_DATADIR "/profiles");
        return 1;
    }
}

static const ocx_dtype entry_dtypes[] = {OCX_F32, OCX_F16, OCX_F64};

/* The family, dtype (index into entry_dtypes) and size class an entry names; 0 where it names none
 * of this version's, or a dtype or class its family never looks up. */
static int entry_key(json_t *e, const ocx__family **fam, int *d, const char **cls)
{
    json_t *fn = json_object_get(e, "family"), *dn = json_object_get(e, "dtype"), *cn = json_object_get(e, "size_class");
    *fam = NULL, *d = -1, *cls = NULL;
    for (const ocx__family *const *f = ocx__families; json_is_string(fn) && *f; f++)
        if (!strcmp((*f)->name, json_string_value(fn))) *fam = *f;
    for (int k = 0; json_is_string(dn) && k < 3; k++)
        if (!strcmp(ocx_dtype_name(entry_dtypes[k]), json_string_value(dn))) *d = k;
    for (const char *const *c = ocx__size_classes; json_is_string(cn) && *c; c++)
        if (!strcmp(*c, json_string_value(cn))) *cls = *c;
    return *fam && *d >= 0 && *cls && ocx__family_uses(*fam, entry_dtypes[*d], *cls);
}

/* 1 when an entry before entries[i] names the same family, dtype and size class (lookups read the
 * first). */
static int entry_repeated(json_t *entries, size_t i)
{
    json_t *e = json_array_get(entries, i);
    for (size_t j = 0; j < i; j++) {
        json_t *k = json_array_get(entries, j);
        if (json_equal(json_object_get(k, "family"), json_object_get(e, "family")) &&
            json_equal(json_object_get(k, "dtype"), json_object_get(e, "dtype")) &&
            json_equal(json_object_get(k, "size_class"), json_object_get(e, "size_class")))
            return 1;
    }
    return 0;
}

/* Checks a parsed file as a whole (takes the reference to root); 0 when unusable. Entries that no
 * lookup will read (naming nothing of this version, or repeating an earlier one) are warned about
 * here, once. */
static int check_root(struct ocx__profiles *pr, const ocx_device_info *dev, const char *path, json_t *root,
                      profile_src *src)
{
    const char *why = NULL;
    json_t *schema = json_object_get(root, "schema"), *device = json_object_get(root, "device");
    json_t *entries = json_object_get(root, "entries");
    static const char *known[] = {"schema", "ocx_version", "date", "tool", "device", "entries"};
    const char *key;
    json_t *val;
    if (!json_is_object(root))
        why = "the top level is not an object";
    else if (!json_is_integer(schema) || json_integer_value(schema) != PROFILE_SCHEMA)
        why = "another schema version";
    else if (!json_is_object(device) || !json_is_array(entries))
        why = "'device' must be an object and 'entries' an array";
    else {
        json_object_foreach(root, key, val) {
            int ok = 0;
            for (size_t i = 0; i < sizeof known / sizeof *known; i++) ok |= strcmp(key, known[i]) == 0;
            if (!ok) why = "unknown top-level key";
        }
    }
    if (!why) {
        json_t *name = json_object_get(device, "normalized_name"), *vendor = json_object_get(device, "vendor");
        if (!json_is_string(name) || strcmp(json_string_value(name), dev->normalized_name) != 0 ||
            !json_is_string(vendor) || strcmp(json_string_value(vendor), dev->vendor) != 0)
            why = "made for another device";
    }
    if (why) {
        warn_once(pr, path, why, NULL, NULL);
        json_decref(root);
        return 0;
    }
    size_t i;
    json_t *e;
    const char *entry_ignored = pr->resuming ? "dropped from the resumed file" : "ignoring it";
    json_array_foreach(entries, i, e) {
        const ocx__family *fam;
        int d;
        const char *cls;
        if (!json_is_string(json_object_get(e, "family")) || !json_is_string(json_object_get(e, "dtype")) ||
            !json_is_string(json_object_get(e, "size_class")))
            warn_once(pr, path, "an entry lacks family/dtype/size_class strings", NULL, entry_ignored);
        else if (!entry_key(e, &fam, &d, &cls))
            warn_once(pr, path,
                      "an entry names a family, dtype or size class this version does not have, or one its family "
                      "never looks up",
                      NULL, entry_ignored);
        else if (entry_repeated(entries, i))
            warn_once(pr, path, "an entry repeats an earlier one's family, dtype and size class", NULL,
                      pr->resuming ? "the first is kept, the repeat dropped from the resumed file"
                                   : "the first is read, the repeat ignored");
    }
    json_t *driver = json_object_get(device, "driver_version");
    src->path = strdup(path);
    src->root = root;
    src->entries = entries;
    src->stale = !json_is_string(driver) || strcmp(json_string_value(driver), dev->driver_version) != 0;
    return src->path != NULL;
}

static int load_file(struct ocx__profiles *pr, const ocx_device_info *dev, const char *path, profile_src *src)
{
    const char *why;
    FILE *f = ocx__open_regular(path, &why);
    if (!f) { /* none there is no source; one there that cannot be read is refused, with a warning */
        if (errno != ENOENT && errno != ENOTDIR) warn_once(pr, path, "cannot be read", why, NULL);
        return 0;
    }
    json_error_t jerr;
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
    fclose(f);
    return root ? check_root(pr, dev, path, root, src) : (warn_once(pr, path, "not valid JSON", jerr.text, NULL), 0);
}

/* The context's profile files, loaded on first use (ctx->lock held by the caller). */
static struct ocx__profiles *profiles(ocx_context *ctx)
{
    if (!ctx->profiles && (ctx->profiles = calloc(1, sizeof *ctx->profiles)) != NULL) {
        struct ocx__profiles *pr = ctx->profiles;
        for (int which = 0; which < MAX_SOURCES; which++) {
            char dir[4096], path[4400];
            if (!dir_for(which, dir, sizeof dir)) continue;
            struct stat sb;
            /* A profile file given as the directory had been passed over without a word. A
             * directory that is not there stays silent: OCX_PROFILE_DIR=/nonexistent is how one
             * asks for no profile. */
            if (which == 0 && stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
                char detail[8400];
                snprintf(detail, sizeof detail, "profiles are read from %s/%s.json", dir, ctx->info.normalized_name);
                warn_once(pr, dir, "OCX_PROFILE_DIR names a file, not a directory", detail, NULL);
                continue;
            }
            snprintf(path, sizeof path, "%s/%s.json", dir, ctx->info.normalized_name);
            if (load_file(pr, &ctx->info, path, &pr->src[pr->count])) pr->count++;
        }
    }
    return ctx->profiles;
}

/* Frees pr itself with its set of warnings (its sources are the caller's to release). */
static void release_warnings(struct ocx__profiles *pr)
{
    for (int i = 0; i < pr->nwarned; i++) free(pr->warned[i]);
    free(pr->warned);
    free(pr);
}

void ocx__profiles_release(ocx_context *ctx)
{
    struct ocx__profiles *pr = ctx->profiles;
    if (!pr) return;
    for (int i = 0; i < pr->count; i++) {
        free(pr->src[i].path);
        json_decref(pr->src[i].root);
    }
    release_warnings(pr);
    ctx->profiles = NULL;
}

/* Entry e of src, for (fam, dtype, class), validated into v; 0 (warned once) when invalid. */
static int entry_valid(ocx_context *ctx, struct ocx__profiles *pr, const profile_src *src, json_t *e,
                       const ocx__family *fam, ocx_dtype dtype, const char *size_class, int *v)
{
    char what[160], detail[160];
    snprintf(what, sizeof what, "entry %s/%s/%s", fam->name, ocx_dtype_name(dtype), size_class);
    const char *why = NULL;
    json_t *params = json_object_get(e, "params");
    const char *key;
    json_t *val;
    json_object_foreach(e, key, val) {
        if (!why && strcmp(key, "family") && strcmp(key, "dtype") && strcmp(key, "size_class") &&
            strcmp(key, "params") && strcmp(key, "rate") && strcmp(key, "unit"))
            why = detail, snprintf(detail, sizeof detail, "unknown key '%.100s'", key);
    }
    if (!why && !json_is_object(params)) why = "'params' is not an object";
    /* Parameters added after profiles were written may be absent: they take the table's
     * default for the device type, the behaviour the entry was measured with (not a
     * device's own defaults: gemm_mma's WGMMA). Every other one must be there, and nothing else. */
    if (!why)
        json_object_foreach(params, key, val) {
            if (!why && ocx__param_index(fam, key) == fam->nparams)
                why = detail, snprintf(detail, sizeof detail, "%s has no parameter '%.100s'", fam->name, key);
        }
    for (unsigned p = 0; !why && p < fam->nparams; p++) {
        const ocx__param_def *d = &fam->params[p];
        json_t *pv = json_object_get(params, d->name);
        if (!pv && d->added)
            v[p] = ctx->info.type == OCX_DEVICE_CPU ? d->def_cpu : d->def_gpu;
        else if (!pv)
            why = detail, snprintf(detail, sizeof detail, "parameter %s is missing", d->name);
        else if (!json_is_integer(pv))
            why = detail, snprintf(detail, sizeof detail, "parameter %s is not an integer", d->name);
        else if (json_integer_value(pv) < d->min || json_integer_value(pv) > d->max)
            why = detail, snprintf(detail, sizeof detail, "%s=%lld is out of its range %d..%d", d->name,
                                   (long long)json_integer_value(pv), d->min, d->max);
        else
            v[p] = (int)json_integer_value(pv);
    }
    if (!why) why = ocx__params_check(fam, v, &ctx->info, dtype);
    if (!why) return 1;
    /* A refused entry counts as absent: a class's then takes this file's "all" entry where a class
     * without one would (lookup_sources), so its warning cannot say "the next source". */
    warn_once(pr, src->path, what, why,
              pr->resuming                   ? "dropped from the resumed file (tuned again where this run covers it)"
              : strcmp(size_class, "all") != 0 ? "ignoring it (the class takes this file's \"all\" entry where it "
                                                 "falls back to one, else the next source)"
                                               : NULL);
    return 0;
}

/* The entry of src for (family, dtype, class), validated into v; 0 when absent or invalid. Lookups
 * read the first that matches (check_root warned about entries that name nothing or repeat one). */
static int entry_from(ocx_context *ctx, struct ocx__profiles *pr, const profile_src *src, const ocx__family *fam,
                      ocx_dtype dtype, const char *size_class, int *v)
{
    size_t i;
    json_t *e;
    json_array_foreach(src->entries, i, e) {
        json_t *f = json_object_get(e, "family"), *d = json_object_get(e, "dtype"), *c = json_object_get(e, "size_class");
        if (json_is_string(f) && json_is_string(d) && json_is_string(c) && !strcmp(json_string_value(f), fam->name) &&
            !strcmp(json_string_value(d), ocx_dtype_name(dtype)) && !strcmp(json_string_value(c), size_class))
            return entry_valid(ctx, pr, src, e, fam, dtype, size_class, v);
    }
    return 0;
}

/* 1 when a lookup would use entry i of src: it names a family, dtype and class of this version, is
 * the first to, and passes entry_valid's checks (which warn, once, where it does not); with
 * `computed`, also only where the device computes its dtype (no f64 entry counts on a device
 * without cl_khr_fp64; --resume keeps those, for a run under OCX_DISABLE_FP64 named the file). */
static int entry_usable(ocx_context *ctx, struct ocx__profiles *pr, const profile_src *src, size_t i, int computed)
{
    json_t *e = json_array_get(src->entries, i);
    const ocx__family *fam;
    int d, v[OCX__MAX_PARAMS];
    const char *cls;
    return entry_key(e, &fam, &d, &cls) && !entry_repeated(src->entries, i) &&
           (!computed || entry_dtypes[d] != OCX_F64 || ctx->info.has_fp64) &&
           entry_valid(ctx, pr, src, e, fam, entry_dtypes[d], cls, v);
}

/* src into dst[cap], cut to fit (a record's strings: no formatting on the hot path). */
static void copy_cut(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void ocx__params_record(const ocx__params *p, ocx_dtype dtype, const char *size_class)
{
    ocx__params_rec *r = &last_params;
    r->family = p->family;
    memcpy(r->v, p->v, sizeof r->v);
    r->dtype = dtype;
    copy_cut(r->size_class, sizeof r->size_class, size_class);
    copy_cut(r->source, sizeof r->source, p->origin);
}

void ocx__params_kernel(const char *name) { copy_cut(last_params.kernel, sizeof last_params.kernel, name); }

void ocx__params_saved(ocx__params_rec *out) { *out = last_params; }

void ocx__params_restore(const ocx__params_rec *in) { last_params = *in; }

/* The record as ocx_params_info: the parameters formatted now. */
static void params_info(const ocx__params_rec *r, ocx_params_info *info)
{
    copy_cut(info->family, sizeof info->family, r->family->name);
    copy_cut(info->dtype, sizeof info->dtype, ocx_dtype_name(r->dtype));
    copy_cut(info->size_class, sizeof info->size_class, r->size_class);
    copy_cut(info->source, sizeof info->source, r->source);
    copy_cut(info->kernel, sizeof info->kernel, r->kernel);
    info->params[0] = '\0';
    ocx__params_append(r->family, r->v, "", " ", 0, info->params, sizeof info->params);
}

/* OCX_<FAMILY>_PARAMS="NAME=V,…" (OCX_GEMM_PARAMS, …): a developer's override of the looked-up
 * values for experiments, checked like a profile entry; a bad one is an error, never a bad kernel.
 * Commas or spaces separate the pairs, so ocx_last_params()'s "NAME=V NAME=V" can be fed back; a
 * name given again overrides it ("$OCX_GEMM_PARAMS,PACKN=1": the tests build on that). */
static ocx_status env_override(const ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, ocx__params *p)
{
    char var[64];
    int n = snprintf(var, sizeof var, "OCX_");
    for (const char *c = fam->name; *c && n < 40; c++) var[n++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
    snprintf(var + n, sizeof var - (size_t)n, "_PARAMS");
    const char *e = getenv(var);
    if (!e || !*e) return OCX_OK;
    char buf[1024];
    OCX__FAIL_IF(strlen(e) >= sizeof buf, OCX_ERR_INVALID_ARGUMENT, "%s: %zu characters, more than the %zu read", var,
                 strlen(e), sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", e);
    int pairs = 0;
    for (char *save = NULL, *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save), pairs++) {
        char *eq = strchr(t, '='), *end = NULL;
        OCX__FAIL_IF(!eq, OCX_ERR_INVALID_ARGUMENT, "%s: '%s' is not NAME=VALUE", var, t);
        *eq = 0;
        unsigned i = ocx__param_index(fam, t);
        OCX__FAIL_IF(i == fam->nparams, OCX_ERR_INVALID_ARGUMENT, "%s: %s has no parameter %s", var, fam->name, t);
        long v = strtol(eq + 1, &end, 10);
        OCX__FAIL_IF(end == eq + 1 || *end || v < INT32_MIN || v > INT32_MAX, OCX_ERR_INVALID_ARGUMENT,
                     "%s: %s=%s is not a decimal whole number within the int range", var, t, eq + 1);
        p->v[i] = (int)v;
    }
    /* set, but to separators alone: a mistake (ocx_last_params() had named the environment as the
     * source of the built-in values) */
    OCX__FAIL_IF(!pairs, OCX_ERR_INVALID_ARGUMENT, "%s='%s' names no parameter (NAME=VALUE,...)", var, e);
    const char *why = ocx__params_check(fam, p->v, &ctx->info, dtype);
    OCX__FAIL_IF(why, OCX_ERR_INVALID_ARGUMENT, "%s=%s: %s", var, e, why);
    p->origin = "environment (OCX_<FAMILY>_PARAMS)";
    return OCX_OK;
}

/* The canonical string of a size class (an element of ocx__size_classes), NULL for another. */
static const char *class_key(const char *size_class)
{
    for (const char *const *c = ocx__size_classes; *c; c++)
        if (*c == size_class || !strcmp(*c, size_class)) return *c;
    return NULL;
}

/* The class's built-in defaults, then source by source the entry of the size class itself, else the
 * source's "all" entry (not where the class has built-in defaults of its own: those were chosen for
 * its shapes, "all" at others, e.g. 128x256 tensor-core tiles for K = 64). Under ctx->lock. */
static ocx_status lookup_sources(ocx_context *ctx, struct ocx__profiles *pr, const ocx__family *fam, ocx_dtype dtype,
                                 const char *size_class, ocx__params *out)
{
    int own;
    OCX__FORWARD(class_default(ctx, fam, dtype, size_class, out, &own));
    for (int s = 0; pr && s < pr->count; s++) {
        /* Each entry starts from the built-in values; entry_from sets every parameter (those it
         * lacks to their table defaults). */
        int v[OCX__MAX_PARAMS];
        memcpy(v, out->v, sizeof v);
        int found = entry_from(ctx, pr, &pr->src[s], fam, dtype, size_class, v);
        if (!found && !own && strcmp(size_class, "all") != 0) {
            memcpy(v, out->v, sizeof v);
            found = entry_from(ctx, pr, &pr->src[s], fam, dtype, "all", v);
        }
        if (found) {
            memcpy(out->v, v, sizeof v);
            out->origin = pr->src[s].path;
            break;
        }
    }
    return OCX_OK;
}

ocx_status ocx__params_lookup(ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, const char *size_class,
                              ocx__params *out)
{
    if (!size_class) size_class = "all";
    if (forced_family == fam) {
        int own;
        OCX__FORWARD(class_default(ctx, fam, dtype, size_class, out, &own));
        memcpy(out->v, forced_values, sizeof out->v);
        out->origin = "forced";
    } else {
        ocx_status st = OCX_OK;
        pthread_mutex_lock(&ctx->lock);
        struct ocx__profiles *pr = profiles(ctx);
        const char *key = pr ? class_key(size_class) : NULL;
        const uint64_t device = key ? XXH3_64bits(&ctx->info, sizeof ctx->info) : 0;
        const unsigned state = key && fam->state ? fam->state() : 0;
        int m = 0;
        while (key && m < pr->nmemo &&
               !(pr->memo[m].fam == fam && pr->memo[m].dtype == dtype && pr->memo[m].size_class == key &&
                 pr->memo[m].device == device && pr->memo[m].state == state))
            m++;
        if (key && m < pr->nmemo) {
            *out = pr->memo[m].params;
        } else {
            st = lookup_sources(ctx, pr, fam, dtype, size_class, out);
            /* kept only where the family's state held through the lookup (another thread may
             * change OCX_VENDOR_PATHS meanwhile) */
            if (st == OCX_OK && key && pr->nmemo < MAX_MEMO && (!fam->state || fam->state() == state))
                pr->memo[pr->nmemo++] = (memo){device, state, fam, dtype, key, *out};
        }
        pthread_mutex_unlock(&ctx->lock);
        OCX__FORWARD(st);
        OCX__FORWARD(env_override(ctx, fam, dtype, out));
    }
    ocx__params_record(out, dtype, size_class);
    last_params.kernel[0] = '\0';
    return OCX_OK;
}

ocx_status ocx__params_get(const ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, ocx__params *out)
{
    return ocx__params_lookup((ocx_context *)ctx, fam, dtype, NULL, out);
}

void ocx__params_forced(const ocx__family **fam, int *values)
{
    *fam = forced_family;
    memcpy(values, forced_values, sizeof forced_values);
}

void ocx__params_force(const ocx__family *fam, const int *values)
{
    forced_family = values ? fam : NULL;
    if (values) memcpy(forced_values, values, sizeof forced_values);
}

int ocx__param(const ocx__params *p, const char *name)
{
    unsigned i = ocx__param_index(p->family, name);
    return i < p->family->nparams ? p->v[i] : 0;
}

/* ocx__append_define at buf's length o; returns the new length. */
static size_t append_define_at(char *buf, size_t o, size_t cap, const char *sep, const char *name, int v)
{
    char num[12], *d = num + sizeof num;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do *--d = (char)('0' + u % 10); while (u /= 10);
    if (v < 0) *--d = '-';
    const size_t ls = strlen(sep), ln = strlen(name), lv = (size_t)(num + sizeof num - d);
    if (o + ls + ln + 1 + lv >= cap) return o;
    char *p = buf + o;
    memcpy(p, sep, ls), p += ls;
    memcpy(p, name, ln), p += ln;
    *p++ = '=';
    memcpy(p, d, lv), p += lv;
    *p = '\0';
    return (size_t)(p - buf);
}

void ocx__append_define(char *buf, size_t cap, const char *sep, const char *name, int v)
{
    append_define_at(buf, strlen(buf), cap, sep, name, v);
}

void ocx__params_append(const ocx__family *fam, const int *v, const char *first, const char *rest, int kernel_only,
                        char *buf, size_t cap)
{
    size_t o = strlen(buf);
    int k = 0;
    for (unsigned i = 0; i < fam->nparams; i++)
        if (!kernel_only || !fam->params[i].host)
            o = append_define_at(buf, o, cap, k++ ? rest : first, fam->params[i].name, v[i]);
}

void ocx__params_defines(const ocx__params *p, char *buf, size_t cap)
{
    ocx__params_append(p->family, p->v, " -D", " -D", 1, buf, cap);
}

/* ---- other devices' profiles: where ocx-tune's search starts ------------------------------------ */

#define SEED_FILES 64             /* files read in each directory, at most */
#define SEED_FILE_BYTES (1 << 20) /* a profile is a few KiB */

/* The same vendor's first, then the nearest count of compute units, then by name (not by the order
 * a directory lists its files in). */
static int ranks_above(const ocx__seed *a, const ocx__seed *b)
{
    if (a->same_vendor != b->same_vendor) return a->same_vendor > b->same_vendor;
    if (a->cu_apart != b->cu_apart) return a->cu_apart < b->cu_apart;
    return strcmp(a->from, b->from) < 0;
}

/* seed into out[cap] (*n so far), ranked (ranks_above). Of two alike the higher ranked stays;
 * past cap the lowest ranked goes. */
static void add_seed(const ocx__seed *seed, unsigned nparams, ocx__seed *out, int cap, int *n)
{
    for (int i = 0; i < *n; i++)
        if (memcmp(out[i].v, seed->v, nparams * sizeof *seed->v) == 0) {
            if (!ranks_above(seed, &out[i])) return;
            memmove(out + i, out + i + 1, (size_t)(*n - i - 1) * sizeof *out);
            (*n)--;
            break;
        }
    int at = *n;
    while (at > 0 && ranks_above(seed, &out[at - 1])) at--;
    if (at >= cap) return;
    if (*n == cap) (*n)--;
    memmove(out + at + 1, out + at, (size_t)(*n - at) * sizeof *out);
    out[at] = *seed;
    (*n)++;
}

/* The devices (hashes of their names) a seed already came from: as in lookups, a device's entry in
 * an earlier directory hides the same entry in a later one. */
typedef struct seed_names {
    uint64_t hash[MAX_SOURCES * SEED_FILES];
    int count;
} seed_names;

/* The entry for (fam, dtype, class) of the profile at path, if it is one of this version's schema,
 * made on another device of this one's type that no earlier file gave a seed for, and this device
 * passes its checks (quietly). */
static void seed_from(ocx_context *ctx, struct ocx__profiles *quiet, const char *path, const ocx__family *fam,
                      ocx_dtype dtype, const char *size_class, seed_names *taken, ocx__seed *out, int cap, int *n)
{
    const char *why;
    FILE *f = ocx__open_regular(path, &why);
    if (!f) return;
    struct stat st;
    json_t *root = fstat(fileno(f), &st) == 0 && st.st_size <= SEED_FILE_BYTES
                       ? json_loadf(f, JSON_REJECT_DUPLICATES, NULL)
                       : NULL;
    fclose(f);
    json_t *schema = json_object_get(root, "schema"), *dev = json_object_get(root, "device");
    json_t *type = json_object_get(dev, "type"), *name = json_object_get(dev, "normalized_name");
    json_t *vendor = json_object_get(dev, "vendor"), *cu = json_object_get(dev, "compute_units");
    profile_src src = {(char *)path, json_object_get(root, "entries"), root, 0};
    ocx__seed seed;
    memset(&seed, 0, sizeof seed); /* v past the family's parameters: 0, as in every ocx__params */
    uint64_t h = json_is_string(name) ? XXH64(json_string_value(name), strlen(json_string_value(name)), 0) : 0;
    int known = 0;
    for (int i = 0; i < taken->count; i++) known |= taken->hash[i] == h;
    if (!known && json_is_integer(schema) && json_integer_value(schema) == PROFILE_SCHEMA && json_is_string(type) &&
        strcmp(json_string_value(type), ocx_device_type_name(ctx->info.type)) == 0 && json_is_string(name) &&
        strcmp(json_string_value(name), ctx->info.normalized_name) != 0 && json_is_array(src.entries) &&
        entry_from(ctx, quiet, &src, fam, dtype, size_class, seed.v)) {
        if (taken->count < MAX_SOURCES * SEED_FILES) taken->hash[taken->count++] = h;
        snprintf(seed.from, sizeof seed.from, "%s", json_string_value(name));
        seed.same_vendor = json_is_string(vendor) && strcmp(json_string_value(vendor), ctx->info.vendor) == 0;
        /* a count that is no count ranks last among its vendor's */
        const json_int_t units = json_is_integer(cu) ? json_integer_value(cu) : 0;
        const json_int_t own = (json_int_t)ctx->info.compute_units;
        seed.cu_apart = units < 1 || units > INT_MAX ? UINT_MAX : (unsigned)(units > own ? units - own : own - units);
        add_seed(&seed, fam->nparams, out, cap, n);
    }
    json_decref(root);
}

int ocx__profile_seeds(ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, const char *size_class,
                       ocx__seed *out, int cap)
{
    struct ocx__profiles quiet = {.quiet = 1}; /* another device's parameters this one cannot run: no fault */
    seed_names *taken = calloc(1, sizeof *taken);
    if (!taken) return 0;
    char own[300];
    snprintf(own, sizeof own, "%s.json", ctx->info.normalized_name);
    int n = 0;
    for (int which = 0; which < MAX_SOURCES && cap > 0; which++) {
        char dir[4096];
        DIR *d = dir_for(which, dir, sizeof dir) ? opendir(dir) : NULL;
        if (!d) continue;
        struct dirent *de;
        for (int files = 0; files < SEED_FILES && (de = readdir(d)) != NULL;) {
            const size_t len = strlen(de->d_name);
            if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0 ||
                strcmp(de->d_name, own) == 0)
                continue;
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            files++;
            seed_from(ctx, &quiet, path, fam, dtype, size_class, taken, out, cap, &n);
        }
        closedir(d);
    }
    free(taken);
    return n;
}

/* ---- public queries ---------------------------------------------------------------------------- */

ocx_status ocx_last_params(ocx_params_info *info)
{
    OCX__FAIL_IF(!info, OCX_ERR_INVALID_ARGUMENT, "ocx_last_params: info is NULL");
    OCX__FAIL_IF(!last_params.family, OCX_ERR_INVALID_ARGUMENT,
                 "ocx_last_params: this thread has run no parameterised operation yet");
    params_info(&last_params, info);
    return OCX_OK;
}

ocx_status ocx_context_params(ocx_context *ctx, const char *family, ocx_dtype dtype, const char *size_class,
                              ocx_params_info *info)
{
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF(!family || !info, OCX_ERR_INVALID_ARGUMENT, "ocx_context_params: family and info must not be NULL");
    OCX__FAIL_IF(dtype != OCX_F32 && dtype != OCX_F16 && dtype != OCX_F64, OCX_ERR_INVALID_ARGUMENT,
                 "ocx_context_params: dtype %d is not one the kernels take (f32, f16, f64)", (int)dtype);
    int known = !size_class;
    for (const char *const *c = ocx__size_classes; *c; c++) known |= size_class && !strcmp(size_class, *c);
    OCX__FAIL_IF(!known, OCX_ERR_INVALID_ARGUMENT,
                 "ocx_context_params: no size class '%s' (all, small, medium, large, short_k)", size_class);
    for (const ocx__family *const *f = ocx__families; *f; f++) {
        if (strcmp((*f)->name, family) != 0) continue;
        const char *cls = size_class ? size_class : "all";
        OCX__FAIL_IF(!ocx__family_uses(*f, dtype, cls), OCX_ERR_INVALID_ARGUMENT,
                     "ocx_context_params: %s never looks up %s parameters of size class '%s'", family,
                     ocx_dtype_name(dtype), cls);
        OCX__FORWARD(ocx__check_dtype_supported(ctx, dtype, "ocx_context_params"));
        ocx__params_rec saved;
        ocx__params_saved(&saved);
        ocx__params p;
        ocx_status st = ocx__params_lookup(ctx, *f, dtype, size_class, &p);
        if (st == OCX_OK) params_info(&last_params, info);
        ocx__params_restore(&saved);
        return st;
    }
    return ocx__error(OCX_ERR_INVALID_ARGUMENT, "ocx_context_params: no kernel family '%s'", family);
}

ocx_status ocx_context_profile(ocx_context *ctx, size_t index, ocx_profile_info *info)
{
    OCX__FORWARD(ocx__check_context(ctx));
    OCX__FAIL_IF(!info, OCX_ERR_INVALID_ARGUMENT, "ocx_context_profile: info is NULL");
    pthread_mutex_lock(&ctx->lock);
    struct ocx__profiles *pr = profiles(ctx);
    if (!pr || index >= (size_t)pr->count) {
        pthread_mutex_unlock(&ctx->lock);
        return ocx__error(OCX_ERR_IO, "ocx_context_profile: no profile %zu for '%s'", index,
                          ctx->info.normalized_name);
    }
    const profile_src *s = &pr->src[index];
    memset(info, 0, sizeof *info);
    snprintf(info->path, sizeof info->path, "%s", s->path);
    info->stale = s->stale;
    for (size_t i = 0; i < json_array_size(s->entries); i++) info->entries += (size_t)entry_usable(ctx, pr, s, i, 1);
    json_t *device = json_object_get(s->root, "device");
    json_t *drv = json_object_get(device, "driver_version"), *date = json_object_get(s->root, "date");
    snprintf(info->driver_version, sizeof info->driver_version, "%s", json_is_string(drv) ? json_string_value(drv) : "");
    snprintf(info->date, sizeof info->date, "%s", json_is_string(date) ? json_string_value(date) : "");
    json_t *cu = json_object_get(device, "compute_units");
    if (json_is_integer(cu) && json_integer_value(cu) > 0 && json_integer_value(cu) <= UINT_MAX)
        info->compute_units = (unsigned)json_integer_value(cu);
    pthread_mutex_unlock(&ctx->lock);
    return OCX_OK;
}

/* ---- ocx-tune --resume --------------------------------------------------------------------------- */

ocx_status ocx__profile_resumable(ocx_context *ctx, const char *path, struct json_t **out)
{
    *out = NULL;
    const char *why;
    FILE *f = ocx__open_regular(path, &why); /* there but not readable: an error, not a fresh start over it */
    if (!f && errno == ENOENT) return OCX_OK;
    OCX__FAIL_IF(!f, OCX_ERR_IO, "ocx_tune: cannot read %s to resume it: %s", path, why);
    fclose(f);
    struct ocx__profiles *pr = calloc(1, sizeof *pr);
    OCX__FAIL_IF(!pr, OCX_ERR_OUT_OF_MEMORY, "ocx_tune: out of host memory");
    pr->resuming = 1;
    profile_src src = {0};
    if (!load_file(pr, &ctx->info, path, &src)) { /* refused whole (warned): kept, not replaced */
        release_warnings(pr);
        return ocx__error(OCX_ERR_IO, "ocx_tune: %s is not a profile this version reads for this device (see the "
                          "warning); move it away, or run without --resume to replace it", path);
    }
    json_t *kept = json_array();
    for (size_t i = 0; i < json_array_size(src.entries); i++)
        if (entry_usable(ctx, pr, &src, i, 0)) json_array_append(kept, json_array_get(src.entries, i));
    json_object_set_new(src.root, "entries", kept);
    *out = src.root;
    free(src.path);
    release_warnings(pr);
    return OCX_OK;
}

/* ---- fuzzing ----------------------------------------------------------------------------------- */

int ocx__profile_fuzz(const char *data, size_t size, const ocx_device_info *dev)
{
    /* A context that is only a device description: lookups never touch OpenCL. */
    static ocx_context ctx;
    static int ready;
    if (!ready) {
        pthread_mutex_init(&ctx.lock, NULL);
        ready = 1;
    }
    ctx.info = *dev;
    setenv("OCX_QUIET", "1", 1);
    struct ocx__profiles *pr = calloc(1, sizeof *pr);
    if (!pr) return 0;
    json_error_t jerr;
    json_t *root = json_loadb(data, size, JSON_REJECT_DUPLICATES, &jerr);
    if (root && check_root(pr, dev, "fuzz.json", root, &pr->src[0])) pr->count = 1;
    ctx.profiles = pr;
    static const ocx_dtype dts[] = {OCX_F32, OCX_F16, OCX_F64};
    int used = 0;
    for (const ocx__family *const *f = ocx__families; *f; f++)
        for (int d = 0; d < 3; d++)
            for (const char *const *c = ocx__size_classes; *c; c++) {
                ocx__params p;
                if (ocx__params_lookup(&ctx, *f, dts[d], *c, &p) != OCX_OK) abort();
                /* Whatever the file said, the parameters must be legal on the device. */
                if (ocx__params_check(*f, p.v, dev, dts[d])) abort();
                used += p.origin != NULL && strcmp(p.origin, "built-in") != 0;
            }
    ocx__profiles_release(&ctx);
    return used;
}
