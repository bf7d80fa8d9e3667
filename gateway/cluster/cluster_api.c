/* Owns the cluster's HTTP faces: GET /api/cluster, POST and DELETE
 * /api/cluster/drain, its lines on /metrics and its object on /healthz.
 * Control thread. */
#include "cluster/cluster_private.h"
#include "cluster/cluster_rpc.h"

#include "cluster/cascade.h"

const char *const moat_cluster_offer_kind_names[] = {"local", "fallback", "redirect", "proxy",
                                                     "refused"};
const char *const moat_cluster_cascade_reason_names[] = {"asked", "node_full", "room_full",
                                                         "region"};

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

void moat_cluster_serve_cluster(void *user, const moat_http_request *request,
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
                             "confirmed", moat_lease_valid(&room->lease, moat_cluster_now_ms()),
                             "sessions", (json_int_t)room->sessions->len));
    }
    uint64_t age = cluster->nodes_read_ms ? moat_cluster_now_ms() - cluster->nodes_read_ms : 0;
    json_t *body = json_pack(
        "{s:s, s:s, s:s, s:b, s:{s:s, s:b, s:s, s:I, s:I, s:I, s:I}, s:o, s:I, s:o}", "node",
        cluster->node_id, "advertise_http", cluster->advertise_http, "signalling",
        cluster->proxy ? "proxy" : "redirect", "draining", cluster->draining, "redis", "state",
        moat_redis_state_name(state), "up", state == MOAT_REDIS_UP, "error",
        moat_redis_link_error(cluster->redis), "reconnects", (json_int_t)counters->reconnects,
        "command_timeouts", (json_int_t)counters->command_timeouts, "command_errors",
        (json_int_t)counters->command_errors, "auth_failures", (json_int_t)counters->auth_failures,
        "nodes", nodes, "nodes_age_ms", (json_int_t)age, "rooms", rooms);
    if (body)
        json_object_set_new(
            body, "calls",
            json_pack("{s:b, s:b, s:I}", "kept", cluster->calls != NULL, "loaded",
                      moat_cluster_calls_loaded(cluster->calls), "writes_failed",
                      (json_int_t)moat_cluster_calls_writes_failed(cluster->calls)));
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    char *copy = g_strdup(text ? text : "{}");
    free(text);
    moat_http_response_set(response, 200, "application/json", copy, strlen(copy));
}

/* DELETE during a SIGTERM drain is refused: the node quits at its drain
 * deadline whatever placement says, so it must not take new rooms. */
static void serve_drain(moat_cluster *cluster, moat_http_response *response, bool draining)
{
    if (!moat_cluster_set_draining(cluster, draining)) {
        moat_http_response_error(response, 409, "stopping",
                                 "node %s is stopping after SIGTERM: it stays draining until it "
                                 "exits",
                                 cluster->node_id);
        return;
    }
    char *body = g_strdup_printf("{\"node\":\"%s\",\"draining\":%s}", cluster->node_id,
                                 draining ? "true" : "false");
    moat_http_response_set(response, 200, "application/json", body, strlen(body));
}

void moat_cluster_serve_drain_on(void *user, const moat_http_request *request,
                                 moat_http_response *response)
{
    serve_drain(user, response, true);
}

void moat_cluster_serve_drain_off(void *user, const moat_http_request *request,
                                  moat_http_response *response)
{
    serve_drain(user, response, false);
}

void moat_cluster_metrics(void *user, GString *out)
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
        "malformed or unusable (not a string; dropped from the index; naming another id than "
        "their key's)\n"
        "# TYPE moat_cluster_records_rejected_total counter\n"
        "moat_cluster_records_rejected_total %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_records_misfiled_total Of the records refused, those naming another "
        "id than the moat:node:<id> key they were read from\n"
        "# TYPE moat_cluster_records_misfiled_total counter\n"
        "moat_cluster_records_misfiled_total %" G_GUINT64_FORMAT "\n"
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
        cluster->records_rejected, cluster->records_misfiled, cluster->rooms_lost,
        moat_cluster_proxy_failures(cluster->forwarder));
    for (int kind = 0; kind < OFFER_KIND_COUNT; kind++)
        g_string_append_printf(out,
                               "moat_cluster_offers_total{route=\"%s\"} %" G_GUINT64_FORMAT "\n",
                               moat_cluster_offer_kind_names[kind], cluster->offers[kind]);
    g_string_append_printf(
        out,
        "# HELP moat_cluster_resource_requests_total PATCH/DELETE on resources of other nodes "
        "(proxy mode's via/ Locations), forwarded to the owner or refused\n"
        "# TYPE moat_cluster_resource_requests_total counter\n"
        "moat_cluster_resource_requests_total{outcome=\"forwarded\"} %" G_GUINT64_FORMAT "\n"
        "moat_cluster_resource_requests_total{outcome=\"refused\"} %" G_GUINT64_FORMAT "\n"
        "# HELP moat_cluster_forwards_busy_total Requests to other nodes refused because too "
        "many were in flight\n# TYPE moat_cluster_forwards_busy_total counter\n"
        "moat_cluster_forwards_busy_total %" G_GUINT64_FORMAT "\n",
        cluster->resource_requests[RESOURCE_FORWARDED],
        cluster->resource_requests[RESOURCE_REFUSED], moat_cluster_proxy_busy(cluster->forwarder));
    g_string_append(out, "# HELP moat_cluster_cascade_chosen_total WHEP subscribers served "
                         "here through a cascade, by why\n"
                         "# TYPE moat_cluster_cascade_chosen_total counter\n");
    for (int reason = 0; reason < CASCADE_REASON_COUNT; reason++)
        g_string_append_printf(
            out, "moat_cluster_cascade_chosen_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
            moat_cluster_cascade_reason_names[reason], cluster->cascade_reasons[reason]);
    g_string_append_printf(out,
                           "# HELP moat_cluster_call_writes_failed_total Call record writes to "
                           "Redis that failed or waited for the link (rewritten when it is back)\n"
                           "# TYPE moat_cluster_call_writes_failed_total counter\n"
                           "moat_cluster_call_writes_failed_total %" G_GUINT64_FORMAT "\n",
                           moat_cluster_calls_writes_failed(cluster->calls));
    if (cluster->rpc)
        moat_cluster_rpc_metrics(cluster->rpc, out);
    moat_cascade_metrics(cluster->cascade, out);
}

/* /healthz's "cluster" object: the link, not judged (health.h). */
void *moat_cluster_health(void *user)
{
    moat_cluster *cluster = user;
    return json_pack("{s:b, s:s, s:s, s:b}", "configured", 1, "node_id", cluster->node_id, "redis",
                     moat_redis_state_name(moat_redis_link_state(cluster->redis)), "draining",
                     cluster->draining);
}
