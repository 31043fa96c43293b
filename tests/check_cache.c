/* check_cache — the on-disk binary cache: miss then hit (counted, no compile), every kind of bad file
 * (deleted, rebuilt, stored again), a FIFO or a directory at an entry's name, temporary files left by
 * a store that never finished, unwritable and missing directories, the directory without $HOME,
 * OCX_CACHE=0, and two processes racing on one key. */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <sys/stat.h>
#include <utime.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include "ocx_internal.h" /* ocx__cache_load, ocx__cache_path */
#include "testutil.h"

static char dir[4096];

/* A fresh, empty cache directory per test, under the suite's private one. */
static void fresh_dir(const char *name)
{
    const char *base = getenv("OCX_CACHE_DIR");
    ck_assert_msg(base != NULL, "the test environment sets OCX_CACHE_DIR");
    static char root[2048];
    if (!root[0]) snprintf(root, sizeof root, "%s", base);
    mkdir(root, 0755);
    snprintf(dir, sizeof dir, "%s/%s.%d", root, name, (int)getpid());
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    setenv("OCX_CACHE_DIR", dir, 1);
}

/* Names of the cache entries in `d` (at most 8), and the count of leftover temporary files. */
static int entries(const char *d, char names[][8192], int *tmp_files)
{
    DIR *dp = opendir(d);
    int n = 0;
    *tmp_files = 0;
    if (!dp) return 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 7 && strcmp(e->d_name + len - 7, ".ocxbin") == 0 && n < 8)
            snprintf(names[n++], 8192, "%s/%s", d, e->d_name);
        else if (strncmp(e->d_name, ".tmp-", 5) == 0)
            (*tmp_files)++;
    }
    closedir(dp);
    return n;
}

static void spit(const char *path, const unsigned char *buf, size_t size)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, size, f), size);
    fclose(f);
}

/* Header: magic[8] u32 format u32 key_len u64 payload_len, key, payload, u64 XXH64. */
static void reseal(unsigned char *buf, size_t size)
{
    uint64_t sum = XXH64(buf, size - 8, 0);
    memcpy(buf + size - 8, &sum, 8);
}

/* Warms the cache and returns the path of its one entry. */
static void warm(char path[8192])
{
    ocx_context_stats st = tadd_in_new_context();
    ck_assert_uint_eq(st.programs_compiled, 1);
    ck_assert_uint_eq(st.disk_cache_writes, 1);
    char names[8][8192];
    int tmp;
    ck_assert_int_eq(entries(dir, names, &tmp), 1);
    ck_assert_int_eq(tmp, 0);
    snprintf(path, 8192, "%s", names[0]);
}

/* After a corruption: the bad file is rejected, the program rebuilt and stored again, and the next
 * process loads it from disk. */
static void expect_recovery(const char *what)
{
    ocx_context_stats st = tadd_in_new_context();
    ck_assert_msg(st.disk_cache_rejected == 1 && st.programs_compiled == 1 && st.disk_cache_writes == 1,
                  "%s: rejected %llu compiled %llu writes %llu", what, (unsigned long long)st.disk_cache_rejected,
                  (unsigned long long)st.programs_compiled, (unsigned long long)st.disk_cache_writes);
    st = tadd_in_new_context();
    ck_assert_msg(st.programs_from_disk == 1 && st.programs_compiled == 0, "%s: not stored again", what);
}

START_TEST(test_miss_then_hit)
{
    fresh_dir("hit");
    char path[8192];
    warm(path);
    ocx_context_stats st = tadd_in_new_context();
    ck_assert_uint_eq(st.programs_compiled, 0); /* the second process compiles nothing */
    ck_assert_uint_eq(st.programs_from_disk, 1);
    ck_assert_uint_eq(st.disk_cache_writes, 0);
    /* The file carries the full key: source hash, options, platform, device, driver, ocx version. */
    size_t size;
    unsigned char *buf = (unsigned char *)tslurp(path, &size);
    ck_assert_int_eq(memcmp(buf, "OCXBIN\r\n", 8), 0);
    uint32_t klen;
    memcpy(&klen, buf + 12, 4);
    char *key = strndup((char *)buf + 24, klen);
    const char *want[] = {"platform=", "device=", "vendor=", "driver=", "ocx=" OCX_VERSION_STRING, "source=vector ",
                          "options="};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(key, want[i]) != NULL, "key lacks '%s':\n%s", want[i], key);
    /* with this device's values (an empty or wrong driver version would load stale binaries after
     * an update) */
    char line[1400];
    size_t idx = 0;
    ocx_device_info d;
    ck_ok(ocx_device_select(NULL, &idx));
    ck_ok(ocx_device_get_info(idx, &d));
    const char *fields[][2] = {{"device", d.name}, {"vendor", d.vendor}, {"driver", d.driver_version}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        snprintf(line, sizeof line, "%s=%s\n", fields[i][0], fields[i][1]);
        ck_assert_msg(fields[i][1][0] && strstr(key, line), "key lacks '%s':\n%s", line, key);
    }
    free(key);
    free(buf);
}
END_TEST

START_TEST(test_truncated)
{
    fresh_dir("truncated");
    char path[8192];
    warm(path);
    ck_assert_int_eq(truncate(path, 40), 0);
    expect_recovery("truncated");
}
END_TEST

START_TEST(test_bit_flipped)
{
    fresh_dir("flipped");
    char path[8192];
    warm(path);
    size_t size;
    unsigned char *buf = (unsigned char *)tslurp(path, &size);
    buf[size / 2] ^= 0x10;
    spit(path, buf, size);
    free(buf);
    expect_recovery("bit flip");
}
END_TEST

START_TEST(test_zero_length)
{
    fresh_dir("empty");
    char path[8192];
    warm(path);
    ck_assert_int_eq(truncate(path, 0), 0);
    expect_recovery("zero length");
}
END_TEST

START_TEST(test_foreign_key)
{
    /* A well-formed file (valid checksum) whose key is another one, under this key's name. */
    fresh_dir("foreign");
    char path[8192];
    warm(path);
    size_t size;
    unsigned char *buf = (unsigned char *)tslurp(path, &size);
    char *drv = memmem(buf + 24, size - 24, "driver=", 7);
    ck_assert_ptr_nonnull(drv);
    drv[7] ^= 0x01; /* another driver version */
    reseal(buf, size);
    spit(path, buf, size);
    free(buf);
    expect_recovery("foreign key");
}
END_TEST

START_TEST(test_binary_rejected_by_driver)
{
    /* A well-formed file with the right key whose payload the driver cannot load. */
    fresh_dir("garbage");
    char path[8192];
    warm(path);
    size_t size;
    unsigned char *buf = (unsigned char *)tslurp(path, &size);
    uint32_t klen;
    uint64_t plen;
    memcpy(&klen, buf + 12, 4);
    memcpy(&plen, buf + 16, 8);
    unsigned char *payload = buf + 24 + klen;
    for (uint64_t i = 0; i < plen; i++) payload[i] = (unsigned char)(i * 131 + 7);
    reseal(buf, size);
    spit(path, buf, size);
    free(buf);
    expect_recovery("garbage binary");
}
END_TEST

START_TEST(test_wrapping_lengths)
{
    /* A file shorter than its header, key and checksum whose payload length (2^64 - 1) wraps the sum
     * of the lengths to the file's size, with a valid checksum. That needs the checksum's first byte
     * to equal the key's last (they share a byte), so the test tries keys until one does. Such a file
     * had passed the size check and the load then moved 2^64 - 1 bytes. */
    fresh_dir("wrap");
    char path[8192];
    warm(path); /* a real file, for the format word */
    size_t real_size;
    unsigned char *real = (unsigned char *)tslurp(path, &real_size);
    char key[64];
    unsigned char buf[24 + sizeof key + 7];
    size_t size = 0;
    for (int i = 0; i < 100000 && !size; i++) {
        snprintf(key, sizeof key, "a crafted key %d", i);
        const uint32_t klen = (uint32_t)strlen(key);
        const uint64_t plen = UINT64_MAX;
        memcpy(buf, real, 12); /* magic and format */
        memcpy(buf + 12, &klen, 4);
        memcpy(buf + 16, &plen, 8);
        memcpy(buf + 24, key, klen);
        const size_t s = 24 + klen + 7; /* 24 + klen + plen + 8 == s modulo 2^64 */
        const unsigned char last = buf[24 + klen - 1];
        reseal(buf, s);
        if (buf[s - 8] == last) size = s;
    }
    free(real);
    ck_assert_msg(size > 0, "no key of 100000 gave a checksum that ends its key");
    char kpath[4200];
    ocx__cache_path(key, kpath, sizeof kpath);
    spit(kpath, buf, size);
    ocx__cache_blob blob;
    int rejected = 0;
    ck_assert_int_eq(ocx__cache_load(key, &blob, &rejected), OCX_ERR_IO);
    ck_assert_int_eq(rejected, 1);
    ck_assert_ptr_null(blob.data);
    ck_assert_msg(strstr(ocx_last_error(), "lengths disagree"), "%s", ocx_last_error());
    struct stat sb;
    ck_assert_int_ne(stat(kpath, &sb), 0); /* deleted */
}
END_TEST

/* The message of a failed call outlives later calls that succeed (ocx.h), including the cache's own
 * misses, rejections and failed writes, which are no failure of the call. */
START_TEST(test_last_error_kept)
{
    fresh_dir("last-error");
    ocx_buffer *b = NULL;
    ck_assert_int_ne(ocx_buffer_create(NULL, OCX_F32, 4, &b), OCX_OK);
    char want[1024];
    snprintf(want, sizeof want, "%s", ocx_last_error());
    ck_assert_msg(want[0], "the failed call left no message");
    const char *stage[] = {"a miss and a write", "a hit", "a rejected file", "an unwritable directory"};
    char path[8192], file[8400];
    for (int i = 0; i < 4; i++) {
        if (i == 2) {
            ck_assert_int_eq(truncate(path, 40), 0);
        } else if (i == 3) {
            snprintf(file, sizeof file, "%s/a-file", dir);
            spit(file, (const unsigned char *)"x", 1);
            setenv("OCX_CACHE_DIR", file, 1);
        }
        ocx_context_stats st = tadd_in_new_context();
        if (i == 0) {
            int tmp;
            char names[8][8192];
            ck_assert_int_eq(entries(dir, names, &tmp), 1);
            snprintf(path, sizeof path, "%s", names[0]);
        }
        ck_assert_msg(i != 1 || st.programs_from_disk == 1, "the second context did not load from disk");
        ck_assert_msg(i != 2 || st.disk_cache_rejected == 1, "the truncated file was not rejected");
        ck_assert_msg(!strcmp(ocx_last_error(), want), "after %s: the last error is '%s', was '%s'", stage[i],
                      ocx_last_error(), want);
    }
    setenv("OCX_CACHE_DIR", dir, 1);
}
END_TEST

/* Every warning of a call, one per line (the handler's `user`: a 4-KiB buffer). */
static void all_warnings(const char *message, void *user)
{
    size_t used = strlen(user);
    snprintf((char *)user + used, 4096 - used, "%s\n", message);
}

/* tadd_in_new_context() with its warnings kept in `warned` (this suite runs with OCX_QUIET=1). */
static ocx_context_stats tadd_warned(char warned[4096])
{
    warned[0] = '\0';
    unsetenv("OCX_QUIET");
    ocx_set_warning_handler(all_warnings, warned);
    ocx_context_stats st = tadd_in_new_context();
    ocx_set_warning_handler(NULL, NULL);
    setenv("OCX_QUIET", "1", 1);
    return st;
}

START_TEST(test_unwritable_and_missing_directories)
{
    fresh_dir("unwritable");
    char file[8192], sub[8400];
    snprintf(file, sizeof file, "%s/a-file", dir);
    spit(file, (const unsigned char *)"x", 1);
    /* the regular file itself: the warning says why (it had said "mkdir: Success") */
    setenv("OCX_CACHE_DIR", file, 1);
    char warned[4096];
    ocx_context_stats st = tadd_warned(warned);
    ck_assert_uint_eq(st.disk_cache_writes, 0);
    ck_assert_msg(strstr(warned, strerror(ENOTDIR)), "the warning: %s", warned);

    snprintf(sub, sizeof sub, "%s/cache", file); /* a directory below a regular file: cannot exist */
    setenv("OCX_CACHE_DIR", sub, 1);
    st = tadd_in_new_context();
    ck_assert_uint_eq(st.programs_compiled, 1);
    ck_assert_uint_eq(st.disk_cache_writes, 0);

    snprintf(sub, sizeof sub, "%s/missing-parent/cache", dir);
    setenv("OCX_CACHE_DIR", sub, 1);
    st = tadd_in_new_context();
    ck_assert_uint_eq(st.programs_compiled, 1);
    ck_assert_uint_eq(st.disk_cache_writes, 0);
    struct stat sb;
    ck_assert_int_ne(stat(sub, &sb), 0); /* not created behind the user's back */

    setenv("OCX_CACHE_DIR", dir, 1);
    setenv("OCX_CACHE", "0", 1);
    st = tadd_in_new_context();
    ck_assert_uint_eq(st.disk_cache_writes, 0);
    char names[8][8192];
    int tmp;
    ck_assert_int_eq(entries(dir, names, &tmp), 0);
    /* and nothing is loaded: with the entry stored, OCX_CACHE=0 compiles again (only stores had
     * been shown off) */
    unsetenv("OCX_CACHE");
    st = tadd_in_new_context();
    ck_assert_uint_eq(st.disk_cache_writes, 1);
    setenv("OCX_CACHE", "0", 1);
    st = tadd_in_new_context();
    unsetenv("OCX_CACHE");
    ck_assert_uint_eq(st.programs_from_disk, 0);
    ck_assert_uint_eq(st.programs_compiled, 1);
}
END_TEST

/* A relative OCX_CACHE_DIR is used from the working directory, and said once ("~" or " ", quoting
 * slips, had put caches wherever programs ran, without a word). */
START_TEST(test_relative_directory)
{
    fresh_dir("relative");
    char was[4096];
    ck_assert_ptr_nonnull(getcwd(was, sizeof was));
    ck_assert_int_eq(chdir(dir), 0);
    setenv("OCX_CACHE_DIR", "~", 1);
    char warned[4096];
    ck_assert_uint_ge(tadd_warned(warned).disk_cache_writes, 1);
    char expect[8400];
    snprintf(expect, sizeof expect, "OCX_CACHE_DIR=~ is relative: the cache is %s/~,", dir);
    ck_assert_msg(strstr(warned, expect), "the warnings:\n%s", warned);
    struct stat sb;
    ck_assert_int_eq(stat("~", &sb), 0);
    ck_assert(S_ISDIR(sb.st_mode));
    tadd_warned(warned);
    ck_assert_msg(!strstr(warned, "is relative"), "said again:\n%s", warned);
    ck_assert_int_eq(chdir(was), 0);
}
END_TEST

START_TEST(test_not_a_regular_file)
{
    /* A FIFO at an entry's name had made the load wait forever for a writer (fopen). */
    alarm(300); /* a hang fails the test here, not at the suite's timeout */
    fresh_dir("fifo");
    char path[8192];
    warm(path);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkfifo(path, 0644), 0);
    expect_recovery("a FIFO");

    /* A directory there cannot be deleted: rebuilt each time, and the warnings say what stands in the
     * way, not that the cache's directory is unwritable (which had used up that one warning). */
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    char warned[4096];
    ocx_context_stats st = tadd_warned(warned);
    ck_assert_uint_eq(st.disk_cache_rejected, 1);
    ck_assert_uint_eq(st.programs_compiled, 1);
    ck_assert_uint_eq(st.disk_cache_writes, 0);
    ck_assert_msg(strstr(warned, "not a regular file") && strstr(warned, "could not be deleted") &&
                      strstr(warned, "rename") && !strstr(warned, "cannot write to"),
                  "the warnings:\n%s", warned);
    /* A refused store is said once a process: in a shared directory every entry another user stored
     * refuses it, and each program's store had been warned about. */
    st = tadd_warned(warned);
    ck_assert_uint_eq(st.programs_compiled, 1); /* built, so a store was tried */
    ck_assert_uint_eq(st.disk_cache_writes, 0);
    ck_assert_msg(!strstr(warned, "rename"), "said again:\n%s", warned);
    alarm(0);
}
END_TEST

/* A binary the driver rejects is deleted only while it is still the file that was loaded: another
 * process that stored a new entry meanwhile (after the long build of the bad one) keeps it. */
START_TEST(test_remove_spares_a_newer_entry)
{
    fresh_dir("newer");
    const char *key = "a test key";
    const unsigned char v1[] = "first", v2[] = "second";
    char path[4200];
    ocx__cache_path(key, path, sizeof path);
    ck_ok(ocx__cache_store(key, v1, sizeof v1));
    ocx__cache_blob blob;
    ck_ok(ocx__cache_load(key, &blob, NULL));
    free(blob.data);
    ck_ok(ocx__cache_store(key, v2, sizeof v2)); /* another process's, renamed into place */
    ocx__cache_remove(key, &blob);
    struct stat sb;
    ck_assert_msg(stat(path, &sb) == 0, "the newer entry was deleted");
    ck_ok(ocx__cache_load(key, &blob, NULL));
    ck_assert_uint_eq(blob.size, sizeof v2);
    ck_assert_int_eq(memcmp(blob.data, v2, sizeof v2), 0);
    free(blob.data);
    ocx__cache_remove(key, &blob);
    ck_assert_int_ne(stat(path, &sb), 0); /* the one loaded: deleted */
}
END_TEST

START_TEST(test_stale_temporaries_removed)
{
    /* A process killed between writing its temporary file and renaming it leaves the file behind; a
     * later store removes those older than ten minutes (.tmp-<pid>-<count>), and leaves a fresh one
     * (a store under way) and every other file, however old: the directory may be shared with a
     * user's files (a pattern for earlier versions' mkstemp names had deleted a ".tmp-backup"). */
    fresh_dir("stale");
    char old_tmp[8400], users[8400], new_tmp[8400];
    snprintf(old_tmp, sizeof old_tmp, "%s/.tmp-4242-7", dir);
    snprintf(users, sizeof users, "%s/.tmp-backup", dir);
    snprintf(new_tmp, sizeof new_tmp, "%s/.tmp-4243-0", dir);
    spit(old_tmp, (const unsigned char *)"partial", 7);
    spit(users, (const unsigned char *)"partial", 7);
    spit(new_tmp, (const unsigned char *)"partial", 7);
    struct utimbuf hour_ago = {time(NULL) - 3600, time(NULL) - 3600};
    ck_assert_int_eq(utime(old_tmp, &hour_ago), 0);
    ck_assert_int_eq(utime(users, &hour_ago), 0);
    ocx_context_stats st = tadd_in_new_context();
    ck_assert_uint_eq(st.disk_cache_writes, 1);
    char names[8][8192];
    int tmp;
    ck_assert_int_eq(entries(dir, names, &tmp), 1);
    ck_assert_int_eq(tmp, 2);
    struct stat sb;
    ck_assert_int_ne(stat(old_tmp, &sb), 0);
    ck_assert_int_eq(stat(users, &sb), 0);
    ck_assert_int_eq(stat(new_tmp, &sb), 0);
}

START_TEST(test_entries_take_the_umask)
{
    /* An entry's mode is 0666 less the umask, as a plain file's: mkstemp's 0600 had kept a cache
     * directory shared by a group from every user but the entry's writer (each compiled every
     * kernel again, and replaced the other's entries). */
    fresh_dir("umask");
    const mode_t was = umask(002);
    ocx_context_stats st = tadd_in_new_context();
    umask(was);
    ck_assert_uint_eq(st.disk_cache_writes, 1);
    char names[8][8192];
    int tmp;
    ck_assert_int_eq(entries(dir, names, &tmp), 1);
    struct stat sb;
    ck_assert_int_eq(stat(names[0], &sb), 0);
    ck_assert_msg((sb.st_mode & 0777) == 0664, "entry mode %o", (unsigned)(sb.st_mode & 0777));
}
END_TEST

START_TEST(test_directory_without_home)
{
    /* Services and containers often run without HOME: the cache goes where "~" would, the password
     * database's home directory (it had been off, silently). Nothing is written. */
    unsetenv("OCX_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    struct passwd *pw = getpwuid(getuid());
    char got[4096], want[4200];
    ocx__cache_dir(got, sizeof got);
    if (pw && pw->pw_dir && pw->pw_dir[0]) {
        snprintf(want, sizeof want, "%s/.cache/ocx", pw->pw_dir);
        ck_assert_str_eq(got, want);
    } else {
        ck_assert_str_eq(got, ""); /* no home at all: uncached, with a warning */
    }
    setenv("HOME", "/nonexistent-home", 1);
    ocx__cache_dir(got, sizeof got);
    ck_assert_str_eq(got, "/nonexistent-home/.cache/ocx");
    /* a relative XDG_CACHE_HOME is ignored, as the XDG specification says (it had put the cache
     * under whatever directory the process ran in); an absolute one is taken */
    setenv("XDG_CACHE_HOME", "relative/cache", 1);
    ocx__cache_dir(got, sizeof got);
    ck_assert_str_eq(got, "/nonexistent-home/.cache/ocx");
    setenv("XDG_CACHE_HOME", "/nonexistent-xdg", 1);
    ocx__cache_dir(got, sizeof got);
    ck_assert_str_eq(got, "/nonexistent-xdg/ocx");
    unsetenv("XDG_CACHE_HOME");
}
END_TEST

START_TEST(test_directory_too_long)
{
    /* An OCX_CACHE_DIR longer than a path may be: uncached, with a warning (it had been cut short
     * to the name of another directory, which the warning then named) */
    char long_dir[5000];
    memset(long_dir, 'd', sizeof long_dir - 1);
    long_dir[0] = '/';
    long_dir[sizeof long_dir - 1] = '\0';
    setenv("OCX_CACHE_DIR", long_dir, 1);
    char got[4096] = "unset";
    ocx__cache_dir(got, sizeof got);
    ck_assert_str_eq(got, "");
}
END_TEST

START_TEST(test_two_processes_race)
{
    /* Two fresh processes build the same kernels into one empty directory at the same moment. The
     * demo's size class and tadd_in_new_context's share the built-in parameters (a profile may split
     * them), and SPREAD=0 keeps their groups alike where a profile would set it (the shorter add,
     * 4099 elements, would then run in smaller groups on a CPU: another program). */
    tno_profiles();
    setenv("OCX_VECTOR_PARAMS", "SPREAD=0", 1);
    fresh_dir("race");
    const char *tools = getenv("OCX_TEST_TOOLS");
    ck_assert_msg(tools != NULL, "the test environment sets OCX_TEST_TOOLS");
    char bench[8192];
    snprintf(bench, sizeof bench, "%s/ocx-bench", tools);
    pid_t pid[2];
    for (int i = 0; i < 2; i++) {
        pid[i] = fork();
        ck_assert_int_ge(pid[i], 0);
        if (pid[i] == 0) {
            freopen("/dev/null", "w", stdout);
            execl(bench, bench, "demo", (char *)NULL);
            _exit(127);
        }
    }
    for (int i = 0; i < 2; i++) {
        int status = 0;
        ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "racer %d failed (status %d)", i, status);
    }
    char names[8][8192];
    int tmp;
    ck_assert_int_eq(entries(dir, names, &tmp), 1);
    ck_assert_int_eq(tmp, 0); /* no temporary file left behind */
    ocx_context_stats st = tadd_in_new_context();
    unsetenv("OCX_VECTOR_PARAMS");
    ck_assert_uint_eq(st.programs_from_disk, 1);
    ck_assert_uint_eq(st.programs_compiled, 0);
}
END_TEST

int main(void)
{
    setenv("OCX_QUIET", "1", 1); /* the corruption cases warn by design */
    Suite *s = suite_create("cache");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_miss_then_hit);
    tcase_add_test(core, test_truncated);
    tcase_add_test(core, test_bit_flipped);
    tcase_add_test(core, test_zero_length);
    tcase_add_test(core, test_foreign_key);
    tcase_add_test(core, test_binary_rejected_by_driver);
    tcase_add_test(core, test_wrapping_lengths);
    tcase_add_test(core, test_last_error_kept);
    tcase_add_test(core, test_unwritable_and_missing_directories);
    tcase_add_test(core, test_relative_directory);
    tcase_add_test(core, test_not_a_regular_file);
    tcase_add_test(core, test_remove_spares_a_newer_entry);
    tcase_add_test(core, test_stale_temporaries_removed);
    tcase_add_test(core, test_entries_take_the_umask);
    tcase_add_test(core, test_directory_without_home);
    tcase_add_test(core, test_directory_too_long);
    tcase_add_test(core, test_two_processes_race);
    suite_add_tcase(s, core);
    return trun(s);
}
