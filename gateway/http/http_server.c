/* The SoupServer adapter: listens (through http_listener.c, which bounds
 * connections and their requests' time), enforces the body limit while the request
 * is still arriving (declared Content-Length at the headers, chunked bodies
 * chunk by chunk), refuses a Content-Length that is not a number and what a
 * timed-out connection still hands on, converts each complete request for
 * the router and writes its response back. All routing and policy live in
 * http_router.c. */
#include "session/events.h"
#include "http/http_server.h"

#include "base/http_reason.h"
#include "http/http_listener.h"
#include "http/http_router.h"
#include "session/whip_session.h"

#include <glib.h>
#include <libsoup/soup.h>
#include <stdio.h>
#include <string.h>

/* After a refusal the client may still be sending: read and discard at most
 * this much, for at most this long, so that our reply is not lost to a reset
 * (a close with unread data), then close. */
#define LINGER_MAX_BYTES (256 * 1024)
#define LINGER_MAX_MS    2000

struct moat_http_server {
    SoupServer *server;
    moat_gateway *gateway;
    moat_http_listener *listener;
};

typedef struct {
    GIOStream *stream;
    char *reply;
    size_t reply_length;
    GCancellable *cancellable;
    guint timer;
    size_t discarded;
    char buffer[4096];
} closing_connection;

static void closing_finish(closing_connection *closing)
{
    if (closing->timer)
        g_source_remove(closing->timer);
    g_io_stream_close(closing->stream, NULL, NULL);
    g_object_unref(closing->stream);
    g_object_unref(closing->cancellable);
    g_free(closing->reply);
    g_free(closing);
}

static gboolean closing_timeout(gpointer data)
{
    closing_connection *closing = data;
    closing->timer = 0;
    g_cancellable_cancel(closing->cancellable);
    return G_SOURCE_REMOVE;
}

static void discard_more(closing_connection *closing);

static void discarded(GObject *source, GAsyncResult *result, gpointer data)
{
    closing_connection *closing = data;
    gssize n = g_input_stream_read_finish(G_INPUT_STREAM(source), result, NULL);
    if (n <= 0 || closing->discarded + (size_t)n >= LINGER_MAX_BYTES) {
        closing_finish(closing);
        return;
    }
    closing->discarded += (size_t)n;
    discard_more(closing);
}

static void discard_more(closing_connection *closing)
{
    g_input_stream_read_async(g_io_stream_get_input_stream(closing->stream), closing->buffer,
                              sizeof closing->buffer, G_PRIORITY_DEFAULT, closing->cancellable,
                              discarded, closing);
}

static void reply_written(GObject *source, GAsyncResult *result, gpointer data)
{
    closing_connection *closing = data;
    if (!g_output_stream_write_all_finish(G_OUTPUT_STREAM(source), result, NULL, NULL)) {
        closing_finish(closing);
        return;
    }
    GSocket *socket = g_object_get_data(G_OBJECT(closing->stream), "GSocket");
    if (socket)
        g_socket_shutdown(socket, FALSE, TRUE, NULL);
    discard_more(closing);
}

/* A refusal written before the request (or more of its body) is read:
 * libsoup's connection is taken away from it, the reply (a JSON error)
 * written and the connection closed after a short linger. */
typedef struct {
    unsigned status;
    const char *status_line; /* "413 Payload Too Large" */
    const char *code;        /* the JSON "error" */
    const char *detail;
    moat_refusal_reason reason;
} early_refusal;

static void refuse_early(moat_http_server *http, SoupServerMessage *message,
                         const early_refusal *refusal)
{
    moat_http_note_refusal(http->gateway, refusal->reason,
                           soup_server_message_get_remote_host(message));
    size_t body_length = 0;
    char *body =
        moat_http_error_json(refusal->status, refusal->code, refusal->detail, &body_length);
    GUri *uri = soup_server_message_get_uri(message);
    bool whip = uri && g_str_has_prefix(g_uri_get_path(uri), "/whip/");
    char *reply = g_strdup_printf("HTTP/1.1 %s\r\n"
                                  "Server: moat/" MOAT_VERSION "\r\n"
                                  "Content-Type: application/json\r\n"
                                  "Content-Length: %zu\r\n"
                                  "%s"
                                  "Connection: close\r\n\r\n%s",
                                  refusal->status_line, body_length,
                                  whip ? "Access-Control-Allow-Origin: *\r\n" : "", body);
    g_free(body);
    g_object_ref(message);
    GSocket *socket = moat_http_listener_request_over(http->listener, message);
    GIOStream *stream = soup_server_message_steal_connection(message);
    g_object_unref(message);
    if (!stream) {
        g_free(reply);
        return;
    }
    /* libsoup names the socket of connections it accepted itself only. */
    if (socket && !g_object_get_data(G_OBJECT(stream), "GSocket"))
        g_object_set_data_full(G_OBJECT(stream), "GSocket", g_object_ref(socket), g_object_unref);
    closing_connection *closing = g_new0(closing_connection, 1);
    closing->stream = stream;
    closing->reply = reply;
    closing->reply_length = strlen(reply);
    closing->cancellable = g_cancellable_new();
    closing->timer = g_timeout_add(LINGER_MAX_MS, closing_timeout, closing);
    g_output_stream_write_all_async(g_io_stream_get_output_stream(stream), closing->reply,
                                    closing->reply_length, G_PRIORITY_DEFAULT, closing->cancellable,
                                    reply_written, closing);
}

/* Refuses a request whose body is over the limit before reading (more of)
 * it: a 413 with a JSON body. */
static void refuse_body(moat_http_server *http, SoupServerMessage *message)
{
    char detail[96];
    snprintf(detail, sizeof detail, "request bodies are limited to %d bytes",
             http->gateway->config.max_body_bytes);
    early_refusal refusal = {413, "413 Payload Too Large", "body_too_large", detail,
                             MOAT_REFUSED_BODY_TOO_LARGE};
    refuse_early(http, message, &refusal);
}

/* A Content-Length that libsoup took (it reads a sign, an overflow or the
 * last of differing values as a length: -1 and 10^23 made it wait for a
 * body until the request deadline) but that is not one decimal number: the
 * framing is unknown (RFC 9112 §6.3), a 400 at once. */
static bool refuse_bad_content_length(moat_http_server *http, SoupServerMessage *message,
                                      SoupMessageHeaders *headers)
{
    if (soup_message_headers_get_encoding(headers) != SOUP_ENCODING_CONTENT_LENGTH ||
        moat_http_content_length_parse(soup_message_headers_get_list(headers, "Content-Length"),
                                       NULL))
        return false;
    early_refusal refusal = {400, "400 Bad Request", "bad_content_length",
                             "Content-Length must be one decimal number of bytes",
                             MOAT_REFUSED_BAD_CONTENT_LENGTH};
    refuse_early(http, message, &refusal);
    return true;
}

static void check_chunk(SoupServerMessage *message, GBytes *chunk, gpointer user_data)
{
    moat_http_server *http = user_data;
    SoupMessageBody *body = soup_server_message_get_request_body(message);
    if (body && body->length > (goffset)http->gateway->config.max_body_bytes) {
        g_signal_handlers_disconnect_by_func(message, check_chunk, user_data);
        refuse_body(http, message);
    }
}

static const char *soup_header(const void *context, const char *name);
static void write_response(SoupServerMessage *message, moat_http_response *response);
static bool send_response(SoupServerMessage *message, moat_http_response *response);

/* An event WebSocket upgrade: refused here, before libsoup accepts it, when
 * the router says so (a status set by an early handler skips the WebSocket
 * handler); otherwise its socket rides along for events.c. */
static bool check_events_upgrade(moat_http_server *http, SoupServerMessage *message,
                                 const char *path)
{
    moat_http_request request = {
        .method = soup_server_message_get_method(message),
        .path = path,
        .peer = soup_server_message_get_remote_host(message),
        .header = soup_header,
        .header_context = soup_server_message_get_request_headers(message),
    };
    moat_http_response response = {0};
    if (!moat_http_admit_events_upgrade(http->gateway, &request, &response)) {
        write_response(message, &response);
        moat_http_response_clear(&response);
        return false;
    }
    moat_http_response_clear(&response);
    GSocket *socket = moat_http_listener_socket(http->listener, message);
    if (socket)
        g_object_set_data_full(G_OBJECT(message), MOAT_EVENTS_SOCKET_KEY, g_object_ref(socket),
                               g_object_unref);
    return true;
}

/* The request deadline passed on the message's connection (it was answered
 * 408 and shut down), yet libsoup hands the message on: end of file after
 * part of a header block reads as their end. Nothing of it runs; the status
 * set here skips every later handler (its reply meets a closed socket). */
static bool refuse_timed_out(moat_http_server *http, SoupServerMessage *message)
{
    if (!moat_http_listener_timed_out(http->listener, message))
        return false;
    soup_server_message_set_status(message, SOUP_STATUS_REQUEST_TIMEOUT, NULL);
    soup_message_headers_replace(soup_server_message_get_response_headers(message), "Connection",
                                 "close");
    return true;
}

/* Runs when the headers are in, before any of the body is read. */
static void check_headers(SoupServer *server, SoupServerMessage *message, const char *path,
                          GHashTable *query, gpointer user_data)
{
    moat_http_server *http = user_data;
    if (refuse_timed_out(http, message))
        return;
    SoupMessageHeaders *headers = soup_server_message_get_request_headers(message);
    if (refuse_bad_content_length(http, message, headers))
        return;
    if (moat_events_is_upgrade(message, path) && !check_events_upgrade(http, message, path))
        return;
    if (soup_message_headers_get_encoding(headers) == SOUP_ENCODING_CONTENT_LENGTH &&
        soup_message_headers_get_content_length(headers) >
            (goffset)http->gateway->config.max_body_bytes) {
        refuse_body(http, message);
        return;
    }
    /* Chunked (or any other) bodies are counted as they arrive. */
    g_signal_connect(message, "got-chunk", G_CALLBACK(check_chunk), http);
}

static const char *soup_header(const void *context, const char *name)
{
    return soup_message_headers_get_list((SoupMessageHeaders *)context, name);
}

static void resume_reply(void *data)
{
    soup_server_message_unpause(data);
}

/* A deferred reply is ready (control thread): write it and let it go. */
static void deferred_done(void *done_data, unsigned status, char *body)
{
    SoupServerMessage *message = done_data;
    soup_server_message_set_status(message, status, moat_http_reason(status));
    if (body)
        soup_server_message_set_response(message, "application/json", SOUP_MEMORY_TAKE, body,
                                         strlen(body));
    soup_server_message_unpause(message);
    g_object_unref(message);
}

/* Status, headers and body of `response` onto `message` (the body moves). */
static void write_response(SoupServerMessage *message, moat_http_response *response)
{
    SoupMessageHeaders *headers = soup_server_message_get_response_headers(message);
    for (size_t i = 0; i < response->n_headers; i++)
        soup_message_headers_replace(headers, response->headers[i].name,
                                     response->headers[i].value);
    /* libsoup 3.2 never notices a client closing an idle keep-alive
     * connection: each one would stay in CLOSE_WAIT and hold a descriptor
     * for good, so ~1000 requests from anyone would exhaust the process.
     * Every reply closes its connection instead (the API is not chatty). */
    soup_message_headers_replace(headers, "Connection", "close");
    unsigned status = response->status ? response->status : 500;
    soup_server_message_set_status(message, status, moat_http_reason(status));
    if (response->body) {
        soup_server_message_set_response(message, response->content_type, SOUP_MEMORY_TAKE,
                                         response->body, response->body_length);
        response->body = NULL;
    }
}

/* A deferred whole reply is ready (control thread): write it, start its
 * session if it announces one, and let the message go. */
static void deferred_reply_done(void *respond_data, moat_http_response *response)
{
    SoupServerMessage *message = respond_data;
    if (!send_response(message, response))
        soup_server_message_unpause(message);
    moat_http_response_clear(response);
    g_object_unref(message);
}

/* `response` onto a message: written now, or later (a session to start
 * first, a deferred reply) with the message paused meanwhile; true then. */
static bool send_response(SoupServerMessage *message, moat_http_response *response)
{
    bool later =
        response->start_session || response->deferred.start || response->deferred_reply.start;
    write_response(message, response);
    if (response->start_session) {
        /* The reply goes out once the worker knows the session's ufrag. */
        soup_server_message_pause(message);
        moat_whip_session_start(response->start_session, response->start_worker, resume_reply,
                                g_object_ref(message), g_object_unref);
        response->start_session = NULL;
    }
    if (response->deferred.start) {
        soup_server_message_pause(message);
        response->deferred.start(response->deferred.data, deferred_done, g_object_ref(message));
        response->deferred.start = NULL;
    }
    if (response->deferred_reply.start) {
        soup_server_message_pause(message);
        moat_http_deferred_reply reply = response->deferred_reply;
        response->deferred_reply.start = NULL;
        reply.start(reply.data, deferred_reply_done, g_object_ref(message));
    }
    return later;
}

static void route(SoupServer *server, SoupServerMessage *message, const char *path,
                  GHashTable *query, gpointer user_data)
{
    moat_http_server *http = user_data;
    if (refuse_timed_out(http, message)) /* the deadline passed during the body */
        return;
    SoupMessageBody *body = soup_server_message_get_request_body(message);
    moat_http_request request = {
        .method = soup_server_message_get_method(message),
        .path = path,
        .body = body ? body->data : NULL,
        .body_length = body && body->length > 0 ? (size_t)body->length : 0,
        .peer = soup_server_message_get_remote_host(message),
        .header = soup_header,
        .header_context = soup_server_message_get_request_headers(message),
        .query = g_uri_get_query(soup_server_message_get_uri(message)),
    };
    moat_http_response response = {0};
    moat_http_route(http->gateway, &request, &response);
    send_response(message, &response);
    moat_http_response_clear(&response);
}

/* A plugin's API path has handlers of its own (libsoup picks the longest
 * path): its resource event upgrades go to events.c, everything else is
 * routed as usual. */
static void route_plugin_api(SoupServer *server, SoupServerMessage *message, const char *path,
                             GHashTable *query, gpointer user_data)
{
    if (moat_events_is_resource_upgrade(message, path)) {
        moat_events_serve_resource_upgrade(message, path);
        return;
    }
    route(server, message, path, query, user_data);
}

static void add_plugin_paths(moat_http_server *http)
{
    moat_plugin_registry *plugins = http->gateway->plugins;
    for (size_t i = 0; plugins && i < moat_plugin_registry_count(plugins); i++) {
        const moat_plugin *plugin = moat_plugin_registry_at(plugins, i);
        if (!plugin->api_path || !g_str_has_prefix(plugin->api_path, "/api/"))
            continue;
        soup_server_add_early_handler(http->server, plugin->api_path, check_headers, http, NULL);
        soup_server_add_handler(http->server, plugin->api_path, route_plugin_api, http, NULL);
        moat_events_add_resource_path(http->server, plugin->api_path);
    }
}

moat_http_server *moat_http_server_start(moat_gateway *gateway, char *error, size_t error_size)
{
    moat_http_server *http = g_new0(moat_http_server, 1);
    http->gateway = gateway;
    moat_http_router_init(gateway);
    http->server = soup_server_new("server-header", "moat/" MOAT_VERSION, NULL);
    soup_server_add_early_handler(http->server, NULL, check_headers, http, NULL);
    soup_server_add_handler(http->server, NULL, route, http, NULL);
    moat_events_limits limits = {
        .max_listeners = (size_t)gateway->config.max_event_listeners,
        .max_per_source = (size_t)gateway->config.max_event_listeners_per_source,
        .queue_bytes = (size_t)gateway->config.event_queue_bytes,
    };
    moat_events_start(http->server, gateway->config.token, &limits);
    soup_server_add_early_handler(http->server, "/api/events", check_headers, http, NULL);
    add_plugin_paths(http);
    http->listener = moat_http_listener_start(http->server, gateway, error, error_size);
    if (!http->listener) {
        moat_http_server_stop(http);
        return NULL;
    }
    return http;
}

size_t moat_http_server_connections(const moat_http_server *server)
{
    return server ? moat_http_listener_connections(server->listener) : 0;
}

void moat_http_server_stop(moat_http_server *server)
{
    if (!server)
        return;
    moat_events_stop();
    moat_http_listener_stop(server->listener);
    soup_server_disconnect(server->server);
    g_object_unref(server->server);
    moat_http_router_clear(server->gateway);
    g_free(server);
}
