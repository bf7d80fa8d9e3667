/* The tunnel plugin's state: IP over data channels between two peers. A
 * tunnel has at most two peers (sides, TUNNEL_PEERS); each data channel
 * message one peer sends (one IP packet) goes to the other on that peer's own
 * channel (whose mode, ordered, unordered or unreliable, the receiving peer
 * chose) through the core's relay_data. The gateway never routes a packet
 * anywhere else; what it cannot deliver is dropped and counted by reason.
 *
 * Lanes: a peer may join with up to TUNNEL_MAX_LANES sessions (lanes, each
 * its own SCTP association and congestion window): POST
 * /whip/tunnel/<name>/<peer-key>/<lane>. Lane 0 with a new key claims a side
 * (a third key gets 409); lane i > 0 joins the side that key holds (404 when
 * no side holds it, 409 when the lane is taken or past the cap). A message
 * from lane i of one side goes to lane i of the other, or to the other's
 * first lane with an open channel when it has no lane i. POST
 * /whip/tunnel/<name> (no key) is a one-lane peer, as before lanes. Any
 * lane leaving ends the tunnel: every other lane of both sides ends, and
 * from that moment the tunnel's name no longer finds it, so a peer that
 * joins by that name (the same peer rejoining at once) gets a new tunnel,
 * never a side of the one whose lanes are ending. A lane whose session is
 * ending (gateway->session_ending: its DELETE answered, a drain) ends its
 * tunnel at the next join by the name, before it leaves.
 *
 * Ownership and threads:
 *  - The registry (tunnel_registry.c) owns tunnels; registry_lock guards
 *    the tables and each tunnel's peer slots. Every peer holds its tunnel.
 *    The first lane to leave moves the tunnel from the name table to the
 *    set of ended tunnels; it is freed when its last lane leaves.
 *  - A peer is allocated by attach (control thread) and freed by detach (its
 *    session's worker) after it left its slot, so a peer read under the
 *    registry lock is alive. Its handle is referenced from attach to detach:
 *    the other peer relays to it from its own worker. Others read only the
 *    atomics and the fields fixed at attach. */
#ifndef MOAT_TUNNEL_H
#define MOAT_TUNNEL_H

#include "plugin.h"
#include "sctp/open_channels.h"

#include <glib.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define TUNNEL_PEERS       2
#define TUNNEL_MAX_LANES   8  /* sessions per peer (side) */
#define TUNNEL_KEY_MIN     16 /* a peer key: [A-Za-z0-9_-], 16 to 64 characters */
#define TUNNEL_KEY_SIZE    65
#define TUNNEL_NAME_SIZE   64
#define TUNNEL_MAX_TUNNELS 10000
#define TUNNEL_CHECK_US    100000u /* a lane looks whether its tunnel ended, from attach on */
/* The largest message relayed: an IPv4/IPv6 packet is at most 65535 bytes
 * (no jumbograms), and the core relays at most MOAT_PLUGIN_RELAY_DATA_MAX. */
#define TUNNEL_MAX_MESSAGE 65535u

/* Why a message was not delivered (moat_tunnel_dropped_messages_total). */
typedef enum {
    TUNNEL_DROP_NO_PEER = 0,   /* the other peer has not joined (or left) */
    TUNNEL_DROP_NO_CHANNEL,    /* the other peer has no open channel */
    TUNNEL_DROP_NOT_BINARY,    /* a string or empty message: not an IP packet */
    TUNNEL_DROP_OVERSIZED,     /* over TUNNEL_MAX_MESSAGE */
    TUNNEL_DROP_RELAY_REFUSED, /* relay_data refused: target queue full or ended */
    TUNNEL_DROP_REASON_COUNT,
} tunnel_drop_reason;

/* Why a join was refused (moat_tunnel_refused_total). */
typedef enum {
    TUNNEL_REFUSED_FULL = 0, /* both slots taken: 409 */
    TUNNEL_REFUSED_BAD_NAME,
    TUNNEL_REFUSED_NO_DATA_CHANNEL,
    TUNNEL_REFUSED_TOO_MANY_TUNNELS,
    TUNNEL_REFUSED_BAD_LANE,     /* a malformed <peer-key>/<lane>: 404 */
    TUNNEL_REFUSED_NO_SUCH_PEER, /* lane > 0 for a key no side holds: 404 */
    TUNNEL_REFUSED_LANE_TAKEN,   /* that lane of that peer is there: 409 */
    TUNNEL_REFUSED_LANE_CAP,     /* lane number TUNNEL_MAX_LANES or more: 409 */
    TUNNEL_REFUSED_REASON_COUNT,
} tunnel_refused_reason;

typedef struct tunnel tunnel;

typedef struct tunnel_peer {
    moat_plugin_session *handle;
    const moat_gateway_calls *gateway;
    tunnel *tunnel;
    int slot;                      /* the side, 0 or 1, fixed at attach */
    int lane;                      /* 0 to TUNNEL_MAX_LANES - 1, fixed at attach */
    atomic_int data_stream;        /* an open channel's stream id + 1 (the first), 0 none */
    moat_open_channels channels;   /* its worker only: who takes data_stream's place */
    atomic_bool partner_left;      /* a partner was here and left: end the session */
    atomic_uint_fast64_t received; /* messages it sent us */
    atomic_uint_fast64_t relayed;  /* of those, handed to the other peer */
    atomic_uint_fast64_t relayed_bytes;
    atomic_uint_fast64_t dropped[TUNNEL_DROP_REASON_COUNT];
    bool hung_up; /* own worker only */
} tunnel_peer;

/* One peer of a tunnel: its lanes (sessions). Under the registry lock. */
typedef struct {
    bool taken;
    char key[TUNNEL_KEY_SIZE]; /* "" for a peer that joined without one */
    tunnel_peer *lanes[TUNNEL_MAX_LANES];
    int n_lanes;
} tunnel_side;

struct tunnel {
    char name[TUNNEL_NAME_SIZE];
    tunnel_side sides[TUNNEL_PEERS]; /* under the registry lock */
    bool ended; /* a lane left: out of the name table, its lanes ending; registry lock */
};

/* What follows /whip/tunnel/: "<name>" or "<name>/<peer-key>/<lane>". */
typedef struct {
    char name[TUNNEL_NAME_SIZE];
    char key[TUNNEL_KEY_SIZE]; /* "" without one */
    int lane;
} tunnel_resource;

/* tunnel_registry.c */
void tunnel_registry_init(void);
void tunnel_registry_destroy(void);
/* [A-Za-z0-9_-], 1 to TUNNEL_NAME_SIZE - 1 characters. Pure. */
bool tunnel_name_valid(const char *name, size_t length);
/* Splits a resource into *out: NULL, or why it is not one (the name or
 * the key/lane part is malformed; *bad_lane tells which). Pure. */
const char *tunnel_resource_parse(const char *resource, tunnel_resource *out, bool *bad_lane);
/* Puts peer into the tunnel the resource names (created when missing or
 * ending: a lane's session is ending), as a new side (lane 0) or a lane of
 * its key's side: NULL, or the refusal
 * (plugin.h error prefixes: conflict for a third peer, a taken lane or one
 * past the cap; not_found for a lane of a key no side holds). Control
 * thread. */
const char *tunnel_join(tunnel_peer *peer, const char *resource);
/* Takes the peer (lane) out of its side (every other lane of the tunnel is
 * told to leave, and the tunnel ends: a join by its name makes a new one)
 * and folds its counters into the totals; the side goes with its last lane
 * and the tunnel with its last side. */
void tunnel_leave(tunnel_peer *peer);
/* The partner of `peer` with a referenced handle and its channel, or NULL
 * (why in *reason). Any thread. */
moat_plugin_session *tunnel_partner(tunnel_peer *peer, uint16_t *stream_id,
                                    tunnel_drop_reason *reason);
/* Counts a refusal (the attach path). */
void tunnel_note_refused(tunnel_refused_reason reason);
/* Prometheus text of the plugin's figures (g_malloc'd). Any thread. */
char *tunnel_metrics(void);
const char *tunnel_drop_reason_name(tunnel_drop_reason reason);

/* tunnel_relay.c (the peer's worker) */
/* Why a message from a peer cannot be an IP packet, or -1 when it may be
 * one. Pure. */
int tunnel_message_check(uint32_t ppid, size_t length);
void tunnel_on_data(void *state, uint16_t stream_id, uint32_t ppid, const uint8_t *data,
                    size_t length);
void tunnel_on_channel(void *state, uint16_t stream_id, const char *label, bool open);

#endif
