/* The cluster's state shared by cluster.c (registry, leases, life),
 * cluster_offers.c (the offer hook) and cluster_api.c (/api/cluster,
 * /metrics, /healthz). cluster/ only; control thread. */
#ifndef MOAT_CLUSTER_PRIVATE_H
#define MOAT_CLUSTER_PRIVATE_H

#include "cluster/cluster.h"

#include "cluster/cluster_calls.h"
#include "cluster/cluster_keys.h"
#include "cluster/cluster_proxy.h"
#include "cluster/lease.h"
#include "cluster/node_record.h"
#include "cluster/placement.h"
#include "cluster/redis_link.h"

#include "base/log.h"
#include "call/call_registry.h"
#include "http/http_router.h"
#include "http/whip_api.h"

#include <gio/gio.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Registry records read per refresh at most (the rest are ignored). */
#define MOAT_CLUSTER_MAX_NODES 256

typedef enum {
    OFFER_LOCAL,    /* served here: owner, placed here, or a forwarded offer */
    OFFER_FALLBACK, /* served here because Redis did not answer */
    OFFER_REDIRECT, /* 307 to the owner */
    OFFER_PROXY,    /* forwarded to the owner */
    OFFER_REFUSED,  /* draining with nowhere to go, owner unusable */
    OFFER_KIND_COUNT
} offer_kind;

extern const char *const moat_cluster_offer_kind_names[];

/* Why a WHEP subscriber was served here through a cascade (cluster_offers.c). */
typedef enum {
    CASCADE_ASKED,     /* ?edge=, or [cluster] cascade = always */
    CASCADE_NODE_FULL, /* the owner at its [limits] max_sessions */
    CASCADE_ROOM_FULL, /* the room at its own max_subscribers */
    CASCADE_REGION,    /* this node in another region than the owner */
    CASCADE_REASON_COUNT
} cascade_reason;

extern const char *const moat_cluster_cascade_reason_names[];

/* PATCH/DELETE on a via/ resource path (cluster_resources.c). */
typedef enum {
    RESOURCE_FORWARDED, /* sent to the owner */
    RESOURCE_REFUSED,   /* malformed, wrong method, owner gone */
    RESOURCE_OUTCOME_COUNT
} resource_outcome;

typedef struct {
    char key[320];
    char plugin[MOAT_CLUSTER_NAME_MAX];
    char room[MOAT_CLUSTER_NAME_MAX];
    moat_lease lease;
    GPtrArray *sessions;   /* resource ids of this node's sessions in it */
    bool full_marked;      /* its full key set in Redis (at its subscriber cap) */
    uint64_t full_sent_ms; /* when the key was last set or deleted */
    struct moat_cluster *cluster;
} owned_room;

struct moat_cluster {
    moat_gateway *gateway;
    moat_redis_link *redis;
    char node_id[MOAT_CLUSTER_NAME_MAX];
    char node_key[200];
    char advertise_http[256];
    char advertise_media[128];
    char forward_token[65]; /* proves a forwarded offer came from a node */
    bool proxy;
    bool draining;
    uint64_t lease_ms;
    guint tick_timer;
    bool register_in_flight;
    GHashTable *nodes; /* id -> moat_cluster_node (the last registry read) */
    uint64_t nodes_read_ms;
    GHashTable *rooms; /* key -> owned_room */
    GList *pending;    /* offers waiting for Redis or an owner */
    moat_placement_recent recent;
    moat_cluster_proxy *forwarder;
    struct moat_cluster_rpc *rpc; /* pub/sub requests and events (cluster_rpc.h) */
    GMainLoop *quit_loop;         /* SIGTERM: quit once drained */
    uint64_t drain_deadline_ms;
    guint drain_timer;
    uint64_t offers[OFFER_KIND_COUNT];
    uint64_t resource_requests[RESOURCE_OUTCOME_COUNT];
    uint64_t cascade_reasons[CASCADE_REASON_COUNT];
    uint64_t records_rejected;   /* node records refused, whatever why */
    uint64_t records_misfiled;   /* of those: naming another id than their key's */
    moat_log_limiter record_log; /* the warnings about them */
    uint64_t rooms_lost;
    struct moat_cascade *cascade; /* rooms spanning nodes (cascade.h) */
    moat_cluster_calls *calls;    /* ng calls kept over a restart (cluster_calls.h) */
};

typedef struct {
    moat_cluster *cluster;
    char *method;
    char *path;
    char *body;
    size_t body_length;
    char *peer;
    GHashTable *headers; /* lower-case name -> value */
    char endpoint[8];
    char plugin[MOAT_CLUSTER_NAME_MAX];
    char resource[256];
    char room[MOAT_CLUSTER_NAME_MAX];
    char key[320];
    char target[MOAT_CLUSTER_NAME_MAX]; /* the placement's choice; "" : none */
    char owner[MOAT_CLUSTER_NAME_MAX];  /* forwarded to (proxy) */
    bool edge; /* WHEP ?edge=: served here through a cascade link (cascade.h) */
    uint64_t sent_ms;
    moat_http_respond_fn respond;
    void *respond_data;
} pending_offer;

/* The claim script (cluster_registry.c): KEYS room key[, full key]; ARGV
 * candidate, lease ms, claim, MOAT_CLUSTER_CLAIM_RECORD_MAX. */
extern const char moat_cluster_claim_script[];
/* The claim script's last argument: the owner's record is read only up to
 * this many bytes (MOAT_CLUSTER_RECORD_MAX_BYTES as a string). */
#define MOAT_CLUSTER_CLAIM_RECORD_MAX G_STRINGIFY(MOAT_CLUSTER_RECORD_MAX_BYTES)

uint64_t moat_cluster_now_ms(void);
void moat_cluster_fill_own_record(moat_cluster *cluster, moat_cluster_node *node);
/* cluster_registry.c: writes this node's record and reads every live one
 * back (one request in flight at a time). Control thread. */
void moat_cluster_registry_write(moat_cluster *cluster);
/* Sets (PX lease) or deletes the room's full key in Redis when its being at
 * its own subscriber cap changed or the key is due for a refresh: other
 * nodes then serve its WHEP subscribers through cascades (cluster.c). */
void moat_cluster_room_full_update(moat_cluster *cluster, owned_room *room);
/* The owned room for `key`, made when `create` allows (cluster.c). */
owned_room *moat_cluster_room_take(moat_cluster *cluster, const char *key, const char *plugin,
                                   const char *name, bool confirmed, uint64_t sent_ms);
/* The offer hook (cluster_offers.c): serves, redirects or forwards (http_router.h). */
bool moat_cluster_offer_hook(void *user, const moat_http_request *request,
                             moat_http_response *response, const char *endpoint, const char *plugin,
                             const char *resource);
void moat_cluster_pending_respond(pending_offer *offer, moat_http_response *response);
/* The offer as a request again (its copies of the original's parts). */
moat_http_request moat_cluster_pending_request(const pending_offer *offer);
/* PATCH/DELETE of /whip/resource/via/... forwarded to the owner
 * (cluster_resources.c; http_router.h's resource hook). */
bool moat_cluster_resource_hook(void *user, const moat_http_request *request,
                                moat_http_response *response, const char *rest);
/* A forwarded offer's 201: its Location (the owner's) made this node's via/
 * path naming `owner`. */
void moat_cluster_resource_location(moat_http_response *response, const char *owner);
/* Routes and hooks (cluster_api.c). */
void moat_cluster_serve_cluster(void *user, const moat_http_request *request,
                                moat_http_response *response);
void moat_cluster_serve_drain_on(void *user, const moat_http_request *request,
                                 moat_http_response *response);
void moat_cluster_serve_drain_off(void *user, const moat_http_request *request,
                                  moat_http_response *response);
void moat_cluster_metrics(void *user, GString *out);
/* The room API across nodes (cluster_rooms.c; http_router.h's API hook). */
bool moat_cluster_api_hook(void *user, const moat_http_request *request,
                           moat_http_response *response);
void *moat_cluster_health(void *user);

#endif
