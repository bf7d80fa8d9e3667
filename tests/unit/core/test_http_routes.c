/* Routes a feature registers with the router (moat_http_route_register): the
 * router's policy (bearer token, body limit) applies before them, and they
 * answer exactly their method (HEAD for GET) and path; another method on
 * their path gets 405 with Allow. */
#include "http/http_router.h"

#include <glib.h>
#include <string.h>

static int served;

static void serve_things(void *user, const moat_http_request *request, moat_http_response *response)
{
    served++;
    g_assert_cmpstr(user, ==, "things");
    moat_http_response_set(response, 200, "application/json", g_strdup("{}"), 2);
}

static const char *header_of(const void *context, const char *name)
{
    return g_ascii_strcasecmp(name, "Authorization") == 0 ? context : NULL;
}

static char allowed[64]; /* the last reply's Allow header, "" without one */

static unsigned route(moat_gateway *gateway, const char *method, const char *path,
                      const char *authorization, size_t body_length)
{
    moat_http_request request = {.method = method,
                                 .path = path,
                                 .body = body_length ? "x" : NULL,
                                 .body_length = body_length,
                                 .peer = "127.0.0.1",
                                 .header = header_of,
                                 .header_context = authorization};
    moat_http_response response = {0};
    moat_http_route(gateway, &request, &response);
    const char *allow = moat_http_response_get_header(&response, "Allow");
    g_strlcpy(allowed, allow ? allow : "", sizeof allowed);
    unsigned status = response.status;
    moat_http_response_clear(&response);
    return status;
}

static void test_registered_route_after_policy(void)
{
    moat_gateway gateway = {0};
    moat_config_init(&gateway.config);
    moat_http_router_init(&gateway);
    moat_http_route_register(&gateway, "GET", "/api/things", serve_things, "things");
    served = 0;

    g_assert_cmpuint(route(&gateway, "GET", "/api/things", NULL, 0), ==, 200);
    g_assert_cmpint(served, ==, 1);

    /* With [http] token, the route is reached only with the bearer. */
    g_free(gateway.config.token);
    gateway.config.token = g_strdup("secret");
    g_assert_cmpuint(route(&gateway, "GET", "/api/things", NULL, 0), ==, 401);
    g_assert_cmpuint(route(&gateway, "GET", "/api/things", "Bearer wrong", 0), ==, 401);
    g_assert_cmpint(served, ==, 1);
    g_assert_cmpuint(route(&gateway, "GET", "/api/things", "Bearer secret", 0), ==, 200);
    g_assert_cmpint(served, ==, 2);

    /* The body limit comes first. */
    gateway.config.max_body_bytes = 0;
    g_assert_cmpuint(route(&gateway, "GET", "/api/things", "Bearer secret", 1), ==, 413);
    g_assert_cmpint(served, ==, 2);

    moat_http_router_clear(&gateway);
    moat_source_counts_free(gateway.pending_sources);
    g_assert_null(gateway.http_routes);
    moat_config_clear(&gateway.config);
}

/* Another method on a registered path: 405 naming the path's methods (a
 * GET route takes HEAD too). */
static void test_registered_path_other_method(void)
{
    moat_gateway gateway = {0};
    moat_config_init(&gateway.config);
    moat_http_router_init(&gateway);
    moat_http_route_register(&gateway, "GET", "/api/things", serve_things, "things");
    moat_http_route_register(&gateway, "DELETE", "/api/things", serve_things, "things");
    moat_http_node_route_register(&gateway, "POST", "/api/node-things", serve_things, "things");
    served = 0;

    g_assert_cmpuint(route(&gateway, "HEAD", "/api/things", NULL, 0), ==, 200);
    g_assert_cmpuint(route(&gateway, "DELETE", "/api/things", NULL, 0), ==, 200);
    g_assert_cmpint(served, ==, 2);
    g_assert_cmpuint(route(&gateway, "POST", "/api/things", NULL, 0), ==, 405);
    g_assert_cmpstr(allowed, ==, "GET, HEAD, DELETE");
    g_assert_cmpuint(route(&gateway, "GET", "/api/node-things", NULL, 0), ==, 405);
    g_assert_cmpstr(allowed, ==, "POST");
    g_assert_cmpint(served, ==, 2);

    moat_http_router_clear(&gateway);
    moat_source_counts_free(gateway.pending_sources);
    moat_config_clear(&gateway.config);
}

typedef struct {
    const char *host;
    const char *origin;
} browser_headers;

static const char *browser_header(const void *context, const char *name)
{
    const browser_headers *headers = context;
    if (g_ascii_strcasecmp(name, "Host") == 0)
        return headers->host;
    return g_ascii_strcasecmp(name, "Origin") == 0 ? headers->origin : NULL;
}

/* A browser's GET /api/things from a page on `origin`. */
static unsigned route_from(moat_gateway *gateway, const char *origin)
{
    browser_headers headers = {.host = "localhost:8088", .origin = origin};
    moat_http_request request = {.method = "GET",
                                 .path = "/api/things",
                                 .peer = "127.0.0.1",
                                 .header = browser_header,
                                 .header_context = &headers};
    moat_http_response response = {0};
    moat_http_route(gateway, &request, &response);
    unsigned status = response.status;
    moat_http_response_clear(&response);
    return status;
}

/* The gateway's own origin is its Host with the listener's scheme: over
 * HTTPS a page on http://<host> is another origin (it passed, the scheme
 * was not looked at). Plain HTTP also takes https (a TLS-terminating
 * reverse proxy in front); other hosts need [http] api_origins. */
static void test_same_origin_scheme(void)
{
    moat_gateway gateway = {0};
    moat_config_init(&gateway.config);
    moat_http_router_init(&gateway);
    moat_http_route_register(&gateway, "GET", "/api/things", serve_things, "things");

    g_assert_cmpuint(route_from(&gateway, "http://localhost:8088"), ==, 200);
    g_assert_cmpuint(route_from(&gateway, "https://localhost:8088"), ==, 200);
    g_assert_cmpuint(route_from(&gateway, "http://other.example:8088"), ==, 403);
    g_assert_cmpuint(route_from(&gateway, "ftp://localhost:8088"), ==, 403);

    g_free(gateway.config.http_tls_cert);
    g_free(gateway.config.http_tls_key);
    gateway.config.http_tls_cert = g_strdup("cert.pem");
    gateway.config.http_tls_key = g_strdup("key.pem");
    g_assert_cmpuint(route_from(&gateway, "https://localhost:8088"), ==, 200);
    g_assert_cmpuint(route_from(&gateway, "HTTPS://LOCALHOST:8088"), ==, 200);
    g_assert_cmpuint(route_from(&gateway, "http://localhost:8088"), ==, 403);
    /* Listed, it passes like any other origin. */
    g_free(gateway.config.api_origins);
    gateway.config.api_origins = g_strdup("http://localhost:8088");
    g_assert_cmpuint(route_from(&gateway, "http://localhost:8088"), ==, 200);

    moat_http_router_clear(&gateway);
    moat_source_counts_free(gateway.pending_sources);
    moat_config_clear(&gateway.config);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/http/routes/registered-after-policy", test_registered_route_after_policy);
    g_test_add_func("/http/routes/registered-path-other-method", test_registered_path_other_method);
    g_test_add_func("/http/routes/same-origin-scheme", test_same_origin_scheme);
    return g_test_run();
}
