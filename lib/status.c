/* status.c — status names and messages, the per-thread detailed error, warnings. */
#include "config.h"
#include "ocx_internal.h"

#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define OCX__LAST_ERROR_CAP 16384
static _Thread_local char last_error[OCX__LAST_ERROR_CAP];

unsigned ocx_version_number(void) { return OCX_VERSION_NUMBER; }
const char *ocx_version_string(void) { return OCX_VERSION_STRING; }

const char *ocx_status_name(ocx_status status)
{
    switch (status) {
#define OCX_X_NAME(sym, val, name, msg)                                                            \
    case sym:                                                                                      \
        return name;
        OCX_STATUS_LIST(OCX_X_NAME)
#undef OCX_X_NAME
    }
    return "unknown-status";
}

const char *ocx_status_message(ocx_status status)
{
    switch (status) {
#define OCX_X_MSG(sym, val, name, msg)                                                             \
    case sym:                                                                                      \
        return msg;
        OCX_STATUS_LIST(OCX_X_MSG)
#undef OCX_X_MSG
    }
    return "unknown status code";
}

const char *ocx_last_error(void) { return last_error; }

ocx_status ocx__error(ocx_status status, const char *fmt, ...)
{
    int n = snprintf(last_error, sizeof last_error, "%s: ", ocx_status_name(status));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
    va_end(ap);
    return status;
}

char *ocx__error_save(void) { return strdup(last_error); }

void ocx__error_restore(char *saved)
{
    if (saved) memcpy(last_error, saved, strlen(saved) + 1); /* a copy of last_error: it fits */
    free(saved);
}

const char *ocx__cl_error_name(cl_int err)
{
    switch (err) {
#define E(x) case x: return #x;
        E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
        E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_BUILD_PROGRAM_FAILURE)
        E(CL_MAP_FAILURE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) E(CL_COMPILE_PROGRAM_FAILURE)
        E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE) E(CL_INVALID_VALUE)
        E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
        E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
        E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
        E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
        E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
        E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
        E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
        E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
        E(CL_INVALID_OPERATION) E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_GLOBAL_WORK_SIZE)
        E(CL_INVALID_PROPERTY)
#undef E
    }
    return "CL_UNKNOWN_ERROR";
}

int ocx__cl_out_of_memory(cl_int err)
{
    return err == CL_OUT_OF_HOST_MEMORY || err == CL_OUT_OF_RESOURCES || err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
           err == CL_INVALID_BUFFER_SIZE;
}

ocx_status ocx__cl_error(cl_int err, const char *what)
{
    const ocx_status st = ocx__cl_out_of_memory(err) ? OCX_ERR_OUT_OF_MEMORY : OCX_ERR_OPENCL;
    return ocx__error(st, "%s: %s (%d)", what, ocx__cl_error_name(err), (int)err);
}

/* The warning handler and its argument (ocx_set_warning_handler). Warnings hold the lock for
 * reading while they call the handler (several at once), a new handler takes it for writing: once
 * ocx_set_warning_handler returns, no call of the one it replaced is still running, so its `user`
 * may be freed. */
static pthread_rwlock_t warn_lock = PTHREAD_RWLOCK_INITIALIZER;
static ocx_warning_fn warn_fn;
static void *warn_user;

void ocx_set_warning_handler(ocx_warning_fn handler, void *user)
{
    pthread_rwlock_wrlock(&warn_lock);
    warn_fn = handler, warn_user = user;
    pthread_rwlock_unlock(&warn_lock);
}

/* Set while env_warn_once says that OCX_QUIET's own value is none of the words: that one warning
 * is given (once a process) though the value is then taken as on; quiet about itself, a mistyped
 * OCX_QUIET=nope had silenced every warning without a word. */
static _Thread_local int warning_of_quiet;

void ocx__warn(const char *fmt, ...)
{
    if (!warning_of_quiet && ocx__env_flag("OCX_QUIET")) return;
    char small[1024], *msg = small;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL) { /* paths run to 4 KiB */
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (!msg) msg = small; /* out of memory: the message cut */
    pthread_rwlock_rdlock(&warn_lock);
    if (warn_fn)
        warn_fn(msg, warn_user);
    else
        fprintf(stderr, "ocx: warning: %s\n", msg);
    pthread_rwlock_unlock(&warn_lock);
    if (msg != small) free(msg);
}

/* Warns about a variable's value it cannot take, once per variable and value (the variables are
 * read at every use, and a user fixing one should still hear about the next), for the first 16
 * such pairs; after those, silently. The pair is noted before the warning, which reads OCX_QUIET
 * through ocx__env_flag: a bad OCX_QUIET comes back here once and finds itself noted (its own
 * warning is given: warning_of_quiet). */
static void env_warn_once(const char *name, const char *value, const char *what)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char warned[16][160];
    static int n;
    char key[160];
    snprintf(key, sizeof key, "%s=%s", name, value);
    int seen = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n && !seen; i++) seen = strcmp(warned[i], key) == 0;
    if (!seen && n < (int)(sizeof warned / sizeof *warned))
        memcpy(warned[n++], key, sizeof key);
    else
        seen = 1; /* (a full table: warning again at every read, and a bad OCX_QUIET recursing) */
    pthread_mutex_unlock(&lock);
    if (seen) return;
    warning_of_quiet = strcmp(name, "OCX_QUIET") == 0;
    ocx__warn("%s=%s %s", name, value, what);
    warning_of_quiet = 0;
}

unsigned long ocx__env_ulong(const char *name, unsigned long def)
{
    const char *s = getenv(name);
    if (!s || !*s) return def;
    char *end = NULL;
    errno = 0;
    /* decimal, or hexadecimal after 0x (not octal: "010" is ten) */
    const char *digits = s + strspn(s, " \t");
    unsigned long v = strtoul(s, &end, digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10);
    /* strtoul takes "-1" as ULONG_MAX: a sign is refused with the rest; spaces around the number
     * do not count (strtoul skips those before it) */
    if (end) end += strspn(end, " \t");
    if (strchr(s, '-') || !end || end == digits || *end != '\0') {
        env_warn_once(name, s, "is not a whole number (0 or more); ignored");
        return def;
    }
    if (errno == ERANGE) {
        env_warn_once(name, s, "is out of range; ignored");
        return def;
    }
    return v;
}

ocx_status ocx__path_out(char *out, size_t cap, const char *who, const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    OCX__FAIL_IF(n < 0 || (size_t)n >= sizeof buf, OCX_ERR_INVALID_ARGUMENT, "%s: the path is too long", who);
    OCX__FAIL_IF((size_t)n >= cap, OCX_ERR_INVALID_ARGUMENT, "%s: %zu bytes are too few for the path", who, cap);
    memcpy(out, buf, (size_t)n + 1);
    return OCX_OK;
}

unsigned long ocx__env_ulong_upto(const char *name, unsigned long def, unsigned long max)
{
    unsigned long v = ocx__env_ulong(name, def);
    if (v <= max) return v;
    char what[64];
    snprintf(what, sizeof what, "is above %lu; ignored", max);
    env_warn_once(name, getenv(name), what);
    return def;
}

int ocx__home_dir(char *out, size_t cap)
{
    const char *home = getenv("HOME");
    char buf[4096];
    struct passwd pw, *found = NULL;
    if (home && home[0] != '/') home = NULL; /* relative (or empty): as unset, as a relative XDG_* is ignored */
    if (!home && getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found)
        home = found->pw_dir;
    out[0] = '\0';
    if (home && *home) snprintf(out, cap, "%s", home);
    return out[0] != '\0';
}

int ocx__xdg_dir(const char *var, const char *fallback, const char *sub, char *out, size_t cap)
{
    const char *xdg = getenv(var);
    char home[4096];
    int n = -1;
    if (xdg && xdg[0] == '/')
        n = snprintf(out, cap, "%s/%s", xdg, sub);
    else if (ocx__home_dir(home, sizeof home))
        n = snprintf(out, cap, "%s/%s/%s", home, fallback, sub);
    if (n < 0 || (size_t)n >= cap) out[0] = '\0'; /* none, or cut short: not a directory to use */
    return out[0] != '\0';
}

/* Spaces and tabs around the word do not count ("0 " had been taken as on: OCX_CACHE="0 " kept
 * the cache, OCX_QUIET="0 " silenced every warning). */
int ocx__switch_word(const char *s)
{
    static const char *const on[] = {"1", "yes", "on", "true"}, *const off[] = {"0", "no", "off", "false"};
    s += strspn(s, " \t");
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    for (int i = 0; i < 4; i++) {
        if (strlen(on[i]) == len && strncasecmp(s, on[i], len) == 0) return 1;
        if (strlen(off[i]) == len && strncasecmp(s, off[i], len) == 0) return 0;
    }
    return -1;
}

int ocx__env_flag(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s) return 0;
    const int w = ocx__switch_word(s);
    if (w < 0) env_warn_once(name, s, "is none of 1, yes, on, true, 0, no, off, false; taken as on");
    return w != 0;
}

size_t ocx__round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

double ocx__now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int ocx__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ocx__median(double *v, int n)
{
    if (n <= 0) return -1;
    qsort(v, (size_t)n, sizeof *v, ocx__cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
size_t ocx__div_up(size_t x, size_t m) { return (x + m - 1) / m; }

size_t ocx_dtype_size(ocx_dtype dtype)
{
    static const size_t sizes[OCX_DTYPE_COUNT] = {4, 2, 8, 4, 4};
    return ((unsigned)dtype < OCX_DTYPE_COUNT) ? sizes[dtype] : 0;
}

const char *ocx_dtype_name(ocx_dtype dtype)
{
    static const char *names[OCX_DTYPE_COUNT] = {"f32", "f16", "f64", "i32", "u32"};
    return ((unsigned)dtype < OCX_DTYPE_COUNT) ? names[dtype] : "unknown";
}

const char *ocx_device_type_name(ocx_device_type type)
{
    static const char *names[] = {"other", "gpu", "cpu", "accelerator"};
    return (unsigned)type < sizeof names / sizeof *names ? names[type] : "other";
}
