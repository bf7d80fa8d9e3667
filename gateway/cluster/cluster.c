/* Owns this node's part in the cluster (cluster.h): the registry tick, the
 * owned rooms' leases, placement and the offer hook (local, 307 or proxy),
 * /api/cluster and the cluster's lines on /metrics. */
#include "cluster/cluster.h"

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
#define MAX_NODES 256

/* SET this node's record, index it, read every live record back (dropping
 * ids whose record expired). KEYS: node key, index; ARGV: id, record, ms. */
static const char register_script[] =
    "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) "
    "redis.call('SADD', KEYS[2], ARGV[1]) "
    "local out = {} "
    "for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do "
    "  local record = redis.call('GET', 'moat:node:' .. id) "
    "  if record then table.insert(out, record) else redis.call('SREM', KEYS[2], id) end "
    "end "
    "return out";

/* The room's owner after the call: an owner whose node record is gone is
 * dead and replaced; with no owner, ARGV[1] takes it when ARGV[3] is "1";
 * the owner named ARGV[1] has its lease renewed. Returns {owner, record}
 * ({"", ""}: nobody). KEYS: room key; ARGV: candidate, lease ms, claim. */
static const char claim_script[] =
    "local cur = redis.call('GET', KEYS[1]) "
    "if cur and cur ~= ARGV[1] and redis.call('EXISTS', 'moat:node:' .. cur) == 0 then "
    "  cur = false end "
    "if not cur then "
    "  if ARGV[3] ~= '1' then return {'', ''} end "
    "  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) cur = ARGV[1] "
    "elseif cur == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
    "return {cur, redis.call('GET', 'moat:node:' .. cur) or ''}";

/* Deletes the room key if this node owns it. KEYS: room; ARGV: id. */
static const char release_script[] =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
    "return 0";

typedef enum {
    OFFER_LOCAL,    /* served here: owner, placed here, or a forwarded offer */
    OFFER_FALLBACK, /* served here because Redis did not answer */
    OFFER_REDIRECT, /* 307 to the owner */
    OFFER_PROXY,    /* forwarded to the owner */
    OFFER_REFUSED,  /* draining with nowhere to go, owner unusable */
    OFFER_KIND_COUNT
} offer_kind;

static const char *const offer_kind_names[] = {"local", "fallback", "redirect", "proxy", "refused"};

typedef struct {
    char key[320];
    char plugin[MOAT_CLUSTER_NAME_MAX];
    char room[MOAT_CLUSTER_NAME_MAX];
    moat_lease lease;
    GPtrArray *sessions; /* resource ids of this node's sessions in it */
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
    GMainLoop *quit_loop; /* SIGTERM: quit once drained */
    uint64_t drain_deadline_ms;
    guint drain_timer;
    uint64_t offers[OFFER_KIND_COUNT];
    uint64_t records_rejected;
    uint64_t rooms_lost;
};

static uint64_t now_ms(void)
{
    return (uint64_t)g_get_monotonic_time() / 1000u;
}

/* ---- the registry ---------------------------------------------------------------- */

static void fill_own_record(moat_cluster *cluster, moat_cluster_node *node)
{
    moat_gateway *gateway = cluster->gateway;
    memset(node, 0, sizeof *node);
    snprintf(node->id, sizeof node->id, "%s", cluster->node_id);
    snprintf(node->http, sizeof node->http, "%s", cluster->advertise_http);
    snprintf(node->media, sizeof node->media, "%s", cluster->advertise_media);
    if (gateway->config.ng_port)
        snprintf(node->ng, sizeof node->ng, "%s:%d", gateway->config.ng_bind,
                 gateway->config.ng_port);
    snprintf(node->region, sizeof node->region, "%s", gateway->config.cluster_region);
    snprintf(node->version, sizeof node->version, "%s", MOAT_VERSION);
    node->draining = cluster->draining;
    node->workers = gateway->n_workers;
    node->sessions = (uint32_t)moat_session_registry_count(gateway->sessions);
    node->max_sessions = (uint32_t)MAX(gateway->config.max_sessions, 0);
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cluster->rooms);
    while (g_hash_table_iter_next(&iter, NULL, &value))
        node->rooms += ((owned_room *)value)->lease.state == MOAT_LEASE_OWNED;
    node->calls = gateway->calls ? (uint32_t)moat_call_count(gateway->calls) : 0;
}

static void registry_read(void *user, const redisReply *reply, const char *error)
{
    moat_cluster *cluster = user;
    cluster->register_in_flight = false;
    if (!reply || reply->type != REDIS_REPLY_ARRAY) {
        if (reply && reply->type == REDIS_REPLY_ERROR)
            moat_log_warn("cluster", "registry: %s", reply->str);
        return;
    }
    g_hash_table_remove_all(cluster->nodes);
    for (size_t i = 0; i < reply->elements && i < MAX_NODES; i++) {
        const redisReply *element = reply->element[i];
        moat_cluster_node node;
        char why[96];
        if (element->type != REDIS_REPLY_STRING ||
            !moat_cluster_node_parse(element->str, element->len, &node, why, sizeof why)) {
            cluster->records_rejected++;
            continue;
        }
        g_hash_table_replace(cluster->nodes, g_strdup(node.id), g_memdup2(&node, sizeof node));
    }
    cluster->nodes_read_ms = now_ms();
}

static void registry_write(moat_cluster *cluster)
{
    if (cluster->register_in_flight)
        return;
    moat_cluster_node self;
    fill_own_record(cluster, &self);
    char *record = moat_cluster_node_to_json(&self);
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%" G_GUINT64_FORMAT, cluster->lease_ms);
    const char *argv[] = {
        "EVAL",           register_script, "2", cluster->node_key, MOAT_CLUSTER_NODES_KEY,
        cluster->node_id, record,          ttl};
    size_t lengths[8];
    for (size_t i = 0; i < 8; i++)
        lengths[i] = strlen(argv[i]);
    if (moat_redis_command(cluster->redis, registry_read, cluster, 8, argv, lengths))
        cluster->register_in_flight = true;
    g_free(record);
}

/* ---- owned rooms ------------------------------------------------------------------- */

static void owned_room_free(gpointer data)
{
    owned_room *room = data;
    g_ptr_array_free(room->sessions, TRUE);
    g_free(room);
}

static owned_room *room_take(moat_cluster *cluster, const char *key, const char *plugin,
                             const char *name, bool confirmed, uint64_t sent_ms)
{
    owned_room *room = g_hash_table_lookup(cluster->rooms, key);
    uint64_t now = now_ms();
    if (room && room->lease.state == MOAT_LEASE_OWNED) {
        if (confirmed)
            moat_lease_renew_reply(&room->lease, sent_ms, false, true);
        return room;
    }
    if (!room) {
        room = g_new0(owned_room, 1);
        snprintf(room->key, sizeof room->key, "%s", key);
        snprintf(room->plugin, sizeof room->plugin, "%s", plugin);
        snprintf(room->room, sizeof room->room, "%s", name);
        room->sessions = g_ptr_array_new_with_free_func(g_free);
        room->cluster = cluster;
        g_hash_table_replace(cluster->rooms, room->key, room);
    }
    moat_lease_init(&room->lease, cluster->lease_ms, now, confirmed, sent_ms);
    return room;
}

/* A local session of the room is still in the registry (pruning the rest). */
static bool room_used(moat_cluster *cluster, owned_room *room)
{
    for (guint i = room->sessions->len; i-- > 0;) {
        if (!moat_session_registry_find(cluster->gateway->sessions,
                                        g_ptr_array_index(room->sessions, i)))
            g_ptr_array_remove_index_fast(room->sessions, i);
    }
    return room->sessions->len > 0;
}

typedef struct {
    moat_cluster *cluster;
    char key[320];
    uint64_t sent_ms;
} renewal;

static void renewal_reply(void *user, const redisReply *reply, const char *error)
{
    renewal *sent = user;
    moat_cluster *cluster = sent->cluster;
    owned_room *room = g_hash_table_lookup(cluster->rooms, sent->key);
    if (room) {
        bool failed = !reply || reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 ||
                      reply->element[0]->type != REDIS_REPLY_STRING;
        bool ours = !failed && strcmp(reply->element[0]->str, cluster->node_id) == 0;
        moat_lease_renew_reply(&room->lease, sent->sent_ms, failed, ours);
        if (room->lease.state == MOAT_LEASE_LOST) {
            cluster->rooms_lost++;
            moat_log_warn("cluster",
                          "room %s/%s: node %s owns it now; this node's sessions in it go on "
                          "until they end",
                          room->plugin, room->room, reply->element[0]->str);
            g_hash_table_remove(cluster->rooms, sent->key);
        }
    }
    g_free(sent);
}

static void ignore_reply(void *user, const redisReply *reply, const char *error) {}

static void room_send(moat_cluster *cluster, owned_room *room, bool renew)
{
    char lease[24];
    snprintf(lease, sizeof lease, "%" G_GUINT64_FORMAT, cluster->lease_ms);
    if (!renew) {
        const char *argv[] = {"EVAL", release_script, "1", room->key, cluster->node_id};
        size_t lengths[5];
        for (size_t i = 0; i < 5; i++)
            lengths[i] = strlen(argv[i]);
        moat_redis_command(cluster->redis, ignore_reply, NULL, 5, argv, lengths);
        return;
    }
    const char *argv[] = {"EVAL", claim_script, "1", room->key, cluster->node_id, lease, "1"};
    size_t lengths[7];
    for (size_t i = 0; i < 7; i++)
        lengths[i] = strlen(argv[i]);
    renewal *sent = g_new0(renewal, 1);
    sent->cluster = cluster;
    snprintf(sent->key, sizeof sent->key, "%s", room->key);
    sent->sent_ms = now_ms();
    if (moat_redis_command(cluster->redis, renewal_reply, sent, 7, argv, lengths))
        moat_lease_renew_sent(&room->lease, sent->sent_ms);
    else
        g_free(sent);
}

static void rooms_tick(moat_cluster *cluster)
{
    uint64_t now = now_ms();
    bool up = moat_redis_link_state(cluster->redis) == MOAT_REDIS_UP;
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cluster->rooms);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        owned_room *room = value;
        bool used = room_used(cluster, room);
        /* Without Redis nothing is renewed or released: the lease stays
         * owned (and lapses there) until the link is back. */
        if (!up) {
            if (used)
                room->lease.last_used_ms = now;
            continue;
        }
        moat_lease_action action = moat_lease_tick(&room->lease, now, used);
        if (action == MOAT_LEASE_RENEW) {
            room_send(cluster, room, true);
        } else if (action == MOAT_LEASE_RELEASE) {
            room_send(cluster, room, false);
            g_hash_table_iter_remove(&iter);
        }
    }
}

static gboolean tick(gpointer data)
{
    moat_cluster *cluster = data;
    if (moat_redis_link_state(cluster->redis) == MOAT_REDIS_UP)
        registry_write(cluster);
    rooms_tick(cluster);
    return G_SOURCE_CONTINUE;
}

static void on_redis_state(void *user, bool up)
{
    moat_cluster *cluster = user;
    if (up) {
        /* Re-register and re-claim at once, not at the next tick. */
        cluster->register_in_flight = false;
        tick(cluster);
    }
}

/* ---- offers ------------------------------------------------------------------------ */

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
    uint64_t sent_ms;
    moat_http_respond_fn respond;
    void *respond_data;
} pending_offer;

static const char *copied_header(const void *context, const char *name)
{
    char *lower = g_ascii_strdown(name, -1);
    const char *value = g_hash_table_lookup((GHashTable *)context, lower);
    g_free(lower);
    return value;
}

/* The request headers an offer needs again later (served here or
 * forwarded). */
static const char *const kept_headers[] = {"Content-Type", "Authorization", "Host",
                                           "Origin",       "User-Agent",    "If-Match"};

static pending_offer *pending_new(moat_cluster *cluster, const moat_http_request *request,
                                  const char *endpoint, const char *plugin, const char *resource,
                                  const char *room, const char *key)
{
    pending_offer *offer = g_new0(pending_offer, 1);
    offer->cluster = cluster;
    offer->method = g_strdup(request->method);
    offer->path = g_strdup(request->path);
    offer->body = g_memdup2(request->body ? request->body : "", request->body_length + 1);
    offer->body[request->body_length] = '\0';
    offer->body_length = request->body_length;
    offer->peer = g_strdup(request->peer ? request->peer : "");
    offer->headers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    for (size_t i = 0; i < G_N_ELEMENTS(kept_headers); i++) {
        const char *value = moat_http_request_header(request, kept_headers[i]);
        if (value)
            g_hash_table_replace(offer->headers, g_ascii_strdown(kept_headers[i], -1),
                                 g_strdup(value));
    }
    snprintf(offer->endpoint, sizeof offer->endpoint, "%s", endpoint);
    snprintf(offer->plugin, sizeof offer->plugin, "%s", plugin);
    snprintf(offer->resource, sizeof offer->resource, "%s", resource);
    snprintf(offer->room, sizeof offer->room, "%s", room);
    snprintf(offer->key, sizeof offer->key, "%s", key);
    return offer;
}

static void pending_free(pending_offer *offer)
{
    g_free(offer->method);
    g_free(offer->path);
    g_free(offer->body);
    g_free(offer->peer);
    g_hash_table_destroy(offer->headers);
    g_free(offer);
}

static moat_http_request pending_request(const pending_offer *offer)
{
    return (moat_http_request){
        .method = offer->method,
        .path = offer->path,
        .body = offer->body,
        .body_length = offer->body_length,
        .peer = offer->peer,
        .header = copied_header,
        .header_context = offer->headers,
    };
}

/* The offer served on this node; a created session joins the room's lease. */
static void serve_here(moat_cluster *cluster, const moat_http_request *request,
                       moat_http_response *response, const char *endpoint, const char *plugin,
                       const char *resource, const char *room_name, const char *key, bool confirmed,
                       uint64_t sent_ms)
{
    moat_whip_handle_offer(cluster->gateway, request, response, endpoint, plugin, resource);
    if (response->status != 201)
        return;
    const char *location = moat_http_response_get_header(response, "Location");
    const char *id = location ? strstr(location, "/whip/resource/") : NULL;
    if (!id)
        return;
    owned_room *room = room_take(cluster, key, plugin, room_name, confirmed, sent_ms);
    g_ptr_array_add(room->sessions, g_strdup(id + strlen("/whip/resource/")));
}

static void refuse_draining(moat_http_response *response)
{
    moat_http_response_header(response, "Retry-After", "5");
    moat_http_response_error(response, 503, "draining",
                             "this node is draining and no other node takes new rooms");
}

/* Answers and forgets a pending offer. */
static void pending_respond(pending_offer *offer, moat_http_response *response)
{
    moat_cluster *cluster = offer->cluster;
    cluster->pending = g_list_remove(cluster->pending, offer);
    offer->respond(offer->respond_data, response);
    pending_free(offer);
}

static void pending_serve_here(pending_offer *offer, bool confirmed, offer_kind kind)
{
    moat_cluster *cluster = offer->cluster;
    moat_http_request request = pending_request(offer);
    moat_http_response response = {0};
    cluster->offers[kind]++;
    if (kind == OFFER_FALLBACK && cluster->draining)
        refuse_draining(&response);
    else
        serve_here(cluster, &request, &response, offer->endpoint, offer->plugin, offer->resource,
                   offer->room, offer->key, confirmed, offer->sent_ms);
    pending_respond(offer, &response);
}

/* The owner's URL for the offer's path: its advertised base and the path,
 * percent-encoded where it is not a plain path character. */
static char *owner_url(const moat_cluster_node *owner, const char *path)
{
    char *escaped = g_uri_escape_string(path, "/", FALSE);
    char *url = g_strconcat(owner->http, escaped, NULL);
    g_free(escaped);
    return url;
}

static void forwarded(void *user, moat_http_response *response)
{
    pending_offer *offer = user;
    pending_respond(offer, response);
}

static void route_to_owner(pending_offer *offer, const moat_cluster_node *owner)
{
    moat_cluster *cluster = offer->cluster;
    char *url = owner_url(owner, offer->path);
    if (cluster->proxy) {
        cluster->offers[OFFER_PROXY]++;
        moat_http_request request = pending_request(offer);
        moat_cluster_proxy_forward(cluster->forwarder, url, &request, cluster->forward_token,
                                   forwarded, offer);
        g_free(url);
        return;
    }
    cluster->offers[OFFER_REDIRECT]++;
    moat_http_response response = {0};
    moat_http_response_header(&response, "Location", url);
    json_t *object = json_pack("{s:s, s:s}", "redirect", url, "owner", owner->id);
    char *text = object ? json_dumps(object, JSON_COMPACT) : NULL;
    json_decref(object);
    char *body = g_strdup(text ? text : "{}");
    free(text);
    moat_http_response_set(&response, 307, "application/json", body, strlen(body));
    g_free(url);
    pending_respond(offer, &response);
}

static void claim_reply(void *user, const redisReply *reply, const char *error)
{
    pending_offer *offer = user;
    moat_cluster *cluster = offer->cluster;
    if (!reply && error && strcmp(error, "closing") == 0) {
        moat_http_response response = {0};
        moat_http_response_error(&response, 503, "shutting_down", "the node is stopping");
        pending_respond(offer, &response);
        return;
    }
    if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
        reply->element[0]->type != REDIS_REPLY_STRING ||
        reply->element[1]->type != REDIS_REPLY_STRING) {
        moat_log_warn("cluster", "room %s/%s: no owner from Redis (%s): served here", offer->plugin,
                      offer->room,
                      reply && reply->type == REDIS_REPLY_ERROR ? reply->str
                                                                : (error ? error : "bad reply"));
        pending_serve_here(offer, false, OFFER_FALLBACK);
        return;
    }
    const char *owner_id = reply->element[0]->str;
    if (!*owner_id) {
        moat_http_response response = {0};
        cluster->offers[OFFER_REFUSED]++;
        refuse_draining(&response);
        pending_respond(offer, &response);
        return;
    }
    if (strcmp(owner_id, cluster->node_id) == 0) {
        pending_serve_here(offer, true, OFFER_LOCAL);
        return;
    }
    moat_cluster_node owner;
    char why[96];
    if (!moat_cluster_node_parse(reply->element[1]->str, reply->element[1]->len, &owner, why,
                                 sizeof why) ||
        strcmp(owner.id, owner_id) != 0) {
        cluster->records_rejected++;
        cluster->offers[OFFER_REFUSED]++;
        moat_http_response response = {0};
        moat_http_response_header(&response, "Retry-After", "2");
        moat_http_response_error(&response, 502, "owner_unusable",
                                 "the room's owner has no usable node record");
        pending_respond(offer, &response);
        return;
    }
    if (strcmp(owner_id, offer->target) == 0)
        moat_placement_recent_add(&cluster->recent, owner_id, now_ms());
    route_to_owner(offer, &owner);
}

/* The placement's choice among the live serving nodes (this one included
 * unless draining); "" when none. */
static void place(moat_cluster *cluster, char *out, size_t size)
{
    moat_placement_candidate candidates[MAX_NODES + 1];
    moat_cluster_node self;
    fill_own_record(cluster, &self);
    size_t n = 0;
    uint64_t now = now_ms();
    bool fresh = now - cluster->nodes_read_ms < cluster->lease_ms;
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cluster->nodes);
    while (fresh && n < MAX_NODES && g_hash_table_iter_next(&iter, NULL, &value)) {
        const moat_cluster_node *node = value;
        if (strcmp(node->id, cluster->node_id) == 0)
            continue;
        candidates[n++] = (moat_placement_candidate){
            node->id,           node->region,
            !node->draining,    node->sessions,
            node->max_sessions, moat_placement_recent_count(&cluster->recent, node->id, now)};
    }
    candidates[n++] = (moat_placement_candidate){
        cluster->node_id,   self.region,
        !cluster->draining, self.sessions,
        self.max_sessions,  moat_placement_recent_count(&cluster->recent, cluster->node_id, now)};
    int chosen = moat_placement_choose(candidates, n, self.region, g_random_int(), g_random_int());
    snprintf(out, size, "%s", chosen >= 0 ? candidates[chosen].id : "");
}

static void pending_start(void *data, moat_http_respond_fn respond, void *respond_data)
{
    pending_offer *offer = data;
    moat_cluster *cluster = offer->cluster;
    offer->respond = respond;
    offer->respond_data = respond_data;
    cluster->pending = g_list_prepend(cluster->pending, offer);
    place(cluster, offer->target, sizeof offer->target);
    char lease[24];
    snprintf(lease, sizeof lease, "%" G_GUINT64_FORMAT, cluster->lease_ms);
    const char *argv[] = {"EVAL",
                          claim_script,
                          "1",
                          offer->key,
                          *offer->target ? offer->target : cluster->node_id,
                          lease,
                          *offer->target ? "1" : "0"};
    size_t lengths[7];
    for (size_t i = 0; i < 7; i++)
        lengths[i] = strlen(argv[i]);
    offer->sent_ms = now_ms();
    if (!moat_redis_command(cluster->redis, claim_reply, offer, 7, argv, lengths))
        pending_serve_here(offer, false, OFFER_FALLBACK);
}

static void pending_release(void *data)
{
    pending_free(data);
}

/* A valid X-Moat-Forwarded: the offer comes from a node that knows the
 * cluster's password, and was placed here; serve it without asking. */
static bool forwarded_by_node(moat_cluster *cluster, const moat_http_request *request)
{
    const char *token = moat_http_request_header(request, "X-Moat-Forwarded");
    if (!token || strlen(token) != strlen(cluster->forward_token))
        return false;
    unsigned char difference = 0;
    for (size_t i = 0; token[i]; i++)
        difference |= (unsigned char)(token[i] ^ cluster->forward_token[i]);
    return difference == 0;
}

static bool offer_hook(void *user, const moat_http_request *request, moat_http_response *response,
                       const char *endpoint, const char *plugin, const char *resource)
{
    moat_cluster *cluster = user;
    char room_name[MOAT_CLUSTER_NAME_MAX];
    char key[320];
    if (!moat_cluster_room_of_resource(resource, room_name, sizeof room_name) ||
        !moat_cluster_room_key(plugin, room_name, key, sizeof key))
        return false; /* the plugin refuses it as usual */
    owned_room *room = g_hash_table_lookup(cluster->rooms, key);
    bool ours = room && moat_lease_valid(&room->lease, now_ms());
    if (forwarded_by_node(cluster, request)) {
        /* The client's address, not the forwarding node's, for the
         * per-source pending cap and the log. */
        moat_http_request client = *request;
        const char *from = moat_http_request_header(request, "X-Forwarded-For");
        GInetAddress *address = from ? g_inet_address_new_from_string(from) : NULL;
        if (address)
            client.peer = from;
        cluster->offers[OFFER_LOCAL]++;
        serve_here(cluster, &client, response, endpoint, plugin, resource, room_name, key, false,
                   0);
        g_clear_object(&address);
        return true;
    }
    if (ours) {
        cluster->offers[OFFER_LOCAL]++;
        serve_here(cluster, request, response, endpoint, plugin, resource, room_name, key, false,
                   0);
        return true;
    }
    if (moat_redis_link_state(cluster->redis) != MOAT_REDIS_UP) {
        cluster->offers[OFFER_FALLBACK]++;
        if (cluster->draining)
            refuse_draining(response);
        else
            serve_here(cluster, request, response, endpoint, plugin, resource, room_name, key,
                       false, 0);
        return true;
    }
    pending_offer *offer =
        pending_new(cluster, request, endpoint, plugin, resource, room_name, key);
    response->deferred_reply = (moat_http_deferred_reply){pending_start, pending_release, offer};
    return true;
}

/* ---- /api/cluster and /metrics ------------------------------------------------------ */

static json_t *node_json(const moat_cluster_node *node, bool self)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:b}", "id",
                     node->id, "http", node->http, "media", node->media, "ng", node->ng, "region",
                     node->region, "version", node->version, "state",
                     node->draining ? "draining" : "serving", "workers", (json_int_t)node->workers,
                     "sessions", (json_int_t)node->sessions, "max_sessions",
                     (json_int_t)node->max_sessions, "rooms", (json_int_t)node->rooms, "calls",
                     (json_int_t)node->calls, "self", self);
}

static void serve_cluster(void *user, const moat_http_request *request,
                          moat_http_response *response)
{
    moat_cluster *cluster = user;
    const moat_redis_counters *counters = moat_redis_link_counters(cluster->redis);
    moat_redis_state state = moat_redis_link_state(cluster->redis);
    json_t *nodes = json_array();
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, cluster->nodes);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        const moat_cluster_node *node = value;
        json_array_append_new(nodes, node_json(node, strcmp(node->id, cluster->node_id) == 0));
    }
    json_t *rooms = json_array();
    g_hash_table_iter_init(&iter, cluster->rooms);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        const owned_room *room = value;
        json_array_append_new(
            rooms, json_pack("{s:s, s:s, s:s, s:b, s:I}", "plugin", room->plugin, "room",
                             room->room, "lease", moat_lease_state_name(room->lease.state),
                             "confirmed", moat_lease_valid(&room->lease, now_ms()), "sessions",
                             (json_int_t)room->sessions->len));
    }
    uint64_t age = cluster->nodes_read_ms ? now_ms() - cluster->nodes_read_ms : 0;
    json_t *body = json_pack(
        "{s:s, s:s, s:s, s:b, s:{s:s, s:b, s:s, s:I, s:I, s:I, s:I}, s:o, s:I, s:o}", "node",
        cluster->node_id, "advertise_http", cluster->advertise_http, "signalling",
        cluster->proxy ? "proxy" : "redirect", "draining", cluster->draining, "redis", "state",
        moat_redis_state_name(state), "up", state == MOAT_REDIS_UP, "error",
        moat_redis_link_error(cluster->redis), "reconnects", (json_int_t)counters->reconnects,
        "command_timeouts", (json_int_t)counters->command_timeouts, "command_errors",
        (json_int_t)counters->command_errors, "auth_failures", (json_int_t)counters->auth_failures,
        "nodes", nodes, "nodes_age_ms", (json_int_t)age, "rooms", rooms);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    char *copy = g_strdup(text ? text : "{}");
    free(text);
    moat_http_response_set(response, 200, "application/json", copy, strlen(copy));
}

static void serve_drain(moat_cluster *cluster, moat_http_response *response, bool draining)
{
    moat_cluster_set_draining(cluster, draining);
    char *body = g_strdup_printf("{\"node\":\"%s\",\"draining\":%s}", cluster->node_id,
                                 draining ? "true" : "false");
    moat_http_response_set(response, 200, "application/json", body, strlen(body));
}

static void serve_drain_on(void *user, const moat_http_request *request,
                           moat_http_response *response)
{
    serve_drain(user, response, true);
}

static void serve_drain_off(void *user, const moat_http_request *request,
                            moat_http_response *response)
{
    serve_drain(user, response, false);
}

static void metrics(void *user, GString *out)
{
    moat_cluster *cluster = user;
    const moat_redis_counters *counters = moat_redis_link_counters(cluster->redis);
    g_string_append_printf(
        out,
        "# HELP moat_cluster_redis_up 1 while the link to the cluster's Redis is up and "
        "authenticated\n# TYPE moat_cluster_redis_up gauge\nmoat_cluster_redis_up %d\n"
        "# HELP moat_cluster_redis_reconnects_total Redis connections re-established\n"
        "# TYPE moat_cluster_redis_reconnects_total counter\n"
        "moat_cluster_redis_reconnects_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_redis_command_timeouts_total Redis commands not answered in "
        "[cluster] timeout_ms\n# TYPE moat_cluster_redis_command_timeouts_total counter\n"
        "moat_cluster_redis_command_timeouts_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_redis_command_errors_total Redis error replies and commands lost "
        "with the link\n# TYPE moat_cluster_redis_command_errors_total counter\n"
        "moat_cluster_redis_command_errors_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_redis_auth_failures_total Redis refusals of the password\n"
        "# TYPE moat_cluster_redis_auth_failures_total counter\n"
        "moat_cluster_redis_auth_failures_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_nodes Live nodes in the last registry read\n"
        "# TYPE moat_cluster_nodes gauge\nmoat_cluster_nodes %u\n"
        "# HELP moat_cluster_rooms_owned Rooms this node holds a lease on\n"
        "# TYPE moat_cluster_rooms_owned gauge\nmoat_cluster_rooms_owned %u\n"
        "# HELP moat_cluster_draining 1 while this node is out of placement\n"
        "# TYPE moat_cluster_draining gauge\nmoat_cluster_draining %d\n"
        "# HELP moat_cluster_records_rejected_total Node records from Redis refused as "
        "malformed\n# TYPE moat_cluster_records_rejected_total counter\n"
        "moat_cluster_records_rejected_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_rooms_lost_total Rooms another node took over from this one\n"
        "# TYPE moat_cluster_rooms_lost_total counter\n"
        "moat_cluster_rooms_lost_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_proxy_failures_total Forwarded offers the owner did not answer\n"
        "# TYPE moat_cluster_proxy_failures_total counter\n"
        "moat_cluster_proxy_failures_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_offers_total WHIP/WHEP room offers by how they were routed\n"
        "# TYPE moat_cluster_offers_total counter\n",
        moat_redis_link_state(cluster->redis) == MOAT_REDIS_UP, counters->reconnects,
        counters->command_timeouts, counters->command_errors, counters->auth_failures,
        g_hash_table_size(cluster->nodes), g_hash_table_size(cluster->rooms), cluster->draining,
        cluster->records_rejected, cluster->rooms_lost,
        moat_cluster_proxy_failures(cluster->forwarder));
    for (int kind = 0; kind < OFFER_KIND_COUNT; kind++)
        g_string_append_printf(out,
                               "moat_cluster_offers_total{route=\"%s\"} %" G_GUINT64_FORMAT "\n",
                               offer_kind_names[kind], cluster->offers[kind]);
}

/* ---- life ------------------------------------------------------------------------ */

void moat_cluster_set_draining(moat_cluster *cluster, bool draining)
{
    if (cluster->draining == draining)
        return;
    cluster->draining = draining;
    if (cluster->gateway->calls)
        moat_call_registry_set_draining(cluster->gateway->calls, draining);
    moat_log_info("cluster", "node %s %s", cluster->node_id,
                  draining ? "draining: out of placement, its rooms go on"
                           : "serving: back in placement");
    if (moat_redis_link_state(cluster->redis) == MOAT_REDIS_UP) {
        cluster->register_in_flight = false;
        registry_write(cluster);
    }
}

static gboolean drain_check(gpointer data)
{
    moat_cluster *cluster = data;
    size_t sessions = moat_session_registry_count(cluster->gateway->sessions);
    if (sessions > 0 && now_ms() < cluster->drain_deadline_ms)
        return G_SOURCE_CONTINUE;
    moat_log_info("cluster", "drained (%zu sessions left): stopping", sessions);
    cluster->drain_timer = 0;
    g_main_loop_quit(cluster->quit_loop);
    return G_SOURCE_REMOVE;
}

void moat_cluster_drain_and_quit(moat_cluster *cluster, GMainLoop *loop)
{
    if (cluster->quit_loop) {
        g_main_loop_quit(loop);
        return;
    }
    cluster->quit_loop = loop;
    cluster->drain_deadline_ms =
        now_ms() + (uint64_t)cluster->gateway->config.cluster_drain_timeout_s * 1000u;
    moat_cluster_set_draining(cluster, true);
    if (drain_check(cluster))
        cluster->drain_timer = g_timeout_add(200, drain_check, cluster);
}

static void default_advertise(moat_cluster *cluster)
{
    moat_config *config = &cluster->gateway->config;
    const char *host = config->http_bind;
    if (!*host || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
        host = cluster->gateway->n_candidate_addresses ? cluster->gateway->candidate_addresses[0]
                                                       : "127.0.0.1";
    bool v6 = strchr(host, ':') != NULL;
    snprintf(cluster->advertise_http, sizeof cluster->advertise_http, "http://%s%s%s:%d",
             v6 ? "[" : "", host, v6 ? "]" : "", config->http_port);
}

static int configure(moat_cluster *cluster, char *error, size_t error_size)
{
    moat_config *config = &cluster->gateway->config;
    if (*config->cluster_node_id)
        snprintf(cluster->node_id, sizeof cluster->node_id, "%s", config->cluster_node_id);
    else
        snprintf(cluster->node_id, sizeof cluster->node_id, "%s:%d", g_get_host_name(),
                 config->http_port);
    if (!moat_cluster_node_id_valid(cluster->node_id) ||
        !moat_cluster_node_key(cluster->node_id, cluster->node_key, sizeof cluster->node_key)) {
        snprintf(error, error_size,
                 "[cluster] node_id \"%s\": 1-127 printable characters without spaces",
                 cluster->node_id);
        return -1;
    }
    if (*config->cluster_advertise_http)
        snprintf(cluster->advertise_http, sizeof cluster->advertise_http, "%s",
                 config->cluster_advertise_http);
    else
        default_advertise(cluster);
    size_t length = strlen(cluster->advertise_http);
    while (length > 0 && cluster->advertise_http[length - 1] == '/')
        cluster->advertise_http[--length] = '\0';
    if (!moat_cluster_url_safe(cluster->advertise_http)) {
        snprintf(error, error_size, "[cluster] advertise_http \"%s\" is not a usable URL",
                 cluster->advertise_http);
        return -1;
    }
    /* whip_api.c makes Locations absolute with it. */
    g_free(config->cluster_advertise_http);
    config->cluster_advertise_http = g_strdup(cluster->advertise_http);
    snprintf(cluster->advertise_media, sizeof cluster->advertise_media, "%s",
             *config->cluster_advertise_media          ? config->cluster_advertise_media
             : cluster->gateway->n_candidate_addresses ? cluster->gateway->candidate_addresses[0]
                                                       : "");
    char *salted = g_strconcat("moat-cluster-forward:", config->cluster_password, NULL);
    char *digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, salted, -1);
    snprintf(cluster->forward_token, sizeof cluster->forward_token, "%s", digest);
    memset(salted, 0, strlen(salted));
    g_free(salted);
    g_free(digest);
    cluster->proxy = strcmp(config->cluster_signalling, "proxy") == 0;
    cluster->lease_ms = (uint64_t)config->cluster_lease_ms;
    return 0;
}

/* /healthz's "cluster" object: the link, not judged (health.h). */
static void *health(void *user)
{
    moat_cluster *cluster = user;
    return json_pack("{s:b, s:s, s:s, s:b}", "configured", 1, "node_id", cluster->node_id, "redis",
                     moat_redis_state_name(moat_redis_link_state(cluster->redis)), "draining",
                     cluster->draining);
}

moat_cluster *moat_cluster_start(moat_gateway *gateway, char *error, size_t error_size)
{
    moat_cluster *cluster = g_new0(moat_cluster, 1);
    cluster->gateway = gateway;
    if (configure(cluster, error, error_size) != 0) {
        g_free(cluster);
        return NULL;
    }
    cluster->nodes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    cluster->rooms = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, owned_room_free);
    moat_placement_recent_init(&cluster->recent, cluster->lease_ms);
    unsigned timeout_ms = (unsigned)gateway->config.cluster_timeout_ms;
    cluster->forwarder = moat_cluster_proxy_new(MAX(timeout_ms * 5, 2000u));
    cluster->redis =
        moat_redis_link_new(gateway->config.cluster_redis, gateway->config.cluster_password,
                            timeout_ms, on_redis_state, cluster, error, error_size);
    if (!cluster->redis) {
        moat_cluster_free(cluster);
        return NULL;
    }
    cluster->tick_timer = g_timeout_add((guint)MAX(cluster->lease_ms / 4, 100u), tick, cluster);
    moat_http_route_register(gateway, "GET", "/api/cluster", serve_cluster, cluster);
    moat_http_route_register(gateway, "POST", "/api/cluster/drain", serve_drain_on, cluster);
    moat_http_route_register(gateway, "DELETE", "/api/cluster/drain", serve_drain_off, cluster);
    moat_http_offer_hook_set(gateway, offer_hook, cluster);
    moat_http_metrics_hook_set(gateway, metrics, cluster);
    moat_http_health_hook_set(gateway, health, cluster);
    moat_log_info("cluster", "node %s (%s, signalling %s) joining the cluster at %s",
                  cluster->node_id, cluster->advertise_http, cluster->proxy ? "proxy" : "redirect",
                  gateway->config.cluster_redis);
    return cluster;
}

void moat_cluster_free(moat_cluster *cluster)
{
    if (!cluster)
        return;
    moat_gateway *gateway = cluster->gateway;
    if (gateway->http_offer_hook_user == cluster) {
        moat_http_offer_hook_set(gateway, NULL, NULL);
        moat_http_metrics_hook_set(gateway, NULL, NULL);
    }
    if (cluster->tick_timer)
        g_source_remove(cluster->tick_timer);
    if (cluster->drain_timer)
        g_source_remove(cluster->drain_timer);
    /* Forwards first: their answers complete pending offers. */
    moat_cluster_proxy_free(cluster->forwarder);
    cluster->forwarder = NULL;
    moat_redis_link_free(cluster->redis); /* answers what is unanswered */
    cluster->redis = NULL;
    while (cluster->pending) {
        pending_offer *offer = cluster->pending->data;
        moat_http_response response = {0};
        moat_http_response_error(&response, 503, "shutting_down", "the node is stopping");
        pending_respond(offer, &response);
    }
    if (cluster->nodes)
        g_hash_table_destroy(cluster->nodes);
    if (cluster->rooms)
        g_hash_table_destroy(cluster->rooms);
    g_free(cluster);
}
