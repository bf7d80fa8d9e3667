/* WebSocket event listeners and the hop from any thread to the control
 * thread that serves them (events.h). The listener list is touched on the
 * control thread only; publishing copies the event into an idle source. */
#include "core/events.h"

#include <stdbool.h>
#include <string.h>

#define MAX_LISTENERS 256
#define EVENTS_PATH   "/api/events"

typedef struct {
    SoupWebsocketConnection *connection;
    char *topic;
} listener;

/* Control thread only; set by moat_events_start. */
static GPtrArray *listeners;
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

static void on_websocket(SoupServer *server, SoupServerMessage *message, const char *path,
                         SoupWebsocketConnection *connection, gpointer data)
{
    GUri *uri = soup_server_message_get_uri(message);
    GHashTable *query = g_uri_get_query(uri) ? soup_form_decode(g_uri_get_query(uri)) : NULL;
    const char *topic = query ? g_hash_table_lookup(query, "topic") : NULL;
    bool ok = listeners && authorized(message) && topic && *topic && strlen(topic) < 256 &&
              listeners->len < MAX_LISTENERS;
    if (!ok) {
        soup_websocket_connection_close(connection, SOUP_WEBSOCKET_CLOSE_POLICY_VIOLATION,
                                        "a topic (and the token, when set) is required");
    } else {
        listener *l = g_new0(listener, 1);
        l->connection = g_object_ref(connection);
        l->topic = g_strdup(topic);
        g_signal_connect(connection, "closed", G_CALLBACK(on_closed), NULL);
        g_ptr_array_add(listeners, l);
    }
    if (query)
        g_hash_table_unref(query);
}

void moat_events_start(SoupServer *server, const char *token)
{
    listeners = g_ptr_array_new_with_free_func(listener_free);
    events_token = g_strdup(token);
    soup_server_add_websocket_handler(server, EVENTS_PATH, NULL, NULL, on_websocket, NULL, NULL);
}

void moat_events_stop(void)
{
    if (listeners)
        g_ptr_array_free(listeners, TRUE);
    listeners = NULL;
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
