/* cache.c — the on-disk cache of compiled program binaries.
 *
 * File layout (little-endian host order; a file from another machine simply fails the checks):
 *   "OCXBIN\r\n"  u32 format version  u32 key length  u64 payload length  key text  payload
 *   u64 XXH64 of everything before it.
 * The file name is the XXH64 of the key text; the full key inside the file guards against collisions.
 * Files are written to a temporary file in the same directory and renamed into place, so a reader
 * sees either no file or a whole one, and two writers of one key both succeed.
 */
#include "config.h"
#include "ocx_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define CACHE_MAGIC "OCXBIN\r\n"
#define CACHE_FORMAT 1u
#define CACHE_HEADER (8 + 4 + 4 + 8)
#define CACHE_MAX_FILE ((size_t)1 << 30)

/* Temporary files older than this are left by a process that died while storing: removed. */
#define CACHE_STALE_TMP_S 600

static atomic_int warned_unwritable, warned_no_dir, warned_unstored, warned_relative;

FILE *ocx__open_regular(const char *path, const char **why)
{
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer that never comes. */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    struct stat st;
    FILE *f = NULL;
    int err;
    *why = NULL;
    if (fstat(fd, &st) != 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        err = errno;
    } else if (!S_ISREG(st.st_mode)) {
        err = EINVAL;
        *why = "not a regular file";
    } else if ((f = fdopen(fd, "rb")) != NULL) {
        return f;
    } else {
        err = errno;
    }
    close(fd);
    if (!*why) *why = strerror(err);
    errno = err;
    return NULL;
}

static int cache_enabled(void)
{
    const char *s = getenv("OCX_CACHE");
    return !(s && *s && !ocx__env_flag("OCX_CACHE"));
}

void ocx__cache_dir(char *out, size_t cap)
{
    out[0] = '\0';
    if (!cache_enabled()) return;
    const char *dir = getenv("OCX_CACHE_DIR");
    if (dir && *dir) {
        const int n = snprintf(out, cap, "%s", dir);
        if (n < 0 || (size_t)n >= cap) { /* cut short, it would name another directory */
            out[0] = '\0';
            if (atomic_exchange(&warned_no_dir, 1) == 0)
                ocx__warn("binary cache: OCX_CACHE_DIR is too long (%zu bytes); running uncached", strlen(dir));
        } else if (out[0] != '/' && atomic_exchange(&warned_relative, 1) == 0) {
            /* taken as given, but said: "~" or " " (a quoting slip) had put a cache into whatever
             * directory the program ran in, without a word */
            char cwd[4096];
            ocx__warn("binary cache: OCX_CACHE_DIR=%s is relative: the cache is %s/%s, which moves with the "
                      "working directory (not said again)", dir, getcwd(cwd, sizeof cwd) ? cwd : ".", dir);
        }
        return;
    }
    if (!ocx__xdg_dir("XDG_CACHE_HOME", ".cache", "ocx", out, cap) && atomic_exchange(&warned_no_dir, 1) == 0)
        ocx__warn("binary cache: no directory for it (set OCX_CACHE_DIR, an absolute XDG_CACHE_HOME, or HOME); running "
                  "uncached");
}

void ocx__cache_path(const char *key_text, char *out, size_t cap)
{
    char dir[4096];
    ocx__cache_dir(dir, sizeof dir);
    if (!dir[0]) {
        out[0] = '\0';
        return;
    }
    snprintf(out, cap, "%s/%016llx.ocxbin", dir, (unsigned long long)XXH64(key_text, strlen(key_text), 0));
}

/* Deletes `path` if it is still the file (dev, ino) a reader found there: a process that stored a
 * new entry meanwhile (rename) keeps it. */
static int unlink_if_same(const char *path, uint64_t dev, uint64_t ino)
{
    struct stat st;
    if (stat(path, &st) != 0) return errno == ENOENT;
    if ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino) return 1; /* replaced: not ours to delete */
    return unlink(path) == 0 || errno == ENOENT;
}

static ocx_status reject(const char *path, const char *why, int *rejected, const struct stat *seen)
{
    const int gone = seen ? unlink_if_same(path, (uint64_t)seen->st_dev, (uint64_t)seen->st_ino)
                          : unlink(path) == 0 || errno == ENOENT;
    ocx__warn("binary cache: %s: %s; %s, rebuilding from source", path, why,
              gone ? "deleted" : "could not be deleted (it stays, and is rebuilt each time)");
    if (rejected) *rejected = 1;
    return ocx__error(OCX_ERR_IO, "binary cache: %s: %s", path, why);
}

ocx_status ocx__cache_load(const char *key_text, ocx__cache_blob *blob, int *rejected)
{
    blob->data = NULL;
    blob->size = 0;
    blob->dev = blob->ino = 0;
    if (rejected) *rejected = 0;
    char path[4200];
    ocx__cache_path(key_text, path, sizeof path);
    if (!path[0]) return ocx__error(OCX_ERR_IO, "binary cache disabled");
    const char *why = NULL;
    FILE *f = ocx__open_regular(path, &why);
    struct stat seen = {0};
    if (!f && errno == EINVAL) /* a FIFO, a directory, ... */
        return reject(path, why, rejected, stat(path, &seen) == 0 ? &seen : NULL);
    if (!f) return ocx__error(OCX_ERR_IO, "binary cache: no entry %s (%s)", path, why);
    fstat(fileno(f), &seen);
    unsigned char *buf = NULL;
    long fsize = -1;
    if (fseek(f, 0, SEEK_END) == 0) fsize = ftell(f);
    if (fsize < 0 || fseek(f, 0, SEEK_SET) != 0) {
        why = "cannot be read";
    } else if ((size_t)fsize < CACHE_HEADER + 8) {
        why = fsize == 0 ? "empty file" : "truncated header";
    } else if ((size_t)fsize > CACHE_MAX_FILE) {
        why = "implausibly large";
    } else if (!(buf = malloc((size_t)fsize))) {
        fclose(f);
        return ocx__error(OCX_ERR_OUT_OF_MEMORY, "binary cache: out of host memory");
    } else if (fread(buf, 1, (size_t)fsize, f) != (size_t)fsize) {
        why = "short read";
    }
    fclose(f);
    size_t size = (size_t)fsize;
    uint32_t format = 0, klen = 0;
    uint64_t plen = 0, sum = 0;
    if (!why) {
        memcpy(&format, buf + 8, 4);
        memcpy(&klen, buf + 12, 4);
        memcpy(&plen, buf + 16, 8);
        memcpy(&sum, buf + size - 8, 8);
        if (memcmp(buf, CACHE_MAGIC, 8) != 0)
            why = "bad magic";
        else if (format != CACHE_FORMAT)
            why = "another format version";
        /* Each length within what the file holds, before any sum of them (a payload length near
         * 2^64 would wrap the sum to the file's size, and the key compare and the move below would
         * run past the buffer). size >= CACHE_HEADER + 8 here. */
        else if (klen > size - CACHE_HEADER - 8 || plen != (uint64_t)(size - CACHE_HEADER - 8 - klen))
            why = "truncated or padded (lengths disagree with the file size)";
        else if (XXH64(buf, size - 8, 0) != sum)
            why = "checksum mismatch";
        else if (klen != strlen(key_text) || memcmp(buf + CACHE_HEADER, key_text, klen) != 0)
            why = "key differs (hash collision or foreign file)";
        else if (plen == 0)
            why = "empty payload";
    }
    if (why) {
        free(buf);
        return reject(path, why, rejected, &seen);
    }
    /* Hand the payload back in place. */
    memmove(buf, buf + CACHE_HEADER + klen, (size_t)plen);
    blob->data = buf;
    blob->size = (size_t)plen;
    blob->dev = (uint64_t)seen.st_dev;
    blob->ino = (uint64_t)seen.st_ino;
    return OCX_OK;
}

int ocx__cache_ensure_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return 0;
        errno = ENOTDIR; /* for the caller's message */
        return -1;
    }
    const char *explicit_dir = getenv("OCX_CACHE_DIR");
    if (!(explicit_dir && *explicit_dir)) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s", dir);
        for (char *p = tmp + 1; *p; p++) {
            if (*p != '/') continue;
            *p = '\0';
            if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    }
    return (mkdir(dir, 0777) == 0 || errno == EEXIST) ? 0 : -1; /* less the umask, as the entries */
}

static ocx_status unwritable(const char *dir, const char *what)
{
    if (atomic_exchange(&warned_unwritable, 1) == 0)
        ocx__warn("binary cache: cannot write to %s (%s: %s); kernels it cannot take are built from source "
                  "each time (not said again)", dir, what, strerror(errno));
    return ocx__error(OCX_ERR_IO, "binary cache: cannot write to %s (%s)", dir, what);
}

void ocx__sweep_stale_temps(const char *dir, int (*is_temp)(const char *name, const void *arg), const void *arg)
{
    DIR *d = opendir(dir);
    if (!d) return;
    const time_t now = time(NULL);
    struct dirent *e;
    char path[4400];
    struct stat st;
    while ((e = readdir(d)) != NULL) {
        if (!is_temp(e->d_name, arg)) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > CACHE_STALE_TMP_S) unlink(path);
    }
    closedir(d);
}

int ocx__open_temp(const char *prefix, char *tmp, size_t cap)
{
    static atomic_uint count;
    int fd = -1;
    errno = EEXIST;
    for (int tries = 0; fd < 0 && errno == EEXIST && tries < 16; tries++) {
        const int n = snprintf(tmp, cap, "%s.tmp-%ld-%u", prefix, (long)getpid(), atomic_fetch_add(&count, 1));
        if (n < 0 || (size_t)n >= cap) {
            errno = ENAMETOOLONG;
            return -1;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    return fd;
}

int ocx__is_temp(const char *name, const void *arg)
{
    const char *base = arg;
    const size_t len = strlen(base);
    if (strncmp(name, base, len) != 0 || strncmp(name + len, ".tmp-", 5) != 0) return 0;
    const char *p = name + len + 5;
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) p++;
    if (*p++ != '-' || !isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) p++;
    return *p == '\0';
}

/* The store's temporaries, "<dir>/.tmp-<pid>-<count>", and nothing else: the directory may hold
 * a user's files (mkstemp's ".tmp-XXXXXX" of early versions matched ".tmp-backup" too). */
static int store_temp(const char *name, const void *arg)
{
    (void)arg;
    return ocx__is_temp(name, "");
}

ocx_status ocx__cache_store(const char *key_text, const unsigned char *data, size_t size)
{
    char dir[4096], path[4200], tmp[4200];
    ocx__cache_dir(dir, sizeof dir);
    if (!dir[0]) return ocx__error(OCX_ERR_IO, "binary cache disabled");
    if (ocx__cache_ensure_dir(dir) != 0) return unwritable(dir, "mkdir");
    ocx__cache_path(key_text, path, sizeof path);
    char prefix[4100];
    snprintf(prefix, sizeof prefix, "%s/", dir);
    int fd = ocx__open_temp(prefix, tmp, sizeof tmp); /* "<dir>/.tmp-<pid>-<count>" */
    if (fd < 0) return unwritable(dir, "open");

    uint32_t format = CACHE_FORMAT, klen = (uint32_t)strlen(key_text);
    uint64_t plen = size;
    size_t total = CACHE_HEADER + klen + size + 8;
    if (size > CACHE_MAX_FILE || total > CACHE_MAX_FILE) { /* the loader would refuse it */
        close(fd);
        unlink(tmp);
        return ocx__error(OCX_ERR_IO, "binary cache: a %zu-byte binary is above the cache's limit", size);
    }
    unsigned char *buf = malloc(total);
    if (!buf) {
        close(fd);
        unlink(tmp);
        return ocx__error(OCX_ERR_OUT_OF_MEMORY, "binary cache: out of host memory");
    }
    memcpy(buf, CACHE_MAGIC, 8);
    memcpy(buf + 8, &format, 4);
    memcpy(buf + 12, &klen, 4);
    memcpy(buf + 16, &plen, 8);
    memcpy(buf + CACHE_HEADER, key_text, klen);
    memcpy(buf + CACHE_HEADER + klen, data, size);
    uint64_t sum = XXH64(buf, total - 8, 0);
    memcpy(buf + total - 8, &sum, 8);

    size_t done = 0;
    while (done < total) {
        ssize_t w = write(fd, buf + done, total - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    free(buf);
    int ok = done == total;
    if (close(fd) != 0) ok = 0;
    if (!ok) {
        unlink(tmp);
        return unwritable(dir, "write");
    }
    if (rename(tmp, path) != 0) { /* the directory took the file: what stands at the entry's name refused it */
        const int err = errno;
        unlink(tmp);
        if (err == ENAMETOOLONG) { /* the entries' names, a few bytes longer than the temporary's: every one */
            errno = err;
            return unwritable(dir, "rename");
        }
        /* Said once a process, whatever the cause: in a shared directory every entry that another
         * user stored refuses our rename (EPERM), and each program's store had been warned about. */
        if (atomic_exchange(&warned_unstored, 1) == 0)
            ocx__warn("binary cache: cannot store %s (rename: %s); entries that cannot be stored are built "
                      "from source each time (not said again)", path, strerror(err));
        return ocx__error(OCX_ERR_IO, "binary cache: cannot store %s (rename: %s)", path, strerror(err));
    }
    ocx__sweep_stale_temps(dir, store_temp, NULL);
    return OCX_OK;
}

void ocx__cache_remove(const char *key_text, const ocx__cache_blob *loaded)
{
    char path[4200];
    ocx__cache_path(key_text, path, sizeof path);
    if (path[0]) unlink_if_same(path, loaded->dev, loaded->ino);
}
