/* Node-to-node messages over Redis pub/sub (pure, no I/O; unit-tested and
 * fuzzed): a request to another node (id, reply channel, method, path,
 * body), its reply (id, status, body), and a room event relayed to every
 * node. Each is one JSON object of at most MOAT_CLUSTER_MESSAGE_MAX bytes,
 * read from a channel anyone holding the Redis password can publish on, so
 * the parser checks every field's type, size and characters and says why
 * it refused. Any thread; the parsed message borrows nothing. */
#ifndef MOAT_CLUSTER_MESSAGE_H
#define MOAT_CLUSTER_MESSAGE_H

#include "cluster/cluster_keys.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Messages over this size are refused unread (the JSON body of a reply:
 * a node's room listing fits easily). */
#define MOAT_CLUSTER_MESSAGE_MAX    (256 * 1024)
#define MOAT_CLUSTER_EVENTS_CHANNEL "moat:events"
#define MOAT_CLUSTER_RPC_PREFIX     "moat:rpc:"
#define MOAT_CLUSTER_PATH_MAX       512
#define MOAT_CLUSTER_ID_MAX         48
#define MOAT_CLUSTER_TOPIC_MAX      (MOAT_CLUSTER_NAME_MAX + 8)

typedef enum {
    MOAT_CLUSTER_MSG_REQUEST,
    MOAT_CLUSTER_MSG_REPLY,
    MOAT_CLUSTER_MSG_EVENT,
} moat_cluster_message_kind;

/* Why a message was refused (counted on /metrics by these names). */
typedef enum {
    MOAT_CLUSTER_DROP_OVERSIZED = 0,
    MOAT_CLUSTER_DROP_MALFORMED,       /* not JSON, a field missing or of the wrong shape */
    MOAT_CLUSTER_DROP_UNKNOWN_NODE,    /* "from" not in the registry (or this node) */
    MOAT_CLUSTER_DROP_REPLY_CHANNEL,   /* a request's reply channel is not its sender's */
    MOAT_CLUSTER_DROP_UNKNOWN_REQUEST, /* a reply nobody waits for (late, forged) */
    MOAT_CLUSTER_DROP_PATH,            /* a request for a path no node forwards */
    MOAT_CLUSTER_DROP_COUNT
} moat_cluster_drop_reason;

const char *moat_cluster_drop_reason_name(moat_cluster_drop_reason reason);

typedef struct {
    moat_cluster_message_kind kind;
    char from[MOAT_CLUSTER_NAME_MAX];
    char id[MOAT_CLUSTER_ID_MAX];              /* request, reply */
    char reply_to[MOAT_CLUSTER_NAME_MAX + 16]; /* request: "moat:rpc:<from>" */
    char method[8];                            /* request: GET POST DELETE PATCH PUT */
    char path[MOAT_CLUSTER_PATH_MAX];          /* request: "/api/..." printable, no ".." */
    char topic[MOAT_CLUSTER_TOPIC_MAX];        /* event: "rooms/<room>" */
    unsigned status;                           /* reply: 200..599 (a final status) */
    char *body; /* request, reply, event (the event's JSON object); owned */
    size_t body_length;
} moat_cluster_message;

/* Parses `data` (`length` bytes, not NUL-terminated). False with the
 * reason (and `out` empty) when it is refused. */
bool moat_cluster_message_parse(const char *data, size_t length, moat_cluster_message *out,
                                moat_cluster_drop_reason *reason);
void moat_cluster_message_clear(moat_cluster_message *message);
/* The message as JSON (g_free it); NULL when a field would not parse back
 * (the sender's own bug: nothing is sent). */
char *moat_cluster_message_to_json(const moat_cluster_message *message, size_t *length);

/* The reply channel of a node: "moat:rpc:<id>"; false when it does not fit. */
bool moat_cluster_rpc_channel(const char *node_id, char *out, size_t size);
/* A path another node may ask this one to answer: /api/rooms and below,
 * printable ASCII without "..", "//", '?' or '#'. */
bool moat_cluster_path_forwardable(const char *path);
/* The room a room API path names ("lobby" of /api/rooms/lobby/...), false
 * for /api/rooms itself or an invalid name. */
bool moat_cluster_room_of_api_path(const char *path, char *room, size_t size);

/* Adds a node's GET /api/rooms answer (`body`: {"rooms": [objects]}) to
 * `rooms` (a JSON array, jansson's json_t passed as void *), each room
 * marked "node": `node`; at most `max_rooms` in `rooms` in all. False when
 * the answer is not of that shape (nothing added). */
bool moat_cluster_rooms_merge(void *rooms, const char *node, const char *body, size_t length,
                              size_t max_rooms);

#endif
