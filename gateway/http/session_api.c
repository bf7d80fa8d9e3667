/* Owns the /api/ endpoints' JSON. */
#include "http/session_api.h"

#include "http/ice_servers.h"
#include "http/session_message.h"
#include "session/stats_snapshot.h"
#include "record/record_api.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    json_t *array;
    bool privileged;
} listing;

static json_t *describe_record(const moat_session_record *record, bool privileged)
{
    char label[24];
    g_snprintf(label, sizeof label, "%" G_GUINT64_FORMAT, record->serial);
    json_t *value = json_pack("{s:s, s:s, s:i}", "id", label, "plugin", record->plugin, "worker",
                              (int)moat_worker_index(record->worker));
    if (value && privileged) {
        char *resource = g_strdup_printf("/whip/resource/%s", record->id);
        json_object_set_new(value, "resource", json_string(resource));
        g_free(resource);
    }
    return value;
}

static void add_record(moat_session_record *record, void *user)
{
    listing *list = user;
    json_array_append_new(list->array, describe_record(record, list->privileged));
}

static void reply_json(moat_http_response *response, unsigned status, json_t *value)
{
    char *text = value ? json_dumps(value, JSON_COMPACT) : NULL;
    json_decref(value);
    if (!text) {
        moat_http_response_error(response, 500, "internal", "cannot write the reply");
        return;
    }
    char *body = g_strdup(text);
    free(text);
    moat_http_response_set(response, status, "application/json", body, strlen(body));
}

typedef struct {
    const char *label;
    moat_session_record *found;
} label_search;

static void match_label(moat_session_record *record, void *user)
{
    label_search *search = user;
    char label[24];
    g_snprintf(label, sizeof label, "%" G_GUINT64_FORMAT, record->serial);
    if (strcmp(label, search->label) == 0)
        search->found = record;
}

/* A session by its resource id (`by_id` set) or its public label. */
static moat_session_record *find_session(moat_gateway *gateway, const char *name, bool *by_id)
{
    moat_session_record *record = moat_session_registry_find(gateway->sessions, name);
    if (by_id)
        *by_id = record != NULL;
    if (record)
        return record;
    label_search search = {name, NULL};
    moat_session_registry_foreach(gateway->sessions, match_label, &search);
    return search.found;
}

/* A session to act on (message, recording): named by its resource id (the
 * capability its WHIP client holds), or by its label for API token holders
 * only. The label is public (/api/sessions, /metrics): it authorizes
 * nothing. NULL with the error response set otherwise. */
static moat_session_record *find_session_to_act_on(moat_gateway *gateway, const char *name,
                                                   bool privileged, moat_http_response *response)
{
    bool by_id = false;
    moat_session_record *record = find_session(gateway, name, &by_id);
    if (!record) {
        moat_http_response_error(response, 404, "unknown_session", "no such session");
        return NULL;
    }
    if (!by_id && !privileged) {
        moat_http_response_error(response, 403, "label_not_capability",
                                 "a session's public label does not let you act on it: name it "
                                 "by its resource id (the id in its WHIP Location) or send the "
                                 "API token");
        return NULL;
    }
    return record;
}

/* A recording's file as the reply names it: relative to [record] dir, never
 * the server's absolute path. */
static char *reply_file_name(const moat_gateway *gateway, const char *file)
{
    const char *dir = gateway->config.record_dir;
    size_t length = dir ? strlen(dir) : 0;
    while (length > 1 && dir[length - 1] == '/')
        length--;
    if (length && strncmp(file, dir, length) == 0 && file[length] == '/')
        return g_strdup(file + length + 1);
    return g_path_get_basename(file);
}

/* An error's detail without the server's paths: the recording folder is
 * named by its option instead. */
static char *reply_detail(const moat_gateway *gateway, const char *detail)
{
    const char *dir = gateway->config.record_dir;
    if (!dir || !*dir || !strstr(detail, dir))
        return g_strdup(detail);
    GString *text = g_string_new(detail);
    g_string_replace(text, dir, "<[record] dir>", 0);
    return g_string_free(text, FALSE);
}

static void reply_recording(moat_gateway *gateway, moat_http_response *response,
                            moat_record_api_result *result)
{
    if (result->error) {
        char *detail = reply_detail(gateway, result->detail);
        moat_http_response_error(response, result->status, result->error, "%s", detail);
        g_free(detail);
        /* The recording routes take POST and DELETE (record_api.h). */
        if (result->status == 405)
            moat_http_response_header(response, "Allow", "POST, DELETE");
    } else {
        char *name = reply_file_name(gateway, result->file);
        json_t *body = json_pack("{s:s}", "file", name);
        /* A recording that ended early: why, in the error's words. */
        if (result->failed) {
            json_object_set_new(body, "failed", json_string(result->failed));
            json_object_set_new(body, "detail", json_string(result->detail));
        }
        reply_json(response, result->status, body);
        g_free(name);
    }
    g_free(result->file);
    result->file = NULL;
}

/* The listings above, which take GET (and HEAD) only. */
static bool get_only(const char *path)
{
    static const char *const paths[] = {"/api/sessions", "/api/stats", "/api/ice-servers",
                                        "/api/plugins"};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
        if (strcmp(path, paths[i]) == 0)
            return true;
    }
    return false;
}

void moat_session_api_handle(moat_gateway *gateway, const moat_http_request *request,
                             moat_http_response *response, bool privileged)
{
    const char *method = request->method;
    const char *path = request->path;
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (strcmp(path, "/api/sessions") == 0 && get) {
        listing list = {json_array(), privileged};
        moat_session_registry_foreach(gateway->sessions, add_record, &list);
        reply_json(response, 200, json_pack("{s:o}", "sessions", list.array));
        return;
    }
    if (strcmp(path, "/api/stats") == 0 && get) {
        char *body = gateway->stats ? moat_stats_snapshot_json(gateway->stats, privileged)
                                    : g_strdup("{\"workers\":[],\"transports\":[]}");
        moat_http_response_set(response, 200, "application/json", body, strlen(body));
        return;
    }
    if (strcmp(path, "/api/ice-servers") == 0 && get) {
        /* The router lets only token holders here when a token is in force. */
        char user[33];
        moat_turn_new_user(user);
        reply_json(
            response, 200,
            moat_ice_servers_json(&gateway->config, user, g_get_real_time() / G_USEC_PER_SEC));
        return;
    }
    if (strcmp(path, "/api/plugins") == 0 && get) {
        json_t *plugins = json_array();
        for (size_t i = 0; i < moat_plugin_registry_count(gateway->plugins); i++) {
            const moat_plugin *plugin = moat_plugin_registry_at(gateway->plugins, i);
            json_array_append_new(plugins,
                                  json_pack("{s:s, s:s}", "name", plugin->name, "description",
                                            plugin->description ? plugin->description : ""));
        }
        reply_json(response, 200, json_pack("{s:o}", "plugins", plugins));
        return;
    }
    /* "/api/sessions/recording" shares its slash between prefix and suffix:
     * the name must be at least one character. */
    if (g_str_has_prefix(path, "/api/sessions/") && g_str_has_suffix(path, "/recording") &&
        strlen(path) > strlen("/api/sessions/") + strlen("/recording")) {
        char *name = g_strndup(path + strlen("/api/sessions/"),
                               strlen(path) - strlen("/api/sessions/") - strlen("/recording"));
        moat_session_record *record = find_session_to_act_on(gateway, name, privileged, response);
        g_free(name);
        if (!record)
            return;
        moat_record_api_result result;
        moat_record_api_request(gateway, method, record, &result);
        reply_recording(gateway, response, &result);
        return;
    }
    char name[64];
    if (moat_session_message_path(path, name, sizeof name)) {
        moat_session_record *record = find_session_to_act_on(gateway, name, privileged, response);
        if (record)
            moat_session_message_request(gateway, request, record, response);
        return;
    }
    if (g_str_has_prefix(path, "/api/sessions/")) {
        moat_session_record *record = find_session(gateway, path + strlen("/api/sessions/"), NULL);
        if (!record) {
            moat_http_response_error(response, 404, "unknown_session", "no such session");
            return;
        }
        if (get) {
            reply_json(response, 200, describe_record(record, privileged));
            return;
        }
        moat_http_response_not_allowed(response, "GET, HEAD",
                                       "GET a session; hang up with DELETE on its WHIP resource");
        return;
    }
    if (get_only(path)) {
        moat_http_response_not_allowed(response, "GET, HEAD", "%s takes GET", path);
        return;
    }
    moat_http_response_error(response, 404, "not_found", "no API endpoint %s", path);
}

bool moat_session_api_plugin_recording(moat_gateway *gateway, const moat_plugin *plugin,
                                       const moat_http_request *request,
                                       moat_http_response *response, const char *path)
{
    const char *rest = path + strlen(plugin->api_path);
    if (!plugin->publisher_session || rest[0] != '/' || !g_str_has_suffix(rest, "/recording") ||
        strlen(rest) <= strlen("//recording"))
        return false;
    char *resource = g_strndup(rest + 1, strlen(rest) - 1 - strlen("/recording"));
    char id[64] = "", label[32] = "";
    moat_record_api_result result = {404, "no_publisher", "no such room or no publisher in it",
                                     NULL};
    moat_session_record *record = NULL;
    if (!strchr(resource, '/') &&
        plugin->publisher_session(resource, id, sizeof id, label, sizeof label) == 0)
        record = moat_session_registry_find(gateway->sessions, id);
    if (record) {
        /* The plugin vouches for its resource names and labels: they are
         * what its own paths accept. */
        char *prefix = g_strdup_printf("%s-%s-%s", plugin->name, resource, label);
        moat_record_api_request_named(gateway, request->method, record, prefix, &result);
        g_free(prefix);
    }
    g_free(resource);
    reply_recording(gateway, response, &result);
    return true;
}
