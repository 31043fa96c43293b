/* program.c — program assembly and build, build logs, the in-memory program cache per context, and
 * the use of the on-disk binary cache (cache.c). */
#include "config.h"
#include "ocx_internal.h"

#include <stdlib.h>
#include <string.h>

/* Options every ocx program is built with, before the operation's own -D defines; a program whose
 * own options start with another -cl-std (reduce.c: OpenCL C's atomics for FUSE) takes that one. */
#define OCX__BASE_OPTIONS "-cl-std=CL1.2"
static const char *base_options(const char *options)
{
    return options && strncmp(options, "-cl-std=", 8) == 0 ? "" : OCX__BASE_OPTIONS;
}

typedef struct kernel_entry {
    char *name;
    cl_kernel kernel;
} kernel_entry;

struct ocx__program {
    ocx__program *next;
    const ocx__source *source;
    char *options; /* ocx's own */
    char *extra;   /* OCX_BUILD_OPTIONS when it was built */
    cl_program program;
    kernel_entry *kernels;
    size_t nkernels;
};

const ocx__source *ocx__source_find(const char *name)
{
    for (size_t i = 0; i < ocx__source_count; i++)
        if (strcmp(ocx__sources[i].name, name) == 0) return &ocx__sources[i];
    return NULL;
}

static char *build_log(cl_program prog, cl_device_id dev)
{
    size_t size = 0;
    if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS) return NULL;
    char *log = malloc(size + 1);
    if (!log) return NULL;
    if (clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, size, log, NULL) != CL_SUCCESS) size = 0;
    log[size] = '\0';
    return log;
}

/* Builds `prog`; on failure releases it and records the build log in the error message. */
static ocx_status build(ocx_context *ctx, cl_program prog, const char *options, const char *what)
{
    cl_int err = clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL);
    if (err == CL_SUCCESS) return OCX_OK;
    char *log = build_log(prog, ctx->device);
    clReleaseProgram(prog);
    ocx_status st = ocx__error(err == CL_BUILD_PROGRAM_FAILURE ? OCX_ERR_BUILD : OCX_ERR_OPENCL,
                               "building %s with options '%s' failed: %s (%d); build log:\n%s", what, options,
                               ocx__cl_error_name(err), (int)err, log ? log : "(none)");
    free(log);
    return st;
}

/* PoCL's compiler prints its warnings on stderr, beside the build log ("3 warnings generated.": on
 * CPUs without AVX-512, the 16-wide vectors of the CPU defaults change the ABI), where an
 * application's users would see them: there every build takes -w (OpenCL 1.2), unless
 * OCX_BUILD_LOG asks for the compiler's report. */
static const char *quiet(const ocx_context *ctx)
{
    return ocx__contains_nocase(ctx->info.platform_name, "portable computing language") && !ocx__env_flag("OCX_BUILD_LOG")
               ? " -w"
               : "";
}

ocx_status ocx__program_build_text(ocx_context *ctx, const char *text, const char *options, cl_program *out)
{
    cl_int err;
    *out = NULL;
    cl_program prog = clCreateProgramWithSource(ctx->context, 1, &text, NULL, &err);
    if (err != CL_SUCCESS) return ocx__cl_error(err, "clCreateProgramWithSource");
    char opts[4096];
    snprintf(opts, sizeof opts, "%s%s %s", base_options(options), quiet(ctx), options ? options : "");
    OCX__FORWARD(build(ctx, prog, opts, "a probe program"));
    *out = prog;
    return OCX_OK;
}

/* Programs built with -DOCX_SM90A=1 (cl/gemm_nv_mma.cl with WGMMA) use instructions of NVIDIA's
 * architecture-specific target sm_90a (wgmma), which OpenCL's compiler does not target: its PTX says
 * sm_90, whose assembler rejects them. Their source writes each such instruction as a PTX comment
 * marked "// OCX90A " (the front end binds its operands and passes the text through unread). The
 * program built from source gives the driver's PTX back as its binary; that PTX, with the markers
 * removed and the target raised to sm_90a, is built again and replaces *prog (and is what the disk
 * cache keeps). Measured on an H200 with driver 580. Where this fails, the tensor-core probe
 * (gemm_nv.c) turns wgmma off for the device and keeps mma.sync. */
#define SM90A_MARK "// OCX90A "
static ocx_status raise_to_sm90a(ocx_context *ctx, cl_program *prog, const char *opts, const char *what)
{
    if (ocx__env_flag("OCX_TEST_NO_SM90A")) { /* tests: a driver that does not take sm_90a */
        clReleaseProgram(*prog);
        *prog = NULL;
        return ocx__error(OCX_ERR_BUILD, "%s: sm_90a refused (OCX_TEST_NO_SM90A)", what);
    }
    size_t size = 0;
    cl_int err = clGetProgramInfo(*prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    if (err != CL_SUCCESS || size == 0) {
        clReleaseProgram(*prog);
        *prog = NULL;
        return ocx__error(OCX_ERR_BUILD, "%s: the driver gave no PTX to raise to sm_90a (%s)", what,
                          err != CL_SUCCESS ? ocx__cl_error_name(err) : "an empty binary");
    }
    char *ptx = malloc(size + 1), *out = malloc(size + 2);
    if (ptx && out) err = clGetProgramInfo(*prog, CL_PROGRAM_BINARIES, sizeof ptx, &ptx, NULL);
    clReleaseProgram(*prog);
    *prog = NULL;
    ocx_status st = OCX_OK;
    if (!ptx || !out)
        st = ocx__error(OCX_ERR_OUT_OF_MEMORY, "program: out of host memory");
    else if (err != CL_SUCCESS)
        st = ocx__cl_error(err, "clGetProgramInfo(CL_PROGRAM_BINARIES)");
    if (st == OCX_OK) {
        ptx[size] = '\0';
        const size_t ml = strlen(SM90A_MARK), tl = strlen(".target sm_90");
        size_t o = 0;
        int raised = 0;
        for (const char *c = ptx; *c;) {
            if (strncmp(c, SM90A_MARK, ml) == 0) {
                c += ml;
            } else if (!raised && strncmp(c, ".target sm_90", tl) == 0 && c[tl] && strchr(",\n a", c[tl])) {
                memcpy(out + o, ".target sm_90a", tl + 1); /* a driver that targets sm_90a already: as it is */
                o += tl + 1, c += tl + (c[tl] == 'a'), raised = 1;
            } else {
                out[o++] = *c++;
            }
        }
        out[o] = '\0';
        if (!raised) st = ocx__error(OCX_ERR_BUILD, "%s: the driver's binary is not PTX for sm_90", what);
    }
    if (st == OCX_OK) {
        const unsigned char *bin = (const unsigned char *)out;
        size_t len = strlen(out);
        cl_int status = CL_SUCCESS;
        cl_program p = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &len, &bin, &status, &err);
        if (err == CL_SUCCESS && status != CL_SUCCESS) err = status;
        if (err != CL_SUCCESS) {
            if (p) clReleaseProgram(p);
            st = ocx__cl_error(err, "clCreateProgramWithBinary(sm_90a PTX)");
        } else {
            char raised[160];
            snprintf(raised, sizeof raised, "%s raised to sm_90a", what);
            st = build(ctx, p, opts, raised);
            if (st == OCX_OK) *prog = p;
        }
    }
    free(ptx);
    free(out);
    return st;
}

/* Programs this thread builds are not written to the disk cache (the tuner's candidates: hundreds
 * of binaries no caller asks for, and on PoCL fetching one compiles every kernel in it again). */
static _Thread_local int no_store;

int ocx__program_no_store(int on)
{
    const int was = no_store;
    no_store = on;
    return was;
}

/* Stores the program's binary; 1 when written. */
static int store_binary_(cl_program prog, const char *key)
{
    int written = 0;
    size_t size = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0)
        return 0;
    unsigned char *bin = malloc(size);
    if (!bin) return 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS &&
        ocx__cache_store(key, bin, size) == OCX_OK)
        written = 1;
    free(bin);
    return written;
}

/* Tries the disk cache; NULL when there is no usable entry (a bad one is deleted and counted). */
static cl_program load_binary_(ocx_context *ctx, const char *key, const char *options, int *rejected)
{
    ocx__cache_blob blob;
    if (ocx__cache_load(key, &blob, rejected) != OCX_OK) return NULL;
    cl_int err, status = CL_SUCCESS;
    const unsigned char *bin = blob.data;
    cl_program prog = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &blob.size, &bin, &status, &err);
    free(blob.data);
    blob.data = NULL; /* its file's identity stays, for ocx__cache_remove */
    if (err == CL_SUCCESS && status == CL_SUCCESS)
        err = clBuildProgram(prog, 1, &ctx->device, options, NULL, NULL);
    else if (err == CL_SUCCESS)
        err = status;
    if (err != CL_SUCCESS) {
        if (prog) clReleaseProgram(prog);
        char path[4200];
        ocx__cache_path(key, path, sizeof path);
        /* Out of memory says nothing of the file: it stays for the next load. */
        if (ocx__cl_out_of_memory(err)) {
            ocx__warn("binary cache: %s: could not be loaded (%s); kept, building from source", path,
                      ocx__cl_error_name(err));
            return NULL;
        }
        ocx__warn("binary cache: %s: the driver rejected the binary (%s); deleted, rebuilding from source", path,
                  ocx__cl_error_name(err));
        ocx__cache_remove(key, &blob);
        *rejected = 1;
        return NULL;
    }
    return prog;
}

/* The disk cache is best effort: a miss, a rejected file or a failed write is no failure of the
 * call, so the two leave ocx_last_error() as it was (it holds the last failed call's message). */
static int store_binary(cl_program prog, const char *key)
{
    char *saved = ocx__error_save();
    const int written = store_binary_(prog, key);
    ocx__error_restore(saved);
    return written;
}

static cl_program load_binary(ocx_context *ctx, const char *key, const char *options, int *rejected)
{
    char *saved = ocx__error_save();
    cl_program prog = load_binary_(ctx, key, options, rejected);
    ocx__error_restore(saved);
    return prog;
}

static ocx__program *program_find(ocx_context *ctx, const char *source_name, const char *options, const char *extra)
{
    for (ocx__program *p = ctx->programs; p; p = p->next)
        if (strcmp(p->source->name, source_name) == 0 && strcmp(p->options, options) == 0 &&
            strcmp(p->extra, extra) == 0)
            return p;
    return NULL;
}

/* 1 when `options` (ocx's own) define the macro name[0..len). */
static int defines_macro(const char *options, const char *name, size_t len)
{
    for (const char *o = options; (o = strstr(o, "-D")) != NULL; o += 2)
        if ((o == options || o[-1] == ' ') && strncmp(o + 2, name, len) == 0 &&
            (o[2 + len] == '=' || o[2 + len] == ' ' || o[2 + len] == '\0'))
            return 1;
    return 0;
}

/* OCX_BUILD_OPTIONS as it may be appended to `options` (ocx's own), else an error naming it: an
 * option of -D, -U or -I without its argument (PoCL 3.1's clBuildProgram crashed on a trailing
 * "-D"), or a macro that ocx defines for this program (-DVW=1 had run the vector kernels with
 * another vector width than the host's geometry, and their results were wrong, silently: PoCL's
 * builds take -w). Kernel parameters are OCX_<FAMILY>_PARAMS's to set. */
static ocx_status check_extra_options(const char *extra, const char *options)
{
    static const char space[] = " \t\n";
    for (const char *p = extra; *(p += strspn(p, space));) {
        const char *word = p;
        const size_t len = strcspn(word, space);
        p += len;
        if (len < 2 || word[0] != '-' || !strchr("DUI", word[1])) continue;
        const char *arg = word + 2;
        size_t alen = len - 2;
        if (!alen) { /* "-D NAME": the next word */
            arg = p + strspn(p, space);
            alen = strcspn(arg, space);
            OCX__FAIL_IF(!alen, OCX_ERR_INVALID_ARGUMENT, "OCX_BUILD_OPTIONS='%s': %.2s without its argument", extra,
                         word);
            p = arg + alen;
        }
        size_t nlen = strcspn(arg, "=");
        if (nlen > alen) nlen = alen;
        OCX__FAIL_IF(word[1] != 'I' && defines_macro(options, arg, nlen), OCX_ERR_INVALID_ARGUMENT,
                     "OCX_BUILD_OPTIONS='%s' changes %.*s, which ocx defines for this kernel (kernel parameters are "
                     "OCX_<FAMILY>_PARAMS's to set)", extra, (int)nlen, arg);
    }
    return OCX_OK;
}

/* Builds (or loads from the disk cache) a program of `src` with `options`; no lock held, so other
 * threads keep launching while a program compiles. Counters are added to *stats. */
static ocx_status program_build(ocx_context *ctx, const ocx__source *src, const char *options, const char *extra,
                                cl_program *out, ocx_context_stats *stats)
{
    *out = NULL;
    /* OCX_BUILD_OPTIONS (developers: e.g. -cl-nv-verbose) is appended, and so is part of the key. */
    OCX__FORWARD(check_extra_options(extra, options));
    const char *q = quiet(ctx);
    const char *base = base_options(options);
    char *opts = malloc(strlen(base) + strlen(q) + strlen(options) + strlen(extra) + 3);
    OCX__FAIL_IF(!opts, OCX_ERR_OUT_OF_MEMORY, "program: out of host memory");
    sprintf(opts, "%s%s %s%s%s", base, q, options, *extra ? " " : "", extra);
    size_t klen = strlen(ctx->device_key) + strlen(src->name) + strlen(src->hash) + strlen(opts) + 64;
    char *key = malloc(klen);
    if (!key) {
        free(opts);
        return ocx__error(OCX_ERR_OUT_OF_MEMORY, "program: out of host memory");
    }
    snprintf(key, klen, "%ssource=%s %s\noptions=%s\n", ctx->device_key, src->name, src->hash, opts);

    ocx_status st = OCX_OK;
    int rejected = 0;
    /* OCX_TEST_NO_SM90A must reach raise_to_sm90a, not a raised binary from the cache; OCX_BUILD_LOG
     * asks for a log, which only a build from source has (a cached program had printed nothing) */
    const int from_source = (ocx__env_flag("OCX_TEST_NO_SM90A") && strstr(opts, "-DOCX_SM90A=1")) ||
                            ocx__env_flag("OCX_BUILD_LOG");
    cl_program prog = from_source ? NULL : load_binary(ctx, key, opts, &rejected);
    stats->disk_cache_rejected += (uint64_t)rejected;
    if (prog) {
        stats->programs_from_disk++;
    } else {
        cl_int err;
        prog = clCreateProgramWithSource(ctx->context, 1, (const char **)&src->text, NULL, &err);
        if (err != CL_SUCCESS) {
            st = ocx__cl_error(err, "clCreateProgramWithSource");
            prog = NULL;
        } else {
            char what[128];
            snprintf(what, sizeof what, "cl/%s.cl", src->name);
            st = build(ctx, prog, opts, what);
            /* developers: the compiler's report, of the source's build (a program raised to sm_90a is
             * rebuilt from PTX, whose log is empty; NVIDIA's compiler prints only "N warnings
             * generated." on stderr, the warnings themselves being in this log) */
            if (st == OCX_OK && ocx__env_flag("OCX_BUILD_LOG")) {
                char *log = build_log(prog, ctx->device);
                fprintf(stderr, "ocx: build log of %s with '%s':\n%s\n", what, opts, log ? log : "(none)");
                free(log);
            }
            if (st == OCX_OK && strstr(opts, "-DOCX_SM90A=1")) st = raise_to_sm90a(ctx, &prog, opts, what);
            if (st == OCX_OK) {
                stats->programs_compiled++;
                if (!no_store) stats->disk_cache_writes += (uint64_t)store_binary(prog, key);
            } else {
                prog = NULL;
            }
        }
    }
    free(key);
    free(opts);
    *out = prog;
    return st;
}

static void add_stats(ocx_context_stats *to, const ocx_context_stats *from)
{
    to->programs_compiled += from->programs_compiled;
    to->programs_from_disk += from->programs_from_disk;
    to->programs_from_memory += from->programs_from_memory;
    to->disk_cache_writes += from->disk_cache_writes;
    to->disk_cache_rejected += from->disk_cache_rejected;
}

/* Releases an entry and all it holds (its kernels, its program); NULL, for the caller's pointer. */
static ocx__program *program_free(ocx__program *p)
{
    for (size_t i = 0; i < p->nkernels; i++) {
        clReleaseKernel(p->kernels[i].kernel);
        free(p->kernels[i].name);
    }
    free(p->kernels);
    if (p->program) clReleaseProgram(p->program);
    free(p->options);
    free(p->extra);
    free(p);
    return NULL;
}

/* Finds the program in the context's cache, else builds it outside the lock and inserts it (a
 * program another thread inserted meanwhile wins; ours is released). */
static ocx_status program_get(ocx_context *ctx, const char *source_name, const char *options, ocx__program **out)
{
    /* read at every use, as the library's other variables are: a program built before it was set
     * (or with another value) is not the one asked for */
    const char *extra = getenv("OCX_BUILD_OPTIONS");
    if (!extra) extra = "";
    pthread_mutex_lock(&ctx->lock);
    ocx__program *p = program_find(ctx, source_name, options, extra);
    if (p) ctx->stats.programs_from_memory++;
    pthread_mutex_unlock(&ctx->lock);
    if (p) {
        *out = p;
        return OCX_OK;
    }
    const ocx__source *src = ocx__source_find(source_name);
    OCX__FAIL_IF(!src, OCX_ERR_INTERNAL, "no kernel source named '%s'", source_name);
    ocx_context_stats stats = {0};
    cl_program prog;
    ocx_status st = program_build(ctx, src, options, extra, &prog, &stats);
    ocx__program *fresh = NULL;
    if (st == OCX_OK) {
        fresh = calloc(1, sizeof *fresh);
        if (!fresh) {
            clReleaseProgram(prog);
        } else {
            fresh->source = src;
            fresh->program = prog;
            fresh->options = strdup(options);
            fresh->extra = strdup(extra);
            if (!fresh->options || !fresh->extra) fresh = program_free(fresh);
        }
        if (!fresh) st = ocx__error(OCX_ERR_OUT_OF_MEMORY, "program: out of host memory");
    }
    pthread_mutex_lock(&ctx->lock);
    add_stats(&ctx->stats, &stats);
    if (fresh) {
        p = program_find(ctx, source_name, options, extra);
        if (p) { /* another thread was faster */
            program_free(fresh);
        } else {
            fresh->next = ctx->programs;
            ctx->programs = p = fresh;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    if (st == OCX_OK) *out = p;
    return st;
}

ocx_status ocx__kernel_get(ocx_context *ctx, const char *source, const char *options, const char *kernel,
                           cl_kernel *out)
{
    ocx__program *p = NULL;
    OCX__FORWARD(program_get(ctx, source, options ? options : "", &p));
    ocx_status st = OCX_OK;
    pthread_mutex_lock(&ctx->lock);
    for (size_t i = 0; i < p->nkernels; i++)
        if (strcmp(p->kernels[i].name, kernel) == 0) {
            *out = p->kernels[i].kernel;
            pthread_mutex_unlock(&ctx->lock);
            return OCX_OK;
        }
    cl_int err;
    cl_kernel k = clCreateKernel(p->program, kernel, &err);
    kernel_entry *grown = NULL;
    char *name = NULL;
    if (err != CL_SUCCESS) {
        st = ocx__cl_error(err, kernel);
    } else if (!(grown = realloc(p->kernels, (p->nkernels + 1) * sizeof *grown)) || !(name = strdup(kernel))) {
        if (grown) p->kernels = grown;
        clReleaseKernel(k);
        st = ocx__error(OCX_ERR_OUT_OF_MEMORY, "program: out of host memory");
    } else {
        p->kernels = grown;
        p->kernels[p->nkernels++] = (kernel_entry){name, k};
        *out = k;
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

void ocx__programs_release(ocx_context *ctx)
{
    ocx__program *p = ctx->programs;
    while (p) {
        ocx__program *next = p->next;
        program_free(p);
        p = next;
    }
    ctx->programs = NULL;
}
