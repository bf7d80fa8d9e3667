/* Where moat-flood may send without --allow-remote. */
#include "target_policy.h"

#include <arpa/inet.h>
#include <string.h>

#include <glib.h>

static bool local(const char *text)
{
    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof storage);
    if (strchr(text, ':') != NULL) {
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
        v6->sin6_family = AF_INET6;
        g_assert_cmpint(inet_pton(AF_INET6, text, &v6->sin6_addr), ==, 1);
    } else {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
        v4->sin_family = AF_INET;
        g_assert_cmpint(inet_pton(AF_INET, text, &v4->sin_addr), ==, 1);
    }
    return target_address_is_local((struct sockaddr *)&storage);
}

static void test_ranges(void)
{
    const char *allowed[] = {
        "127.0.0.1",   "127.255.0.9",     "10.1.2.3",        "172.16.0.1", "172.31.255.9",
        "192.168.1.1", "100.64.0.1",      "169.254.3.4",     "::1",        "fd00::1",
        "fe80::1",     "::ffff:10.0.0.1", "::ffff:127.0.0.1"};
    const char *refused[] = {"8.8.8.8",     "172.15.255.255", "172.32.0.0",      "192.169.0.1",
                             "100.128.0.1", "11.0.0.1",       "2001:4860::8888", "::ffff:8.8.8.8",
                             "0.0.0.0",     "224.0.0.1"};
    for (size_t i = 0; i < G_N_ELEMENTS(allowed); i++)
        g_assert_true(local(allowed[i]));
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++)
        g_assert_false(local(refused[i]));
}

static void test_hosts_and_urls(void)
{
    char error[256] = "";
    g_assert_cmpint(target_policy_check_host("127.0.0.1", false, error, sizeof error), ==, 0);
    g_assert_cmpint(target_policy_check_host("[::1]", false, error, sizeof error), ==, 0);
    g_assert_cmpint(target_policy_check_host("8.8.8.8", false, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "--allow-remote"));
    g_assert_cmpint(target_policy_check_host("8.8.8.8", true, error, sizeof error), ==, 0);
    g_assert_cmpint(
        target_policy_check_url("http://127.0.0.1:8088/whip/echo", false, error, sizeof error), ==,
        0);
    g_assert_cmpint(target_policy_check_url("http://1.1.1.1/whip/echo", false, error, sizeof error),
                    ==, -1);
    g_assert_cmpint(target_policy_check_url("ftp://127.0.0.1/x", false, error, sizeof error), ==,
                    -1);
    g_assert_cmpint(target_policy_check_url("not a url", false, error, sizeof error), ==, -1);

    struct sockaddr_in6 out;
    g_assert_cmpint(target_policy_resolve("127.0.0.1:20000", false, &out, error, sizeof error), ==,
                    0);
    g_assert_true(IN6_IS_ADDR_V4MAPPED(&out.sin6_addr));
    g_assert_cmpuint(ntohs(out.sin6_port), ==, 20000);
    g_assert_cmpint(target_policy_resolve("[::1]:9", false, &out, error, sizeof error), ==, 0);
    g_assert_true(IN6_IS_ADDR_LOOPBACK(&out.sin6_addr));
    g_assert_cmpint(target_policy_resolve("9.9.9.9:53", false, &out, error, sizeof error), ==, -1);
    g_assert_cmpint(target_policy_resolve("127.0.0.1", false, &out, error, sizeof error), ==, -1);
    g_assert_cmpint(target_policy_resolve("127.0.0.1:0", false, &out, error, sizeof error), ==, -1);
    g_assert_cmpint(target_policy_resolve("127.0.0.1:70000", false, &out, error, sizeof error), ==,
                    -1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/target_policy/ranges", test_ranges);
    g_test_add_func("/target_policy/hosts_urls", test_hosts_and_urls);
    return g_test_run();
}
