/* ocx-tune — measures this device and writes a profile that libocx picks up at run time.
 *   ocx-tune [--device SPEC] [--kernels gemm,gemm_mma,reduce,vector] [--dtypes f32,f16] [--budget S]
 *            [--classes all,small,medium,large,short_k] [--out FILE] [--quick] [--resume] [--seed N]
 * Ctrl-C ends the run early and keeps the entries finished so far (the one in progress is left for
 * --resume, which continues a partial file and tunes again any entry the library would refuse).
 *
 * The tuning runs in a child process, watched by this one. A driver's compiler that aborts ends the
 * process that called it (PoCL 3.1's did in 2 of 27 `--quick` runs on the CI machine type, with an
 * assertion in its ParallelRegion pass during the GEMM entry); the profile already holds every entry
 * finished before (it is written after each one), so the run continues from it, as --resume would,
 * with another seed (another candidate order) in the time left, at most RETRIES times. This process
 * never calls OpenCL: a driver's threads do not survive a fork. OCX_TUNE_ABORT_AT=N (tests) makes
 * the first child abort once entry N is reported done. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ocx.h"
#include "tool.h"

/* Seconds kept back from --budget for releasing the device at the end (NVIDIA: 0.1-0.5 s). */
#define TEARDOWN_S 1.0
/* Runs after a crash, and the least time left that one is started with. */
#define RETRIES 2
#define RETRY_MIN_S 3.0

static volatile int stop_flag;
static volatile sig_atomic_t end_signal; /* SIGTERM or SIGHUP that reached the watcher */
static volatile pid_t child_pid;         /* the tuning process while it runs, else 0 */


/* What the watcher and the tuning process share (an anonymous shared mapping, made before the
 * first fork). */
typedef struct shared_state {
    /* The output file as the first attempt found it before tuning: after a crash, the run continues
     * from the file only when it changed since (the profile is written to a new file renamed into
     * place, so a new inode); and the watcher's last words name it. */
    int valid, existed;
    dev_t dev;
    ino_t ino;
    struct timespec mtim;
    char path[4096]; /* the output file (the default one is known to the tuning process only) */
    volatile int stop; /* Ctrl-C reached the watcher: the tuning process's opt.stop */
} shared_state;
static shared_state *shared;

/* SIGINT in a process that tunes without a watcher (fork failed) */
static void on_sigint(int sig)
{
    (void)sig;
    stop_flag = 1;
    if (shared) shared->stop = 1;
}

/* The watcher takes Ctrl-C for the tuning process (sets shared->stop), which keeps SIGINT blocked:
 * a terminal's Ctrl-C (or `timeout -s INT`) goes to the whole foreground group, and when it reached
 * the tuning process it killed the driver's compiler (PoCL's linker subprocess, which inherits the
 * blocked mask now, or LLVM's SIGINT handler), and the process with it: 3 of 17 runs lost their
 * entries. The processes stay in one group, so job control (Ctrl-Z, Ctrl-\, a SIGKILL to the
 * group) reaches both. SIGTERM and SIGHUP are passed on. Either way no attempt starts after. */
static void on_signal_watcher(int sig)
{
    pid_t c = child_pid;
    if (sig == SIGINT) {
        if (stop_flag && c > 0) { /* a second Ctrl-C: now (the entries finished are on disk) */
            kill(c, SIGTERM);
            return;
        }
        stop_flag = 1;
        if (shared)
            shared->stop = 1;
        else if (c > 0)
            kill(c, sig);
        return;
    }
    end_signal = sig;
    if (c > 0) kill(c, sig);
}

/* mkdir -p: each missing directory of `dir` (0 where it exists afterwards). */
static int make_dirs(const char *dir)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            const char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            *p = c;
            if (!c) break;
        }
    }
    struct stat sb;
    return stat(buf, &sb) == 0 && S_ISDIR(sb.st_mode) ? 0 : -1;
}

/* A number within +-1e9 in strtod's forms into *out; 0 where the text is none. */
static int parse_number(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v == v) || v > 1e9 || v < -1e9) return 0;
    *out = v;
    return 1;
}

/* 1 when the output file, as stat() found it (sb), is not what the first attempt found: written by
 * this run. */
static int file_changed(const struct stat *sb)
{
    return shared && shared->valid &&
           (!shared->existed || sb->st_dev != shared->dev || sb->st_ino != shared->ino ||
            sb->st_mtim.tv_sec != shared->mtim.tv_sec || sb->st_mtim.tv_nsec != shared->mtim.tv_nsec);
}

typedef struct run_state {
    int tty;
    int verbose; /* --verbose: a timed line per candidate and per entry's start, not only its end */
    int abort_at; /* the test hook: entry after which the first attempt aborts, or -1 */
} run_state;

/* Library warnings during a run on a terminal: the progress bar's line is cleared first, so that
 * each warning stands on a line of its own (the bar is drawn again at the next step). */
static void warn_on_tty(const char *message, void *user)
{
    (void)user;
    fprintf(stderr, "\r\033[Kocx: warning: %s\n", message);
}

static void progress(void *user, const ocx_tune_progress *p)
{
    const run_state *rs = user;
    const int tty = rs->tty, done = p->message && !strcmp(p->message, "done");
    const int cut = p->message && !strcmp(p->message, "stopped"); /* left out: no line of results */
    char best[64] = "-", base[64] = "-";
    if (p->best_rate > 0) snprintf(best, sizeof best, "%.1f %s", p->best_rate, p->unit);
    if (p->default_rate > 0) snprintf(base, sizeof base, "%.1f", p->default_rate);
    if (tty) {
        int width = 24, fill = p->budget_s > 0 ? (int)(width * p->elapsed_s / p->budget_s) : 0;
        if (fill > width) fill = width;
        fprintf(stderr, "\r[%.*s%*s] %3.0fs  %zu/%zu %-6s %-4s %-5s %3u tried %2u failed  best %-18s (default %s)  ",
                fill, "########################", width - fill, "", p->elapsed_s, p->entry + 1, p->entries, p->family,
                p->dtype, p->size_class, p->tried, p->failed, best, base);
        if (done || cut) fputc('\n', stderr);
    } else if (rs->verbose && !done && !cut) {
        char what[600]; /* a measured candidate comes without a message (ocx.h) */
        if (p->message)
            snprintf(what, sizeof what, "%s", p->message);
        else
            snprintf(what, sizeof what, "candidate %s measured %.1f %s", p->candidate ? p->candidate : "", p->rate,
                     p->unit);
        fprintf(stderr, "ocx-tune: %6.2fs %s/%s/%s: %s, %u tried (%u failed), best %s\n", p->elapsed_s, p->family,
                p->dtype, p->size_class, what, p->tried, p->failed, best);
    } else if (done) {
        fprintf(stderr, "ocx-tune: %s/%s/%s: %u candidates (%u failed), best %s, defaults %s, %.0fs elapsed\n",
                p->family, p->dtype, p->size_class, p->tried, p->failed, best, base, p->elapsed_s);
    }
    if (done && rs->abort_at == (int)p->entry) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none); /* the test hook's abort: no core file to write */
        abort();
    }
}

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static int usage(int rc)
{
    fprintf(rc ? stderr : stdout,
            "usage: ocx-tune [--device SPEC] [--kernels gemm,gemm_mma,reduce,vector] [--dtypes f32,f16,f64]\n"
            "                [--classes all,small,medium,large,short_k] [--budget SECONDS] [--out FILE] [--quick]\n"
            "                [--resume] [--seed N] [--verbose]\n"
            "Writes a device profile (default: the user profile directory, where libocx finds it unless\n"
            "OCX_PROFILE_DIR holds a profile for the device, which is read first); under simulated\n"
            "limits (OCX_LIMIT_WG, OCX_LIMIT_LOCAL_MEM, OCX_DISABLE_FP16/FP64) only to an --out named.\n"
            "Size classes: every one but short_k unless --classes (--quick: all, and large on CPUs);\n"
            "medium is GEMM's alone (vector and reduce take their all entry there);\n"
            "GEMM's large (8192^3) only on GPUs; short_k (GEMM with K <= 256, at 8192x8192x128)\n"
            "on GPUs and only when named; gemm_mma (f16 GEMM on NVIDIA tensor cores)\n"
            "where its probe passes, and then it stands for the portable f16 GEMM (tuned only under\n"
            "OCX_VENDOR_PATHS=0); its f32 entries (OCX_COMPUTE_TF32X3 products) only when --kernels\n"
            "names gemm_mma and --dtypes f32. --resume keeps a file's entries and adds the missing ones\n"
            "(entries the library would refuse are dropped; a file from another driver starts afresh; one\n"
            "that is not a profile of this version and device is an error, and left as it is).\n"
            "--budget covers the whole run (default 60 s; with --quick 85 s).\n"
            "--seed replays the candidate order of a run (its seed, never 0, is printed at the start);\n"
            "--seed 0, like no --seed, draws a new one.\n"
            "Ctrl-C keeps the entries finished and exits 130; a second Ctrl-C stops at once.\n"
            "--verbose (not on a terminal): a timed line as each entry starts, each candidate is measured\n(its parameters and rate) and each candidate is confirmed (the rounds it won against the\ndefaults).\n");
    return rc ? rc : tool_flushed("ocx-tune", "the usage", 0);
}

/* One attempt, in its own process: the whole run when attempt is 0; after a crash, the rest of it
 * (opt.budget_s: the time left). verbose: --verbose. Returns the exit status. */
static int tune_once(const char *spec, ocx_tune_options opt, int attempt, int verbose)
{
    /* --budget covers the whole run: device set-up before the tuning, and its teardown after. */
    struct timespec t_start;
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    ocx_context *ctx = NULL;
    if (ocx_context_create(spec, &ctx) != OCX_OK) {
        fprintf(stderr, "ocx-tune: %s\n", ocx_last_error());
        return 1;
    }
    ocx_device_info info;
    ocx_context_device_info(ctx, &info);
    char path[4096];
    if (!opt.out_path && info.limited) { /* the profile that every later run on the device reads */
        fprintf(stderr, "ocx-tune: simulated limits (OCX_LIMIT_WG, OCX_LIMIT_LOCAL_MEM, OCX_DISABLE_FP16/FP64) shrink "
                        "this device: what they tune is not "
                        "this device's profile; give --out FILE to write it elsewhere\n");
        ocx_context_destroy(ctx);
        return 2;
    }
    if (!opt.out_path) {
        if (ocx_profile_user_path(ctx, path, sizeof path) != OCX_OK) {
            fprintf(stderr, "ocx-tune: %s (give --out FILE)\n", ocx_last_error());
            ocx_context_destroy(ctx);
            return 1;
        }
        /* The user profile directory may not exist yet. */
        char *slash = strrchr(path, '/');
        if (slash && slash > path) {
            *slash = '\0';
            int made = make_dirs(path);
            *slash = '/';
            if (made != 0) {
                fprintf(stderr, "ocx-tune: cannot create the directory of %s: %s (give --out FILE)\n", path,
                        strerror(errno));
                ocx_context_destroy(ctx);
                return 1;
            }
        }
        opt.out_path = path;
    }
    /* After a crash: continue from the file if this run wrote it (else, unless --resume was asked
     * for, it is an older profile that a fresh run replaces). */
    struct stat sb;
    int exists = stat(opt.out_path, &sb) == 0;
    if (attempt == 0 && shared) {
        shared->valid = 1, shared->existed = exists;
        shared->dev = exists ? sb.st_dev : 0, shared->ino = exists ? sb.st_ino : 0;
        if (exists) shared->mtim = sb.st_mtim;
        snprintf(shared->path, sizeof shared->path, "%s", opt.out_path);
    } else if (attempt > 0 && !opt.resume && exists && file_changed(&sb)) {
        opt.resume = 1;
    }
    /* the test hook: a whole number as the library reads numbers, decimal or 0x… (atoi had taken "abc"
     * as 0 and "0x1" as 0); lib/status.c's ocx__env_ulong rule, copied: the tool sees only ocx.h */
    const char *hook = getenv("OCX_TUNE_ABORT_AT");
    long abort_at = -1;
    if (hook && *hook) {
        const char *digits = hook + strspn(hook, " \t");
        const int hex = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
        char *end = NULL;
        errno = 0;
        abort_at = strtol(hook, &end, hex ? 16 : 10);
        end += strspn(end, " \t");
        if (strchr(hook, '-') || end == digits || *end || errno || abort_at > INT_MAX) {
            if (attempt == 0) fprintf(stderr, "ocx-tune: OCX_TUNE_ABORT_AT=%s is not a whole number; ignored\n", hook);
            abort_at = -1;
        }
    }
    run_state rs = {isatty(2), verbose, attempt == 0 ? (int)abort_at : -1};
    opt.progress = progress;
    opt.user = &rs;
    if (rs.tty) ocx_set_warning_handler(warn_on_tty, NULL);
    opt.stop = shared ? &shared->stop : &stop_flag;
    double whole = opt.budget_s;
    opt.budget_s -= since(&t_start) + TEARDOWN_S;
    if (opt.budget_s < 1) opt.budget_s = whole < 1 ? whole : 1;
    fprintf(stderr, "ocx-tune: %s (%s), budget %.1f s (%.1f s of it tuning), seed %llu, %s %s\n", info.name,
            info.platform_name, whole, opt.budget_s, opt.seed, opt.resume && exists ? "continuing" : "writing",
            opt.out_path);
    ocx_status st = ocx_tune(ctx, &opt);
    if (st != OCX_OK)
        fprintf(stderr, "ocx-tune: %s\n", ocx_last_error());
    else if (!*opt.stop && shared && stat(opt.out_path, &sb) == 0 && !file_changed(&sb))
        /* a resumed file that had every entry asked for: the library leaves it as it was */
        fprintf(stderr, "ocx-tune: %s has every entry asked for; left as it was\n", opt.out_path);
    else if (!*opt.stop) {
        fprintf(stderr, "ocx-tune: wrote %s\n", opt.out_path);
        /* A profile directory holds a device's profile as <normalized name>.json (lib/profile.c):
         * under any other name the library does not read it (ocx-bench then says "built-in"). */
        const char *base = strrchr(opt.out_path, '/');
        base = base ? base + 1 : opt.out_path;
        const size_t nlen = strlen(info.normalized_name);
        if (strncmp(base, info.normalized_name, nlen) != 0 || strcmp(base + nlen, ".json") != 0)
            fprintf(stderr, "ocx-tune: the library reads this device's profile as %s.json in a profile directory "
                            "(README, \"Profiles and tuning\"); it does not read it under this name\n", info.normalized_name);
    }
    else if (stat(opt.out_path, &sb) == 0 && (file_changed(&sb) || (!shared && opt.resume && exists)))
        fprintf(stderr, "ocx-tune: interrupted; %s keeps the entries finished (--resume continues)\n", opt.out_path);
    else /* a --resume of another driver's file had started afresh: the next starts afresh again */
        fprintf(stderr, "ocx-tune: interrupted before an entry was finished; %s\n",
                exists ? "the file is as it was" : "nothing written");
    struct timespec t_release;
    clock_gettime(CLOCK_MONOTONIC, &t_release);
    ocx_context_destroy(ctx);
    if (verbose)
        fprintf(stderr, "ocx-tune: device released in %.1f s, %.1f s since the device was asked for\n",
                since(&t_release), since(&t_start));
    return st == OCX_OK ? 0 : 1;
}

/* The watcher's end without a finished run: the exit status (128 + a passed-on SIGTERM or SIGHUP). */
static int give_up(const char *what, const char *out_path)
{
    struct stat sb;
    if (!out_path && shared && shared->valid) out_path = shared->path;
    if (out_path && stat(out_path, &sb) == 0 && (shared ? file_changed(&sb) : 1))
        fprintf(stderr, "ocx-tune: %s; %s keeps the entries finished before (--resume continues)\n", what, out_path);
    else
        fprintf(stderr, "ocx-tune: %s; no entry was finished%s%s\n", what, out_path ? ", nothing written to " : "",
                out_path ? out_path : "");
    return end_signal ? 128 + end_signal : stop_flag ? 128 + SIGINT : 1; /* Ctrl-C: 130, as below */
}

/* A run's exit status: one that Ctrl-C stopped ends 130 (128 + SIGINT), as an interrupted program's,
 * so that a calling loop stops. */
static int run_status(int rc) { return rc == 0 && stop_flag ? 128 + SIGINT : rc; }

static int crash_signal(int sig) { return sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE; }

int main(int argc, char **argv)
{
    ocx_tune_options opt = {0};
    const char *spec = NULL;
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        /* an option's value: the next argument, unless it is empty or an option itself ("--out
         * --resume" must not write a file named --resume) */
        const char *a = argv[i], *next = i + 1 < argc && argv[i + 1][0] && strncmp(argv[i + 1], "--", 2) ? argv[i + 1] : NULL;
        if (!strcmp(a, "--device") && next)
            spec = argv[++i];
        else if (!strcmp(a, "--kernels") && next)
            opt.families = argv[++i];
        else if (!strcmp(a, "--dtypes") && next)
            opt.dtypes = argv[++i];
        else if (!strcmp(a, "--classes") && next)
            opt.classes = argv[++i];
        else if (!strcmp(a, "--budget") && next) {
            if (!parse_number(argv[++i], &opt.budget_s) || opt.budget_s <= 0) {
                fprintf(stderr, "ocx-tune: --budget %s: a number of seconds above 0 and at most 1e9, please\n",
                        argv[i]);
                return 2;
            }
        }
        else if (!strcmp(a, "--out") && next)
            opt.out_path = argv[++i];
        else if (!strcmp(a, "--verbose"))
            verbose = 1;
        else if (!strcmp(a, "--quick"))
            opt.quick = 1;
        else if (!strcmp(a, "--resume"))
            opt.resume = 1;
        else if (!strcmp(a, "--seed") && next) {
            char *end = NULL;
            errno = 0;
            opt.seed = strtoull(argv[++i], &end, 10);
            if (end == argv[i] || *end || errno || strchr(argv[i], '-')) {
                fprintf(stderr, "ocx-tune: --seed %s: a whole number, please\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--help")) {
            return usage(0);
        } else {
            static const char *const valued[] = {"--device", "--kernels", "--dtypes", "--classes",
                                                 "--budget", "--out",     "--seed"};
            int needs = 0;
            for (size_t v = 0; v < sizeof valued / sizeof *valued; v++) needs |= !strcmp(a, valued[v]);
            fprintf(stderr, "ocx-tune: %s: %s\n", a, needs ? "needs a value" : "unknown option");
            return usage(2);
        }
    }
    if (opt.budget_s == 0) opt.budget_s = opt.quick ? 85 : 60; /* quick: ~110 s wall on 2-core PoCL */
    /* The seed is printed so that a run (one that crashed a driver's compiler, say) can be replayed. */
    /* From the clock's microseconds and the process id: from the seconds alone, runs started
     * within one second (a script tuning several devices) drew the same order. */
    if (!opt.seed) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        const unsigned long long us = (unsigned long long)now.tv_sec * 1000000ull + (unsigned long long)now.tv_nsec / 1000;
        opt.seed = (us * 2654435761ull + (unsigned long long)getpid() * 40503ull) % 1000000007ull + 1;
    }
    /* Ctrl-C: the child keeps the entries finished and exits; this one waits for it. Signals are held
     * from before each fork until child_pid names the new child (in the child: until its own
     * handlers are in place). */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal_watcher;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGCHLD, SIG_DFL); /* a caller's SIG_IGN would make waitpid fail */
    sigset_t held, old;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGHUP);
    void *map = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    shared = map == MAP_FAILED ? NULL : map; /* without it a retry starts afresh, Ctrl-C goes by signal */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const double budget = opt.budget_s;
    for (int attempt = 0;; attempt++) {
        sigprocmask(SIG_BLOCK, &held, &old);
        if (attempt > 0 && (stop_flag || end_signal)) return give_up("stopped", opt.out_path); /* after a death */
        /* above 0 whatever has passed: ocx_tune takes a budget of 0 or less as its default, 60 s
         * (--budget 1e-9 had run for a minute) */
        const double remaining = budget - since(&t0);
        opt.budget_s = remaining > 1e-3 ? remaining : 1e-3;
        fflush(NULL);
        const pid_t watcher = getpid();
        pid_t pid = fork();
        if (pid <= 0) { /* the child; or, when there is none, this process, unguarded */
            signal(SIGINT, on_sigint);
            signal(SIGTERM, SIG_DFL);
            signal(SIGHUP, SIG_DFL);
            if (pid == 0 && shared) sigaddset(&old, SIGINT); /* Ctrl-C comes through shared->stop */
            sigprocmask(SIG_SETMASK, &old, NULL);
#ifdef __linux__
            /* The watcher's death (Ctrl-\, whose SIGQUIT LLVM's handler takes in this process, or a
             * SIGKILL to the watcher alone) ends this process too, not leaves it tuning. */
            if (pid == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != watcher)) _exit(1);
#endif
            int rc = tune_once(spec, opt, attempt, verbose);
            if (pid == 0) exit(rc);
            return run_status(rc);
        }
        child_pid = pid;
        sigprocmask(SIG_SETMASK, &old, NULL);
        int status = 0;
        pid_t w;
        while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
        }
        child_pid = 0;
        if (w < 0) {
            fprintf(stderr, "ocx-tune: waiting for the tuning process: %s\n", strerror(errno));
            return 1;
        }
        if (WIFEXITED(status)) {
            if (verbose) fprintf(stderr, "ocx-tune: %.1f s in all\n", since(&t0));
            return run_status(WEXITSTATUS(status));
        }
        int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        if (sig == SIGTERM && stop_flag && !end_signal) return give_up("stopped at the second Ctrl-C", opt.out_path);
        double left = budget - since(&t0);
        fprintf(stderr, "ocx-tune: the tuning process died of signal %d (%s)%s (seed %llu)\n", sig, strsignal(sig),
                crash_signal(sig) ? ", most likely in the OpenCL compiler" : "", opt.seed);
        if (!crash_signal(sig) || stop_flag || end_signal || attempt == RETRIES || left < RETRY_MIN_S)
            return give_up("giving up", opt.out_path);
        opt.seed = opt.seed % 1000000007ull + 1; /* another candidate order */
        fprintf(stderr, "ocx-tune: continuing from the entries written so far, %.0f s left, seed %llu\n", left,
                opt.seed);
    }
}
