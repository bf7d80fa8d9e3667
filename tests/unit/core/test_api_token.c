/* The generated API token: which bind addresses count as loopback, the
 * 0600 file it is written to (whole, never through a symbolic link), and
 * when one is generated at all. */
#include "http/api_token.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_loopback(void)
{
    g_assert_true(moat_api_token_bind_is_loopback("127.0.0.1"));
    g_assert_true(moat_api_token_bind_is_loopback("127.1.2.3"));
    g_assert_true(moat_api_token_bind_is_loopback("::1"));
    g_assert_true(moat_api_token_bind_is_loopback("::ffff:127.0.0.1"));
    g_assert_false(moat_api_token_bind_is_loopback("0.0.0.0"));
    g_assert_false(moat_api_token_bind_is_loopback("::"));
    g_assert_false(moat_api_token_bind_is_loopback("192.0.2.1"));
    g_assert_false(moat_api_token_bind_is_loopback("localhost"));
    g_assert_false(moat_api_token_bind_is_loopback(NULL));
}

static size_t files_in(const char *folder)
{
    GDir *dir = g_dir_open(folder, 0, NULL);
    g_assert_nonnull(dir);
    size_t n = 0;
    while (g_dir_read_name(dir))
        n++;
    g_dir_close(dir);
    return n;
}

static void test_generate_and_write(void)
{
    char *folder = g_dir_make_tmp("moat-token-XXXXXX", NULL);
    char *path = g_build_filename(folder, "sub", "token", NULL);
    char *sub = g_path_get_dirname(path);
    char error[256] = "";
    moat_config config;
    moat_config_init(&config);
    g_free(config.token_file);
    config.token_file = g_strdup(path);
    /* Loopback only: nothing generated, the API stays open. */
    g_free(config.http_bind);
    config.http_bind = g_strdup("127.0.0.1");
    char *written = NULL;
    g_assert_cmpint(moat_api_token_generate(&config, &written, error, sizeof error), ==, 0);
    g_assert_null(written);
    g_assert_cmpstr(config.token, ==, "");
    /* Every address: a token, and where it goes; nothing written yet (a
     * start that fails later must leave a running Moat's file alone). */
    g_free(config.http_bind);
    config.http_bind = g_strdup("0.0.0.0");
    g_assert_cmpint(moat_api_token_generate(&config, &written, error, sizeof error), ==, 0);
    g_assert_cmpstr(written, ==, path);
    g_assert_cmpuint(strlen(config.token), ==, 64);
    g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
    /* Written into a 0600 file, then replaced whole, no temporary left. */
    for (int round = 0; round < 2; round++) {
        const char *token = round == 0 ? "old" : config.token;
        g_assert_cmpint(moat_api_token_write(written, token, error, sizeof error), ==, 0);
        struct stat info;
        g_assert_cmpint(g_stat(path, &info), ==, 0);
        g_assert_cmpint(info.st_mode & 0777, ==, 0600);
        char *contents = NULL;
        g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
        g_assert_cmpstr(g_strstrip(contents), ==, token);
        g_free(contents);
        g_assert_cmpuint(files_in(sub), ==, 1);
    }
    g_free(written);
    /* A configured token is kept. */
    char *first = g_strdup(config.token);
    g_assert_cmpint(moat_api_token_generate(&config, &written, error, sizeof error), ==, 0);
    g_assert_null(written);
    g_assert_cmpstr(config.token, ==, first);
    g_free(first);
    /* Never through (nor over) a symbolic link, nor over a folder. */
    char *link = g_build_filename(folder, "link", NULL);
    g_assert_cmpint(symlink(path, link), ==, 0);
    g_assert_cmpint(moat_api_token_write(link, "x", error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, link));
    g_assert_true(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
    g_assert_cmpint(moat_api_token_write(sub, "x", error, sizeof error), ==, -1);
    g_assert_cmpuint(files_in(folder), ==, 2);
    g_unlink(link);
    g_unlink(path);
    g_rmdir(sub);
    g_rmdir(folder);
    g_free(sub);
    g_free(link);
    g_free(path);
    g_free(folder);
    moat_config_clear(&config);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/api_token/loopback", test_loopback);
    g_test_add_func("/api_token/generate-and-write", test_generate_and_write);
    return g_test_run();
}
