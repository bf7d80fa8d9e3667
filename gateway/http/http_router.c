/* Owns request routing and the HTTP API's policy: tokens, CORS and origins,
 * the body limit, and the refusal counters and request log limiter.
 *
 * Who may do what: WHIP/WHEP offers are open (RFC 9725) unless [http]
 * whip_token is set; a session's resource id is its capability (PATCH and
 * DELETE of /whip/resource/<id>, /api/sessions/<id>/message and
 * /recording); every other /api/ route needs the API token whenever there
 * is one, configured or generated (api_token.h): /api/calls, rooms,
 * ingest, recording rooms, TURN credentials, listings. */
#include "http/http_router.h"

#include "http/health.h"

#include "session/events.h"
#include "http/http_host.h"
#include "http/http_static.h"
#include "http/http_tls.h"
#include "http/ingest_api.h"

#include "base/bearer.h"
#include "base/log.h"
#include "http/metrics.h"
#include "http/session_api.h"
#include "http/whip_api.h"
#include "session/plugin_registry.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

/* Source buckets kept at once by the per-source offer limit. */
#define ADMISSION_MAX_SOURCES 16384
/* Request log lines: this many per interval, then a count of the rest. */
#define HTTP_LOG_BURST       20
#define HTTP_LOG_INTERVAL_US (10ull * 1000000ull)

void moat_http_router_init(moat_gateway *gateway)
{
    const moat_config *config = &gateway->config;
    gateway->admission =
        moat_admission_new((unsigned)config->whip_rate_per_ip, (unsigned)config->whip_burst_per_ip,
                           ADMISSION_MAX_SOURCES);
    gateway->create_admission =
        moat_admission_new((unsigned)config->room_create_rate_per_ip,
                           (unsigned)config->room_create_burst_per_ip, ADMISSION_MAX_SOURCES);
    gateway->api_host_names = moat_http_host_names(config->http_bind, config->server_names, true);
    moat_log_limiter_init(&gateway->http_log, HTTP_LOG_BURST, HTTP_LOG_INTERVAL_US);
    /* Sessions hold these counters until their worker frees them: the
     * gateway frees the table after the workers (moat_gateway_stop). */
    if (!gateway->pending_sources)
        gateway->pending_sources = moat_source_counts_new();
}

void moat_http_router_clear(moat_gateway *gateway)
{
    moat_admission_free(gateway->admission);
    gateway->admission = NULL;
    moat_admission_free(gateway->create_admission);
    gateway->create_admission = NULL;
    g_strfreev(gateway->api_host_names);
    gateway->api_host_names = NULL;
    if (gateway->http_routes)
        g_array_free(gateway->http_routes, TRUE);
    gateway->http_routes = NULL;
}

typedef struct {
    const char *method;
    const char *path;
    moat_http_route_fn handler;
    void *user;
    bool node_only; /* the handler authenticates a cluster node itself */
} registered_route;

static void add_route(moat_gateway *gateway, registered_route route)
{
    if (!gateway->http_routes)
        gateway->http_routes = g_array_new(FALSE, FALSE, sizeof(registered_route));
    g_array_append_val(gateway->http_routes, route);
}

void moat_http_route_register(moat_gateway *gateway, const char *method, const char *path,
                              moat_http_route_fn handler, void *user)
{
    add_route(gateway, (registered_route){method, path, handler, user, false});
}

void moat_http_node_route_register(moat_gateway *gateway, const char *method, const char *path,
                                   moat_http_route_fn handler, void *user)
{
    add_route(gateway, (registered_route){method, path, handler, user, true});
}

void moat_http_offer_hook_set(moat_gateway *gateway, moat_http_offer_hook_fn hook, void *user)
{
    gateway->http_offer_hook = (void (*)(void))hook;
    gateway->http_offer_hook_user = user;
}

void moat_http_forward_token_set(moat_gateway *gateway, const char *token)
{
    snprintf(gateway->http_forward_token, sizeof gateway->http_forward_token, "%s",
             token ? token : "");
}

const char *moat_http_offer_source(const moat_gateway *gateway, const moat_http_request *request)
{
    size_t length = strlen(gateway->http_forward_token);
    const char *token = moat_http_request_header(request, "X-Moat-Forwarded");
    const char *client = moat_http_request_header(request, "X-Forwarded-For");
    if (length == 0 || token == NULL || client == NULL || strlen(token) != length ||
        CRYPTO_memcmp(token, gateway->http_forward_token, length) != 0 ||
        !g_hostname_is_ip_address(client))
        return request->peer;
    return client;
}

void moat_http_resource_hook_set(moat_gateway *gateway, moat_http_resource_hook_fn hook, void *user)
{
    gateway->http_resource_hook = (void (*)(void))hook;
    gateway->http_resource_hook_user = user;
}

void moat_http_api_hook_set(moat_gateway *gateway, moat_http_api_hook_fn hook, void *user)
{
    gateway->http_api_hook = (void (*)(void))hook;
    gateway->http_api_hook_user = user;
}

void moat_http_metrics_hook_set(moat_gateway *gateway, moat_http_metrics_hook_fn hook, void *user)
{
    gateway->metrics_hook = (void (*)(void))hook;
    gateway->metrics_hook_user = user;
}

void moat_http_health_hook_set(moat_gateway *gateway, moat_http_health_hook_fn hook, void *user)
{
    gateway->health_hook = (void (*)(void))hook;
    gateway->health_hook_user = user;
}

/* A route a feature registered for exactly this method (HEAD: GET) and
 * path, of the kind asked (node_only or not), or false. */
static bool serve_registered(moat_gateway *gateway, const moat_http_request *request,
                             moat_http_response *response, const char *method, const char *path,
                             bool node_only)
{
    if (strcmp(method, "HEAD") == 0)
        method = "GET";
    for (guint i = 0; gateway->http_routes && i < gateway->http_routes->len; i++) {
        const registered_route *route = &g_array_index(gateway->http_routes, registered_route, i);
        if (route->node_only == node_only && strcmp(route->method, method) == 0 &&
            strcmp(route->path, path) == 0) {
            route->handler(route->user, request, response);
            return true;
        }
    }
    return false;
}

/* A path routes were registered for, asked with another method: a 405
 * naming theirs (GET with HEAD), or false. */
static bool refuse_registered_method(moat_gateway *gateway, moat_http_response *response,
                                     const char *path)
{
    GString *allow = g_string_new(NULL);
    for (guint i = 0; gateway->http_routes && i < gateway->http_routes->len; i++) {
        const registered_route *route = &g_array_index(gateway->http_routes, registered_route, i);
        if (strcmp(route->path, path) != 0)
            continue;
        g_string_append_printf(allow, "%s%s", allow->len ? ", " : "", route->method);
        if (strcmp(route->method, "GET") == 0)
            g_string_append(allow, ", HEAD");
    }
    bool refused = allow->len > 0;
    if (refused)
        moat_http_response_not_allowed(response, allow->str, "%s takes %s", path, allow->str);
    g_string_free(allow, TRUE);
    return refused;
}

void moat_http_log(moat_gateway *gateway, const char *format, ...)
{
    uint64_t suppressed = 0;
    if (!moat_log_limiter_allow(&gateway->http_log, (uint64_t)g_get_monotonic_time(), &suppressed))
        return;
    char message[512];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    if (suppressed)
        moat_log_info("http", "%s (%" G_GUINT64_FORMAT " similar lines suppressed)", message,
                      suppressed);
    else
        moat_log_info("http", "%s", message);
}

void moat_http_note_refusal(moat_gateway *gateway, moat_refusal_reason reason, const char *peer)
{
    if ((unsigned)reason < MOAT_REFUSED_REASON_COUNT)
        gateway->refused[reason]++;
    moat_http_log(gateway, "refused a request from %s: %s", peer && *peer ? peer : "?",
                  moat_refusal_reason_name(reason));
}

static bool bearer_is(const moat_http_request *request, const char *secret)
{
    return moat_bearer_matches(moat_http_request_header(request, "Authorization"), secret);
}

static bool has_token(const char *token)
{
    return token && *token;
}

/* The plugin named by /whip/<plugin>[/...] or /whep/<plugin>[/...] asks for
 * the token on offers. */
static bool offers_need_token(moat_gateway *gateway, const char *path)
{
    const char *rest = path + strlen("/whip/");
    size_t length = strcspn(rest, "/");
    char name[64];
    if (length == 0 || length >= sizeof name || !gateway->plugins)
        return false;
    memcpy(name, rest, length);
    name[length] = '\0';
    const moat_plugin *plugin = moat_plugin_registry_find(gateway->plugins, name);
    return plugin && plugin->api_version >= 2 && plugin->offers_need_token;
}

static void unauthorized(moat_http_response *response, const char *what)
{
    moat_http_response_header(response, "WWW-Authenticate", "Bearer");
    moat_http_response_error(response, 401, "unauthorized", "a valid bearer token is required%s%s",
                             *what ? " " : "", what);
}

/* WHIP and WHEP are meant for browsers on any origin (RFC 9725 section 4.6);
 * the resource URL is the capability. */
static void add_whip_cors(moat_http_response *response)
{
    moat_http_response_header(response, "Access-Control-Allow-Origin", "*");
    moat_http_response_header(response, "Access-Control-Allow-Methods",
                              "POST, PATCH, DELETE, OPTIONS");
    moat_http_response_header(response, "Access-Control-Allow-Headers",
                              "Authorization, Content-Type, If-Match");
    moat_http_response_header(response, "Access-Control-Expose-Headers",
                              "Location, ETag, Link, Accept-Patch, Accept-Post, Retry-After");
}

static bool origin_listed(const char *list, const char *origin)
{
    bool listed = false;
    char **entries = g_strsplit(list ? list : "", ",", -1);
    for (char **entry = entries; *entry && !listed; entry++) {
        const char *value = g_strstrip(*entry);
        listed = *value && (strcmp(value, "*") == 0 || g_ascii_strcasecmp(value, origin) == 0);
    }
    g_strfreev(entries);
    return listed;
}

/* The text after `scheme` in `origin`, or NULL. */
static const char *after_scheme(const char *origin, const char *scheme)
{
    size_t length = strlen(scheme);
    return g_ascii_strncasecmp(origin, scheme, length) == 0 ? origin + length : NULL;
}

/* The Origin names the gateway as the request reached it: its Host, with
 * the listener's scheme. Over HTTPS only https: a page on http://H:port
 * (one a network attacker can write) is another origin. Plain HTTP takes
 * https too: a TLS-terminating reverse proxy in front (README) serves the
 * pages over https, and Moat cannot tell. */
static bool same_origin(moat_gateway *gateway, const moat_http_request *request, const char *origin)
{
    const char *host = moat_http_request_header(request, "Host");
    if (!host || !*host)
        return false;
    const char *rest = after_scheme(origin, "https://");
    if (!rest && !moat_http_tls_configured(&gateway->config))
        rest = after_scheme(origin, "http://");
    return rest && g_ascii_strcasecmp(rest, host) == 0;
}

/* /api/ (and event upgrades): the Host must name the gateway (http_host.h),
 * or a page whose name was re-pointed at it (DNS rebinding) would pass the
 * same-origin check below. 421: the request reached a server that is not
 * the one it names. */
static bool admit_api_host(moat_gateway *gateway, const moat_http_request *request,
                           moat_http_response *response)
{
    const char *host = moat_http_request_header(request, "Host");
    /* Browsers always send Host: a request without one (HTTP/1.0 tools)
     * cannot come from a rebound page. */
    if (!host || !*host ||
        moat_http_host_allowed(host, (const char *const *)gateway->api_host_names))
        return true;
    moat_http_note_refusal(gateway, MOAT_REFUSED_WRONG_HOST, request->peer);
    moat_http_response_error(response, 421, "wrong_host",
                             "the API answers only to its own names and addresses (see [http] "
                             "server_names)");
    return false;
}

/* What a page on a listed origin may send to /api/ (its preflight's
 * answer): every method an /api/ route takes (listings: GET and HEAD;
 * rooms, ingests, recordings, session messages, the cluster drain: POST and
 * DELETE; none takes PUT or PATCH). Before, only GET was named, so a
 * browser kept a listed page from deleting a room or a recording. */
#define API_CORS_METHODS "GET, HEAD, POST, DELETE, OPTIONS"

/* /api/ from a browser: the dashboard's own origin and [http] api_origins
 * only, so that a page an operator happens to open cannot drive the API.
 * Requests without Origin (curl, Prometheus, same-origin GET) pass. */
static bool admit_api_origin(moat_gateway *gateway, const moat_http_request *request,
                             moat_http_response *response)
{
    const char *origin = moat_http_request_header(request, "Origin");
    if (!origin || same_origin(gateway, request, origin))
        return true;
    if (!origin_listed(gateway->config.api_origins, origin)) {
        moat_http_response_error(response, 403, "origin_not_allowed",
                                 "this origin may not use the API (see [http] api_origins)");
        return false;
    }
    moat_http_response_header(response, "Access-Control-Allow-Origin", origin);
    moat_http_response_header(response, "Vary", "Origin");
    moat_http_response_header(response, "Access-Control-Allow-Methods", API_CORS_METHODS);
    moat_http_response_header(response, "Access-Control-Allow-Headers",
                              "Authorization, Content-Type");
    return true;
}

bool moat_http_admit_events_upgrade(moat_gateway *gateway, const moat_http_request *request,
                                    moat_http_response *response)
{
    if (!admit_api_host(gateway, request, response)) {
        moat_events_count_refusal(MOAT_EVENTS_REFUSED_HOST);
        return false;
    }
    const char *origin = moat_http_request_header(request, "Origin");
    /* A WebSocket is not subject to CORS: the listed origins and the
     * gateway's own are all that may open one. */
    if (origin && !same_origin(gateway, request, origin) &&
        !origin_listed(gateway->config.api_origins, origin)) {
        moat_events_count_refusal(MOAT_EVENTS_REFUSED_ORIGIN);
        moat_http_response_error(response, 403, "origin_not_allowed",
                                 "this origin may not listen to events (see [http] api_origins)");
        return false;
    }
    switch (moat_events_admit(request->peer)) {
    case MOAT_EVENTS_ADMITTED:
        return true;
    case MOAT_EVENTS_FULL:
        moat_events_count_refusal(MOAT_EVENTS_REFUSED_FULL);
        moat_http_response_error(response, 503, "too_many_listeners",
                                 "the gateway holds its maximum of event listeners");
        return false;
    case MOAT_EVENTS_SOURCE_FULL:
        moat_events_count_refusal(MOAT_EVENTS_REFUSED_SOURCE_FULL);
        moat_http_response_error(response, 429, "too_many_listeners",
                                 "this source holds its maximum of event listeners (see [http] "
                                 "max_event_listeners_per_source)");
        return false;
    }
    return false;
}

/* POST to a plugin's collection (POST /api/rooms) creates a resource: a
 * per-source token bucket bounds how fast ([room] create_rate_per_ip). */
static bool admit_create(moat_gateway *gateway, const moat_http_request *request,
                         moat_http_response *response, const char *path)
{
    if (strcmp(request->method, "POST") != 0)
        return true;
    bool collection = false;
    for (size_t i = 0; i < moat_plugin_registry_count(gateway->plugins); i++) {
        const moat_plugin *plugin = moat_plugin_registry_at(gateway->plugins, i);
        size_t length = plugin->api_path ? strlen(plugin->api_path) : 0;
        if (length && strncmp(path, plugin->api_path, length) == 0 &&
            (path[length] == '\0' || strcmp(path + length, "/") == 0))
            collection = true;
    }
    if (!collection)
        return true;
    unsigned wait = moat_admission_take(gateway->create_admission, request->peer,
                                        (uint64_t)g_get_monotonic_time());
    if (wait == 0)
        return true;
    moat_http_note_refusal(gateway, MOAT_REFUSED_CREATE_RATE, request->peer);
    char seconds[16];
    snprintf(seconds, sizeof seconds, "%u", wait);
    moat_http_response_header(response, "Retry-After", seconds);
    moat_http_response_error(response, 429, "rate_limited",
                             "too many creations from this source (see [room] create_rate_per_ip)");
    return false;
}

static void serve_metrics(moat_gateway *gateway, const moat_http_request *request,
                          moat_http_response *response)
{
    const moat_config *config = &gateway->config;
    if (has_token(config->metrics_token) && !bearer_is(request, config->metrics_token) &&
        !bearer_is(request, config->token)) {
        unauthorized(response, "for /metrics");
        return;
    }
    char *body = moat_metrics_render(gateway);
    moat_http_response_set(response, 200, "text/plain; version=0.0.4", body, strlen(body));
}

/* /healthz and /metrics take GET and HEAD; another method is a 405 naming
 * them, as on every other path (before, any method was served). False for
 * other paths. */
static bool serve_monitoring(moat_gateway *gateway, const moat_http_request *request,
                             moat_http_response *response, const char *path, const char *method)
{
    bool health = strcmp(path, "/healthz") == 0;
    if (!health && strcmp(path, "/metrics") != 0)
        return false;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        moat_http_response_not_allowed(response, "GET, HEAD", "%s takes GET", path);
    else if (health)
        moat_http_health(gateway, response);
    else
        serve_metrics(gateway, request, response);
    return true;
}

static void serve_whip(moat_gateway *gateway, const moat_http_request *request,
                       moat_http_response *response)
{
    const char *path = request->path;
    if (g_str_has_prefix(path, "/whip/resource/")) {
        const char *rest = path + strlen("/whip/resource/");
        moat_http_resource_hook_fn hook = (moat_http_resource_hook_fn)gateway->http_resource_hook;
        if (hook && hook(gateway->http_resource_hook_user, request, response, rest))
            return;
        moat_whip_handle_resource(gateway, request, response, rest);
        return;
    }
    bool whep = g_str_has_prefix(path, "/whep/");
    const char *rest = path + strlen("/whip/"); /* same length as "/whep/" */
    if (strcmp(request->method, "POST") != 0) {
        moat_http_response_not_allowed(response, "POST",
                                       "POST an SDP offer to a WHIP or WHEP endpoint");
        return;
    }
    /* /whip/<plugin>[/<resource>]: the resource is the plugin's (rooms). */
    const char *slash = strchr(rest, '/');
    char plugin[64];
    size_t length = slash ? (size_t)(slash - rest) : strlen(rest);
    if (length == 0 || length >= sizeof plugin || (whep && !slash)) {
        moat_http_response_error(response, 404, "unknown_plugin", "no such WHIP endpoint");
        return;
    }
    memcpy(plugin, rest, length);
    plugin[length] = '\0';
    const char *resource = slash ? slash + 1 : "";
    moat_http_offer_hook_fn hook = (moat_http_offer_hook_fn)gateway->http_offer_hook;
    if (hook && *resource &&
        hook(gateway->http_offer_hook_user, request, response, whep ? "whep" : "whip", plugin,
             resource))
        return;
    moat_whip_handle_offer(gateway, request, response, whep ? "whep" : "whip", plugin,
                           slash ? slash + 1 : "");
}

/* A plugin's JSON API (plugin API v2 api_path), or false. */
static bool serve_plugin_api(moat_gateway *gateway, const moat_http_request *request,
                             moat_http_response *response, const char *path)
{
    for (size_t i = 0; i < moat_plugin_registry_count(gateway->plugins); i++) {
        const moat_plugin *plugin = moat_plugin_registry_at(gateway->plugins, i);
        if (!plugin->api_path || !plugin->handle_api || !g_str_has_prefix(path, plugin->api_path))
            continue;
        char next = path[strlen(plugin->api_path)];
        if (next != '\0' && next != '/')
            continue;
        if (moat_session_api_plugin_recording(gateway, plugin, request, response, path) ||
            moat_ingest_api_handle(gateway, plugin, request, response, path))
            return true;
        int status = 500;
        char *body = plugin->handle_api(request->method, path, request->body ? request->body : "",
                                        request->body_length, &status);
        /* The response takes the body. */
        moat_http_response_set(response, (unsigned)status, body ? "application/json" : NULL, body,
                               body ? strlen(body) : 0);
        moat_http_response_allow_from_body(response);
        return true;
    }
    return false;
}

bool moat_http_serve_plugin_api_local(moat_gateway *gateway, const moat_http_request *request,
                                      moat_http_response *response)
{
    return serve_plugin_api(gateway, request, response, request->path ? request->path : "");
}

/* /api/sessions/<name>/message or /api/sessions/<name>/recording. */
static bool acts_on_session(const char *path)
{
    const char *prefix = "/api/sessions/";
    if (!g_str_has_prefix(path, prefix))
        return false;
    const char *name = path + strlen(prefix);
    const char *slash = strchr(name, '/');
    return slash && slash > name &&
           (strcmp(slash, "/message") == 0 || strcmp(slash, "/recording") == 0);
}

void moat_http_route(moat_gateway *gateway, const moat_http_request *request,
                     moat_http_response *response)
{
    const moat_config *config = &gateway->config;
    const char *path = request->path ? request->path : "";
    const char *method = request->method ? request->method : "";
    bool whip = g_str_has_prefix(path, "/whip/") || g_str_has_prefix(path, "/whep/");
    bool api = g_str_has_prefix(path, "/api/");
    if (whip)
        add_whip_cors(response);
    if (api && (!admit_api_host(gateway, request, response) ||
                !admit_api_origin(gateway, request, response)))
        return;
    if (request->body_length > (size_t)config->max_body_bytes) {
        moat_http_note_refusal(gateway, MOAT_REFUSED_BODY_TOO_LARGE, request->peer);
        moat_http_response_error(response, 413, "body_too_large",
                                 "request bodies are limited to %d bytes", config->max_body_bytes);
        return;
    }
    if (strcmp(method, "OPTIONS") == 0) {
        if (whip)
            moat_http_response_header(response, "Accept-Post", "application/sdp");
        moat_http_response_set(response, 204, NULL, NULL, 0);
        return;
    }
    if (serve_monitoring(gateway, request, response, path, method))
        return;
    bool offer = whip && strcmp(method, "POST") == 0 && !g_str_has_prefix(path, "/whip/resource/");
    if (offer && !moat_whip_admit(gateway, request, response))
        return;
    /* The API token: configured, or generated when the API listens beyond
     * loopback (api_token.h); none only on a loopback-only API. */
    bool privileged = has_token(config->token) && bearer_is(request, config->token);
    if (offer && has_token(config->whip_token) && !privileged &&
        !bearer_is(request, config->whip_token)) {
        unauthorized(response, "for WHIP and WHEP offers");
        return;
    }
    /* A plugin may ask for the token on its offers even when WHIP is open
     * (moat_plugin.offers_need_token: a tunnel carries IP). */
    if (offer && !privileged &&
        !(has_token(config->whip_token) && bearer_is(request, config->whip_token)) &&
        (has_token(config->token) || has_token(config->whip_token)) &&
        offers_need_token(gateway, path)) {
        unauthorized(response, "for this plugin's offers");
        return;
    }
    /* A session's resource id is its capability (RFC 9725): its WHIP
     * resource, its message and recording routes take it without the token;
     * the session API checks the name. Everything else under /api/ needs
     * the token when there is one, except the routes other cluster nodes
     * call, whose handlers check the node credential. */
    if (api && serve_registered(gateway, request, response, method, path, true))
        return;
    if (api && !acts_on_session(path) && has_token(config->token) && !privileged) {
        unauthorized(response, "");
        return;
    }
    if (whip)
        serve_whip(gateway, request, response);
    else if (api && serve_registered(gateway, request, response, method, path, false))
        return;
    else if (api) {
        if (refuse_registered_method(gateway, response, path) ||
            !admit_create(gateway, request, response, path))
            return;
        moat_http_api_hook_fn hook = (moat_http_api_hook_fn)gateway->http_api_hook;
        if (hook && hook(gateway->http_api_hook_user, request, response))
            return;
        if (!serve_plugin_api(gateway, request, response, path))
            moat_session_api_handle(gateway, request, response, privileged);
    } else
        moat_http_serve_static(gateway, request, response);
}
