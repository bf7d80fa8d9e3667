/* Owns the cluster's Redis key names (cluster_keys.h). */
#include "cluster/cluster_keys.h"

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
