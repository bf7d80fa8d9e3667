/* WebSocket event listeners and the hop from any thread to the control
 * thread that serves them (events.h): /api/events?topic= and a plugin's
 * <api_path>/<resource>/events. The listener and prefix lists are touched on
 * the control thread only; publishing copies the event into an idle source. */
#include "core/events.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_LISTENERS  256
#define MAX_TOPIC_SIZE 256
#define EVENTS_PATH    "/api/events"
#define EVENTS_SUFFIX  "/events"

typedef struct {
    SoupWebsocketConnection *connection;
    char *topic;
} listener;

/* Control thread only; set by moat_events_start. */
static GPtrArray *listeners;
static GPtrArray *resource_prefixes; /* "/api/rooms", ... (owned strings) */
static char *events_token;

static void listener_free(gpointer data)
{
    listener *l = data;
    if (soup_websocket_connection_get_state(l->connection) == SOUP_WEBSOCKET_STATE_OPEN)
        soup_websocket_connection_close(l->connection, SOUP_WEBSOCKET_CLOSE_GOING_AWAY, NULL);
    g_object_unref(l->connection);
    g_free(l->topic);
    g_free(l);
}

static void on_closed(SoupWebsocketConnection *connection, gpointer data)
{
    if (!listeners)
        return;
    for (guint i = 0; i < listeners->len; i++) {
        listener *l = g_ptr_array_index(listeners, i);
        if (l->connection == connection) {
            g_ptr_array_remove_index_fast(listeners, i);
            return;
        }
    }
}

static bool authorized(SoupServerMessage *message)
{
    if (!events_token || !*events_token)
        return true;
    const char *header = soup_message_headers_get_one(
        soup_server_message_get_request_headers(message), "Authorization");
    if (!header || g_ascii_strncasecmp(header, "Bearer ", 7) != 0)
        return false;
    const char *given = header + 7;
    size_t a = strlen(given), b = strlen(events_token);
    unsigned char diff = (unsigned char)(a != b);
    for (size_t i = 0; i < a && i < b; i++)
        diff |= (unsigned char)(given[i] ^ events_token[i]);
    return diff == 0;
}

static void add_listener(SoupWebsocketConnection *connection, SoupServerMessage *message,
                         const char *topic)
{
    bool ok = listeners && authorized(message) && topic && *topic &&
              strlen(topic) < MAX_TOPIC_SIZE && listeners->len < MAX_LISTENERS;
    if (!ok) {
        soup_websocket_connection_close(connection, SOUP_WEBSOCKET_CLOSE_POLICY_VIOLATION,
                                        "a topic (and the token, when set) is required");
        return;
    }
    listener *l = g_new0(listener, 1);
    l->connection = g_object_ref(connection);
    l->topic = g_strdup(topic);
    g_signal_connect(connection, "closed", G_CALLBACK(on_closed), NULL);
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

void moat_events_start(SoupServer *server, const char *token)
{
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
} event;

static void event_free(gpointer data)
{
    event *e = data;
    g_free(e->topic);
    g_free(e->json);
    g_free(e);
}

static gboolean deliver(gpointer data)
{
    event *e = data;
    for (guint i = 0; listeners && i < listeners->len; i++) {
        listener *l = g_ptr_array_index(listeners, i);
        if (strcmp(l->topic, e->topic) == 0 &&
            soup_websocket_connection_get_state(l->connection) == SOUP_WEBSOCKET_STATE_OPEN)
            soup_websocket_connection_send_text(l->connection, e->json);
    }
    return G_SOURCE_REMOVE;
}

void moat_events_publish(const char *topic, const char *json)
{
    if (!topic || !json)
        return;
    event *e = g_new0(event, 1);
    e->topic = g_strdup(topic);
    e->json = g_strdup(json);
    /* The default main context is the control thread's. */
    GSource *source = g_idle_source_new();
    g_source_set_callback(source, deliver, e, event_free);
    g_source_attach(source, NULL);
    g_source_unref(source);
}
