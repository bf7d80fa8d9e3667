/* The cascade state shared by cascade_edge.c (links this node opened as an
 * edge, the poll, metrics) and cascade_owner.c (the legs it feeds as an
 * owner, the routes). Control thread; cluster/ only. */
#ifndef MOAT_CASCADE_PRIVATE_H
#define MOAT_CASCADE_PRIVATE_H

#include "cluster/cascade.h"
#include "cluster/cascade_link.h"

#include "session/session.h"
#include "srtp/srtp_keying.h"

/* A leg without an authenticated packet for this long ends (RTCP reports
 * every second on both ends keep it). */
#define MOAT_CASCADE_CONSENT_MS 3000u
/* Legs one owner feeds at most (one per edge and room). */
#define MOAT_CASCADE_MAX_LEGS 256
/* How often the edge looks at its links' sessions. */
#define MOAT_CASCADE_POLL_MS 250u

typedef enum { LINK_CONNECTING, LINK_UP } link_state;

/* A link this node opened as an edge, one per room. */
typedef struct {
    struct moat_cascade *cascade;
    char key[320];
    char plugin[MOAT_CLUSTER_NAME_MAX];
    char room[MOAT_CLUSTER_NAME_MAX];
    char owner[MOAT_CLUSTER_NAME_MAX];
    char owner_http[256];
    link_state state;
    char leg_id[40];   /* the edge leg's session (a publisher here) */
    moat_session *leg; /* until started */
    moat_worker *leg_worker;
    uint8_t to_edge[MOAT_CASCADE_KEYING], to_owner[MOAT_CASCADE_KEYING];
    char remote_id[65];      /* the owner's leg, for the close request */
    uint32_t owner_ssrcs[2]; /* what the owner's leg sends (audio, video), 0 unknown */
    /* what it sends each simulcast layer on (cascade_link.h), n_layers */
    uint32_t layer_ssrcs[MOAT_CASCADE_LINK_LAYERS];
    size_t n_layers;
    /* RTX: the plain video's, then each layer's (all or none), n_rtx */
    uint32_t rtx_ssrcs[1 + MOAT_CASCADE_LINK_LAYERS];
    size_t n_rtx;
    GPtrArray *subscribers; /* session ids of the local subscribers it feeds */
    GList *waiting;         /* pending_offer *: waiting for the link */
} cascade_link;

struct moat_cascade {
    moat_cluster *cluster;
    GHashTable *links;      /* room key -> cascade_link (edge) */
    GHashTable *owner_legs; /* session id -> edge node id (owner) */
    guint poll_timer;
    uint64_t links_opened, links_closed, links_lost, links_failed;
    uint64_t legs_opened_owner, refused, edge_subscribers;
};

bool moat_cascade_token_valid(moat_cluster *cluster, const moat_http_request *request);
bool moat_cascade_local_address(moat_cluster *cluster, struct in6_addr *out);
/* The other node's link address, parsed into *out: false when it does not
 * parse or names one of this node's own sockets (a leg aimed there would
 * feed itself, its own RTCP keeping its consent). */
bool moat_cascade_peer_address(moat_cluster *cluster, const char *media, json_int_t port,
                               struct sockaddr_in6 *out);
/* SRTP keying of a leg: `local` protects what it sends. */
void moat_cascade_keying(moat_srtp_keying *keys, const uint8_t *local, const uint8_t *remote);
void moat_cascade_owner_register(moat_cascade *cascade);
/* Forgets ended legs; the live count. */
size_t moat_cascade_owner_prune(moat_cascade *cascade);

#endif
