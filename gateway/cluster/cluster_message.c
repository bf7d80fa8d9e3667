/* Owns the node-to-node message format (cluster_message.h): parsing what
 * arrives on a pub/sub channel (hostile until proven otherwise), writing
 * what this node sends, and merging other nodes' room listings. */
#include "cluster/cluster_message.h"

#include <glib.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

const char *moat_cluster_drop_reason_name(moat_cluster_drop_reason reason)
{
    static const char *const names[MOAT_CLUSTER_DROP_COUNT] = {
        [MOAT_CLUSTER_DROP_OVERSIZED] = "oversized",
        [MOAT_CLUSTER_DROP_MALFORMED] = "malformed",
        [MOAT_CLUSTER_DROP_UNKNOWN_NODE] = "unknown_node",
        [MOAT_CLUSTER_DROP_REPLY_CHANNEL] = "reply_channel",
        [MOAT_CLUSTER_DROP_UNKNOWN_REQUEST] = "unknown_request",
        [MOAT_CLUSTER_DROP_PATH] = "path",
    };
    return (unsigned)reason < MOAT_CLUSTER_DROP_COUNT ? names[reason] : "?";
}

bool moat_cluster_rpc_channel(const char *node_id, char *out, size_t size)
{
    if (!moat_cluster_node_id_valid(node_id))
        return false;
    int written = snprintf(out, size, "%s%s", MOAT_CLUSTER_RPC_PREFIX, node_id);
    return written > 0 && (size_t)written < size;
}

static bool printable(const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c <= 0x20 || c >= 0x7f)
            return false;
    }
    return true;
}

bool moat_cluster_path_forwardable(const char *path)
{
    size_t length = strlen(path);
    if (length >= MOAT_CLUSTER_PATH_MAX || !printable(path, length) || strstr(path, "..") ||
        strstr(path, "//") || strpbrk(path, "?#\\%"))
        return false;
    return strcmp(path, "/api/rooms") == 0 || g_str_has_prefix(path, "/api/rooms/");
}

bool moat_cluster_room_of_api_path(const char *path, char *room, size_t size)
{
    if (!g_str_has_prefix(path, "/api/rooms/"))
        return false;
    const char *name = path + strlen("/api/rooms/");
    size_t length = strcspn(name, "/");
    if (length == 0 || length >= size || length >= MOAT_CLUSTER_NAME_MAX)
        return false;
    memcpy(room, name, length);
    room[length] = '\0';
    return moat_cluster_room_name_valid(room);
}

static bool topic_valid(const char *topic)
{
    if (!g_str_has_prefix(topic, "rooms/"))
        return false;
    return moat_cluster_room_name_valid(topic + strlen("rooms/"));
}

static bool method_valid(const char *method)
{
    static const char *const methods[] = {"GET", "POST", "DELETE", "PATCH", "PUT"};
    for (size_t i = 0; i < G_N_ELEMENTS(methods); i++)
        if (strcmp(method, methods[i]) == 0)
            return true;
    return false;
}

/* The string member `key` copied into `out` (`size` bytes with its NUL);
 * false when absent, not a string, empty, too long, or with a NUL. */
static bool copy_string(json_t *object, const char *key, char *out, size_t size)
{
    json_t *value = json_object_get(object, key);
    if (!json_is_string(value))
        return false;
    size_t length = json_string_length(value);
    if (length == 0 || length >= size || memchr(json_string_value(value), '\0', length))
        return false;
    memcpy(out, json_string_value(value), length + 1);
    return true;
}

static bool copy_body(json_t *object, moat_cluster_message *out, bool required)
{
    json_t *value = json_object_get(object, "body");
    if (!value)
        return !required;
    if (!json_is_string(value))
        return false;
    out->body_length = json_string_length(value);
    out->body = g_memdup2(json_string_value(value), out->body_length + 1);
    return true;
}

static bool parse_request(json_t *root, moat_cluster_message *out, moat_cluster_drop_reason *reason)
{
    char expected[sizeof out->reply_to];
    if (!copy_string(root, "id", out->id, sizeof out->id) ||
        !copy_string(root, "reply_to", out->reply_to, sizeof out->reply_to) ||
        !copy_string(root, "method", out->method, sizeof out->method) ||
        !method_valid(out->method) || !copy_string(root, "path", out->path, sizeof out->path) ||
        !copy_body(root, out, false))
        return false;
    if (!moat_cluster_rpc_channel(out->from, expected, sizeof expected) ||
        strcmp(expected, out->reply_to) != 0) {
        *reason = MOAT_CLUSTER_DROP_REPLY_CHANNEL;
        return false;
    }
    if (!moat_cluster_path_forwardable(out->path)) {
        *reason = MOAT_CLUSTER_DROP_PATH;
        return false;
    }
    return true;
}

/* A reply's status is relayed as an HTTP response's final status: 1xx is
 * none (libsoup writes a 100's interim head again and again, forever). */
static bool parse_reply(json_t *root, moat_cluster_message *out)
{
    json_t *status = json_object_get(root, "status");
    if (!copy_string(root, "id", out->id, sizeof out->id) || !json_is_integer(status) ||
        json_integer_value(status) < 200 || json_integer_value(status) > 599)
        return false;
    out->status = (unsigned)json_integer_value(status);
    return copy_body(root, out, false);
}

static bool parse_event(json_t *root, moat_cluster_message *out)
{
    if (!copy_string(root, "topic", out->topic, sizeof out->topic) || !topic_valid(out->topic) ||
        !copy_body(root, out, true))
        return false;
    /* The event itself: one JSON object, as local events are. */
    json_t *event = json_loadb(out->body, out->body_length, JSON_REJECT_DUPLICATES, NULL);
    bool object = json_is_object(event);
    json_decref(event);
    return object;
}

bool moat_cluster_message_parse(const char *data, size_t length, moat_cluster_message *out,
                                moat_cluster_drop_reason *reason)
{
    memset(out, 0, sizeof *out);
    *reason = MOAT_CLUSTER_DROP_MALFORMED;
    if (length > MOAT_CLUSTER_MESSAGE_MAX) {
        *reason = MOAT_CLUSTER_DROP_OVERSIZED;
        return false;
    }
    if (!data)
        return false;
    json_t *root = json_loadb(data, length, JSON_REJECT_DUPLICATES, NULL);
    char kind[16];
    json_t *version = json_object_get(root, "v");
    bool ok = json_is_object(root) && json_is_integer(version) &&
              json_integer_value(version) == 1 && copy_string(root, "kind", kind, sizeof kind) &&
              copy_string(root, "from", out->from, sizeof out->from) &&
              moat_cluster_node_id_valid(out->from);
    if (ok) {
        if (strcmp(kind, "request") == 0) {
            out->kind = MOAT_CLUSTER_MSG_REQUEST;
            ok = parse_request(root, out, reason);
        } else if (strcmp(kind, "reply") == 0) {
            out->kind = MOAT_CLUSTER_MSG_REPLY;
            ok = parse_reply(root, out);
        } else if (strcmp(kind, "event") == 0) {
            out->kind = MOAT_CLUSTER_MSG_EVENT;
            ok = parse_event(root, out);
        } else {
            ok = false;
        }
    }
    json_decref(root);
    if (!ok)
        moat_cluster_message_clear(out);
    return ok;
}

void moat_cluster_message_clear(moat_cluster_message *message)
{
    g_free(message->body);
    memset(message, 0, sizeof *message);
}

char *moat_cluster_message_to_json(const moat_cluster_message *message, size_t *length)
{
    static const char *const kinds[] = {"request", "reply", "event"};
    json_t *root =
        json_pack("{s:i,s:s,s:s}", "v", 1, "kind", kinds[message->kind], "from", message->from);
    switch (message->kind) {
    case MOAT_CLUSTER_MSG_REQUEST:
        json_object_set_new(root, "id", json_string(message->id));
        json_object_set_new(root, "reply_to", json_string(message->reply_to));
        json_object_set_new(root, "method", json_string(message->method));
        json_object_set_new(root, "path", json_string(message->path));
        break;
    case MOAT_CLUSTER_MSG_REPLY:
        json_object_set_new(root, "id", json_string(message->id));
        json_object_set_new(root, "status", json_integer(message->status));
        break;
    case MOAT_CLUSTER_MSG_EVENT:
        json_object_set_new(root, "topic", json_string(message->topic));
        break;
    }
    if (message->body) {
        json_t *body = json_stringn(message->body, message->body_length); /* NULL: not UTF-8 */
        if (!body) {
            json_decref(root);
            return NULL;
        }
        json_object_set_new(root, "body", body);
    }
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text)
        return NULL;
    moat_cluster_message check;
    moat_cluster_drop_reason reason;
    size_t size = strlen(text);
    if (!moat_cluster_message_parse(text, size, &check, &reason)) {
        free(text);
        return NULL;
    }
    moat_cluster_message_clear(&check);
    char *copy = g_strndup(text, size);
    free(text);
    if (length)
        *length = size;
    return copy;
}

bool moat_cluster_rooms_merge(void *rooms, const char *node, const char *body, size_t length,
                              size_t max_rooms)
{
    json_t *out = rooms;
    json_t *root = body ? json_loadb(body, length, 0, NULL) : NULL;
    json_t *list = json_object_get(root, "rooms");
    bool ok = json_is_array(out) && json_is_array(list);
    size_t i;
    json_t *room;
    json_array_foreach(ok ? list : NULL, i, room)
    {
        if (!json_is_object(room)) {
            ok = false;
            break;
        }
    }
    json_array_foreach(ok ? list : NULL, i, room)
    {
        if (json_array_size(out) >= max_rooms)
            break;
        json_t *copy = json_deep_copy(room);
        json_object_set_new(copy, "node", json_string(node));
        json_array_append_new(out, copy);
    }
    json_decref(root);
    return ok;
}
