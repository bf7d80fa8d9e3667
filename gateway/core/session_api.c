#include "core/session_api.h"

#include "core/http_reply.h"
#include "core/ice_servers.h"
#include "core/stats_snapshot.h"
#include "record/record_api.h"

#include <jansson.h>
#include <string.h>

static void add_record(moat_session_record *record, void *user)
{
    json_t *array = user;
    json_array_append_new(
        array, json_pack("{s:s, s:s, s:i, s:s}", "id", record->id, "plugin", record->plugin,
                         "worker", (int)moat_worker_index(record->worker), "resource", record->id));
}

static void reply_json(SoupServerMessage *message, unsigned status, json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT);
    json_decref(value);
    char *body = g_strdup(text);
    free(text);
    moat_http_reply(message, status, "application/json", body, strlen(body));
}

void moat_session_api_handle(moat_gateway *gateway, SoupServerMessage *message, const char *path)
{
    const char *method = soup_server_message_get_method(message);
    if (strcmp(path, "/api/sessions") == 0 && strcmp(method, "GET") == 0) {
        json_t *sessions = json_array();
        moat_session_registry_foreach(gateway->sessions, add_record, sessions);
        reply_json(message, 200, json_pack("{s:o}", "sessions", sessions));
        return;
    }
    if (strcmp(path, "/api/stats") == 0 && strcmp(method, "GET") == 0) {
        char *body = moat_stats_snapshot_json(gateway->stats);
        moat_http_reply(message, 200, "application/json", body, strlen(body));
        return;
    }
    if (strcmp(path, "/api/ice-servers") == 0 && strcmp(method, "GET") == 0) {
        reply_json(message, 200,
                   moat_ice_servers_json(&gateway->config, g_get_real_time() / G_USEC_PER_SEC));
        return;
    }
    if (strcmp(path, "/api/plugins") == 0 && strcmp(method, "GET") == 0) {
        json_t *plugins = json_array();
        for (size_t i = 0; i < moat_plugin_registry_count(gateway->plugins); i++) {
            const moat_plugin *plugin = moat_plugin_registry_at(gateway->plugins, i);
            json_array_append_new(plugins,
                                  json_pack("{s:s, s:s}", "name", plugin->name, "description",
                                            plugin->description ? plugin->description : ""));
        }
        reply_json(message, 200, json_pack("{s:o}", "plugins", plugins));
        return;
    }
    if (g_str_has_prefix(path, "/api/sessions/") && g_str_has_suffix(path, "/recording")) {
        char *id = g_strndup(path + strlen("/api/sessions/"),
                             strlen(path) - strlen("/api/sessions/") - strlen("/recording"));
        moat_session_record *record = moat_session_registry_find(gateway->sessions, id);
        g_free(id);
        moat_record_api_result result = {404, "unknown_session", "no such session", NULL};
        if (record)
            moat_record_api_request(gateway, method, record, &result);
        if (result.error)
            moat_http_reply_error(message, result.status, result.error, "%s", result.detail);
        else
            reply_json(message, result.status, json_pack("{s:s}", "file", result.file));
        g_free(result.file);
        return;
    }
    if (g_str_has_prefix(path, "/api/sessions/")) {
        const char *id = path + strlen("/api/sessions/");
        moat_session_record *record = moat_session_registry_find(gateway->sessions, id);
        if (!record) {
            moat_http_reply_error(message, 404, "unknown_session", "no session \"%s\"", id);
            return;
        }
        if (strcmp(method, "GET") == 0) {
            json_t *value = json_array();
            add_record(record, value);
            json_t *first = json_incref(json_array_get(value, 0));
            json_decref(value);
            reply_json(message, 200, first);
            return;
        }
        moat_http_reply_error(message, 405, "method_not_allowed",
                              "GET a session; hang up with DELETE on its WHIP resource");
        return;
    }
    moat_http_reply_error(message, 404, "not_found", "no API endpoint %s", path);
}
