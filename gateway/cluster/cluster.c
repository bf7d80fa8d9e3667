/* Owns this node's part in the cluster (cluster.h): the tick, the owned
 * rooms' leases and the cluster's life (start, drain, free); the node
 * registry is cluster_registry.c's, offers are routed by cluster_offers.c,
 * /api/cluster and /metrics by cluster_api.c. */
#include "cluster/cluster.h"
#include "cluster/cluster_private.h"
#include "cluster/cascade.h"

#include "cluster/cluster_keys.h"
#include "cluster/cluster_proxy.h"
#include "cluster/cluster_rpc.h"
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

/* Deletes the room key if this node owns it. KEYS: room; ARGV: id. */
static const char release_script[] =
    "if redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] "
    "then return redis.call('DEL', KEYS[1]) end "
    "return 0";

uint64_t moat_cluster_now_ms(void)
{
    return (uint64_t)g_get_monotonic_time() / 1000u;
}

/* ---- owned rooms ------------------------------------------------------------------- */

static void owned_room_free(gpointer data)
{
    owned_room *room = data;
    g_ptr_array_free(room->sessions, TRUE);
    g_free(room);
}

owned_room *moat_cluster_room_take(moat_cluster *cluster, const char *key, const char *plugin,
                                   const char *name, bool confirmed, uint64_t sent_ms)
{
    owned_room *room = g_hash_table_lookup(cluster->rooms, key);
    uint64_t now = moat_cluster_now_ms();
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

/* ---- rooms at their own subscriber cap -------------------------------------------- */

static void ignore_reply(void *user, const redisReply *reply, const char *error) {}

static const char *no_header(const void *context, const char *name)
{
    return NULL;
}

/* The room at its own subscriber cap, cascade legs left out, as its
 * plugin's API says here (GET <api_path>/<room>/capacity: {"full": true});
 * false for a plugin without it. */
static bool room_at_cap(moat_cluster *cluster, const owned_room *room)
{
    const moat_plugin *plugin = moat_plugin_registry_find(cluster->gateway->plugins, room->plugin);
    if (!plugin || !plugin->api_path)
        return false;
    char *path = g_strconcat(plugin->api_path, "/", room->room, "/capacity", NULL);
    moat_http_request request = {
        .method = "GET", .path = path, .body = "", .peer = "", .header = no_header};
    moat_http_response response = {0};
    bool full = false;
    if (moat_http_serve_plugin_api_local(cluster->gateway, &request, &response) &&
        response.status == 200 && response.body) {
        json_t *info = json_loadb(response.body, response.body_length, 0, NULL);
        full = json_is_true(json_object_get(info, "full"));
        json_decref(info);
    }
    moat_http_response_clear(&response);
    g_free(path);
    return full;
}

void moat_cluster_room_full_update(moat_cluster *cluster, owned_room *room)
{
    if (moat_redis_link_state(cluster->redis) != MOAT_REDIS_UP ||
        room->lease.state != MOAT_LEASE_OWNED)
        return;
    bool full = room_at_cap(cluster, room);
    uint64_t now = moat_cluster_now_ms();
    /* A full room's key is refreshed before it expires; a change at once. */
    if (full == room->full_marked && (!full || now - room->full_sent_ms < cluster->lease_ms / 2))
        return;
    char key[320], ttl[24];
    if (!moat_cluster_room_full_key(room->plugin, room->room, key, sizeof key))
        return;
    snprintf(ttl, sizeof ttl, "%" G_GUINT64_FORMAT, cluster->lease_ms);
    const char *set[] = {"SET", key, "1", "PX", ttl};
    const char *del[] = {"DEL", key};
    const char **argv = full ? set : del;
    size_t argc = full ? G_N_ELEMENTS(set) : G_N_ELEMENTS(del);
    size_t lengths[G_N_ELEMENTS(set)];
    for (size_t i = 0; i < argc; i++)
        lengths[i] = strlen(argv[i]);
    if (moat_redis_command(cluster->redis, ignore_reply, NULL, argc, argv, lengths)) {
        room->full_marked = full;
        room->full_sent_ms = now;
    }
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
    const char *argv[] = {
        "EVAL", moat_cluster_claim_script,    "1", room->key, cluster->node_id, lease,
        "1",    MOAT_CLUSTER_CLAIM_RECORD_MAX};
    size_t lengths[G_N_ELEMENTS(argv)];
    for (size_t i = 0; i < G_N_ELEMENTS(argv); i++)
        lengths[i] = strlen(argv[i]);
    renewal *sent = g_new0(renewal, 1);
    sent->cluster = cluster;
    snprintf(sent->key, sizeof sent->key, "%s", room->key);
    sent->sent_ms = moat_cluster_now_ms();
    if (moat_redis_command(cluster->redis, renewal_reply, sent, G_N_ELEMENTS(argv), argv, lengths))
        moat_lease_renew_sent(&room->lease, sent->sent_ms);
    else
        g_free(sent);
}

static void rooms_tick(moat_cluster *cluster)
{
    uint64_t now = moat_cluster_now_ms();
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
        /* A room becomes full by a subscriber's offer, which checks it
         * (cluster_offers.c); the tick refreshes or clears a full one. */
        if (action != MOAT_LEASE_RELEASE && room->full_marked)
            moat_cluster_room_full_update(cluster, room);
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
        moat_cluster_registry_write(cluster);
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
        moat_cluster_calls_link_up(cluster->calls);
    }
}

/* ---- life ------------------------------------------------------------------------ */

bool moat_cluster_set_draining(moat_cluster *cluster, bool draining)
{
    /* quit_loop: a SIGTERM drain is under way (moat_cluster_drain_and_quit). */
    if (!draining && cluster->quit_loop)
        return false;
    if (cluster->draining == draining)
        return true;
    cluster->draining = draining;
    if (cluster->gateway->calls)
        moat_call_registry_set_draining(cluster->gateway->calls, draining);
    moat_log_info("cluster", "node %s %s", cluster->node_id,
                  draining ? "draining: out of placement, its rooms go on"
                           : "serving: back in placement");
    if (moat_redis_link_state(cluster->redis) == MOAT_REDIS_UP) {
        cluster->register_in_flight = false;
        moat_cluster_registry_write(cluster);
    }
    return true;
}

static gboolean drain_check(gpointer data)
{
    moat_cluster *cluster = data;
    size_t sessions = moat_session_registry_count(cluster->gateway->sessions);
    if (sessions > 0 && moat_cluster_now_ms() < cluster->drain_deadline_ms)
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
        moat_cluster_now_ms() + (uint64_t)cluster->gateway->config.cluster_drain_timeout_s * 1000u;
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

/* [cluster] node_id, else "<host name>:<HTTP port>". */
static void node_id_of(const moat_config *config, char *out, size_t size)
{
    if (*config->cluster_node_id)
        snprintf(out, size, "%s", config->cluster_node_id);
    else
        snprintf(out, size, "%s:%d", g_get_host_name(), config->http_port);
}

int moat_cluster_check_config(const moat_config *config, char *error, size_t error_size)
{
    char id[MOAT_CLUSTER_NAME_MAX];
    char key[200];
    node_id_of(config, id, sizeof id);
    if (!moat_cluster_node_id_valid(id) || !moat_cluster_node_key(id, key, sizeof key) ||
        strlen(config->cluster_node_id) >= sizeof id) {
        char *shown = g_strescape(config->cluster_node_id[0] ? config->cluster_node_id : id, NULL);
        snprintf(error, error_size,
                 "[cluster] node_id \"%s\": 1-127 printable characters without spaces", shown);
        g_free(shown);
        return -1;
    }
    const char *advertise = config->cluster_advertise_http;
    if (*advertise && !moat_cluster_url_safe(advertise)) {
        snprintf(error, error_size, "[cluster] advertise_http \"%s\" is not a usable URL",
                 advertise);
        return -1;
    }
    return moat_redis_link_check_address(config->cluster_redis, error, error_size);
}

static int configure(moat_cluster *cluster, char *error, size_t error_size)
{
    moat_config *config = &cluster->gateway->config;
    if (moat_cluster_check_config(config, error, error_size) != 0)
        return -1;
    node_id_of(config, cluster->node_id, sizeof cluster->node_id);
    moat_cluster_node_key(cluster->node_id, cluster->node_key, sizeof cluster->node_key);
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
    moat_log_limiter_init(&cluster->record_log, 5, 60u * G_USEC_PER_SEC);
    unsigned timeout_ms = (unsigned)gateway->config.cluster_timeout_ms;
    cluster->forwarder = moat_cluster_proxy_new(MAX(timeout_ms * 5, 2000u));
    cluster->calls = moat_cluster_calls_new(cluster); /* before the link can come up */
    cluster->redis =
        moat_redis_link_new(gateway->config.cluster_redis, gateway->config.cluster_password,
                            timeout_ms, on_redis_state, cluster, error, error_size);
    if (!cluster->redis) {
        moat_cluster_free(cluster);
        return NULL;
    }
    cluster->rpc = moat_cluster_rpc_new(cluster, timeout_ms, error, error_size);
    if (!cluster->rpc) {
        moat_cluster_free(cluster);
        return NULL;
    }
    cluster->tick_timer = g_timeout_add((guint)MAX(cluster->lease_ms / 4, 100u), tick, cluster);
    moat_http_route_register(gateway, "GET", "/api/cluster", moat_cluster_serve_cluster, cluster);
    moat_http_route_register(gateway, "POST", "/api/cluster/drain", moat_cluster_serve_drain_on,
                             cluster);
    moat_http_route_register(gateway, "DELETE", "/api/cluster/drain", moat_cluster_serve_drain_off,
                             cluster);
    cluster->cascade = moat_cascade_new(cluster);
    moat_http_offer_hook_set(gateway, moat_cluster_offer_hook, cluster);
    moat_http_forward_token_set(gateway, cluster->forward_token);
    moat_http_resource_hook_set(gateway, moat_cluster_resource_hook, cluster);
    moat_http_api_hook_set(gateway, moat_cluster_api_hook, cluster);
    moat_http_metrics_hook_set(gateway, moat_cluster_metrics, cluster);
    moat_http_health_hook_set(gateway, moat_cluster_health, cluster);
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
        moat_http_forward_token_set(gateway, NULL);
        moat_http_resource_hook_set(gateway, NULL, NULL);
        moat_http_api_hook_set(gateway, NULL, NULL);
        moat_http_metrics_hook_set(gateway, NULL, NULL);
    }
    if (cluster->tick_timer)
        g_source_remove(cluster->tick_timer);
    if (cluster->drain_timer)
        g_source_remove(cluster->drain_timer);
    /* Forwards first: their answers complete pending offers. */
    moat_cluster_proxy_free(cluster->forwarder);
    cluster->forwarder = NULL;
    moat_cascade_free(cluster->cascade); /* after the forwarder answered its links */
    cluster->cascade = NULL;
    moat_redis_link_free(cluster->redis); /* answers what is unanswered */
    cluster->redis = NULL;
    moat_cluster_calls_free(cluster->calls); /* after the link: its replies reach it */
    cluster->calls = NULL;
    moat_cluster_rpc_free(cluster->rpc); /* after Redis: its PUBLISH replies look it up */
    cluster->rpc = NULL;
    while (cluster->pending) {
        pending_offer *offer = cluster->pending->data;
        moat_http_response response = {0};
        moat_http_response_error(&response, 503, "shutting_down", "the node is stopping");
        moat_cluster_pending_respond(offer, &response);
    }
    if (cluster->nodes)
        g_hash_table_destroy(cluster->nodes);
    if (cluster->rooms)
        g_hash_table_destroy(cluster->rooms);
    g_free(cluster);
}
