/* WebSocket event listeners and the hop from any thread to the control
 * thread that serves them (events.h): /api/events?topic= and a plugin's
 * <api_path>/<resource>/events. The listener and prefix lists are touched on
 * the control thread only; publishing copies the event into an idle source.
 * Each listener holds the events not yet handed to libsoup in a queue of its
 * own, handed over only while its socket takes them, so that a client that
 * stops reading holds at most [http] event_queue_bytes (that queue plus
 * what the kernel has not sent) before it is closed. The upgrade is
 * answered here and the connection taken from libsoup: each listener is an
 * event_socket.h (send-only, what the client sends bounded and never kept),
 * not libsoup's WebSocket connection, which buffers, inflates and answers
 * whatever a client sends without a bound. */
#include "session/events.h"

#include "base/bearer.h"
#include "base/http_reason.h"

#include "session/event_socket.h"
#include "session/http_admission.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>

#define MAX_TOPIC_SIZE  256
#define EVENTS_PATH     "/api/events"
#define EVENTS_SUFFIX   "/events"
#define SOURCE_KEY_SIZE 64
/* What a listener may send (event_socket.h): nothing but pings and its
 * close, so a small budget; a data frame (skipped) up to MAX_CLIENT_FRAME. */
#define MAX_CLIENT_FRAME    1024
#define INBOUND_BURST_BYTES (16 * 1024)
#define INBOUND_BYTES_PER_S 1024
/* RFC 6455 §7.4.1 */
#define CLOSE_POLICY_VIOLATION 1008
#define CLOSE_GOING_AWAY       1001

typedef struct {
    moat_event_socket *ws;
    char *topic;
    char source[SOURCE_KEY_SIZE]; /* moat_admission_source_key of its peer */
    GSocket *socket;              /* NULL when libsoup did not say */
} listener;

/* Control thread only; set by moat_events_start. */
static GPtrArray *listeners;
static GPtrArray *resource_prefixes; /* "/api/rooms", ... (owned strings) */
static char *events_token;
static moat_events_limits limits;
static uint64_t counts[MOAT_EVENTS_COUNT_KINDS];

static void listener_free(gpointer data)
{
    listener *l = data;
    if (moat_event_socket_open(l->ws))
        moat_event_socket_close(l->ws, CLOSE_GOING_AWAY, NULL);
    moat_event_socket_free(l->ws);
    if (l->socket)
        g_object_unref(l->socket);
    g_free(l->topic);
    g_free(l);
}

static void on_ended(void *user, moat_event_socket_end why)
{
    if (why == MOAT_EVENT_SOCKET_SENT_TOO_MUCH || why == MOAT_EVENT_SOCKET_PROTOCOL)
        counts[why == MOAT_EVENT_SOCKET_SENT_TOO_MUCH ? MOAT_EVENTS_CLOSED_INBOUND
                                                      : MOAT_EVENTS_CLOSED_PROTOCOL]++;
    if (listeners)
        g_ptr_array_remove_fast(listeners, user);
}

static bool authorized(SoupServerMessage *message)
{
    if (!events_token || !*events_token)
        return true;
    return moat_bearer_matches(
        soup_message_headers_get_one(soup_server_message_get_request_headers(message),
                                     "Authorization"),
        events_token);
}

static size_t listeners_from(const char *source)
{
    size_t n = 0;
    for (guint i = 0; listeners && i < listeners->len; i++) {
        const listener *l = g_ptr_array_index(listeners, i);
        n += strcmp(l->source, source) == 0;
    }
    return n;
}

moat_events_verdict moat_events_admit(const char *peer)
{
    char source[SOURCE_KEY_SIZE];
    moat_admission_source_key(peer, source, sizeof source);
    if (!listeners || listeners->len >= limits.max_listeners)
        return MOAT_EVENTS_FULL;
    if (listeners_from(source) >= limits.max_per_source)
        return MOAT_EVENTS_SOURCE_FULL;
    return MOAT_EVENTS_ADMITTED;
}

static const moat_event_socket_limits client_limits = {
    .inbound_burst = INBOUND_BURST_BYTES,
    .inbound_per_s = INBOUND_BYTES_PER_S,
    .max_frame = MAX_CLIENT_FRAME,
};

/* A refused upgrade still gets its close frame, then the connection ends. */
static void refuse_listener(GIOStream *stream, const char *reason)
{
    moat_event_socket *ws = moat_event_socket_new(stream, &client_limits, NULL, NULL);
    moat_event_socket_close(ws, CLOSE_POLICY_VIOLATION, reason);
    moat_event_socket_free(ws);
}

static void add_listener(GIOStream *stream, SoupServerMessage *message, const char *topic)
{
    const char *peer = soup_server_message_get_remote_host(message);
    moat_events_verdict verdict = moat_events_admit(peer);
    bool ok = listeners && authorized(message) && topic && *topic &&
              strlen(topic) < MAX_TOPIC_SIZE && verdict == MOAT_EVENTS_ADMITTED;
    if (!ok) {
        if (verdict != MOAT_EVENTS_ADMITTED)
            counts[verdict == MOAT_EVENTS_FULL ? MOAT_EVENTS_REFUSED_FULL
                                               : MOAT_EVENTS_REFUSED_SOURCE_FULL]++;
        refuse_listener(stream, verdict != MOAT_EVENTS_ADMITTED
                                    ? "too many event listeners"
                                    : "a topic (and the token, when set) is required");
        return;
    }
    listener *l = g_new0(listener, 1);
    l->topic = g_strdup(topic);
    moat_admission_source_key(peer, l->source, sizeof l->source);
    GSocket *socket = g_object_get_data(G_OBJECT(message), MOAT_EVENTS_SOCKET_KEY);
    if (!socket)
        socket = soup_server_message_get_socket(message);
    l->socket = socket ? g_object_ref(socket) : NULL;
    l->ws = moat_event_socket_new(stream, &client_limits, on_ended, l);
    g_ptr_array_add(listeners, l);
}

/* libsoup wrote the 101: the connection is ours from here. */
static void on_upgraded(SoupServerMessage *message, gpointer data)
{
    char *topic = data;
    g_object_ref(message);
    GIOStream *stream = soup_server_message_steal_connection(message);
    if (stream)
        add_listener(stream, message, topic);
    g_object_unref(message);
}

static void json_error(SoupServerMessage *message, unsigned status, const char *error,
                       const char *detail)
{
    char *body = g_strdup_printf("{\"error\":\"%s\",\"detail\":\"%s\",\"status\":%u}", error,
                                 detail, status);
    soup_server_message_set_status(message, status, moat_http_reason(status));
    soup_server_message_set_response(message, "application/json", SOUP_MEMORY_TAKE, body,
                                     strlen(body));
}

static void free_topic(gpointer data, GClosure *closure)
{
    g_free(data);
}

/* An upgrade for `topic` (NULL: none named; refused after the upgrade, as a
 * WebSocket client expects): a plain request gets 426, a broken handshake
 * 400, a good one 101 without extensions (no permessage-deflate). */
static void accept_upgrade(SoupServerMessage *message, const char *topic)
{
    const char *upgrade =
        soup_message_headers_get_one(soup_server_message_get_request_headers(message), "Upgrade");
    if (!upgrade || g_ascii_strcasecmp(upgrade, "websocket") != 0) {
        json_error(message, 426, "websocket_required",
                   "events are a WebSocket: send Upgrade: websocket");
        soup_message_headers_replace(soup_server_message_get_response_headers(message), "Upgrade",
                                     "websocket");
        return;
    }
    GError *error = NULL;
    if (!soup_websocket_server_check_handshake(message, NULL, NULL, NULL, &error)) {
        g_clear_error(&error);
        json_error(message, 400, "bad_websocket_handshake",
                   "the WebSocket handshake is incomplete or of another version");
        return;
    }
    if (!soup_websocket_server_process_handshake(message, NULL, NULL, NULL, NULL))
        return; /* libsoup has set the error status */
    g_signal_connect_data(message, "wrote-informational", G_CALLBACK(on_upgraded),
                          g_strdup(topic ? topic : ""), free_topic, 0);
}

static void on_events_request(SoupServer *server, SoupServerMessage *message, const char *path,
                              GHashTable *query, gpointer data)
{
    /* libsoup hands this handler every path under it too: only the path
     * itself is the events socket (and the one http_server.c checks). */
    if (strcmp(path, EVENTS_PATH) != 0) {
        json_error(message, 404, "not_found", "no events socket at this path: use /api/events");
        return;
    }
    accept_upgrade(message, query ? g_hash_table_lookup(query, "topic") : NULL);
}

bool moat_events_is_upgrade(SoupServerMessage *message, const char *path)
{
    const char *upgrade =
        soup_message_headers_get_one(soup_server_message_get_request_headers(message), "Upgrade");
    if (!upgrade || g_ascii_strcasecmp(upgrade, "websocket") != 0)
        return false;
    /* Every path this file's handler is given (the handler answers only
     * EVENTS_PATH itself), so the Origin and Host checks run for all. */
    return strcmp(path, EVENTS_PATH) == 0 || g_str_has_prefix(path, EVENTS_PATH "/") ||
           moat_events_is_resource_upgrade(message, path);
}

bool moat_events_resource_topic(const char *prefix, const char *path, char *topic, size_t size)
{
    size_t prefix_length = strlen(prefix), path_length = strlen(path);
    size_t suffix_length = strlen(EVENTS_SUFFIX);
    if (!g_str_has_prefix(prefix, "/api/") || !g_str_has_prefix(path, prefix) ||
        path_length <= prefix_length + 1 + suffix_length || path[prefix_length] != '/' ||
        !g_str_has_suffix(path, EVENTS_SUFFIX))
        return false;
    const char *resource = path + prefix_length + 1;
    size_t resource_length = path_length - prefix_length - 1 - suffix_length;
    for (size_t i = 0; i < resource_length; i++) {
        if (resource[i] == '/' || !g_ascii_isgraph(resource[i]))
            return false;
    }
    const char *name = prefix + strlen("/api/");
    int n = snprintf(topic, size, "%s/%.*s", name, (int)resource_length, resource);
    return n > 0 && (size_t)n < size;
}

bool moat_events_is_resource_upgrade(SoupServerMessage *message, const char *path)
{
    char topic[MAX_TOPIC_SIZE];
    const char *upgrade =
        soup_message_headers_get_one(soup_server_message_get_request_headers(message), "Upgrade");
    if (!resource_prefixes || !upgrade || g_ascii_strcasecmp(upgrade, "websocket") != 0)
        return false;
    for (guint i = 0; i < resource_prefixes->len; i++) {
        if (moat_events_resource_topic(g_ptr_array_index(resource_prefixes, i), path, topic,
                                       sizeof topic))
            return true;
    }
    return false;
}

void moat_events_serve_resource_upgrade(SoupServerMessage *message, const char *path)
{
    char topic[MAX_TOPIC_SIZE];
    for (guint i = 0; resource_prefixes && i < resource_prefixes->len; i++) {
        if (moat_events_resource_topic(g_ptr_array_index(resource_prefixes, i), path, topic,
                                       sizeof topic)) {
            accept_upgrade(message, topic);
            return;
        }
    }
    accept_upgrade(message, NULL);
}

void moat_events_add_resource_path(SoupServer *server, const char *prefix)
{
    if (resource_prefixes)
        g_ptr_array_add(resource_prefixes, g_strdup(prefix));
}

void moat_events_start(SoupServer *server, const char *token, const moat_events_limits *given)
{
    limits = *given;
    if (limits.max_listeners == 0)
        limits.max_listeners = 256;
    if (limits.max_per_source == 0)
        limits.max_per_source = limits.max_listeners;
    if (limits.queue_bytes == 0)
        limits.queue_bytes = 1024 * 1024;
    listeners = g_ptr_array_new_with_free_func(listener_free);
    resource_prefixes = g_ptr_array_new_with_free_func(g_free);
    events_token = g_strdup(token);
    soup_server_add_handler(server, EVENTS_PATH, on_events_request, NULL, NULL);
}

void moat_events_stop(void)
{
    if (listeners)
        g_ptr_array_free(listeners, TRUE);
    listeners = NULL;
    if (resource_prefixes)
        g_ptr_array_free(resource_prefixes, TRUE);
    resource_prefixes = NULL;
    g_free(events_token);
    events_token = NULL;
}

typedef struct {
    char *topic;
    char *json;
    bool relayed; /* from another node: not handed to the tap */
} event;

static moat_events_tap_fn events_tap;
static void *events_tap_user;

void moat_events_set_tap(moat_events_tap_fn tap, void *user)
{
    events_tap = tap;
    events_tap_user = user;
}

static void event_free(gpointer data)
{
    event *e = data;
    g_free(e->topic);
    g_free(e->json);
    g_free(e);
}

/* Bytes the kernel holds for the listener's socket, not yet acknowledged by
 * its client (0 when it cannot tell). */
static size_t kernel_unsent(const listener *l)
{
    int queued = 0;
    if (!l->socket || ioctl(g_socket_get_fd(l->socket), SIOCOUTQ, &queued) != 0 || queued < 0)
        return 0;
    return (size_t)queued;
}

/* Queues one event; false when the listener's unsent bytes would pass the
 * bound (the caller closes it). */
static bool enqueue(listener *l, const char *json)
{
    size_t length = strlen(json);
    if (moat_event_socket_unsent(l->ws) + kernel_unsent(l) + length > limits.queue_bytes)
        return false;
    moat_event_socket_send_text(l->ws, json);
    return true;
}

static gboolean deliver(gpointer data)
{
    event *e = data;
    if (events_tap && !e->relayed)
        events_tap(events_tap_user, e->topic, e->json);
    for (guint i = 0; listeners && i < listeners->len;) {
        listener *l = g_ptr_array_index(listeners, i);
        if (strcmp(l->topic, e->topic) != 0 || !moat_event_socket_open(l->ws) ||
            enqueue(l, e->json)) {
            i++;
            continue;
        }
        /* It does not read: forget it and drop its connection at once (a
         * close handshake could not get through either). */
        counts[MOAT_EVENTS_CLOSED_QUEUE_FULL]++;
        GSocket *socket = l->socket ? g_object_ref(l->socket) : NULL;
        g_ptr_array_remove_index_fast(listeners, i);
        if (socket) {
            g_socket_shutdown(socket, TRUE, TRUE, NULL);
            g_object_unref(socket);
        }
    }
    return G_SOURCE_REMOVE;
}

void moat_events_count_refusal(moat_events_count kind)
{
    if ((unsigned)kind < MOAT_EVENTS_COUNT_KINDS)
        counts[kind]++;
}

size_t moat_events_listeners(void)
{
    return listeners ? listeners->len : 0;
}

void moat_events_metrics(GString *out)
{
    static const char *const refused[] = {
        [MOAT_EVENTS_REFUSED_FULL] = "max_event_listeners",
        [MOAT_EVENTS_REFUSED_SOURCE_FULL] = "max_event_listeners_per_source",
        [MOAT_EVENTS_REFUSED_ORIGIN] = "origin_not_allowed",
        [MOAT_EVENTS_REFUSED_HOST] = "wrong_host",
    };
    g_string_append_printf(out,
                           "# HELP moat_event_listeners Event WebSocket listeners open\n"
                           "# TYPE moat_event_listeners gauge\nmoat_event_listeners %zu\n"
                           "# HELP moat_event_listeners_refused_total Event WebSocket upgrades "
                           "refused, by reason\n"
                           "# TYPE moat_event_listeners_refused_total counter\n",
                           moat_events_listeners());
    for (int kind = 0; kind < MOAT_EVENTS_CLOSED_QUEUE_FULL; kind++)
        g_string_append_printf(
            out, "moat_event_listeners_refused_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            refused[kind], counts[kind]);
    g_string_append_printf(
        out,
        "# HELP moat_event_listeners_closed_total Event listeners closed by the gateway, by "
        "reason\n# TYPE moat_event_listeners_closed_total counter\n"
        "moat_event_listeners_closed_total{reason=\"queue_full\"} %" G_GUINT64_FORMAT "\n"
        "moat_event_listeners_closed_total{reason=\"sent_too_much\"} %" G_GUINT64_FORMAT "\n"
        "moat_event_listeners_closed_total{reason=\"protocol\"} %" G_GUINT64_FORMAT "\n",
        counts[MOAT_EVENTS_CLOSED_QUEUE_FULL], counts[MOAT_EVENTS_CLOSED_INBOUND],
        counts[MOAT_EVENTS_CLOSED_PROTOCOL]);
}

static void publish(const char *topic, const char *json, bool relayed)
{
    if (!topic || !json)
        return;
    event *e = g_new0(event, 1);
    e->relayed = relayed;
    e->topic = g_strdup(topic);
    e->json = g_strdup(json);
    /* The default main context is the control thread's. */
    GSource *source = g_idle_source_new();
    g_source_set_callback(source, deliver, e, event_free);
    g_source_attach(source, NULL);
    g_source_unref(source);
}

void moat_events_publish(const char *topic, const char *json)
{
    publish(topic, json, false);
}

void moat_events_publish_relayed(const char *topic, const char *json)
{
    publish(topic, json, true);
}
