/* The HTTP API's connection accounting (http_connections.h): the caps in all
 * and per source, release, and a table that never outlives the connections. */
#include "session/http_admission.h"
#include "http/http_connections.h"

#include <glib.h>
#include <stdio.h>

static void test_per_source_cap(void)
{
    moat_connection_counts *counts = moat_connection_counts_new(0, 3);
    for (int i = 0; i < 3; i++)
        g_assert_cmpint(moat_connection_counts_admit(counts, "4:192.0.2.1"), ==,
                        MOAT_CONNECTION_ADMITTED);
    g_assert_cmpint(moat_connection_counts_admit(counts, "4:192.0.2.1"), ==,
                    MOAT_CONNECTION_OVER_SOURCE);
    /* A refusal is not counted. */
    g_assert_cmpuint(moat_connection_counts_of(counts, "4:192.0.2.1"), ==, 3);
    g_assert_cmpuint(moat_connection_counts_open(counts), ==, 3);
    /* Another source has its own allowance. */
    g_assert_cmpint(moat_connection_counts_admit(counts, "4:192.0.2.2"), ==,
                    MOAT_CONNECTION_ADMITTED);
    /* One released: one more admitted. */
    moat_connection_counts_release(counts, "4:192.0.2.1");
    g_assert_cmpint(moat_connection_counts_admit(counts, "4:192.0.2.1"), ==,
                    MOAT_CONNECTION_ADMITTED);
    g_assert_cmpuint(moat_connection_counts_open(counts), ==, 4);
    moat_connection_counts_free(counts);
}

static void test_total_cap(void)
{
    moat_connection_counts *counts = moat_connection_counts_new(4, 0);
    char key[48];
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "4:198.51.100.%d", i);
        g_assert_cmpint(moat_connection_counts_admit(counts, key), ==, MOAT_CONNECTION_ADMITTED);
    }
    g_assert_cmpint(moat_connection_counts_admit(counts, "4:203.0.113.9"), ==,
                    MOAT_CONNECTION_OVER_TOTAL);
    /* The total cap is checked first: a source over both is over the total. */
    g_assert_cmpint(moat_connection_counts_admit(counts, "4:198.51.100.0"), ==,
                    MOAT_CONNECTION_OVER_TOTAL);
    moat_connection_counts_release(counts, "4:198.51.100.3");
    g_assert_cmpint(moat_connection_counts_admit(counts, "4:203.0.113.9"), ==,
                    MOAT_CONNECTION_ADMITTED);
    moat_connection_counts_free(counts);
}

static void test_unlimited(void)
{
    moat_connection_counts *counts = moat_connection_counts_new(0, 0);
    for (int i = 0; i < 10000; i++)
        g_assert_cmpint(moat_connection_counts_admit(counts, "4:192.0.2.1"), ==,
                        MOAT_CONNECTION_ADMITTED);
    g_assert_cmpuint(moat_connection_counts_open(counts), ==, 10000);
    g_assert_cmpuint(moat_connection_counts_sources(counts), ==, 1);
    moat_connection_counts_free(counts);
}

/* Sources are forgotten with their last connection: the table is bounded by
 * the open connections whatever number of sources came and went. */
static void test_table_follows_connections(void)
{
    moat_connection_counts *counts = moat_connection_counts_new(100, 2);
    char key[48];
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 100; i++) {
            snprintf(key, sizeof key, "4:10.%d.%d.1", round, i);
            g_assert_cmpint(moat_connection_counts_admit(counts, key), ==,
                            MOAT_CONNECTION_ADMITTED);
        }
        g_assert_cmpuint(moat_connection_counts_sources(counts), ==, 100);
        for (int i = 0; i < 100; i++) {
            snprintf(key, sizeof key, "4:10.%d.%d.1", round, i);
            moat_connection_counts_release(counts, key);
        }
        g_assert_cmpuint(moat_connection_counts_sources(counts), ==, 0);
        g_assert_cmpuint(moat_connection_counts_open(counts), ==, 0);
    }
    moat_connection_counts_free(counts);
}

static void test_release_of_nothing(void)
{
    moat_connection_counts *counts = moat_connection_counts_new(2, 2);
    moat_connection_counts_release(counts, "4:192.0.2.1");
    g_assert_cmpuint(moat_connection_counts_open(counts), ==, 0);
    g_assert_cmpint(moat_connection_counts_admit(counts, "4:192.0.2.1"), ==,
                    MOAT_CONNECTION_ADMITTED);
    moat_connection_counts_release(counts, "4:192.0.2.1");
    moat_connection_counts_release(counts, "4:192.0.2.1");
    g_assert_cmpuint(moat_connection_counts_open(counts), ==, 0);
    g_assert_cmpuint(moat_connection_counts_sources(counts), ==, 0);
    moat_connection_counts_free(counts);
}

/* Keys as the listener makes them: one IPv6 /64 is one source. */
static void test_ipv6_prefix_is_one_source(void)
{
    moat_connection_counts *counts = moat_connection_counts_new(0, 2);
    char key[48];
    moat_admission_source_key("2001:db8:1:2::1", key, sizeof key);
    g_assert_cmpint(moat_connection_counts_admit(counts, key), ==, MOAT_CONNECTION_ADMITTED);
    moat_admission_source_key("2001:db8:1:2:aaaa::7", key, sizeof key);
    g_assert_cmpint(moat_connection_counts_admit(counts, key), ==, MOAT_CONNECTION_ADMITTED);
    moat_admission_source_key("2001:db8:1:2:ffff::9", key, sizeof key);
    g_assert_cmpint(moat_connection_counts_admit(counts, key), ==, MOAT_CONNECTION_OVER_SOURCE);
    moat_admission_source_key("2001:db8:1:3::1", key, sizeof key);
    g_assert_cmpint(moat_connection_counts_admit(counts, key), ==, MOAT_CONNECTION_ADMITTED);
    /* An IPv4-mapped address is its IPv4 source. */
    moat_admission_source_key("::ffff:192.0.2.1", key, sizeof key);
    g_assert_cmpint(moat_connection_counts_admit(counts, key), ==, MOAT_CONNECTION_ADMITTED);
    g_assert_cmpuint(moat_connection_counts_of(counts, "4:192.0.2.1"), ==, 1);
    moat_connection_counts_free(counts);
}

static gpointer release_elsewhere(gpointer counts)
{
    moat_connection_counts_release(counts, "4:192.0.2.1");
    return NULL;
}

/* Control thread only: where asserts are compiled in (the ASan build the
 * tests use), a release from another thread (a socket finalized on a GLib
 * pool thread did that) aborts instead of racing the control thread. */
static void test_other_thread_aborts(void)
{
#ifdef NDEBUG
    g_test_skip("asserts compiled out");
#else
    if (g_test_subprocess()) {
        moat_connection_counts *counts = moat_connection_counts_new(0, 0);
        moat_connection_counts_admit(counts, "4:192.0.2.1");
        g_thread_join(g_thread_new("elsewhere", release_elsewhere, counts));
        moat_connection_counts_free(counts);
        return;
    }
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_failed();
    g_test_trap_assert_stderr("*moat_connection_counts_release*owner*");
#endif
}

static void test_refusal_names(void)
{
    g_assert_cmpstr(moat_refusal_reason_name(MOAT_REFUSED_REQUEST_TIMEOUT), ==, "request_timeout");
    g_assert_cmpstr(moat_refusal_reason_name(MOAT_REFUSED_MAX_CONNECTIONS), ==, "max_connections");
    g_assert_cmpstr(moat_refusal_reason_name(MOAT_REFUSED_MAX_CONNECTIONS_SRC), ==,
                    "max_connections_per_source");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/http_connections/per_source_cap", test_per_source_cap);
    g_test_add_func("/http_connections/total_cap", test_total_cap);
    g_test_add_func("/http_connections/unlimited", test_unlimited);
    g_test_add_func("/http_connections/table_follows_connections", test_table_follows_connections);
    g_test_add_func("/http_connections/release_of_nothing", test_release_of_nothing);
    g_test_add_func("/http_connections/ipv6_prefix", test_ipv6_prefix_is_one_source);
    g_test_add_func("/http_connections/refusal_names", test_refusal_names);
    g_test_add_func("/http_connections/other_thread_aborts", test_other_thread_aborts);
    return g_test_run();
}
