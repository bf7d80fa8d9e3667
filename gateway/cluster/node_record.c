/* Owns the node record's JSON form (node_record.h). */
#include "cluster/node_record.h"

#include "cluster/cluster_keys.h"

#include <glib.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

bool moat_cluster_url_safe(const char *url)
{
    if (!url || !(g_str_has_prefix(url, "http://") || g_str_has_prefix(url, "https://")))
        return false;
    for (const char *p = url; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\')
            return false;
    }
    return strlen(url) > strlen("https://");
}

char *moat_cluster_node_to_json(const moat_cluster_node *node)
{
    json_t *object =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "id", node->id,
                  "http", node->http, "media", node->media, "ng", node->ng, "region", node->region,
                  "version", node->version, "state", node->draining ? "draining" : "serving",
                  "workers", (json_int_t)node->workers, "sessions", (json_int_t)node->sessions,
                  "max_sessions", (json_int_t)node->max_sessions, "rooms", (json_int_t)node->rooms,
                  "calls", (json_int_t)node->calls);
    char *text = object ? json_dumps(object, JSON_COMPACT) : NULL;
    json_decref(object);
    char *copy = g_strdup(text ? text : "{}");
    free(text);
    return copy;
}

static bool fail(char *error, size_t error_size, const char *what)
{
    snprintf(error, error_size, "%s", what);
    return false;
}

/* A string member that fits `size` and is printable ASCII (or empty). */
static bool get_string(json_t *object, const char *key, char *out, size_t size, bool required)
{
    json_t *value = json_object_get(object, key);
    if (!value) {
        out[0] = '\0';
        return !required;
    }
    if (!json_is_string(value))
        return false;
    const char *text = json_string_value(value);
    size_t length = json_string_length(value);
    if (length >= size || strlen(text) != length)
        return false;
    for (size_t i = 0; i < length; i++)
        if ((unsigned char)text[i] < ' ' || (unsigned char)text[i] >= 0x7f)
            return false;
    memcpy(out, text, length + 1);
    return true;
}

static bool get_count(json_t *object, const char *key, uint32_t *out)
{
    json_t *value = json_object_get(object, key);
    if (!value) {
        *out = 0;
        return true;
    }
    if (!json_is_integer(value) || json_integer_value(value) < 0 ||
        json_integer_value(value) > (json_int_t)UINT32_MAX)
        return false;
    *out = (uint32_t)json_integer_value(value);
    return true;
}

bool moat_cluster_node_parse(const char *json, size_t length, moat_cluster_node *out, char *error,
                             size_t error_size)
{
    memset(out, 0, sizeof *out);
    if (!json || length == 0 || length > MOAT_CLUSTER_RECORD_MAX_BYTES)
        return fail(error, error_size, "empty or oversized record");
    json_error_t jerror;
    json_t *object = json_loadb(json, length, JSON_REJECT_DUPLICATES, &jerror);
    if (!object || !json_is_object(object)) {
        json_decref(object);
        return fail(error, error_size, "not a JSON object");
    }
    char state[16] = "";
    bool ok = get_string(object, "id", out->id, sizeof out->id, true) &&
              get_string(object, "http", out->http, sizeof out->http, true) &&
              get_string(object, "media", out->media, sizeof out->media, false) &&
              get_string(object, "ng", out->ng, sizeof out->ng, false) &&
              get_string(object, "region", out->region, sizeof out->region, false) &&
              get_string(object, "version", out->version, sizeof out->version, false) &&
              get_string(object, "state", state, sizeof state, true) &&
              get_count(object, "workers", &out->workers) &&
              get_count(object, "sessions", &out->sessions) &&
              get_count(object, "max_sessions", &out->max_sessions) &&
              get_count(object, "rooms", &out->rooms) && get_count(object, "calls", &out->calls);
    json_decref(object);
    if (!ok)
        return fail(error, error_size, "a member is missing, of the wrong type or too long");
    if (!moat_cluster_node_id_valid(out->id))
        return fail(error, error_size, "invalid node id");
    if (!moat_cluster_url_safe(out->http))
        return fail(error, error_size, "unsafe or invalid http URL");
    if (strcmp(state, "serving") == 0)
        out->draining = false;
    else if (strcmp(state, "draining") == 0)
        out->draining = true;
    else
        return fail(error, error_size, "state is neither serving nor draining");
    return true;
}
