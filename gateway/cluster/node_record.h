/* A node's record in the registry: what each node writes to its Redis key
 * (JSON) and reads back from the others'. Records come from other machines
 * through Redis, so parsing is defensive: bounded size, strict types, every
 * string bounded and checked (the HTTP URL ends up in Location headers).
 * Pure; fuzzed (tests/fuzz/cluster). Any thread. */
#ifndef MOAT_CLUSTER_NODE_RECORD_H
#define MOAT_CLUSTER_NODE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOAT_CLUSTER_RECORD_MAX_BYTES 4096

typedef struct {
    char id[128];
    char http[256];  /* advertised base URL: http(s)://, printable, no spaces */
    char media[128]; /* advertised media address */
    char ng[128];    /* ng control address ("" when off) */
    char region[64];
    char version[32];
    bool draining;
    uint32_t workers;
    uint32_t sessions;
    uint32_t max_sessions; /* 0: no limit */
    uint32_t rooms;        /* rooms this node owns */
    uint32_t calls;
} moat_cluster_node;

/* JSON of `node` (g_free it). */
char *moat_cluster_node_to_json(const moat_cluster_node *node);
/* Parses a record; false (with a reason) for anything malformed, oversized,
 * of the wrong type, or with an unsafe string. */
bool moat_cluster_node_parse(const char *json, size_t length, moat_cluster_node *out, char *error,
                             size_t error_size);
/* A base URL safe to put in a Location header: http:// or https://, then
 * printable ASCII without spaces, quotes or angle brackets. */
bool moat_cluster_url_safe(const char *url);

#endif
