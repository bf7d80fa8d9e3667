/* The recording folder's checks: /healthz's (unauthenticated, any rate)
 * creates no folder and creates its probe file at most once per interval;
 * the start's creates the folder as the recorder would; the free-space
 * checks (start and /healthz). */
#include "record/record_dir.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char *root;
    char *dir;
    moat_record_dir_health *health;
} fixture;

static void fixture_set_up(fixture *f, gconstpointer data)
{
    (void)data;
    f->root = g_dir_make_tmp("moat-record-dir-XXXXXX", NULL);
    g_assert_nonnull(f->root);
    f->dir = g_build_filename(f->root, "a", "recordings", NULL);
    f->health = moat_record_dir_health_new();
}

static void fixture_tear_down(fixture *f, gconstpointer data)
{
    (void)data;
    moat_record_dir_health_free(f->health);
    g_rmdir(f->dir);
    char *a = g_path_get_dirname(f->dir);
    g_rmdir(a);
    g_unlink(a);
    g_free(a);
    g_rmdir(f->root);
    g_free(f->dir);
    g_free(f->root);
}

static bool check(fixture *f, int64_t now_us, char *why, size_t why_size)
{
    return moat_record_dir_health_check(f->health, f->dir, now_us, why, why_size);
}

static unsigned entries(const char *dir)
{
    GDir *handle = g_dir_open(dir, 0, NULL);
    g_assert_nonnull(handle);
    unsigned n = 0;
    while (g_dir_read_name(handle))
        n++;
    g_dir_close(handle);
    return n;
}

/* Missing, with a parent this process may write into: writable (the
 * recorder creates it at the first recording), and still missing. */
static void test_missing_folder_is_not_created(fixture *f, gconstpointer data)
{
    (void)data;
    char why[160] = "";
    for (int i = 0; i < 3; i++)
        g_assert_true(check(f, 1000000 + i, why, sizeof why));
    g_assert_false(g_file_test(f->dir, G_FILE_TEST_EXISTS));
    char *a = g_path_get_dirname(f->dir);
    g_assert_false(g_file_test(a, G_FILE_TEST_EXISTS));
    g_free(a);
    g_assert_cmpuint(moat_record_dir_health_probes(f->health), ==, 0);
}

/* A hundred checks within the interval create one probe file, not a
 * hundred; the next interval's first check creates the next one. */
static void test_probe_at_most_once_per_interval(fixture *f, gconstpointer data)
{
    (void)data;
    g_assert_cmpint(g_mkdir_with_parents(f->dir, 0750), ==, 0);
    char why[160] = "";
    int64_t start = 50000000;
    for (int i = 0; i < 100; i++)
        g_assert_true(check(f, start + i * 1000, why, sizeof why));
    g_assert_cmpuint(moat_record_dir_health_probes(f->health), ==, 1);
    g_assert_true(check(f, start + MOAT_RECORD_DIR_PROBE_INTERVAL_US - 1, why, sizeof why));
    g_assert_cmpuint(moat_record_dir_health_probes(f->health), ==, 1);
    g_assert_true(check(f, start + MOAT_RECORD_DIR_PROBE_INTERVAL_US, why, sizeof why));
    g_assert_cmpuint(moat_record_dir_health_probes(f->health), ==, 2);
    g_assert_cmpuint(entries(f->dir), ==, 0);

    /* Deleted while running: not created again by the checks. */
    g_assert_cmpint(g_rmdir(f->dir), ==, 0);
    g_assert_true(check(f, start + 3 * MOAT_RECORD_DIR_PROBE_INTERVAL_US, why, sizeof why));
    g_assert_false(g_file_test(f->dir, G_FILE_TEST_EXISTS));
    g_assert_cmpuint(moat_record_dir_health_probes(f->health), ==, 2);
}

/* What stat and access(2) see counts at once, cached probe or not. */
static void test_broken_folder_counts_at_once(fixture *f, gconstpointer data)
{
    (void)data;
    char why[160] = "";
    g_assert_cmpint(g_mkdir_with_parents(f->dir, 0750), ==, 0);
    g_assert_true(check(f, 1000000, why, sizeof why));
    g_assert_cmpint(g_rmdir(f->dir), ==, 0);
    g_assert_true(g_file_set_contents(f->dir, "a file", -1, NULL));
    g_assert_false(check(f, 1000001, why, sizeof why));
    g_assert_cmpstr(why, ==, "not a folder");
    g_unlink(f->dir);

    /* A file where a parent should be: the recorder could not create it. */
    char *a = g_path_get_dirname(f->dir);
    g_assert_cmpint(g_rmdir(a), ==, 0);
    g_assert_true(g_file_set_contents(a, "a file", -1, NULL));
    g_assert_false(check(f, 1000002, why, sizeof why));
    g_assert_nonnull(strstr(why, "cannot create it"));
    g_assert_null(strstr(why, f->root));
    g_free(a);

    if (geteuid() != 0) {
        char *b = g_build_filename(f->root, "b", NULL);
        g_assert_cmpint(g_mkdir(b, 0500), ==, 0);
        g_assert_false(moat_record_dir_health_check(f->health, b, 1000003, why, sizeof why));
        g_assert_nonnull(strstr(why, "cannot create a file there"));
        g_rmdir(b);
        g_free(b);
    }
    g_assert_cmpuint(moat_record_dir_health_probes(f->health), ==, 1);
}

/* The start creates the folder, as the recorder would, and leaves nothing. */
static void test_start_check_creates_the_folder(fixture *f, gconstpointer data)
{
    (void)data;
    char why[160] = "";
    g_assert_true(moat_record_dir_writable(f->dir, why, sizeof why));
    g_assert_true(g_file_test(f->dir, G_FILE_TEST_IS_DIR));
    g_assert_cmpuint(entries(f->dir), ==, 0);
}

/* Free space: the start's check passes with min_free 0 or enough free and
 * names the option otherwise; /healthz's also fails with nothing free, and
 * both pass where statvfs cannot count (/proc) or fails (a missing folder:
 * creating it says what is wrong). */
static void test_free_space_checks(fixture *f, gconstpointer data)
{
    (void)data;
    char why[200] = "";
    g_assert_true(moat_record_dir_enough_space(f->root, 0, why, sizeof why));
    g_assert_true(moat_record_dir_enough_space(f->root, 1, why, sizeof why));
    g_assert_true(moat_record_dir_health_space(f->root, 0, why, sizeof why));
    uint64_t huge = UINT64_C(1) << 62;
    g_assert_false(moat_record_dir_enough_space(f->root, huge, why, sizeof why));
    g_assert_nonnull(strstr(why, "less than [record] min_free_mib"));
    g_assert_null(strstr(why, f->root));
    why[0] = '\0';
    g_assert_false(moat_record_dir_health_space(f->root, huge, why, sizeof why));
    g_assert_nonnull(strstr(why, "min_free_mib"));
    g_assert_true(moat_record_dir_health_space("/proc", huge, why, sizeof why));
    g_assert_true(moat_record_dir_enough_space(f->dir, huge, why, sizeof why));
    g_assert_true(moat_record_dir_health_space(f->dir, huge, why, sizeof why));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add("/record-dir/missing-not-created", fixture, NULL, fixture_set_up,
               test_missing_folder_is_not_created, fixture_tear_down);
    g_test_add("/record-dir/probe-once-per-interval", fixture, NULL, fixture_set_up,
               test_probe_at_most_once_per_interval, fixture_tear_down);
    g_test_add("/record-dir/broken-at-once", fixture, NULL, fixture_set_up,
               test_broken_folder_counts_at_once, fixture_tear_down);
    g_test_add("/record-dir/start-creates", fixture, NULL, fixture_set_up,
               test_start_check_creates_the_folder, fixture_tear_down);
    g_test_add("/record-dir/free-space", fixture, NULL, fixture_set_up, test_free_space_checks,
               fixture_tear_down);
    return g_test_run();
}
