/* Owns the cluster's Redis key names (cluster_keys.h). */
#include "cluster/cluster_keys.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

static bool name_valid(const char *name, bool colon_ok)
{
    size_t length = name ? strlen(name) : 0;
    if (length == 0 || length >= MOAT_CLUSTER_NAME_MAX)
        return false;
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c >= 0x7f || (c == ':' && !colon_ok))
            return false;
    }
    return true;
}

bool moat_cluster_node_id_valid(const char *id)
{
    return name_valid(id, true);
}

bool moat_cluster_room_name_valid(const char *name)
{
    return name_valid(name, false) && !strchr(name, '/');
}

bool moat_cluster_node_key(const char *id, char *out, size_t size)
{
    if (!moat_cluster_node_id_valid(id))
        return false;
    int n = snprintf(out, size, "moat:node:%s", id);
    return n > 0 && (size_t)n < size;
}

bool moat_cluster_room_key(const char *plugin, const char *room, char *out, size_t size)
{
    if (!moat_cluster_room_name_valid(plugin) || !moat_cluster_room_name_valid(room))
        return false;
    int n = snprintf(out, size, "moat:room:%s:%s", plugin, room);
    return n > 0 && (size_t)n < size;
}

bool moat_cluster_room_full_key(const char *plugin, const char *room, char *out, size_t size)
{
    if (!moat_cluster_room_name_valid(plugin) || !moat_cluster_room_name_valid(room))
        return false;
    int n = snprintf(out, size, "moat:full:%s:%s", plugin, room);
    return n > 0 && (size_t)n < size;
}

bool moat_cluster_calls_key(const char *id, char *out, size_t size)
{
    if (!moat_cluster_node_id_valid(id))
        return false;
    int n = snprintf(out, size, "moat:calls:%s", id);
    return n > 0 && (size_t)n < size;
}

#define VIA_PREFIX "via/"
/* The owners' resource ids (session_registry.h: 32 hex digits today). */
#define VIA_ID_MAX 39

static bool id_char(char c)
{
    return g_ascii_isalnum(c) || c == '-' || c == '_';
}

bool moat_cluster_via_path(const char *node, const char *id, char *out, size_t size)
{
    size_t id_length = id ? strlen(id) : 0;
    if (!moat_cluster_node_id_valid(node) || id_length == 0 || id_length > VIA_ID_MAX)
        return false;
    for (size_t i = 0; i < id_length; i++)
        if (!id_char(id[i]))
            return false;
    GString *path = g_string_new("/whip/resource/" VIA_PREFIX);
    for (const char *p = node; *p; p++)
        g_string_append_printf(path, "%02x", (unsigned char)*p);
    g_string_append_printf(path, "/%s", id);
    bool fits = path->len < size;
    if (fits)
        memcpy(out, path->str, path->len + 1);
    g_string_free(path, TRUE);
    return fits;
}

moat_cluster_via moat_cluster_via_parse(const char *rest, char *node, size_t node_size, char *id,
                                        size_t id_size)
{
    if (!rest || strncmp(rest, VIA_PREFIX, strlen(VIA_PREFIX)) != 0)
        return MOAT_CLUSTER_VIA_NONE;
    const char *hex = rest + strlen(VIA_PREFIX);
    const char *slash = strchr(hex, '/');
    size_t hex_length = slash ? (size_t)(slash - hex) : 0;
    if (!slash || hex_length == 0 || hex_length % 2 || hex_length / 2 >= node_size ||
        hex_length / 2 >= MOAT_CLUSTER_NAME_MAX)
        return MOAT_CLUSTER_VIA_INVALID;
    for (size_t i = 0; i < hex_length; i += 2) {
        int high = g_ascii_xdigit_value(hex[i]), low = g_ascii_xdigit_value(hex[i + 1]);
        if (high < 0 || low < 0)
            return MOAT_CLUSTER_VIA_INVALID;
        node[i / 2] = (char)(high * 16 + low);
    }
    node[hex_length / 2] = '\0';
    const char *value = slash + 1;
    size_t id_length = strlen(value);
    if (strlen(node) != hex_length / 2 || !moat_cluster_node_id_valid(node) || id_length == 0 ||
        id_length > VIA_ID_MAX || id_length >= id_size)
        return MOAT_CLUSTER_VIA_INVALID;
    for (size_t i = 0; i < id_length; i++)
        if (!id_char(value[i]))
            return MOAT_CLUSTER_VIA_INVALID;
    memcpy(id, value, id_length + 1);
    return MOAT_CLUSTER_VIA_OK;
}

bool moat_cluster_room_of_resource(const char *resource, char *out, size_t size)
{
    const char *slash = resource ? strchr(resource, '/') : NULL;
    size_t length = resource ? (slash ? (size_t)(slash - resource) : strlen(resource)) : 0;
    if (length == 0 || length >= size)
        return false;
    memcpy(out, resource, length);
    out[length] = '\0';
    return moat_cluster_room_name_valid(out);
}
