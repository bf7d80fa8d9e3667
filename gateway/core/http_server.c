#include "core/http_server.h"

#include "core/http_reply.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/session_api.h"
#include "core/whip_api.h"

#include <glib.h>
#include <libsoup/soup.h>
#include <stdio.h>
#include <string.h>

struct moat_http_server {
    SoupServer *server;
    moat_gateway *gateway;
};

static bool authorized(moat_gateway *gateway, SoupServerMessage *message)
{
    const char *token = gateway->config.token;
    if (!token || !*token)
        return true;
    const char *header = soup_message_headers_get_one(
        soup_server_message_get_request_headers(message), "Authorization");
    if (!header || g_ascii_strncasecmp(header, "Bearer ", 7) != 0)
        return false;
    const char *given = header + 7;
    /* Constant-time compare: the token is a secret. */
    size_t a = strlen(given), b = strlen(token);
    unsigned char diff = (unsigned char)(a != b);
    for (size_t i = 0; i < a && i < b; i++)
        diff |= (unsigned char)(given[i] ^ token[i]);
    return diff == 0;
}

static const char *content_type_for(const char *path)
{
    if (g_str_has_suffix(path, ".html"))
        return "text/html; charset=utf-8";
    if (g_str_has_suffix(path, ".js"))
        return "text/javascript; charset=utf-8";
    if (g_str_has_suffix(path, ".css"))
        return "text/css; charset=utf-8";
    if (g_str_has_suffix(path, ".svg"))
        return "image/svg+xml";
    if (g_str_has_suffix(path, ".png"))
        return "image/png";
    return "application/octet-stream";
}

static void serve_static(moat_gateway *gateway, SoupServerMessage *message, const char *path)
{
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    /* Only plain names below the web root: no "..", no hidden files. */
    if (strstr(path, "..") || strstr(path, "/.") || strchr(path, '\\')) {
        moat_http_reply_error(message, 400, "bad_path", "path not allowed");
        return;
    }
    char *file = g_build_filename(gateway->config.web_root, path + 1, NULL);
    char *contents = NULL;
    gsize length = 0;
    if (!g_file_get_contents(file, &contents, &length, NULL)) {
        moat_http_reply_error(message, 404, "not_found", "no such page: %s", path);
    } else {
        moat_http_reply(message, 200, content_type_for(file), contents, length);
    }
    g_free(file);
}

static void route(SoupServer *server, SoupServerMessage *message, const char *path,
                  GHashTable *query, gpointer user_data)
{
    moat_gateway *gateway = user_data;
    const char *method = soup_server_message_get_method(message);

    if (strcmp(method, "OPTIONS") == 0) {
        SoupMessageHeaders *headers = soup_server_message_get_response_headers(message);
        if (g_str_has_prefix(path, "/whip/"))
            soup_message_headers_replace(headers, "Accept-Post", "application/sdp");
        moat_http_reply(message, 204, NULL, NULL, 0);
        return;
    }
    if (strcmp(path, "/healthz") == 0) {
        char *body =
            g_strdup_printf("{\"status\":\"ok\",\"workers\":%u,\"sessions\":%zu}",
                            gateway->n_workers, moat_session_registry_count(gateway->sessions));
        moat_http_reply(message, 200, "application/json", body, strlen(body));
        return;
    }
    if (strcmp(path, "/metrics") == 0) {
        char *body = moat_metrics_render(gateway);
        moat_http_reply(message, 200, "text/plain; version=0.0.4", body, strlen(body));
        return;
    }
    bool api = g_str_has_prefix(path, "/whip/") || g_str_has_prefix(path, "/api/");
    if (api && !authorized(gateway, message)) {
        SoupMessageHeaders *headers = soup_server_message_get_response_headers(message);
        soup_message_headers_replace(headers, "WWW-Authenticate", "Bearer");
        moat_http_reply_error(message, 401, "unauthorized", "a valid bearer token is required");
        return;
    }
    if (g_str_has_prefix(path, "/whip/resource/")) {
        moat_whip_handle_resource(gateway, message, path + strlen("/whip/resource/"));
        return;
    }
    if (g_str_has_prefix(path, "/whip/")) {
        const char *plugin = path + strlen("/whip/");
        if (strcmp(method, "POST") != 0) {
            moat_http_reply_error(message, 405, "method_not_allowed",
                                  "POST an SDP offer to a WHIP endpoint");
            return;
        }
        if (!*plugin || strchr(plugin, '/')) {
            moat_http_reply_error(message, 404, "unknown_plugin", "no such WHIP endpoint");
            return;
        }
        moat_whip_handle_offer(gateway, message, plugin);
        return;
    }
    if (g_str_has_prefix(path, "/api/")) {
        moat_session_api_handle(gateway, message, path);
        return;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        moat_http_reply_error(message, 405, "method_not_allowed", "%s is not allowed on %s", method,
                              path);
        return;
    }
    serve_static(gateway, message, path);
}

moat_http_server *moat_http_server_start(moat_gateway *gateway, char *error, size_t error_size)
{
    GInetAddress *address = g_inet_address_new_from_string(gateway->config.http_bind);
    if (!address) {
        snprintf(error, error_size, "[http] bind = \"%s\": not an IP address",
                 gateway->config.http_bind);
        return NULL;
    }
    moat_http_server *http = g_new0(moat_http_server, 1);
    http->gateway = gateway;
    http->server = soup_server_new("server-header", "moat/" MOAT_VERSION, NULL);
    soup_server_add_handler(http->server, NULL, route, gateway, NULL);
    GSocketAddress *socket_address =
        g_inet_socket_address_new(address, (guint16)gateway->config.http_port);
    GError *gerror = NULL;
    gboolean ok = soup_server_listen(http->server, socket_address, 0, &gerror);
    g_object_unref(socket_address);
    g_object_unref(address);
    if (!ok) {
        snprintf(error, error_size, "cannot listen on HTTP port %s:%d: %s",
                 gateway->config.http_bind, gateway->config.http_port, gerror->message);
        g_error_free(gerror);
        moat_http_server_stop(http);
        return NULL;
    }
    return http;
}

void moat_http_server_stop(moat_http_server *server)
{
    if (!server)
        return;
    soup_server_disconnect(server->server);
    g_object_unref(server->server);
    g_free(server);
}
