/* WebSocket event listeners and the hop from any thread to the control
 * thread that serves them (events.h): /api/events?topic= and a plugin's
 * <api_path>/<resource>/events. The listener and prefix lists are touched on
 * the control thread only; publishing copies the event into an idle source.
 * Each listener holds the events not yet handed to libsoup in a queue of its
 * own, handed over only while its socket takes them, so that a client that
 * stops reading holds at most [http] event_queue_bytes (that queue plus
 * what the kernel has not sent) before it is closed. */
#include "session/events.h"

#include "base/bearer.h"

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

typedef struct {
    SoupWebsocketConnection *connection;
    char *topic;
    char source[SOURCE_KEY_SIZE]; /* moat_admission_source_key of its peer */
    GSocket *socket;              /* NULL when libsoup did not say (then no queue) */
    GQueue pending;               /* JSON texts (owned) not yet handed to libsoup */
    size_t pending_bytes;
    GSource *writable; /* armed while pending waits for the socket */
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
    if (l->writable) {
        g_source_destroy(l->writable);
        g_source_unref(l->writable);
    }
    g_queue_clear_full(&l->pending, g_free);
    g_signal_handlers_disconnect_matched(l->connection, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, l);
    if (soup_websocket_connection_get_state(l->connection) == SOUP_WEBSOCKET_STATE_OPEN)
        soup_websocket_connection_close(l->connection, SOUP_WEBSOCKET_CLOSE_GOING_AWAY, NULL);
    g_object_unref(l->connection);
    if (l->socket)
        g_object_unref(l->socket);
    g_free(l->topic);
    g_free(l);
}

static void on_closed(SoupWebsocketConnection *connection, gpointer data)
{
    if (listeners)
        g_ptr_array_remove_fast(listeners, data);
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

static void add_listener(SoupWebsocketConnection *connection, SoupServerMessage *message,
                         const char *topic)
{
    const char *peer = soup_server_message_get_remote_host(message);
    moat_events_verdict verdict = moat_events_admit(peer);
    bool ok = listeners && authorized(message) && topic && *topic &&
              strlen(topic) < MAX_TOPIC_SIZE && verdict == MOAT_EVENTS_ADMITTED;
    if (!ok) {
        if (verdict != MOAT_EVENTS_ADMITTED)
            counts[verdict == MOAT_EVENTS_FULL ? MOAT_EVENTS_REFUSED_FULL
                                               : MOAT_EVENTS_REFUSED_SOURCE_FULL]++;
        soup_websocket_connection_close(connection, SOUP_WEBSOCKET_CLOSE_POLICY_VIOLATION,
                                        verdict != MOAT_EVENTS_ADMITTED
                                            ? "too many event listeners"
                                            : "a topic (and the token, when set) is required");
        return;
    }
    listener *l = g_new0(listener, 1);
    l->connection = g_object_ref(connection);
    l->topic = g_strdup(topic);
    moat_admission_source_key(peer, l->source, sizeof l->source);
    GSocket *socket = g_object_get_data(G_OBJECT(message), MOAT_EVENTS_SOCKET_KEY);
    if (!socket)
        socket = soup_server_message_get_socket(message);
    l->socket = socket ? g_object_ref(socket) : NULL;
    g_queue_init(&l->pending);
    g_signal_connect(connection, "closed", G_CALLBACK(on_closed), l);
    g_ptr_array_add(listeners, l);
}

static void on_websocket(SoupServer *server, SoupServerMessage *message, const char *path,
                         SoupWebsocketConnection *connection, gpointer data)
{
    GUri *uri = soup_server_message_get_uri(message);
    GHashTable *query = g_uri_get_query(uri) ? soup_form_decode(g_uri_get_query(uri)) : NULL;
    add_listener(connection, message, query ? g_hash_table_lookup(query, "topic") : NULL);
    if (query)
        g_hash_table_unref(query);
}

bool moat_events_is_upgrade(SoupServerMessage *message, const char *path)
{
    const char *upgrade =
        soup_message_headers_get_one(soup_server_message_get_request_headers(message), "Upgrade");
    if (!upgrade || g_ascii_strcasecmp(upgrade, "websocket") != 0)
        return false;
    return strcmp(path, EVENTS_PATH) == 0 || moat_events_is_resource_upgrade(message, path);
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

static void on_resource_websocket(SoupServer *server, SoupServerMessage *message, const char *path,
                                  SoupWebsocketConnection *connection, gpointer data)
{
    char topic[MAX_TOPIC_SIZE];
    bool ok = moat_events_resource_topic(data, path, topic, sizeof topic);
    add_listener(connection, message, ok ? topic : NULL);
}

void moat_events_add_resource_path(SoupServer *server, const char *prefix)
{
    if (!resource_prefixes)
        return;
    char *owned = g_strdup(prefix);
    g_ptr_array_add(resource_prefixes, owned);
    soup_server_add_websocket_handler(server, owned, NULL, NULL, on_resource_websocket, owned,
                                      NULL);
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
    soup_server_add_websocket_handler(server, EVENTS_PATH, NULL, NULL, on_websocket, NULL, NULL);
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

static bool socket_writable(const listener *l)
{
    return !l->socket || (g_socket_condition_check(l->socket, G_IO_OUT) & G_IO_OUT);
}

static void flush(listener *l);

static gboolean on_writable(GSocket *socket, GIOCondition condition, gpointer data)
{
    listener *l = data;
    g_source_unref(l->writable);
    l->writable = NULL;
    flush(l);
    return G_SOURCE_REMOVE;
}

/* Hands queued events to libsoup while the socket takes them; waits for it
 * to drain otherwise. */
static void flush(listener *l)
{
    while (!g_queue_is_empty(&l->pending) && socket_writable(l) &&
           soup_websocket_connection_get_state(l->connection) == SOUP_WEBSOCKET_STATE_OPEN) {
        char *json = g_queue_pop_head(&l->pending);
        l->pending_bytes -= strlen(json);
        soup_websocket_connection_send_text(l->connection, json);
        g_free(json);
    }
    if (!g_queue_is_empty(&l->pending) && !l->writable && l->socket) {
        l->writable = g_socket_create_source(l->socket, G_IO_OUT, NULL);
        g_source_set_callback(l->writable, G_SOURCE_FUNC(on_writable), l, NULL);
        g_source_attach(l->writable, NULL);
    }
}

/* Queues one event; false when the listener's unsent bytes would pass the
 * bound (the caller closes it). */
static bool enqueue(listener *l, const char *json)
{
    size_t length = strlen(json);
    if (l->pending_bytes + kernel_unsent(l) + length > limits.queue_bytes)
        return false;
    g_queue_push_tail(&l->pending, g_strdup(json));
    l->pending_bytes += length;
    flush(l);
    return true;
}

static gboolean deliver(gpointer data)
{
    event *e = data;
    if (events_tap && !e->relayed)
        events_tap(events_tap_user, e->topic, e->json);
    for (guint i = 0; listeners && i < listeners->len;) {
        listener *l = g_ptr_array_index(listeners, i);
        if (strcmp(l->topic, e->topic) != 0 ||
            soup_websocket_connection_get_state(l->connection) != SOUP_WEBSOCKET_STATE_OPEN ||
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
        "moat_event_listeners_closed_total{reason=\"queue_full\"} %" G_GUINT64_FORMAT "\n",
        counts[MOAT_EVENTS_CLOSED_QUEUE_FULL]);
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
