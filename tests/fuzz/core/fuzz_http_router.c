/* The HTTP API through its real router, without sockets: each input is up to
 * four requests (method, path, headers, body) against a live gateway core
 * (one started worker, the echo plugin, a DTLS identity, the session
 * registry, the stats snapshot), so WHIP offers create real sessions that later requests of the
 * same input can PATCH or DELETE ("$ID" in a path is the last created
 * session's resource id). The first byte picks the policy: API token,
 * metrics token, API origins, tight session caps, a tight offer rate, the
 * request's source address.
 *
 * Properties checked on every response (abort on violation): a status from
 * 100 to 599; JSON bodies are valid UTF-8 JSON; an error status has a JSON
 * body; a 201 to a WHIP/WHEP offer carries a Location and a session to
 * start.
 *
 * Input: <flags byte> then requests separated by "\n--next--\n", each
 * "METHOD\nPATH\nName: value\n...\n\nBODY". */
#include <arpa/inet.h>
#include <glib.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "session/gateway_state.h"
#include "app/http_routes.h"
#include "http/http_router.h"
#include "base/log.h"
#include "session/session.h"
#include "session/session_internal.h"
#include "session/stats_snapshot.h"
#include "session/whip_session.h"
#include "dtls/certificate.h"
#include "dtls/dtls_context.h"
#include "srtp/srtp_session.h"

#define MAX_REQUESTS 4
#define MAX_HEADERS  16

static moat_gateway *gateway;
static moat_admission *open_admission, *tight_admission;

typedef struct {
    char *names[MAX_HEADERS];
    char *values[MAX_HEADERS];
    size_t n;
} header_list;

static const char *find_header(const void *context, const char *name)
{
    const header_list *list = context;
    for (size_t i = 0; i < list->n; i++) {
        if (g_ascii_strcasecmp(list->names[i], name) == 0)
            return list->values[i];
    }
    return NULL;
}

static uint16_t free_udp_port(void)
{
    int fd = socket(AF_INET6, SOCK_DGRAM, 0);
    struct sockaddr_in6 address = {.sin6_family = AF_INET6, .sin6_addr = in6addr_any};
    socklen_t length = sizeof address;
    if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof address) != 0 ||
        getsockname(fd, (struct sockaddr *)&address, &length) != 0)
        abort();
    close(fd);
    return ntohs(address.sin6_port);
}

static void serve_node_route(void *user, const moat_http_request *request,
                             moat_http_response *response)
{
    (void)user;
    const char *credential = moat_http_request_header(request, "X-Moat-Forwarded");
    if (!credential || strcmp(credential, "fuzz-node") != 0) {
        moat_http_response_error(response, 403, "forbidden", "nodes only");
        return;
    }
    moat_http_response_set(response, 204, NULL, NULL, 0);
}

static void fail(const char *what, const char *error)
{
    fprintf(stderr, "fuzz_http_router: %s: %s\n", what, error);
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char error[512] = "";
    moat_log_set_level(MOAT_LOG_ERROR);
    /* This thread is the control thread: it owns the default main context, as
     * the daemon's main loop does, so workers' hops queue there. */
    g_main_context_acquire(NULL);
    gateway = g_new0(moat_gateway, 1);
    moat_config *config = &gateway->config;
    moat_config_init(config);
    config->whip_rate_per_ip = 1000000;
    config->whip_burst_per_ip = 1000000;
    config->room_create_rate_per_ip = 0; /* room creations reach the plugin */
    config->pending_timeout_s = 1;
    config->max_body_bytes = 2048; /* inputs are short: make the limit reachable */
    /* apply_flags points these at static strings from now on. */
    g_clear_pointer(&config->token, g_free);
    g_clear_pointer(&config->metrics_token, g_free);
    g_clear_pointer(&config->api_origins, g_free);
    moat_prefilter_settings *prefilter = &gateway->prefilter;
    prefilter->mode = MOAT_DETECTOR_MODE_AUTO;
    prefilter->hold_ms = 2000;
    prefilter->rate_factor = 4.0;
    prefilter->min_excess_pps = 200;
    prefilter->auth_failures_per_s = 50;
    prefilter->budget_percent = 10;
    prefilter->budget_min_pps = 20;
    prefilter->legacy_budget_factor = 2.0;
    prefilter->window_behind = 1024;
    prefilter->window_ahead = 4096;
    prefilter->worker_failures_per_s = 500;
    prefilter->worker_min_excess_pps = 5000;
    if (moat_srtp_library_init() != 0)
        fail("srtp", "init");
    gateway->certificate = moat_certificate_generate(error, sizeof error);
    if (!gateway->certificate)
        fail("certificate", error);
    gateway->dtls_context = moat_dtls_context_new(gateway->certificate, error, sizeof error);
    if (!gateway->dtls_context)
        fail("dtls context", error);
    g_strlcpy(gateway->candidate_addresses[0], "127.0.0.1", 64);
    g_strlcpy(gateway->candidate_addresses[1], "::1", 64);
    gateway->n_candidate_addresses = 2;
    gateway->workers = g_new0(moat_worker *, 1);
    gateway->workers[0] = moat_worker_new(0, "::", free_udp_port(), error, sizeof error);
    if (!gateway->workers[0])
        fail("worker", error);
    gateway->n_workers = 1;
    moat_worker_set_prefilter(gateway->workers[0], prefilter);
    gateway->plugins = moat_plugin_registry_load(config->plugin_dir, &moat_session_gateway_calls,
                                                 error, sizeof error);
    if (!gateway->plugins)
        fail("plugins", error);
    gateway->sessions = moat_session_registry_new();
    moat_whip_bind_gateway(gateway);
    moat_http_router_init(gateway);
    moat_app_register_http_routes(gateway); /* GET /api/calls */
    /* A node-only route (as cluster/cascade_owner.c registers): reached
     * without the API token, its handler checks the node credential. */
    moat_http_node_route_register(gateway, "POST", "/api/cluster/cascade", serve_node_route, NULL);
    open_admission = gateway->admission;
    tight_admission = moat_admission_new(1, 1, 4);
    if (moat_worker_start(gateway->workers[0], error, sizeof error) != 0)
        fail("worker start", error);
    /* Live statistics for /api/stats and /metrics, refreshed as the main
     * context is drained after each input. */
    gateway->stats = moat_stats_snapshot_start(gateway);
    return 0;
}

static void check_response(const moat_http_response *response, bool offer)
{
    if (response->status < 100 || response->status > 599)
        abort();
    if (response->body && response->content_type &&
        strcmp(response->content_type, "application/json") == 0) {
        json_error_t error;
        json_t *value = json_loadb(response->body, response->body_length, 0, &error);
        if (!value) {
            fprintf(stderr, "invalid JSON body: %s\n%.*s\n", error.text, (int)response->body_length,
                    response->body);
            abort();
        }
        json_decref(value);
    }
    if (response->status >= 400 &&
        (!response->body || strcmp(response->content_type, "application/json") != 0))
        abort();
    if (offer && response->status == 201 &&
        (!response->start_session || !moat_http_response_get_header(response, "Location")))
        abort();
}

/* A deferred reply (a plugin's message) completes on the main context. */
static void deferred_done(void *done_data, unsigned status, char *body)
{
    moat_http_response response = {.status = status};
    if (body)
        moat_http_response_set(&response, status, "application/json", body, strlen(body));
    check_response(&response, false);
    moat_http_response_clear(&response);
}

static void drain_main_context(void)
{
    while (g_main_context_iteration(NULL, FALSE))
        ;
}

static void collect_record(moat_session_record *record, void *user)
{
    g_ptr_array_add(user, g_strdup(record->id));
}

/* Every input starts from an empty registry. */
static void hang_up_everything(void)
{
    GPtrArray *ids = g_ptr_array_new_with_free_func(g_free);
    moat_session_registry_foreach(gateway->sessions, collect_record, ids);
    for (guint i = 0; i < ids->len; i++) {
        moat_session_record *record =
            moat_session_registry_find(gateway->sessions, g_ptr_array_index(ids, i));
        if (record)
            moat_whip_session_hang_up(gateway, record);
    }
    g_ptr_array_free(ids, TRUE);
}

static void apply_flags(uint8_t flags)
{
    moat_config *config = &gateway->config;
    static char empty[] = "", api_token[] = "fuzz-token", metrics_token[] = "scrape",
                origins[] = "https://ops.example, *";
    config->token = flags & 1 ? api_token : empty;
    config->metrics_token = flags & 2 ? metrics_token : empty;
    config->api_origins = flags & 4 ? origins : empty;
    config->max_sessions = flags & 8 ? 1 : 8;
    config->max_pending_sessions = flags & 8 ? 1 : 8;
    gateway->admission = flags & 16 ? tight_admission : open_admission;
}

static const char *peer_for(uint8_t flags)
{
    static const char *const peers[] = {"127.0.0.1", "2001:db8::1", "::ffff:10.0.0.1", NULL};
    return peers[(flags >> 5) & 3];
}

/* `raw` with every "$ID" replaced by `id`. */
static char *with_id(const char *raw, const char *id)
{
    char **parts = g_strsplit(raw, "$ID", -1);
    char *joined = g_strjoinv(id, parts);
    g_strfreev(parts);
    return joined;
}

/* Splits one request's text and routes it. `last_id` is updated by a 201. */
static void run_request(const char *text, size_t length, uint8_t flags, char *last_id)
{
    const char *end = text + length;
    const char *method_end = memchr(text, '\n', length);
    if (!method_end)
        return;
    const char *path_start = method_end + 1;
    const char *path_end = memchr(path_start, '\n', (size_t)(end - path_start));
    if (!path_end)
        path_end = end;
    char *method = g_strndup(text, (size_t)(method_end - text));
    char *raw_path = g_strndup(path_start, (size_t)(path_end - path_start));
    char *path = with_id(raw_path, last_id);
    header_list headers = {0};
    const char *cursor = path_end < end ? path_end + 1 : end;
    while (cursor < end) {
        const char *line_end = memchr(cursor, '\n', (size_t)(end - cursor));
        if (!line_end)
            line_end = end;
        if (line_end == cursor) {
            cursor++;
            break;
        }
        const char *colon = memchr(cursor, ':', (size_t)(line_end - cursor));
        if (colon && headers.n < MAX_HEADERS) {
            headers.names[headers.n] = g_strndup(cursor, (size_t)(colon - cursor));
            const char *value = colon + 1;
            while (value < line_end && *value == ' ')
                value++;
            headers.values[headers.n] = g_strndup(value, (size_t)(line_end - value));
            headers.n++;
        }
        cursor = line_end < end ? line_end + 1 : end;
    }
    size_t body_length = (size_t)(end - cursor);
    char *body = body_length ? g_memdup2(cursor, body_length) : NULL;
    /* The adapter's Content-Length check (http_server.c): a length it
     * accepts fits libsoup's goffset. */
    uint64_t declared = 0;
    if (moat_http_content_length_parse(find_header(&headers, "Content-Length"), &declared) &&
        declared > (uint64_t)G_MAXINT64)
        abort();
    moat_http_request request = {
        .method = method,
        .path = path,
        .body = body,
        .body_length = body_length,
        .peer = peer_for(flags),
        .header = find_header,
        .header_context = &headers,
    };
    moat_http_response response = {0};
    moat_http_route(gateway, &request, &response);
    if (response.deferred.start) {
        response.deferred.start(response.deferred.data, deferred_done, NULL);
        response.deferred.start = NULL;
    } else {
        /* A 201 from a plugin's API (a room created) is no session. */
        check_response(&response, !g_str_has_prefix(path, "/api/"));
    }
    if (response.start_session) {
        const char *location = moat_http_response_get_header(&response, "Location");
        const char *slash = location ? strrchr(location, '/') : NULL;
        if (slash)
            g_strlcpy(last_id, slash + 1, 40);
        moat_whip_session_start(response.start_session, response.start_worker, NULL, NULL, NULL);
        response.start_session = NULL;
    }
    moat_http_response_clear(&response);
    for (size_t i = 0; i < headers.n; i++) {
        g_free(headers.names[i]);
        g_free(headers.values[i]);
    }
    g_free(body);
    g_free(path);
    g_free(raw_path);
    g_free(method);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t flags = data[0];
    apply_flags(flags);
    const char *text = (const char *)data + 1;
    size_t remaining = size - 1;
    static const char separator[] = "\n--next--\n";
    char last_id[40] = "";
    for (int n = 0; n < MAX_REQUESTS && remaining > 0; n++) {
        const char *next = memmem(text, remaining, separator, strlen(separator));
        size_t length = next ? (size_t)(next - text) : remaining;
        run_request(text, length, flags, last_id);
        if (!next)
            break;
        remaining -= length + strlen(separator);
        text = next + strlen(separator);
    }
    hang_up_everything();
    drain_main_context();
    return 0;
}
