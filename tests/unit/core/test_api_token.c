/* The generated API token: which bind addresses count as loopback, the
 * 0600 file it is written to (never through a symbolic link), and when one
 * is generated at all. */
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

static void test_prepare(void)
{
    char *folder = g_dir_make_tmp("moat-token-XXXXXX", NULL);
    char *path = g_build_filename(folder, "sub", "token", NULL);
    char error[256] = "";
    moat_config config;
    moat_config_init(&config);
    g_free(config.token_file);
    config.token_file = g_strdup(path);
    /* Loopback only: nothing generated, the API stays open. */
    g_free(config.http_bind);
    config.http_bind = g_strdup("127.0.0.1");
    char *written = NULL;
    g_assert_cmpint(moat_api_token_prepare(&config, &written, error, sizeof error), ==, 0);
    g_assert_null(written);
    g_assert_cmpstr(config.token, ==, "");
    /* Every address: a token, in a 0600 file. */
    g_free(config.http_bind);
    config.http_bind = g_strdup("0.0.0.0");
    g_assert_cmpint(moat_api_token_prepare(&config, &written, error, sizeof error), ==, 0);
    g_assert_cmpstr(written, ==, path);
    g_assert_cmpuint(strlen(config.token), ==, 64);
    struct stat info;
    g_assert_cmpint(g_stat(path, &info), ==, 0);
    g_assert_cmpint(info.st_mode & 0777, ==, 0600);
    char *contents = NULL;
    g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
    g_assert_cmpstr(g_strstrip(contents), ==, config.token);
    g_free(contents);
    g_free(written);
    /* A configured token is kept. */
    char *first = g_strdup(config.token);
    g_assert_cmpint(moat_api_token_prepare(&config, &written, error, sizeof error), ==, 0);
    g_assert_null(written);
    g_assert_cmpstr(config.token, ==, first);
    g_free(first);
    /* Never through a symbolic link. */
    char *link = g_build_filename(folder, "link", NULL);
    g_assert_cmpint(symlink(path, link), ==, 0);
    g_assert_cmpint(moat_api_token_write(link, "x", error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, link));
    g_unlink(link);
    g_unlink(path);
    char *sub = g_path_get_dirname(path);
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
    g_test_add_func("/api_token/prepare", test_prepare);
    return g_test_run();
}
