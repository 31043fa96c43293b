/* check_cache — the on-disk binary cache: miss then hit (counted, no compile), every kind of bad file
 * (deleted, rebuilt, stored again), unwritable and missing directories, OCX_CACHE=0, and two
 * processes racing on one key. */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

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

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(*size + 1);
    ck_assert_uint_eq(fread(buf, 1, *size, f), *size);
    fclose(f);
    return buf;
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
    unsigned char *buf = slurp(path, &size);
    ck_assert_int_eq(memcmp(buf, "OCXBIN\r\n", 8), 0);
    uint32_t klen;
    memcpy(&klen, buf + 12, 4);
    char *key = strndup((char *)buf + 24, klen);
    const char *want[] = {"platform=", "device=", "vendor=", "driver=", "ocx=" OCX_VERSION_STRING, "source=vector ",
                          "options="};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(key, want[i]) != NULL, "key lacks '%s':\n%s", want[i], key);
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
    unsigned char *buf = slurp(path, &size);
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
    unsigned char *buf = slurp(path, &size);
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
    unsigned char *buf = slurp(path, &size);
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

static void keep_warning(const char *message, void *user)
{
    if (!*(char *)user) snprintf(user, 1024, "%s", message);
}

START_TEST(test_unwritable_and_missing_directories)
{
    fresh_dir("unwritable");
    char file[8192], sub[8400];
    snprintf(file, sizeof file, "%s/a-file", dir);
    spit(file, (const unsigned char *)"x", 1);
    /* the regular file itself: the warning says why (it had said "mkdir: Success") */
    setenv("OCX_CACHE_DIR", file, 1);
    char warned[1024] = "";
    unsetenv("OCX_QUIET");
    ocx_set_warning_handler(keep_warning, warned);
    ocx_context_stats st = tadd_in_new_context();
    ocx_set_warning_handler(NULL, NULL);
    setenv("OCX_QUIET", "1", 1);
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
    unsetenv("OCX_CACHE");
}
END_TEST

START_TEST(test_two_processes_race)
{
    /* Two fresh processes build the same kernels into one empty directory at the same moment. The
     * demo's size class and tadd_in_new_context's share the built-in parameters (a profile may split them). */
    tno_profiles();
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
    tcase_add_test(core, test_unwritable_and_missing_directories);
    tcase_add_test(core, test_two_processes_race);
    suite_add_tcase(s, core);
    return trun(s);
}
