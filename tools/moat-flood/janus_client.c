/* Janus HTTP API client: requests with transactions, replies checked for
 * "error", events read by long polling GET <base>/<session>; every exchange
 * bounded by http_guard.h. */
#include "janus_client.h"
#include "flood_clock.h"
#include "http_guard.h"
#include "tool_text.h"

#include <glib.h>
#include <inttypes.h>
#include <libsoup/soup.h>
#include <stdio.h>
#include <string.h>

/* Janus holds a long poll up to 30 s when it has no event. */
#define REQUEST_TIMEOUT_S 35
#define EVENTS_PER_POLL   8
/* A reply's body at most (EVENTS_PER_POLL events, each with its SDP). */
#define REPLY_LIMIT (1024 * 1024)

struct janus_client {
    SoupSession *http;
    http_guard guard;
    char *base;
    uint64_t session;
    uint64_t next_transaction;
};

/* Sends msg and parses the JSON body; NULL with a message. */
static json_t *exchange(janus_client *c, SoupMessage *msg, char *error, size_t error_size)
{
    http_answer reply;
    char why[400];
    if (http_guard_exchange(&c->guard, c->http, msg, REPLY_LIMIT, &reply, why, sizeof why) != 0) {
        snprintf(error, error_size, "Janus %s", why);
        return NULL;
    }
    gsize length = 0;
    const char *data = g_bytes_get_data(reply.body, &length);
    json_error_t parse_error;
    bool parse = reply.status == 200 && !reply.over_limit;
    json_t *json = parse ? json_loadb(data, length, 0, &parse_error) : NULL;
    if (reply.status != 200)
        snprintf(error, error_size, "Janus: HTTP %u", reply.status);
    else if (reply.over_limit)
        snprintf(error, error_size, "Janus: a reply over %d bytes", REPLY_LIMIT);
    else if (json == NULL)
        snprintf(error, error_size, "Janus: bad JSON: %s", parse_error.text);
    g_bytes_unref(reply.body);
    return json;
}

/* POSTs request (stolen) to base + path; the reply, or NULL with a message
 * (a Janus "error" reply too). */
static json_t *post(janus_client *c, const char *path, json_t *request, char *error,
                    size_t error_size)
{
    char transaction[32];
    snprintf(transaction, sizeof transaction, "t%" PRIu64, ++c->next_transaction);
    json_object_set_new(request, "transaction", json_string(transaction));
    char *text = json_dumps(request, JSON_COMPACT);
    json_decref(request);
    char *url = g_strconcat(c->base, path, NULL);
    SoupMessage *msg = text != NULL ? soup_message_new("POST", url) : NULL;
    json_t *reply = NULL;
    if (msg == NULL) {
        snprintf(error, error_size, "Janus: cannot build a request to %s", url);
    } else {
        GBytes *bytes = g_bytes_new(text, strlen(text));
        soup_message_set_request_body_from_bytes(msg, "application/json", bytes);
        g_bytes_unref(bytes);
        reply = exchange(c, msg, error, error_size);
        g_object_unref(msg);
    }
    free(text);
    g_free(url);
    const char *kind = reply != NULL ? json_string_value(json_object_get(reply, "janus")) : NULL;
    if (reply != NULL && (kind == NULL || strcmp(kind, "error") == 0)) {
        const char *reason =
            json_string_value(json_object_get(json_object_get(reply, "error"), "reason"));
        snprintf(error, error_size, "Janus refused: %s", reason != NULL ? reason : "no reason");
        tool_text_printable(error);
        json_decref(reply);
        reply = NULL;
    }
    return reply;
}

static int reply_id(json_t *reply, uint64_t *id, char *error, size_t error_size)
{
    json_t *value = json_object_get(json_object_get(reply, "data"), "id");
    if (!json_is_integer(value)) {
        snprintf(error, error_size, "Janus: reply without data.id");
        return -1;
    }
    *id = (uint64_t)json_integer_value(value);
    return 0;
}

janus_client *janus_client_new(const char *base_url, const volatile sig_atomic_t *signals,
                               char *error, size_t error_size)
{
    janus_client *c = g_new0(janus_client, 1);
    c->guard = (http_guard){.timeout_s = REQUEST_TIMEOUT_S, .signals = signals};
    c->http = soup_session_new_with_options("timeout", REQUEST_TIMEOUT_S, "user-agent",
                                            "moat-flood/" MOAT_VERSION, NULL);
    c->base = g_strdup(base_url);
    json_t *reply = post(c, "", json_pack("{s:s}", "janus", "create"), error, error_size);
    int status = reply != NULL ? reply_id(reply, &c->session, error, error_size) : -1;
    json_decref(reply);
    if (status != 0) {
        janus_client_free(c);
        return NULL;
    }
    return c;
}

void janus_client_free(janus_client *c)
{
    if (c == NULL)
        return;
    if (c->session != 0) {
        char path[48], error[200];
        snprintf(path, sizeof path, "/%" PRIu64, c->session);
        json_decref(post(c, path, json_pack("{s:s}", "janus", "destroy"), error, sizeof error));
    }
    g_object_unref(c->http);
    g_free(c->base);
    g_free(c);
}

int janus_client_attach(janus_client *c, const char *plugin, uint64_t *handle, char *error,
                        size_t error_size)
{
    char path[48];
    snprintf(path, sizeof path, "/%" PRIu64, c->session);
    json_t *reply = post(c, path, json_pack("{s:s,s:s}", "janus", "attach", "plugin", plugin),
                         error, error_size);
    int status = reply != NULL ? reply_id(reply, handle, error, error_size) : -1;
    json_decref(reply);
    return status;
}

int janus_client_keepalive(janus_client *c, char *error, size_t error_size)
{
    char path[48];
    snprintf(path, sizeof path, "/%" PRIu64, c->session);
    json_t *reply = post(c, path, json_pack("{s:s}", "janus", "keepalive"), error, error_size);
    json_decref(reply);
    return reply != NULL ? 0 : -1;
}

int janus_client_message(janus_client *c, uint64_t handle, json_t *body, const char *jsep_type,
                         const char *jsep_sdp, json_t **reply, char *error, size_t error_size)
{
    char path[64];
    snprintf(path, sizeof path, "/%" PRIu64 "/%" PRIu64, c->session, handle);
    json_t *request = json_pack("{s:s,s:o}", "janus", "message", "body", body);
    if (request != NULL && jsep_type != NULL)
        json_object_set_new(request, "jsep",
                            json_pack("{s:s,s:s}", "type", jsep_type, "sdp", jsep_sdp));
    if (request == NULL) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    json_t *answer = post(c, path, request, error, error_size);
    if (answer == NULL)
        return -1;
    if (reply != NULL)
        *reply = answer;
    else
        json_decref(answer);
    return 0;
}

/* The error a videoroom event reports, or NULL. */
static const char *plugin_error(json_t *event)
{
    json_t *data = json_object_get(json_object_get(event, "plugindata"), "data");
    return json_string_value(json_object_get(data, "error"));
}

/* Looks through one polled event; 1 when it is the one awaited (taken). */
static int take_event(json_t *event, uint64_t handle, json_t **out, char *error, size_t error_size)
{
    json_t *sender = json_object_get(event, "sender");
    if (!json_is_integer(sender) || (uint64_t)json_integer_value(sender) != handle)
        return 0;
    const char *failure = plugin_error(event);
    if (failure != NULL) {
        snprintf(error, error_size, "Janus videoroom: %s", failure);
        tool_text_printable(error);
        return -1;
    }
    if (json_object_get(event, "jsep") == NULL)
        return 0;
    *out = json_incref(event);
    return 1;
}

int janus_client_wait_jsep(janus_client *c, uint64_t handle, double timeout_s, json_t **event,
                           char *error, size_t error_size)
{
    uint64_t deadline = flood_now_us() + (uint64_t)(timeout_s * 1e6);
    char *url = g_strdup_printf("%s/%" PRIu64 "?maxev=%d", c->base, c->session, EVENTS_PER_POLL);
    int found = 0;
    while (found == 0 && flood_now_us() < deadline) {
        SoupMessage *msg = soup_message_new("GET", url);
        json_t *polled = msg != NULL ? exchange(c, msg, error, error_size) : NULL;
        if (msg != NULL)
            g_object_unref(msg);
        if (polled == NULL) {
            found = -1;
            break;
        }
        if (json_is_array(polled)) {
            size_t i;
            json_t *item;
            json_array_foreach(polled, i, item)
            {
                if (found == 0)
                    found = take_event(item, handle, event, error, error_size);
            }
        } else {
            found = take_event(polled, handle, event, error, error_size);
        }
        json_decref(polled);
    }
    g_free(url);
    if (found == 0)
        snprintf(error, error_size, "Janus sent no JSEP within %.0f s", timeout_s);
    return found == 1 ? 0 : -1;
}
