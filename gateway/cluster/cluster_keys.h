/* Redis key names of the cluster and the names they are built from (pure,
 * no I/O; unit-tested). Every key starts with "moat:". Node ids and room
 * names that would make an ambiguous or oversized key are refused. */
#ifndef MOAT_CLUSTER_KEYS_H
#define MOAT_CLUSTER_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#define MOAT_CLUSTER_NODES_KEY "moat:nodes" /* set of node ids (registry index) */
#define MOAT_CLUSTER_NAME_MAX  128

/* A node id or room name: 1..127 bytes of printable ASCII other than space,
 * ':' is allowed in node ids (host:port) but not in room names. */
bool moat_cluster_node_id_valid(const char *id);
bool moat_cluster_room_name_valid(const char *name);
/* "moat:node:<id>"; false when it does not fit or the id is invalid. */
bool moat_cluster_node_key(const char *id, char *out, size_t size);
/* "moat:room:<plugin>:<room>"; false when invalid or too long. */
bool moat_cluster_room_key(const char *plugin, const char *room, char *out, size_t size);
/* "moat:full:<plugin>:<room>": set by the room's owner while the room is
 * at its own subscriber cap; false when invalid or too long. */
bool moat_cluster_room_full_key(const char *plugin, const char *room, char *out, size_t size);
/* "moat:calls:<id>": the hash of a node's call records (call-id ->
 * record, cluster_calls.c); false when it does not fit or the id is
 * invalid. */
bool moat_cluster_calls_key(const char *id, char *out, size_t size);
/* The room a WHIP/WHEP resource names: its first path segment ("lobby" of
 * "lobby/p1"); false when it is not a valid room name. */
bool moat_cluster_room_of_resource(const char *resource, char *out, size_t size);

/* A resource another node made, as the node that forwarded its offer
 * names it (signalling = proxy): "/whip/resource/via/<node id in lower-case
 * hex>/<the owner's resource id>". Hex keeps any node id one path segment
 * whatever the HTTP layer decodes. False when it does not fit. */
bool moat_cluster_via_path(const char *node, const char *id, char *out, size_t size);

typedef enum {
    MOAT_CLUSTER_VIA_NONE,    /* not a "via/" path: this node's own resource */
    MOAT_CLUSTER_VIA_OK,      /* node and id filled */
    MOAT_CLUSTER_VIA_INVALID, /* "via/" but malformed */
} moat_cluster_via;
/* Parses what follows "/whip/resource/": "via/<hex>/<id>" with a valid
 * node id and an id of 1..39 letters, digits, '-' or '_'. */
moat_cluster_via moat_cluster_via_parse(const char *rest, char *node, size_t node_size, char *id,
                                        size_t id_size);

#endif
