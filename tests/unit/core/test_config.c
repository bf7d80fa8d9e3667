/* Configuration: defaults, files, environment and command-line values, and
 * the one-line errors a bad value produces. */
#include "base/config.h"
#include "engine/worker_receive.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

static char *write_config(const char *text)
{
    char *path = NULL;
    int fd = g_file_open_tmp("moat-config-XXXXXX.conf", &path, NULL);
    g_assert_cmpint(fd, >=, 0);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    close(fd);
    return path;
}

static void test_defaults(void)
{
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, 0);
    g_assert_cmpint(config.http_port, ==, 8088);
    g_assert_cmpint(config.media_port, ==, 20000);
    g_assert_cmpint(config.workers, ==, 0);
    g_assert_cmpstr(config.log_level, ==, "info");
    g_assert_true(config.include_loopback);
    g_assert_cmpint(moat_config_prefilter_mode(&config), ==, MOAT_PREFILTER_AUTO);
    moat_config_clear(&config);
}

static void test_file_values_and_errors(void)
{
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    char *good = write_config("[http]\nport = 9000\ntoken = s3cret\n[media]\nport=30000\n"
                              "include_loopback = false\n[prefilter]\nrate_factor = 2.5\n");
    g_assert_cmpint(moat_config_load_file(&config, good, error, sizeof error), ==, 0);
    g_assert_cmpint(config.http_port, ==, 9000);
    g_assert_cmpstr(config.token, ==, "s3cret");
    g_assert_cmpint(config.media_port, ==, 30000);
    g_assert_false(config.include_loopback);
    g_assert_cmpfloat(config.detector_rate_factor, ==, 2.5);

    const struct {
        const char *text;
        const char *expect;
    } bad[] = {
        {"[http]\nport = 70000\n", "[http] port = \"70000\": expected an integer from 1 to 65535"},
        {"[http]\nport = 80x\n", "expected an integer"},
        {"[media]\ninclude_loopback = maybe\n", "expected true or false"},
        {"[prefilter]\nrate_factor = -1\n", "expected a positive number"},
        {"[prefilter]\nlegacy_budget_factor = inf\n", "expected a positive number, at most 1000"},
        {"[nosuch]\nkey = 1\n", "unknown option [nosuch] key"},
        {"not a key file at all\n", "cannot read config file"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *path = write_config(bad[i].text);
        error[0] = '\0';
        g_assert_cmpint(moat_config_load_file(&config, path, error, sizeof error), ==, -1);
        g_assert_nonnull(strstr(error, bad[i].expect));
        g_assert_nonnull(strstr(error, path));
        g_unlink(path);
        g_free(path);
    }
    error[0] = '\0';
    g_assert_cmpint(moat_config_load_file(&config, "/nonexistent/moat.conf", error, sizeof error),
                    ==, -1);
    g_assert_nonnull(strstr(error, "/nonexistent/moat.conf"));
    g_unlink(good);
    g_free(good);
    moat_config_clear(&config);
}

/* A value that is not UTF-8 (a Latin-1 file) was read as "" and started
 * with the option off (no API token): now an error naming the key, without
 * the value. */
static void test_file_value_not_utf8(void)
{
    static const char *const cases[][2] = {
        {"[http]\ntoken = s3cr\xe9t\n", "[http] token"},
        {"[http]\nwhip_token = wh\xe9p\n", "[http] whip_token"},
        {"[call]\ndenied_networks = 10.0.0.0/8 # caf\xe9"
         "\n",
         "[call] denied_networks"},
        {"[dtls]\ncertificate = /etc/moat/c\xe9rt.pem\n", "[dtls] certificate"},
        {"[record]\ndir = /srv/r\xe9"
         "c\n",
         "[record] dir"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        moat_config config;
        moat_config_init(&config);
        char error[256] = "";
        char *path = write_config(cases[i][0]);
        g_assert_cmpint(moat_config_load_file(&config, path, error, sizeof error), ==, -1);
        g_assert_nonnull(strstr(error, path));
        g_assert_nonnull(strstr(error, cases[i][1]));
        g_assert_nonnull(strstr(error, "not UTF-8"));
        g_assert_null(strstr(error, "s3cr"));
        g_unlink(path);
        g_free(path);
        moat_config_clear(&config);
    }
}

/* A NUL byte cut the value short with no error ("token = ab\0c0ffee" was
 * the token "ab", "port=10\0 00" the port 10): the file is refused, at the
 * NUL's offset, and nothing of the value is repeated. */
static void test_file_with_nul_byte(void)
{
    static const struct {
        const char *text;
        size_t length;
        const char *offset;
    } cases[] = {
        {"[http]\ntoken = ab\0c0ffee\n", 25, "NUL byte at offset 17"},
        {"[http]\nport=10\0 00\n", 19, "NUL byte at offset 14"},
        {"# moat\0\n[http]\nport = 9000\n", 27, "NUL byte at offset 6"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        moat_config config;
        moat_config_init(&config);
        char error[256] = "";
        char *path = write_config("");
        g_assert_true(g_file_set_contents(path, cases[i].text, (gssize)cases[i].length, NULL));
        g_assert_cmpint(moat_config_load_file(&config, path, error, sizeof error), ==, -1);
        g_assert_nonnull(strstr(error, path));
        g_assert_nonnull(strstr(error, cases[i].offset));
        g_assert_null(strstr(error, "c0ffee"));
        g_assert_cmpstr(config.token, ==, "");
        g_assert_cmpint(config.http_port, ==, 8088);
        g_unlink(path);
        g_free(path);
        moat_config_clear(&config);
    }
}

/* GKeyFile merges a repeated [group] and kept the last value of a repeated
 * key: a second [http] with "metrics_token =" emptied the token and the file
 * passed. A key set twice in one group is refused, naming the group, the
 * key and both lines; a repeated group setting other keys is fine. */
static void test_file_key_set_twice(void)
{
    static const struct {
        const char *text;
        const char *expect;
    } cases[] = {
        {"[http]\nmetrics_token = s3cret-metrics\nport = 18931\n\n[general]\nworkers = 1\n\n"
         "# another copy of the section\n[http]\nmetrics_token =\n",
         "[http] metrics_token is set twice: on line 2 and on line 10"},
        {"[http]\nport = 9000\nport=9001\n", "[http] port is set twice: on line 2 and on line 3"},
        {"[media]\r\n  port = 30000\r\n[media]  \r\nport\t= 30001\r\n",
         "[media] port is set twice: on line 2 and on line 4"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        moat_config config;
        moat_config_init(&config);
        char error[256] = "";
        char *path = write_config(cases[i].text);
        g_assert_cmpint(moat_config_load_file(&config, path, error, sizeof error), ==, -1);
        g_assert_nonnull(strstr(error, path));
        g_assert_nonnull(strstr(error, cases[i].expect));
        g_assert_null(strstr(error, "s3cret"));
        g_unlink(path);
        g_free(path);
        moat_config_clear(&config);
    }

    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    char *path = write_config("[http]\nport = 9000\n# port = 9001\n[media]\nport = 30000\n"
                              "[http]\nmetrics_token = s3cret\n");
    g_assert_cmpint(moat_config_load_file(&config, path, error, sizeof error), ==, 0);
    g_assert_cmpint(config.http_port, ==, 9000);
    g_assert_cmpint(config.media_port, ==, 30000);
    g_assert_cmpstr(config.metrics_token, ==, "s3cret");
    g_unlink(path);
    g_free(path);
    moat_config_clear(&config);
}

static void test_options_environment_and_validation(void)
{
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    g_assert_cmpint(moat_config_set_by_option(&config, "http-port", "1234", error, sizeof error),
                    ==, 0);
    g_assert_cmpint(config.http_port, ==, 1234);
    g_assert_cmpint(moat_config_set_by_option(&config, "no-such", "1", error, sizeof error), ==, 1);
    g_assert_cmpint(moat_config_set_by_option(&config, "workers", "-1", error, sizeof error), ==,
                    -1);
    g_assert_nonnull(strstr(error, "--workers"));

    g_setenv("MOAT_MEDIA_PORT", "40000", TRUE);
    g_assert_cmpint(moat_config_apply_environment(&config, error, sizeof error), ==, 0);
    g_assert_cmpint(config.media_port, ==, 40000);
    g_setenv("MOAT_MEDIA_PORT", "lots", TRUE);
    g_assert_cmpint(moat_config_apply_environment(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "MOAT_MEDIA_PORT"));
    g_unsetenv("MOAT_MEDIA_PORT");

    moat_config_set_by_option(&config, "log-level", "verbose", error, sizeof error);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "log_level"));
    moat_config_set_by_option(&config, "log-level", "debug", error, sizeof error);
    moat_config_set_by_option(&config, "prefilter-mode", "sometimes", error, sizeof error);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "off, auto or always"));
    moat_config_set_by_option(&config, "prefilter-mode", "always", error, sizeof error);
    moat_config_set_by_option(&config, "certificate", "/tmp/cert.pem", error, sizeof error);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "together"));
    moat_config_set_by_option(&config, "certificate", "", error, sizeof error);
    moat_config_set_by_option(&config, "media-port", "65535", error, sizeof error);
    moat_config_set_by_option(&config, "workers", "4", error, sizeof error);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "past port 65535"));
    moat_config_clear(&config);
}

/* A misspelt MOAT_<SECTION>_<KEY> was ignored without a word (the same typo
 * in the file is an error): MOAT_HTTP_METRIC_TOKEN=s3cret left /metrics
 * open. Now it is an error naming the variable, not its value; MOAT_ names
 * of no section stay untouched. */
static void test_environment_unknown_variable(void)
{
    static const char *const untouched[] = {
        "MOAT_GATEWAY_BINARY", "MOAT_BENCH_QUICK", "MOAT_TUNNEL_TRACE", "MOAT_API_TOKEN",
        "MOAT_CONFIG",         "MOAT_TURN_PORT",   "MOAT_TURN_REALM",   "MOAT_TLS_CERT",
        "MOAT_PUBLIC_HOST",    "MOAT_TEST_TRACE",  "MOAT_ASAN",         "MOAT_HTTPX_PORT",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(untouched); i++)
        g_setenv(untouched[i], "1", TRUE);
    /* Kubernetes' service links for Services "moat-turn" and "moat-record". */
    static const char *const service_links[][2] = {
        {"MOAT_TURN_SERVICE_HOST", "10.96.0.12"},
        {"MOAT_TURN_SERVICE_PORT", "3478"},
        {"MOAT_TURN_SERVICE_PORT_STUN", "3478"},
        {"MOAT_RECORD_PORT", "tcp://10.96.0.13:80"},
        {"MOAT_TURN_PORT_3478_UDP", "udp://10.96.0.12:3478"},
        {"MOAT_TURN_PORT_3478_UDP_PROTO", "udp"},
        {"MOAT_TURN_PORT_3478_UDP_PORT", "3478"},
        {"MOAT_TURN_PORT_3478_UDP_ADDR", "10.96.0.12"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(service_links); i++)
        g_setenv(service_links[i][0], service_links[i][1], TRUE);
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    g_setenv("MOAT_CLUSTER_PASSWORD", "pw", TRUE);
    g_assert_cmpint(moat_config_apply_environment(&config, error, sizeof error), ==, 0);
    g_assert_cmpstr(config.cluster_password, ==, "pw");
    g_unsetenv("MOAT_CLUSTER_PASSWORD");

    static const char *const refused[][2] = {
        {"MOAT_HTTP_METRIC_TOKEN", "environment variable MOAT_HTTP_METRIC_TOKEN: unknown option "
                                   "[http] metric_token"},
        {"MOAT_NG_PROT", "unknown option [ng] prot"},
        {"MOAT_RECORD_PORT", "unknown option [record] port"}, /* not a service link's value */
        {"MOAT_HTTP_", "unknown option [http] "},
        {"MOAT_Http_Metrics_Token", "in capitals: MOAT_HTTP_METRICS_TOKEN"},
        {"MOAT_general_workers", "in capitals: MOAT_GENERAL_WORKERS"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        g_setenv(refused[i][0], "s3cret", TRUE);
        error[0] = '\0';
        g_assert_cmpint(moat_config_apply_environment(&config, error, sizeof error), ==, -1);
        g_assert_nonnull(strstr(error, refused[i][1]));
        g_assert_null(strstr(error, "s3cret"));
        g_unsetenv(refused[i][0]);
    }
    g_assert_cmpint(moat_config_apply_environment(&config, error, sizeof error), ==, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(untouched); i++)
        g_unsetenv(untouched[i]);
    for (size_t i = 0; i < G_N_ELEMENTS(service_links); i++)
        g_unsetenv(service_links[i][0]);
    moat_config_clear(&config);
}

/* Port layouts the start always refused passed validation ("configuration
 * ok"): a call range with no even/odd pair, workers = 0 counted as no
 * worker, the ng port on a worker's port. */
static void test_validate_port_layouts(void)
{
    int processors = (int)g_get_num_processors();
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    g_assert_cmpuint(moat_config_worker_count(&config), ==, (unsigned)processors);
    static const struct {
        const char *min, *max;
        bool ok;
    } ranges[] = {{"30001", "30002", false},
                  {"30000", "30001", true},
                  {"30001", "30003", true},
                  {"30000", "30000", false},
                  {"65535", "65535", false}};
    for (size_t i = 0; i < G_N_ELEMENTS(ranges); i++) {
        moat_config_set_by_option(&config, "media-port-min", ranges[i].min, error, sizeof error);
        moat_config_set_by_option(&config, "media-port-max", ranges[i].max, error, sizeof error);
        error[0] = '\0';
        g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==,
                        ranges[i].ok ? 0 : -1);
        if (!ranges[i].ok)
            g_assert_nonnull(strstr(error, "even/odd pair"));
    }
    moat_config_set_by_option(&config, "media-port-min", "30000", error, sizeof error);
    moat_config_set_by_option(&config, "media-port-max", "39999", error, sizeof error);

    /* workers = 0: one per processor, as the start counts them. */
    char port[16];
    g_snprintf(port, sizeof port, "%d", 65536 - processors);
    moat_config_set_by_option(&config, "media-port", port, error, sizeof error);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, 0);
    if (processors > 1) {
        g_snprintf(port, sizeof port, "%d", 65537 - processors);
        moat_config_set_by_option(&config, "media-port", port, error, sizeof error);
        g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
        g_assert_nonnull(strstr(error, "past port 65535"));
        g_assert_nonnull(strstr(error, "workers = 0"));
    }

    /* The ng socket on a worker's port. */
    moat_config_set_by_option(&config, "media-port", "21050", error, sizeof error);
    moat_config_set_by_option(&config, "workers", "2", error, sizeof error);
    static const struct {
        const char *ng_port;
        bool ok;
    } ng[] = {{"21050", false}, {"21051", false}, {"21052", true}, {"21049", true}, {"0", true}};
    for (size_t i = 0; i < G_N_ELEMENTS(ng); i++) {
        moat_config_set_by_option(&config, "ng-port", ng[i].ng_port, error, sizeof error);
        error[0] = '\0';
        g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, ng[i].ok ? 0 : -1);
        if (!ng[i].ok)
            g_assert_nonnull(strstr(error, "[ng] port"));
    }
    moat_config_clear(&config);
}

/* Decimal options took inf, nan and 1e999 (then cast to integers on the
 * packet path); now finite, above 0, at most the option's bound. */
static void test_decimal_bounds(void)
{
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    static const char *const refused[] = {"inf", "-inf", "nan",    "1e999", "1e300", "1000.5",
                                          "0",   "-1",   "1e-999", "0x",    "4.0 "};
    static const char *const options[] = {"detector-rate-factor", "legacy-budget-factor"};
    for (size_t o = 0; o < G_N_ELEMENTS(options); o++) {
        for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
            error[0] = '\0';
            g_assert_cmpint(
                moat_config_set_by_option(&config, options[o], refused[i], error, sizeof error), ==,
                -1);
            g_assert_nonnull(strstr(error, "expected a positive number, at most 1000"));
        }
        g_assert_cmpint(moat_config_set_by_option(&config, options[o], "1000", error, sizeof error),
                        ==, 0);
        g_assert_cmpint(moat_config_set_by_option(&config, options[o], "0.5", error, sizeof error),
                        ==, 0);
    }
    g_assert_cmpfloat(config.detector_rate_factor, ==, 0.5);
    g_assert_cmpfloat(config.legacy_budget_factor, ==, 0.5);
    moat_config_clear(&config);
}

/* [media] announced_address went into candidates and SDP c= lines
 * unchecked (a host name, a space, CR LF); candidate_addresses was checked.
 * Then both took addresses no peer can send to: unspecified (0.0.0.0 in a
 * call's c= line means hold), multicast, broadcast, v4-mapped. */
static void test_announced_address(void)
{
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    static const char *const refused[] = {"bogus host", "bogus",          "192.0.2.1\r\na=x",
                                          "192.0.2.1 ", "2001:db8::1/64", "example.com"};
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        moat_config_set_by_option(&config, "announced-address", refused[i], error, sizeof error);
        error[0] = '\0';
        g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
        g_assert_nonnull(strstr(error, "[media] announced_address"));
        g_assert_null(strchr(error, '\n'));
        g_assert_null(strchr(error, '\r'));
    }
    static const char *const accepted[] = {"", "203.0.113.5", "2001:db8::1", "127.0.0.1", "::1"};
    for (size_t i = 0; i < G_N_ELEMENTS(accepted); i++) {
        moat_config_set_by_option(&config, "announced-address", accepted[i], error, sizeof error);
        g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, 0);
    }
    moat_config_clear(&config);
}

static void assert_address_refused(const char *option, const char *value, const char *why)
{
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    g_assert_cmpint(moat_config_set_by_option(&config, option, value, error, sizeof error), ==, 0);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    if (!strstr(error, why))
        g_error("%s %s: \"%s\" lacks \"%s\"", option, value, error, why);
    moat_config_clear(&config);
}

static void test_unusable_addresses(void)
{
    static const struct {
        const char *address, *why;
    } refused[] = {
        {"0.0.0.0", "unspecified"},
        {"0.1.2.3", "unspecified"},
        {"::", "unspecified"},
        {"224.0.0.1", "multicast"},
        {"239.255.255.250", "multicast"},
        {"ff02::1", "multicast"},
        {"255.255.255.255", "broadcast"},
        {"::ffff:198.51.100.7", "IPv4-mapped"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        assert_address_refused("announced-address", refused[i].address, refused[i].why);
        char *list = g_strdup_printf("192.0.2.1, %s", refused[i].address);
        assert_address_refused("candidate-addresses", list, refused[i].why);
        g_free(list);
    }
    assert_address_refused("announced-address", "0.0.0.0", "means hold");
    moat_config config;
    moat_config_init(&config);
    char error[256] = "";
    moat_config_set_by_option(&config, "candidate-addresses", "192.0.2.1, 2001:db8::1, 127.0.0.1",
                              error, sizeof error);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, 0);
    moat_config_clear(&config);
}

static void test_first_octet_demux(void)
{
    /* RFC 7983 ranges, edges included. */
    const struct {
        uint8_t first;
        moat_packet_class class;
    } cases[] = {
        {0, MOAT_PACKET_STUN},     {3, MOAT_PACKET_STUN},      {4, MOAT_PACKET_UNKNOWN},
        {19, MOAT_PACKET_UNKNOWN}, {20, MOAT_PACKET_DTLS},     {63, MOAT_PACKET_DTLS},
        {64, MOAT_PACKET_UNKNOWN}, {127, MOAT_PACKET_UNKNOWN}, {128, MOAT_PACKET_SRTP},
        {191, MOAT_PACKET_SRTP},   {192, MOAT_PACKET_UNKNOWN}, {255, MOAT_PACKET_UNKNOWN},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint8_t packet[4] = {cases[i].first, 0, 0, 0};
        g_assert_cmpint(moat_packet_classify(packet, sizeof packet), ==, cases[i].class);
    }
    g_assert_cmpint(moat_packet_classify(NULL, 0), ==, MOAT_PACKET_UNKNOWN);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/config/defaults", test_defaults);
    g_test_add_func("/config/file", test_file_values_and_errors);
    g_test_add_func("/config/file-not-utf8", test_file_value_not_utf8);
    g_test_add_func("/config/file-nul-byte", test_file_with_nul_byte);
    g_test_add_func("/config/file-key-set-twice", test_file_key_set_twice);
    g_test_add_func("/config/options-environment-validation",
                    test_options_environment_and_validation);
    g_test_add_func("/config/environment-unknown-variable", test_environment_unknown_variable);
    g_test_add_func("/config/validate-port-layouts", test_validate_port_layouts);
    g_test_add_func("/config/decimal-bounds", test_decimal_bounds);
    g_test_add_func("/config/announced-address", test_announced_address);
    g_test_add_func("/config/unusable-addresses", test_unusable_addresses);
    g_test_add_func("/worker/first-octet-demux", test_first_octet_demux);
    return g_test_run();
}
