/* TURN credentials in coturn's REST API scheme, the /api/ice-servers JSON
 * and the RFC 9725 Link headers. The expected password was computed
 * independently: base64(HMAC-SHA1("north", "1700000000:moat")). */
#include "http/ice_servers.h"

#include "base/turn_uri.h"

#include <glib.h>
#include <string.h>

static void test_credentials(void)
{
    moat_turn_credentials c;
    g_assert_cmpint(moat_turn_credentials_make("north", NULL, 1699913600, 86400, &c), ==, 0);
    g_assert_cmpstr(c.username, ==, "1700000000:moat");
    g_assert_cmpstr(c.password, ==, "oiTWJ6G5ipsCJUiQH17dB3+Vn/4=");
    g_assert_cmpint(moat_turn_credentials_make("", NULL, 1, 1, &c), ==, -1);
}

static void configure(moat_config *config, const char *uris)
{
    moat_config_init(config);
    g_free(config->turn_uris);
    config->turn_uris = g_strdup(uris);
    g_free(config->turn_secret);
    config->turn_secret = g_strdup("north");
    config->turn_ttl_s = 86400;
}

static void test_json(void)
{
    moat_config config;
    configure(&config, "turn:a.example:3478?transport=udp, ,turn:b.example:3478?transport=tcp");
    json_t *value = moat_ice_servers_json(&config, "moat", 1699913600);
    json_t *servers = json_object_get(value, "iceServers");
    g_assert_cmpint(json_array_size(servers), ==, 1);
    json_t *server = json_array_get(servers, 0);
    g_assert_cmpint(json_array_size(json_object_get(server, "urls")), ==, 2);
    g_assert_cmpstr(json_string_value(json_object_get(server, "username")), ==, "1700000000:moat");
    g_assert_cmpstr(json_string_value(json_object_get(server, "credential")), ==,
                    "oiTWJ6G5ipsCJUiQH17dB3+Vn/4=");
    json_decref(value);
    moat_config_clear(&config);

    configure(&config, "");
    value = moat_ice_servers_json(&config, "moat", 1699913600);
    g_assert_cmpint(json_array_size(json_object_get(value, "iceServers")), ==, 0);
    json_decref(value);
    moat_config_clear(&config);
}

static void test_link_header(void)
{
    moat_config config;
    configure(&config, "turn:a.example:3478?transport=udp,turn:b.example:3478?transport=tcp");
    char *link = moat_ice_servers_link_header(&config, "moat", 1699913600);
    g_assert_cmpstr(link, ==,
                    "<turn:a.example:3478?transport=udp>; rel=\"ice-server\"; "
                    "username=\"1700000000:moat\"; credential=\"oiTWJ6G5ipsCJUiQH17dB3+Vn/4=\"; "
                    "credential-type=\"password\", "
                    "<turn:b.example:3478?transport=tcp>; rel=\"ice-server\"; "
                    "username=\"1700000000:moat\"; credential=\"oiTWJ6G5ipsCJUiQH17dB3+Vn/4=\"; "
                    "credential-type=\"password\"");
    g_free(link);
    moat_config_clear(&config);
    configure(&config, "");
    g_assert_null(moat_ice_servers_link_header(&config, "moat", 1699913600));
    moat_config_clear(&config);
}

/* [turn] uris without a secret, and [record] all_sessions without a folder,
 * are configuration errors. */
static void test_config_checks(void)
{
    moat_config config;
    char error[256] = "";
    moat_config_init(&config);
    g_assert_cmpint(
        moat_config_set_by_option(&config, "turn-uris", "turn:a:3478", error, sizeof error), ==, 0);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "[turn] secret"));
    g_assert_cmpint(moat_config_set_by_option(&config, "turn-secret", "s", error, sizeof error), ==,
                    0);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, 0);
    g_assert_cmpint(moat_config_set_by_option(&config, "turn-ttl", "10", error, sizeof error), ==,
                    -1);
    g_assert_cmpint(
        moat_config_set_by_option(&config, "record-all-sessions", "true", error, sizeof error), ==,
        0);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "[record] dir"));
    g_assert_cmpint(moat_config_set_by_option(&config, "record-dir", "/tmp/x", error, sizeof error),
                    ==, 0);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, 0);
    moat_config_clear(&config);
}

/* URIs a browser's RTCPeerConnection throws on were handed out as given
 * ("turn.example.com:3478"); now the configuration refuses them. */
static void test_uri_syntax(void)
{
    static const char *const accepted[] = {
        "turn:turn.example.com",
        "turn:turn.example.com:3478",
        "turn:turn.example.com:3478?transport=udp",
        "turn:turn.example.com:3478?transport=TCP",
        "turns:turn.example.com:5349?transport=tcp",
        "stun:stun.example.com:3478",
        "stuns:stun.example.com",
        "turn:203.0.113.7:3478?transport=udp",
        "turn:[2001:db8::7]:3478?transport=udp",
        "stun:[2001:db8::7]",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(accepted); i++)
        if (moat_turn_uri_problem(accepted[i]))
            g_error("%s: %s", accepted[i], moat_turn_uri_problem(accepted[i]));
    static const struct {
        const char *uri, *why;
    } refused[] = {
        {"turn.example.com:3478", "turn:, turns:, stun: or stuns:"},
        {"http://turn.example.com", "turn:, turns:, stun: or stuns:"},
        {"turn:", "no host"},
        {"turn::3478", "no host"},
        {"turn:?transport=udp", "no host"},
        {"turn://turn.example.com:3478", "not turn://host"},
        {"turn:turn.example.com:", "port"},
        {"turn:turn.example.com:0", "port"},
        {"turn:turn.example.com:65536", "port"},
        {"turn:turn.example.com:34x78", "after the host"},
        {"turn:turn example.com", "after the host"},
        {"turn:turn.example.com>; rel=x", "after the host"},
        {"turn:turn.example.com:3478?transport=tls", "?transport=udp"},
        {"turn:turn.example.com?foo=bar", "?transport=udp"},
        {"stun:stun.example.com?transport=udp", "no query"},
        {"turn:[2001:db8::7", "bracketed"},
        {"turn:[]", "bracketed"},
        {"turn:[turn.example.com]", "not an IPv6 address"},
        {"turn:2001:db8::7", "port"},
        /* What aiortc (and, for the key, browsers) refuse. */
        {"TURN:turn.example.com", "turn:, turns:, stun: or stuns:"},
        {"turn:turn.example.com?TRANSPORT=udp", "?transport=udp"},
        {"turn:-", "no letter or digit"},
        {"turn:.:3478", "no letter or digit"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        const char *problem = moat_turn_uri_problem(refused[i].uri);
        if (!problem || !strstr(problem, refused[i].why))
            g_error("%s: \"%s\" lacks \"%s\"", refused[i].uri, problem ? problem : "(accepted)",
                    refused[i].why);
    }
}

/* A bad URI names itself; a secret without URIs was ignored silently. */
static void test_config_refuses_bad_turn_settings(void)
{
    moat_config config;
    char error[512] = "";
    moat_config_init(&config);
    g_assert_cmpint(moat_config_set_by_option(&config, "turn-secret", "s", error, sizeof error), ==,
                    0);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "[turn] secret is set but [turn] uris is empty"));
    g_assert_cmpint(moat_config_set_by_option(&config, "turn-uris", " , ", error, sizeof error), ==,
                    0);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "[turn] uris is empty"));
    g_assert_cmpint(moat_config_set_by_option(&config, "turn-uris",
                                              "turn:a.example:3478, turn.example.com:3478", error,
                                              sizeof error),
                    ==, 0);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, -1);
    g_assert_nonnull(strstr(error, "[turn] uris: \"turn.example.com:3478\""));
    g_assert_cmpint(moat_config_set_by_option(&config, "turn-uris",
                                              "turn:a.example:3478?transport=udp, stun:a.example",
                                              error, sizeof error),
                    ==, 0);
    g_assert_cmpint(moat_config_validate(&config, error, sizeof error), ==, 0);
    moat_config_clear(&config);
}

/* Each session's user part is fresh: 32 hex digits, never repeated. */
static void test_new_user(void)
{
    char a[33], b[33];
    moat_turn_new_user(a);
    moat_turn_new_user(b);
    g_assert_cmpuint(strlen(a), ==, 32);
    g_assert_cmpstr(a, !=, b);
    moat_config config;
    moat_config_init(&config);
    g_assert_cmpint(config.turn_ttl_s, ==, 3600);
    moat_config_clear(&config);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ice_servers/credentials", test_credentials);
    g_test_add_func("/ice_servers/json", test_json);
    g_test_add_func("/ice_servers/link_header", test_link_header);
    g_test_add_func("/ice_servers/config_checks", test_config_checks);
    g_test_add_func("/ice_servers/uri_syntax", test_uri_syntax);
    g_test_add_func("/ice_servers/config_refuses_bad_turn_settings",
                    test_config_refuses_bad_turn_settings);
    g_test_add_func("/ice_servers/new_user", test_new_user);
    return g_test_run();
}
