/* POST /api/sessions/<id>/message: a JSON object for the session's plugin
 * (moat_plugin.handle_message). The control thread checks the request, the
 * session's worker calls the plugin (the owner of its per-session state, so
 * a session ending meanwhile is simply not found), and the plugin's reply
 * goes back to the control thread, which completes the held HTTP request. */
#include "http/session_message.h"
#include "base/json_body.h"

#include "session/session_internal.h"

#include <jansson.h>
#include <string.h>

#define MESSAGE_SUFFIX "/message"

typedef struct {
    moat_worker *worker;
    char session_id[40];
    char *json;
    moat_http_done_fn done;
    void *done_data;
    unsigned status;
    char *reply;
} session_message;

static char *error_body(unsigned status, const char *code, const char *detail)
{
    size_t length = 0;
    return moat_http_error_json(status, code, detail, &length);
}

static void message_free(session_message *m)
{
    g_free(m->json);
    g_free(m->reply);
    g_free(m);
}

static gboolean complete(gpointer data)
{
    session_message *m = data;
    m->done(m->done_data, m->status, m->reply);
    m->reply = NULL;
    message_free(m);
    return G_SOURCE_REMOVE;
}

/* Any thread: hands the reply to the control thread (the default main
 * context). */
static void send_back(session_message *m)
{
    GSource *source = g_idle_source_new();
    g_source_set_callback(source, complete, m, NULL);
    g_source_attach(source, NULL);
    g_source_unref(source);
}

/* The plugin's reply must be a JSON object: anything else is its fault. A
 * refusal ({"error": "...", "status": 400..499}) keeps its status. */
static void take_reply(session_message *m, char *reply)
{
    json_t *value = reply ? json_loads(reply, 0, NULL) : NULL;
    json_int_t status = json_integer_value(json_object_get(value, "status"));
    bool refusal = json_is_string(json_object_get(value, "error")) && status >= 400 && status < 500;
    if (!reply) {
        m->status = 204;
    } else if (!json_is_object(value)) {
        m->status = 502;
        m->reply = error_body(502, "bad_plugin_reply", "the plugin replied with no JSON object");
    } else {
        m->status = refusal ? (unsigned)status : 200;
        m->reply = g_strdup(reply);
    }
    json_decref(value);
    g_free(reply);
}

/* Worker thread. */
static void deliver(moat_worker *worker, void *data)
{
    session_message *m = data;
    moat_session *session = moat_worker_find_session(worker, m->session_id);
    if (!session || !session->plugin) {
        m->status = 404;
        m->reply =
            error_body(404, "unknown_session", "the session has ended (or has not started yet)");
    } else if (!session->plugin->handle_message) {
        m->status = 501;
        m->reply = error_body(501, "no_message_handler", "the session's plugin takes no messages");
    } else {
        take_reply(m, session->plugin->handle_message(session->plugin_state, m->json));
    }
    send_back(m);
}

/* The worker stopped before it could deliver. */
static void undelivered(void *data)
{
    session_message *m = data;
    m->status = 503;
    m->reply = error_body(503, "worker_stopped", "the session's worker is stopping");
    send_back(m);
}

static void start(void *data, moat_http_done_fn done, void *done_data)
{
    session_message *m = data;
    m->done = done;
    m->done_data = done_data;
    moat_worker_post(m->worker, deliver, m, undelivered);
}

static void release(void *data)
{
    message_free(data);
}

bool moat_session_message_path(const char *path, char *name, size_t size)
{
    const char *prefix = "/api/sessions/";
    size_t length = strlen(path), prefix_length = strlen(prefix);
    size_t suffix_length = strlen(MESSAGE_SUFFIX);
    if (!g_str_has_prefix(path, prefix) || !g_str_has_suffix(path, MESSAGE_SUFFIX) ||
        length <= prefix_length + suffix_length)
        return false;
    size_t name_length = length - prefix_length - suffix_length;
    if (name_length >= size || memchr(path + prefix_length, '/', name_length))
        return false;
    memcpy(name, path + prefix_length, name_length);
    name[name_length] = '\0';
    return true;
}

void moat_session_message_request(moat_gateway *gateway, const moat_http_request *request,
                                  moat_session_record *record, moat_http_response *response)
{
    if (strcmp(request->method, "POST") != 0) {
        moat_http_response_not_allowed(response, "POST",
                                       "POST a JSON object to a session's /message");
        return;
    }
    const moat_plugin *plugin = moat_plugin_registry_find(gateway->plugins, record->plugin);
    if (!plugin || !plugin->handle_message) {
        moat_http_response_error(response, 501, "no_message_handler",
                                 "the session's plugin takes no messages");
        return;
    }
    json_error_t error;
    json_t *value = request->body_length ? json_loadb(request->body, request->body_length,
                                                      JSON_REJECT_DUPLICATES, &error)
                                         : NULL;
    bool object = json_is_object(value);
    char *text = object ? json_dumps(value, JSON_COMPACT) : NULL;
    if (!text) {
        char detail[256];
        moat_json_body_detail(value, request->body_length ? &error : NULL, detail, sizeof detail);
        json_decref(value);
        moat_http_response_error(response, 400, "bad_json", "%s", detail);
        return;
    }
    json_decref(value);
    session_message *m = g_new0(session_message, 1);
    m->worker = record->worker;
    g_strlcpy(m->session_id, record->id, sizeof m->session_id);
    m->json = g_strdup(text);
    free(text);
    response->deferred = (moat_http_deferred){start, release, m};
}
